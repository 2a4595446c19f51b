"""Tests of privcal.rl.ucbvi: Private-UCB-VI's bonus, its counters' error bound, its JDP noise, exact regret and
the seeded regret experiment (small settings: the full ones are in docs/ucbvi.md)."""

import math

import numpy as np
import pytest
from scipy.stats import chi2, norm

from privcal.analysis.counter import gaussian_error_bound, gaussian_sigma, error_bound as laplace_error_bound
from privcal.analysis.gaussian import delta_exact
from privcal.rl.pucb.experiments import make_mdp
from privcal.rl.pucb.tabular import backward_induction, random_mdp
from privcal.rl.ucbvi import (
    PrivateUCBVI,
    bonus,
    confidence_log,
    counter_error_bound,
    counter_noise_scale,
    covered_streams,
    episode_inputs,
    optimistic_q,
    run_ucbvi,
    transition_factor,
)
from privcal.rl.ucbvi.experiments import regret_experiment, t_interval

S, A, H = 3, 2, 3


def _popcount_failure(bound, steps, sigma, streams):
    """Union-bound failure probability of `streams` Gaussian tree counters at `bound`, summed round by round
    (an implementation independent of privcal.analysis.counter: popcount by bin(t), Gaussian tail by scipy)."""
    return streams * sum(2.0 * norm.sf(bound / (sigma * math.sqrt(bin(t).count("1")))) for t in range(1, steps + 1))


# ------------------------------------------------------------------------------------------- the bonus

def test_bonus_closed_form():
    # b = (1 + W) sqrt(L / (2D)) + (3 + (2 + F) W) E / D at D = 100, E = 10, L = 5, F = 2, W = 2:
    # 3 sqrt(5/200) + 11 * 10 / 100 = 0.474341649 + 1.1 (closed form, by hand)
    assert bonus(100.0, 10.0, 5.0, 2.0, 2.0) == pytest.approx(3 * math.sqrt(0.025) + 1.1, rel=1e-12)
    # no estimate below D = 1: infinite bonus (the Q value then takes its cap H - h)
    assert np.isinf(bonus(0.5, 10.0, 5.0, 2.0, 2.0))


def test_confidence_log_and_transition_factor_closed_form():
    # L = ln(4 S A H T / beta) = ln(4 * 3 * 2 * 3 * 100 / 0.1) = ln(72000) (union of 2SAHT one-sided events at beta/2)
    assert confidence_log(3, 2, 3, 100, 0.1) == pytest.approx(math.log(72000.0), rel=1e-14)
    # F: S errors added for Laplace counters, one Gaussian weighted sum (|V*|_2 <= sqrt(S) W) for Gaussian ones
    assert transition_factor(16, "laplace") == 16.0 and transition_factor(16, "gaussian") == 4.0
    # streams the union bound covers: 3 S A H (Gaussian) against all 2SAH + S^2AH counters (Laplace)
    assert covered_streams(3, 2, 3, "gaussian") == 54 and covered_streams(3, 2, 3, "laplace") == 90


def test_optimistic_q_by_hand_one_step():
    # H = 1, S = 1, A = 1: W = 0, so Q = min{1, R~/D + sqrt(L/(2D)) + 3E/D} with D = N~ + E
    # R~ = 40, N~ = 90, E = 10, L = 2: 40/100 + sqrt(2/200) + 30/100 = 0.4 + 0.1 + 0.3 (by hand)
    q = optimistic_q(np.array([[[40.0]]]), np.array([[[90.0]]]), np.array([[[[90.0]]]]), 10.0, 2.0, 1.0)
    assert q[0, 0, 0] == pytest.approx(0.8, rel=1e-12)
    # D < 1 (no certified visit): the cap H - h = 1
    q = optimistic_q(np.array([[[0.0]]]), np.array([[[-20.0]]]), np.array([[[[0.0]]]]), 10.0, 2.0, 1.0)
    assert q[0, 0, 0] == 1.0


