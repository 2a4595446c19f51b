r"""Wang & Hegde 2019, Prop. 10 by Monte Carlo on random finite MDPs: its bound as printed and as the proof
gives it, exact policy evaluation and value iteration, and the check under both readings of v'
(:func:`prop10_check`). Re-exported by ``privcal.rl.dpq.experiments``."""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Optional

import numpy as np

from privcal import _rng
from privcal import _validate as V
from privcal.rl.dpq.agent import check_gamma

__all__ = [
    "Prop10Settings",
    "random_finite_mdp",
    "prop10_bound_paper",
    "prop10_bound_proof",
    "prop10_check",
    "policy_values",
    "optimal_policy",
]

def prop10_bound_paper(sigma: float, n_states: int, gamma: float) -> float:
    """Prop. 10's bound as printed: E[|v' - v*|_1 / n] <= 2 sqrt(2) sigma / (sqrt(n pi) (1 - gamma)).

    Wang & Hegde 2019, Prop. 10 (App. D). Fails for large n (see :func:`prop10_check`): the per-state
    loss does not shrink with n.

    Args:
        sigma: std of the reward noise, in (0, inf).
        n_states: n, the number of states, an int >= 1.
        gamma: the discount factor, in [0, 1).

    Raises:
        ValueError: an argument is outside its range.
    """
    return _prop10_bound_paper(V.positive("sigma", sigma), V.positive_int("n_states", n_states),
                               check_gamma(gamma))


def _prop10_bound_paper(sigma, n_states, gamma) -> float:
    return 2.0 * math.sqrt(2.0) * sigma / (math.sqrt(n_states * math.pi) * (1.0 - gamma))


def prop10_bound_proof(sigma: float, gamma: float) -> float:
    """Per-state bound the proof of Prop. 10 gives: 2 sqrt(2) sigma / (sqrt(pi) (1 - gamma)).

    Lemma 16's 2 sqrt(2) n sigma / (sqrt(pi) (1 - gamma)) for |v' - v*|_1, divided by n (App. D);
    the statement of Prop. 10 has an extra 1/sqrt(n).

    Args:
        sigma: std of the reward noise, in (0, inf).
        gamma: the discount factor, in [0, 1).

    Raises:
        ValueError: an argument is outside its range.
    """
    return _prop10_bound_proof(V.positive("sigma", sigma), check_gamma(gamma))


def _prop10_bound_proof(sigma, gamma) -> float:
    return 2.0 * math.sqrt(2.0) * sigma / (math.sqrt(math.pi) * (1.0 - gamma))


def random_finite_mdp(n_states: int, actions: int, rng: _rng.Seed) -> tuple[np.ndarray, np.ndarray]:
    """(P, r): P[a, s, s'] with rows ~ Dirichlet(1), r[a, s] ~ U[0, 1] (a random discounted MDP).

    Args:
        n_states: n, an int >= 1.
        actions: m, an int >= 1.
        rng: a numpy Generator (advanced in place) or a seed (``privcal._rng``).

    Returns:
        (P of shape (m, n, n), r of shape (m, n)).

    Raises:
        ValueError: an argument is outside its range.
    """
    return _random_finite_mdp(V.positive_int("n_states", n_states), V.positive_int("actions", actions),
                              _rng.as_generator(rng, "rng"))


def _random_finite_mdp(n_states, actions, rng):
    P = rng.dirichlet(np.ones(n_states), size=(actions, n_states))
    r = rng.uniform(0.0, 1.0, size=(actions, n_states))
    return P, r


def policy_values(P: np.ndarray, r: np.ndarray, policy: np.ndarray, gamma: float) -> np.ndarray:
    """v^pi for a batch of deterministic policies, by solving (I - gamma P_pi) v = r_pi exactly.

    Args:
        P: transition probabilities, shape (m, n, n) (action, state, next state).
        r: rewards, shape (K, m, n).
        policy: K deterministic policies, integer actions of shape (K, n).
        gamma: the discount factor in [0, 1) (not checked).

    Returns:
        the values, shape (K, n).
    """
    K, n = policy.shape
    idx = np.arange(n)
    P_pi = P[policy, idx[None, :], :]  # (K, n, n)
    r_pi = np.take_along_axis(r, policy[:, None, :], axis=1)[:, 0, :]
    A = np.eye(n)[None] - gamma * P_pi
    return np.linalg.solve(A, r_pi[..., None])[..., 0]


def optimal_policy(P: np.ndarray, r: np.ndarray, gamma: float, max_iter: int = 200) -> tuple:
    """Optimal (values, policy) for a batch of rewards by policy iteration (exact).

    Args:
        P: transition probabilities, shape (m, n, n) (action, state, next state).
        r: rewards, shape (K, m, n).
        gamma: the discount factor in [0, 1) (not checked).
        max_iter: the most policy-improvement rounds; default 200.

    Returns:
        (values of shape (K, n), policies of shape (K, n)).
    """
    policy = np.argmax(r, axis=1)
    for _ in range(max_iter):
        v = policy_values(P, r, policy, gamma)
        q = r + gamma * np.einsum("asn,kn->kas", P, v)
        cur = np.take_along_axis(q, policy[:, None, :], axis=1)[:, 0, :]
        best = q.max(axis=1)
        improve = best > cur + 1e-12 * (1.0 + np.abs(cur))
        if not improve.any():
            return v, policy
        policy = np.where(improve, np.argmax(q, axis=1), policy)
    raise RuntimeError("policy iteration did not converge")  # pragma: no cover


