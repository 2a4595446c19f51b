"""Two-level composition of long histories (docs/pld.md, Sec. 2.11): the re-grid of a composed block
(``convolve.regrid``) against exact arithmetic, each of its error terms (``block_err``, the telescoped
``err_add`` / ``err_rel`` of ``compose_levels``) against an exact composition with injected errors, and the
PLD's two-level brackets against its one-level ones.

Exact references: deltas of float masses (taken as exact numbers) with mpmath at 40 digits; exact
compositions by integer convolution of masses scaled by 2^1100 (every float64 >= 0 times 2^1100 is an
integer), as in tests/test_pld_certificate.py.
"""

from __future__ import annotations

import math
from fractions import Fraction

import mpmath as mp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from privcal.privacy_loss import discretise as B
from privcal.privacy_loss import convolve as C
from privcal.privacy_loss import distribution as D

SCALE = 1100


def _delta(mass, offset, h, eps, inf_mass=0.0):
    """sum_l mass_l (1 - e^{eps - l})_+ + inf_mass, l = (offset + i) h, at 40 digits (masses exact)."""
    with mp.workdps(40):
        e, tot = mp.mpf(eps), mp.mpf(inf_mass)
        for i, v in enumerate(mass):
            l = mp.mpf(offset + i) * mp.mpf(h)
            if v and l > e:
                tot += mp.mpf(float(v)) * (1 - mp.exp(e - l))
        return tot


def _composed(mass, offset, h):
    return C.Composed(offset, np.asarray(mass, dtype=float), 0.0, h, 0.0, 0.0)


_EPS = [-3.0, -0.4, 0.0, 0.05, 0.3, 0.77, 1.5, 4.0]


# ---------------------------------------------------------------------------------------------- regrid
@settings(max_examples=40, deadline=None, derandomize=True)
@given(st.integers(1, 40), st.integers(-30, 30), st.sampled_from([0.01, 0.1, 0.35]), st.sampled_from([2, 3, 8]),
       st.integers(0, 2**32 - 1))
