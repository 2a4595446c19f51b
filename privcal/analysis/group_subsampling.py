r"""Renyi DP of a group of g records under Poisson subsampling of a Gaussian mechanism, certified from above.

With each record's contribution clipped to C, noise multiplier s = sigma / C and inclusion probability q, the
g records of one user enter a batch K ~ Binomial(g, q) at a time; in the aligned worst case one step's outputs
are (units of C)

    P = sum_k w_k N(k, s^2),  w_k = Bin(k; g, q)      against      Q = N(0, s^2),

a pair that dominates every group of g such records (docs/groups.md: the comonotonic upper bound in convex order
of the likelihood ratio, Kaas, Dhaene & Goovaerts 2000). Under Q, with y = s z, z ~ N(0, 1), the likelihood ratio
is L(z) = sum_k w_k exp(a_k z - a_k^2 / 2), a_k = k / s, increasing in z, and

    D_alpha(P || Q) = log E[L(z)^alpha] / (alpha - 1),     D_alpha(Q || P) = log E[L(z)^(1 - alpha)] / (alpha - 1).

Each expectation is bounded from above on a uniform grid [z_lo, z_hi]: on each cell, alpha log L (convex) lies
below its chord and (1 - alpha) log L (concave) below its tangent at the cell's right end, and the Gaussian
density times the exponential of a line integrates in closed form (a shifted normal mass, computed with a
certified relative error); plus closed-form bounds of both tails (left: L <= 1 for
z <= 0, resp. L >= w_0; right: log L grows with slope at most a_g, resp. L^(1 - alpha) <= its value at z_hi),
computed in log space with a margin for the rounding. g = 1 is the Poisson subsampled Gaussian (Mironov, Talwar &
Zhang 2019), which tests/test_group_subsampling.py checks it against, and mpmath's quadrature for g > 1.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike
from scipy.special import logsumexp

from privcal import _validate as V
from privcal.analysis.rdp import check_orders
from privcal.privacy_loss.log_phi import LOG_PHI_ERR, log_ndtr

__all__ = ["GROUP_ORDERS", "rdp_poisson_group_gaussian"]

#: Renyi orders of the group bound (large epsilons, the usual case of a whole user, are decided at small orders)
GROUP_ORDERS = (1.01, 1.02, 1.05, 1.1, 1.25, 1.5, 1.75, 2.0, 2.5, 3.0, 4.0, 5.0, 6.0, 8.0, 10.0, 12.0, 16.0, 20.0,
                24.0, 32.0, 48.0, 64.0)

_U = 2.0**-53
#: the grid's cell width in z (the envelope exceeds the integrand by a relative ~ h^2 x power x (log L)'' / 8)
_H = 2e-3
#: cells of one order's grid at most (a coarser grid is still an upper bound, a looser one)
_MAX_CELLS = 2_000_000
#: reach of the grid beyond the bulk, in standard deviations of z (tail mass below e^{-800})
_REACH = 40.0


def log_weights(q: float, g: int) -> np.ndarray:
    k = np.arange(g + 1)
    return (math.lgamma(g + 1) - np.array([math.lgamma(i + 1) + math.lgamma(g - i + 1) for i in k])
            + k * math.log(q) + (g - k) * math.log1p(-q))


def _log_l(z: np.ndarray, log_w: np.ndarray, a: np.ndarray) -> np.ndarray:
    """log L(z) = logsumexp_k(log w_k + a_k z - a_k^2 / 2), for every z (one row per k, in blocks)."""
    out = np.empty(z.shape)
    for start in range(0, z.size, 65536):
        zs = z[start:start + 65536]
        out[start:start + 65536] = logsumexp(log_w[:, None] + a[:, None] * zs[None, :] - 0.5 * (a * a)[:, None], axis=0)
    return out


def _tail_err(log_tail: np.ndarray) -> np.ndarray:
    """Relative error bound of a normal tail from privcal's ``log_ndtr``: LOG_PHI_ERR u (2 + |log tail|), proven
    (``privcal.privacy_loss.log_phi``, docs/pld.md Sec. 2.2)."""
    return LOG_PHI_ERR * _U * (2.0 + np.abs(log_tail))


def log_cell_masses(lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """log of the standard normal mass of each cell (lo[i], hi[i]), the difference of the two ends' tails on the
    side of the smaller tail, and a bound on its relative error: (e_a + e_b e^{b - a}) / (1 - e^{b - a}) + 4 u for
    the log tails a > b at the ends (relative errors e_a, e_b), the subtraction's cancellation (the construction of
    ``privcal.accounting.realisable``, docs/pld.md section 1.6)."""
    upper_side = lo >= 0  # both ends above 0: difference of upper tails
    a = np.where(upper_side, log_ndtr(-lo), log_ndtr(hi))
    b = np.where(upper_side, log_ndtr(-hi), log_ndtr(lo))
    frac = -np.expm1(b - a)
    rel = (_tail_err(a) + _tail_err(b) * np.exp(b - a)) / frac + 4 * _U
    return a + np.log(frac), rel


def _log_slope(z: np.ndarray, log_w: np.ndarray, a: np.ndarray) -> np.ndarray:
    """log of (log L)'(z) = sum_k a_k w_k e^{a_k z - a_k^2 / 2} / L(z) (k >= 1), the slope of log L."""
    k = slice(1, None)
    out = np.empty(z.shape)
    for start in range(0, z.size, 65536):
        zs = z[start:start + 65536]
        expo = log_w[k, None] + a[k, None] * zs[None, :] - 0.5 * (a[k] * a[k])[:, None]
        out[start:start + 65536] = (logsumexp(np.log(a[k])[:, None] + expo, axis=0)
                                    - logsumexp(np.concatenate([log_w[:1, None] + 0 * zs[None, :], expo]), axis=0))
    return out


