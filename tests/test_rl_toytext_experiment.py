"""privcal.rl.toytext.experiment: one run of select or fqi-dpsgd on FrozenLake with its unit, guarantee and
references."""

from __future__ import annotations

import numpy as np
import pytest

from privcal.rl.toytext import experiment as X
from privcal.rl.toytext import frozenlake as FL
from privcal.rl.toytext import random_map as RM

gym = pytest.importorskip("gymnasium")


def test_select_on_a_random_map_releases_a_public_candidate_with_its_exact_value():
    run = X.run_frozenlake("select", epsilon=1.0, episodes=300, seed=4)
    d = run.to_dict()
    assert d["privacy_unit"] == "episode" and d["user_unit"] == "episode" and d["score"] == "hole-exposure"
    assert run.guarantee.startswith("(1, 0)-DP for one episode") and "sensitivity 0.003333" in run.guarantee
    assert run.desc == RM.draw_map(4)
    _, mdp = RM.map_environment(run.desc)
    cand = X.select_candidates("random-map")
    assert run.value == pytest.approx(float(RM.stationary_values(mdp, cand[d["chosen"]][None])[0]), abs=1e-15)
    prior = RM.prior_reference()
    assert run.reference == pytest.approx(prior.value_on(mdp), abs=1e-15)  # the reference on this very map
    assert (run.reference_expectation, run.reference_se) == (prior.value, prior.se)
    assert run.optimum >= max(run.value, run.reference) - 1e-12


def test_fixed_map_says_its_optimum_is_data_independent():
    run = X.run_frozenlake("fqi-dpsgd", epsilon=1.0, delta=1e-5, environment="fixed", episodes=200, seed=0,
                           config=X.fqi.TabularFQIConfig(iterations=1, steps=2, batch=20.0))
    d = run.to_dict()
    assert "data-independent" in d["fixed_map_note"] and run.reference_label == "uniform (behaviour) policy"
    mdp = FL.frozen_lake_mdp()
    assert run.reference == pytest.approx(float(mdp.initial @ FL.uniform_value(mdp)[0]), abs=1e-15)
    assert run.optimum == pytest.approx(0.1991, abs=5e-5)  # the fixed map's optimum (frozenlake's docstring)
    assert d["sampling"] == "poisson" and "N_pub = 200 episodes" in d["sample_rate_source"]
    assert run.non_private is not None


def test_bad_input_names_the_argument():
    with pytest.raises(ValueError, match="method"):
        X.run_frozenlake("q-learning", epsilon=1.0)
    with pytest.raises(ValueError, match="environment"):
        X.run_frozenlake("select", epsilon=1.0, environment="8x8")
    with pytest.raises(ValueError, match="episodes"):
        X.run_frozenlake("select", epsilon=1.0, episodes=0)
    with pytest.raises(ValueError, match="seed"):
        X.run_frozenlake("select", epsilon=1.0, seed=-1)


def test_run_frozenlake_with_settings_is_the_keyword_run():
    # reference: the keyword call's own result on the same seed (same map, data and mechanism draws)
    a = X.run_frozenlake("select", epsilon=1.0, episodes=300, seed=4, non_private=False)
    b = X.run_frozenlake("select", X.FrozenLakeSettings(epsilon=1.0, episodes=300, seed=4, non_private=False))
    assert a.to_dict() == b.to_dict()
    with pytest.raises(TypeError, match="missing 1 required keyword-only argument: 'epsilon'"):
        X.run_frozenlake("select", episodes=300)
    with pytest.raises(TypeError, match="run_frozenlake\\(\\) got an unexpected keyword argument 'episode'"):
        X.run_frozenlake("select", epsilon=1.0, episode=300)
