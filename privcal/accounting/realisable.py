r"""Certified *lower* bounds on epsilon from realisable worst-case pairs of neighbouring data sets.

An accountant prices a dominating pair; a verdict "not private" needs the opposite: two neighbouring
data sets D, D' and a certified lower bound on the hockey-stick divergence of M(D) against M(D'). This
module builds, for every (sampling, relation) pair privcal prices, the output distributions of the sum of
clipped contributions on such a pair (docs/pld.md, section 1), and bounds their epsilon from below.

Worst cases, in units of the sensitivity under the event's relation (noise multiplier s):

* Gaussian release: N(1, s^2) against N(0, s^2).
* Poisson, add/remove: (1 - q) N(0, s^2) + q N(1, s^2) against N(0, s^2) (others contribute 0).
* Without replacement, replace-one: the same pair (D = (a, c, ..., c), D' = (c, ..., c), f(a) - f(c) = 1;
  shifted by the batch's b f(c)).
* Without replacement, zero-out (sensitivity C = 1 = ||f(x) - f(null)||): others contribute -1, the differing
  record +1 against null (0): (1 - q) N(0, s^2) + q N(2, s^2) against (1 - q) N(0, s^2) + q N(1, s^2) after a
  shift by b (Lebeda, Regehr, Kamath & Steinke 2024, arXiv 2405.20769: the null record displaces another
  record from the fixed-size batch).

The same D, D' serve every step of a history, and the steps sample independently, so the composed outputs
are the products of these pairs (both orders D, D' and D', D are evaluated; the larger counts). A history is
priced under one relation (``privcal.accounting.relations``), and its pairs are those of that relation: in a
replace-one history a zero-out release's pair is the one above at twice its sensitivity (f(null) = 0,
f(x) = C, f(x') = f(others) = -C), realised in both orders; in an add/remove history a without-replacement
release's pair is the Poisson one at its replace-one sensitivity (twice its zero-out one), realised in the
removal order only (D with n records against D - x; the reverse has rate b/(n + 1)), so only that order is
bounded (:func:`realised_orders`).

How the lower bound is certified (every step only lowers the hockey-stick divergence; the pairs and steps 1
and 2 are built in ``privcal.accounting.realisable_pairs``, whose names this module re-exports):

1. **Binning** (post-processing): the real line is cut into ``bins`` cells; the pair of cell masses is a
   post-processing of the pair, so by data processing its divergence, and that of any composition of binned
   pairs, is at most the true one. The cell masses are differences of normal tails computed in log space,
   each within a relative r of the exact one (``log_ndtr`` to a relative 4 u (2 + |log tail|) of each tail, proven,
   amplified by the subtraction's cancellation, plus the rounding of the mixture's sum).
2. **A dominated PMF on the loss grid** h Z (:func:`paired_pmf`): the binned atoms are merged into grid cells
   (a post-processing), each cell's P-mass taken from below and its e^{g_j} Q-mass from above (r, the exp and
   the sums' roundings), and the cells go through the PLD's pairing (``privcal.privacy_loss.dominated_masses``,
   docs/pld.md Sec. 2.3): mixtures of neighbouring cells at ratio exactly e^{g_j}, piles at a bounded end mixed
   further in, the rest rounded down with its P-mass. delta(eps) = E_P[(1 - e^{eps - L})_+] is non-decreasing
   in every step's loss and P-mass, so the computed delta is a lower bound; the error is second order in h
   (rounding every atom down instead is first order: at sigma = 0.6786, 1e4 steps, q = 1e-3, sensitivity 2 it
   gives 25.24, the pairing 25.38 on a grid 4x coarser, against the PLD's upper end 25.41).
   The masses are certified lower bounds, so no perturbation of the computed masses is left to charge.
3. **Composition** by ``privcal.privacy_loss.compose_pmfs`` with its round-off and window bounds, read on the
   lower side (``privcal.privacy_loss.epsilon_side(..., upper=False)``).

Releases privcal has no realisable pair for here (Laplace, (epsilon, delta) events, shuffled and balls-in-bins
runs over epochs, whose realisable pair ``privcal.accounting.samplers.epsilon_lower`` bounds on its own) are
dropped from the history: ignoring a release's output is a post-processing, so the bound stays a lower bound.
"""

from __future__ import annotations

import functools
import math
from typing import Optional

import numpy as np

