"""Which accountant answers, for ``"best"`` and for a named one: the valid accountants that support an event, tried in
stages (the PLD first, RDP and basic composition only where it gives no finite or no accurate answer), the
smallest certified answer kept, and a note for each accountant that declined and why.

The front door (``privcal.accounting.api``) and history calibration (``privcal.accounting.history``) build on it.
Which accountants support an event, and whether they are valid for it, is decided once per kind of event (the
accountants' support depends only on the kinds of the releases, ``privcal.accounting.registry.ACCOUNTANTS``).
"""

from __future__ import annotations

import math
from typing import Optional

from .. import _validate as V
from ..errors import CalibrationError, InfeasibleError, UnsupportedEventError
from ..privacy_loss import MemoryLimitError
from ..privacy_loss.heap import tune_heap
from .events import (EpochsEvent, Event, Neighbouring, SubsampledEvent, describe, flatten_unchecked, relation_of,
                     requested_relation, unwrap_unchecked)
from .protocol import Accountant
from .registry import ACCOUNTANTS

__all__ = ["ACCOUNTANT_CHOICES", "FALLBACK_ONLY", "FAILURES", "resolve_accountants", "stages", "wide", "make_accountant",
           "failure_note", "declined_notes", "raise_none", "priced", "grouped", "bracket_of"]

#: what ``accountant=`` accepts: "best" or the name of an accountant
ACCOUNTANT_CHOICES = ("best", *ACCOUNTANTS)

#: What the accountants price among subsampled Gaussians, said when none prices the setting asked for.
_SUPPORTED = (" (subsampled Gaussians are priced for poisson with add_remove, and without_replacement with "
              "replace_one or zero_out)")


def resolve_accountants(accountant: str, event: Event, what: str = "") -> list[str]:
    """Names of the accountants to price ``event``: the one asked for, or for "best" every valid one that
    supports it (only "exact" when it applies: every valid bound is >= the exact value).

    Decided from the kinds of the releases in ``event`` (cached per kind), without building the
    accountants: see :func:`_verdicts`.

    Args:
        accountant: "best" or a name of ``privcal.ACCOUNTANTS``.
        event: what ran.
        what: how error messages describe the event (default: its repr).

    Returns:
        the names, in the order of ``privcal.ACCOUNTANTS``.

    Raises:
        UnsupportedEventError: the accountant (or, for "best", every valid one) cannot price ``event``.
    """
    V.choice("accountant", accountant, ACCOUNTANT_CHOICES)
    if isinstance(event, Event):
        relation_of(event)  # one history, one relation: refused here in one line naming them
    verdicts = _verdicts(event)
    if accountant == "best" and "exact" in verdicts:  # the exact profile is valid wherever it applies
        return ["exact"]
    if accountant != "best":
        if accountant not in verdicts:
            others = [f"{name}{'' if valid else ' (not valid)'}" for name, valid in verdicts.items()]
            raise UnsupportedEventError(
                f"the {accountant} accountant does not support {what or describe(event)}; "
                + (f"accountants that price it: {', '.join(others)} (or accountant 'best')" if others else
                   f"no accountant prices it{_SUPPORTED}"))
        return [accountant]
    names = [name for name, valid in verdicts.items() if valid]
    if "basic" in names and "rdp" in names:  # RDP prices the whole history: "basic" would repeat its answer
        names.remove("basic")
    if not names:
        raise UnsupportedEventError(f"no valid accountant supports {what or describe(event)}{_SUPPORTED}")
    return ["exact"] if "exact" in names else names


#: (registered classes, kind signature) -> {name: valid} of the accountants that support such events
_VERDICTS: dict[tuple, dict[str, bool]] = {}


def _kind(leaf: Event) -> tuple:
    """What an accountant's support of a release depends on: its type, and for a subsampled release or a run
    over epochs the sampling, the neighbouring relation, the inner release's type and whether it runs once."""
    if isinstance(leaf, (SubsampledEvent, EpochsEvent)):
        inner, count = unwrap_unchecked(leaf.event)
        return type(leaf), leaf.sampling, leaf.neighbouring, type(inner), count == 1
    return (type(leaf),)


def _verdicts(event: Event) -> dict[str, bool]:
    """{name: valid} of the registered accountants that support ``event`` on a fresh ledger.

    Support and validity depend only on the kinds of the leaves (:func:`_kind`) and on whether they are
    all equal (KOV composes only identical releases), so the answer is computed once per such signature,
    on fresh accountants, and reused: a front-door call costs a flatten and a dictionary look-up."""
    if not isinstance(event, Event):
        return {}
    leaves = [leaf for leaf, _ in flatten_unchecked(event)]
    first = leaves[0]
    key = (
        tuple(ACCOUNTANTS.items()),
        frozenset(_kind(leaf) for leaf in leaves),
        all(leaf == first for leaf in leaves),
        requested_relation(event),
    )
    found = _VERDICTS.get(key)
    if found is None:
        found = {}
        for name, cls in ACCOUNTANTS.items():
            fresh = cls()
            if fresh.supports(event):
                found[name] = bool(fresh.valid_for(event))
        _VERDICTS[key] = found
    return found


