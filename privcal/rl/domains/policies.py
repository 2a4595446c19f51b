r"""Policies on linear Q-functions, batched Q-learning, and data collection from batched environments.

A *batched environment* steps k independent episodes in lock-step with numpy (no Python loop over
episodes); it provides ``n_actions``, ``horizon`` (time limit: the episode is truncated, not
terminated, after that many steps), ``state_dim``, ``reset(k, rng) -> state``, ``observe(state) ->
observations`` and ``step(state, actions) -> (next_state, rewards, terminated)``. The Mountain Car
and HIV domains implement it.

Q-learning (Watkins 1989) with linear function approximation Q(s, a) = w_a . phi(s) and the Fourier
basis, with Konidaris et al. (2011)'s per-feature step size alpha / ||c||; the k episodes of a batch
share w and their TD updates are averaged:
    delta = R + gamma max_a' Q(S', a') (0 if S' terminal) - Q(S, A),   w_A += (alpha / ||c||) delta phi(S).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from privcal import _rng
from privcal._validate import nonnegative, positive, positive_int, probability
from privcal.rl.domains.data import Dataset, importance_ratios

__all__ = ["LinearQ", "EpsilonGreedy", "Softmax", "Greedy", "Uniform", "q_learning", "collect"]


@dataclass
class LinearQ:
    """Q(s, a) = weights[a] . features(s)."""

    weights: np.ndarray  # (n_actions, n_features)
    features: object

    def __call__(self, observations) -> np.ndarray:
        return self.features(observations) @ self.weights.T


class Uniform:
    """pi(a | s) = 1 / |A|."""

    def __init__(self, n_actions: int):
        self.n_actions = positive_int("n_actions", n_actions)

    def probs(self, observations) -> np.ndarray:
        k = np.asarray(observations).shape[0]
        return np.full((k, self.n_actions), 1.0 / self.n_actions)


class Greedy:
    """pi(a | s) = 1 for the first maximiser of Q(s, .)."""

    def __init__(self, q: LinearQ):
        self.q = q
        self.n_actions = q.weights.shape[0]

    def probs(self, observations) -> np.ndarray:
        qv = self.q(observations)
        p = np.zeros_like(qv)
        p[np.arange(qv.shape[0]), np.argmax(qv, axis=1)] = 1.0
        return p


class EpsilonGreedy:
    """pi(a | s) = 1 - eps + eps/|A| for the first maximiser of Q(s, .), eps/|A| otherwise."""

    def __init__(self, q: LinearQ, epsilon: float):
        self.q = q
        self.epsilon = probability("epsilon", epsilon)
        self.n_actions = q.weights.shape[0]

    def probs(self, observations) -> np.ndarray:
        qv = self.q(observations)
        p = np.full_like(qv, self.epsilon / self.n_actions)
        p[np.arange(qv.shape[0]), np.argmax(qv, axis=1)] += 1.0 - self.epsilon
        return p


class Softmax:
    """pi(a | s) proportional to exp(Q(s, a) / temperature) (Boltzmann policy)."""

    def __init__(self, q: LinearQ, temperature: float):
        self.q = q
        self.temperature = positive("temperature", temperature)
        self.n_actions = q.weights.shape[0]

    def probs(self, observations) -> np.ndarray:
        z = self.q(observations) / self.temperature
        z -= z.max(axis=1, keepdims=True)
        e = np.exp(z)
        return e / e.sum(axis=1, keepdims=True)


def _sample_actions(probs: np.ndarray, rng) -> np.ndarray:
    u = rng.random(probs.shape[0])
    a = (np.cumsum(probs, axis=1) < u[:, None]).sum(axis=1)
    return np.minimum(a, probs.shape[1] - 1)


def q_learning(env, features, *, episodes: int, rng, alpha: float = 0.01, epsilon: float = 0.1,
               gamma: float = 1.0, batch: int = 1, reward_scale: float = 1.0,
               progress=None) -> LinearQ:
    """Linear Q-learning with epsilon-greedy exploration on a batched environment; returns the learned Q.

    ``episodes`` episodes in rounds of ``batch`` parallel episodes; rewards are multiplied by
    ``reward_scale`` (learning-rate conditioning only: the greedy policy is unchanged by the scale
    in exact arithmetic). Per-feature step alpha / ||c|| when the features have ``norms`` (Fourier).
    Seeded entirely by ``rng``.
    """
    episodes = positive_int("episodes", episodes)
    batch = positive_int("batch", batch)
    alpha = positive("alpha", alpha)
    epsilon = probability("epsilon", epsilon)
    gamma = probability("gamma", gamma)
    reward_scale = positive("reward_scale", reward_scale)
    rng = _rng.as_generator(rng, "rng")
    n_a = env.n_actions
    w = np.zeros((n_a, features.n_features))
    step = alpha / np.asarray(getattr(features, "norms", np.ones(features.n_features)))
    rounds = -(-episodes // batch)
    for r in range(rounds):
        k = min(batch, episodes - r * batch)
        state = env.reset(k, rng)
        phi = features(env.observe(state))
        alive = np.ones(k, dtype=bool)
        for _ in range(env.horizon):
            idx = np.flatnonzero(alive)
            if idx.size == 0:
                break
            qv = phi[idx] @ w.T
            greedy = np.argmax(qv, axis=1)
            explore = rng.random(idx.size) < epsilon
            actions = np.where(explore, rng.integers(n_a, size=idx.size), greedy)
            nxt, rew, term = env.step(state[idx], actions)
            phi_next = features(env.observe(nxt))
            target = reward_scale * rew + gamma * np.where(term, 0.0, (phi_next @ w.T).max(axis=1))
            td = target - qv[np.arange(idx.size), actions]
            grad = np.zeros_like(w)
            np.add.at(grad, actions, td[:, None] * phi[idx])
            w += step * grad / idx.size
            state[idx] = nxt
            phi[idx] = phi_next
            alive[idx[term]] = False
        if progress is not None:
            progress(r + 1, rounds)
    return LinearQ(w, features)


def collect(env, trajectories: int, behaviour, *, rng, features, gamma: float, target=None,
            reward_scale: float = 1.0) -> Dataset:
    """m episodes of ``behaviour`` on a batched environment, as a validated :class:`Dataset`.

    ``target`` (default: the behaviour policy, i.e. on-policy) gives pi(A_t | S_t) for the ratios
    rho_t = pi / pi_b. Episodes end when terminated or after ``env.horizon`` steps (truncated:
    the last transition bootstraps from S_tau). Rewards are multiplied by ``reward_scale``.
    """
    m = positive_int("trajectories", trajectories)
    nonnegative("reward_scale", reward_scale)
    rng = _rng.as_generator(rng, "rng")
    target = behaviour if target is None else target
    state = env.reset(m, rng)
    obs = env.observe(state)
    horizon = env.horizon
    d = obs.shape[1:]
    rec_obs = np.zeros((horizon, m) + d, dtype=obs.dtype)
    rec_next = np.zeros_like(rec_obs)
    rec_act = np.zeros((horizon, m), dtype=np.int64)
    rec_rew = np.zeros((horizon, m))
    rec_term = np.zeros((horizon, m), dtype=bool)
    rec_pb = np.zeros((horizon, m))
    rec_pt = np.zeros((horizon, m))
    valid = np.zeros((horizon, m), dtype=bool)
    alive = np.ones(m, dtype=bool)
    for t in range(horizon):
        idx = np.flatnonzero(alive)
        if idx.size == 0:
            break
        o = obs[idx]
        pb = behaviour.probs(o)
        a = _sample_actions(pb, rng)
        pt = target.probs(o) if target is not behaviour else pb
        nxt, rew, term = env.step(state[idx], a)
        nobs = env.observe(nxt)
        rec_obs[t, idx] = o
        rec_next[t, idx] = nobs
        rec_act[t, idx] = a
        rec_rew[t, idx] = rew * reward_scale
        rec_term[t, idx] = term
        rec_pb[t, idx] = pb[np.arange(idx.size), a]
        rec_pt[t, idx] = pt[np.arange(idx.size), a]
        valid[t, idx] = True
        state[idx] = nxt
        obs[idx] = nobs
        alive[idx[term]] = False
    # trajectory-major order
    vt = valid.T
    lengths = vt.sum(axis=1)
    offsets = np.concatenate([[0], np.cumsum(lengths)])

    def tm(a):
        return np.swapaxes(a, 0, 1)[vt]

    rho = importance_ratios(tm(rec_pt), tm(rec_pb), offsets)
    return Dataset(tm(rec_obs), tm(rec_next), tm(rec_rew), tm(rec_term), rho, offsets,
                   features=features, gamma=gamma, actions=tm(rec_act))
