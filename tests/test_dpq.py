"""The end-to-end DP-Q-learning calibrator (Wang & Hegde 2019, Thm 5 + Lemma 8 + App. E.3)."""

import math

import pytest

from privcal import composition, dpq, rkhs, supremum
from privcal.errors import InfeasibleError

# Wang & Hegde 2019, App. E.3: T = 5000, B = 64, alpha = 3e-4, L = 4, J = floor(T/B) = 78, m = 2 actions
E3 = dict(samples=5000, batch_size=64, lr=3e-4, lipschitz=4.0, resets=78, actions=2)


@pytest.fixture(scope="module")
def corrected():
    return dpq.calibrate(0.9, 1e-4, **E3)


def test_paper_e3_parameters_violate_their_own_condition():
    # App. E.3: k = 23, sigma ~= 0.313 (they ran sigma = 0.32). beta = 1/v = 64/(4*3e-4*24) = 2222.2, so
    # 8.68 sqrt(beta) sigma = 8.68 * 47.14 * 0.313 = 128.1 > 2k = 46.
    for sigma in (0.313, 0.32):
        r = dpq.check(0.9, 1e-4, sigma=sigma, k=23, **E3)
        assert r.beta == pytest.approx(2222.22, rel=1e-5)
        assert not r.conditions["Thm 5: 2k > 8.68 sqrt(beta) sigma"]
        assert not r.feasible


def test_corrected_answer_meets_every_condition(corrected):
    r = corrected
    assert r.feasible and all(r.conditions.values()) and r.variant == "corrected"
    # independent re-check with the library functions
    d = math.sqrt(rkhs.update_sensitivity_squared(3e-4, r.k, 64, 4.0, beta=r.beta))
    assert d == pytest.approx(r.sensitivity, rel=1e-12)
    assert composition.epsilon_composed_exact(r.sigma, r.delta_composition, steps=78, sensitivity=d) <= 0.9
    assert r.k > supremum.LEMMA8_CONSTANT * math.sqrt(r.beta) * r.sigma
    tail = supremum.thm5_failure(r.k, r.beta, r.sigma, 78, actions=2)
    assert tail == pytest.approx(r.delta_tail, rel=1e-12)
    assert r.delta_composition + r.delta_tail <= 1e-4


def test_corrected_is_at_the_tail_boundary(corrected):
    # a smaller k (same beta, sigma recomputed for it) breaks the tail budget: k is (near) minimal
    r = corrected
    smaller = r.k * 0.97
    beta = r.beta * rkhs.v_parameter(3e-4, r.k, 64) / rkhs.v_parameter(3e-4, smaller, 64)
    d = math.sqrt(rkhs.update_sensitivity_squared(3e-4, smaller, 64, 4.0, beta=beta))
    sigma = composition.sigma_composed_exact(0.9, r.delta_composition, steps=78, sensitivity=d)
    tail = supremum.thm5_failure(smaller, beta, sigma, 78, actions=2) if supremum.thm5_condition(smaller, beta, sigma) else 1.0
    assert r.delta_composition + tail > 1e-4


def test_corrected_needs_far_more_noise_than_the_paper_claims(corrected):
    # the paper's 0.313 against the valid end-to-end answer (pinned loosely: > 50x)
    assert corrected.sigma > 50 * 0.313


def test_paper_variant_solved_consistently():
    r = dpq.calibrate(0.9, 1e-4, variant="paper", **E3)
    assert r.feasible and r.k == int(r.k) and r.delta_composition == 5e-5
    # minimal integer k: k - 1 fails one of the paper's own conditions
    prev = dpq.check(0.9, 1e-4, sigma=dpq._paper_sigma(0.9, 5e-5, r.k - 1, 5000, 64, 3e-4, 4.0), k=r.k - 1, **E3)
    assert not prev.feasible
    # its sigma is the statement-form closed form at that k
    c = rkhs.update_sensitivity_squared_paper(3e-4, r.k, 64, 4.0)
    assert r.sigma == pytest.approx(composition.thm5_sigma_statement_paper(0.9, 5e-5, steps=5000 / 64, c=c))


def test_monotone_in_epsilon():
    sig = [dpq.calibrate(e, 1e-4, **E3).sigma for e in (0.45, 0.9, 4.0)]
    assert sig[0] > sig[1] > sig[2]


def test_infeasible_names_the_binding_condition():
    with pytest.raises(InfeasibleError, match="k > c"):
        dpq.calibrate(0.01, 1e-6, **E3)
    with pytest.raises(InfeasibleError, match="2k > 8.68"):
        dpq.calibrate(0.01, 1e-6, variant="paper", **E3)


@pytest.mark.parametrize(
    "kwargs,name",
    [
        (dict(epsilon=0), "epsilon"),
        (dict(delta=1.0), "delta"),
        (dict(samples=0), "samples"),
        (dict(batch_size=10**6), "batch_size"),
        (dict(lr=0), "lr"),
        (dict(lipschitz=-1), "lipschitz"),
        (dict(resets=0), "resets"),
        (dict(actions=0), "actions"),
        (dict(variant="loose"), "variant"),
    ],
)
def test_bad_input(kwargs, name):
    args = dict(epsilon=0.9, delta=1e-4, **E3)
    args.update(kwargs)
    eps, delta = args.pop("epsilon"), args.pop("delta")
    with pytest.raises(ValueError, match=name):
        dpq.calibrate(eps, delta, **args)


# ---------------------------------------------------------------------------------------------------
# one validation per argument, one owner of the exact calibration


@pytest.mark.parametrize("variant", ["corrected", "paper"])
def test_calibrate_validates_each_argument_once(validations, variant):
    # 9 arguments, samples and batch_size checked together (one rule calling positive_int twice): 10.
    # Before the kernels, every candidate k re-validated in rkhs/supremum/gaussian (121 and 39 calls).
    dpq.calibrate(0.9, 1e-4, variant=variant, **E3)
    assert 1 <= validations["n"] <= 10


def test_check_validates_each_argument_once(validations):
    dpq.check(0.9, 1e-4, sigma=0.313, k=23, **E3)
    assert 1 <= validations["n"] <= 12  # calibrate's 10, plus sigma and k


def test_corrected_sigma_is_the_exact_accountants(monkeypatch):
    # the corrected composition is calibrated by ExactAccountant's own method, not by a second path
    from privcal.accounting.accountants import ExactAccountant

    seen = []
    original = ExactAccountant._sigma_for

    def spy(self, releases, epsilon, delta, **kw):
        seen.append(original(self, releases, epsilon, delta, **kw))
        return seen[-1]

    monkeypatch.setattr(ExactAccountant, "_sigma_for", spy)
    r = dpq.calibrate(0.9, 1e-4, **E3)
    assert seen and r.sigma == seen[-1]