#: accountants that "best" prices only when none of the others answers finitely: RDP, whose answer is
#: never below the PLD's certified upper end on benchmarks/bench_pld.py's grid (27 epsilon + 36 calibration + 4
#: history cases; the PLD prices the same dominating pairs up to its discretisation) and which costs 33-40%
#: of the time of "best" when priced beside the PLD on every call; and "basic", which prices the
#: PLD's releases by coarser bounds (basic composition, KOV, RDP) and is there for deltas the PLD cannot
#: certify
FALLBACK_ONLY = ("rdp", "basic")

#: how an accountant fails on inputs already validated: a grid over the memory cap, an infeasible
#: calibration, and the numerics' own failures (overflow, nan, a shape error), which the front door turns
#: into a one-line reason and a fallback, never an internal message
FAILURES = (MemoryLimitError, MemoryError, InfeasibleError, CalibrationError, ValueError, ArithmeticError,
             IndexError)


def stages(names: list[str]) -> list[list[str]]:
    """The order in which "best" prices ``names``: every accountant but those of :data:`FALLBACK_ONLY`,
    then, only if none of them answers finitely, those (one stage when the PLD is not among ``names``:
    without it nothing prices the same pairs as tightly, and every valid one is priced).

    Args:
        names: accountant names from :func:`resolve_accountants`.

    Returns:
        one or two non-empty lists of names.
    """
    if "pld" not in names:
        return [list(names)]
    first = [n for n in names if n not in FALLBACK_ONLY]
    later = [n for n in names if n in FALLBACK_ONLY]
    return [first, later] if later else [first]


def wide(acc: Optional[Accountant], delta: Optional[float] = None) -> bool:
    """Whether ``acc`` is a PLD accountant whose PLD says its bracket is wider than the accuracy asked of
    it (``PLD.accuracy_by_delta`` holds False at ``delta``, or at any delta asked when None: the grid could
    not be refined, e.g. under the memory cap). Only then may RDP beat the PLD's upper end by more than
    that accuracy (RDP >= the true epsilon >= the PLD's lower end), so only then does "best" price RDP
    beside a finite PLD answer.

    Args:
        acc: an accountant (or None).
        delta: the delta asked, or None.
    """
    if getattr(acc, "name", None) != "pld":
        return False
    met = dict(getattr(acc.pld, "accuracy_by_delta", {}) or {})
    if delta is not None:
        return met.get(delta) is False
    return any(v is False for v in met.values())


def make_accountant(name: str, pld: Optional[dict] = None,
                    neighbouring: Optional[Neighbouring] = None) -> Accountant:
    """A fresh accountant ``name`` (the PLD's with the caller's accuracy / memory cap).

    Args:
        name: a name of :data:`ACCOUNTANTS`.
        pld: keyword arguments of ``PLDAccountant`` (from :func:`pld_options`), or None.
        neighbouring: the relation of the history it will price (``events.relation_of``), or None.

    Raises ValueError for a ``PRIVCAL_HEAP`` other than "tuned" or "default" (here, before any accountant runs: a
    PLD's own construction reads it too, inside the selection's guard, where it would read as a numerics failure).
    """
    tune_heap()
    if name == "pld" and pld:
        return ACCOUNTANTS[name](**pld, neighbouring=neighbouring)
    return ACCOUNTANTS[name](neighbouring=neighbouring)


def _one_line(text: object) -> str:
    return " ".join(str(text).split())


def failure_note(name: str, exc: BaseException, where: str) -> str:
    """Why accountant ``name`` gave no answer, in one line (no internal numpy message).

    Args:
        name: the accountant's name.
        exc: what it raised.
        where: where it was asked (e.g. "at delta = 1e-05").
    """
    if isinstance(exc, (MemoryLimitError, InfeasibleError, CalibrationError)):
        return _one_line(exc)
    if isinstance(exc, MemoryError):
        return f"not enough memory {where}"
    return f"its numerics failed {where} ({type(exc).__name__}); no certified answer"


def _inf_reason(acc: Accountant, delta: float) -> str:
    """Why ``acc`` answered inf at ``delta`` (the PLD's own note when it gives one)."""
    if acc.name == "pld":
        notes = tuple(getattr(getattr(acc, "pld", None), "notes", ()) or ())
        if notes:
            return _one_line(notes[-1])
        return (f"no finite certified upper end at delta = {delta:g} (its error terms -- round-off, truncation, "
                "the mass at infinite loss -- reach delta)")
    return f"no finite bound at delta = {delta:g}"


def declined_notes(failed: dict[str, str], winner: str) -> tuple[str, ...]:
    """One note per accountant that gave no finite answer, naming the one that answered.

    Args:
        failed: accountant name -> why it gave no answer (:func:`failure_note`).
        winner: the name of the accountant that answered.
    """
    return tuple(f"{name}: {reason}; answered by {winner}" for name, reason in failed.items() if name != winner)


