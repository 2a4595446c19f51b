"""Command-line interface: ``privcal table | calibrate | epsilon | verify | train``.

Bad input prints one line to stderr and exits with status 2 (no traceback).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import sys
import warnings
from collections.abc import Sequence
from typing import Any, Callable, Optional

from ..analysis import rdp
from ..accounting import api
from ..accounting.events import relation_of
from ..accounting.sampled_runs import RUN_SAMPLERS
from ..calibrators import render, table
from ..errors import PrivcalError, UnsupportedEventError
from . import out as _out
from .progress import Working

__all__ = ["main", "build_parser", "answered", "bracket_line", "show_warning", "glue_negative_values"]

FORMATS = ("text", "markdown", "csv", "json")


class _UsageError(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    """argparse that reports usage errors as one line (the caller prints it and exits 2)."""

    def error(self, message):
        # every refusal starts "privcal: error:" (argparse's own started with the subcommand); its --help is named
        raise _UsageError(f"privcal: error: {message} (see {self.prog} --help)")



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


# ---------------------------------------------------------------------------------------------------
# formatting


def __getattr__(name: str):
    # the former home of the table renderer: deprecated since 0.2.0, removed in 0.3.0
    if name == "format_table":
        warnings.warn("privcal.cli.format_table is deprecated: use privcal.calibrators.render.format_table (same "
                      "signature, plus wide); removed in 0.3.0", DeprecationWarning, stacklevel=2)
        return render.format_table
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _cmd_table(args) -> int:
    fmt = _out.chosen(args)
    _check_table_values(args, fmt)
    with (Working(f"privcal: table {args.setting}") if fmt == "text" else contextlib.nullcontext()), \
            _out.pld_block(args):  # --pld-accuracy / --memory-limit: every PLD the table builds
        tab = _table_of(args, fmt)
    print(render.format_table(tab, fmt, wide=args.wide))
    return 0


def _check_table_values(args, fmt: str) -> None:
    """Refuse flags that do not fit the setting and targets out of range (before any work)."""
    if args.wide and fmt != "text":
        raise _UsageError("privcal: error: --wide applies to --format text only (markdown, csv and json carry every "
                          "bound)")
    if args.setting == "dpq":
        _out.pld_options(args)  # a value out of range is named first
        given = [f for f, v in (("--pld-accuracy", args.pld_accuracy), ("--memory-limit", args.memory_limit))
                 if v is not None]
        if given:  # its columns are closed forms and exact profiles: no PLD grid to tune
            raise ValueError(f"{' and '.join(given)} appl{'ies' if len(given) == 1 else 'y'} only to --setting "
                             "gaussian and gpope (the dpq table builds no PLD)")
    for e in args.epsilons or ():
        if not 0 < e <= table.MAX_EPSILON:
            raise ValueError(f"--epsilons: each target must be in (0, {table.MAX_EPSILON:g}], got {e:g}")


def _table_of(args, fmt: str):
    """The table the flags ask for (``privcal.calibrators.table``)."""
    if args.setting == "dpq":
        return table.dpq_table(
            args.epsilons or table.DEFAULT_EPSILONS, args.delta, samples=args.samples,
            batch_size=table.DPQ_DEFAULTS["batch_size"] if args.batch_size is None else args.batch_size,
            lr=args.lr, k=args.k, lipschitz=args.lipschitz, resets=args.resets, actions=args.actions,
        )
    if args.setting == "gpope":
        return table.gpope_table(  # the default text view reads the lead only: the rest is not computed
            args.epsilons or table.GPOPE_EPSILONS, args.delta, trajectories=args.trajectories, iterations=args.iterations,
            lead_only=fmt == "text" and not args.wide,
        )
    if args.sampling is not None:
        from ..calibrators.sampler_table import sampler_table

        missing = [f for f, v in (("--epochs", args.epochs), ("--batch-size", args.batch_size),
                                  ("--dataset-size", args.dataset_size)) if v is None]
        if missing:
            raise ValueError(f"--sampling {args.sampling} needs {', '.join(missing)}")
        return sampler_table(args.epsilons or table.DEFAULT_EPSILONS, args.delta, sampling=args.sampling,
                             epochs=args.epochs, batch_size=args.batch_size, dataset_size=args.dataset_size,
                             sensitivity=args.sensitivity, neighbouring=args.neighbouring,
                             persistent=args.persistent)
    given = [f for f, v in (("--epochs", args.epochs), ("--dataset-size", args.dataset_size),
                            ("--neighbouring", args.neighbouring)) if v is not None]
    if args.persistent:
        given.append("--persistent")
    if given:
        raise ValueError(f"{', '.join(given)} appl{'ies' if len(given) == 1 else 'y'} only with --sampling")
    return table.gaussian_table(args.epsilons or table.DEFAULT_EPSILONS, args.delta, steps=args.steps,
                                sensitivity=args.sensitivity)


#: the flags of `privcal table` that only one setting reads
_TABLE_FLAGS = {
    "dpq": ("samples", "batch_size", "lr", "k", "lipschitz", "resets", "actions"),
    "gaussian": ("steps", "sensitivity", "sampling", "epochs", "dataset_size", "neighbouring", "persistent"),
    "gpope": ("trajectories", "iterations"),
}


def _check_table_flags(args, defaults) -> None:
    """Refuse flags the chosen setting would ignore (a flag left at its default is not 'given')."""
    for setting, dests in _TABLE_FLAGS.items():
        if setting == args.setting:
            continue
        if args.setting == "gaussian" and getattr(args, "sampling", None) is not None:
            dests = tuple(d for d in dests if d != "batch_size")  # the run's batch size
        given = [d for d in dests if getattr(args, d) != getattr(defaults, d)]
        if given:
            flags = ", ".join("--" + d.replace("_", "-") for d in given)
            raise ValueError(f"{flags} applies only to --setting {setting}, not {args.setting}")


def _report_dict(report) -> dict:
    d = dict(report.__dict__)
    d["notes"] = [_user_words(note) for note in d["notes"]]  # the flags, as in the text output
    return d


def _subsampling(args) -> dict:
    if args.sample_rate is None:
        if args.sampling != "poisson" or args.neighbouring is not None:
            raise ValueError("--sampling and --neighbouring apply only with --sample-rate (no subsampling without it)")
        return {}
    return {"sample_rate": args.sample_rate, "sampling": args.sampling, "neighbouring": args.neighbouring}


#: Human words for the library's codes in text output (json, csv and markdown keep the codes).
_WORDS = {"poisson": "Poisson", "without_replacement": "without-replacement", "add_remove": "add/remove",
          "replace_one": "replace-one", "zero_out": "zero-out", "shuffle": "shuffled", "balls_in_bins": "balls-in-bins",
          "full_batch": "full-batch"}


def bracket_line(bracket: Optional[tuple], realisable: bool) -> Optional[str]:
    """The certified bracket of epsilon in one short line; None when it says nothing (a single point).

    A bracket whose lower end is below 1% of its upper end tells nothing of the tightness: only that is said.

    Args:
        bracket: (lower, upper) bounds on epsilon, or None.
        realisable: whether the lower end is that of this mechanism (a realisable pair).

    Returns:
        the line, or None.
    """
    if bracket is None or bracket[0] == bracket[1]:
        return None
    lo, hi = bracket
    if not lo > 0.01 * hi:
        return f"  bracket     wide (lower end {lo:.3g}): a certified upper bound of unknown tightness"
    lower = "a realisable pair loses at least this much" if realisable else "of the priced pair, not of this mechanism"
    return f"  bracket     [{lo:.6g}, {hi:.6g}], certified; lower end: {lower}"


def _relation_line(neighbouring: Optional[str]) -> str:
    """The one neighbouring relation a guarantee protects, in one line of text output."""
    if neighbouring is None:
        return ("  neighbours  those the sensitivity is stated under (plain Gaussian releases are priced alike "
                "under every relation)")
    return f"  neighbours  {_WORDS.get(neighbouring, neighbouring)}: the one relation of the whole history"


def _print_report(report, fmt: str, headline: str) -> int:
    lines = [headline, f"  accountant  {report.accountant}: {report.guarantee}"]
    bracket = bracket_line(getattr(report, "bracket", None), getattr(report, "realisable", True))
    if bracket is not None:
        lines.append(bracket)
    if report.sampling is not None:
        lines.append(f"  setting     {_WORDS.get(report.sampling, report.sampling)} subsampling, rate "
                     f"{report.sample_rate:g}, {_WORDS.get(report.neighbouring, report.neighbouring)} neighbours "
                     f"(sensitivity {report.sensitivity:g})")
    else:
        lines.append(_relation_line(None))
    lines += [f"  note        {_user_words(note)}" for note in report.notes]
    _out.emit(fmt, _report_dict(report), "\n".join(lines))
    return 0


def _setting(args) -> dict:
    """The one-setting flags, refusing them next to --history (which carries its own)."""
    given = [f for f, v in (("--steps", args.steps), ("--sensitivity", args.sensitivity),
                            ("--sample-rate", args.sample_rate)) if v is not None]
    if args.sampling != "poisson":
        given.append("--sampling")
    if args.history is not None:
        if given:
            raise ValueError(f"{', '.join(given)} cannot be combined with --history (each group in the file sets its own)")
        return {}
    if args.neighbouring is not None:
        given.append("--neighbouring")
    return dict(sensitivity=1.0 if args.sensitivity is None else args.sensitivity,
                steps=1 if args.steps is None else args.steps, **_subsampling(args))


def _history(args):
    from ..accounting import history

    groups = history.load_history(args.history)
    if getattr(args, "scale", None) is not None and args.scale >= len(groups):
        raise ValueError(f"--scale must be a group index in [0, {len(groups) - 1}] ({args.history} has "
                         f"{len(groups)} release group{'s' if len(groups) > 1 else ''}), got {args.scale}")
    event = history.history_event(groups, neighbouring=args.neighbouring)
    try:
        relation_of(event)
    except UnsupportedEventError as exc:  # one history, one relation
        raise ValueError(f"{args.history}: {exc}" + ("" if args.neighbouring is None else
                                                     " (drop --neighbouring, or split the file)")) from None
    try:
        api.resolve_accountants(args.accountant, event, "this history")
    except UnsupportedEventError:
        able = api.resolve_accountants("best", event, "this history") if args.accountant != "best" else []
        raise ValueError(f"--accountant {args.accountant} cannot price {args.history} (a group it does not support, "
                         f"e.g. subsampled releases); valid accountants that can: best, {', '.join(able)}") from None
    for g in groups:
        _check_pld_range(args.accountant, g.sigma, g.releases.sensitivity, "a group's sigma")
    return history, groups


#: The largest sensitivity / sigma the PLD accountant is asked to price from the command line: its grid would
#: need more than ~1e20 cells beyond it (the memory cap refuses far earlier), and its numerics leave float64.
_PLD_MAX_RATIO = 1e10


def _check_pld_range(accountant: str, sigma: float, sensitivity: float, what: str = "--sigma") -> None:
    """Refuse, before any work, a sigma the PLD accountant cannot price (only when it alone is asked for:
    'best' moves on to another valid accountant)."""
    if accountant != "pld" or not (sigma > 0 and sensitivity > 0):
        return
    ratio = sensitivity / sigma
    if ratio > _PLD_MAX_RATIO:
        raise ValueError(
            f"{what} {sigma:g} is too small for --accountant pld: sensitivity / sigma = {ratio:.3g} must be at most "
            f"{_PLD_MAX_RATIO:g}; --accountant best prices it (exact without subsampling, else rdp)")


def _progress_label(args, doing: str, groups: Optional[int] = None) -> Optional[str]:
    """What a progress line says (text output only: machine-read formats stay quiet on stderr)."""
    if _out.chosen(args) != "text":
        return None
    what = "the releases" if groups is None else f"{groups} release group{'s' if groups > 1 else ''}"
    return f"{doing} {what} ({args.accountant})"


def _run_flags(args) -> Optional[dict]:
    """The run of --sampling shuffle|balls_in_bins|full_batch (None for the other samplers), refusing the flags
    of the other kind."""
    run = {"epochs": args.epochs, "batch_size": args.batch_size, "dataset_size": args.dataset_size}
    if args.sampling not in RUN_SAMPLERS:
        given = [f"--{k.replace('_', '-')}" for k, v in run.items() if v is not None] + (
            ["--persistent"] if args.persistent else [])
        if given:
            raise ValueError(f"{', '.join(given)} appl{'ies' if len(given) == 1 else 'y'} only with --sampling "
                             f"shuffle, balls_in_bins or full_batch")
        return None
    missing = [f"--{k.replace('_', '-')}" for k, v in run.items() if v is None]
    if missing:
        raise ValueError(f"--sampling {args.sampling} needs {', '.join(missing)}")
    wrong = [f for f, v in (("--sample-rate", args.sample_rate), ("--steps", args.steps),
                            ("--history", args.history)) if v is not None]
    if wrong:
        raise ValueError(f"{', '.join(wrong)} cannot be combined with --sampling {args.sampling} (the run is "
                         "--epochs x ceil(--dataset-size / --batch-size) steps)")
    if args.accountant != "best":
        raise ValueError(f"--accountant {args.accountant} does not apply to --sampling {args.sampling} (its upper "
                         "bound is the exact Gaussian without amplification)")
    return dict(run, sampling=args.sampling, persistent=args.persistent, neighbouring=args.neighbouring,
                sensitivity=1.0 if args.sensitivity is None else args.sensitivity)


def _print_run(r, fmt: str, headline: str, extra: Optional[dict] = None) -> int:
    """Text, json, csv or markdown of a run over epochs: both ends and Poisson's figure side by side."""
    lines = [headline,
             f"  upper       {r.epsilon:.6g}  valid: {r.guarantee}",
             f"  lower       {r.lower:.6g}  certified: a realisable pair of neighbouring data sets loses at least this",
             (f"  poisson     {r.poisson_epsilon:.6g}  NOT valid for this sampler (Poisson at rate "
              f"{r.batch_size / r.dataset_size:.4g} over the same {r.steps} steps)" if r.batch_size < r.dataset_size else
              f"  poisson     {r.poisson_epsilon:.6g}  Poisson at rate 1: the same mechanism (every record in every "
              "step)"),
             f"  setting     {_WORDS.get(r.sampling, r.sampling)}{' (persistent)' if r.persistent else ''}, "
             f"{r.epochs} epoch{'s' if r.epochs > 1 else ''} of {r.steps_per_epoch} steps, {r.dataset_size} records "
             f"in batches of {r.batch_size}, sigma {r.sigma:g}, sensitivity {r.sensitivity:g}",
             f"  neighbours  {_WORDS.get(r.neighbouring, r.neighbouring)}: {r.privacy_unit}"]
    lines += [f"  note        {_user_words(note)}" for note in r.notes]
    data = dict(extra or {}, **{k: v for k, v in r.__dict__.items() if k != "notes"})
    data["notes"] = [_user_words(n) for n in r.notes]
    _out.emit(fmt, data, "\n".join(lines))
    return 0


