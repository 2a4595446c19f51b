"""The proven error bound of the WBK Thm 27 forward differences (privcal.analysis.subsampling, docs/rdp.md).

References are 300-digit mpmath values: the forward differences by their alternating sums
Delta^l = sum_k (-1)^(l-k) C(l, k) e^{k(k-1)/(2 s^2)} (exact; at s <= 30 and l <= 258 the cancellation costs
at most 175 of the 300 digits), the RDP by WBK Thm 27's sum on those values. Each reference is computed once per
module. What each test catches is said in its comment (each was checked by editing the code and rerunning).
"""

from __future__ import annotations

import functools
import math

import mpmath
import numpy as np
import pytest
from scipy.special import gammaln

from privcal.analysis import subsampling as S
from privcal.analysis import wbk_quadrature as Q
from privcal.analysis.subsampling import rdp_without_replacement_gaussian

L = np.arange(2, 259, 2, dtype=float)  # every even row privcal uses (Thm 27 up to order 256 reads rows <= 258)
SIGMAS = (0.3, 0.5, 1.0, 4.0, 30.0)


@functools.lru_cache(maxsize=None)
def exact_log_delta(s: float) -> np.ndarray:
    """ln Delta^l at every even l <= 258 (300-digit alternating sums), and its exact mpf values."""
    with mpmath.workdps(300):
        sm = mpmath.mpf(s)
        moments = [mpmath.exp(mpmath.mpf(k) * (k - 1) / (2 * sm * sm)) for k in range(259)]
        out = []
        for l in L.astype(int):
            binom = mpmath.mpf(1)
            total = mpmath.mpf(0)
            for k in range(l + 1):  # C(l, k) by the recurrence, exactly
                total += (-1) ** (l - k) * binom * moments[k]
                binom = binom * (l - k) / (k + 1)
            out.append(mpmath.log(total))
    return out


def excess(s: float) -> np.ndarray:
    """privcal's ln Delta^l minus the exact one, for every even l <= 258 (fresh rows, no cache)."""
    got = Q.forward_difference_rows(s, L)
    return np.array([float(g - r) if np.isfinite(g) else math.inf for g, r in zip(got, exact_log_delta(s))])


@pytest.mark.parametrize("s", SIGMAS)
def test_forward_differences_are_upper_bounds_within_their_rounding_term(s):
    # never below the exact value; above it by at most 1e-8 in log (the rounding term is < 6.1e-9 here).
    # Catches: the step raised to 0.4 (the discretisation bound reaches e^280 times Delta at s = 30), the window
    # halved to 5.5 (its end terms charge 2.4e-7 at s <= 1)
    d = excess(s)
    assert d.min() >= 0.0
    assert d.max() <= 1e-8


def test_discretisation_term_covers_a_coarse_step(monkeypatch):
    # at step 2 the trapezoid rule is off by up to ~15 % of Delta (both signs, by the lattice's offset): the charged
    # Trefethen-Weideman term must keep the value above the exact one. Catches: the term deleted from the sum
    # (then ln Delta comes out below the exact value by up to 0.165 at s = 30, 0.007 at s = 0.3)
    monkeypatch.setattr(Q, "Z_STEP", 2.0)
    for s in SIGMAS:
        assert excess(s).min() >= 0.0


@pytest.mark.parametrize("s, l, h", [(0.3, 2, 2.0), (4.0, 16, 1.0), (30.0, 258, 0.4), (1.0, 100, 0.0625)])
def test_discretisation_term_is_the_trefethen_weideman_bound(s, l, h):
    # ln(2 * 2M / (e^{2 pi a/h} - 1)) with M = e^{a^2/2} sum_k C(l, k) e^{k(k-1)/(2 s^2)} and a = 2 pi / h
    # (Trefethen & Weideman 2014, Thm 5.1; the first factor 2 is margin), in 50-digit mpmath. Catches: a wrong
    # constant, a or M
    got = Q.log_discretisation_bound(s, np.array([float(l)]), h)[0]
    with mpmath.workdps(50):
        a = 2 * mpmath.pi / h
        moment = mpmath.fsum(mpmath.binomial(l, k) * mpmath.exp(mpmath.mpf(k) * (k - 1) / (2 * mpmath.mpf(s) ** 2))
                             for k in range(l + 1))
        ref = mpmath.log(4 * mpmath.exp(a * a / 2) * moment / (mpmath.exp(2 * mpmath.pi * a / h) - 1))
    assert abs(got - float(ref)) <= 1e-9 * max(1.0, abs(float(ref)))


