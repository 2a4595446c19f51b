"""privcal's log Phi (privcal/privacy_loss/log_phi.py; docs/pld.md Sec. 2.2): the proven bound
|log_ndtr(z) - log Phi(z)| <= LOG_PHI_ERR u (2 + |log Phi(z)|) against mpmath at 60 digits, and each term of the
proof pinned: the charged term covers the worst error of its component computed in exact (mpmath / Fraction)
arithmetic, and a term removed or halved would not (the edit each test catches is in its docstring).

Every reference value is mpmath's: log Phi(z) = log(erfc(-z / sqrt 2) / 2) for z <= 0 and log1p(-erfc(z / sqrt 2) / 2)
for z > 0, at 60 digits.
"""

from __future__ import annotations

import math
from fractions import Fraction

import mpmath as mp
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from privcal.privacy_loss import log_phi as P

U = 2.0**-53


def _exact(z: float):
    """log Phi(z) at 60 digits (an mpmath number; -inf at z = -inf). For z >= 40 it is -Q(z) with
    0 < Q(z) <= phi(z) / z < 1e-349, below anything the bound can see: 0 is returned (mpmath overflows on erfc of
    z ~ 1e154)."""
    if z >= 40.0:
        return mp.mpf(0)
    with mp.workdps(60):
        zz = mp.mpf(z)
        if zz <= 0:
            return mp.log(mp.erfc(-zz / mp.sqrt(2)) / 2)
        return mp.log1p(-mp.erfc(zz / mp.sqrt(2)) / 2)


def _ratios(zs) -> np.ndarray:
    """|log_ndtr(z) - log Phi(z)| / (u (2 + |log Phi(z)|)) for each z."""
    got = P.log_ndtr(np.asarray(zs, dtype=float))
    out = np.empty(len(got))
    with mp.workdps(60):
        for i, (z, v) in enumerate(zip(zs, got)):
            exact = _exact(float(z))
            out[i] = float(abs(mp.mpf(float(v)) - exact) / (U * (2 + abs(exact))))
    return out


def _node_boundaries():
    """Each 40th node x_k = k / 32 of the table, the floats next to it on both sides, for z = -x and z = x, and the
    switch to the asymptotic series at x = 40."""
    xs = [k * P.STEP for k in range(0, int(P.X_MAX / P.STEP) + 1, 40)] + [P.X_MAX]
    zs = []
    for x in xs:
        for y in (math.nextafter(x, 0.0), x, math.nextafter(x, math.inf)):
            zs += [-y, y]
    return np.array(zs)


# ------------------------------------------------------------------------------------------------ the bound
def test_log_ndtr_is_within_its_proven_bound_against_mpmath():
    """A dense grid over [-40, 10], every 40th node of the table and its neighbours, the switch to the asymptotic
    series, and far arguments (z ~ -1000, -1e5, -1e150, 1e-300). Measured worst: 2.49 (z ~ -23.08, lower side; the
    proof's lower-side constant is 3.00, so its |v| coefficient is nearly attained); catches LOG_PHI_ERR 4 -> 2."""
    zs = np.concatenate([np.linspace(-40.0, 10.0, 2001), [-23.0778], _node_boundaries(),
                         [-1000.0, -1000.3, -1e5, -3.7e7, -1e150, -1.8e154, 1e-300, -1e-300, 5e-324, 0.0, 38.5]])
    ratios = _ratios(zs)
    assert ratios.max() <= P.LOG_PHI_ERR
    assert ratios.max() > 2.4  # the worst measured


@settings(max_examples=150, deadline=None)
@given(st.one_of(st.floats(-45.0, 12.0), st.floats(-1e6, 0.0), st.floats(allow_nan=False, allow_infinity=False)))
def test_log_ndtr_bound_holds_at_drawn_arguments(z):
    if z < -1.8961e154:  # log Phi(z) < -1.797e308: -inf is the float nearest it
        assert P.log_ndtr(z) == -math.inf
        return
    assert _ratios([z])[0] <= P.LOG_PHI_ERR


def test_many_points_give_bitwise_the_values_of_few():
    """mills_ratio gathers whole table rows for up to 4096 points and one row per coefficient above: the same
    operations in the same order, so 20,000 points at once equal them 1,000 at a time, bit for bit (the bound checked
    on small arrays above holds for large ones). Catches the two paths evaluating differently."""
    z = np.random.default_rng(2).uniform(-45.0, 12.0, 20_000)
    whole = P.log_ndtr(z)
    parts = np.concatenate([P.log_ndtr(z[i:i + 1000]) for i in range(0, z.size, 1000)])
    assert np.array_equal(whole.view(np.int64), parts.view(np.int64))


