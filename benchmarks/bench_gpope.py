"""Benchmark: one GPOPE run on the chain with m = 10^4 trajectories, and data collection per domain.

Prints plain numbers (seconds, rates). Sizes are the issue's: GPOPE on the 40-state chain with
m = 10^4 trajectories and N = m iterations at (epsilon, delta) = (0.1, 1e-5) (valid sigma); data
collection rate (trajectories/s and transitions/s) for the chain, Mountain Car (Gymnasium dynamics,
batched) and the HIV simulator (batched LSODA).

    python benchmarks/bench_gpope.py
    python benchmarks/bench_gpope.py --trajectories 1000 --json
"""

from __future__ import annotations

import argparse
import json

import numpy as np
from _timing import best_of


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trajectories", type=int, default=10_000)
    ap.add_argument("--mc-trajectories", type=int, default=1000)
    ap.add_argument("--hiv-trajectories", type=int, default=200)
    ap.add_argument("--hiv-horizon", type=int, default=50)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)

    from privcal.rl.gpope.domains import hiv, mountain_car
    from privcal.rl.gpope.domains.chain import sample_chain
    from privcal.calibrators.gpope import calibrate
    from privcal.rl.gpope.agent import gpope

    out = {}
    m = args.trajectories
    t, data = best_of(lambda: sample_chain(m, np.random.default_rng(0)))
    out["chain_collect_s"] = t
    out["chain_trajectories_per_s"] = m / t
    out["chain_transitions_per_s"] = data.n_transitions / t
    t, sigma = best_of(lambda: calibrate(0.1, 1e-5, iterations=m, trajectories=m))
    out["calibrate_s"] = t
    out["sigma"] = sigma
    t, res = best_of(lambda: gpope(data, sigma=sigma, clip=0.05, step_size=0.01, seed=0))
    out["gpope_chain_m"] = m
    out["gpope_chain_s"] = t
    out["gpope_iterations_per_s"] = res.iterations / t

    env = mountain_car.MountainCarBatch.from_gymnasium()
    t, beh = best_of(lambda: mountain_car.learn_behaviour(env, episodes=200, seed=0))
    out["mountain_car_q_learning_200_episodes_s"] = t
    t, mcd = best_of(lambda: mountain_car.sample_mountain_car(args.mc_trajectories, 1,
                                                             behaviour=beh, env=env))
    out["mountain_car_trajectories_per_s"] = mcd.m / t
    out["mountain_car_transitions_per_s"] = mcd.n_transitions / t
    t, res = best_of(lambda: gpope(mcd, sigma=sigma, clip=0.5, step_size=1e-3, seed=0))
    out["gpope_mountain_car_iterations_per_s"] = res.iterations / t

    henv = hiv.HIVBatch(horizon=args.hiv_horizon)
    t, (target, hbeh) = best_of(lambda: hiv.learn_hiv_policies(henv, episodes=32, seed=0))
    out["hiv_q_learning_32_episodes_s"] = t
    t, hd = best_of(lambda: hiv.sample_hiv(args.hiv_trajectories, 1, target=target, behaviour=hbeh,
                                          env=henv))
    out["hiv_trajectories_per_s"] = hd.m / t
    out["hiv_transitions_per_s"] = hd.n_transitions / t

    if args.json:
        print(json.dumps(out))
    else:
        for k, v in out.items():
            print(f"{k:45s} {v:.4g}")
    return out


if __name__ == "__main__":
    main()
