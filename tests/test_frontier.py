"""privcal.rl.frontier and its CLI module: structure of a sweep, determinism, references, infeasible
points and the 'beats trivial' verdict from its stated bound."""

from __future__ import annotations

import argparse
import json
import math

import numpy as np
import pytest

from privcal.rl import frontier as F

# t quantile: t_{0.95, 1} = 6.313752 (Student t table, 1 degree of freedom, one-sided 95%)
T95_1 = 6.313752


# ------------------------------------------------------------------------------ the verdict


def test_beats_reference_on_known_numbers():
    # values (1, 3): mean 2, sample std sqrt(2), n = 2, so se = 1 and the bounds are 2 -+ 6.313752
    verdict, bound = F.beats_reference([1.0, 3.0], -5.0, higher_is_better=True)
    assert verdict is True and bound == pytest.approx(2 - T95_1, rel=1e-6)
    assert F.beats_reference([1.0, 3.0], -4.0, higher_is_better=True)[0] is False
    verdict, bound = F.beats_reference([1.0, 3.0], 9.0, higher_is_better=False)
    assert verdict is True and bound == pytest.approx(2 + T95_1, rel=1e-6)
    assert F.beats_reference([1.0, 3.0], 8.0, higher_is_better=False)[0] is False
    # the reference's standard error is added in quadrature: se = sqrt(1 + 3) = 2
    _, bound = F.beats_reference([1.0, 3.0], 0.0, higher_is_better=True, reference_se=math.sqrt(3.0))
    assert bound == pytest.approx(2 - 2 * T95_1, rel=1e-6)
    # a higher confidence widens the bound: t_{0.99, 1} = 31.82052 (table)
    _, bound = F.beats_reference([1.0, 3.0], 0.0, higher_is_better=True, confidence=0.99)
    assert bound == pytest.approx(2 - 31.82052, rel=1e-6)


def test_beats_reference_edge_cases():
    assert F.beats_reference([5.0], 0.0, higher_is_better=True)[0] is None  # one seed: no verdict
    assert F.beats_reference([], 0.0, higher_is_better=True)[0] is None
    assert F.beats_reference([1.0, math.inf], 1e9, higher_is_better=False) == (False, math.inf)  # diverged
    assert F.beats_reference([10.0, 10.0, 10.0], 9.0, higher_is_better=True) == (True, 10.0)  # no spread
    for bad in (0.0, 1.0, 1.5):
        with pytest.raises(ValueError, match="confidence"):
            F.beats_reference([1.0, 2.0], 0.0, higher_is_better=True, confidence=bad)
    with pytest.raises(ValueError, match="reference_se"):
        F.beats_reference([1.0, 2.0], 0.0, higher_is_better=True, reference_se=-1.0)


# ------------------------------------------------------------------------------ sweeps

TINY = dict(epsilons=(1.0, 10.0), amounts=(40,), seeds=(0, 1))


@pytest.fixture(scope="module")
def pucb_tiny():
    return F.frontier("pucb", n_jobs=1, **TINY)


def test_structure_of_a_tiny_sweep(pucb_tiny):
    f = pucb_tiny
    # the default variant "all": pucb's Laplace (valid), Gaussian-counter and paper variants, in that order
    assert [(p.variant, p.epsilon, p.amount) for p in f.points] == [
        ("valid", 1.0, 40), ("valid", 10.0, 40), ("gaussian", 1.0, 40), ("gaussian", 10.0, 40),
        ("paper", 1.0, 40), ("paper", 10.0, 40)]
    for p in f.points:
        assert len(p.values) == 2 and not p.infeasible
        assert p.mean == pytest.approx(np.mean(p.values)) and p.std == pytest.approx(np.std(p.values, ddof=1))
        assert (p.beats_trivial, p.bound) == F.beats_reference(p.values, f.references[40]["trivial"]["mean"],
                                                               higher_is_better=False)
        assert p.noise > 0 and p.guarantee
    assert f.points[0].guarantee.startswith("1-JDP, Laplace") and f.points[4].guarantee.startswith("no valid")
    assert f.points[2].guarantee.startswith("(1, 1e-05)-JDP, Gaussian")
    # the gaussian delta is the setting's 1e-5 (Laplace counters are pure epsilon-JDP)
    assert f.higher_is_better is False and f.utility == "regret_per_episode" and f.delta == 1e-5
    rows = f.rows()
    assert len(rows) == 6 and {"trivial", "non_private", "beats_trivial", "bound"} <= set(rows[0])
    assert [r["variant"] for r in rows] == ["valid", "valid", "gaussian", "gaussian", "paper", "paper"]
    d = f.to_dict()
    json.dumps(d)  # JSON-ready
    assert set(d["first_beating_gaussian"]) == {"40"}
    assert "valid" in f.text() and "gaussian" in f.text() and "uniform policy" in f.text()
    assert f.markdown().count("\n") == 7


