"""Tests of privcal.analysis.noise: exact lazily extended Ornstein-Uhlenbeck paths and their conditional laws.

Statistical tests use fixed seeds. ``_assert_gaussian`` whitens the samples with the exact law and
runs 2 + d(d+1)/2 tests (total chi-square, mean chi-square, one z-test per covariance entry) with a
Bonferroni correction at family-wise level ALPHA = 1e-3: a correct sampler fails a given test with
probability <= 1e-3 over seeds.
"""

import math

import numpy as np
import pytest
import scipy.linalg
import sympy as sp
from hypothesis import assume, given
from hypothesis import strategies as st
from scipy import stats

from privcal.analysis.noise import (
    OrnsteinUhlenbeckPath,
    OrnsteinUhlenbeckPaths,
    bridge_law,
    conditional_law,
    eq2_paper,
    max_bracket,
    ou_covariance,
    sample_ou_grid,
    step_law,
)
from privcal.analysis.noise.store import LOAD, SortedStore

ALPHA = 1e-3


def _kernel(x, y, beta, sigma):
    return sigma**2 * np.exp(-beta * np.abs(np.subtract.outer(x, y)))


def _assert_gaussian(samples, mean, cov, alpha=ALPHA):
    """Reject (AssertionError) if samples (N, d) are not N(mean, cov) at family-wise level alpha."""
    samples = np.asarray(samples, float)
    n, d = samples.shape
    chol = np.linalg.cholesky(cov)
    z = scipy.linalg.solve_triangular(chol, (samples - mean).T, lower=True).T
    pvals = {}
    ss = float(np.sum(z * z))  # ~ chi2(n d)
    cdf = stats.chi2.cdf(ss, n * d)
    pvals["total chi2"] = 2 * min(cdf, 1 - cdf)
    zbar = z.mean(axis=0)
    pvals["mean chi2"] = stats.chi2.sf(n * float(zbar @ zbar), d)  # ~ chi2(d)
    s = z.T @ z / n  # ~ I
    for i in range(d):
        for j in range(i + 1):
            stat = (s[i, i] - 1) * math.sqrt(n / 2) if i == j else s[i, j] * math.sqrt(n)
            pvals[f"cov[{i},{j}]"] = 2 * stats.norm.sf(abs(stat))
    worst = min(pvals, key=pvals.get)
    assert pvals[worst] > alpha / len(pvals), f"{worst}: p = {pvals[worst]:.3g} (of {len(pvals)} tests)"


def _conditional(query, pts, vals, beta, sigma):
    """Mean and covariance of the values at ``query`` given ``vals`` at ``pts`` (dense conditioning)."""
    kqe = _kernel(query, pts, beta, sigma)
    kee = _kernel(pts, pts, beta, sigma)
    sol = np.linalg.solve(kee, np.column_stack([vals, kqe.T]))
    mean = kqe @ sol[:, 0]
    cov = _kernel(query, query, beta, sigma) - kqe @ sol[:, 1:]
    return mean, 0.5 * (cov + cov.T)


# ---------------------------------------------------------------------------------------- validation
@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(beta=0.0, sigma=1.0), "beta must be in"),
        (dict(beta=-1.0, sigma=1.0), "beta must be in"),
        (dict(beta=float("inf"), sigma=1.0), "beta must be in"),
        (dict(beta=1.0, sigma=0.0), "sigma must be in"),
        (dict(beta=1.0, sigma=float("nan")), "sigma must be a number"),
        (dict(beta=1.0, sigma=1.0, domain=(1.0, 0.0)), "domain"),
        (dict(beta=1.0, sigma=1.0, domain=(0.0, float("inf"))), "domain"),
        (dict(beta=1.0, sigma=1.0, seed=-3), "seed"),
        (dict(beta=1.0, sigma=1.0, seed=1.5), "seed"),
    ],
)
def test_constructor_rejects_bad_input(kwargs, match):
    with pytest.raises(ValueError, match=match):
        OrnsteinUhlenbeckPath(**kwargs)


