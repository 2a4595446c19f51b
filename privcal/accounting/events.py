"""Descriptions of what ran (no numerics): frozen, validated on construction.

An event says *what* mechanism was run; an accountant (``privcal.accounting.accountants``) says what
it costs. Modelled on the DpEvent / accountant split of Google's ``dp_accounting``.

The neighbouring relation is a named value (:class:`Neighbouring`) on every subsampled event, and an
event's sensitivity is always meant under that relation: under add/remove-one a clipped per-example
contribution of norm h has sensitivity h, under replace-one 2h, under zero-out (one example replaced
by a null one) h.

Events built by the user are validated once, when constructed. privcal's own calibration loops build
thousands of candidate events from values already validated at the front door; they use the trusted
``unchecked`` constructors (a classmethod of every event and of :class:`Releases`), which skip the checks.
"""

from __future__ import annotations

import sys
import warnings
from dataclasses import MISSING, dataclass, fields
from typing import Literal, Optional, Union

from .. import _validate as V
from ..errors import UnsupportedEventError
from .relations import Neighbouring, history_relation as _relation_of_kinds

__all__ = [
    "Event",
    "GaussianEvent",
    "GaussianProcessEvent",
    "ApproxDPEvent",
    "LaplaceEvent",
    "ComposedEvent",
    "SelfComposedEvent",
    "SubsampledEvent",
    "EpochsEvent",
    "EPOCH_SAMPLINGS",
    "BATCH_SAMPLERS",
    "PoissonSampledEvent",
    "SampledWithoutReplacementEvent",
    "Neighbouring",
    "NeighbouringWarning",
    "Releases",
    "SAMPLINGS",
    "Sampling",
    "unwrap",
    "flatten",
    "flatten_unchecked",
    "unwrap_unchecked",
    "kind",
    "describe",
    "relation_of",
    "requested_relation",
]

#: Subsampling schemes a ``SubsampledEvent`` may name (a fresh random batch each step).
SAMPLINGS = ("poisson", "without_replacement")
Sampling = Literal["poisson", "without_replacement"]
#: Batch samplers over epochs an ``EpochsEvent`` may name: "shuffle" (fixed-size batches of a permutation,
#: fresh each epoch or ``persistent``), "balls_in_bins" (each record in one uniformly random step of each
#: epoch), "full_batch" (every record in every step).
EPOCH_SAMPLINGS = ("shuffle", "balls_in_bins", "full_batch")
#: Every batch sampler privcal names, one vocabulary for the API, the CLI, the Opacus adapter and the learners.
BATCH_SAMPLERS = SAMPLINGS + EPOCH_SAMPLINGS
#: The relation an epoch sampler is priced under when none is named: shuffled batches under zero-out (a removed
#: record would move every later batch boundary: add/remove is refused), the others under add/remove.
DEFAULT_EPOCH_NEIGHBOURING = {"shuffle": Neighbouring.ZERO_OUT, "balls_in_bins": Neighbouring.ADD_REMOVE,
                              "full_batch": Neighbouring.ADD_REMOVE}


#: The relation a sampling scheme implies when none is named.
DEFAULT_NEIGHBOURING = {"poisson": Neighbouring.ADD_REMOVE, "without_replacement": Neighbouring.REPLACE_ONE}


class NeighbouringWarning(UserWarning):
    """A neighbouring relation was implied, not stated, where it changes what ``sensitivity`` means."""


def _user_stacklevel() -> int:
    """Stack level of the first frame outside privcal (so a warning points at the user's own call)."""
    level, frame = 1, sys._getframe(1)
    while frame is not None and frame.f_globals.get("__name__", "").startswith("privcal"):
        level, frame = level + 1, frame.f_back
    return level


