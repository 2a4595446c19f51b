"""The pricing commands: ``privcal table`` (sigma each bound requires, side by side), ``privcal calibrate`` and
``privcal epsilon`` (one setting, a history or a sampled run over epochs), each parse -> one call -> render."""

from __future__ import annotations

import argparse
import contextlib
import warnings
from typing import Any, Callable, Optional

from ..accounting import api
from ..accounting.events import relation_of
from ..accounting.sampled_runs import RUN_SAMPLERS
from ..analysis import rdp
from ..calibrators import render, table
from ..errors import UnsupportedEventError
from . import out as _out
from .parser import UsageError
from .progress import Working
from .words import user_words

__all__ = ["cmd_table", "check_table_flags", "cmd_calibrate", "cmd_epsilon", "answered", "bracket_line"]


def cmd_table(args: argparse.Namespace) -> int:
    """``privcal table``: the sigma each bound requires for the chosen setting, side by side, rendered.

    Args:
        args: the parsed command line (``privcal.cli.parser``).

    Returns:
        the exit status, 0.
    """
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
        raise UsageError("privcal: error: --wide applies to --format text only (markdown, csv and json carry every "
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


def check_table_flags(args: argparse.Namespace, defaults: argparse.Namespace) -> None:
    """Refuse flags the chosen setting would ignore (a flag left at its default is not 'given').

    Args:
        args: the parsed command line.
        defaults: ``privcal table`` parsed without flags (what "not given" means).
    """
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
    d["notes"] = [user_words(note) for note in d["notes"]]  # the flags, as in the text output
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
    lines += [f"  note        {user_words(note)}" for note in report.notes]
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
    lines += [f"  note        {user_words(note)}" for note in r.notes]
    data = dict(extra or {}, **{k: v for k, v in r.__dict__.items() if k != "notes"})
    data["notes"] = [user_words(n) for n in r.notes]
    _out.emit(fmt, data, "\n".join(lines))
    return 0


def cmd_calibrate(args: argparse.Namespace) -> int:
    """``privcal calibrate``: the sigma for (epsilon, delta) of one setting, a history or a sampled run, rendered.

    Args:
        args: the parsed command line (``privcal.cli.parser``).

    Returns:
        the exit status, 0.
    """
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
    return _calibrate_history(args)


def _calibrate_history(args: argparse.Namespace) -> int:
    """``privcal calibrate --history FILE``: the scale of the groups' sigmas, rendered."""
    history, groups = _history(args)
    r = answered(lambda: history.calibrate_history_report(groups, args.epsilon, args.delta, scaled=args.scale,
                                                           accountant=args.accountant, neighbouring=args.neighbouring,
                                                           **_out.pld_options(args)),
                  _progress_label(args, "calibrating", len(groups)))
    which = "every group's sigma" if args.scale is None else f"group {args.scale}'s sigma"
    lines = [f"scale {which} by {r.factor:.10g}: sigmas = {', '.join(f'{s:.6g}' for s in r.sigmas)}",
             f"  accountant  {r.accountant} (it certifies epsilon <= {args.epsilon:g} at delta = {args.delta:g})",
             _relation_line(r.neighbouring)]
    lines += [f"  note        {user_words(note)}" for note in r.notes]
    _out.emit(_out.chosen(args),
                  {"scale": r.factor, "sigmas": r.sigmas, "epsilon": args.epsilon, "delta": args.delta,
                   "accountant": r.accountant, "scaled_group": args.scale, "neighbouring": r.neighbouring,
                   "notes": [user_words(note) for note in r.notes]},
                  "\n".join(lines))
    return 0


def cmd_epsilon(args: argparse.Namespace) -> int:
    """``privcal epsilon``: the epsilon at delta of one setting, a history or a sampled run, rendered.

    Args:
        args: the parsed command line (``privcal.cli.parser``).

    Returns:
        the exit status, 0.
    """
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
    return _epsilon_history(args)


def _epsilon_history(args: argparse.Namespace) -> int:
    """``privcal epsilon --history FILE``: the epsilon of the history's groups, rendered."""
    history, groups = _history(args)
    r = answered(lambda: api.epsilon_of_report(history.history_event(groups, neighbouring=args.neighbouring),
                                                args.delta, accountant=args.accountant, with_bracket=False,
                                                **_out.pld_options(args)),
                  _progress_label(args, "pricing", len(groups)))
    n = len(groups)
    lines = [f"epsilon = {r.epsilon:.10g}  ({n} release group{'s' if n > 1 else ''})",
             f"  accountant  {r.accountant}: {r.guarantee}", _relation_line(r.neighbouring)]
    lines += [f"  note        {user_words(note)}" for note in r.notes]
    _out.emit(_out.chosen(args),
                  {"epsilon": r.epsilon, "delta": args.delta, "groups": len(groups), "accountant": r.accountant,
                   "neighbouring": r.neighbouring, "notes": [user_words(note) for note in r.notes]},
                  "\n".join(lines))
    return 0


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
