"""privcal.rl.dpq.replay: the authors' replay loop (Wang & Hegde, Figure 1) and its privacy report."""

from __future__ import annotations

import json
import math
from dataclasses import replace

import numpy as np
import pytest

pytest.importorskip("gymnasium")

from privcal.analysis import gaussian  # noqa: E402
from privcal.rl.dpq import replay as R  # noqa: E402
from privcal.rl.dpq.replay import privacy as RV  # noqa: E402
from privcal.rl.dpq.replay import sampler as RS  # noqa: E402

# a small loop: 8 episodes of 50 steps, batch 32 -> 369 updates (about 0.1 s without noise)
SMALL = R.ReplayConfig(episodes=8, batch_size=32)


# ---------------------------------------------------------------------------------------------------
# Huber loss and optimisers against closed forms


def test_huber_loss_closed_form():
    # Huber 1964: x^2/2 inside [-c, c], c(|x| - c/2) outside
    assert R.huber_loss(0.5) == pytest.approx(0.125)
    assert R.huber_loss(-3.0) == pytest.approx(2.5)
    assert R.huber_loss(3.0, threshold=2.0) == pytest.approx(4.0)
    # continuous at the threshold
    assert R.huber_loss(2.0, threshold=2.0) == pytest.approx(2.0)


def test_huber_grad_is_clipped_residual_and_matches_finite_differences():
    x = np.array([-3.0, -0.7, 0.0, 0.4, 2.5])
    assert np.array_equal(R.huber_grad(x), np.clip(x, -1.0, 1.0))
    h = 1e-6
    fd = (R.huber_loss(x + h, 1.5) - R.huber_loss(x - h, 1.5)) / (2 * h)
    np.testing.assert_allclose(R.huber_grad(x, 1.5), fd, atol=1e-6)


def test_sgd_step():
    opt = R.SGD(0.1)
    np.testing.assert_allclose(opt.step([1.0, -2.0], [0.5, -1.0]), [0.95, -1.9])


def test_rmsprop_two_steps_closed_form():
    # PyTorch RMSprop: v1 = (1 - d) g1^2, v2 = d v1 + (1 - d) g2^2, theta -= lr g / (sqrt(v) + offset)
    lr, d, off = 0.01, 0.99, 1e-8
    opt = R.RMSprop(lr, d, off)
    g1, g2 = np.array([2.0, -0.5]), np.array([1.0, 0.3])
    p1 = opt.step(np.zeros(2), g1)
    v1 = (1 - d) * g1**2
    np.testing.assert_allclose(p1, -lr * g1 / (np.sqrt(v1) + off), rtol=1e-12)
    # first step is lr / sqrt(1 - d) = 0.1 per coordinate, whatever the gradient's size
    np.testing.assert_allclose(np.abs(p1), 0.1, rtol=1e-6)
    p2 = opt.step(p1, g2)
    v2 = d * v1 + (1 - d) * g2**2
    np.testing.assert_allclose(p2, p1 - lr * g2 / (np.sqrt(v2) + off), rtol=1e-12)


def test_adam_two_steps_closed_form():
    # Kingma & Ba 2015, Alg. 1 with bias correction (PyTorch's placement of the offset)
    lr, (d1, d2), off = 1e-3, (0.9, 0.999), 1e-8
    opt = R.Adam(lr, (d1, d2), off)
    g1, g2 = np.array([3.0, -0.2]), np.array([-1.0, 0.6])
    p1 = opt.step(np.ones(2), g1)
    np.testing.assert_allclose(p1, 1 - lr * g1 / (np.abs(g1) + off), rtol=1e-12)  # m^ = g, v^ = g^2
    m = d1 * (1 - d1) * g1 + (1 - d1) * g2
    v = d2 * (1 - d2) * g1**2 + (1 - d2) * g2**2
    m_hat, v_hat = m / (1 - d1**2), v / (1 - d2**2)
    np.testing.assert_allclose(opt.step(p1, g2), p1 - lr * m_hat / (np.sqrt(v_hat) + off), rtol=1e-12)


@pytest.mark.parametrize("name", R.OPTIMIZERS)
def test_peek_does_not_advance_state(name):
    opt = R.make_optimizer(replace(SMALL, optimizer=name))
    assert opt.name == name
    p, g = np.array([0.3, -0.1]), np.array([0.2, 0.4])
    opt.step(p, g)
    first = opt._peek(p, -g)
    np.testing.assert_array_equal(first, opt._peek(p, -g))
    np.testing.assert_array_equal(first, opt.step(p, -g))


# ---------------------------------------------------------------------------------------------------
# references, computed


