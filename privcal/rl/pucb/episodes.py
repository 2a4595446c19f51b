"""The episode loop every tabular learner on private episode counters shares (PUCB, Private-UCB-VI): one
episode's counter inputs, the greedy policy with random tie-breaking, and :func:`play_episodes` (each episode's
exact regret by backward induction on the true MDP). ``privcal.rl.pucb.agent`` re-exports these names.
"""

from __future__ import annotations

from typing import Callable, Optional

import numpy as np
from numpy.typing import ArrayLike

from privcal import _rng
from privcal.analysis.counter import ExactCounter
from privcal.rl.pucb.tabular import EpisodeSampler, TabularMDP, backward_induction, policy_values_unchecked

__all__ = ["episode_counter_inputs", "EpisodeCounterAgent", "play_episodes"]


def episode_counter_inputs(states_n: int, actions_n: int, states: np.ndarray, actions: np.ndarray,
                           rewards: np.ndarray) -> dict:
    """What one episode adds to the counters of a tabular JDP learner (PUCB, Private-UCB-VI): the reward, or 1, at
    each visited (h, s, a) and (h, s, a, s'), else 0.

    Args:
        states_n: number of states S.
        actions_n: number of actions A.
        states: visited states s_0..s_H, an integer array of shape (H + 1,) (trusted).
        actions: actions a_0..a_{H-1}, an integer array of shape (H,) (trusted).
        rewards: rewards in [0, 1], shape (H,) (trusted).

    Returns:
        {"rewards": (H, S, A), "counts": (H, S, A), "transitions": (H, S, A, S)} arrays.
    """
    h = len(actions)
    steps = np.arange(h)
    r_in = np.zeros((h, states_n, actions_n))
    n_in = np.zeros((h, states_n, actions_n))
    m_in = np.zeros((h, states_n, actions_n, states_n))
    r_in[steps, states[:-1], actions] = rewards
    n_in[steps, states[:-1], actions] = 1.0
    m_in[steps, states[:-1], actions, states[1:]] = 1.0
    return {"rewards": r_in, "counts": n_in, "transitions": m_in}


class EpisodeCounterAgent:
    """What every tabular learner on episode counters shares (PUCB, Private-UCB-VI): the greedy policy of its
    action values with random tie-breaking, and feeding one episode to every counter once.

    A subclass provides ``q_values()``, ``horizon``, ``states``, ``actions``, ``counters`` (name -> counter with
    ``update``) and ``_rng`` (a Generator used for tie-breaking only, data independent).
    """

    def policy(self, q: Optional[ArrayLike] = None) -> np.ndarray:
        """Greedy policy pi[h, s] = argmax_a Q(s, a, h), ties broken uniformly at random.

        Args:
            q: action values, shape (H, S, A); default None (the agent's ``q_values()``).

        Returns:
            pi, an integer array of shape (H, S).
        """
        q = self.q_values() if q is None else np.asarray(q, dtype=float)
        ties = q >= q.max(axis=2, keepdims=True)
        keys = np.where(ties, self._rng.random(q.shape), -1.0)
        return keys.argmax(axis=2)

    def observe(self, states: ArrayLike, actions: ArrayLike, rewards: ArrayLike) -> None:
        """Feed one episode (H + 1 states, H actions, H rewards) to every counter once.

        Args:
            states: visited states s_0..s_H, integers in [0, S), shape (H + 1,).
            actions: actions a_0..a_{H-1}, integers in [0, A), shape (H,).
            rewards: rewards in [0, 1], shape (H,).

        Raises:
            ValueError: the shapes are wrong or a reward is outside [0, 1].
        """
        h = self.horizon
        st = np.asarray(states, dtype=np.int64)
        ac = np.asarray(actions, dtype=np.int64)
        rw = np.asarray(rewards, dtype=float)
        if st.shape != (h + 1,) or ac.shape != (h,) or rw.shape != (h,):
            raise ValueError(f"an episode needs states ({h + 1},), actions ({h},), rewards ({h},); "
                             f"got {st.shape}, {ac.shape}, {rw.shape}")
        for name, values in episode_counter_inputs(self.states, self.actions, st, ac, rw).items():
            self.counters[name].update(values)


def play_episodes(agent: "EpisodeCounterAgent", mdp: TabularMDP, episodes: int, seed: _rng.Seed,
                  progress: Optional[Callable[[int, int], None]] = None) -> tuple[np.ndarray, float, float]:
    """Run ``episodes`` episodes of a tabular counter agent on ``mdp``: each episode the agent's greedy policy
    is played (its exact regret rho* - p0 . V^pi_0 by backward induction on the true MDP), then fed to the agent.
    For a private agent, exact counters run beside its private ones, and the largest |release - count| seen is
    returned (a diagnostic of the counters' error bound; not released by the agent).

    Args:
        agent: an :class:`EpisodeCounterAgent` (PUCB, Private-UCB-VI) built for ``episodes``.
        mdp: the true MDP.
        episodes: T, an int >= 1 (trusted).
        seed: the run's seed; the episodes are sampled from its child 4 (children 0-3 are the agent's).
        progress: called as ``progress(done, total)`` after each episode, or None.

    Returns:
        (per-episode regret, clipped at 0, shape (T,); rho*; largest counter error seen, 0 without privacy).

    Raises:
        RuntimeError: a negative regret beyond round-off (the optimal values would be wrong).
    """
    env_rng = _rng.spawn(seed, 5)[4]
    sampler = EpisodeSampler(mdp)
    optimal = float(mdp.initial @ backward_induction(mdp).values[0])
    exact = {name: ExactCounter(episodes, c.shape) for name, c in agent.counters.items()}
    regret = np.empty(episodes)
    max_err = 0.0
    for k in range(episodes):
        pol = agent.policy()
        regret[k] = optimal - float(mdp.initial @ policy_values_unchecked(mdp, pol)[0])
        states, actions, rewards = sampler.sample(pol, env_rng)
        agent.observe(states, actions, rewards)
        if agent.private:
            inputs = episode_counter_inputs(mdp.states, mdp.actions, states, actions, rewards)
            for name, c in exact.items():
                c.update(inputs[name])
                max_err = max(max_err, float(np.max(np.abs(agent.counters[name].estimate - c.estimate))))
        if progress is not None:
            progress(k + 1, episodes)
    if np.any(regret < -1e-9 * mdp.horizon):
        raise RuntimeError("negative regret: the optimal values are wrong")
    return np.maximum(regret, 0.0), optimal, max_err
