"""The command line's parser: every subcommand and flag of ``privcal`` (the agents of ``privcal train`` register
their own, ``add_parser`` of each ``privcal.cli`` agent module). A usage error is one line (:class:`UsageError`)."""

from __future__ import annotations

import argparse

from ..accounting import api
from ..accounting.sampled_runs import RUN_SAMPLERS
from ..calibrators import table
from . import out as _out

__all__ = ["build_parser", "UsageError"]


class UsageError(Exception):
    """A usage error of the command line, its text the one line ``privcal`` prints (exit status 2)."""


class _Parser(argparse.ArgumentParser):
    """argparse that reports usage errors as one line (the caller prints it and exits 2)."""

    def error(self, message):
        # every refusal starts "privcal: error:" (argparse's own started with the subcommand); its --help is named
        raise UsageError(f"privcal: error: {message} (see {self.prog} --help)")



def build_parser() -> argparse.ArgumentParser:
    """The ``privcal`` argument parser with every command (usage errors raise instead of exiting)."""
    parser = _Parser(
        prog="privcal",
        description="Privacy accounting and noise calibration for differentially private RL.",
    )
    from .. import __version__

    parser.add_argument("--version", action="version", version=f"privcal {__version__}")
    sub = parser.add_subparsers(dest="command", parser_class=_Parser, metavar="COMMAND")

    _add_table(sub)
    _add_calibrate_and_epsilon(sub)
    from . import plot as plot_cli

    plot_cli.add_parser(sub)

    from . import frontier as frontier_cli
    from . import verify as verify_cli

    verify_cli.add_parser(sub)  # `privcal verify`: add_parser(subparsers) sets _run, like the agents
    frontier_cli.add_parser(sub)  # `privcal frontier AGENT`: the privacy-utility frontier (privcal.rl.frontier)

    tr = sub.add_parser("train", help="train a private agent", description="Train a private RL agent.")
    agents = tr.add_subparsers(dest="agent", parser_class=_Parser, metavar="AGENT")
    tr.set_defaults(_agents=agents)
    _add_train_agents(agents)
    return parser




def _add_table(sub) -> None:
    """The ``table`` subcommand and its flags (the main job)."""
    t = sub.add_parser(
        "table",
        help="sigma each bound requires, side by side (the main job)",
        description=(
            "For each target epsilon at one delta: the sigma each bound requires and its ratio to the "
            "exact sigma (gpope: to the valid RDP sigma). Rows flag paper closed forms that are not actually "
            "sufficient (checked on the exact privacy profile / the valid accountant). Setting 'dpq' is DP "
            "Q-learning (Wang & Hegde 2019, defaults of App. E.3) with end-to-end calibrations; 'gaussian' is "
            "a plain composed Gaussian mechanism; 'gpope' is GPOPE's Algorithm 1 (one of m trajectories "
            "per iteration)."
        ),
    )
    t.add_argument("--setting", choices=("dpq", "gaussian", "gpope"), default="dpq", help="default: dpq")
    t.add_argument(
        "--epsilons", type=_out.numbers, default=None,
        help=f"comma-separated targets (default: {','.join(map(str, table.DEFAULT_EPSILONS))}; "
        f"gpope: {','.join(map(str, table.GPOPE_EPSILONS))})",
    )
    t.add_argument("--delta", type=float, default=1e-5, help="target delta (default: %(default)g)")
    _add_table_setting_flags(t)
    _out.add_format(t)
    _out.add_pld_options(t)
    t.add_argument(
        "--wide", action="store_true",
        help="text: add every bound side by side under the lead rows (lines over 100 columns); "
        "markdown, csv and json always carry every bound (without it, --setting gpope computes only what the "
        "lead rows read: the same rows, faster)",
    )


def _add_table_setting_flags(t) -> None:
    """The flags of each ``table --setting``: dpq, gaussian (plain releases or a run over epochs), gpope."""
    d = table.DPQ_DEFAULTS
    t.add_argument("--samples", type=_out.count, default=d["samples"], help="dpq: T samples (default: %(default)s)")
    t.add_argument("--batch-size", type=_out.count, default=None,
                   help=f"dpq: B (default: {d['batch_size']}); gaussian with --sampling: records per batch (required)")
    t.add_argument("--lr", type=float, default=d["lr"], help="dpq: learning rate alpha (default: %(default)g)")
    t.add_argument("--k", type=float, default=d["k"], help="dpq: noise bound k of Thm 5 (default: %(default)g)")
    t.add_argument("--lipschitz", type=float, default=d["lipschitz"], help="dpq: L (default: %(default)g)")
    t.add_argument("--resets", type=_out.count, default=None, help="dpq: J noise resets (default: floor(T/B))")
    t.add_argument("--actions", type=_out.count, default=2, help="dpq: actions, one noise path each (default: 2)")
    t.add_argument("--steps", type=_out.count, default=100, help="gaussian: releases (default: %(default)s)")
    t.add_argument("--sensitivity", type=float, default=1.0, help="gaussian: L2 sensitivity (default: 1)")
    t.add_argument("--sampling", choices=RUN_SAMPLERS, default=None,
                   help="gaussian: a run of --epochs over --dataset-size records in batches of --batch-size, priced "
                   "for this sampler (valid sigma, the sigma below which it is certifiably not private, and "
                   "Poisson's sigma, not valid for it); default: plain releases (--steps)")
    t.add_argument("--epochs", type=_out.count, default=None,
                   help="gaussian with --sampling: epochs (required there; no default)")
    t.add_argument("--dataset-size", type=_out.count, default=None,
                   help="gaussian with --sampling: records in the data set (required there; no default)")
    t.add_argument("--neighbouring", choices=("add_remove", "replace_one", "zero_out"), default=None,
                   help="gaussian with --sampling: the relation (default: zero_out for shuffle, add_remove otherwise)")
    t.add_argument("--persistent", action="store_true",
                   help="gaussian with --sampling shuffle|balls_in_bins: one permutation for the whole run")
    g = table.GPOPE_DEFAULTS
    t.add_argument("--trajectories", type=_out.count, default=g["trajectories"], help="gpope: m (default: %(default)s)")
    t.add_argument("--iterations", type=_out.count, default=g["iterations"], help="gpope: N (default: %(default)s)")


