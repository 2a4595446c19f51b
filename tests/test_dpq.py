"""The end-to-end DP-Q-learning calibrator: valid (certified update clip, exact composition) and the paper's
(Wang & Hegde 2019, Thm 5 + Lemma 8 + App. E.3)."""

import math

import pytest

from privcal.analysis import composition, gaussian, rkhs
from privcal.calibrators import dpq
from privcal.errors import InfeasibleError

# Wang & Hegde 2019, App. E.3: T = 5000, B = 64, alpha = 3e-4, L = 4, J = floor(T/B) = 78, m = 2 actions
E3 = dict(samples=5000, batch_size=64, lr=3e-4, lipschitz=4.0, resets=78, actions=2)


@pytest.fixture(scope="module")
def valid():
    return dpq.calibrate(0.9, 1e-4, **E3)


def test_valid_known_value_at_e3(valid):
    # closed form (privcal.calibrators.dpq module docstring): every update restarts from the release, so each of
    # the U = 78 releases of each of m = 2 actions has sup <= 2c and slope <= 2l with c = 0.01, l = 0.02:
    # beta = l / c = 2, per release (1 + beta/2)(2c)^2 + (2l)^2/(2 beta) = 8e-4 + 4e-4 = 1.2e-3 = 4c^2 + 4cl,
    # total = 78 * 2 * 1.2e-3 = 0.1872; mu(0.9, 1e-4) = 0.285961 (exact Gaussian profile, Balle & Wang 2018);
    # sigma = sqrt(0.1872) / 0.285961 = 1.51303 (the former analysis, 2 j c and 2L: 124.32).
    assert valid.variant == "valid" and valid.update_clip == 0.01 and valid.update_lipschitz == 0.02
    assert valid.feasible and valid.beta == 2.0
    assert valid.sensitivity**2 * 78 == pytest.approx(0.1872, rel=1e-12)
    assert valid.sigma == pytest.approx(1.51303, rel=1e-5)
    assert math.isinf(valid.k) and valid.delta_tail == 0.0 and valid.delta_composition == 1e-4


def test_valid_answer_rechecked_independently(valid):
    # the per-release Lemma 6 bound (the same for every release), composed as one Gaussian mechanism
    total = 2 * 78 * rkhs.restarted_release_sensitivity_squared(0.01, 0.02, valid.beta)
    assert total == pytest.approx(valid.sensitivity**2 * 78, rel=1e-12)
    assert total == pytest.approx(2 * 78 * rkhs.sensitivity_squared_bound(0.02, 0.04, 2.0), rel=1e-12)
    mu = math.sqrt(total) / valid.sigma
    assert gaussian.delta_exact(0.9, mu) <= 1e-4 * (1 + 1e-9)
    assert gaussian.delta_exact(0.9, mu / 0.999) > 1e-4  # minimal: 0.1% less noise breaks the target


def test_valid_beta_minimises_the_release_sensitivity(valid):
    one = rkhs.restarted_release_sensitivity_squared(0.01, 0.02, valid.beta)
    assert one == pytest.approx(4 * 0.01**2 + 4 * 0.01 * 0.02, rel=1e-12)  # the minimum 4c^2 + 4cl
    assert rkhs.restarted_minimizing_beta(0.01, 0.02) == valid.beta
    for f in (0.9, 1.1):
        assert rkhs.restarted_release_sensitivity_squared(0.01, 0.02, valid.beta * f) > one


def test_valid_sensitivity_charges_the_slope_clip_not_2L():
    # the release sensitivity does not depend on L (the networks' own slope), only on the update's clips;
    # it grows with l (a weaker slope certificate costs noise)
    a = dpq.calibrate(2.0, 1e-5, **E3)
    assert dpq.calibrate(2.0, 1e-5, **{**E3, "lipschitz": 40.0}).sigma == a.sigma
    sig = [dpq.calibrate(2.0, 1e-5, update_lipschitz=ell, **E3).sigma for ell in (0.01, 0.02, 8.0)]
    assert sig[0] < sig[1] == a.sigma < sig[2]


def test_valid_depends_on_the_update_count_and_clip_not_on_lr_or_batch():
    a = dpq.calibrate(2.0, 1e-5, **E3)
    b = dpq.calibrate(2.0, 1e-5, **{**E3, "lr": 1.0, "samples": 78 * 32, "batch_size": 32})
    assert a.sigma == b.sigma
    sig = [dpq.calibrate(2.0, 1e-5, update_clip=c, **E3).sigma for c in (1e-3, 1e-2, 1e-1)]
    assert sig[0] < sig[1] < sig[2]


