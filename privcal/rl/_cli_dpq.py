"""``privcal train dpq``: DP Q-learning with functional noise (Wang & Hegde 2019, Alg. 1) or a baseline.

The lead's ``privcal/cli.py`` calls :func:`add_parser` on the subparsers of ``privcal train`` and
``args._run(args)``; bad input raises ``ValueError`` (printed there as one line, exit code 2).
Importing this module needs neither gymnasium nor matplotlib (they are imported inside :func:`run`).
"""

from __future__ import annotations

import argparse
import json
import time

__all__ = ["add_parser", "run"]

_METHODS = {"dpq": "dpq", "non-private": "non_private", "input-perturbation": "input_perturbation",
            "dp-sgd": "dpsgd", "bgp16": "bgp16"}


def add_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Add the ``dpq`` subparser to the subparsers of ``privcal train``; sets ``_run=run``; returns it.

    Args:
        subparsers: the subparsers object of ``privcal train`` (``add_subparsers()``).
    """
    p = subparsers.add_parser(
        "dpq", help="DP Q-learning with functional noise (Wang & Hegde 2019, Alg. 1)",
        description="Train Algorithm 1 of Wang & Hegde 2019 (or a baseline of App. E.2) on the "
                    "interval environment of App. E.1 and report the per-episode returns. sigma comes "
                    "from privcal.dpq.calibrate for --epsilon/--delta, or is given with --sigma.")
    p.add_argument("--samples", type=int, default=5000, help="T samples (default 5000 = 100 episodes)")
    p.add_argument("--epsilon", type=float, default=None, help="target epsilon")
    p.add_argument("--delta", type=float, default=None, help="target delta")
    p.add_argument("--sigma", type=float, default=None,
                   help="noise level given directly (no calibration; for dpq the functional-noise std)")
    p.add_argument("--beta", type=float, default=None,
                   help="kernel beta of the noise (default: the calibrator's; with --sigma App. E.3's 2222)")
    p.add_argument("--resets", type=int, default=None,
                   help="J noise resets; must divide floor(T/B) (default floor(T/B), App. E.3)")
    p.add_argument("--variant", choices=("corrected", "paper"), default="corrected",
                   help="calibration: valid (corrected, default) or the paper's formulas (paper)")
    p.add_argument("--method", choices=tuple(_METHODS), default="dpq",
                   help="dpq (Algorithm 1, default) or a baseline of App. E.2")
    p.add_argument("--batch-size", type=int, default=64, help="B (default 64)")
    p.add_argument("--lr", type=float, default=None,
                   help="learning rate alpha (default App. E.3's 3e-4, with which 78 updates learn "
                        "nothing; --lr 1 learns, but the corrected calibration is then infeasible)")
    p.add_argument("--lipschitz", type=float, default=4.0, help="enforced Lipschitz constant L (default 4)")
    p.add_argument("--gamma", type=float, default=None, help="discount (default 0.5)")
    p.add_argument("--seed", type=int, default=0, help="seed of everything (default 0)")
    p.add_argument("--json", action="store_true", help="print one JSON object, no progress bar")
    p.set_defaults(_run=run)
    return p


def _hyperparameters(args):
    from privcal.rl.dpq_agent import Hyperparameters

    kw = {"samples": args.samples, "batch_size": args.batch_size, "lipschitz": args.lipschitz}
    if args.lr is not None:
        kw["lr"] = args.lr
    if args.gamma is not None:
        kw["gamma"] = args.gamma
    return Hyperparameters(**kw)


def _train(args, hp, progress):
    from privcal import _validate as V
    from privcal.rl import dpq_agent
    from privcal.rl.experiments_dpq import noise_for

    method = _METHODS[args.method]
    targeted = args.epsilon is not None or args.delta is not None
    if targeted and (args.epsilon is None or args.delta is None):
        raise ValueError("give both --epsilon and --delta (or --sigma)")
    if targeted and args.sigma is not None:
        raise ValueError("give either --sigma or the target --epsilon/--delta, not both")
    if method == "non_private" and (targeted or args.sigma is not None):
        raise ValueError("--method non-private takes no --sigma, --epsilon or --delta")
    if method == "dpq":
        if args.sigma is None and not targeted:
            raise ValueError("give --sigma or both --epsilon and --delta")
        return dpq_agent.train_dpq(epsilon=args.epsilon, delta=args.delta, sigma=args.sigma, beta=args.beta,
                                   resets=args.resets, variant=args.variant, hp=hp, seed=args.seed,
                                   progress=progress)
    if args.beta is not None:
        raise ValueError("--beta applies only to --method dpq")
    if args.resets is not None and method != "bgp16":
        raise ValueError("--resets applies only to --method dpq and bgp16")
    sigma, guarantee = args.sigma, "sigma given directly: no privacy claim computed"
    if method == "non_private":
        sigma, guarantee = None, "none (non-private)"
    elif sigma is None:
        if not targeted:
            raise ValueError("give --sigma or both --epsilon and --delta")
        version = "valid" if args.variant == "corrected" else "paper"
        ns = noise_for(method, args.epsilon, args.delta, hp, version)
        if ns.infeasible:
            from privcal.errors import InfeasibleError

            raise InfeasibleError(ns.infeasible)
        sigma, guarantee = ns.sigma, f"{'DP' if ns.dp else 'not DP w.r.t. reward functions'}: {ns.source}"
    else:
        V.positive("sigma", sigma)
    return dpq_agent.train(method, hp=hp, sigma=sigma, resets=args.resets, epsilon=args.epsilon,
                           delta=args.delta, guarantee=guarantee, seed=args.seed, progress=progress)


def run(args: argparse.Namespace) -> int:
    """Execute ``privcal train dpq``; prints the result (JSON with ``--json``), returns 0.

    Args:
        args: the parsed arguments of ``privcal train dpq``.

    Raises:
        ValueError: bad input (the CLI prints it as one line, exit code 2).
        InfeasibleError: no valid sigma for the target.
    """
    from privcal.rl._progress import ProgressBar

    hp = _hyperparameters(args)
    bar = None if args.json else ProgressBar(hp.samples, label=args.method)
    start = time.perf_counter()
    try:
        result = _train(args, hp, bar)
    finally:
        if bar is not None:
            bar.close()
    seconds = time.perf_counter() - start
    out = result.to_dict()
    out["seconds"] = seconds
    if args.json:
        print(json.dumps(out))
        return 0
    r = result.episode_returns
    print(f"{result.method} on privcal/Interval-v0, T={hp.samples}, B={hp.batch_size}, "
          f"lr={hp.lr:g}, L={hp.lipschitz:g}, gamma={hp.gamma:g}, seed {args.seed}")
    if result.sigma is not None:
        extra = f", beta={result.beta:.5g}, J={result.resets}" if result.beta is not None else ""
        print(f"  sigma                 {result.sigma:.5g}{extra}")
    print(f"  privacy               {result.guarantee}")
    print(f"  episodes              {len(r)}; mean return first 10 {r[:10].mean():.3f}, "
          f"last 10 {r[-10:].mean():.3f}")
    print(f"  time                  {seconds:.2f} s")
    return 0
