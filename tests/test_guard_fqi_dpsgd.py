"""The episode unit of privcal.rl.dpq.fqi_dpsgd clips each episode in the training loop itself.

tests/test_rl_learners.py checks :func:`clipped_gradient_sum` (the helper); these tests run
:func:`train_fqi_dpsgd`, the code that uses it, in a setting where clipping each transition instead of each
episode would move the released weights by several times the clip.
"""

from __future__ import annotations

import numpy as np
import pytest

from privcal.rl.dpq import fqi_dpsgd as Q


def _one_step(unit: str, clip: float, episodes: int = 1) -> Q.FQIResult:
    """One non-private DP-SGD step (the same clipping, no noise) over all records (q = 1), from w = 0."""
    records = episodes if unit == "episode" else 50 * episodes
    cfg = Q.FQIConfig(iterations=1, steps=1, batch=float(records), clip=clip, lr=1.0)
    return Q.train_fqi_dpsgd(epsilon=None, delta=None, privacy_unit=unit, episodes=episodes, config=cfg, peak=0.5,
                             evaluation_episodes=2, seed=0)


def test_one_episode_moves_the_trained_weights_by_exactly_the_clip():
    # One episode, one step, q = 1, lr = 1, w_0 = 0: w_1 = -(clipped gradient of the episode) / 1. From w = 0 every
    # transition's gradient is -r phi(s) in its action's block (r >= 0, phi >= 0: all entries <= 0, pairwise
    # aligned), so the episode's summed gradient has norm >= |r| ||phi|| of each of its transitions; at C = 1e-3
    # it exceeds C and the clip binds: ||w_1|| = C (closed form). Clipping each of the 50 transitions to C
    # instead would give ||w_1|| >= sqrt(k) C, k the transitions with r > 0 (aligned vectors of norm C).
    clip = 1e-3
    res = _one_step("episode", clip)
    assert res.records == 1 and res.sample_rate == 1.0 and res.noisy_steps == 0
    assert np.linalg.norm(res.weights) == pytest.approx(clip, rel=1e-9)


def test_a_batch_of_episodes_moves_the_trained_weights_by_at_most_the_clip():
    # 8 episodes, q = 1: w_1 = -(sum of 8 clipped episode gradients) / 8, so ||w_1|| <= C (triangle inequality)
    clip = 1e-3
    res = _one_step("episode", clip, episodes=8)
    assert res.records == 8
    assert np.linalg.norm(res.weights) <= clip * (1 + 1e-12)


def test_the_transition_unit_clips_each_transition():
    # the same data at the transition unit: 50 records of norm <= C each, w_1 = -(their clipped sum) / 50, so
    # ||w_1|| <= C; the episode's transitions are aligned (see above), so the bound is nearly reached:
    # ||w_1|| >= sqrt(k) C / 50 with k >= 1 transitions clipped (the reward is 0 only at s' in {0, 1})
    clip = 1e-3
    res = _one_step("transition", clip)
    assert res.records == 50
    assert clip / 50 <= np.linalg.norm(res.weights) <= clip * (1 + 1e-12)


def _unclipped_step(unit: str, episodes: int) -> Q.FQIResult:
    records = episodes if unit == "episode" else 50 * episodes
    cfg = Q.FQIConfig(iterations=1, steps=1, batch=float(records), clip=1e6, lr=1.0)
    return Q.train_fqi_dpsgd(epsilon=None, delta=None, privacy_unit=unit, episodes=episodes, config=cfg, peak=0.5,
                             evaluation_episodes=2, seed=3)


def test_every_record_is_in_the_batch_at_sample_rate_1():
    # q = 1 and a clip no gradient reaches: w_1 = -(sum of every transition's gradient) / (q N), the same sum for
    # both units on the same data (seed 3), N = 4 episodes or 200 transitions: exactly 50 times apart
    # (closed form). A record left out of the batch, or a batch drawn at another rate, breaks the ratio.
    ep, tr = _unclipped_step("episode", 4), _unclipped_step("transition", 4)
    assert ep.sample_rate == tr.sample_rate == 1.0 and np.any(ep.weights != 0.0)
    np.testing.assert_allclose(ep.weights, 50.0 * tr.weights, rtol=1e-12, atol=1e-15)


def test_the_noise_of_a_step_has_the_calibrated_sigma():
    # One private step (q = 1, one episode, lr = 1, w_0 = 0): w_1 = -(clipped + sigma z), z ~ N(0, I_22), and the
    # clipped part has norm <= C while sigma is 244 C at epsilon = 0.01 (one Gaussian release, exact profile): the 22
    # coordinates of -w_1 / sigma are N(0, 1) up to a shift of norm <= 1/244. 60 seeds x 22 = 1320 draws: the
    # sample std has standard error about 2 %; the bound 12 % is 6 standard errors (and 29 times the shift).
    cfg = Q.FQIConfig(iterations=1, steps=1, batch=1.0, clip=1.0, lr=1.0)
    runs = [Q.train_fqi_dpsgd(epsilon=0.01, delta=1e-5, privacy_unit="episode", episodes=1, config=cfg, peak=0.5,
                              evaluation_episodes=2, seed=s) for s in range(60)]
    sigma = runs[0].sigma
    assert all(r.sigma == sigma and r.noisy_steps == 1 for r in runs) and sigma > 200.0
    z = np.concatenate([-r.weights.ravel() / sigma for r in runs])
    assert abs(np.std(z) - 1.0) < 0.12


