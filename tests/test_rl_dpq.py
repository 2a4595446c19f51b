"""Training layer of DP Q-learning: MLP (privcal.rl.mlp), Algorithm 1 and baselines
(privcal.rl.dpq.agent, privcal.rl.dpq.baselines), experiments (privcal.rl.dpq.experiments), CLI (privcal.cli.dpq)."""

import io
import json
import math
import re
import subprocess
import sys
from contextlib import redirect_stderr, redirect_stdout
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from privcal.errors import InfeasibleError
from privcal.rl.dpq import baselines
from privcal.rl.dpq import experiments as X
from privcal.rl.dpq.agent import Hyperparameters, train, train_dpq
from privcal.rl import mlp as mlp_module
from privcal.rl.mlp import LipschitzMLP

gym = pytest.importorskip("gymnasium")

SMALL = Hyperparameters(samples=640, batch_size=64, lr=1.0)  # 10 updates, 12 full episodes + 40 steps


# ---------------------------------------------------------------------------------------------------
# MLP


def _slopes(net, rng, pairs=400):
    """Empirical slopes |Q(x) - Q(y)|_2 / |x - y| over random pairs in [0, 1] (some very close)."""
    x = rng.uniform(0, 1, pairs)
    gap = np.where(rng.random(pairs) < 0.5, rng.uniform(-1, 1, pairs), rng.uniform(-1e-3, 1e-3, pairs))
    y = np.clip(x + gap, 0, 1)
    keep = np.abs(x - y) > 1e-9
    x, y = x[keep], y[keep]
    d = net(x[:, None]) - net(y[:, None])
    return np.linalg.norm(d, axis=1) / np.abs(x - y)


@pytest.mark.parametrize("activation", ["tanh", "relu"])
def test_backprop_matches_finite_differences(activation):
    rng = np.random.default_rng(0)
    net = LipschitzMLP((1, 8, 6, 2), lipschitz=4.0, activation=activation, seed=1)
    for b in net.biases:  # non-zero biases so relu units are not all at the same kink
        b[...] = rng.normal(size=b.shape)
    x = rng.uniform(size=(7, 1))
    go = rng.normal(size=(7, 2))
    _, inputs = net.forward(x)
    analytic = net.flatten(net.backward(inputs, go))
    p = net.get_params()
    numeric = np.empty_like(p)
    h = 1e-6
    for i in range(p.size):
        q = p.copy()
        q[i] += h
        net.set_params(q)
        up = float((net(x) * go).sum())
        q[i] -= 2 * h
        net.set_params(q)
        numeric[i] = (up - float((net(x) * go).sum())) / (2 * h)
    net.set_params(p)
    # central differences: error O(h^2) ~ 1e-12 plus rounding ~ 1e-10 relative
    np.testing.assert_allclose(analytic, numeric, rtol=1e-6, atol=1e-7)


def test_per_example_norms_and_clipping():
    rng = np.random.default_rng(2)
    net = LipschitzMLP((1, 16, 16, 2), lipschitz=4.0, seed=3)
    x = rng.uniform(size=(9, 1))
    go = rng.normal(scale=5.0, size=(9, 2))
    _, inputs = net.forward(x)
    singles = [net.flatten(net.backward([a[j:j + 1] for a in inputs], go[j:j + 1])) for j in range(9)]
    norms = net.per_example_grad_norms(inputs, go)
    np.testing.assert_allclose(norms, [np.linalg.norm(g) for g in singles], rtol=1e-12)
    clipped, norms2 = net.clipped_gradient_sum(inputs, go, clip=1.0)
    expected = sum(g * min(1.0, 1.0 / np.linalg.norm(g)) for g in singles)
    np.testing.assert_allclose(net.flatten(clipped), expected, rtol=1e-10, atol=1e-12)
    assert np.any(norms2 > 1.0)  # the clip was active for some examples (else the test is vacuous)


@settings(max_examples=25)
@given(seed=st.integers(0, 10_000), lipschitz=st.floats(0.05, 20.0), lr=st.floats(1e-3, 10.0),
       activation=st.sampled_from(["tanh", "relu"]))
def test_lipschitz_bound_holds_after_every_update(seed, lipschitz, lr, activation):
    rng = np.random.default_rng(seed)
    net = LipschitzMLP((1, 12, 12, 2), lipschitz=lipschitz, activation=activation, seed=rng)
    for _ in range(5):
        x = rng.uniform(size=(16, 1))
        _, inputs = net.forward(x)
        grads = net.backward(inputs, rng.normal(scale=10.0, size=(16, 2)))  # large steps: must project
        net.step(grads, lr)
        assert net.lipschitz_bound() <= lipschitz * (1 + 1e-12)
        assert _slopes(net, rng).max() <= lipschitz * (1 + 1e-9)


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 10_000), lipschitz=st.floats(0.1, 8.0), grid=st.integers(2, 200),
       activation=st.sampled_from(["tanh", "relu"]))
def test_sup_difference_bound_is_an_upper_bound(seed, lipschitz, grid, activation):
    # two unrelated networks: the certified bound from a coarse grid is never below the difference on a
    # dense grid (100,001 points) of [0, 1]
    a = LipschitzMLP((1, 8, 8, 2), lipschitz=lipschitz, activation=activation, seed=seed)
    b = LipschitzMLP((1, 8, 8, 2), lipschitz=lipschitz, activation=activation, seed=seed + 1)
    dense = np.linspace(0, 1, 100_001)[:, None]
    observed = np.abs(a(dense) - b(dense)).max()
    assert observed <= mlp_module.sup_difference_bound(a, b, grid)


def test_sup_difference_bound_of_a_bias_shift_is_the_shift():
    # networks with zero weights are constant in the state (0-Lipschitz): no slack, the bound is the shift
    a = LipschitzMLP((1, 4, 2), seed=0)
    for w in a.weights:
        w[...] = 0.0
    b = a.copy()
    b.biases[-1][...] = [0.25, -0.125]
    assert mlp_module.sup_difference_bound(a, b, 2) == pytest.approx(0.25, rel=1e-11)
    with pytest.raises(ValueError, match="grid_size must be an int >= 2"):
        mlp_module.sup_difference_bound(a, b, 1)


def test_projection_is_active_and_tight():
    net = LipschitzMLP((1, 8, 2), lipschitz=1.0, seed=0)
    for w in net.weights:
        w *= 10.0
    assert net.lipschitz_bound() > 1.0
    factor = net.project()
    assert factor < 1.0
    assert 1.0 - 1e-9 < net.lipschitz_bound() <= 1.0


def test_mlp_bad_input():
    with pytest.raises(ValueError, match="lipschitz must be in"):
        LipschitzMLP((1, 4, 2), lipschitz=0.0)
    with pytest.raises(ValueError, match="activation"):
        LipschitzMLP((1, 4, 2), activation="sigmoid")
    with pytest.raises(ValueError, match="sizes"):
        LipschitzMLP((1,))
    net = LipschitzMLP((1, 4, 2), seed=0)
    with pytest.raises(ValueError, match="lr must be in"):
        net.step(net.backward(*[net.forward(np.zeros((1, 1)))[1], np.ones((1, 2))]), 0.0)


# ---------------------------------------------------------------------------------------------------
# Algorithm 1 and baselines


def test_lipschitz_holds_after_every_update_during_training(monkeypatch):
    seen = []
    orig = LipschitzMLP.step_unchecked  # the update's kernel (lr validated once, in Hyperparameters)

    def step(self, grads, lr):
        out = orig(self, grads, lr)
        seen.append((self.lipschitz_bound(), _slopes(self, np.random.default_rng(len(seen)), 100).max()))
        return out

    monkeypatch.setattr(LipschitzMLP, "step_unchecked", step)
    hp = replace(SMALL, lr=50.0)  # absurd steps: the projection must act
    res = train("dpq", hp=hp, sigma=0.5, seed=0)
    assert len(seen) == hp.updates == 10
    assert res.projections > 0
    assert all(b <= hp.lipschitz * (1 + 1e-12) and s <= hp.lipschitz * (1 + 1e-9) for b, s in seen)


