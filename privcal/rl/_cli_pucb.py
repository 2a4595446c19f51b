"""``privcal train pucb``: run PUCB (or its non-private baseline) on a seeded tabular MDP.

The lead's ``privcal/cli.py`` calls :func:`add_parser` on the subparsers of ``privcal train`` and
:func:`run` on the parsed arguments; bad input raises ``ValueError`` (turned into one stderr
line and exit code 2 there).
"""

from __future__ import annotations

import argparse
import json
import time

from privcal.rl._progress import ProgressBar

__all__ = ["add_parser", "run"]


def add_parser(subparsers: "argparse._SubParsersAction") -> argparse.ArgumentParser:
    """Add the ``pucb`` subparser to the subparsers object of ``privcal train``; returns it.

    Sets ``_run=run`` as the parser default, which ``privcal.cli`` calls.

    Args:
        subparsers: the object returned by ``add_subparsers`` of the ``train`` parser.

    Returns:
        The new ``pucb`` parser.
    """
    p = subparsers.add_parser(
        "pucb", help="PUCB (Vietri et al. 2020) with binary-mechanism counters",
        description="Train PUCB (epsilon-JDP) or its non-private UBEV-style baseline on a seeded "
                    "tabular episodic MDP and report the exact regret per episode.")
    p.add_argument("--states", type=int, default=10, help="number of states S (default 10)")
    p.add_argument("--actions", type=int, default=3, help="number of actions A (default 3)")
    p.add_argument("--horizon", type=int, default=10, help="episode length H (default 10)")
    p.add_argument("--episodes", type=int, default=1000, help="number of episodes T")
    p.add_argument("--epsilon", type=float, default=None,
                   help="JDP epsilon (required unless --non-private)")
    p.add_argument("--non-private", action="store_true",
                   help="run the non-private baseline (exact counts, no privacy terms)")
    p.add_argument("--beta", type=float, default=0.1, help="failure probability beta (0.1)")
    p.add_argument("--mdp", choices=("random", "riverswim"), default="random",
                   help="MDP family (riverswim needs --actions 2)")
    p.add_argument("--mdp-seed", type=int, default=0, help="seed of the random MDP (0)")
    p.add_argument("--error-bound", choices=("paper", "union"), default="paper",
                   help="counter error bound E: the paper's E_epsilon or the valid union bound")
    p.add_argument("--budget-split", choices=("valid", "paper"), default="valid",
                   help="per-counter epsilon: epsilon/(6H) (valid) or epsilon/(3H) "
                        "(paper; 2 epsilon-JDP)")
    p.add_argument("--unknown", choices=("optimistic", "paper"), default="optimistic",
                   help="Q for counts below 2E: H (optimistic) or min(H, Q + H) as printed")
    p.add_argument("--accuracy", type=float, default=None,
                   help="count episodes with regret > accuracy "
                        "(default: 10%% of the optimal return)")
    p.add_argument("--seed", type=int, default=0, help="seed of the agent and the episodes")
    p.add_argument("--json", action="store_true", help="print one JSON object, no progress bar")
    p.set_defaults(_run=run)  # privcal.cli dispatches ``privcal train AGENT`` to args._run(args)
    return p


def run(args: argparse.Namespace) -> int:
    """Execute ``privcal train pucb``; prints the result (JSON with ``--json``), returns 0.

    Args:
        args: the parsed arguments of the ``pucb`` subparser (see :func:`add_parser`).

    Returns:
        The exit code, 0.

    Raises:
        ValueError: an argument is outside its range (the message names the CLI option).
    """
    from privcal import _validate as V
    from privcal.rl.experiments_pucb import make_mdp
    from privcal.rl.pucb import _check_memory, _run_pucb

    if args.non_private and args.epsilon is not None:
        raise ValueError("epsilon must not be given together with --non-private")
    if not args.non_private and args.epsilon is None:
        raise ValueError("epsilon is required (or pass --non-private)")
    episodes = V.positive_int("episodes", args.episodes)
    # --beta is the CLI's name of the failure probability (the CLI vocabulary is unchanged)
    failure_probability = V.open_unit("beta", args.beta)
    epsilon = None if args.epsilon is None else V.positive("epsilon", args.epsilon)
    for name in ("states", "actions", "horizon"):
        V.positive_int(name, getattr(args, name))
    _check_memory(args.states, args.actions, args.horizon, episodes)  # before the MDP is built
    mdp = make_mdp(args.mdp, args.states, args.actions, args.horizon, seed=args.mdp_seed)
    if args.accuracy is not None:
        V.nonnegative("accuracy", args.accuracy)
    bar = None if args.json else ProgressBar(episodes)
    start = time.perf_counter()
    try:
        result = _run_pucb(mdp, episodes, epsilon, failure_probability, args.seed,
                           budget_split=args.budget_split, error_bound=args.error_bound,
                           unknown=args.unknown, progress=bar)
    finally:
        if bar is not None:
            bar.close()
    seconds = time.perf_counter() - start
    accuracy = 0.1 * result.optimal_return if args.accuracy is None else args.accuracy
    cumulative = result.cumulative_regret
    out = {
        "algorithm": "ubev-style" if args.non_private else "pucb",
        "epsilon": result.epsilon,
        "jdp_epsilon": result.jdp_epsilon,
        "counter_epsilon": result.counter_epsilon,
        "budget_split": args.budget_split,
        "error_bound_kind": args.error_bound,
        "error_bound": result.error_bound,
        "unknown": args.unknown,
        "beta": result.failure_probability,
        "mdp": mdp.name,
        "states": mdp.states, "actions": mdp.actions, "horizon": mdp.horizon,
        "episodes": episodes, "seed": args.seed,
        "optimal_return": result.optimal_return,
        "regret": [float(x) for x in cumulative],
        "final_regret": float(cumulative[-1]),
        "accuracy": accuracy,
        "suboptimal_episodes": result.suboptimal_episodes(accuracy),
        "max_counter_error": result.max_counter_error,
        "seconds": seconds,
    }
    if args.json:
        print(json.dumps(out))
    else:
        eps = "non-private" if out["epsilon"] is None else f"epsilon={out['epsilon']:g}"
        print(f"{out['algorithm']} ({eps}) on {out['mdp']}, {out['episodes']} episodes, "
              f"seed {out['seed']}")
        print(f"  cumulative regret     {out['final_regret']:.3f}  (optimal return "
              f"{out['optimal_return']:.3f} per episode)")
        print(f"  suboptimal episodes   {out['suboptimal_episodes']} (regret > {accuracy:.3g})")
        if out["epsilon"] is not None:
            print(f"  counter epsilon       {out['counter_epsilon']:.4g} "
                  f"(JDP epsilon <= {out['jdp_epsilon']:g}, split {args.budget_split})")
            print(f"  counter error bound E {out['error_bound']:.4g} ({args.error_bound}); "
                  f"largest error seen {out['max_counter_error']:.4g}")
        print(f"  time                  {seconds:.2f} s")
    return 0