def test_log_ndtr_special_values_and_shapes():
    # log Phi(-inf) = -inf, log Phi(inf) = 0, NaN propagates; log Phi(0) = log(1/2); beyond z ~ -1.8961e154 log Phi is
    # below -1.797e308 (-inf); for z >= 40 log Phi(z) = -Q(z) > -1e-349 (mpmath), returned as -0.0
    got = P.log_ndtr(np.array([-np.inf, np.inf, np.nan, 0.0, -0.0, -2e154, 40.0, 1.8961503816218355e154]))
    assert got[0] == -np.inf and got[1] == 0.0 and np.isnan(got[2])
    assert abs(got[3] - math.log(0.5)) <= 2 * U and got[4] == got[3]
    assert got[5] == -np.inf and got[6] == 0.0 and got[7] == 0.0
    assert isinstance(P.log_ndtr(-1.0), np.floating) and P.log_ndtr(np.zeros((2, 3))).shape == (2, 3)
    assert P.log_ndtr(np.array([], dtype=float)).shape == (0,)


def test_the_derived_constants_are_within_log_phi_err_and_the_lower_one_is_nearly_attained():
    """derived_constants() = (3.00, 3.27) from the charged terms (module docstring) <= LOG_PHI_ERR = 4; the lower
    side's measured worst over z in [-40, 0] is 2.49 (z ~ -23.08), so the lower side's coefficient of |v|
    (sigma + 1 = 3: log's 2u, the square's and the sums' roundings, the final subtraction's u) cannot drop to 2:
    catches the final subtraction's u |v| dropped from the lower side
    (sigma + 1 -> sigma), and LOG_PHI_ERR lowered below 3.27."""
    lower, upper = P.derived_constants()
    assert max(lower, upper) <= P.LOG_PHI_ERR
    zs = np.concatenate([np.linspace(-40.0, 0.0, 801), [-23.0778]])
    assert _ratios(zs).max() <= lower
    assert _ratios([-23.0778])[0] > 2.4
    zp = np.linspace(0.0, 10.0, 401)[1:]
    assert _ratios(zp).max() <= upper


# ------------------------------------------------------------------------------------------ the table (exhaustive)
def test_every_table_entry_is_its_coefficient_rounded_to_nearest():
    """The shipped table (privcal/privacy_loss/_log_phi_table.py, written by tools/log_phi_table.py from mpmath at 60
    digits): each of its 10 x 1281 entries equals the float nearest the coefficient recomputed at 100 digits (an
    exhaustive check of a finite table). Catches an entry changed by one ulp, a table written at fewer digits (at 20
    the large-x coefficients lose their last digits), a coefficient recurrence changed, or a float32 table."""
    rows = P.coefficients(100)
    tab = P.table()
    assert tab.dtype == np.float64 and tab.shape == (P.TERMS, len(rows))
    for n in range(P.TERMS):
        assert all(float(c[n]) == t for c, t in zip(rows, tab[n])), n


def test_cell_charges_are_within_the_charged_constants():
    """TRUNC_REL, HORNER_REL, COEF_REL are at least the maxima of their per-cell charges over all 1280 cells, and
    above half of them (max 0.00214, 1.1043, 1.0512, all at x = 0): catches any of the three literals dropped or
    halved."""
    trunc, horner, coef = P.cell_charges()
    assert trunc.max() <= P.TRUNC_REL < 2 * trunc.max()
    assert horner.max() <= P.HORNER_REL < 2 * horner.max()
    assert coef.max() <= P.COEF_REL < 2 * coef.max()
    assert P.M_REL >= P.TRUNC_REL + P.HORNER_REL + P.COEF_REL and P.M_REL >= P.ASYM_TRUNC_REL + P.ASYM_ROUND_REL


def _cells():
    """Cells checked term by term: the first 20 (where the charges are largest), then each 16th."""
    return sorted(set(range(20)) | set(range(0, int(P.X_MAX / P.STEP), 16)) | {int(P.X_MAX / P.STEP) - 1})


