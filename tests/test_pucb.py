"""Tests of the PUCB layer: privcal.rl.pucb.tabular, the agent (privcal.rl.pucb), its experiments,
plots and Monte Carlo checks (privcal.rl.pucb.experiments, .plots, .checks) and the
``privcal train pucb`` subcommand."""

import argparse
import ast
import importlib
import io
import itertools
import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from privcal.analysis.counter import error_bound as counter_error_bound
from privcal.cli import pucb as _cli_pucb
from privcal.rl.pucb import (
    PUCB,
    SETTINGS,
    bonus_phi,
    bonus_psi,
    clopper_pearson,
    collusion_attack,
    counter_epsilon,
    counter_epsilon_paper,
    counter_error_check,
    error_bound_paper,
    informative_count,
    jdp_epsilon,
    num_counters,
    private_q,
    pucb_error_bound_check,
    regret_experiment,
    run_pucb,
    sup_error_failure_lower_bound,
)
from privcal.rl.pucb.agent import episode_counter_inputs as _episode_inputs
from privcal.rl.pucb.tabular import (
    EpisodeSampler,
    TabularMDP,
    backward_induction,
    policy_return,
    policy_values,
    random_mdp,
    river_swim,
)

NOTEBOOK = Path(__file__).resolve().parents[1] / "notebooks" / "pucb.ipynb"


def bandit(low=0.1, high=0.9, horizon=1):
    """One state, two actions with mean rewards (low, high): V* = H * high (closed form)."""
    p = np.ones((horizon, 1, 2, 1))
    r = np.tile([[[low, high]]], (horizon, 1, 1))
    return TabularMDP(p, r, np.ones(1), name="bandit")


# ---------------------------------------------------------------------------------------------
# tabular MDPs
# ---------------------------------------------------------------------------------------------

def test_backward_induction_closed_form_bandit():
    # V*_1 = H * 0.9 for the repeated bandit, greedy action 1 at every step
    sol = backward_induction(bandit(horizon=3))
    assert sol.values[0, 0] == pytest.approx(2.7, rel=1e-15)
    assert sol.policy.tolist() == [[1], [1], [1]]
    assert policy_return(bandit(horizon=3), np.zeros((3, 1), dtype=int)) == pytest.approx(0.3)


@settings(max_examples=25)
@given(st.integers(0, 2 ** 32 - 1), st.integers(1, 3), st.integers(1, 2), st.integers(1, 2))
def test_backward_induction_equals_brute_force(seed, states, actions, horizon):
    # V*_1(s) = max over all A^(S H) deterministic Markov policies of V^pi_1(s) (VBKW App. A.1)
    mdp = random_mdp(states, actions, horizon, seed=seed)
    sol = backward_induction(mdp)
    best = np.full(states, -np.inf)
    for flat in itertools.product(range(actions), repeat=states * horizon):
        pol = np.array(flat, dtype=int).reshape(horizon, states)
        best = np.maximum(best, policy_values(mdp, pol)[0])
    np.testing.assert_allclose(sol.values[0], best, rtol=0, atol=1e-12)
    np.testing.assert_allclose(policy_values(mdp, sol.policy)[0], sol.values[0], atol=1e-12)


def test_random_mdp_is_seeded_and_valid():
    a, b = random_mdp(4, 3, 5, seed=9), random_mdp(4, 3, 5, seed=9)
    np.testing.assert_array_equal(a.transitions, b.transitions)
    np.testing.assert_array_equal(a.rewards, b.rewards)
    assert not np.array_equal(a.rewards, random_mdp(4, 3, 5, seed=10).rewards)
    assert a.transitions.shape == (5, 4, 3, 4) and np.allclose(a.transitions.sum(-1), 1)
    stat = random_mdp(4, 3, 5, seed=9, stationary=True)
    np.testing.assert_array_equal(stat.transitions[0], stat.transitions[4])


def test_river_swim_structure():
    mdp = river_swim(6, 10)
    assert mdp.transitions.shape == (10, 6, 2, 6)
    # swimming left is deterministic; the far right pays 1 for swimming right
    assert mdp.transitions[0, 3, 0, 2] == 1.0 and mdp.rewards[0, 5, 1] == 1.0
    # with 10 steps the optimal first action in state 0 is to swim right (toward reward 1)
    assert backward_induction(mdp).policy[0, 0] == 1


def test_episode_sampler_matches_exact_return():
    # 20 000 episodes of a random MDP under a fixed policy; per-episode return in [0, H = 4], so
    # sd <= 2 and the mean's sd <= 2/sqrt(2e4) = 0.0141; tolerance 0.08 (> 5 sd)
    mdp = random_mdp(3, 2, 4, seed=3)
    pol = np.array([[0, 1, 1], [1, 0, 1], [0, 0, 1], [1, 1, 0]])
    sampler = EpisodeSampler(mdp)
    rng = np.random.default_rng(0)
    returns = [sampler.sample(pol, rng)[2].sum() for _ in range(20_000)]
    assert np.mean(returns) == pytest.approx(policy_return(mdp, pol), abs=0.08)