def test_pucb_gaussian_points_use_gaussian_counters(pucb_tiny):
    # noise is E: each gaussian point's E is the agent's Gaussian E at (eps, delta = 1e-5), below the
    # Laplace E at the same epsilon (the Gaussian counters' l2 calibration, sqrt(6HL) against 6HL)
    from privcal.rl.pucb import PUCB

    pts = {(p.variant, p.epsilon): p for p in pucb_tiny.points}
    for eps in (1.0, 10.0):
        gauss = PUCB(3, 2, 3, 40, epsilon=eps, counter_noise="gaussian", delta=1e-5)
        assert pts["gaussian", eps].noise == gauss.error_bound
        assert pts["valid", eps].noise == PUCB(3, 2, 3, 40, epsilon=eps).error_bound
        assert pts["gaussian", eps].noise < pts["valid", eps].noise


def test_references_present(pucb_tiny):
    from privcal.rl.pucb.experiments import make_mdp
    from privcal.rl.pucb.tabular import backward_induction, uniform_policy_return

    ref = pucb_tiny.references[40]
    mdp = make_mdp("random", 3, 2, 3, 0)  # the fast setting's MDP
    gap = float(mdp.initial @ backward_induction(mdp).values[0]) - uniform_policy_return(mdp)
    assert ref["trivial"]["mean"] == pytest.approx(gap, rel=1e-12) and ref["trivial"]["se"] == 0.0
    assert len(ref["non_private"]["values"]) == 2 and ref["non_private"]["mean"] >= 0.0


def test_does_not_depend_on_n_jobs(pucb_tiny):
    seen = []
    assert F.frontier("pucb", n_jobs=2, progress=lambda d, t: seen.append((d, t)), **TINY).to_dict() \
        == pucb_tiny.to_dict()
    assert seen[-1] == (14, 14)  # 3 variants x 2 epsilons x 2 seeds, plus 2 non-private runs


def test_a_point_does_not_depend_on_the_rest_of_the_sweep(pucb_tiny):
    one = F.frontier("pucb", epsilons=(10.0,), amounts=(40,), seeds=(0, 1), variant="paper", n_jobs=1)
    assert one.points[0] == pucb_tiny.points[5]
    one = F.frontier("pucb", epsilons=(10.0,), amounts=(40,), seeds=(0, 1), variant="gaussian", n_jobs=1)
    assert one.points[0] == pucb_tiny.points[3] and one.delta == 1e-5


def test_dpq_infeasible_points_are_reported_and_references():
    f = F.frontier("dpq", epsilons=(0.9, 10.0), amounts=(500,), seeds=(0, 1), n_jobs=2, environment="fixed")
    paper = {p.epsilon: p for p in f.points if p.variant == "paper"}
    # the paper's Thm 5 has no noise bound k at epsilon = 10 (privcal.dpq.calibrate, variant "paper");
    # at 0.9 App. E.3 prints sigma = 0.32
    assert paper[10.0].infeasible and paper[10.0].values == () and paper[10.0].beats_trivial is None
    assert paper[0.9].noise == 0.32 and len(paper[0.9].values) == 2
    assert "infeasible" in f.text() and "infeasible" in f.markdown()
    assert [r["infeasible"] != "" for r in f.rows()] == [False, False, False, True]
    valid = [p for p in f.points if p.variant == "valid"]
    assert all(len(p.values) == 2 and "DP w.r.t. reward functions" in p.guarantee for p in valid)
    ref = f.references[500]
    assert ref["trivial"]["label"] == "random policy" and ref["trivial"]["se"] > 0
    assert ref["optimum"]["mean"] > ref["trivial"]["mean"]  # move-to-middle beats random (App. E.1)
    assert f.first_beating("valid") == {500: None} or all(
        isinstance(e, float) for e in f.first_beating("valid").values())


