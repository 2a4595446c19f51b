r"""Conditional laws of the Ornstein-Uhlenbeck process, and Eq. (2) of Wang & Hegde as printed.

The process g ~ GP(0, sigma^2 K), K(x, y) = exp(-beta |x - y|), is Markov (Doob 1942): given its
values at sampled points, the value at a new point x depends only on its nearest sampled neighbours
x_l < x < x_r. With a = x - x_l, b = x_r - x, d = a + b, Gaussian conditioning of (g(x) | g(x_l),
g(x_r)) on the 3x3 covariance gives (derivation checked with sympy in tests/test_noise.py)

  mean     = [sinh(beta b) g(x_l) + sinh(beta a) g(x_r)] / sinh(beta d)
  variance = sigma^2 * 2 sinh(beta a) sinh(beta b) / sinh(beta d)
           = sigma^2 (1 - e^{-2 beta a})(1 - e^{-2 beta b}) / (1 - e^{-2 beta d}),

each neighbour weighted by the sinh of the distance to the *other* neighbour. One neighbour at
distance a (new point outside the sampled range): the AR(1) step
  mean = e^{-beta a} g(neighbour),  variance = sigma^2 (1 - e^{-2 beta a}).
No neighbour: the stationary law N(0, sigma^2).

All formulas are written with exp(-.) and expm1 so they neither overflow for beta d >> 1 nor lose
precision for beta d << 1.
"""

from __future__ import annotations

import math

from typing import Optional, Union

import numpy as np
from numpy.typing import ArrayLike

from privcal import _validate as V

#: A sampled neighbour of a query point: (position, value).
Neighbour = tuple[float, float]

__all__ = [
    "ou_covariance",
    "bridge_law",
    "step_law",
    "conditional_law",
    "eq2_paper",
]


def ou_covariance(x: ArrayLike, y: ArrayLike, beta: float, sigma: float) -> Union[float, np.ndarray]:
    """Covariance of the OU path: sigma^2 exp(-beta |x - y|) (broadcasts over numpy arrays).

    Source: Wang & Hegde 2019, Lemma 6 (the kernel K(x, y) = exp(-beta |x - y|)).

    Args:
        x: first point(s).
        y: second point(s), broadcastable with ``x``.
        beta: kernel parameter beta, in (0, inf).
        sigma: standard deviation of the process, in (0, inf).

    Returns:
        The covariance, broadcast shape of ``x`` and ``y``.

    Raises:
        ValueError: ``beta`` or ``sigma`` is outside its range.
    """
    beta = V.positive("beta", beta)
    sigma = V.positive("sigma", sigma)
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    return sigma * sigma * np.exp(-beta * np.abs(x - y))


def _bridge(a, b, fl, fr, beta, sigma):
    """Unvalidated bridge law; a = x - x_l > 0, b = x_r - x > 0 (numpy arrays or floats)."""
    ea = np.expm1(-2.0 * beta * a)  # e^{-2 beta a} - 1, in (-1, 0)
    eb = np.expm1(-2.0 * beta * b)
    ed = np.expm1(-2.0 * beta * (a + b))
    wl = np.exp(-beta * a) * eb / ed  # sinh(beta b) / sinh(beta d)
    wr = np.exp(-beta * b) * ea / ed  # sinh(beta a) / sinh(beta d)
    mean = wl * fl + wr * fr
    var = -(sigma * sigma) * ea * eb / ed
    return mean, var


def _step(a, f0, beta, sigma):
    """Unvalidated AR(1) step law at distance a > 0 from the only neighbour."""
    mean = np.exp(-beta * a) * f0
    var = -(sigma * sigma) * np.expm1(-2.0 * beta * a)
    return mean, var


