"""Bridges to other libraries' event descriptions: check a dp_accounting pipeline with privcal in one line.

``from_dp_accounting(dp_event)`` converts a Google ``dp_accounting`` ``DpEvent`` tree into privcal's events.
dp_accounting is not imported here (it stays an optional extra): events are recognised by their class
name and read through their public attributes, as documented in ``dp_accounting/dp_event.py``.
"""

from __future__ import annotations

import math
from typing import Any, Optional, Union

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
    relation_of,
)

__all__ = ["from_dp_accounting"]


def from_dp_accounting(dp_event: Any, neighbouring: Optional[Union[Neighbouring, str]] = None) -> Event:
    """The privcal event of a dp_accounting ``DpEvent`` (recursively).

    dp_accounting states the neighbouring relation on its accountant, not on its events; privcal states it on
    the history (``ComposedEvent.relation``): ``neighbouring`` is the relation of the whole converted history
    (default None: the one its sampled events imply; a history mixing Poisson and without-replacement
    sampling is priced under add/remove, each without-replacement release converted by a proven pair,
    ``privcal.accounting.relations``). A relation under which some release has no proven pair is refused.

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
        neighbouring: the relation of the whole history ("add_remove", "replace_one", "zero_out" or a
            :class:`Neighbouring`); default None (implied by its sampled events).

    Raises:
        UnsupportedEventError: an event with no privcal counterpart (e.g. ``NonPrivateDpEvent``,
            ``UnsupportedDpEvent``, or a sampled event under another neighbouring relation), or a history
            with no proven pair under the one relation asked.
    """
    event = _convert(dp_event)
    if neighbouring is None:
        relation_of(event)  # refuses a history with no one relation
        return event
    return ComposedEvent([event], neighbouring)


def _convert(dp_event: Any) -> Event:
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
            _convert(dp_event.event), dp_event.sampling_probability, "poisson", Neighbouring.ADD_REMOVE
        )
    if kind == "SampledWithoutReplacementDpEvent":
        return SampledWithoutReplacementEvent(
            dp_event.source_dataset_size, dp_event.sample_size, _convert(dp_event.event)
        )
    if kind == "SelfComposedDpEvent":
        return SelfComposedEvent(_convert(dp_event.event), dp_event.count)
    if kind == "ComposedDpEvent":
        return ComposedEvent([_convert(e) for e in dp_event.events])
    raise UnsupportedEventError(f"no privcal counterpart of the dp_accounting event {dp_event!r}")
