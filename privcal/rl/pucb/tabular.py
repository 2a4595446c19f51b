r"""Tabular episodic MDPs: seeded generators, exact values by backward induction, episode sampling.

Model (Vietri, Balle, Krishnamurthy & Wu, ICML 2020, App. A.1): S states, A actions, horizon H,
time-dependent dynamics P(s' | s, a, h), mean rewards r(s, a, h) in [0, 1] (sampled rewards are
Bernoulli(r(s, a, h)), so they lie in [0, 1]), initial distribution p0. For a deterministic Markov
policy pi(s, h),
    V_h^pi(s) = r(s, pi(s, h), h) + sum_{s'} P(s' | s, pi(s, h), h) V_{h+1}^pi(s'),  V_{H+1} = 0,
    rho^pi = p0 . V_1^pi,
and the optimal values V* follow from the same recursion with a max over actions. Steps are
0-based here (h = 0..H-1 is the paper's h = 1..H). Regret of a policy: rho* - rho^pi, exact.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from privcal import _rng
from privcal import _validate as V

__all__ = [
    "TabularMDP",
    "Solution",
    "random_mdp",
    "river_swim",
    "backward_induction",
    "policy_values",
    "policy_return",
    "uniform_policy_return",
    "EpisodeSampler",
    "random_mdp_unchecked",
    "river_swim_unchecked",
    "policy_values_unchecked",
]


@dataclass(frozen=True, eq=False)
class TabularMDP:
    """A finite-horizon MDP with time-dependent tables (read-only arrays).

    ``transitions[h, s, a, s']`` = P(s' | s, a, h); ``rewards[h, s, a]`` = mean reward in [0, 1];
    ``initial[s]`` = p0(s). Shapes (H, S, A, S), (H, S, A), (S,).

    Args:
        transitions: P(s' | s, a, h), shape (H, S, A, S), each row summing to 1.
        rewards: mean rewards r(s, a, h) in [0, 1], shape (H, S, A).
        initial: start distribution p0, shape (S,), summing to 1.
        name: label used in reports; default "tabular".

    Raises:
        ValueError: a table has the wrong shape or is not a probability table.
    """

    transitions: np.ndarray
    rewards: np.ndarray
    initial: np.ndarray
    name: str = "tabular"

    def __post_init__(self):
        p = np.array(self.transitions, dtype=float)
        r = np.array(self.rewards, dtype=float)
        p0 = np.array(self.initial, dtype=float)
        if p.ndim != 4 or p.shape[1] != p.shape[3] or min(p.shape) < 1:
            raise ValueError(f"transitions must have shape (H, S, A, S), got {p.shape}")
        if r.shape != p.shape[:3]:
            raise ValueError(f"rewards must have shape {p.shape[:3]} (H, S, A), got {r.shape}")
        if p0.shape != (p.shape[1],):
            raise ValueError(f"initial must have shape ({p.shape[1]},), got {p0.shape}")
        for name, arr in (("transitions", p), ("initial", p0)):
            if not np.all(np.isfinite(arr)) or np.any(arr < 0):
                raise ValueError(f"{name} must hold probabilities >= 0")
        if not np.allclose(p.sum(axis=-1), 1.0, atol=1e-9):
            raise ValueError("transitions must sum to 1 over the next state s'")
        if not np.isclose(p0.sum(), 1.0, atol=1e-9):
            raise ValueError(f"initial must sum to 1, got {p0.sum()!r}")
        if not np.all(np.isfinite(r)) or np.any(r < 0) or np.any(r > 1):
            raise ValueError("rewards must be mean rewards in [0, 1]")
        for name, arr in (("transitions", p), ("rewards", r), ("initial", p0)):
            arr.setflags(write=False)
            object.__setattr__(self, name, arr)

    @property
    def horizon(self) -> int:
        """H, the number of steps per episode."""
        return self.transitions.shape[0]

    @property
    def states(self) -> int:
        """S, the number of states."""
        return self.transitions.shape[1]

    @property
    def actions(self) -> int:
        """A, the number of actions."""
        return self.transitions.shape[2]


@dataclass(frozen=True, eq=False)
class Solution:
    """Optimal action values ``q`` (H, S, A), ``values`` (H + 1, S), greedy ``policy`` (H, S)."""

    q: np.ndarray
    values: np.ndarray
    policy: np.ndarray


def random_mdp(states: int, actions: int, horizon: int, seed: _rng.Seed = None, *,
               concentration: float = 1.0, stationary: bool = False) -> TabularMDP:
    """Random tabular MDP: P(.|s, a, h) ~ Dirichlet(concentration 1_S), r(s, a, h) ~ U[0, 1].

    Start state 0 (p0 = e_0). ``stationary=True`` draws one table and repeats it over h.
    Seeded through ``privcal._rng.as_generator(seed)``.

    Args:
        states: number of states S, an integer >= 1.
        actions: number of actions A, an integer >= 1.
        horizon: episode length H, an integer >= 1.
        seed: None, a non-negative int, a SeedSequence or a Generator; default None.
        concentration: Dirichlet parameter of every next-state distribution, in (0, inf);
            default 1 (uniform on the simplex).
        stationary: repeat one table over all steps h; default False.

    Returns:
        The :class:`TabularMDP`, named "random(S=.., A=.., H=..)".

    Raises:
        ValueError: an argument is outside its range.
    """
    return random_mdp_unchecked(V.positive_int("states", states), V.positive_int("actions", actions),
                       V.positive_int("horizon", horizon), seed,
                       concentration=V.positive("concentration", concentration),
                       stationary=bool(stationary))


def random_mdp_unchecked(states: int, actions: int, horizon: int, seed: _rng.Seed = None, *,
                         concentration: float = 1.0, stationary: bool = False) -> TabularMDP:
    """:func:`random_mdp` without validation (trusted kernel; same draws for the same seed).

    Args:
        states: number of states S, an integer >= 1 (not checked).
        actions: number of actions A, an integer >= 1 (not checked).
        horizon: episode length H, an integer >= 1 (not checked).
        seed: None, a non-negative int, a SeedSequence or a Generator; default None (not checked).
        concentration: Dirichlet parameter of every next-state distribution, in (0, inf); default 1 (uniform on the simplex) (not checked).
        stationary: repeat one table over all steps h; default False (not checked).
    """
    s, a, h = states, actions, horizon
    rng = _rng.as_generator(seed)
    layers = 1 if stationary else h
    p = rng.dirichlet(np.full(s, concentration), size=(layers, s, a))
    r = rng.random((layers, s, a))
    if stationary:
        p = np.repeat(p, h, axis=0)
        r = np.repeat(r, h, axis=0)
    p0 = np.zeros(s)
    p0[0] = 1.0
    return TabularMDP(p, r, p0, name=f"random(S={s}, A={a}, H={h})")


def river_swim(states: int = 6, horizon: int = 20, *, p_right: float = 0.35,
               p_left: float = 0.05, p_start_right: float = 0.4,
               small_reward: float = 0.005) -> TabularMDP:
    """RiverSwim-style chain (Strehl & Littman 2008; the variant of Osband et al. 2013, App.).

    Action 0 (swim with the current) moves deterministically to max(s - 1, 0); reward
    ``small_reward`` when taken in state 0. Action 1 (against the current): in state 0 move right
    w.p. ``p_start_right``, else stay; in a middle state move right w.p. ``p_right``, left w.p.
    ``p_left``, else stay; in the last state stay w.p. 1 - ``p_start_right`` else move left, and get
    reward 1. Start in state 0; time-homogeneous; rewards normalised to [0, 1].

    Args:
        states: number of states S, an integer >= 2; default 6.
        horizon: episode length H, an integer >= 1; default 20.
        p_right: probability of moving right from a middle state, in [0, 1]; default 0.35.
        p_left: probability of moving left from a middle state, in [0, 1 - p_right]; default 0.05.
        p_start_right: probability of leaving state 0 to the right (and of leaving the last state
            to the left), in [0, 1]; default 0.4.
        small_reward: mean reward of action 0 in state 0, in [0, 1]; default 0.005.

    Returns:
        The :class:`TabularMDP`, named "riverswim(S=.., H=..)".

    Raises:
        ValueError: an argument is outside its range.
    """
    s = V.positive_int("states", states)
    if s < 2:
        raise ValueError(f"states must be >= 2 for a chain, got {states!r}")
    h = V.positive_int("horizon", horizon)
    pr = V.probability("p_right", p_right)
    pl = V.probability("p_left", p_left)
    ps = V.probability("p_start_right", p_start_right)
    small = V.probability("small_reward", small_reward)
    if pr + pl > 1:
        raise ValueError(f"p_right + p_left must be <= 1, got {pr + pl!r}")
    return river_swim_unchecked(s, h, p_right=pr, p_left=pl, p_start_right=ps, small_reward=small)


def river_swim_unchecked(states: int = 6, horizon: int = 20, *, p_right: float = 0.35,
                         p_left: float = 0.05, p_start_right: float = 0.4,
                         small_reward: float = 0.005) -> TabularMDP:
    """:func:`river_swim` without validation (trusted kernel).

    Args:
        states: number of states S, an integer >= 2; default 6 (not checked).
        horizon: episode length H, an integer >= 1; default 20 (not checked).
        p_right: probability of moving right from a middle state, in [0, 1]; default 0.35 (not checked).
        p_left: probability of moving left from a middle state, in [0, 1 - p_right]; default 0.05 (not checked).
        p_start_right: probability of leaving state 0 to the right (and of leaving the last state to the left), in [0, 1]; default 0.4 (not checked).
        small_reward: mean reward of action 0 in state 0, in [0, 1]; default 0.005 (not checked).
    """
    s, h, pr, pl, ps, small = states, horizon, p_right, p_left, p_start_right, small_reward
    p = np.zeros((s, 2, s))
    r = np.zeros((s, 2))
    for i in range(s):
        p[i, 0, max(i - 1, 0)] = 1.0
    p[0, 1, 1] = ps
    p[0, 1, 0] = 1.0 - ps
    for i in range(1, s - 1):
        p[i, 1, i + 1] = pr
        p[i, 1, i - 1] = pl
        p[i, 1, i] = 1.0 - pr - pl
    p[s - 1, 1, s - 1] = 1.0 - ps
    p[s - 1, 1, s - 2] += ps
    r[0, 0] = small
    r[s - 1, 1] = 1.0
    p0 = np.zeros(s)
    p0[0] = 1.0
    return TabularMDP(np.repeat(p[None], h, axis=0), np.repeat(r[None], h, axis=0), p0,
                      name=f"riverswim(S={s}, H={h})")


def backward_induction(mdp: TabularMDP) -> Solution:
    """Optimal Q*, V* and a greedy optimal policy by dynamic programming over h = H-1..0.

    Q*_h(s, a) = r(s, a, h) + sum_{s'} P(s'|s, a, h) V*_{h+1}(s'), V*_h = max_a Q*_h, V*_H = 0
    (Bellman optimality for finite horizon, e.g. Puterman 1994, Sec. 4.5; VBKW App. A.1).

    Args:
        mdp: the :class:`TabularMDP` (validated when it was built).

    Returns:
        A :class:`Solution` (Q*, V* with V*_H = 0, greedy policy).
    """
    hor, s = mdp.horizon, mdp.states
    values = np.zeros((hor + 1, s))
    q = np.empty((hor, s, mdp.actions))
    for h in range(hor - 1, -1, -1):
        q[h] = mdp.rewards[h] + mdp.transitions[h] @ values[h + 1]
        values[h] = q[h].max(axis=1)
    return Solution(q=q, values=values, policy=q.argmax(axis=2))


def _check_policy(mdp: TabularMDP, policy) -> np.ndarray:
    pol = np.asarray(policy)
    if pol.shape != (mdp.horizon, mdp.states) or pol.dtype.kind not in "iu":
        raise ValueError(f"policy must be an integer array of shape {(mdp.horizon, mdp.states)}, "
                         f"got {pol.dtype} {pol.shape}")
    if pol.min() < 0 or pol.max() >= mdp.actions:
        raise ValueError(f"policy actions must be in 0..{mdp.actions - 1}")
    return pol


def policy_values(mdp: TabularMDP, policy: ArrayLike) -> np.ndarray:
    """Exact values V^pi_h(s), shape (H + 1, S), of a deterministic Markov policy pi[h, s].

    V^pi_h(s) = r(s, pi(s,h), h) + sum_{s'} P(s'|s, pi(s,h), h) V^pi_{h+1}(s') (VBKW App. A.1).

    Args:
        mdp: the :class:`TabularMDP`.
        policy: actions pi[h, s], an integer array of shape (H, S) with entries in [0, A).

    Returns:
        V^pi, shape (H + 1, S) (last row 0).

    Raises:
        ValueError: ``policy`` has the wrong shape, type or an action out of range.
    """
    pol = _check_policy(mdp, policy)
    return policy_values_unchecked(mdp, pol)


def policy_values_unchecked(mdp: TabularMDP, pol: np.ndarray) -> np.ndarray:
    """:func:`policy_values` without validation (trusted kernel; ``pol`` an int array (H, S) of valid actions).

    Args:
        mdp: the :class:`TabularMDP` (not checked).
        pol: the policy, an int array of shape (H, S) of valid actions (not checked).
    """
    hor, s = mdp.horizon, mdp.states
    rows = np.arange(s)
    values = np.zeros((hor + 1, s))
    for h in range(hor - 1, -1, -1):
        a = pol[h]
        values[h] = mdp.rewards[h, rows, a] + mdp.transitions[h, rows, a] @ values[h + 1]
    return values


def policy_return(mdp: TabularMDP, policy: ArrayLike) -> float:
    """Expected total reward rho^pi = p0 . V^pi_1 of a deterministic policy (VBKW App. A.1).

    Args:
        mdp: the :class:`TabularMDP`.
        policy: actions pi[h, s], an integer array of shape (H, S) with entries in [0, A).

    Returns:
        rho^pi, in [0, H].

    Raises:
        ValueError: ``policy`` has the wrong shape, type or an action out of range.
    """
    return float(mdp.initial @ policy_values(mdp, policy)[0])


def uniform_policy_return(mdp: TabularMDP) -> float:
    """Expected total reward of the uniformly random policy (each action with probability 1/A).

    The trivial policy a learner must beat: V_h(s) = (1/A) sum_a [r(s, a, h) + sum_{s'} P(s'|s, a, h)
    V_{h+1}(s')], rho = p0 . V_1 (the Bellman equation of a stochastic policy, VBKW App. A.1).

    Args:
        mdp: the :class:`TabularMDP`.

    Returns:
        rho^uniform, in [0, H].
    """
    values = np.zeros(mdp.states)
    for h in range(mdp.horizon - 1, -1, -1):
        values = (mdp.rewards[h] + mdp.transitions[h] @ values).mean(axis=1)
    return float(mdp.initial @ values)


class EpisodeSampler:
    """Samples episodes of a :class:`TabularMDP` under a policy, from a ``numpy.random.Generator``.

    Per episode: s_1 ~ p0; for each step a_h = pi[h, s_h], reward ~ Bernoulli(r(s_h, a_h, h)),
    s_{h+1} ~ P(. | s_h, a_h, h) by inverse-CDF sampling from one uniform draw each.

    Args:
        mdp: the :class:`TabularMDP` to sample.
    """

    def __init__(self, mdp: TabularMDP):
        self.mdp = mdp
        self._cdf = np.cumsum(mdp.transitions, axis=-1)
        self._cdf0 = np.cumsum(mdp.initial)
        self._last = mdp.states - 1

    def sample(self, policy: ArrayLike,
               rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """One episode: (states (H + 1,), actions (H,), rewards (H,)) as numpy arrays.

        Args:
            policy: actions pi[h, s], integers in [0, A), shape (H, S) (not checked: the hot
                loop of the agents; see :func:`policy_values` for a checked use).
            rng: the episode's source of randomness (2H + 1 uniforms per episode).

        Returns:
            (states, actions, rewards): int64 (H + 1,), int64 (H,), float (H,) in {0, 1}.
        """
        mdp = self.mdp
        hor = mdp.horizon
        u = rng.random(2 * hor + 1)
        states = np.empty(hor + 1, dtype=np.int64)
        actions = np.empty(hor, dtype=np.int64)
        s = min(int(np.searchsorted(self._cdf0, u[0], side="right")), self._last)
        states[0] = s
        for h in range(hor):
            a = int(policy[h, s])
            actions[h] = a
            s = min(int(np.searchsorted(self._cdf[h, s, a], u[1 + h], side="right")), self._last)
            states[h + 1] = s
        means = mdp.rewards[np.arange(hor), states[:-1], actions]
        rewards = (u[1 + hor:] < means).astype(float)
        return states, actions, rewards