def _release_flags() -> dict:
    """The flags that describe one setting of releases, shared by ``calibrate`` and ``epsilon`` (in --help order)."""
    return {**_setting_flags(), **_sampled_run_flags()}


def _setting_flags() -> dict:
    """The releases themselves: how many, their sensitivity, the accountant, the sample rate and the sampler."""
    return dict(
        steps=("--steps", dict(type=_out.count, default=None, help="number of composed releases (default: 1; 1e4 accepted)")),
        sensitivity=(
            "--sensitivity",
            dict(type=float, default=None, help="L2 / RKHS sensitivity of one release under the neighbouring "
                 "relation (default: 1; replace-one: 2C for a sum of contributions clipped to C)"),
        ),
        accountant=(
            "--accountant",
            dict(choices=api.ACCOUNTANT_CHOICES, default="best",
                 help="bound to use (default: best valid: the exact profile for plain releases, else the PLD, "
                 "with rdp / basic where the PLD gives no finite answer; the output names who answered and why)"),
        ),
        sample_rate=("--sample-rate", dict(type=float, default=None, help="each release on a subsample at this rate, in (0, 1] (default: no subsampling)")),
        sampling=(
            "--sampling",
            dict(choices=("poisson", "without_replacement", *RUN_SAMPLERS), default="poisson",
                 help="batch sampler (default: poisson, with --sample-rate; without_replacement: a fixed-size batch "
                 "drawn afresh each step); shuffle, balls_in_bins, full_batch: a run of --epochs over "
                 "--dataset-size records in batches of --batch-size, answered with the valid upper bound, a "
                 "certified realisable lower bound and Poisson's figure (not valid for that sampler)"),
        ),
    )


def _sampled_run_flags() -> dict:
    """A run over epochs (shuffle, balls-in-bins, full batch) and the neighbouring relation."""
    return dict(
        epochs=("--epochs", dict(type=_out.count, default=None, help="with --sampling shuffle|balls_in_bins|"
                                 "full_batch: number of epochs (required there; no default)")),
        batch_size=("--batch-size", dict(type=_out.count, default=None, help="with --sampling shuffle|"
                                         "balls_in_bins|full_batch: records per batch (required there; no default)")),
        dataset_size=("--dataset-size", dict(type=_out.count, default=None, help="with --sampling shuffle|"
                                             "balls_in_bins|full_batch: records in the data set (required there; no "
                                             "default)")),
        persistent=("--persistent", dict(action="store_true", help="with --sampling shuffle|balls_in_bins: one "
                                         "permutation (assignment) for the whole run instead of a fresh one each epoch")),
        neighbouring=(
            "--neighbouring",
            dict(
                choices=("add_remove", "replace_one", "zero_out"), default=None,
                help="neighbouring relation the sensitivity is defined under (default: add_remove for poisson, "
                "replace_one without replacement); with --history: the one relation of the whole history (default: "
                "the one its groups state; groups under another relation are converted by a proven pair, or refused)",
            ),
        ),
    )


def _add_calibrate_and_epsilon(sub) -> None:
    """The ``calibrate`` and ``epsilon`` subcommands: one setting of releases (or a history), both directions."""
    common = _release_flags()
    c = sub.add_parser(
        "calibrate",
        help="sigma for a target (epsilon, delta)",
        description="Smallest sigma for which STEPS Gaussian releases are (epsilon, delta)-DP (mirrors privcal.calibrate).",
    )
    c.add_argument("--epsilon", type=float, required=True,
                   help="target epsilon of the whole history, in (0, 1e6] (required)")
    c.add_argument("--delta", type=float, required=True, help="target delta of the whole history, in (0, 1) (required)")
    c.add_argument("--scale", type=_out.seed, default=None,
                   help="with --history: scale only this group's sigma (0-based; default: every group)")
    e = sub.add_parser(
        "epsilon",
        help="epsilon of a given sigma at delta",
        description="Epsilon at delta of STEPS Gaussian releases with noise SIGMA (mirrors privcal.epsilon).",
    )
    e.add_argument("--sigma", type=float, default=None,
                   help="noise standard deviation, absolute (not a multiplier); required unless --history")
    e.add_argument("--delta", type=float, required=True, help="delta at which epsilon is reported, in (0, 1) (required)")
    for p in (c, e):
        for flag, kw in common.values():
            p.add_argument(flag, **kw)
        _out.add_pld_options(p)
        _out.add_format(p)
        p.add_argument(
            "--history", default=None, metavar="FILE",
            help="a history of release groups instead of one setting: JSON (or TOML on Python >= 3.11), a list of "
            "{sigma, sensitivity, steps, sample_rate, sampling, neighbouring} (default: the one setting of the flags)",
        )


def _add_train_agents(agents) -> None:
    """Agents register here; each module provides add_parser(subparsers) and run(args) -> int."""
    from . import dpq, gpope, pucb, toytext, ucbvi

    for module in (dpq, gpope, pucb, toytext, ucbvi):
        module.add_parser(agents)
