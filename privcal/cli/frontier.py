"""``privcal frontier AGENT``: the privacy-utility frontier of dpq, gpope, pucb or frozenlake (``privcal.rl.frontier``).

``privcal.cli`` (``privcal/cli/__init__.py``) calls :func:`add_parser` on its subparsers and :func:`run` on the parsed
arguments; bad input raises ``ValueError`` (one stderr line, exit code 2 there). Importing this module
needs neither gymnasium nor matplotlib nor joblib.
"""

from __future__ import annotations

import argparse
import sys

from privcal.cli import out as _cli_out

__all__ = ["add_parser", "run"]

_AGENTS = ("dpq", "gpope", "pucb", "frozenlake")


def add_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Add the ``frontier`` subparser to ``privcal``'s subparsers; returns it.

    Args:
        subparsers: the subparsers object of the top-level ``privcal`` parser (``add_subparsers()``).
    """
    from privcal.rl import frontier as F  # numpy only; the agents are imported when run

    def defaults(key):
        return "; ".join(f"{a} {','.join(f'{x:g}' for x in F.SETTINGS[a]['fast'][key])}" for a in _AGENTS)

    p = subparsers.add_parser(
        "frontier", help="privacy-utility frontier: utility against epsilon and data, valid and paper noise",
        description="Sweep the target epsilon and the amount of data for one agent, train a few seeds per "
                    "point in parallel under the valid calibration and under the paper's sigma, and report the "
                    "mean and std of the utility per point beside the trivial and non-private references, with "
                    "whether the point beats the trivial reference (one-sided Student-t test over seeds, alone and "
                    "after Holm's correction over each line's epsilon grid) and, beside every unit finer than a "
                    "user, the user-level epsilon. "
                    "dpq: return per episode (mean of the last 10) against samples T; gpope: MSPBE on the "
                    "chain against trajectories m; pucb: cumulative regret per episode against episodes; frozenlake: "
                    "the released policy's exact goal probability against users' episodes n (select and fqi-dpsgd, "
                    "episode unit = one user).")
    p.add_argument("agent", choices=_AGENTS, help="the agent whose frontier is drawn (no default: required)")
    _add_sweep_flags(p, defaults)
    _add_run_flags(p)
    _cli_out.add_format(p)
    p.set_defaults(_run=run)
    return p


def _add_sweep_flags(p: argparse.ArgumentParser, defaults) -> None:
    """What is swept: epsilons, amounts of data, seeds, noise variants, environment, setting, delta."""
    from privcal.rl import frontier as F

    p.add_argument("--epsilons", type=_cli_out.numbers, default=None,
                   help=f"comma-separated target epsilons, each > 0 (default per agent, fast setting: {defaults('epsilons')})")
    p.add_argument("--amounts", type=_cli_out.counts, default=None,
                   help="comma-separated amounts of data: dpq samples T, gpope trajectories m, pucb episodes, "
                        "frozenlake users' episodes n; 1e4 "
                        f"accepted (default per agent, fast setting: {defaults('amounts')})")
    p.add_argument("--seeds", type=_cli_out.seeds, default=None,
                   help="seeds, one training run each per point: ranges and lists, e.g. 0-9 or 0,1,5 (ints >= 0); "
                        "two or more give a "
                        "verdict (default: 0,1,2 in the fast setting, 10 seeds (pucb 5) in the paper setting; "
                        "frozenlake 0-99 fast, 0-199 paper)")
    p.add_argument("--variant", choices=F.VARIANT_CHOICES, default="all",
                   help="noise: valid (the valid calibration), paper (the paper's sigma, no valid guarantee), "
                        "gaussian (pucb only: Gaussian counters, valid (epsilon, delta)-JDP), the valid dpq learners "
                        "select, fqi-transition, fqi-episode (random-peak environment), frozenlake's select and "
                        "fqi-episode, both (valid and "
                        "paper) or all (every variant of the agent), labelled (default all)")
    p.add_argument("--environment", choices=tuple(dict.fromkeys(F.ENVIRONMENTS + F.FROZENLAKE_ENVIRONMENTS)),
                   default=None,
                   help="dpq: random-peak (the reward's peak theta drawn per seed; utility the released greedy "
                        "policy's return; trivial reference the best data-independent policy in expectation over "
                        "theta) or fixed (App. E.1's reward; Algorithm 1 only, against the random policy) "
                        "(default random-peak); frozenlake: random-map (the map drawn per seed from a public prior; "
                        "reference the best data-independent policy in expectation over the prior) or fixed "
                        "(gymnasium's public map, against the uniform policy) (default random-map)")
    p.add_argument("--setting", choices=("fast", "paper"), default="fast",
                   help="default sweep and sizes: fast (minutes on 2 cores) or paper (the papers' sizes) "
                        "(default fast)")
    p.add_argument("--delta", type=float, default=None,
                   help="target delta, in (0, 1) (default dpq 1e-4 as App. E.3, gpope 1e-5, pucb 1e-5 for its "
                        "gaussian variant only: Laplace counters are pure epsilon-JDP, frozenlake 1e-5 for fqi-dpsgd: "
                        "select is pure epsilon-DP)")


def _add_run_flags(p: argparse.ArgumentParser) -> None:
    """How the runs are judged and where they go: confidence, parallelism, backend, picture."""
    p.add_argument("--confidence", type=float, default=0.95,
                   help="one-sided confidence of the 'beats trivial' verdict, in (0, 1) (default 0.95)")
    p.add_argument("--n-jobs", type=int, default=-1,
                   help="parallel training runs: an int >= 1, or -1 for all local cores or all cluster workers "
                        "(default -1)")
    p.add_argument("--backend", choices=("local", "dask"), default="local",
                   help="where the runs go: local (joblib's loky processes on this machine) or dask (the Dask "
                        "distributed cluster at --scheduler; pip install 'privcal[dask]') (default local)")
    p.add_argument("--scheduler", metavar="ADDRESS", default=None,
                   help="Dask scheduler address, e.g. tcp://10.0.0.5:8786 (required with --backend dask; "
                        "default: none)")
    p.add_argument("--plot", metavar="FILE", default=None,
                   help="also draw the frontier (utility against epsilon, log x, references as lines) to FILE "
                        "(.png or .svg; needs matplotlib: pip install 'privcal[plot]'; default: no picture)")


def run(args: argparse.Namespace) -> int:
    """Execute ``privcal frontier``; prints the table in the chosen format, returns 0.

    Args:
        args: the parsed arguments of ``privcal frontier``.

    Raises:
        ValueError: bad input (the CLI prints it as one line, exit code 2 there).
    """
    from privcal.rl import frontier as F

    fmt = _cli_out.chosen(args)
    _check(args)
    bar = None
    if fmt == "text":  # the runs take minutes: a progress bar on stderr (not with machine-read formats)
        from privcal.cli.progress import ProgressBar

        bar = ProgressBar(1, label=f"frontier {args.agent} (training runs)")
    try:
        result = F.frontier(args.agent, epsilons=args.epsilons, amounts=args.amounts, seeds=args.seeds,
                            variant=args.variant, setting=args.setting, delta=args.delta,
                            confidence=args.confidence, n_jobs=args.n_jobs, backend=args.backend,
                            scheduler=args.scheduler, progress=bar, environment=args.environment)
    finally:
        if bar is not None:
            bar.close()
    _emit(args, result, fmt)
    return 0


def _check(args: argparse.Namespace) -> None:
    """Refuse what cannot run, before any training (a missing matplotlib for --plot, a lone --scheduler, ...)."""
    if args.plot is not None:
        from privcal import plot

        try:  # a clear ImportError now, not after training
            import matplotlib  # noqa: F401
        except ImportError:
            raise ImportError("privcal's plots need matplotlib: pip install 'privcal[plot]'") from None
        plot.check_path(args.plot)
    if args.backend == "dask" and not args.scheduler:
        raise ValueError("--backend dask needs --scheduler ADDRESS (e.g. tcp://host:8786)")
    if args.backend != "dask" and args.scheduler is not None:
        raise ValueError("--scheduler is used only with --backend dask")
    if args.delta is not None and args.agent == "pucb" and args.variant not in ("all", "gaussian"):
        raise ValueError("--delta applies to pucb only with --variant gaussian or all (the Laplace counters are "
                         "pure epsilon-DP)")
    if args.n_jobs == 0 or args.n_jobs < -1:
        raise ValueError(f"--n-jobs must be an integer >= 1 or -1, got {args.n_jobs}")


def _emit(args: argparse.Namespace, result, fmt: str) -> None:
    """Print the frontier in the chosen format and draw it to ``--plot``."""
    from privcal.rl import frontier as F

    if fmt == "markdown":
        print(result.markdown())
    else:
        if fmt == "csv":  # one row per point (the references as columns)
            rows = result.rows()
            _cli_out.emit(fmt, {}, result.text, {k: [r[k] for r in rows] for k in rows[0]})
        else:
            _cli_out.emit(fmt, result.to_dict(), result.text)
    if args.plot is not None:
        fig = F.plot_frontier(result)
        from privcal import plot

        try:
            plot.save(fig, args.plot)
        except OSError as exc:
            raise ValueError(f"cannot write {args.plot!r}: {exc.strerror or exc}") from None
        print(f"privcal: wrote {args.plot}", file=sys.stderr)
