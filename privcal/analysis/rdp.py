r"""Rényi differential privacy (RDP): the Gaussian curve, composition and conversion to (epsilon, delta).

An RDP curve is an array ``rdp`` of Rényi divergences over an array ``orders`` (each > 1): the
mechanism is (order, rdp)-RDP at every order of the grid (Mironov 2017, Def. 4).

* Composition: RDP composes by *adding* the curves at the same orders (Mironov 2017, Prop. 1), so
  ``steps`` repetitions cost ``steps * rdp`` and heterogeneous mechanisms cost the sum of their curves;
  :func:`rdp_compose` does this with the bookkeeping (inf stays inf, counts validated).
* Conversion: :func:`epsilon_from_rdp` and :func:`delta_from_rdp`, with Mironov's conversion
  (Mironov 2017, Prop. 3) or the improved one (Canonne-Kamath-Steinke 2020, Prop. 12 of arXiv
  2004.00010v4; Balle et al. 2020, Thm 21 of arXiv 1905.09982; Asoodeh et al. 2020, Eq. 20 of arXiv
  2001.05990), optimised over the grid; given a function that computes the RDP at any order
  (``rdp_at``), the optimal order is then refined between the grid orders beside it (16 extra
  orders), so the answer does not depend on how fine the grid is near the optimum.
* The moments accountant of Abadi et al. 2016 is the same object in other coordinates: the log moment
  is alpha(lambda) = lambda * rdp(lambda + 1), and its tail bound (Abadi et al. 2016, Thm 2.2)
  delta = min_lambda exp(alpha(lambda) - lambda * epsilon) *is* Mironov's conversion
  (:func:`moments_tail_delta`, :func:`moments_tail_epsilon`).

Every conversion is an upper bound on epsilon (or delta); when no order of the grid gives a finite
value the answer is ``inf`` (never a smaller epsilon), and a :class:`GridEdgeWarning` says when the
optimum sits at the smallest or largest order of the grid (the grid may not reach the true optimum).
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from typing import Callable, Optional

from numpy.typing import ArrayLike

from privcal import _validate as V

__all__ = [
    "DEFAULT_ORDERS",
    "GridEdgeWarning",
    "rdp_gaussian",
    "rdp_compose",
    "epsilon_from_rdp",
    "delta_from_rdp",
    "moments_tail_delta",
    "moments_tail_epsilon",
]


class GridEdgeWarning(UserWarning):
    """The optimal order sits at the smallest or largest order of the grid: extend the grid."""


def _default_orders() -> np.ndarray:
    near_one = 1.0 + np.geomspace(0.01, 1.0, 20)  # 1.01 ... 2.0, dense near 1
    quarters = np.arange(2.25, 8.0 + 1e-9, 0.25)  # 2.25 ... 8
    halves = np.arange(8.5, 16.0 + 1e-9, 0.5)  # 8.5 ... 16
    integers = np.arange(17.0, 64.0 + 1e-9, 1.0)  # 17 ... 64
    sparse = np.round(np.geomspace(64.0, 1e4, 50))  # 64 ... 10000, integers
    grid = np.unique(np.concatenate([near_one, quarters, halves, integers, sparse, [1024.0]]))
    grid.setflags(write=False)
    return grid


#: Default order grid: 1.01..2 (geometric, dense near 1), quarter steps to 8, half steps to 16,
#: every integer to 64, then ~50 geometrically spaced integers up to 10,000 (1024 included).
#: Fractional orders stop at 16: above that the optimum of a conversion is flat in the order.
DEFAULT_ORDERS: np.ndarray = _default_orders()


def check_orders(orders) -> np.ndarray:
    """``orders`` as a 1-D float array of finite values > 1 (ValueError naming ``orders`` otherwise)."""
    arr = np.atleast_1d(np.asarray(orders, dtype=float))
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(f"orders must be a non-empty 1-D sequence of numbers > 1, got {orders!r}")
    bad = ~(np.isfinite(arr) & (arr > 1.0))
    if bad.any():
        raise ValueError(f"orders must be finite and > 1, got {float(arr[bad][0])!r}")
    return arr


def _rdp_curve(orders: np.ndarray, rdp) -> np.ndarray:
    """``rdp`` as a float array matching ``orders``: values in [0, inf]; nan is read as inf."""
    arr = np.atleast_1d(np.asarray(rdp, dtype=float))
    if arr.shape != orders.shape:
        raise ValueError(f"rdp must have the same shape as orders {orders.shape}, got {arr.shape}")
    if (arr < 0).any():
        raise ValueError(f"rdp must be >= 0 at every order, got {float(arr[arr < 0][0])!r}")
    return np.where(np.isnan(arr), np.inf, arr)


def _warn_edge(orders: np.ndarray, order: float, what: str) -> None:
    if order == orders.min() or order == orders.max():
        side = "smallest" if order == orders.min() else "largest"
        warnings.warn(
            f"the optimal order for {what} is the {side} order of the grid ({order:g}); "
            "the grid may not reach the optimum: extend it",
            GridEdgeWarning,
            stacklevel=4,  # _warn_edge <- kernel <- public function <- caller
        )


def rdp_gaussian(orders: ArrayLike, noise_multiplier: float) -> np.ndarray:
    """RDP of the Gaussian mechanism: rdp(alpha) = alpha / (2 noise_multiplier^2).

    Mironov 2017, Prop. 7 (Bun-Steinke 2016, Lemma 2.5): D_alpha(N(0, s^2) || N(1, s^2)) = alpha/(2 s^2)
    with s = noise_multiplier = sigma / sensitivity. Vectorised over ``orders``.

    Args:
        orders: Renyi orders alpha, a non-empty 1-D sequence of finite numbers > 1.
        noise_multiplier: sigma / sensitivity (dimensionless), in (0, inf).

    Returns:
        the RDP curve (nats), one value per order.

    Raises:
        ValueError: an argument is outside its range.
    """
    orders = check_orders(orders)
    noise_multiplier = V.positive("noise_multiplier", noise_multiplier)
    return rdp_gaussian_unchecked(orders, noise_multiplier)


def rdp_gaussian_unchecked(orders: np.ndarray, noise_multiplier: float) -> np.ndarray:
    """rdp_gaussian for validated inputs (orders a float array)."""
    return orders / (2.0 * noise_multiplier * noise_multiplier)


def rdp_compose(rdps: ArrayLike, counts: ArrayLike | None = None) -> np.ndarray:
    """RDP of a composition: sum_i counts[i] * rdps[i], all curves over the same orders.

    Mironov 2017, Prop. 1 (adaptive composition adds RDP at each order). ``inf`` stays ``inf``.

    Args:
        rdps: a non-empty sequence of RDP curves (or a 2-D array, one row per mechanism), each a 1-D
            array of values >= 0 over the same orders; nan is read as inf.
        counts: how often each mechanism runs (e.g. ``steps``), positive integers, one per curve;
            default all 1.

    Returns:
        the composed RDP curve (nats) over the same orders.

    Raises:
        ValueError: an argument is outside its range or the shapes do not match.
    """
    curves = [np.atleast_1d(np.asarray(r, dtype=float)) for r in rdps]
    if not curves:
        raise ValueError("rdps must contain at least one RDP curve, got an empty sequence")
    shape = curves[0].shape
    for r in curves:
        if r.shape != shape or r.ndim != 1:
            raise ValueError(f"rdps must be 1-D curves of one shape {shape}, got shape {r.shape}")
        if (r < 0).any():
            raise ValueError(f"rdps must be >= 0 at every order, got {float(r[r < 0][0])!r}")
    if counts is None:
        counts = [1] * len(curves)
    counts = list(counts)
    if len(counts) != len(curves):
        raise ValueError(f"counts must have one entry per curve ({len(curves)}), got {len(counts)}")
    counts = [V.positive_int("counts", c) for c in counts]
    return _rdp_compose(curves, counts)


def _rdp_compose(rdps: list[np.ndarray], counts: list[int]) -> np.ndarray:
    """rdp_compose for validated inputs (a list of 1-D float arrays of one shape, int counts)."""
    total = np.zeros(rdps[0].shape)
    for r, c in zip(rdps, counts):
        total = total + c * np.where(np.isnan(r), np.inf, r)
    return total


def _log_delta_mironov(orders: np.ndarray, rdp: np.ndarray, epsilon: float) -> np.ndarray:
    # delta = exp((alpha - 1)(rdp - epsilon))
    with np.errstate(invalid="ignore"):
        return (orders - 1.0) * (rdp - epsilon)


def _log_delta_improved(orders: np.ndarray, rdp: np.ndarray, epsilon: float) -> np.ndarray:
    # delta = exp((alpha - 1)(rdp - epsilon)) * (1 - 1/alpha)^(alpha - 1) / alpha
    with np.errstate(invalid="ignore"):
        return (orders - 1.0) * (rdp - epsilon + np.log1p(-1.0 / orders)) - np.log(orders)


#: The conversions from RDP to (epsilon, delta) that privcal implements.
_CONVERSIONS = ("improved", "mironov")


def check_conversion(conversion: str) -> str:
    """``conversion`` if it is one of _CONVERSIONS (validator; ValueError naming ``conversion``)."""
    return V.choice("conversion", conversion, _CONVERSIONS)


def epsilon_from_rdp(
    orders: ArrayLike,
    rdp: ArrayLike,
    delta: float,
    *,
    conversion: str = "improved",
    rdp_at: Optional[Callable[[np.ndarray], ArrayLike]] = None,
) -> tuple[float, float]:
    """Upper bound on epsilon at ``delta`` from an RDP curve: (epsilon, optimal order).

    conversion="mironov" (Mironov 2017, Prop. 3):
        epsilon = min_alpha rdp(alpha) + ln(1/delta) / (alpha - 1);
    conversion="improved" (Canonne-Kamath-Steinke 2020, Prop. 12; Balle et al. 2020, Thm 21):
        epsilon = min_alpha rdp(alpha) + ln((alpha - 1)/alpha) - (ln delta + ln alpha) / (alpha - 1),
    which is never larger than Mironov's at the same order. Orders with rdp = inf are skipped; if no
    order gives a finite value the result is (inf, nan). epsilon is clipped at 0 from below. With
    ``rdp_at``, the minimum over the grid is refined inside the grid cell around the optimal order
    (:func:`_refine`: 16 extra orders on a lattice of 24 steps per cell); each conversion holds at every order, so the
    refined value is an upper bound too, never above the grid's. Warns (GridEdgeWarning) if the optimum
    is at the smallest or largest order of the grid.

    Args:
        orders: Renyi orders alpha, a non-empty 1-D sequence of finite numbers > 1.
        rdp: RDP values (nats) at ``orders``, same shape, each in [0, inf]; nan is read as inf.
        delta: target delta, in (0, 1).
        conversion: "improved" (default) or "mironov".
        rdp_at: optional, the same RDP curve at any orders: maps a 1-D float array of orders (> 1,
            inside the range of ``orders``, not necessarily integers) to the RDP values there (nats,
            nan read as inf). It must be a valid RDP bound at every order it is given. Default None:
            the grid alone.

    Returns:
        (epsilon, order): the upper bound on epsilon, in [0, inf], and the order that attains it
        (nan when epsilon is inf).

    Raises:
        ValueError: an argument is outside its range.
    """
    orders = check_orders(orders)
    rdp = _rdp_curve(orders, rdp)
    delta = V.open_unit("delta", delta)
    conversion = check_conversion(conversion)
    _rdp_function(rdp_at)
    return _epsilon_from_rdp(orders, rdp, delta, conversion=conversion, rdp_at=rdp_at)


def _rdp_function(rdp_at):
    """``rdp_at`` if it is None or callable (validator; ValueError naming ``rdp_at``)."""
    if rdp_at is not None and not callable(rdp_at):
        raise ValueError(f"rdp_at must be None or a function of an array of orders, got {rdp_at!r}")
    return rdp_at


def _epsilon_curve(orders: np.ndarray, rdp: np.ndarray, log_delta: float, conversion: str) -> np.ndarray:
    """Epsilon at each order (inf where it is not finite): the conversion of :func:`epsilon_from_rdp`."""
    a, r = orders, np.where(np.isnan(rdp), np.inf, rdp)
    with np.errstate(invalid="ignore", divide="ignore"):
        if conversion == "mironov":
            eps = r - log_delta / (a - 1.0)
        else:
            eps = r + np.log1p(-1.0 / a) - (log_delta + np.log(a)) / (a - 1.0)
    return np.where(np.isfinite(eps), eps, np.inf)


def _log_delta_curve(orders: np.ndarray, rdp: np.ndarray, epsilon: float, conversion: str) -> np.ndarray:
    """ln delta at each order (inf where it is nan): the conversion of :func:`delta_from_rdp`."""
    r = np.where(np.isnan(rdp), np.inf, rdp)
    if conversion == "mironov":
        log_delta = _log_delta_mironov(orders, r, epsilon)
    else:
        log_delta = _log_delta_improved(orders, r, epsilon)
    return np.where(np.isnan(log_delta), np.inf, log_delta)


#: The refinement lattice: each cell between consecutive grid orders is split into _LATTICE equal
#: steps; round 1 visits every _COARSE-th lattice point of the two cells beside the grid optimum.
_LATTICE = 24
_COARSE = 4


def _lattice_orders(grid: np.ndarray, index: np.ndarray) -> np.ndarray:
    """Orders at lattice positions ``index`` (int array): position k * _LATTICE is grid[k], and the
    _LATTICE - 1 positions after it split the cell [grid[k], grid[k + 1]] into equal steps."""
    k, m = np.divmod(index, _LATTICE)
    upper = grid[np.minimum(k + 1, grid.size - 1)]
    return grid[k] + (upper - grid[k]) * (m / _LATTICE)


def lattice_window(orders: np.ndarray, index: int, radius: int) -> np.ndarray:
    """The lattice orders within ``radius`` lattice steps of position ``index`` (sorted, inside the grid)."""
    grid = np.unique(orders)
    top = (grid.size - 1) * _LATTICE
    positions = np.arange(max(index - radius, 0), min(index + radius, top) + 1)
    return _lattice_orders(grid, positions)


def _refine(
    orders: np.ndarray, values: np.ndarray, value_at: Optional[Callable[[np.ndarray], np.ndarray]]
) -> tuple[float, float, int]:
    """Minimum of ``values`` (an objective over ``orders``), refined on a lattice between grid orders.

    The lattice splits each cell between consecutive grid orders into 24 equal steps. Round 1 evaluates
    ``value_at`` at every 4th lattice point of the two cells beside the grid optimum (10 orders),
    round 2 at the 6 lattice points within 3 steps of the best order so far. When the objective is
    unimodal in the order near its optimum, the result is the minimum over the grid and the whole
    lattice, whichever path led there: this is what lets a calibration search on a few lattice orders
    around the optimum and get the same epsilon as the full evaluation. Measured on the subsampled
    Gaussians of the 27-case grid of benchmarks/bench_pld.py (q in {1e-3, 1e-2, 0.1}, 1e3-1e5 steps): within 2.5e-5 (relative)
    of the minimum over 401 orders of the cell, where the grid alone was up to 1.1e-2 above it.

    Returns:
        (value, order, position): the minimum, the order attaining it (nan when no value is finite)
        and its lattice position (-1 when ``value_at`` is None or nothing is finite).
    """
    i = int(np.argmin(values))
    best_v, best_x = float(values[i]), float(orders[i])
    if best_v == math.inf:
        return math.inf, math.nan, -1
    if value_at is None or orders.size < 2 or best_v == -math.inf:
        return best_v, best_x, -1
    grid = np.unique(orders)
    top = (grid.size - 1) * _LATTICE
    best_g = int(np.searchsorted(grid, best_x)) * _LATTICE
    # round 1: the coarse lattice of the two cells beside the grid optimum (their grid ends are known,
    # and at least as large as the optimum's value)
    steps = np.arange(-_LATTICE + _COARSE, _LATTICE, _COARSE)
    for offsets in (steps[steps != 0], np.array([-3, -2, -1, 1, 2, 3])):
        g = best_g + offsets
        g = g[(g >= 0) & (g <= top)]
        if g.size == 0:
            continue
        vs = np.asarray(value_at(_lattice_orders(grid, g)), dtype=float)
        vs = np.where(np.isnan(vs), np.inf, vs)
        j = int(np.argmin(vs))
        if vs[j] < best_v:
            best_v, best_g = float(vs[j]), int(g[j])
    return best_v, float(_lattice_orders(grid, np.array([best_g]))[0]), best_g


def _epsilon_from_rdp(
    orders: np.ndarray,
    rdp: np.ndarray,
    delta: float,
    *,
    conversion: str = "improved",
    rdp_at: Optional[Callable[[np.ndarray], ArrayLike]] = None,
) -> tuple[float, float]:
    """epsilon_from_rdp for validated inputs (float arrays, rdp nan-free)."""
    eps, order, _ = epsilon_refined_unchecked(orders, rdp, delta, conversion=conversion, rdp_at=rdp_at)
    return eps, order


def epsilon_refined_unchecked(
    orders: np.ndarray,
    rdp: np.ndarray,
    delta: float,
    *,
    conversion: str = "improved",
    rdp_at: Optional[Callable[[np.ndarray], ArrayLike]] = None,
) -> tuple[float, float, int]:
    """(epsilon, order, lattice position of the order): :func:`_epsilon_from_rdp` and :func:`_refine`."""
    log_d = math.log(delta)
    value_at = None
    if rdp_at is not None:
        def value_at(xs):
            return _epsilon_curve(xs, np.asarray(rdp_at(xs), dtype=float), log_d, conversion)
    eps, order, position = _refine(orders, _epsilon_curve(orders, rdp, log_d, conversion), value_at)
    if not math.isfinite(eps):
        return math.inf, math.nan, -1
    _warn_edge(orders, order, "epsilon")
    return max(0.0, eps), order, position


def delta_from_rdp(
    orders: ArrayLike,
    rdp: ArrayLike,
    epsilon: float,
    *,
    conversion: str = "improved",
    rdp_at: Optional[Callable[[np.ndarray], ArrayLike]] = None,
) -> tuple[float, float]:
    """Upper bound on delta at ``epsilon`` from an RDP curve: (delta, optimal order), delta <= 1.

    conversion="mironov" (Mironov 2017, Prop. 3 inverted): delta = min_alpha exp((alpha-1)(rdp - epsilon));
    conversion="improved" (Canonne-Kamath-Steinke 2020, Prop. 12):
        delta = min_alpha exp((alpha - 1)(rdp - epsilon)) (1 - 1/alpha)^(alpha - 1) / alpha.
    Computed in log space; capped at 1. If every order has rdp = inf the result is (1.0, nan). With
    ``rdp_at`` the optimal order is refined inside its grid cell as in :func:`epsilon_from_rdp`.
    Warns (GridEdgeWarning) if the optimum is at the smallest or largest order of the grid.

    Args:
        orders: Renyi orders alpha, a non-empty 1-D sequence of finite numbers > 1.
        rdp: RDP values (nats) at ``orders``, same shape, each in [0, inf]; nan is read as inf.
        epsilon: epsilon at which delta is bounded, in [0, inf).
        conversion: "improved" (default) or "mironov".
        rdp_at: optional, the same RDP curve at any orders (see :func:`epsilon_from_rdp`); default None.

    Returns:
        (delta, order): the upper bound on delta, in [0, 1], and the order that attains it (nan when
        every order has rdp = inf).

    Raises:
        ValueError: an argument is outside its range.
    """
    orders = check_orders(orders)
    rdp = _rdp_curve(orders, rdp)
    epsilon = V.nonnegative("epsilon", epsilon)
    conversion = check_conversion(conversion)
    _rdp_function(rdp_at)
    return delta_from_rdp_unchecked(orders, rdp, epsilon, conversion=conversion, rdp_at=rdp_at)


def delta_from_rdp_unchecked(
    orders: np.ndarray,
    rdp: np.ndarray,
    epsilon: float,
    *,
    conversion: str = "improved",
    rdp_at: Optional[Callable[[np.ndarray], ArrayLike]] = None,
) -> tuple[float, float]:
    """delta_from_rdp for validated inputs (float arrays, rdp nan-free)."""
    value_at = None
    if rdp_at is not None:
        def value_at(xs):
            return _log_delta_curve(xs, np.asarray(rdp_at(xs), dtype=float), epsilon, conversion)
    log_delta, order, _ = _refine(orders, _log_delta_curve(orders, rdp, epsilon, conversion), value_at)
    if log_delta == math.inf:
        return 1.0, math.nan
    _warn_edge(orders, order, "delta")
    return min(1.0, math.exp(min(0.0, log_delta))), order


def moments_tail_delta(orders: ArrayLike, rdp: ArrayLike, epsilon: float) -> tuple[float, float]:
    """Moments-accountant tail bound: delta = min_lambda exp(alpha(lambda) - lambda * epsilon).

    Abadi et al. 2016, Thm 2 (tail bound), with lambda = order - 1 and the log moment
    alpha(lambda) = lambda * rdp(order) (Mironov 2017, Sec. VI). This is exactly Mironov's conversion
    ``delta_from_rdp(..., conversion="mironov")``.

    Args:
        orders: Renyi orders alpha = lambda + 1, a non-empty 1-D sequence of finite numbers > 1.
        rdp: RDP values (nats) at ``orders``, same shape, each in [0, inf]; nan is read as inf.
        epsilon: epsilon at which delta is bounded, in [0, inf).

    Returns:
        (delta, order): the upper bound on delta, in [0, 1], and the order that attains it.

    Raises:
        ValueError: an argument is outside its range.
    """
    orders = check_orders(orders)
    rdp = _rdp_curve(orders, rdp)
    epsilon = V.nonnegative("epsilon", epsilon)
    return moments_tail_delta_unchecked(orders, rdp, epsilon)


def moments_tail_delta_unchecked(orders: np.ndarray, rdp: np.ndarray, epsilon: float) -> tuple[float, float]:
    """moments_tail_delta for validated inputs."""
    return delta_from_rdp_unchecked(orders, rdp, epsilon, conversion="mironov")


def moments_tail_epsilon(orders: ArrayLike, rdp: ArrayLike, delta: float) -> tuple[float, float]:
    """Inverse of the moments-accountant tail: epsilon = min_lambda (alpha(lambda) + ln(1/delta)) / lambda.

    Abadi et al. 2016, Thm 2 solved for epsilon, with lambda = order - 1 and alpha(lambda) =
    lambda * rdp(order): epsilon = min_order rdp(order) + ln(1/delta)/(order - 1), i.e. Mironov's
    conversion (Mironov 2017, Prop. 3) ``epsilon_from_rdp(..., conversion="mironov")``.

    Args:
        orders: Renyi orders alpha = lambda + 1, a non-empty 1-D sequence of finite numbers > 1.
        rdp: RDP values (nats) at ``orders``, same shape, each in [0, inf]; nan is read as inf.
        delta: target delta, in (0, 1).

    Returns:
        (epsilon, order): the upper bound on epsilon, in [0, inf], and the order that attains it.

    Raises:
        ValueError: an argument is outside its range.
    """
    orders = check_orders(orders)
    rdp = _rdp_curve(orders, rdp)
    delta = V.open_unit("delta", delta)
    return moments_tail_epsilon_unchecked(orders, rdp, delta)


def moments_tail_epsilon_unchecked(orders: np.ndarray, rdp: np.ndarray, delta: float) -> tuple[float, float]:
    """moments_tail_epsilon for validated inputs."""
    return _epsilon_from_rdp(orders, rdp, delta, conversion="mironov")
