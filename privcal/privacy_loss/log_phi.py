r"""log Phi(z), the log of the standard normal CDF, with a proven error bound (docs/pld.md Sec. 2.2).

:func:`log_ndtr` has the contract of ``scipy.special.log_ndtr`` (a float array in, a float array out) and, for
every float z whose log Phi(z) is a float (z >= -1.8961e154; below, log Phi(z) < -1.797e308 and -inf is
returned, the float nearest it),

    |log_ndtr(z) - log Phi(z)| <= LOG_PHI_ERR u (2 + |log Phi(z)|),   u = 2^-53,   LOG_PHI_ERR = 4,

and log_ndtr(-inf) = -inf, log_ndtr(inf) = 0, log_ndtr(nan) = nan. The proof derives 3.00 for z <= 0 and 3.27 for
z > 0 (:func:`derived_constants`); 3.27 (2 + |v|) <= 4 (2 + |v_hat|) for the computed v_hat as well, so the bound
may be evaluated at the computed value.
Assumed, as docs/pld.md assumes for cos and sin: numpy's ``exp``, ``log`` and ``log1p`` are within 1 ulp
(``LIBM_ULPS``; a relative 2u), and ``+``, ``*``, ``/`` round to nearest (numpy does not contract them into fma).

**The Mills ratio.** For x >= 0 let Q(x) = 1 - Phi(x) and m(x) = Q(x) / phi(x) = int_0^inf e^{-x t - t^2/2} dt (a
Laplace transform of a positive function). So m is entire, (-1)^n m^(n)(x) = int t^n e^{-x t - t^2/2} dt > 0
(completely monotone: every |m^(n)| decreases), and m' = x m - 1. Then

    log Phi(z) = log m(x) - x^2/2 - log sqrt(2 pi)        (z = -x <= 0),
    log Phi(z) = log1p(-m(z) e^{-z^2/2} / sqrt(2 pi))     (z > 0).

*The table* (x < X_MAX = 40). At the nodes x_k = k s, s = 2^-5 (k = 0..1280), the Taylor coefficients of
m(x_k + d) = sum_n c_n d^n follow from m' = x m - 1: c_0 = m(x_k), c_1 = x_k c_0 - 1,
(n + 1) c_{n+1} = x_k c_n + c_{n-1}; they alternate in sign. They are computed with mpmath at 60 digits
(:func:`coefficients`; the recurrence cancels about log10(x_k^2) <= 3.3 digits per step, 33 in all, so each is within
1e-25 relative of the exact value), rounded to nearest and shipped (``_log_phi_table``, written by
tools/log_phi_table.py; every entry is checked against 100 digits in tests/test_log_phi.py):
|c_hat_n - c_n| <= u (1 + 1e-8) |c_n|. For x in [x_k, x_k + s), k = floor(32 x) and d = x - x_k are exact
(Sterbenz), and m is evaluated by Horner's rule with TERMS = 10 coefficients. Three errors, relative to
m(x) >= m(x_{k+1}) (m decreases), each bounded on every cell by its value at d = s (they grow with d), the maximum
over the 1280 cells taken exhaustively (:func:`cell_charges`):

* truncation: by Lagrange's remainder and the decreasing |m^(N)|, |m(x) - sum_{n<N} c_n d^n| <= |c_N| d^N
  (the first omitted term): ``TRUNC_REL``;
* Horner's rounding (Higham 2002, Sec. 5.1, term by term): |p_hat - p| <= sum_n gamma_{2n+1} |c_hat_n| d^n with
  gamma_j = j u / (1 - j u); products that underflow add at most 2^-1074 in all (m >= 0.0249: negligible):
  ``HORNER_REL``;
* the coefficients' rounding: u (1 + 1e-8) sum_n |c_n| d^n: ``COEF_REL``.

*The asymptotic series* (x >= X_MAX). Expanding e^{-t^2/2} in the integral with Taylor's alternating remainder,
x m(x) = sum_{k<K} (-1)^k (2k - 1)!! w^k + R, w = 1/x^2, |R| <= (2K - 1)!! w^K (the expansion of
Abramowitz & Stegun 26.2.12; the remainder does not exceed the first omitted term); K = 7 gives
13!! / 40^14 / (1 - w) <= 0.046 u relative (``ASYM_TRUNC_REL``). Rounding: w = 1/(x x) within gamma_2, Horner in w
with exact integer coefficients (gamma_{2k+1} per term), the slope |S'| <= 1.01 times w's error, and the division
by x (u): ``ASYM_ROUND_REL``.
Overflow of x x (x > 1.34e154) gives w = 0: an error below 1e-308 relative.

Together m_hat = m (1 + e), |e| <= mu = M_REL u.

*Lower side*, z = -x <= 0, A = x^2/2, B = log sqrt(2 pi), L = log m(x) <= log m(0) = 0.2258, v = L - A - B:
log(m_hat) is within mu (1 + mu) of L, log's rounding adds lambda |L| (lambda = 2 LIBM_ULPS u); a = (x/2) x is within
SQUARE_REL u A (x/2 exact); B_hat within u B; a + B_hat within u (A + B) more; the subtraction u |v|. With
|L| + A + B <= |v| + 2 (0.2258) and sigma = max(lambda / u, SQUARE_REL + 1, 2):
|v_hat - v| <= u (mu/u + 0.4516 sigma + (sigma + 1) |v|) to first order, so
C >= max(sigma + 1, (mu/u + 0.4516 sigma)/2).

*Upper side*, z > 0, Q = m(z) phi(z) <= 1/2, v = log1p(-Q): Q_hat = (m_hat kappa_hat) exp(-a) (kappa = 1/sqrt(2 pi))
carries a relative r0 = mu + 3u + lambda (kappa's rounding, two products, exp) and the factor e^{SQUARE_REL u A} of
the argument's rounding. |log1p(-Q_hat) - log1p(-Q)| <= |Q_hat - Q| / (1 - Q) to first order; Q / (1 - Q) <=
|v| / ln 2 (Q / ((1 - Q) |log(1 - Q)|) increases on (0, 1/2]) and A Q / (1 - Q) <= z phi(z) <= phi(1) < Q_SQUARE
(Q <= phi(z)/z, 1 - Q >= 1/2); log1p's rounding adds lambda |v|; |v| <= ln 2. So
|v_hat - v| <= u ((r0/u / ln 2 + lambda/u) |v| + SQUARE_REL Q_SQUARE), and C >= (r0/u + ln 2 lambda/u +
SQUARE_REL Q_SQUARE) / (2 + ln 2). For z >= 40, log Phi(z) = -Q(z) > -1e-349 and -0.0 is returned.

Underflow (x < 1e-154 in a, exp(-a) or Q_hat subnormal near z = 38) adds absolute errors below 1e-300, covered by
the 2 of (2 + |v|). Each term has a test that fails when it is removed or weakened (tests/test_log_phi.py).
"""