def _cmd_calibrate(args) -> int:
    _out.check_epsilon(args.epsilon)
    run = _run_flags(args)
    if run is not None:
        from ..accounting.sampled_runs import sampled_run_calibrate

        sigma, r, poisson = answered(lambda: sampled_run_calibrate(args.epsilon, args.delta, **run),
                                      _progress_label(args, "calibrating"))
        return _print_run(r, _out.chosen(args),
                          f"sigma = {sigma:.10g} (Poisson accounting would pick {poisson:.6g}: not valid for "
                          f"{_WORDS.get(r.sampling, r.sampling)} batches)",
                          {"target_epsilon": args.epsilon, "poisson_sigma": poisson})
    setting = _setting(args)
    if args.history is None:
        if args.scale is not None:
            raise ValueError("--scale applies only with --history")
        r = answered(lambda: api.calibrate_report(args.epsilon, args.delta, accountant=args.accountant, **setting,
                                                   **_out.pld_options(args)), _progress_label(args, "calibrating"))
        return _print_report(r, _out.chosen(args), f"sigma = {r.sigma:.10g}, achieved epsilon {r.achieved_epsilon:.6g}")
    history, groups = _history(args)
    r = answered(lambda: history.calibrate_history_report(groups, args.epsilon, args.delta, scaled=args.scale,
                                                           accountant=args.accountant, neighbouring=args.neighbouring,
                                                           **_out.pld_options(args)),
                  _progress_label(args, "calibrating", len(groups)))
    which = "every group's sigma" if args.scale is None else f"group {args.scale}'s sigma"
    lines = [f"scale {which} by {r.factor:.10g}: sigmas = {', '.join(f'{s:.6g}' for s in r.sigmas)}",
             f"  accountant  {r.accountant} (it certifies epsilon <= {args.epsilon:g} at delta = {args.delta:g})",
             _relation_line(r.neighbouring)]
    lines += [f"  note        {_user_words(note)}" for note in r.notes]
    _out.emit(_out.chosen(args),
                  {"scale": r.factor, "sigmas": r.sigmas, "epsilon": args.epsilon, "delta": args.delta,
                   "accountant": r.accountant, "scaled_group": args.scale, "neighbouring": r.neighbouring,
                   "notes": [_user_words(note) for note in r.notes]},
                  "\n".join(lines))
    return 0


