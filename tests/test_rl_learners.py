"""Valid DP Q-learners (items 1-3 and 6): the random-peak environment and its trivial reference,
private selection (privcal.rl.dpq.select), fitted-Q iteration by DP-SGD (privcal.rl.dpq.fqi_dpsgd), privacy units,
verdicts, and ``privcal train dpq --method select|fqi-dpsgd``."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

import privcal
from privcal import cli
from privcal.rl.dpq import select as S
from privcal.rl import envs
from privcal.rl.dpq import fqi_dpsgd as Q
from privcal.rl.units import PRIVACY_UNITS, check_unit
from privcal.rl.verdict import verdict_one_run, verdict_over_seeds

R = S.SCORE_RANGE


# ------------------------------------------------------------------ environment and trivial reference


def test_reward_at_peak_one_half_is_app_e1_and_stays_in_range():
    s = np.linspace(0.0, 1.0, 101)
    np.testing.assert_array_equal(envs.reward(s), 0.5 - np.abs(s - 0.5))  # App. E.1's reward
    for theta in (0.0, 0.3, 1.0):
        r = envs.reward(s, theta)
        assert r.min() >= 0.0 and r.max() <= 0.5 and r[np.argmin(np.abs(s - theta))] == 0.5
    with pytest.raises(ValueError, match="peak must be in"):
        envs.reward(s, 1.5)


def test_expected_reward_matches_quadrature():
    from scipy.integrate import quad

    for s in (0.0, 0.1, 0.37, 0.5, 0.8, 1.0):
        # independent: numerical integral over theta ~ U[0, 1] of max(0, 0.5 - |s - theta|)
        kinks = [x for x in (s - 0.5, s, s + 0.5) if 0.0 < x < 1.0]
        num, _ = quad(lambda t: max(0.0, 0.5 - abs(s - t)), 0.0, 1.0, points=kinks or None, epsabs=1e-13)
        assert envs.expected_reward(s) == pytest.approx(num, abs=1e-10)


def _dp_values(policy_fixed: bool, n: int = 401, moves: int = 64, steps: int = 50) -> np.ndarray:
    """Finite-horizon dynamic programming for the reward g on a state grid (linear interpolation), the
    move U[0, 0.25] by the midpoint rule; optimal values, or the move-to-middle policy's."""
    grid = np.linspace(0.0, 1.0, n)
    u = (np.arange(moves) + 0.5) / moves * envs.MAX_STEP
    nxt = [np.clip(grid[:, None] - u, 0, 1), np.clip(grid[:, None] + u, 0, 1)]
    v = np.zeros(n)
    for _ in range(steps):
        q = [np.mean(envs.expected_reward(x) + np.interp(x, grid, v), axis=1) for x in nxt]
        v = np.where(grid < 0.5, q[1], q[0]) if policy_fixed else np.maximum(q[0], q[1])
    return v


def test_move_to_middle_is_the_best_data_independent_policy():
    # A policy that does not read the rewards faces the MDP with reward g = E_theta r_theta (envs docstring);
    # dynamic programming on a grid finds no policy better than move-to-middle by more than the grid's error.
    best, middle = _dp_values(False), _dp_values(True)
    assert np.max(best - middle) < 0.02  # per episode of 50 steps, out of about 12.2
    # and trivial_return simulates that value: mean over s_0 ~ U[0, 1] of the DP value (trapezoid rule)
    mean, se = envs.trivial_return()
    dp_mean = float(np.sum((middle[1:] + middle[:-1]) / 2) / (middle.size - 1))
    assert abs(mean - dp_mean) < 4 * se + 0.01, (mean, dp_mean)  # 0.01: the grid's discretisation


def test_draw_peak_is_seeded_and_uniform():
    assert envs.draw_peak(3) == envs.draw_peak(3) != envs.draw_peak(4)
    draws = np.array([envs.draw_peak(s) for s in range(500)])
    # Kolmogorov-Smirnov against U[0, 1] (fixed seeds; p > 0.001 holds for an honest uniform)
    from scipy.stats import kstest

    assert kstest(draws, "uniform").pvalue > 1e-3
    env = envs.RandomPeakIntervalEnv(peak_seed=3)
    assert env.peak == envs.draw_peak(3)