def test_reference_returns_match_the_reported_values():
    ref = R.reference_returns(20_000, seed=0)
    for name in ("move_to_middle", "random"):
        # reported to 0.1: within rounding 0.05 plus 4 standard errors of the Monte Carlo mean
        mean, se = ref[name]["mean"], ref[name]["standard_error"]
        assert abs(mean - R.REPORTED_RETURNS[name]) < 0.05 + 4 * se, (name, mean, se)


def test_move_to_middle_is_the_optimum_by_dynamic_programming():
    # finite-horizon value iteration (50 steps, no discount) on a grid with the exact move law
    # U[0, 0.25] by midpoint quadrature; the optimal expected return from s0 ~ U[0, 1] agrees with the
    # move-to-middle policy's 20.7 up to discretisation (0.05) - no policy does noticeably better
    grid = np.linspace(0.0, 1.0, 801)
    moves = (np.arange(80) + 0.5) / 80 * 0.25
    nxt = {a: np.clip(grid[:, None] + sign * moves[None, :], 0, 1) for a, sign in ((0, -1), (1, 1))}
    value = np.zeros(grid.size)
    for _ in range(50):
        q = [np.mean(0.5 - np.abs(nxt[a] - 0.5) + np.interp(nxt[a], grid, value), axis=1) for a in (0, 1)]
        value = np.maximum(q[0], q[1])
    optimum = float(np.trapezoid(value, grid) if hasattr(np, "trapezoid") else np.trapz(value, grid))
    assert abs(optimum - R.REPORTED_RETURNS["move_to_middle"]) < 0.05 + 0.05
    mid = R.reference_returns(20_000, seed=1)["move_to_middle"]
    assert optimum - mid["mean"] < 0.05 + 4 * mid["standard_error"]


# ---------------------------------------------------------------------------------------------------
# the loop


def test_deterministic_under_a_seed_and_seed_matters():
    cfg = replace(SMALL, sigma=0.4)
    a = R.train_replay(cfg, seed=3)
    b = R.train_replay(cfg, seed=3)
    np.testing.assert_array_equal(a.episode_returns, b.episode_returns)
    np.testing.assert_array_equal(a.q.get_params(), b.q.get_params())
    c = R.train_replay(cfg, seed=4)
    assert not np.array_equal(a.episode_returns, c.episode_returns)


def test_noise_changes_the_run_and_every_schedule_runs():
    base = R.train_replay(SMALL, seed=0)
    noisy = {reset: R.train_replay(replace(SMALL, sigma=0.5, noise_reset=reset), seed=0)
             for reset in R.NOISE_RESETS}
    for run in noisy.values():
        assert run.episode_returns.shape == (SMALL.episodes,)
        assert not np.array_equal(run.q.get_params(), base.q.get_params())
    assert base.updates == SMALL.steps - SMALL.batch_size + 1


@pytest.mark.parametrize("reset", R.NOISE_RESETS)
def test_noise_values_used_are_the_paths_values(reset):
    # the loop's bookkeeping (paths revealed at every buffered state, or lazily per batch) must hand
    # the update exactly the stored path values at the batch's states
    cfg = replace(SMALL, sigma=0.3, noise_reset=reset)
    noise = RS.ReplayPaths(cfg, np.random.default_rng(0), 16)
    rng = np.random.default_rng(1)
    S, S2 = rng.uniform(0, 1, 16), rng.uniform(0, 1, 16)
    for i in range(10):
        noise.pushed(i, S[i], S2[i])
    noise.reset(S, S2, 10)
    for i in range(10, 16):
        noise.pushed(i, S[i], S2[i])
    idx = rng.choice(16, 8, replace=False)
    acts = rng.integers(0, 2, 8)
    live = np.arange(8) % 3 != 0
    g, h = noise.batch(idx, S[idx], acts, S2[idx][live], live)
    want_g = np.array([noise.policy[a].sample(S[i]) for i, a in zip(idx, acts)])
    np.testing.assert_array_equal(g, want_g)
    np.testing.assert_array_equal(h, noise.target.sample_all(S2[idx][live]).T)
    assert np.all(g != 0) and np.std(g) > 0


def test_the_loop_learns_without_noise():
    # 40 episodes (2000 steps), 5 seeds, mean return of the last 10 episodes per seed.
    # A policy no better than random returns 10.86 per episode with sd 2.7 (reference_returns), so the
    # mean of 50 such episodes has se 0.38; exceeding random + 5 (13 se) would have probability far
    # below 1e-9. The learner reaches 20.35 here (seeds 0-4, measured once); the optimum is 20.7.
    cfg = R.ReplayConfig(episodes=40)
    curves = R.replay_curves((0.0,), range(5), config=cfg, n_jobs=1)
    last = curves["non-private"][:, -10:].mean()
    assert last > R.REPORTED_RETURNS["random"] + 5.0
    assert last < R.REPORTED_RETURNS["move_to_middle"] + 1.0  # cannot beat the optimum beyond noise


