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
import pathlib
from dataclasses import dataclass
from typing import Optional, Union

from .. import _validate as V
from ..errors import InfeasibleError
from ..privacy_loss import MemoryLimitError
from . import _search
from .registry import ACCOUNTANTS
from .api import resolve_accountants
from .events import ComposedEvent, Event, Releases

__all__ = ["ReleaseGroup", "load_history", "history_event", "calibrate_history"]

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
    releases = Releases(
        entry.get("sensitivity", 1.0), entry.get("steps", 1), 1.0 if rate is None else rate,
        entry.get("sampling", "poisson"), entry.get("neighbouring"),
    )
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
    if path.suffix.lower() == ".toml":
        try:
            import tomllib
        except ImportError:  # Python 3.10
            raise ValueError("TOML history files need Python >= 3.11 (tomllib); use JSON") from None
        try:
            data = tomllib.loads(text).get("release")
        except tomllib.TOMLDecodeError as exc:
            raise ValueError(f"history file {str(path)!r} is not valid TOML: {exc}") from None
    else:
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ValueError(f"history file {str(path)!r} is not valid JSON: {exc}") from None
    if not isinstance(data, list) or not data:
        raise ValueError(f"history file {str(path)!r} must hold a non-empty list of releases")
    return [_group(entry, f"release[{i}]") for i, entry in enumerate(data)]


def history_event(groups: list[ReleaseGroup], *, scale: float = 1.0, scaled: Optional[int] = None) -> Event:
    """The composed event of ``groups``, with sigma scaled by ``scale`` (every group, or only ``scaled``).

    Args:
        groups: release groups (from :func:`load_history`).
        scale: factor applied to sigma, in (0, inf); default 1.
        scaled: index of the one group to scale; default None (all).
    """
    events = []
    for i, g in enumerate(groups):
        s = g.sigma * scale if scaled is None or i == scaled else g.sigma
        events.append(g.releases.event(s))
    return events[0] if len(events) == 1 else ComposedEvent._unchecked(tuple(events))


def calibrate_history(
    groups: list[ReleaseGroup],
    epsilon: float,
    delta: float,
    *,
    scaled: Optional[int] = None,
    accountant: str = "best",
) -> tuple[float, list[float], str]:
    """The smallest factor by which to scale sigma so that the whole history is (epsilon, delta)-DP.

    Args:
        groups: release groups (from :func:`load_history`); their sigmas are the starting point.
        epsilon: target epsilon, in (0, inf).
        delta: target delta, in (0, 1).
        scaled: index of the one group whose sigma is scaled; default None (every group).
        accountant: "best" (default: the smallest factor whose certified upper epsilon meets the target
            under a valid accountant that supports the history -- the exact profile alone when it
            applies, else each of RDP, PLD, ...) or an accountant's name.

    Returns:
        (factor, the scaled sigmas, the accountant used); the accountant certifies epsilon <= target.

    Raises:
        InfeasibleError: no factor up to 1e12 reaches the target (e.g. the unscaled groups alone exceed it).
    """
    epsilon = V.positive("epsilon", epsilon)
    delta = V.open_unit("delta", delta)
    if scaled is not None and not 0 <= scaled < len(groups):
        raise ValueError(f"scaled must be in [0, {len(groups) - 1}], got {scaled!r}")
    names = resolve_accountants(accountant, history_event(groups), "this history")
    best = None
    for i, name in enumerate(names):
        def epsilon_at(c: float, name: str = name) -> float:
            return ACCOUNTANTS[name]()._compose(history_event(groups, scale=c, scaled=scaled))._epsilon(delta)

        try:
            factor = _search.search(epsilon_at, epsilon, delta, sigma_hint=1.0, rtol=1e-9)
        except (InfeasibleError, MemoryLimitError, MemoryError):  # or a grid beyond a memory cap
            if best is None and i == len(names) - 1:
                raise
            continue
        if best is None or factor < best[0]:
            best = (factor, name)
    factor, name = best
    sigmas = [g.sigma * factor if scaled is None or i == scaled else g.sigma for i, g in enumerate(groups)]
    return factor, sigmas, name