# ------------------------------------------------------------------ private selection


def test_randomized_response_probabilities_and_worst_ratio():
    eps, k = 2.0, 40
    u, v = np.zeros(k), np.zeros(k)
    u[0], v[7] = R, R  # argmax moves: the adversarial pair
    p, q = S.selection_probabilities(u, eps), S.selection_probabilities(v, eps)
    # closed form (Warner; K-ary randomized response): e^eps / (e^eps + K - 1) on the argmax
    assert p[0] == pytest.approx(math.exp(eps) / (math.exp(eps) + k - 1), rel=1e-12)
    assert np.max(p / q) == pytest.approx(math.exp(eps), rel=1e-12) and np.max(q / p) <= math.exp(eps) * (1 + 1e-12)


def test_exponential_mechanism_ratio_is_at_most_e_eps_and_nearly_attained():
    # scores u = (R, 0, ..., 0) against u' = (0, R, ..., R): every score moves by the whole range R.
    # P_u(0) / P_u'(0) = e^(eps/2) (1 + (K-1) e^(eps/2)) / (e^(eps/2) + K - 1) -> e^eps as K grows, so a
    # mechanism using exp(eps u / R) (half the sensitivity) would exceed e^eps here.
    eps, k = 1.0, 2000
    u = np.zeros(k)
    u[0] = R
    v = np.full(k, R)
    v[0] = 0.0
    ratio = S.selection_probabilities(u, eps, "exponential")[0] / S.selection_probabilities(v, eps, "exponential")[0]
    h = math.exp(eps / 2)
    assert ratio == pytest.approx(h * (1 + (k - 1) * h) / (h + k - 1), rel=1e-9)
    assert math.exp(eps) * 0.99 < ratio <= math.exp(eps)


def test_scores_are_clipped_to_their_proven_range():
    big = [1e9, 0.0, -5.0]
    np.testing.assert_array_equal(S.clip_scores(big), [R, 0.0, 0.0])
    np.testing.assert_array_equal(S.selection_probabilities(big, 1.0, "exponential"),
                                  S.selection_probabilities([R, 0.0, 0.0], 1.0, "exponential"))
    res = S.train_select(epsilon=1.0, samples=2000, seed=0)
    assert all(0.0 <= x <= R for x in res.scores)  # any two reward functions: |u - u'| <= R per score


def test_noisy_max_uses_laplace_two_r_over_eps():
    # K = 2, u = (R, 0): policy 0 wins iff Z_1 - Z_0 < R. For Z_i ~ Laplace(b), the difference has
    # P(D < x) = 1 - e^(-x/b) (1 + x/(2b)) / 2 for x >= 0 (convolution of two Laplace densities). With
    # b = 2R/eps and eps = 1: x/b = 1/2, P = 1 - e^-0.5 1.25 / 2 = 0.62092; with b = R/eps it would be 0.72410.
    rng = np.random.default_rng(5)
    wins = sum(S.select([R, 0.0], 1.0, "noisy-max", seed=rng) == 0 for _ in range(20000))
    expected = 1 - math.exp(-0.5) * 1.25 / 2
    se = math.sqrt(expected * (1 - expected) / 20000)  # 0.0034
    assert abs(wins / 20000 - expected) < 5 * se
    # and the ratio against the swapped scores is within e^eps: P(0 | (0, R)) = 1 - expected by symmetry
    assert expected / (1 - expected) <= math.e


@pytest.mark.parametrize("selector", S.SELECTORS)
def test_select_learns_at_a_generous_epsilon(selector):
    # random-peak environment, seeds 0-4, epsilon 300 (every selector then picks the best policy with
    # probability near 1). The best data-independent policy gets 12.22 in expectation over theta; a margin
    # of 6 per episode: measured means 20.6-20.7.
    returns = [S.train_select(epsilon=300.0, selector=selector, samples=2000, seed=s).policy_return
               for s in range(5)]
    assert np.mean(returns) > envs.trivial_return()[0] + 6.0