@pytest.mark.parametrize("kwargs, name", [
    ({"states": 0, "actions": 2, "horizon": 2}, "states"),
    ({"states": 2, "actions": 1.5, "horizon": 2}, "actions"),
    ({"states": 2, "actions": 2, "horizon": -1}, "horizon"),
    ({"states": 2, "actions": 2, "horizon": 2, "concentration": 0}, "concentration"),
])
def test_random_mdp_bad_input(kwargs, name):
    with pytest.raises(ValueError, match=name):
        random_mdp(**kwargs)


def test_tabular_mdp_bad_input():
    p = np.full((1, 2, 1, 2), 0.5)
    with pytest.raises(ValueError, match="rewards"):
        TabularMDP(p, np.full((1, 2, 1), 1.5), np.array([1.0, 0.0]))
    with pytest.raises(ValueError, match="transitions"):
        TabularMDP(p * 2, np.zeros((1, 2, 1)), np.array([1.0, 0.0]))
    with pytest.raises(ValueError, match="initial"):
        TabularMDP(p, np.zeros((1, 2, 1)), np.array([0.7, 0.7]))
    with pytest.raises(ValueError, match="policy"):
        policy_values(bandit(), np.array([[2]]))
    with pytest.raises(ValueError, match="states"):
        river_swim(1, 5)


# ---------------------------------------------------------------------------------------------
# formulas of PUCB / PrivQ
# ---------------------------------------------------------------------------------------------

def test_num_counters_and_budget():
    # 2SAH + S^2AH = 2*10*3*10 + 100*3*10 = 3600
    assert num_counters(10, 3, 10) == 3600
    assert counter_epsilon_paper(1.0, 10) == pytest.approx(1 / 30)
    assert counter_epsilon(1.0, 10) == pytest.approx(1 / 60)
    assert jdp_epsilon(counter_epsilon(1.0, 10), 10) == pytest.approx(1.0)
    # the paper's split gives 2 epsilon under replace-one neighbours
    assert jdp_epsilon(counter_epsilon_paper(1.0, 10), 10) == pytest.approx(2.0)


def test_replacing_a_user_moves_counter_inputs_by_6h():
    # two neighbouring episodes (different states, actions, next states; reward 1 each) change
    # the counters' inputs by 6H in L1: 2 per step in each of the 3 families (Def. 3 neighbours)
    h, s, a = 4, 3, 2
    one = _episode_inputs(s, a, np.zeros(h + 1, int), np.zeros(h, int), np.ones(h))
    two = _episode_inputs(s, a, np.ones(h + 1, int), np.ones(h, int), np.ones(h))
    l1 = sum(np.abs(one[k] - two[k]).sum() for k in one)
    assert l1 == 6 * h


def test_error_bound_paper_known_value():
    # S = A = H = 1: K = 3; T = 2 (log2 T = 1); eps = 1; beta = 1/e: 3 * ln(3e) = 3 (1 + ln 3)
    assert error_bound_paper(1.0, 1, 1, 1, 2, math.exp(-1)) == pytest.approx(3 * (1 + math.log(3)))


def test_bonus_known_values():
    # phi = sqrt(2 ln(T/beta) / max(n - E, 1)) = sqrt(2 ln(1000) / 8) for n=10, E=2, T=100, beta=.1
    assert bonus_phi(10.0, 2.0, 100, 0.1) == pytest.approx(math.sqrt(2 * math.log(1000) / 8))
    # max(n - E, 1) = 1 when n - E < 1
    assert bonus_phi(2.5, 2.0, 100, 0.1) == pytest.approx(math.sqrt(2 * math.log(1000)))
    # psi = (1 + S H)(3E/n + 2E^2/n^2) = 13 (0.6 + 0.08) for S = 3, H = 4, n = 10, E = 2
    assert bonus_psi(10.0, 2.0, 3, 4) == pytest.approx(13 * 0.68)
    assert bonus_psi(10.0, 0.0, 3, 4) == 0.0


def test_private_q_by_hand():
    # H = 1, S = 1, A = 2, exact counts, E = 0: Q = r/n + conf with conf = 2 sqrt(2 ln(T/b)/n),
    # capped at H = 1; an unvisited action gets H
    r = np.array([[[3.0, 0.0]]])
    n = np.array([[[100.0, 0.0]]])
    m = np.array([[[[100.0], [0.0]]]])
    q = private_q(r, n, m, 0.0, 1000, 0.1)
    assert q[0, 0, 0] == pytest.approx(min(1.0, 0.03 + 2 * math.sqrt(2 * math.log(1e4) / 100)))
    assert q[0, 0, 1] == 1.0


@given(st.integers(0, 2 ** 32 - 1), st.floats(0.0, 50.0))
def test_private_q_capped_at_h_and_h_where_unknown(seed, e):
    rng = np.random.default_rng(seed)
    h, s, a = 3, 2, 2
    n = rng.normal(20, 30, size=(h, s, a))
    r = rng.normal(5, 10, size=(h, s, a))
    m = rng.normal(10, 15, size=(h, s, a, s))
    q = private_q(r, n, m, e, 100, 0.1)
    assert np.all(q <= h)
    unknown = (n < 2 * e) | (n <= 0)
    # unknown pairs (n~ < 2E or n~ <= 0) get exactly Q~+ = H under the default unknown="optimistic"
    assert np.all(q[unknown] == h)
    # as printed (unknown="paper") n~ <= 0 still gives H (Q~ undefined there)
    assert np.all(private_q(r, n, m, e, 100, 0.1, unknown="paper")[n <= 0] == h)


