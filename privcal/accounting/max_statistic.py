r"""The laws of the max statistic M = max_t y_t of one epoch of a shuffled or balls-in-bins run, binned with
certified cell masses: the realisable pair that ``privcal.accounting.samplers.epsilon_lower`` composes (its
module docstring states the pair; docs/samplers.md has the proofs).

One epoch's output is, in units of the noise, P = (1/T) sum_t N(mu e_t, I_T) against Q = N(0, I_T); M is a
post-processing (Chua, Ghazi, Kamath, Kumar, Manurangsi, Sinha & Zhang, ICML 2024, arXiv 2403.17673), with

    F_Q(m) = Phi(m)^T,        F_P(m) = Phi(m - mu) Phi(m)^(T - 1).

:func:`binned_max_statistic` cuts the line of M into cells (a further post-processing) and computes each cell's
P- and Q-mass in log space with a certified relative error.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Optional

import numpy as np
from scipy.special import ndtri_exp

from .. import _validate as V
from .. import privacy_loss as L
from ..privacy_loss.log_phi import log_ndtr

__all__ = ["BinnedPair", "binned_max_statistic", "binned_max_statistic_unchecked", "argument_err", "check_bins",
           "check_steps_per_epoch"]

_U = 2.0**-53
#: |log_ndtr(z) - log Phi(z)| <= _LOG_NDTR_ERR u (2 + |log Phi(z)|) for every float z: ``privcal.privacy_loss.LOG_NDTR_ERR``
#: (4, proven for privcal's log_ndtr, ``privcal.privacy_loss.log_phi``; docs/pld.md Sec. 2.2)
_LOG_NDTR_ERR = L.LOG_NDTR_ERR
#: the binned line ends where Q (resp. P's upper tail) has mass below this
_LINE_TAIL = 1e-40
#: below this log tail, exp() is not taken (it would be subnormal); the dropped part is charged
_UNDERFLOW = -700.0
#: below this log of sum_k n_k p_k, the survival 1 - prod_k (1 - p_k)^n_k is taken as sum_k n_k p_k
_SMALL = -80.0
#: a cell whose computed masses carry a larger relative error bound is dropped (a sub-measure: a lower bound)
_REL_MAX = 1e-6


def _log_ndtr_err(log_value: np.ndarray) -> np.ndarray:
    """Bound of |log_ndtr(z) - log Phi(z)| from the computed value: C u (2 + |v|) with C = LOG_NDTR_ERR = 4, plus the
    first-order slack of evaluating the bound at the computed rather than the exact log (|v - v_exact| <= 1e-9
    relative wherever v is finite, so a factor 1.01 covers it)."""
    return 1.01 * _LOG_NDTR_ERR * _U * (2.0 + np.abs(log_value))


def argument_err(z: np.ndarray) -> np.ndarray:
    """Bound of |log Phi(z_hat) - log Phi(z)| for a computed argument z_hat = fl(m - mu) (|z_hat - z| <= u |z_hat|
    / (1 - u)): |d/dz log Phi(z)| = phi(z)/Phi(z) <= 1 + |z| (Birnbaum 1942, Ann. Math. Stat. 13: the Mills ratio
    Phi(-x)/phi(x) > (sqrt(x^2 + 4) - x)/2 for x >= 0, so phi/Phi(-x) < (sqrt(x^2 + 4) + x)/2 <= 1 + x; and
    phi(z)/Phi(z) <= 0.8 for z >= 0); the same for log Phi(-z).

    Args:
        z: the computed arguments (a float array).

    Returns:
        the bound, elementwise.
    """
    a = np.abs(z)
    return 1.01 * _U * a * (1.0 + a * (1.0 + 4 * _U))


def _log_cdf(parts):
    """log prod_k Phi(z_k)^(n_k) at each edge, and a bound of its absolute error.

    Args:
        parts: list of (n_k, log Phi(z_k) as computed, its absolute error bound) over the edges.
    """
    total = np.zeros_like(parts[0][1])
    err = np.zeros_like(parts[0][1])
    for n, lv, e in parts:
        term = n * lv  # n exact (an int below 2^53): one rounding
        total = total + term  # one rounding per addition
        err = err + n * e + _U * np.abs(term) + _U * np.abs(total)
    return total, 1.01 * err


def _tail_terms(lv: np.ndarray, e: np.ndarray):
    """For an upper tail p with computed log ``lv`` (absolute error ``e``): y = -log1p(-p), a bound of y's relative
    error, and where p was kept (lv >= -700; a smaller tail would be subnormal). The elasticity of -log1p(-p) in p
    is p / ((1 - p)(-log(1 - p))) <= 1 / (1 - p); exp and log1p are taken to within 2u."""
    keep = lv >= _UNDERFLOW
    p = np.exp(np.where(keep, lv, -np.inf))
    with np.errstate(divide="ignore", invalid="ignore"):
        kappa = np.where(p < 0.99, 1.01 / (1.0 - p), np.inf)
        y = -np.log1p(-p)
    return y, kappa * (e + 2 * _U) + 2 * _U, keep


def _log_survival(parts):
    """log S, S = 1 - prod_k (1 - p_k)^(n_k), at each edge, with p_k the upper tails, and a bound of its
    absolute error.

    Two regimes, from a = sum_k n_k p_k:

    * a < e^-80: S is within a factor [1 - a, 1] of a (a (1 - a/2) <= 1 - e^-a <= S <= a, union bound), so
      log S = log a up to a, log a being a logsumexp of the log tails (their errors, log n, the logsumexp);
    * else x = sum_k n_k y_k, y_k = -log1p(-p_k) (:func:`_tail_terms`), S = -expm1(-x): the elasticity of
      1 - e^-x in x is x e^-x / (1 - e^-x) <= 1; a sum of positive terms is within the largest relative error of
      its terms (plus one u per addition); a tail below e^-700 is dropped from x and charged: n_k p_k / x relative.

    Each exp, log, log1p, expm1 call is taken to within 2u relative, each +, * within u.

    Args:
        parts: list of (n_k, log p_k as computed, its absolute error bound, :func:`_tail_terms` of it).
    """
    logs = [math.log(n) + lv for n, lv, _, _ in parts]
    log_a = logs[0] if len(parts) == 1 else np.logaddexp(logs[0], logs[1])
    err_small = (np.maximum.reduce([e for _, _, e, _ in parts]) + np.exp(np.minimum(log_a, 0.0))
                 + 4 * _U * (1.0 + np.abs(log_a)) + 2 * _U * max(math.log(n) for n, _, _, _ in parts))
    x, err_x, dropped = 0.0, 0.0, 0.0
    for n, lv, _, (y, e_y, keep) in parts:
        x = x + (y * n if n > 1 else y)
        err_x = np.maximum(err_x, np.where(keep, e_y + _U, 0.0))
        dropped = dropped + np.where(keep, 0.0, n * math.exp(_UNDERFLOW))
    with np.errstate(divide="ignore", invalid="ignore"):
        err_x = err_x + len(parts) * _U + dropped / x * 1.01
        log_s = np.log(-np.expm1(-x))
        err_big = err_x + 2 * _U + 2 * _U * np.abs(log_s)
    small = log_a < _SMALL
    return np.where(small, log_a, log_s), 1.01 * np.where(small, err_small, err_big) + 4 * _U


def _cells(lf, ef, ls, es):
    """log of each cell's mass, and a bound of its relative error, from the log CDF (lf, ef) and log survival
    (ls, es) at the edges: the lower half-line F(m_0), the cells F(m_{i+1}) - F(m_i) on the CDF side where
    S(m_i) > 1/2 and S(m_i) - S(m_{i+1}) on the survival side where S(m_i) <= 1/2, the upper half-line S(m_K).

    A difference e^A - e^B (A > B computed, absolute errors a, b) has relative error at most
    (expm1(a) + rho expm1(b)) / (1 - rho), rho = e^{B - A}; then the roundings of log(-expm1(B - A)) + A:
    (rho / (1 - rho)) u |B - A| (the subtraction, through expm1), 2u (expm1), 2u |log(1 - rho)| (log), u |result|.
    """
    use_s = ls[:-1] <= math.log(0.5)
    big = np.where(use_s, ls[:-1], lf[1:])
    small = np.where(use_s, ls[1:], lf[:-1])
    e_big = np.where(use_s, es[:-1], ef[1:])
    e_small = np.where(use_s, es[1:], ef[:-1])
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        d = small - big
        rho = np.exp(d)
        frac = -np.expm1(d)
        log_frac = np.log(frac)
        inner = big + log_frac
        rel_ends = (_expm1_up(e_big) + rho * _expm1_up(e_small)) / frac
        rounding = 1.01 * ((rho / frac) * _U * np.abs(d) + 2 * _U + 2 * _U * np.abs(log_frac) + _U * np.abs(inner))
        rel = rel_ends + (1.0 + rel_ends) * _expm1_up(rounding)  # (1 + rel_ends) e^rounding - 1
        ok = (d < 0) & np.isfinite(inner) & (rel_ends < 1.0)
    logs = np.concatenate([[lf[0]], np.where(ok, inner, -np.inf), [ls[-1]]])
    rel = np.concatenate([_expm1_up(ef[:1]), np.where(ok, rel, np.inf), _expm1_up(es[-1:])])
    return logs, 1.01 * rel + 8 * _U


def _expm1_up(x: np.ndarray) -> np.ndarray:
    """An upper bound of e^x - 1 for x >= 0 without a transcendental call: x (1 + x) for x <= 1 (e^x - 1 = x + x^2
    (1/2 + x/6 + ...) <= x + x^2 there), inf beyond."""
    return np.where(x <= 1.0, x * (1.0 + x), np.inf)


@dataclass(frozen=True)
class BinnedPair:
    """The laws of the max statistic M = max_t y_t of one epoch's pair, binned: P = (1/T) sum_t N(mu e_t, I_T)
    against Q = N(0, I_T) (:func:`binned_max_statistic`).

    Attributes:
        edges: the cell edges m_0 < ... < m_K; the cells are (-inf, m_0], (m_i, m_{i+1}], (m_K, inf).
        log_p: log of each cell's P-mass as computed (-inf: dropped, its P- and Q-mass both).
        log_q: log of each cell's Q-mass as computed (-inf: dropped).
        rel_errors: per cell, a bound on the relative error of both computed masses (0 where dropped).
        rel_error: the largest of ``rel_errors``, in [0, 1e-6]: what the lower bounds charge every mass.
        dropped: the number of cells dropped because their masses could not be certified to 1e-6.
    """

    edges: np.ndarray
    log_p: np.ndarray
    log_q: np.ndarray
    rel_errors: np.ndarray
    rel_error: float
    dropped: int


def _edges(mu: float, steps: int, bins: int) -> np.ndarray:
    """From m_0 with F_Q(m_0) = Phi(m_0)^T = 1e-40 (so F_P(m_0) <= F_Q(m_0): P's law is stochastically larger) to
    m_K = mu + r, T Phi(-r) = 1e-40 (S_P(m_K) <= Phi(-r) + (T - 1) Phi(-mu - r) <= 1e-40), in ``bins`` equal
    cells. Any edges give a lower bound (binning is a post-processing); these put the cells where the masses are."""
    log_tail = math.log(_LINE_TAIL)
    lo = float(ndtri_exp(log_tail / steps))
    hi = mu - float(ndtri_exp(log_tail - math.log(steps)))
    return np.linspace(lo, hi, bins + 1)


@functools.lru_cache(maxsize=32)
def binned_max_statistic_unchecked(mu: float, steps: int, bins: int) -> BinnedPair:
    """:func:`binned_max_statistic` for validated arguments (cached: the grid and both orders bin the same pair).

    Args:
        mu: the shift, in (0, inf) (not checked).
        steps: T, an int in [1, 1e9] (not checked).
        bins: cells between the two half-lines, an int >= 100 (not checked).
    """
    edges = _edges(mu, steps, bins)
    z = edges - mu  # the P argument, rounded: charged by argument_err
    l0, l0_up = log_ndtr(edges), log_ndtr(-edges)  # log Phi(m), log Phi(-m)
    l1, l1_up = log_ndtr(z), log_ndtr(-z)
    e0, e0_up = _log_ndtr_err(l0), _log_ndtr_err(l0_up)
    arg = argument_err(z)
    e1, e1_up = _log_ndtr_err(l1) + arg, _log_ndtr_err(l1_up) + arg
    t0, t1 = _tail_terms(l0_up, e0_up), _tail_terms(l1_up, e1_up)  # Phi(-m) serves both laws
    lq, rq = _cells(*_log_cdf([(steps, l0, e0)]), *_log_survival([(steps, l0_up, e0_up, t0)]))
    p_cdf = [(1, l1, e1)] + ([(steps - 1, l0, e0)] if steps > 1 else [])
    p_sf = [(1, l1_up, e1_up, t1)] + ([(steps - 1, l0_up, e0_up, t0)] if steps > 1 else [])
    lp, rp = _cells(*_log_cdf(p_cdf), *_log_survival(p_sf))
    rel = np.maximum(rp, rq)
    # a kept cell has both masses and a certified error; Q has a positive density everywhere, so a Q-mass computed
    # as 0 is a rounding: the cell is dropped (its P-mass not moved to +inf), which only lowers the bound
    keep = np.isfinite(lp) & np.isfinite(lq) & (rel <= _REL_MAX)
    lp, lq = np.where(keep, lp, -np.inf), np.where(keep, lq, -np.inf)
    rel = np.where(keep, rel, 0.0)
    for a in (edges, lp, lq, rel):
        a.setflags(write=False)
    return BinnedPair(edges, lp, lq, rel, float(rel.max()), int(np.count_nonzero(~keep)))


def binned_max_statistic(mu: float, steps_per_epoch: int, *, bins: int = 20_000) -> BinnedPair:
    """The binned laws of M = max_t y_t under P = (1/T) sum_t N(mu e_t, I_T) and Q = N(0, I_T), with certified
    masses: F_Q(m) = Phi(m)^T and F_P(m) = Phi(m - mu) Phi(m)^(T - 1) (the maximum of independent normals;
    x's coordinate is uniform over the T steps and the law of M is the same for each).

    Each cell mass is a difference of two CDF values (cells where the survival function exceeds 1/2) or of two
    survival values S = 1 - F, computed as -expm1(sum_k n_k log1p(-p_k)) from the upper tails p_k (log_ndtr of
    the negated arguments), so that no value near 1 is subtracted from 1. Errors: log_ndtr to 4 u (2 + |log|)
    (privcal's, proven: ``privcal.privacy_loss.log_phi``), the rounding of the argument m - mu (Mills ratio, Birnbaum
    1942), every exp/log/log1p/expm1 to 2u and every +, * to u, and each difference's cancellation: ends known
    to absolute log errors a, b, with ratio rho < 1, give (expm1(a) + rho expm1(b)) / (1 - rho). Cells whose
    bound exceeds 1e-6 are dropped (a sub-measure of the binned pair: its hockey-stick divergence is no larger).

    Args:
        mu: the shift of the differing record's step, in noise standard deviations, in (0, inf).
        steps_per_epoch: T, an int in [1, 1e9].
        bins: cells between the two half-lines, an int >= 100; default 20,000.

    Returns:
        a :class:`BinnedPair`.

    Raises:
        ValueError: an argument is outside its range.
    """
    mu = V.positive("mu", mu)
    steps = check_steps_per_epoch(steps_per_epoch)
    bins = check_bins(bins)
    return binned_max_statistic_unchecked(mu, steps, bins)


def check_bins(bins: int) -> int:
    """``bins`` as an int, or a ``ValueError`` naming it: an int >= 100.

    Args:
        bins: cells of the binned line of M.
    """
    bins = V.positive_int("bins", bins)
    if bins < 100:
        raise ValueError(f"bins must be an integer >= 100, got {bins!r}")
    return bins


def check_steps_per_epoch(steps_per_epoch: Optional[int]) -> int:
    """``steps_per_epoch`` (T) as an int, or a ``ValueError`` naming it: an int in [1, 1e9].

    Args:
        steps_per_epoch: T, an int in [1, 1e9] (None is refused).
    """
    if steps_per_epoch is None:
        raise ValueError("steps_per_epoch must be an integer in [1, 1e9], got None (full_batch needs it)")
    steps = V.positive_int("steps_per_epoch", steps_per_epoch)
    if steps > 10**9:
        raise ValueError(f"steps_per_epoch must be an integer in [1, 1e9], got {steps_per_epoch!r}")
    return steps
