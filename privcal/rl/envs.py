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

**The random-peak variant** (``IntervalEnv(peak=theta)``; :func:`draw_peak` draws theta ~ U[0, 1] from a
seed; registered as ``"privcal/IntervalPeak-v0"``, whose ``peak_seed`` draws it): the reward is
r_theta(s') = max(0, 0.5 - |s' - theta|), in [0, 0.5]; theta = 0.5 is App. E.1's reward exactly (for s' in
[0, 1], |s' - 0.5| <= 0.5). With one fixed reward, "beats the random policy" does not test private learning:
the data-independent move-to-middle policy is optimal and 0-DP. With theta drawn per seed, the best a
data-independent policy can do is the best policy for the expected reward
g(s) = E_theta r_theta(s) = 0.25 - (s - 0.5)^2 / 2 (closed form: the triangle of area 1/4 loses the part
(|s - 0.5|)^2 / 2 that falls outside [0, 1]); a policy that does not see the rewards sees only states,
so its expected return is that of the MDP with reward g, where Markov policies are optimal.
:func:`trivial_return` simulates the move-to-middle policy under g; tests/test_rl_learners.py checks by
dynamic programming on a grid that no policy does better under g. :func:`policy_return` evaluates any
policy (a function of the states) for one theta by vectorised simulation.

