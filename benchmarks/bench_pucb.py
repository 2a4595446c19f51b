"""Benchmark: PUCB at S = 10, A = 3, H = 10 for T = 10^4 episodes on one core (target < 60 s).

Times one full run (planning with PrivQ every episode, 2SAH + S^2AH = 3600 binary-mechanism
counters updated every episode, exact regret of every episode's policy) for the private agent and
for the non-private UBEV-style baseline, and the counter bank alone.

    python benchmarks/bench_pucb.py            # the full size
    python benchmarks/bench_pucb.py --episodes 1000 --json
"""

from __future__ import annotations

import argparse
import json
import os

import numpy as np
from _timing import best_of


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--states", type=int, default=10)
    parser.add_argument("--actions", type=int, default=3)
    parser.add_argument("--horizon", type=int, default=10)
    parser.add_argument("--episodes", type=int, default=10_000)
    parser.add_argument("--epsilon", type=float, default=1.0)
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)

    from privcal.analysis.counter import BinaryCounter
    from privcal.rl.pucb import num_counters, run_pucb
    from privcal.rl.pucb.tabular import random_mdp

    s, a, h, t = args.states, args.actions, args.horizon, args.episodes
    mdp = random_mdp(s, a, h, seed=0)
    results = {"states": s, "actions": a, "horizon": h, "episodes": t,
               "counters": num_counters(s, a, h), "cpu_count": os.cpu_count(),
               "numpy": np.__version__}

    def bank_only():
        bank = BinaryCounter(t, 1.0, (num_counters(s, a, h),), seed=0)
        zeros = np.zeros(bank.shape)
        for _ in range(t):
            bank.update(zeros)

    results["counters_only_s"] = best_of(bank_only, args.repeat)[0]
    results["pucb_private_s"] = best_of(lambda: run_pucb(mdp, t, args.epsilon, seed=0), args.repeat)[0]
    results["ubev_nonprivate_s"] = best_of(lambda: run_pucb(mdp, t, None, seed=0), args.repeat)[0]
    results["target_s"] = 60.0
    results["meets_target"] = results["pucb_private_s"] < 60.0
    if args.json:
        print(json.dumps(results))
    else:
        print(f"PUCB benchmark: S={s}, A={a}, H={h}, T={t} episodes, "
              f"{results['counters']} counters (best of {args.repeat})")
        print(f"  counter bank alone         {results['counters_only_s']:8.2f} s")
        print(f"  PUCB, epsilon={args.epsilon:g}          {results['pucb_private_s']:8.2f} s")
        print(f"  non-private baseline       {results['ubev_nonprivate_s']:8.2f} s")
        print(f"  target                     {results['target_s']:8.2f} s  "
              f"({'met' if results['meets_target'] else 'MISSED'})")
    return results


if __name__ == "__main__":
    main()