def test_select_on_the_fixed_environment_beats_the_random_policy_at_epsilon_ten():
    # peak 0.5 (App. E.1): the random policy gets 10.87 per episode (envs.reference_return); randomized
    # response at epsilon 10 over 40 policies picks the best with probability 0.998. Margin 8.
    res = S.train_select(epsilon=10.0, peak=0.5, samples=2000, seed=1)
    assert res.policy_return > envs.reference_return("random")[0] + 8.0
    assert res.privacy_unit == "reward-function" and "(10, 0)-DP for any change of the data" in res.guarantee


@pytest.mark.parametrize("kwargs, match", [
    ({"epsilon": 0.0}, "epsilon must be in"),
    ({"epsilon": 1.0, "selector": "gumbel"}, "selector must be one of"),
    ({"epsilon": 1.0, "policies": 1}, "policies must be an integer >= 2"),
    ({"epsilon": 1.0, "samples": 100}, "samples must be at least 2000"),
    ({"epsilon": 1.0, "privacy_unit": "trajectory"}, "privacy_unit 'trajectory' is not protected by select"),
    ({"epsilon": 1.0, "delta": 2.0}, "delta must be in"),
    ({"epsilon": 1.0, "seed": -1}, "seed must be a non-negative integer"),
])
def test_select_refuses_bad_input(kwargs, match):
    with pytest.raises(ValueError, match=match) as err:
        S.train_select(**kwargs)
    assert "\n" not in str(err.value)


# ------------------------------------------------------------------ fitted-Q iteration by DP-SGD


def _records(n, seed):
    rng = np.random.default_rng(seed)
    s = rng.uniform(0, 1, n)
    return Q.features(s), rng.integers(0, 2, n), rng.uniform(0, 1, n), rng.normal(0, 1, (2, 11))


def test_one_transition_moves_the_clipped_sum_by_at_most_the_clip():
    phi, a, y, w = _records(100, 0)
    base, _ = Q.clipped_gradient_sum(w, phi, a, y, 0.7)
    # adversarial added record: a target of 1e6 makes its raw gradient norm about 1e6
    phi2 = np.vstack([phi, Q.features(np.array([0.5]))])
    more, norms = Q.clipped_gradient_sum(w, phi2, np.append(a, 1), np.append(y, 1e6), 0.7)
    assert norms[-1] > 1e5
    assert np.linalg.norm(more - base) <= 0.7 * (1 + 1e-12)
    assert np.linalg.norm(more - base) > 0.7 * (1 - 1e-9)  # the clip binds: the bound is attained


def test_one_episode_moves_the_episode_clipped_sum_by_at_most_the_clip():
    h = envs.EPISODE_STEPS
    phi, a, y, w = _records(4 * h, 1)
    base, _ = Q.clipped_gradient_sum(w, phi, a, y, 1.0, episode_length=h)
    ep_phi, ep_a, ep_y, _ = _records(h, 2)
    ep_y = ep_y + 1e4  # an adversarial user: every transition's target far off
    more, _ = Q.clipped_gradient_sum(w, np.vstack([phi, ep_phi]), np.append(a, ep_a), np.append(y, ep_y), 1.0,
                                     episode_length=h)
    assert np.linalg.norm(more - base) <= 1.0 + 1e-12
    # per-transition clipping would let the same episode move the sum by far more than C (up to 50 C):
    # this is why the episode unit clips each episode's summed gradient
    t_base, _ = Q.clipped_gradient_sum(w, phi, a, y, 1.0)
    t_more, _ = Q.clipped_gradient_sum(w, np.vstack([phi, ep_phi]), np.append(a, ep_a), np.append(y, ep_y), 1.0)
    assert np.linalg.norm(t_more - t_base) > 5.0


