r"""Linear features for policy evaluation: one-hot (tabular) and the Fourier basis.

Fourier basis (Konidaris, Osentoski & Thomas 2011, "Value Function Approximation in Reinforcement
Learning using the Fourier Basis", Eq. for the order-n multivariate basis): with the state scaled to
x in [0, 1]^d and coefficient vectors c in {0, ..., n}^d,

    phi_c(x) = cos(pi c . x),

(n + 1)^d features for the full ("coupled") basis; the "uncoupled" variant keeps only the vectors with
at most one non-zero entry (1 + d n features). Konidaris et al. scale the learning rate of feature c
by 1 / ||c||_2 (1 for c = 0): :attr:`FourierBasis.norms`.

A feature map is any object with ``n_features`` and ``__call__(observations) -> (k, n_features)``;
:class:`privcal.rl.gpope.domains.data.Dataset` checks the shape of what it returns.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable
from typing import Optional

import numpy as np
from numpy.typing import ArrayLike

from privcal import _validate as V

__all__ = ["OneHot", "FourierBasis", "GridCells", "fourier_coefficients"]


class OneHot:
    """One-hot features of integer states 0..n_states-1: phi(s) = e_s in R^n_states.

    ``absorbing`` lists states whose feature vector is 0 (and which get no column): the value of an
    absorbing terminal state is 0 (Sutton & Barto 2018, Sec. 3.4), and a column that data never
    visits would make C = E[phi phi^T] singular.

    Args:
        n_states: number of states, an int >= 1.
        absorbing: states in 0..n_states-1 with feature vector 0; default none (at least one state
            must remain).

    Raises:
        ValueError: an argument is outside its range.
    """

    def __init__(self, n_states: int, absorbing: Iterable[int] = ()):
        self.n_states = V.positive_int("n_states", n_states)
        absorbing = sorted({int(s) for s in absorbing})
        for s in absorbing:
            if not 0 <= s < self.n_states:
                raise ValueError(f"absorbing states must be in [0, {self.n_states - 1}], got {s}")
        keep = [s for s in range(self.n_states) if s not in absorbing]
        if not keep:
            raise ValueError("OneHot needs at least one non-absorbing state")
        self.absorbing = tuple(absorbing)
        self.n_features = len(keep)
        table = np.zeros((self.n_states, self.n_features))
        table[keep, np.arange(self.n_features)] = 1.0
        self.table = table

    def __call__(self, observations: ArrayLike) -> np.ndarray:
        """Features of integer states: shape (k, n_features)."""
        s = np.asarray(observations)
        if s.ndim != 1 or not np.issubdtype(s.dtype, np.integer):
            raise ValueError(f"OneHot expects a 1-d integer array of states, got shape {s.shape} "
                             f"and dtype {s.dtype}")
        if s.size and (s.min() < 0 or s.max() >= self.n_states):
            raise ValueError(f"states must be in [0, {self.n_states - 1}], got range "
                             f"[{s.min()}, {s.max()}]")
        return self.table[s]

    def __repr__(self) -> str:
        return f"OneHot(n_states={self.n_states}, absorbing={self.absorbing})"


def fourier_coefficients(order: int, dim: int, coupled: bool = True) -> np.ndarray:
    """Coefficient vectors c of the order-n Fourier basis in d dimensions (Konidaris et al. 2011).

    Args:
        order: n, an int >= 0.
        dim: d, an int >= 1.
        coupled: True (default): all of {0..n}^d, (n+1)^d rows, lexicographic; False: 0 and every
            j e_i, 1 + d n rows.

    Returns:
        the coefficient vectors, one per row.

    Raises:
        ValueError: an argument is outside its range.
    """
    n = int(order)
    if n < 0 or n != order:
        raise ValueError(f"order must be a non-negative integer, got {order!r}")
    d = V.positive_int("dim", dim)
    if coupled:
        return np.array(list(itertools.product(range(n + 1), repeat=d)), dtype=float)
    rows = [np.zeros(d)]
    for i in range(d):
        for j in range(1, n + 1):
            c = np.zeros(d)
            c[i] = j
            rows.append(c)
    return np.array(rows)


class FourierBasis:
    """Fourier basis phi_c(x) = cos(pi c . x) on the box [low, high] (Konidaris et al. 2011).

    States are scaled to [0, 1]^d by (s - low) / (high - low) and clipped to the box (values outside
    it are mapped to the nearest face). ``transform`` (optional) is applied to raw states first, e.g.
    ``np.log10`` for the HIV simulator.

    Args:
        low: lower corner of the box, one value per state dimension.
        high: upper corner, componentwise > low, finite.
        order: n, an int >= 0.
        coupled: the full basis (default True) or the uncoupled one.
        transform: applied to raw states before scaling (e.g. ``np.log10``); default None.

    Raises:
        ValueError: an argument is outside its range.
    """

    def __init__(self, low: ArrayLike, high: ArrayLike, order: int, coupled: bool = True,
                 transform: Optional[Callable[[np.ndarray], np.ndarray]] = None):
        self.low = np.asarray(low, dtype=float).ravel()
        self.high = np.asarray(high, dtype=float).ravel()
        if self.low.shape != self.high.shape or self.low.size == 0:
            raise ValueError(f"low and high must be non-empty and of equal length, got "
                             f"{self.low.shape} and {self.high.shape}")
        if not np.all(np.isfinite(self.low)) or not np.all(np.isfinite(self.high)) \
                or not np.all(self.high > self.low):
            raise ValueError(f"need finite low < high componentwise, got low={self.low}, "
                             f"high={self.high}")
        self.dim = self.low.size
        self.order = order
        self.coupled = coupled
        self.transform = transform
        self.coefficients = fourier_coefficients(order, self.dim, coupled)
        self.n_features = self.coefficients.shape[0]
        norms = np.linalg.norm(self.coefficients, axis=1)
        norms[norms == 0] = 1.0
        #: ||c||_2 (1 for c = 0): Konidaris et al. divide the step size of feature c by it.
        self.norms = norms

    def scale(self, observations: ArrayLike) -> np.ndarray:
        """States mapped to [0, 1]^d (after ``transform``), clipped to the box.

        Args:
            observations: states, shape (k, d) (or (k,) when d = 1).

        Raises:
            ValueError: the states have the wrong shape.
        """
        x = np.asarray(observations, dtype=float)
        if x.ndim == 1:
            x = x[:, None] if self.dim == 1 else (x[None, :] if x.size == self.dim else x)
        if x.ndim != 2 or x.shape[1] != self.dim:
            raise ValueError(f"FourierBasis expects states of shape (k, {self.dim}), got {x.shape}")
        if self.transform is not None:
            x = self.transform(x)
        return np.clip((x - self.low) / (self.high - self.low), 0.0, 1.0)

    def __call__(self, observations: ArrayLike) -> np.ndarray:
        """Features cos(pi c . x), shape (k, n_features)."""
        return np.cos(np.pi * self.scale(observations) @ self.coefficients.T)

    def __repr__(self) -> str:
        kind = "coupled" if self.coupled else "uncoupled"
        return (f"FourierBasis(order={self.order}, dim={self.dim}, {kind}, "
                f"n_features={self.n_features})")


class GridCells:
    """State aggregation on a regular grid: ``index(states) -> cell ids``, ``centers() -> (N, d)``.

    Used to give continuous domains the finite state set that the Monte-Carlo baselines DP-LSW and
    DP-LSL of Balle, Gomrokchi & Precup (2016) need (first-visit returns per cell). States outside
    [low, high] are mapped to the nearest cell.

    Args:
        low: lower corner of the grid, one value per state dimension.
        high: upper corner, componentwise > low.
        bins: cells per dimension (an int for all, or one per dimension), each >= 1.

    Raises:
        ValueError: an argument is outside its range.
    """

    def __init__(self, low: ArrayLike, high: ArrayLike, bins: ArrayLike):
        self.low = np.asarray(low, dtype=float).ravel()
        self.high = np.asarray(high, dtype=float).ravel()
        self.bins = np.broadcast_to(np.asarray(bins, dtype=int), self.low.shape).copy()
        if np.any(self.bins < 1) or not np.all(self.high > self.low):
            raise ValueError(f"need bins >= 1 and low < high, got bins={self.bins}, "
                             f"low={self.low}, high={self.high}")
        self.n_states = int(np.prod(self.bins))

    def index(self, states: ArrayLike) -> np.ndarray:
        """Cell ids (row-major) of ``states``.

        Args:
            states: states, shape (k, d) (anything reshaping to it).
        """
        x = np.asarray(states, dtype=float).reshape(-1, self.low.size)
        k = np.floor((x - self.low) / (self.high - self.low) * self.bins).astype(int)
        k = np.clip(k, 0, self.bins - 1)
        return np.ravel_multi_index(tuple(k.T), tuple(self.bins))

    def centers(self) -> np.ndarray:
        """Centres of the cells, shape (n_states, d), in id order."""
        grids = [self.low[i] + (np.arange(self.bins[i]) + 0.5) * (self.high[i] - self.low[i]) / self.bins[i]
                 for i in range(self.low.size)]
        mesh = np.meshgrid(*grids, indexing="ij")
        return np.stack([g.ravel() for g in mesh], axis=1)