def test_curves_do_not_depend_on_the_number_of_jobs():
    pytest.importorskip("joblib")
    one = R.replay_curves((0.0, 0.3), (0, 1), config=SMALL, n_jobs=1)
    two = R.replay_curves((0.0, 0.3), (0, 1), config=SMALL, n_jobs=2)
    assert list(one) == ["non-private", "sigma=0.3"]
    for label in one:
        assert one[label].shape == (2, SMALL.episodes)
        np.testing.assert_array_equal(one[label], two[label])
    alone = R.train_replay(replace(SMALL, sigma=0.3), seed=0)
    np.testing.assert_array_equal(one["sigma=0.3"][0], alone.episode_returns)


@pytest.mark.parametrize("name", ["adam", "sgd"])
def test_other_optimizers_run(name):
    run = R.train_replay(replace(SMALL, optimizer=name, lr=1e-3), seed=0)
    assert np.all(np.isfinite(run.episode_returns))


def test_result_is_labelled_without_guarantee_and_serialises():
    run = R.train_replay(replace(SMALL, sigma=0.2), seed=0, measure_sensitivity=True)
    d = run.to_dict()
    json.dumps(d)
    assert d["loop"] == "replay"
    assert "no valid guarantee" in d["guarantee"] and d["epsilon"] is None
    assert d["update_sensitivities"]["count"] == run.updates
    assert set(run.timings) >= {"env", "act", "noise", "update", "sensitivity"}
    # measuring only peeks at the optimiser: the run itself is the same as without measuring
    plain = R.train_replay(replace(SMALL, sigma=0.2), seed=0)
    np.testing.assert_array_equal(run.episode_returns, plain.episode_returns)


def test_sensitivity_witness():
    # RMSprop moves every coordinate by up to lr / sqrt(1 - d) whatever the gradient's size, so
    # r versus r +- 1 changes Q visibly; plain SGD with a tiny step cannot (|dQ| <= lr |grad| |grad Q|)
    rms = R.train_replay(SMALL, seed=0, measure_sensitivity=True).update_sensitivities
    assert rms.shape == (SMALL.updates,) and np.all(rms >= 0)
    assert np.median(rms) > 1e-2
    sgd = R.train_replay(replace(SMALL, optimizer="sgd", lr=1e-9), seed=0, measure_sensitivity=True)
    assert sgd.update_sensitivities.max() < 1e-6


# ---------------------------------------------------------------------------------------------------
# privacy report


def _uses_brute_force(T, B, cap):
    expected, most = np.zeros(T), np.zeros(T, dtype=int)
    for t in range(1, T + 1):
        for u in range(1, T + 1):
            if u >= B and t <= u <= t + cap - 1:
                expected[t - 1] += B / min(u, cap)
                most[t - 1] += 1
    return expected, most


@pytest.mark.parametrize("episodes,steps,batch,cap", [(3, 5, 2, 4), (4, 5, 3, 20), (2, 7, 5, 5)])
def test_reward_uses_against_brute_force(episodes, steps, batch, cap):
    cfg = R.ReplayConfig(episodes=episodes, episode_steps=steps, batch_size=batch, buffer_size=cap)
    expected, most = RV.reward_uses(cfg)
    want_e, want_m = _uses_brute_force(cfg.steps, batch, cap)
    np.testing.assert_allclose(expected, want_e)
    np.testing.assert_array_equal(most, want_m)
    # every update reads B rewards: total expected uses = updates * B
    assert expected.sum() == pytest.approx(cfg.updates * batch)


def test_report_of_the_authors_configuration():
    rep = R.replay_privacy_report(R.ReplayConfig(sigma=0.4))
    assert rep.updates == 4873 and rep.steps == 5000  # 5000 - 128 + 1
    # the first transition is read by update u w.p. 128/u for u = 128..5000: 128 (H_5000 - H_127)
    first = 128 * sum(1.0 / u for u in range(128, 5001))
    assert rep.reward_uses_expected_max == pytest.approx(first)
    assert rep.reward_uses_expected_mean == pytest.approx(4873 * 128 / 5000)
    assert rep.reward_uses_max == 4873
    assert rep.noise_paths == 100 and rep.updates_per_path_max == 50
    assert not rep.valid_guarantee
    assert set(rep.failed) == {p.name for p in rep.premises}  # every premise fails
    assert "NO valid guarantee" in rep.describe()
    json.dumps(rep.to_dict())


