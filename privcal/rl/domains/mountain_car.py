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

from dataclasses import dataclass

import numpy as np

from privcal import _rng
from privcal._validate import positive_int, probability
from privcal.rl.domains.features import FourierBasis
from privcal.rl.domains.policies import EpsilonGreedy, Uniform, collect, q_learning

__all__ = ["MountainCarBatch", "mountain_car_features", "learn_behaviour", "sample_mountain_car",
           "require_gymnasium"]

GAMMA = 0.99
ORDER = 5
BEHAVIOUR_EPSILON = 0.1


def require_gymnasium():
    """Import gymnasium lazily; ImportError with the install hint if it is missing."""
    try:
        import gymnasium
    except ImportError as exc:  # pragma: no cover - exercised only without the extra
        raise ImportError("the Mountain Car domain uses Gymnasium's MountainCar-v0 dynamics: "
                          "install gymnasium (pip install 'privcal[rl]')") from exc
    return gymnasium


@dataclass(frozen=True)
class MountainCarBatch:
    """k Mountain Car episodes stepped together with Gymnasium's MountainCar-v0 equations."""

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
        """Constants and time limit of the installed Gymnasium environment ``env_id``."""
        gym = require_gymnasium()
        env = gym.make(env_id)
        try:
            u = env.unwrapped
            return cls(float(u.min_position), float(u.max_position), float(u.max_speed),
                       float(u.goal_position), float(u.goal_velocity), float(u.force),
                       float(u.gravity), int(env.spec.max_episode_steps))
        finally:
            env.close()

    def reset(self, k: int, rng) -> np.ndarray:
        x = rng.uniform(self.start_low, self.start_high, size=k)
        return np.stack([x, np.zeros(k)], axis=1)

    def observe(self, state) -> np.ndarray:
        return np.asarray(state, dtype=np.float32).astype(float)

    def step(self, state, actions):
        x = state[:, 0].copy()
        v = state[:, 1].copy()
        v = v + (np.asarray(actions) - 1) * self.force + np.cos(3 * x) * (-self.gravity)
        v = np.clip(v, -self.max_speed, self.max_speed)
        x = np.clip(x + v, self.min_position, self.max_position)
        v = np.where((x == self.min_position) & (v < 0), 0.0, v)
        terminated = (x >= self.goal_position) & (v >= self.goal_velocity)
        return np.stack([x, v], axis=1), np.full(x.size, -1.0), terminated


def mountain_car_features(env: MountainCarBatch, order: int = ORDER) -> FourierBasis:
    """Order-``order`` coupled Fourier basis on the position-velocity box ((order+1)^2 features)."""
    return FourierBasis([env.min_position, -env.max_speed], [env.max_position, env.max_speed],
                        order)


def learn_behaviour(env: MountainCarBatch, *, episodes: int = 200, seed=0, order: int = ORDER,
                    alpha: float = 0.05, epsilon: float = BEHAVIOUR_EPSILON, batch: int = 8,
                    progress=None) -> EpsilonGreedy:
    """The behaviour policy: epsilon-greedy on Q learned by Fourier-basis Q-learning (gamma = 1), seeded."""
    basis = mountain_car_features(env, order)
    q = q_learning(env, basis, episodes=positive_int("episodes", episodes),
                   rng=_rng.as_generator(seed, "seed"), alpha=alpha, epsilon=0.1, gamma=1.0,
                   batch=batch, progress=progress)
    return EpsilonGreedy(q, probability("epsilon", epsilon))


def sample_mountain_car(trajectories: int, rng, *, behaviour: EpsilonGreedy, env: MountainCarBatch,
                        off_policy: bool = False, gamma: float = GAMMA):
    """m trajectories of the behaviour policy; target = behaviour (on-policy) or uniform (off-policy)."""
    target = Uniform(env.n_actions) if off_policy else None
    return collect(env, trajectories, behaviour, rng=rng, features=behaviour.q.features,
                   gamma=gamma, target=target)
