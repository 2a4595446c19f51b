r"""Rényi differential privacy (RDP): the Gaussian curve, composition and conversion to (epsilon, delta).

An RDP curve is an array ``rdp`` of Rényi divergences over an array ``orders`` (each > 1): the
mechanism is (order, rdp)-RDP at every order of the grid (Mironov 2017, Def. 4).

* Composition: RDP composes by *adding* the curves at the same orders (Mironov 2017, Prop. 1), so
  ``steps`` repetitions cost ``steps * rdp`` and heterogeneous mechanisms cost the sum of their curves;
  :func:`rdp_compose` does this with the bookkeeping (inf stays inf, counts validated).
* Conversion: :func:`epsilon_from_rdp` and :func:`delta_from_rdp`, with Mironov's conversion
  (Mironov 2017, Prop. 3) or the improved one (Canonne-Kamath-Steinke 2020, Prop. 12 of arXiv
  2004.00010v4; Balle et al. 2020, Thm 21 of arXiv 1905.09982; Asoodeh et al. 2020, Eq. 20 of arXiv
  2001.05990), optimised over the grid.
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


def _orders(orders) -> np.ndarray:
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
    orders = _orders(orders)
    noise_multiplier = V.positive("noise_multiplier", noise_multiplier)
    return _rdp_gaussian(orders, noise_multiplier)


def _rdp_gaussian(orders: np.ndarray, noise_multiplier: float) -> np.ndarray:
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


def _conversion(conversion: str) -> str:
    """``conversion`` if it is one of _CONVERSIONS (validator; ValueError naming ``conversion``)."""
    return V.choice("conversion", conversion, _CONVERSIONS)


def epsilon_from_rdp(
    orders: ArrayLike, rdp: ArrayLike, delta: float, *, conversion: str = "improved"
) -> tuple[float, float]:
    """Upper bound on epsilon at ``delta`` from an RDP curve: (epsilon, optimal order).

    conversion="mironov" (Mironov 2017, Prop. 3):
        epsilon = min_alpha rdp(alpha) + ln(1/delta) / (alpha - 1);
    conversion="improved" (Canonne-Kamath-Steinke 2020, Prop. 12; Balle et al. 2020, Thm 21):
        epsilon = min_alpha rdp(alpha) + ln((alpha - 1)/alpha) - (ln delta + ln alpha) / (alpha - 1),
    which is never larger than Mironov's at the same order. Orders with rdp = inf are skipped; if no
    order gives a finite value the result is (inf, nan). epsilon is clipped at 0 from below. Warns
    (GridEdgeWarning) if the optimum is at the smallest or largest order of the grid.

    Args:
        orders: Renyi orders alpha, a non-empty 1-D sequence of finite numbers > 1.
        rdp: RDP values (nats) at ``orders``, same shape, each in [0, inf]; nan is read as inf.
        delta: target delta, in (0, 1).
        conversion: "improved" (default) or "mironov".

    Returns:
        (epsilon, order): the upper bound on epsilon, in [0, inf], and the order that attains it
        (nan when epsilon is inf).

    Raises:
        ValueError: an argument is outside its range.
    """
    orders = _orders(orders)
    rdp = _rdp_curve(orders, rdp)
    delta = V.open_unit("delta", delta)
    conversion = _conversion(conversion)
    return _epsilon_from_rdp(orders, rdp, delta, conversion=conversion)


def _epsilon_from_rdp(
    orders: np.ndarray, rdp: np.ndarray, delta: float, *, conversion: str = "improved"
) -> tuple[float, float]:
    """epsilon_from_rdp for validated inputs (float arrays, rdp nan-free)."""
    a, r = orders, rdp
    log_d = math.log(delta)
    with np.errstate(invalid="ignore"):
        if conversion == "mironov":
            eps = r - log_d / (a - 1.0)
        else:
            eps = r + np.log1p(-1.0 / a) - (log_d + np.log(a)) / (a - 1.0)
    eps = np.where(np.isfinite(eps), eps, np.inf)
    i = int(np.argmin(eps))
    if not np.isfinite(eps[i]):
        return math.inf, math.nan
    _warn_edge(a, float(a[i]), "epsilon")
    return max(0.0, float(eps[i])), float(a[i])


def delta_from_rdp(
    orders: ArrayLike, rdp: ArrayLike, epsilon: float, *, conversion: str = "improved"
) -> tuple[float, float]:
    """Upper bound on delta at ``epsilon`` from an RDP curve: (delta, optimal order), delta <= 1.

    conversion="mironov" (Mironov 2017, Prop. 3 inverted): delta = min_alpha exp((alpha-1)(rdp - epsilon));
    conversion="improved" (Canonne-Kamath-Steinke 2020, Prop. 12):
        delta = min_alpha exp((alpha - 1)(rdp - epsilon)) (1 - 1/alpha)^(alpha - 1) / alpha.
    Computed in log space; capped at 1. If every order has rdp = inf the result is (1.0, nan).
    Warns (GridEdgeWarning) if the optimum is at the smallest or largest order of the grid.

    Args:
        orders: Renyi orders alpha, a non-empty 1-D sequence of finite numbers > 1.
        rdp: RDP values (nats) at ``orders``, same shape, each in [0, inf]; nan is read as inf.
        epsilon: epsilon at which delta is bounded, in [0, inf).
        conversion: "improved" (default) or "mironov".

    Returns:
        (delta, order): the upper bound on delta, in [0, 1], and the order that attains it (nan when
        every order has rdp = inf).

    Raises:
        ValueError: an argument is outside its range.
    """
    orders = _orders(orders)
    rdp = _rdp_curve(orders, rdp)
    epsilon = V.nonnegative("epsilon", epsilon)
    conversion = _conversion(conversion)
    return _delta_from_rdp(orders, rdp, epsilon, conversion=conversion)


def _delta_from_rdp(
    orders: np.ndarray, rdp: np.ndarray, epsilon: float, *, conversion: str = "improved"
) -> tuple[float, float]:
    """delta_from_rdp for validated inputs (float arrays, rdp nan-free)."""
    a, r, e = orders, rdp, epsilon
    log_delta = _log_delta_mironov(a, r, e) if conversion == "mironov" else _log_delta_improved(a, r, e)
    log_delta = np.where(np.isnan(log_delta), np.inf, log_delta)
    i = int(np.argmin(log_delta))
    if not np.isfinite(log_delta[i]) and log_delta[i] > 0:
        return 1.0, math.nan
    _warn_edge(a, float(a[i]), "delta")
    return min(1.0, math.exp(min(0.0, float(log_delta[i])))), float(a[i])


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
    orders = _orders(orders)
    rdp = _rdp_curve(orders, rdp)
    epsilon = V.nonnegative("epsilon", epsilon)
    return _moments_tail_delta(orders, rdp, epsilon)


def _moments_tail_delta(orders: np.ndarray, rdp: np.ndarray, epsilon: float) -> tuple[float, float]:
    """moments_tail_delta for validated inputs."""
    return _delta_from_rdp(orders, rdp, epsilon, conversion="mironov")


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
    orders = _orders(orders)
    rdp = _rdp_curve(orders, rdp)
    delta = V.open_unit("delta", delta)
    return _moments_tail_epsilon(orders, rdp, delta)


def _moments_tail_epsilon(orders: np.ndarray, rdp: np.ndarray, delta: float) -> tuple[float, float]:
    """moments_tail_epsilon for validated inputs."""
    return _epsilon_from_rdp(orders, rdp, delta, conversion="mironov")
