"""Benchmark: the README's GPOPE table, ``privcal table --setting gpope --trajectories 1000 --iterations 10000``.

Prints plain numbers: the user CPU seconds and peak resident memory (MB) of the whole command in a fresh
interpreter (import included), of its imports alone (``import privcal.cli``), and the CPU seconds of
``privcal.calibrators.gpope_table.gpope_table`` in this process (every column, as json, csv, markdown and ``--wide``
build it), split into the calibrations of each column, the RDP upper ends at the checked sigmas (within the
verdicts: only where the PLD leaves one undecided), and the verdicts (the realisable lower bounds within them
apart); and of ``gpope_table(lead_only=True)``, what the command's default text view builds. CPU time,
not wall time: the machine the table runs on may be shared. Each child measurement is the least of
``--repeats`` runs (the others are the noise of a shared machine). The goal: about one
second and under 500 MB for the whole command.

    python benchmarks/bench_table.py
    python benchmarks/bench_table.py --json --repeats 5
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
COMMAND = ["-m", "privcal", "table", "--setting", "gpope", "--trajectories", "1000", "--iterations", "10000"]
IMPORT = ["-c", "import privcal.cli"]


def _child(args: list[str], repeats: int) -> tuple[float, float]:
    """(least user CPU seconds, largest peak RSS in MB) of ``python *args`` over ``repeats`` runs, as an installed
    privcal runs: with its bytecode cached (a first, untimed run writes it to a temporary cache, so that a
    PYTHONDONTWRITEBYTECODE environment does not time the compilation of every module). Each run's own usage
    (``os.wait4``), not the sum over this process's children."""
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""),
                   PYTHONPYCACHEPREFIX=cache)
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        run = [sys.executable, *args]
        subprocess.run(run, check=True, stdout=subprocess.DEVNULL, env=env, cwd=ROOT)
        best, peak = float("inf"), 0.0
        for _ in range(repeats):
            child = subprocess.Popen(run, stdout=subprocess.DEVNULL, env=env, cwd=ROOT)
            _, status, usage = os.wait4(child.pid, 0)
            child.returncode = os.waitstatus_to_exitcode(status)
            if child.returncode != 0:
                raise RuntimeError(f"{' '.join(run)} exited with {child.returncode}")
            best, peak = min(best, usage.ru_utime), max(peak, usage.ru_maxrss / 1024.0)  # ru_maxrss: kB on Linux
    return best, peak


def _in_process() -> dict:
    """CPU seconds of gpope_table in this process, with the calibrations, the RDP upper ends and the verdicts
    (and their realisable lower bounds) timed apart."""
    from privcal.accounting import realisable
    from privcal.calibrators import gpope
    from privcal.calibrators import gpope_table as table

    # every part is reported, 0 where the table did not call it (the RDP upper ends: only where the PLD leaves a
    # verdict undecided, none at the README's table)
    spent: dict = {f"calibrate:{b}": 0.0 for b in ("pld", "rdp", "thm9", "lemma1", "theorem1", "theorem1_paper")}
    spent.update(verdicts=0.0, verdicts_lower_bounds=0.0, rdp_upper_at_checked_sigmas=0.0)

    def timed(name, owner, attr, by_bound=True):
        fn = getattr(owner, attr)

        def wrapper(*args, **kwargs):
            start = time.process_time()
            try:
                return fn(*args, **kwargs)
            finally:
                key = f"{name}:{kwargs['bound']}" if by_bound and "bound" in kwargs else name
                spent[key] = spent.get(key, 0.0) + time.process_time() - start
        return owner, attr, fn, wrapper

    patches = [timed("calibrate", gpope, "calibrate_sigma_unchecked"), timed("verdicts", table, "gpope_bracket"),
               timed("verdicts_lower_bounds", realisable, "unchecked_epsilon_lower"),
               timed("rdp_upper_at_checked_sigmas", gpope, "epsilon_at_unchecked", by_bound=False)]
    for owner, attr, _, wrapper in patches:
        setattr(owner, attr, wrapper)
    try:
        start = time.process_time()
        table.gpope_table(trajectories=1000, iterations=10_000)
        total = time.process_time() - start
    finally:
        for owner, attr, fn, _ in patches:
            setattr(owner, attr, fn)
    # what the command's default text view builds (no --wide): the lead rows only
    start = time.process_time()
    table.gpope_table(trajectories=1000, iterations=10_000, lead_only=True)
    lead = time.process_time() - start
    return {"gpope_table_cpu_s": total, **{f"{k}_cpu_s": v for k, v in sorted(spent.items())},
            "gpope_table_lead_only_cpu_s": lead}


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--repeats", type=int, default=3, help="runs of each child measurement (the least counts)")
    args = ap.parse_args(argv)
    sys.path.insert(0, ROOT)  # this checkout's privcal, in this process as in the child
    out = {}
    out["command_user_cpu_s"], out["command_peak_rss_mb"] = _child(COMMAND, args.repeats)
    out["import_user_cpu_s"], out["import_peak_rss_mb"] = _child(IMPORT, args.repeats)
    out.update(_in_process())
    if args.json:
        print(json.dumps(out, indent=2))
    else:
        for key, value in out.items():
            print(f"{key:40s} {value:10.3f}")
    return out


if __name__ == "__main__":
    main()
