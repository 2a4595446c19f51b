"""from_dp_accounting: a dp_accounting DpEvent tree, priced by privcal, agrees with dp_accounting."""

import math

import pytest

import privcal
from privcal import from_dp_accounting

dpa = pytest.importorskip("dp_accounting")


def test_pipeline_converts_node_by_node():
    tree = dpa.ComposedDpEvent([
        dpa.SelfComposedDpEvent(dpa.PoissonSampledDpEvent(0.01, dpa.GaussianDpEvent(1.1)), 1000),
        dpa.SampledWithoutReplacementDpEvent(60_000, 256, dpa.GaussianDpEvent(2.0)),
        dpa.LaplaceDpEvent(0.5),
        dpa.NoOpDpEvent(),
    ])
    ours = from_dp_accounting(tree)
    assert ours == privcal.ComposedEvent([
        privcal.SelfComposedEvent(privcal.PoissonSampledEvent(0.01, privcal.GaussianEvent(1.1)), 1000),
        privcal.SampledWithoutReplacementEvent(60_000, 256, privcal.GaussianEvent(2.0)),
        privcal.LaplaceEvent(0.5),  # Laplace, scale 0.5, L1 sensitivity 1 (priced by the PLD accountant)
        privcal.GaussianEvent(math.inf),
    ])


def test_rdp_epsilon_of_a_converted_pipeline_matches_dp_accounting_at_the_same_orders():
    # independent implementation: dp_accounting's RdpAccountant on the same history and orders
    orders = [1.5, 2.0, 3.0, 4.0, 8.0, 16.0, 32.0, 64.0]
    tree = dpa.ComposedDpEvent([
        dpa.SelfComposedDpEvent(dpa.PoissonSampledDpEvent(0.01, dpa.GaussianDpEvent(1.1)), 1000),
        dpa.SelfComposedDpEvent(dpa.GaussianDpEvent(20.0), 10),
    ])
    ref = dpa.rdp.RdpAccountant(orders).compose(tree).get_epsilon(1e-5)
    ours = privcal.RDPAccountant(orders).compose(from_dp_accounting(tree)).get_epsilon(1e-5)
    assert ours == pytest.approx(ref, rel=1e-6)  # same formulas (MTZ 2019, Balle et al. 2020 Thm 21)


def test_unsupported_events_are_refused_not_guessed():
    with pytest.raises(privcal.UnsupportedEventError, match="no privcal counterpart"):
        from_dp_accounting(dpa.NonPrivateDpEvent())
    with pytest.raises(privcal.UnsupportedEventError):
        # no accountant prices a subsampled (epsilon, delta) event next to a Gaussian (PLD prices the plain pair)
        privcal.epsilon_of(privcal.ComposedEvent([privcal.GaussianEvent(1.0),
                                                  privcal.SubsampledEvent(privcal.ApproxDPEvent(0.1, 1e-7), 0.1)]), 1e-5)


def test_epsilon_of_best_is_the_exact_profile_when_it_applies():
    history = from_dp_accounting(dpa.ComposedDpEvent([dpa.GaussianDpEvent(2.0), dpa.GaussianDpEvent(2.0 / math.sqrt(3))]))
    # mu^2 = 1/4 + 3/4 = 1 (closed form): the exact profile at mu = 1
    assert privcal.epsilon_of(history, 1e-5) == pytest.approx(privcal.analysis.gaussian.epsilon_exact(1e-5, 1.0), rel=1e-12)
