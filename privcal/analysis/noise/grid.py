r"""Many OU paths on a fixed grid, and a pathwise bracket of each path's continuous maximum.

Monte Carlo helpers for checking Lemma 8 (``privcal.analysis.supremum``): the maximum of a path on a grid is a
lower bound of its maximum over the interval, so a tail violation seen on the grid is a genuine
violation; ``max_bracket`` also returns a random *upper* bound that dominates the continuous maximum
path by path, so a tail bound that holds for it holds for the true maximum.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from privcal import _rng
from privcal import _validate as V

__all__ = ["sample_ou_grid", "max_bracket"]


def _check_grid(grid) -> np.ndarray:
    try:
        g = np.asarray(grid, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"grid must be real numbers, got {grid!r}") from None
    if g.ndim != 1 or g.size < 1 or not np.all(np.isfinite(g)) or np.any(np.diff(g) <= 0):
        raise ValueError("grid must be a non-empty, finite, strictly increasing 1-D array")
    return g


def sample_ou_grid(beta: float, sigma: float, grid: ArrayLike, size: int,
                   seed: _rng.Seed = None) -> np.ndarray:
    """``size`` independent OU paths at the increasing points ``grid``: array (size, len(grid)).

    g(x_0) ~ N(0, sigma^2), g(x_{j+1}) = e^{-beta h_j} g(x_j) + sigma sqrt(1 - e^{-2 beta h_j}) Z_j,
    h_j = x_{j+1} - x_j (exact AR(1) transition of the OU process; Uhlenbeck & Ornstein 1930).

    Args:
        beta: kernel parameter beta of exp(-beta |x - y|), in (0, inf).
        sigma: standard deviation of the paths, in (0, inf).
        grid: strictly increasing finite points, a non-empty 1-D array.
        size: number of paths, an integer >= 1.
        seed: None, a non-negative int, a SeedSequence or a Generator; default None.

    Returns:
        The paths' values, shape (size, len(grid)).

    Raises:
        ValueError: an argument is outside its range.
    """
    beta = V.positive("beta", beta)
    sigma = V.positive("sigma", sigma)
    size = V.positive_int("size", size)
    g = _check_grid(grid)
    rng = _rng.as_generator(seed)
    h = np.diff(g)
    rho = np.exp(-beta * h)
    scale = sigma * np.sqrt(-np.expm1(-2.0 * beta * h))
    out = rng.standard_normal((g.size, size))
    out[0] *= sigma
    for j in range(h.size):
        out[j + 1] *= scale[j]
        out[j + 1] += rho[j] * out[j]
    return np.ascontiguousarray(out.T)


def max_bracket(values: ArrayLike, grid: ArrayLike, beta: float, sigma: float,
                seed: _rng.Seed = None) -> tuple[np.ndarray, np.ndarray]:
    r"""(lower, upper) with lower <= max_[grid_0, grid_-1] g <= upper path by path, in law.

    lower = max of the grid values. upper: on [x_j, x_j + h] the OU path given g(x_j) is
    g(x_j + s) = sigma e^{-beta s} B(e^{2 beta s}), B a Brownian motion with B(1) = g(x_j)/sigma
    (Doob's time change), so given both end values B is a Brownian bridge from a = g(x_j)/sigma to
    b = g(x_{j+1}) e^{beta h}/sigma over time D = e^{2 beta h} - 1, whose maximum M has
    P(M >= m) = exp(-2 (m - a)(m - b) / D) (m >= max(a, b)) and is drawn exactly as
    M = (a + b + sqrt((a - b)^2 - 2 D ln U)) / 2. On that interval g <= sigma M if M >= 0 and
    g <= sigma e^{-beta h} M otherwise. The intervals are conditionally independent (Markov), so the
    largest interval bound is a random variable that dominates the continuous maximum in law (coupling).
    Tight when beta h << 1.

    Args:
        values: path values at ``grid``, shape (n_paths, len(grid)) as returned by
            :func:`sample_ou_grid`.
        grid: strictly increasing finite points, a non-empty 1-D array.
        beta: kernel parameter beta of exp(-beta |x - y|), in (0, inf).
        sigma: standard deviation of the paths, in (0, inf).
        seed: randomness of the bridge maxima (None, an int, a SeedSequence or a Generator);
            default None.

    Returns:
        (lower, upper), two arrays of shape (n_paths,).

    Raises:
        ValueError: an argument is outside its range or ``values`` has the wrong shape.
    """
    beta = V.positive("beta", beta)
    sigma = V.positive("sigma", sigma)
    g = _check_grid(grid)
    v = np.asarray(values, dtype=float)
    if v.ndim != 2 or v.shape[1] != g.size:
        raise ValueError(f"values must have shape (n_paths, {g.size}), got {v.shape}")
    rng = _rng.as_generator(seed)
    lower = v.max(axis=1)
    if g.size == 1:
        return lower, lower.copy()
    h = np.diff(g)
    with np.errstate(over="ignore"):
        grow = np.exp(beta * h)
        dur = np.expm1(2.0 * beta * h)
    a = v[:, :-1] / sigma
    b = v[:, 1:] * grow / sigma
    u = rng.random(a.shape)
    m = 0.5 * (a + b + np.sqrt((a - b) ** 2 - 2.0 * dur * np.log1p(-u)))
    bound = np.where(m >= 0, sigma * m, sigma * m / grow)
    upper = np.maximum(bound.max(axis=1), lower)
    return lower, upper
