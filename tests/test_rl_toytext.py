"""Tests of privcal.rl.toytext: exact value iteration, FrozenLake's table read from gymnasium, offline data and
the FrozenLake runs of the tabular learners (small settings)."""

import sys

import numpy as np
import pytest

from privcal.rl import toytext
from privcal.rl.dpq.select import selection_probabilities
from privcal.rl.pucb.tabular import TabularMDP, backward_induction, uniform_policy_return
from privcal.rl.toytext import optimal_value, policy_value, uniform_value


def _two_state_mdp():
    # hand-solved MDP, H = 2, start in s0 (rewards deterministic means, transitions deterministic):
    #   s0: a0 -> s0, r = 0.5 ; a1 -> s1, r = 0.2
    #   s1: a0 -> s1, r = 1.0 ; a1 -> s0, r = 0.0
    p = np.zeros((2, 2, 2))
    p[0, 0, 0] = p[0, 1, 1] = p[1, 0, 1] = p[1, 1, 0] = 1.0
    r = np.array([[0.5, 0.2], [1.0, 0.0]])
    return TabularMDP(np.repeat(p[None], 2, axis=0), np.repeat(r[None], 2, axis=0), np.array([1.0, 0.0]))


def test_value_iteration_matches_the_hand_solved_two_state_mdp():
    mdp = _two_state_mdp()
    v, pi = optimal_value(mdp)
    # last step (h = 1): V(s0) = max(0.5, 0.2) = 0.5, V(s1) = max(1, 0) = 1
    # h = 0: Q(s0, a0) = 0.5 + 0.5 = 1.0, Q(s0, a1) = 0.2 + 1 = 1.2 -> V(s0) = 1.2 (a1);
    #        Q(s1, a0) = 1 + 1 = 2, Q(s1, a1) = 0 + 0.5 -> V(s1) = 2 (a0)          (by hand)
    np.testing.assert_allclose(v, [[1.2, 2.0], [0.5, 1.0], [0.0, 0.0]], atol=1e-15)
    np.testing.assert_array_equal(pi, [[1, 0], [0, 0]])
    # uniform policy: h = 1: (0.5 + 0.2)/2 = 0.35, (1 + 0)/2 = 0.5; h = 0: s0: (0.5 + 0.35 + 0.2 + 0.5)/2 = 0.775,
    # s1: (1 + 0.5 + 0 + 0.35)/2 = 0.925                                              (by hand)
    np.testing.assert_allclose(uniform_value(mdp), [[0.775, 0.925], [0.35, 0.5], [0.0, 0.0]], atol=1e-15)
    # a deterministic policy as one-hot probabilities: always a0 -> s0 earns 0.5 twice
    np.testing.assert_allclose(policy_value(mdp, np.array([[1.0, 0.0], [1.0, 0.0]]))[0], [1.0, 2.0], atol=1e-15)


def test_policy_value_refuses_a_non_policy():
    with pytest.raises(ValueError, match="policy"):
        policy_value(_two_state_mdp(), np.array([[0.7, 0.7], [1.0, 0.0]]))


# ------------------------------------------------------------------------------------------- FrozenLake

@pytest.fixture(scope="module")
def gym():
    return pytest.importorskip("gymnasium")


@pytest.fixture(scope="module")
def tables(gym):
    return toytext.frozen_lake_tables()


def test_the_table_is_gymnasiums(gym, tables):
    env = gym.make("FrozenLake-v1")
    try:
        raw = env.unwrapped.P
        assert env.spec.max_episode_steps == 100  # gymnasium's time limit (the module docstring's reference)
    finally:
        env.close()
    for s in range(16):
        for a in range(4):
            expected = np.zeros(16)
            for prob, nxt, rew, _ in raw[s][a]:
                expected[nxt] += prob
                assert tables.rewards[s, a, nxt] == rew
            np.testing.assert_allclose(tables.transitions[s, a], expected, atol=0)
    # known entries of the slippery 4x4 map (gymnasium's docs: intended move or a perpendicular one, 1/3 each):
    # cell 0, action left: stays (left wall, or up wall) w.p. 2/3, moves down to 4 w.p. 1/3
    np.testing.assert_allclose(tables.transitions[0, 0, [0, 4]], [2 / 3, 1 / 3], atol=1e-15)
    # holes (5, 7, 11, 12) and the goal (15) are terminal and absorbing with reward 0
    assert np.flatnonzero(tables.terminal).tolist() == [5, 7, 11, 12, 15]
    for s in (5, 7, 11, 12, 15):
        assert np.all(tables.transitions[s, :, s] == 1.0) and np.all(tables.rewards[s] == 0.0)
    assert tables.desc == ("SFFF", "FHFH", "FFFH", "HFFG")


