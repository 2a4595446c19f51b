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
    ComposedEvent,
    Event,
    GaussianEvent,
    LaplaceEvent,
    Neighbouring,
    SampledWithoutReplacementEvent,
    SelfComposedEvent,
    SubsampledEvent,
)

__all__ = ["from_dp_accounting"]


def from_dp_accounting(dp_event: Any) -> Event:
    """The privcal event of a dp_accounting ``DpEvent`` (recursively).

    * ``GaussianDpEvent(noise_multiplier)`` -> :class:`GaussianEvent`;
    * ``LaplaceDpEvent(noise_multiplier)`` -> ``LaplaceEvent(scale=noise_multiplier)`` (L1 sensitivity 1),
      priced exactly by the PLD accountant (its privacy loss is bounded by 1/b: Dwork & Roth 2014,
      Thm 3.6, is the pure-DP end of that profile);
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
        return LaplaceEvent(dp_event.noise_multiplier)
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