@pytest.mark.parametrize("bad", [1.5, -0.1, float("nan"), float("inf"), -float("inf")])
def test_points_outside_domain_or_not_finite_are_rejected(bad):
    path = OrnsteinUhlenbeckPath(1.0, 1.0, seed=0)
    with pytest.raises(ValueError, match=r"points must be finite and in \[0, 1\], got .*index 2"):
        path.sample([0.1, 0.2, bad])
    with pytest.raises(ValueError, match="points must be finite and in"):
        path.sample_point(bad)
    with pytest.raises(ValueError, match="points must be finite and in"):
        path.sample(bad)
    assert len(path) == 0  # nothing was inserted by the rejected batch


def test_points_must_be_real():
    path = OrnsteinUhlenbeckPath(1.0, 1.0, seed=0)
    with pytest.raises(ValueError, match="points must be real"):
        path.sample(["a"])
    with pytest.raises(ValueError, match="x must be a real number"):
        path.sample_point(True)


def test_custom_domain():
    path = OrnsteinUhlenbeckPath(1.0, 2.0, seed=0, domain=(-3.0, 5.0))
    assert path.sample([-3.0, 5.0, 0.0]).shape == (3,)
    with pytest.raises(ValueError, match=r"in \[-3, 5\], got 5.5"):
        path.sample(5.5)


# ------------------------------------------------------------------------------------ path semantics
def test_stored_values_are_returned_in_any_order_and_shape():
    path = OrnsteinUhlenbeckPath(3.0, 1.0, seed=7)
    first = path.sample([0.5, 0.1, 0.9, 0.5])
    assert first[0] == first[3]  # duplicate inside one batch
    assert path.sample(0.1) == first[1]  # 0-d array
    assert path.sample_point(0.9) == first[2]
    grid = np.array([[0.9, 0.5], [0.1, 0.7]])
    again = path.sample(grid)
    assert again.shape == (2, 2)
    assert again[0, 0] == first[2] and again[0, 1] == first[0] and again[1, 0] == first[1]
    assert len(path) == 4
    assert path.sample([]).shape == (0,)


def test_large_store_consistency_and_sorted():
    """Many chunk splits: every stored value is returned unchanged, the store stays sorted."""
    rng = np.random.default_rng(11)
    path = OrnsteinUhlenbeckPath(50.0, 1.0, seed=3)
    pts = rng.random(5000)
    v1 = path.sample(pts[:3000])  # flat batch
    v2 = [path.sample_point(x) for x in pts[3000:]]  # online, 2000 points into 3000
    v3 = path.sample(rng.random(50))  # small batch: loop path
    assert v3.shape == (50,)
    xs, fs = path.sampled()
    assert np.all(np.diff(xs) > 0) and len(path) == xs.size == 5050
    np.testing.assert_array_equal(path.sample(pts), np.r_[v1, v2])


def test_seeding_and_reset():
    pts = np.linspace(0, 1, 17)
    a = OrnsteinUhlenbeckPath(2.0, 1.0, seed=123).sample(pts)
    b = OrnsteinUhlenbeckPath(2.0, 1.0, seed=np.random.default_rng(123)).sample(pts)
    np.testing.assert_array_equal(a, b)
    path = OrnsteinUhlenbeckPath(2.0, 1.0, seed=123)
    path.sample(pts)
    path.reset()
    assert len(path) == 0
    c = path.sample(pts)
    assert not np.any(c == a)  # a new path (equality has probability 0)
    path.reset(seed=123)
    np.testing.assert_array_equal(path.sample(pts), a)


def test_from_values_pins_and_validates():
    path = OrnsteinUhlenbeckPath.from_values(1.0, 1.0, [0.7, 0.2], [1.5, -2.0], seed=0)
    np.testing.assert_array_equal(path.sample([0.2, 0.7]), [-2.0, 1.5])
    with pytest.raises(ValueError, match="distinct"):
        OrnsteinUhlenbeckPath.from_values(1.0, 1.0, [0.2, 0.2], [1.0, 1.0])
    with pytest.raises(ValueError, match="values must be finite"):
        OrnsteinUhlenbeckPath.from_values(1.0, 1.0, [0.2], [float("nan")])


def test_extreme_beta_is_finite():
    """beta (x_r - x_l) from 1e-12 to 1e6 must neither overflow nor produce nan."""
    for beta in (1e-9, 1e6):
        path = OrnsteinUhlenbeckPath(beta, 1.0, seed=0)
        v = path.sample(np.r_[np.linspace(0, 1, 101), 0.5 + 1e-12, 0.5 - 1e-12])
        w = [path.sample_point(x) for x in (0.25 + 1e-13, 0.123456, 1e-300)]
        assert np.all(np.isfinite(v)) and np.all(np.isfinite(w))


