"""The accountant protocol, and the table of which releases each accountant prices.

Below every accountant (``privcal.accounting.accountants`` and ``privcal.accounting.pld_accountant`` both build on it,
``privcal.accounting.registry`` names them): :class:`Accountant` keeps the ledger and enforces the protocol of
Google's ``dp_accounting`` (``supports``, ``compose``, ``epsilon``, ``delta``, plus privcal's calibration
``sigma_for``); :data:`SUPPORT` says, per accountant name, which single releases it prices, so that support
is decided in one place (the subsampled pairs each accountant may price are those with a proven dominating
pair, ``privcal.accounting.pairs``).

The protocol, in three jobs:

* **supports** -- :meth:`Accountant.supports` (any history of events; the table :data:`SUPPORT` per leaf).
* **price** -- :meth:`Accountant.compose` adds releases to the ledger; :meth:`Accountant.epsilon` and
  :meth:`Accountant.delta` report an upper bound on epsilon (resp. delta) of the whole ledger, or ``inf``
  (resp. 1) where no finite bound exists. Never a lower or approximate value unless ``valid`` is False.
* **calibrate** -- :meth:`Accountant.sigma_for`: the smallest checked sigma meeting (epsilon, delta).

Each public method validates its arguments once and calls a trusted kernel of the same job, which assumes
its arguments already validated: :meth:`Accountant.compose_unchecked` (support already known for a fresh
accountant of the class), :meth:`Accountant.epsilon_unchecked`, :meth:`Accountant.delta_unchecked` and
:meth:`Accountant.sigma_for_unchecked`. privcal's own loops (the front door, the calibrators, the tables)
call the kernels. A new accountant subclasses :class:`Accountant` and implements ``epsilon_unchecked``,
``delta_unchecked`` and the two hooks only the base class calls, ``_supports_leaf`` (one release) and
``_add`` (one release, ``count`` times); it may override ``sigma_for_unchecked`` (default: the
bracketed search of ``privcal.accounting.search`` on fresh accountants) and ``_supports_together``.
"""

from __future__ import annotations

import abc
from typing import Callable, Optional, Union

from .. import _validate as V
from ..analysis import composition
from ..errors import UnsupportedEventError
from . import search as _search, pairs, relations
from .events import (
    ApproxDPEvent,
    EpochsEvent,
    Event,
    GaussianEvent,
    GaussianProcessEvent,
    LaplaceEvent,
    Neighbouring,
    Releases,
    SubsampledEvent,
    describe,
    flatten_unchecked,
    kind,
    requested_relation,
    unwrap_unchecked,
)

__all__ = ["Accountant", "GAUSSIAN_LEAVES", "SUPPORT", "default_hint", "epochs_gaussian", "subsampled_gaussian"]

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
    inner, n = unwrap_unchecked(event.event)
    return isinstance(inner, GAUSSIAN_LEAVES) and n == 1 and (event.sampling, event.neighbouring) in pairs.PRICED


def epochs_gaussian(event: Event) -> bool:
    """Whether ``event`` is a run over epochs (``EpochsEvent``) of a Gaussian or GP release whose (sampling,
    relation) pair is not refused (``relations.REFUSED_EPOCHS``): priced by the no-amplification bound.

    Args:
        event: any event.
    """
    if not isinstance(event, EpochsEvent):
        return False
    inner, n = unwrap_unchecked(event.event)
    return isinstance(inner, GAUSSIAN_LEAVES) and n == 1 and (event.sampling, event.neighbouring) not in \
        relations.REFUSED_EPOCHS


def _gaussian(event: Event) -> bool:
    return isinstance(event, GAUSSIAN_LEAVES)


def _gaussian_or_subsampled(event: Event) -> bool:
    return isinstance(event, GAUSSIAN_LEAVES) or subsampled_gaussian(event)


def _gaussian_or_approx(event: Event) -> bool:
    return isinstance(event, (*GAUSSIAN_LEAVES, ApproxDPEvent))


def _basic_leaf(event: Event) -> bool:
    return isinstance(event, (LaplaceEvent, ApproxDPEvent)) or _gaussian_or_subsampled(event) or epochs_gaussian(event)


def _pld_leaf(event: Event) -> bool:
    return (isinstance(event, (*GAUSSIAN_LEAVES, ApproxDPEvent, LaplaceEvent)) or subsampled_gaussian(event)
            or epochs_gaussian(event))