def _neighbouring(value, sampling: str) -> Neighbouring:
    """Validated relation (a Neighbouring or its string value; None: the sampling's default).

    Sampling without replacement with no relation named warns (:class:`NeighbouringWarning`): its
    natural relation is replace-one, under which the sensitivity of a clipped contribution is twice its
    add/remove value, so a sensitivity carried over from a Poisson setting would understate epsilon."""
    if value is None:
        if sampling == "without_replacement":
            warnings.warn(
                "sampling='without_replacement' prices replace-one neighbours: sensitivity must be that of "
                "replacing one example (2C for a sum of contributions clipped to C, where add/remove gives C); "
                "pass neighbouring='replace_one' to state it ('zero_out' takes C but is priced as replace-one "
                "at 2C: the null example displaces another from the batch)",
                NeighbouringWarning,
                stacklevel=_user_stacklevel(),
            )
        return DEFAULT_NEIGHBOURING[sampling]
    if isinstance(value, Neighbouring):
        return value
    return Neighbouring(V.choice("neighbouring", value, tuple(n.value for n in Neighbouring)))


class _Trusted:
    """Mixin of frozen dataclasses: ``unchecked`` builds an instance from already-validated values."""

    @classmethod
    def unchecked(cls, *values):
        """An instance with the given field values, in field order (the fields not given take their defaults),
        without validation: the trusted layer's constructor (STYLE.md), for callers that validated the values
        already or build them from validated ones. A wrong value here is priced as given."""
        obj = object.__new__(cls)
        for i, f in enumerate(fields(cls)):
            object.__setattr__(obj, f.name, values[i] if i < len(values) else
                               (f.default if f.default is not MISSING else f.default_factory()))
        return obj


class Event(_Trusted):
    """Base class of all privcal events."""


@dataclass(frozen=True)
class GaussianEvent(Event):
    """One release of f(D) + N(0, sigma^2 I).

    Attributes:
        noise_multiplier: sigma / (L2 sensitivity of f), in (0, inf] (inf: no information released).
    """

    noise_multiplier: float

    def __post_init__(self):
        object.__setattr__(
            self, "noise_multiplier", V.positive("noise_multiplier", self.noise_multiplier, allow_inf=True)
        )

    @property
    def mu(self) -> float:
        """Gaussian-DP parameter mu = sensitivity / sigma of one release."""
        return 1.0 / self.noise_multiplier


@dataclass(frozen=True)
class GaussianProcessEvent(Event):
    """One release of f + g, g ~ GP(0, sigma^2 K), with RKHS-norm sensitivity of f (Hall et al. 2013).

    Its privacy profile is that of a Gaussian mechanism with mu = rkhs_sensitivity / sigma
    (Wang & Hegde 2019, Prop. 4).

    Attributes:
        sigma: scale of the Gaussian-process noise (absolute, not a multiplier), in (0, inf).
        rkhs_sensitivity: sup over neighbours of ||f - f'|| in the RKHS of K, in (0, inf).
    """

    sigma: float
    rkhs_sensitivity: float

    def __post_init__(self):
        object.__setattr__(self, "sigma", V.positive("sigma", self.sigma))
        object.__setattr__(self, "rkhs_sensitivity", V.positive("rkhs_sensitivity", self.rkhs_sensitivity))

    @property
    def noise_multiplier(self) -> float:
        """sigma / rkhs_sensitivity."""
        return self.sigma / self.rkhs_sensitivity

    @property
    def mu(self) -> float:
        """Gaussian-DP parameter mu = rkhs_sensitivity / sigma."""
        return self.rkhs_sensitivity / self.sigma


@dataclass(frozen=True)
class ApproxDPEvent(Event):
    """A mechanism known only to be (epsilon, delta)-DP.

    Attributes:
        epsilon: in [0, inf).
        delta: in [0, 1].
    """

    epsilon: float
    delta: float

    def __post_init__(self):
        object.__setattr__(self, "epsilon", V.nonnegative("epsilon", self.epsilon))
        object.__setattr__(self, "delta", V.probability("delta", self.delta))


@dataclass(frozen=True)
class LaplaceEvent(Event):
    """One release of f(D) + Laplace(0, scale) noise (per coordinate), with L1 sensitivity of f.

    Its privacy loss takes values in [-sensitivity/scale, sensitivity/scale]: pure
    (sensitivity/scale)-DP, priced tightly by the PLD accountant (``privcal.pld``).

    Attributes:
        scale: the Laplace scale b (absolute), in (0, inf).
        sensitivity: L1 sensitivity of the released function under the neighbouring relation, in
            (0, inf); default 1.
    """

    scale: float
    sensitivity: float = 1.0

    def __post_init__(self):
        object.__setattr__(self, "scale", V.positive("scale", self.scale))
        object.__setattr__(self, "sensitivity", V.positive("sensitivity", self.sensitivity))


