"""Shuffled batches: privcal's certified answer (upper and lower bound) against its Poisson PLD answer, in CPU time.

Run:  python benchmarks/bench_samplers.py [--repeat R]

Setting (target of docs/samplers.md, section 5): T = 100 steps per epoch (N = 1000, b = 10), noise multiplier
s = 1, delta = 1e-5, E in {1e2, 1e3, 1e4} epochs. Timed per E:

* the shuffle answer: ``samplers.epsilon_upper`` (closed form) plus ``samplers.epsilon_lower`` (the binned max
  statistic composed by FFT), reshuffled epochs, each repeat cold (the binned pair's cache cleared);
* ``privcal.epsilon(1.0, 1e-5, steps=E T, sample_rate=1/T)``: the Poisson answer of the same number of steps
  (the front door, accountant "best"; it prices a different sampler and is shown for its cost only).

Times are CPU times (``time.process_time``), the best of ``--repeat`` runs, the two interleaved per repeat; the
ratio is Poisson time / shuffle time (target: >= 1, i.e. the shuffle answer costs no more).
"""

from __future__ import annotations

import argparse
import time

import privcal
from privcal.accounting import max_statistic, samplers

STEPS, SIGMA, DELTA = 100, 1.0, 1e-5
EPOCHS = (100, 1_000, 10_000)


def _cpu(fn) -> tuple[float, object]:
    """(CPU seconds, value) of ``fn()``."""
    start = time.process_time()
    value = fn()
    return time.process_time() - start, value


def shuffle_answer(epochs: int) -> tuple[float, float]:
    """(certified lower bound, upper bound) on epsilon of ``epochs`` reshuffled epochs, from a cold cache."""
    max_statistic.binned_max_statistic_unchecked.cache_clear()
    lower = samplers.epsilon_lower(SIGMA, STEPS, epochs, DELTA)
    upper = samplers.epsilon_upper(SIGMA, epochs, DELTA, sampler="shuffle")
    return lower, upper


def poisson_answer(epochs: int) -> float:
    return privcal.epsilon(SIGMA, DELTA, steps=epochs * STEPS, sample_rate=1.0 / STEPS)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5, help="runs per timing; the best is kept (default 5)")
    args = ap.parse_args(argv)
    shuffle_answer(1)  # imports and first FFT plans outside the timings
    poisson_answer(1)
    print(f"T = {STEPS}, s = {SIGMA}, delta = {DELTA}; CPU ms, best of {args.repeat}")
    print(f"  {'epochs':>7} {'lower':>10} {'upper':>10} {'poisson':>10} {'shuffle ms':>11} {'poisson ms':>11} "
          f"{'ratio':>6}")
    ratios = []
    for epochs in EPOCHS:
        t_shuffle, t_poisson = [], []
        for _ in range(max(1, args.repeat)):
            t, (lower, upper) = _cpu(lambda: shuffle_answer(epochs))
            t_shuffle.append(t)
            t, poisson = _cpu(lambda: poisson_answer(epochs))
            t_poisson.append(t)
        ratio = min(t_poisson) / min(t_shuffle)
        ratios.append(ratio)
        print(f"  {epochs:>7d} {lower:>10.4f} {upper:>10.2f} {poisson:>10.4f} {min(t_shuffle) * 1e3:>11.2f} "
              f"{min(t_poisson) * 1e3:>11.2f} {ratio:>6.2f}")
    print(f"  poisson / shuffle time at E = {EPOCHS[-1]}: {ratios[-1]:.2f} (target >= 1)")


if __name__ == "__main__":
    main()
