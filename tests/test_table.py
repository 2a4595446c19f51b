"""The comparison table behind `privcal table`."""

import math

import pytest

from privcal import composition, rkhs
from privcal.table import dpq_table, gaussian_table


@pytest.fixture(scope="module")
def e3():
    # Wang & Hegde 2019, App. E.3: T = 5000, B = 64, alpha = 3e-4, k = 23, L = 4; the paper splits
    # delta = 1e-4 into 5e-5 for composition and 5e-5 for the sup-bound failure term.
    return dpq_table([0.45, 0.9, 4.0], 5e-5)


def test_statement_form_reproduces_paper_sigma(e3):
    # App. E.3 reports sigma ~= 0.313 at eps = 0.9 (and uses sigma = 0.32 in the experiments)
    row = [r for r in e3.rows if r.epsilon == 0.9][0]
    assert row.sigmas["thm5_statement"] == pytest.approx(0.313, abs=5e-4)


def test_statement_form_is_far_from_sufficient(e3):
    # C outside the square root: sigma is ~ sqrt(C) = 0.085 times the dimensionally consistent value
    for row in e3.rows:
        assert "thm5_statement" in row.insufficient
        assert row.ratios["thm5_statement"] < 0.2


def test_valid_columns_never_below_exact(e3):
    for row in e3.rows:
        for key in ("kov", "rdp"):
            assert row.sigmas[key] >= row.sigmas["exact"] * (1 - 1e-9)


def test_insufficient_flags_agree_with_exact_profile(e3):
    # independent re-check: the exact epsilon of floor(T/B) = 78 updates at the paper's D = sqrt(C)
    d = math.sqrt(e3.parameters["C"])
    for row in e3.rows:
        assert set(row.reference_epsilons) == {"thm5_proof", "thm5_statement", "kov_quoted"}
        for key, eps_at_sigma in row.reference_epsilons.items():
            exact = composition.epsilon_composed_exact(row.sigmas[key], row.delta, steps=78, sensitivity=d)
            assert eps_at_sigma == pytest.approx(exact, rel=1e-12)
            assert (key in row.insufficient) == (exact > row.epsilon)


def test_parameters_follow_thm5(e3):
    p = e3.parameters
    # v = 4 alpha (k+1)/B = 4 * 3e-4 * 24 / 64 = 4.5e-4 (the paper's text says 6.19e-5)
    assert p["v"] == pytest.approx(4.5e-4, rel=1e-12)
    assert p["C"] == pytest.approx(rkhs.update_sensitivity_squared_paper(3e-4, 23, 64, 4.0), rel=1e-15)
    assert p["updates"] == 78 and p["T_over_B"] == pytest.approx(78.125)


def test_exact_column_uses_updates():
    tab = dpq_table([1.0], 1e-5)
    p = tab.parameters
    want = composition.sigma_composed_exact(1.0, 1e-5, steps=78, sensitivity=math.sqrt(p["C"]))
    assert tab.rows[0].sigmas["exact"] == pytest.approx(want, rel=1e-12)


def test_gaussian_table_columns():
    tab = gaussian_table([0.5, 2.0], 1e-6, steps=10, sensitivity=2.0)
    assert [c.key for c in tab.columns] == ["exact", "thm5_proof", "kov_quoted", "kov", "rdp"]
    d = tab.as_dict()
    assert d["setting"] == "gaussian" and len(d["rows"]) == 2


@pytest.mark.parametrize(
    "kwargs,name",
    [
        (dict(epsilons=[]), "epsilons"),
        (dict(epsilons=[1.0, -2.0]), "epsilon"),
        (dict(delta=0.0), "delta"),
        (dict(batch_size=0), "batch_size"),
        (dict(batch_size=10000), "batch_size"),
        (dict(lr=-1.0), "lr"),
        (dict(k=0), "k"),
    ],
)
def test_bad_input(kwargs, name):
    with pytest.raises(ValueError, match=name):
        dpq_table(**kwargs)


def test_valid_sensitivity_column(e3):
    # closed form: the exact sigma scales with D, so the ratio is sqrt((v^2 + 5v/2)/(v^2 + v)) at
    # v = 4.5e-4 (valid D from Lip(Q - Q') <= 2L, tests/test_rkhs.py has the counterexample)
    v = 4.5e-4
    for row in e3.rows:
        assert row.ratios["exact_valid_d"] == pytest.approx(math.sqrt((v * v + 2.5 * v) / (v * v + v)), rel=1e-9)
        # the proof closed form (ratio <= 1.5 here) lies below the valid-D exact sigma
        assert "thm5_proof" in row.below_valid_sensitivity
        # the quoted KOV bound (3.8-4.4x the exact sigma here) stays above the valid-D floor (1.58x)
        assert "kov_quoted" not in row.below_valid_sensitivity


def test_end_to_end_columns_come_from_the_dpq_calibrator(e3):
    from privcal import dpq

    row = [r for r in e3.rows if r.epsilon == 0.9][0]
    r = dpq.calibrate(0.9, 5e-5, samples=5000, batch_size=64, lr=3e-4, lipschitz=4.0, resets=78, actions=2)
    assert row.sigmas["e2e_valid"] == r.sigma and row.details["e2e_valid"]["k"] == r.k
    assert row.details["e2e_paper"]["k"] == int(row.details["e2e_paper"]["k"])


# ---------------------------------------------------------------------------------------------------
# one validation per argument, every accountant column from the accountant's own calibration


def test_dpq_table_validates_once(validations):
    # one epsilon, delta, samples + batch_size (one rule, 3 calls), lr, k, lipschitz, actions: 9, the
    # end-to-end columns included (before the kernels: ~250 per epsilon)
    dpq_table([0.9], 5e-5)
    assert 1 <= validations["n"] <= 9


def test_gaussian_table_validates_once(validations):
    gaussian_table([0.5, 2.0], 1e-6, steps=10, sensitivity=2.0)
    assert 1 <= validations["n"] <= 5  # two epsilons, delta, steps, sensitivity


def test_accountant_columns_come_from_sigma_for(monkeypatch):
    # exact, KOV and RDP columns are each accountant's _sigma_for (the exact one: both sensitivities)
    from privcal.accounting import accountants

    seen = {}
    for cls in (accountants.ExactAccountant, accountants.KOVAccountant, accountants.RDPAccountant):
        def spy(self, releases, epsilon, delta, _original=cls._sigma_for, **kw):
            value = _original(self, releases, epsilon, delta, **kw)
            seen.setdefault(type(self).name, []).append(value)
            return value
        monkeypatch.setattr(cls, "_sigma_for", spy)
    row = gaussian_table([0.5], 1e-6, steps=10, sensitivity=2.0).rows[0]
    assert seen == {"exact": [row.sigmas["exact"]], "kov": [row.sigmas["kov"]], "rdp": [row.sigmas["rdp"]]}
    seen.clear()
    row = dpq_table([0.9], 5e-5, end_to_end=False).rows[0]
    assert seen["exact"] == [row.sigmas["exact"], row.sigmas["exact_valid_d"]]