def test_informative_count_solves_bonus_equation():
    e, s, h, t, b = 5.0, 3, 4, 1000, 0.1
    n = informative_count(e, s, h, t, b)
    conf = (h + 1) * bonus_phi(n, e, t, b) + bonus_psi(n, e, s, h)
    assert conf == pytest.approx(h, rel=1e-9)
    assert n >= 2 * e


# ---------------------------------------------------------------------------------------------
# the agent
# ---------------------------------------------------------------------------------------------

def test_nonprivate_baseline_learns_bandit():
    # gap 0.8; the UBEV-style bonus 2 sqrt(2 ln(T/beta)/n) stops pulling the bad arm after
    # about 8 ln(T/beta)/0.8^2 ~ 124 pulls: regret ~ 100, far below the 800 of a uniform policy
    run = run_pucb(bandit(), 2000, None, seed=0)
    assert run.cumulative_regret[-1] < 250
    assert run.error_bound == 0.0 and run.epsilon is None


def test_private_agent_with_tiny_noise_learns_bandit():
    # epsilon = 1e7: the union error bound is ~1e-5, so PUCB behaves like the baseline
    run = run_pucb(bandit(), 2000, 1e7, seed=0, error_bound="valid")
    assert run.error_bound < 1e-3
    assert run.cumulative_regret[-1] < 250


def test_private_agent_explores_uniformly_below_informative_count():
    # with the paper's E at epsilon = 1 no count can reach 2E within T = 50 episodes: Q~+ = H
    agent = PUCB(3, 2, 3, 50, epsilon=1.0, seed=0)
    literal = PUCB(3, 2, 3, 50, epsilon=1.0, seed=0, unknown="paper")
    mdp = random_mdp(3, 2, 3, seed=0)
    sampler = EpisodeSampler(mdp)
    rng = np.random.default_rng(0)
    lowest = np.inf
    for _ in range(50):
        q = agent.q_values()
        assert np.all(q == 3.0)
        lowest = min(lowest, literal.q_values().min())
        episode = sampler.sample(agent.policy(q), rng)
        agent.observe(*episode)
        literal.observe(*episode)
    # Alg. 3 as printed, min{H, Q~ + H} with noisy Q~, goes below 0 <= Q*: not optimistic
    assert lowest < 0


def test_run_is_reproducible_and_regret_exact():
    mdp = random_mdp(3, 2, 3, seed=1)
    a = run_pucb(mdp, 60, 1.0, seed=5)
    b = run_pucb(mdp, 60, 1.0, seed=5)
    np.testing.assert_array_equal(a.episode_regret, b.episode_regret)
    worst = a.optimal_return - min(
        policy_return(mdp, np.array(p).reshape(3, 3))
        for p in itertools.product(range(2), repeat=9))
    assert np.all(a.episode_regret <= worst + 1e-12)  # (>= 0 holds by construction: clipped)
    assert a.jdp_epsilon == pytest.approx(1.0) and a.counter_epsilon == pytest.approx(1 / 18)


def test_agent_bad_input():
    with pytest.raises(ValueError, match="epsilon"):
        PUCB(2, 2, 2, 10, epsilon=0.0)
    with pytest.raises(ValueError, match="failure_probability"):
        PUCB(2, 2, 2, 10, epsilon=1.0, failure_probability=1.0)
    with pytest.raises(ValueError, match="episodes"):
        PUCB(2, 2, 2, 0, epsilon=1.0)
    with pytest.raises(ValueError, match="budget_split"):
        PUCB(2, 2, 2, 10, epsilon=1.0, budget_split="half")
    with pytest.raises(ValueError, match="error_bound"):
        PUCB(2, 2, 2, 10, epsilon=1.0, error_bound="loose")
    agent = PUCB(2, 2, 2, 10, epsilon=1.0)
    with pytest.raises(ValueError, match="episode"):
        agent.observe([0, 1], [0, 1], [0.0, 1.0])
    with pytest.raises(ValueError, match="values"):
        agent.observe([0, 1, 0], [0, 1], [0.0, 2.0])  # reward outside [0, 1]
    with pytest.raises(ValueError, match="accuracy"):
        run_pucb(bandit(), 5, None).suboptimal_episodes(-1)


# ---------------------------------------------------------------------------------------------
# experiments
# ---------------------------------------------------------------------------------------------