Choices App. E.1 leaves open: the reward is read at the state *after* the move (App. E.1 says "the
reward 0.5 - |s - 0.5| is given at each step", which read at the state before the move would not
depend on the action at all); the time limit is enforced inside the environment (so ``make`` adds
no ``TimeLimit`` wrapper). Randomness comes only from ``self.np_random`` (seeded by ``reset(seed=...)``).
"""

from __future__ import annotations

from typing import Any, Callable, Optional

import numpy as np
from numpy.typing import ArrayLike

from privcal import _validate as V

try:  # gymnasium is the optional 'rl' extra: importing privcal.rl.envs must work without it
    import gymnasium as _gym
    from gymnasium import spaces as _spaces
except ImportError:  # pragma: no cover - depends on the environment
    _gym = None
    _spaces = None

__all__ = ["ENV_ID", "PEAK_ENV_ID", "IntervalEnv", "RandomPeakIntervalEnv", "MAX_STEP", "EPISODE_STEPS",
           "register", "reward", "reference_return", "reference_return_unchecked", "draw_peak", "expected_reward", "episode_returns",
           "policy_return", "policy_return_unchecked", "middle_policy", "trivial_return", "trivial_return_unchecked",
           "run_inputs", "ShiftedRewardIntervalEnv"]

ENV_ID = "privcal/Interval-v0"
PEAK_ENV_ID = "privcal/IntervalPeak-v0"
MAX_STEP = 0.25  # largest move per step (App. E.1)
EPISODE_STEPS = 50  # episode length (App. E.1)

_Base = _gym.Env if _gym is not None else object


def reward(state: ArrayLike, peak: float = 0.5) -> np.ndarray:
    """Reward at the state reached: max(0, 0.5 - |s - peak|); at peak 0.5 Wang & Hegde 2019, App. E.1's
    0.5 - |s - 0.5|; works on arrays.

    Args:
        state: position(s) s in [0, 1] (a float or an array of any shape).
        peak: the reward's peak theta, in [0, 1]; default 0.5 (App. E.1).

    Returns:
        max(0, 0.5 - |s - peak|) elementwise, in [0, 0.5] (a 0-d array for a float input).
    """
    return _reward(np.asarray(state, dtype=float), _peak(peak))


def _reward(state, peak):
    return np.maximum(0.0, 0.5 - np.abs(state - peak))


def _peak(peak) -> float:
    return V.in_closed("peak", peak, 0.0, 1.0)


def draw_peak(seed: Any) -> float:
    """The reward peak theta ~ U[0, 1] of the random-peak variant, drawn from ``seed`` alone.

    The stream is ``privcal._rng.as_generator([seed, 7])`` for an int seed (keyed, so it is independent
    of every other stream a run draws from the same int), else the generator of ``seed``.

    Args:
        seed: an int >= 0 (a run's seed), a SeedSequence or a Generator.

    Returns:
        theta in [0, 1).
    """
    from privcal import _rng

    if isinstance(seed, (int, np.integer)) and not isinstance(seed, bool) and seed >= 0:
        seed = [int(seed), 7]
    return float(_rng.as_generator(seed, "seed").uniform(0.0, 1.0))


def expected_reward(state: ArrayLike) -> np.ndarray:
    """g(s) = E_theta max(0, 0.5 - |s - theta|) for theta ~ U[0, 1], in closed form 0.25 - (s - 0.5)^2 / 2.

    The area under the triangle of height and half-width 0.5 centred at s is 1/4; the part of it outside
    [0, 1] is a triangle of legs |s - 0.5| each, area (s - 0.5)^2 / 2 (s in [0, 1]).

    Args:
        state: position(s) s in [0, 1].

    Returns:
        g(s) elementwise, in [0.125, 0.25].
    """
    s = np.asarray(state, dtype=float)
    return 0.25 - 0.5 * (s - 0.5) ** 2


def episode_returns(policy: Any, peak: float = 0.5, *, episodes: int = 2000, episode_steps: int = EPISODE_STEPS,
                    seed: Any = 0) -> np.ndarray:
    """Returns of ``episodes`` simulated episodes of a deterministic policy for the reward peaked at ``peak``.

    The same dynamics as :class:`IntervalEnv` (s_0 ~ U[0, 1], moves U[0, 0.25] clipped to [0, 1], reward
    max(0, 0.5 - |s' - peak|) at the state after the move), all episodes at once. The policy is called
    with the states of all episodes at each step, so a callable that knows which episode is which (e.g. a
    vector of thresholds, one per episode) evaluates several policies in one call.

    Args:
        policy: a callable mapping a 1-D array of ``episodes`` states in [0, 1] to as many actions in
            {0, 1} (1 = right), e.g. a released greedy policy.
        peak: the reward's peak theta, in [0, 1]; default 0.5 (App. E.1).
        episodes: simulated episodes, an int >= 1; default 2000.
        episode_steps: steps per episode, an int >= 1; default 50 (App. E.1).
        seed: seed of the simulation (``privcal._rng``); default 0.

    Returns:
        the ``episodes`` returns, each in [0, 0.5 episode_steps].

    Raises:
        ValueError: an argument is outside its range, or the policy returns something other than one
            action in {0, 1} per state.
    """
    from privcal import _rng

    if not callable(policy):
        raise ValueError(f"policy must be a callable of the states, got {policy!r}")
    theta = _peak(peak)
    n = V.positive_int("episodes", episodes)
    steps = V.positive_int("episode_steps", episode_steps)
    return _simulate_policy(policy, lambda s: _reward(s, theta), n, steps, _rng.as_generator(seed, "seed"))


def policy_return(policy: Any, peak: float = 0.5, *, episodes: int = 2000, episode_steps: int = EPISODE_STEPS,
                  seed: Any = 0) -> tuple[float, float]:
    """Expected return per episode of a deterministic policy for the reward peaked at ``peak``, by simulation.

    The mean of :func:`episode_returns` and its standard error.

    Args:
        policy: a callable mapping a 1-D array of states in [0, 1] to an array of actions in {0, 1} (1 =
            right), e.g. a released greedy policy.
        peak: the reward's peak theta, in [0, 1]; default 0.5 (App. E.1).
        episodes: simulated episodes, an int >= 2; default 2000 (standard error about 0.07 for a
            returns' standard deviation of about 3).
        episode_steps: steps per episode, an int >= 1; default 50 (App. E.1).
        seed: seed of the simulation (``privcal._rng``); default 0.

    Returns:
        (mean return per episode, standard error of the mean).

    Raises:
        ValueError: an argument is outside its range, or the policy returns something other than 0/1
            per state.
    """
    if V.positive_int("episodes", episodes) < 2:
        raise ValueError(f"episodes must be an integer >= 2 (a standard error needs two), got {episodes!r}")
    total = episode_returns(policy, peak, episodes=episodes, episode_steps=episode_steps, seed=seed)
    return float(total.mean()), float(total.std(ddof=1) / np.sqrt(total.size))


def policy_return_unchecked(policy: Any, peak: float, *, episodes: int, seed: Any = 0,
                            episode_steps: int = EPISODE_STEPS) -> tuple[float, float]:
    """:func:`policy_return` without validating its numbers, for callers that validated them or pass constants
    (``privcal train dpq``, whose own ``--episodes`` and ``--peak`` are other flags): the same simulation.

    Args:
        policy: a callable of the states (its actions are still checked at every step).
        peak: theta in [0, 1] (not checked).
        episodes: simulated episodes, an int >= 2 (not checked).
        seed: seed of the simulation; default 0.
        episode_steps: steps per episode, an int >= 1 (not checked); default 50.

    Returns:
        (mean return per episode, standard error of the mean).
    """
    from privcal import _rng

    theta = float(peak)
    total = _simulate_policy(policy, lambda s: _reward(s, theta), int(episodes), int(episode_steps),
                             _rng.as_generator(seed, "seed"))
    return float(total.mean()), float(total.std(ddof=1) / np.sqrt(total.size))


def middle_policy(states: ArrayLike) -> np.ndarray:
    """The move-to-middle policy: right (1) below 0.5, left (0) from 0.5 on; data-independent.

    Args:
        states: positions in [0, 1].

    Returns:
        the actions, as ints.
    """
    return (np.asarray(states, dtype=float) < 0.5).astype(np.intp)


def trivial_return(*, episodes: int = 20000, episode_steps: int = EPISODE_STEPS, seed: Any = 0) -> tuple[float, float]:
    """Expected return of the best data-independent policy on the random-peak variant (theta ~ U[0, 1]).

    A policy that does not see the rewards faces the MDP with the expected reward :func:`expected_reward`
    (theta is independent of the states it sees), whose optimum is move-to-middle (g is symmetric and
    peaked at 0.5; checked by dynamic programming in tests/test_rl_learners.py). This simulates that
    policy under g, exactly in theta (g is the closed-form average) and by simulation in the dynamics.

    Args:
        episodes: simulated episodes, an int >= 2; default 20000 (standard error about 0.01).
        episode_steps: steps per episode, an int >= 1; default 50.
        seed: seed of the simulation; default 0.

    Returns:
        (mean return per episode, standard error of the mean).

    Raises:
        ValueError: an argument is outside its range.
    """
    from privcal import _rng

    n = V.positive_int("episodes", episodes)
    if n < 2:
        raise ValueError(f"episodes must be an integer >= 2 (a standard error needs two), got {episodes!r}")
    steps = V.positive_int("episode_steps", episode_steps)
    total = _simulate_policy(middle_policy, expected_reward, n, steps, _rng.as_generator(seed, "seed"))
    return float(total.mean()), float(total.std(ddof=1) / np.sqrt(n))


def trivial_return_unchecked(*, episodes: int = 20000, episode_steps: int = EPISODE_STEPS,
                             seed: Any = 0) -> tuple[float, float]:
    """:func:`trivial_return` without validation (its defaults, or numbers the caller checked): the same simulation.

    Args:
        episodes: simulated episodes, an int >= 2 (not checked); default 20000.
        episode_steps: steps per episode, an int >= 1 (not checked); default 50.
        seed: seed of the simulation; default 0.

    Returns:
        (mean return per episode, standard error of the mean).
    """
    from privcal import _rng

    total = _simulate_policy(middle_policy, expected_reward, int(episodes), int(episode_steps),
                             _rng.as_generator(seed, "seed"))
    return float(total.mean()), float(total.std(ddof=1) / np.sqrt(total.size))


def _simulate_policy(policy, reward_fn, n, steps, rng) -> np.ndarray:
    """Returns of ``n`` episodes of a deterministic policy (a function of the states) under ``reward_fn``."""
    s = rng.uniform(0.0, 1.0, n)
    total = np.zeros(n)
    for _ in range(steps):
        a = np.asarray(policy(s)).reshape(-1)
        if a.shape != (n,) or not np.all((a == 0) | (a == 1)):
            raise ValueError("policy must return one action in {0, 1} per state")
        move = MAX_STEP * rng.random(n)
        s = np.clip(np.where(a == 1, s + move, s - move), 0.0, 1.0)
        total += reward_fn(s)
    return total


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
    steps = V.positive_int("episode_steps", episode_steps)
    return reference_return_unchecked(policy, episodes=n, episode_steps=steps, seed=seed)


def reference_return_unchecked(policy: str = "random", *, episodes: int = 20000, episode_steps: int = EPISODE_STEPS,
                               seed: Any = 0) -> tuple[float, float]:
    """:func:`reference_return` without validation, for callers that validated the arguments or pass its
    defaults (``privcal train dpq``, whose own ``--episodes`` is another count): the same simulation.

    Args:
        policy: "random" or "middle" (not checked); default "random".
        episodes: number of simulated episodes, an int >= 2 (not checked); default 20000.
        episode_steps: steps per episode, an int >= 1 (not checked); default 50 (App. E.1).
        seed: seed of the simulation (``privcal._rng``); default 0.

    Returns:
        (mean return, standard error of the mean).
    """
    from privcal import _rng

    total = unchecked_simulate(policy, episodes, episode_steps, _rng.as_generator(seed, "seed"))
    return float(total.mean()), float(total.std(ddof=1) / np.sqrt(episodes))


def unchecked_simulate(policy: str, n: int, steps: int, rng: np.random.Generator) -> np.ndarray:
    """Returns of ``n`` episodes of ``steps`` steps under "random" or "middle", all at once (the kernel of
    :func:`reference_return`: arguments trusted; the reward at App. E.1's peak 0.5)."""
    s = rng.uniform(0.0, 1.0, n)
    total = np.zeros(n)
    for _ in range(steps):
        right = rng.random(n) < 0.5 if policy == "random" else s < 0.5
        move = MAX_STEP * rng.random(n)
        s = np.clip(np.where(right, s + move, s - move), 0.0, 1.0)
        total += _reward(s, 0.5)
    return total


class IntervalEnv(_Base):
    """App. E.1 of Wang & Hegde 2019: move left/right on [0, 1] by U[0, 0.25], reward 0.5 - |s' - 0.5|.

    See the module docstring for the equations. ``step`` after the end of an episode raises
    ``RuntimeError`` until ``reset``.

    Args:
        max_episode_steps: steps after which every episode is truncated, an int >= 1; default 50
            (App. E.1).
        render_mode: must be None (no rendering); Gymnasium's constructor argument.
        peak: the reward's peak theta, in [0, 1]: reward max(0, 0.5 - |s' - theta|); default 0.5 (App.
            E.1's reward).

    Raises:
        ImportError: gymnasium is not installed (the ``rl`` extra).
        ValueError: an argument is outside its range.
    """

    metadata = {"render_modes": []}

    def __init__(self, max_episode_steps: int = EPISODE_STEPS, render_mode: Optional[str] = None,
                 peak: float = 0.5):
        if _gym is None:
            raise ImportError("IntervalEnv needs gymnasium: pip install 'privcal[rl]'")
        if render_mode is not None:
            raise ValueError(f"render_mode must be None (no rendering), got {render_mode!r}")
        self._setup(V.positive_int("max_episode_steps", max_episode_steps), _peak(peak))

    @classmethod
    def unchecked(cls, max_episode_steps: int = EPISODE_STEPS, peak: float = 0.5) -> "IntervalEnv":
        """The environment of ``IntervalEnv(max_episode_steps, peak=peak)``, built without validating the
        arguments, for callers that validated them or pass the defaults (the DP-Q runs of
        ``privcal.rl.dpq.agent``, one fresh environment each).

        Args:
            max_episode_steps: steps after which every episode is truncated, an int >= 1 (not checked);
                default 50.
            peak: the reward's peak theta, a float in [0, 1] (not checked); default 0.5.

        Returns:
            The environment.

        Raises:
            ImportError: gymnasium is not installed (the ``rl`` extra).
        """
        if _gym is None:
            raise ImportError("IntervalEnv needs gymnasium: pip install 'privcal[rl]'")
        env = cls.__new__(cls)
        env._setup(max_episode_steps, peak)
        return env

    def _setup(self, max_episode_steps: int, peak: float) -> None:
        self.max_episode_steps = max_episode_steps
        self.peak = peak
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
        return np.array([s]), max(0.0, 0.5 - abs(s - self.peak)), False, truncated, {}


class RandomPeakIntervalEnv(IntervalEnv):
    """The random-peak variant: :class:`IntervalEnv` with theta = :func:`draw_peak` (``peak_seed``).

    Args:
        peak_seed: the seed theta is drawn from (an int >= 0, e.g. the run's seed); default 0.
        max_episode_steps: as :class:`IntervalEnv`; default 50.
        render_mode: must be None.

    Raises:
        ImportError: gymnasium is not installed (the ``rl`` extra).
        ValueError: an argument is outside its range.
    """

    def __init__(self, peak_seed: Any = 0, max_episode_steps: int = EPISODE_STEPS,
                 render_mode: Optional[str] = None):
        super().__init__(max_episode_steps, render_mode, peak=draw_peak(peak_seed))


class ShiftedRewardIntervalEnv:
    """The interval task with reward r + shift(s', a): a neighbouring reward function when |shift| <= 1
    (Wang & Hegde 2019's unit: two reward functions at sup distance at most 1).

    Args:
        shift: a function (next state s', action a) -> the reward's shift, a float.
    """

    def __init__(self, shift: Callable[[float, int], float]):
        self.env, self.shift = IntervalEnv(), shift
        self.action_space, self.observation_space = self.env.action_space, self.env.observation_space

    def reset(self, **kw: Any) -> tuple:
        """As :meth:`IntervalEnv.reset`."""
        return self.env.reset(**kw)

    def step(self, action: int) -> tuple:
        """As :meth:`IntervalEnv.step`, with the reward shifted by ``shift(s', action)``.

        Args:
            action: the action, an int in {0, 1}.

        Returns:
            (observation, shifted reward, terminated, truncated, info).
        """
        obs, r, term, trunc, info = self.env.step(action)
        return obs, r + self.shift(float(obs[0]), int(action)), term, trunc, info


def register() -> bool:
    """Register :data:`ENV_ID` and :data:`PEAK_ENV_ID` with gymnasium (idempotent); False when gymnasium is
    not installed."""
    if _gym is None:
        return False
    if ENV_ID not in _gym.registry:
        _gym.register(id=ENV_ID, entry_point="privcal.rl.envs:IntervalEnv")
    if PEAK_ENV_ID not in _gym.registry:
        _gym.register(id=PEAK_ENV_ID, entry_point="privcal.rl.envs:RandomPeakIntervalEnv")
    return True


register()


def run_inputs(evaluation_episodes: int, seed: int, peak: Optional[float]) -> tuple[int, int, float]:
    """(evaluation episodes, seed, reward peak theta) of a learner's run, each checked and named: episodes an
    int >= 2, seed a non-negative int, peak in [0, 1] or None (then drawn from the seed, :func:`draw_peak`).

    Args:
        evaluation_episodes: simulated episodes of the released policy, an int >= 2.
        seed: the run's seed, an int >= 0.
        peak: the reward's peak theta in [0, 1], or None.
    """
    n_eval = V.positive_int("evaluation_episodes", evaluation_episodes)
    if n_eval < 2:
        raise ValueError(f"evaluation_episodes must be an integer >= 2, got {evaluation_episodes!r}")
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
    theta = draw_peak(int(seed)) if peak is None else V.in_closed("peak", peak, 0.0, 1.0)
    return n_eval, int(seed), theta