def _cmd_epsilon(args) -> int:
    run = _run_flags(args)
    if run is not None:
        if args.sigma is None:
            raise ValueError("privcal epsilon needs --sigma")
        from ..accounting.sampled_runs import sampled_run_epsilon

        r = answered(lambda: sampled_run_epsilon(args.sigma, args.delta, **run), _progress_label(args, "pricing"))
        return _print_run(r, _out.chosen(args), f"epsilon <= {r.epsilon:.10g}  (certified >= {r.lower:.6g})")
    setting = _setting(args)
    if args.history is None:
        if args.sigma is None:
            raise ValueError("privcal epsilon needs --sigma (or --history FILE)")
        _check_pld_range(args.accountant, args.sigma, setting["sensitivity"])
        r = answered(lambda: api.epsilon_report(args.sigma, args.delta, accountant=args.accountant, **setting,
                                                 **_out.pld_options(args)), _progress_label(args, "pricing"))
        return _print_report(r, _out.chosen(args), f"epsilon = {r.epsilon:.10g}")
    if args.sigma is not None:
        raise ValueError("--sigma cannot be combined with --history (each group in the file sets its own)")
    history, groups = _history(args)
    r = answered(lambda: api.epsilon_of_report(history.history_event(groups, neighbouring=args.neighbouring),
                                                args.delta, accountant=args.accountant, with_bracket=False,
                                                **_out.pld_options(args)),
                  _progress_label(args, "pricing", len(groups)))
    n = len(groups)
    lines = [f"epsilon = {r.epsilon:.10g}  ({n} release group{'s' if n > 1 else ''})",
             f"  accountant  {r.accountant}: {r.guarantee}", _relation_line(r.neighbouring)]
    lines += [f"  note        {_user_words(note)}" for note in r.notes]
    _out.emit(_out.chosen(args),
                  {"epsilon": r.epsilon, "delta": args.delta, "groups": len(groups), "accountant": r.accountant,
                   "neighbouring": r.neighbouring, "notes": [_user_words(note) for note in r.notes]},
                  "\n".join(lines))
    return 0