@dataclass(frozen=True)
class SelfComposedEvent(Event):
    """``count`` adaptive repetitions of one ``event`` (dp_accounting's ``SelfComposedDpEvent``).

    Attributes:
        event: the repeated event.
        count: number of repetitions, an int >= 1.
    """

    event: Event
    count: int

    def __post_init__(self):
        if not isinstance(self.event, Event):
            raise ValueError(f"event must be a privcal Event, got {self.event!r}")
        object.__setattr__(self, "count", V.positive_int("count", self.count))


@dataclass(frozen=True)
class ComposedEvent(Event):
    """Adaptive composition of a list of events, in order (dp_accounting's ``ComposedDpEvent``).

    ``ComposedEvent([e1, e2, e3])`` is a history of different releases. They run on the same data, so the
    history has one neighbouring relation (:attr:`relation`): the one asked for (``neighbouring``), or the
    one its subsampled releases state; releases stated under another relation are converted to it by a
    proven dominating pair, or the history is refused (``privcal.accounting.relations``, docs/pld.md 1.5).
    The former form ``ComposedEvent(event, count)`` (repetition) still works: it returns
    ``SelfComposedEvent(event, count)`` with a DeprecationWarning.

    Attributes:
        events: the composed events (a non-empty sequence; stored as a tuple).
        neighbouring: the relation the whole history is to be priced under (a :class:`Neighbouring` or
            its string value), or None (default: the relation its releases state).

    Raises:
        UnsupportedEventError: the releases have no proven conversion to one relation (or to the one asked).
    """

    events: tuple
    neighbouring: Optional[Union[Neighbouring, str]] = None

    def __new__(cls, events=None, count=None, *args, **kwargs):
        if isinstance(events, Event) and isinstance(count, int) and not isinstance(count, bool):
            warnings.warn(  # the former ComposedEvent(event, count)
                "ComposedEvent(event, count) is now SelfComposedEvent(event, count); ComposedEvent takes a list",
                DeprecationWarning,
                stacklevel=_user_stacklevel(),
            )
            return SelfComposedEvent(events, count)
        return super().__new__(cls)

    def __post_init__(self):
        events = self.events
        if isinstance(events, Event) or not isinstance(events, (list, tuple)) or not events:
            raise ValueError(f"events must be a non-empty list of privcal Events, got {events!r}")
        for i, e in enumerate(events):
            if not isinstance(e, Event):
                raise ValueError(f"events[{i}] must be a privcal Event, got {e!r}")
        object.__setattr__(self, "events", tuple(events))
        if self.neighbouring is not None and not isinstance(self.neighbouring, Neighbouring):
            object.__setattr__(self, "neighbouring", Neighbouring(
                V.choice("neighbouring", self.neighbouring, tuple(n.value for n in Neighbouring))))
        relation_of(self)  # refuses a history with no one relation (one line, naming the relations)

    @property
    def relation(self) -> Optional[Neighbouring]:
        """The neighbouring relation the history is priced under (None: no release states one, e.g. plain
        Gaussian releases, whose sensitivities are read under the relation the user meant)."""
        return relation_of(self)


@dataclass(frozen=True)
class SubsampledEvent(Event):
    """``event`` run on a random subsample of the dataset.

    Attributes:
        event: the mechanism run on the subsample (its sensitivity under ``neighbouring``).
        sample_rate: Poisson: the inclusion probability of each example; without replacement: batch
            size / dataset size. In (0, 1].
        sampling: "poisson" (default) or "without_replacement" (a fixed-size batch).
        neighbouring: the neighbouring relation (a :class:`Neighbouring` or its string value);
            default: add/remove-one for Poisson, replace-one without replacement (implied with a
            :class:`NeighbouringWarning`: under replace-one a clipped contribution of norm h has
            sensitivity 2h). An accountant that has no bound for a (sampling, neighbouring) pair raises
            ``UnsupportedEventError``.
    """

    event: Event
    sample_rate: float
    sampling: Sampling = "poisson"
    neighbouring: Optional[Union[Neighbouring, str]] = None

    def __post_init__(self):
        if not isinstance(self.event, Event):
            raise ValueError(f"event must be a privcal Event, got {self.event!r}")
        object.__setattr__(self, "sample_rate", V.rate("sample_rate", self.sample_rate))
        V.choice("sampling", self.sampling, SAMPLINGS)
        object.__setattr__(self, "neighbouring", _neighbouring(self.neighbouring, self.sampling))


