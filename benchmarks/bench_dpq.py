"""Benchmark: DP Q-learning (Wang & Hegde 2019, Alg. 1) at the paper's size, T = 5000, B = 64, one core.

Target: a full run in under 10 s; and the share of the step time spent on the functional noise
(Prop. 9 says it should be negligible), and the cost of certifying every update (valid variant: the
update time of the certified configurations against the plain one). Prints, per configuration, the best wall time over
``--repeat`` runs and the split the training loop measures itself (env, act = forward passes for
action selection, noise = path queries and resets, update = SGD steps), plus the noise share
noise / (env + act + noise + update) and the per-query cost of the noise path as it grows.

    python benchmarks/bench_dpq.py            # paper size
    python benchmarks/bench_dpq.py --samples 20000 --json
"""

from __future__ import annotations

import argparse
import json
import os
import time
from dataclasses import replace

import numpy as np
from _timing import best_of

os.environ.setdefault("OMP_NUM_THREADS", "1")  # one core, as the target says
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=5000)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)

    from privcal.analysis.noise import OrnsteinUhlenbeckPath
    from privcal.rl.dpq.agent import Hyperparameters, train, train_dpq

    hp = Hyperparameters(samples=args.samples, batch_size=args.batch_size, lr=1.0)
    updates = hp.updates
    configs = {
        "dpq sigma=0.32 J=U (App. E.3)": lambda: train("dpq", hp=hp, sigma=0.32, resets=updates, seed=0),
        "dpq sigma=0.32 J=1 (one path)": lambda: train("dpq", hp=hp, sigma=0.32, resets=1, seed=0),
        "dpq valid (eps=0.9, delta=1e-4, lr=3e-4, c=0.01)": lambda: train_dpq(
            epsilon=0.9, delta=1e-4, hp=Hyperparameters(samples=args.samples, batch_size=args.batch_size),
            seed=0),
        "dpq sigma=0.32, certified c=0.01": lambda: train("dpq", hp=replace(hp, update_clip=0.01), sigma=0.32,
                                                         resets=updates, seed=0),
        "non_private": lambda: train("non_private", hp=hp, seed=0),
        "dpsgd z=42": lambda: train("dpsgd", hp=hp, sigma=42.1, seed=0),
        "bgp16 sigma=0.32": lambda: train("bgp16", hp=hp, sigma=0.32, seed=0),
    }
    rows = {}
    for name, fn in configs.items():
        wall, res = best_of(fn, args.repeat)
        t = res.timings
        loop = sum(t.values())
        rows[name] = {"wall_s": wall, **{k + "_s": v for k, v in t.items()},
                      "noise_share": t["noise"] / loop if loop else 0.0,
                      "mean_return_last_10": float(res.episode_returns[-10:].mean())}

    # per-query cost of one OU path as it grows (online insertion, the pattern of Algorithm 1)
    rng = np.random.default_rng(0)
    pts = rng.uniform(0, 1, 100_000).tolist()
    path = OrnsteinUhlenbeckPath(2222.2, 0.32, seed=1)
    per_query = {}
    done = 0
    for n in (1_000, 10_000, 100_000):
        start = time.perf_counter()
        for x in pts[done:n]:
            path.sample_point(x)
        per_query[n] = (time.perf_counter() - start) / (n - done) * 1e6
        done = n

    out = {"samples": args.samples, "batch_size": args.batch_size, "updates": updates, "runs": rows,
           "ou_sample_point_us_by_size": per_query}
    if args.json:
        print(json.dumps(out))
        return out
    print(f"DP Q-learning, T={args.samples}, B={args.batch_size} ({updates} updates), best of {args.repeat}")
    print(f"{'configuration':48} {'wall s':>7} {'env':>6} {'act':>6} {'noise':>6} {'update':>6} "
          f"{'noise %':>7} {'return':>7}")
    for name, r in rows.items():
        print(f"{name:48} {r['wall_s']:7.3f} {r['env_s']:6.3f} {r['act_s']:6.3f} {r['noise_s']:6.3f} "
              f"{r['update_s']:6.3f} {100 * r['noise_share']:6.1f}% {r['mean_return_last_10']:7.2f}")
    print("OU path sample_point cost (us/query) while the path grows to n points: "
          + ", ".join(f"n={n}: {v:.2f}" for n, v in per_query.items()))
    return out


if __name__ == "__main__":
    main()
