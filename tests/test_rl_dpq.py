"""Training layer of DP Q-learning: MLP (privcal.rl.mlp), Algorithm 1 and baselines
(privcal.rl.dpq_agent, privcal.rl.baselines), experiments (privcal.rl.experiments_dpq), CLI (_cli_dpq)."""

import io
import json
import math
import subprocess
import sys
from contextlib import redirect_stderr, redirect_stdout
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from privcal.errors import InfeasibleError
from privcal.rl import baselines, experiments_dpq as X
from privcal.rl.dpq_agent import Hyperparameters, train, train_dpq
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
    orig = LipschitzMLP._step  # the update's kernel (lr validated once, in Hyperparameters)

    def step(self, grads, lr):
        out = orig(self, grads, lr)
        seen.append((self.lipschitz_bound(), _slopes(self, np.random.default_rng(len(seen)), 100).max()))
        return out

    monkeypatch.setattr(LipschitzMLP, "_step", step)
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
    from privcal.rl import dpq_agent

    rng = np.random.default_rng(11)
    hp = Hyperparameters(samples=64, batch_size=16, lr=0.05, gamma=0.7, hidden=(5,), lipschitz=100.0)
    net = LipschitzMLP((1, 5, 2), lipschitz=hp.lipschitz, seed=3, output_scale=1.0)
    for b in net.biases:
        b[...] = rng.normal(scale=0.3, size=b.shape)
    batch = _batch(rng)
    before = [w.copy() for w in net.weights], [b.copy() for b in net.biases]
    expected = _hand_update(*before, batch, hp.gamma, hp.lr)
    term = np.zeros(16, dtype=bool)
    projected = dpq_agent._update("dpq", net, hp, batch["s"], batch["a"], batch["r"], batch["s2"],
                                  batch["g"], batch["g2"], term, hp.gamma, 1.0, None)
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
    from privcal.rl import dpq_agent

    seen = []
    orig = dpq_agent._update

    def spy(method, net, hp, bs, ba, br, bs2, bg, bg2, bterm, gamma, sigma, mech_rng):
        seen.append({"weights": [w.copy() for w in net.weights], "biases": [b.copy() for b in net.biases],
                     "s": bs.copy(), "a": ba.copy(), "r": br.copy(), "s2": bs2.copy(), "g": bg.copy(),
                     "g2": bg2.copy(), "term": bterm.copy()})
        return orig(method, net, hp, bs, ba, br, bs2, bg, bg2, bterm, gamma, sigma, mech_rng)

    monkeypatch.setattr(dpq_agent, "_update", spy)
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
    orig_step = LipschitzMLP._step
    from privcal.noise import OrnsteinUhlenbeckPaths

    orig_reset = OrnsteinUhlenbeckPaths.reset
    monkeypatch.setattr(LipschitzMLP, "_step", lambda self, g, lr: steps.append(1) or orig_step(self, g, lr))
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
    from privcal import dpq

    res = train_dpq(epsilon=0.9, delta=1e-4, samples=640, batch_size=64, lr=3e-4, seed=0)
    cal = dpq.calibrate(0.9, 1e-4, samples=640, batch_size=64, lr=3e-4, lipschitz=4.0, resets=10)
    assert res.sigma == cal.sigma and res.beta == cal.beta and res.resets == 10
    assert res.calibration.feasible and "DP" in res.guarantee
    paper = train_dpq(epsilon=0.9, delta=1e-4, samples=640, lr=3e-4, variant="paper", seed=0)
    assert "NOT" in paper.guarantee
    assert paper.sigma < res.sigma
    # a beta other than the calibrated one voids the claim (sensitivity and tail depend on beta)
    other = train_dpq(epsilon=0.9, delta=1e-4, samples=640, lr=3e-4, beta=2 * cal.beta, seed=0)
    assert other.beta == 2 * cal.beta and "no privacy claim" in other.guarantee


