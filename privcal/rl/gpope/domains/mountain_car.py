r"""Mountain Car with Gymnasium's ``MountainCar-v0`` dynamics, batched, and its evaluation setup.

Dynamics (Gymnasium ``MountainCarEnv.step``; Sutton & Barto 2018, Example 10.1), constants read from
the installed Gymnasium environment by :meth:`MountainCarBatch.from_gymnasium`:

    v' = clip(v + (A - 1) force - cos(3 x) gravity, -max_speed, max_speed),
    x' = clip(x + v', min_position, max_position),   v' = 0 if x' = min_position and v' < 0,

reward -1 per step, terminated when x' >= goal_position and v' >= goal_velocity, truncated after
``max_episode_steps`` (200) steps; start x ~ U[-0.6, -0.4], v = 0. Observations are the float32
state, as Gymnasium returns them (the internal state stays float64). ``tests/test_rl_domains.py``
replays batched episodes in ``gymnasium.make("MountainCar-v0")`` and checks equality step by step.

Evaluation setup (GPOPE paper, Sec. 7): features = 5th-order Fourier basis (36 features) on
[min_position, max_position] x [-max_speed, max_speed] (Konidaris et al. 2011); the behaviour policy
is epsilon-greedy (epsilon = 0.1, our choice: the paper only says "a decent policy") on a Q-function
learned by Q-learning with that basis (seeded); on-policy evaluation evaluates it, off-policy
evaluation evaluates the uniform policy from its data. gamma = 0.99 (our choice; the paper does not
state it).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Optional

import numpy as np
from numpy.typing import ArrayLike

from privcal import _rng
from privcal import _validate as V
from privcal.rl.gpope.domains.features import FourierBasis
from privcal.rl.gpope.domains.policies import EpsilonGreedy, Uniform, collect, collect_unchecked, q_learning

__all__ = ["MountainCarBatch", "mountain_car_features", "BehaviourLearning", "learn_behaviour", "sample_mountain_car", "sample_mountain_car_unchecked",
           "require_gymnasium"]

GAMMA = 0.99
ORDER = 5
BEHAVIOUR_EPSILON = 0.1


def require_gymnasium() -> Any:
    """Import gymnasium lazily; ImportError with the install hint if it is missing.

    Returns:
        the ``gymnasium`` module.

    Raises:
        ImportError: gymnasium is not installed (the ``rl`` extra).
    """
    try:
        import gymnasium
    except ImportError as exc:  # pragma: no cover - exercised only without the extra
        raise ImportError("the Mountain Car domain uses Gymnasium's MountainCar-v0 dynamics: "
                          "install gymnasium (pip install 'privcal[rl]')") from exc
    return gymnasium


@dataclass(frozen=True)
class MountainCarBatch:
    """k Mountain Car episodes stepped together with Gymnasium's MountainCar-v0 equations.

    The fields are Gymnasium's constants (read by :meth:`from_gymnasium`) and the time limit
    ``horizon``; starts are x ~ U[start_low, start_high], v = 0. A batched environment of
    :mod:`privcal.rl.gpope.domains.policies`.
    """

    min_position: float
    max_position: float
    max_speed: float
    goal_position: float
    goal_velocity: float
    force: float
    gravity: float
    horizon: int
    start_low: float = -0.6
    start_high: float = -0.4
    n_actions: int = 3
    state_dim: int = 2

    @classmethod
    def from_gymnasium(cls, env_id: str = "MountainCar-v0") -> "MountainCarBatch":
        """Constants and time limit of the installed Gymnasium environment ``env_id``.

        Args:
            env_id: a registered Gymnasium id with Mountain Car's attributes; default "MountainCar-v0".

        Raises:
            ImportError: gymnasium is not installed.
        """
        gym = require_gymnasium()
        env = gym.make(env_id)
        try:
            u = env.unwrapped
            return cls(float(u.min_position), float(u.max_position), float(u.max_speed),
                       float(u.goal_position), float(u.goal_velocity), float(u.force),
                       float(u.gravity), int(env.spec.max_episode_steps))
        finally:
            env.close()

    def reset(self, k: int, rng: np.random.Generator) -> np.ndarray:
        """k start states (x ~ U[start_low, start_high], v = 0), shape (k, 2).

        Args:
            k: number of episodes, an int >= 1 (trusted: the caller validated it).
            rng: the generator of the starts.
        """
        x = rng.uniform(self.start_low, self.start_high, size=k)
        return np.stack([x, np.zeros(k)], axis=1)

    def observe(self, state: ArrayLike) -> np.ndarray:
        """Observations as Gymnasium returns them (float32 rounded), as float64.

        Args:
            state: states, shape (k, 2).
        """
        return np.asarray(state, dtype=np.float32).astype(float)

    def step(self, state: np.ndarray, actions: ArrayLike) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """One step of every episode: (next states, rewards -1, terminated).

        Args:
            state: states, shape (k, 2).
            actions: k actions in {0, 1, 2} (push left, none, right).
        """
        x = state[:, 0].copy()
        v = state[:, 1].copy()
        v = v + (np.asarray(actions) - 1) * self.force + np.cos(3 * x) * (-self.gravity)
        v = np.clip(v, -self.max_speed, self.max_speed)
        x = np.clip(x + v, self.min_position, self.max_position)
        v = np.where((x == self.min_position) & (v < 0), 0.0, v)
        terminated = (x >= self.goal_position) & (v >= self.goal_velocity)
        return np.stack([x, v], axis=1), np.full(x.size, -1.0), terminated


def mountain_car_features(env: MountainCarBatch, order: int = ORDER) -> FourierBasis:
    """Order-``order`` coupled Fourier basis on the position-velocity box ((order+1)^2 features).

    Args:
        env: the Mountain Car constants (the box).
        order: the Fourier order, an int >= 0; default 5.
    """
    return FourierBasis([env.min_position, -env.max_speed], [env.max_position, env.max_speed],
                        order)


@dataclass(frozen=True)
class BehaviourLearning:
    """How :func:`learn_behaviour` learns Mountain Car's behaviour policy (defaults in one place).

    Fields:
        episodes: Q-learning episodes, an int >= 1; default 200.
        seed: seed of the learning (``privcal._rng``); default 0.
        order: Fourier order of the features, an int >= 0; default 5.
        step_size: Q-learning step size, in (0, inf); default 0.05.
        exploration: exploration rate of the returned behaviour policy, in [0, 1]; default 0.1.
        batch: episodes per Q-learning round, an int >= 1; default 8.
        progress: called as ``progress(round, rounds)``; default None.
    """

    episodes: int = 200
    seed: _rng.Seed = 0
    order: int = ORDER
    step_size: float = 0.05
    exploration: float = BEHAVIOUR_EPSILON
    batch: int = 8
    progress: Optional[Callable[[int, int], None]] = None


def learn_behaviour(env: MountainCarBatch, settings: Optional[BehaviourLearning] = None,
                    **keywords: Any) -> EpsilonGreedy:
    """The behaviour policy: epsilon-greedy on Q learned by Fourier-basis Q-learning (gamma = 1), seeded.

    Q-learning explores at rate 0.1 whatever ``exploration`` is.

    Args:
        env: the Mountain Car environment.
        settings: a :class:`BehaviourLearning` (None: its defaults), its fields replaced by the keywords.
        **keywords: the :class:`BehaviourLearning` fields ``episodes`` (default 200), ``seed`` (0), ``order``
            (5), ``step_size`` (0.05), ``exploration`` (0.1), ``batch`` (8) and ``progress`` (None).

    Raises:
        ValueError: an argument is outside its range.
    """
    st = V.settings_with("learn_behaviour", BehaviourLearning, settings, keywords)
    episodes, seed, order, step_size, batch, progress = (st.episodes, st.seed, st.order, st.step_size, st.batch,
                                                         st.progress)
    exploration = V.probability("exploration", st.exploration)  # before the (slow) learning
    basis = mountain_car_features(env, order)
    q = q_learning(env, basis, episodes=episodes, rng=_rng.as_generator(seed, "seed"),
                   step_size=step_size, exploration=0.1, gamma=1.0, batch=batch, progress=progress)
    return EpsilonGreedy(q, exploration)


def sample_mountain_car(trajectories: int, rng: _rng.Seed, *, behaviour: EpsilonGreedy,
                        env: MountainCarBatch, off_policy: bool = False, gamma: float = GAMMA) -> Any:
    """m trajectories of the behaviour policy; target = behaviour (on-policy) or uniform (off-policy).

    Args:
        trajectories: m, an int >= 1.
        rng: seed or Generator of the sample (``privcal._rng``).
        behaviour: the behaviour policy (:func:`learn_behaviour`).
        env: the Mountain Car environment.
        off_policy: evaluate the uniform policy instead of the behaviour; default False.
        gamma: the discount factor, in [0, 1]; default 0.99.

    Returns:
        a validated :class:`~privcal.rl.gpope.domains.data.Dataset` (features: the behaviour's basis).
    """
    target = Uniform(env.n_actions) if off_policy else None
    return collect(env, trajectories, behaviour, rng=rng, features=behaviour.q.features,
                   gamma=gamma, target=target)


def sample_mountain_car_unchecked(trajectories: int, rng: _rng.Seed, *, behaviour: EpsilonGreedy,
                                  env: MountainCarBatch, off_policy: bool = False, gamma: float = GAMMA) -> Any:
    """:func:`sample_mountain_car` without validating ``trajectories``, for callers that validated it (``privcal
    train gpope``): the same sample.

    Args:
        trajectories: m, an int >= 1 (not checked).
        rng: seed or Generator of the sample (``privcal._rng``).
        behaviour: the behaviour policy (:func:`learn_behaviour`).
        env: the Mountain Car environment.
        off_policy: evaluate the uniform policy instead of the behaviour; default False.
        gamma: the discount factor, in [0, 1]; default 0.99.

    Returns:
        a validated :class:`~privcal.rl.gpope.domains.data.Dataset` (features: the behaviour's basis).
    """
    target = Uniform(env.n_actions) if off_policy else None
    return collect_unchecked(env, trajectories, behaviour, rng=rng, features=behaviour.q.features,
                             gamma=gamma, target=target)
