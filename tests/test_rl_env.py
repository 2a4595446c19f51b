"""The App. E.1 environment (privcal.rl.envs): API, registration, dynamics, seeding, import guard."""

import subprocess
import sys
import warnings

import numpy as np
import pytest

gym = pytest.importorskip("gymnasium")

from privcal.rl import envs  # noqa: E402
from privcal.rl.envs import ENV_ID, EPISODE_STEPS, MAX_STEP, IntervalEnv  # noqa: E402


def test_check_env_passes_without_warnings():
    from gymnasium.utils.env_checker import check_env

    env = gym.make(ENV_ID)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # any complaint of the checker fails the test
        check_env(env.unwrapped)


def test_registered_under_versioned_id():
    assert envs.register() is True  # idempotent
    env = gym.make(ENV_ID)
    assert env.spec.id == "privcal/Interval-v0"
    assert isinstance(env.unwrapped, IntervalEnv)
    obs, info = env.reset(seed=3)
    assert obs.shape == (1,) and 0.0 <= obs[0] <= 1.0 and info == {}
    # the "module:id" form imports the registering module itself
    assert gym.make("privcal.rl.envs:privcal/Interval-v0").spec.id == ENV_ID


def _rollout(env, seed, actions):
    obs, _ = env.reset(seed=seed)
    states, rewards = [obs[0]], []
    for a in actions:
        obs, r, term, trunc, _ = env.step(a)
        states.append(obs[0])
        rewards.append(r)
        if term or trunc:
            break
    return np.array(states), np.array(rewards)


def test_dynamics_reward_and_clipping():
    env = IntervalEnv()
    rng = np.random.default_rng(0)
    for seed in range(20):
        acts = rng.integers(0, 2, size=EPISODE_STEPS)
        s, r = _rollout(env, seed, acts)
        step = np.diff(s)
        # action 1 moves right by at most 0.25 (clipped at 1), action 0 left (clipped at 0)
        right, left = acts == 1, acts == 0
        assert np.all(step[right] >= 0) and np.all(step[right] <= MAX_STEP + 1e-15)
        assert np.all(step[left] <= 0) and np.all(step[left] >= -MAX_STEP - 1e-15)
        assert np.all((s >= 0) & (s <= 1))
        # reward of App. E.1 at the state reached
        np.testing.assert_allclose(r, 0.5 - np.abs(s[1:] - 0.5), rtol=0, atol=0)
        np.testing.assert_allclose(envs.reward(s[1:]), r)


def test_clipping_reaches_the_boundary():
    env = IntervalEnv()
    s, _ = _rollout(env, 1, [1] * EPISODE_STEPS)  # 50 right moves of mean 0.125 from s0 <= 1
    assert s[-1] == 1.0
    s, _ = _rollout(env, 1, [0] * EPISODE_STEPS)
    assert s[-1] == 0.0


def test_episode_is_truncated_after_50_steps_never_terminated():
    env = IntervalEnv()
    env.reset(seed=0)
    for t in range(EPISODE_STEPS):
        _, _, term, trunc, _ = env.step(t % 2)
        assert term is False
        assert trunc is (t == EPISODE_STEPS - 1)
    with pytest.raises(RuntimeError, match="reset"):
        env.step(0)


def test_bad_input():
    env = IntervalEnv()
    env.reset(seed=0)
    with pytest.raises(ValueError, match="action must be 0 or 1"):
        env.step(2)
    with pytest.raises(ValueError, match="max_episode_steps"):
        IntervalEnv(max_episode_steps=0)
    with pytest.raises(ValueError, match="render_mode"):
        IntervalEnv(render_mode="human")


def test_same_seed_same_trajectory_other_seed_differs():
    acts = [1, 0, 1, 1, 0] * 10
    a = _rollout(IntervalEnv(), 7, acts)
    b = _rollout(IntervalEnv(), 7, acts)
    c = _rollout(IntervalEnv(), 8, acts)
    np.testing.assert_array_equal(a[0], b[0])
    np.testing.assert_array_equal(a[1], b[1])
    assert not np.array_equal(a[0], c[0])


def test_start_and_moves_are_uniform():
    """Monte Carlo, fixed seed: s0 ~ U[0, 1] and unclipped moves ~ U[0, 0.25] (KS tests, level 1e-3)."""
    from scipy.stats import kstest

    env = IntervalEnv()
    env.reset(seed=123)
    starts, moves = [], []
    for _ in range(1500):
        obs, _ = env.reset()
        s0 = obs[0]
        starts.append(s0)
        obs, *_ = env.step(1)
        if s0 <= 1.0 - MAX_STEP:  # cannot be clipped (conditioning on s0 only: no selection bias)
            moves.append(obs[0] - s0)
    assert kstest(starts, "uniform").pvalue > 1e-3
    assert kstest(np.array(moves) / MAX_STEP, "uniform").pvalue > 1e-3
    # the KS tests can fail: e.g. moves of U[0, 0.2] would be rejected at this sample size
    assert kstest(np.array(moves) / 0.2, "uniform").pvalue < 1e-3


def test_module_imports_without_gymnasium():
    code = (
        "import sys; sys.modules['gymnasium'] = None\n"
        "import privcal.rl.envs as e\n"
        "assert e.register() is False\n"
        "try:\n"
        "    e.IntervalEnv()\n"
        "except ImportError as exc:\n"
        "    assert 'privcal[rl]' in str(exc)\n"
        "else:\n"
        "    raise SystemExit('no ImportError')\n"
    )
    # timeout: a hang cap (minutes), not a performance deadline (the suite must pass on a loaded machine)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr


def test_unchecked_env_and_reference_are_the_checked_ones():
    # the trusted builders of the DP-Q runs and `privcal train dpq`'s references: the same
    # environment and the same simulated returns (independent: the checked functions, same seeds)
    env, trusted = IntervalEnv(max_episode_steps=7, peak=0.3), IntervalEnv.unchecked(7, 0.3)
    assert (trusted.max_episode_steps, trusted.peak, trusted.action_space.n) == (7, 0.3, 2)
    (o1, _), (o2, _) = env.reset(seed=4), trusted.reset(seed=4)
    np.testing.assert_array_equal(o1, o2)
    for a in (1, 0, 1, 1, 0, 0, 1):
        (s1, r1, te1, tr1, _), (s2, r2, te2, tr2, _) = env.step(a), trusted.step(a)
        np.testing.assert_array_equal(s1, s2)
        assert (r1, te1, tr1) == (r2, te2, tr2)
    assert tr2  # truncated after max_episode_steps = 7
    assert envs.reference_return_unchecked("middle", episodes=300, episode_steps=9, seed=5) == \
        envs.reference_return("middle", episodes=300, episode_steps=9, seed=5)