# ------------------------------------------------------------------------------ the sorted store
def test_store_locate_and_insert_match_a_sorted_reference():
    # 3 LOAD random points inserted online: chunks split, lookups and neighbours stay exact
    store = SortedStore()
    reference = {}
    rng = np.random.default_rng(0)
    for x in rng.random(3 * LOAD).tolist():
        where, value, left, right = store.locate(x)
        assert value is None
        below = [p for p in reference if p < x]
        above = [p for p in reference if p > x]
        assert left == (None if not below else (max(below), reference[max(below)]))
        assert right == (None if not above else (min(above), reference[min(above)]))
        store.insert(where, x, -x)
        reference[x] = -x
    assert len(store) == 3 * LOAD and len(store._xs) > 1
    assert all(len(chunk) <= 2 * LOAD for chunk in store._xs)
    X, F = store.flat()
    np.testing.assert_array_equal(X, sorted(reference))
    np.testing.assert_array_equal(F, -X)
    assert store.locate(float(X[7]))[1] == F[7]
    store.rebuild(X[::2].copy(), F[::2].copy())
    assert len(store) == X[::2].size and store.locate(float(X[1]))[1] is None
    store.clear()
    assert len(store) == 0 and store.locate(0.5) == (None, None, None, None)


# ---------------------------------------------------------------------- conditional laws: derivation
def test_bridge_law_derivation_with_sympy():
    """Gaussian conditioning of g(x) on g(x_l), g(x_r) (x_l = 0, x = a, x_r = a + b), unit sigma.

    With u = e^{-beta a}, w = e^{-beta b}: Cov(x, x_l) = u, Cov(x, x_r) = w, Cov(x_l, x_r) = u w.
    """
    u, w, gl, gr = sp.symbols("u w g_l g_r", positive=True)
    k_xn = sp.Matrix([[u, w]])
    k_nn = sp.Matrix([[1, u * w], [u * w, 1]])
    weights = k_xn * k_nn.inv()
    mean = (weights * sp.Matrix([gl, gr]))[0]
    var = 1 - (weights * k_xn.T)[0]
    # the closed forms used in privcal.analysis.noise.laws (exp / expm1 form)
    mean_closed = (u * (1 - w**2) * gl + w * (1 - u**2) * gr) / (1 - u**2 * w**2)
    var_closed = (1 - u**2) * (1 - w**2) / (1 - u**2 * w**2)
    assert sp.simplify(mean - mean_closed) == 0
    assert sp.simplify(var - var_closed) == 0
    # ... equal to the sinh form: weights sinh(beta b)/sinh(beta d), sinh(beta a)/sinh(beta d)
    a, b, beta = sp.symbols("a b beta", positive=True)
    sub = {u: sp.exp(-beta * a), w: sp.exp(-beta * b)}
    sinh_mean = (sp.sinh(beta * b) * gl + sp.sinh(beta * a) * gr) / sp.sinh(beta * (a + b))
    sinh_var = 2 * sp.sinh(beta * a) * sp.sinh(beta * b) / sp.sinh(beta * (a + b))
    assert sp.simplify((mean_closed.subs(sub) - sinh_mean).rewrite(sp.exp)) == 0
    assert sp.simplify((var_closed.subs(sub) - sinh_var).rewrite(sp.exp)) == 0
    # right neighbour infinitely far (w -> 0): the AR(1) step law; none at all: N(0, 1)
    assert sp.simplify(sp.limit(mean, w, 0) - u * gl) == 0
    assert sp.simplify(sp.limit(var, w, 0) - (1 - u**2)) == 0
    assert sp.limit(sp.limit(var, w, 0), u, 0) == 1


