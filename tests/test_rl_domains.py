"""Tests for privcal.rl.gpope.domains: chain, Mountain Car (vs Gymnasium), HIV simulator, features, data validation.

Monte Carlo checks use fixed seeds and bounds of >= 5 standard errors (stated per test).
"""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from privcal.rl.gpope.domains.chain import ChainEnv, chain_features, chain_values, sample_chain
from privcal.rl.gpope.domains.data import Dataset, Trajectory, discounted_returns, importance_ratios
from privcal.rl.gpope.domains.features import FourierBasis, GridCells, OneHot, fourier_coefficients
from privcal.rl.gpope.domains.hiv import (HIVBatch, HIVEnv, X0_HEALTHY, X0_UNHEALTHY,
                                    hiv_derivatives, hiv_features, hiv_reward)
from privcal.rl.gpope.domains.policies import EpsilonGreedy, Greedy, LinearQ, Softmax, Uniform, collect
from privcal.rl.gpope.lstd import lstd


# ------------------------------------------------------------------------------------------ chain

def test_chain_values_satisfy_bellman_equation():
    # closed form: V(s) = gamma [p V(s) + (1 - p) V(s+1)], V(absorbing) = 0 and reward 1 on entry
    v = chain_values(40, 0.5, 0.99)
    nxt = np.append(v[1:], 0.0)
    rew = np.zeros(39)
    rew[-1] = 1.0
    expect = 0.99 * (0.5 * v + 0.5 * (rew + nxt))
    np.testing.assert_allclose(v, expect, rtol=1e-12)


def test_sample_chain_mean_length():
    # E[tau] = 2 E[39 - S0] = 40 (S0 uniform on 0..38, Geometric(1/2) steps per state);
    # Var[tau] = 2 E[39 - S0] + 4 Var[S0] = 40 + 4 (39^2 - 1)/12 ~ 546.7: se over 4000 = 0.37; bound 1.9 = 5 se
    d = sample_chain(4000, np.random.default_rng(1))
    assert abs(d.lengths.mean() - 40.0) < 1.9
    assert d.terminated.sum() == d.m                      # every trajectory ends in the absorbing state
    assert np.all(d.rewards == d.terminated)              # reward 1 exactly on entering it
    assert np.all(d.rho == 1.0)


def test_chain_env_matches_law():
    # same expectation (40) with the Gymnasium-style env; se over 1000 episodes = 0.74, bound 3.7 = 5 se
    env = ChainEnv()
    lengths = []
    env.reset(seed=3)
    for _ in range(1000):
        env.reset()
        t, done = 0, False
        while not done:
            _, r, done, trunc, _ = env.step(0)
            t += 1
            assert r == float(done) and not trunc
        lengths.append(t)
    assert abs(np.mean(lengths) - 40.0) < 3.7


def test_chain_lstd_recovers_true_values():
    # tabular LSTD = certainty equivalence; with 5000 trajectories each transition probability is
    # estimated from >= 5000 / 39 * 2 samples. Measured max |V error| (seed 5): 0.0099 at 5000 trajectories,
    # 0.0097 at 20000 and 80000 (0.0097-0.0103 over seeds 0-7 at both sizes): it sits near the terminal
    # state and does not shrink with m, so 4x the trajectories (4x the time) tightens nothing here (bound 0.03)
    d = sample_chain(5000, np.random.default_rng(5))
    assert np.max(np.abs(lstd(d) - chain_values())) < 0.03


def test_one_hot_absorbing_state_has_zero_features():
    f = chain_features(40)
    assert f.n_features == 39
    phi = f(np.array([0, 38, 39]))
    assert phi[0, 0] == 1 and phi[1, 38] == 1 and not phi[2].any()
    with pytest.raises(ValueError, match="states must be in"):
        f(np.array([40]))


# ------------------------------------------------------------------------------------------ features

def test_fourier_basis_counts_and_values():
    # Konidaris et al. 2011: (n+1)^d coupled terms, 1 + d n uncoupled; phi_c(x) = cos(pi c.x)
    assert fourier_coefficients(5, 2).shape == (36, 2)
    assert fourier_coefficients(2, 6, coupled=False).shape == (13, 6)
    fb = FourierBasis([0.0, 0.0], [1.0, 2.0], 1)
    phi = fb(np.array([[0.5, 0.0], [0.0, 2.0]]))
    # coefficient order (0,0), (0,1), (1,0), (1,1)
    np.testing.assert_allclose(phi[0], [1.0, 1.0, 0.0, 0.0], atol=1e-15)
    np.testing.assert_allclose(phi[1], [1.0, -1.0, 1.0, -1.0], atol=1e-15)
    np.testing.assert_allclose(fb.norms, [1.0, 1.0, 1.0, math.sqrt(2)])