#: The library's words for what the command line calls by a flag (advice must name a flag that exists).
_FLAG_WORDS = (
    (re.compile(r"relax accuracy \(now ([^)]*)\) or value_discretization, or raise memory_limit"),
     r"relax --pld-accuracy (now \1) or raise --memory-limit (in MiB)"),
    (re.compile(r"memory_limit = (\S+) MB"), r"--memory-limit \1 (MiB)"),
    (re.compile(r"\bmemory_limit\b"), "--memory-limit"),
    (re.compile(r"\baccuracy (?=\d)"), "--pld-accuracy "),
    (re.compile(r"\b(neighbouring|sampling|counter_noise|error_bound|budget_split|variant|bound|accountant|"
                r"unknown)='(\w+)'"), lambda m: f"--{m[1].replace('_', '-')} {m[2]}"),
    (re.compile(r"\b\d{13,}\b"), lambda m: f"{float(m[0]):.3g}"),  # a count of grid cells, say
    (re.compile(r"\bprivacy_unit '([\w-]+)'"), r"--privacy-unit \1"),
)


#: Arguments of the library whose flag has the same name (``batch_size`` is ``--batch-size``): an error that
#: starts with one of them ("epsilon must be in (0, 1e+06], got 1e+300") names the flag instead.
_SAME_AS_FLAG = ("epsilon", "delta", "sigma", "sensitivity", "steps", "sample_rate", "samples", "batch_size", "lr",
                 "lipschitz", "resets", "actions", "update_clip", "gamma", "trajectories", "iterations",
                 "episodes", "states", "horizon", "clip", "step_size", "failure_probability", "accuracy",
                 "environment")