from __future__ import annotations

import base64
import functools
import math

import numpy as np

__all__ = [
    "log_ndtr", "LOG_PHI_ERR", "derived_constants", "coefficients", "table", "cell_charges", "mills_ratio",
    "mills_asymptotic", "ASYM_COEFFICIENTS", "INV_SQRT_2PI", "STEP", "TERMS", "X_MAX", "ASYM_TERMS", "TRUNC_REL",
    "HORNER_REL", "COEF_REL", "ASYM_TRUNC_REL", "ASYM_ROUND_REL", "M_REL", "SQUARE_REL", "LIBM_ULPS", "Q_SQUARE",
]

U = 2.0**-53
#: node spacing of the Taylor table (a power of two: the node and d = x - x_k are exact)
STEP = 2.0**-5
#: Taylor coefficients kept per node (a polynomial of degree TERMS - 1 in d)
TERMS = 10
#: the table covers [0, X_MAX); beyond, the asymptotic series of the Mills ratio
X_MAX = 40.0
#: terms of the asymptotic series sum_{k<K} (-1)^k (2k - 1)!! w^k (its remainder is at most (2K - 1)!! w^K)
ASYM_TERMS = 7
_NODES = int(X_MAX / STEP)  # cells 0 .. _NODES - 1; node _NODES (x = X_MAX) bounds the last cell's m
#: the asymptotic series' coefficients (-1)^k (2k - 1)!!, k < ASYM_TERMS (exact in float64)
ASYM_COEFFICIENTS = tuple(float((-1) ** k * math.prod(range(1, 2 * k, 2))) for k in range(ASYM_TERMS))
_DIGITS = 60
_X_LAST = math.nextafter(X_MAX, 0.0)  # the largest float of the table's range
_GATHER_ROWS = 4096  # up to this many points, mills_ratio gathers whole rows of the table (fewer numpy calls)