@dataclass(frozen=True)
class EpochsEvent(Event):
    """``epochs`` epochs of ``steps_per_epoch`` releases of ``event``, each on a batch of a sampler over epochs
    (``sampling``): every record sits in one batch of each epoch ("shuffle", "balls_in_bins") or in every
    batch ("full_batch").

    Priced by the no-amplification bound (docs/samplers.md): conditioned on the batch assignment, which has
    the same law under both data sets, one step per epoch moves by at most the sensitivity, so the run is
    dominated by the Gaussian pair with mu = sqrt(epochs) / noise_multiplier (sqrt(epochs x steps_per_epoch)
    for a full batch; joint convexity of the hockey-stick divergence over the assignment). That pair is not
    realised by a shuffled or balls-in-bins run: ``privcal.accounting.samplers.epsilon_lower`` prices a
    realisable one from below.

    Attributes:
        event: the release on each batch, a ``GaussianEvent`` or ``GaussianProcessEvent`` (its sensitivity under
            ``neighbouring``).
        epochs: E, an int >= 1.
        steps_per_epoch: T, an int >= 1 (ceil(dataset size / batch size)).
        sampling: "shuffle" (default), "balls_in_bins" or "full_batch".
        neighbouring: the relation (default: zero-out for "shuffle", add/remove otherwise); "shuffle" under
            add/remove is refused by every accountant (no proof: a removed record moves every later batch
            boundary).
        persistent: one permutation (assignment) kept for the whole run; default False (fresh each epoch). The
            upper bound is the same; the realisable lower bound is larger.
    """

    event: Event
    epochs: int
    steps_per_epoch: int
    sampling: str = "shuffle"
    neighbouring: Optional[Union[Neighbouring, str]] = None
    persistent: bool = False

    def __post_init__(self):
        if not isinstance(self.event, Event):
            raise ValueError(f"event must be a privcal Event, got {self.event!r}")
        object.__setattr__(self, "epochs", V.positive_int("epochs", self.epochs))
        object.__setattr__(self, "steps_per_epoch", V.positive_int("steps_per_epoch", self.steps_per_epoch))
        V.choice("sampling", self.sampling, EPOCH_SAMPLINGS)
        relation = (DEFAULT_EPOCH_NEIGHBOURING[self.sampling] if self.neighbouring is None else
                    _neighbouring(self.neighbouring, "poisson"))
        object.__setattr__(self, "neighbouring", relation)
        if not isinstance(self.persistent, bool):
            raise ValueError(f"persistent must be True or False, got {self.persistent!r}")
        if self.persistent and self.sampling == "full_batch":
            raise ValueError("persistent applies to sampling 'shuffle' and 'balls_in_bins', not 'full_batch'")

    @property
    def releases(self) -> int:
        """How many releases of ``event`` one record's change moves: epochs (one batch per epoch), or
        epochs x steps_per_epoch for a full batch."""
        return self.epochs * (self.steps_per_epoch if self.sampling == "full_batch" else 1)