def test_agent_error_bound_is_the_valid_union_bound():
    # the width of the bonus: E solves streams * sum_t 2 Phi(-E / (sigma sqrt(popcount t))) = beta / 2 over the
    # 3 S A H covered streams. Recomputed independently here; a smaller E would fail the first inequality.
    t, beta = 300, 0.1
    agent = PrivateUCBVI(S, A, H, t, epsilon=3.0, delta=1e-5, failure_probability=beta, seed=0)
    streams = 3 * S * A * H
    e = agent.error_bound
    assert e == gaussian_error_bound(t, agent.noise_scale, beta / 2, counters=streams)
    assert _popcount_failure(e, t, agent.noise_scale, streams) <= beta / 2 * (1 + 1e-9)
    assert _popcount_failure(0.99 * e, t, agent.noise_scale, streams) > beta / 2
    # Laplace counters: the union bound over all K = 2SAH + S^2AH counters at epsilon' = epsilon / (6H)
    lap = PrivateUCBVI(S, A, H, t, epsilon=3.0, failure_probability=beta, seed=0, counter_noise="laplace")
    assert lap.error_bound == laplace_error_bound(t, 3.0 / (6 * H), beta / 2, counters=90)
    # its guarantee: 6H streams at epsilon / (6H) each, so epsilon-JDP exactly (basic composition), delta 0
    assert lap.jdp_epsilon == pytest.approx(3.0, rel=1e-12) and lap.jdp_delta == 0.0
    assert counter_error_bound(agent.noise_scale, S, A, H, t, beta) == e


def test_the_agent_plans_with_the_valid_width():
    # the agent's Q on its own releases is optimistic_q with the independently computed E (not a smaller one):
    # after 64 episodes at a large epsilon some Q values are below their cap, so the width shows in Q
    mdp = random_mdp(S, A, H, seed=3)
    t = 64
    agent = PrivateUCBVI(S, A, H, t, epsilon=2000.0, delta=1e-5, seed=1)
    rng = np.random.default_rng(2)
    from privcal.rl.pucb.tabular import EpisodeSampler

    sampler = EpisodeSampler(mdp)
    for _ in range(t):
        agent.observe(*sampler.sample(agent.policy(), rng))
    rel = agent.releases
    e_valid = gaussian_error_bound(t, agent.noise_scale, 0.05, counters=3 * S * A * H)
    lt = math.log(4 * S * A * H * t / 0.1)
    q = agent.q_values()
    np.testing.assert_allclose(q, optimistic_q(rel["rewards"], rel["counts"], rel["transitions"], e_valid, lt,
                                               math.sqrt(S)), rtol=0, atol=1e-12)
    caps = (H - np.arange(H))[:, None, None]
    assert np.any(q < caps - 1e-6)  # the width is visible: a smaller E would give a different Q
    q_small = optimistic_q(rel["rewards"], rel["counts"], rel["transitions"], 0.9 * e_valid, lt, math.sqrt(S))
    assert not np.allclose(q, q_small)


def test_optimism_holds_along_a_run():
    # Q^_h >= Q*_h for every h, s, a at every episode (probability >= 1 - beta = 0.9; fixed seed)
    mdp = make_mdp("random", S, A, H, seed=0)
    q_star = backward_induction(mdp).q
    from privcal.rl.pucb.tabular import EpisodeSampler

    for eps in (5.0, 1000.0):
        agent = PrivateUCBVI(S, A, H, 400, epsilon=eps, delta=1e-5, seed=4)
        sampler, rng = EpisodeSampler(mdp), np.random.default_rng(5)
        for _ in range(400):
            q = agent.q_values()
            assert np.all(q >= q_star - 1e-12)
            agent.observe(*sampler.sample(agent.policy(q), rng))


# ------------------------------------------------------------------------------------------- the JDP noise

