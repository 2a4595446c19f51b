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
with a certified relative error (:func:`binned_max_statistic`, ``privcal.accounting.max_statistic``), and the
binned pair becomes a dominated PMF on a loss grid (``privcal.accounting.realisable_pairs.dominated_pmf``),
composed by FFT (``privcal.privacy_loss``) and read on its lower side. Reshuffled epochs and balls-in-bins
epochs are independent: the E-fold composition. A persistent permutation keeps x in one batch: the per-batch
sums over the epochs are a post-processing with the law of the one-epoch pair at mu_1 = sqrt(E)/s, composed once.
Full batch: the Gaussian pair at sqrt(E T)/s.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Optional, Union

import numpy as np
from .. import _validate as V
from ..analysis import gaussian
from .. import privacy_loss as L
from ..errors import UnsupportedEventError
from .events import Neighbouring
from .relations import REFUSED_EPOCHS
from .pld_accountant import default_memory_limit
from .max_statistic import (BinnedPair, argument_err, binned_max_statistic, binned_max_statistic_unchecked,
                             check_bins, check_steps_per_epoch)
from .realisable_pairs import dominated_pmf

__all__ = [
    "SAMPLERS",
    "SamplerPair",
    "PAIRS",
    "refusal",
    "epsilon_upper",
    "delta_upper",
    "BinnedPair",
    "binned_max_statistic",
    "LowerBoundSettings",
    "epsilon_lower",
    "delta_lower",
]

#: every batch sampler privcal names
SAMPLERS = ("poisson", "without_replacement", "shuffle", "balls_in_bins", "full_batch")
#: the samplers this module prices (the others amplify, and are priced by ``privcal.accounting.pairs``)
_PRICED_HERE = ("shuffle", "balls_in_bins", "full_batch")
_RELATIONS = tuple(n.value for n in Neighbouring)

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
    if steps_per_epoch is None and not required:
        return epochs, None
    return epochs, check_steps_per_epoch(steps_per_epoch)


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


@dataclass(frozen=True)
class LowerBoundSettings:
    """How the realisable lower bounds of :func:`epsilon_lower` and :func:`delta_lower` are computed: the
    sampler, the relation and the numerics (defaults in one place: here; checked by those functions).

    Attributes:
        sampler: "shuffle" (default), "balls_in_bins" or "full_batch".
        persistent: True for one permutation (or assignment) kept for the whole run, False (default) for a fresh
            one each epoch; must be False for "full_batch".
        relation: "zero_out" (default), "replace_one" or "add_remove" (as :func:`epsilon_upper`).
        value_discretization: the loss grid h in nats, in (0, inf); default None (from the pair's loss variance).
        bins: cells of the binned line of M, an int >= 100; default 20,000.
    """

    sampler: str = "shuffle"
    persistent: bool = False
    relation: Union[Neighbouring, str] = "zero_out"
    value_discretization: Optional[float] = None
    bins: int = 20_000


def _lower_arguments(noise_multiplier, steps_per_epoch, epochs, settings: LowerBoundSettings):
    s = V.positive("noise_multiplier", noise_multiplier)
    sampler = _own_sampler(settings.sampler)
    relation = _relation(settings.relation)
    persistent = V.choice("persistent", settings.persistent, (False, True))
    if persistent and sampler == "full_batch":
        raise ValueError("persistent must be False for sampler='full_batch' (every step holds every record), got True")
    epochs, steps = _epochs_and_steps(epochs, steps_per_epoch, True)
    value_discretization = settings.value_discretization
    h = None if value_discretization is None else V.positive("value_discretization", value_discretization)
    bins = check_bins(settings.bins)
    _check_priced(sampler, relation)
    mu, t, count = _plan(s, steps, epochs, sampler, bool(persistent))
    pair = binned_max_statistic_unchecked(mu, t, bins)
    orders = _orders(pair, count)
    return pair, orders, count, (_grid(orders, count) if h is None else h)


def epsilon_lower(noise_multiplier: float, steps_per_epoch: int, epochs: int, delta: float,
                  settings: Optional[LowerBoundSettings] = None, **keywords) -> float:
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
        settings: the sampler, relation and numerics, a :class:`LowerBoundSettings`; default None: built from
            ``keywords``.
        keywords: fields of :class:`LowerBoundSettings` (``sampler``, ``persistent``, ``relation``,
            ``value_discretization``, ``bins``), replacing those of ``settings``.

    Returns:
        a lower bound on epsilon, in [0, inf).

    Raises:
        ValueError: an argument is outside its range.
        UnsupportedEventError: the (sampler, relation) pair is refused (:func:`refusal`).
        MemoryLimitError: no grid up to 4^11 h fits the memory cap.
    """
    settings = V.settings_with("epsilon_lower", LowerBoundSettings, settings, keywords)
    delta = V.open_unit("delta", delta)
    pair, orders, count, h = _lower_arguments(noise_multiplier, steps_per_epoch, epochs, settings)
    tail = min(max(1e-4 * delta, L.WINDOW_TAIL), 1e-9)
    best = 0.0
    for lp, lq in orders:
        loss, _ = _losses(lp, lq)
        if loss.size == 0 or count * float(loss.max()) <= best:  # this order cannot raise the bound
            continue
        c = _composed(lp, lq, pair.rel_error, count, h, tail)
        best = max(best, L.epsilon_side(c, delta, upper=False))
    return best


def delta_lower(noise_multiplier: float, steps_per_epoch: int, epochs: int, epsilon: float,
                settings: Optional[LowerBoundSettings] = None, **keywords) -> float:
    """Certified lower bound on the delta at ``epsilon`` of the realisable pair (see :func:`epsilon_lower`): the
    larger order's composed delta minus its round-off, window and evaluation slack.

    Args:
        noise_multiplier: s = sigma / sensitivity, in (0, inf).
        steps_per_epoch: T, an int in [1, 1e9].
        epochs: E, an int >= 1.
        epsilon: in [0, inf).
        settings: the sampler, relation and numerics, a :class:`LowerBoundSettings`; default None: built from
            ``keywords``.
        keywords: fields of :class:`LowerBoundSettings` (``sampler``, ``persistent``, ``relation``,
            ``value_discretization``, ``bins``), replacing those of ``settings``.

    Returns:
        a lower bound on delta, in [0, 1].

    Raises:
        ValueError: an argument is outside its range.
        UnsupportedEventError: the (sampler, relation) pair is refused (:func:`refusal`).
        MemoryLimitError: no grid up to 4^11 h fits the memory cap.
    """
    settings = V.settings_with("delta_lower", LowerBoundSettings, settings, keywords)
    epsilon = V.nonnegative("epsilon", epsilon)
    pair, orders, count, h = _lower_arguments(noise_multiplier, steps_per_epoch, epochs, settings)
    best = 0.0
    for lp, lq in orders:
        c = _composed(lp, lq, pair.rel_error, count, h, L.WINDOW_TAIL)
        if c is not None:
            best = max(best, L.delta_at(c, epsilon) - L.slack(c, epsilon))
    return min(max(best, 0.0), 1.0)
