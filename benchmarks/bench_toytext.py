"""Benchmark: the FrozenLake benchmark's pieces on one core (wall time; not asserted anywhere).

Times reading FrozenLake's table from gymnasium and exact value iteration, collecting offline episodes under the
uniform behaviour policy, private selection over the public candidates, Private-UCB-VI / PUCB runs on the
finite-horizon MDP (H = 20), the random-map prior's reference (2000 public maps, exact), and one run of each
random-map learner (select, fqi-dpsgd; ``privcal.rl.toytext.experiment.run_frozenlake``).

    python benchmarks/bench_toytext.py
    python benchmarks/bench_toytext.py --episodes 500 --offline-episodes 20000 --json
"""

from __future__ import annotations

import argparse
import json
import os

import numpy as np
from _timing import best_of


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=2000, help="online episodes T")
    parser.add_argument("--offline-episodes", type=int, default=100_000)
    parser.add_argument("--epsilon", type=float, default=10.0)
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)

    from privcal.rl import toytext
    from privcal.rl.pucb.agent import run_pucb
    from privcal.rl.ucbvi import run_ucbvi

    results = {"episodes": args.episodes, "offline_episodes": args.offline_episodes, "epsilon": args.epsilon,
               "cpu_count": os.cpu_count(), "numpy": np.__version__}
    results["table_and_values_s"] = best_of(lambda: toytext.optimal_value(toytext.frozen_lake_mdp()), args.repeat)[0]
    tables = toytext.frozen_lake_tables()
    mdp = toytext.frozen_lake_mdp()
    results["collect_s"] = best_of(lambda: toytext.collect_episodes(args.offline_episodes, 0, tables=tables),
                                   args.repeat)[0]
    data = toytext.collect_episodes(args.offline_episodes, 0, tables=tables)
    results["select_s"] = best_of(lambda: toytext.offline_select(data, args.epsilon, mdp=mdp), args.repeat)[0]
    results["ucbvi_s"] = best_of(lambda: run_ucbvi(mdp, args.episodes, args.epsilon, 1e-5, seed=0), args.repeat)[0]
    results["pucb_s"] = best_of(lambda: run_pucb(mdp, args.episodes, args.epsilon, seed=0, counter_noise="gaussian",
                                                 delta=1e-5), args.repeat)[0]
    from privcal.rl.toytext import random_map
    from privcal.rl.toytext.experiment import run_frozenlake

    results["prior_reference_s"] = best_of(lambda: random_map.prior_reference.__wrapped__(), args.repeat)[0]
    random_map.prior_reference()  # cached for the runs below
    n_runs = min(args.offline_episodes, 10_000)
    results["random_map_episodes"] = n_runs
    results["random_map_select_s"] = best_of(lambda: run_frozenlake("select", epsilon=args.epsilon, episodes=n_runs),
                                             args.repeat)[0]
    results["random_map_fqi_s"] = best_of(lambda: run_frozenlake("fqi-dpsgd", epsilon=args.epsilon, delta=1e-5,
                                                                 episodes=n_runs), args.repeat)[0]
    if args.json:
        print(json.dumps(results))
    else:
        print(f"FrozenLake benchmark (4x4 slippery, H = 20; best of {args.repeat})")
        print(f"  table + value iteration          {results['table_and_values_s']:8.3f} s")
        print(f"  collect {args.offline_episodes} episodes      {results['collect_s']:8.3f} s")
        print(f"  private selection (256 policies) {results['select_s']:8.3f} s")
        print(f"  Private-UCB-VI, T={args.episodes}         {results['ucbvi_s']:8.3f} s")
        print(f"  PUCB, T={args.episodes}                   {results['pucb_s']:8.3f} s")
        print(f"  random-map prior reference       {results['prior_reference_s']:8.3f} s")
        print(f"  random-map select, {n_runs} episodes {results['random_map_select_s']:8.3f} s")
        print(f"  random-map fqi-dpsgd, {n_runs} episodes {results['random_map_fqi_s']:8.3f} s")
    return results


if __name__ == "__main__":
    main()