# Relative error of the computed Mills ratio, in units of u (the derivation is in the module docstring; each table
# term is at least the maximum over the cells of cell_charges(), checked in tests/test_log_phi.py).
#: truncation of the Taylor series after TERMS terms: max_k |c_N(x_k)| s^N / m(x_{k+1}) = 0.00214 (at x = 0)
TRUNC_REL = 0.003
#: Horner's rounding, max_k sum_n gamma_{2n+1} (1 + u) |c_n| s^n / m(x_{k+1}) / u = 1.1043 (at x = 0)
HORNER_REL = 1.105
#: the coefficients' rounding to nearest, max_k (1 + 1e-8) sum_n |c_n| s^n / m(x_{k+1}) = 1.0512 (at x = 0)
COEF_REL = 1.052
#: the asymptotic series' remainder at x >= X_MAX: 13!! / X_MAX^14 / (1 - X_MAX^-2) / u = 0.0454
ASYM_TRUNC_REL = 0.046
#: the asymptotic series' rounding at x >= X_MAX: 1 + (1 + gamma_3/u w + 3 gamma_5/u w^2 + ... + 1.01 gamma_2/u w)
#: / (1 - w) = 2.0038 at w = X_MAX^-2
ASYM_ROUND_REL = 2.004
#: mu / u: the computed Mills ratio is within a relative M_REL u of m(x) for every x >= 0 (+ 1e-280: underflow)
M_REL = max(TRUNC_REL + HORNER_REL + COEF_REL, ASYM_TRUNC_REL + ASYM_ROUND_REL) + 1e-280
#: a = (x / 2) x is within a relative SQUARE_REL u of x^2 / 2 (one rounded product)
SQUARE_REL = 1.0
#: assumed accuracy of numpy's exp, log and log1p, in ulps (a relative 2 u LIBM_ULPS each; docs/pld.md Sec. 2.2)
LIBM_ULPS = 1.0
#: sup_{z > 0} (z^2 / 2) Q(z) / (1 - Q(z)) <= sup z phi(z) = phi(1) = 0.2420 (Q <= phi(z) / z, 1 - Q >= 1/2)
Q_SQUARE = 0.25
#: |log_ndtr(z) - log Phi(z)| <= LOG_PHI_ERR u (2 + |log Phi(z)|) for every float z (max(derived_constants()) = 3.27)
LOG_PHI_ERR = 4.0

_LOG_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)  # 0.9189..., rounded to nearest (within u of the exact value)
#: 1 / sqrt(2 pi) = 0.3989..., rounded to nearest (within u)
INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
_LN2 = math.log(2.0)


def derived_constants() -> tuple[float, float]:
    """The constants C of |log_ndtr(z) - log Phi(z)| <= C u (2 + |log Phi(z)|) that the proof gives from the charged
    terms (module docstring): the larger of the lower side's max(sigma + 1, (mu + 0.4516 sigma) / 2) and the upper
    side's (r0 + ln 2 lambda + SQUARE_REL Q_SQUARE) / (2 + ln 2), in units of u, times 1 + 1e-6 for the second-order
    terms (products of two errors, each below 1e-13); (lower side z <= 0, upper side z > 0)."""
    lam = 2.0 * LIBM_ULPS
    sigma = max(lam, SQUARE_REL + 1.0, 2.0)
    lower = max(sigma + 1.0, (M_REL + 2.0 * 0.2258 * sigma) / 2.0)
    r0 = M_REL + 3.0 + lam
    upper = max(SQUARE_REL * Q_SQUARE / 2.0, (r0 + _LN2 * lam + SQUARE_REL * Q_SQUARE) / (2.0 + _LN2))
    return lower * (1.0 + 1e-6), upper * (1.0 + 1e-6)


