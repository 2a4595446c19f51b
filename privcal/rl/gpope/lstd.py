r"""Least-squares policy evaluation baselines: LSTD, WIS-LSTD, and the output-perturbation methods
DP-LSW and DP-LSL of Balle, Gomrokchi & Precup (ICML 2016, "Differentially private policy evaluation").

LSTD (Bradtke & Barto 1996), pooled over all T transitions, on-policy (ratios ignored):
    A = (1/T) sum phi_t (phi_t - gamma phi_{t+1})^T,   b = (1/T) sum R_t phi_t,   theta = A^-1 b.
WIS-LSTD(0) (Mahmood, van Hasselt & Sutton 2014, lambda = 0): the weighted-importance-sampling form
multiplies the whole TD error by rho_t,
    A = sum rho_t phi_t (phi_t - gamma phi_{t+1})^T,   b = sum rho_t R_t phi_t,   theta = A^-1 b,
(the ordinary-IS form of Yu 2010 puts rho_t on phi_{t+1} only); its fixed point is the MSPBE
minimiser of GPOPE Eq. (2.1) with pooled weights. Neither is private.

Monte-Carlo least squares (BGP16, Sec. 3-4): finite states s = 1..N with features phi_s (rows of Phi)
and data-independent weights rho_s >= 0; F_{i,s} is the first-visit discounted return of trajectory i
from state s, m_s the number of trajectories visiting s, F_s = (1/m_s) sum_i F_{i,s}.
  LSW:  theta_X = argmin sum_s rho_s (F_s - phi_s^T theta)^2 = (Phi^T G Phi)^-1 Phi^T G F,  G = diag(rho).
  LSL:  theta_X = argmin sum_i sum_{s in x_i} rho_s (F_{i,s} - phi_s^T theta)^2 + (lambda/2) ||theta||^2
              = (Phi^T D Phi + (lambda/2) I)^-1 Phi^T D F,   D = diag(rho_s m_s).
Both are privatised by output perturbation with Gaussian noise scaled to a smooth upper bound
S(X) = max_k e^{-k s} A_k(X) on the local sensitivity, s the smoothness (NRS07's beta: S is
"beta-smooth"; Nissim, Raskhodnikova & Smith 2007, Def. 2.1 and Lemma 2.10 for the Gaussian:
alpha = epsilon / (5 sqrt(2 ln(2/delta))), s = epsilon / (4 (d + ln(2/delta)))): release
theta_X + (S(X) / alpha) N(0, I_d). In privcal ``beta`` names only the kernel parameter of
exp(-beta |x - y|), so NRS07's beta is called ``smoothness`` here.

Provenance: the full text of BGP16 was not available while writing this module. The estimators, the
first-visit returns, the weights and the smooth-sensitivity Gaussian mechanism with NRS07's
(alpha, smoothness) follow BGP16's description and the authors' public experiment code; the local
sensitivity bounds A_k below are derived here (proofs in the docstrings) rather than copied, and may
differ from the constants printed in BGP16 by small factors. Where the authors' code smooths the
*squared* bound, we smooth the bound itself (less noise, still smooth with the same smoothness).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Union

import numpy as np
from numpy.typing import ArrayLike

from privcal import _rng
from privcal import _validate as V

__all__ = ["lstd", "wis_lstd", "MonteCarloReturns", "first_visit_returns", "lsw", "lsl",
           "smooth_gaussian_parameters", "smooth_sensitivity", "lsw_local_bound",
           "lsl_local_bound", "dp_lsw", "dp_lsl", "OutputPerturbationResult"]


def _solve(a, b, ridge):
    a = a + ridge * np.eye(a.shape[0])
    try:
        return np.linalg.solve(a, b)
    except np.linalg.LinAlgError:
        return np.linalg.lstsq(a, b, rcond=None)[0]


def _pooled(dataset, use_rho: bool):
    n = dataset.n_features
    a = np.zeros((n, n))
    b = np.zeros(n)
    for _, _, phi, nxt, rho, rew, _ in dataset.chunks():
        wt = rho if use_rho else np.ones_like(rho)
        pt = np.ascontiguousarray(phi.T)
        a += pt @ (wt[:, None] * (phi - dataset.gamma * nxt))
        b += pt @ (wt * rew)
    t = dataset.n_transitions
    return a / t, b / t


def lstd(dataset: Any, ridge: float = 0.0) -> np.ndarray:
    """On-policy LSTD(0) (Bradtke & Barto 1996): theta = A^-1 b, pooled, rho ignored. Not private.

    Args:
        dataset: the trajectories, a :class:`~privcal.rl.gpope.domains.data.Dataset`.
        ridge: added to A's diagonal, in [0, inf); default 0.

    Returns:
        theta, shape (n_features,) (least squares if A + ridge I is singular).
    """
    ridge = V.nonnegative("ridge", ridge)
    a, b = _pooled(dataset, use_rho=False)
    return _solve(a, b, ridge)


def wis_lstd(dataset: Any, ridge: float = 0.0) -> np.ndarray:
    """Off-policy WIS-LSTD(0) (Mahmood et al. 2014): theta = (sum rho phi (phi - gamma phi')^T)^-1 sum rho R phi.

    Not private.

    Args:
        dataset: the trajectories, a :class:`~privcal.rl.gpope.domains.data.Dataset`.
        ridge: added to A's diagonal, in [0, inf); default 0.

    Returns:
        theta, shape (n_features,) (least squares if A + ridge I is singular).
    """
    ridge = V.nonnegative("ridge", ridge)
    a, b = _pooled(dataset, use_rho=True)
    return _solve(a, b, ridge)


@dataclass(frozen=True)
class MonteCarloReturns:
    """First-visit Monte-Carlo statistics: counts m_s, sums sum_i F_{i,s}, means F_s (0 if m_s = 0).

    ``trajectories`` is m; ``return_low`` and ``return_high`` the public range of every return.
    """

    counts: np.ndarray
    sums: np.ndarray
    trajectories: int
    return_low: float
    return_high: float

    @property
    def means(self) -> np.ndarray:
        """F_s = sums / counts per state (0 where m_s = 0)."""
        return np.where(self.counts > 0, self.sums / np.maximum(self.counts, 1), 0.0)


def first_visit_returns(dataset: Any, state_index: Callable[[np.ndarray], ArrayLike], n_states: int, *,
                        return_range: tuple[float, float]) -> MonteCarloReturns:
    """First-visit discounted returns per state (BGP16, Sec. 3). On-policy data only (rho = 1).

    Args:
        dataset: on-policy trajectories (rho = 1), a :class:`~privcal.rl.gpope.domains.data.Dataset`.
        state_index: maps an array of observations to state ids in 0..n_states-1 (identity for the
            chain, ``GridCells.index`` for continuous states).
        n_states: N, the number of (aggregated) states, an int >= 1.
        return_range: (low, high), finite, low <= high: the public bound on every return that the
            sensitivity uses.

    Returns:
        the :class:`MonteCarloReturns` of the data set.

    Raises:
        ValueError: off-policy data, a state id outside [0, N - 1] or a return outside
            ``return_range`` (naming the trajectory).
    """
    n_states = V.positive_int("n_states", n_states)
    lo, hi = (float(v) for v in return_range)
    if not (np.isfinite(lo) and np.isfinite(hi) and lo <= hi):
        raise ValueError(f"return_range must be finite (low, high) with low <= high, got {return_range!r}")
    if np.any(dataset.rho != 1.0):
        raise ValueError("first-visit Monte-Carlo baselines (DP-LSW/DP-LSL) are on-policy: field "
                         "'rho' must be 1 everywhere (they give no privacy guarantee off-policy)")
    counts = np.zeros(n_states, dtype=np.int64)
    sums = np.zeros(n_states)
    g = dataset.gamma
    for i in range(dataset.m):
        a, b = int(dataset.offsets[i]), int(dataset.offsets[i + 1])
        ids = np.asarray(state_index(dataset.observations[a:b])).astype(np.int64)
        if ids.min() < 0 or ids.max() >= n_states:
            raise ValueError(f"trajectory {i}: field 'observations' maps to state ids outside "
                             f"[0, {n_states - 1}]")
        r = dataset.rewards[a:b]
        disc = g ** np.arange(r.size)
        ret = np.cumsum((r * disc)[::-1])[::-1] / disc if g > 0 else r.copy()
        if np.any(ret < lo - 1e-9) or np.any(ret > hi + 1e-9):
            raise ValueError(f"trajectory {i}: field 'rewards' gives a return outside "
                             f"return_range {(lo, hi)}")
        uniq, first = np.unique(ids, return_index=True)
        counts[uniq] += 1
        sums[uniq] += ret[first]
    return MonteCarloReturns(counts, sums, dataset.m, lo, hi)


def _check_phi_rho(phi, rho):
    phi = np.asarray(phi, dtype=float)
    rho = np.asarray(rho, dtype=float)
    if phi.ndim != 2 or rho.shape != (phi.shape[0],):
        raise ValueError(f"Phi must be (N, d) and rho of length N, got {phi.shape} and {rho.shape}")
    if np.any(rho < 0) or not np.isclose(rho.sum(), 1.0):
        raise ValueError("rho must be a probability vector over the N states")
    return phi, rho


def lsw(mc: MonteCarloReturns, phi: ArrayLike, rho: ArrayLike) -> np.ndarray:
    """LSW: (Phi^T G Phi)^-1 Phi^T G F with G = diag(rho) (BGP16, Sec. 4.1). Not private by itself.

    Args:
        mc: the first-visit statistics (:func:`first_visit_returns`).
        phi: Phi, features of the N states, shape (N, d).
        rho: weights of the N states, a probability vector.

    Returns:
        theta, shape (d,).

    Raises:
        ValueError: ``phi`` or ``rho`` has the wrong shape, or ``rho`` is not a probability vector.
    """
    return _lsw(mc, *_check_phi_rho(phi, rho))


def _lsw(mc, phi, rho) -> np.ndarray:
    gram = phi.T @ (rho[:, None] * phi)
    return np.linalg.solve(gram, phi.T @ (rho * mc.means))


def lsl(mc: MonteCarloReturns, phi: ArrayLike, rho: ArrayLike, ridge: float) -> np.ndarray:
    """LSL: (Phi^T D Phi + (lambda/2) I)^-1 Phi^T D F with D = diag(rho_s m_s) (BGP16, Sec. 4.2).

    Args:
        mc: the first-visit statistics (:func:`first_visit_returns`).
        phi: Phi, features of the N states, shape (N, d).
        rho: weights of the N states, a probability vector.
        ridge: lambda, in (0, inf).

    Returns:
        theta, shape (d,).

    Raises:
        ValueError: an argument is outside its range.
    """
    phi, rho = _check_phi_rho(phi, rho)
    return _lsl(mc, phi, rho, V.positive("ridge", ridge))


def _lsl(mc, phi, rho, lam) -> np.ndarray:
    dw = rho * mc.counts
    gram = phi.T @ (dw[:, None] * phi) + 0.5 * lam * np.eye(phi.shape[1])
    return np.linalg.solve(gram, phi.T @ (dw * mc.means))


def smooth_gaussian_parameters(epsilon: float, delta: float, dim: int) -> tuple[float, float]:
    """(alpha, smoothness) = (eps / (5 sqrt(2 ln(2/delta))), eps / (4 (d + ln(2/delta)))) (NRS07, Lemma 2.10).

    The smoothness is NRS07's beta (a "beta-smooth" bound); the noise is (S(X) / alpha) N(0, I_d).

    Args:
        epsilon: target epsilon, in (0, inf).
        delta: target delta, in (0, 1).
        dim: d, the dimension of the released vector, an int >= 1.

    Returns:
        (alpha, smoothness).

    Raises:
        ValueError: an argument is outside its range.
    """
    return _smooth_gaussian_parameters(V.positive("epsilon", epsilon), V.open_unit("delta", delta),
                                       V.positive_int("dim", dim))


def _smooth_gaussian_parameters(e, d, dim) -> tuple[float, float]:
    log_term = math.log(2.0 / d)
    return e / (5.0 * math.sqrt(2.0 * log_term)), e / (4.0 * (dim + log_term))


def smooth_sensitivity(local_bounds: Callable[[np.ndarray], ArrayLike], smoothness: float,
                       k_max: int) -> float:
    """S(X) = max_{0 <= k <= k_max} e^{-k s} A_k(X), s the smoothness (NRS07, Def. 2.1 and Prop. 3.3 via A_k).

    Valid when A_0(X) >= LS(X), A_k(X') <= A_{k+1}(X) for neighbours X' of X, and A_k is constant
    for k >= k_max (then larger k only shrink e^{-k s} A_k).

    Args:
        local_bounds: maps an integer array of k to the array of A_k(X).
        smoothness: s (NRS07's beta), in (0, inf).
        k_max: the largest distance k considered, an int >= 0.

    Returns:
        S(X), a smooth upper bound on the local sensitivity.

    Raises:
        ValueError: ``smoothness`` is outside its range.
    """
    return _smooth_sensitivity(local_bounds, V.positive("smoothness", smoothness), k_max)


def _smooth_sensitivity(local_bounds, smoothness, k_max) -> float:
    ks = np.arange(int(k_max) + 1)
    vals = np.asarray(local_bounds(ks), dtype=float)
    return float(np.max(np.exp(-smoothness * ks) * vals))


def _return_bounds(mc):
    width = mc.return_high - mc.return_low
    fmax = max(abs(mc.return_low), abs(mc.return_high))
    return width, fmax


def lsw_local_bound(mc: MonteCarloReturns, phi: ArrayLike, rho: ArrayLike,
                    k: ArrayLike) -> Union[float, np.ndarray]:
    r"""A_k(X) for LSW: B ||(G^1/2 Phi)^+||_2 sqrt(sum_s rho_s / max(m_s - k, 1)^2), B = max(width, |F|max).

    Proof: theta_X - theta_X' = (G^1/2 Phi)^+ G^1/2 (F_X - F_X'); replacing one trajectory changes
    each mean F_s by at most B / max(m_s, m_s', 1) (an average over m_s values in [low, high], and an
    unvisited state's default 0 is within B of any return); at distance k, m_s' >= m_s - k.

    Args:
        mc: the first-visit statistics (:func:`first_visit_returns`).
        phi: Phi, features of the N states, shape (N, d).
        rho: weights of the N states, a probability vector.
        k: distance(s) k >= 0, an int or an integer array.

    Returns:
        A_k(X): a float for a scalar k, else an array like k.
    """
    return _lsw_local_bound(mc, *_check_phi_rho(phi, rho), k)


def _lsw_local_bound(mc, phi, rho, k):
    width, fmax = _return_bounds(mc)
    big_b = max(width, fmax)
    pinv_norm = np.linalg.norm(np.linalg.pinv(np.sqrt(rho)[:, None] * phi), 2)
    k = np.asarray(k)
    denom = np.maximum(mc.counts[None, :] - k.reshape(-1, 1), 1).astype(float)
    out = big_b * pinv_norm * np.sqrt(np.sum(rho / denom**2, axis=1))
    return float(out[0]) if k.ndim == 0 else out


def lsl_local_bound(mc: MonteCarloReturns, phi: ArrayLike, rho: ArrayLike, ridge: float,
                    k: ArrayLike) -> Union[float, np.ndarray]:
    r"""A_k(X) for LSL: (2/lambda) sum_s rho_s ||phi_s|| (B + ||phi_s|| Fmax sqrt(2 sum_s rho_s min(m_s + k, m) / lambda)).

    Proof: the LSL objective J_X = sum_i l_i + (lambda/2)||theta||^2 is lambda-strongly convex, so for
    X, X' differing in trajectory i, ||theta_X - theta_X'|| <= ||grad l'_i(theta_X) - grad l_i(theta_X)|| / lambda,
    with grad l_i = -2 sum_{s in x_i} rho_s (F_{i,s} - phi_s^T theta) phi_s: a state in both trajectories
    contributes 2 rho_s |F - F'| ||phi_s|| <= 2 rho_s B ||phi_s||, a state in one only
    2 rho_s (Fmax + ||phi_s|| ||theta||) ||phi_s||. And (lambda/2) ||theta_Y||^2 <= J_Y(0) <=
    Fmax^2 sum_s rho_s m_s(Y), with m_s(Y) <= min(m_s + k, m) at distance k.

    Args:
        mc: the first-visit statistics (:func:`first_visit_returns`).
        phi: Phi, features of the N states, shape (N, d).
        rho: weights of the N states, a probability vector.
        ridge: lambda, in (0, inf).
        k: distance(s) k >= 0, an int or an integer array.

    Returns:
        A_k(X): a float for a scalar k, else an array like k.

    Raises:
        ValueError: an argument is outside its range.
    """
    phi, rho = _check_phi_rho(phi, rho)
    return _lsl_local_bound(mc, phi, rho, V.positive("ridge", ridge), k)


def _lsl_local_bound(mc, phi, rho, lam, k):
    width, fmax = _return_bounds(mc)
    big_b = max(width, fmax)
    norms = np.linalg.norm(phi, axis=1)
    k = np.asarray(k)
    visits = np.minimum(mc.counts[None, :] + k.reshape(-1, 1), mc.trajectories)
    theta_bound = fmax * np.sqrt(2.0 * np.sum(rho * visits, axis=1) / lam)
    out = 2.0 / lam * (np.sum(rho * norms) * big_b + np.sum(rho * norms**2) * theta_bound)
    return float(out[0]) if k.ndim == 0 else out


@dataclass(frozen=True)
class OutputPerturbationResult:
    """theta = theta_nonprivate + sigma N(0, I_d), sigma = S(X) / alpha (NRS07 Gaussian smooth-sensitivity mechanism).

    ``smooth_sensitivity`` is S(X), ``alpha`` and ``smoothness`` the parameters of
    :func:`smooth_gaussian_parameters` (``smoothness`` is NRS07's beta).
    """

    theta: np.ndarray
    theta_nonprivate: np.ndarray
    sigma: float
    smooth_sensitivity: float
    alpha: float
    smoothness: float
    epsilon: float
    delta: float


def dp_lsw(mc: MonteCarloReturns, phi: ArrayLike, rho: ArrayLike, *, epsilon: float, delta: float,
           rng: _rng.Seed) -> OutputPerturbationResult:
    """DP-LSW (BGP16, "output perturbation V1"): LSW + Gaussian noise at the smooth sensitivity.

    Guarantee: (epsilon, delta)-DP with respect to replacing one trajectory (m fixed), on-policy data,
    a finite (or aggregated) state set with data-independent features Phi and weights rho, G^1/2 Phi of
    full column rank, and every first-visit return in the public ``return_range`` (checked by
    :func:`first_visit_returns`). None for off-policy data (rejected) or for weights/features tuned on
    the private data.

    Args:
        mc: the first-visit statistics (:func:`first_visit_returns`).
        phi: Phi, data-independent features of the N states, shape (N, d).
        rho: data-independent weights of the N states, a probability vector.
        epsilon: target epsilon, in (0, inf).
        delta: target delta, in (0, 1).
        rng: seed or Generator of the noise (``privcal._rng``).

    Returns:
        the :class:`OutputPerturbationResult`.

    Raises:
        ValueError: an argument is outside its range.
    """
    phi, rho = _check_phi_rho(phi, rho)
    alpha, smoothness = smooth_gaussian_parameters(epsilon, delta, phi.shape[1])
    theta = _lsw(mc, phi, rho)
    s = _smooth_sensitivity(lambda ks: _lsw_local_bound(mc, phi, rho, ks), smoothness,
                            int(mc.counts.max(initial=0)))
    sigma = s / alpha
    noise = _rng.as_generator(rng, "rng").standard_normal(theta.size) * sigma
    return OutputPerturbationResult(theta + noise, theta, sigma, s, alpha, smoothness, float(epsilon),
                                    float(delta))


def dp_lsl(mc: MonteCarloReturns, phi: ArrayLike, rho: ArrayLike, *, ridge: float, epsilon: float,
           delta: float, rng: _rng.Seed) -> OutputPerturbationResult:
    """DP-LSL (BGP16, "output perturbation V2"): regularised LS + Gaussian noise at the smooth sensitivity.

    Guarantee: (epsilon, delta)-DP under the same conditions as :func:`dp_lsw` with ridge lambda > 0 fixed
    in advance (lambda may depend on m). The bound sums ||phi_s|| over the N states, so it grows with
    the number of (aggregated) states: no guarantee for genuinely continuous states without
    aggregation (the GPOPE paper's remark, Sec. 7).

    Args:
        mc: the first-visit statistics (:func:`first_visit_returns`).
        phi: Phi, data-independent features of the N states, shape (N, d).
        rho: data-independent weights of the N states, a probability vector.
        ridge: lambda, fixed in advance, in (0, inf).
        epsilon: target epsilon, in (0, inf).
        delta: target delta, in (0, 1).
        rng: seed or Generator of the noise (``privcal._rng``).

    Returns:
        the :class:`OutputPerturbationResult`.

    Raises:
        ValueError: an argument is outside its range.
    """
    phi, rho = _check_phi_rho(phi, rho)
    lam = V.positive("ridge", ridge)
    alpha, smoothness = smooth_gaussian_parameters(epsilon, delta, phi.shape[1])
    theta = _lsl(mc, phi, rho, lam)
    s = _smooth_sensitivity(lambda ks: _lsl_local_bound(mc, phi, rho, lam, ks), smoothness,
                            int(mc.trajectories - mc.counts.min(initial=0)))
    sigma = s / alpha
    noise = _rng.as_generator(rng, "rng").standard_normal(theta.size) * sigma
    return OutputPerturbationResult(theta + noise, theta, sigma, s, alpha, smoothness, float(epsilon),
                                    float(delta))