def test_dpq_random_peak_frontier_shows_the_valid_learners_beside_algorithm_1():
    # the default environment: theta drawn per seed; the trivial reference is the best data-independent policy
    # in expectation over theta (12.22 per episode, privcal.rl.envs.trivial_return)
    f = F.frontier("dpq", epsilons=(10.0,), amounts=(2000,), seeds=(0, 1), n_jobs=1,
                   variant="all")
    assert [p.variant for p in f.points] == ["select", "fqi-transition", "fqi-episode", "valid", "paper"]
    units = {p.variant: p.privacy_unit for p in f.points}
    assert units == {"select": "reward-function", "fqi-transition": "transition", "fqi-episode": "episode",
                     "valid": "reward-function", "paper": "reward-function"}
    ref = f.references[2000]
    assert ref["trivial"]["mean"] == pytest.approx(12.217, abs=0.01) and "data-independent" in ref["trivial"]["label"]
    assert f.utility == "policy_return" and all(r["privacy_unit"] for r in f.rows())
    # randomized response at epsilon 10 over 40 policies releases the best one with probability 0.998, and
    # fitted-Q at epsilon 10 on 2000 transitions learns (measured 20.6-21.4 per seed; trivial 12.22)
    first = f.first_beating("select"), f.first_beating("fqi-transition")
    assert first == ({2000: 10.0}, {2000: 10.0})
    verdicts = {p.variant: p.verdict for p in f.points}
    assert verdicts["select"] == verdicts["fqi-transition"] == "beats"  # Welch t over the 2 seeds
    assert "privacy_unit" in f.to_dict()["points"][0] and "first_beating_select" in f.to_dict()
    with pytest.raises(ValueError, match="not a variant of dpq on the fixed environment"):
        F.frontier("dpq", variant="select", environment="fixed", epsilons=(1.0,), amounts=(2000,), seeds=(0,))
    with pytest.raises(ValueError, match="environment applies only to agent 'dpq'"):
        F.frontier("pucb", environment="fixed", **TINY)


def test_gpope_references(monkeypatch):
    from dataclasses import replace

    from privcal.rl.gpope import experiments as G

    small = replace(G.SETTINGS["fast"], chain_eval=500, step_grid=(1e-3, 1e-1))
    monkeypatch.setattr(F, "_gpope_context", lambda setting: (small, G.make_context("chain", small, 0)))
    f = F.frontier("gpope", epsilons=(1.0,), amounts=(30,), seeds=(0, 1), variant="valid", n_jobs=1)
    ref = f.references[30]
    assert ref["trivial"]["label"] == "theta = 0" and {"lstd", "non_private"} <= set(ref)
    assert f.points[0].noise > 0 and f.higher_is_better is False


@pytest.mark.parametrize("kwargs, match", [
    ({"agent": "sarsa"}, "agent"),
    ({"agent": "pucb", "variant": "corrected"}, "variant"),
    ({"agent": "pucb", "setting": "full"}, "setting"),
    ({"agent": "pucb", "epsilons": (0.0,)}, "epsilons"),
    ({"agent": "pucb", "amounts": (0,)}, "amounts"),
    ({"agent": "pucb", "seeds": (-1,)}, "seeds"),
    ({"agent": "pucb", "seeds": ()}, "empty"),
    ({"agent": "pucb", "variant": "both", "delta": 1e-5}, "delta"),
    ({"agent": "pucb", "variant": "gaussian", "delta": 1.5}, "delta"),
    ({"agent": "dpq", "variant": "gaussian"}, "variant"),
    ({"agent": "dpq", "delta": 1.5}, "delta"),
    ({"agent": "dpq", "amounts": (10,)}, "amounts"),
    ({"agent": "pucb", "backend": "dask"}, "scheduler"),
    ({"agent": "pucb", "n_jobs": 0}, "n_jobs"),
])
def test_bad_input(kwargs, match):
    agent = kwargs.pop("agent")
    with pytest.raises(ValueError, match=match):
        F.frontier(agent, **{**TINY, **kwargs})


