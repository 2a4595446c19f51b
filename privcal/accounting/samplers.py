r"""Shuffled, balls-in-bins and full-batch samplers: a valid upper bound and a certified realisable lower bound.

Each step releases f(batch) + N(0, sigma^2 I), f a sum of per-record contributions; Delta is the sensitivity
under the neighbouring relation (replace-one: sup ||f(x) - f(x')||; zero-out: sup ||f(x) - f(null)||, f(null) = 0,
the null record keeping x's slot; add/remove: sup ||f(x)||), s = sigma / Delta the noise multiplier; E epochs of
T steps. The samplers (docs/samplers.md has every proof):

* **shuffle**: each epoch cuts a uniformly random permutation of the N records into T disjoint batches of
  b = N / T, drawn afresh each epoch (reshuffled) or once for the whole run (``persistent``);
* **balls_in_bins**: each record is assigned to one uniformly random step of each epoch, independently;
* **full_batch**: every step uses the whole data set;
* **poisson**, **without_replacement**: the amplified samplers priced by ``privcal.accounting.pairs`` (listed in
  :data:`PAIRS` for completeness; not priced here).

**Upper bound (no amplification).** Conditioned on the batch assignment, which has the same law under both
data sets of a neighbouring pair (a coupling), the differing record moves at most one step per epoch, by at
most Delta, and the other steps not at all: each epoch is mu = 1/s Gaussian DP (Dong, Roth & Su 2022, JRSS-B,
arXiv 1905.02383, Thm 2.7 for the Gaussian mechanism, Cor. 3.3 for composition; a step whose output law is the
same under both data sets is 0-GDP), and E epochs are sqrt(E)/s-GDP. The hockey-stick divergence is jointly
convex, so averaging over the coupled assignment keeps the bound: the run is dominated by (N(mu, 1), N(0, 1)),
mu = sqrt(E)/s, whose epsilon(delta) is the exact Gaussian profile (Balle & Wang 2018, arXiv 1805.06530, Thm 8;
``privcal.analysis.gaussian``). Full batch: mu = sqrt(E T)/s, exact.

**Lower bound (realisable, certified).** Others contribute 0 and the differing record Delta: one epoch's output
is, in units of the noise, P = (1/T) sum_t N(mu_1 e_t, I_T) against Q = N(0, I_T), mu_1 = 1/s. The statistic
M = max_t y_t (the test of Chua, Ghazi, Kamath, Kumar, Manurangsi, Sinha & Zhang, ICML 2024, arXiv 2403.17673) is
a post-processing, so by data processing any lower bound for the pair of laws of M is one for the mechanism:

    F_Q(m) = Phi(m)^T,        F_P(m) = Phi(m - mu_1) Phi(m)^(T - 1).

The line of M is cut into cells (a further post-processing); each cell's P- and Q-mass is computed in log space
with a certified relative error (:func:`binned_max_statistic`), and the binned pair becomes a dominated PMF on a
loss grid (``privcal.accounting.realisable.dominated_pmf``), composed by FFT (``privcal.privacy_loss``) and read
on its lower side. Reshuffled epochs and balls-in-bins epochs are independent: the E-fold composition. A
persistent permutation keeps x in one batch: the per-batch sums over the epochs are a post-processing with the
law of the one-epoch pair at mu_1 = sqrt(E)/s, composed once. Full batch: the Gaussian pair at sqrt(E T)/s.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Optional, Union

import numpy as np
from scipy.special import log_ndtr, ndtri_exp

from .. import _validate as V
from ..analysis import gaussian
from .. import privacy_loss as L
from ..errors import UnsupportedEventError
from .events import Neighbouring
from .relations import REFUSED_EPOCHS
from .pld_accountant import default_memory_limit
from .realisable import dominated_pmf

__all__ = [
    "SAMPLERS",
    "SamplerPair",
    "PAIRS",
    "refusal",
    "epsilon_upper",
    "delta_upper",
    "BinnedPair",
    "binned_max_statistic",
    "epsilon_lower",
    "delta_lower",
]

#: every batch sampler privcal names
SAMPLERS = ("poisson", "without_replacement", "shuffle", "balls_in_bins", "full_batch")
#: the samplers this module prices (the others amplify, and are priced by ``privcal.accounting.pairs``)
_PRICED_HERE = ("shuffle", "balls_in_bins", "full_batch")
_RELATIONS = tuple(n.value for n in Neighbouring)

_U = 2.0**-53
#: |log_ndtr(z) - log Phi(z)| <= _LOG_NDTR_ERR u (2 + |log Phi(z)|): ``privcal.privacy_loss.LOG_NDTR_ERR`` (8;
#: measured at most 4.76 over 23,000 random z in [-1e6, 40], tests/test_samplers.py)
_LOG_NDTR_ERR = L.LOG_NDTR_ERR
#: the binned line ends where Q (resp. P's upper tail) has mass below this
_LINE_TAIL = 1e-40
#: below this log tail, exp() is not taken (it would be subnormal); the dropped part is charged
_UNDERFLOW = -700.0
#: below this log of sum_k n_k p_k, the survival 1 - prod_k (1 - p_k)^n_k is taken as sum_k n_k p_k
_SMALL = -80.0
#: a cell whose computed masses carry a larger relative error bound is dropped (a sub-measure: a lower bound)
_REL_MAX = 1e-6
#: arrays alive per grid cell of one composition (as ``privcal.privacy_loss``), for the memory cap
_BYTES_PER_CELL = 8 * 16
#: a single (uncomposed) pair is put on at most this many grid cells
_SINGLE_CELLS = 2**18


# ------------------------------------------------------------------------------------------------ the table
@dataclass(frozen=True)
class SamplerPair:
    """How privcal treats one (sampler, neighbouring relation) pair.

    Attributes:
        priced: whether privcal gives an upper bound on epsilon for it.
        upper: what prices it (the dominating pair or bound, with the proof's source), or "" when refused.
        lower: the realisable pair privcal bounds from below, or why there is none.
        refusal: None when priced; else one line: why it is refused and what would be valid instead.
    """

    priced: bool
    upper: str
    lower: str
    refusal: Optional[str]


_AR, _RO, _ZO = Neighbouring.ADD_REMOVE, Neighbouring.REPLACE_ONE, Neighbouring.ZERO_OUT
_NO_AMP = ("no amplification: conditioned on the {what} (a coupling), one step per epoch moves by at most the "
           "sensitivity, so E epochs are sqrt(E)/s-GDP (Dong-Roth-Su 2022 Thm 2.7, Cor. 3.3); joint convexity of "
           "the hockey-stick divergence over the coupling: dominated by (N(sqrt(E)/s, 1), N(0, 1)), exact profile "
           "Balle-Wang 2018 Thm 8 (docs/samplers.md, {section})")
_MAX_LOWER = ("the max statistic of the one-epoch pair (1/T) sum_t N(e_t/s, I) vs N(0, I) ({how}), binned with "
              "certified masses, composed over the epochs; persistent: the same pair at sqrt(E)/s, once "
              "(docs/samplers.md, 3)")

#: (sampler, relation) -> :class:`SamplerPair`, for every sampler of :data:`SAMPLERS` and every relation
PAIRS: dict = {
    ("poisson", _AR): SamplerPair(
        True, "the Poisson pair (privcal.accounting.pairs; Zhu-Dong-Wang 2022 Sec. 5, Mironov-Talwar-Zhang 2019)",
        "the same pair (realised; privcal.accounting.realisable)", None),
    ("poisson", _RO): SamplerPair(
        False, "", "none here",
        "poisson sampling is priced only under add_remove neighbours (no dominating pair is proven here under "
        "replace_one); state the sensitivity under add_remove (relation='add_remove')"),
    ("poisson", _ZO): SamplerPair(
        False, "", "none here",
        "poisson sampling is priced only under add_remove neighbours (no dominating pair is proven here under "
        "zero_out); state the sensitivity under add_remove (relation='add_remove')"),
    ("without_replacement", _AR): SamplerPair(
        False, "", "none here",
        "a release of a fixed-size batch drawn without replacement is priced under replace_one or zero_out "
        "neighbours (privcal.accounting.pairs); state its sensitivity under one of those (a history of them is "
        "converted to add_remove by privcal.accounting.relations)"),
    ("without_replacement", _RO): SamplerPair(
        True, "the Poisson pair at the replace-one sensitivity (privcal.accounting.pairs; Balle-Barthe-Gaboardi "
        "2018 Thm 10, Zhu-Dong-Wang 2022 Sec. 5)", "the same pair (realised; privcal.accounting.realisable)", None),
    ("without_replacement", _ZO): SamplerPair(
        True, "replace-one on X u {null} at twice the sensitivity (privcal.accounting.pairs; docs/pld.md 1.3)",
        "the displacing mixture pair (privcal.accounting.realisable; docs/pld.md 1.3)", None),
    ("shuffle", _AR): SamplerPair(False, "", "none here", REFUSED_EPOCHS[("shuffle", _AR)]),
    ("shuffle", _RO): SamplerPair(
        True, _NO_AMP.format(what="permutations; the replaced record keeps its slot", section="2.1"),
        _MAX_LOWER.format(how="D = (a, c, ..., c), D' = (c, ..., c), f(a) - f(c) = the sensitivity"), None),
    ("shuffle", _ZO): SamplerPair(
        True, _NO_AMP.format(what="permutations; the null record keeps x's slot", section="2.1"),
        _MAX_LOWER.format(how="others contribute 0, x the sensitivity, null 0"), None),
    ("balls_in_bins", _AR): SamplerPair(
        True, _NO_AMP.format(what="other records' steps, independent of x's", section="2.2"),
        _MAX_LOWER.format(how="others contribute 0, the added record the sensitivity"), None),
    ("balls_in_bins", _RO): SamplerPair(
        True, _NO_AMP.format(what="every record's step, the replaced record's included", section="2.2"),
        _MAX_LOWER.format(how="D = (a, c, ..., c), D' = (c, ..., c), f(a) - f(c) = the sensitivity"), None),
    ("balls_in_bins", _ZO): SamplerPair(
        True, _NO_AMP.format(what="every record's step, the null record's included", section="2.2"),
        _MAX_LOWER.format(how="others contribute 0, x the sensitivity, null 0"), None),
}
for _rel in (_AR, _RO, _ZO):
    PAIRS[("full_batch", _rel)] = SamplerPair(
        True, "exact: E T Gaussian releases of sensitivity Delta, mu = sqrt(E T)/s (Dong-Roth-Su 2022 Cor. 3.3; "
        "Balle-Wang 2018 Thm 8; docs/samplers.md, 2.3)",
        "the Gaussian pair at sqrt(E T)/s (realised: others 0, x the sensitivity), binned with certified masses",
        None)
del _rel


def _relation(relation) -> Neighbouring:
    """Validated relation (a Neighbouring or its string value)."""
    return Neighbouring(V.choice("relation", relation, _RELATIONS))


def refusal(sampler: str, relation: Union[Neighbouring, str]) -> Optional[str]:
    """Why privcal refuses to price ``sampler`` under ``relation``, with what would be valid instead; None if
    it prices it (:data:`PAIRS`).

    Args:
        sampler: one of :data:`SAMPLERS`.
        relation: "add_remove", "replace_one" or "zero_out" (or a :class:`Neighbouring`).

    Returns:
        one line, or None.

    Raises:
        ValueError: an argument is not one of its choices.
    """
    sampler = V.choice("sampler", sampler, SAMPLERS)
    return PAIRS[(sampler, _relation(relation))].refusal


def _check_priced(sampler: str, relation: Neighbouring) -> None:
    """UnsupportedEventError naming the pair where :data:`PAIRS` refuses it."""
    why = PAIRS[(sampler, relation)].refusal
    if why is not None:
        raise UnsupportedEventError(f"sampler={sampler!r} with relation={relation.value!r} is refused: {why}")


def _own_sampler(sampler) -> str:
    """``sampler`` if this module prices it; ValueError pointing the amplified samplers elsewhere."""
    if sampler in ("poisson", "without_replacement"):
        raise ValueError(f"sampler must be one of {_PRICED_HERE} here, got {sampler!r} (poisson and "
                         "without_replacement batches are priced with amplification by privcal.epsilon(..., "
                         "sampling=...))")
    return V.choice("sampler", sampler, _PRICED_HERE)


def _epochs_and_steps(epochs, steps_per_epoch, required: bool) -> tuple[int, Optional[int]]:
    epochs = V.positive_int("epochs", epochs)
    if steps_per_epoch is None:
        if required:
            raise ValueError("steps_per_epoch must be an integer in [1, 1e9], got None (full_batch needs it)")
        return epochs, None
    steps = V.positive_int("steps_per_epoch", steps_per_epoch)
    if steps > 10**9:
        raise ValueError(f"steps_per_epoch must be an integer in [1, 1e9], got {steps_per_epoch!r}")
    return epochs, steps


# --------------------------------------------------------------------------------------------- upper bound
def _mu_upper(noise_multiplier: float, epochs: int, steps: Optional[int], sampler: str) -> float:
    """mu of the dominating Gaussian pair: sqrt(E T)/s for a full batch, sqrt(E)/s otherwise (module docstring)."""
    releases = epochs * steps if sampler == "full_batch" else epochs
    return math.sqrt(releases) / noise_multiplier


def _upper_arguments(noise_multiplier, epochs, sampler, steps_per_epoch, relation):
    s = V.positive("noise_multiplier", noise_multiplier)
    sampler = _own_sampler(sampler)
    relation = _relation(relation)
    epochs, steps = _epochs_and_steps(epochs, steps_per_epoch, sampler == "full_batch")
    _check_priced(sampler, relation)
    return _mu_upper(s, epochs, steps, sampler)


def epsilon_upper(noise_multiplier: float, epochs: int, delta: float, *, sampler: str,
                  steps_per_epoch: Optional[int] = None, relation: Union[Neighbouring, str] = "zero_out") -> float:
    """Upper bound on epsilon at ``delta`` of E epochs of a shuffled, balls-in-bins or full-batch run, without
    amplification: the exact Gaussian profile at mu = sqrt(E)/s (sqrt(E T)/s for a full batch), valid for a
    reshuffled or a persistent permutation (module docstring; Dong-Roth-Su 2022 Cor. 3.3, Balle-Wang 2018 Thm 8).

    Args:
        noise_multiplier: s = sigma / sensitivity (the sensitivity meant under ``relation``), in (0, inf).
        epochs: E, an int >= 1.
        delta: in (0, 1).
        sampler: "shuffle", "balls_in_bins" or "full_batch".
        steps_per_epoch: T, an int in [1, 1e9]; needed for "full_batch" only (default None).
        relation: the neighbouring relation the sensitivity is meant under, "zero_out" (default: the
            sensitivity of contributions clipped to C is C, as Opacus's noise multiplier assumes), "replace_one"
            (2C) or "add_remove" (C).

    Returns:
        an upper bound on epsilon, in [0, inf).

    Raises:
        ValueError: an argument is outside its range.
        UnsupportedEventError: the (sampler, relation) pair is refused (:func:`refusal`).
    """
    delta = V.open_unit("delta", delta)
    mu = _upper_arguments(noise_multiplier, epochs, sampler, steps_per_epoch, relation)
    return gaussian.epsilon_exact_unchecked(delta, mu)


def delta_upper(noise_multiplier: float, epochs: int, epsilon: float, *, sampler: str,
                steps_per_epoch: Optional[int] = None, relation: Union[Neighbouring, str] = "zero_out") -> float:
    """Upper bound on delta at ``epsilon`` (see :func:`epsilon_upper`): the exact Gaussian profile
    delta(epsilon; mu) = Phi(mu/2 - epsilon/mu) - e^epsilon Phi(-mu/2 - epsilon/mu) (Balle-Wang 2018, Thm 8).

    Args:
        noise_multiplier: s = sigma / sensitivity, in (0, inf).
        epochs: E, an int >= 1.
        epsilon: in [0, inf).
        sampler: "shuffle", "balls_in_bins" or "full_batch".
        steps_per_epoch: T, an int in [1, 1e9]; needed for "full_batch" only (default None).
        relation: "zero_out" (default), "replace_one" or "add_remove" (as :func:`epsilon_upper`).

    Returns:
        an upper bound on delta, in [0, 1].

    Raises:
        ValueError: an argument is outside its range.
        UnsupportedEventError: the (sampler, relation) pair is refused (:func:`refusal`).
    """
    epsilon = V.nonnegative("epsilon", epsilon)
    mu = _upper_arguments(noise_multiplier, epochs, sampler, steps_per_epoch, relation)
    return gaussian.delta_exact_unchecked(epsilon, mu)


# ------------------------------------------------------------------------- certified masses of the max statistic
def _log_ndtr_err(log_value: np.ndarray) -> np.ndarray:
    """Bound of |log_ndtr(z) - log Phi(z)| from the computed value: C u (2 + |v|) with C = 8, plus the
    first-order slack of evaluating the bound at the computed rather than the exact log (|v - v_exact| <= 1e-9
    relative wherever v is finite, so a factor 1.01 covers it)."""
    return 1.01 * _LOG_NDTR_ERR * _U * (2.0 + np.abs(log_value))


def argument_err(z: np.ndarray) -> np.ndarray:
    """Bound of |log Phi(z_hat) - log Phi(z)| for a computed argument z_hat = fl(m - mu) (|z_hat - z| <= u |z_hat|
    / (1 - u)): |d/dz log Phi(z)| = phi(z)/Phi(z) <= 1 + |z| (Birnbaum 1942, Ann. Math. Stat. 13: the Mills ratio
    Phi(-x)/phi(x) > (sqrt(x^2 + 4) - x)/2 for x >= 0, so phi/Phi(-x) < (sqrt(x^2 + 4) + x)/2 <= 1 + x; and
    phi(z)/Phi(z) <= 0.8 for z >= 0); the same for log Phi(-z)."""
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
def _binned(mu: float, steps: int, bins: int) -> BinnedPair:
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
    the negated arguments), so that no value near 1 is subtracted from 1. Errors: log_ndtr to 8 u (2 + |log|)
    (tests/test_samplers.py measures at most 4.76), the rounding of the argument m - mu (Mills ratio, Birnbaum
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
    _, steps = _epochs_and_steps(1, steps_per_epoch, True)
    bins = _bins(bins)
    return _binned(mu, steps, bins)


def _bins(bins) -> int:
    bins = V.positive_int("bins", bins)
    if bins < 100:
        raise ValueError(f"bins must be an integer >= 100, got {bins!r}")
    return bins


# ------------------------------------------------------------------------------------------- lower bound
def _plan(noise_multiplier: float, steps: int, epochs: int, sampler: str, persistent: bool) -> tuple[float, int, int]:
    """(mu of the one-pair shift, T of the pair, times it is composed): full batch the Gaussian pair at
    sqrt(E T)/s once; persistent the one-epoch pair at sqrt(E)/s once; else the one-epoch pair at 1/s, E times."""
    if sampler == "full_batch":
        return math.sqrt(epochs * steps) / noise_multiplier, 1, 1
    if persistent:
        return math.sqrt(epochs) / noise_multiplier, steps, 1
    return 1.0 / noise_multiplier, steps, epochs


def _orders(pair: BinnedPair, count: int) -> list:
    """(log_p, log_q) of both orders, (P, Q) and (Q, P); for a pair composed once, only the cells with a positive
    loss (the others add nothing to delta(eps) = sum (p - e^eps q)_+ at eps >= 0)."""
    out = []
    for lp, lq in ((pair.log_p, pair.log_q), (pair.log_q, pair.log_p)):
        if count == 1:
            with np.errstate(invalid="ignore"):
                pos = lp - lq > 0
            lp, lq = np.where(pos, lp, -np.inf), np.where(pos, lq, -np.inf)
        out.append((lp, lq))
    return out


def _losses(lp: np.ndarray, lq: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(loss, P-mass) of the cells with both masses."""
    fin = np.isfinite(lp) & np.isfinite(lq)
    return lp[fin] - lq[fin], np.exp(lp[fin])


def _grid(orders: list, count: int) -> float:
    """The loss grid: the PLD's rule grid, 2 sqrt(1e-3 x the larger order's loss variance under its first law),
    as a power of two in [2^-17, 2^-8]; a pair composed once is put on at most 2^18 cells (a coarser grid: a
    weaker lower bound, and no composition to resolve). Unlike ``privcal.accounting.realisable``'s grid it is not
    capped at 0.08 / sqrt(count): over s in [0.3, 10], T in [2, 1e4], E in [1, 1e4] the bound on this grid is
    within 0.9 % of that on grids 4 and 16 times finer (within 0.11 % wherever epsilon > 0.01), and the cap would
    make the composition of E = 1e4 epochs (T = 100, s = 1) six times slower for no gain."""
    var, top, bottom = 0.0, -math.inf, math.inf
    for lp, lq in orders:
        loss, p = _losses(lp, lq)
        mass = float(p.sum())
        if mass > 0:
            mean = float(np.sum(p * loss)) / mass
            var = max(var, float(np.sum(p * (loss - mean) ** 2)) / mass)
            top, bottom = max(top, float(loss.max())), min(bottom, float(loss.min()))
    h = 2.0 * math.sqrt(1e-3 * var) if var > 0 else 2.0**-8
    h = 2.0 ** max(min(math.floor(math.log2(h)), -8), -17)
    if count == 1 and math.isfinite(top):
        h = max(h, 2.0 ** math.ceil(math.log2(max(top - bottom, 1e-300) / _SINGLE_CELLS)))
    return h


def _fit(cells: int) -> None:
    """MemoryLimitError where ``cells`` grid cells exceed the memory cap (``privcal.pld``'s, 256 MiB by default)."""
    cap = default_memory_limit()
    if cells * _BYTES_PER_CELL > cap:
        raise L.MemoryLimitError(f"the sampler's realisable pair needs {cells} grid cells, beyond memory_limit = "
                                 f"{cap / 2**20:.0f} MB")


def _composed(lp: np.ndarray, lq: np.ndarray, r: float, count: int, h: float, tail: float):
    """The dominated PMF of one order on the grid h (or the finest 4^k h whose arrays fit the memory cap: a coarser
    grid is still a lower bound), composed ``count`` times; None if the order has no finite loss."""
    loss, _ = _losses(lp, lq)
    if loss.size == 0:
        return None
    for _ in range(12):
        try:
            _fit(int((loss.max() - loss.min()) / h) + 2)
            # on a coarse grid (a huge loss range) the pairing's e^{g_j - g_i} over a pile's reach (512 cells) can
            # overflow: that mixture's check (e^g Q-mass <= P-mass) then fails and it is not made (the PMF stays
            # dominated), but numpy would warn
            with np.errstate(over="ignore", invalid="ignore"):
                pmf = dominated_pmf(lp, lq, h, r)
            return L.compose_pmfs([(pmf, count)], tail, check=_fit)
        except L.MemoryLimitError:
            h *= 4.0
    raise L.MemoryLimitError("the sampler's realisable pair exceeds the memory cap even 4^11 times coarser")


def _lower_arguments(noise_multiplier, steps_per_epoch, epochs, sampler, persistent, relation, value_discretization,
                     bins):
    s = V.positive("noise_multiplier", noise_multiplier)
    sampler = _own_sampler(sampler)
    relation = _relation(relation)
    persistent = V.choice("persistent", persistent, (False, True))
    if persistent and sampler == "full_batch":
        raise ValueError("persistent must be False for sampler='full_batch' (every step holds every record), got True")
    epochs, steps = _epochs_and_steps(epochs, steps_per_epoch, True)
    h = None if value_discretization is None else V.positive("value_discretization", value_discretization)
    bins = _bins(bins)
    _check_priced(sampler, relation)
    mu, t, count = _plan(s, steps, epochs, sampler, bool(persistent))
    pair = _binned(mu, t, bins)
    orders = _orders(pair, count)
    return pair, orders, count, (_grid(orders, count) if h is None else h)


def epsilon_lower(noise_multiplier: float, steps_per_epoch: int, epochs: int, delta: float, *,
                  sampler: str = "shuffle", persistent: bool = False,
                  relation: Union[Neighbouring, str] = "zero_out", value_discretization: Optional[float] = None,
                  bins: int = 20_000) -> float:
    """Certified lower bound on the epsilon at ``delta`` of E epochs of T steps of a shuffled, balls-in-bins or
    full-batch run: no mechanism run so, with contributions whose sensitivity is attained, is (epsilon, delta)-DP
    for a smaller epsilon (the realisable pair of the module docstring, read through the max statistic).

    Every record is taken to be in exactly one step of each epoch (batches may be unequal; a loader that drops the
    partial last batch is not covered: x may then sit out an epoch, docs/samplers.md, 3).

    The larger of both orders' bounds; each order's binned pair (:func:`binned_max_statistic`) becomes a dominated
    PMF on the loss grid, composed E times (reshuffled, balls-in-bins) or once (persistent: the pair at
    sqrt(E)/s; full batch: the Gaussian pair at sqrt(E T)/s), and is read on its lower side with the
    composition's round-off, window (tail min(max(1e-4 delta, 1e-18), 1e-9)) and evaluation bounds.

    Args:
        noise_multiplier: s = sigma / sensitivity (the sensitivity meant under ``relation``), in (0, inf).
        steps_per_epoch: T, an int in [1, 1e9].
        epochs: E, an int >= 1.
        delta: in (0, 1).
        sampler: "shuffle" (default), "balls_in_bins" or "full_batch".
        persistent: True for one permutation (or assignment) kept for the whole run, False (default) for a fresh
            one each epoch; must be False for "full_batch".
        relation: "zero_out" (default), "replace_one" or "add_remove" (as :func:`epsilon_upper`).
        value_discretization: the loss grid h in nats, in (0, inf); default None (from the pair's loss variance).
        bins: cells of the binned line of M, an int >= 100; default 20,000.

    Returns:
        a lower bound on epsilon, in [0, inf).

    Raises:
        ValueError: an argument is outside its range.
        UnsupportedEventError: the (sampler, relation) pair is refused (:func:`refusal`).
        MemoryLimitError: no grid up to 4^11 h fits the memory cap.
    """
    delta = V.open_unit("delta", delta)
    pair, orders, count, h = _lower_arguments(noise_multiplier, steps_per_epoch, epochs, sampler, persistent,
                                              relation, value_discretization, bins)
    tail = min(max(1e-4 * delta, L.WINDOW_TAIL), 1e-9)
    best = 0.0
    for lp, lq in orders:
        loss, _ = _losses(lp, lq)
        if loss.size == 0 or count * float(loss.max()) <= best:  # this order cannot raise the bound
            continue
        c = _composed(lp, lq, pair.rel_error, count, h, tail)
        best = max(best, L.epsilon_side(c, delta, upper=False))
    return best


def delta_lower(noise_multiplier: float, steps_per_epoch: int, epochs: int, epsilon: float, *,
                sampler: str = "shuffle", persistent: bool = False, relation: Union[Neighbouring, str] = "zero_out",
                value_discretization: Optional[float] = None, bins: int = 20_000) -> float:
    """Certified lower bound on the delta at ``epsilon`` of the realisable pair (see :func:`epsilon_lower`): the
    larger order's composed delta minus its round-off, window and evaluation slack.

    Args:
        noise_multiplier: s = sigma / sensitivity, in (0, inf).
        steps_per_epoch: T, an int in [1, 1e9].
        epochs: E, an int >= 1.
        epsilon: in [0, inf).
        sampler: "shuffle" (default), "balls_in_bins" or "full_batch".
        persistent: one permutation for the whole run (True) or a fresh one each epoch (False, default).
        relation: "zero_out" (default), "replace_one" or "add_remove".
        value_discretization: the loss grid h in nats, in (0, inf); default None.
        bins: cells of the binned line of M, an int >= 100; default 20,000.

    Returns:
        a lower bound on delta, in [0, 1].

    Raises:
        ValueError: an argument is outside its range.
        UnsupportedEventError: the (sampler, relation) pair is refused (:func:`refusal`).
        MemoryLimitError: no grid up to 4^11 h fits the memory cap.
    """
    epsilon = V.nonnegative("epsilon", epsilon)
    pair, orders, count, h = _lower_arguments(noise_multiplier, steps_per_epoch, epochs, sampler, persistent,
                                              relation, value_discretization, bins)
    best = 0.0
    for lp, lq in orders:
        c = _composed(lp, lq, pair.rel_error, count, h, L.WINDOW_TAIL)
        if c is not None:
            best = max(best, L.delta_at(c, epsilon) - L.slack(c, epsilon))
    return min(max(best, 0.0), 1.0)