from .. import _validate as V
from .. import privacy_loss as L
from .pld_accountant import default_memory_limit
from .events import Event, flatten_unchecked, relation_of
from .realisable_pairs import (
    MixturePair,
    binned_cells,
    binned_cells_of_order,
    both_orders,
    dominated_pmf,
    paired_pmf,
    realised_orders,
    tail_error,
    worst_case_pair,
)

__all__ = [
    "MixturePair", "worst_case_pair", "epsilon_lower", "delta_lower", "unchecked_epsilon_lower", "unchecked_grid",
    "dominated_pmf", "tail_error", "realised_orders", "epsilon_lower_of_pairs",
    # the steps of the certified lower bound, each checked by tests/test_pld_realisable.py
    "binned_cells", "paired_pmf", "both_orders", "binned_cells_of_order", "check_cells_fit", "WindowFits",
    "worst_case_groups", "order_factors", "order_ceiling", "paired_orders", "loss_ceiling", "SKIP_MARGIN",
    "estimated_window", "rule_grid",
]

#: the unit roundoff of a double
_U = 2.0**-53

#: arrays alive per grid cell of one composition (as ``privcal.privacy_loss``) and the cap of their memory
_BYTES_PER_CELL = 8 * 16


def check_cells_fit(cells: int, max_cells: Optional[int] = None) -> None:
    """MemoryLimitError where ``cells`` cells exceed the memory cap, or ``max_cells`` (a budget) when given.

    Args:
        cells: grid cells of the composition, an int >= 1.
        max_cells: a budget of cells, or None (the memory cap only).
    """
    cap = default_memory_limit()  # 256 MiB, or the enclosing privcal.pld.pld_settings block's
    if cells * _BYTES_PER_CELL > cap:
        raise L.MemoryLimitError(f"the realisable pair's grid ({cells} cells) exceeds memory_limit = "
                                 f"{cap / 2**20:.0f} MB")
    if max_cells is not None and cells > max_cells:
        raise L.MemoryLimitError(f"the realisable pair's grid ({cells} cells) exceeds max_cells = {max_cells}")


def _coarsening(fn, h: float):
    """``fn(h)`` on the given grid, or on the finest 4^k-times coarser one whose arrays fit the memory cap
    (a coarser grid rounds the losses further down: still a lower bound, a weaker one)."""
    for _ in range(12):
        try:
            return fn(h)
        except L.MemoryLimitError:
            h *= 4.0
    raise L.MemoryLimitError("the realisable pair's grid exceeds the memory cap even 16.7e6 times coarser")


class WindowFits(Exception):
    """Raised by :func:`_fits_then_stop` once a composition's window is known to fit the memory cap."""


def _fits_then_stop(cells: int) -> None:
    """A ``check`` for ``privacy_loss.compose_pmfs`` that stops the composition once its window is known
    (before any array of that length exists): :func:`check_cells_fit`, then :class:`WindowFits`."""
    check_cells_fit(cells)
    raise WindowFits


def worst_case_groups(event: Event) -> dict:
    """The realisable worst-case pair of each release of ``event`` (in its history's one relation) with its
    number of repeats (releases without a pair are dropped: a post-processing).

    Args:
        event: the history (validated).
    """
    groups: dict = {}
    relation = relation_of(event)
    for leaf, n in flatten_unchecked(event):
        pair = worst_case_pair(leaf, relation)
        if pair is not None:
            groups[pair] = groups.get(pair, 0) + n
    return groups


def order_factors(groups: dict, order: int, h: float, bins: int) -> list:
    """One order's paired (dominated) PMFs of all steps on the grid h, as ``(pmf, count)`` factors; each
    factor's own loss range checked against the memory cap first (MemoryLimitError, before any array of
    that length exists). The masses are certified lower bounds (the atoms' errors are in them).

    Args:
        groups: pair -> repeats, as :func:`worst_case_groups` returns them.
        order: 0 for the order (P, Q), 1 for (Q, P).
        h: the loss grid spacing, in nats, in (0, inf).
        bins: cells of the binned line, an int >= 1.
    """
    factors = []
    for pair, n in groups.items():
        lp, lq, r_pair = binned_cells_of_order(pair, order, bins)
        finite = np.isfinite(lp) & np.isfinite(lq)
        losses = lp[finite] - lq[finite]
        check_cells_fit(int((losses.max() - losses.min()) / h) + 2 if losses.size else 1)
        factors.append((paired_pmf(lp, lq, h, r_pair), n))
    return factors