def test_truncation_term_covers_the_taylor_remainder():
    """In exact arithmetic, |m(x_k + d) - sum_{n<10} c_n d^n| / m(x_{k+1}) at d = s (1 - 2^-30) is at most the cell's
    truncation charge |c_10| s^10 / m(x_{k+1}), and attains 0.999 of it (the first omitted term is the
    remainder to first order): catches the truncation charge dropped or halved."""
    rows = P.coefficients(60)
    trunc, _, _ = P.cell_charges()
    worst = 0.0
    with mp.workdps(60):
        s = mp.mpf(P.STEP)
        d = s * (1 - mp.mpf(2) ** -30)
        for k in _cells():
            c = rows[k]
            x = k * s + d
            m = mp.sqrt(mp.pi / 2) * mp.erfc(x / mp.sqrt(2)) * mp.exp(x * x / 2)
            rem = abs(m - sum(c[n] * d**n for n in range(P.TERMS))) / rows[k + 1][0] / mp.mpf(U)
            assert rem <= trunc[k], k
            worst = max(worst, float(rem / trunc[k]))
    assert worst > 0.99 and trunc.max() > P.TRUNC_REL / 2


def test_horner_term_covers_the_rounding_of_horner_rule():
    """The computed Mills ratio against the exact value of the same polynomial (the float coefficients, the exact d),
    relative to m(x_{k+1}): at most the cell's Horner charge; the worst over 3000 seeded points is 1.007 u against a
    charge of 1.104 u (at x = 0): catches the Horner charge dropped or halved (gamma_{2n+1} -> gamma_n leaves
    0.55 u)."""
    rng = np.random.default_rng(11)
    tab = P.table()
    _, horner, _ = P.cell_charges()
    rows = P.coefficients(60)
    ks = rng.integers(0, 24, 3000)
    ks[::3] = rng.integers(0, int(P.X_MAX / P.STEP), 1000)
    xs = (ks + rng.random(3000)) * P.STEP
    got = P.mills_ratio(xs)
    worst = 0.0
    for x, g in zip(xs, got):
        k = int(x / P.STEP)
        d = Fraction(float(x)) - Fraction(k, 32)
        exact = sum(Fraction(float(tab[n][k])) * d**n for n in range(P.TERMS))
        diff = abs(Fraction(float(g)) - exact)
        with mp.workdps(60):
            rel = float(mp.mpf(diff.numerator) / diff.denominator / rows[k + 1][0] / mp.mpf(U))
        assert rel <= horner[k]
        worst = max(worst, rel)
    assert worst > P.HORNER_REL / 2


def test_coefficient_term_covers_the_rounding_of_the_table():
    """|sum_n (c_hat_n - c_n) d^n| / m(x_{k+1}) at d = 0 and d = s (exact arithmetic) is at most the cell's
    coefficient charge, and reaches 0.98 u against COEF_REL = 1.052 over all cells: catches the coefficients'
    rounding dropped or halved."""
    rows = P.coefficients(60)
    tab = P.table()
    _, _, coef = P.cell_charges()
    worst = 0.0
    with mp.workdps(60):
        s = mp.mpf(P.STEP)
        for k in range(int(P.X_MAX / P.STEP)):
            for d in (0, s):
                err = abs(sum((mp.mpf(float(tab[n][k])) - rows[k][n]) * d**n for n in range(P.TERMS)))
                rel = float(err / rows[k + 1][0] / mp.mpf(U))
                assert rel <= coef[k]
                worst = max(worst, rel)
    assert worst > P.COEF_REL / 2


# -------------------------------------------------------------------------------------------- asymptotic series
def test_asymptotic_remainder_is_within_its_charge():
    """At x >= 40 the 7-term series' remainder relative to m(x) (mpmath) is at most ASYM_TRUNC_REL u = 0.046 u and is
    0.04495 u at x = 40 (the first omitted term 13!! / x^15 to first order): catches the remainder charge dropped or
    halved, or ASYM_TERMS lowered to 6 (remainder 10395 / 40^12 = 5.6 u), or X_MAX to 30 with a table written for it
    (2.6 u at x = 30)."""
    worst = 0.0
    with mp.workdps(60):
        for x in (P.X_MAX, 40.5, 48.0, 64.0, 1e3):
            xx = mp.mpf(x)
            m = mp.sqrt(mp.pi / 2) * mp.erfc(xx / mp.sqrt(2)) * mp.exp(xx * xx / 2)
            series = sum(mp.mpf(a) / xx ** (2 * k + 1) for k, a in enumerate(P.ASYM_COEFFICIENTS))
            rel = float(abs(series - m) / m / mp.mpf(U))
            assert rel <= P.ASYM_TRUNC_REL
            worst = max(worst, rel)
    assert worst > P.ASYM_TRUNC_REL / 2


