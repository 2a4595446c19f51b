"""privcal.rl.toytext.fqi: fitted-Q iteration by DP-SGD over FrozenLake episodes, priced for the episode unit."""

from __future__ import annotations

import numpy as np
import pytest

from privcal.rl.toytext import fqi
from privcal.rl.toytext import frozenlake as FL
from privcal.rl.toytext import random_map as RM

gym = pytest.importorskip("gymnasium")

SMALL = fqi.TabularFQIConfig(iterations=2, steps=5, batch=40.0)


@pytest.fixture(scope="module")
def world():
    tab, mdp = RM.map_environment(RM.draw_map(0))
    return FL.collect_episodes(400, seed=0, tables=tab), mdp


def test_the_guarantee_is_priced_for_the_episode_unit_and_the_accountant_sigma_re_derived(world):
    dp_accounting = pytest.importorskip("dp_accounting")
    data, mdp = world
    res = fqi.train_fqi_frozenlake(data, mdp, epsilon=1.0, delta=1e-5, config=SMALL, seed=1)
    assert res.premises_held and "one episode (one user's whole trajectory)" in res.guarantee
    assert res.sample_rate == 40.0 / 400 and res.noisy_steps == 10  # q = b / N_pub, 2 x 5 steps priced
    assert "N_pub = 400 episodes" in res.sample_rate_source()
    # independent accountant: Google's dp_accounting PLD, 10 Poisson-subsampled Gaussians at noise multiplier
    # sigma / C, add/remove neighbours; privcal's sigma must give epsilon <= 1 there, and not much less
    event = dp_accounting.SelfComposedDpEvent(
        dp_accounting.PoissonSampledDpEvent(res.sample_rate, dp_accounting.GaussianDpEvent(res.sigma / SMALL.clip)),
        10)
    acc = dp_accounting.pld.PLDAccountant(value_discretization_interval=1e-4)
    eps = acc.compose(event).get_epsilon(1e-5)
    assert 0.97 < eps <= 1.0 + 1e-3


def test_a_broken_clip_at_twice_c_makes_the_printed_premise_fail(world, monkeypatch):
    data, mdp = world
    cfg = fqi.TabularFQIConfig(iterations=2, steps=5, batch=40.0, clip=0.01)  # small C: the clip binds
    honest = fqi.train_fqi_frozenlake(data, mdp, epsilon=1.0, delta=1e-5, config=cfg, seed=1)
    assert honest.premises_held and honest.largest_clipped_norm == pytest.approx(0.01, rel=1e-9)
    clip = fqi.clip_records

    def broken(gradients, c):  # clips at 2C: the mechanism no longer is what was priced
        return clip(gradients, 2.0 * c)

    monkeypatch.setattr(fqi, "clip_records", broken)
    bad = fqi.train_fqi_frozenlake(data, mdp, epsilon=1.0, delta=1e-5, config=cfg, seed=1)
    assert not bad.premises_held
    assert bad.guarantee.startswith("no guarantee: a premise failed")
    assert bad.largest_clipped_norm == pytest.approx(0.02, rel=1e-9)


def test_clip_records_reports_the_norms_after_clipping():
    g = np.array([[3.0, 4.0], [0.3, 0.4], [0.0, 0.0]])  # norms 5, 0.5, 0
    clipped, norms = fqi.clip_records(g, 1.0)
    np.testing.assert_allclose(norms, [1.0, 0.5, 0.0], atol=1e-15)
    np.testing.assert_allclose(clipped[0], [0.6, 0.8], atol=1e-15)


def test_episode_gradients_sum_the_transitions_of_each_episode(world):
    data, _ = world
    rng = np.random.default_rng(3)
    w = rng.normal(size=(4, 16))
    y = rng.normal(size=data.rewards.shape)
    rows = np.array([2, 7])
    got = fqi.episode_gradients(w, data, y, rows)
    for k, i in enumerate(rows):  # by hand: sum_t (w[a_t, s_t] - y_t) e_{a_t, s_t}
        want = np.zeros((4, 16))
        for t in range(data.states.shape[1]):
            s, a = data.states[i, t], data.actions[i, t]
            want[a, s] += w[a, s] - y[i, t]
        np.testing.assert_allclose(got[k], want.ravel(), atol=1e-12)


def test_q_comes_from_the_public_size_not_the_datas_own(world):
    data, mdp = world
    more = FL.collect_episodes(401, seed=0, tables=FL.tables_from_desc(RM.draw_map(0)))
    a = fqi.train_fqi_frozenlake(data, mdp, epsilon=1.0, delta=1e-5, config=SMALL, public_size=400, seed=1)
    b = fqi.train_fqi_frozenlake(more, mdp, epsilon=1.0, delta=1e-5, config=SMALL, public_size=400, seed=1)
    assert a.sample_rate == b.sample_rate == 0.1 and a.sigma == b.sigma  # one more episode changes neither
    assert "given as public" in b.sample_rate_source()


def test_non_private_learner_and_bad_input(world):
    data, mdp = world
    res = fqi.train_fqi_frozenlake(data, mdp, epsilon=None, delta=None, config=SMALL, seed=1)
    assert res.sigma == 0.0 and res.noisy_steps == 0 and res.guarantee.startswith("none")
    opt = float(mdp.initial @ FL.optimal_value(mdp)[0][0])
    assert 0.0 <= res.value <= opt + 1e-12  # an exact value, bounded by the map's optimum
    with pytest.raises(ValueError, match="both epsilon and delta"):
        fqi.train_fqi_frozenlake(data, mdp, epsilon=1.0, delta=None)
    with pytest.raises(ValueError, match="gamma"):
        fqi.TabularFQIConfig(gamma=1.0)
    with pytest.raises(ValueError, match="initial"):
        fqi.train_fqi_frozenlake(data, mdp, epsilon=None, delta=None, config=SMALL, initial=np.zeros((3, 3)))


def test_settings_object_gives_the_keyword_run_and_epsilon_delta_stay_required(world):
    # reference: the keyword call's own result on the same seed (same sampling and noise streams)
    data, mdp = world
    a = fqi.train_fqi_frozenlake(data, mdp, epsilon=1.0, delta=1e-5, config=SMALL, seed=2)
    b = fqi.train_fqi_frozenlake(data, mdp, fqi.FQISettings(epsilon=1.0, delta=1e-5, config=SMALL, seed=2))
    c = fqi.train_fqi_frozenlake(data, mdp, fqi.FQISettings(epsilon=1.0, delta=1e-5, config=SMALL, seed=9), seed=2)
    assert a.value == b.value == c.value and a.guarantee == b.guarantee
    assert a.to_dict()["sigma"] == b.to_dict()["sigma"]
    with pytest.raises(TypeError, match="missing 2 required keyword-only arguments: 'epsilon' and 'delta'"):
        fqi.train_fqi_frozenlake(data, mdp)
    with pytest.raises(TypeError, match="missing 1 required keyword-only argument: 'delta'"):
        fqi.train_fqi_frozenlake(data, mdp, epsilon=1.0)
    with pytest.raises(TypeError, match="unexpected keyword argument 'sigma'"):
        fqi.train_fqi_frozenlake(data, mdp, epsilon=1.0, delta=1e-5, sigma=1.0)