def test_valid_refuses_noise_reuse_naming_the_premise():
    with pytest.raises(ValueError, match=r"resets must equal .* = 78 .*'fresh noise for every release'"):
        dpq.calibrate(0.9, 1e-4, **{**E3, "resets": 39})
    with pytest.raises(ValueError, match="fresh noise for every release"):
        dpq.check(0.9, 1e-4, sigma=1.0, variant="valid", **{**E3, "resets": 1})
    dpq.calibrate(0.9, 1e-4, variant="paper", **{**E3, "resets": 39})  # the paper variant runs


def test_corrected_is_a_deprecated_alias_of_valid(valid):
    with pytest.warns(DeprecationWarning, match="use variant='valid'"):
        r = dpq.calibrate(0.9, 1e-4, variant="corrected", **E3)
    assert r == valid
    assert dpq.calibrate_unchecked(0.9, 1e-4, variant="corrected", **E3) == valid  # the kernel maps it silently


def test_check_valid(valid):
    ok = dpq.check(0.9, 1e-4, sigma=valid.sigma * (1 + 1e-9), variant="valid", **E3)
    assert ok.feasible and ok.beta == valid.beta
    low = dpq.check(0.9, 1e-4, sigma=valid.sigma * 0.99, variant="valid", **E3)
    assert not low.conditions["composition: exact epsilon <= target"] and not low.feasible
    with pytest.raises(ValueError, match="k is required"):
        dpq.check(0.9, 1e-4, sigma=0.3, **E3)


def test_valid_needs_more_noise_than_the_paper_claims(valid):
    # the paper's 0.313 against the valid end-to-end answer at c = 0.01, l = 0.02 (1.513, see the known value above)
    assert valid.sigma > 4 * 0.313


def test_paper_variant_solved_consistently():
    r = dpq.calibrate(0.9, 1e-4, variant="paper", **E3)
    assert r.feasible and r.k == int(r.k) and r.delta_composition == 5e-5
    # minimal integer k: k - 1 fails one of the paper's own conditions
    prev = dpq.check(0.9, 1e-4, sigma=dpq.paper_sigma_unchecked(0.9, 5e-5, r.k - 1, 5000, 64, 3e-4, 4.0), k=r.k - 1, **E3)
    assert not prev.feasible
    # its sigma is the statement-form closed form at that k
    c = rkhs.update_sensitivity_squared_paper(3e-4, r.k, 64, 4.0)
    assert r.sigma == pytest.approx(composition.thm5_sigma_statement_paper(0.9, 5e-5, steps=5000 / 64, c=c))


def test_monotone_in_epsilon():
    for variant in ("valid", "paper"):
        sig = [dpq.calibrate(e, 1e-4, variant=variant, **E3).sigma for e in (0.45, 0.9, 4.0)]
        assert sig[0] > sig[1] > sig[2]


def test_infeasible_names_the_binding_condition():
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
        (dict(update_clip=0), "update_clip"),
        (dict(update_lipschitz=-1.0), "update_lipschitz"),
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


@pytest.mark.parametrize("variant", ["valid", "paper"])
def test_calibrate_validates_each_argument_once(validations, variant):
    # 11 arguments (update_clip and update_lipschitz for the valid variant only), samples and batch_size
    # checked together (one rule calling positive_int twice): 12 (valid), 10 (paper).
    # Re-validating every candidate k in rkhs/supremum/gaussian instead of the trusted kernels: 121 and 39 calls.
    dpq.calibrate(0.9, 1e-4, variant=variant, **E3)
    assert 1 <= validations["n"] <= (12 if variant == "valid" else 10)


def test_check_validates_each_argument_once(validations):
    dpq.check(0.9, 1e-4, sigma=0.313, k=23, **E3)
    assert 1 <= validations["n"] <= 12  # calibrate's 10 (no update_clip for paper), plus sigma and k


def test_valid_sigma_is_the_exact_accountants(monkeypatch):
    # the valid composition is calibrated by ExactAccountant's own method, not by a second path
    from privcal.accounting.accountants import ExactAccountant

    seen = []
    original = ExactAccountant.sigma_for_unchecked

    def spy(self, releases, epsilon, delta, **kw):
        seen.append(original(self, releases, epsilon, delta, **kw))
        return seen[-1]

    monkeypatch.setattr(ExactAccountant, "sigma_for_unchecked", spy)
    r = dpq.calibrate(0.9, 1e-4, **E3)
    assert seen and r.sigma == seen[-1]


