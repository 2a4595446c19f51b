"""Benchmark: the authors' replay loop (privcal.rl.dpq.replay) at the paper's size, 100 episodes, one core.

Target: a 5,000-step run in a few seconds. Prints, per configuration, the best wall time over
``--repeat`` runs, the split the loop measures itself (env, act, noise, update, sensitivity) and the
mean return of the last 10 episodes.

    python benchmarks/bench_dpq_replay.py
    python benchmarks/bench_dpq_replay.py --episodes 40 --json
"""

from __future__ import annotations

import argparse
import json
import os

from _timing import best_of

os.environ.setdefault("OMP_NUM_THREADS", "1")  # one core, as the target says
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)

    from privcal.rl.dpq.replay import ReplayConfig, train_replay

    base = ReplayConfig(episodes=args.episodes)
    configs = {
        "non-private": (base, False),
        "sigma=0.4, path per episode (authors')": (ReplayConfig(episodes=args.episodes, sigma=0.4), False),
        "sigma=0.4, path per update": (ReplayConfig(episodes=args.episodes, sigma=0.4, noise_reset="update"),
                                       False),
        "sigma=0.4 + sensitivity witness": (ReplayConfig(episodes=args.episodes, sigma=0.4), True),
        "sigma=0.4, adam lr=1e-3": (
            ReplayConfig(episodes=args.episodes, sigma=0.4, optimizer="adam", lr=1e-3), False),
    }
    rows = {}
    for name, (cfg, measure) in configs.items():
        wall, res = best_of(lambda: train_replay(cfg, seed=0, measure_sensitivity=measure), args.repeat)
        rows[name] = {"wall_s": wall, **{k + "_s": v for k, v in res.timings.items()},
                      "mean_return_last_10": res.mean_return(10)}
    out = {"episodes": args.episodes, "steps": base.steps, "updates": base.updates, "runs": rows}
    if args.json:
        print(json.dumps(out))
        return out
    print(f"replay loop, {args.episodes} episodes ({base.steps} steps, {base.updates} updates), "
          f"best of {args.repeat}")
    print(f"{'configuration':42} {'wall s':>7} {'env':>6} {'act':>6} {'noise':>6} {'update':>6} "
          f"{'return':>7}")
    for name, r in rows.items():
        print(f"{name:42} {r['wall_s']:7.3f} {r['env_s']:6.3f} {r['act_s']:6.3f} {r['noise_s']:6.3f} "
              f"{r['update_s']:6.3f} {r['mean_return_last_10']:7.2f}")
    return out


if __name__ == "__main__":
    main()