def coefficients(digits: int = _DIGITS) -> list:
    """The Taylor coefficients c_0 .. c_TERMS (one more than the table keeps: c_TERMS bounds the truncation) of the
    Mills ratio m(x) = Q(x) / phi(x) at the nodes x_k = k STEP, k = 0 .. X_MAX / STEP, as mpmath numbers at ``digits``
    significant digits: c_0 = sqrt(pi / 2) erfc(x_k / sqrt 2) e^{x_k^2 / 2}, c_1 = x_k c_0 - 1,
    (n + 1) c_{n+1} = x_k c_n + c_{n-1} (from m' = x m - 1).

    Args:
        digits: working precision of mpmath, an int >= 50 (the recurrence cancels up to 33 digits).
    """
    rows = []
    import mpmath as mp  # only to build or check the table (tools/log_phi_table.py, the tests)

    with mp.workdps(digits):
        root_half_pi, root2, step = mp.sqrt(mp.pi / 2), mp.sqrt(2), mp.mpf(STEP)
        for k in range(_NODES + 1):
            x = k * step
            c = [root_half_pi * mp.erfc(x / root2) * mp.exp(x * x / 2)]
            c.append(x * c[0] - 1)
            for n in range(1, TERMS):
                c.append((x * c[n] + c[n - 1]) / (n + 1))
            rows.append(c)
    return rows


@functools.lru_cache(maxsize=1)
def table() -> np.ndarray:
    """The coefficient table, rounded to nearest: a read-only float array of shape (TERMS, X_MAX / STEP + 1), row n
    holding c_n at every node. Shipped in ``_log_phi_table`` (written by tools/log_phi_table.py from
    :func:`coefficients`; every entry checked against 100 digits in tests/test_log_phi.py), read at first use."""
    from . import _log_phi_table as shipped

    if (shipped.STEP, shipped.TERMS, shipped.X_MAX) != (STEP, TERMS, X_MAX):
        raise RuntimeError("privcal/privacy_loss/_log_phi_table.py does not match log_phi's STEP, TERMS, X_MAX: "
                           "run tools/log_phi_table.py")
    out = np.frombuffer(base64.b64decode(shipped.TABLE), dtype="<f8").astype(float).reshape(shipped.SHAPE)
    out.setflags(write=False)
    return out