@given(
    st.lists(st.floats(0.0, 1.0), min_size=2, max_size=8, unique=True),
    st.floats(0.0, 1.0),
    st.floats(0.05, 20.0),
    st.floats(0.2, 3.0),
)
def test_markov_reduction_matches_dense_conditioning(pts, x, beta, sigma):
    """Conditioning on every sampled point equals conditioning on the two nearest (Markov)."""
    pts = np.sort(np.asarray(pts))
    assume(np.min(np.abs(pts - x)) >= 1e-3 and np.min(np.diff(pts)) >= 1e-3)
    vals = np.linspace(-1.3, 2.1, pts.size)
    mean, cov = _conditional(np.array([x]), pts, vals, beta, sigma)
    i = np.searchsorted(pts, x)
    left = (pts[i - 1], vals[i - 1]) if i > 0 else None
    right = (pts[i], vals[i]) if i < pts.size else None
    m, v = conditional_law(x, beta, sigma, left=left, right=right)
    assert m == pytest.approx(mean[0], abs=1e-8 * sigma)
    assert v == pytest.approx(cov[0, 0], rel=1e-6, abs=1e-10 * sigma**2)


def test_law_functions_validate_and_agree():
    m, v = bridge_law(0.3, 0.1, 1.0, 0.6, -1.0, 2.0, 1.5)
    assert (float(m), float(v)) == pytest.approx(conditional_law(0.3, 2.0, 1.5, (0.1, 1.0), (0.6, -1.0)))
    m1, v1 = step_law(0.3, 0.1, 1.0, 2.0, 1.5)
    assert float(m1) == pytest.approx(math.exp(-0.4))  # e^{-beta a} g, a = 0.2
    assert float(v1) == pytest.approx(2.25 * (1 - math.exp(-0.8)))
    assert conditional_law(0.3, 2.0, 1.5) == (0.0, 2.25)
    assert ou_covariance(0.2, 0.7, 2.0, 1.5) == pytest.approx(2.25 * math.exp(-1.0))
    with pytest.raises(ValueError, match="x_left < x < x_right"):
        bridge_law(0.7, 0.1, 1.0, 0.6, -1.0, 2.0, 1.5)
    with pytest.raises(ValueError, match="x != x_neighbour"):
        step_law(0.1, 0.1, 1.0, 2.0, 1.5)
    with pytest.raises(ValueError, match="beta must be in"):
        conditional_law(0.3, -2.0, 1.5)


# ------------------------------------------------------------------------- Eq. (2) as printed: defects
@given(st.floats(1e-3, 0.999), st.floats(1e-3, 0.999), st.floats(0.01, 30.0))
def test_eq2_printed_variance_is_negative_everywhere(p, q, beta):
    """d_at < 0 for every configuration s- < s < s+ and every beta.

    Proof: x = e^{beta a}, y = e^{beta b} > 1; d_at has the sign of
    xy - 1/(xy) - x^2 - y^2 + 2 = -(xy (x - y)^2 + (xy - 1)^2) / (xy) < 0 (identity checked below).
    """
    lo, hi = sorted((p, q))
    assume(hi - lo >= 1e-6)
    s = 0.5 * (lo + hi)
    _, d = eq2_paper(s, beta, left=(lo, 0.0), right=(hi, 0.0))
    assert d < 0


def test_eq2_negative_variance_identity_with_sympy():
    x, y = sp.symbols("x y", positive=True)
    numerator = x * y - 1 / (x * y) - x**2 - y**2 + 2
    assert sp.simplify(numerator + (x * y * (x - y) ** 2 + (x * y - 1) ** 2) / (x * y)) == 0


def test_eq2_printed_mean_has_swapped_weights():
    beta, sl, s, sr, gl, gr = 3.0, 0.2, 0.25, 0.9, 1.0, -2.0
    mu_paper, _ = eq2_paper(s, beta, left=(sl, gl), right=(sr, gr))
    mu_true, _ = conditional_law(s, beta, 1.0, left=(sl, gl), right=(sr, gr))
    mu_swapped, _ = conditional_law(s, beta, 1.0, left=(sl, gr), right=(sr, gl))
    assert mu_paper == pytest.approx(mu_swapped, rel=1e-12)  # printed = true law with values swapped
    # next to s- the printed mean follows the far neighbour g(s+) (a discontinuous path) ...
    near_paper, _ = eq2_paper(sl + 1e-9, beta, left=(sl, gl), right=(sr, gr))
    near_true, _ = conditional_law(sl + 1e-9, beta, 1.0, left=(sl, gl), right=(sr, gr))
    assert near_true == pytest.approx(gl, abs=1e-6)
    assert near_paper == pytest.approx(gr, abs=1e-6)
    # ... and the sampler agrees with the true mean, not with the printed one (Monte Carlo)
    rng = np.random.default_rng(2024)
    draws = np.array([
        OrnsteinUhlenbeckPath.from_values(beta, 1.0, [sl, sr], [gl, gr], seed=rng).sample_point(s)
        for _ in range(4000)
    ])
    se = draws.std(ddof=1) / math.sqrt(draws.size)
    assert abs(draws.mean() - mu_true) < 4.5 * se  # two-sided, false alarm ~7e-6
    assert abs(draws.mean() - mu_paper) > 20 * se


