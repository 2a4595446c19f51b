"""privcal: privacy accounting and noise calibration for differentially private RL.

The front door::

    import privcal
    privcal.calibrate(1.0, 1e-5, steps=100)           # sigma for (1, 1e-5)-DP after 100 releases
    privcal.epsilon(10.0, 1e-5, steps=100)            # epsilon of 100 releases at sigma = 10
    privcal.calibrate_report(1.0, 1e-5, steps=100, accountant="paper").notes

Layers (imports flow downward only):

* the analysis modules, flat public import paths, one formula per function: ``gaussian`` (classic and
  exact Gaussian mechanism), ``rkhs`` (Lemma 6 RKHS norms and sensitivities), ``composition`` (exact,
  Wang-Hegde Thm 5), ``kov`` (Kairouz-Oh-Viswanath, DRV), ``rdp`` (Renyi DP), ``subsampling``,
  ``supremum`` (Lemma 8), ``counter`` (binary mechanism);
* ``privcal.accounting``: events, accountants, calibration and this front door;
* ``privcal.calibrators``: the papers' end-to-end calibrations (``dpq``, ``gpope``) and ``table``;
* ``privcal.noise`` (exact GP noise paths), ``privcal.verify`` (the claims registry), ``privcal.rl``
  (environments, agents, experiments), ``privcal.cli``.

The former flat paths ``privcal.events``, ``privcal.accountants``, ``privcal.calibration``,
``privcal.api``, ``privcal.dpq``, ``privcal.gpope`` and ``privcal.table`` still import: they are the
same module objects as their new homes.
"""

import sys as _sys


def _run_as_main() -> bool:
    """Whether this interpreter runs ``python -m privcal`` (its command line, not any later import)."""
    argv = list(getattr(_sys, "orig_argv", ()))
    return any(a == "-m" and argv[i + 1: i + 2] == ["privcal"] for i, a in enumerate(argv))


if _run_as_main():  # Ctrl-C during the heavy imports below: one line and exit 130 (privcal_launcher)
    import privcal_launcher as _launcher

    _launcher.install()

from . import accounting as accounting
from . import calibrators as calibrators
from .accounting import accountants as _accountants
from .accounting import api as _api
from .accounting import calibration as _calibration
from .accounting import events as _events
from .accounting import (
    ACCOUNTANT_CHOICES,
    ACCOUNTANTS,
    ApproxDPEvent,
    CalibrationReport,
    ComposedEvent,
    EpsilonReport,
    ExactAccountant,
    GaussianEvent,
    GaussianProcessEvent,
    LaplaceEvent,
    KOVAccountant,
    Neighbouring,
    NeighbouringWarning,
    PoissonSampledEvent,
    SampledWithoutReplacementEvent,
    SelfComposedEvent,
    from_dp_accounting,
    PaperAccountant,
    RDPAccountant,
    Releases,
    SubsampledEvent,
    calibrate,
    calibrate_report,
    epsilon,
    epsilon_of,
    epsilon_report,
    search_sigma,
)
from .accounting.calibration import calibrate_sigma  # former name of search_sigma, kept importable
from .calibrators import dpq as _dpq
from .calibrators import gpope as _gpope
from .calibrators import table as _table
from .errors import CalibrationError, InfeasibleError, PrivcalError, UnsupportedEventError
from .pld import PLDAccountant

# The former flat import paths name the moved modules themselves (not copies), so
# ``import privcal.dpq`` / ``from privcal.events import GaussianEvent`` / monkeypatching keep working.
for _old, _module in {
    "events": _events, "accountants": _accountants, "calibration": _calibration, "api": _api,
    "dpq": _dpq, "gpope": _gpope, "table": _table,
}.items():
    _sys.modules[f"{__name__}.{_old}"] = _module
    globals()[_old] = _module
del _old, _module

from ._version import __version__  # the installed distribution's version (pyproject.toml)

__all__ = [
    "ACCOUNTANTS",
    "ACCOUNTANT_CHOICES",
    "ApproxDPEvent",
    "CalibrationError",
    "CalibrationReport",
    "ComposedEvent",
    "EpsilonReport",
    "ExactAccountant",
    "GaussianEvent",
    "GaussianProcessEvent",
    "LaplaceEvent",
    "InfeasibleError",
    "KOVAccountant",
    "Neighbouring",
    "NeighbouringWarning",
    "PaperAccountant",
    "PLDAccountant",
    "PoissonSampledEvent",
    "PrivcalError",
    "RDPAccountant",
    "Releases",
    "SampledWithoutReplacementEvent",
    "SelfComposedEvent",
    "SubsampledEvent",
    "UnsupportedEventError",
    "calibrate",
    "calibrate_report",
    "epsilon",
    "epsilon_of",
    "epsilon_report",
    "from_dp_accounting",
    "search_sigma",
]