def log_moment_bound(alpha: float, log_w: np.ndarray, a: np.ndarray, power: float) -> float:
    """An upper bound on log E[L(z)^power], z ~ N(0, 1), power = alpha (remove) or 1 - alpha (add)."""
    a_g = float(a[-1])
    z_lo = -_REACH
    z_hi = (max(power, 0.0) * a_g + a_g) + _REACH
    cells = min(_MAX_CELLS, max(1000, math.ceil((z_hi - z_lo) / _H)))
    edges = np.linspace(z_lo, z_hi, cells + 1)
    # The cells [edges[i], edges[i + 1]] tile [z_lo, z_hi]. On each, f = power x log L lies below a line through a
    # reference point: the chord for power > 0 (log L is convex), the tangent at the right end for power < 0 (f is
    # concave; its slope taken no larger than f' there, so that the line stays above f left of it). The integral of
    # the Gaussian density times e^{line} is closed form: e^{f_ref + d^2/2 - d z_ref} (Phi(hi - d) - Phi(lo - d)).
    log_l = _log_l(edges, log_w, a)
    f = power * log_l
    lo, hi = edges[:-1], edges[1:]
    if power > 0:
        z_ref, f_ref, d = lo, f[:-1], (f[1:] - f[:-1]) / (hi - lo)
    else:
        z_ref, f_ref = hi, f[1:]
        d = power * np.exp(_log_slope(hi, log_w, a)) * (1.0 + 1e-9)  # more negative than f'(hi): still above f
    log_mass, rel = log_cell_masses(lo - d, hi - d)
    # the shifted ends' roundings (u |lo - d| each) move the mass by at most that much density: relative to the
    # mass, 4 u max(|ends|, 1) / width x e^{width x max |ends|} (the density's largest ratio across the cell)
    ends = np.maximum(np.maximum(np.abs(lo - d), np.abs(hi - d)), 1.0)
    rel = rel + 4 * _U * ends / (hi - lo) * np.exp(np.minimum((hi - lo) * ends, 700.0))
    shift = 0.5 * d * d - d * z_ref  # log phi(z_ref) - log phi(z_ref - d), within 4 u (d^2 + |d z_ref|)
    terms = f_ref + shift + 4 * _U * (d * d + np.abs(d * z_ref)) + log_mass + np.log1p(rel)
    parts = [float(logsumexp(terms))]
    if power > 0:  # left: L <= 1 for z <= 0 (each exponent a_k z - a_k^2 / 2 <= 0); right: slope of log L <= a_g
        parts.append(power * min(float(log_l[0]), 0.0) + float(log_ndtr(z_lo)))
        b = power * a_g
        parts.append(power * float(log_l[-1]) - b * z_hi + 0.5 * b * b + float(log_ndtr(b - z_hi)))
    else:  # left: L >= w_0 (the k = 0 term) so L^power <= w_0^power; right: L^power <= its value at z_hi
        parts.append(power * float(log_w[0]) + float(log_ndtr(z_lo)))
        parts.append(power * float(log_l[-1]) + float(log_ndtr(-z_hi)))
    total = float(logsumexp(parts))
    # rounding: each log L within 8 u (|largest exponent| + log(g + 1) + 2) (the exponents' and logsumexp's roundings),
    # times |power|; the sums of at most 2e6 positive terms within (cells + 8) u relative; 1e-9 beyond both
    exponent = float(np.max(np.abs(log_w)) + a_g * max(abs(z_lo), abs(z_hi)) + 0.5 * a_g * a_g)
    # (twice: a line's two ends each carry that error)
    margin = 2 * abs(power) * 8 * _U * (exponent + math.log(len(a)) + 2.0) + (cells + 8) * _U + 1e-9
    return total + margin


def rdp_poisson_group_gaussian(orders: ArrayLike, noise_multiplier: float, sample_rate: float,
                               group_size: int) -> np.ndarray:
    """Upper bound on the Renyi divergence, at each order, of one Poisson-subsampled Gaussian step for a group of g
    records (add/remove of the whole group; the larger of both orders of the pair; module docstring).

    Args:
        orders: Renyi orders alpha, finite and > 1.
        noise_multiplier: s = sigma / C, C the clip of one record, in (0, inf].
        sample_rate: q, each record's inclusion probability, in (0, 1].
        group_size: g, the records of the group, an int in [1, 10000].

    Returns:
        the RDP bound at each order (nats), an array shaped like ``orders``.
    """
    alphas = check_orders(orders)
    s = V.positive("noise_multiplier", noise_multiplier, allow_inf=True)
    q = V.rate("sample_rate", sample_rate)
    g = V.positive_int("group_size", group_size)
    if g > 10_000:
        raise ValueError(f"group_size must be an integer in [1, 10000], got {group_size!r}")
    if math.isinf(s):
        return np.zeros_like(alphas)
    if q >= 1.0:  # the whole group in every batch: the Gaussian at sensitivity g
        return alphas * (g / s) ** 2 / 2.0
    log_w = log_weights(q, g)
    a = np.arange(g + 1) / s
    out = np.empty_like(alphas)
    for i, alpha in enumerate(alphas):
        remove = log_moment_bound(float(alpha), log_w, a, float(alpha))
        add = log_moment_bound(float(alpha), log_w, a, 1.0 - float(alpha))
        out[i] = max(remove, add, 0.0) / (alpha - 1.0)
    return out
