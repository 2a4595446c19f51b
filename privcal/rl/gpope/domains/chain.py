r"""The chain domain of the GPOPE paper, Sec. 7 (after Balle, Gomrokchi & Precup 2016, Sec. 6).

States 0, ..., N-1 (N = 40); state N-1 is absorbing and terminal. Start: S_0 uniform on the N-1
transient states {0, ..., N-2} (a start in the absorbing state would give an empty trajectory). One
action; from a transient state s the chain stays with probability p (= 0.5) and moves to s + 1 with
probability 1 - p:

    P(s' = s | s) = p,   P(s' = s + 1 | s) = 1 - p,   R_t = 1 if S_{t+1} = N - 1 else 0,

and the episode ends (terminated) on reaching N - 1. gamma = 0.99. Features: one-hot on the N - 1
transient states (the absorbing state has value 0 and feature vector 0). On-policy: rho_t = 1.

True values: V(s) = ((1-p) gamma / (1 - p gamma))^(N-1-s) (each move to the right takes a geometric
number of steps; :func:`chain_values`), used by the tests as an exact reference.
"""

from __future__ import annotations

from typing import Any, Optional

import numpy as np

from privcal import _rng
from privcal import _validate as V
from privcal.rl.gpope.domains.data import Dataset
from privcal.rl.gpope.domains.features import OneHot

__all__ = ["ChainEnv", "chain_features", "chain_values", "sample_chain", "sample_chain_unchecked"]

N_STATES = 40
P_STAY = 0.5
GAMMA = 0.99


class ChainEnv:
    """Gymnasium-style chain: ``reset(seed=None) -> (s, info)``, ``step(0) -> (s', r, terminated, truncated, info)``.

    Randomness comes only from ``self.np_random`` (a numpy Generator, reseeded by ``reset(seed=...)``).

    Args:
        n_states: N, an int >= 2; default 40.
        p_stay: p, the probability of staying, in [0, 1); default 0.5.

    Raises:
        ValueError: an argument is outside its range.
    """

    n_actions = 1

    def __init__(self, n_states: int = N_STATES, p_stay: float = P_STAY):
        self.n_states = V.positive_int("n_states", n_states)
        if self.n_states < 2:
            raise ValueError(f"n_states must be >= 2, got {n_states!r}")
        self.p_stay = V.probability("p_stay", p_stay)
        if self.p_stay == 1.0:
            raise ValueError("p_stay must be < 1 (otherwise the chain never terminates)")
        self.np_random = _rng.as_generator(None)
        self.state = None

    def reset(self, *, seed: _rng.Seed = None, options: Optional[dict] = None) -> tuple[int, dict[str, Any]]:
        """Start at a uniform transient state; returns (state, info).

        Args:
            seed: reseeds ``self.np_random`` (``privcal._rng``), or None to keep it; default None.
            options: ignored (Gymnasium's reset argument); default None.
        """
        if seed is not None:
            self.np_random = _rng.as_generator(seed, "seed")
        self.state = int(self.np_random.integers(self.n_states - 1))
        return self.state, {}

    def step(self, action: int = 0) -> tuple[int, float, bool, bool, dict[str, Any]]:
        """Stay with probability p, else move right: (state, reward, terminated, truncated, info).

        Args:
            action: must be 0 (the single action); default 0.

        Raises:
            RuntimeError: ``reset`` was not called, or the episode has terminated.
            ValueError: an action other than 0.
        """
        if self.state is None:
            raise RuntimeError("call reset() before step()")
        if action != 0:
            raise ValueError(f"the chain has a single action 0, got {action!r}")
        if self.state == self.n_states - 1:
            raise RuntimeError("the episode has terminated; call reset()")
        if self.np_random.random() >= self.p_stay:
            self.state += 1
        terminated = self.state == self.n_states - 1
        return self.state, float(terminated), terminated, False, {}


def chain_features(n_states: int = N_STATES) -> OneHot:
    """One-hot features on the transient states 0..N-2 (the absorbing state N-1 maps to 0).

    Args:
        n_states: N, an int >= 2; default 40.
    """
    return OneHot(n_states, absorbing=(n_states - 1,))


