"""One user's records under Poisson sampling (privcal.analysis.group_subsampling, privcal.accounting.groups; docs/groups.md)."""

import math

import numpy as np
import pytest

import privcal
from privcal.analysis import group_subsampling as G
from privcal.accounting import groups
from privcal.analysis.subsampling import rdp_poisson_gaussian

ORDERS = np.array([1.25, 1.5, 2.0, 4.0, 8.0, 16.0])


def test_one_record_is_the_poisson_subsampled_gaussian():
    # g = 1 is the pair of Mironov, Talwar & Zhang 2019 (privcal.analysis.subsampling, exact at integer orders and
    # numerically otherwise): never below it, and within 3 % where the divergence is not tiny
    for s, q in ((1.0, 0.05), (2.0, 0.2), (0.7, 0.01)):
        ours = G.rdp_poisson_group_gaussian(ORDERS, s, q, 1)
        exact = rdp_poisson_gaussian(ORDERS, s, q)
        assert np.all(ours >= exact)
        big = exact > 1e-3
        assert np.all(ours[big] <= exact[big] * 1.001), (s, q, ours / exact)


def _moment_mpmath(alpha, s, q, g, power):
    """log E[L(z)^power], z ~ N(0, 1), by mpmath quadrature at 30 digits (the independent reference)."""
    import mpmath

    mpmath.mp.dps = 30
    w = [mpmath.binomial(g, k) * mpmath.mpf(q) ** k * (1 - mpmath.mpf(q)) ** (g - k) for k in range(g + 1)]
    a = [mpmath.mpf(k) / s for k in range(g + 1)]

    def f(z):
        lz = sum(w[k] * mpmath.exp(a[k] * z - a[k] ** 2 / 2) for k in range(g + 1))
        return mpmath.npdf(z) * lz ** power

    top = power * float(a[-1]) if power > 0 else 0.0
    return float(mpmath.log(mpmath.quad(f, [-mpmath.inf, -10, 0, top / 2, top, top + 10, mpmath.inf])))


@pytest.mark.parametrize("alpha, s, q, g", [(2.0, 2.0, 0.1, 5), (1.5, 4.0, 0.05, 20), (8.0, 3.0, 0.02, 10)])
def test_the_moment_bound_is_above_the_integral_and_close(alpha, s, q, g):
    log_w = G.log_weights(q, g)
    a = np.arange(g + 1) / s
    for power in (alpha, 1.0 - alpha):
        bound = G.log_moment_bound(alpha, log_w, a, power)
        exact = _moment_mpmath(alpha, s, q, g, power)
        assert exact <= bound <= exact + 1e-4 * max(abs(exact), 1e-3) + 1e-7, (power, exact, bound)


def test_every_cell_mass_is_within_its_certified_error():
    # the Gaussian masses of the upper sum (the two tails' difference) against mpmath at 40 digits
    import mpmath

    mpmath.mp.dps = 40
    edges = np.linspace(-39.0, 41.0, 4001)
    log_mass, rel = G.log_cell_masses(edges[:-1], edges[1:])
    for i in list(range(0, 4000, 97)) + [1950, 1999, 2000, 2001]:
        lo, hi = mpmath.mpf(float(edges[i])), mpmath.mpf(float(edges[i + 1]))
        exact = mpmath.ncdf(-lo) - mpmath.ncdf(-hi) if lo >= 0 else mpmath.ncdf(hi) - mpmath.ncdf(lo)
        err = abs(mpmath.exp(mpmath.mpf(float(log_mass[i]))) / exact - 1)
        assert err <= rel[i], (i, err, rel[i])


def test_the_cell_error_and_the_rounding_margin_enter_the_bound(monkeypatch):
    # a term is certified only if the code that uses it reads it: inflating the cells' relative error moves the bound
    log_w, a = G.log_weights(0.1, 5), np.arange(6) / 2.0
    base = G.log_moment_bound(2.0, log_w, a, 2.0)
    real = G.log_cell_masses

    def inflated(lo, hi):
        log_mass, rel = real(lo, hi)
        return log_mass, rel + 1e-3

    monkeypatch.setattr(G, "log_cell_masses", inflated)
    assert G.log_moment_bound(2.0, log_w, a, 2.0) > base + 5e-4


