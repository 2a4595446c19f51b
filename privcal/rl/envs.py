r"""The 1-D interval environment of Wang & Hegde 2019, App. E.1, as a Gymnasium environment.

Registered as ``"privcal/Interval-v0"`` when gymnasium is installed (``pip install 'privcal[rl]'``);
importing this module without gymnasium works, only constructing the environment then raises
``ImportError``. ``gymnasium.make("privcal/Interval-v0")`` needs this module imported first (e.g.
``import privcal.rl.envs``), or the id written as ``"privcal.rl.envs:privcal/Interval-v0"``.

Dynamics (one step, action a in {0, 1}, u ~ U[0, 0.25] from the environment's own generator):

    s' = min(s + u, 1)   if a = 1 (move right),
    s' = max(s - u, 0)   if a = 0 (move left),
    reward r = 0.5 - |s' - 0.5|           (in [0, 0.5]; largest in the middle of the interval),

Start: s_0 ~ U[0, 1]. End: every episode is truncated after ``max_episode_steps`` = 50 steps
(``truncated=True``); it never terminates (``terminated`` is always False), so a learner should
bootstrap from the last state. Observation: ``np.array([s])`` (float64, in the Box [0, 1]).

Choices App. E.1 leaves open: the reward is read at the state *after* the move (App. E.1 says "the
reward 0.5 - |s - 0.5| is given at each step", which read at the state before the move would not
depend on the action at all); the time limit is enforced inside the environment (so ``make`` adds
no ``TimeLimit`` wrapper). Randomness comes only from ``self.np_random`` (seeded by ``reset(seed=...)``).
"""

from __future__ import annotations

from typing import Any, Optional

import numpy as np
from numpy.typing import ArrayLike

from privcal import _validate as V

try:  # gymnasium is the optional 'rl' extra: importing privcal.rl.envs must work without it
    import gymnasium as _gym
    from gymnasium import spaces as _spaces
except ImportError:  # pragma: no cover - depends on the environment
    _gym = None
    _spaces = None

__all__ = ["ENV_ID", "IntervalEnv", "MAX_STEP", "EPISODE_STEPS", "register", "reward", "reference_return"]

ENV_ID = "privcal/Interval-v0"
MAX_STEP = 0.25  # largest move per step (App. E.1)
EPISODE_STEPS = 50  # episode length (App. E.1)

_Base = _gym.Env if _gym is not None else object


def reward(state: ArrayLike) -> np.ndarray:
    """Reward at the state reached: 0.5 - |s - 0.5| (Wang & Hegde 2019, App. E.1); works on arrays.

    Args:
        state: position(s) s in [0, 1] (a float or an array of any shape).

    Returns:
        0.5 - |s - 0.5| elementwise, in [0, 0.5] (a 0-d array for a float input).
    """
    return 0.5 - np.abs(np.asarray(state, dtype=float) - 0.5)


def reference_return(policy: str = "random", *, episodes: int = 20000, episode_steps: int = EPISODE_STEPS,
                     seed: Any = 0) -> tuple[float, float]:
    """Mean episode return of a fixed policy on the interval environment, with its standard error.

    The reference lines of a learning curve: ``"random"`` (each action with probability 1/2, the trivial
    policy a learner must beat) and ``"middle"`` (move towards 0.5: right below it, left above it, the
    optimum of this reward, which finite-horizon dynamic programming confirms; see
    tests/test_rl_dpq_replay.py). A vectorised simulation of exactly the dynamics of :class:`IntervalEnv`
    (s_0 ~ U[0, 1], moves U[0, 0.25] clipped to [0, 1], reward at the state after the move), independent
    of gymnasium.

    Args:
        policy: "random" or "middle"; default "random".
        episodes: number of simulated episodes, an int >= 2; default 20000 (standard error about 0.02).
        episode_steps: steps per episode, an int >= 1; default 50 (App. E.1).
        seed: seed of the simulation (``privcal._rng``: an int, a SeedSequence or a Generator); default 0.

    Returns:
        (mean return, standard error of the mean).

    Raises:
        ValueError: an argument is outside its range.
    """
    from privcal import _rng

    V.choice("policy", policy, ("random", "middle"))
    n = V.positive_int("episodes", episodes)
    if n < 2:
        raise ValueError(f"episodes must be an integer >= 2 (a standard error needs two), got {episodes!r}")
    total = _simulate(policy, n, V.positive_int("episode_steps", episode_steps), _rng.as_generator(seed, "seed"))
    return float(total.mean()), float(total.std(ddof=1) / np.sqrt(n))


