r"""RDP of the Poisson-subsampled Gaussian mechanism (the Sampled Gaussian Mechanism), exact in log space.

:func:`rdp_poisson_gaussian` -- Poisson sampling at rate q (add/remove neighbours), the Sampled Gaussian
Mechanism of Mironov, Talwar & Zhang 2019 (arXiv 1908.10530): exact, by the binomial expansion for integer
orders and by quadrature (or their two-sided series) for fractional orders, in log space.
:mod:`privcal.analysis.subsampling` re-exports it beside the sampling without replacement.
"""

from __future__ import annotations

import math
from typing import Callable

import numpy as np
from scipy.special import gammaln, gammasgn, log_ndtr, logsumexp

from numpy.typing import ArrayLike

from privcal import _validate as V
from privcal.analysis.log_sums import segment_logsumexp, segments
from privcal.analysis.rdp import check_orders, rdp_gaussian_unchecked

__all__ = ["rdp_poisson_gaussian", "rdp_poisson_gaussian_unchecked", "check_subsampled_gaussian"]


def check_subsampled_gaussian(orders: ArrayLike, noise_multiplier: float,
                              sample_rate: float) -> tuple[np.ndarray, float, float]:
    """Validate the arguments of a subsampled-Gaussian RDP function (this module's and privcal.analysis.subsampling's).

    Args:
        orders: Renyi orders alpha, a non-empty 1-D sequence of finite numbers > 1.
        noise_multiplier: sigma / sensitivity (dimensionless), in (0, inf).
        sample_rate: q, the sampling rate, in (0, 1].

    Returns:
        ``(orders, noise_multiplier, sample_rate)``: a float array and two floats.

    Raises:
        ValueError: an argument is outside its range (the message names it).
    """
    orders = check_orders(orders)
    noise_multiplier = V.positive("noise_multiplier", noise_multiplier)
    sample_rate = V.rate("sample_rate", sample_rate)
    return orders, noise_multiplier, sample_rate


def _split(a: np.ndarray) -> np.ndarray:
    """Mask of the integer orders."""
    return a == np.floor(a)


def _log_a_poisson_int(int_orders: tuple[int, ...], q: float, s: float) -> np.ndarray:
    """ln A_alpha for integer alpha via A_alpha - 1 = sum_{k>=2} C(alpha,k) q^k (1-q)^(alpha-k) (e^{(k^2-k)/(2s^2)} - 1).

    MTZ 2019, Sec. 3.3: A_alpha = sum_{k=0..alpha} C(alpha,k) (1-q)^(alpha-k) q^k e^{(k^2-k)/(2s^2)}; the
    k = 0, 1 terms have exponent 0 and the binomial weights sum to 1, so A_alpha - 1 is a sum of positive
    terms, summed in log space and added back with log1p (accurate even when A_alpha - 1 ~ 1e-300).
    The factor (1-q)^alpha is taken out of each segment: terms are C(alpha,k) (q/(1-q))^k (e^x_k - 1).
    """
    k, _, log_binom, offsets, lengths, k_int = segments(int_orders, 2)
    kmax = int(max(int_orders))
    x = np.arange(kmax + 1, dtype=float)
    x = (x * x - x) / (2.0 * s * s)
    with np.errstate(divide="ignore"):
        log_expm1 = np.where(x > 1.0, x + np.log(-np.expm1(-x)), np.log(np.expm1(np.minimum(x, 1.0))))
    terms = log_binom + k * (math.log(q) - math.log1p(-q)) + log_expm1[k_int]
    alpha_seg = np.asarray(int_orders, dtype=float)
    return np.logaddexp(0.0, segment_logsumexp(terms, offsets, lengths) + alpha_seg * math.log1p(-q))