def _rdp_leaf(event: Event) -> bool:
    return _gaussian_or_subsampled(event) or epochs_gaussian(event)


#: Which single releases each accountant prices (a fresh ledger; "paper" and "kov" add rules on what may
#: share one ledger, ``Accountant._supports_together``).
SUPPORT: dict[str, Callable[[Event], bool]] = {
    "exact": _gaussian,
    "paper": _gaussian_or_subsampled,
    "kov": _gaussian_or_approx,
    "rdp": _rdp_leaf,
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
    exact = composition.sigma_composed_exact_unchecked(epsilon, delta, steps=releases.steps, sensitivity=releases.sensitivity)
    return exact * releases.sample_rate


class Accountant(abc.ABC):
    """Base class: keeps the ledger of composed events and enforces the protocol (this module's docstring).

    Public methods (``supports``, ``compose``, ``epsilon``, ``delta``, ``sigma_for``) validate their arguments;
    the trusted kernels ``compose_unchecked``, ``epsilon_unchecked``, ``delta_unchecked`` and
    ``sigma_for_unchecked`` take arguments already validated and return the same numbers.

    Args:
        neighbouring: the one neighbouring relation of everything this accountant composes ("add_remove",
            "replace_one", "zero_out" or a :class:`~privcal.accounting.events.Neighbouring`); default None
            (the relation the releases state; ``privcal.accounting.relations``).

    Attributes:
        name: short name used by the front door and the CLI.
        valid: True when every number reported is an upper bound on the true epsilon (resp. delta).
        guarantee: what the reported number is, in words.
    """

    name: str = ""
    valid: bool = True
    guarantee: str = ""

    def __init__(self, neighbouring: Optional[Union[Neighbouring, str]] = None):
        self._ledger: list[tuple[Event, int]] = []
        #: the relation asked for (constructor, or a composed event's ``neighbouring``), the (sampling, relation,
        #: whole data set) kinds of the subsampled releases composed, and the relation the ledger is priced under
        self._requested: Optional[Neighbouring] = None
        self._kinds: frozenset = frozenset()
        self._relation: Optional[Neighbouring] = None
        if neighbouring is not None:
            self._requested = self._relation = (neighbouring if isinstance(neighbouring, Neighbouring) else Neighbouring(
                V.choice("neighbouring", neighbouring, tuple(n.value for n in Neighbouring))))

    @property
    def neighbouring(self) -> Optional[Neighbouring]:
        """The one neighbouring relation everything composed so far is priced under (the one asked for, or
        the one the subsampled releases state, each converted to it by a proven pair:
        ``privcal.accounting.relations``); None while no release states one (plain releases are priced
        alike under every relation, their sensitivity read under the user's)."""
        return self._relation

    # ------------------------------------------------------------------ protocol
    def supports(self, event: Event) -> bool:
        """Whether ``event`` (any history: lists, repetitions and their nestings) can be priced here.

        Args:
            event: the event to price.
        """
        if not isinstance(event, Event):
            return False
        leaves = [leaf for leaf, _ in flatten_unchecked(event)]
        if not (all(self._supports_leaf(leaf) for leaf in leaves) and self._supports_together(leaves)):
            return False
        try:
            self._relation_with(event, leaves)
        except UnsupportedEventError:
            return False
        return True

    def _relation_with(self, event: Event, leaves: list) -> tuple[Optional[Neighbouring], Optional[Neighbouring],
                                                                  frozenset]:
        """(the relation asked, the ledger's relation, its kinds) once ``event`` (with these leaves) is added.

        Raises:
            UnsupportedEventError: the history would have no one relation (one line naming them).
        """
        asked = requested_relation(event)
        if asked is not None and self._requested is not None and asked != self._requested:
            raise UnsupportedEventError(f"one history, one neighbouring relation: this {self.name} accountant "
                                        f"prices {self._requested.value}, the event asks {asked.value}")
        asked = self._requested if asked is None else asked
        kinds = self._kinds.union(k for k in map(kind, leaves) if k is not None)
        return asked, relations.history_relation(kinds, asked), kinds

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
            leaves = [leaf for leaf, _ in flatten_unchecked(event)] if isinstance(event, Event) else []
            if leaves and all(map(self._supports_leaf, leaves)) and self._supports_together(leaves):
                self._relation_with(event, leaves)  # the relations' own one-line refusal
            raise UnsupportedEventError(f"the {self.name} accountant cannot price {describe(event)}")
        return self.compose_unchecked(event, count)

    def compose_unchecked(self, event: Event, count: int = 1) -> "Accountant":
        """:meth:`compose` for arguments already validated: ``count`` an int >= 1 and ``event`` known to be
        supported by a fresh accountant of this class (the front door resolves support once per kind of
        event); returns ``self``. The ledger's relation is decided again with the new releases; if it
        changes, the releases composed so far are priced again under the new one.

        Args:
            event: what ran (trusted: supported).
            count: repetitions, an int >= 1 (trusted); default 1.

        Raises:
            UnsupportedEventError: no one neighbouring relation prices the ledger and ``event`` together.
        """
        flat = flatten_unchecked(event, count)
        asked, relation, kinds = self._relation_with(event, [leaf for leaf, _ in flat])
        self._requested, self._kinds = asked, kinds
        if relation != self._relation:
            self._reprice(relation)
        for inner, n in flat:
            self._add(inner, n)
            self._ledger.append((inner, n))
        return self

    def _reprice(self, relation: Optional[Neighbouring]) -> None:
        """Set the ledger's relation to ``relation`` and price what it holds again under it (a fresh
        accountant of this configuration composes the same ledger; its state replaces this one's)."""
        fresh = self._fresh()
        fresh._requested, fresh._kinds, fresh._relation = self._requested, self._kinds, relation
        for inner, n in self._ledger:
            fresh._add(inner, n)
            fresh._ledger.append((inner, n))
        self.__dict__.update(fresh.__dict__)

    def epsilon(self, delta: float) -> float:
        """Epsilon at ``delta`` for everything composed so far (``inf`` if no finite bound).

        Args:
            delta: in (0, 1).
        """
        return self.epsilon_unchecked(V.open_unit("delta", delta))

    def delta(self, epsilon: float) -> float:
        """Delta at ``epsilon`` for everything composed so far.

        Args:
            epsilon: in [0, inf).
        """
        return self.delta_unchecked(V.nonnegative("epsilon", epsilon))

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
        return self.sigma_for_unchecked(releases, epsilon, delta, sigma_hint=sigma_hint, rtol=rtol)

    def sigma_for_unchecked(
        self,
        releases: Releases,
        epsilon: float,
        delta: float,
        *,
        sigma_hint: Optional[float] = None,
        rtol: float = _DEFAULT_RTOL,
    ) -> float:
        """:meth:`sigma_for` for arguments already validated: the same checked sigma. The default is the
        bracketed search of ``privcal.accounting.search`` on fresh accountants; a subclass may replace it
        by its own (closed form, order search, secant).

        Args:
            releases: what ran, as a function of sigma (trusted).
            epsilon: target epsilon, in (0, inf) (trusted).
            delta: target delta, in (0, 1) (trusted).
            sigma_hint: where the search starts (trusted); default :func:`default_hint`.
            rtol: relative precision of the answer (trusted); default 1e-9.

        Raises:
            UnsupportedEventError: this accountant cannot price ``releases``.
            InfeasibleError: no sigma up to 1e12 reaches the target.
            CalibrationError: the final check failed.
        """
        self._check_supported(releases)
        hint = default_hint(releases, epsilon, delta) if sigma_hint is None else sigma_hint
        return _search.search(
            lambda s: self._fresh()._compose(releases.event(s)).epsilon_unchecked(delta),
            epsilon, delta, sigma_hint=hint, rtol=rtol,
        )

    def _check_supported(self, releases: Releases) -> None:
        event = releases.event(1.0)
        if not self._fresh().supports(event):
            raise UnsupportedEventError(f"the {self.name} accountant does not support this setting ({describe(event)})")

    def _fresh(self) -> "Accountant":
        """A new, empty accountant with this one's configuration (the relation asked for included)."""
        new = type(self)()
        new._requested = new._relation = self._requested
        return new

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
    def epsilon_unchecked(self, delta: float) -> float:
        """:meth:`epsilon` for ``delta`` already validated: an upper bound on epsilon of the ledger (``inf``
        where no finite bound exists).

        Args:
            delta: in (0, 1) (trusted).
        """

    @abc.abstractmethod
    def delta_unchecked(self, epsilon: float) -> float:
        """:meth:`delta` for ``epsilon`` already validated: an upper bound on delta of the ledger.

        Args:
            epsilon: in [0, inf) (trusted).
        """

    def __repr__(self) -> str:
        return f"{type(self).__name__}(ledger={self._ledger!r})"