def test_regret_experiment_fast_and_plot(tmp_path):
    exp = regret_experiment("fast", episodes=60, seeds=(0, 1))
    assert exp.labels == ["epsilon=0.1", "epsilon=1", "epsilon=10", "non-private"]
    for label in exp.labels:
        assert exp.episode_regret[label].shape == (2, 60)
    # each row is the run_pucb run of that seed on the shared MDP (same seeds, same regret)
    single = run_pucb(random_mdp(3, 2, 3, seed=0), 60, 1.0, 0.1, 1)
    np.testing.assert_array_equal(exp.episode_regret["epsilon=1"][1], single.episode_regret)
    rows = exp.summary()
    assert [r["label"] for r in rows] == exp.labels
    assert rows[-1]["error_bound"] == 0.0 and rows[0]["error_bound"] > rows[2]["error_bound"]
    pytest.importorskip("matplotlib")
    path = Path(exp_plot := tmp_path / "regret.png")
    from privcal.rl.pucb import plot_regret
    paper = regret_experiment("fast", episodes=60, seeds=(0, 1), error_bound="paper")
    import matplotlib
    backend = matplotlib.get_backend()
    plot_regret(exp, exp_plot, compare=[paper])
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert matplotlib.get_backend() == backend  # drawn without pyplot: the session's backend is kept
    from privcal.rl.pucb.plots import regret_figure
    fig = regret_figure(exp, compare=[paper])
    (valid_ax, _), (paper_ax, _) = [fig.axes[:2], fig.axes[2:]]
    assert "valid" in valid_ax.get_title() and "VBKW-E-eps" in paper_ax.get_title()
    private = [line for line in valid_ax.get_lines() if line.get_label().startswith("ε")]
    assert len(private) == 3
    for attr in ("get_color", "get_linestyle", "get_marker"):  # every private curve distinguishable
        assert len({getattr(line, attr)() for line in private}) == 3
    # identical regret (uniform exploration at this T) is said in the legend
    same = [line.get_label() for line in private if "[=" in line.get_label()]
    identical = [label for label in exp.labels[1:3]
                 if np.array_equal(exp.episode_regret[label], exp.episode_regret["epsilon=0.1"])]
    assert len(same) == len(identical)
    assert regret_figure(exp, yscale="log").axes[0].get_yscale() == "log"
    with pytest.raises(ValueError, match="yscale"):
        regret_figure(exp, yscale="symlog")


def test_settings_full_is_the_benchmark_size():
    full = SETTINGS["full"]
    size = (full["states"], full["actions"], full["horizon"], full["episodes"])
    assert size == (10, 3, 10, 10_000)
    with pytest.raises(ValueError, match="setting"):
        regret_experiment("medium")


def test_clopper_pearson_known_values():
    # x = 0 of n: upper = 1 - (a/2)^(1/n) (closed form); x = n: lower = (a/2)^(1/n)
    lo, hi = clopper_pearson(0, 100, 0.95)
    assert lo == 0.0 and hi == pytest.approx(1 - 0.025 ** (1 / 100), rel=1e-9)
    lo, hi = clopper_pearson(100, 100, 0.95)
    assert hi == 1.0 and lo == pytest.approx(0.025 ** (1 / 100), rel=1e-9)


def test_counter_bound_holds_and_is_loose_at_t1024():
    # log2 reading, eps = 1, beta = 0.05, 2000 counters: the paper's bound holds at 95%
    # (Clopper-Pearson upper end <= beta) and is more than 10x the empirical 95% quantile
    check = counter_error_check(1024, 1.0, 0.05, trials=2000, seed=0)
    assert check["paper"]["verdict"] == "holds"
    assert check["paper"]["looseness"] > 10
    # the valid union bound is within 15% of the quantile and not significantly violated
    assert 1.0 <= check["union"]["looseness"] < 1.15
    assert check["union"]["interval"][0] <= 0.05


def test_counter_bound_fails_natural_log_small_t():
    # ln reading at T = 2, beta = 0.05: E = 4 ln(20) ln(2)^2.5 = 4.79 while each of rounds 1, 2
    # releases one Laplace(2): P(failure) >= 1 - (1 - e^{-4.79/2})^2 = 0.174 > 0.05 (rigorous)
    check = counter_error_check(2, 1.0, 0.05, trials=2000, seed=0, log_base=math.e)
    assert check["paper"]["failure_lower_bound"] == pytest.approx(0.1738, abs=1e-3)
    assert check["paper"]["verdict"] == "fails"
    # log2 reading, beta close to 1: T = 2, beta = 0.9 -> E = 0.42, failure >= 0.964 > 0.9
    check = counter_error_check(2, 1.0, 0.9, trials=2000, seed=0)
    assert check["paper"]["failure_lower_bound"] > 0.96 and check["paper"]["verdict"] == "fails"
    # T = 1: the printed bound is 0
    assert counter_error_check(1, 1.0, 0.05, trials=200)["paper"]["verdict"] == "fails"


def test_union_bound_is_valid_by_rigorous_lower_bound():
    # a valid bound can never be below the rigorous failure lower bound's beta-crossing
    for steps in (1, 2, 7, 64, 1000):
        e = counter_error_bound(steps, 1.0, 0.05)
        assert sup_error_failure_lower_bound(e, steps, 1.0) <= 0.05 * (1 + 1e-9)


def test_pucb_error_bound_fails_at_t2_holds_at_t16():
    # S = 3, A = 2, H = 3, eps = 1, beta' = 0.1, paper split: K = 90 counters.
    # T = 2: E = 61.2 but each counter releases two independent Laplace(36) p-sums; failure
    # probability >= 1 - (1 - e^{-61.2/36})^{180} = 0.998 (rigorous), Monte Carlo agrees
    small = pucb_error_bound_check(3, 2, 3, 2, 1.0, 0.1, trials=200, seed=0)
    assert small["failure_lower_bound"] > 0.99 and small["verdict"] == "fails"
    big = pucb_error_bound_check(3, 2, 3, 16, 1.0, 0.1, trials=100, seed=0)
    assert big["verdict"] == "holds" and big["bound"] > big["union_bound"]