def raise_none(names: list[str], failed: dict[str, str], errors: dict[str, BaseException]) -> None:
    """No accountant answered: the one accountant's own clean error, or an InfeasibleError listing why.

    Args:
        names: the accountants tried.
        failed: accountant name -> why it gave no answer.
        errors: accountant name -> what it raised.
    """
    if len(names) == 1 and isinstance(errors.get(names[0]), (MemoryLimitError, InfeasibleError, CalibrationError)):
        raise errors[names[0]]
    raise InfeasibleError("; ".join(f"{n}: {failed[n]}" for n in names if n in failed) or "no accountant answered")


def priced(names: list[str], event: Event, delta: float, *, with_bracket: bool,
            pld: Optional[dict] = None) -> tuple[float, Accountant, tuple, tuple]:
    """(epsilon, accountant, bracket or None, notes): the smallest certified epsilon among ``names`` at
    ``delta`` for ``event``, priced in :func:`stages` (RDP only when nothing else answers finitely). An
    accountant that fails (a grid over its memory cap, its numerics) or answers inf is skipped, with a
    note naming why and who answered instead.

    Args:
        names: the accountants to try (:func:`resolve_accountants`).
        event: what ran.
        delta: the target delta, in (0, 1).
        with_bracket: whether to compute the winner's certified bracket.
        pld: the PLD's options (``pld_accuracy``, ``memory_limit``), or None for its defaults.
    """
    best, failed, errors = None, {}, {}
    where = f"at delta = {delta:g}"
    leaves = grouped(event)
    relation = relation_of(event)  # the grouped leaves lose the history's ComposedEvent(neighbouring=...)
    for stage in stages(names):
        for name in stage:
            acc = make_accountant(name, pld, relation)
            for leaf, count in leaves:  # support resolved once per kind of event
                acc.compose_unchecked(leaf, count)
            try:
                value = float(acc.epsilon_unchecked(delta))
            except FAILURES as exc:
                failed[name], errors[name] = failure_note(name, exc, where), exc
                continue
            if math.isnan(value):
                failed[name] = f"its numerics returned nan {where}; no certified answer"
                continue
            if math.isinf(value):
                failed[name] = _inf_reason(acc, delta)
            if best is None or value < best[0]:
                best = (value, acc)
        if best is not None and math.isfinite(best[0]) and not wide(best[1], delta):
            break
    if best is None:
        raise_none(names, failed, errors)
    value, acc = best
    notes = declined_notes(failed, acc.name) if math.isfinite(value) else ()
    bracket = None
    if with_bracket:
        bracket, more = bracket_of(acc, value, delta)
        notes += more
    return value, acc, bracket, notes


def grouped(event: Event) -> list[tuple[Event, int]]:
    """The leaves of ``event`` with equal leaves merged: (leaf, total count), in order of first appearance.

    Every accountant here composes by a commutative rule (RDP curves and mu^2 add up, PLDs convolve, basic
    composition sums), so a history is priced the same with its equal releases merged, and each distinct
    release is priced once however often it recurs in the history.

    Args:
        event: any history.
    """
    counts: dict[Event, int] = {}
    for leaf, n in flatten_unchecked(event):
        counts[leaf] = counts.get(leaf, 0) + n
    return list(counts.items())


def bracket_of(acc: Accountant, value: float, delta: float) -> tuple[Optional[tuple[float, float]], tuple[str, ...]]:
    """(certified (lower, upper) epsilon of ``acc`` at ``delta``, upper = ``value``, or None when ``acc``
    gives no lower bound; notes): the reported upper bound is kept (the accountant's own bracket may end a
    little higher or lower, both ends are certified). A PLD bracket wider than the accuracy asked of it
    gets a note (read from the PLD when it says so, ``PLD.accuracy_met``; else from the bracket).

    Args:
        acc: the accountant that answered.
        value: its reported epsilon.
        delta: the delta it was asked at.
    """
    if acc.name == "exact":
        return (value, value), ()
    own = getattr(acc, "bracket", None)
    if own is None or not math.isfinite(value) or acc.name != "pld":
        return None, ()
    try:
        lower, upper = own(delta)
    except FAILURES as exc:
        return None, (f"pld lower end not computed: {failure_note('pld', exc, f'at delta = {delta:g}')}",)
    lower = min(float(lower), value)
    wanted = max(acc.accuracy * value, acc.absolute_accuracy)
    met = not wide(acc, delta) and value - lower <= wanted * (1.0 + 1e-9)
    capped = any("memory_limit" in n for n in getattr(getattr(acc, "pld", None), "notes", ()))
    why = ("a finer grid would exceed memory_limit (raise memory_limit to refine it)" if capped else
           "the grid could not be refined further")
    notes = () if met else (
        f"pld bracket [{lower:.6g}, {value:.6g}] is wider than the requested accuracy ({wanted:.3g} = max(accuracy "
        f"{acc.accuracy:g} x epsilon, {acc.absolute_accuracy:g})): {why}",)
    return (lower, value), notes