def chain_values(n_states: int = N_STATES, p_stay: float = P_STAY, gamma: float = GAMMA) -> np.ndarray:
    """Exact V(s) = ((1-p) gamma / (1 - p gamma))^(N-1-s) for the transient states s = 0..N-2.

    Args:
        n_states: N, an int >= 1; default 40.
        p_stay: p, in [0, 1]; default 0.5.
        gamma: the discount factor, in [0, 1]; default 0.99.

    Raises:
        ValueError: an argument is outside its range.
    """
    n = V.positive_int("n_states", n_states)
    p = V.probability("p_stay", p_stay)
    g = V.in_closed("gamma", gamma, 0.0, 1.0)
    factor = (1 - p) * g / (1 - p * g)
    return factor ** (n - 1 - np.arange(n - 1, dtype=float))


def sample_chain(trajectories: int, rng: _rng.Seed, *, n_states: int = N_STATES, p_stay: float = P_STAY,
                 gamma: float = GAMMA) -> Dataset:
    """m chain trajectories, vectorised (same law as :class:`ChainEnv`): a Dataset with one-hot features.

    From start s each state j = s..N-2 is occupied for a Geometric(1 - p) number of steps (>= 1), the
    last of which moves right; the move into N-1 earns reward 1 and terminates.

    Args:
        trajectories: m, an int >= 1.
        rng: seed or Generator of the sample (``privcal._rng``).
        n_states: N, an int >= 1; default 40.
        p_stay: p, in [0, 1); default 0.5.
        gamma: the discount factor of the Dataset, in [0, 1]; default 0.99.

    Returns:
        a validated :class:`~privcal.rl.gpope.domains.data.Dataset` with one-hot features.

    Raises:
        ValueError: an argument is outside its range.
    """
    m = V.positive_int("trajectories", trajectories)
    n = V.positive_int("n_states", n_states)
    p = V.probability("p_stay", p_stay)
    if p == 1.0:
        raise ValueError("p_stay must be < 1")
    return sample_chain_unchecked(m, rng, n_states=n, p_stay=p, gamma=gamma)


def sample_chain_unchecked(trajectories: int, rng: _rng.Seed, *, n_states: int = N_STATES, p_stay: float = P_STAY,
                           gamma: float = GAMMA) -> Dataset:
    """:func:`sample_chain` without validating the sizes, for callers that validated them (``privcal train
    gpope``): the same sample from the same ``rng``.

    Args:
        trajectories: m, an int >= 1 (not checked).
        rng: seed or Generator of the sample (``privcal._rng``).
        n_states: N, an int >= 1 (not checked); default 40.
        p_stay: p, a float in [0, 1) (not checked); default 0.5.
        gamma: the discount factor of the Dataset, in [0, 1] (checked by the Dataset); default 0.99.

    Returns:
        a validated :class:`~privcal.rl.gpope.domains.data.Dataset` with one-hot features.
    """
    m, n, p = trajectories, n_states, p_stay
    rng = _rng.as_generator(rng, "rng")
    starts = rng.integers(n - 1, size=m)
    n_visited = (n - 1) - starts                         # transient states visited per trajectory
    total_visited = int(n_visited.sum())
    first = np.concatenate([[0], np.cumsum(n_visited)[:-1]])
    # state ids visited in order, trajectory after trajectory
    visit_traj = np.repeat(np.arange(m), n_visited)
    visit_state = starts[visit_traj] + (np.arange(total_visited) - first[visit_traj])
    durations = rng.geometric(1.0 - p, size=total_visited)
    states = np.repeat(visit_state, durations)
    # the last step spent in each visited state moves right
    moves = np.zeros(states.size, dtype=bool)
    moves[np.cumsum(durations) - 1] = True
    next_states = states + moves
    terminated = next_states == n - 1
    rewards = terminated.astype(float)
    lengths = np.bincount(visit_traj, weights=durations, minlength=m).astype(np.int64)
    offsets = np.concatenate([[0], np.cumsum(lengths)])
    return Dataset(states, next_states, rewards, terminated, np.ones(states.size), offsets,
                   features=chain_features(n), gamma=gamma,
                   actions=np.zeros(states.size, dtype=np.int64))