def test_features_are_bounded_hat_functions():
    phi = Q.features(np.linspace(0, 1, 1001))
    np.testing.assert_allclose(phi.sum(axis=1), 1.0, atol=1e-12)  # partition of unity
    assert phi.min() >= 0 and np.sqrt((phi ** 2).sum(axis=1)).max() <= 1.0 + 1e-15


def test_fqi_calibration_round_trip_and_premises():
    cfg = Q.FQIConfig(iterations=3, steps=40)
    res = Q.train_fqi_dpsgd(epsilon=2.0, delta=1e-5, episodes=40, config=cfg, seed=0)
    assert res.noisy_steps == 120 and res.sample_rate == pytest.approx(256 / 2000)
    # the priced setting: 120 Poisson-subsampled Gaussian steps of sensitivity C under add/remove
    eps = privcal.epsilon(res.sigma, 1e-5, sensitivity=cfg.clip, steps=120, sample_rate=res.sample_rate)
    assert eps <= 2.0 * (1 + 1e-9) and eps > 1.9  # calibrate's answer is tight and on the safe side
    assert all(ok for _, ok, _ in res.premises) and res.guarantee.startswith("(2, 1e-05)-DP w.r.t. one transition")
    # a smaller sigma would overspend: the bound is on the right side of the target
    assert privcal.epsilon(res.sigma * 0.97, 1e-5, sensitivity=cfg.clip, steps=120,
                           sample_rate=res.sample_rate) > 2.0


def test_fqi_learns_on_the_fixed_environment_at_a_generous_epsilon():
    # peak 0.5 (App. E.1), 40 episodes (2000 transitions), epsilon 10, seed 0. The random policy gets 10.87
    # per episode (envs.reference_return); measured 20.7 (the optimum is 20.71). Margin 6.
    for unit in ("transition", "episode"):
        res = Q.train_fqi_dpsgd(epsilon=10.0, delta=1e-5, privacy_unit=unit, episodes=40 if unit == "transition"
                                else 400, peak=0.5, config=Q.FQIConfig(iterations=5, steps=60), seed=0)
        assert res.policy_return > envs.reference_return("random")[0] + 6.0, unit
        assert res.privacy_unit == unit


def test_fqi_refuses_the_reward_function_unit_and_bad_input():
    with pytest.raises(ValueError, match="privacy_unit 'reward-function' is not protected by fqi-dpsgd "
                                         r"\(it protects: transition, episode\)"):
        Q.train_fqi_dpsgd(epsilon=1.0, delta=1e-5, privacy_unit="reward-function")
    with pytest.raises(ValueError, match="give both epsilon and delta"):
        Q.train_fqi_dpsgd(epsilon=1.0, delta=None)
    with pytest.raises(ValueError, match="gamma must be in"):
        Q.FQIConfig(gamma=1.0)
    with pytest.raises(ValueError, match="clip must be in"):
        Q.FQIConfig(clip=0.0)
    with pytest.raises(ValueError, match="episode_length must divide"):
        Q.clipped_gradient_sum(np.zeros((2, 11)), np.zeros((3, 11)), np.zeros(3), np.zeros(3), 1.0,
                               episode_length=2)


# ------------------------------------------------------------------ units and verdicts


def test_units_are_named_and_refused_in_one_line():
    assert set(PRIVACY_UNITS) == {"reward-function", "transition", "episode", "trajectory"}
    with pytest.raises(ValueError, match="privacy_unit 'episode' is not protected by dpq"):
        check_unit("episode", ("reward-function",), "dpq")
    with pytest.raises(ValueError, match="privacy_unit must be one of"):
        check_unit("user", ("episode",), "x")


def test_verdict_one_run_on_known_numbers():
    # z = (12 - 10) / sqrt(0.5^2 + 0) = 4 > z_0.95 = 1.645 (normal quantile)
    assert verdict_one_run(12, 10, higher_is_better=True, reference_label="r", value_se=0.5).verdict == "beats"
    assert verdict_one_run(10, 12, higher_is_better=True, reference_label="r", value_se=0.5).verdict == "does not beat"
    v = verdict_one_run(10.5, 10, higher_is_better=True, reference_label="r", value_se=0.5)  # z = 1
    assert v.verdict == "cannot tell" and v.p_value == pytest.approx(0.15865525393145707)  # 1 - Phi(1)
    assert "one seed" in v.test
    assert verdict_one_run(3.0, 4.0, higher_is_better=False, reference_label="r").verdict == "beats"
    assert verdict_one_run(4.0, 4.0, higher_is_better=False, reference_label="r").verdict == "does not beat"
    assert verdict_one_run(math.inf, 4.0, higher_is_better=False, reference_label="r").verdict == "does not beat"