def bridge_law(x: ArrayLike, x_left: ArrayLike, g_left: ArrayLike, x_right: ArrayLike,
               g_right: ArrayLike, beta: float, sigma: float) -> tuple:
    r"""Law of g(x) given g(x_left), g(x_right), x_left < x < x_right: (mean, variance).

    mean = [sinh(beta b) g_left + sinh(beta a) g_right] / sinh(beta (a + b)),
    variance = sigma^2 (1 - e^{-2 beta a})(1 - e^{-2 beta b}) / (1 - e^{-2 beta (a + b)}),
    a = x - x_left, b = x_right - x. Broadcasts over numpy arrays.

    Source: Gaussian conditioning on the 3x3 covariance sigma^2 exp(-beta |x_i - x_j|) (derived here,
    checked with sympy); the correct form of Wang & Hegde 2019, Appendix A, Eq. (2).

    Args:
        x: query point(s), finite, strictly between ``x_left`` and ``x_right``.
        x_left: left neighbour position(s).
        g_left: path value(s) at ``x_left``.
        x_right: right neighbour position(s).
        g_right: path value(s) at ``x_right``.
        beta: kernel parameter beta, in (0, inf).
        sigma: standard deviation of the process, in (0, inf).

    Returns:
        (mean, variance), broadcast over the inputs.

    Raises:
        ValueError: an argument is outside its range or x_left < x < x_right fails.
    """
    return _bridge_law(x, x_left, g_left, x_right, g_right, V.positive("beta", beta),
                       V.positive("sigma", sigma))


def _bridge_law(x, x_left, g_left, x_right, g_right, beta: float, sigma: float):
    """:func:`bridge_law` with validated ``beta``, ``sigma`` (the positions are still checked)."""
    x, xl, xr = (np.asarray(v, dtype=float) for v in (x, x_left, x_right))
    if not (np.all(np.isfinite(x)) and np.all(xl < x) and np.all(x < xr)):
        raise ValueError(
            f"bridge_law needs finite x_left < x < x_right, got x_left={x_left!r}, x={x!r}, "
            f"x_right={x_right!r}"
        )
    return _bridge(x - xl, xr - x, np.asarray(g_left, float), np.asarray(g_right, float), beta, sigma)


def step_law(x: ArrayLike, x_neighbour: ArrayLike, g_neighbour: ArrayLike, beta: float,
             sigma: float) -> tuple:
    """Law of g(x) given g at its only sampled neighbour: (mean, variance), the AR(1) step.

    mean = exp(-beta a) g_neighbour, variance = sigma^2 (1 - exp(-2 beta a)), a = |x - x_neighbour| > 0.
    The OU process is time-reversible, so the same law holds to the left and to the right.
    Source: Gaussian conditioning on the 2x2 covariance (Uhlenbeck & Ornstein 1930 transition law).

    Args:
        x: query point(s), finite and != ``x_neighbour``.
        x_neighbour: position(s) of the only sampled neighbour.
        g_neighbour: path value(s) there.
        beta: kernel parameter beta, in (0, inf).
        sigma: standard deviation of the process, in (0, inf).

    Returns:
        (mean, variance), broadcast over the inputs.

    Raises:
        ValueError: an argument is outside its range or x equals its neighbour.
    """
    return _step_law(x, x_neighbour, g_neighbour, V.positive("beta", beta),
                     V.positive("sigma", sigma))


def _step_law(x, x_neighbour, g_neighbour, beta: float, sigma: float):
    """:func:`step_law` with validated ``beta``, ``sigma`` (the positions are still checked)."""
    a = np.abs(np.asarray(x, dtype=float) - np.asarray(x_neighbour, dtype=float))
    if not (np.all(np.isfinite(a)) and np.all(a > 0)):
        raise ValueError(f"step_law needs x != x_neighbour (both finite), got x={x!r}, "
                         f"x_neighbour={x_neighbour!r}")
    return _step(a, np.asarray(g_neighbour, dtype=float), beta, sigma)