def test_report_fresh_noise_premise_follows_the_schedule():
    rep = R.replay_privacy_report(replace(SMALL, sigma=0.4, noise_reset="update"))
    fresh = [p for p in rep.premises if p.name.startswith("fresh")][0]
    assert fresh.holds and rep.updates_per_path_max == 1
    assert not rep.valid_guarantee and len(rep.failed) == len(rep.premises) - 1
    never = R.replay_privacy_report(replace(SMALL, sigma=0.4, noise_reset="never"))
    assert never.updates_per_path_max == SMALL.updates


def test_sigma_lower_bound_is_the_composed_gaussian():
    cfg = replace(SMALL, sigma=0.4)
    d = np.full(cfg.updates, 0.5)
    rep = R.replay_privacy_report(cfg, epsilon=1.0, delta=1e-5, update_sensitivities=d)
    total = 0.5 * math.sqrt(cfg.updates)  # K equal Gaussian releases = one of sensitivity sqrt(K) d
    assert rep.sensitivity_total == pytest.approx(total)
    assert rep.sigma_needed_lower_bound == pytest.approx(gaussian.sigma_exact(1.0, 1e-5, sensitivity=total))
    assert rep.sigma_needed_lower_bound > cfg.sigma
    assert R.replay_privacy_report(cfg).sigma_needed_lower_bound is None


# ---------------------------------------------------------------------------------------------------
# bad input


@pytest.mark.parametrize("field,value", [
    ("sigma", -0.1), ("beta", 0.0), ("noise_reset", "sometimes"), ("episodes", 0), ("batch_size", 0),
    ("batch_size", 10_000), ("buffer_size", 64), ("optimizer", "lbfgs"), ("lr", -1.0),
    ("rmsprop_decay", 1.0), ("adam_decays", (0.9,)), ("optimizer_offset", 0.0), ("grad_clamp", 0.0),
    ("huber_threshold", -1.0), ("gamma", 1.0), ("target_update", 0), ("hidden", (0,)),
    ("activation", "gelu"), ("exploration_start", 1.5), ("exploration_decay", 0.0),
    ("bootstrap_last", "yes"), ("sampler", "exact"),
])
def test_bad_config_raises_naming_the_field(field, value):
    name = field.split("[")[0]
    with pytest.raises(ValueError, match=name if field != "hidden" else "hidden"):
        R.ReplayConfig(**{field: value})


def test_bad_arguments_raise():
    with pytest.raises(ValueError, match="config"):
        R.train_replay("paper")
    with pytest.raises(ValueError, match="measure_sensitivity"):
        R.train_replay(SMALL, measure_sensitivity="yes")
    with pytest.raises(ValueError, match="seed"):
        R.train_replay(SMALL, seed=-1)
    with pytest.raises(ValueError, match="threshold"):
        R.huber_loss(1.0, threshold=0.0)
    with pytest.raises(ValueError, match="grads"):
        R.SGD(0.1).step(np.zeros(2), np.zeros(3))
    with pytest.raises(ValueError, match="delta"):
        R.replay_privacy_report(SMALL, epsilon=1.0)
    with pytest.raises(ValueError, match="update_sensitivities"):
        R.replay_privacy_report(SMALL, epsilon=1.0, delta=1e-5, update_sensitivities=[0.1, 0.2])
    with pytest.raises(ValueError, match="seeds"):
        R.replay_curves((0.0,), (-1,), config=SMALL, n_jobs=1)
    with pytest.raises(ValueError, match="episodes"):
        R.reference_returns(1)


# ---------------------------------------------------------------------------------------------------
# the authors' sampler: its laws in closed form, term by term


class _FixedNormals:
    """A generator stand-in whose standard normals are a fixed value: the sample is then mean + value * sd."""

    def __init__(self, value):
        self.value = value

    def standard_normal(self, size):
        return np.full(size, float(self.value))


def _sampler(points, values, beta=2.0, sigma=0.5, z=0.0):
    smp = R.AuthorsNoiseSampler(beta, sigma, seed=0)
    smp._rng = _FixedNormals(z)
    for x, v in zip(points, values):  # an empty sampler draws sigma * z: set the stored values directly
        smp._xs.append(x)
        smp._vs.append(np.asarray(v, dtype=float))
    return smp


