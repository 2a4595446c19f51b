r"""The mechanisms :func:`privcal.verify.audit.audit` ships with: exact samplers of one neighbouring pair each.

Each mechanism draws its real outputs on neighbour 0 and neighbour 1 and knows its log-likelihood ratio
(``statistic``), whose threshold sets are the Neyman-Pearson optimal test sets; ``dimension`` is the number of
floats per output. ``sample`` validates its arguments; ``sample_unchecked`` (the one the auditor calls, having
validated its own arguments) trusts them and gives the same draws.

* :class:`GaussianMechanism` - ``steps`` releases of a Gaussian mechanism, neighbours shifted by
  ``sensitivity`` in every release (the composed Gaussian; ``steps=1`` the plain one);
* :class:`GaussianProcessMechanism` - ``steps`` releases of the Gaussian-process mechanism
  f + g, g ~ GP(0, sigma^2 exp(-beta|x - y|)), observed at finitely many points (exact
  Ornstein-Uhlenbeck sampling, ``privcal.analysis.noise.sample_ou_grid``), neighbours f = 0 and f = shift;
* :class:`SubsampledGaussianMechanism` - ``steps`` releases of the Poisson-subsampled Gaussian in
  units of the sensitivity: N(0, s^2) against (1 - q) N(0, s^2) + q N(1, s^2) (Mironov, Talwar &
  Zhang 2019; also GPOPE's own worst-case pair, App. B.1).

Their names are importable from ``privcal.verify.audit`` too.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from privcal import _validate as V
from privcal.analysis.noise import sample_ou_grid

__all__ = ["ExactSampler", "GaussianMechanism", "GaussianProcessMechanism", "SubsampledGaussianMechanism"]


def _neighbour(neighbour: Any) -> int:
    """``neighbour`` as an int, 0 or 1 (``ValueError`` naming it otherwise)."""
    if isinstance(neighbour, bool) or neighbour not in (0, 1):
        raise ValueError(f"neighbour must be 0 or 1, got {neighbour!r}")
    return int(neighbour)


def _size(size: Any) -> int:
    """``size`` as an int >= 0 (``ValueError`` naming it otherwise)."""
    if isinstance(size, bool) or not isinstance(size, (int, np.integer)) or int(size) < 0:
        raise ValueError(f"size must be a non-negative integer, got {size!r}")
    return int(size)


class ExactSampler:
    """What the mechanisms here share: :meth:`sample` checks its arguments and draws through the subclass's
    ``sample_unchecked`` (the auditor calls that one directly, having checked its own)."""

    def sample(self, neighbour: int, size: int, rng: np.random.Generator) -> np.ndarray:
        """``size`` independent outputs of the mechanism on ``neighbour``.

        Args:
            neighbour: which neighbouring input, 0 or 1.
            size: number of independent outputs, a non-negative int.
            rng: the ``numpy.random.Generator`` to draw from.

        Returns:
            array of shape (size, dimension).
        """
        return self.sample_unchecked(_neighbour(neighbour), _size(size), rng)

    def sample_unchecked(self, neighbour: int, size: int, rng: np.random.Generator) -> np.ndarray:
        """:meth:`sample` for arguments the caller has validated (what :func:`privcal.verify.audit.audit` calls,
        having validated its own): the same draws. Each mechanism defines it (its docstring is this one).

        Args:
            neighbour: 0 or 1 (not checked).
            size: a non-negative int (not checked).
            rng: the ``numpy.random.Generator`` to draw from.

        Returns:
            array of shape (size, dimension).
        """
        raise NotImplementedError


@dataclass(frozen=True)
class GaussianMechanism(ExactSampler):
    """``steps`` Gaussian releases N(0, sigma^2) (neighbour 0) vs N(sensitivity, sigma^2) (neighbour 1).

    Output shape (size, steps). ``statistic`` is the log-likelihood ratio ln p1/p0 =
    (sensitivity / sigma^2) * sum(x) - steps * sensitivity^2 / (2 sigma^2) (a monotone function of the
    sum, so its threshold sets are the Neyman-Pearson ones). Exact profile: Gaussian with
    mu = sqrt(steps) * sensitivity / sigma (``privcal.analysis.composition.delta_composed_exact``).

    Args:
        sigma: noise standard deviation per release (absolute), in (0, inf).
        sensitivity: shift between the neighbours in every release, in (0, inf); default 1.
        steps: number of composed releases, a positive int; default 1.

    Raises:
        ValueError: an argument is outside its range.
    """

    sigma: float
    sensitivity: float = 1.0
    steps: int = 1

    def __post_init__(self) -> None:
        V.positive("sigma", self.sigma)
        V.positive("sensitivity", self.sensitivity)
        V.positive_int("steps", self.steps)

    @property
    def dimension(self) -> int:
        """Numbers per output: ``steps``."""
        return int(self.steps)

    def sample_unchecked(self, neighbour: int, size: int, rng: np.random.Generator) -> np.ndarray:
        return self.sensitivity * neighbour + self.sigma * rng.standard_normal((size, int(self.steps)))

    def statistic(self, outputs: ArrayLike) -> np.ndarray:
        """Log-likelihood ratio of each output (a monotone function of its sum).

        Args:
            outputs: array of shape (n, dimension), outputs of :meth:`sample`.

        Returns:
            array of shape (n,): ln p1/p0 of each output.
        """
        x = np.asarray(outputs, dtype=float).reshape(len(outputs), -1)
        s2 = self.sigma * self.sigma
        return (self.sensitivity / s2) * x.sum(axis=1) - self.steps * self.sensitivity**2 / (2.0 * s2)


@dataclass(frozen=True)
class GaussianProcessMechanism(ExactSampler):
    """``steps`` releases of the GP mechanism observed at ``points``: g (neighbour 0) vs shift + g (neighbour 1).

    g ~ GP(0, sigma^2 exp(-beta |x - y|)) drawn exactly at the sorted ``points`` by
    ``privcal.analysis.noise.sample_ou_grid`` (a fresh path per release, as after every noise reset of
    Wang & Hegde's Alg. 1); ``shift`` holds the values of the difference f = Q - Q' at ``points``.
    Output shape (size, steps * len(points)). ``statistic`` is the exact log-likelihood ratio
    sum_t (f^T Sigma^-1 x_t) - steps f^T Sigma^-1 f / 2, Sigma = sigma^2 K(points). The observed
    mechanism is Gaussian with mu = sqrt(steps f^T K^-1 f) / sigma <= sqrt(steps) ||f||_H / sigma
    (Wang & Hegde 2019, Prop. 4 with Lemma 6; equality when f is a kernel section observed at its centre).

    Args:
        shift: values of f = Q - Q' at ``points``, one finite float per point.
        points: observation points, a non-empty strictly increasing sequence of finite floats.
        beta: kernel parameter of exp(-beta |x - y|), in (0, inf).
        sigma: noise scale of the GP (absolute), in (0, inf).
        steps: number of composed releases (fresh path each), a positive int; default 1.

    Raises:
        ValueError: an argument is outside its range.
    """

    shift: tuple
    points: tuple
    beta: float
    sigma: float
    steps: int = 1

    def __post_init__(self) -> None:
        V.positive("beta", self.beta)
        V.positive("sigma", self.sigma)
        V.positive_int("steps", self.steps)
        pts = np.asarray(self.points, dtype=float)
        f = np.asarray(self.shift, dtype=float)
        if pts.ndim != 1 or pts.size == 0 or np.any(np.diff(pts) <= 0) or not np.all(np.isfinite(pts)):
            raise ValueError(f"points must be a non-empty strictly increasing sequence, got {self.points!r}")
        if f.shape != pts.shape or not np.all(np.isfinite(f)):
            raise ValueError(f"shift must hold one finite value per point ({pts.size}), got {self.shift!r}")

    @property
    def dimension(self) -> int:
        """Numbers per output: ``steps * len(points)``."""
        return int(self.steps) * len(self.points)

    def _weights(self) -> tuple[np.ndarray, float]:
        pts = np.asarray(self.points, dtype=float)
        f = np.asarray(self.shift, dtype=float)
        cov = self.sigma**2 * np.exp(-self.beta * np.abs(pts[:, None] - pts[None, :]))
        w = np.linalg.solve(cov, f)
        return w, float(f @ w)

    def mu(self) -> float:
        """mu of the observed (composed) mechanism: sqrt(steps f^T Sigma^-1 f).

        Returns:
            the mu of the equivalent Gaussian mechanism (its exact profile is ``privcal.analysis.gaussian.delta_exact``).
        """
        return math.sqrt(self.steps * self._weights()[1])

    def sample_unchecked(self, neighbour: int, size: int, rng: np.random.Generator) -> np.ndarray:
        k = len(self.points)
        paths = sample_ou_grid(self.beta, self.sigma, np.asarray(self.points, float), size * int(self.steps),
                               seed=rng)
        out = paths.reshape(size, int(self.steps) * k)
        if neighbour:
            out += np.tile(np.asarray(self.shift, dtype=float), int(self.steps))
        return out

    def statistic(self, outputs: ArrayLike) -> np.ndarray:
        """Exact log-likelihood ratio of each output: sum_t f^T Sigma^-1 x_t - steps f^T Sigma^-1 f / 2.

        Args:
            outputs: array of shape (n, dimension), outputs of :meth:`sample`.

        Returns:
            array of shape (n,): ln p1/p0 of each output.
        """
        w, quad = self._weights()
        x = np.asarray(outputs, dtype=float).reshape(len(outputs), int(self.steps), len(self.points))
        return (x @ w).sum(axis=1) - self.steps * quad / 2.0


@dataclass(frozen=True)
class SubsampledGaussianMechanism(ExactSampler):
    """``steps`` releases of the Poisson-subsampled Gaussian, in units of the sensitivity.

    Neighbour 0: N(0, s^2) per release; neighbour 1: N(1, s^2) with probability q = ``sample_rate``
    and N(0, s^2) otherwise, independently per release (s = ``noise_multiplier``). Output shape
    (size, steps). ``statistic`` is the log-likelihood ratio sum_t ln(1 - q + q exp((2 x_t - 1)/(2 s^2))).
    Source: Mironov, Talwar & Zhang 2019 (the sampled Gaussian mechanism); GPOPE App. B.1 (q = 1/m).

    Args:
        noise_multiplier: noise standard deviation in units of the sensitivity (s), in (0, inf).
        sample_rate: Poisson sampling probability q, in (0, 1].
        steps: number of composed releases, a positive int; default 1.

    Raises:
        ValueError: an argument is outside its range.
    """

    noise_multiplier: float
    sample_rate: float
    steps: int = 1

    def __post_init__(self) -> None:
        V.positive("noise_multiplier", self.noise_multiplier)
        V.rate("sample_rate", self.sample_rate)
        V.positive_int("steps", self.steps)

    @property
    def dimension(self) -> int:
        """Numbers per output: ``steps``."""
        return int(self.steps)

    def sample_unchecked(self, neighbour: int, size: int, rng: np.random.Generator) -> np.ndarray:
        t = int(self.steps)
        out = self.noise_multiplier * rng.standard_normal((size, t))
        if neighbour:
            out += rng.random((size, t)) < self.sample_rate
        return out

    def statistic(self, outputs: ArrayLike) -> np.ndarray:
        """Log-likelihood ratio of each output: sum_t ln(1 - q + q exp((2 x_t - 1)/(2 s^2))).

        Args:
            outputs: array of shape (n, dimension), outputs of :meth:`sample`.

        Returns:
            array of shape (n,): ln p1/p0 of each output.
        """
        x = np.asarray(outputs, dtype=float).reshape(len(outputs), -1)
        s2 = self.noise_multiplier**2
        q = float(self.sample_rate)
        if q == 1.0:
            return ((2.0 * x - 1.0) / (2.0 * s2)).sum(axis=1)
        per = np.logaddexp(math.log1p(-q), math.log(q) + (2.0 * x - 1.0) / (2.0 * s2))
        return per.sum(axis=1)