def test_jdp_example_single_draw_leaks_binary_does_not():
    # VBKW App. A.2: with one Laplace draw reused, users t-1 and t+1 recover u_t exactly
    res = collusion_attack(1.0, steps=16, trials=20_000, seed=0)
    assert res["single_draw"]["accuracy"] == 1.0
    assert res["single_draw"]["max_abs_residual"] < 1e-9
    # the binary mechanism is 1-DP for the whole stream: no guess of a uniform bit beats
    # e/(1+e) = 0.731; the same attack is not significantly better than that (95% CP)
    assert res["binary"]["interval"][0] <= res["dp_limit"]
    assert res["binary"]["interval"][1] < 0.6
    # and the single-draw mechanism is far above the DP limit
    assert res["single_draw"]["interval"][0] > res["dp_limit"]


# ---------------------------------------------------------------------------------------------
# CLI
# ---------------------------------------------------------------------------------------------

def _parser():
    parser = argparse.ArgumentParser(prog="privcal")
    sub = parser.add_subparsers(dest="command")
    train = sub.add_parser("train")
    _cli_pucb.add_parser(train.add_subparsers(dest="algorithm"))
    return parser


def test_cli_json(capsys):
    args = _parser().parse_args("train pucb --states 3 --actions 2 --horizon 3 --episodes 20 "
                                "--epsilon 1 --seed 4 --json".split())
    assert args._run is _cli_pucb.run
    assert _cli_pucb.run(args) == 0
    captured = capsys.readouterr()
    out = json.loads(captured.out)
    assert out["epsilon"] == 1.0 and len(out["regret"]) == 20
    assert captured.err == ""  # silent with --json


def test_cli_text_and_progress(capsys):
    args = _parser().parse_args("train pucb --states 2 --actions 2 --horizon 2 --episodes 10 "
                                "--non-private".split())
    assert _cli_pucb.run(args) == 0
    captured = capsys.readouterr()
    # the label is the flag's spelling (--non-private); the run is the UBEV-style baseline
    assert "non-private" in captured.out and "10/10" in captured.err


class _Stderr(io.StringIO):
    """A stderr that says whether it is a terminal."""

    def __init__(self, tty: bool):
        super().__init__()
        self.tty = tty

    def isatty(self) -> bool:
        return self.tty


@pytest.mark.parametrize("tty", [False, True])
def test_train_progress_writes_carriage_returns_only_to_a_terminal(tty, monkeypatch, capsys):
    # the bar of `privcal train` redraws in place on a terminal only; a pipe or a log gets
    # whole lines (here the run is short: its one completion line), never a carriage return
    err = _Stderr(tty)
    monkeypatch.setattr(sys, "stderr", err)
    args = _parser().parse_args("train pucb --states 2 --actions 2 --horizon 2 --episodes 10 --epsilon 1".split())
    assert _cli_pucb.run(args) == 0
    capsys.readouterr()
    text = err.getvalue()
    assert "20/20" in text  # the run and its non-private reference on one bar
    if tty:
        assert "\r" in text and text.endswith("\n")
    else:
        assert "\r" not in text and text.count("20/20") == 1 and text.endswith("\n")


@pytest.mark.parametrize("argv, name", [
    ("--epsilon -1", "epsilon"),
    ("--epsilon 1 --non-private", "epsilon"),
    ("", "epsilon"),
    ("--epsilon 1 --failure-probability 1.5", "failure_probability"),
    ("--epsilon 1 --mdp riverswim --actions 3", "actions"),
    ("--epsilon 1 --accuracy -2", "accuracy"),
])
def test_cli_bad_input(argv, name):
    args = _parser().parse_args(("train pucb --json --episodes 5 " + argv).split())
    with pytest.raises(ValueError, match=name):
        _cli_pucb.run(args)


@pytest.mark.parametrize("flag", ["--episodes", "--states", "--actions", "--horizon"])
def test_cli_zero_counts_are_refused_by_the_one_count_rule(flag, capsys):
    with pytest.raises(SystemExit):
        _parser().parse_args(f"train pucb --epsilon 1 {flag} 0".split())
    assert f"argument {flag}: must be a whole number in [1, 1e15]" in capsys.readouterr().err


def test_notebook_is_valid_nbformat_v4():
    nb = json.loads(NOTEBOOK.read_text())
    assert nb["nbformat"] == 4 and nb["cells"]
    for cell in nb["cells"]:
        if cell["cell_type"] == "code":
            ast.parse("".join(cell["source"]))


# ---------------------------------------------------------------------------------------------
# module layout and old names
# ---------------------------------------------------------------------------------------------

def test_old_import_path_reexports_the_moved_names():
    # the package privcal.rl.pucb exposes the names of its submodules, each as the same object as in its home
    pucb = importlib.import_module("privcal.rl.pucb")
    homes = {"privcal.rl.pucb.experiments": ["SETTINGS", "EPSILONS", "make_mdp", "RegretExperiment",
                                             "regret_experiment"],
             "privcal.rl.pucb.plots": ["plot_regret"],
             "privcal.rl.pucb.checks": ["counter_error_check", "pucb_error_bound_check",
                                        "collusion_attack"],
             "privcal.analysis.counter": ["sup_error_failure_lower_bound"],
             "privcal._stats": ["clopper_pearson"]}
    for home, names in homes.items():
        module = importlib.import_module(home)
        for name in names:
            assert name in pucb.__all__
            assert getattr(pucb, name) is getattr(module, name), name
    with pytest.raises(AttributeError):
        pucb.no_such_name  # noqa: B018


