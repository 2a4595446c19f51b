"""``privcal plot``: one chart comparing the accountants (matplotlib, the ``plot`` extra).

    privcal plot epsilon-vs-steps --sigma 3 --delta 1e-5 --steps 1000 --out eps.png
    privcal plot profile --sigma 3 --steps 100 --out profile.svg
    privcal plot sigma-vs-epsilon --delta 1e-5 --steps 100 --out sigma.png
    privcal plot samplers --sigma 1 --epochs 100 --batch-size 10 --dataset-size 1000 --out samplers.png
"""

from __future__ import annotations

import argparse

from privcal.cli.out import add_pld_options, count, pld_block
from privcal.cli.progress import Working

__all__ = ["add_parser", "run"]

KINDS = ("epsilon-vs-steps", "profile", "sigma-vs-epsilon", "samplers")


def add_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Register ``plot`` on the CLI's subparsers; sets ``_run``.

    Args:
        subparsers: the CLI's ``add_subparsers()`` object.
    """
    p = subparsers.add_parser(
        "plot",
        help="draw epsilon vs steps, the privacy profile, or sigma vs epsilon, per accountant; or epsilon vs epochs "
             "per batch sampler (samplers)",
        description=(
            "One chart comparing the accountants that support the setting (exact, pld, rdp, kov, paper; paper "
            "bounds are marked as not valid; without --sample-rate the exact profile stands for the pld curve, "
            "which only approximates it). Needs matplotlib: pip install 'privcal[plot]'."
        ),
    )
    p.add_argument("kind", choices=KINDS, help="which chart")
    p.add_argument("--out", required=True, help="output file, .png or .svg")
    p.add_argument("--sigma", type=float, default=None,
                   help="noise standard deviation, absolute (epsilon-vs-steps, profile; required there)")
    p.add_argument("--delta", type=float, default=None, help="delta (epsilon-vs-steps, sigma-vs-epsilon; default 1e-5)")
    p.add_argument("--steps", type=count, default=None,
                   help="number of releases (epsilon-vs-steps: the largest drawn; default 1000, else 1); 1e4 accepted")
    p.add_argument("--sensitivity", type=float, default=1.0, help="L2 sensitivity of one release (default 1)")
    p.add_argument("--sample-rate", type=float, default=None, help="each release on a subsample at this rate, in (0, 1] (default: no subsampling)")
    p.add_argument("--sampling", choices=("poisson", "without_replacement"), default="poisson",
                   help="subsampling scheme (default: poisson)")
    p.add_argument("--neighbouring", choices=("add_remove", "replace_one", "zero_out"), default=None,
                   help="neighbouring relation the sensitivity is defined under (default: the sampling's natural one)")
    p.add_argument("--epochs", type=count, default=None, help="samplers: the largest number of epochs drawn (default 100)")
    p.add_argument("--batch-size", type=count, default=None, help="samplers: records per batch (required there)")
    p.add_argument("--dataset-size", type=count, default=None, help="samplers: records in the data set (required there)")
    add_pld_options(p)
    p.set_defaults(_run=run)
    return p


def run(args: argparse.Namespace) -> int:
    """Draw the chart ``args.kind`` and write it to ``args.out``; prints the path.

    Args:
        args: the parsed command line.
    """
    from privcal import plot

    if args.kind == "samplers":
        return _samplers(args, plot)
    draw, positional, keywords = _chart(args, plot)
    # a line on stderr, on a terminal only, once a picture has taken more than 2 s
    with pld_block(args), Working(f"privcal: drawing plot {args.kind}"):
        fig = draw(*positional, **keywords)
    return _save(plot, fig, args.out)


def _chart(args: argparse.Namespace, plot) -> tuple:
    """(function, positional arguments, keyword arguments) of the chart ``args.kind`` (not samplers), after
    refusing the flags it does not use (a ValueError naming them)."""
    from privcal import _validate as V

    run_flags = [f for f, v in (("--epochs", args.epochs), ("--batch-size", args.batch_size),
                                ("--dataset-size", args.dataset_size)) if v is not None]
    if run_flags:
        raise ValueError(f"{', '.join(run_flags)} appl{'ies' if len(run_flags) == 1 else 'y'} only to privcal plot "
                         "samplers")
    needs_sigma = args.kind in ("epsilon-vs-steps", "profile")
    if needs_sigma and args.sigma is None:
        raise ValueError(f"privcal plot {args.kind} needs --sigma")
    if not needs_sigma and args.sigma is not None:
        raise ValueError(f"--sigma is not used by privcal plot {args.kind} (it plots sigma); drop it")
    if args.kind == "profile" and args.delta is not None:
        raise ValueError("--delta is not used by privcal plot profile (it plots delta against epsilon); drop it")
    delta = 1e-5 if args.delta is None else args.delta
    if args.sample_rate is None and (args.sampling != "poisson" or args.neighbouring is not None):
        raise ValueError("--sampling and --neighbouring need --sample-rate")
    steps = V.positive_int("steps", 1000 if args.steps is None and args.kind == "epsilon-vs-steps"
                           else (1 if args.steps is None else args.steps))
    setting = dict(sensitivity=args.sensitivity, sample_rate=args.sample_rate, sampling=args.sampling,
                   neighbouring=args.neighbouring)
    if args.sample_rate is None:  # plain Gaussian releases: the exact profile is the curve the PLD approximates;
        # it is never routed through a PLD grid (which at 1e12 steps exceeds any memory cap)
        setting["accountants"] = tuple(n for n in plot.ACCOUNTANT_ORDER if n != "pld")
        if args.pld_accuracy is not None or args.memory_limit is not None:
            raise ValueError("--pld-accuracy and --memory-limit apply only with --sample-rate (plain Gaussian "
                             "releases are drawn from the exact profile, with no PLD grid)")
    if args.kind == "epsilon-vs-steps":
        return plot.epsilon_vs_steps, (args.sigma, delta), dict(steps=steps, **setting)
    if args.kind == "profile":
        return plot.profile, (args.sigma,), dict(steps=steps, **setting)
    return plot.sigma_vs_epsilon, (delta,), dict(steps=steps, **setting)


def _samplers(args: argparse.Namespace, plot) -> int:
    """``privcal plot samplers``: epsilon against epochs for each batch sampler at one sigma."""
    if args.sigma is None or args.batch_size is None or args.dataset_size is None:
        missing = [f for f, v in (("--sigma", args.sigma), ("--batch-size", args.batch_size),
                                  ("--dataset-size", args.dataset_size)) if v is None]
        raise ValueError(f"privcal plot samplers needs {', '.join(missing)}")
    wrong = [f for f, v in (("--steps", args.steps), ("--sample-rate", args.sample_rate),
                            ("--neighbouring", args.neighbouring)) if v is not None]
    if args.sampling != "poisson":
        wrong.append("--sampling")
    if wrong:
        raise ValueError(f"{', '.join(wrong)} not used by privcal plot samplers (it draws every sampler, each under "
                         "its own relation)")
    fig = plot.epsilon_vs_epochs(args.sigma, 1e-5 if args.delta is None else args.delta,
                                 epochs=100 if args.epochs is None else args.epochs, batch_size=args.batch_size,
                                 dataset_size=args.dataset_size, sensitivity=args.sensitivity)
    return _save(plot, fig, args.out)


def _save(plot, fig, out: str) -> int:
    """Write ``fig`` to ``out`` (a one-line ValueError where it cannot be written) and print the path."""
    try:
        plot.save(fig, out)
    except OSError as exc:
        raise ValueError(f"cannot write {out!r}: {exc.strerror or exc}") from None
    print(out)
    return 0