def conditional_law(x: float, beta: float, sigma: float, left: Optional[Neighbour] = None,
                    right: Optional[Neighbour] = None) -> tuple[float, float]:
    """Law of g(x) given its nearest sampled neighbours: (mean, variance) for a scalar x.

    ``left`` / ``right`` are (position, value) pairs or None when absent. Two neighbours: the bridge
    law; one: the AR(1) step; none: N(0, sigma^2). Source: Markov property of the OU process and
    Gaussian conditioning (see ``bridge_law``, ``step_law``).

    Args:
        x: the query point, a finite number.
        beta: kernel parameter beta, in (0, inf).
        sigma: standard deviation of the process, in (0, inf).
        left: nearest sampled neighbour below ``x`` as (position, value); default None (none).
        right: nearest sampled neighbour above ``x`` as (position, value); default None (none).

    Returns:
        (mean, variance) of g(x).

    Raises:
        ValueError: an argument is outside its range or a neighbour is on the wrong side.
    """
    beta = V.positive("beta", beta)
    sigma = V.positive("sigma", sigma)
    x = float(x)
    if left is not None and right is not None:
        mean, var = _bridge_law(x, left[0], left[1], right[0], right[1], beta, sigma)
    elif left is not None:
        if not left[0] < x:
            raise ValueError(f"left neighbour must lie left of x={x!r}, got {left[0]!r}")
        mean, var = _step_law(x, left[0], left[1], beta, sigma)
    elif right is not None:
        if not x < right[0]:
            raise ValueError(f"right neighbour must lie right of x={x!r}, got {right[0]!r}")
        mean, var = _step_law(x, right[0], right[1], beta, sigma)
    else:
        return 0.0, sigma * sigma
    return float(mean), float(var)


def eq2_paper(s: float, beta: float, left: Optional[Neighbour] = None,
              right: Optional[Neighbour] = None) -> tuple[float, float]:
    r"""Eq. (2) of Wang & Hegde as printed: (mu_at, d_at) for a new state s.

    With s- < s < s+ the linked-list neighbours, D = e^{beta(s+ - s-)} - e^{-beta(s+ - s-)}:
      mu_at = [(e^{beta(s-s-)} - e^{-beta(s-s-)}) g(s-) + (e^{beta(s+-s)} - e^{-beta(s+-s)}) g(s+)] / D
      d_at  = 1 - [(e^{beta(s-s-)} - e^{-beta(s-s-)}) e^{beta(s-s-)}
                   + (e^{beta(s+-s)} - e^{-beta(s+-s)}) e^{beta(s+-s)}] / D
    and Algorithm 1 (line 16) samples N(mu_at, sigma d_at). A missing neighbour is "treated as"
    s- = 0 / s+ = 1; its value, which the paper leaves undefined, is taken as 0 (the only reading
    under which the formula evaluates). ``left`` / ``right`` are (position, value) pairs or None.

    Source: Wang & Hegde 2019, Appendix A, proof of Prop. 9, Eq. (2) (identical in both extractions).
    Known defects (tests/test_noise.py): the weights are swapped (each neighbour weighted by the sinh
    of its *own* distance), d_at < 0 for every configuration, the variance should be sigma^2 d (not
    sigma d), and the boundary convention pins the path to 0 at 0 and 1. (The correct unit variance
    is 1 - [sinh(beta b) e^{-beta a} + sinh(beta a) e^{-beta b}] / sinh(beta d): correct weights, each
    paired with its neighbour's covariance e^{-beta * distance}.) Use ``conditional_law``.

    Args:
        s: the new state, in [s-, s+].
        beta: kernel parameter beta, in (0, inf).
        left: neighbour s- as (position, value); default None (s- = 0, value 0).
        right: neighbour s+ as (position, value); default None (s+ = 1, value 0).

    Returns:
        (mu_at, d_at) as printed (d_at is negative: see above).

    Raises:
        ValueError: ``beta`` is outside its range or s- <= s <= s+ with s- < s+ fails.
    """
    beta = V.positive("beta", beta)
    s = float(s)
    sl, gl = (0.0, 0.0) if left is None else (float(left[0]), float(left[1]))
    sr, gr = (1.0, 0.0) if right is None else (float(right[0]), float(right[1]))
    if not sl <= s <= sr or not sl < sr:
        raise ValueError(f"eq2_paper needs s- <= s <= s+ with s- < s+, got {sl!r}, {s!r}, {sr!r}")
    two_sinh = lambda t: math.exp(t) - math.exp(-t)  # noqa: E731 - the paper's e^t - e^-t
    den = two_sinh(beta * (sr - sl))
    a, b = s - sl, sr - s
    mu = (two_sinh(beta * a) * gl + two_sinh(beta * b) * gr) / den
    d = 1.0 - (two_sinh(beta * a) * math.exp(beta * a) + two_sinh(beta * b) * math.exp(beta * b)) / den
    return mu, d
