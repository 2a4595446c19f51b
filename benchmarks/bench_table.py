"""Benchmark: the README's GPOPE table, ``privcal table --setting gpope --trajectories 1000 --iterations 10000``.

Prints plain numbers: the user CPU seconds and peak resident memory (MB) of the whole command in a fresh
interpreter (import included), and the CPU seconds of ``privcal.calibrators.table.gpope_table`` alone in
this process, split into the calibrations of each column and the realisable lower-bound verdicts. CPU
time (not wall time): the machine the table runs on may be shared. The goal of issue 18, item 3: about
one second and under 500 MB for the whole command.

    python benchmarks/bench_table.py
    python benchmarks/bench_table.py --json
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
COMMAND = ["table", "--setting", "gpope", "--trajectories", "1000", "--iterations", "10000"]


def _command() -> tuple[float, float]:
    """(user CPU seconds, peak RSS in MB) of the CLI command in a child interpreter, as an installed privcal
    runs it: with its bytecode cached (a first, untimed run writes it to a temporary cache, so that a
    PYTHONDONTWRITEBYTECODE environment does not time the compilation of every module)."""
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""),
                   PYTHONPYCACHEPREFIX=cache)
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        run = [sys.executable, "-m", "privcal", *COMMAND]
        subprocess.run(run, check=True, stdout=subprocess.DEVNULL, env=env)
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        subprocess.run(run, check=True, stdout=subprocess.DEVNULL, env=env)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return after.ru_utime - before.ru_utime, after.ru_maxrss / 1024.0  # ru_maxrss: kB on Linux (max over children)


def _in_process() -> dict:
    """CPU seconds of gpope_table in this process, with the calibrations and verdicts timed apart."""
    from privcal.calibrators import gpope, table

    spent: dict = {}

    def timed(name, fn):
        def wrapper(*args, **kwargs):
            start = time.process_time()
            try:
                return fn(*args, **kwargs)
            finally:
                key = f"{name}:{kwargs['bound']}" if "bound" in kwargs else name
                spent[key] = spent.get(key, 0.0) + time.process_time() - start
        return wrapper

    originals = (gpope.calibrate_sigma_unchecked, table._gpope_bracket)
    gpope.calibrate_sigma_unchecked = timed("calibrate", originals[0])
    table._gpope_bracket = timed("verdicts", originals[1])
    try:
        start = time.process_time()
        table.gpope_table(trajectories=1000, iterations=10_000)
        total = time.process_time() - start
    finally:
        gpope.calibrate_sigma_unchecked, table._gpope_bracket = originals
    return {"gpope_table_cpu_s": total, **{f"{k}_cpu_s": v for k, v in sorted(spent.items())}}


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    sys.path.insert(0, ROOT)  # this checkout's privcal, in this process as in the child
    out = {}
    out["command_user_cpu_s"], out["command_peak_rss_mb"] = _command()
    out.update(_in_process())
    if args.json:
        print(json.dumps(out, indent=2))
    else:
        for key, value in out.items():
            print(f"{key:40s} {value:10.3f}")
    return out


if __name__ == "__main__":
    main()
