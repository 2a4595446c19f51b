"""privcal.rl.toytext.random_map: the random-map prior, its reference computed exactly, and the hole-exposure
scores' sensitivity."""

from __future__ import annotations

import numpy as np
import pytest

from privcal.rl.toytext import frozenlake as FL
from privcal.rl.toytext import random_map as RM

gym = pytest.importorskip("gymnasium")


def test_every_map_of_the_prior_has_a_path_and_is_seeded():
    maps = [RM.draw_map(s) for s in range(200)]
    for desc in maps:
        flat = "".join(desc)
        assert len(desc) == 4 and flat[0] == "S" and flat[-1] == "G" and set(flat[1:-1]) <= {"F", "H"}
        assert RM.has_path(desc)
    assert maps == [RM.draw_map(s) for s in range(200)]  # seeded: the same map for the same seed
    assert len(set(maps)) > 150  # and the seeds give different maps
    assert any("H" in "".join(d) for d in maps)
    # the search itself: a wall of holes cuts the goal off, a gap in it does not
    assert not RM.has_path(("SFFF", "HHHH", "FFFF", "FFFG"))
    assert RM.has_path(("SFFF", "HHHF", "FFFF", "FFFG"))
    assert not RM.has_path(("SFFF", "FFFF", "FFFH", "FFHG"))  # the goal's two neighbours are holes


def test_public_samples_are_fixed_and_independent():
    a, b = RM.public_maps(30, "design"), RM.public_maps(30, "evaluation")
    assert a == RM.public_maps(30, "design") and a != b
    assert all(RM.has_path(d) for d in a + b)
    with pytest.raises(ValueError, match="sample"):
        RM.public_maps(3, "private")


def test_stationary_values_equal_the_exact_policy_values():
    # independent implementation: frozenlake.policy_value on one-hot action probabilities (backward induction)
    _, mdp = RM.map_environment(RM.draw_map(3))
    pols = FL.candidate_policies(16)
    got = RM.stationary_values(mdp, pols)
    want = [float(mdp.initial @ FL.policy_value(mdp, np.eye(4)[p])[0]) for p in pols]
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-14)


def test_map_environment_is_gymnasiums_table_for_that_map():
    desc = ("SFFF", "FHFH", "FFFH", "HFFG")  # gymnasium's own 4x4 map
    tab, mdp = RM.map_environment(desc)
    ref = FL.frozen_lake_tables()
    np.testing.assert_array_equal(tab.transitions, ref.transitions)
    np.testing.assert_array_equal(tab.rewards, ref.rewards)
    # the fixed map's optimal return within H = 20, 0.1991 (privcal.rl.toytext's module docstring, value iteration)
    assert float(mdp.initial @ FL.optimal_value(mdp)[0][0]) == pytest.approx(0.1991, abs=5e-5)


def test_prior_reference_is_the_exact_mean_over_the_evaluation_maps():
    ref = RM.prior_reference(8, 12)
    maps = RM.public_maps(12, "evaluation")
    # recomputed independently: the chosen policy's exact value per map by frozenlake.policy_value
    vals = []
    for d in maps:
        _, mdp = RM.map_environment(d)
        pol = np.asarray(ref.policy)
        probs = np.eye(4)[pol] if ref.kind != "uniform" else np.full((16, 4), 0.25)
        vals.append(float(mdp.initial @ FL.policy_value(mdp, probs)[0]))
    assert ref.value == pytest.approx(np.mean(vals), abs=1e-14)
    assert ref.se == pytest.approx(np.std(vals, ddof=1) / np.sqrt(12), abs=1e-14)
    assert ref.optimum >= ref.value  # each map's optimum bounds any data-independent policy's value
    # the choice is the best class member on the design maps: no member does better there
    design = [RM.map_environment(d)[1] for d in RM.public_maps(8, "design")]
    chosen = np.mean([ref.value_on(m) for m in design])
    cands = FL.candidate_policies()
    assert chosen >= np.mean([RM.stationary_values(m, cands) for m in design], axis=0).max() - 1e-12
    assert chosen >= np.mean([float(m.initial @ FL.uniform_value(m)[0]) for m in design]) - 1e-12


def test_hitting_probabilities_against_simulation():
    pol = FL.candidate_policies(3)
    hit = RM.hitting_probabilities(pol)
    assert hit.shape == (3, 16) and np.all((hit >= 0) & (hit <= 1))
    assert np.all(hit[:, 0] == 1.0)  # every episode starts in cell 0
    # Monte Carlo on the hole-free map, 20000 episodes, seed 5: each frequency within 4.5 standard errors
    # (sqrt(p (1 - p) / n) <= 0.0036), a per-cell false alarm below 1e-5
    tab = FL.tables_from_desc(("SFFF", "FFFF", "FFFF", "FFFG"))
    data = FL.collect_episodes(20000, seed=5, tables=tab, behaviour=np.eye(4)[pol[1]])
    visited = np.zeros((20000, 16), dtype=bool)
    visited[:, 0] = True
    visited[np.arange(20000)[:, None], data.next_states] = True
    freq = visited.mean(axis=0)
    se = np.sqrt(np.maximum(hit[1] * (1 - hit[1]), 1e-12) / 20000)
    assert np.all(np.abs(freq - hit[1]) <= 4.5 * se + 1e-12)


def test_one_episode_moves_every_hole_exposure_score_by_at_most_one_over_the_public_size():
    tab, _ = RM.map_environment(RM.draw_map(1))
    data = FL.collect_episodes(300, seed=2, tables=tab)
    hit = RM.hitting_probabilities(FL.candidate_policies(40))
    n_pub = 300
    full = RM.hole_exposure_scores(data, hit, n_pub)
    assert np.all((full >= 0) & (full <= 1))
    worst = 0.0
    for i in range(0, 300, 7):  # remove episode i: add/remove neighbours
        keep = np.arange(300) != i
        less = FL.OfflineEpisodes(data.states[keep], data.actions[keep], data.rewards[keep], data.next_states[keep],
                                  data.behaviour, data.seed)
        worst = max(worst, float(np.abs(RM.hole_exposure_scores(less, hit, n_pub) - full).max()))
    assert 0.0 < worst <= 1.0 / n_pub + 1e-15
    # a hole the users fell into lowers the score of a candidate that visits it more
    assert np.ptp(full) > 0