def test_policy_return_is_evaluated_on_the_documented_seed():
    # the module docstring: policy_return simulates evaluation_episodes episodes of the released greedy policy
    # with seed [seed, 21]; recomputed here from the released weights
    from privcal.rl import envs

    res = Q.train_fqi_dpsgd(epsilon=None, delta=None, episodes=2, config=Q.FQIConfig(iterations=1, steps=2),
                            peak=0.5, evaluation_episodes=20, seed=4)
    value, se = envs.policy_return(res.greedy_actions, 0.5, episodes=20, seed=[4, 21])
    assert (res.policy_return, res.policy_return_se) == (value, se)


def _transitions(episodes: int, seed: int = 4) -> dict:
    """``episodes`` random-behaviour episodes at peak 0.5, flattened to transitions (shape (50 episodes,))."""
    return {k: v.reshape(-1) for k, v in Q.collect(episodes, 0.5, seed=seed).items()}


def test_an_added_record_moves_one_step_by_its_own_clipped_gradient_over_the_public_batch():
    # An adversarial add/remove pair: D with N = 100 transitions and D' = D plus one transition x (N + 1 = 101),
    # trained with the same public size N_pub = 100 (the budget, 2 episodes), one step, b = N_pub (q = 1), lr = 1,
    # no noise, from w = 0 (the targets y = r are the same for both). Then w(D) - w(D') = g_x / (q N_pub) exactly,
    # g_x the clipped gradient of x alone (closed form): every shared record contributes the same term to both.
    # Normalising by the private q N instead would divide D's sum by 100 and D''s by 101, so every shared record
    # would move the difference too, and the sampling rate b / N would differ between the pair (1 and 100/101).
    d = _transitions(2)
    x = {k: v[1:2] for k, v in _transitions(1, seed=9).items()}  # s' = 0.82: reward 0.18 > 0
    d_plus = {k: np.concatenate([d[k], x[k]]) for k in d}
    cfg = Q.FQIConfig(iterations=1, steps=1, batch=100.0, clip=0.3, lr=1.0)
    run = {name: Q.train_fqi_dpsgd(epsilon=None, delta=None, privacy_unit="transition", episodes=2, config=cfg,
                                   peak=0.5, evaluation_episodes=2, seed=0, data=data)
           for name, data in (("D", d), ("D'", d_plus))}
    assert run["D"].records == 100 and run["D'"].records == 101  # the private sizes differ
    assert run["D"].sample_rate == run["D'"].sample_rate == 1.0  # min(1, b / N_pub), N_pub = 100 for both
    assert run["D"].step_normaliser == run["D'"].step_normaliser == 100.0
    assert run["D"].public_size == run["D'"].public_size == 100
    phi = Q.features(x["s"])
    g_x, _ = Q.clipped_gradient_sum(np.zeros((2, 11)), phi, x["a"], x["r"], 0.3)
    assert np.linalg.norm(g_x) > 0  # from w = 0 the gradient is -r phi(s), r > 0 here
    np.testing.assert_allclose(run["D"].weights - run["D'"].weights, g_x / 100.0, rtol=0, atol=1e-15)


def test_the_accounted_sample_rate_is_the_sampler_s_and_comes_from_public_numbers():
    # the same pair at epsilon 2: sigma is calibrated at the q the sampler runs (b / N_pub = 25 / 100), the same for
    # both data sets; a public size given explicitly moves q (and sigma) and the report names where q came from
    d = _transitions(2)
    d_plus = {k: np.concatenate([d[k], d[k][:1]]) for k in d}
    cfg = Q.FQIConfig(iterations=1, steps=5, batch=25.0)
    a, b = (Q.train_fqi_dpsgd(epsilon=2.0, delta=1e-5, episodes=2, config=cfg, peak=0.5, evaluation_episodes=2,
                              seed=0, data=data) for data in (d, d_plus))
    assert a.sample_rate == b.sample_rate == 0.25 and a.sigma == b.sigma and a.step_normaliser == 25.0
    import privcal

    # closed-form round trip: the accountant, asked about the run's own (sigma, q, steps), gives at most epsilon
    assert privcal.epsilon(a.sigma, 1e-5, steps=5, sample_rate=0.25) <= 2.0 * (1 + 1e-9)
    c = Q.train_fqi_dpsgd(epsilon=2.0, delta=1e-5, episodes=2, config=cfg, peak=0.5, evaluation_episodes=2, seed=0,
                          data=d, public_size=250)
    assert c.sample_rate == 0.1 and c.step_normaliser == pytest.approx(25.0) and c.sigma < a.sigma
    assert "public size N_pub = 100 transitions (the data budget" in a.to_dict()["sample_rate_source"]
    assert "N_pub = 250 transitions (given as public)" in c.to_dict()["sample_rate_source"]
    with pytest.raises(ValueError, match="data arrays"):
        Q.train_fqi_dpsgd(epsilon=None, delta=None, privacy_unit="episode", episodes=2, data=d)


def test_the_run_settings_give_the_keyword_calls_run():
    # FQIRun holds train_fqi_dpsgd's defaults: the settings object gives the keyword call's run (independent: the
    # keyword call itself, same seed), keywords replace its fields, a name that is no field is refused
    cfg = Q.FQIConfig(iterations=1, steps=2)
    a = Q.train_fqi_dpsgd(epsilon=2.0, delta=1e-5, privacy_unit="episode", episodes=2, config=cfg, peak=0.5,
                          evaluation_episodes=2, seed=4)
    b = Q.train_fqi_dpsgd(Q.FQIRun(privacy_unit="episode", episodes=2, peak=0.5, evaluation_episodes=2, seed=9),
                          epsilon=2.0, delta=1e-5, config=cfg, seed=4)
    np.testing.assert_array_equal(a.weights, b.weights)
    assert a.to_dict() == b.to_dict()
    with pytest.raises(TypeError, match="unexpected keyword argument 'unit'"):
        Q.train_fqi_dpsgd(epsilon=None, delta=None, unit="episode")