def _hand_update(weights, biases, batch, gamma, lr):
    """One step of Algorithm 1 (Wang & Hegde 2019) lines 19-22, written out for a net 1 -> H -> m (tanh).

    Line 19: y_i = r_i + gamma max_a [Q(s_{i+1}, a) + g_a(s_{i+1})] (the released function's maximum);
    line 20: l_i = (Q(s_i, a_i) + g_{a_i}(s_i) - y_i)^2 / 2, y_i held fixed (semi-gradient);
    line 22: theta <- theta - lr (1/B) sum_i grad l_i (descent on the loss). Returns the new (W1, b1, W2, b2).
    """
    (w1, w2), (b1, b2) = weights, biases
    s, a, r, s2, g, g2 = (batch[k] for k in ("s", "a", "r", "s2", "g", "g2"))
    B = s.size

    def q(x):  # Q(x, .) for a vector of states: (n, m)
        h = np.tanh(np.outer(x, w1[:, 0]) + b1)
        return h @ w2.T + b2, h

    q_next, _ = q(s2)
    y = r + gamma * np.max(q_next + g2, axis=1)  # line 19
    q_now, h = q(s)
    err = q_now[np.arange(B), a] + g - y  # d l_i / d Q(s_i, a_i), line 20
    dw2 = np.zeros_like(w2)
    db2 = np.zeros_like(b2)
    for i in range(B):
        dw2[a[i]] += err[i] * h[i]
        db2[a[i]] += err[i]
    dz = (err[:, None] * w2[a]) * (1.0 - h * h)  # back through the tanh layer
    dw1 = (dz * s[:, None]).sum(axis=0)[:, None]
    db1 = dz.sum(axis=0)
    return w1 - lr * dw1 / B, b1 - lr * db1 / B, w2 - lr * dw2 / B, b2 - lr * db2 / B


def _batch(rng, B=16, m=2, sigma=1.0):
    return {"s": rng.uniform(0, 1, B), "a": rng.integers(m, size=B), "r": rng.uniform(0, 0.5, B),
            "s2": rng.uniform(0, 1, B), "g": sigma * rng.standard_normal(B),
            "g2": sigma * rng.standard_normal((B, m))}


def test_one_update_follows_algorithm1_lines_19_20():
    """The agent's SGD step equals the hand-written step of Algorithm 1 lines 19-22 on the same batch,
    weights and noise values. The noise is of order 1 against Q of order 0.1, so leaving g out of the
    target (line 19) or of the loss (line 20), or dropping gamma or the reward, moves the result far
    outside the tolerance (rounding only: a few ulps of values of order 1)."""
    from privcal.rl.dpq import agent as dpq_agent

    rng = np.random.default_rng(11)
    hp = Hyperparameters(samples=64, batch_size=16, lr=0.05, gamma=0.7, hidden=(5,), lipschitz=100.0)
    net = LipschitzMLP((1, 5, 2), lipschitz=hp.lipschitz, seed=3, output_scale=1.0)
    for b in net.biases:
        b[...] = rng.normal(scale=0.3, size=b.shape)
    batch = _batch(rng)
    before = [w.copy() for w in net.weights], [b.copy() for b in net.biases]
    expected = _hand_update(*before, batch, hp.gamma, hp.lr)
    term = np.zeros(16, dtype=bool)
    mb = dpq_agent.Minibatch(batch["s"], batch["a"], batch["r"], batch["s2"], batch["g"], batch["g2"], term)
    projected = dpq_agent.sgd_update("dpq", net, hp, mb, 1.0, None)
    assert projected == 0  # L = 100 is never reached here, so no projection hides a difference
    got = (net.weights[0], net.biases[0], net.weights[1], net.biases[1])
    for e, g in zip(expected, got):
        np.testing.assert_allclose(g, e, rtol=1e-12, atol=1e-14)
    # the noise matters at this scale: the step without it differs by far more than the tolerance
    quiet = _hand_update(*before, {**batch, "g2": 0 * batch["g2"]}, hp.gamma, hp.lr)
    assert max(np.max(np.abs(q - e)) for q, e in zip(quiet, expected)) > 1e-4


def test_training_feeds_the_revealed_noise_into_the_update(monkeypatch):
    """End to end: the batch the loop hands to the update carries g_{a_i}(s_i) and g_a(s_{i+1}) of the
    current noise paths (Algorithm 1 lines 14-18), and the resulting weights are the hand-written
    step of lines 19-22 from the weights before it (one update: T = B = 64, J = 1)."""
    from privcal.rl.dpq import agent as dpq_agent
    from privcal.rl.dpq import updates as dpq_updates

    seen = []
    orig = dpq_agent.sgd_update

    def spy(method, net, hp, batch, sigma, mech_rng):
        seen.append({"weights": [w.copy() for w in net.weights], "biases": [b.copy() for b in net.biases],
                     "s": batch.s.copy(), "a": batch.a.copy(), "r": batch.r.copy(), "s2": batch.s2.copy(),
                     "g": batch.g.copy(), "g2": batch.g2.copy(), "term": batch.term.copy()})
        return orig(method, net, hp, batch, sigma, mech_rng)

    monkeypatch.setattr(dpq_updates, "sgd_update", spy)  # the module whose update rule the loop calls
    hp = Hyperparameters(samples=64, batch_size=64, lr=0.05, gamma=0.7, hidden=(6,), lipschitz=100.0)
    res = train("dpq", hp=hp, sigma=0.8, beta=50.0, resets=1, seed=4)
    assert len(seen) == 1 and res.projections == 0
    b = seen[0]
    assert not b["term"].any()  # the interval task is only truncated
    # the noise values are the paths' (fixed once revealed, so querying again returns them)
    np.testing.assert_array_equal(b["g"], [res.noise[a].sample_point(s) for s, a in zip(b["s"], b["a"])])
    np.testing.assert_array_equal(b["g2"], res.noise.sample_all(b["s2"]).T)
    assert np.std(b["g2"]) > 0.3  # sigma = 0.8: the test sees the noise
    expected = _hand_update(b["weights"], b["biases"], b, hp.gamma, hp.lr)
    got = (res.q.weights[0], res.q.biases[0], res.q.weights[1], res.q.biases[1])
    for e, g in zip(expected, got):
        np.testing.assert_allclose(g, e, rtol=1e-12, atol=1e-14)


def test_full_batches_only_and_resets(monkeypatch):
    steps, resets = [], []
    orig_step = LipschitzMLP.step_unchecked
    from privcal.analysis.noise import OrnsteinUhlenbeckPaths

    orig_reset = OrnsteinUhlenbeckPaths.reset
    monkeypatch.setattr(LipschitzMLP, "step_unchecked", lambda self, g, lr: steps.append(1) or orig_step(self, g, lr))
    monkeypatch.setattr(OrnsteinUhlenbeckPaths, "reset", lambda self: resets.append(1) or orig_reset(self))
    hp = Hyperparameters(samples=1000, batch_size=64, lr=1.0)  # floor(1000/64) = 15 updates, 40 spare
    res = train("dpq", hp=hp, sigma=0.3, resets=5, seed=1)
    assert len(steps) == 15 == res.updates
    assert len(resets) == 4  # J = 5 paths: the first at j = 0, then a new one every 3 updates
    assert len(res.episode_returns) == 20  # every sample is acted on: T / 50 complete episodes
    # the last path saw only the last 3 batches and the 40 trailing samples (+ episode starts)
    assert len(res.noise[0]) <= 3 * 64 + 40 + 5
    res1 = train("dpq", hp=hp, sigma=0.3, resets=1, seed=1)
    # one path for the whole run holds every distinct visited state (about 800 of the 1020 visits
    # here: the clipped boundary states 0 and 1 repeat), far more than the last of J = 5 paths
    assert len(res1.noise[0]) > 2 * (3 * 64 + 40 + 5)


def test_same_seed_same_returns_other_seed_differs():
    for method, sigma in [("dpq", 0.3), ("non_private", None), ("input_perturbation", 1.0),
                          ("dpsgd", 1.0), ("bgp16", 0.3)]:
        a = train(method, hp=SMALL, sigma=sigma, seed=5).episode_returns
        b = train(method, hp=SMALL, sigma=sigma, seed=5).episode_returns
        c = train(method, hp=SMALL, sigma=sigma, seed=6).episode_returns
        np.testing.assert_array_equal(a, b)
        assert not np.array_equal(a, c), method


def test_seed_kinds_follow_privcal_rng():
    """Streams come from privcal._rng.spawn: an int seed and SeedSequence(seed) give the same run;
    only an int is recorded; anything else is rejected naming the argument."""
    a = train("dpq", hp=SMALL, sigma=0.3, seed=5)
    b = train("dpq", hp=SMALL, sigma=0.3, seed=np.random.SeedSequence(5))
    np.testing.assert_array_equal(a.episode_returns, b.episode_returns)
    np.testing.assert_array_equal(a.q.get_params(), b.q.get_params())
    assert a.seed == 5 and b.seed is None
    with pytest.raises(ValueError, match="seed must be None, a non-negative int"):
        train("non_private", hp=SMALL, seed=1.5)