def order_ceiling(groups: dict, order: int, h: float, bins: int) -> float:
    """:func:`loss_ceiling` of ``order_factors(groups, order, h, bins)`` without pairing the cells: a paired
    PMF's last cell is the largest floor(loss / h) of the binned atoms with finite masses, and it has mass at
    +inf exactly where an atom with a P-mass has Q-mass 0 (the same expressions as :func:`paired_pmf`).

    Args:
        groups: pair -> repeats, as :func:`worst_case_groups` returns them.
        order: 0 for the order (P, Q), 1 for (Q, P).
        h: the loss grid spacing, in nats, in (0, inf).
        bins: cells of the binned line, an int >= 1.
    """
    total = 0
    for pair, n in groups.items():
        lp, lq, r = binned_cells_of_order(pair, order, bins)
        keep = np.isfinite(lp)
        lp, lq = lp[keep], lq[keep]
        finite = np.isfinite(lq)
        if float(np.exp(lp[~finite]).sum()) * (1.0 - r - 8 * _U) > 0:
            return math.inf
        if not finite.any():  # no finite loss: the paired PMF would be empty
            return math.inf
        total += n * int(np.floor((lp[finite] - lq[finite]) / h).astype(np.int64).max())
    return total * h


def paired_orders(event: Event, h: float, bins: int, tail: float) -> list:
    """For both orders: the paired (dominated) PMFs of all steps, as ``(pmf, count)`` factors, each order's
    composed window checked against the memory cap (MemoryLimitError) before either is composed (one grid for
    both orders: what :func:`delta_lower` composes). The paired PMFs' masses are certified lower bounds (the
    atoms' errors are in them).

    Args:
        event: the history (validated).
        h: the loss grid spacing, in nats, in (0, inf).
        bins: cells of the binned line, an int >= 1.
        tail: the window tail mass, in (0, 1).
    """
    groups = worst_case_groups(event)
    if not groups:
        return []
    orders = []
    for d in realised_orders(event):
        factors = order_factors(groups, d, h, bins)
        try:  # its window (a grouped composition checks its first group's only: the real one checks all)
            L.compose_pmfs(factors, tail, check=_fits_then_stop)
        except WindowFits:
            pass
        orders.append(factors)
    return orders


def loss_ceiling(factors: list) -> float:
    """The largest loss (nats) of the composition of ``factors``: sum of count x (offset + size - 1) x h, where
    the composed window ends at the latest (``privacy_loss.window``); inf if a factor has mass at +inf. The
    lower end of that composition's epsilon is below it: its delta is 0 above its largest loss, and a lower
    end needs a delta above the target minus the slack.

    Args:
        factors: ``(pmf, count)`` pairs, as :func:`order_factors` returns them.
    """
    if any(p.inf_mass > 0 for p, _ in factors):
        return math.inf
    return sum(n * (p.offset + p.size - 1) for p, n in factors) * factors[0][0].h


#: a grid is skipped without pairing its cells where the window estimated from the unpaired cells
#: (:func:`estimated_window`) exceeds the composition's cell limit by more than this factor (see there)
SKIP_MARGIN = 1.5
#: the forecast is made only for lattices of at least this many cells: pairing fewer costs about as much as the
#: forecast itself (12,265 cells: 2.6 ms against 2.3 ms; 98,113 cells: 19 ms against 1.8 ms)
_FORECAST_MIN_CELLS = 2**15


