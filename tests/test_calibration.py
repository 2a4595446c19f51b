"""The generic conservative root finder (search_sigma) and the accountants' own calibrations (sigma_for)."""

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from privcal import gaussian
from privcal.accounting.accountants import Accountant, ExactAccountant, RDPAccountant
from privcal.accounting.calibration import search_sigma
from privcal.accounting.events import ApproxDPEvent, GaussianEvent, Releases, SelfComposedEvent, SubsampledEvent
from privcal.errors import CalibrationError, InfeasibleError


def _gauss(steps):
    return lambda s: SelfComposedEvent(GaussianEvent(s), steps)


@given(eps=st.floats(0.05, 20.0), steps=st.integers(1, 500), delta=st.sampled_from([1e-3, 1e-6, 1e-10]))
def test_generic_search_matches_closed_form(eps, steps, delta):
    # closed form: T Gaussian releases = one Gaussian with mu = sqrt(T)/sigma, so
    # sigma = sqrt(T) / mu_exact(eps, delta) (Balle & Wang 2018; Dong, Roth & Su 2019)
    closed = math.sqrt(steps) / gaussian.mu_exact(eps, delta)
    found = search_sigma(_gauss(steps), eps, delta, "exact", rtol=1e-9)
    assert found == pytest.approx(closed, rel=2e-9)
    assert ExactAccountant().compose(_gauss(steps)(found)).epsilon(delta) <= eps


@pytest.mark.parametrize("hint", [1e-6, 1.0, 1e6])
def test_result_is_feasible_and_minimal_whatever_the_hint(hint):
    rtol = 1e-8
    s = search_sigma(_gauss(50), 1.0, 1e-5, "rdp", sigma_hint=hint, rtol=rtol)
    eps = lambda x: RDPAccountant().compose(_gauss(50)(x)).epsilon(1e-5)  # noqa: E731
    assert eps(s) <= 1.0
    assert eps(s * (1 - 2 * rtol)) > 1.0


def test_infeasible_target_raises_with_reason():
    # every sigma gives the same (1/sigma, 1e-3)-DP steps; 50 of them cannot reach delta = 1e-5
    # because 1 - (1 - 1e-3)^50 > 1e-5 (KOV Thm 3.3)
    with pytest.raises(InfeasibleError, match="no sigma"):
        search_sigma(lambda s: SelfComposedEvent(ApproxDPEvent(1.0 / s, 1e-3), 50), 1.0, 1e-5, "kov")


class _Liar(Accountant):
    """A step accountant (epsilon 0.5 for sigma >= 1, else 2) that turns infeasible after ``honest``
    answers: it lets a test make the calibrator's *final* check see a different answer."""

    name = "liar"
    calls = 0
    honest = math.inf

    def _supports_leaf(self, event):
        return True

    def _add(self, event, count):
        self._sigma = event.noise_multiplier

    def _epsilon(self, delta):
        type(self).calls += 1
        if type(self).calls > type(self).honest:
            return 2.0
        return 0.5 if self._sigma >= 1.0 else 2.0

    def _delta(self, epsilon):
        return 0.0


def test_final_check_catches_an_accountant_that_changes_its_answer():
    _Liar.calls, _Liar.honest = 0, math.inf
    assert search_sigma(_gauss(1), 1.0, 1e-5, _Liar, sigma_hint=3.0) == pytest.approx(1.0, rel=1e-9)
    _Liar.calls, _Liar.honest = 0, _Liar.calls - 1  # the last call of the same run is the final check
    with pytest.raises(CalibrationError, match="check failed"):
        search_sigma(_gauss(1), 1.0, 1e-5, _Liar, sigma_hint=3.0)


@pytest.mark.parametrize(
    "kwargs,name",
    [
        (dict(target_epsilon=0.0), "target_epsilon"),
        (dict(target_delta=1.0), "target_delta"),
        (dict(accountant="nope"), "accountant"),
        (dict(sigma_hint=-1.0), "sigma_hint"),
    ],
)
def test_bad_input(kwargs, name):
    args = dict(make_event=_gauss(1), target_epsilon=1.0, target_delta=1e-5)
    args.update(kwargs)
    with pytest.raises(ValueError, match=name):
        search_sigma(**args)


@given(
    q=st.sampled_from([1e-3, 0.01, 0.1]),
    steps=st.sampled_from([10, 1000, 10_000]),
    eps=st.sampled_from([0.3, 1.0, 8.0]),
    hint=st.sampled_from([0.05, 1.0, 50.0]),
    sampling=st.sampled_from(["poisson", "without_replacement"]),
)
def test_windowed_rdp_search_matches_full_grid_search(q, steps, eps, hint, sampling):
    # RDPAccountant.sigma_for searches on a window of orders: it must land on the full-grid answer of
    # the generic search (to its tolerance) and stay feasible
    relation = "replace_one" if sampling == "without_replacement" else "add_remove"
    releases = Releases(steps=steps, sample_rate=q, sampling=sampling, neighbouring=relation)
    fast = RDPAccountant().sigma_for(releases, eps, 1e-5, sigma_hint=hint, rtol=1e-9)
    slow = search_sigma(releases.event, eps, 1e-5, RDPAccountant, sigma_hint=hint, rtol=1e-9)
    assert RDPAccountant().compose(releases.event(fast)).epsilon(1e-5) <= eps
    assert fast == pytest.approx(slow, rel=1e-8)


@pytest.mark.filterwarnings("ignore::privcal.rdp.GridEdgeWarning")  # the 5-order grid alone warns
def test_windowed_rdp_search_falls_back_to_the_full_grid_when_the_window_misses():
    # The window is centred on the optimal order at the coarse sigma; if the optimal order at the
    # windowed answer lies outside it (or on its edge), the window's root is only an upper bound (its
    # minimum is over fewer orders) and the full-grid search must decide. A window that misses the
    # optimum on purpose (the five largest orders) must still give the full-grid answer; without the
    # fallback it returns the window's root, about 1.5x larger here.
    releases = Releases(steps=10_000, sample_rate=0.01)
    calls = []

    class Misplaced(RDPAccountant):
        def _around(self, order, position, **kwargs):
            calls.append(order)
            return self.orders[-5:]

    slow = search_sigma(releases.event, 1.0, 1e-5, RDPAccountant, rtol=1e-9)
    window_only = search_sigma(releases.event, 1.0, 1e-5, lambda: RDPAccountant(RDPAccountant().orders[-5:]))
    assert window_only > 1.1 * slow  # the misplaced window alone would be far off
    assert Misplaced().sigma_for(releases, 1.0, 1e-5, rtol=1e-9) == pytest.approx(slow, rel=1e-8)
    assert calls  # the misplaced window was searched on