def test_algorithm1_noise_scale_sigma_d_is_wrong():
    """Alg. 1 line 16 samples N(mu, sigma d); the variance of the exact law is sigma^2 d."""
    beta, sigma, sl, s, sr = 2.0, 3.0, 0.3, 0.5, 0.6
    d_unit = conditional_law(s, beta, 1.0, left=(sl, 0.0), right=(sr, 0.0))[1]
    _, var_true = conditional_law(s, beta, sigma, left=(sl, 0.0), right=(sr, 0.0))
    assert var_true == pytest.approx(sigma**2 * d_unit)
    rng = np.random.default_rng(99)
    draws = np.array([
        OrnsteinUhlenbeckPath.from_values(beta, sigma, [sl, sr], [0.0, 0.0], seed=rng).sample_point(s)
        for _ in range(4000)
    ])
    n = draws.size
    stat = (n - 1) * draws.var(ddof=1)  # ~ var chi2(n - 1) under the true variance
    lo, hi = stats.chi2.ppf([ALPHA / 2, 1 - ALPHA / 2], n - 1)
    assert lo * var_true <= stat <= hi * var_true  # exact law: not rejected
    for wrong in (sigma * d_unit, (sigma * d_unit) ** 2):  # N(mu, sigma d) as variance or as std
        assert not lo * wrong <= stat <= hi * wrong


def test_eq2_boundary_convention_pins_the_path_to_zero():
    """'Treat s+ = 1 and s- = 0 for non-existence' conditions a first query on phantom g(0) = g(1) = 0.

    Under that convention even the correct bridge law gives Var g(s) = sigma^2 (1 - e^{-2 beta s})
    (1 - e^{-2 beta (1 - s)}) / (1 - e^{-2 beta}), which tends to 0 at both ends, instead of the
    stationary sigma^2: the path is pinned to 0 at s = 0 and s = 1.
    """
    beta, sigma = 1.0, 1.0
    assert eq2_paper(0.05, beta)[0] == 0.0 and eq2_paper(0.5, beta)[0] == 0.0  # phantom zeros
    pinned = [
        conditional_law(s, beta, sigma, left=(0.0, 0.0), right=(1.0, 0.0))[1] for s in (1e-6, 0.05, 0.5)
    ]
    assert pinned[0] < 1e-5  # pinned at 0
    assert pinned[1] == pytest.approx((1 - math.exp(-0.1)) * (1 - math.exp(-1.9)) / (1 - math.exp(-2.0)))
    assert pinned[1] < sigma**2 / 10  # 0.094 (closed form above): 11x too small
    assert pinned[2] == pytest.approx((1 - math.exp(-1.0)) ** 2 / (1 - math.exp(-2.0)))  # 0.46
    # the sampler's first value has variance sigma^2 (chi-square test on 4000 fresh paths)
    rng = np.random.default_rng(5)
    draws = np.array([OrnsteinUhlenbeckPath(beta, sigma, seed=rng).sample_point(0.05) for _ in range(4000)])
    stat = (draws.size - 1) * draws.var(ddof=1)
    lo, hi = stats.chi2.ppf([ALPHA / 2, 1 - ALPHA / 2], draws.size - 1)
    assert lo <= stat / sigma**2 <= hi


# ------------------------------------------------------------------ statistical tests of the sampler
_PTS = np.array([0.0, 0.004, 0.31, 0.3102, 0.5, 0.77, 1.0])
_BETA, _SIGMA = 4.0, 1.7