def _log_excess_power(log1p_x: np.ndarray, x: np.ndarray, alphas: np.ndarray) -> np.ndarray:
    """ln((1 + x)^alpha - 1 - alpha x) >= 0 for x > -1, on a (len(alphas), len(x)) grid, without cancellation.

    |alpha x| < 1e-3: the binomial series alpha(alpha-1)/2 x^2 + ... (4 terms, relative error < 1e-14);
    otherwise (1+x)^alpha - (1 + alpha x) in log space (no overflow for huge x; 1 + alpha x may be < 0).
    """
    a = alphas[:, None]
    xx = x[None, :]
    small = np.abs(a * xx) < 1e-3
    xs = np.where(small, xx, 0.0)
    c2 = a * (a - 1.0) / 2.0
    c3 = c2 * (a - 2.0) / 3.0
    c4 = c3 * (a - 3.0) / 4.0
    c5 = c4 * (a - 4.0) / 5.0
    with np.errstate(divide="ignore", invalid="ignore"):
        log_series = np.log(np.maximum(xs * xs * (c2 + xs * (c3 + xs * (c4 + xs * c5))), 0.0))
        lead = a * log1p_x[None, :]
        lin = 1.0 + a * np.where(small, 0.0, xx)  # 1 + alpha x (x >= -q, so it may be negative)
        ratio = np.log(np.where(lin > 0.0, lin, 1.0)) - lead  # ln((1 + alpha x) / (1+x)^alpha) < 0
        log_pos = lead + np.log(-np.expm1(np.minimum(ratio, 0.0)))
        log_neg = np.logaddexp(lead, np.log(np.where(lin > 0.0, 1.0, -lin)))  # (1+x)^alpha + |1 + alpha x|
        log_direct = np.where(lin > 0.0, log_pos, log_neg)
    return np.where(small, log_series, log_direct)


def _log_a_poisson_quad(alphas: np.ndarray, q: float, s: float) -> np.ndarray:
    """ln A_alpha by the trapezoidal rule for A_alpha - 1 = E_{z~N(0,s^2)}[(1+x)^alpha - 1 - alpha x], x = q (e^u - 1).

    u = (2z - 1)/(2 s^2) is the log likelihood ratio of N(1, s^2) to N(0, s^2); E[x] = 0, so subtracting
    alpha x leaves the value unchanged and makes the integrand non-negative (no cancellation). The
    integrand is analytic in the strip |Im z| < pi s^2 (the branch point of ln(1 + x)) and is below
    e^{-98} of its peak outside [-14 s, max(alpha, 2) + 14 s]; with step h = min(s/16, s^2/3) the
    trapezoidal rule is accurate to ~exp(-2 pi^2 s^2 / h) (at most e^{-59}) relative. One grid serves
    all ``alphas`` (vectorised).
    """
    h = min(s / 16.0, s * s / 3.0)
    lo, hi = -14.0 * s, max(float(np.max(alphas)), 2.0) + 14.0 * s
    z = np.linspace(lo, hi, int(math.ceil((hi - lo) / h)) + 1)
    step = z[1] - z[0]
    u = (2.0 * z - 1.0) / (2.0 * s * s)
    uc = np.minimum(u, 700.0)
    x = q * np.expm1(uc)
    # ln(1 + x) = ln(1 - q + q e^u), stable for large u
    log1p_x = np.where(u > 30.0, math.log(q) + u + np.log1p((1.0 - q) * np.exp(-uc) / q), np.log1p(x))
    log_w = -0.5 * (z / s) ** 2 - math.log(s * math.sqrt(2.0 * math.pi))
    log_f = _log_excess_power(log1p_x, x, alphas)
    return np.logaddexp(0.0, logsumexp(log_w[None, :] + log_f, axis=1) + math.log(step))


def _signed_logsumexp(log_mag: np.ndarray, sign: np.ndarray) -> tuple[float, float]:
    """log|sum sign_i exp(log_mag_i)| and the sign of the sum."""
    val, sgn = logsumexp(log_mag, b=sign, return_sign=True)
    return float(val), float(sgn)


