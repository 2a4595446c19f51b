"""Histories from files: a list of release groups, priced or calibrated as one composition.

A history file (JSON, or TOML on Python >= 3.11) lists groups of releases, each
``{sigma, sensitivity, steps, sample_rate, sampling, neighbouring}`` (only ``sigma`` is required;
the others default as in :func:`privcal.epsilon`)::

    [{"sigma": 1.1, "steps": 1000, "sample_rate": 0.01},
     {"sigma": 20.0, "steps": 10}]

or, in TOML, ``[[release]]`` tables with the same keys. :func:`history_event` turns the groups into one
``ComposedEvent``; :func:`calibrate_history` finds the factor by which to scale every sigma (or one
group's) so that the whole history meets a target (epsilon, delta).
"""

from __future__ import annotations

import json
import math
import pathlib
from dataclasses import dataclass
from typing import Optional, Union

from .. import _validate as V
from ..errors import CalibrationError, InfeasibleError
from ..privacy_loss import MemoryLimitError
from . import search as _search
from . import inclusion as _inclusion
from .api import make_accountant, relation_notes, resolve_accountants, stages
from .front_door_settings import PricingOptions, pld_options
from .events import ComposedEvent, Event, Neighbouring, Releases, relation_of

__all__ = ["ReleaseGroup", "HistoryCalibration", "HistorySettings", "load_history", "history_event",
           "calibrate_history", "calibrate_history_report"]

_KEYS = ("sigma", "sensitivity", "steps", "sample_rate", "sampling", "neighbouring")


@dataclass(frozen=True)
class ReleaseGroup:
    """``steps`` releases of a Gaussian mechanism at noise ``sigma`` (one entry of a history file).

    Attributes:
        sigma: noise standard deviation (absolute), in (0, inf).
        releases: what ran (sensitivity, steps, subsampling and neighbouring relation).
    """

    sigma: float
    releases: Releases


def _group(entry, where: str) -> ReleaseGroup:
    if not isinstance(entry, dict):
        raise ValueError(f"{where} must be a table/object with keys {_KEYS}, got {entry!r}")
    unknown = sorted(set(entry) - set(_KEYS))
    if unknown:
        raise ValueError(f"{where} has unknown keys {unknown}; known keys: {list(_KEYS)}")
    if "sigma" not in entry:
        raise ValueError(f"{where} needs a sigma")
    sigma = V.positive(f"{where}.sigma", entry["sigma"])
    rate = entry.get("sample_rate")
    ignored = [k for k in ("sampling", "neighbouring") if k in entry]
    if rate is None and ignored:  # as on the command line: no subsampling without a sample_rate
        keys, one = " and ".join(ignored), len(ignored) == 1
        raise ValueError(f"{where} sets {keys} but no sample_rate ({keys} appl{'ies' if one else 'y'} only to "
                         f"subsampled releases): add a sample_rate in (0, 1] or remove {'it' if one else 'them'}")
    try:
        releases = Releases(
            entry.get("sensitivity", 1.0), entry.get("steps", 1), 1.0 if rate is None else rate,
            entry.get("sampling", "poisson"), entry.get("neighbouring"),
        )
    except ValueError as exc:  # the field as the file names it, not a flag the user never typed
        raise ValueError(f"{where}.{exc}") from None
    return ReleaseGroup(sigma, releases)


