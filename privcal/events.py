"""Descriptions of what ran (no numerics): frozen, validated on construction.

An event says *what* mechanism was run; an accountant (``privcal.accountants``) says what it costs.
Modelled on the DpEvent / accountant split of Google's ``dp_accounting``.
"""

from __future__ import annotations

from dataclasses import dataclass

from . import _validate as V

__all__ = [
    "Event",
    "GaussianEvent",
    "GaussianProcessEvent",
    "ApproxDPEvent",
    "ComposedEvent",
    "SubsampledEvent",
    "SAMPLINGS",
    "unwrap",
]

#: Subsampling schemes a ``SubsampledEvent`` may name.
SAMPLINGS = ("poisson", "without_replacement")


class Event:
    """Base class of all privcal events."""


@dataclass(frozen=True)
class GaussianEvent(Event):
    """One release of f(D) + N(0, sigma^2 I) with noise_multiplier = sigma / (L2 sensitivity of f)."""

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
    """

    sigma: float
    rkhs_sensitivity: float

    def __post_init__(self):
        object.__setattr__(self, "sigma", V.positive("sigma", self.sigma))
        object.__setattr__(self, "rkhs_sensitivity", V.positive("rkhs_sensitivity", self.rkhs_sensitivity))

    @property
    def noise_multiplier(self) -> float:
        return self.sigma / self.rkhs_sensitivity

    @property
    def mu(self) -> float:
        return self.rkhs_sensitivity / self.sigma


@dataclass(frozen=True)
class ApproxDPEvent(Event):
    """A mechanism known only to be (epsilon, delta)-DP."""

    epsilon: float
    delta: float

    def __post_init__(self):
        object.__setattr__(self, "epsilon", V.nonnegative("epsilon", self.epsilon))
        object.__setattr__(self, "delta", V.probability("delta", self.delta))


@dataclass(frozen=True)
class ComposedEvent(Event):
    """``count`` adaptive repetitions of ``event``."""

    event: Event
    count: int

    def __post_init__(self):
        if not isinstance(self.event, Event):
            raise ValueError(f"event must be a privcal Event, got {self.event!r}")
        object.__setattr__(self, "count", V.positive_int("count", self.count))


@dataclass(frozen=True)
class SubsampledEvent(Event):
    """``event`` run on a random subsample: Poisson with rate ``sample_rate``, or a fixed-size batch
    drawn without replacement with ``sample_rate`` = batch size / dataset size."""

    event: Event
    sample_rate: float
    sampling: str = "poisson"

    def __post_init__(self):
        if not isinstance(self.event, Event):
            raise ValueError(f"event must be a privcal Event, got {self.event!r}")
        q = V.probability("sample_rate", self.sample_rate)
        if q == 0:
            raise ValueError(f"sample_rate must be in (0, 1], got {self.sample_rate!r}")
        object.__setattr__(self, "sample_rate", q)
        if self.sampling not in SAMPLINGS:
            raise ValueError(f"sampling must be one of {SAMPLINGS}, got {self.sampling!r}")


def unwrap(event: Event, count: int = 1) -> tuple[Event, int]:
    """Strip nested ``ComposedEvent`` layers: returns (inner event, total count)."""
    count = V.positive_int("count", count)
    while isinstance(event, ComposedEvent):
        count *= event.count
        event = event.event
    return event, count