def _log_a_poisson_frac(alpha: float, q: float, s: float, *, chunk: int = 256,
                        max_terms: int = 1 << 17, rel_tol: float = 1e-17) -> float:
    """log A_alpha for fractional alpha by the two-sided series of MTZ 2019, Sec. 3.3.

    With z0 = s^2 ln(1/q - 1) + 1/2 (where (1-q) mu0 = q mu1),
      A = sum_i C(alpha,i) (1-q)^(alpha-i) q^i exp((i^2-i)/(2s^2)) Phi((z0 - i)/s)
        + sum_i C(alpha,i) (1-q)^i q^(alpha-i) exp(((alpha-i)^2-(alpha-i))/(2s^2)) Phi((alpha - i - z0)/s),
    generalized binomial coefficients C(alpha, i) (signed for i > alpha). Returns +inf if the series has
    not converged within ``max_terms`` terms (the caller then falls back to a valid upper bound).
    """
    z0 = s * s * (math.log1p(-q) - math.log(q)) + 0.5
    log_q, log_1mq = math.log(q), math.log1p(-q)
    two_s2 = 2.0 * s * s
    lg_a1 = float(gammaln(alpha + 1.0))
    mags: list[np.ndarray] = []
    signs: list[np.ndarray] = []
    start = 0
    running = -math.inf
    while start < max_terms:
        i = np.arange(start, start + chunk, dtype=float)
        log_binom = lg_a1 - gammaln(i + 1.0) - gammaln(alpha - i + 1.0)
        sign = gammasgn(alpha - i + 1.0)
        j = alpha - i
        t1 = log_binom + (alpha - i) * log_1mq + i * log_q + (i * i - i) / two_s2 + log_ndtr((z0 - i) / s)
        t2 = log_binom + i * log_1mq + (alpha - i) * log_q + (j * j - j) / two_s2 + log_ndtr((j - z0) / s)
        chunk_mag = np.concatenate([t1, t2])
        chunk_sign = np.concatenate([sign, sign])
        mags.append(chunk_mag)
        signs.append(chunk_sign)
        val, sgn = _signed_logsumexp(np.concatenate(mags), np.concatenate(signs))
        running = val if sgn > 0 else -math.inf
        # Converged once the chunk's largest term is negligible against the running sum and we are
        # past the positive head of the series (i > alpha), where the terms decrease.
        if start + chunk > alpha + 2 and np.max(chunk_mag) < running + math.log(rel_tol):
            return running
        start += chunk
    return math.inf


def _log_a_poisson_frac_many(alphas: np.ndarray, q: float, s: float, *, max_grid: int = 2_000_000) -> np.ndarray:
    """ln A_alpha at fractional orders: trapezoid for s >= 0.2 (batched), MTZ's series for s < 0.2.

    A series that does not converge is replaced by the chord of the cumulant between integer orders (a
    valid upper bound, WBK 2018 Cor. 10), never by a smaller value.
    """
    out = np.empty_like(alphas)
    if s >= 0.2:
        h = min(s / 16.0, s * s / 3.0)
        order = np.argsort(alphas)
        batch: list[int] = []
        for idx in order:  # batch orders so that the (orders x grid) array stays below max_grid
            points = (max(alphas[idx], 2.0) + 28.0 * s) / h
            if batch and (len(batch) + 1) * points > max_grid:
                out[batch] = _log_a_poisson_quad(alphas[batch], q, s)
                batch = []
            batch.append(int(idx))
        out[batch] = _log_a_poisson_quad(alphas[batch], q, s)
        return out
    for idx, alpha in enumerate(alphas):
        log_a = _log_a_poisson_frac(float(alpha), q, s)
        if not math.isfinite(log_a):
            log_a = _interpolated_cgf(float(alpha), lambda ints: _log_a_poisson_int(ints, q, s))
        out[idx] = log_a
    return out