def test_noise_scale_is_the_calibrated_one():
    # Gaussian: privcal.analysis.counter.gaussian_sigma on 6H streams (l2 sensitivity sqrt(6 H L)); its exact profile at the
    # agent's sigma gives delta <= 1e-5 at epsilon = 2 (Balle & Wang 2018, Thm 8, privcal.analysis.gaussian.delta_exact)
    t = 1000
    sigma = counter_noise_scale(2.0, H, t, delta=1e-5)
    assert sigma == gaussian_sigma(t, 2.0, 1e-5, streams=6 * H)
    assert delta_exact(2.0, math.sqrt(6 * H * t.bit_length()) / sigma) <= 1e-5
    # Laplace: b = 6 H L / epsilon (l1 sensitivity 6 H L); L = 10 levels for T = 1000 (closed form)
    assert counter_noise_scale(2.0, H, t, counter_noise="laplace") == pytest.approx(6 * H * 10 / 2.0)
    agent = PrivateUCBVI(S, A, H, t, epsilon=2.0, delta=1e-5, seed=0)
    assert agent.jdp_epsilon <= 2.0 and agent.jdp_epsilon == pytest.approx(2.0, rel=1e-6)
    assert "episode" in agent.privacy_unit and "replace" in agent.privacy_unit


def _feed(agent, episodes):
    for ep in episodes:
        agent.observe(*ep)


def test_neighbouring_users_differ_only_through_their_own_inputs_and_the_noise():
    # two histories that differ in user 2 only (another trajectory): with the same noise seed, the releases differ
    # exactly by the change of the true counts (at most 6H streams, by at most 1 each), i.e. the privacy comes only
    # from the noise, whose scale is the calibrated sigma
    t = 8
    rng = np.random.default_rng(0)
    eps = [(rng.integers(0, S, H + 1), rng.integers(0, A, H), rng.random(H)) for _ in range(t)]
    other = list(eps)
    other[2] = (rng.integers(0, S, H + 1), rng.integers(0, A, H), rng.random(H))
    a1 = PrivateUCBVI(S, A, H, t, epsilon=1.0, delta=1e-5, seed=11)
    a2 = PrivateUCBVI(S, A, H, t, epsilon=1.0, delta=1e-5, seed=11)
    _feed(a1, eps)
    _feed(a2, other)
    moved = 0
    for name in ("rewards", "counts", "transitions"):
        exact1 = sum(episode_inputs(S, A, *e)[name] for e in eps)
        exact2 = sum(episode_inputs(S, A, *e)[name] for e in other)
        diff = a1.releases[name] - a2.releases[name]
        np.testing.assert_allclose(diff, exact1 - exact2, atol=1e-9)
        assert np.all(np.abs(diff) <= 1 + 1e-9)
        moved += int(np.sum(np.abs(diff) > 1e-12))
    assert 0 < moved <= 6 * H
    # and the noise is there: release - exact is not 0 (sigma ~ 30 at epsilon = 1)
    exact_counts = sum(episode_inputs(S, A, *e)["counts"] for e in eps)
    assert np.min(np.abs(a1.releases["counts"] - exact_counts)) > 1e-6


def test_release_error_has_the_stated_gaussian_scale():
    # at round t = 7 (popcount 3) every release error is N(0, 3 sigma^2) (the tree sums 3 independent p-sum noises);
    # over the 2SAH + S^2AH = 900 counters of S = 5, A = 2, H = 6 the sample variance lies in its chi-square 99.9 %
    # interval (fixed seed)
    s, a, h, t = 5, 2, 6, 7
    agent = PrivateUCBVI(s, a, h, 8, epsilon=1.0, delta=1e-5, seed=3)
    rng = np.random.default_rng(1)
    exact = None
    for _ in range(t):
        ep = (rng.integers(0, s, h + 1), rng.integers(0, a, h), rng.random(h))
        agent.observe(*ep)
        inputs = episode_inputs(s, a, *ep)
        exact = inputs if exact is None else {k: exact[k] + inputs[k] for k in exact}
    err = np.concatenate([(agent.releases[k] - exact[k]).ravel() for k in exact])
    n = err.size
    assert n == 2 * s * a * h + s * s * a * h
    sigma = gaussian_sigma(8, 1.0, 1e-5, streams=6 * h)  # the stated scale, from privcal.analysis.counter directly
    assert agent.noise_scale == sigma
    var = 3 * sigma ** 2
    stat = float(np.sum(err ** 2) / var)
    assert chi2.ppf(0.0005, n) < stat < chi2.ppf(0.9995, n)