def test_asymptotic_rounding_is_within_its_charge():
    """The computed series (floats) against the exact series at the same x (mpmath), relative: at most
    ASYM_ROUND_REL u = 2.004 u; worst over 3000 seeded x in [40, 1e160] is 1.42 u: catches the rounding charge
    dropped or below 1.42 u (ASYM_ROUND_REL halved: 1.002 u)."""
    rng = np.random.default_rng(3)
    xs = np.concatenate([rng.uniform(40.0, 80.0, 2000), np.exp(rng.uniform(math.log(80.0), math.log(1e160), 1000))])
    got = P.mills_asymptotic(xs)
    worst = 0.0
    with mp.workdps(60):
        for x, g in zip(xs, got):
            xx = mp.mpf(float(x))
            series = sum(mp.mpf(a) / xx ** (2 * k + 1) for k, a in enumerate(P.ASYM_COEFFICIENTS))
            rel = float(abs(mp.mpf(float(g)) - series) / series / mp.mpf(U))
            assert rel <= P.ASYM_ROUND_REL
            worst = max(worst, rel)
    assert worst > P.ASYM_ROUND_REL / 2


# ----------------------------------------------------------------------------- the lower and upper sides' roundings
def test_square_rounding_is_within_its_charge():
    """a = (x / 2) x against x^2 / 2 in exact rationals: within SQUARE_REL u relative, and 0.987 u is reached over
    3000 seeded x: catches SQUARE_REL dropped or halved."""
    rng = np.random.default_rng(5)
    xs = np.concatenate([rng.uniform(0.0, 40.0, 2000), np.exp(rng.uniform(0.0, 300.0, 1000))])
    worst = 0.0
    for x in xs:
        a = (0.5 * x) * x
        exact = Fraction(float(x)) ** 2 / 2
        if exact:
            worst = max(worst, float(abs(Fraction(a) - exact) / exact) / U)
    assert worst <= P.SQUARE_REL
    assert worst > P.SQUARE_REL / 2


def test_libm_roundings_are_within_the_assumed_ulps():
    """numpy's log (of the Mills ratio), log1p (of -Q) and exp (of -a) at the arguments log_ndtr gives them, against
    mpmath: each within LIBM_ULPS ulp (the assumption of the proof, checked on this machine), and each above 0.4 ulp
    somewhere (a relative 0.4 u at least): catches LIBM_ULPS lowered below 0.4 (its roundings not charged)."""
    rng = np.random.default_rng(9)
    x = rng.uniform(0.0, 40.0, 1500)
    m = P.mills_ratio(x)
    a = (0.5 * x) * x
    q = -(m * P.INV_SQRT_2PI) * np.exp(-a)
    for f, mf, args in ((np.log, mp.log, m), (np.log1p, mp.log1p, q[q < -1e-300]), (np.exp, mp.exp, -a)):
        got = f(args)
        worst = 0.0
        with mp.workdps(40):
            for v, g in zip(args, got):
                exact = mf(mp.mpf(float(v)))
                if exact == 0 or abs(exact) < 1e-300:
                    continue
                worst = max(worst, float(abs(mp.mpf(float(g)) - exact)) / math.ulp(float(exact)))
        assert 0.4 < worst <= P.LIBM_ULPS, f


def test_q_square_bounds_the_upper_sides_argument_term():
    """(z^2 / 2) Q(z) / (1 - Q(z)) <= z phi(z) <= phi(1) = 0.2420 <= Q_SQUARE (proof: Q <= phi(z) / z, 1 - Q >= 1/2);
    mpmath on a grid of z in (0, 12]: the quantity peaks at 0.0950 (z ~ 1.0) and z phi(z) at phi(1). Catches
    Q_SQUARE dropped (the term exists: 0.0950 > 0) or set below phi(1)."""
    with mp.workdps(30):
        zs = [mp.mpf(i) / 100 for i in range(1, 1201)]
        quantity = max(z * z / 2 * mp.ncdf(-z) / mp.ncdf(z) for z in zs)
        bound = max(z * mp.npdf(z) for z in zs)
        assert quantity <= bound <= mp.npdf(1) <= P.Q_SQUARE
        assert quantity > 0.09 and mp.npdf(1) > 0.24


def test_inputs_of_other_types_are_evaluated_as_float64():
    # the proof is for float64 arithmetic: float32, small integer and boolean inputs are converted first, so their
    # values are bitwise those of the float64 inputs (in float32, or with int8 squares, they were off by up to 2e-5)
    as64 = lambda a: P.log_ndtr(np.asarray(a, dtype=np.float64))
    for a in (np.array([-3.0, 0.5, -37.2], dtype=np.float32), np.array([-3, 0, 2, -50], dtype=np.int8),
              np.array([True, False])):
        np.testing.assert_array_equal(P.log_ndtr(a), as64(a))