def test_released_function_is_q_plus_noise():
    res = train("dpq", hp=SMALL, sigma=0.7, seed=0)
    s = np.linspace(0, 1, 11)
    released = res.released_q(s)
    g = released - res.q(s[:, None])
    np.testing.assert_allclose(res.released_q(s), released)  # the path is fixed once revealed
    assert np.std(g) > 0.1  # noise of std 0.7 at points 0.1 apart (beta = 2222: ~independent)
    np.testing.assert_array_equal(res.greedy_actions(s), np.argmax(released, axis=1))
    plain = train("non_private", hp=SMALL, seed=0)
    np.testing.assert_array_equal(plain.released_q(s), plain.q(s[:, None]))


def test_noise_level_changes_learning():
    """The noise is used: with huge functional noise the greedy policy is the noise's, not Q's."""
    hp = replace(SMALL, samples=2000)
    quiet = np.mean([train("non_private", hp=hp, seed=s).episode_returns[-10:].mean() for s in range(3)])
    loud = np.mean([train("dpq", hp=hp, sigma=50.0, seed=s).episode_returns[-10:].mean() for s in range(3)])
    assert quiet > loud + 3.0  # measured 17.8 against 3.0 (seeds 0-2)


def test_train_dpq_calibrates_with_privcal_dpq():
    from privcal.calibrators import dpq

    res = train_dpq(epsilon=0.9, delta=1e-4, samples=640, batch_size=64, lr=3e-4, seed=0)
    cal = dpq.calibrate(0.9, 1e-4, samples=640, batch_size=64, lr=3e-4, lipschitz=4.0, resets=10)
    assert res.sigma == cal.sigma and res.beta == cal.beta and res.resets == 10
    assert res.calibration.feasible and res.guarantee.startswith("(0.9, 0.0001)-DP w.r.t. reward functions")
    assert res.hyperparameters.update_clip == cal.update_clip == 0.01
    assert len(res.premises) == 8 and all(held for _, held, _ in res.premises)
    paper = train_dpq(epsilon=0.9, delta=1e-4, samples=640, lr=3e-4, variant="paper", seed=0)
    assert paper.guarantee.startswith("no valid guarantee (paper analysis)") and paper.premises == []
    assert paper.sigma < res.sigma and paper.certificate == {}  # plain SGD steps, as the paper ran them
    # a beta other than the calibrated one voids the claim (the sensitivity depends on beta)
    other = train_dpq(epsilon=0.9, delta=1e-4, samples=640, lr=3e-4, beta=2 * cal.beta, seed=0)
    assert other.beta == 2 * cal.beta
    assert other.guarantee == "no valid guarantee: calibrated noise: sigma and beta from privcal.calibrators.dpq.calibrate (valid)"
    given = train_dpq(sigma=0.5, samples=640, lr=3e-4, seed=0)
    assert given.guarantee.startswith("no valid guarantee: calibrated noise")


def test_train_dpq_calibrates_for_the_env_actions():
    """The failure term counts one noise path per action: a 3-action env is calibrated for 3 paths."""
    from gymnasium import spaces

    from privcal.calibrators import dpq
    from privcal.rl.envs import IntervalEnv

    class ThreeActions(IntervalEnv):
        def __init__(self):
            super().__init__()
            self.action_space = spaces.Discrete(3)

        def step(self, action):
            return super().step(min(int(action), 1))  # action 2 moves right too

    res = train_dpq(epsilon=0.9, delta=1e-4, samples=640, lr=3e-4, seed=0, env=ThreeActions())
    cal = dpq.calibrate(0.9, 1e-4, samples=640, batch_size=64, lr=3e-4, lipschitz=4.0, resets=10,
                        actions=3)
    assert res.calibration.actions == 3 and res.sigma == cal.sigma
    assert res.released_q([0.5]).shape == (1, 3)


def test_bad_input_raises():
    with pytest.raises(ValueError, match=r"batch_size must be in \[1, samples=50\]"):
        Hyperparameters(samples=50, batch_size=64)
    with pytest.raises(ValueError, match="lr must be in"):
        Hyperparameters(lr=0.0)
    with pytest.raises(ValueError, match="lipschitz must be in"):
        Hyperparameters(lipschitz=-1.0)
    with pytest.raises(ValueError, match="gamma"):
        Hyperparameters(gamma=1.0)
    with pytest.raises(ValueError, match=r"resets must divide .* = 10 \(one of \[1, 2, 5, 10\]\), got 3"):
        train("dpq", hp=SMALL, sigma=0.3, resets=3)
    with pytest.raises(ValueError, match="method must be one of"):
        train("dqn", hp=SMALL, sigma=0.3)
    with pytest.raises(ValueError, match="sigma is required"):
        train("dpq", hp=SMALL)
    with pytest.raises(ValueError, match="sigma must be in"):
        train("dpq", hp=SMALL, sigma=0.0)
    with pytest.raises(ValueError, match="seed"):
        train("non_private", hp=SMALL, seed=-1)
    with pytest.raises(ValueError, match="either sigma or both"):
        train_dpq(epsilon=0.9, hp=SMALL)
    with pytest.raises(InfeasibleError, match="2k > 8.68"):  # the paper's own conditions fail at lr = 1
        train_dpq(epsilon=0.9, delta=1e-4, hp=replace(SMALL, samples=5000), variant="paper")
    with pytest.raises(ValueError, match="'fresh noise for every release' fails"):  # noise reuse: refused
        train_dpq(epsilon=0.9, delta=1e-4, hp=SMALL, resets=5)
    with pytest.raises(ValueError, match="update_clip must be at least .*'every update certified'"):
        Hyperparameters(update_clip=1e-5)
    with pytest.raises(ValueError, match="update_clip must be in"):
        Hyperparameters(update_clip=0.0)


# ---------------------------------------------------------------------------------------------------
# baseline calibrations


def test_input_perturbation_sigma():
    from privcal.analysis import gaussian

    # exact: T releases of sensitivity 1 are one Gaussian with mu = sqrt(T)/sigma (closed form)
    exact = baselines.input_perturbation_sigma(0.9, 1e-4, samples=5000, accountant="exact")
    assert exact == pytest.approx(math.sqrt(5000) / gaussian.mu_exact(0.9, 1e-4), rel=1e-9)
    kov = baselines.input_perturbation_sigma(0.9, 1e-4, samples=5000, accountant="kov")
    assert kov > exact  # KOV with one (eps0, delta0) per step is looser than the exact profile
    with pytest.raises(ValueError, match="accountant"):
        baselines.input_perturbation_sigma(0.9, 1e-4, samples=10, accountant="moments")


def test_dpsgd_noise_multipliers():
    # Abadi et al. Thm 1, c2 = sqrt(2), q = 1: closed form
    z = baselines.dpsgd_noise_multiplier_paper(0.9, 1e-4, steps=78)
    assert z == pytest.approx(math.sqrt(2) * math.sqrt(78 * math.log(1e4)) / 0.9, rel=1e-15)
    # per example it is sufficient here (privcal exact and RDP accountants)
    assert baselines.dpsgd_epsilon(z, 1e-4, steps=78, batch_size=64, unit="example") < 0.9
    assert baselines.dpsgd_epsilon(z, 1e-4, steps=78, batch_size=64, unit="example", accountant="rdp") < 0.9
    # ... but not for reward-function neighbours (sensitivity 2B C)
    assert baselines.dpsgd_epsilon(z, 1e-4, steps=78, batch_size=64, unit="reward_function") > 0.9
    ex = baselines.dpsgd_noise_multiplier(0.9, 1e-4, steps=78, batch_size=64, unit="example")
    rf = baselines.dpsgd_noise_multiplier(0.9, 1e-4, steps=78, batch_size=64, unit="reward_function")
    assert rf == pytest.approx(128 * ex, rel=1e-9)  # the exact sigma is linear in the sensitivity
    with pytest.raises(ValueError, match="unit"):
        baselines.dpsgd_noise_multiplier(0.9, 1e-4, steps=78, batch_size=64, unit="user")


