r"""RDP of the Gaussian mechanism under sampling without replacement, and the GPOPE paper's printed forms.

* :func:`rdp_poisson_gaussian` -- Poisson sampling at rate q (Mironov, Talwar & Zhang 2019), exact;
  its home is :mod:`privcal.analysis.subsampling_poisson`, re-exported here.
* :func:`rdp_without_replacement` / :func:`rdp_without_replacement_gaussian_thm9` -- a uniformly random
  subset of size q*n (replace-one neighbours), Wang, Balle & Kasiviswanathan 2018 (arXiv 1808.00087),
  Theorem 9 with the *full* sum over j = 2..alpha, in log space; fractional orders by their
  Corollary 10 (linear interpolation of the cumulant (alpha - 1) * rdp(alpha) between integers).
  :func:`rdp_without_replacement_gaussian` -- their Gaussian-specific Theorem 27, never above Thm 9,
  whose terms vanish as the noise grows (Thm 9's do not). Its forward differences come from a trapezoid
  quadrature whose error is proven and charged, and its float sums are rounded up past their proven
  rounding error (docs/rdp.md), so the value returned is an upper bound on Thm 27's.
* :func:`rdp_gpope_lemma1_paper` -- Lemma 1 of the GPOPE paper as printed (the j = 2 term of Thm 9
  only, linearised); :func:`rdp_gpope_b2_paper` -- its intermediate Eq. (B.2). Both are *not* upper
  bounds in general (see their docstrings and tests/test_subsampling.py).

All functions take ``orders`` (each > 1), ``noise_multiplier`` = sigma / sensitivity (> 0) and
``sample_rate`` in (0, 1], and return an array of RDP values (possibly ``inf``) over ``orders``.
"""

from __future__ import annotations

import functools
import math
from typing import Callable

import numpy as np
from numpy.typing import ArrayLike

from privcal import _validate as V
from privcal.analysis.log_sums import exp_or_zero, segment_logsumexp, segments  # noqa: F401 (exp_or_zero: its old path)
from privcal.analysis.rdp import check_orders, rdp_gaussian_unchecked
from privcal.analysis.subsampling_poisson import (  # noqa: F401 (re-exported: Poisson sampling)
    check_subsampled_gaussian,
    rdp_poisson_gaussian,
    rdp_poisson_gaussian_unchecked,
)
from privcal.analysis.wbk_quadrature import U as _U
# the quadrature's names at their old path (privcal.analysis.wbk_quadrature is their home)
from privcal.analysis.wbk_quadrature import (  # noqa: F401
    FD_CACHE,
    FD_CACHE_SIZE,
    Z_HALF_WINDOW,
    Z_STEP,
    forward_difference_rows,
    hump_peaks,
    log_discretisation_bound,
    log_forward_differences_gaussian,
)

__all__ = [
    "rdp_poisson_gaussian",
    "rdp_without_replacement",
    "rdp_without_replacement_gaussian",
    "rdp_without_replacement_gaussian_thm9",
    "THM27_MAX_ORDER",
    "rdp_gpope_lemma1_paper",
    "rdp_gpope_b2_paper",
]

_LOG2 = math.log(2.0)
_LOG4 = math.log(4.0)

# --------------------------------------------------------------------------------------------------
# Sampling without replacement (Wang, Balle & Kasiviswanathan 2018, Thm 9)
# --------------------------------------------------------------------------------------------------


