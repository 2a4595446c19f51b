"""The generic conservative calibrator."""

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from privcal import gaussian
from privcal.accountants import Accountant, ExactAccountant
from privcal.calibration import calibrate_sigma
from privcal.errors import CalibrationError, InfeasibleError
from privcal.events import ApproxDPEvent, ComposedEvent, GaussianEvent


def _gauss(steps):
    return lambda s: ComposedEvent(GaussianEvent(s), steps)


@given(eps=st.floats(0.05, 20.0), steps=st.integers(1, 500), delta=st.sampled_from([1e-3, 1e-6, 1e-10]))
def test_generic_search_matches_closed_form(eps, steps, delta):
    # closed form: T Gaussian releases = one Gaussian with mu = sqrt(T)/sigma, so
    # sigma = sqrt(T) / mu_exact(eps, delta) (Balle & Wang 2018; Dong, Roth & Su 2019)
    closed = math.sqrt(steps) / gaussian.mu_exact(eps, delta)
    found = calibrate_sigma(_gauss(steps), eps, delta, "exact", rtol=1e-9)
    assert found == pytest.approx(closed, rel=2e-9)
    assert ExactAccountant().compose(_gauss(steps)(found)).epsilon(delta) <= eps


@pytest.mark.parametrize("hint", [1e-6, 1.0, 1e6])
def test_result_is_feasible_and_minimal_whatever_the_hint(hint):
    rtol = 1e-8
    s = calibrate_sigma(_gauss(50), 1.0, 1e-5, "rdp", sigma_hint=hint, rtol=rtol)
    eps = lambda x: __import__("privcal").accountants.RDPAccountant().compose(_gauss(50)(x)).epsilon(1e-5)  # noqa: E731
    assert eps(s) <= 1.0
    assert eps(s * (1 - 2 * rtol)) > 1.0


def test_infeasible_target_raises_with_reason():
    # every sigma gives the same (1/sigma, 1e-3)-DP steps; 50 of them cannot reach delta = 1e-5
    # because 1 - (1 - 1e-3)^50 > 1e-5 (KOV Thm 3.3)
    with pytest.raises(InfeasibleError, match="no sigma"):
        calibrate_sigma(lambda s: ComposedEvent(ApproxDPEvent(1.0 / s, 1e-3), 50), 1.0, 1e-5, "kov")


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

    def epsilon(self, delta):
        type(self).calls += 1
        if type(self).calls > type(self).honest:
            return 2.0
        return 0.5 if self._sigma >= 1.0 else 2.0

    def delta(self, epsilon):
        return 0.0


def test_final_check_catches_an_accountant_that_changes_its_answer():
    _Liar.calls, _Liar.honest = 0, math.inf
    assert calibrate_sigma(_gauss(1), 1.0, 1e-5, _Liar, sigma_hint=3.0) == pytest.approx(1.0, rel=1e-9)
    _Liar.calls, _Liar.honest = 0, _Liar.calls - 1  # the last call of the same run is the final check
    with pytest.raises(CalibrationError, match="check failed"):
        calibrate_sigma(_gauss(1), 1.0, 1e-5, _Liar, sigma_hint=3.0)


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
        calibrate_sigma(**args)


@given(
    q=st.sampled_from([1e-3, 0.01, 0.1]),
    steps=st.sampled_from([10, 1000, 10_000]),
    eps=st.sampled_from([0.3, 1.0, 8.0]),
    hint=st.sampled_from([0.05, 1.0, 50.0]),
)
def test_windowed_rdp_search_matches_full_grid_search(q, steps, eps, hint):
    # the order-window search must land on the full-grid answer (to its tolerance) and stay feasible
    from privcal.accountants import RDPAccountant
    from privcal.calibration import calibrate_sigma_rdp
    from privcal.events import SubsampledEvent

    def make(s):
        return ComposedEvent(SubsampledEvent(GaussianEvent(s), q), steps)

    fast = calibrate_sigma_rdp(make, eps, 1e-5, RDPAccountant, sigma_hint=hint, rtol=1e-9)
    slow = calibrate_sigma(make, eps, 1e-5, RDPAccountant, sigma_hint=hint, rtol=1e-9)
    assert RDPAccountant().compose(make(fast)).epsilon(1e-5) <= eps
    assert fast == pytest.approx(slow, rel=1e-8)
