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
import time

import numpy as np


def _timed(fn):
    start = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - start


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trajectories", type=int, default=10_000)
    ap.add_argument("--mc-trajectories", type=int, default=1000)
    ap.add_argument("--hiv-trajectories", type=int, default=200)
    ap.add_argument("--hiv-horizon", type=int, default=50)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)

    from privcal.rl.domains import hiv, mountain_car
    from privcal.rl.domains.chain import sample_chain
    from privcal.rl.gpope_agent import calibrate_sigma, gpope

    out = {}
    m = args.trajectories
    data, t = _timed(lambda: sample_chain(m, np.random.default_rng(0)))
    out["chain_collect_s"] = t
    out["chain_trajectories_per_s"] = m / t
    out["chain_transitions_per_s"] = data.n_transitions / t
    sigma, t = _timed(lambda: calibrate_sigma(0.1, 1e-5, iterations=m, trajectories=m))
    out["calibrate_s"] = t
    out["sigma"] = sigma
    res, t = _timed(lambda: gpope(data, sigma=sigma, clip=0.05, step_size=0.01, seed=0))
    out["gpope_chain_m"] = m
    out["gpope_chain_s"] = t
    out["gpope_iterations_per_s"] = res.iterations / t

    env = mountain_car.MountainCarBatch.from_gymnasium()
    beh, t = _timed(lambda: mountain_car.learn_behaviour(env, episodes=200, seed=0))
    out["mountain_car_q_learning_200_episodes_s"] = t
    mcd, t = _timed(lambda: mountain_car.sample_mountain_car(args.mc_trajectories, 1,
                                                             behaviour=beh, env=env))
    out["mountain_car_trajectories_per_s"] = mcd.m / t
    out["mountain_car_transitions_per_s"] = mcd.n_transitions / t
    res, t = _timed(lambda: gpope(mcd, sigma=sigma, clip=0.5, step_size=1e-3, seed=0))
    out["gpope_mountain_car_iterations_per_s"] = res.iterations / t

    henv = hiv.HIVBatch(horizon=args.hiv_horizon)
    (target, hbeh), t = _timed(lambda: hiv.learn_hiv_policies(henv, episodes=32, seed=0))
    out["hiv_q_learning_32_episodes_s"] = t
    hd, t = _timed(lambda: hiv.sample_hiv(args.hiv_trajectories, 1, target=target, behaviour=hbeh,
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
