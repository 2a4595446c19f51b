"""The accountant protocol, and the table of which releases each accountant prices.

Below every accountant (``privcal.accounting.accountants`` and ``privcal.accounting.pld_accountant`` both build on it,
``privcal.accounting.registry`` names them): :class:`Accountant` keeps the ledger and enforces the protocol of
Google's ``dp_accounting`` (``supports``, ``compose``, ``epsilon``, ``delta``, plus privcal's calibration
``sigma_for``); :data:`SUPPORT` says, per accountant name, which single releases it prices, so that support
is decided in one place (the subsampled pairs each accountant may price are those with a proven dominating
pair, ``privcal.accounting.pairs``).
"""

from __future__ import annotations

import abc
from typing import Callable, Optional

from .. import _validate as V
from .. import composition
from ..errors import UnsupportedEventError
from . import _search, pairs
from .events import (
    ApproxDPEvent,
    Event,
    GaussianEvent,
    GaussianProcessEvent,
    LaplaceEvent,
    Releases,
    SubsampledEvent,
    _flatten,
    _unwrap,
)

__all__ = ["Accountant", "GAUSSIAN_LEAVES", "SUPPORT", "default_hint", "subsampled_gaussian"]

#: Plain Gaussian-noise releases (their privacy loss is one Gaussian pair).
GAUSSIAN_LEAVES = (GaussianEvent, GaussianProcessEvent)
_DEFAULT_RTOL = 1e-9


def subsampled_gaussian(event: Event) -> bool:
    """Whether ``event`` is a SubsampledEvent around a (possibly composed-once) Gaussian or GP release with a
    (sampling, neighbouring) pair that has a proven dominating pair (``pairs.PRICED``).

    Args:
        event: any event.
    """
    if not isinstance(event, SubsampledEvent):
        return False
    inner, n = _unwrap(event.event)
    return isinstance(inner, GAUSSIAN_LEAVES) and n == 1 and (event.sampling, event.neighbouring) in pairs.PRICED


def _gaussian(event: Event) -> bool:
    return isinstance(event, GAUSSIAN_LEAVES)


def _gaussian_or_subsampled(event: Event) -> bool:
    return isinstance(event, GAUSSIAN_LEAVES) or subsampled_gaussian(event)


def _gaussian_or_approx(event: Event) -> bool:
    return isinstance(event, (*GAUSSIAN_LEAVES, ApproxDPEvent))


def _basic_leaf(event: Event) -> bool:
    return isinstance(event, (LaplaceEvent, ApproxDPEvent)) or _gaussian_or_subsampled(event)


def _pld_leaf(event: Event) -> bool:
    return isinstance(event, (*GAUSSIAN_LEAVES, ApproxDPEvent, LaplaceEvent)) or subsampled_gaussian(event)


#: Which single releases each accountant prices (a fresh ledger; "paper" and "kov" add rules on what may
#: share one ledger, ``Accountant._supports_together``).
SUPPORT: dict[str, Callable[[Event], bool]] = {
    "exact": _gaussian,
    "paper": _gaussian_or_subsampled,
    "kov": _gaussian_or_approx,
    "rdp": _gaussian_or_subsampled,
    "pld": _pld_leaf,
    "basic": _basic_leaf,
}


def default_hint(releases: Releases, epsilon: float, delta: float) -> float:
    """Start of the sigma search: the exact sigma of the unsubsampled composition, scaled by the sample
    rate (amplification by subsampling is roughly linear in it).

    Args:
        releases: what ran, as a function of sigma (trusted).
        epsilon: target epsilon, in (0, inf).
        delta: target delta, in (0, 1).
    """
    exact = composition._sigma_composed_exact(epsilon, delta, steps=releases.steps, sensitivity=releases.sensitivity)
    return exact * releases.sample_rate