def rdp_poisson_gaussian(orders: ArrayLike, noise_multiplier: float, sample_rate: float) -> np.ndarray:
    """RDP of the Poisson-subsampled Gaussian mechanism: rdp(alpha) = ln(A_alpha) / (alpha - 1).

    Mironov, Talwar & Zhang 2019 (arXiv 1908.10530), Sec. 3.3: A_alpha = E_{z~mu0}[(mu(z)/mu0(z))^alpha]
    with mu0 = N(0, s^2), mu = (1-q) mu0 + q N(1, s^2) (s = noise_multiplier, q = sample_rate); their
    Thm 5 shows this direction dominates, so it is the RDP of the mechanism under add/remove neighbours.
    Integer alpha: A_alpha = sum_{k=0..alpha} C(alpha,k) (1-q)^(alpha-k) q^k exp((k^2-k)/(2 s^2)) exactly
    (log space, as 1 + a sum of positive terms). Fractional alpha: the same expectation by a trapezoidal
    rule with exponentially small error for s >= 0.2, MTZ's two-sided erfc series for s < 0.2 (if it
    does not converge, the valid upper bound from the chord of the cumulant between integer orders).
    q = 1 gives ``rdp_gaussian``. Checked against mpmath to ~1e-12 relative for alpha up to 1e4 and q
    down to 1e-6.

    Args:
        orders: Renyi orders alpha, a non-empty 1-D sequence of finite numbers > 1.
        noise_multiplier: sigma / sensitivity (dimensionless), in (0, inf).
        sample_rate: q, the probability with which each record is included (Poisson sampling), in (0, 1].

    Returns:
        the RDP curve (nats), one value per order.

    Raises:
        ValueError: an argument is outside its range.
    """
    orders, noise_multiplier, sample_rate = check_subsampled_gaussian(orders, noise_multiplier, sample_rate)
    return rdp_poisson_gaussian_unchecked(orders, noise_multiplier, sample_rate)


def rdp_poisson_gaussian_unchecked(orders: np.ndarray, noise_multiplier: float, sample_rate: float) -> np.ndarray:
    """:func:`rdp_poisson_gaussian` without validation, for callers that validated the arguments (the accountants).

    Args:
        orders: Renyi orders alpha, a 1-D float array of finite numbers > 1 (not checked).
        noise_multiplier: sigma / sensitivity, a float in (0, inf) (not checked).
        sample_rate: q, a float in (0, 1] (not checked).

    Returns:
        the RDP curve (nats), one value per order.
    """
    a, s, q = orders, noise_multiplier, sample_rate
    if q == 1.0:
        return rdp_gaussian_unchecked(a, s)
    out = np.empty_like(a)
    is_int = _split(a)
    if is_int.any():
        ints = tuple(int(x) for x in a[is_int])
        out[is_int] = _log_a_poisson_int(ints, q, s) / (a[is_int] - 1.0)
    frac = np.flatnonzero(~is_int)
    if frac.size:
        out[frac] = _log_a_poisson_frac_many(a[frac], q, s) / (a[frac] - 1.0)
    return np.maximum(out, 0.0)


def _interpolated_cgf(alpha: float, cgf_at_ints: Callable[[tuple[int, ...]], np.ndarray]) -> float:
    """Upper bound on the cumulant (alpha - 1) D_alpha at fractional alpha from integer orders.

    The cumulant lambda -> lambda D_{lambda+1} is convex (it is the log moment generating function of
    the privacy loss), and 0 at alpha = 1, so the chord between floor(alpha) and ceil(alpha) bounds it
    from above (Wang-Balle-Kasiviswanathan 2018, Cor. 10). ``cgf_at_ints`` returns (alpha-1) D_alpha.
    """
    lo, hi = math.floor(alpha), math.ceil(alpha)
    t = alpha - lo
    if lo < 2:
        hi_val = float(cgf_at_ints((hi,))[0])
        return t * hi_val  # chord from (1, 0) to (2, cgf(2))
    lo_val, hi_val = (float(v) for v in cgf_at_ints((lo, hi)))
    return (1.0 - t) * lo_val + t * hi_val
