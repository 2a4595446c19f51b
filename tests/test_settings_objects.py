"""The settings objects (frozen dataclasses) that replace wide signatures: a call with the object gives the same
run as the same values passed as keywords, keywords replace the object's fields, and a name that is no field is
refused before any work. Each known value is the keyword call's own result on the same seed (the reference)."""

import dataclasses

import numpy as np
import pytest

from privcal.accounting.events import Neighbouring
from privcal.accounting.sampled_runs import SampledRun, validated_run
from privcal.rl import frontier as F
from privcal.rl.gpope.agent import GPOPESettings, gpope, gtd2
from privcal.rl.gpope.domains.chain import sample_chain
from privcal.rl.pucb.agent import PUCBOptions, run_pucb, run_pucb_unchecked
from privcal.rl.pucb.experiments import RegretSettings, make_mdp, regret_experiment
from privcal.rl.ucbvi.experiments import ComparisonSettings
from privcal.rl.ucbvi.experiments import regret_experiment as ucbvi_comparison


def test_settings_objects_are_frozen():
    for settings in (GPOPESettings(), RegretSettings(), F.FrontierSettings(), ComparisonSettings(), PUCBOptions()):
        field = dataclasses.fields(settings)[0].name
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(settings, field, None)


def test_gpope_with_settings_is_gpope_with_keywords():
    data = sample_chain(20, np.random.default_rng(0))
    kw = dict(sigma=0.7, clip=0.5, iterations=40, step_size=0.2, seed=3)
    a = gpope(data, **kw)
    b = gpope(data, GPOPESettings(**kw))
    c = gpope(data, GPOPESettings(sigma=0.7, clip=0.5, iterations=40, step_size=0.9, seed=3), step_size=0.2)
    for other in (b, c):  # same draws, same noise: the same iterates
        np.testing.assert_array_equal(a.theta, other.theta)
        np.testing.assert_array_equal(a.w, other.w)
    np.testing.assert_array_equal(gtd2(data, iterations=30, seed=1).theta,
                                  gpope(data, sigma=0.0, clip=None, iterations=30, seed=1).theta)


def test_an_unknown_or_foreign_keyword_is_refused_by_name():
    data = sample_chain(5, np.random.default_rng(0))
    with pytest.raises(TypeError, match="gpope\\(\\) got an unexpected keyword argument 'sigmaa'"):
        gpope(data, sigmaa=1.0)
    with pytest.raises(TypeError, match="gtd2\\(\\) got an unexpected keyword argument 'sigma'"):
        gtd2(data, sigma=1.0)  # GTD2 adds no noise: sigma is not one of its settings
    with pytest.raises(TypeError, match="must be a GPOPESettings"):
        gpope(data, {"sigma": 1.0})
    with pytest.raises(TypeError, match="frontier\\(\\) got an unexpected keyword argument 'epsilon'"):
        F.frontier("pucb", epsilon=1.0)
    with pytest.raises(TypeError, match="unexpected keyword argument 'episode'"):
        ucbvi_comparison("random", episode=10)
    with pytest.raises(ValueError, match="unknown setting override 'episode'"):
        regret_experiment("fast", episode=10)


def test_regret_experiment_with_settings_is_the_keyword_call():
    kw = dict(epsilons=(10.0, None), seeds=(0,), episodes=30)
    a = regret_experiment("fast", n_jobs=1, **kw)
    b = regret_experiment("fast", settings=RegretSettings(**kw), n_jobs=1)
    for label in a.episode_regret:
        np.testing.assert_array_equal(a.episode_regret[label], b.episode_regret[label])
    assert a.setting == b.setting and a.setting["episodes"] == 30  # the override of the named setting's size
    with pytest.raises(ValueError, match="episodes"):
        regret_experiment("fast", episodes=0)


def test_the_trusted_pucb_kernel_with_options_is_run_pucb():
    mdp = make_mdp("random", 3, 2, 3, seed=0)
    a = run_pucb(mdp, 40, 5.0, 0.2, seed=1, budget_split="paper", counter_noise="laplace")
    b = run_pucb_unchecked(mdp, 40, 5.0, 1, PUCBOptions(0.2, budget_split="paper"))
    np.testing.assert_array_equal(a.episode_regret, b.episode_regret)
    assert (a.jdp_epsilon, a.error_bound, a.info) == (b.jdp_epsilon, b.error_bound, b.info)


def test_validated_run_is_a_sampled_run():
    # closed form: T = ceil(N / b) = ceil(1000 / 64) = 16 steps per epoch; shuffle prices E releases upward
    run = validated_run("shuffle", 3, 64, 1000, 2.0, None, False)
    assert isinstance(run, SampledRun) and run.neighbouring is Neighbouring.ZERO_OUT
    assert (run.steps_per_epoch, run.steps, run.releases_upper, run.sample_rate) == (16, 48, 3, 0.064)
    full = validated_run("full_batch", 2, 1000, 1000, 1.0, "add_remove", False)
    assert (full.steps_per_epoch, full.steps, full.releases_upper) == (1, 2, 2)