def _insert(path, mode, rng):
    p = _PTS
    if mode == "batch sorted":
        path.sample(p)
    elif mode == "batch reversed":
        path.sample(p[::-1])
    elif mode == "one at a time, random order":
        for j in rng.permutation(p.size):
            path.sample_point(p[j])
    elif mode == "middle first, then batches":
        path.sample_point(p[4])
        path.sample(p[[6, 1]])
        path.sample(p[[0, 2, 3, 5]])
    elif mode == "outside in":
        for j in (0, 6, 1, 5, 2, 4, 3):
            path.sample(p[j])
    return path.sample(p)


@pytest.mark.parametrize(
    "mode",
    ["batch sorted", "batch reversed", "one at a time, random order", "middle first, then batches",
     "outside in"],
)
def test_covariance_matches_kernel_whatever_the_insertion_order(mode):
    rng = np.random.default_rng(len(mode))
    n = 3000
    vals = np.array([_insert(OrnsteinUhlenbeckPath(_BETA, _SIGMA, seed=rng), mode, rng) for _ in range(n)])
    _assert_gaussian(vals, np.zeros(_PTS.size), _kernel(_PTS, _PTS, _BETA, _SIGMA))


@pytest.mark.parametrize("flat_ratio", [0, 10**9], ids=["vectorised batches", "one by one"])
def test_joint_law_of_a_large_batch_into_existing_points(flat_ratio, monkeypatch):
    """Both batch code paths: 25 new points (with duplicates) into 12 stored ones, many gaps."""
    monkeypatch.setattr(OrnsteinUhlenbeckPath, "_FLAT_RATIO", flat_ratio)
    monkeypatch.setattr(OrnsteinUhlenbeckPath, "_SMALL_BATCH", 0 if flat_ratio == 0 else 10**9)
    rng = np.random.default_rng(17 + flat_ratio % 7)
    beta, sigma = 30.0, 0.8
    first = np.sort(rng.random(12))
    second = np.r_[rng.random(20), 0.0, 1.0, first[3] + 1e-4, first[3] - 1e-4, first[7] + 0.05]
    query = np.r_[first, second]
    n = 2500
    out = np.empty((n, query.size))
    for i in range(n):
        path = OrnsteinUhlenbeckPath(beta, sigma, seed=rng)
        path.sample(first)
        path.sample(np.r_[second, second[:4]])
        out[i] = path.sample(query)
    _assert_gaussian(out, np.zeros(query.size), _kernel(query, query, beta, sigma))


@pytest.mark.parametrize("config", range(4))
def test_conditional_laws_at_random_configurations(config):
    """Values drawn given pinned neighbours match dense Gaussian conditioning (mean and covariance)."""
    rng = np.random.default_rng(1000 + config)
    beta = float(rng.choice([0.5, 3.0, 20.0]))
    sigma = float(rng.uniform(0.3, 3.0))
    k = int(rng.integers(1, 7))
    pts = np.sort(rng.choice(np.linspace(0, 1, 201), size=k, replace=False))
    vals = rng.multivariate_normal(np.zeros(k), _kernel(pts, pts, beta, sigma))
    query = np.sort(rng.choice(np.setdiff1d(np.linspace(0.0025, 0.9975, 200), pts), 4, replace=False))
    mean, cov = _conditional(query, pts, vals, beta, sigma)
    n = 2500
    out = np.empty((n, query.size))
    for i in range(n):
        path = OrnsteinUhlenbeckPath.from_values(beta, sigma, pts, vals, seed=rng)
        if i % 2:
            out[i] = path.sample(query)
        else:
            out[i] = [path.sample_point(x) for x in query[::-1]][::-1]
    _assert_gaussian(out, mean, cov)


def _assert_standard_normal(z, alpha=ALPHA):
    """z-test of the mean and chi-square test of the variance of iid residuals (Bonferroni, 2 tests)."""
    n = z.size
    p_mean = 2 * stats.norm.sf(abs(z.mean()) * math.sqrt(n))
    cdf = stats.chi2.cdf(float(z @ z), n)
    p_var = 2 * min(cdf, 1 - cdf)
    assert min(p_mean, p_var) > alpha / 2, f"mean p = {p_mean:.3g}, variance p = {p_var:.3g}"


