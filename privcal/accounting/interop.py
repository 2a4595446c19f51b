"""Bridges to other libraries' event descriptions: check a dp_accounting pipeline with privcal in one line.

``from_dp_accounting(dp_event)`` converts a Google ``dp_accounting`` ``DpEvent`` tree into privcal's events.
dp_accounting is not imported here (it stays an optional extra): events are recognised by their class
name and read through their public attributes, as documented in ``dp_accounting/dp_event.py``.
"""

from __future__ import annotations

import math
from typing import Any

from ..errors import UnsupportedEventError
from .events import (
    ApproxDPEvent,
    ComposedEvent,
    Event,
    GaussianEvent,
    Neighbouring,
    SampledWithoutReplacementEvent,
    SelfComposedEvent,
    SubsampledEvent,
)

__all__ = ["from_dp_accounting"]


def from_dp_accounting(dp_event: Any) -> Event:
    """The privcal event of a dp_accounting ``DpEvent`` (recursively).

    * ``GaussianDpEvent(noise_multiplier)`` -> :class:`GaussianEvent`;
    * ``LaplaceDpEvent(noise_multiplier)`` -> ``ApproxDPEvent(1 / noise_multiplier, 0)``: the Laplace
      mechanism with scale b and L1 sensitivity 1 is (1/b, 0)-DP (Dwork & Roth 2014, Thm 3.6), a valid
      description (no accountant here has Laplace's exact profile yet);
    * ``NoOpDpEvent`` -> ``GaussianEvent(inf)`` (nothing released);
    * ``PoissonSampledDpEvent(sampling_probability, event)`` -> Poisson :class:`SubsampledEvent`,
      add/remove neighbours;
    * ``SampledWithoutReplacementDpEvent(source_dataset_size, sample_size, event)`` ->
      :func:`SampledWithoutReplacementEvent`, replace-one neighbours (dp_accounting's convention);
    * ``SelfComposedDpEvent(event, count)`` -> :class:`SelfComposedEvent`;
    * ``ComposedDpEvent(events)`` -> :class:`ComposedEvent`.

    Args:
        dp_event: a dp_accounting DpEvent.

    Raises:
        UnsupportedEventError: an event with no privcal counterpart (e.g. ``NonPrivateDpEvent``,
            ``UnsupportedDpEvent``, or a sampled event under another neighbouring relation).
    """
    kind = type(dp_event).__name__
    if kind == "GaussianDpEvent":
        return GaussianEvent(dp_event.noise_multiplier)
    if kind == "LaplaceDpEvent":
        if not dp_event.noise_multiplier > 0:
            raise UnsupportedEventError(f"Laplace noise of scale 0 is not private: {dp_event!r}")
        return ApproxDPEvent(1.0 / dp_event.noise_multiplier, 0.0)
    if kind == "NoOpDpEvent":
        return GaussianEvent(math.inf)
    if kind == "PoissonSampledDpEvent":
        return SubsampledEvent(
            from_dp_accounting(dp_event.event), dp_event.sampling_probability, "poisson", Neighbouring.ADD_REMOVE
        )
    if kind == "SampledWithoutReplacementDpEvent":
        return SampledWithoutReplacementEvent(
            dp_event.source_dataset_size, dp_event.sample_size, from_dp_accounting(dp_event.event)
        )
    if kind == "SelfComposedDpEvent":
        return SelfComposedEvent(from_dp_accounting(dp_event.event), dp_event.count)
    if kind == "ComposedDpEvent":
        return ComposedEvent([from_dp_accounting(e) for e in dp_event.events])
    raise UnsupportedEventError(f"no privcal counterpart of the dp_accounting event {dp_event!r}")