def test_window_term_covers_a_narrow_window(monkeypatch):
    # with windows of +- 1 around each peak the windowed sum misses ~30 % of Delta: the charged end terms must
    # cover it. Catches: the end terms deleted (ln Delta then ~0.35 below the exact value), the factor 1/2 of
    # the end terms lowered (to 1/(2 sqrt(2 pi)): 0.06 below at s = 0.3)
    monkeypatch.setattr(Q, "Z_HALF_WINDOW", 1.0)
    for s in SIGMAS:
        assert excess(s).min() >= 0.0


def test_window_ends_are_checked_to_point_away_from_their_hump(monkeypatch):
    # windows centred 15 from the peaks towards z0 hold little of Delta and their outer ends lie on the descent
    # of their humps: the bound on what is left out does not hold there, and the row must come out +inf (then
    # Thm 9's term is taken), never below the exact value. Catches: the slope check deleted
    peaks = Q.hump_peaks
    monkeypatch.setattr(Q, "hump_peaks", lambda l, s, z0: tuple(p + d for p, d in zip(peaks(l, s, z0), (15.0, -15.0))))
    for s in (0.5, 4.0):
        d = excess(s)
        assert d.min() >= 0.0 and np.isinf(d).any()


def test_inner_window_ends_cover_the_points_between_the_windows(monkeypatch):
    # a window centred 10.5 beyond its peak (outwards) ends 0.5 past the peak on the inner side: what lies between
    # the windows (up to half of that hump) is covered by that inner end's term alone (the outer ends' are ~e^-60
    # of their peaks), and the checks pass (the inner end is on its hump's descent towards z0). Catches: either
    # inner end left out of the charge
    # (one window moved at a time: each inner end's term must cover its own side)
    peaks = Q.hump_peaks
    for shifts in ((-10.5, 0.0), (0.0, 10.5)):
        monkeypatch.setattr(Q, "hump_peaks", lambda l, s, z0: tuple(p + d for p, d in zip(peaks(l, s, z0), shifts)))
        for s in (4.0, 30.0):
            d = excess(s)
            assert np.isfinite(d).all() and d.min() >= 0.0


@pytest.mark.parametrize("s", [0.3, 4.0])
def test_rounding_term_is_charged(s):
    # the value returned exceeds ln(T + R + D) -- its windowed sum, end terms and discretisation term evaluated
    # exactly (50-digit mpmath on the same nodes) -- by at least half the rounding term
    # rho = 2^-48 (l (z_max/s + c + 36 + |ln 2s^2|) + z_max^2 + n) (docs/rdp.md, section 4): the float evaluation
    # is well inside it. Catches: rho deleted or cut tenfold (then the excess is within +-1e-12, rho >= 2.5e-12)
    rows = np.array([2.0, 16.0, 258.0])
    got = Q.forward_difference_rows(s, rows)
    left, right = Q.hump_peaks(rows, s, 0.5 / s)
    h, half = Q.Z_STEP, int(Q.Z_HALF_WINDOW / Q.Z_STEP)
    disc = Q.log_discretisation_bound(s, rows, h)
    with mpmath.workdps(50):
        sm = mpmath.mpf(s)

        def g(k, l):  # phi(z) (e^{z/s - 1/(2s^2)} - 1)^l at z = k h, exactly
            z = mpmath.mpf(k) * h
            return mpmath.npdf(z) * (mpmath.exp(z / sm - 1 / (2 * sm * sm)) - 1) ** l

        for i, l in enumerate(rows.astype(int)):
            kl, kr = int(round(left[i] / h)), int(round(right[i] / h))
            nodes = sorted(set(range(kl - half, kl + half + 1)) | set(range(kr - half, kr + half + 1)))
            total = h * mpmath.fsum(g(k, l) for k in nodes)
            ends = [kl - half, kr + half]
            z0 = 0.5 / s
            if kr - half > kl + half:  # a gap between the windows: inner ends on their own side of z0
                ends += [k for k, side in ((kl + half, -1), (kr - half, 1)) if side * (k * h - z0) > 0]
            rest = mpmath.sqrt(mpmath.pi / 2) * mpmath.fsum(g(k, l) for k in ends)
            exact = mpmath.log(total + rest + mpmath.exp(disc[i]))
            z_max = max(abs(kl), abs(kr)) * h + half * h
            rho = 2.0**-48 * (l * (z_max / s + 0.5 / s**2 + 36 + abs(math.log(2 * s * s))) + z_max**2 + 2 * (2 * half + 1))
            assert float(got[i] - exact) >= 0.5 * rho