_FIRST_WORD = re.compile(rf"^({'|'.join(_SAME_AS_FLAG)}) (must|needs|applies)\b")


def _error_words(text: object) -> str:
    """An error message in the command line's words (:func:`_user_words`, its first word a flag)."""
    out = _user_words(text)
    return _FIRST_WORD.sub(lambda m: f"--{m[1].replace('_', '-')} {m[2]}", out)


def _user_words(text: object) -> str:
    """``text`` on one line (messages of numpy/scipy warnings and OS errors may span several), the
    library's argument names replaced by the flags that set them."""
    out = " ".join(str(text).split())
    for pattern, repl in _FLAG_WORDS:
        out = pattern.sub(repl, out)
    return out




def show_warning(message: Any, category: type, filename: str, lineno: int, file: Any = None,
                 line: Optional[str] = None) -> None:
    """warnings.showwarning for the CLI: one ``privcal: warning: ...`` line on stderr.

    Args:
        message: the warning (its text is shown in user words).
        category: its class (not shown).
        filename: where it was raised (not shown).
        lineno: its line (not shown).
        file: ignored (stderr is used).
        line: ignored.
    """
    print(f"privcal: warning: {_user_words(message)}", file=sys.stderr)


def answered(call: Callable[[], Any], progress: Optional[str] = None) -> Any:
    """``call()``, showing only the warnings of the accountant that answered: RDP's "optimal order at the
    edge of its grid" only when RDP gave the answer (it is then a valid but possibly loose bound, and the
    advice names the flag that prices the setting otherwise); other warnings pass through, once each.
    With ``progress`` (a label), a line on stderr says what is being done once it takes over 2 s.

    Args:
        call: a function of no argument returning the report.
        progress: a label for the progress line, or None (default: no progress line).

    Returns:
        what ``call()`` returns.
    """
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        if progress is None:
            result = call()
        else:
            with Working(f"privcal: {progress}"):
                result = call()
    seen = set()
    for w in caught:
        key = (w.category, str(w.message))
        if key in seen:
            continue
        seen.add(key)
        if issubclass(w.category, rdp.GridEdgeWarning):
            if getattr(result, "accountant", None) == "rdp":
                warnings.warn("rdp answered with its optimal order at the edge of its order grid: a valid upper "
                              "bound that may be loose (--accountant pld gives a certified bracket)", UserWarning)
            continue
        warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    return result


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Run the CLI; returns the exit status (0 ok, 1 a verify check could not run, 2 bad input or a
    refused request, 130 interrupted). Errors and warnings are one line each on stderr.

    Args:
        argv: the arguments after ``privcal`` (default: ``sys.argv[1:]``).
    """
    with warnings.catch_warnings():
        # only when warnings are shown (not recorded, e.g. by pytest.warns or a caller's catch_warnings)
        if getattr(warnings._showwarnmsg_impl, "__module__", None) == "warnings":
            warnings.simplefilter("default")
            # a file left open by an import that Ctrl-C cut short is no news to a user of the command
            warnings.filterwarnings("ignore", category=ResourceWarning)
            # numpy's floating-point messages ("overflow encountered in exp") are internals: a result is
            # certified or refused whatever they say
            warnings.filterwarnings("ignore", category=RuntimeWarning)
            # RDP's grid-edge advice concerns RDP only: shown by answered when RDP gave the answer
            warnings.filterwarnings("ignore", category=rdp.GridEdgeWarning)
            warnings.showwarning = show_warning
        try:
            return _main(argv)
        except KeyboardInterrupt:
            print("privcal: interrupted", file=sys.stderr)
            return 130


#: a value that starts with '-' and a digit (or '.', inf, nan): argparse would take "-1e-5" for a flag
_NEGATIVE_VALUE = re.compile(r"^-(\d|\.\d|inf|nan)", re.IGNORECASE)


def glue_negative_values(argv: Sequence[str]) -> list[str]:
    """``--flag -1e-5`` as ``--flag=-1e-5``, so that a negative value reaches the flag's range check (argparse
    reads "-1e-5" as an unknown option and says "expected one argument"); what ``main`` parses.

    Args:
        argv: the command line's arguments, without the program name.

    Returns:
        The same arguments, each negative number after a ``--flag`` joined to it with ``=``.
    """
    out: list[str] = []
    for token in argv:
        if out and _NEGATIVE_VALUE.match(token) and out[-1].startswith("--") and "=" not in out[-1]:
            out[-1] = f"{out[-1]}={token}"
        else:
            out.append(token)
    return out


def _main(argv) -> int:
    parser = build_parser()
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        if argv[:1] == ["--version"] and len(argv) > 1:  # argparse prints the version and ignores the rest
            raise _UsageError(f"privcal: error: --version takes no other argument, got {' '.join(argv[1:])!r}")
        args = parser.parse_args(glue_negative_values(argv))
        if os.environ.get("PRIVCAL_READY") == "1":  # a readiness line for tests that interrupt a run
            print("privcal: ready", file=sys.stderr, flush=True)
        return _dispatch(parser, args)
    except BrokenPipeError:  # e.g. `privcal table | head`: stop quietly
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0
    except (_UsageError, ValueError, PrivcalError, OSError, MemoryError, ImportError, ArithmeticError) as exc:
        print(_refusal_line(exc), file=sys.stderr)
        return 2


def _dispatch(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    """Run the parsed command; its exit code."""
    if args.command is None:  # usage is an error's company: stderr, exit 2
        parser.print_help(sys.stderr)
        return 2
    if args.command == "table":
        _check_table_flags(args, parser.parse_args(["table"]))
        return _cmd_table(args)
    if args.command == "calibrate":
        return _cmd_calibrate(args)
    if args.command == "epsilon":
        return _cmd_epsilon(args)
    if args.command == "train" and getattr(args, "agent", None) is None:
        raise _UsageError("privcal: error: privcal train needs an agent (see privcal train --help)")
    if args.command in ("plot", "frontier", "verify", "train"):
        return args._run(args)
    return 2


def _refusal_line(exc: BaseException) -> str:
    """The one stderr line of a refused request (the order of the checks: the most specific kind first)."""
    if isinstance(exc, _UsageError):
        return _user_words(exc)
    if isinstance(exc, (ValueError, PrivcalError)):
        return f"privcal: error: {_error_words(exc)}"
    if isinstance(exc, OSError):  # file errors: the path and the reason, one line
        where = f"{exc.filename}: " if getattr(exc, "filename", None) else ""
        return f"privcal: error: {where}{_user_words(exc.strerror or exc)}"
    if isinstance(exc, MemoryError):
        return "privcal: error: not enough memory for this request (reduce its size)"
    if isinstance(exc, ImportError):  # an optional extra not installed: privcal's message names it
        why = " ".join(str(exc).split())
        if "pip install" not in why:
            why += " (an optional dependency: pip install 'privcal[rl,plot]' installs the extras the commands use)"
        return f"privcal: error: {why}"
    # ArithmeticError: overflow / division by zero at extreme inputs
    return ("privcal: error: these inputs are outside the range privcal can compute (a number overflows "
            f"float64, e.g. sensitivity / sigma too large; {type(exc).__name__})")
    return 2