def test_the_mdp_and_its_exact_values(gym):
    mdp = toytext.frozen_lake_mdp()
    assert (mdp.horizon, mdp.states, mdp.actions) == (20, 16, 4)
    # mean reward next to the goal: cell 14, action right enters 15 w.p. 1/3 (gymnasium's table)
    assert mdp.rewards[0, 14, 2] == pytest.approx(1 / 3, abs=1e-15)
    v, _ = toytext.optimal_value(mdp)
    # independent implementations: privcal.rl.pucb.tabular's backward induction and uniform-policy recursion
    np.testing.assert_allclose(v, backward_induction(mdp).values, atol=1e-14)
    assert float(mdp.initial @ toytext.uniform_value(mdp)[0]) == pytest.approx(uniform_policy_return(mdp), abs=1e-15)
    # the numbers the module docstring states (rounded): optimal 0.1991, uniform 0.0124 within 20 steps
    assert float(mdp.initial @ v[0]) == pytest.approx(0.1991, abs=5e-5)
    assert float(mdp.initial @ toytext.uniform_value(mdp)[0]) == pytest.approx(0.0124, abs=5e-5)


def test_offline_episodes_follow_the_table(tables):
    data = toytext.collect_episodes(4000, seed=0, tables=tables)
    assert data.states.shape == data.actions.shape == data.rewards.shape == (4000, 20)
    np.testing.assert_array_equal(data.states[:, 1:], data.next_states[:, :-1])  # one trajectory per row
    assert np.all(data.states[:, 0] == 0)  # start cell
    # reward 1 exactly on entering the goal from a frozen cell (gymnasium's R(s, a, s'))
    np.testing.assert_array_equal(data.rewards == 1.0, (data.next_states == 15) & (data.states != 15))
    # the uniform behaviour's mean return against its exact value 0.012445 (test above): 4 standard errors
    ret = data.rewards.sum(axis=1)
    mdp = toytext.frozen_lake_mdp()
    exact = float(mdp.initial @ toytext.uniform_value(mdp)[0])
    assert abs(ret.mean() - exact) < 4 * ret.std(ddof=1) / np.sqrt(ret.size)
    # a fixed seed reproduces the data; the transitions view lists (s, a, r, s')
    again = toytext.collect_episodes(4000, seed=0, tables=tables)
    np.testing.assert_array_equal(again.actions, data.actions)
    first = next(data.transitions())
    assert len(first) == 20 and first[0][0] == 0 and len(first[0]) == 4


def test_collect_refuses_bad_input(tables):
    with pytest.raises(ValueError, match="seed"):
        toytext.collect_episodes(10, seed=-1, tables=tables)
    with pytest.raises(ValueError, match="behaviour"):
        toytext.collect_episodes(10, behaviour=np.ones((16, 4)), tables=tables)
    with pytest.raises(ValueError, match="map_name"):
        toytext.frozen_lake_tables("5x5")


def test_missing_gymnasium_names_the_extra(gym, monkeypatch):
    monkeypatch.setitem(sys.modules, "gymnasium", None)  # import gymnasium now raises ImportError
    with pytest.raises(ImportError, match=r"pip install 'privcal\[rl\]'"):
        toytext.frozen_lake_mdp()


def test_the_tabular_learners_run_on_frozenlake_with_exact_regret(gym):
    from privcal.rl.pucb.agent import run_pucb
    from privcal.rl.ucbvi import PrivateUCBVI, run_ucbvi

    mdp = toytext.frozen_lake_mdp()
    v, _ = toytext.optimal_value(mdp)
    opt = float(mdp.initial @ v[0])
    run = run_ucbvi(mdp, 4, 10.0, 1e-5, seed=0)
    first = PrivateUCBVI(16, 4, 20, 4, epsilon=10.0, delta=1e-5, seed=0).policy()
    # the first regret is rho* minus the exact value of the first policy (toytext.policy_value on one-hot rows)
    assert run.episode_regret[0] == pytest.approx(opt - float(mdp.initial @ toytext.policy_value(
        mdp, np.eye(4)[first])[0]), abs=1e-14)
    assert run.uniform_regret == pytest.approx(opt - 0.012444824292288116, abs=1e-12)  # exact values above
    pucb = run_pucb(mdp, 4, 10.0, seed=0, counter_noise="gaussian", delta=1e-5)
    assert pucb.episode_regret.shape == (4,) and np.all(pucb.episode_regret <= opt + 1e-12)


# ------------------------------------------------------------------------------------------- offline selection

def test_importance_scores_by_hand():
    # one episode of H = 2 on a 2-state, 2-action toy: s0 -a1-> s1 (r = 0) -a0-> s1 (r = 1); behaviour uniform
    # (mu = 1/2). Candidate (a1 in s0, a0 in s1) matches both steps: G = w_{0:1} r_1 = 2 * 2 * 1 = 4; a candidate
    # that differs in s0 gets 0. Clip W = 3 and n_pub = 2: u = (min(3, 4), 0) / 2 = (1.5, 0)     (by hand)
    data = toytext.OfflineEpisodes(np.array([[0, 1]]), np.array([[1, 0]]), np.array([[0.0, 1.0]]),
                                   np.array([[1, 1]]), np.full((2, 2), 0.5), 0)
    u = toytext.importance_scores(data, np.array([[1, 0], [0, 0]]), 3.0, 2)
    np.testing.assert_allclose(u, [1.5, 0.0], atol=1e-15)