def _simulate(policy: str, n: int, steps: int, rng: np.random.Generator) -> np.ndarray:
    """Returns of ``n`` episodes of ``steps`` steps under "random" or "middle", all at once."""
    s = rng.uniform(0.0, 1.0, n)
    total = np.zeros(n)
    for _ in range(steps):
        right = rng.random(n) < 0.5 if policy == "random" else s < 0.5
        move = MAX_STEP * rng.random(n)
        s = np.clip(np.where(right, s + move, s - move), 0.0, 1.0)
        total += reward(s)
    return total


class IntervalEnv(_Base):
    """App. E.1 of Wang & Hegde 2019: move left/right on [0, 1] by U[0, 0.25], reward 0.5 - |s' - 0.5|.

    See the module docstring for the equations. ``step`` after the end of an episode raises
    ``RuntimeError`` until ``reset``.

    Args:
        max_episode_steps: steps after which every episode is truncated, an int >= 1; default 50
            (App. E.1).
        render_mode: must be None (no rendering); Gymnasium's constructor argument.

    Raises:
        ImportError: gymnasium is not installed (the ``rl`` extra).
        ValueError: an argument is outside its range.
    """

    metadata = {"render_modes": []}

    def __init__(self, max_episode_steps: int = EPISODE_STEPS, render_mode: Optional[str] = None):
        if _gym is None:
            raise ImportError("IntervalEnv needs gymnasium: pip install 'privcal[rl]'")
        if render_mode is not None:
            raise ValueError(f"render_mode must be None (no rendering), got {render_mode!r}")
        self.max_episode_steps = V.positive_int("max_episode_steps", max_episode_steps)
        self.render_mode = None
        self.observation_space = _spaces.Box(low=0.0, high=1.0, shape=(1,), dtype=np.float64)
        self.action_space = _spaces.Discrete(2)
        self._state = 0.0
        self._steps = 0
        self._done = True

    @property
    def state(self) -> float:
        """The current position s in [0, 1]."""
        return self._state

    def reset(self, *, seed: Optional[int] = None,
              options: Optional[dict] = None) -> tuple[np.ndarray, dict[str, Any]]:
        """Start an episode at s_0 ~ U[0, 1]; returns (observation, info).

        Args:
            seed: reseeds ``self.np_random`` (Gymnasium convention: a non-negative int), or None to
                keep the current generator; default None.
            options: ignored (Gymnasium's reset argument); default None.

        Returns:
            (``np.array([s_0])``, ``{}``).
        """
        super().reset(seed=seed)
        self._state = float(self.np_random.uniform(0.0, 1.0))
        self._steps = 0
        self._done = False
        return np.array([self._state]), {}

    def step(self, action: int) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        """Move by U[0, 0.25] (left for 0, right for 1), clip to [0, 1]; reward 0.5 - |s' - 0.5|.

        Args:
            action: 0 (move left) or 1 (move right).

        Returns:
            (observation ``np.array([s'])``, reward in [0, 0.5], terminated (always False), truncated
            (True at the step limit), ``{}``).

        Raises:
            RuntimeError: the episode is over (call ``reset``).
            ValueError: ``action`` is not 0 or 1.
        """
        if self._done:
            raise RuntimeError("episode is over: call reset() before step()")
        if action == 1:
            s = self._state + MAX_STEP * self.np_random.random()
            s = 1.0 if s > 1.0 else s
        elif action == 0:
            s = self._state - MAX_STEP * self.np_random.random()
            s = 0.0 if s < 0.0 else s
        else:
            raise ValueError(f"action must be 0 or 1, got {action!r}")
        self._state = s
        self._steps += 1
        truncated = self._steps >= self.max_episode_steps
        self._done = truncated
        return np.array([s]), 0.5 - abs(s - 0.5), False, truncated, {}


def register() -> bool:
    """Register :data:`ENV_ID` with gymnasium (idempotent); False when gymnasium is not installed."""
    if _gym is None:
        return False
    if ENV_ID not in _gym.registry:
        _gym.register(id=ENV_ID, entry_point="privcal.rl.envs:IntervalEnv")
    return True


register()