def test_both_paper_calibrators_answer_calibrate_report_with_a_report():
    """One name, one kind of answer: sigma, the accountant that priced it, epsilon, delta."""
    from privcal.calibrators import gpope

    d = dpq.calibrate_report(0.9, 1e-4, **E3)
    g = gpope.calibrate_report(0.9, 1e-4, iterations=1000, trajectories=100)
    for report in (d, g):
        assert report.sigma > 0 and report.epsilon == 0.9 and report.delta == 1e-4
        assert hasattr(report, "accountant") and hasattr(report, "notes")
    assert d == dpq.calibrate(0.9, 1e-4, **E3)


def test_calibrate_unchecked_and_check_target_are_calibrate():
    # train_dpq validates the target with check_target, then calls calibrate_unchecked: the
    # same calibration as the checked calibrate (independent: calibrate itself), the same messages
    kw = dict(samples=640, batch_size=64, lr=3e-4, lipschitz=4.0, resets=10, actions=2)
    assert dpq.calibrate_unchecked(0.9, 1e-4, **kw) == dpq.calibrate(0.9, 1e-4, **kw)
    assert dpq.check_target(1, 1e-4) == (1.0, 1e-4)
    for bad, name in (((0.0, 1e-4), "epsilon"), ((2e6, 1e-4), "epsilon"), ((1.0, 1.0), "delta")):
        with pytest.raises(ValueError, match=f"^{name} must") as e1:
            dpq.check_target(*bad)
        with pytest.raises(ValueError) as e2:
            dpq.calibrate(*bad, **kw)
        assert str(e1.value) == str(e2.value)


# ---------------------------------------------------------------------------------------------------
# the settings object of calibrate, calibrate_unchecked and check


def test_calibration_settings_give_the_keyword_calls_answer():
    # one CalibrationSettings for calibrate, calibrate_unchecked and check: a settings object gives the keyword
    # call's answer (independent: the keyword call itself), keywords replace its fields, the learner's defaults
    # are LearnerShape's (it is one), and check's keywords default to the paper variant (CHECK_VARIANT)
    s = dpq.CalibrationSettings(**E3)
    assert isinstance(s, dpq.LearnerShape) and s.update_clip == dpq.DEFAULT_UPDATE_CLIP and s.variant == "valid"
    assert dpq.calibrate(0.9, 1e-4, s) == dpq.calibrate(0.9, 1e-4, **E3)
    assert dpq.calibrate(0.9, 1e-4, s, update_clip=0.02) == dpq.calibrate(0.9, 1e-4, update_clip=0.02, **E3)
    assert dpq.calibrate_unchecked(0.9, 1e-4, s, variant="paper") == dpq.calibrate(0.9, 1e-4, variant="paper", **E3)
    by_keywords = dpq.check(0.9, 1e-4, sigma=0.313, k=23, **E3)
    assert by_keywords.variant == dpq.CHECK_VARIANT == "paper"
    assert dpq.check(0.9, 1e-4, s, sigma=0.313, k=23, variant="paper") == by_keywords
    assert dpq.check(0.9, 1e-4, s, sigma=2.0).variant == "valid"  # the settings object's variant


@pytest.mark.parametrize("call, message", [
    (lambda: dpq.calibrate(0.9, 1e-4, sample=5000, **E3), "calibrate() got an unexpected keyword argument 'sample'"),
    (lambda: dpq.calibrate(0.9, 1e-4), "calibrate() missing 5 required keyword-only arguments: 'samples', "
                                       "'batch_size', 'lr', 'lipschitz', and 'resets'"),
    (lambda: dpq.check(0.9, 1e-4, sigma=1.0, samples=5000, batch_size=64, lr=3e-4, lipschitz=4.0),
     "check() missing 1 required keyword-only argument: 'resets'"),
    (lambda: dpq.calibrate_unchecked(0.9, 1e-4, samples=5000, batch_size=64, lr=3e-4, resets=78),
     "calibrate_unchecked() missing 1 required keyword-only argument: 'lipschitz'"),
    (lambda: dpq.calibrate(0.9, 1e-4, {"samples": 5000}), "calibrate() settings must be a CalibrationSettings"),
])
def test_calibration_keywords_are_refused_as_python_refuses_them(call, message):
    # the messages Python gives a function with these keyword-only parameters (and a settings of another type)
    with pytest.raises(TypeError) as info:
        call()
    assert str(info.value).startswith(message)