def cell_charges(digits: int = _DIGITS) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per cell [x_k, x_k + STEP) of the table, the three relative error bounds of the computed Mills ratio in units
    of u, each at d = STEP (where it is largest) over m(x_{k+1}) (the smallest m in the cell): the truncation
    |c_N| s^N, Horner's rounding sum_n gamma_{2n+1} (1 + u) |c_n| s^n and the coefficients' rounding
    u sum_n |c_n| s^n (module docstring), each times 1 + 1e-8 for the error of the 60-digit coefficients. Their
    maxima are at most TRUNC_REL, HORNER_REL and COEF_REL.

    Args:
        digits: working precision of mpmath, an int >= 50.
    """
    rows = coefficients(digits)
    trunc, horner, coef = (np.empty(_NODES) for _ in range(3))
    import mpmath as mp

    with mp.workdps(digits):
        u, s, room = mp.mpf(U), mp.mpf(STEP), 1 + mp.mpf("1e-8")  # room: the 60-digit values' own error
        gam = [j * u / (1 - j * u) for j in range(2 * TERMS + 2)]
        for k in range(_NODES):
            c, m_next = rows[k], rows[k + 1][0]
            terms = [abs(c[n]) * s**n for n in range(TERMS)]
            trunc[k] = float(room * abs(c[TERMS]) * s**TERMS / m_next / u)
            horner[k] = float(room * sum(gam[2 * n + 1] * (1 + u) * t for n, t in enumerate(terms)) / m_next / u)
            coef[k] = float(room * sum(terms) / m_next)
    return trunc, horner, coef


def mills_asymptotic(x: np.ndarray) -> np.ndarray:
    """The Mills ratio for x >= X_MAX by its asymptotic series, (1/x) sum_{k<7} (-1)^k (2k - 1)!! x^{-2k}, evaluated
    by Horner's rule in w = 1/(x x); within a relative (ASYM_TRUNC_REL + ASYM_ROUND_REL) u of m(x) for x >= X_MAX.

    Args:
        x: a float array, every entry >= X_MAX (not checked; inf gives 0).
    """
    with np.errstate(over="ignore", under="ignore", divide="ignore"):  # x x = inf gives w = 0 (module docstring)
        w = 1.0 / (x * x)
        s = np.full_like(w, ASYM_COEFFICIENTS[-1])
        for a in ASYM_COEFFICIENTS[-2::-1]:
            s = s * w + a
        return s / x


def mills_ratio(x: np.ndarray) -> np.ndarray:
    """The Mills ratio m(x) = Q(x) / phi(x) for x >= 0, within a relative M_REL u (module docstring): the Taylor
    table below X_MAX (Horner's rule in d = x - x_k), :func:`mills_asymptotic` above. NaN gives NaN.

    Args:
        x: a 1-d float array, every entry >= 0 or NaN (not checked).
    """
    xt = np.fmin(x, _X_LAST)  # NaN and x >= X_MAX read the last cell; replaced below
    k = (xt * (1.0 / STEP)).astype(np.intp)  # floor: xt >= 0; exact (STEP a power of two)
    d = xt - k * STEP  # exact: k STEP is a float, and Sterbenz for k >= 1 (d = xt for k = 0)
    if k.size <= _GATHER_ROWS:  # few points: one gather of their rows (the same operations, in the same order)
        rows = _table_rows()[k]
        m = rows[:, TERMS - 1].copy()
        for n in range(TERMS - 2, -1, -1):
            np.multiply(m, d, out=m)
            np.add(m, rows[:, n], out=m)
    else:  # many points: one gather per coefficient, each contiguous
        tab = table()
        m = tab[TERMS - 1].take(k)
        for n in range(TERMS - 2, -1, -1):
            np.multiply(m, d, out=m)
            np.add(m, tab[n].take(k), out=m)
    near = x < X_MAX
    if not near.all():
        far = ~near
        m[far] = mills_asymptotic(x[far])
    return m


@functools.lru_cache(maxsize=1)
def _table_rows() -> np.ndarray:
    """:func:`table` transposed: row k holds c_0 .. c_{TERMS-1} at node k (contiguous)."""
    out = np.ascontiguousarray(table().T)
    out.setflags(write=False)
    return out


def log_ndtr(z: "np.ndarray | float") -> "np.ndarray | np.floating":
    """log Phi(z), Phi the standard normal CDF, elementwise, within LOG_PHI_ERR u (2 + |log Phi(z)|) for every float z
    (module docstring; docs/pld.md Sec. 2.2): log m(-z) - z^2/2 - log sqrt(2 pi) for z <= 0, log1p(-m(z) phi(z)) for
    z > 0, m the Mills ratio from a Taylor table (Higham's bound for Horner's rule, the first omitted term for the
    truncation) or its asymptotic series. log_ndtr(-inf) = -inf, log_ndtr(inf) = 0, NaN gives NaN.

    Args:
        z: a float or an array of floats (any shape).

    Returns:
        a float64 array of z's shape (a numpy float for a scalar z).
    """
    z = np.asarray(z, dtype=float)
    shape = z.shape
    z = z.reshape(-1)
    x = np.abs(z)
    lower = z <= 0
    with np.errstate(divide="ignore", over="ignore", invalid="ignore", under="ignore"):
        m = mills_ratio(x)
        a = (0.5 * x) * x
        out = np.log(m) - (a + _LOG_SQRT_2PI)
        if not lower.all():  # both sides for every entry: cheaper than selecting them (exp, log1p are vectorised)
            # z >= X_MAX: exp(-a) = 0 (a >= 800), so -0.0, within Q(z) < 1e-349 of log Phi(z)
            out = np.where(lower, out, np.log1p(-(m * INV_SQRT_2PI) * np.exp(-a)))
    out = out.reshape(shape)
    return out[()] if out.ndim == 0 else out