def estimated_window(groups: dict, order: int, h: float, bins: int, tail: float) -> Optional[int]:
    """The FFT length of the composition of ``order``'s steps on the grid h, estimated without pairing the cells
    (the pairing's cost grows with the lattice: 53 ms at sigma = 0.1357, 1e4 steps, q = 1e-3 on twice the rule
    grid, where the window, 3.9e6 cells, is 7.4x the budget of the GPOPE table's printed bound): each atom's
    P-mass on the cell floor(loss / h) alone, as :func:`paired_pmf` places it before the pairing (docs/pld.md
    Sec. 2.3), which then moves mass between nearby cells. Only a forecast (None where it is not
    computed: one step, no finite loss, or a lattice below :data:`_FORECAST_MIN_CELLS` cells, cheap to pair): it
    decides which grid is tried first, never what is certified -- a grid skipped wrongly would leave a coarser
    grid's bound, still a lower bound. Measured against the paired window on 144 cases (sigma 0.05-20, q 1e-3-0.1, 100-1e4 steps, grids 1-64x the rule grid, both orders):
    within the FFT length's rounding (<= 1.3%) wherever either exceeds 2^17 cells; apart only on small windows
    (<= 15,000 cells), far below any limit the skip compares with (2^19 cells or more). Hence the margin
    :data:`SKIP_MARGIN` = 1.5, ~40 times that rounding (tests/test_pld_realisable.py pins both).

    Args:
        groups: pair -> repeats, as :func:`worst_case_groups` returns them.
        order: 0 for the order (P, Q), 1 for (Q, P).
        h: the loss grid spacing, in nats, in (0, inf).
        bins: cells of the binned line, an int >= 1.
        tail: the window tail mass, in (0, 1).
    """
    factors = []
    for pair, n in groups.items():
        lp, lq, _ = binned_cells_of_order(pair, order, bins)
        fin = np.isfinite(lp) & np.isfinite(lq)
        if not fin.any():
            return None
        idx = np.floor((lp[fin] - lq[fin]) / h).astype(np.int64)
        off = int(idx.min())
        if int(idx.max()) - off + 1 > _cap_cells():  # beyond the memory cap: order_factors refuses it anyway
            return None
        if int(idx.max()) - off + 1 < _FORECAST_MIN_CELLS:  # pairing a small lattice costs about the forecast
            return None
        factors.append((L.Pmf(off, np.bincount(idx - off, weights=np.exp(lp[fin])), 0.0, h), n))
    seen: list = []

    def record(cells: int) -> None:
        seen.append(cells)
        raise WindowFits

    try:
        L.compose_pmfs(factors, tail, check=record)
    except WindowFits:
        pass
    return seen[0] if seen else None