class Accountant(abc.ABC):
    """Base class: keeps the ledger of composed events and enforces the protocol.

    Attributes:
        name: short name used by the front door and the CLI.
        valid: True when every number reported is an upper bound on the true epsilon (resp. delta).
        guarantee: what the reported number is, in words.
    """

    name: str = ""
    valid: bool = True
    guarantee: str = ""

    def __init__(self):
        self._ledger: list[tuple[Event, int]] = []

    # ------------------------------------------------------------------ protocol
    def supports(self, event: Event) -> bool:
        """Whether ``event`` (any history: lists, repetitions and their nestings) can be priced here.

        Args:
            event: the event to price.
        """
        if not isinstance(event, Event):
            return False
        leaves = [leaf for leaf, _ in _flatten(event)]
        return all(self._supports_leaf(leaf) for leaf in leaves) and self._supports_together(leaves)

    def get_epsilon(self, target_delta: float) -> float:
        """dp_accounting's name for :meth:`epsilon`.

        Args:
            target_delta: in (0, 1).
        """
        return self.epsilon(target_delta)

    def get_delta(self, target_epsilon: float) -> float:
        """dp_accounting's name for :meth:`delta`.

        Args:
            target_epsilon: in [0, inf).
        """
        return self.delta(target_epsilon)

    def compose(self, event: Event, count: int = 1) -> "Accountant":
        """Add ``count`` adaptive repetitions of ``event`` to the ledger; returns ``self``.

        Args:
            event: what ran.
            count: repetitions, an int >= 1; default 1.

        Raises:
            UnsupportedEventError: this accountant cannot price ``event``.
        """
        return self._compose(event, V.positive_int("count", count))

    def _compose(self, event: Event, count: int = 1) -> "Accountant":
        if not self.supports(event):
            raise UnsupportedEventError(f"the {self.name} accountant cannot price {event!r}")
        return self._compose_supported(event, count)

    def _compose_supported(self, event: Event, count: int = 1) -> "Accountant":
        """_compose without the support check, for an event already known to be supported by a fresh
        accountant of this class (the front door resolves support once per kind of event)."""
        for inner, n in _flatten(event, count):
            self._add(inner, n)
            self._ledger.append((inner, n))
        return self

    def epsilon(self, delta: float) -> float:
        """Epsilon at ``delta`` for everything composed so far (``inf`` if no finite bound).

        Args:
            delta: in (0, 1).
        """
        return self._epsilon(V.open_unit("delta", delta))

    def delta(self, epsilon: float) -> float:
        """Delta at ``epsilon`` for everything composed so far.

        Args:
            epsilon: in [0, inf).
        """
        return self._delta(V.nonnegative("epsilon", epsilon))

    def valid_for(self, event: Event) -> bool:
        """Whether the numbers reported after composing ``event`` would be upper bounds (no numerics).

        Args:
            event: the event that would be composed.
        """
        return type(self).valid

    @property
    def ledger(self) -> tuple[tuple[Event, int], ...]:
        """The (event, count) pairs composed so far."""
        return tuple(self._ledger)

    # ------------------------------------------------------------------ calibration
    def sigma_for(
        self,
        releases: Releases,
        epsilon: float,
        delta: float,
        *,
        sigma_hint: Optional[float] = None,
        rtol: float = _DEFAULT_RTOL,
    ) -> float:
        """Smallest sigma (to relative ``rtol``) for which ``releases`` are (epsilon, delta)-DP here.

        The answer is checked (this accountant reports epsilon <= target at it) before it is returned.
        The ledger of ``self`` is not touched: the search composes on fresh accountants of the same
        configuration.

        Args:
            releases: what ran, as a function of sigma.
            epsilon: target epsilon, in (0, inf).
            delta: target delta, in (0, 1).
            sigma_hint: where the search starts, in (0, inf); default: the exact sigma of the
                unsubsampled composition times the sample rate.
            rtol: relative precision of the answer, in [1e-15, 0.5]; default 1e-9.

        Raises:
            UnsupportedEventError: this accountant cannot price ``releases``.
            InfeasibleError: no sigma up to 1e12 reaches the target.
            CalibrationError: the final check failed.
        """
        if not isinstance(releases, Releases):
            raise ValueError(f"releases must be a privcal Releases, got {releases!r}")
        epsilon = V.positive("epsilon", epsilon)
        delta = V.open_unit("delta", delta)
        if sigma_hint is not None:
            sigma_hint = V.positive("sigma_hint", sigma_hint)
        rtol = V.in_closed("rtol", rtol, 1e-15, 0.5)
        return self._sigma_for(releases, epsilon, delta, sigma_hint=sigma_hint, rtol=rtol)

    def _sigma_for(self, releases, epsilon, delta, *, sigma_hint=None, rtol=_DEFAULT_RTOL) -> float:
        self._check_supported(releases)
        hint = default_hint(releases, epsilon, delta) if sigma_hint is None else sigma_hint
        return _search.search(
            lambda s: self._fresh()._compose(releases.event(s))._epsilon(delta),
            epsilon, delta, sigma_hint=hint, rtol=rtol,
        )

    def _check_supported(self, releases: Releases) -> None:
        event = releases.event(1.0)
        if not self._fresh().supports(event):
            raise UnsupportedEventError(f"the {self.name} accountant does not support this setting ({event!r})")

    def _fresh(self) -> "Accountant":
        """A new, empty accountant with this one's configuration."""
        return type(self)()

    # ------------------------------------------------------------------ to implement
    @abc.abstractmethod
    def _supports_leaf(self, event: Event) -> bool: ...

    def _supports_together(self, leaves: list) -> bool:
        """Whether these leaves (each supported) can share one ledger; every accountant here but KOV
        (homogeneous only) and paper (one kind of release) composes anything it prices."""
        return True

    @abc.abstractmethod
    def _add(self, event: Event, count: int) -> None: ...

    @abc.abstractmethod
    def _epsilon(self, delta: float) -> float: ...

    @abc.abstractmethod
    def _delta(self, epsilon: float) -> float: ...

    def __repr__(self) -> str:
        return f"{type(self).__name__}(ledger={self._ledger!r})"