# ---------------------------------------------------------------------------------------------
# The RDP of sampling without replacement (WBK Thm 27) against its 300-digit value
# ---------------------------------------------------------------------------------------------

#: integer orders across privcal's default grid (privcal.analysis.rdp.DEFAULT_ORDERS reaches 10,000), around Thm 27's
#: last order 256
ORDERS = np.array([2.0, 3.0, 4.0, 7.0, 16.0, 33.0, 64.0, 128.0, 255.0, 256.0, 257.0, 1024.0, 10000.0])


@functools.lru_cache(maxsize=None)
def exact_log_coefficients(s: float) -> list:
    """ln c_j of WBK Thm 27 for j = 2..max order: min{4 sqrt(Delta^{2 floor(j/2)} Delta^{2 ceil(j/2)}), 2 e^{(j-1) eps(j)}}
    for j <= 256 (min{4 (e^{1/s^2} - 1), 2 e^{1/s^2}} at j = 2), Thm 9's 2 e^{(j-1) eps(j)} above; 300 digits."""
    log_delta = exact_log_delta(s)
    with mpmath.workdps(300):
        sm = mpmath.mpf(s)
        log_c = [None, None, min(mpmath.log(4 * mpmath.expm1(1 / sm**2)), mpmath.log(2) + 1 / sm**2)]
        for j in range(3, int(ORDERS.max()) + 1):
            thm9 = mpmath.log(2) + mpmath.mpf(j - 1) * j / (2 * sm * sm)
            if j <= S.THM27_MAX_ORDER:
                lo, hi = 2 * (j // 2), 2 * ((j + 1) // 2)
                thm9 = min(thm9, mpmath.log(4) + (log_delta[lo // 2 - 1] + log_delta[hi // 2 - 1]) / 2)
            log_c.append(thm9)
    return log_c


@functools.lru_cache(maxsize=None)
def log_factorials() -> list:
    with mpmath.workdps(300):
        out = [mpmath.mpf(0)]
        for n in range(1, int(ORDERS.max()) + 1):
            out.append(out[-1] + mpmath.log(n))
    return out


def exact_thm27(s: float, q: float) -> list:
    """WBK Thm 27 at ORDERS with exact forward differences, capped by alpha / (2 s^2) and made non-increasing towards
    smaller orders (as privcal does; both only lower a valid bound), in 300-digit mpmath. The terms more than 1000
    nats below the largest one (located in float64, to within 1 nat) are left out: together they are below
    e^-990 < 10^-300 of the sum."""
    log_c, lf = exact_log_coefficients(s), log_factorials()
    log_c_float = np.array([np.nan, np.nan] + [float(c) for c in log_c[2:]])
    with mpmath.workdps(300):
        sm, log_q = mpmath.mpf(s), mpmath.log(q)
        out = []
        for alpha in (int(a) for a in ORDERS):
            j = np.arange(2, alpha + 1)
            approx = gammaln(alpha + 1) - gammaln(j + 1) - gammaln(alpha - j + 1) + j * math.log(q) + log_c_float[j]
            keep = j[approx >= approx.max() - 1000.0]
            total = mpmath.fsum(mpmath.exp(lf[alpha] - lf[k] - lf[alpha - k] + k * log_q + log_c[k])
                                for k in (int(i) for i in keep))
            out.append(min(mpmath.log1p(total) / (alpha - 1), mpmath.mpf(alpha) / (2 * sm * sm)))
        for i in range(len(out) - 2, -1, -1):
            out[i] = min(out[i], out[i + 1])
    return out


@pytest.mark.parametrize("s", [0.3, 0.5, 1.0, 4.0])
@pytest.mark.parametrize("q", [1e-3, 0.1, 0.9, 0.999])
def test_rdp_without_replacement_never_below_its_300_digit_value(s, q):
    # never below, and within 1e-8 relative (the rounding-up of the cumulant is 2^-36 = 1.5e-11; the forward
    # differences' rounding term is < 6.1e-9)
    got = rdp_without_replacement_gaussian(ORDERS, s, q)
    for value, ref in zip(got, exact_thm27(s, q)):
        assert value >= ref
        assert value <= ref * (1 + 1e-8)
