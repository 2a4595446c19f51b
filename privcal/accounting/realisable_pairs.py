r"""The realisable worst-case pairs of neighbouring data sets, binned and put on a loss grid: steps 1 and 2 of
the certified lower bounds of ``privcal.accounting.realisable`` (whose module docstring states the pairs and
why each step only lowers the hockey-stick divergence; docs/pld.md, section 1).

* :func:`worst_case_pair`: the output laws (a :class:`MixturePair`) of two neighbouring data sets for one
  release under a history's relation, and :func:`realised_orders`: the orders two data sets realise at once;
* :func:`binned_cells`: the pair's cell masses on the binned line (a post-processing), in log space, with a
  certified relative error;
* :func:`paired_pmf` / :func:`dominated_pmf`: a dominated PMF of binned masses on the loss grid h Z.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Optional

import numpy as np

from .. import privacy_loss as L
from ..privacy_loss.log_phi import log_ndtr
from . import pairs
from .events import (
    EpochsEvent,
    Event,
    GaussianEvent,
    GaussianProcessEvent,
    Neighbouring,
    SubsampledEvent,
    flatten_unchecked,
    unwrap_unchecked,
    relation_of,
)
from .relations import conversion as relation_conversion

__all__ = [
    "MixturePair", "worst_case_pair", "realised_orders", "binned_cells", "paired_pmf", "both_orders",
    "binned_cells_of_order", "dominated_pmf", "tail_error",
]

_U = 2.0**-53
#: reach of the binned line beyond the extreme means, in noise standard deviations (tail mass < 1e-33)
_REACH = 12.0


@dataclass(frozen=True)
class MixturePair:
    """P = sum_i p_weights[i] N(p_means[i], s^2) against Q = sum_j q_weights[j] N(q_means[j], s^2) on the line
    (units of the sensitivity), the output laws of a realisable worst-case pair of neighbouring data sets.

    Attributes:
        p_weights, p_means: mixture weights and means of P (M(D)).
        q_weights, q_means: mixture weights and means of Q (M(D')).
        s: the noise standard deviation (the noise multiplier), in (0, inf).
        what: the data sets realising the pair, in words.
    """

    p_weights: tuple
    p_means: tuple
    q_weights: tuple
    q_means: tuple
    s: float
    what: str


def worst_case_pair(event: Event, relation: Optional[Neighbouring] = None) -> Optional[MixturePair]:
    """The realisable worst-case pair of one release in a history of ``relation`` (see the module docstring),
    or None for releases with none here (Laplace, (epsilon, delta) events) or that release nothing (infinite
    noise). In an add/remove history a without-replacement release's pair is realised in the removal order
    only (:func:`realised_orders`).

    Args:
        event: a Gaussian or Gaussian-process release, or a subsampled one (any priced sampling/relation).
        relation: the history's neighbouring relation (``privcal.accounting.events.relation_of``); default
            None (the release's own).

    Returns:
        a :class:`MixturePair` or None.
    """
    if not isinstance(event, Event):
        raise ValueError(f"event must be a privcal Event, got {event!r}")
    inner, n = unwrap_unchecked(event)
    if n != 1:
        raise ValueError(f"event must be a single release (use epsilon_lower for histories), got {event!r}")
    if isinstance(inner, (GaussianEvent, GaussianProcessEvent)):
        s = inner.noise_multiplier
        return None if math.isinf(s) else MixturePair((1.0,), (1.0,), (1.0,), (0.0,), s, "f(D) - f(D') = sensitivity")
    if isinstance(inner, EpochsEvent) and inner.sampling == "full_batch":  # every record in every step
        mu2 = pairs.epochs_mu2(inner, relation)
        return None if mu2 == 0 else MixturePair((1.0,), (1.0,), (1.0,), (0.0,), 1.0 / math.sqrt(mu2),
                                                 "every record in every step; f(D) - f(D') = sensitivity")
    if not isinstance(inner, SubsampledEvent):  # shuffled / balls-in-bins runs: samplers.epsilon_lower
        return None
    base, m = unwrap_unchecked(inner.event)
    if m != 1 or not isinstance(base, (GaussianEvent, GaussianProcessEvent)) or math.isinf(base.noise_multiplier):
        return None
    if (inner.sampling, inner.neighbouring) not in pairs.PRICED:
        raise ValueError(pairs.REFUSED_REASON.format(sampling=inner.sampling, relation=inner.neighbouring))
    conv = _conversion(inner, relation)
    s, q, k = base.noise_multiplier, inner.sample_rate, conv.factor
    if q >= 1.0:
        return MixturePair((1.0,), (k,), (1.0,), (0.0,), s, "the whole data set; f(D) - f(D') = sensitivity")
    if conv.realised == "none":  # without replacement, zero-out, in a zero-out history
        return MixturePair((1.0 - q, q), (0.0, 2.0), (1.0 - q, q), (0.0, 1.0), s,
                           "others contribute -C, the record +C against null (0); the null record displaces one")
    if inner.sampling == "poisson":
        what = "others contribute 0, the added record 1"
    elif conv.realised == "remove":
        what = ("D holds x and n - 1 records c, D' = D - x, f(x) - f(c) = the shift; the batch of D holds x with "
                "probability q = b/n, in place of one c")
    elif k == 2.0:
        what = "f(null) = 0, f(x) = C, f(x') = f(others) = -C: the batch sums differ by 2C"
    else:
        what = "D = (a, c, ..., c), D' = (c, ..., c), f(a) - f(c) = sensitivity"
    return MixturePair((1.0 - q, q), (0.0, k), (1.0,), (0.0,), s, what)


def _conversion(inner: SubsampledEvent, relation: Optional[Neighbouring]):
    conv = relation_conversion(inner.sampling, inner.neighbouring, relation or inner.neighbouring,
                               inner.sample_rate >= 1.0)
    if conv is None:
        raise ValueError(f"{inner.sampling}/{inner.neighbouring.value} releases have no proven pair under "
                         f"{relation.value} neighbours")
    return conv


def realised_orders(event: Event) -> tuple[int, ...]:
    """The orders of the worst-case pairs that two neighbouring data sets realise for every release of
    ``event`` at once: (0, 1) (the data set holding the record against the one without it, and the reverse),
    or (0,) alone in an add/remove history with a release sampled without replacement (its reverse order has
    the larger data set of n + 1 records, and the rate b/(n + 1)).

    Args:
        event: any history.
    """
    relation = relation_of(event)
    for leaf, _ in flatten_unchecked(event):
        if isinstance(leaf, SubsampledEvent) and (leaf.sampling, leaf.neighbouring) in pairs.PRICED:
            conv = relation_conversion(leaf.sampling, leaf.neighbouring, relation or leaf.neighbouring,
                                       leaf.sample_rate >= 1.0)
            if conv is not None and conv.realised == "remove":
                return (0,)
    return (0, 1)


def _tail_error(log_tail):
    """Relative error bound of a normal tail from ``log_ndtr``: LOG_NDTR_ERR u (2 + |log tail|), LOG_NDTR_ERR = 4
    (privcal's log_ndtr, proven in ``privcal.privacy_loss.log_phi``; the bound holds at the computed log tail, and
    covers the relative error e^D - 1 of the tail: the proof gives D <= 3.27 u (2 + |log tail|))."""
    return L.LOG_NDTR_ERR * _U * (2.0 + np.abs(log_tail))


def _log_cell_masses(edges: np.ndarray, mean: float, s: float):
    """log of the N(mean, s^2) mass of each cell (edges[i], edges[i+1]) and of the two outer half-lines,
    each the difference of the two ends' tails on the side of the smaller tail; and the relative error bound
    of each mass: (e_a + e_b e^{b - a}) / (1 - e^{b - a}) + 4 u for the tails a > b at the ends (relative
    errors e_a, e_b), from the subtraction's cancellation."""
    z = (edges - mean) / s
    lo_tail = log_ndtr(z)  # log P(X <= edge)
    hi_tail = log_ndtr(-z)  # log P(X > edge)
    upper_side = z[:-1] >= 0  # both ends above the mean: difference of upper tails
    a = np.where(upper_side, hi_tail[:-1], lo_tail[1:])  # log of the larger tail of the two ends
    b = np.where(upper_side, hi_tail[1:], lo_tail[:-1])
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        frac = -np.expm1(b - a)  # 1 - e^{b - a}, in (0, 1]
        inner = a + np.log(frac)
        rel = (_tail_error(a) + _tail_error(b) * np.exp(b - a)) / frac + 4 * _U
    logs = np.concatenate([[lo_tail[0]], inner, [hi_tail[-1]]])
    rel = np.concatenate([[_tail_error(lo_tail[0])], rel, [_tail_error(hi_tail[-1])]])
    return logs, np.where(np.isfinite(logs), rel, 0.0)


@functools.lru_cache(maxsize=64)  # the grid and both lower bounds bin the same pairs
def binned_cells(pair: MixturePair, bins: int):
    """(log P-mass, log Q-mass) of each cell of the binned line, and r: a bound on the relative error of
    every computed cell mass (the mixture's sum adds 2 u per component).

    Args:
        pair: a :class:`MixturePair`.
        bins: cells of the binned line, an int >= 1.
    """
    means = pair.p_means + pair.q_means
    edges = np.linspace(min(means) - _REACH * pair.s, max(means) + _REACH * pair.s, bins + 1)
    out, r = [], 0.0
    cells: dict = {}  # the same normal on the same edges in both laws (e.g. N(0, s^2)): its tails computed once
    for weights, centres in ((pair.p_weights, pair.p_means), (pair.q_weights, pair.q_means)):
        logs = []
        for w, m in zip(weights, centres):
            if m not in cells:
                cells[m] = _log_cell_masses(edges, m, pair.s)
            lm, rel = cells[m]
            logs.append(math.log(w) + lm)
            r = max(r, float(rel.max()) + 2 * _U * (len(weights) + 1))
        out.append(np.logaddexp.reduce(np.vstack(logs), axis=0))
    return out[0], out[1], r


def paired_pmf(lp: np.ndarray, lq: np.ndarray, h: float, r: float) -> L.Pmf:
    """A dominated PMF of the binned atoms on h Z without an error bound (docs/pld.md Sec. 2.3): the atoms
    are merged into grid cells (a post-processing), each cell's P-mass taken from below and its e^{g_j}
    Q-mass from above (the atoms' relative error r, the exp and the sums' roundings), and the cells go
    through the PLD's pairing (``privacy_loss.dominated_masses``): mixtures of neighbouring cells at ratio
    e^{g_j}, piles at a bounded end mixed further in, the rest rounded down with its P-mass. Its error is
    second order in h where rounding every atom down is first order.

    Args:
        lp: log P-masses of the binned atoms (:func:`binned_cells`).
        lq: log Q-masses of the same atoms.
        h: the loss grid spacing, in nats, in (0, inf).
        r: a bound on the relative error of every atom mass.
    """
    keep = np.isfinite(lp)
    lp, lq = lp[keep], lq[keep]
    finite = np.isfinite(lq)
    lo_f = 1.0 - r - 8 * _U
    inf_mass = float(np.exp(lp[~finite]).sum()) * lo_f
    lp, lq = lp[finite], lq[finite]
    idx = np.floor((lp - lq) / h).astype(np.int64)
    off = int(idx.min())
    count = np.bincount(idx - off).astype(float)
    rel = r + (count + 6.0) * _U  # per cell: the atoms' error, the exp, the sum
    p = np.bincount(idx - off, weights=np.exp(lp)) * (1.0 - rel)
    g = (np.arange(count.size) + off) * h
    # e^{g_j} Q of each atom from its log (no overflow): lq + g_j, g_j rounded down to the cell's start
    rt = np.bincount(idx - off, weights=np.exp(lq + (idx * h))) * (1.0 + 2.0 * rel + 4 * _U * (1.0 + np.abs(g)))
    mass = L.dominated_masses(p, np.minimum(rt, np.where(rt > p, rt, p)), h, 0.0, 0.0)
    return L.Pmf(off, mass, min(inf_mass, 1.0), h)


def both_orders(pair: MixturePair) -> tuple[MixturePair, MixturePair]:
    """(P, Q) and (Q, P): both orders of the neighbouring data sets.

    Args:
        pair: a :class:`MixturePair`.
    """
    rev = MixturePair(pair.q_weights, pair.q_means, pair.p_weights, pair.p_means, pair.s, pair.what)
    return pair, rev


def binned_cells_of_order(pair: MixturePair, order: int, bins: int):
    """:func:`binned_cells` of ``both_orders(pair)[order]``: the order (Q, P) swaps the cell masses of (P, Q) (the
    same cells, the same components summed in the same order, the same error bound r), so the normal tails are
    computed once per pair, not once per order.

    Args:
        pair: a :class:`MixturePair`.
        order: 0 for the order (P, Q), 1 for (Q, P).
        bins: cells of the binned line, an int >= 1.
    """
    lp, lq, r = binned_cells(pair, bins)
    return (lp, lq, r) if order == 0 else (lq, lp, r)


def dominated_pmf(log_p: np.ndarray, log_q: np.ndarray, h: float, rel_error: float) -> L.Pmf:
    """A dominated PMF on the loss grid h Z of a binned pair of output laws, for other realisable pairs
    (``privcal.accounting.samplers``): the construction of :func:`epsilon_lower`'s step 2 (module docstring).

    Args:
        log_p: log of the P-mass of each cell of the binned output (``-inf`` for an empty cell).
        log_q: log of the Q-mass of the same cells.
        h: the loss grid, in nats, in (0, inf) (trusted).
        rel_error: a bound on the relative error of every computed cell mass, in [0, 0.5) (trusted).

    Returns:
        a :class:`~privcal.privacy_loss.Pmf` whose delta(eps) is at most the binned pair's, for every eps.
    """
    return paired_pmf(np.asarray(log_p, dtype=float), np.asarray(log_q, dtype=float), h, rel_error)


def tail_error(log_tail: "np.ndarray | float") -> "np.ndarray | float":
    """Relative error bound of a normal tail computed by privcal's ``log_ndtr``: 4 u (2 + |log tail|), proven
    (``privcal.privacy_loss.log_phi``).

    Args:
        log_tail: the computed log tail (a float or an array).
    """
    return _tail_error(log_tail)