@given(st.integers(1, 6), st.integers(1, 6))
def test_grid_cells_index_of_centers(b1, b2):
    g = GridCells([-1.0, 0.0], [1.0, 3.0], (b1, b2))
    np.testing.assert_array_equal(g.index(g.centers()), np.arange(b1 * b2))


# ------------------------------------------------------------------------------------------ data validation

def _traj(tau, reward=0.0, pb=0.5, n_obs=3):
    return Trajectory(observations=np.zeros(tau, dtype=int), actions=np.zeros(tau, dtype=int),
                      rewards=np.full(tau, reward), next_observations=np.ones(tau, dtype=int),
                      terminated=np.zeros(tau, dtype=bool), behaviour_probs=np.full(tau, pb),
                      target_probs=np.full(tau, 0.5))


def test_dataset_rejects_empty_trajectory():
    with pytest.raises(ValueError, match=r"trajectory 1: field 'rewards' has length 0"):
        Dataset.from_trajectories([_traj(2), _traj(0)], features=OneHot(3), gamma=0.9)


def test_dataset_rejects_zero_behaviour_probability():
    with pytest.raises(ValueError, match=r"trajectory 2 \(step 0\): field 'behaviour_probs' is 0"):
        Dataset.from_trajectories([_traj(2), _traj(1), _traj(3, pb=0.0)], features=OneHot(3),
                                  gamma=0.9)


def test_dataset_rejects_non_finite_rewards():
    bad = _traj(3)
    bad.rewards[1] = np.nan
    with pytest.raises(ValueError, match=r"trajectory 1 \(step 1\): field 'rewards' is not finite"):
        Dataset.from_trajectories([_traj(2), bad], features=OneHot(3), gamma=0.9)
    inf = _traj(2, reward=np.inf)
    with pytest.raises(ValueError, match=r"trajectory 0 .*'rewards' is not finite"):
        Dataset.from_trajectories([inf], features=OneHot(3), gamma=0.9)


class _WrongShape:
    """Feature map returning n_features + 1 columns for state 2 only (trajectory 1 below)."""

    n_features = 3

    def __call__(self, s):
        s = np.asarray(s)
        extra = 1 if np.any(s == 2) else 0
        return np.ones((s.size, 3 + extra))


def test_dataset_rejects_features_of_wrong_shape():
    t0 = _traj(2)
    t1 = Trajectory(np.array([2, 2]), np.zeros(2, int), np.zeros(2), np.array([1, 1]),
                    np.zeros(2, bool), np.full(2, 0.5), np.full(2, 0.5))
    with pytest.raises(ValueError, match=r"trajectory 1: field 'features' of observations has shape "
                                         r"\(2, 4\), expected \(2, 3\)"):
        Dataset.from_trajectories([t0, t1], features=_WrongShape(), gamma=0.9)


def test_dataset_rejects_mismatched_field_length():
    t = _traj(3)
    t = Trajectory(t.observations, t.actions, t.rewards, t.next_observations, t.terminated,
                   t.behaviour_probs[:2], t.target_probs)
    with pytest.raises(ValueError, match=r"trajectory 0: field 'behaviour_probs' has length 2"):
        Dataset.from_trajectories([t], features=OneHot(3), gamma=0.9)


@given(st.lists(st.tuples(st.floats(0, 1), st.floats(1e-3, 1)), min_size=1, max_size=20))
def test_importance_ratios_property(pairs):
    t = np.array([p[0] for p in pairs])
    b = np.array([p[1] for p in pairs])
    np.testing.assert_allclose(importance_ratios(t, b) * b, t, rtol=1e-12, atol=1e-15)


def test_discounted_returns_closed_form():
    # G_0 = 1 + 0.5 * 2 + 0.25 * 4 = 3
    np.testing.assert_allclose(discounted_returns([1.0, 2.0, 4.0], 0.5), [3.0, 4.0, 4.0])


# ------------------------------------------------------------------------------------------ Mountain Car