def log_a_wor_int(int_orders: tuple[int, ...], q: float, log_term2: float,
                   log_higher: Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
    """ln(1 + sum_{j=2..alpha} q^j C(alpha, j) c_j) of WBK 2018, Thm 9, at integer alpha >= 2 (log space).

    ``log_term2`` = ln c_2 and ``log_higher(j)`` = ln c_j for j >= 3 (float arrays of integers). ln c_j depends
    on j alone, so it is evaluated once per j = 2..max alpha and looked up for every alpha's sum (the
    segments repeat each j once per requested alpha >= j: ~40,000 entries for the default orders), the
    same values elementwise.
    """
    weighted, second, index, offsets, lengths = _worsegments(int_orders, q)
    table = log_higher(np.arange(2, max(int_orders) + 1, dtype=float))
    terms = table[index]
    np.copyto(terms, log_term2, where=second)
    terms += weighted  # log_binom + k ln q + (ln c_2 at k = 2, ln c_k above)
    return np.logaddexp(0.0, segment_logsumexp(terms, offsets, lengths))


@functools.lru_cache(maxsize=16)
def _worsegments(int_orders: tuple[int, ...], q: float):
    """What :func:`log_a_wor_int`'s terms owe to the orders and q alone, kept across the noise multipliers of a
    calibration: ln C(alpha, k) + k ln q, the mask k = 2, the index k - 2 of ln c_k, the segment starts and
    lengths; read-only."""
    k, _, log_binom, offsets, lengths, k_int = segments(int_orders, 2)
    weighted, second, index = log_binom + k * math.log(q), k == 2.0, k_int - 2
    for arr in (weighted, second, index):
        arr.setflags(write=False)
    return weighted, second, index, offsets, lengths


def _log_expm1(x: float) -> float:
    """ln(e^x - 1) for x >= 0 (-inf at 0), stable for large x."""
    if x <= 0.0:
        return -math.inf
    return x + math.log(-math.expm1(-x)) if x > 1.0 else math.log(math.expm1(x))


def _thm9_coefficients(eps2: float, eps_inf: float):
    """ln c_2 and the j-dependent cap ln min{2, (e^{eps(inf)} - 1)^j} of WBK 2018, Thm 9."""
    log_em1_inf = math.inf if math.isinf(eps_inf) else _log_expm1(eps_inf)

    def log_cap(j):
        return np.minimum(_LOG2, j * log_em1_inf)

    log_term2 = min(_LOG4 + _log_expm1(eps2), eps2 + float(log_cap(2.0)))
    return log_term2, log_cap


def rdp_without_replacement(
    orders: ArrayLike,
    base_rdp: Callable[[np.ndarray], np.ndarray],
    sample_rate: float,
    *,
    base_rdp_inf: float = math.inf,
) -> np.ndarray:
    r"""RDP of a mechanism run on a uniformly random subset of size q*n (replace-one neighbours).

    Wang, Balle & Kasiviswanathan 2018 (arXiv 1808.00087), Thm 9, the full sum: for integer alpha >= 2,
        rdp'(alpha) <= 1/(alpha-1) ln(1 + q^2 C(alpha,2) min{4(e^{eps(2)} - 1), e^{eps(2)} min{2, (e^{eps(inf)} - 1)^2}}
                                       + sum_{j=3..alpha} q^j C(alpha,j) e^{(j-1) eps(j)} min{2, (e^{eps(inf)} - 1)^j}),
    where eps(j) = ``base_rdp(j)`` is the RDP of the base mechanism (on the subsample, under replace-one
    neighbours) and eps(inf) = ``base_rdp_inf`` (inf for the Gaussian). Fractional alpha: WBK 2018,
    Cor. 10 (linear interpolation of the cumulant (alpha - 1) rdp'(alpha) between floor and ceil, an
    upper bound by convexity; for 1 < alpha < 2 this gives rdp'(2)). Computed in log space.
    Two valid refinements are applied to the bound (Thm 9 alone can exceed the base RDP and is not
    monotone in alpha): the result is capped by ``base_rdp(alpha)`` (couple the subsamples to differ in
    at most one point; D_alpha is jointly quasi-convex, van Erven & Harremoes 2014, Thm 13), and replaced
    by its minimum over the requested orders >= alpha (D_alpha is non-decreasing in alpha, ibid. Thm 3),
    so the value at one order can depend on the other requested orders, never upwards.
    ``base_rdp`` must accept a float array of orders > 1 (integer and fractional) and return an array.
    q = 1 returns ``base_rdp(orders)`` (no subsampling).

    Args:
        orders: Renyi orders alpha, a non-empty 1-D sequence of finite numbers > 1.
        base_rdp: the base mechanism's RDP eps(alpha) (nats, replace-one neighbours): a callable
            mapping a float array of orders > 1 to an array of values >= 0.
        sample_rate: q, the subset size as a fraction of the data set, in (0, 1].
        base_rdp_inf: eps(inf), the base mechanism's pure-DP epsilon (nats), in (0, inf]; default inf.

    Returns:
        the RDP curve (nats), one value per order.

    Raises:
        ValueError: an argument is outside its range, or base_rdp(2) < 0.
    """
    orders = check_orders(orders)
    sample_rate = V.rate("sample_rate", sample_rate)
    base_rdp_inf = V.positive("base_rdp_inf", base_rdp_inf, allow_inf=True)
    return _rdp_without_replacement(orders, base_rdp, sample_rate, base_rdp_inf=base_rdp_inf)


def _rdp_without_replacement(
    orders: np.ndarray,
    base_rdp: Callable[[np.ndarray], np.ndarray],
    sample_rate: float,
    *,
    base_rdp_inf: float = math.inf,
) -> np.ndarray:
    """rdp_without_replacement for validated inputs."""
    a, q = orders, sample_rate
    if q == 1.0:
        return np.asarray(base_rdp(a), dtype=float)
    eps2 = float(np.asarray(base_rdp(np.array([2.0])), dtype=float)[0])
    if not eps2 >= 0:
        raise ValueError(f"base_rdp(2) must be >= 0, got {eps2!r}")

    log_term2, log_cap = _thm9_coefficients(eps2, base_rdp_inf)

    def log_higher(j: np.ndarray) -> np.ndarray:  # e^{(j-1) eps(j)} min{2, (e^{eps(inf)} - 1)^j}
        return (j - 1.0) * np.asarray(base_rdp(j), dtype=float) + log_cap(j)

    def cgf(ints: tuple[int, ...]) -> np.ndarray:
        return log_a_wor_int(ints, q, log_term2, log_higher)

    return _wor_from_cgf(a, cgf, np.asarray(base_rdp(a), dtype=float))


def _wor_from_cgf(a: np.ndarray, cgf: Callable[[tuple[int, ...]], np.ndarray], base: np.ndarray) -> np.ndarray:
    """Thm 9 at the requested orders (Cor. 10 between integers), capped by the base RDP, made monotone."""
    ceil_a = np.ceil(a)
    floor_a = np.floor(a)
    ends = np.concatenate([ceil_a, floor_a])
    needed = np.unique(ends[ends >= 2])  # sorted; never empty (every order > 1 has a ceiling >= 2)
    values = cgf(tuple(int(x) for x in needed))
    # cgf at the floor and the ceiling of each order (an order in (1, 2) has floor 1: its lo_val is not read)
    lo_val = values[np.searchsorted(needed, floor_a)]
    hi_val = values[np.searchsorted(needed, ceil_a)]
    t = a - floor_a
    with np.errstate(invalid="ignore", over="ignore"):
        out = np.where(
            floor_a == ceil_a, lo_val / (a - 1.0),
            np.where(floor_a < 2, hi_val,  # chord from (1, 0): (alpha - 1) * cgf(2) / (alpha - 1)
                     ((1.0 - t) * lo_val + t * hi_val) / (a - 1.0)))
    # Subsampling never hurts: couple the two subsamples so they differ in at most one point; joint
    # quasi-convexity of D_alpha (van Erven & Harremoes 2014, Thm 13) gives rdp' <= base rdp.
    out = np.minimum(out, base)
    # D_alpha is non-decreasing in alpha (van Erven & Harremoes 2014, Thm 3), so a bound at a larger
    # requested order also bounds a smaller one: take the suffix minimum over the sorted orders.
    order = np.argsort(a, kind="stable")
    out[order] = np.minimum.accumulate(out[order][::-1])[::-1]
    return np.maximum(out, 0.0)


#: Largest order at which the forward-difference terms of WBK Thm 27 are used (as in dp_accounting);
#: above it only the Thm 9 term 2 e^{(j-1) eps(j)} enters the min, which is still a valid bound.
THM27_MAX_ORDER = 256
def rdp_without_replacement_gaussian(orders: ArrayLike, noise_multiplier: float, sample_rate: float) -> np.ndarray:
    """RDP of the Gaussian mechanism on a uniformly random subset of size q*n (replace-one).

    Wang, Balle & Kasiviswanathan 2018 (arXiv 1808.00087), the Gaussian-specific Thm 27 (which refines
    Thm 9): for integer alpha >= 2, with eps(j) = j/(2 s^2) and Delta^l the l-th forward difference at 0
    of x -> e^{(x-1) eps(x)} (:func:`log_forward_differences_gaussian`),
        rdp(alpha) = 1/(alpha-1) ln(1 + q^2 C(alpha,2) min{4(e^{eps(2)} - 1), 2 e^{eps(2)}}
              + sum_{j=3..alpha} q^j C(alpha,j) min{4 sqrt(Delta^{2 floor(j/2)} Delta^{2 ceil(j/2)}), 2 e^{(j-1) eps(j)}}).
    The second entry of each min is Thm 9's term, so this is never above Thm 9 (the full sum over
    j = 2..alpha, :func:`rdp_without_replacement`); the forward-difference entry is used up to
    ``THM27_MAX_ORDER`` = 256. Each Delta^l is an upper bound (a trapezoid sum with its discretisation, window and
    rounding errors charged, docs/rdp.md), and the cumulant and the cap are rounded up past their rounding, so the
    value returned is never below the formula's exact value (tests/test_wbk_certificate.py checks it against
    300-digit mpmath). The statement was not available to us in print: the formula is the one
    implemented by Google's dp_accounting (``_compute_rdp_sample_wor_gaussian``, citing Thm 27), and
    tests/test_subsampling.py checks this independent implementation against it to 1e-6.
    Here s = noise_multiplier = sigma / sensitivity with the *replace-one* sensitivity of the
    subsampled query (for one clipped gradient that is 2 * clip). Fractional orders: WBK Cor. 10;
    capped by the Gaussian's own RDP and made non-decreasing in alpha as in :func:`rdp_without_replacement`.
    Unlike Thm 9 alone (whose j >= 3 terms tend to 2 q^j C(alpha, j) as s -> inf), every term here
    vanishes as s grows.

    Args:
        orders: Renyi orders alpha, a non-empty 1-D sequence of finite numbers > 1.
        noise_multiplier: sigma / sensitivity (dimensionless), in (0, inf).
        sample_rate: q, the subset size as a fraction of the data set, in (0, 1].

    Returns:
        the RDP curve (nats), one value per order.

    Raises:
        ValueError: an argument is outside its range.
    """
    orders, noise_multiplier, sample_rate = check_subsampled_gaussian(orders, noise_multiplier, sample_rate)
    return rdp_without_replacement_gaussian_unchecked(orders, noise_multiplier, sample_rate)


def rdp_without_replacement_gaussian_unchecked(orders: np.ndarray, noise_multiplier: float, sample_rate: float) -> np.ndarray:
    """rdp_without_replacement_gaussian for validated inputs."""
    a, s, q = orders, noise_multiplier, sample_rate
    if q == 1.0:
        return rdp_gaussian_unchecked(a, s)
    two_s2 = 2.0 * s * s
    log_term2, _ = _thm9_coefficients(2.0 / two_s2, math.inf)
    top = int(min(THM27_MAX_ORDER, np.ceil(a.max())))
    log_delta = log_forward_differences_gaussian(s, 2 * ((top + 1) // 2) + 2)

    def log_higher(j: np.ndarray) -> np.ndarray:  # min{4 sqrt(D_lo D_hi), 2 e^{(j-1) j/(2 s^2)}}
        thm9 = (j - 1.0) * j / two_s2 + _LOG2
        ji = np.minimum(j, THM27_MAX_ORDER).astype(int)
        lo, hi = 2 * (ji // 2), 2 * ((ji + 1) // 2)
        thm27 = _LOG4 + 0.5 * (log_delta[lo] + log_delta[hi])
        return np.where(j <= THM27_MAX_ORDER, np.minimum(thm9, thm27), thm9)

    def cgf(ints: tuple[int, ...]) -> np.ndarray:
        return _round_up_cgf(log_a_wor_int(ints, q, log_term2, log_higher), ints, q, log_term2, log_higher)

    # the Gaussian's own RDP alpha / (2 s^2), rounded up past its two roundings
    return _wor_from_cgf(a, cgf, rdp_gaussian_unchecked(a, s) * (1.0 + 4.0 * _U))


def _round_up_cgf(values: np.ndarray, int_orders: tuple[int, ...], q: float, log_term2: float,
                  log_higher: Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
    """The cumulants ln(1 + X) of :func:`log_a_wor_int` raised past their rounding (docs/rdp.md, section 4).

    Each log term ln C(alpha, j) + j ln q + ln c_j is computed with an absolute error below 12 u B, B a bound on
    the sizes of its parts (3 (alpha + 1) ln(alpha + 1) for the three ln-gammas, alpha |ln q|, max_j |ln c_j|),
    and the log-sum-exp of the alpha - 1 terms and the log1p add at most u (2B + alpha + 20): so the computed
    X is within a factor e^{+-E} of the exact one, E = 2^-48 (B + alpha + 1) (twice the sum), and
    ln(1 + X) <= ln(1 + X~) + min(E, (e^E - 1) X~).
    """
    alphas = np.asarray(int_orders, dtype=float)
    table = np.abs(log_higher(np.arange(2, max(int_orders) + 1, dtype=float)))
    table[0] = abs(log_term2)
    largest = np.maximum.accumulate(table)[alphas.astype(np.int64) - 2]
    sizes = 3.0 * (alphas + 1.0) * np.log(alphas + 1.0) + alphas * abs(math.log(q)) + largest
    err = (sizes + alphas + 1.0) * 2.0**-48
    with np.errstate(over="ignore", invalid="ignore"):
        return values + np.minimum(err, np.expm1(err) * np.expm1(values))


def rdp_without_replacement_gaussian_thm9(
    orders: ArrayLike, noise_multiplier: float, sample_rate: float
) -> np.ndarray:
    """The same with WBK 2018 Thm 9 only (full sum over j = 2..alpha, Gaussian base eps(j) = j/(2 s^2)):
        rdp(alpha) = 1/(alpha-1) ln(1 + q^2 C(alpha,2) min{4(e^{1/s^2} - 1), 2 e^{1/s^2}}
                                    + 2 sum_{j=3..alpha} q^j C(alpha,j) e^{j(j-1)/(2 s^2)}).
    Valid but loose for large s: the j >= 3 terms tend to 2 q^j C(alpha, j), a noise-independent floor.

    Args:
        orders: Renyi orders alpha, a non-empty 1-D sequence of finite numbers > 1.
        noise_multiplier: sigma / sensitivity (dimensionless), in (0, inf).
        sample_rate: q, the subset size as a fraction of the data set, in (0, 1].

    Returns:
        the RDP curve (nats), one value per order.

    Raises:
        ValueError: an argument is outside its range.
    """
    orders, noise_multiplier, sample_rate = check_subsampled_gaussian(orders, noise_multiplier, sample_rate)
    return rdp_without_replacement_gaussian_thm9_unchecked(orders, noise_multiplier, sample_rate)


def rdp_without_replacement_gaussian_thm9_unchecked(
    orders: np.ndarray, noise_multiplier: float, sample_rate: float
) -> np.ndarray:
    """rdp_without_replacement_gaussian_thm9 for validated inputs."""
    s = noise_multiplier
    return _rdp_without_replacement(
        orders, lambda j: np.asarray(j, dtype=float) / (2.0 * s * s), sample_rate, base_rdp_inf=math.inf
    )


# --------------------------------------------------------------------------------------------------
# GPOPE (Privacy Preserving Off-Policy Evaluation), Lemma 1 and Eq. (B.2) as printed
# --------------------------------------------------------------------------------------------------


def _gpope_min_term(s: float) -> float:
    """ln min{4 (e^{1/s^2} - 1), 2 e^{1/s^2}} of GPOPE Lemma 1 / Eq. (B.2)."""
    x = 1.0 / (s * s)
    return min(_LOG4 + _log_expm1(x), _LOG2 + x)


def rdp_gpope_lemma1_paper(orders: ArrayLike, noise_multiplier: float, sample_rate: float) -> np.ndarray:
    """GPOPE Lemma 1 as printed, in RDP form: rdp(alpha) = alpha q^2 / 2 * min{4(e^{1/s^2} - 1), 2 e^{1/s^2}}.

    GPOPE paper, Lemma 1: the log moment of one iteration is bounded by
        alpha_M(lambda) <= lambda (lambda + 1) / (2 m^2) * min{4 (e^{1/sigma^2} - 1), 2 e^{1/sigma^2}},
    with q = 1/m (one of m trajectories) and sigma the noise scale of Algorithm 1 (noise h N(0, sigma^2 I));
    the paper takes the sensitivity to be h, so sigma = noise_multiplier here. In RDP form
    rdp(lambda + 1) = alpha_M(lambda) / lambda. Stated for every lambda > 0, with no condition.

    NOT an upper bound in general: it keeps only the j = 2 term of WBK 2018 Thm 9 (Eq. B.2, "we ignored
    the higher-order terms since m >> 1"), and uses sensitivity h although one trajectory's clipped
    gradient has sensitivity 2h under the paper's adjacency. It lies below the exact log moment of the
    paper's own worst-case pair (1-q) N(0, s^2) + q N(1, s^2) vs N(0, s^2) once lambda is moderately
    large or s small (q = 0.01: lambda >= 9 at s = 1, lambda >= 13 at the paper's s = 1/sqrt(ln 2)) --
    in the direction D(mix || N(0, s^2)); the proof bounds only the other one. Composed with Abadi's tail
    it reports epsilon = 1.64 for s = 0.5, q = 1e-3, N = 1000, delta = 1e-5, where the true epsilon of that
    pair is above 3.0 (tests/test_subsampling.py, tests/test_gpope_accounting.py).

    Args:
        orders: Renyi orders alpha, a non-empty 1-D sequence of finite numbers > 1.
        noise_multiplier: sigma / sensitivity (dimensionless), in (0, inf).
        sample_rate: q, the sampling rate 1/m (one of m trajectories), in (0, 1].

    Returns:
        the RDP curve (nats), one value per order as printed (not an upper bound in general).

    Raises:
        ValueError: an argument is outside its range.
    """
    orders, noise_multiplier, sample_rate = check_subsampled_gaussian(orders, noise_multiplier, sample_rate)
    return rdp_gpope_lemma1_paper_unchecked(orders, noise_multiplier, sample_rate)


def rdp_gpope_lemma1_paper_unchecked(orders: np.ndarray, noise_multiplier: float, sample_rate: float) -> np.ndarray:
    """rdp_gpope_lemma1_paper for validated inputs."""
    a, s, q = orders, noise_multiplier, sample_rate
    with np.errstate(over="ignore"):
        return np.exp(np.log(a) + 2.0 * math.log(q) - _LOG2 + _gpope_min_term(s))


def rdp_gpope_b2_paper(orders: ArrayLike, noise_multiplier: float, sample_rate: float) -> np.ndarray:
    """GPOPE Eq. (B.2) as printed: rdp(alpha) = ln(1 + alpha(alpha-1) q^2/2 min{4(e^{1/s^2}-1), 2e^{1/s^2}})/(alpha-1).

    GPOPE paper, Appendix B.1, Eq. (B.2): WBK 2018 Thm 9 truncated after its j = 2 term (with q = 1/m and
    the paper's base RDP eps0(alpha) = alpha / (2 sigma^2), i.e. sensitivity h). Lemma 1 is this bound
    with ln(1 + x) <= x. Not an upper bound in general (the dropped j >= 3 terms are not negligible for
    large alpha or small sigma, and the sensitivity is 2h, not h).

    Args:
        orders: Renyi orders alpha, a non-empty 1-D sequence of finite numbers > 1.
        noise_multiplier: sigma / sensitivity (dimensionless), in (0, inf).
        sample_rate: q, the sampling rate 1/m (one of m trajectories), in (0, 1].

    Returns:
        the RDP curve (nats), one value per order as printed (not an upper bound in general).

    Raises:
        ValueError: an argument is outside its range.
    """
    orders, noise_multiplier, sample_rate = check_subsampled_gaussian(orders, noise_multiplier, sample_rate)
    return _rdp_gpope_b2_paper(orders, noise_multiplier, sample_rate)


def _rdp_gpope_b2_paper(orders: np.ndarray, noise_multiplier: float, sample_rate: float) -> np.ndarray:
    """rdp_gpope_b2_paper for validated inputs."""
    a, s, q = orders, noise_multiplier, sample_rate
    log_x = np.log(a) + np.log(a - 1.0) + 2.0 * math.log(q) - _LOG2 + _gpope_min_term(s)
    return np.logaddexp(0.0, log_x) / (a - 1.0)