# ------------------------------------------------------------------------------------------- runs and regret

def test_regret_is_exact_for_the_first_policy():
    # the run's first regret is rho* - rho^{pi_1} of the first policy, whose value an independent implementation
    # (privcal.rl.toytext.policy_value on one-hot action probabilities) computes
    from privcal.rl.toytext import optimal_value, policy_value

    mdp = make_mdp("random", S, A, H, seed=0)
    run = run_ucbvi(mdp, 5, 10.0, 1e-5, seed=7)
    first = PrivateUCBVI(S, A, H, 5, epsilon=10.0, delta=1e-5, seed=7).policy()
    onehot = np.eye(A)[first]
    v_star, _ = optimal_value(mdp)
    expected = float(mdp.initial @ v_star[0] - mdp.initial @ policy_value(mdp, onehot)[0])
    assert run.episode_regret[0] == pytest.approx(expected, abs=1e-12)
    assert run.uniform_regret == pytest.approx(0.7352936586153294, abs=1e-12)  # test_rl_toytext's exact uniform value
    assert run.max_counter_error <= run.error_bound  # the uniform bound held in this run
    record = run.to_dict()
    assert record["privacy_unit"] == "episode" and record["regret_per_episode"] == run.regret_per_episode
    assert record["counter_error_within_bound"] is True and "JDP" in record["guarantee"]


def test_nonprivate_reference_learns():
    # exact counters, E = 0: after 2000 episodes UCB-VI's mean regret is far below the uniform policy's 0.735
    run = run_ucbvi(make_mdp("random", S, A, H, seed=0), 2000, seed=0)
    assert run.error_bound == 0.0 and run.guarantee.startswith("none")
    assert run.to_dict()["privacy_unit"] is None  # no privacy, no unit
    assert run.regret_per_episode < 0.3


def test_bad_input_names_the_argument():
    with pytest.raises(ValueError, match="delta"):
        PrivateUCBVI(S, A, H, 10, epsilon=1.0, delta=1e-5, counter_noise="laplace")
    with pytest.raises(ValueError, match="delta"):
        PrivateUCBVI(S, A, H, 10, epsilon=1.0)
    with pytest.raises(ValueError, match="epsilon"):
        PrivateUCBVI(S, A, H, 10, epsilon=-1.0, delta=1e-5)
    with pytest.raises(ValueError, match="counter_noise"):
        PrivateUCBVI(S, A, H, 10, epsilon=1.0, delta=1e-5, counter_noise="uniform")
    with pytest.raises(ValueError, match="mdp"):
        run_ucbvi("frozenlake", 10)
    with pytest.raises(ValueError, match="seeds"):
        regret_experiment(seeds=(0,))


# ------------------------------------------------------------------------------------------- experiments

def test_t_interval_by_hand():
    # values 1, 2, 3: mean 2, sd 1; t_{0.975, 2} = 4.302652729749464 (scipy.stats.t.ppf; tables give 4.303)
    mean, low, high = t_interval([1.0, 2.0, 3.0])
    half = 4.302652729749464 / math.sqrt(3)
    assert (mean, low, high) == pytest.approx((2.0, 2.0 - half, 2.0 + half), rel=1e-12)