def test_verdict_over_seeds_on_known_numbers():
    # mean 2, sd 1, n = 3: t = 2 / (1/sqrt 3) = 3.464 > t_{0.95, 2} = 2.919986 (Student-t table)
    v = verdict_over_seeds([1, 2, 3], 0, higher_is_better=True, reference_label="r")
    assert v.verdict == "beats" and v.statistic == pytest.approx(2 * math.sqrt(3))
    assert v.sign_test_p == pytest.approx(1 / 8)  # 3 of 3 better: (1/2)^3
    assert verdict_over_seeds([1, 2, 3], 2.5, higher_is_better=True, reference_label="r").verdict == "cannot tell"
    assert verdict_over_seeds([1, 2, 3], 10, higher_is_better=True, reference_label="r").verdict == "does not beat"
    assert verdict_over_seeds([1, math.inf], 0, higher_is_better=False, reference_label="r").verdict == "does not beat"
    with pytest.raises(ValueError, match="at least 2 seeds"):
        verdict_over_seeds([1.0], 0, higher_is_better=True, reference_label="r")


# ------------------------------------------------------------------ the CLI


def _json(capsys, *argv):
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    assert code == 0, err
    return json.loads(out)


def test_train_dpq_select_and_fqi_print_return_unit_and_verdict(capsys):
    d = _json(capsys, "train", "dpq", "--method", "select", "--epsilon", "7", "--delta", "1e-5", "--seed", "0",
              "--samples", "2000", "--format", "json")
    assert d["privacy_unit"] == "reward-function" and d["verdict"] in ("beats", "does not beat", "cannot tell")
    assert d["policy_return"] > 0 and d["references"]["best_data_independent_return"] == pytest.approx(12.217, abs=0.01)
    d = _json(capsys, "train", "dpq", "--method", "fqi-dpsgd", "--privacy-unit", "transition", "--epsilon", "1",
              "--delta", "1e-5", "--seed", "0", "--samples", "2000", "--format", "json")
    assert d["privacy_unit"] == "transition" and d["verdict"] == "beats" and "one seed" in d["verdict_test"]["test"]
    # its batch sampler, in privcal's one vocabulary: records enter each step's batch independently (Poisson)
    assert (d["sampling"], d["neighbouring"]) == ("poisson", "add_remove") and 0 < d["sample_rate"] < 1
    # a unit finer than the user comes with the user-level epsilon beside it: one episode (50 transitions) removed,
    # its valid upper end and certified lower end (privcal.accounting.groups; docs/groups.md)
    assert d["user_unit"] == "episode" and d["user_epsilon"] >= d["user_epsilon_lower"] > d["epsilon"]


@pytest.mark.parametrize("argv, match", [
    (["--method", "fqi-dpsgd", "--privacy-unit", "reward-function", "--epsilon", "1", "--delta", "1e-5"],
     "not protected by fqi-dpsgd"),
    (["--method", "dpq", "--privacy-unit", "transition", "--epsilon", "1", "--delta", "1e-5"],
     "not protected by --method dpq"),
    (["--method", "select", "--epsilon", "1", "--sigma", "2"], "--sigma does not apply to --method select"),
    (["--method", "dpq", "--selector", "exponential", "--sigma", "1"], "applies only to --method select"),
])
def test_train_dpq_refuses_units_and_flags_in_one_line(capsys, argv, match):
    code = cli.main(["train", "dpq", *argv])
    err = capsys.readouterr().err
    assert code == 2 and match in err and err.count("\n") == 1