def test_offline_selection_is_epsilon_dp_for_one_episode(tables):
    # neighbouring data sets (one episode removed): every score moves by at most W / n_pub, and the exponential
    # selection's exact output probabilities (privcal.rl.dpq.select) differ by a factor <= e^epsilon at the
    # arguments offline_select hands to select (toytext.selection_arguments)
    data = toytext.collect_episodes(3000, seed=1, tables=tables)

    def consistent(i):  # up to its reward, the episode never takes two actions in one state
        stop = int(np.argmax(data.rewards[i])) + 1
        pairs = set(zip(data.states[i, :stop].tolist(), data.actions[i, :stop].tolist()))
        return len(pairs) == len({s for s, _ in pairs})

    rewarded = next(i for i in np.flatnonzero(data.rewards.sum(axis=1) > 0) if consistent(i))
    stop = int(np.argmax(data.rewards[rewarded])) + 1
    keep = np.arange(data.episodes) != rewarded
    smaller = toytext.OfflineEpisodes(data.states[keep], data.actions[keep], data.rewards[keep],
                                      data.next_states[keep], data.behaviour, 1)
    cand = toytext.candidate_policies(64)
    # candidates that follow the removed episode's actions: its success then weighs W in their score
    cand[:8, data.states[rewarded, :stop]] = data.actions[rewarded, :stop]
    w_max, n_pub, eps = 4.0 ** 6, 3000, 1.0
    u1 = toytext.importance_scores(data, cand, w_max, n_pub)
    u2 = toytext.importance_scores(smaller, cand, w_max, n_pub)
    assert np.max(np.abs(u1 - u2)) <= w_max / n_pub * (1 + 1e-12)
    assert np.max(np.abs(u1 - u2)) > 0.5 * w_max / n_pub  # the removed success did weigh in
    p1 = selection_probabilities(*toytext.selection_arguments(u1, eps, w_max, n_pub), "exponential")
    p2 = selection_probabilities(*toytext.selection_arguments(u2, eps, w_max, n_pub), "exponential")
    assert np.max(np.abs(np.log(p1 / p2))) <= eps * (1 + 1e-9)
    # and the exponent is exactly epsilon / (2 Delta), Delta = W / n_pub: the log-odds of a moved candidate k against
    # an unmoved j change by epsilon (u1_k - u2_k) / (2 Delta) (McSherry & Talwar 2007; a looser or tighter scale fails)
    k, j = int(np.argmax(np.abs(u1 - u2))), int(np.flatnonzero(u1 == u2)[0])
    change = np.log(p1[k] / p1[j]) - np.log(p2[k] / p2[j])
    assert change == pytest.approx(eps * (u1[k] - u2[k]) / (2 * w_max / n_pub), rel=1e-9)


def test_offline_select_reports_its_unit_and_references(tables):
    data = toytext.collect_episodes(2000, seed=0, tables=tables)
    res = toytext.offline_select(data, 1.0, candidates=toytext.candidate_policies(16), seed=0)
    assert res.privacy_unit == "episode" and "(1, 0)-DP for one episode" in res.guarantee
    # exact references: uniform 0.012445 and optimal 0.199133 within 20 steps (test_the_mdp_and_its_exact_values)
    assert res.uniform_value == pytest.approx(0.012444824292288116, abs=1e-12)
    assert res.optimal == pytest.approx(0.19913270083486323, abs=1e-12)
    assert res.candidate_mean <= res.best_candidate <= res.optimal and 0 <= res.chosen < 16
    with pytest.raises(ValueError, match="selector"):
        toytext.offline_select(data, 1.0, selector="randomized-response")


def test_gymnasiums_own_episodes_agree_with_the_exact_uniform_value(gym):
    # independent implementation: gymnasium's env.step under uniform random actions, stopped at H = 20 steps;
    # the goal frequency against the exact 0.012445 (test_the_mdp_and_its_exact_values), within 4 standard errors
    env = gym.make("FrozenLake-v1")
    rng = np.random.default_rng(0)
    wins, n = 0, 4000
    try:
        env.reset(seed=0)
        for _ in range(n):
            env.reset()
            for _step in range(20):
                _, reward, terminated, _, _ = env.step(int(rng.integers(4)))
                wins += reward == 1.0
                if terminated:
                    break
    finally:
        env.close()
    exact = 0.012444824292288116
    assert abs(wins / n - exact) < 4 * np.sqrt(exact * (1 - exact) / n)


def test_offline_select_with_settings_is_the_keyword_call(tables):
    # reference: the keyword call's own result on the same seed (same scores, same mechanism draw)
    data = toytext.collect_episodes(500, seed=1, tables=tables)
    cand = toytext.candidate_policies(8)
    a = toytext.offline_select(data, 2.0, candidates=cand, clip=64.0, seed=3)
    b = toytext.offline_select(data, 2.0, toytext.OfflineSelectSettings(candidates=cand, clip=64.0, seed=3))
    assert (a.chosen, a.value, a.scores, a.guarantee) == (b.chosen, b.value, b.scores, b.guarantee)
    with pytest.raises(TypeError, match="offline_select\\(\\) got an unexpected keyword argument 'clips'"):
        toytext.offline_select(data, 2.0, clips=64.0)