def test_mountain_car_batch_equals_gymnasium_step_by_step():
    gym = pytest.importorskip("gymnasium")
    from privcal.rl.gpope.domains.mountain_car import MountainCarBatch
    batch = MountainCarBatch.from_gymnasium()
    rng = np.random.default_rng(11)
    env = gym.make("MountainCar-v0")
    for ep in range(3):
        env.reset(seed=ep)
        state = batch.reset(1, rng)
        env.unwrapped.state = state[0].copy()
        for t in range(200):
            a = int(rng.integers(3)) if t % 7 else 2
            obs, r, term, trunc, _ = env.step(a)
            state, rew, bterm = batch.step(state, np.array([a]))
            np.testing.assert_array_equal(batch.observe(state)[0], obs.astype(float))
            assert rew[0] == r and bool(bterm[0]) == term
            if term or trunc:
                assert trunc == (t + 1 == batch.horizon) or term
                break
    env.close()


def test_mountain_car_behaviour_is_seeded_and_decent():
    pytest.importorskip("gymnasium")
    from privcal.rl.gpope.domains.mountain_car import MountainCarBatch, learn_behaviour, sample_mountain_car
    env = MountainCarBatch.from_gymnasium()
    p1 = learn_behaviour(env, episodes=16, seed=4)
    p2 = learn_behaviour(env, episodes=16, seed=4)
    np.testing.assert_array_equal(p1.q.weights, p2.q.weights)
    d = sample_mountain_car(20, 1, behaviour=p1, env=env)
    assert d.n_features == 36 and np.all(d.rho == 1.0)
    off = sample_mountain_car(20, 1, behaviour=p1, env=env, off_policy=True)
    # uniform target / epsilon-greedy behaviour (eps = 0.1): rho in {(1/3)/(0.9+0.1/3), (1/3)/(0.1/3)}
    np.testing.assert_allclose(np.unique(np.round(off.rho, 12)), [1 / 3 / (0.9 + 0.1 / 3), 10.0])


# ------------------------------------------------------------------------------------------ HIV

@pytest.mark.parametrize("x", [X0_UNHEALTHY, X0_HEALTHY])
def test_hiv_published_equilibria_are_stationary(x):
    # Adams et al. 2004 / Ernst et al. 2006 steady states, published rounded to integers: |dx/dt| / x
    # < 0.1 per day for every component (rounding the healthy T2* to 6 alone costs 6.4e-2), < 1e-3 for E,
    # and < 1e-5 for T1 (six significant digits; a 10% error in lambda1, d1 or k1 would give >= 5e-3)
    rel = np.abs(hiv_derivatives(x, 0.0, 0.0)) / x
    assert np.all(rel < 0.1)
    assert rel[5] < 1e-3
    assert rel[0] < 1e-5


def test_hiv_reward_formula():
    # Ernst et al. 2006, Eq. (20): -(0.1 V + 20000 eps1^2 + 2000 eps2^2 - 1000 E)
    x = np.array([1.0, 1.0, 1.0, 1.0, 1000.0, 10.0])
    assert hiv_reward(x, 0.7, 0.3) == pytest.approx(-(100.0 + 20000 * 0.49 + 2000 * 0.09 - 10000.0))


def test_hiv_env_matches_batch_and_drugs_lower_virus():
    env = HIVEnv(horizon=3)
    x, _ = env.reset(seed=0)
    batch = HIVBatch(horizon=3)
    xb = batch.reset(2, np.random.default_rng(0))
    for a in (3, 3, 0):
        x, r, term, trunc, _ = env.step(a)
        xb, rb, _ = batch.step(xb, np.array([a, 0]))
        np.testing.assert_allclose(x, xb[0], rtol=1e-5)
    assert trunc and not term
    # two 5-day periods of both drugs then none: virus below the untreated patient's
    assert xb[0, 4] < xb[1, 4]


def test_hiv_off_policy_ratios():
    env = HIVBatch(horizon=3)
    q = LinearQ(np.random.default_rng(0).standard_normal((4, 13)), hiv_features())
    d = collect(env, 5, Softmax(q, 1.0), rng=2, features=q.features, gamma=0.98, target=Greedy(q))
    greedy = np.argmax(q(d.observations), axis=1)
    probs = Softmax(q, 1.0).probs(d.observations)[np.arange(d.n_transitions), d.actions]
    np.testing.assert_allclose(d.rho, (d.actions == greedy) / probs)
    assert d.lengths.tolist() == [3] * 5 and not d.terminated.any()


