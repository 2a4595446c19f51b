"""The generic conservative root finder (search_sigma) and the accountants' own calibrations (sigma_for)."""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import privcal
from privcal.analysis import gaussian
from privcal.accounting.events import PoissonSampledEvent
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


def test_best_searches_with_the_tightest_valid_accountant_of_each_sigma():
    # plain Gaussian releases: "best" is the exact profile, so the closed form sigma = sqrt(T) / mu_exact holds
    # (Balle & Wang 2018); a Poisson history: "best" is never looser than RDP alone, and its answer is certified
    # by privcal.epsilon_of at the returned sigma
    closed = math.sqrt(50) / gaussian.mu_exact(1.0, 1e-5)
    assert search_sigma(_gauss(50), 1.0, 1e-5, "best") == pytest.approx(closed, rel=2e-9)
    sampled = lambda s: SelfComposedEvent(PoissonSampledEvent(0.01, GaussianEvent(s)), 1000)  # noqa: E731
    best = search_sigma(sampled, 1.0, 1e-5, "best", rtol=1e-6)
    assert privcal.epsilon_of(sampled(best), 1e-5) <= 1.0
    assert best <= search_sigma(sampled, 1.0, 1e-5, "rdp", rtol=1e-6)
    with pytest.raises(ValueError, match=r"accountant must be one of \('best', 'exact'"):
        search_sigma(sampled, 1.0, 1e-5, "bestest")


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

    def epsilon_unchecked(self, delta):
        type(self).calls += 1
        if type(self).calls > type(self).honest:
            return 2.0
        return 0.5 if self._sigma >= 1.0 else 2.0

    def delta_unchecked(self, epsilon):
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


@pytest.mark.filterwarnings("ignore::privcal.analysis.rdp.GridEdgeWarning")  # the 5-order grid alone warns
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


def _sparse_at(releases, delta=1e-5):
    """The RDP calibration's coarse phase pieces: every sixth default order, and epsilon on a sub-grid."""
    acc = RDPAccountant()
    sparse = np.unique(np.append(acc.orders[::6], acc.orders[-1]))
    seen = []

    def at(sub):
        seen.append(float(sub[-1]))
        return lambda s: acc._fresh(sub, False)._compose(releases.event(s))._epsilon_refined(delta)

    return sparse, at, seen


@pytest.mark.filterwarnings("ignore::privcal.analysis.rdp.GridEdgeWarning")  # a capped sub-grid's own edge
@pytest.mark.parametrize(
    "releases",
    [Releases.unchecked(2.0, 10_000, 1e-3, "without_replacement", "replace_one"),
     Releases(steps=1000, sample_rate=0.01), Releases(steps=50)],
)
def test_capped_coarse_epsilon_is_the_sparse_grids_and_skips_high_orders(releases):
    # The coarse phase evaluates the sparse orders up to a cap that doubles while the optimum sits at it: where
    # epsilon is unimodal in the order (here), that is exactly the minimum over all sparse orders (computed
    # directly on all of them), and at small sigmas (optimum at low orders) the orders above the cap are never
    # evaluated. Without the doubling (the first cap kept), sigma = 30 reads the orders <= 17 alone: larger.
    from privcal.accounting.accountants import CappedOrders

    sparse, at, seen = _sparse_at(releases)
    capped = CappedOrders(sparse, at)
    for sigma in (0.8, 1.2, 2.0, 4.0, 30.0):  # increasing: the cap only grows
        seen.clear()
        full = at(sparse)(sigma)[0]
        seen.clear()
        assert capped(sigma) == full
        if sigma <= 1.2:
            assert max(seen) < 100.0  # the orders up to 256 (their forward differences) were skipped
    assert capped.top > 17.0


@pytest.mark.filterwarnings("ignore::privcal.analysis.rdp.GridEdgeWarning")  # the optimum is below this grid
def test_capped_coarse_epsilon_on_a_grid_above_its_first_cap():
    # a grid whose smallest order is above the first cap (17): the cap starts at that order, not below the grid
    from privcal.accounting.accountants import CappedOrders

    acc = RDPAccountant(np.arange(20.0, 200.0, 2.0))
    releases = Releases(steps=100, sample_rate=0.01)
    at = lambda sub: lambda s: acc._fresh(sub, False)._compose(releases.event(s))._epsilon_refined(1e-5)  # noqa: E731
    assert CappedOrders(acc.orders, at)(1.0) == at(acc.orders)(1.0)[0]


@pytest.mark.parametrize("hint", [0.5, 0.99, 1.01, 3.0])
def test_search_first_step_changes_the_bracket_not_the_answer(hint):
    # a first bracketing step of 1.03 from a hint near the root gives the same smallest sigma (to rtol) as the
    # default 4x steps, in no more probes; from a far hint later steps grow to 4x and still bracket it
    from privcal.accounting import search as _search

    root = math.sqrt(50) / gaussian.mu_exact(1.0, 1e-5)  # closed form (Balle & Wang 2018), as above
    probes = []

    def eps_at(s):
        probes.append(s)
        return ExactAccountant().compose(_gauss(50)(s)).epsilon(1e-5)

    found = {}
    for step in (4.0, 1.03):
        probes.clear()
        found[step] = (_search.search(eps_at, 1.0, 1e-5, sigma_hint=hint * root, rtol=1e-9, step=step), len(probes))
        assert found[step][0] == pytest.approx(root, rel=2e-9)
        assert eps_at(found[step][0]) <= 1.0
    if 0.98 < hint < 1.02:
        assert found[1.03][1] <= found[4.0][1]


def test_rdp_calibration_where_its_epsilon_reaches_zero():
    # delta = 0.99, target 1e-300, 10^4 releases: at the coarse answer RDP's epsilon is 0, which made the refined
    # search start at sigma 0 (ZeroDivisionError); the answer must be a sigma RDP certifies
    releases = Releases(1.0, 10_000)
    sigma = RDPAccountant().sigma_for(releases, 1e-300, 0.99)
    assert 0 < sigma < math.inf
    assert RDPAccountant().compose(releases.event(sigma)).epsilon(0.99) <= 1e-300