@pytest.mark.parametrize("z", [0.0, 1.0])
def test_authors_sampler_left_and_between_are_the_exact_conditional_laws(z):
    from privcal.analysis.noise.laws import bridge_law, step_law

    beta, sigma = 2.0, 0.5
    smp = _sampler([0.3, 0.7], [(0.2, -0.4), (0.6, 0.1)], beta, sigma, z)
    left = smp.sample(0.1)
    mean, var = step_law(0.1, 0.3, np.array([0.2, -0.4]), beta, sigma)  # the AR(1) step, privcal's own law
    np.testing.assert_allclose(left, mean + z * np.sqrt(var), rtol=1e-12, atol=1e-15)
    mid = smp.sample(0.45)
    mean, var = bridge_law(0.45, 0.3, np.array([0.2, -0.4]), 0.7, np.array([0.6, 0.1]), beta, sigma)
    np.testing.assert_allclose(mid, mean + z * np.sqrt(var), rtol=1e-12, atol=1e-15)
    assert np.array_equal(smp.sample(0.45), mid) and len(smp) == 4  # stored, in sorted order
    assert smp._xs == [0.1, 0.3, 0.45, 0.7]


def test_authors_sampler_right_extrapolation_conditions_on_the_first_value():
    # right of the largest state 0.7, the mean is k(s, 0.7) times the value at the SMALLEST state 0.3 (the
    # authors' buffer[0]), not at 0.7: k = exp(-2 * 0.2) = 0.670320 (closed form), sd sigma sqrt(1 - k^2)
    beta, sigma = 2.0, 0.5
    k = math.exp(-beta * 0.2)
    for z in (0.0, 1.0):
        smp = _sampler([0.3, 0.7], [(0.2, -0.4), (0.6, 0.1)], beta, sigma, z)
        right = smp.sample(0.9)
        want = k * np.array([0.2, -0.4]) + z * sigma * math.sqrt(1 - k * k)
        np.testing.assert_allclose(right, want, rtol=1e-12)
        assert not np.allclose(right, k * np.array([0.6, 0.1]) + z * sigma * math.sqrt(1 - k * k))
    smp.reset()
    assert len(smp) == 0
    with pytest.raises(ValueError, match="s must be in"):
        smp.sample(1.5)


def test_authors_sampler_first_value_and_marginal_variance():
    # the first state is N(0, sigma^2) per action; a second draw to the right of it has the marginal variance
    # sigma^2 (k^2 sigma^2 + sigma^2 (1 - k^2)): Monte Carlo over 4,000 fresh samplers (seed 7), the sample
    # variance of 4,000 normals is within 4 % of sigma^2 = 0.25 with probability > 0.99 (sd sqrt(2/4000) = 2.2 %)
    draws = []
    rng = np.random.default_rng(7)
    for _ in range(4000):
        smp = R.AuthorsNoiseSampler(1.0, 0.5, seed=rng)
        smp.sample(0.2)
        draws.append(smp.sample(0.6))
    var = np.var(np.array(draws), axis=0)
    assert np.all(np.abs(var / 0.25 - 1) < 0.06)


def test_authors_sampler_runs_the_loop_and_is_labelled():
    cfg = replace(SMALL, sigma=0.3, sampler="authors")
    a = R.train_replay(cfg, seed=2)
    assert np.array_equal(a.episode_returns, R.train_replay(cfg, seed=2).episode_returns)
    b = R.train_replay(replace(cfg, sampler="privcal"), seed=2)
    assert not np.array_equal(a.episode_returns, b.episode_returns)
    d = a.to_dict()
    assert d["sampler"].startswith("authors:") and "not the paper" in d["sampler"]
    assert d["config"]["sampler"] == "authors" and d["guarantee"] == R.GUARANTEE
    assert R.train_replay(SMALL, seed=2).to_dict()["sampler"] is None  # no noise, no sampler


def test_authors_sampler_is_queried_in_the_codes_order():
    # policy network at the batch's states in batch order, then the target network at the live next states
    cfg = replace(SMALL, sigma=0.3, sampler="authors")
    noise = RS.ReplayPaths(cfg, np.random.default_rng(0), 16)
    S = np.array([0.5, 0.1, 0.9, 0.3])
    acts = np.array([0, 1, 1, 0])
    live = np.array([True, False, True, True])
    g, h = noise.batch(np.arange(4), S, acts, S[live] * 0.5, live)
    assert noise.policy._xs == sorted(S.tolist()) and noise.target._xs == sorted((S[live] * 0.5).tolist())
    np.testing.assert_array_equal(g, [noise.policy.sample(x)[a] for x, a in zip(S, acts)])
    assert h.shape == (3, 2)