def test_uniform_and_epsilon_greedy_probabilities_sum_to_one():
    q = LinearQ(np.eye(3), OneHot(3))
    s = np.array([0, 1, 2])
    for pol in (Uniform(3), EpsilonGreedy(q, 0.3), Softmax(q, 0.5), Greedy(q)):
        np.testing.assert_allclose(pol.probs(s).sum(axis=1), 1.0)
    np.testing.assert_allclose(EpsilonGreedy(q, 0.3).probs(s)[0], [0.8, 0.1, 0.1])


def test_mountain_car_needs_gymnasium_with_a_clear_error(monkeypatch):
    import sys

    from privcal.rl.gpope.domains.mountain_car import MountainCarBatch
    monkeypatch.setitem(sys.modules, "gymnasium", None)
    with pytest.raises(ImportError, match="install gymnasium"):
        MountainCarBatch.from_gymnasium()


def _same_dataset(a, b):
    for field in ("observations", "next_observations", "actions", "rewards", "terminated", "rho", "offsets"):
        np.testing.assert_array_equal(getattr(a, field), getattr(b, field))


def test_unchecked_samplers_are_the_checked_ones():
    # `privcal train gpope` validates m once and calls these kernels: the same episodes from the
    # same seed (independent: the checked samplers themselves)
    from privcal.rl.gpope.domains.hiv import sample_hiv, sample_hiv_unchecked
    from privcal.rl.gpope.domains.policies import collect_unchecked

    env = HIVBatch(horizon=3)
    q = LinearQ(np.random.default_rng(0).standard_normal((4, 13)), hiv_features())
    _same_dataset(collect(env, 5, Softmax(q, 1.0), rng=2, features=q.features, gamma=0.98, target=Greedy(q)),
                  collect_unchecked(env, 5, Softmax(q, 1.0), rng=2, features=q.features, gamma=0.98,
                                    target=Greedy(q)))
    _same_dataset(sample_hiv(4, 3, target=Greedy(q), behaviour=Softmax(q, 1.0), env=env),
                  sample_hiv_unchecked(4, 3, target=Greedy(q), behaviour=Softmax(q, 1.0), env=env))


def test_unchecked_mountain_car_sampler_is_the_checked_one():
    pytest.importorskip("gymnasium")
    from privcal.rl.gpope.domains.mountain_car import (MountainCarBatch, mountain_car_features,
                                                       sample_mountain_car, sample_mountain_car_unchecked)
    env = MountainCarBatch.from_gymnasium()
    features = mountain_car_features(env)
    beh = EpsilonGreedy(LinearQ(np.random.default_rng(1).standard_normal((3, features.n_features)), features), 0.1)
    for off in (False, True):
        _same_dataset(sample_mountain_car(3, 5, behaviour=beh, env=env, off_policy=off),
                      sample_mountain_car_unchecked(3, 5, behaviour=beh, env=env, off_policy=off))


def test_settings_objects_are_their_keywords():
    # a settings object and the same values as keywords run the same learning and sampling (independent:
    # the keyword calls above pin the keyword path); a keyword outside the settings is a TypeError
    from privcal.rl.gpope.domains.hiv import HIVLearning, learn_hiv_policies
    from privcal.rl.gpope.domains.policies import CollectSettings, collect_unchecked

    env = HIVBatch(horizon=3)
    t1, b1 = learn_hiv_policies(env, HIVLearning(episodes=2, seed=5, batch=2))
    t2, b2 = learn_hiv_policies(env, episodes=2, seed=5, batch=2)
    np.testing.assert_array_equal(t1.q.weights, t2.q.weights)
    assert b1.temperature == b2.temperature == 0.5  # HIVLearning's default temperature
    q = LinearQ(np.random.default_rng(0).standard_normal((4, 13)), hiv_features())
    rec = CollectSettings(features=q.features, gamma=0.98, target=Greedy(q))
    _same_dataset(collect(env, 5, Softmax(q, 1.0), rec, rng=2),
                  collect_unchecked(env, 5, Softmax(q, 1.0), rng=2, features=q.features, gamma=0.98,
                                    target=Greedy(q)))
    with pytest.raises(TypeError, match="unexpected keyword argument 'gama'"):
        collect(env, 5, Softmax(q, 1.0), rec, rng=2, gama=0.9)
    with pytest.raises(TypeError, match="HIVLearning"):
        learn_hiv_policies(env, {"episodes": 2})