def test_white_noise_paths():
    paths = baselines.WhiteNoisePaths(2, 2.0, seed=np.random.default_rng(0))
    pts = np.linspace(0, 1, 4000)
    v = paths.sample_all(pts)
    np.testing.assert_array_equal(paths.sample_all(pts), v)  # remembered
    # Monte Carlo (fixed seed): sample std of 4000 N(0, 4) values within 5 standard errors of 2
    assert abs(v[0].std() - 2.0) < 5 * 2.0 / math.sqrt(2 * 4000)
    assert abs(np.corrcoef(v[0, :-1], v[0, 1:])[0, 1]) < 0.1  # independent neighbours
    paths.reset()
    assert not np.array_equal(paths.sample_all(pts[:5]), v[:, :5])


# ---------------------------------------------------------------------------------------------------
# experiments


def test_noise_for_versions():
    hp = X.hyperparameters("fast")
    paper = X.noise_for("dpq", 0.9, 1e-4, hp, "paper")
    assert paper.sigma == 0.32 and paper.dp is False  # App. E.3's printed value
    assert paper.beta == pytest.approx(64 / (4 * 3e-4 * 24))
    valid = X.noise_for("dpq", 0.9, 1e-4, hp, "valid")
    # the valid sigma (every update restarted from the release, slope clip 0.02): 0.954 at T = 2000, eps = 0.9
    assert valid.dp is True and valid.sigma > paper.sigma and "update clip c = 0.01" in valid.source
    # the valid calibration does not depend on lr (the certified clip bounds the update)
    assert X.noise_for("dpq", 0.9, 1e-4, replace(hp, lr=3e-4), "valid").sigma == valid.sigma
    assert X.noise_for("bgp16", 0.9, 1e-4, hp, "paper").dp is False
    assert X.noise_for("dpsgd", 0.9, 1e-4, hp, "valid").dp is True
    with pytest.raises(ValueError, match="version"):
        X.noise_for("dpq", 0.9, 1e-4, hp, "exact")


def test_figures_shapes_missing_and_parallel_equal_sequential():
    hp = Hyperparameters(samples=256, batch_size=64, lr=1.0)
    c1 = X.figure1("fast", sigmas=(0.5,), resets=(1, 4), seeds=(0, 1), hp=hp)
    assert c1.labels == ["non-private", "sigma=0.5, J=1", "sigma=0.5, J=4"]
    assert all(r.shape == (2, 5) for r in c1.returns.values())
    c2 = X.figure2(0.9, "valid", "fast", seeds=(0,), hp=hp)
    assert not c2.missing and len(c2.labels) == 5
    par = X.figure2(0.9, "paper", "fast", seeds=(0, 1), hp=hp, n_jobs=2)
    seq = X.figure2(0.9, "paper", "fast", seeds=(0, 1), hp=hp, n_jobs=1)
    assert par.labels == seq.labels and len(par.labels) == 5
    for label in seq.labels:
        np.testing.assert_array_equal(par.returns[label], seq.returns[label])
    with pytest.raises(ValueError, match="resets must divide"):
        X.figure1("fast", resets=(3,), hp=hp)
    with pytest.raises(ValueError, match="setting"):
        X.figure1("huge")