@pytest.mark.parametrize("beta_gap", [0.02, 0.5, 5.0])
@pytest.mark.parametrize("online", [False, True], ids=["batch", "online"])
def test_bridge_law_with_high_power(beta_gap, online):
    """20000 conditionally independent gaps of one pinned path: standardised residuals ~ N(0, 1).

    beta * gap ranges over 0.02 .. 5; with n = 20000 a 5% error in the variance is a 5-sigma event.
    """
    n, beta, sigma = 20000, 3.0, 1.3
    gap = beta_gap / beta
    rng = np.random.default_rng(int(100 * beta_gap) + online)
    left = np.arange(n) * 2 * gap  # pinned points x_l, x_l + gap, spaced 2 gaps apart
    pts = np.r_[left, left + gap]
    vals = rng.normal(0.0, sigma, pts.size)  # any values: the law holds conditionally on them
    path = OrnsteinUhlenbeckPath.from_values(beta, sigma, pts, vals, seed=rng, domain=(0, pts[-1]))
    query = left + 0.3 * gap
    if online:
        got = np.array([path.sample_point(x) for x in query.tolist()])
    else:
        got = path.sample(query)
    mean, var = bridge_law(query, left, vals[:n], left + gap, vals[n:], beta, sigma)
    _assert_standard_normal((got - mean) / np.sqrt(var))


@pytest.mark.parametrize("beta_a", [0.05, 2.0])
def test_step_laws_with_high_power(beta_a, monkeypatch):
    """New points beyond the sampled range: AR(1) step from the one neighbour, on both sides.

    Each of 20000 paths pinned at x0 gets x0 + a (left neighbour only) and x0 - a (right neighbour
    only; x0 is nearer than x0 + a), alternately online (in that order) and in one vectorised batch.
    """
    monkeypatch.setattr(OrnsteinUhlenbeckPath, "_SMALL_BATCH", 0)
    n, beta, sigma = 20000, 2.0, 0.7
    a = beta_a / beta
    x0, f0 = 0.5, 0.9
    rng = np.random.default_rng(int(10 * beta_a))
    got = np.empty((n, 2))
    for i in range(n):
        path = OrnsteinUhlenbeckPath.from_values(beta, sigma, [x0], [f0], seed=rng, domain=(-1.0, 2.0))
        if i % 2:
            got[i] = path.sample_point(x0 + a), path.sample_point(x0 - a)
        else:
            got[i] = path.sample([x0 + a, x0 - a])  # one vectorised batch, two one-sided gaps
    mean, var = step_law(x0 + a, x0, f0, beta, sigma)
    assert step_law(x0 - a, x0, f0, beta, sigma) == (mean, var)  # time reversibility
    z = (got - mean) / np.sqrt(var)
    _assert_standard_normal(z[1::2].reshape(-1), alpha=ALPHA / 2)  # online insertions
    _assert_standard_normal(z[0::2].reshape(-1), alpha=ALPHA / 2)  # batches
    # the two draws of one path are independent given g(x0) (Markov): correlation ~ 0
    r = np.corrcoef(got.T)[0, 1]
    assert abs(r) * math.sqrt(n) < stats.norm.isf(ALPHA / 2)


def test_paths_of_different_actions_are_independent():
    bank_vals = []
    rng = np.random.default_rng(8)
    pts = np.array([0.1, 0.6])
    for _ in range(2000):
        bank = OrnsteinUhlenbeckPaths(3, 2.0, 1.0, seed=rng)
        bank_vals.append(bank.sample_all(pts).reshape(-1))
    bank_vals = np.array(bank_vals)
    k = _kernel(pts, pts, 2.0, 1.0)
    _assert_gaussian(bank_vals, np.zeros(6), scipy.linalg.block_diag(k, k, k))


def test_path_bank_api():
    bank = OrnsteinUhlenbeckPaths(2, 2.0, 1.0, seed=4)
    assert len(bank) == 2 and len(list(bank)) == 2
    v = bank.sample(1, [0.2, 0.4])
    assert bank[1].sample_point(0.2) == v[0]
    assert len(bank[0]) == 0
    assert bank.nbytes == 2 * 16 + 8  # 2 points x 16 bytes + one chunk maximum (8 bytes)
    bank.reset()
    assert len(bank[1]) == 0
    with pytest.raises(ValueError, match="action must be an int in"):
        bank.sample(2, [0.1])
    with pytest.raises(ValueError, match="n_paths"):
        OrnsteinUhlenbeckPaths(0, 2.0, 1.0)