def test_a_non_aligned_group_is_below_the_aligned_pair():
    # the proof's claim on an instance: two records in orthogonal directions (shifts 0, e1, e2, e1 + e2, norms
    # <= their count) lose no more than the aligned pair (shifts 0, 1, 1, 2 along e). Monte Carlo of
    # H_a = E_Q (L - a)_+ for the orthogonal pair, 200,000 draws (seed 7), + 4 standard errors, against the aligned
    # pair's value by quadrature (scipy, 1-D)
    from scipy import integrate, stats

    s, q, a_ = 1.0, 0.3, 2.0
    rng = np.random.default_rng(7)
    y = rng.standard_normal((200_000, 2)) * s
    w = {(0, 0): (1 - q) ** 2, (1, 0): q * (1 - q), (0, 1): q * (1 - q), (1, 1): q * q}
    ratio = sum(wt * np.exp((y @ np.array(v, dtype=float) - 0.5 * np.dot(v, v)) / s ** 2) for v, wt in w.items())
    vals = np.maximum(ratio - a_, 0.0)
    mc, se = vals.mean(), vals.std(ddof=1) / math.sqrt(vals.size)
    weights = [(1 - q) ** 2, 2 * q * (1 - q), q * q]

    def aligned(z):
        lz = sum(wk * math.exp((k * z - 0.5 * k * k) / s ** 2) for k, wk in enumerate(weights))
        return stats.norm.pdf(z, scale=s) * max(lz - a_, 0.0)

    exact, _ = integrate.quad(aligned, -10, 20, points=[0.0, 1.0, 2.0], limit=200)
    assert mc - 4 * se <= exact  # the orthogonal group is dominated (here strictly: its shifts are shorter)
    assert mc + 4 * se < exact


def test_user_level_epsilon_brackets_the_readme_run():
    # the README's fqi-dpsgd transition run: 100 episodes of 50 transitions, q = 256 / 5000, 1000 steps, sigma for
    # epsilon 1 at delta 1e-5. The realisable value for one user's episode: about 146 (aligned gradients,
    # K ~ Binomial(50, q)); privcal's certified lower end is that pair's, its upper end the Renyi bound
    q, steps = 256 / 5000, 1000
    sigma = privcal.calibrate(1.0, 1e-5, steps=steps, sample_rate=q)
    upper, lower = groups.group_epsilon(sigma, q, steps, 50, 1e-5)
    assert 145.0 < lower <= upper <= 1.1 * lower
    one, one_lower = groups.group_epsilon(sigma, q, steps, 1, 1e-5)
    assert one_lower <= privcal.epsilon(sigma, 1e-5, steps=steps, sample_rate=q) <= one


def test_group_arguments_are_checked():
    with pytest.raises(ValueError, match="group_size"):
        G.rdp_poisson_group_gaussian(ORDERS, 1.0, 0.1, 0)
    with pytest.raises(ValueError, match="sample_rate"):
        groups.group_epsilon(1.0, 1.5, 10, 5, 1e-5)
    assert groups.group_rate(0.1, 2) == pytest.approx(0.19, rel=1e-12)  # 1 - 0.9^2
    # the whole data set in every batch: the Gaussian at sensitivity g (alpha g^2 / (2 s^2))
    assert G.rdp_poisson_group_gaussian(np.array([2.0]), 2.0, 1.0, 3)[0] == pytest.approx(2 * 9 / 8)


def test_the_user_level_epsilon_of_a_setting_is_computed_once():
    # the seeds of one setting share (sigma, q, T): the second call is the first's answer, not a new integration
    groups.group_epsilon_unchecked.cache_clear()
    first = groups.group_epsilon(2.0, 0.05, 20, 5, 1e-5)
    assert groups.group_epsilon(2.0, 0.05, 20, 5, 1e-5) == first
    info = groups.group_epsilon_unchecked.cache_info()
    assert (info.hits, info.misses) == (1, 1)