def test_train_dpq_calibrates_for_the_env_actions():
    """The failure term counts one noise path per action: a 3-action env is calibrated for 3 paths."""
    from gymnasium import spaces

    from privcal import dpq
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
    with pytest.raises(InfeasibleError, match="lr=1"):  # no valid sigma at lr = 1 (binding: Lemma 8 tail)
        train_dpq(epsilon=0.9, delta=1e-4, hp=replace(SMALL, samples=5000))


# ---------------------------------------------------------------------------------------------------
# baseline calibrations


def test_input_perturbation_sigma():
    from privcal import gaussian

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
    assert valid.infeasible and valid.sigma is None  # lr = 1: no valid sigma
    valid_e3 = X.noise_for("dpq", 0.9, 1e-4, replace(hp, lr=3e-4), "valid")
    assert valid_e3.dp is True and valid_e3.sigma > 10 * paper.sigma
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
    assert set(c2.missing) == {"dpq", "bgp16"}
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
    v, pi = X._optimal(P, r[None], 0.8)
    all_pi = np.array(np.meshgrid(*[[0, 1]] * 3)).reshape(3, -1).T  # 8 deterministic policies
    values = X._policy_values(P, np.broadcast_to(r, (8, 2, 3)), all_pi, 0.8)
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
                           "--resets", "5", "--seed", "3", "--json"])
    assert code == 0 and err == ""  # silent progress with --json
    d = json.loads(out)
    assert len(d["episode_returns"]) == 12 and d["resets"] == 5 and d["sigma"] > 0
    assert d["calibration"]["variant"] == "corrected"
    code2, out2, _ = _cli(["train", "dpq", "--samples", "640", "--epsilon", "0.9", "--delta", "1e-4",
                           "--resets", "5", "--seed", "3", "--json"])
    assert json.loads(out2)["episode_returns"] == d["episode_returns"]


def test_cli_progress_text_and_baseline():
    code, out, err = _cli(["train", "dpq", "--samples", "640", "--sigma", "0.3", "--lr", "1"])
    assert code == 0 and "sigma" in out and "640/640" in err
    code, out, _ = _cli(["train", "dpq", "--method", "input-perturbation", "--samples", "640",
                         "--epsilon", "0.9", "--delta", "1e-4", "--json"])
    assert code == 0 and json.loads(out)["method"] == "input_perturbation"


@pytest.mark.parametrize("argv, message", [
    (["--samples", "640", "--sigma", "0.3", "--resets", "3"], "resets must divide"),
    (["--samples", "50", "--sigma", "0.3"], "batch_size must be in"),
    (["--samples", "640", "--epsilon", "0.9"], "both --epsilon and --delta"),
    (["--samples", "640", "--sigma", "0.3", "--lr", "0"], "lr must be in"),
    (["--samples", "5000", "--epsilon", "0.9", "--delta", "1e-4", "--lr", "1"], "no noise bound k"),
])
def test_cli_bad_input_exit_2_one_line(argv, message):
    code, out, err = _cli(["train", "dpq", *argv, "--json"])
    assert code == 2 and out == ""
    assert message in err and err.count("\n") == 1


def test_cli_imports_without_gymnasium_and_matplotlib():
    code = (
        "import sys; sys.modules['gymnasium'] = None; sys.modules['matplotlib'] = None\n"
        "sys.modules['joblib'] = None\n"
        "import privcal.rl._cli_dpq\n"
        "from privcal.cli import build_parser\n"
        "assert 'train' in build_parser().format_help()\n"
        "import argparse\n"
        "p = build_parser()\n"
        "sub = [a for a in p._actions if isinstance(a, argparse._SubParsersAction)][0]\n"
        "train = sub.choices['train']\n"
        "agents = [a for a in train._actions if isinstance(a, argparse._SubParsersAction)][0]\n"
        "assert 'dpq' in agents.choices\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