@dataclass(frozen=True)
class Releases(_Trusted):
    """What ran, as a function of the noise: ``steps`` releases of a Gaussian (or Gaussian-process)
    mechanism, each optionally on a random subsample. ``event(sigma)`` is the composed event at noise
    standard deviation ``sigma``; calibration searches over it.

    Attributes:
        sensitivity: L2 (or RKHS-norm) sensitivity of one release under ``neighbouring``, in (0, inf).
        steps: number of releases, an int >= 1.
        sample_rate: in (0, 1]; 1 means no subsampling.
        sampling: "poisson" or "without_replacement" (ignored when sample_rate is 1).
        neighbouring: the neighbouring relation (default: the sampling's natural one).
    """

    sensitivity: float = 1.0
    steps: int = 1
    sample_rate: float = 1.0
    sampling: Sampling = "poisson"
    neighbouring: Optional[Union[Neighbouring, str]] = None

    def __post_init__(self):
        object.__setattr__(self, "sensitivity", V.positive("sensitivity", self.sensitivity))
        object.__setattr__(self, "steps", V.positive_int("steps", self.steps))
        object.__setattr__(self, "sample_rate", V.rate("sample_rate", self.sample_rate))
        V.choice("sampling", self.sampling, SAMPLINGS)
        object.__setattr__(self, "neighbouring", _neighbouring(self.neighbouring, self.sampling))

    @property
    def subsampled(self) -> bool:
        """Whether each release runs on a subsample (sample_rate < 1)."""
        return self.sample_rate < 1.0

    def event(self, sigma: float) -> Event:
        """The composed event at noise standard deviation ``sigma`` (trusted: no validation).

        Args:
            sigma: noise standard deviation, in (0, inf).
        """
        inner: Event = GaussianEvent.unchecked(sigma / self.sensitivity)
        if self.subsampled:
            inner = SubsampledEvent.unchecked(inner, self.sample_rate, self.sampling, self.neighbouring)
        return SelfComposedEvent.unchecked(inner, self.steps)


def unwrap(event: Event, count: int = 1) -> tuple[Event, int]:
    """Strip nested ``SelfComposedEvent`` layers (a list ``ComposedEvent`` of one event counts as one).

    Args:
        event: any event.
        count: repetitions of ``event`` itself, an int >= 1; default 1.

    Returns:
        (inner event, total count).
    """
    return unwrap_unchecked(event, V.positive_int("count", count))


def unwrap_unchecked(event: Event, count: int = 1) -> tuple[Event, int]:
    """:func:`unwrap` for arguments already validated (``count`` an int >= 1).

    Args:
        event: any event.
        count: repetitions of ``event`` itself (trusted).
    """
    while True:
        if isinstance(event, SelfComposedEvent):
            count *= event.count
            event = event.event
        elif isinstance(event, ComposedEvent) and len(event.events) == 1:
            event = event.events[0]
        else:
            return event, count


def flatten(event: Event, count: int = 1) -> list[tuple[Event, int]]:
    """The (leaf event, repetitions) pairs of a history, in order, with repetitions multiplied out.

    Args:
        event: any event (nested compositions allowed).
        count: repetitions of ``event`` itself, an int >= 1; default 1.
    """
    return flatten_unchecked(event, V.positive_int("count", count))


def flatten_unchecked(event: Event, count: int = 1) -> list[tuple[Event, int]]:
    """:func:`flatten` for arguments already validated (``count`` an int >= 1).

    Args:
        event: any event (nested compositions allowed).
        count: repetitions of ``event`` itself (trusted).
    """
    event, count = unwrap_unchecked(event, count)
    if isinstance(event, ComposedEvent):
        return [pair for e in event.events for pair in flatten_unchecked(e, count)]
    return [(event, count)]
def describe(event: Event, limit: int = 3) -> str:
    """``event`` as the user would have written it, for messages: ``PoissonSampledEvent(q, inner)`` for a Poisson
    add/remove release (not the ``SubsampledEvent(...)`` it is stored as), and a long history shortened to its
    first ``limit`` parts.

    Args:
        event: any event.
        limit: how many parts of a composition to show, an int >= 1; default 3.
    """
    if isinstance(event, SubsampledEvent):
        if event.sampling == "poisson" and event.neighbouring == Neighbouring.ADD_REMOVE:
            return f"PoissonSampledEvent({event.sample_rate:g}, {describe(event.event, limit)})"
        return (f"SubsampledEvent({describe(event.event, limit)}, {event.sample_rate:g}, {event.sampling!r}, "
                f"{event.neighbouring.value!r})")
    if isinstance(event, SelfComposedEvent):
        return f"SelfComposedEvent({describe(event.event, limit)}, {event.count})"
    if isinstance(event, ComposedEvent):
        parts = [describe(e, limit) for e in event.events[:limit]]
        more = len(event.events) - limit
        tail = f", ... ({more} more)" if more > 0 else ""
        asked = "" if event.neighbouring is None else f", neighbouring={event.neighbouring.value!r}"
        return f"ComposedEvent([{', '.join(parts)}{tail}]{asked})"
    if isinstance(event, GaussianEvent):
        return f"GaussianEvent({event.noise_multiplier:g})"
    return repr(event)