@dataclass(frozen=True)
class Prop10Settings:
    """The Monte Carlo design of :func:`prop10_check` (defaults in one place: here; :func:`prop10_check` checks the
    values).

    Attributes:
        sigmas: reward-noise stds, each in (0, inf); default (0.1, 1.0).
        actions: actions per state, an int >= 1; default 2.
        gamma: the discount factor, in [0, 1); default 0.9.
        mdps: random MDPs per (n, sigma), an int >= 1; default 2.
        draws: noise draws per MDP, an int >= 1; default 100.
        seed: seed of the MDPs and the noise (``privcal._rng``); default 0.
        confidence: per-row confidence of the verdicts, in (0, 1); default 0.999.
    """

    sigmas: Iterable[float] = (0.1, 1.0)
    actions: int = 2
    gamma: float = 0.9
    mdps: int = 2
    draws: int = 100
    seed: _rng.Seed = 0
    confidence: float = 0.999


def _verdict(mean, se, bound, z):
    if mean - z * se > bound:
        return "fails"
    if mean + z * se <= bound:
        return "holds"
    return "inconclusive"


def prop10_check(n_states: Iterable[int] = (4, 64), settings: Optional[Prop10Settings] = None,
                 **keywords: Any) -> list[dict]:
    r"""Monte Carlo check of Prop. 10 (Wang & Hegde 2019, App. D) on random finite MDPs.

    For each n, sigma and random MDP (:func:`random_finite_mdp`, fixed ``seed``): ``draws`` reward
    perturbations z ~ N(0, sigma^2 I) on every (a, s) (App. D: with J = 1 the discrete algorithm is value
    iteration on r' = r + z), solved exactly by policy iteration. Two readings of v':

    * ``"noisy_optimum"`` (App. D's definition): v' = optimal value function of r';
    * ``"greedy_policy"`` (what the proof bounds via Claim 17): v' = value under the true r of the
      optimal policy of r' (then v* >= v' and |v' - v*|_1 = e^T (v* - v')).

    Each row has the mean of |v' - v*|_1 / n, its standard error, the printed bound
    (:func:`prop10_bound_paper`), the proof's per-state bound (:func:`prop10_bound_proof`) and a
    verdict per bound: "fails" if mean - z se > bound, "holds" if mean + z se <= bound, else
    "inconclusive", z the one-sided normal quantile at ``confidence`` (per row; normal approximation
    of the mean of ``draws`` i.i.d. bounded losses; over R rows the verdicts hold jointly with
    confidence at least 1 - R (1 - confidence) by the union bound).

    Args:
        n_states: numbers of states n, each an int >= 1; default (4, 64).
        settings: the Monte Carlo design, a :class:`Prop10Settings`; default None: built from ``keywords``.
        keywords: fields of :class:`Prop10Settings`, replacing those of ``settings``; each is listed below.
{keywords}

    Returns:
        one dict per (n, sigma, MDP, reading): the keys named above, plus gamma, draws, confidence.

    Raises:
        ValueError: an argument is outside its range.
        TypeError: a keyword is no field of :class:`Prop10Settings`.
    """
    from scipy.stats import norm

    s = V.settings_with("prop10_check", Prop10Settings, settings, keywords)
    actions = V.positive_int("actions", s.actions)
    gamma = check_gamma(s.gamma)
    mdps = V.positive_int("mdps", s.mdps)
    draws = V.positive_int("draws", s.draws)
    confidence = V.open_unit("confidence", s.confidence)
    z = float(norm.ppf(confidence))
    rng = _rng.as_generator(s.seed, "seed")
    n_states = [V.positive_int("n_states", n) for n in n_states]
    sigmas = [V.positive("sigma", sigma) for sigma in s.sigmas]
    rows = []
    for n in n_states:
        for sigma in sigmas:
            for m_idx in range(mdps):
                P, r = _random_finite_mdp(n, actions, rng)
                v_star, _ = optimal_policy(P, r[None], gamma)
                noisy = r[None] + sigma * rng.standard_normal((draws, actions, n))
                v_noisy, pi_noisy = optimal_policy(P, noisy, gamma)
                v_greedy = policy_values(P, np.broadcast_to(r, noisy.shape), pi_noisy, gamma)
                losses = {"noisy_optimum": np.abs(v_noisy - v_star).mean(axis=1),
                          "greedy_policy": np.abs(v_greedy - v_star).mean(axis=1)}
                paper = _prop10_bound_paper(sigma, n, gamma)
                proof = _prop10_bound_proof(sigma, gamma)
                for reading, loss in losses.items():
                    mean = float(loss.mean())
                    se = float(loss.std(ddof=1) / math.sqrt(draws)) if draws > 1 else math.inf
                    rows.append({"n_states": n, "sigma": sigma, "mdp": m_idx, "reading": reading,
                                 "mean": mean, "se": se, "bound_paper": paper, "bound_proof": proof,
                                 "verdict_paper": _verdict(mean, se, paper, z),
                                 "verdict_proof": _verdict(mean, se, proof, z),
                                 "gamma": gamma, "draws": draws, "confidence": confidence})
    return rows


prop10_check.__doc__ = prop10_check.__doc__.replace("{keywords}", V.keyword_docs(Prop10Settings))