def test_regrid_upper_dominates_and_lower_is_dominated_at_every_epsilon(n, offset, h, K, seed):
    """Connect-the-dots on a composed PMF dominates it at every real epsilon (negative ones included: the
    blocks are composed further, so every shifted delta counts), up to its rounding bound R; the dominated
    re-grid is below it (no slack). Catches: the upper split sending a linear (r / K) fraction up instead of
    (1 - e^{-r h}) / (1 - e^{-H}) (the Q-mass is then not kept, and the domination fails), an atom
    assigned to the wrong coarse cell, and the lower end emitting a cell above its ratio."""
    rng = np.random.default_rng(seed)
    y = rng.random(n) ** 3
    y /= y.sum()
    c = _composed(y, offset, h)
    up, R, _ = C.regrid(c, K, True)
    lo, R_lo, _ = C.regrid(c, K, False)
    assert R_lo == 0.0 and up.h == lo.h == K * h
    # the split keeps P- and Q-mass (to rounding)
    q_y = float(np.sum(y * np.exp(-c.losses)))
    q_up = float(np.sum(up.mass * np.exp(-up.losses)))
    assert abs(q_up - q_y) <= 1e-12 * q_y
    assert abs(up.mass.sum() - y.sum()) <= 1e-13
    grid = sorted(set(_EPS + [float(g) for g in up.losses[:: max(1, up.mass.size // 5)]]))
    for eps in grid:
        d_y = _delta(y, offset, h, eps)
        assert _delta(up.mass, up.offset, up.h, eps) + R >= d_y
        assert _delta(lo.mass, lo.offset, lo.h, eps) <= d_y


def test_regrid_rounding_is_within_its_bound_against_exact_arithmetic():
    """The upper re-grid's rounding, l1 against the exact split of the same float masses (Fractions for the
    sums, mpmath at 40 digits for the weights), is at most R = 2.02 (2K + 10) u M(0) (red when R is 0:
    the rounding is not zero)."""
    rng = np.random.default_rng(7)
    y = rng.random(200) ** 2
    y /= y.sum()
    h, K, offset = 0.013, 16, -37
    c = _composed(y, offset, h)
    up, R, _ = C.regrid(c, K, True)
    j0 = offset // K
    exact = [mp.mpf(0)] * up.mass.size
    with mp.workdps(40):
        den = -mp.expm1(-mp.mpf(K) * mp.mpf(h))
        for i, v in enumerate(y):
            idx = offset + i
            j = idx // K
            r = idx - j * K
            w = -mp.expm1(-mp.mpf(r) * mp.mpf(h)) / den
            exact[j - j0 + 1] += mp.mpf(float(v)) * w
            exact[j - j0] += mp.mpf(float(v)) * (1 - w)
        diff = sum(abs(mp.mpf(float(a)) - b) for a, b in zip(up.mass, exact))
    assert 0 < diff <= R


# ------------------------------------------------------------------------------- injected block errors
def _exact_delta_power(mass, n, offset, h, eps, inf_mass=0.0):
    """delta at eps of the exact n-fold composition of a float PMF (integer convolution), plus the +inf
    mass 1 - (1 - inf_mass)^n."""
    x = np.array([int(Fraction(float(m)) * 2**SCALE) for m in mass], dtype=object)
    y = x
    for _ in range(n - 1):
        y = np.convolve(y, x)
    with mp.workdps(40):
        D_ = mp.mpf(2) ** (SCALE * n)
        e, tot = mp.mpf(eps), mp.mpf(0)
        for i, v in enumerate(y):
            l = mp.mpf(offset * n + i) * mp.mpf(h)
            if v and l > e:
                tot += mp.mpf(v) / D_ * (1 - mp.exp(e - l))
        keep = (1 - mp.mpf(inf_mass)) ** n
        return tot * keep + (1 - keep)


@pytest.mark.parametrize("kind", ["mass", "mass-tilted", "inf"])
def test_two_level_slack_charges_the_blocks_input_errors(kind):
    """An exact PMF x* on atoms that are multiples of K (so the re-grid moves nothing), and a computed x^
    that misses e of the mass of its top atom (declared as its input error) -- or e of its +inf mass
    (declared as err_inf). Composed in two levels (m = 4 blocks of B = 4 and a rest of 3), the upper end
    must stay above the exact composition of x*: delta_exact(eps) <= delta(eps) + slack(eps). Red when
    block_err drops the input-error term (``mass``: untilted; ``mass-tilted``: the e^{-tau eps}-relative
    term, err_rel), or drops A (``inf``: err_add)."""
    K, Bk, n, h = 2, 4, 19, 0.25
    exact = np.array([0.5, 0.0, 0.3, 0.0, 0.2])  # atoms at losses 0, 2h, 4h
    e = 2e-4
    x = exact.copy()
    inf_mass, err_inf, err_mass = 0.0, 0.0, 0.0
    mono = np.zeros(x.size)
    exact_inf = 0.0
    if kind == "inf":
        exact_inf, inf_mass, err_inf = e, 0.0, e
        exact = exact * (1 - e)
        x = exact.copy()
        # x^ misses the +inf mass e (declared), its finite part is exact
    else:
        x[4] -= e
        mono[4] = e
        err_mass = e
    zeros = np.zeros(x.size)
    xf = B.Pmf(0, x, inf_mass, h, err_mass, 0.0, 0.0, None, mono=mono, dip=zeros, quad=zeros, err_inf=err_inf)
    tilt = 0.5 * h if kind == "mass-tilted" else 0.0
    c = C.compose_levels([(xf, n)], K, Bk, True, 1e-30, tilt)
    assert c.h == K * h
    for eps in (0.5, 1.0, 2.0, 3.0):
        truth = _exact_delta_power(exact, n, 0, h, eps, exact_inf)
        bound = C.delta_at(c, eps) + C.slack(c, eps)
        assert truth <= bound, (eps, float(truth), bound)
        # the injected error is what the block terms are made of: without them the bound fails
        assert truth > bound - (c.err_add + _rel(c, eps))


@pytest.mark.parametrize("tilt", [0.0, 0.4])
def test_block_err_bounds_a_truncated_block_at_every_epsilon(tilt):
    """block_err's A + R e^{-tau eps'} bounds |delta of the computed block - delta of the exact composition|
    at every real eps' (negative ones included), here with a window tail of 0.05 so that the window cuts
    real mass (folded back in): red when the outside mass is dropped from R."""
    h, n = 0.2, 9
    x = np.array([0.6, 0.25, 0.1, 0.05])
    xf = B.Pmf(0, x, 0.0, h)
    c = C.compose([(xf, n)], 0.05, tilt * h)
    assert c.outside > 0
    a, R = C.block_err(c)
    tau = tilt
    for eps in (-4.0, -1.0, -0.2, 0.0, 0.3, 0.9, 1.7, 3.0, 5.0):
        truth = _exact_delta_power(x, n, 0, h, eps)
        comp = _delta(np.maximum(c.mass, 0.0), c.offset, h, eps)
        assert abs(comp - truth) <= a + R * math.exp(-tau * eps), eps


@pytest.mark.parametrize("tilt", [0.5, 3.0])
def test_a_tilted_composition_carries_an_upper_bound_of_its_mgf(tilt):
    """compose() of tilted factors records log sum_j mass_j e^{tilt idx_j} from the tilted masses' sum (the
    regrid of a block reads it instead of a pass over the masses): it must be an upper bound of that sum
    computed directly (mpmath, 50 digits, over the returned masses) and within 1e-9 of it. Red when the scale
    K or the tilted sum is dropped, or the rescaling's margin is subtracted."""
    x = B.Pmf(-3, np.array([0.3, 0.25, 0.2, 0.1, 0.08, 0.05, 0.02]), 0.0, 0.1)
    c = C.compose([(x, 40)], C.WINDOW_TAIL, tilt)
    with mp.workdps(50):
        ref = mp.log(mp.fsum(mp.mpf(float(m)) * mp.exp(mp.mpf(tilt) * (c.offset + j))
                                     for j, m in enumerate(c.mass) if m > 0))
    assert c.log_mgf is not None
    assert c.log_mgf >= float(ref)
    assert c.log_mgf - float(ref) <= 1e-9 * max(1.0, abs(float(ref)))


def _rel(c, eps):
    if c.err_rel <= 0:
        return 0.0
    return c.err_rel * math.exp(c.log_scale - c.tilt / c.h * eps)


# ------------------------------------------------------------------------------------- the PLD, both ways
@pytest.mark.parametrize("q, sigma, steps, delta", [(0.01, 1.1, 10**6, 1e-5), (1e-3, 2.0, 2 * 10**5, 1e-12),
                                                    (0.1, 2.0, 10**5, 1e-15)])
def test_two_level_bracket_overlaps_the_one_level_bracket(q, sigma, steps, delta, monkeypatch):
    """Both brackets are certified, so they must overlap; the two-level one is used (its own errors within
    _LEVEL_ERR delta) and meets the requested accuracy; both directions (add and remove) are composed."""
    pair = B.SubsampledGaussianPair(sigma, q)
    two = D.PLD([(pair, steps)])
    lo2, hi2 = two.bracket(delta)
    used = [v for k, v in two._cache.items() if k[0] == "levels" and v is not None]
    ends = {(k[2], k[4]) for k, v in two._cache.items() if k[0] == "levels" and v is not None}
    # both directions' upper ends, a lower (its end False, or "halves" where built from halved cells)
    assert {(True, 0), (True, 1)} <= ends and any(up is not True for up, _ in ends)
    assert all(D.level_ok(c, delta) for c in used)
    assert two.accuracy_met(delta)
    monkeypatch.setattr(D, "LEVEL_MIN_STEPS", 10**15)
    lo1, hi1 = D.PLD([(pair, steps)]).bracket(delta)
    assert max(lo1, lo2) <= min(hi1, hi2)
    assert hi2 <= hi1 * (1 + 1e-3)  # no looser than the requested accuracy


def test_two_level_heterogeneous_history_overlaps_one_level(monkeypatch):
    """Two long factors and a short one: each long factor in its own blocks, the remainders and the short
    factor in one more block; the bracket overlaps the one-level bracket."""
    factors = [(B.SubsampledGaussianPair(1.0, 0.01), 60_000), (B.SubsampledGaussianPair(1.5, 0.01), 70_001),
               (B.GaussianPair(0.3), 1)]
    two = D.PLD(factors)
    lo2, hi2 = two.bracket(1e-6)
    assert any(k[0] == "levels" and v is not None for k, v in two._cache.items())
    monkeypatch.setattr(D, "LEVEL_MIN_STEPS", 10**15)
    lo1, hi1 = D.PLD(factors).bracket(1e-6)
    assert max(lo1, lo2) <= min(hi1, hi2)


@settings(max_examples=6, deadline=None, derandomize=True)
@given(st.sampled_from([1e-3, 3e-3, 0.01, 0.05]), st.floats(0.7, 3.0), st.integers(50_000, 400_000),
       st.sampled_from([1e-5, 1e-8, 1e-12]))
def test_default_bracket_is_consistent_with_one_level_and_rdp(q, sigma, steps, delta):
    """Soundness across the two-level / coarse-tail regime: the default bracket (two levels and coarse tails
    where they apply) overlaps the one-level uniform-grid bracket, and its lower end never exceeds the RDP
    accountant's epsilon (an independent valid upper bound: Mironov, Talwar & Zhang 2019)."""
    import privcal

    pair = B.SubsampledGaussianPair(sigma, q)
    lo2, hi2 = D.PLD([(pair, steps)]).bracket(delta)
    saved = D.LEVEL_MIN_STEPS, D.COARSE_TAIL_WIDTH
    try:
        D.LEVEL_MIN_STEPS, D.COARSE_TAIL_WIDTH = 10**15, 0.0
        lo1, hi1 = D.PLD([(pair, steps)]).bracket(delta)
    finally:
        D.LEVEL_MIN_STEPS, D.COARSE_TAIL_WIDTH = saved
    assert max(lo1, lo2) <= min(hi1, hi2)
    rdp = privcal.epsilon(sigma, delta, steps=steps, sample_rate=q, accountant="rdp")
    assert lo2 <= rdp


def test_grouped_fallback_charges_the_input_errors_it_cannot_carry():
    """A group whose input errors are too large to carry (l1 >= 1: growth inf) falls back to one level with
    those errors charged (``local`` set: an infinite slack, not a silent zero). (Grouped tilted compositions
    against one level: test_pld_certificate.py::test_long_histories_use_two_levels_and_agree_with_one.)"""
    x = B.Pmf(0, np.array([0.5, 0.5]), 0.0, 0.1, 2.0)  # declared input error l1 = 2: growth is inf
    c = C.compose_grouped([(x, 1), (B.Pmf(0, np.array([0.3, 0.7]), 0.0, 0.1), 2)], 1e-12)
    assert c.local is not None and math.isinf(C.local_err(c, 0.5))


def test_round_off_that_tips_the_width_is_tightened_on_the_same_grid(monkeypatch):
    """Where the discretisation alone fits the requested width but an untilted composition's round-off tips
    it over, the bracket retilts every composition on the same grid (strict) before refining the grid; the
    result overlaps the plain bracket (both certified). The width is set between the two parts here."""
    pair = B.SubsampledGaussianPair(1.0, 0.01)
    plain = D.PLD([(pair, 3000)])
    lo0, hi0 = plain._bracket_at(1e-5, plain._auto_h())
    disc, roff = plain._last_parts
    assert roff > 0
    target = disc / 0.98 + 0.5 * (disc + roff - disc / 0.98)  # 0.98 target >= disc, target < disc + roff
    assert disc <= 0.98 * target < disc + roff
    calls = []
    real = D.PLD._bracket_at

    def spy(self, delta, h, strict=False):
        calls.append((h, strict))
        return real(self, delta, h, strict)

    monkeypatch.setattr(D.PLD, "_bracket_at", spy)
    monkeypatch.setattr(D.PLD, "_width", lambda self, hi: target)
    pld = D.PLD([(pair, 3000)])
    lo, hi = pld.bracket(1e-5)
    assert calls[1] == (calls[0][0], True)  # the same grid, strict, before any other grid
    assert max(lo, lo0) <= min(hi, hi0)


@pytest.mark.parametrize("s, q, n, h", [(1.0, 1e-3, 15625, 2.0**-14), (0.8, 0.01, 1000, 2.0**-10),
                                        (2.0, 0.1, 50, 2.0**-7), (1.1, 0.05, 2, 2.0**-8)])
def test_self_composition_skips_only_coefficients_that_underflow(s, q, n, h):
    """One factor taken n times computes the power only where min(|X| + e, cap)^n can exceed e^{-750}: the
    masses and the round-off bound are bitwise those of the general path (which computes every coefficient
    and lets the others underflow to 0). Red when the cut is placed where a power still counts."""
    d = B.SubsampledGaussianPair(s, q).directions()[0]
    x = B.pmfs(d, h, upper=True, tail=1e-12)
    for tilt in (0.0, 0.3 * h):
        t = C.tilted(x, tilt)[0] if tilt else x
        fast = C.compose_fft([(t, n)], 1e-12)
        full = C.compose_fft([(t, n)], 1e-12, power=False)
        assert fast.offset == full.offset and np.array_equal(fast.mass, full.mass)
        assert fast.err == full.err