# ------------------------------------------------------------------ every trainer: unit, verdict, divergence


def test_train_gpope_separates_divergence_from_worse_than_trivial(capsys):
    # step size 100 on the chain: the MSPBE ends far above that of theta = 0 (5147 against 0.037), the parameters
    # finite and the iterates bounded by the clipping: "worse than the trivial predictor", not divergence (one word
    # had meant both); diverged is kept for iterates that blow up (non-finite, or 1e6 times theta = 0's MSPBE)
    d = _json(capsys, "train", "gpope", "--epsilon", "1", "--trajectories", "200", "--step-size", "100",
              "--format", "json")
    assert d["worse_than_trivial"] is True and d["diverged"] is False and d["parameters_non_finite"] is False
    assert d["mspbe"] > d["references"]["zero_predictor"] and d["verdict"] == "does not beat"
    assert d["privacy_unit"] == "trajectory" and "blew up" in d["diverged_rule"]
    # the non-private reference carries the same flags (GTD2 without clipping blows up at this step size)
    assert isinstance(d["references"]["non_private_gtd2_diverged"], bool)
    assert d["references"]["non_private_gtd2_worse_than_trivial"] is True
    d = _json(capsys, "train", "gpope", "--epsilon", "10", "--trajectories", "200", "--format", "json")
    assert d["worse_than_trivial"] is (d["mspbe"] > d["references"]["zero_predictor"])
    assert d["verdict_test"]["test"].startswith("one seed")


def test_train_pucb_reports_its_verdict_and_the_counter_bound(capsys):
    d = _json(capsys, "train", "pucb", "--states", "3", "--actions", "2", "--horizon", "3", "--episodes", "50",
              "--epsilon", "100", "--format", "json")
    # the realised regret is random: a one-sided z test with its per-episode standard error (1.645 at 0.95)
    gap = d["references"]["random_policy_regret_per_episode"]
    z = d["verdict_test"]["statistic"]
    assert (z > 0) == (d["final_regret"] / 50 < gap)
    assert d["verdict"] == ("beats" if z > 1.6448536 else "does not beat" if z < -1.6448536 else "cannot tell")
    assert d["privacy_unit"] == "episode" and isinstance(d["counter_error_within_bound"], bool)


def test_train_csv_rows_carry_the_references_unit_and_verdict(capsys):
    import csv
    import io

    assert cli.main(["train", "dpq", "--sigma", "0.5", "--samples", "500", "--format", "csv"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert len(rows) == 10 and rows[0]["privacy_unit"] == "reward-function" and rows[-1]["verdict"]
    assert rows[0]["sampling"] == "full_batch"  # every update uses its whole batch: no subsampling claimed
    assert float(rows[0]["reference_random_policy_return"]) == pytest.approx(10.87, abs=0.05)  # App. E.1, simulated
    assert cli.main(["train", "pucb", "--states", "3", "--actions", "2", "--horizon", "3", "--episodes", "5",
                     "--epsilon", "10", "--format", "csv"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert "reference_random_policy_regret_per_episode" in rows[0] and rows[0]["verdict"]


def test_fqi_clip_premise_is_measured_on_what_was_summed(monkeypatch):
    # the printed premise measured the norms before clipping capped at C (min(norm, C)): it could not fail. Break
    # the clipping (clip at 2C): the premise must fail and the run print no guarantee
    from privcal.rl.dpq import fqi_dpsgd

    real = fqi_dpsgd.clipped_sum_unchecked
    monkeypatch.setattr(fqi_dpsgd, "clipped_sum_unchecked", lambda w, phi, a, y, clip, h: real(w, phi, a, y, 2 * clip, h))
    res = fqi_dpsgd.train_fqi_dpsgd(epsilon=1.0, delta=1e-5, privacy_unit="transition", episodes=20,
                                    evaluation_episodes=50, seed=0)
    clip = dict((n, ok) for n, ok, _ in res.premises)["per-record clip"]
    assert clip is False and res.guarantee.startswith("no guarantee") and res.user_epsilon is None
