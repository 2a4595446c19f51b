"""Events validate on construction and flatten correctly."""

import pytest

import privcal

from privcal.accounting.events import (
    ApproxDPEvent,
    ComposedEvent,
    GaussianEvent,
    GaussianProcessEvent,
    Neighbouring,
    PoissonSampledEvent,
    SampledWithoutReplacementEvent,
    SelfComposedEvent,
    SubsampledEvent,
    flatten,
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
    inner, n = unwrap(SelfComposedEvent(SelfComposedEvent(GaussianEvent(1.0), 3), 5), 2)
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
        (lambda: SelfComposedEvent(GaussianEvent(1.0), 0), "count"),
        (lambda: SelfComposedEvent(GaussianEvent(1.0), 2.5), "count"),
        (lambda: SelfComposedEvent("x", 2), "event"),
        (lambda: ComposedEvent([]), "events"),
        (lambda: ComposedEvent([GaussianEvent(1.0), "x"]), r"events\[1\]"),
        (lambda: SampledWithoutReplacementEvent(10, 11, GaussianEvent(1.0)), "sample_size"),
        (lambda: SubsampledEvent(GaussianEvent(1.0), 0.0), "sample_rate"),
        (lambda: SubsampledEvent(GaussianEvent(1.0), 1.5), "sample_rate"),
        (lambda: SubsampledEvent(GaussianEvent(1.0), 0.1, sampling="shuffle"), "sampling"),
    ],
)
def test_bad_events_rejected(make, name):
    with pytest.raises(ValueError, match=name):
        make()


def test_histories_flatten_in_order_with_counts_multiplied():
    a, b = GaussianEvent(1.0), GaussianEvent(2.0)
    history = SelfComposedEvent(ComposedEvent([a, SelfComposedEvent(b, 3)]), 2)
    assert flatten(history) == [(a, 2), (b, 6)]
    assert flatten(ComposedEvent([a]), 4) == [(a, 4)]


def test_former_composed_event_form_is_self_composition():
    with pytest.warns(DeprecationWarning, match="SelfComposedEvent"):
        e = ComposedEvent(GaussianEvent(1.0), 5)
    assert e == SelfComposedEvent(GaussianEvent(1.0), 5)


def test_dp_accounting_shaped_constructors_name_the_relation():
    # dp_accounting's argument orders; the relation is part of the event
    p = PoissonSampledEvent(0.01, GaussianEvent(1.0))
    assert p == SubsampledEvent(GaussianEvent(1.0), 0.01, "poisson", "add_remove")
    w = SampledWithoutReplacementEvent(60_000, 256, GaussianEvent(1.0))
    assert w.sample_rate == 256 / 60_000 and w.neighbouring is Neighbouring.REPLACE_ONE


def test_messages_name_events_as_the_user_wrote_them():
    # an unsupported event's error named the internal SubsampledEvent(...) the user never wrote
    event = privcal.SelfComposedEvent(privcal.PoissonSampledEvent(0.01, privcal.GaussianEvent(1.0)), 10)
    with pytest.raises(privcal.UnsupportedEventError) as err:
        privcal.epsilon_of(event, 1e-5, accountant="exact")
    assert "PoissonSampledEvent(0.01, GaussianEvent(1))" in str(err.value) and "SubsampledEvent(" not in str(err.value)
    from privcal.accounting.events import describe

    long = privcal.ComposedEvent([privcal.GaussianEvent(float(i + 1)) for i in range(10)])
    assert describe(long).endswith("... (7 more)])")