def test_agent_module_imports_no_experiments_and_no_matplotlib():
    code = ("import sys, privcal.rl.pucb; "
            "print(sorted(m for m in ('matplotlib', 'privcal.rl.pucb.experiments', "
            "'privcal.rl.pucb.plots', 'privcal.rl.pucb.checks') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_old_beta_keyword_is_deprecated_but_same():
    # beta= is the failure probability's deprecated keyword; results are identical, with a warning
    mdp = bandit()
    with pytest.warns(DeprecationWarning, match="failure_probability"):
        old = run_pucb(mdp, 30, 1.0, beta=0.2, seed=3)
    new = run_pucb(mdp, 30, 1.0, failure_probability=0.2, seed=3)
    np.testing.assert_array_equal(old.episode_regret, new.episode_regret)
    with pytest.warns(DeprecationWarning):
        assert old.beta == 0.2 == new.failure_probability
    with pytest.warns(DeprecationWarning):
        agent = PUCB(2, 2, 2, 10, epsilon=1.0, beta=0.3)
    assert agent.failure_probability == 0.3
    with pytest.warns(DeprecationWarning):
        assert error_bound_paper(1.0, 1, 1, 1, 2, beta=0.1) == error_bound_paper(1.0, 1, 1, 1, 2, 0.1)
    with pytest.warns(DeprecationWarning):
        check = counter_error_check(4, 1.0, beta=0.1, trials=20, seed=0)
    assert check["failure_probability"] == 0.1


# ---------------------------------------------------------------------------------------------
# Gaussian counters
# ---------------------------------------------------------------------------------------------

from privcal.analysis.counter import (  # noqa: E402
    BinaryCounter,
    GaussianBinaryCounter,
    gaussian_error_bound,
    gaussian_psum_sensitivity,
    gaussian_sigma,
    num_levels,
)
from privcal.analysis.gaussian import delta_exact  # noqa: E402
from privcal.rl.pucb import PRIVACY_UNIT, counter_sigma  # noqa: E402


def test_a_user_changes_one_input_of_at_most_6h_streams():
    # the l2 count of the Gaussian calibration: replacing one episode changes, in every counter, only
    # that episode's round, and in at most 6H counters (2 per family and step), each by <= 1; brute
    # force over all pairs of episodes of a small MDP (S = A = 2, H = 2), rewards 0 or 1
    h, s, a = 2, 2, 2
    episodes = [(np.array(st_), np.array(ac), np.array(rw, float))
                for st_ in itertools.product(range(s), repeat=h + 1)
                for ac in itertools.product(range(a), repeat=h)
                for rw in itertools.product((0.0, 1.0), repeat=h)]
    worst = 0
    for one, two in itertools.combinations(episodes[::3], 2):
        x, y = _episode_inputs(s, a, *one), _episode_inputs(s, a, *two)
        diffs = np.concatenate([(x[k] - y[k]).ravel() for k in x])
        assert np.all(np.abs(diffs) <= 1.0)
        worst = max(worst, int(np.count_nonzero(diffs)))
    assert worst == 6 * h
    # so the p-sum vector of all counters moves by sqrt(6 H L) in l2 (L levels, T = 1000: L = 10)
    assert gaussian_psum_sensitivity(1000, streams=6 * h) == pytest.approx(math.sqrt(6 * h * 10), rel=1e-15)


def test_counter_sigma_is_the_exact_profile_at_sqrt_6hl():
    h, t, eps, delta = 10, 1000, 1.0, 1e-5
    sigma = counter_sigma(eps, delta, h, t)
    assert sigma == gaussian_sigma(t, eps, delta, streams=6 * h)
    mu = math.sqrt(6 * h * num_levels(t)) / sigma
    assert delta_exact(eps, mu) <= delta < delta_exact(eps, mu * (1 + 1e-6))  # Balle & Wang 2018 Thm 8


def test_gaussian_agent_guarantee_counters_and_bound():
    agent = PUCB(3, 2, 3, 500, epsilon=10.0, seed=0, counter_noise="gaussian", delta=1e-5)
    sigma = counter_sigma(10.0, 1e-5, 3, 500)
    assert agent.noise_scale == agent.counter_sigma == sigma and agent.counter_epsilon is None
    assert all(isinstance(c, GaussianBinaryCounter) and c.sigma == sigma for c in agent.counters.values())
    assert agent.jdp_delta == 1e-5 and agent.jdp_epsilon <= 10.0 and agent.jdp_epsilon == pytest.approx(10.0)
    assert agent.guarantee.startswith("(10, 1e-05)-JDP") and agent.privacy_unit == PRIVACY_UNIT
    assert "episode" in PRIVACY_UNIT and "replace" in PRIVACY_UNIT
    # E: the union bound over all K = 2SAH + S^2AH counters of the Gaussian tails
    assert agent.error_bound == gaussian_error_bound(500, sigma, 0.1, counters=num_counters(3, 2, 3))
    laplace = PUCB(3, 2, 3, 500, epsilon=10.0, seed=0)
    assert all(isinstance(c, BinaryCounter) for c in laplace.counters.values())
    assert laplace.jdp_delta == 0.0 and laplace.guarantee.startswith("10-JDP")


@pytest.mark.parametrize("epsilon, smaller_by", [(1.0, 6.0), (10.0, 4.5), (100.0, 2.0)])
def test_gaussian_error_bound_below_laplace(epsilon, smaller_by):
    # no training: E is computed up front. Fast frontier setting (S = 3, A = 2, H = 3, T = 2000);
    # measured ratios 6.55 (eps 1), 4.89 (eps 10), 2.58 (eps 100); at eps = 1000 the two are equal
    # within 1% (Laplace 4.57, Gaussian 4.59): the Gaussian counters win at small and moderate eps
    g = PUCB(3, 2, 3, 2000, epsilon=epsilon, counter_noise="gaussian", delta=1e-5)
    lap = PUCB(3, 2, 3, 2000, epsilon=epsilon)
    assert g.error_bound * smaller_by < lap.error_bound


def test_gaussian_run_reports_its_guarantee():
    run = run_pucb(random_mdp(3, 2, 3, seed=1), 30, 10.0, seed=2, counter_noise="gaussian", delta=1e-4)
    assert run.counter_noise == "gaussian" and run.delta == 1e-4 and run.privacy_unit == PRIVACY_UNIT
    assert run.guarantee.startswith("(10, 0.0001)-JDP") and run.counter_epsilon is None
    assert run.noise_scale == counter_sigma(10.0, 1e-4, 3, 30)
    base = run_pucb(random_mdp(3, 2, 3, seed=1), 5, None, seed=2)
    assert base.counter_noise is None and base.delta is None and base.guarantee.startswith("none")


@pytest.mark.parametrize("kwargs, match", [
    ({"counter_noise": "gaussian"}, r"delta must be in \(0, 1\)"),
    ({"counter_noise": "gaussian", "delta": 1.0}, "delta"),
    ({"counter_noise": "gaussian", "delta": 0.0}, "delta"),
    ({"counter_noise": "gaussian", "delta": 1e-5, "error_bound": "paper"}, "Laplace formula"),
    ({"counter_noise": "gaussian", "delta": 1e-5, "budget_split": "paper"}, "budget_split"),
    ({"counter_noise": "normal"}, "counter_noise"),
    ({"delta": 1e-5}, "delta is used only"),
])
def test_gaussian_refusals(kwargs, match):
    with pytest.raises(ValueError, match=match) as info:
        PUCB(2, 2, 2, 10, epsilon=1.0, **kwargs)
    assert "\n" not in str(info.value)
    with pytest.raises(ValueError, match=match):
        run_pucb(bandit(), 5, 1.0, **kwargs)
    with pytest.raises(ValueError, match="epsilon"):
        PUCB(2, 2, 2, 10, counter_noise="gaussian", delta=1e-5)  # the baseline has no noise


def test_cli_gaussian_error_bound_below_laplace(capsys):
    # the brief's "done": --counter-noise gaussian --epsilon 100 --delta 1e-5 reports an E below the
    # Laplace one at the same epsilon (small settings, 20 episodes)
    base = "train pucb --states 3 --actions 2 --horizon 3 --episodes 20 --epsilon 100 --json --no-references"
    outs = {}
    for extra in ("", " --counter-noise gaussian --delta 1e-5"):
        args = _parser().parse_args((base + extra).split())
        assert _cli_pucb.run(args) == 0
        outs[extra] = json.loads(capsys.readouterr().out)
    lap, gau = outs[""], outs[" --counter-noise gaussian --delta 1e-5"]
    assert gau["error_bound"] < lap["error_bound"]
    assert (lap["counter_noise"], lap["delta"], gau["counter_noise"], gau["delta"]) == ("laplace", 0.0, "gaussian", 1e-5)
    assert lap["privacy_unit"] == gau["privacy_unit"] == "episode"  # privcal.rl.units vocabulary
    assert lap["privacy_unit_description"] == gau["privacy_unit_description"] == PRIVACY_UNIT
    # the counters' largest error against E (a run above its (1 - beta) bound says so)
    assert lap["counter_error_within_bound"] == (lap["max_counter_error"] <= lap["error_bound"])
    assert gau["guarantee"].startswith("(100, 1e-05)-JDP") and gau["counter_epsilon"] is None


def test_cli_gaussian_csv_and_text(capsys):
    base = "train pucb --states 3 --actions 2 --horizon 3 --episodes 4 --epsilon 10 --no-references"
    args = _parser().parse_args((base + " --counter-noise gaussian --delta 1e-5 --format csv").split())
    _cli_pucb.run(args)
    lines = capsys.readouterr().out.strip().splitlines()
    assert lines[0] == ("episode,regret,counter_noise,delta,error_bound,privacy_unit,counter_error_within_bound,"
                        "verdict") and len(lines) == 5  # no references: verdict "cannot tell"
    assert lines[1].split(",")[2:4] == ["gaussian", "1e-05"]
    args = _parser().parse_args((base + " --counter-noise gaussian --delta 1e-5").split())
    _cli_pucb.run(args)
    out = capsys.readouterr().out
    assert "gaussian" in out and "(10, 1e-05)-JDP" in out and "privacy unit" in out and "error bound E" in out


def test_cli_every_flag_states_its_default():
    parser = _parser()
    train = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices["train"]
    sub = next(a for a in train._actions if isinstance(a, argparse._SubParsersAction)).choices["pucb"]
    for action in sub._actions:
        if isinstance(action, argparse._HelpAction) or action.help == argparse.SUPPRESS:
            continue
        assert action.help, action.option_strings
        if action.nargs != 0 or action.dest == "non_private":  # flags with a value (and --non-private)
            assert "default" in action.help, action.option_strings


@pytest.mark.parametrize("argv, match", [
    ("--epsilon 1 --counter-noise gaussian", "--delta"),
    ("--epsilon 1 --delta 1e-5", "--delta is used only"),
    ("--non-private --counter-noise gaussian --delta 1e-5", "non-private"),
    ("--epsilon 1 --counter-noise gaussian --delta 2", "delta"),
    ("--epsilon 1 --counter-noise gaussian --delta 1e-5 --error-bound paper", "Laplace formula"),
    ("--epsilon 1 --counter-noise gaussian --delta 1e-5 --budget-split paper", "budget_split"),
])
def test_cli_gaussian_bad_input(argv, match):
    args = _parser().parse_args(("train pucb --json --episodes 5 " + argv).split())
    with pytest.raises(ValueError, match=match):
        _cli_pucb.run(args)


def test_regret_experiment_with_gaussian_counters():
    exp = regret_experiment("fast", episodes=30, seeds=(0,), epsilons=(10.0, None), counter_noise="gaussian",
                            delta=1e-5, n_jobs=1)
    assert exp.setting["counter_noise"] == "gaussian" and exp.setting["delta"] == 1e-5
    assert exp.error_bounds["epsilon=10"] == PUCB(3, 2, 3, 30, epsilon=10.0, counter_noise="gaussian",
                                                  delta=1e-5).error_bound
    assert exp.error_bounds["non-private"] == 0.0
    single = run_pucb(random_mdp(3, 2, 3, seed=0), 30, 10.0, 0.1, 0, counter_noise="gaussian", delta=1e-5)
    np.testing.assert_array_equal(exp.episode_regret["epsilon=10"][0], single.episode_regret)
    with pytest.raises(ValueError, match="delta"):
        regret_experiment("fast", episodes=30, seeds=(0,), epsilons=(10.0,), counter_noise="gaussian", n_jobs=1)


def test_settings_objects_give_the_keyword_calls():
    # reference: the keyword call's own result on the same seed
    from privcal.rl.pucb import ErrorBoundCheckSettings

    a = pucb_error_bound_check(3, 2, 3, 2, 1.0, 0.1, trials=40, seed=5, budget_split="valid")
    b = pucb_error_bound_check(3, 2, 3, 2, 1.0, 0.1, settings=ErrorBoundCheckSettings(trials=40, seed=5,
                                                                                      budget_split="valid"))
    c = pucb_error_bound_check(3, 2, 3, 2, 1.0, 0.1, settings=ErrorBoundCheckSettings(trials=40, seed=1), seed=5,
                               budget_split="valid")
    assert a == b == c and a["trials"] == 40
    with pytest.raises(TypeError, match="pucb_error_bound_check\\(\\) got an unexpected keyword argument 'trial'"):
        pucb_error_bound_check(3, 2, 3, 2, 1.0, 0.1, trial=40)
    with pytest.raises(TypeError, match="run_pucb\\(\\) got an unexpected keyword argument 'options'"):
        run_pucb(bandit(), 5, 1.0, options=None)
    with pytest.raises(TypeError, match="PUCB\\(\\) got an unexpected keyword argument 'failure'"):
        PUCB(2, 2, 2, 10, epsilon=1.0, failure=0.1)


def test_the_trusted_agent_is_the_checked_one():
    # reference: the checked constructor on the same seed (same counter noise and tie-breaking)
    from privcal.rl.pucb.agent import PUCBOptions

    checked = PUCB(3, 2, 3, 40, epsilon=2.0, seed=6, failure_probability=0.2, budget_split="paper")
    trusted = PUCB.unchecked(3, 2, 3, 40, 2.0, 6, PUCBOptions(failure_probability=0.2, budget_split="paper"))
    assert (trusted.counter_epsilon, trusted.error_bound, trusted.guarantee) == (
        checked.counter_epsilon, checked.error_bound, checked.guarantee)
    np.testing.assert_array_equal(trusted.policy(), checked.policy())
    # the positional order of 0.2.0 still holds: (..., epsilon, failure_probability, seed)
    positional = PUCB(3, 2, 3, 40, 2.0, 0.2, 6, budget_split="paper")
    keyword = PUCB(3, 2, 3, 40, epsilon=2.0, seed=6, failure_probability=0.2, budget_split="paper")
    assert (positional.error_bound, positional.guarantee) == (keyword.error_bound, keyword.guarantee)
    np.testing.assert_array_equal(positional.policy(), keyword.policy())
