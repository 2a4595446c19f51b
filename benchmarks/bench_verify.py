"""Benchmark: wall time of the claims registry (``privcal verify``) at the quick budget, per claim and in total.

The issue's target: the quick budget runs every claim in under a minute on one core (the full budget in
under 15 minutes). Prints plain numbers (seconds); the slowest claims first.

    python benchmarks/bench_verify.py
    python benchmarks/bench_verify.py --budget full --top 10 --json
"""

from __future__ import annotations

import argparse
import json

from _timing import best_of

#: Target wall time in seconds per budget (issue: quick < 60 s, full < 15 min, one core).
TARGETS = {"quick": 60.0, "full": 900.0}


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--budget", choices=sorted(TARGETS), default="quick")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--repeat", type=int, default=1, help="best of this many runs (default: 1)")
    ap.add_argument("--top", type=int, default=8, help="print the slowest claims (default: 8)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)

    from privcal.verify import run_claims

    total, results = best_of(lambda: run_claims(budget=args.budget, seed=args.seed), args.repeat)
    slowest = sorted(results, key=lambda r: r.seconds, reverse=True)[: max(0, args.top)]
    verdicts = {}
    for r in results:
        verdicts[r.outcome.verdict] = verdicts.get(r.outcome.verdict, 0) + 1
    out = {
        "budget": args.budget,
        "claims": len(results),
        "verdicts": verdicts,
        "seconds": total,
        "target_seconds": TARGETS[args.budget],
        "within_target": total < TARGETS[args.budget],
        "slowest": [{"id": r.claim.id, "seconds": r.seconds} for r in slowest],
    }
    if args.json:
        print(json.dumps(out, indent=2))
        return out
    print(f"privcal verify --budget {args.budget}: {len(results)} claims in {total:.1f} s "
          f"(target < {TARGETS[args.budget]:.0f} s: {'met' if out['within_target'] else 'MISSED'}); "
          + ", ".join(f"{n} {v}" for v, n in verdicts.items()))
    for r in slowest:
        print(f"  {r.seconds:7.2f} s  {r.claim.id}")
    return out


if __name__ == "__main__":
    main()