def load_history(path: Union[str, pathlib.Path]) -> list[ReleaseGroup]:
    """The release groups of a history file (.json, or .toml with ``[[release]]`` tables).

    Args:
        path: the file.

    Raises:
        ValueError: the file cannot be read or parsed, or an entry is invalid (named by its position).
    """
    path = pathlib.Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ValueError(f"history file {str(path)!r} cannot be read: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise ValueError(f"history file {str(path)!r} is not a text file (JSON or TOML in UTF-8)") from None
    if path.suffix.lower() == ".toml":
        try:
            import tomllib
        except ImportError:  # Python 3.10
            raise ValueError("TOML history files need Python >= 3.11 (tomllib); use JSON") from None
        try:
            table = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise ValueError(f"history file {str(path)!r} is not valid TOML: {exc}") from None
        data = table.get("release")
        if data is None:
            found = ", ".join(f"[[{k}]]" if isinstance(v, list) else k for k, v in table.items()) or "nothing"
            raise ValueError(f"history file {str(path)!r} must hold [[release]] tables (keys {list(_KEYS)}), "
                             f"found {found}")
    else:
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ValueError(f"history file {str(path)!r} is not valid JSON: {exc}") from None
    if not isinstance(data, list) or not data:
        raise ValueError(f"history file {str(path)!r} must hold a non-empty list of releases")
    try:
        return [_group(entry, f"release[{i}]") for i, entry in enumerate(data)]
    except ValueError as exc:  # which file, which group, which field
        raise ValueError(f"history file {str(path)!r}: {exc}") from None


def history_event(groups: list[ReleaseGroup], *, scale: float = 1.0, scaled: Optional[int] = None,
                  neighbouring: Optional[Union[Neighbouring, str]] = None) -> Event:
    """The composed event of ``groups``, with sigma scaled by ``scale`` (every group, or only ``scaled``).

    Args:
        groups: release groups (from :func:`load_history`).
        scale: factor applied to sigma, in (0, inf); default 1.
        scaled: index of the one group to scale; default None (all).
        neighbouring: the one relation of the whole history (a :class:`Neighbouring` or its value), checked
            where it is priced (``privcal.accounting.events.relation_of``); default None (the relation its
            groups state; groups stated under different relations are converted by a proven pair, or refused).
    """
    events = []
    for i, g in enumerate(groups):
        s = g.sigma * scale if scaled is None or i == scaled else g.sigma
        events.append(g.releases.event(s))
    if neighbouring is not None:
        relation = neighbouring if isinstance(neighbouring, Neighbouring) else Neighbouring(
            V.choice("neighbouring", neighbouring, tuple(n.value for n in Neighbouring)))
        return ComposedEvent.unchecked(tuple(events), relation)
    return events[0] if len(events) == 1 else ComposedEvent.unchecked(tuple(events))


@dataclass(frozen=True)
class HistoryCalibration:
    """The factor that scales a history's sigmas to meet a target, with the accountant and notes.

    Attributes:
        factor: the scale applied to sigma (every group's, or only ``scaled``'s).
        sigmas: the scaled sigmas, one per group.
        accountant: the accountant that certifies epsilon <= target at them.
        notes: why an accountant tried first gave no answer, and who answered instead; how groups stated
            under another relation than the history's are priced.
        neighbouring: the one neighbouring relation the history is priced under, or None (no group states
            one: their sensitivities' relation).
    """

    factor: float
    sigmas: list
    accountant: str
    notes: tuple = ()
    neighbouring: Optional[str] = None


@dataclass(frozen=True)
class HistorySettings:
    """How a history is calibrated besides its target: which group is scaled, the accountant, its numerics and
    the relation (defaults in one place: here; checked by :func:`calibrate_history_report`).

    Attributes:
        scaled: index of the one group whose sigma is scaled; default None (every group).
        accountant: "best" (default: the smallest factor whose certified upper epsilon meets the target
            under a valid accountant that supports the history -- the exact profile alone when it
            applies, else the PLD, and RDP only where the PLD finds none) or an accountant's name.
        pld_accuracy: requested relative width of the PLD's epsilon bracket, in (0, 1); default None (1e-3).
        memory_limit: cap of the memory of one PLD evaluation, in bytes, in (0, inf); default None (256 MiB).
        neighbouring: the one relation of the whole history; default None (the one its groups state).
    """

    scaled: Optional[int] = None
    accountant: str = PricingOptions.accountant  # (the pricing defaults are the front door's)
    pld_accuracy: Optional[float] = PricingOptions.pld_accuracy
    memory_limit: Optional[float] = PricingOptions.memory_limit
    neighbouring: Optional[Union[Neighbouring, str]] = None


def calibrate_history(groups: list[ReleaseGroup], epsilon: float, delta: float,
                      settings: Optional[HistorySettings] = None, **keywords) -> tuple[float, list[float], str]:
    """The smallest factor by which to scale sigma so that the whole history is (epsilon, delta)-DP.

    Args:
        groups: release groups (from :func:`load_history`); their sigmas are the starting point.
        epsilon: target epsilon, in (0, inf).
        delta: target delta, in (0, 1).
        settings: the scaled group, accountant, numerics and relation, a :class:`HistorySettings`; default None:
            built from ``keywords``.
        keywords: fields of :class:`HistorySettings` (``scaled``, ``accountant``, ``pld_accuracy``,
            ``memory_limit``, ``neighbouring``), replacing those of ``settings``.

    Returns:
        (factor, the scaled sigmas, the accountant used); the accountant certifies epsilon <= target.

    Raises:
        InfeasibleError: no factor up to 1e12 reaches the target (e.g. the unscaled groups alone exceed it).
    """
    settings = V.settings_with("calibrate_history", HistorySettings, settings, keywords)
    r = calibrate_history_report(groups, epsilon, delta, settings)
    return r.factor, r.sigmas, r.accountant


def calibrate_history_report(groups: list[ReleaseGroup], epsilon: float, delta: float,
                             settings: Optional[HistorySettings] = None, **keywords) -> HistoryCalibration:
    """:func:`calibrate_history` with notes: why an accountant tried first gave no answer, who answered.

    Args:
        groups: release groups (from :func:`load_history`); their sigmas are the starting point.
        epsilon: target epsilon, in (0, inf).
        delta: target delta, in (0, 1).
        settings: a :class:`HistorySettings`; default None: built from ``keywords``.
        keywords: fields of :class:`HistorySettings` (as :func:`calibrate_history`), replacing those of
            ``settings``.

    Returns:
        the factor, the scaled sigmas, the accountant, the notes and the history's relation.

    Raises:
        InfeasibleError: no accountant reaches the target (the message gives each one's reason).
    """
    settings = V.settings_with("calibrate_history_report", HistorySettings, settings, keywords)
    scaled, accountant, neighbouring = settings.scaled, settings.accountant, settings.neighbouring
    epsilon = V.positive("epsilon", epsilon)
    delta = V.open_unit("delta", delta)
    if scaled is not None and not 0 <= scaled < len(groups):
        raise ValueError(f"scaled must be in [0, {len(groups) - 1}], got {scaled!r}")
    options = pld_options(settings.pld_accuracy, settings.memory_limit)
    unscaled = history_event(groups, neighbouring=neighbouring)
    relation = relation_of(unscaled)
    p = _inclusion.inclusion_probability(unscaled) if accountant == "best" else 1.0
    if _inclusion.negligible(p, delta):  # (0, delta)-DP whatever the noise: no search, no noise needed
        sigmas = [0.0 if scaled is None or i == scaled else g.sigma for i, g in enumerate(groups)]
        return HistoryCalibration(0.0, sigmas, _inclusion.NAME, (_inclusion.note(p, delta),),
                                  None if relation is None else relation.value)
    names = resolve_accountants(accountant, unscaled, "this history")
    best, failed = None, {}
    for stage in stages(names):
        for name in stage:
            def epsilon_at(c: float, name: str = name) -> float:
                acc = make_accountant(name, options, relation).compose(history_event(groups, scale=c, scaled=scaled))
                try:
                    return acc.epsilon_unchecked(delta)
                except (MemoryLimitError, MemoryError, ValueError, ArithmeticError):  # no certified answer
                    return math.inf  # here: a larger scale (coarser grid, more noise) may answer

            try:
                factor = _search.search(epsilon_at, epsilon, delta, sigma_hint=1.0, rtol=1e-9)
            except (InfeasibleError, CalibrationError) as exc:
                failed[name] = " ".join(str(exc).split())
                continue
            if best is None or factor < best[0]:
                best = (factor, name)
        if best is not None:
            break
    if best is None:
        raise InfeasibleError("; ".join(f"{n}: {why}" for n, why in failed.items()))
    factor, name = best
    sigmas = [g.sigma * factor if scaled is None or i == scaled else g.sigma for i, g in enumerate(groups)]
    notes = tuple(f"{n}: {why}; answered by {name}" for n, why in failed.items()) + relation_notes(unscaled, relation)
    return HistoryCalibration(factor, sigmas, name, notes, None if relation is None else relation.value)
