r"""Gymnasium's FrozenLake (4x4, slippery) as an exact finite-horizon tabular MDP, offline data and private selection.

**The environment** (``gymnasium.make("FrozenLake-v1")``, default map "4x4", ``is_slippery=True``): a 4x4 grid
of 16 cells, start S = cell 0, goal G = cell 15, holes H at cells 5, 7, 11, 12; actions 0 = left, 1 = down,
2 = right, 3 = up. From a frozen cell the agent moves in the chosen direction or in one of the two
perpendicular directions, each with probability 1/3 (a move off the grid stays in place). Reward 1 on the
step that enters the goal, else 0; holes and the goal are terminal. The transition table is read from
gymnasium at run time (``env.unwrapped.P``: for each s, a a list of (probability, s', reward, terminated));
gymnasium lists terminal cells as self-loops with reward 0, so the terminal cells are absorbing and
reward-free and a fixed horizon H changes no return.

**Finite-horizon MDP** (:func:`frozen_lake_mdp`): P_h(s' | s, a) = the table, r_h(s, a) = sum_{s'} P(s'|s, a)
R(s, a, s') (the mean reward: 1/3 or 2/3 next to the goal), start cell 0, the same tables for every step
h = 0..H-1 (``privcal.rl.pucb.tabular.TabularMDP``). Values are exact (:func:`optimal_value`,
:func:`policy_value`, :func:`uniform_value`: backward induction, no simulation), so regret is exact.

**Horizon.** :data:`HORIZON` = 20, not gymnasium's time limit of 100: the private counters' noise grows
with H (one user changes 6H counter streams: sigma ~ sqrt(H) for Gaussian counters, b ~ H for Laplace) and
the bonus with H^2. Within 20 steps the optimal policy reaches the goal with probability 0.1991 and the
uniform policy with 0.0124 (within 100 steps: 0.7442 and 0.0139; exact, :func:`optimal_value` and
:func:`uniform_value`), so the regret of a learner lies in [0, 0.1991] per episode and the uniform policy's
is 0.1867. ``horizon`` is a parameter; the time limit is
``gymnasium.make("FrozenLake-v1").spec.max_episode_steps``.

**Offline data** (:func:`collect_episodes`): ``episodes`` episodes of H steps from the start cell under a
stated behaviour policy (default uniform random, each action with probability 1/4), seeded; the reward of a
step is gymnasium's R(s, a, s') (1 exactly when s' is the goal entered from a frozen cell), so the episodes
are distributed as gymnasium's own (same table, same rewards; drawn with privcal's seeded generator rather
than the environment's, and continued in the absorbing terminal cells up to H steps). Returned as arrays (s, a, r, s') of shape (episodes, H).

**Offline private learner** (:func:`offline_select`, episode unit): private selection over a public, finite
set of candidate policies (:func:`candidate_policies`), scored by clipped per-episode importance-weighted
returns and released by ``privcal.rl.dpq.select``'s exponential mechanism or report-noisy-max (see
:func:`offline_select` for the sensitivity).

gymnasium is an optional dependency (the ``rl`` and ``test`` extras): importing this module works without it,
building the MDP raises ``ImportError`` naming ``pip install 'privcal[rl]'``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

import numpy as np
from numpy.typing import ArrayLike

from privcal import _rng
from privcal import _validate as V
from privcal.rl.dpq.select import SCORE_RANGE, select
from privcal.rl.pucb.tabular import TabularMDP

__all__ = ["HORIZON", "GOAL_PROBABILITY_NOTE", "FrozenLakeTables", "frozen_lake_tables", "tables_from_desc",
           "tables_mdp", "frozen_lake_mdp",
           "policy_value", "optimal_value", "uniform_value", "OfflineEpisodes", "collect_episodes",
           "CANDIDATE_SEED", "candidate_policies", "importance_scores", "selection_arguments", "OFFLINE_SELECTORS",
           "OfflineSelectResult", "OfflineSelectSettings", "offline_select"]

#: The finite horizon of the benchmark (see the module docstring for the choice).
HORIZON = 20
#: What the returns are: the probability of reaching the goal within H steps (rewards are 1 once, at the goal).
GOAL_PROBABILITY_NOTE = "return = probability of reaching the goal within the horizon (reward 1 on entering it)"


def _gymnasium():
    try:
        import gymnasium
    except ImportError as exc:  # pragma: no cover - gymnasium is in the test venv
        raise ImportError("the FrozenLake benchmark needs gymnasium: pip install 'privcal[rl]'") from exc
    return gymnasium


@dataclass(frozen=True, eq=False)
class FrozenLakeTables:
    """The tables read from gymnasium: ``transitions[s, a, s']``, ``rewards[s, a, s']`` (R of that step),
    ``terminal[s]`` (hole or goal), ``initial[s]`` (start distribution), ``desc`` (the map's rows)."""

    transitions: np.ndarray
    rewards: np.ndarray
    terminal: np.ndarray
    initial: np.ndarray
    desc: tuple


def frozen_lake_tables(map_name: str = "4x4", is_slippery: bool = True) -> FrozenLakeTables:
    """Read FrozenLake's transition table from gymnasium (``gymnasium.make("FrozenLake-v1").unwrapped.P``).

    Entries with the same next state are added up (the slippery dynamics list a cell twice when two moves
    hit the same wall). A next state reached with two different rewards would make R(s, a, s') ill-defined
    and raises ``RuntimeError`` (FrozenLake has none).

    Args:
        map_name: gymnasium's map, "4x4" (default) or "8x8".
        is_slippery: gymnasium's slippery flag; default True (gymnasium's default).

    Returns:
        The :class:`FrozenLakeTables`.

    Raises:
        ValueError: an unknown map.
        ImportError: gymnasium is not installed.
    """
    V.choice("map_name", map_name, ("4x4", "8x8"))
    return _read_tables({"map_name": map_name}, is_slippery)


def tables_from_desc(desc: tuple, is_slippery: bool = True) -> FrozenLakeTables:
    """Gymnasium's FrozenLake table for a given map ``desc`` (``gymnasium.make("FrozenLake-v1", desc=...)``).

    The rows are strings of "S" (start), "F" (frozen), "H" (hole) and "G" (goal), as gymnasium takes them;
    the dynamics and rewards are gymnasium's for that map (as :func:`frozen_lake_tables`).

    Args:
        desc: the map's rows, equal-length strings over "SFHG" with one "S" and at least one "G".
        is_slippery: gymnasium's slippery flag; default True.

    Returns:
        The :class:`FrozenLakeTables`.

    Raises:
        ValueError: ``desc`` is not a map.
        ImportError: gymnasium is not installed.
    """
    rows = tuple(str(r) for r in desc)
    if (not rows or any(len(r) != len(rows[0]) for r in rows) or any(c not in "SFHG" for r in rows for c in r)
            or "".join(rows).count("S") != 1 or "G" not in "".join(rows)):
        raise ValueError(f"desc must be equal-length rows over 'SFHG' with one 'S' and a 'G', got {desc!r}")
    return _read_tables({"desc": list(rows)}, is_slippery)


def _read_tables(kwargs: dict, is_slippery: bool) -> FrozenLakeTables:
    gym = _gymnasium()
    env = gym.make("FrozenLake-v1", is_slippery=bool(is_slippery), **kwargs)
    try:
        raw = env.unwrapped
        table = raw.P
        s_n, a_n = int(raw.observation_space.n), int(raw.action_space.n)
        desc = tuple(bytes(row).decode() for row in raw.desc)
        initial = np.asarray(raw.initial_state_distrib, dtype=float)
    finally:
        env.close()
    p = np.zeros((s_n, a_n, s_n))
    r = np.zeros((s_n, a_n, s_n))
    seen = np.zeros((s_n, a_n, s_n), dtype=bool)
    terminal = np.zeros(s_n, dtype=bool)
    flat = "".join(desc)
    for s in range(s_n):
        terminal[s] = flat[s] in "HG"
        for a in range(a_n):
            for prob, nxt, rew, _done in table[s][a]:
                if seen[s, a, nxt] and r[s, a, nxt] != rew:
                    raise RuntimeError(f"FrozenLake lists two rewards for ({s}, {a}, {nxt})")
                p[s, a, nxt] += prob
                r[s, a, nxt] = rew
                seen[s, a, nxt] = True
    for arr in (p, r, terminal, initial):
        arr.setflags(write=False)
    return FrozenLakeTables(p, r, terminal, initial, desc)


def tables_mdp(tables: FrozenLakeTables, horizon: int = HORIZON, name: str = "frozenlake") -> TabularMDP:
    """The finite-horizon :class:`privcal.rl.pucb.tabular.TabularMDP` of given tables (module docstring).

    Args:
        tables: the :class:`FrozenLakeTables`.
        horizon: H, an int >= 1; default :data:`HORIZON`.
        name: the MDP's name; default "frozenlake".

    Returns:
        The MDP: the same tables at every step, mean rewards r(s, a) = sum_s' P(s'|s, a) R(s, a, s').
    """
    h = V.positive_int("horizon", horizon)
    mean_r = np.einsum("sax,sax->sa", tables.transitions, tables.rewards)
    return TabularMDP(np.repeat(tables.transitions[None], h, axis=0), np.repeat(mean_r[None], h, axis=0),
                      tables.initial, name=str(name))


def frozen_lake_mdp(horizon: int = HORIZON, *, map_name: str = "4x4", is_slippery: bool = True) -> TabularMDP:
    """FrozenLake as a finite-horizon :class:`privcal.rl.pucb.tabular.TabularMDP` (module docstring).

    Args:
        horizon: H, an int >= 1; default :data:`HORIZON` (20).
        map_name: "4x4" (default) or "8x8".
        is_slippery: default True.

    Returns:
        The MDP (time-homogeneous tables repeated over h), named "frozenlake(4x4, slippery, H=20)".

    Raises:
        ValueError: an argument is outside its range.
        ImportError: gymnasium is not installed.
    """
    h = V.positive_int("horizon", horizon)
    tab = frozen_lake_tables(map_name, is_slippery)
    return tables_mdp(tab, h, f"frozenlake({map_name}, {'slippery' if is_slippery else 'deterministic'}, H={h})")


def _check_stochastic(mdp: TabularMDP, policy) -> np.ndarray:
    pol = np.asarray(policy, dtype=float)
    shape = (mdp.horizon, mdp.states, mdp.actions)
    if pol.shape == (mdp.states, mdp.actions):
        pol = np.broadcast_to(pol, shape)
    if pol.shape != shape or not np.all(np.isfinite(pol)) or np.any(pol < 0) or not np.allclose(
            pol.sum(axis=-1), 1.0, atol=1e-9):
        raise ValueError(f"policy must be action probabilities of shape {shape} or {shape[1:]} summing to 1 "
                         f"over actions, got shape {pol.shape}")
    return pol


def policy_value(mdp: TabularMDP, policy: ArrayLike) -> np.ndarray:
    """Exact values V^pi_h(s), shape (H + 1, S), of a Markov policy given by its action probabilities.

    V^pi_h(s) = sum_a pi_h(a|s) [r_h(s, a) + sum_{s'} P_h(s'|s, a) V^pi_{h+1}(s')], V^pi_H = 0 (the Bellman
    equation of a fixed policy, finite horizon; Puterman 1994, Sec. 4.2).

    Args:
        mdp: the :class:`privcal.rl.pucb.tabular.TabularMDP`.
        policy: pi_h(a|s), shape (H, S, A), or (S, A) for a stationary policy; rows sum to 1.

    Returns:
        V^pi, shape (H + 1, S) (last row 0). The return is ``mdp.initial @ V[0]``.

    Raises:
        ValueError: ``policy`` is not a policy of this MDP.
    """
    pol = _check_stochastic(mdp, policy)
    values = np.zeros((mdp.horizon + 1, mdp.states))
    for h in range(mdp.horizon - 1, -1, -1):
        q = mdp.rewards[h] + mdp.transitions[h] @ values[h + 1]
        values[h] = np.sum(pol[h] * q, axis=1)
    return values


def optimal_value(mdp: TabularMDP) -> tuple:
    """Optimal values by exact finite-horizon value iteration: (V* (H + 1, S), greedy policy (H, S)).

    Q*_h = r_h + P_h V*_{h+1}, V*_h = max_a Q*_h, V*_H = 0 (Bellman optimality, Puterman 1994, Sec. 4.5).

    Args:
        mdp: the :class:`privcal.rl.pucb.tabular.TabularMDP`.

    Returns:
        (V*, pi*): V* of shape (H + 1, S), pi* an int array of shape (H, S). The optimal return is
        ``mdp.initial @ V*[0]``.
    """
    if not isinstance(mdp, TabularMDP):
        raise ValueError(f"mdp must be a TabularMDP, got {type(mdp).__name__}")
    values = np.zeros((mdp.horizon + 1, mdp.states))
    pol = np.zeros((mdp.horizon, mdp.states), dtype=np.int64)
    for h in range(mdp.horizon - 1, -1, -1):
        q = mdp.rewards[h] + mdp.transitions[h] @ values[h + 1]
        values[h] = q.max(axis=1)
        pol[h] = q.argmax(axis=1)
    return values, pol


def uniform_value(mdp: TabularMDP) -> np.ndarray:
    """Exact values (H + 1, S) of the uniform random policy (each action with probability 1/A).

    Args:
        mdp: the :class:`privcal.rl.pucb.tabular.TabularMDP`.

    Returns:
        V^uniform, shape (H + 1, S).
    """
    if not isinstance(mdp, TabularMDP):
        raise ValueError(f"mdp must be a TabularMDP, got {type(mdp).__name__}")
    return policy_value(mdp, np.full((mdp.states, mdp.actions), 1.0 / mdp.actions))


@dataclass(frozen=True, eq=False)
class OfflineEpisodes:
    """Offline data: ``states``, ``actions``, ``rewards``, ``next_states`` of shape (episodes, H), one row per
    episode (one user), and how they were collected (``behaviour`` probabilities (S, A), ``seed``)."""

    states: np.ndarray
    actions: np.ndarray
    rewards: np.ndarray
    next_states: np.ndarray
    behaviour: np.ndarray
    seed: Optional[int]

    @property
    def episodes(self) -> int:
        """Number of episodes (users)."""
        return int(self.states.shape[0])

    def transitions(self):
        """Iterate over the episodes as lists of (s, a, r, s') tuples.

        Returns:
            A generator of lists, one per episode.
        """
        for i in range(self.episodes):
            yield list(zip(self.states[i].tolist(), self.actions[i].tolist(), self.rewards[i].tolist(),
                           self.next_states[i].tolist()))


def collect_episodes(episodes: int, seed: int = 0, *, horizon: int = HORIZON, behaviour: Optional[ArrayLike] = None,
                     tables: Optional[FrozenLakeTables] = None) -> OfflineEpisodes:
    """Collect ``episodes`` FrozenLake episodes of ``horizon`` steps under a behaviour policy (module docstring).

    Each episode starts in the start cell; at each step a ~ behaviour(. | s), s' ~ P(. | s, a) (inverse CDF of
    one uniform), r = R(s, a, s') (gymnasium's reward of that step). Terminal cells are absorbing with reward 0.

    Args:
        episodes: number of episodes (users), an int >= 1.
        seed: seed of the collection, a non-negative int; default 0.
        horizon: steps per episode, an int >= 1; default :data:`HORIZON`.
        behaviour: action probabilities (S, A), rows summing to 1; default None (uniform random).
        tables: the tables (:func:`frozen_lake_tables`); default None (read from gymnasium).

    Returns:
        The :class:`OfflineEpisodes`.

    Raises:
        ValueError: an argument is outside its range.
        ImportError: gymnasium is not installed and ``tables`` is None.
    """
    n = V.positive_int("episodes", episodes)
    h = V.positive_int("horizon", horizon)
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed must be a non-negative int, got {seed!r}")
    tab = frozen_lake_tables() if tables is None else tables
    s_n, a_n = tab.rewards.shape[:2]
    beh = np.full((s_n, a_n), 1.0 / a_n) if behaviour is None else np.asarray(behaviour, dtype=float)
    if beh.shape != (s_n, a_n) or np.any(beh < 0) or not np.allclose(beh.sum(axis=1), 1.0, atol=1e-9):
        raise ValueError(f"behaviour must be action probabilities of shape {(s_n, a_n)}, got {beh.shape}")
    rng = _rng.as_generator(int(seed))
    cdf_p = np.cumsum(tab.transitions, axis=-1)
    cdf_b = np.cumsum(beh, axis=-1)
    cdf_0 = np.cumsum(tab.initial)
    states = np.empty((n, h), dtype=np.int64)
    actions = np.empty((n, h), dtype=np.int64)
    nxt = np.empty((n, h), dtype=np.int64)
    s = np.minimum(np.searchsorted(cdf_0, rng.random(n), side="right"), s_n - 1)
    for step in range(h):
        a = np.minimum((rng.random(n)[:, None] >= cdf_b[s]).sum(axis=1), a_n - 1)
        s2 = np.minimum((rng.random(n)[:, None] >= cdf_p[s, a]).sum(axis=1), s_n - 1)
        states[:, step], actions[:, step], nxt[:, step] = s, a, s2
        s = s2
    rewards = tab.rewards[states, actions, nxt]
    out = OfflineEpisodes(states, actions, rewards, nxt, beh, int(seed))
    for arr in (states, actions, rewards, nxt):
        arr.setflags(write=False)
    return out


#: The public seed of the candidate policies (fixed, independent of any data).
CANDIDATE_SEED = 2024
#: Selectors of ``privcal.rl.dpq.select`` whose privacy rests on the scores' sensitivity (randomized response
#: does not use the scores' scale, so the rescaling of :func:`offline_select` would not price it).
OFFLINE_SELECTORS = ("exponential", "noisy-max")


def candidate_policies(count: int = 256, seed: int = CANDIDATE_SEED, *, states: int = 16,
                       actions: int = 4) -> np.ndarray:
    """The public candidate set: ``count`` deterministic stationary policies pi_k(s), uniform random actions.

    Drawn from the fixed public ``seed``, never from data, so choosing among them is the only thing the
    private data decide.

    Args:
        count: K, an int >= 2; default 256.
        seed: the public seed, a non-negative int; default :data:`CANDIDATE_SEED`.
        states: S, an int >= 1; default 16 (FrozenLake 4x4).
        actions: A, an int >= 1; default 4.

    Returns:
        An int array (K, S) of actions.

    Raises:
        ValueError: an argument is outside its range.
    """
    k = V.positive_int("count", count)
    if k < 2:
        raise ValueError(f"count must be an integer >= 2 (a selection needs two), got {count!r}")
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed must be a non-negative int, got {seed!r}")
    return _rng.as_generator(int(seed)).integers(0, V.positive_int("actions", actions),
                                                 (k, V.positive_int("states", states)))


def importance_scores(data: OfflineEpisodes, candidates: ArrayLike, clip: float, public_size: int) -> np.ndarray:
    r"""u_k = (1 / n_pub) sum_i min(W, G_i^k): clipped per-decision importance-weighted returns of each candidate.

    G_i^k = sum_t w_{i,0:t}^k r_{i,t} with w_{i,0:t}^k = prod_{t' <= t} 1{a_{i,t'} = pi_k(s_{i,t'})} /
    mu(a_{i,t'} | s_{i,t'}) (per-decision importance sampling, Precup, Sutton & Singh 2000; unbiased for the
    candidate's return when mu > 0). Each episode contributes min(W, G_i^k) in [0, W] (rewards are >= 0), and
    the sum is divided by the public size n_pub, never by the data's own size.

    Args:
        data: the :class:`OfflineEpisodes` (its ``behaviour`` is mu).
        candidates: deterministic policies, an int array (K, S).
        clip: W, in (0, inf).
        public_size: n_pub, an int >= 1 (public: the planned number of episodes, not read from the data).

    Returns:
        u, shape (K,).

    Raises:
        ValueError: an argument is outside its range.
    """
    w_max = V.positive("clip", clip)
    n_pub = V.positive_int("public_size", public_size)
    cand = np.asarray(candidates)
    if cand.ndim != 2 or cand.shape[1] != data.behaviour.shape[0] or cand.dtype.kind not in "iu":
        raise ValueError(f"candidates must be an int array (K, {data.behaviour.shape[0]}), got {cand.shape}")
    rewarded = np.flatnonzero(data.rewards.sum(axis=1) > 0)  # episodes without reward contribute 0
    st, ac, rw = data.states[rewarded], data.actions[rewarded], data.rewards[rewarded]
    inv_mu = 1.0 / data.behaviour[st, ac]
    scores = np.empty(cand.shape[0])
    for k, pol in enumerate(cand):
        weight = np.cumprod(np.where(ac == pol[st], inv_mu, 0.0), axis=1)
        scores[k] = np.minimum(np.sum(weight * rw, axis=1), w_max).sum() / n_pub
    return scores


def selection_arguments(scores: ArrayLike, epsilon: float, clip: float, public_size: int) -> tuple:
    """The scores and epsilon to hand to ``privcal.rl.dpq.select.select`` so that it is epsilon-DP here.

    select's exponential mechanism and noisy-max are priced for scores of sensitivity R = ``SCORE_RANGE``;
    ours have sensitivity W / n_pub (:func:`offline_select`). Returned: (u R / W, epsilon n_pub), whose
    exponential weights exp(epsilon n_pub u R / W / (2R)) = exp(epsilon u / (2 W / n_pub)) are those of the
    epsilon-DP mechanism at sensitivity W / n_pub.

    Args:
        scores: u, one per candidate (:func:`importance_scores`).
        epsilon: the target epsilon, in (0, inf).
        clip: W, in (0, inf).
        public_size: n_pub, an int >= 1.

    Returns:
        (scaled scores, epsilon argument).

    Raises:
        ValueError: an argument is outside its range.
    """
    eps = V.positive("epsilon", epsilon)
    w_max = V.positive("clip", clip)
    n_pub = V.positive_int("public_size", public_size)
    return np.asarray(scores, dtype=float) * (SCORE_RANGE / w_max), eps * n_pub


@dataclass(frozen=True)
class OfflineSelectResult:
    """What :func:`offline_select` released and the exact values around it.

    ``chosen`` indexes the candidates; ``value`` is the released policy's exact return (goal probability within
    H); ``uniform_value`` the behaviour (uniform) policy's, ``candidate_mean`` the mean over the candidates (a
    data-independent random pick), ``best_candidate`` the best candidate (the oracle ceiling of selection),
    ``optimal`` the optimal return; ``scores`` are private (not covered by the guarantee; for inspection).
    """

    epsilon: float
    selector: str
    clip: float
    public_size: int
    episodes: int
    chosen: int
    value: float
    uniform_value: float
    candidate_mean: float
    best_candidate: float
    optimal: float
    privacy_unit: str
    guarantee: str
    scores: tuple = ()

    def to_dict(self) -> dict:
        """JSON-ready copy (without the private scores)."""
        return {k: getattr(self, k) for k in ("epsilon", "selector", "clip", "public_size", "episodes", "chosen",
                                              "value", "uniform_value", "candidate_mean", "best_candidate",
                                              "optimal", "privacy_unit", "guarantee")}


@dataclass(frozen=True)
class OfflineSelectSettings:
    """:func:`offline_select`'s candidates, clip, public size, selector, seed and evaluation MDP (defaults in one
    place: here; checked by :func:`offline_select`).

    Attributes:
        candidates: public deterministic policies (K, S); default None (:func:`candidate_policies`).
        clip: W, the per-episode clip of the importance-weighted return, in (0, inf); default 4^6 = 4096 (the
            weight of a shortest 6-step success under the uniform behaviour).
        public_size: n_pub, an int >= 1; default None: ``data.episodes`` taken as the public planned size (state
            it as public when you use the default).
        selector: "exponential" (default) or "noisy-max".
        seed: the mechanism's randomness, a non-negative int; default 0.
        mdp: the FrozenLake MDP for the exact values; default None (:func:`frozen_lake_mdp` at the data's horizon).
    """

    candidates: Optional[ArrayLike] = None
    clip: float = 4.0 ** 6
    public_size: Optional[int] = None
    selector: str = "exponential"
    seed: int = 0
    mdp: Optional[TabularMDP] = None


def offline_select(data: OfflineEpisodes, epsilon: float, settings: Optional[OfflineSelectSettings] = None,
                   **keywords: Any) -> OfflineSelectResult:
    r"""Release one candidate policy, epsilon-DP for one episode (one user) added, removed or replaced.

    **Sensitivity.** u_k = (1/n_pub) sum_i min(W, G_i^k) (:func:`importance_scores`): one episode adds, removes or
    replaces one term in [0, W], so |u_k(D) - u_k(D')| <= Delta = W / n_pub for every k, whatever the other
    episodes (n_pub is public, so the normaliser does not move). **Mechanism.** ``privcal.rl.dpq.select.select``
    treats its scores as having sensitivity R = ``SCORE_RANGE`` and clips them to [0, R]. We pass
    u''_k = u_k R / W (clipping is 1-Lipschitz, so the clipped u'' has sensitivity <= R / n_pub) with privacy
    argument epsilon n_pub: the exponential mechanism then draws k with probability proportional to
    exp(epsilon n_pub u''_k / (2R)) = exp(epsilon u''_k / (2 Delta'')), Delta'' = R / n_pub, which is epsilon-DP
    (McSherry & Talwar 2007, Thm 6); report-noisy-max adds Laplace(2R / (epsilon n_pub)) = Laplace(2 Delta'' /
    epsilon), also epsilon-DP (Dwork & Roth 2014, Claim 3.9 with sensitivity Delta''). u'' <= R unless the data
    hold more than n_pub episodes all at W, so the clip changes nothing on honest data. Randomized response is
    refused: its guarantee does not scale with the scores. The guarantee is pure epsilon-DP (delta = 0).

    Args:
        data: the offline episodes (:func:`collect_episodes`); the private input.
        epsilon: the privacy parameter, in (0, inf).
        settings: the selection, an :class:`OfflineSelectSettings`; default None: built from ``keywords``.
        keywords: fields of :class:`OfflineSelectSettings` (``candidates``, ``clip``, ``public_size``,
            ``selector``, ``seed``, ``mdp``), replacing those of ``settings``.

    Returns:
        The :class:`OfflineSelectResult`.

    Raises:
        ValueError: an argument is outside its range.
    """
    st = V.settings_with("offline_select", OfflineSelectSettings, settings, keywords)
    candidates, clip, public_size, selector, seed, mdp = (st.candidates, st.clip, st.public_size, st.selector,
                                                          st.seed, st.mdp)
    eps = V.positive("epsilon", epsilon)
    V.choice("selector", selector, OFFLINE_SELECTORS)
    w_max = V.positive("clip", clip)
    n_pub = data.episodes if public_size is None else V.positive_int("public_size", public_size)
    cand = candidate_policies() if candidates is None else np.asarray(candidates)
    u = importance_scores(data, cand, w_max, n_pub)
    scaled, eps_arg = selection_arguments(u, eps, w_max, n_pub)
    chosen = select(scaled, eps_arg, selector, seed=seed)
    env = frozen_lake_mdp(data.states.shape[1]) if mdp is None else mdp
    values = np.array([float(env.initial @ policy_value(env, np.eye(env.actions)[p])[0]) for p in cand])
    v_star, _ = optimal_value(env)
    guarantee = (f"({eps:g}, 0)-DP for one episode (one user's trajectory) added, removed or replaced: {selector} "
                 f"selection over {cand.shape[0]} public candidate policies, scores = clipped importance-weighted "
                 f"returns (clip {w_max:g}) summed and divided by the public size {n_pub}; sensitivity "
                 f"{w_max / n_pub:.4g}")
    return OfflineSelectResult(eps, selector, w_max, n_pub, data.episodes, int(chosen), float(values[chosen]),
                               float(env.initial @ uniform_value(env)[0]), float(values.mean()),
                               float(values.max()), float(env.initial @ v_star[0]),
                               "episode", guarantee, tuple(float(x) for x in u))
