"""Events validate on construction and flatten correctly."""

import pytest

from privcal.events import (
    ApproxDPEvent,
    ComposedEvent,
    GaussianEvent,
    GaussianProcessEvent,
    SubsampledEvent,
    unwrap,
)


def test_gp_event_noise_multiplier_and_mu():
    e = GaussianProcessEvent(sigma=3.0, rkhs_sensitivity=1.5)
    assert e.noise_multiplier == 2.0 and e.mu == 0.5


def test_events_are_frozen_and_hashable():
    e = GaussianEvent(2.0)
    with pytest.raises(AttributeError):
        e.noise_multiplier = 3.0
    assert {e, GaussianEvent(2.0)} == {e}


def test_unwrap_multiplies_counts():
    inner, n = unwrap(ComposedEvent(ComposedEvent(GaussianEvent(1.0), 3), 5), 2)
    assert inner == GaussianEvent(1.0) and n == 30


@pytest.mark.parametrize(
    "make,name",
    [
        (lambda: GaussianEvent(0.0), "noise_multiplier"),
        (lambda: GaussianEvent(-1.0), "noise_multiplier"),
        (lambda: GaussianProcessEvent(0.0, 1.0), "sigma"),
        (lambda: GaussianProcessEvent(1.0, -2.0), "rkhs_sensitivity"),
        (lambda: ApproxDPEvent(-0.1, 1e-5), "epsilon"),
        (lambda: ApproxDPEvent(1.0, 1.5), "delta"),
        (lambda: ComposedEvent(GaussianEvent(1.0), 0), "count"),
        (lambda: ComposedEvent(GaussianEvent(1.0), 2.5), "count"),
        (lambda: ComposedEvent("x", 2), "event"),
        (lambda: SubsampledEvent(GaussianEvent(1.0), 0.0), "sample_rate"),
        (lambda: SubsampledEvent(GaussianEvent(1.0), 1.5), "sample_rate"),
        (lambda: SubsampledEvent(GaussianEvent(1.0), 0.1, sampling="shuffle"), "sampling"),
    ],
)
def test_bad_events_rejected(make, name):
    with pytest.raises(ValueError, match=name):
        make()