def _cap_cells() -> int:
    """The memory cap in grid cells (:func:`check_cells_fit`)."""
    return int(default_memory_limit() // _BYTES_PER_CELL)


def _epsilon_lower_on(event: Event, delta: float, h: float, bins: int, tail: float,
                      max_cells: Optional[int] = None) -> float:
    """:func:`_epsilon_lower_of` of the realisable pairs of ``event`` in the orders they are realised in."""
    return _epsilon_lower_of(worst_case_groups(event), realised_orders(event), delta, h, bins, tail, max_cells)


def _epsilon_lower_of(groups: dict, orders: tuple, delta: float, h: float, bins: int, tail: float,
                      max_cells: Optional[int] = None) -> float:
    """The larger of both orders' certified lower epsilon, each order composed on its own finest grid among h,
    4h, 16h, ... on which its composed window fits the memory cap (and has at most ``max_cells`` cells): a
    coarser grid rounds the losses further down, so each order's bound is a lower bound on any grid, and so
    is the larger of the two. An order is neither paired nor composed where its largest loss
    (:func:`order_ceiling`) is at most the bound already found, since it cannot raise it; so it does not hold
    the other order to a coarser grid either (GPOPE's pair: (Q, P)'s losses are at most steps x ln(1/(1 - q))
    = 10.005 at q = 1e-3, 1e4 steps, below (P, Q)'s bound at every paper sigma from eps = 1 up; at sigma =
    0.1357, sensitivity 2 its window needs a grid 64 times coarser than (P, Q)'s). MemoryLimitError only
    where no order fits on any grid up to 4^11 h. A grid whose estimated window (:func:`estimated_window`, no
    pairing) exceeds the cell limit by more than :data:`SKIP_MARGIN` is skipped like one that does not fit."""
    best, composed = 0.0, not groups
    limit = _cap_cells() if max_cells is None else min(_cap_cells(), max_cells)
    for d in orders:
        g = h
        for _ in range(12):
            if best >= order_ceiling(groups, d, g, bins):
                composed = True
                break
            estimate = estimated_window(groups, d, g, bins, tail)
            if estimate is not None and estimate > SKIP_MARGIN * limit:
                g *= 4.0
                continue
            try:
                factors = order_factors(groups, d, g, bins)
                pmf = L.compose_pmfs(factors, tail, check=functools.partial(check_cells_fit, max_cells=max_cells))
            except L.MemoryLimitError:
                g *= 4.0
                continue
            best, composed = max(best, L.epsilon_side(pmf, delta, upper=False)), True
            break
    if not composed:
        raise L.MemoryLimitError("the realisable pair's grid exceeds the memory cap even 4.2e6 times coarser")
    return best


def rule_grid(event: Event, bins: int = 20_000) -> float:
    """The loss grid: the PLD's rule-grid spacing for these pairs, 2 sqrt(1e-3 x the mean over the steps of
    one step's loss variance under P) (``privcal.privacy_loss``'s starting grid at its default accuracy, on
    which the same dominated construction meets that accuracy in most cases), a power of two in [2^-17,
    2^-8] (one step's mixtures need 2^-8), and at most 0.08 / sqrt(steps). A grid from the number of steps
    alone fails at small q, whose per-step loss spread is tiny (at q = 1e-3, sigma = 2, 1e3 steps a grid of
    2e-3 left a bound of 0).

    Args:
        event: the history (validated).
        bins: cells of the binned line, an int >= 1.
    """
    return _grid_of(worst_case_groups(event), bins)


def _grid_of(groups: dict, bins: int = 20_000) -> float:
    """:func:`rule_grid` of (realisable pair -> count) groups."""
    var, steps = 0.0, 0
    for pair, n in groups.items():
        worst = 0.0
        for d in (0, 1):
            lp, lq, _ = binned_cells_of_order(pair, d, bins)
            fin = np.isfinite(lp) & np.isfinite(lq)
            p, loss = np.exp(lp[fin]), lp[fin] - lq[fin]
            mass = float(p.sum())
            if mass > 0:
                mean = float(np.sum(p * loss)) / mass
                worst = max(worst, float(np.sum(p * (loss - mean) ** 2)) / mass)
        var, steps = var + n * worst, steps + n
    h = 2.0 * math.sqrt(1e-3 * var / steps) if var > 0 and steps else 2.0**-8
    # and at most 0.08 / sqrt(steps): a heavy-tailed step (small sigma) has a large variance, but its binned
    # atoms need the finer grid (sigma = 0.6786, sensitivity 2, q = 1e-3, 1e4 steps: 22.26 on the variance's
    # grid 2^-9, 25.38 on 2^-11, against the PLD's upper end 25.39)
    h = min(h, 0.08 / math.sqrt(max(steps, 1)))
    return 2.0 ** max(min(math.floor(math.log2(h)), -8), -17)


def _settings(event: Event, value_discretization: Optional[float], bins: int) -> tuple[float, int]:
    """(loss grid h, bins), validated (the arguments both lower bounds share)."""
    bins = V.positive_int("bins", bins)
    if bins < 100:
        raise ValueError(f"bins must be an integer >= 100, got {bins!r}")
    h = rule_grid(event, bins) if value_discretization is None else V.positive("value_discretization", value_discretization)
    return h, bins


def epsilon_lower(event: Event, delta: float, *, value_discretization: Optional[float] = None,
                  bins: int = 20_000) -> float:
    """Certified lower bound on the epsilon at ``delta`` of every mechanism that sums contributions whose
    sensitivity is attained, run as ``event`` describes, on the realisable worst-case pair of neighbouring
    data sets (module docstring): the mechanism is not (epsilon, delta)-DP for any epsilon below it.

    Args:
        event: what ran (any history of Gaussian and subsampled Gaussian releases; other releases are
            dropped, which keeps the bound a lower bound).
        delta: in (0, 1).
        value_discretization: the loss grid h in nats, in (0, inf); default None (from the number of steps).
        bins: cells of the binned output line per release, an int >= 100; default 20,000.

    Returns:
        a lower bound on epsilon, in [0, inf).

    Raises:
        ValueError: an argument is outside its range, or a release's (sampling, relation) pair is not priced.
    """
    if not isinstance(event, Event):
        raise ValueError(f"event must be a privcal Event, got {event!r}")
    delta = V.open_unit("delta", delta)
    h, bins = _settings(event, value_discretization, bins)
    return unchecked_epsilon_lower(event, delta, h, bins)


def unchecked_epsilon_lower(event: Event, delta: float, h: Optional[float] = None, bins: int = 20_000, *,
                            max_cells: Optional[int] = None) -> float:
    """:func:`epsilon_lower` for validated arguments (privcal's tables call it once per column).

    Args:
        event: what ran (trusted).
        delta: in (0, 1) (trusted).
        h: the loss grid, or None (:func:`unchecked_grid`); each order of the pair is coarsened from it by
            factors of 4 until its composition fits.
        bins: cells of the binned output line per release (trusted, >= 100).
        max_cells: a budget on each composition's window, in cells (an int >= 1), besides the memory cap;
            default None (the memory cap alone). A smaller budget is a coarser grid: a weaker lower bound,
            sooner.

    Raises:
        MemoryLimitError: no order's composition fits on any grid up to 4^11 h.
    """
    h = rule_grid(event, bins) if h is None else h
    tail = min(max(1e-4 * delta, L.WINDOW_TAIL), 1e-9)
    return _epsilon_lower_on(event, delta, h, bins, tail, max_cells)


def unchecked_grid(event: Event, bins: int = 20_000) -> float:
    """The loss grid h (nats) the lower bounds of ``event`` start from by default (:func:`epsilon_lower`): a power
    of two in [2^-17, 2^-8] from the steps' loss variance. For validated arguments (the GPOPE table's verdicts
    start on multiples of it).

    Args:
        event: what ran (trusted: any history of Gaussian and subsampled Gaussian releases).
        bins: cells of the binned output line per release (trusted, >= 100); default 20,000.

    Returns:
        h, in nats.
    """
    return rule_grid(event, bins)


def delta_lower(event: Event, epsilon: float, *, value_discretization: Optional[float] = None,
                bins: int = 20_000) -> float:
    """Certified lower bound on the delta at ``epsilon`` of the realisable worst-case pair (see
    :func:`epsilon_lower`).

    Args:
        event: what ran (as in :func:`epsilon_lower`).
        epsilon: in [0, inf).
        value_discretization: the loss grid h in nats, in (0, inf); default None (from the number of steps).
        bins: cells of the binned output line per release, an int >= 100; default 20,000.

    Returns:
        a lower bound on delta, in [0, 1].
    """
    epsilon = V.nonnegative("epsilon", epsilon)
    h, bins = _settings(event, value_discretization, bins)
    best = 0.0
    composed = _coarsening(lambda g: [L.compose_pmfs(factors, L.WINDOW_TAIL, check=check_cells_fit)
                                      for factors in paired_orders(event, g, bins, L.WINDOW_TAIL)], h)
    for c in composed:
        best = max(best, L.delta_at(c, epsilon) - L.slack(c, epsilon))
    return max(best, 0.0)



def epsilon_lower_of_pairs(pairs_: dict, delta: float, *, orders: tuple = (0, 1),
                           value_discretization: Optional[float] = None, bins: int = 20_000) -> float:
    """Certified lower bound on the epsilon at ``delta`` of a composition of mixture pairs, for pairs a caller
    has shown to be realised by one pair of neighbouring data sets (e.g. a counterexample to a pricing): the
    construction of :func:`epsilon_lower`, on these pairs.

    Args:
        pairs_: {:class:`MixturePair`: number of compositions (an int >= 1)}.
        delta: in (0, 1).
        orders: which orders to bound: 0 (P against Q), 1 (Q against P); default both (the larger counts).
        value_discretization: the loss grid h in nats, in (0, inf); default None (from the pairs' losses).
        bins: cells of the binned output line per pair, an int >= 100; default 20,000.

    Returns:
        a lower bound on the epsilon of the composed pairs, in [0, inf).
    """
    delta = V.open_unit("delta", delta)
    if not isinstance(pairs_, dict) or not pairs_ or not all(isinstance(p, MixturePair) for p in pairs_):
        raise ValueError(f"pairs_ must be a non-empty dict of MixturePair -> count, got {pairs_!r}")
    groups = {p: V.positive_int("pairs_ count", n) for p, n in pairs_.items()}
    if not orders or any(o not in (0, 1) for o in orders):
        raise ValueError(f"orders must be a non-empty tuple of 0 and 1, got {orders!r}")
    bins = V.positive_int("bins", bins)
    if bins < 100:
        raise ValueError(f"bins must be an integer >= 100, got {bins!r}")
    h = _grid_of(groups, bins) if value_discretization is None else V.positive("value_discretization",
                                                                               value_discretization)
    tail = min(max(1e-4 * delta, L.WINDOW_TAIL), 1e-9)
    return _epsilon_lower_of(groups, tuple(orders), delta, h, bins, tail)