def test_plot_curves_writes_png(tmp_path):
    pytest.importorskip("matplotlib")
    hp = Hyperparameters(samples=128, batch_size=64, lr=1.0)
    c = X.figure2(0.9, "valid", "fast", seeds=(0,), hp=hp, methods=("non_private", "dpq"))
    path = X.plot_curves(c, tmp_path / "fig.png")
    assert (tmp_path / "fig.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and path.endswith("fig.png")
    # the Algorithm-1 figures carry the random-policy line (the trivial reference) and the optimum
    import matplotlib.pyplot as plt

    from privcal.rl.envs import reference_return

    ax = X.plot_curves(c, ax=plt.subplots()[1])
    lines = {line.get_label(): line.get_ydata()[0] for line in ax.get_lines()}
    assert lines["random policy (trivial)"] == reference_return("random")[0]  # 10.87, simulated
    assert lines["move to middle (optimum)"] == reference_return("middle")[0]  # 20.71
    assert "random policy (trivial)" not in {ln.get_label() for ln in X.plot_curves(
        c, ax=plt.subplots()[1], references=False).get_lines()}
    plt.close("all")


# ---------------------------------------------------------------------------------------------------
# Prop. 10


def test_prop10_bounds_closed_form():
    # 2 sqrt(2) sigma / (sqrt(n pi)(1 - gamma)) at sigma = 1, n = 4, gamma = 0.9: 2 sqrt(2)/(2 sqrt(pi) 0.1)
    assert X.prop10_bound_paper(1.0, 4, 0.9) == pytest.approx(math.sqrt(2) / (math.sqrt(math.pi) * 0.1))
    assert X.prop10_bound_proof(1.0, 0.9) == pytest.approx(2 * X.prop10_bound_paper(1.0, 4, 0.9))
    with pytest.raises(ValueError, match="gamma"):
        X.prop10_bound_paper(1.0, 4, 1.0)


def test_optimal_solver_against_brute_force():
    rng = np.random.default_rng(4)
    P, r = X.random_finite_mdp(3, 2, rng)
    v, pi = X.optimal_policy(P, r[None], 0.8)
    all_pi = np.array(np.meshgrid(*[[0, 1]] * 3)).reshape(3, -1).T  # 8 deterministic policies
    values = X.policy_values(P, np.broadcast_to(r, (8, 2, 3)), all_pi, 0.8)
    np.testing.assert_allclose(v[0], values.max(axis=0), rtol=1e-12)


def test_prop10_counterexample_and_proof_bound():
    """Monte Carlo (seed 0, per-row one-sided 99.9% normal bound): the printed bound fails at n = 64,
    sigma = 1 for v' = optimum of the noisy MDP; the proof's per-state bound (no 1/sqrt(n)) holds."""
    rows = X.prop10_check((4, 64), sigmas=(1.0,), mdps=1, draws=30, seed=0)
    by = {(r["n_states"], r["reading"]): r for r in rows}
    assert by[(64, "noisy_optimum")]["verdict_paper"] == "fails"
    assert by[(4, "noisy_optimum")]["verdict_paper"] == "holds"
    assert all(r["verdict_proof"] == "holds" for r in rows)


# ---------------------------------------------------------------------------------------------------
# CLI


def _cli(argv):
    from privcal.cli import main

    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(argv)
    return code, out.getvalue(), err.getvalue()


def test_cli_json():
    code, out, err = _cli(["train", "dpq", "--samples", "640", "--epsilon", "0.9", "--delta", "1e-4",
                           "--seed", "3", "--json"])
    assert code == 0 and "Traceback" not in err  # silent progress with --json
    d = json.loads(out)
    assert len(d["episode_returns"]) == 12 and d["resets"] == 10 and d["sigma"] > 0
    assert d["calibration"]["variant"] == "valid" and d["calibration"]["k"] is None
    assert d["guarantee"].startswith("(0.9, 0.0001)-DP") and all(p["held"] for p in d["premises"])
    assert d["certificate"]["max_certified"] <= d["certificate"]["update_clip"] == 0.01
    code2, out2, _ = _cli(["train", "dpq", "--samples", "640", "--epsilon", "0.9", "--delta", "1e-4",
                           "--seed", "3", "--json"])
    assert json.loads(out2)["episode_returns"] == d["episode_returns"]


def test_cli_slope_clip_and_authors_sampler():
    code, out, _ = _cli(["train", "dpq", "--samples", "640", "--epsilon", "10", "--delta", "1e-4", "--lr", "1",
                         "--update-lipschitz", "0.05", "--no-references", "--json"])
    d = json.loads(out)
    assert code == 0 and d["certificate"]["update_lipschitz"] == 0.05 and d["calibration"]["notes"]
    assert d["certificate"]["max_certified_lipschitz"] <= 0.05 and all(p["held"] for p in d["premises"])
    code, out, _ = _cli(["train", "dpq", "--loop", "replay", "--sigma", "0.2", "--episodes", "3", "--sampler",
                         "authors", "--no-references", "--json"])
    d = json.loads(out)
    assert code == 0 and d["config"]["sampler"] == "authors" and "not the paper" in d["sampler"]


def test_cli_progress_text_and_baseline():
    code, out, err = _cli(["train", "dpq", "--samples", "640", "--sigma", "0.3", "--lr", "1"])
    assert code == 0 and "sigma" in out and re.search(r"(\d+)/\1 ", err)  # the progress bar completes
    code, out, _ = _cli(["train", "dpq", "--method", "input-perturbation", "--samples", "640",
                         "--epsilon", "0.9", "--delta", "1e-4", "--json"])
    assert code == 0 and json.loads(out)["method"] == "input-perturbation"  # the flag's spelling


@pytest.mark.parametrize("argv, message", [
    (["--samples", "640", "--sigma", "0.3", "--resets", "3"], "resets must divide"),
    (["--samples", "50", "--sigma", "0.3"], "--batch-size must be in"),
    (["--samples", "640", "--epsilon", "0.9"], "both --epsilon and --delta"),
    (["--samples", "640", "--sigma", "0.3", "--lr", "0"], "lr must be in"),
    (["--samples", "640", "--epsilon", "0.9", "--delta", "1e-4", "--resets", "5"],
     "'fresh noise for every release' fails"),
    (["--samples", "640", "--sigma", "0.3", "--sampler", "authors"], "--sampler applies only to --loop replay"),
    (["--loop", "replay", "--sigma", "0.3", "--update-lipschitz", "0.1"], "--update-lipschitz applies only to"),
    (["--samples", "640", "--epsilon", "1", "--delta", "1e-4", "--update-lipschitz", "0"],
     "update_lipschitz must be in"),
])
def test_cli_bad_input_exit_2_one_line(argv, message):
    code, out, err = _cli(["train", "dpq", *argv, "--json"])
    assert code == 2 and out == ""
    assert message in err and err.count("\n") == 1


def test_cli_imports_without_gymnasium_and_matplotlib():
    code = (
        "import sys; sys.modules['gymnasium'] = None; sys.modules['matplotlib'] = None\n"
        "sys.modules['joblib'] = None\n"
        "import privcal.cli.dpq\n"
        "from privcal.cli import build_parser\n"
        "assert 'train' in build_parser().format_help()\n"
        "import argparse\n"
        "p = build_parser()\n"
        "sub = [a for a in p._actions if isinstance(a, argparse._SubParsersAction)][0]\n"
        "train = sub.choices['train']\n"
        "agents = [a for a in train._actions if isinstance(a, argparse._SubParsersAction)][0]\n"
        "assert 'dpq' in agents.choices\n"
    )
    # timeout: a hang cap (minutes), not a performance deadline (the suite must pass on a loaded machine)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr


# ---------------------------------------------------------------------------------------------------
# certified updates (valid analysis): the premise the calibration rests on, observed


from privcal.rl.envs import ShiftedRewardIntervalEnv as _Shifted  # noqa: E402  (r + shift(s', a) neighbours)


SHIFTS = {  # r' - r: the paper's r + 1, and adversarial pairs pulling the two actions (or halves) apart
    "plus_one": lambda s, a: 1.0,
    "actions_apart": lambda s, a: 1.0 if a == 0 else -1.0,
    "halves_apart": lambda s, a: 1.0 if (s < 0.5) == (a == 0) else -1.0,
}
DENSE = np.linspace(0.0, 1.0, 10_001)[:, None]


def _certified_run(monkeypatch, hp, shift, seed, sigma=0.3):
    """A certified dpq run; returns (Q_j on DENSE for j = 0..U, largest dense change per update)."""
    from privcal.rl.dpq import agent as dpq_agent
    from privcal.rl.dpq import updates as dpq_updates

    snaps = []
    orig = dpq_agent.certified_update

    def spy(net, *args):
        if not snaps:
            snaps.append(net(DENSE))
        out = orig(net, *args)
        snaps.append(net(DENSE))
        return out

    monkeypatch.setattr(dpq_updates, "certified_update", spy)
    res = train("dpq", hp=hp, sigma=sigma, beta=30.0, seed=seed, env=None if shift is None else _Shifted(shift))
    q = np.array(snaps)
    return res, q, np.abs(np.diff(q, axis=0)).max(axis=(1, 2))


@settings(max_examples=6, deadline=None)
@given(seed=st.integers(0, 1000), lr=st.sampled_from([0.05, 1.0, 20.0]), clip=st.sampled_from([0.02, 0.1]),
       lipschitz=st.sampled_from([0.5, 4.0]), shift=st.sampled_from(sorted(SHIFTS)))
def test_neighbouring_rewards_never_move_q_apart_beyond_the_certified_bound(seed, lr, clip, lipschitz, shift):
    """r versus r' (r + 1 and adversarial pairs), same seed: every update's change on a dense grid of 10,001
    states stays <= c (the certificate) and the two runs' functions after j updates differ by <= 2 j c
    (the sensitivity the valid calibration uses), for every j."""
    with pytest.MonkeyPatch.context() as mp:
        hp = Hyperparameters(samples=320, batch_size=32, lr=lr, lipschitz=lipschitz, update_clip=clip)
        res, q, steps = _certified_run(mp, hp, None, seed)
        res2, q2, steps2 = _certified_run(mp, hp, SHIFTS[shift], seed)
    for r, st_ in ((res, steps), (res2, steps2)):
        assert len(st_) == hp.updates == 10
        assert np.all(st_ <= r.certificate["max_certified"]) and r.certificate["max_certified"] <= clip
    gap = np.abs(q - q2).max(axis=(1, 2))
    j = np.arange(len(gap))
    assert np.all(gap <= 2 * j * clip * (1 + 1e-9))


def test_reward_shift_drifts_beyond_one_update(monkeypatch):
    """The premise of the paper's proof (one update's size bounds the release's sensitivity) fails even with
    certified updates when the network carries on from its own parameters: under r + 1 the networks' gap grows
    with j, past 2c. That drift is why every valid update starts from the released function (where it is
    inside the release both runs share, and a release costs one update's change)."""
    hp = Hyperparameters(samples=640, batch_size=64, lr=1.0, update_clip=0.05)
    _, q, _ = _certified_run(monkeypatch, hp, None, 0, sigma=0.01)
    _, q2, _ = _certified_run(monkeypatch, hp, SHIFTS["plus_one"], 0, sigma=0.01)
    gap = np.abs(q - q2).max(axis=(1, 2))
    assert gap.max() > 3 * 0.05  # measured 0.246 (seed 0): several steps (the bias keeps moving one way)
    assert np.all(gap <= 2 * np.arange(len(gap)) * 0.05 * (1 + 1e-9))


def test_certified_step_scales_back_or_skips():
    rng = np.random.default_rng(0)
    from privcal.rl.dpq.agent import certified_step

    net = LipschitzMLP((1, 8, 2), lipschitz=2.0, seed=1)
    before = net(DENSE)
    _, inputs = net.forward(rng.uniform(size=(16, 1)))
    grads = net.backward(inputs, rng.normal(scale=100.0, size=(16, 2)))
    factor, bound, slope = certified_step(net, grads, 1.0, 0.01)
    assert 0.0 < factor < 1.0 and bound <= 0.01 and slope <= 2 * 2.0
    assert np.abs(net(DENSE) - before).max() <= bound
    assert net.lipschitz_bound() <= 2.0
    # a bias-only network (zero weights) moves by exactly t lr on the bias: t = c / lr after the line search
    flat = LipschitzMLP((1, 4, 2), seed=0)
    for w in flat.weights:
        w[...] = 0.0
    zero_w = [(np.zeros_like(w), np.ones_like(b)) for w, b in zip(flat.weights, flat.biases)]
    factor, bound, slope = certified_step(flat, zero_w, 1e-3, 0.25)  # lr below the clip: the full step
    assert factor == 1.0 and bound == pytest.approx(1e-3, rel=1e-9) and slope == 0.0
    with pytest.raises(ValueError, match="grads must hold"):
        certified_step(flat, zero_w[:1], 1e-3, 0.25)
    with pytest.raises(ValueError, match="update_clip must be in"):
        certified_step(flat, zero_w, 1e-3, 0.0)


def test_valid_run_premises_fail_visibly():
    """A premise broken in the run voids the claim and names it; a state outside [0, 1] (where nothing is
    certified) stops the run in the noise path."""
    from privcal.rl.envs import IntervalEnv

    cal_beta = train_dpq(epsilon=10.0, delta=1e-5, hp=SMALL, seed=0).beta
    res = train_dpq(epsilon=10.0, delta=1e-5, hp=SMALL, beta=cal_beta / 2, seed=0)
    failed = [name for name, held, _ in res.premises if not held]
    assert failed == ["calibrated noise: sigma and beta from privcal.calibrators.dpq.calibrate (valid)"]
    assert res.guarantee == f"no valid guarantee: {failed[0]}"
    d = res.to_dict()
    assert [p["held"] for p in d["premises"]].count(False) == 1 and d["certificate"]["paths"] == 11

    class Outside(IntervalEnv):
        def step(self, action):
            obs, r, term, trunc, info = super().step(action)
            return obs * 1.5, r, term, trunc, info

    with pytest.raises(ValueError, match=r"in \[0, 1\]"):
        train_dpq(epsilon=10.0, delta=1e-5, hp=SMALL, env=Outside(), seed=0)


# ---------------------------------------------------------------------------------------------------
# the certificate term by term: adversarial network pairs that attain each slack, so that
# weakening a term (halving the between-grid-point slack, charging only the new network's slope or curvature,
# a smaller tanh curvature constant, a partial-product sum cut short) makes a test red


def _unit(w, b, v, c=0.0, activation="relu", lipschitz=100.0, hidden=1):
    """s -> v act(w s + b) + c with one hidden unit (more columns zero): its Lipschitz bound |v w| is attained."""
    net = LipschitzMLP((1, hidden, 1), lipschitz=lipschitz, activation=activation, seed=0)
    for arr in (*net.weights, *net.biases):
        arr[...] = 0.0
    net.weights[0][0, 0], net.biases[0][0], net.weights[1][0, 0], net.biases[1][0] = w, b, v, c
    return net


def _dense_with(*points):
    return np.sort(np.concatenate([DENSE[:, 0], points]))[:, None]


def test_sup_certificate_slack_is_attained_by_a_network_pair():
    """f = N1 - N2 with N1 = -2 relu(p - s) + 1 (slope 2 left of p) and N2 = relu(s - p) (slope 1 right of p):
    f peaks at p = 0.46, inside the cell [0.4, 0.5] of an 11-point grid, rising at 2 and falling at 1. Its true
    sup is f(p) = 1 (closed form); the grid values are f(0.4) = 0.88, f(0.5) = 0.96, so the certified bound is
    0.92 + (2 + 1) 0.1 / 2 = 1.07 (closed form). With half the slack it would be 0.995 < 1: unsound."""
    p = 0.46
    first, second = _unit(-1.0, p, -2.0, 1.0), _unit(1.0, -p, 1.0)
    assert first.lipschitz_bound() == 2.0 and second.lipschitz_bound() == 1.0  # attained slopes
    dense = _dense_with(p)
    true = float(np.abs(first(dense) - second(dense)).max())
    assert true == pytest.approx(1.0, abs=1e-12)
    bound = mlp_module.sup_difference_bound(first, second, 11)
    assert true <= bound == pytest.approx(1.07, rel=1e-9)


def test_certified_step_charges_the_old_networks_slope():
    """Old network: a V, a/2... s -> a |s - 1/2| with a = 1/2 (relu units s - 1/2 and 1/2 - s; Lipschitz bound
    2a = 1); the step moves every weight to 0 and the output bias to a/2, so the change is f = a/2 - a|s - 1/2|,
    whose sup a/2 = 0.25 sits at s = 1/2, mid-cell of the 10-point grid (h = 1/9, clip c = 0.5, L = 1.01).
    The grid values next to it are 0.25 - a h / 2: a certificate charging only the new network's slope (0)
    returns 0.222 < 0.25. Charging both, (1 + 0) h / 2 is added: 0.25 - 0.0278 + 0.0556 >= 0.25."""
    from privcal.rl.dpq.agent import certified_step, grid_size

    a = 0.5
    net = LipschitzMLP((1, 2, 1), lipschitz=1.01, activation="relu", seed=0)
    net.weights[0][...] = [[1.0], [-1.0]]
    net.biases[0][...] = [-0.5, 0.5]
    net.weights[1][...] = [[a, a]]
    net.biases[1][...] = [0.0]
    assert grid_size(0.5, 1.01) == 10
    before = net(_dense_with(0.5))
    grads = [(w.copy(), b.copy()) for w, b in zip(net.weights, net.biases)]  # theta - 1 * grads = 0 ...
    grads[-1] = (grads[-1][0], np.array([-a / 2]))  # ... except the output bias: a / 2
    factor, bound, _ = certified_step(net, grads, 1.0, 0.5)
    assert factor == 1.0 and net.lipschitz_bound() == 0.0
    true = float(np.abs(net(_dense_with(0.5)) - before).max())
    assert true == pytest.approx(a / 2, abs=1e-12)
    assert true <= bound == pytest.approx(a / 2 + a / 18, rel=1e-9)  # 0.25 - a h / 2 + (2a + 0) h / 2, h = 1/9


@settings(max_examples=20, deadline=None)
@given(w=st.floats(0.5, 20.0), v=st.floats(-3.0, 3.0).filter(lambda x: abs(x) > 0.1))
def test_curvature_bound_of_one_tanh_unit_is_attained(w, v):
    """N(s) = v tanh(w (s - 1/2)): N'' = v w^2 tanh''(w (s - 1/2)), whose largest |.| is
    (4 / (3 sqrt 3)) |v| w^2 at tanh^2 = 1/3, i.e. s = 1/2 +- atanh(1/sqrt 3) / w, inside [0, 1] for w >= 0.5.
    curvature_bound gives exactly that (closed form), so a smaller constant would be exceeded."""
    net = _unit(w, -w / 2, v, activation="tanh")
    peak = 0.5 + math.atanh(1 / math.sqrt(3)) / w
    t = math.tanh(w * (peak - 0.5))
    attained = abs(v) * w * w * 2 * abs(t) * (1 - t * t)
    assert attained == pytest.approx(4 / (3 * math.sqrt(3)) * abs(v) * w * w, rel=1e-12)
    assert net.curvature_bound() == pytest.approx(attained, rel=1e-12)
    # and by finite differences of the exact derivative (independent of the closed form)
    x = np.linspace(peak - 1e-5, peak + 1e-5, 3)[:, None]
    d = net.input_derivative(x)[1][:, 0]
    assert abs(d[2] - d[0]) / 2e-5 == pytest.approx(attained, rel=1e-5)  # central difference: O((w h)^2)


@settings(max_examples=20, deadline=None)
@given(w1=st.floats(1.0, 10.0), w2=st.floats(0.01, 0.2), v=st.floats(0.5, 2.0), seed=st.integers(0, 100))
def test_curvature_bound_holds_for_deep_chains(w1, w2, v, seed):
    """s -> v tanh(w2 tanh(w1 (s - s0))): with w2 small the first layer's curvature term
    v w2 tanh''(z1) w1^2 dominates; a bound that kept only the last partial product (P_2 = w1 w2) would be
    kappa v w1^2 w2^2, far below. Checked against |N''| from the exact derivative on a dense grid."""
    s0 = np.random.default_rng(seed).uniform(0.3, 0.7)
    net = LipschitzMLP((1, 1, 1, 1), lipschitz=100.0, activation="tanh", seed=0)
    net.weights[0][...], net.biases[0][...] = w1, -w1 * s0
    net.weights[1][...], net.biases[1][...] = w2, 0.0
    net.weights[2][...], net.biases[2][...] = v, 0.0
    d = net.input_derivative(DENSE)[1][:, 0]
    observed = float(np.abs(np.diff(d)).max() / (DENSE[1, 0] - DENSE[0, 0]))
    assert observed <= net.curvature_bound()
    assert observed > 0.5 * net.curvature_bound()  # the chain nearly attains it (measured >= 0.66)


def _bump_then_flat(w, v, h_units=3):
    """A tanh network of 1 + 2 units: unit 0 is the bump-slope unit v tanh(w (s - p)) (old network); units 1, 2
    are a cancelling pair (weights 0.01, outputs +-100: Lipschitz bound 2, slope ~0, curvature bound 0.022)."""
    net = LipschitzMLP((1, h_units, 1), lipschitz=4.0, activation="tanh", seed=0)
    for arr in (*net.weights, *net.biases):
        arr[...] = 0.0
    return net


def test_slope_certificate_charges_both_curvatures_and_the_whole_slack():
    """Old network: v tanh(w (s - p)) with w = 44, p mid-cell of the certificate's 12-point grid (h = 1/11): its
    slope v w sech^2 is a narrow bump, v w = 1.8 at p, 0.13 at the grid points (w h / 2 = 2). New network: a
    pair of units whose slopes cancel (Lipschitz bound 2, so Lip(old) + Lip(new) = 3.8 > l = 3 and the grid
    certificate is used), nearly no curvature. The change's slope peaks at 1.8 between grid points: the
    certified bound 0.13 + (kappa v w^2 + 0.022) h / 2 = 2.9 covers it; with only the new network's curvature,
    or half the slack (0.13 + 1.39 = 1.52), it would not."""
    from privcal.rl.dpq.agent import certified_step, grid_size

    L, c, ell = 2.0, 10.0, 3.0
    n = grid_size(c, L, ell)
    h = 1.0 / (n - 1)
    p = 5.5 * h  # mid-cell
    w = 4.0 / h
    v = 1.8 / w
    net = LipschitzMLP((1, 3, 1), lipschitz=L, activation="tanh", seed=0)
    for arr in (*net.weights, *net.biases):
        arr[...] = 0.0
    net.weights[0][0, 0], net.biases[0][0], net.weights[1][0, 0] = w, -w * p, v
    new_w1 = np.array([[0.0], [0.01], [0.01]])
    new_w2 = np.array([[0.0, 100.0, -100.0]])
    grads = [(net.weights[0] - new_w1, net.biases[0].copy()), (net.weights[1] - new_w2, net.biases[1].copy())]
    dense = _dense_with(p)
    before = net.input_derivative(dense)[1][:, 0]
    factor, _, slope = certified_step(net, grads, 1.0, c, ell)
    assert factor == 1.0 and net.lipschitz_bound() == pytest.approx(2.0, rel=1e-12)
    after = net.input_derivative(dense)[1][:, 0]
    true = float(np.abs(after - before).max())
    assert true == pytest.approx(1.8, rel=1e-3)
    assert true <= slope <= ell


def test_certified_step_keeps_the_old_parameters_when_nothing_certifies():
    """The fallback: a step that no factor certifies leaves every parameter exactly as it was (change 0).
    (a) non-finite gradients: the bounds are nan, never <= c; (b) a network above its Lipschitz bound L: the
    projection after any step, however small, rescales the weights, a change no factor shrinks below c."""
    from privcal.rl.dpq.agent import certified_step

    net = LipschitzMLP((1, 8, 2), lipschitz=2.0, seed=3)
    params = net.get_params().copy()
    grads = [(np.full_like(w, np.nan), np.zeros_like(b)) for w, b in zip(net.weights, net.biases)]
    assert certified_step(net, grads, 1.0, 0.01) == (0.0, 0.0, 0.0)
    assert np.array_equal(net.get_params(), params)
    assert certified_step(net, grads, 1.0, 0.01, 0.02) == (0.0, 0.0, 0.0)
    assert np.array_equal(net.get_params(), params)
    for wt in net.weights:
        wt *= 3.0  # product of norms 27x: above L = 2
    params = net.get_params().copy()
    zero = [(np.zeros_like(w), np.zeros_like(b)) for w, b in zip(net.weights, net.biases)]
    assert certified_step(net, zero, 1.0, 0.01) == (0.0, 0.0, 0.0)
    assert np.array_equal(net.get_params(), params)


@settings(max_examples=5, deadline=None)
@given(seed=st.integers(0, 1000), lr=st.sampled_from([1.0, 20.0]), clip=st.sampled_from([0.02, 0.1]),
       ell=st.sampled_from([0.02, 0.1]), shift=st.sampled_from(sorted(SHIFTS)))
def test_every_update_is_certified_in_sup_and_slope(seed, lr, clip, ell, shift):
    """Training runs (r and its adversarial neighbours): every update's change Delta = N_new - N_old, on a dense
    grid of 10,001 states, has sup <= the certified bound <= c and slope (exact derivative) <= the certified
    slope bound <= l. Under adaptive composition two reward functions' releases then differ by Delta - Delta'
    (sup <= 2c, slope <= 2l): the sensitivity the calibration charges."""
    from privcal.rl.dpq import updates as dpq_updates

    hp = Hyperparameters(samples=320, batch_size=32, lr=lr, update_clip=clip, update_lipschitz=ell)
    seen = []
    orig = dpq_updates.certified_step_unchecked

    def spy(net, grads, *args):
        before = net.input_derivative(DENSE)
        out = orig(net, grads, *args)
        after = net.input_derivative(DENSE)
        seen.append((float(np.abs(after[0] - before[0]).max()), float(np.abs(after[1] - before[1]).max()),
                     out[1], out[2]))
        return out

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(dpq_updates, "certified_step_unchecked", spy)
        res = train("dpq", hp=hp, sigma=0.05, beta=ell / clip, seed=seed, env=_Shifted(SHIFTS[shift]))
    assert len(seen) == hp.updates == 10 and res.certificate["max_certified_lipschitz"] <= ell
    for sup, slope, sup_bound, slope_bound in seen:
        assert sup <= sup_bound <= clip and slope <= slope_bound <= ell


def test_the_valid_run_restarts_from_the_released_function(monkeypatch):
    """Every update starts from the released function: the noise of release j is the sum of j + 1 independent
    layers (one fresh layer per release), the network carries on from the updated parameters, and the last
    release is N_U + G_U with U + 1 layers. The released values the next update sees are N + G."""
    res = train_dpq(epsilon=100.0, delta=1e-5, hp=SMALL, seed=0)
    layers = res.noise.layers
    assert len(layers) == res.updates + 1 == 11 and res.certificate["restart"] == "released"
    s = np.linspace(0.0, 1.0, 7)
    expected = res.q(s[:, None]) + sum(layer.sample_all(s) for layer in layers).T
    assert np.allclose(res.released_q(s), expected, rtol=0, atol=1e-15)
    # every layer is a path of the calibrated sigma and beta, and the layers are distinct draws
    assert all(path.sigma == res.sigma and path.beta == res.beta for layer in layers for path in layer)
    first = [float(layer[0].sample_point(0.5)) for layer in layers]
    assert len(set(first)) == len(first)


@pytest.mark.parametrize("kw", [{}, {"activation": "relu"}, {"update_clip": 0.05}, {"update_lipschitz": 0.5},
                                {"lipschitz": 0.25, "hidden": (4,)}])
def test_valid_hyperparameters_fill_the_defaults_as_a_replace_would(kw):
    # valid_hyperparameters sets the library's two defaults without validating hp's fields again: the result is
    # the Hyperparameters that dataclasses.replace (which re-runs __post_init__) gives
    from dataclasses import replace

    from privcal.calibrators import dpq as cal
    from privcal.rl.dpq.agent import valid_hyperparameters

    hp = Hyperparameters(samples=640, batch_size=32, **kw)
    changes = {}
    if hp.update_clip is None:
        changes["update_clip"] = cal.DEFAULT_UPDATE_CLIP
    if hp.update_lipschitz is None and hp.activation == "tanh":
        changes["update_lipschitz"] = min(cal.DEFAULT_UPDATE_LIPSCHITZ, 2.0 * hp.lipschitz)
    assert valid_hyperparameters(hp) == replace(hp, **changes)
    assert valid_hyperparameters(hp).update_clip is not None


def test_valid_hyperparameters_still_refuse_a_grid_too_fine():
    # the premise the defaults add (the certificate's grid of ceil(4 L / c) + 1 points) is checked: with the
    # default c = 0.01, L = 1e3 needs 400,001 points, more than MAX_GRID
    from privcal.rl.dpq.agent import MAX_GRID, valid_hyperparameters

    hp = Hyperparameters(samples=640, batch_size=32, lipschitz=1e3)
    assert 4 * 1e3 / 0.01 + 1 > MAX_GRID
    with pytest.raises(ValueError, match="update_clip must be at least"):
        valid_hyperparameters(hp)


@pytest.mark.parametrize("activation", ["tanh", "relu"])
def test_lipschitz_mlp_unchecked_is_the_checked_one(activation):
    # the trusted constructor of the DP-Q runs (their Hyperparameters validated the settings):
    # the same projected initial weights from the same seed (independent: the checked constructor itself)
    a = LipschitzMLP((1, 5, 4, 3), lipschitz=0.7, activation=activation, seed=2, output_scale=0.5)
    b = LipschitzMLP.unchecked((1, 5, 4, 3), 0.7, activation, seed=2, output_scale=0.5)
    assert repr(a) == repr(b) and a.lipschitz_bound() <= 0.7
    for wa, wb in zip(a.weights + a.biases, b.weights + b.biases):
        np.testing.assert_array_equal(wa, wb)


def test_default_beta_without_validation_is_paper_beta():
    # train / train_dpq with a given sigma take App. E.3's beta without re-validating its constants under the
    # users' argument names lr and batch_size: the same value as paper_beta()
    # (2222.2 = 64 / (4 * 3e-4 * 24), Thm 5 with App. E.3's alpha, B, k)
    from privcal.rl.dpq.agent import paper_beta_e3, paper_beta

    assert paper_beta_e3() == paper_beta() == pytest.approx(64 / (4 * 3e-4 * 24), rel=1e-15)


@pytest.mark.parametrize("method,sigma,resets", [("bgp16", 0.4, 1), ("non_private", None, None)])
def test_run_unchecked_is_train(method, sigma, resets):
    # the CLI's runs after its own checks: the same run as train (independent: train itself,
    # same seed), including the BGP16 white noise built by WhiteNoisePaths.unchecked
    from privcal.rl.dpq.run import RunNoise, run_unchecked

    hp = Hyperparameters(samples=128, batch_size=32)
    a = train(method, hp=hp, sigma=sigma, resets=resets, seed=3)
    b = run_unchecked(RunNoise(method, sigma, None, resets), hp, 3, None, None)
    np.testing.assert_array_equal(a.episode_returns, b.episode_returns)
    assert (a.sigma, a.resets) == (b.sigma, b.resets)
    np.testing.assert_array_equal(a.released_q(np.linspace(0, 1, 7)), b.released_q(np.linspace(0, 1, 7)))


def test_train_unchecked_warns_at_the_callers_line_and_gives_the_same_run():
    # docs/deprecation.md: the alias of run_unchecked warns at the user's line, names the replacement and runs
    # the same run (independent: train, same seed); a keyword it never took is refused as before
    from privcal.rl.dpq.agent import train_unchecked

    hp = Hyperparameters(samples=128, batch_size=32)
    with pytest.warns(DeprecationWarning, match="run_unchecked") as record:
        b = train_unchecked("bgp16", hp=hp, sigma=0.4, beta=None, resets=1, seed=3, guarantee="g")
    assert record[0].filename == __file__
    a = train("bgp16", hp=hp, sigma=0.4, resets=1, seed=3)
    np.testing.assert_array_equal(a.episode_returns, b.episode_returns)
    assert b.guarantee == "g" and b.seed == 3
    with pytest.warns(DeprecationWarning), pytest.raises(TypeError, match="unexpected keyword argument 'variant'"):
        train_unchecked("bgp16", hp=hp, sigma=0.4, beta=None, resets=1, variant="valid")


def test_train_settings_give_the_keyword_calls_run():
    # TrainSettings holds the defaults of train and train_dpq: a settings object gives the keyword call's run
    # (independent: the keyword call itself), keywords replace its fields, and a name that is no field is
    # refused before any work (train) or read as a field of hp (train_dpq: any other keyword replaces one)
    from privcal.rl.dpq.agent import TrainSettings

    hp = Hyperparameters(samples=128, batch_size=32)
    a = train("bgp16", hp=hp, sigma=0.4, resets=1, seed=3)
    b = train("bgp16", TrainSettings(hp=hp, sigma=0.4, resets=1, seed=5), seed=3)
    np.testing.assert_array_equal(a.episode_returns, b.episode_returns)
    with pytest.raises(TypeError, match="unexpected keyword argument 'variant'"):
        train("dpq", hp=hp, sigma=0.4, variant="valid")
    with pytest.raises(TypeError, match="unexpected keyword argument 'samples'"):
        train("dpq", hp=hp, sigma=0.4, samples=64)
    c = train_dpq(sigma=0.3, hp=hp, seed=2, samples=64)
    d = train_dpq(TrainSettings(sigma=0.3, hp=replace(hp, samples=64), seed=2))
    np.testing.assert_array_equal(c.episode_returns, d.episode_returns)
    assert c.hyperparameters.samples == 64 and c.guarantee == d.guarantee
    with pytest.raises(TypeError, match="Hyperparameters"):
        train_dpq(sigma=0.3, hp=hp, guarantee="mine")  # not train_dpq's: its guarantee is computed


def test_figure_and_prop10_settings_give_the_keyword_calls_result():
    # FigureRun (figure1, figure2) and Prop10Settings hold the defaults: a settings object gives the keyword
    # call's result (independent: the keyword call itself), keywords replace its fields, other names are refused
    hp = Hyperparameters(samples=128, batch_size=32, lr=1.0)
    a = X.figure1("fast", sigmas=(0.5,), resets=(1,), seeds=(0,), hp=hp, n_jobs=1)
    b = X.figure1("fast", X.FigureRun(seeds=(5,), hp=hp, n_jobs=1), sigmas=(0.5,), resets=(1,), seeds=(0,))
    assert a.labels == b.labels and all(np.array_equal(a.returns[k], b.returns[k]) for k in a.labels)
    with pytest.raises(TypeError, match="figure2\\(\\) got an unexpected keyword argument 'seed'"):
        X.figure2(0.9, seed=0)
    rows = X.prop10_check((4,), sigmas=(1.0,), mdps=1, draws=5, seed=3)
    assert X.prop10_check((4,), X.Prop10Settings(sigmas=(1.0,), mdps=1, draws=5), seed=3) == rows
    with pytest.raises(TypeError, match="unexpected keyword argument 'sigma'"):
        X.prop10_check((4,), sigma=1.0)


def test_select_and_learner_settings_give_the_keyword_calls_run():
    # SelectSettings (train_select) and LearnerSettings (run_learner) hold the defaults: a settings object gives
    # the keyword call's run (independent: the keyword call itself, same seed); other names are refused
    from privcal.rl.dpq import learners, select

    a = select.train_select(epsilon=1.0, samples=2000, evaluation_episodes=20, seed=1)
    b = select.train_select(select.SelectSettings(samples=2000, evaluation_episodes=20, seed=7), epsilon=1.0, seed=1)
    assert a == b
    with pytest.raises(TypeError, match="unexpected keyword argument 'unit'"):
        select.train_select(epsilon=1.0, unit="episode")
    c = learners.run_learner("select", epsilon=1.0, delta=None, samples=2000, references=False, seed=2)
    d = learners.run_learner("select", learners.LearnerSettings(samples=2000, references=False), epsilon=1.0,
                             delta=None, seed=2)
    assert c.result == d.result and c.record.keys() == d.record.keys()
    with pytest.raises(TypeError, match="run_learner\\(\\) got an unexpected keyword argument 'episodes'"):
        learners.run_learner("fqi-dpsgd", epsilon=1.0, delta=1e-5, episodes=2)


def test_white_noise_paths_unchecked_is_the_checked_one():
    a, b = baselines.WhiteNoisePaths(3, 0.6, seed=8), baselines.WhiteNoisePaths.unchecked(3, 0.6, seed=8)
    points = np.array([0.1, 0.5, 0.1, 0.9])
    np.testing.assert_array_equal(a.sample_all(points), b.sample_all(points))
    with pytest.raises(ValueError, match="^sigma must be in"):
        baselines.WhiteNoisePaths(2, -1.0)


def test_the_baselines_unchecked_calibrations_equal_the_checked_ones():
    # privcal train dpq's baselines call these after Hyperparameters validated the settings (one
    # validation per train call); same numbers as the checked versions, and the target is still checked
    from privcal.rl.dpq import agent as dpq_agent
    from privcal.rl.dpq import baselines

    hp = dpq_agent.Hyperparameters(samples=200, batch_size=10)
    assert dpq_agent.functional_noise_unchecked(1.0, 1e-5, hp, hp.updates)[:2] == \
        dpq_agent.functional_noise(1.0, 1e-5, hp, hp.updates)[:2]
    assert baselines.dpsgd_noise_multiplier_unchecked(1.0, 1e-5, 20, 10, "reward_function") == \
        baselines.dpsgd_noise_multiplier(1.0, 1e-5, steps=20, batch_size=10, unit="reward_function")
    assert baselines.input_perturbation_sigma_unchecked(1.0, 1e-5, 200, "exact") == \
        baselines.input_perturbation_sigma(1.0, 1e-5, samples=200, accountant="exact")
    with pytest.raises(ValueError, match="epsilon must be in"):
        dpq_agent.functional_noise_unchecked(1e300, 1e-5, hp, hp.updates)
    with pytest.raises(ValueError, match="delta"):
        baselines.dpsgd_noise_multiplier_unchecked(1.0, 2.0, 20, 10, "reward_function")
