"""What ``import privcal`` and the GPOPE table load: no module that only some other path needs (no timing)."""

from __future__ import annotations

import subprocess
import sys


def test_import_privcal_leaves_scipy_optimize_mpmath_and_integrate_out():
    # ``import privcal`` and the GPOPE table need none of them (~0.2 s of CPU for scipy.optimize alone):
    # a module-level import of any of them on that path turns this red
    code = ("import sys, privcal; from privcal.calibrators.table import gpope_table; "
            "gpope_table([1.0], trajectories=100, iterations=100); "
            "print(sorted(m for m in ('scipy.optimize', 'scipy.integrate', 'scipy.stats', 'mpmath', 'sympy') "
            "if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", out.stdout + out.stderr