def kind(leaf: Event) -> Optional[tuple]:
    """(sampling, stated relation, whole data set) of a subsampled release or a run over epochs; None for other
    releases.

    Args:
        leaf: one release (a leaf of ``flatten``).
    """
    if isinstance(leaf, SubsampledEvent):
        return leaf.sampling, leaf.neighbouring, leaf.sample_rate >= 1.0
    if isinstance(leaf, EpochsEvent):
        return leaf.sampling, leaf.neighbouring, leaf.sampling == "full_batch"
    return None


def requested_relation(event: Event) -> Optional[Neighbouring]:
    """The relation asked of ``event`` by its ``ComposedEvent(..., neighbouring=...)`` nodes, or None.

    Args:
        event: any event.

    Raises:
        UnsupportedEventError: two nodes ask for different relations.
    """
    found: set = set()
    stack = [event]
    while stack:
        e = stack.pop()
        if isinstance(e, SelfComposedEvent):
            stack.append(e.event)
        elif isinstance(e, ComposedEvent):
            if e.neighbouring is not None:
                found.add(e.neighbouring)
            stack.extend(e.events)
    if len(found) > 1:
        raise UnsupportedEventError(
            "one history, one neighbouring relation: its parts ask for "
            f"{' and '.join(sorted(r.value for r in found))}")
    return next(iter(found), None)


def relation_of(event: Event, requested: Optional[Neighbouring] = None) -> Optional[Neighbouring]:
    """The one neighbouring relation ``event`` (any history) is priced under
    (``privcal.accounting.relations.history_relation`` of its releases).

    Args:
        event: any event.
        requested: a relation asked for besides the event's own ``neighbouring`` (e.g. an accountant's), or None.

    Raises:
        UnsupportedEventError: no one relation prices every release by a proven pair, or two relations are asked.
    """
    own = requested_relation(event)
    if own is not None and requested is not None and own != requested:
        raise UnsupportedEventError(
            f"one history, one neighbouring relation: {requested.value} is asked, the history asks {own.value}")
    kinds = {k for k in (kind(leaf) for leaf, _ in flatten_unchecked(event)) if k is not None}
    return _relation_of_kinds(kinds, own or requested)


def PoissonSampledEvent(sample_rate: float, event: Event) -> SubsampledEvent:  # noqa: N802 (dp_accounting's name)
    """``event`` on a Poisson subsample, in dp_accounting's argument order (``PoissonSampledDpEvent``).

    Add/remove-one neighbours. Same as ``SubsampledEvent(event, sample_rate, "poisson", "add_remove")``.

    Args:
        sample_rate: each example's inclusion probability, in (0, 1].
        event: the mechanism run on the subsample (its add/remove sensitivity).
    """
    return SubsampledEvent(event, sample_rate, "poisson", Neighbouring.ADD_REMOVE)


def SampledWithoutReplacementEvent(  # noqa: N802 (dp_accounting's name)
    source_dataset_size: int,
    sample_size: int,
    event: Event,
    neighbouring: Union[Neighbouring, str] = Neighbouring.REPLACE_ONE,
) -> SubsampledEvent:
    """``event`` on a fixed-size batch drawn without replacement (dp_accounting's
    ``SampledWithoutReplacementDpEvent``), with the neighbouring relation named.

    Args:
        source_dataset_size: n, the dataset size, an int >= 1.
        sample_size: b, the batch size, an int in [1, n].
        event: the mechanism run on the batch (its sensitivity under ``neighbouring``).
        neighbouring: "replace_one" (default, dp_accounting's REPLACE_ONE) or "zero_out".
    """
    n = V.positive_int("source_dataset_size", source_dataset_size)
    b = V.positive_int("sample_size", sample_size)
    if b > n:
        raise ValueError(f"sample_size must be in [1, source_dataset_size={n}], got {sample_size!r}")
    return SubsampledEvent(event, b / n, "without_replacement", neighbouring)