def test_regret_experiment_fast_cells():
    cells = regret_experiment("random", episodes=60, seeds=(0, 1), epsilons=(10.0,),
                              methods=("ucbvi", "pucb", "ucbvi-nonprivate"))
    assert [(c.method, c.epsilon) for c in cells] == [("ucbvi", 10.0), ("pucb", 10.0), ("ucbvi-nonprivate", None)]
    for c in cells:
        assert c.ci_low <= c.mean <= c.ci_high and len(c.regret_per_episode) == 2
        assert c.uniform_regret == pytest.approx(0.7352936586153294, abs=1e-12)
        assert c.verdict["verdict"] in ("beats", "does not beat", "cannot tell") and c.verdict["seeds"] == 2
        assert "uniform policy" in c.line()
    # a fixed seed per run: the same call gives the same numbers
    again = regret_experiment("random", episodes=60, seeds=(0, 1), epsilons=(10.0,), methods=("ucbvi",))
    assert again[0].regret_per_episode == cells[0].regret_per_episode
    assert "JDP" in cells[0].guarantee and "JDP" in cells[1].guarantee


def test_the_trusted_kernel_with_settings_is_run_ucbvi():
    # reference: run_ucbvi's own result on the same seed (same counter noise, tie-breaking and episodes)
    from privcal.rl.ucbvi import UCBVISettings, run_ucbvi_unchecked

    mdp = make_mdp("random", S, A, H, seed=0)
    a = run_ucbvi(mdp, 30, 5.0, 1e-5, failure_probability=0.2, seed=4)
    b = run_ucbvi_unchecked(mdp, 30, UCBVISettings(5.0, 1e-5, 0.2, 4, "gaussian"))
    np.testing.assert_array_equal(a.episode_regret, b.episode_regret)
    assert (a.jdp_epsilon, a.error_bound, a.guarantee) == (b.jdp_epsilon, b.error_bound, b.guarantee)
    agent = PrivateUCBVI.unchecked(S, A, H, 30, UCBVISettings(5.0, None, 0.2, 4, "laplace"))
    assert agent.error_bound == PrivateUCBVI(S, A, H, 30, epsilon=5.0, failure_probability=0.2, seed=4,
                                             counter_noise="laplace").error_bound


def test_settings_object_gives_the_keyword_call():
    # reference: the keyword call of the same run (same seed: same counter noise, tie-breaking and episodes)
    from privcal.rl.ucbvi import UCBVISettings

    mdp = make_mdp("random", S, A, H, seed=0)
    settings = UCBVISettings(epsilon=5.0, delta=1e-5, failure_probability=0.2, seed=4)
    a = run_ucbvi(mdp, 20, 5.0, 1e-5, failure_probability=0.2, seed=4)
    b = run_ucbvi(mdp, 20, settings=settings)
    np.testing.assert_array_equal(a.episode_regret, b.episode_regret)
    # a keyword, epsilon or delta given beside the settings replaces that field
    c = run_ucbvi(mdp, 20, 5.0, settings=UCBVISettings(epsilon=1.0, delta=1e-5, seed=9), seed=4,
                  failure_probability=0.2)
    np.testing.assert_array_equal(a.episode_regret, c.episode_regret)
    agent = PrivateUCBVI(S, A, H, 20, settings=settings)
    same = PrivateUCBVI(S, A, H, 20, epsilon=5.0, delta=1e-5, failure_probability=0.2, seed=4)
    assert (agent.noise_scale, agent.error_bound, agent.log_term) == (same.noise_scale, same.error_bound,
                                                                      same.log_term)
    np.testing.assert_array_equal(agent.policy(), same.policy())
    assert PrivateUCBVI(S, A, H, 20, settings=settings).jdp_epsilon == same.jdp_epsilon
    # the settings are checked as the keywords are
    with pytest.raises(ValueError, match="failure_probability"):
        run_ucbvi(mdp, 20, settings=UCBVISettings(failure_probability=1.5))
    with pytest.raises(TypeError, match="run_ucbvi\\(\\) got an unexpected keyword argument 'beta'"):
        run_ucbvi(mdp, 20, beta=0.1)
    with pytest.raises(TypeError, match="PrivateUCBVI.__init__\\(\\) got an unexpected keyword argument 'noise'"):
        PrivateUCBVI(S, A, H, 20, noise="laplace")
    with pytest.raises(TypeError, match="settings must be a UCBVISettings, got 0.2"):
        run_ucbvi(mdp, 20, 5.0, 1e-5, 0.2)  # failure_probability is a keyword: not taken for the settings
