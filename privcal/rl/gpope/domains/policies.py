r"""Policies on linear Q-functions, batched Q-learning, and data collection from batched environments.

A *batched environment* steps k independent episodes in lock-step with numpy (no Python loop over
episodes); it provides ``n_actions``, ``horizon`` (time limit: the episode is truncated, not
terminated, after that many steps), ``state_dim``, ``reset(k, rng) -> state``, ``observe(state) ->
observations`` and ``step(state, actions) -> (next_state, rewards, terminated)``. The Mountain Car
and HIV domains implement it.

Q-learning (Watkins 1989) with linear function approximation Q(s, a) = w_a . phi(s) and the Fourier
basis, with Konidaris et al. (2011)'s per-feature step size step_size / ||c||; the k episodes of a
batch share w and their TD updates are averaged:
    td = R + gamma max_a' Q(S', a') (0 if S' terminal) - Q(S, A),   w_A += (step_size / ||c||) td phi(S).
Exploration is epsilon-greedy with rate ``exploration`` (``epsilon`` is reserved for privacy).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Optional

import numpy as np
from numpy.typing import ArrayLike

from privcal import _rng
from privcal import _validate as V
from privcal.rl.gpope.domains.data import Dataset, importance_ratios

__all__ = ["LinearQ", "EpsilonGreedy", "Softmax", "Greedy", "Uniform", "QLearningSettings", "q_learning",
           "CollectSettings", "collect", "collect_unchecked"]


@dataclass
class LinearQ:
    """Q(s, a) = weights[a] . features(s); ``weights`` has shape (n_actions, n_features)."""

    weights: np.ndarray  # (n_actions, n_features)
    features: object

    def __call__(self, observations: ArrayLike) -> np.ndarray:
        """Q values of observations, shape (k, n_actions)."""
        return self.features(observations) @ self.weights.T


class Uniform:
    """pi(a | s) = 1 / |A|.

    Args:
        n_actions: |A|, an int >= 1.
    """

    def __init__(self, n_actions: int):
        self.n_actions = V.positive_int("n_actions", n_actions)

    def probs(self, observations: ArrayLike) -> np.ndarray:
        """pi(. | s) per observation, shape (k, n_actions).

        Args:
            observations: k observations (first axis).
        """
        k = np.asarray(observations).shape[0]
        return np.full((k, self.n_actions), 1.0 / self.n_actions)


class Greedy:
    """pi(a | s) = 1 for the first maximiser of Q(s, .).

    Args:
        q: the linear Q-function.
    """

    def __init__(self, q: LinearQ):
        self.q = q
        self.n_actions = q.weights.shape[0]

    def probs(self, observations: ArrayLike) -> np.ndarray:
        """pi(. | s) per observation, shape (k, n_actions).

        Args:
            observations: k observations (first axis).
        """
        qv = self.q(observations)
        p = np.zeros_like(qv)
        p[np.arange(qv.shape[0]), np.argmax(qv, axis=1)] = 1.0
        return p


class EpsilonGreedy:
    """pi(a | s) = 1 - e + e/|A| for the first maximiser of Q(s, .), e/|A| otherwise (e = exploration).

    Args:
        q: the linear Q-function.
        exploration: the exploration rate e, in [0, 1].
    """

    def __init__(self, q: LinearQ, exploration: float):
        self.q = q
        self.exploration = V.probability("exploration", exploration)
        self.n_actions = q.weights.shape[0]

    def probs(self, observations: ArrayLike) -> np.ndarray:
        """pi(. | s) per observation, shape (k, n_actions).

        Args:
            observations: k observations (first axis).
        """
        qv = self.q(observations)
        p = np.full_like(qv, self.exploration / self.n_actions)
        p[np.arange(qv.shape[0]), np.argmax(qv, axis=1)] += 1.0 - self.exploration
        return p


class Softmax:
    """pi(a | s) proportional to exp(Q(s, a) / temperature) (Boltzmann policy).

    Args:
        q: the linear Q-function.
        temperature: in (0, inf), in the units of Q.
    """

    def __init__(self, q: LinearQ, temperature: float):
        self.q = q
        self.temperature = V.positive("temperature", temperature)
        self.n_actions = q.weights.shape[0]

    def probs(self, observations: ArrayLike) -> np.ndarray:
        """pi(. | s) per observation, shape (k, n_actions).

        Args:
            observations: k observations (first axis).
        """
        z = self.q(observations) / self.temperature
        z -= z.max(axis=1, keepdims=True)
        e = np.exp(z)
        return e / e.sum(axis=1, keepdims=True)


def _sample_actions(probs: np.ndarray, rng) -> np.ndarray:
    u = rng.random(probs.shape[0])
    a = (np.cumsum(probs, axis=1) < u[:, None]).sum(axis=1)
    return np.minimum(a, probs.shape[1] - 1)


@dataclass(frozen=True)
class QLearningSettings:
    """The tuning of :func:`q_learning` (defaults in one place).

    Fields:
        step_size: the TD step size, in (0, inf); default 0.01.
        exploration: epsilon-greedy exploration rate, in [0, 1]; default 0.1.
        gamma: the discount factor, in [0, 1]; default 1.
        batch: episodes run in parallel per round, an int >= 1; default 1.
        reward_scale: factor on the rewards, in (0, inf); default 1.
        progress: called as ``progress(round, rounds)``; default None.
    """

    step_size: float = 0.01
    exploration: float = 0.1
    gamma: float = 1.0
    batch: int = 1
    reward_scale: float = 1.0
    progress: Optional[Callable[[int, int], None]] = None


def q_learning(env: Any, features: Any, settings: Optional[QLearningSettings] = None, *, episodes: int,
               rng: _rng.Seed, **keywords: Any) -> LinearQ:
    """Linear Q-learning with epsilon-greedy exploration on a batched environment; returns the learned Q.

    Rewards are multiplied by ``reward_scale`` (learning-rate conditioning only: the greedy policy is
    unchanged by the scale in exact arithmetic). Per-feature step step_size / ||c|| when the features
    have ``norms`` (Fourier). Seeded entirely by ``rng``.

    Args:
        env: a batched environment (module docstring).
        features: the feature map (``n_features``, ``__call__``, optionally ``norms``).
        episodes: number of episodes, an int >= 1.
        settings: a :class:`QLearningSettings` (None: its defaults), its fields replaced by the keywords.
        rng: seed or Generator of exploration and starts (``privcal._rng``).
        **keywords: the :class:`QLearningSettings` fields ``step_size`` (default 0.01), ``exploration`` (0.1),
            ``gamma`` (1), ``batch`` (1), ``reward_scale`` (1) and ``progress`` (None).

    Returns:
        the learned :class:`LinearQ`.

    Raises:
        ValueError: an argument is outside its range.
    """
    st = V.settings_with("q_learning", QLearningSettings, settings, keywords)
    step_size, exploration, gamma, batch = st.step_size, st.exploration, st.gamma, st.batch
    reward_scale, progress = st.reward_scale, st.progress
    episodes = V.positive_int("episodes", episodes)
    batch = V.positive_int("batch", batch)
    step_size = V.positive("step_size", step_size)
    exploration = V.probability("exploration", exploration)
    gamma = V.probability("gamma", gamma)
    reward_scale = V.positive("reward_scale", reward_scale)
    rng = _rng.as_generator(rng, "rng")
    n_a = env.n_actions
    w = np.zeros((n_a, features.n_features))
    step = step_size / np.asarray(getattr(features, "norms", np.ones(features.n_features)))
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
            explore = rng.random(idx.size) < exploration
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


@dataclass(frozen=True)
class CollectSettings:
    """What :func:`collect` records besides the episodes themselves.

    Fields:
        features: the feature map of the Dataset.
        gamma: the discount factor, in [0, 1].
        target: the target policy pi for the ratios rho_t = pi / pi_b; default None (the behaviour policy,
            on-policy).
        reward_scale: factor on the recorded rewards, in [0, inf); default 1.
    """

    features: Any
    gamma: float
    target: Any = None
    reward_scale: float = 1.0


def collect(env: Any, trajectories: int, behaviour: Any, settings: Optional[CollectSettings] = None, *,
            rng: _rng.Seed, **keywords: Any) -> Dataset:
    """m episodes of ``behaviour`` on a batched environment, as a validated :class:`Dataset`.

    Episodes end when terminated or after ``env.horizon`` steps (truncated: the last transition
    bootstraps from S_tau).

    Args:
        env: a batched environment (module docstring).
        trajectories: m, an int >= 1.
        behaviour: the behaviour policy pi_b (anything with ``probs(observations)``).
        settings: a :class:`CollectSettings`, its fields replaced by the keywords (None: the keywords
            ``features`` and ``gamma`` are required).
        rng: seed or Generator of starts and actions (``privcal._rng``).
        **keywords: the :class:`CollectSettings` fields ``features`` (the feature map of the Dataset),
            ``gamma`` (the discount factor, in [0, 1]), ``target`` (the target policy pi for the ratios
            rho_t = pi / pi_b; default None: the behaviour policy, on-policy) and ``reward_scale`` (factor on
            the recorded rewards, in [0, inf); default 1).

    Returns:
        the validated :class:`~privcal.rl.gpope.domains.data.Dataset`.

    Raises:
        ValueError: an argument is outside its range.
    """
    st = V.settings_with("collect", CollectSettings, settings, keywords)
    m = V.positive_int("trajectories", trajectories)
    V.nonnegative("reward_scale", st.reward_scale)
    return collect_unchecked(env, m, behaviour, st, rng=rng)


def collect_unchecked(env: Any, trajectories: int, behaviour: Any, settings: Optional[CollectSettings] = None, *,
                      rng: _rng.Seed, **keywords: Any) -> Dataset:
    """:func:`collect` without validating ``trajectories`` and ``reward_scale``, for callers that validated them
    (``privcal train gpope``): the same episodes from the same ``rng``.

    Args:
        env: a batched environment (module docstring).
        trajectories: m, an int >= 1 (not checked).
        behaviour: the behaviour policy pi_b (anything with ``probs(observations)``).
        settings: a :class:`CollectSettings`, its fields replaced by the keywords (None: the keywords
            ``features`` and ``gamma`` are required).
        rng: seed or Generator of starts and actions (``privcal._rng``).
        **keywords: the :class:`CollectSettings` fields ``features``, ``gamma`` (in [0, 1], checked by the
            Dataset), ``target`` (default None: the behaviour policy) and ``reward_scale`` (a float in
            [0, inf), not checked; default 1).

    Returns:
        the validated :class:`~privcal.rl.gpope.domains.data.Dataset`.
    """
    st = V.settings_with("collect_unchecked", CollectSettings, settings, keywords)
    features, gamma, reward_scale = st.features, st.gamma, st.reward_scale
    m = trajectories
    rng = _rng.as_generator(rng, "rng")
    target = behaviour if st.target is None else st.target
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