def test_memory_is_linear():
    path = OrnsteinUhlenbeckPath(1.0, 1.0, seed=0)
    path.sample(np.random.default_rng(0).random(100_000))
    assert 16 * 100_000 <= path.nbytes <= 17 * 100_000


# ------------------------------------------------------------------------------- grid helpers (Lemma 8)
def test_sample_ou_grid_covariance():
    grid = np.array([0.0, 0.1, 0.15, 0.6, 1.0])
    vals = sample_ou_grid(2.5, 1.4, grid, 5000, seed=3)
    assert vals.shape == (5000, 5)
    _assert_gaussian(vals, np.zeros(5), _kernel(grid, grid, 2.5, 1.4))
    with pytest.raises(ValueError, match="strictly increasing"):
        sample_ou_grid(1.0, 1.0, [0.0, 0.0], 3)


def test_max_bracket_dominates_the_fine_grid_maximum_in_law():
    """Upper bound from a coarse grid (17 points) vs the maximum on a 64x finer grid of the same paths.

    The fine-grid max is a lower bound of the true max, so P(upper >= t) >= P(fine max >= t) must hold
    at every t; tested at 5 levels with one-sided two-proportion z-tests (Bonferroni, level 1e-3).
    """
    beta, sigma, n = 3.0, 1.0, 4000
    fine = np.linspace(0, 1, 1025)
    vals = sample_ou_grid(beta, sigma, fine, n, seed=21)
    coarse = fine[::64]
    lower, upper = max_bracket(vals[:, ::64], coarse, beta, sigma, seed=22)
    fine_max = vals.max(axis=1)
    assert np.all(lower <= upper) and np.all(lower <= fine_max)
    for t in np.quantile(fine_max, [0.1, 0.3, 0.5, 0.7, 0.9]):
        p_up, p_fine = np.mean(upper >= t), np.mean(fine_max >= t)
        se = math.sqrt((p_up * (1 - p_up) + p_fine * (1 - p_fine)) / n)
        assert p_up - p_fine > -stats.norm.isf(ALPHA / 5) * se
    # and it is not vacuous: on average within 0.25 sigma of the fine-grid maximum
    assert np.mean(upper - fine_max) < 0.25 * sigma


def test_max_bracket_is_exact_in_the_brownian_limit():
    """beta -> 0: g(t) - g(0) ~ sigma sqrt(2 beta) W(t), so the excess (max g - g(0)) / (sigma sqrt(2 beta))
    has the law of max_[0,1] W = |N(0, 1)| (reflection principle); the bracket's upper variable built
    from 3 grid points must match it (relative error O(beta) = 1e-6). Kolmogorov-Smirnov at ALPHA.
    """
    beta, sigma = 1e-6, 1.5
    grid = np.array([0.0, 0.3, 1.0])
    vals = sample_ou_grid(beta, sigma, grid, 20000, seed=31)
    _, upper = max_bracket(vals, grid, beta, sigma, seed=32)
    excess = (upper - vals[:, 0]) / (sigma * math.sqrt(2 * beta))
    assert stats.kstest(excess, stats.halfnorm.cdf).pvalue > ALPHA


def test_ou_paths_unchecked_constructor_is_the_checked_one():
    # the trusted constructor (the DP-Q loop builds one layer per release with its checked beta and sigma): the
    # same paths from the same seed (independent: the checked constructor itself)
    from privcal.analysis.noise import OrnsteinUhlenbeckPaths

    checked = OrnsteinUhlenbeckPaths(3, 30.0, 0.7, seed=9)
    trusted = OrnsteinUhlenbeckPaths.unchecked(3, 30.0, 0.7, seed=9)
    assert repr(trusted) == repr(checked)
    points = np.array([0.5, 0.1, 0.9, 0.5, 0.33])
    np.testing.assert_array_equal(trusted.sample_all(points), checked.sample_all(points))
    trusted.reset(), checked.reset()
    np.testing.assert_array_equal(trusted.sample(1, points), checked.sample(1, points))