def test_plot(pucb_tiny, tmp_path):
    pytest.importorskip("matplotlib")
    path = tmp_path / "frontier.png"
    fig = F.plot_frontier(pucb_tiny, str(path))
    assert path.stat().st_size > 0
    ax = fig.axes[0]
    assert ax.get_xscale() == "log" and "epsilon" in ax.get_xlabel() and "regret" in ax.get_ylabel()
    labels = ax.get_legend_handles_labels()[1]
    assert {"valid, T=40", "gaussian, T=40", "paper, T=40", "non-private, T=40",
            "uniform policy (trivial)"} <= set(labels)
    with pytest.raises(ValueError):
        F.plot_frontier(pucb_tiny, str(tmp_path / "frontier.jpg"))


# ------------------------------------------------------------------------------ CLI module


def _parser():
    from privcal.cli import frontier as _cli_frontier

    p = argparse.ArgumentParser(prog="privcal")
    sub = p.add_subparsers()
    return p, _cli_frontier.add_parser(sub)


def test_cli_every_flag_states_its_default():
    _, sub = _parser()
    for action in sub._actions:
        if isinstance(action, argparse._HelpAction):
            continue
        assert action.help, action.dest  # every flag and the positional agent have help
        if action.option_strings and action.nargs != 0:  # flags that take a value state their default
            assert "default" in action.help, action.option_strings


def test_cli_json_and_csv(capsys, tmp_path):
    p, _ = _parser()
    args = p.parse_args(["frontier", "pucb", "--epsilons", "1,10", "--amounts", "40", "--seeds", "0,1",
                         "--n-jobs", "1", "--json", "--plot", str(tmp_path / "f.png")])
    assert args._run(args) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["agent"] == "pucb" and len(out["points"]) == 6 and "40" in out["references"]
    assert [p["variant"] for p in out["points"]].count("gaussian") == 2 and out["delta"] == 1e-5
    assert (tmp_path / "f.png").exists()
    args = p.parse_args(["frontier", "pucb", "--epsilons", "1", "--amounts", "40", "--seeds", "0,1",
                         "--n-jobs", "1", "--variant", "valid", "--format", "csv"])
    args._run(args)
    lines = capsys.readouterr().out.strip().splitlines()
    assert lines[0].startswith("agent,variant,privacy_unit,epsilon,amount,mean") and len(lines) == 2


@pytest.mark.parametrize("argv, match", [
    (["--backend", "dask"], "scheduler"),
    (["--scheduler", "tcp://x:8786"], "scheduler"),
    (["--n-jobs", "0"], "n-jobs"),
    (["--epsilons", "-1"], "epsilons"),
    (["--variant", "valid", "--delta", "1e-5"], "delta"),
    (["--plot", "out.jpg"], "suffix"),
    (["--json", "--format", "csv"], "contradicts"),
])
def test_cli_bad_input_raises_value_error(argv, match):
    p, _ = _parser()
    args = p.parse_args(["frontier", "pucb", "--amounts", "40", "--seeds", "0,1", *argv])
    with pytest.raises(ValueError, match=match):
        args._run(args)


def test_plot_defines_its_error_bars_and_keeps_the_infeasibility_note_in_its_panel(pucb_tiny):
    # issue 19, item 8: the picture says what its bars are, and the note of an infeasible point sits inside the
    # frame of the panel it belongs to (in docs/frontier.py's stacked panels it used to sit above the next title)
    pytest.importorskip("matplotlib")
    import dataclasses

    import matplotlib.pyplot as plt

    bad = F.FrontierPoint("paper", 3.0, pucb_tiny.points[0].amount, infeasible="no sigma meets the target")
    result = dataclasses.replace(pucb_tiny, points=tuple(pucb_tiny.points) + (bad,))
    fig, axes = plt.subplots(2, 1, figsize=(9, 9))
    F.plot_frontier(result, ax=axes[0])
    F.plot_frontier(pucb_tiny, ax=axes[1])
    fig.canvas.draw()
    assert "error bars: mean +- 1 sample standard deviation over the" in axes[0].get_title()
    notes = [t for t in axes[0].texts if t.get_text().startswith("infeasible calibration")]
    assert len(notes) == 1 and "paper eps=3" in notes[0].get_text() and not axes[1].texts
    box, frame = notes[0].get_window_extent(), axes[0].get_window_extent()
    assert frame.y0 <= box.y0 and box.y1 <= frame.y1  # inside its own panel, above the next one
    assert box.y0 > axes[1].get_tightbbox().y1
    plt.close(fig)
