r"""Mean squared projected Bellman error (MSPBE) and the A, b, C statistics of GPOPE Eq. (2.1).

    A = E[(1/tau) sum_t rho_t phi_t (phi_t - gamma phi_{t+1})^T],  b = E[(1/tau) sum_t rho_t R_t phi_t],
    C = E[(1/tau) sum_t phi_t phi_t^T]                                         (GPOPE Eq. 2.1),
    MSPBE(theta) = ||A theta - b||^2_{C^-1} = (A theta - b)^T C^-1 (A theta - b)
                                                    (Sutton et al. 2009, Eq. 7; Liu et al. 2015),

its minimiser theta* = (A^T C^-1 A)^-1 A^T C^-1 b (GPOPE Eq. 6.1), and the relative MSPBE of the
GPOPE paper's HIV figure, MSPBE / rbar^2 with rbar the average reward of the evaluated policy
(estimated per step as mean(rho_t R_t); the paper says "normalizes MSPBE using the average reward",
we divide by its square so that the ratio has no units and does not change when rewards are scaled).

A, b, C are estimated from a large *independent* sample of the same domain (never the private data);
the experiments document the sample size they use (:mod:`privcal.rl.gpope.experiments`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike
from scipy.linalg import cho_factor, cho_solve

from privcal import _validate as V

__all__ = ["estimate_abc", "mspbe", "relative_mspbe", "mspbe_minimiser", "MSPBE"]


def estimate_abc(dataset: Any, weighting: str = "trajectory") -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Empirical (A, b, C) of GPOPE Eq. (2.1) from a Dataset.

    Args:
        dataset: the trajectories, a :class:`~privcal.rl.gpope.domains.data.Dataset`.
        weighting: "trajectory" (default): the mean over trajectories of each trajectory's
            (1/tau)-average, the estimator GPOPE's gradients are unbiased for (Eq. 2.2 averaged over
            i); "transition": every transition weighs 1/T (pooled LSTD statistics).

    Returns:
        (A of shape (n, n), b of shape (n,), C of shape (n, n)), n = ``dataset.n_features``.

    Raises:
        ValueError: an unknown weighting.
    """
    V.choice("weighting", weighting, ("trajectory", "transition"))
    n = dataset.n_features
    a = np.zeros((n, n))
    b = np.zeros(n)
    c = np.zeros((n, n))
    lengths = dataset.lengths.astype(float)
    for start, stop, phi, nxt, rho, rew, idx in dataset.chunks():
        if weighting == "trajectory":
            wt = 1.0 / (lengths[idx] * dataset.m)
        else:
            wt = np.full(rew.size, 1.0 / dataset.n_transitions)
        d = phi - dataset.gamma * nxt
        pt = np.ascontiguousarray(phi.T)  # a contiguous left factor is several times faster
        a += pt @ ((wt * rho)[:, None] * d)
        b += pt @ (wt * rho * rew)
        c += pt @ (wt[:, None] * phi)
    return a, b, c


def mspbe(theta: ArrayLike, a: ArrayLike, b: ArrayLike, c: ArrayLike) -> float:
    """(A theta - b)^T C^-1 (A theta - b) (Sutton et al. 2009; GPOPE Sec. 2); inf for non-finite theta.

    Args:
        theta: value-function weights, shape (n,).
        a: A, shape (n, n).
        b: b, shape (n,).
        c: C, shape (n, n), positive definite.
    """
    theta = np.asarray(theta, dtype=float)
    if not np.all(np.isfinite(theta)):
        return float("inf")
    r = np.asarray(a) @ theta - np.asarray(b)
    return float(r @ np.linalg.solve(np.asarray(c), r))


def relative_mspbe(value: float, mean_reward: float) -> float:
    """MSPBE / rbar^2 (GPOPE Fig. 4's relative MSPBE; the square keeps it scale-free).

    Args:
        value: an MSPBE, in [0, inf].
        mean_reward: rbar, the average reward of the evaluated policy, finite and non-zero.

    Raises:
        ValueError: ``mean_reward`` is zero or not finite.
    """
    if mean_reward == 0 or not np.isfinite(mean_reward):
        raise ValueError(f"mean_reward must be finite and non-zero, got {mean_reward!r}")
    return float(value) / float(mean_reward) ** 2


def mspbe_minimiser(a: ArrayLike, b: ArrayLike, c: ArrayLike) -> np.ndarray:
    """theta* = (A^T C^-1 A)^-1 A^T C^-1 b (GPOPE Eq. 6.1).

    Args:
        a: A, shape (n, n).
        b: b, shape (n,).
        c: C, shape (n, n), positive definite.
    """
    a, b, c = (np.asarray(x, dtype=float) for x in (a, b, c))
    ci_a = np.linalg.solve(c, a)
    return np.linalg.solve(a.T @ ci_a, ci_a.T @ b)


@dataclass(frozen=True)
class MSPBE:
    """MSPBE evaluator with A, b, C (and the mean reward) from an independent sample of the domain.

    Build it with :meth:`from_dataset`; ``trajectories`` and ``transitions`` give the sample's size.
    """

    a: np.ndarray
    b: np.ndarray
    c: np.ndarray
    mean_reward: float
    trajectories: int
    transitions: int

    @classmethod
    def from_dataset(cls, dataset: Any, ridge: float = 0.0) -> "MSPBE":
        """Estimate A, b, C (trajectory weighting) from ``dataset``; ``ridge`` is added to C's diagonal.

        Args:
            dataset: an independent sample of the domain (never the private data), a
                :class:`~privcal.rl.gpope.domains.data.Dataset`.
            ridge: added to C's diagonal, in [0, inf); default 0.

        Raises:
            ValueError: C is singular (a feature the sample never activates) and ``ridge`` is 0.
        """
        ridge = V.nonnegative("ridge", ridge)
        a, b, c = estimate_abc(dataset, "trajectory")
        if ridge:
            c = c + ridge * np.eye(c.shape[0])
        try:
            cho_factor(c)
        except np.linalg.LinAlgError as exc:
            raise ValueError("C is singular on this sample (a feature is never active); use a "
                             "larger sample or ridge > 0") from exc
        mean_reward = float(np.mean(dataset.rho * dataset.rewards))
        return cls(a, b, c, mean_reward, dataset.m, dataset.n_transitions)

    def __call__(self, theta: ArrayLike) -> float:
        """MSPBE(theta); inf for non-finite theta."""
        theta = np.asarray(theta, dtype=float)
        if not np.all(np.isfinite(theta)):
            return float("inf")
        r = self.a @ theta - self.b
        return float(r @ cho_solve(cho_factor(self.c), r))

    def relative(self, theta: ArrayLike) -> float:
        """MSPBE(theta) / rbar^2.

        Args:
            theta: value-function weights, shape (n,).
        """
        return relative_mspbe(self(theta), self.mean_reward)

    def minimiser(self) -> np.ndarray:
        """theta* of Eq. (6.1) for this sample's A, b, C (MSPBE(theta*) = 0 when A is invertible)."""
        return mspbe_minimiser(self.a, self.b, self.c)
