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


def _cauchy_p(t):
    # Student's t with 1 degree of freedom is the Cauchy distribution: P(T >= t) = 1/2 - arctan(t) / pi
    return 0.5 - math.atan(t) / math.pi


def test_one_sided_p_value_is_the_test_of_beats_reference():
    # values (1, 3): mean 2, se 1, 1 degree of freedom (as in test_beats_reference_on_known_numbers)
    assert F.one_sided_p_value([1.0, 3.0], -5.0, higher_is_better=True) == pytest.approx(_cauchy_p(7.0), rel=1e-9)
    assert F.one_sided_p_value([1.0, 3.0], 9.0, higher_is_better=False) == pytest.approx(_cauchy_p(7.0), rel=1e-9)
    # p < 0.05 exactly when the one-sided 95% bound clears the reference: t = 7 (p 0.045) beats, t = 6 (p 0.053) not
    for ref in (-5.0, -4.0, 0.0, 2.5):
        p = F.one_sided_p_value([1.0, 3.0], ref, higher_is_better=True)
        assert (p < 0.05) == F.beats_reference([1.0, 3.0], ref, higher_is_better=True)[0]
    assert F.one_sided_p_value([5.0], 0.0, higher_is_better=True) is None
    assert F.one_sided_p_value([1.0, math.nan], 0.0, higher_is_better=True) == 1.0  # a diverged run never beats
    assert F.one_sided_p_value([2.0, 2.0], 1.0, higher_is_better=True) == 0.0  # no spread, exact reference
    assert F.one_sided_p_value([2.0, 2.0], 2.0, higher_is_better=True) == 1.0  # a tie does not beat


def test_holm_on_a_hand_computed_example():
    # Holm 1979 step-down, computed by hand: m = 4 tested p-values (the None is no test), alpha = 0.05.
    # sorted: 0.005 <= 0.05/4 = 0.0125 reject; 0.01 <= 0.05/3 = 0.0167 reject; 0.03 > 0.05/2 = 0.025 stop.
    # adjusted: 4 * 0.005 = 0.02; max(0.02, 3 * 0.01) = 0.03; max(0.03, 2 * 0.03) = 0.06; max(0.06, 1 * 0.04) = 0.06
    rejected, adjusted = F.holm([0.01, 0.04, 0.03, 0.005, None], alpha=0.05)
    assert rejected == [True, False, False, True, None]
    assert [a if a is None else round(a, 12) for a in adjusted] == [0.03, 0.06, 0.06, 0.02, None]
    # uncorrected, all four are below 0.05; one hypothesis is its own family (no correction)
    assert F.holm([0.04], alpha=0.05) == ([True], [0.04])
    assert F.holm([], alpha=0.05) == ([], [])
    # the adjusted p-value is capped at 1: 3 * 0.5 -> 1
    assert F.holm([0.5, 0.6, 0.7])[1] == [1.0, 1.0, 1.0]
    with pytest.raises(ValueError, match="p_values"):
        F.holm([0.1, 1.5])
    with pytest.raises(ValueError, match="alpha"):
        F.holm([0.1], alpha=0.0)


def _line(ts, variant="valid", amount=40):
    # per epsilon, two seeds (t - 1, t + 1) against reference 0: mean t, se 1, p = 1/2 - arctan(t) / pi
    pts = []
    for eps, t in ts.items():
        vals = (t - 1.0, t + 1.0)
        beats, bound = F.beats_reference(vals, 0.0, higher_is_better=True)
        pts.append(F.FrontierPoint(variant, eps, amount, vals, t, math.sqrt(2.0), bound, beats, privacy_unit="episode",
                                   p_value=F.one_sided_p_value(vals, 0.0, higher_is_better=True)))
    return pts


def test_holm_changes_the_first_epsilon_that_beats():
    # t = 7.5, 10, 400 give p = 0.0423, 0.0317, 0.000796 (closed form above): each alone beats at 0.05, but
    # Holm over the three keeps only eps = 100 (3 * 0.000796 = 0.0024 <= 0.05; then 2 * 0.0317 = 0.063 > 0.05)
    pts = _line({1.0: 7.5, 10.0: 10.0, 100.0: 400.0}) + _line({1.0: 400.0}, amount=80)
    assert [p.p_value for p in pts] == pytest.approx([_cauchy_p(7.5), _cauchy_p(10.0), _cauchy_p(400.0),
                                                      _cauchy_p(400.0)], rel=1e-9)
    pts = F.holm_over_grid(pts, confidence=0.95)
    assert [p.beats_trivial for p in pts] == [True, True, True, True]
    assert [p.beats_holm for p in pts] == [False, False, True, True]  # the line at amount 80 is its own family
    ref = {a: {"trivial": {"mean": 0.0, "se": 0.0, "label": "zero"}, "non_private": {"mean": 9.0, "std": 0.0}}
           for a in (40, 80)}
    f = F.Frontier("pucb", "fast", "u", "u", True, "episodes T", 1e-5, 0.95, (0, 1), pts, ref)
    assert f.first_beating("valid") == {40: 100.0, 80: 1.0}
    assert f.first_beating("valid", corrected=False) == {40: 1.0, 80: 1.0}
    d = f.to_dict()
    assert d["first_beating_valid"] == {"40": 100.0, "80": 1.0} and d["first_beating_valid_uncorrected"]["40"] == 1.0
    assert "T=40: 100 (uncorrected: 1)" in f.text()
    # the saved form reads back
    assert F.Frontier.from_dict(json.loads(json.dumps(d))).to_dict() == d


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
    assert f.markdown().count("\n") == 9 and "Holm" in f.markdown()
    for r in rows:  # the Holm fields and the user-level epsilon in every row (pucb: one episode = one user)
        assert {"p_value", "p_holm", "beats_holm", "user_epsilon", "correction"} <= set(r)
        assert r["user_epsilon"] == (None if r["variant"] == "paper" else r["epsilon"])
    assert "Holm" in d["correction"] and "Holm" in f.text() and d["user_unit"] == "episode"


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
    # everything but the Holm correction, which is over the line's epsilon grid by design
    from dataclasses import replace

    def alone(p):
        return replace(p, p_holm=None, beats_holm=None)

    one = F.frontier("pucb", epsilons=(10.0,), amounts=(40,), seeds=(0, 1), variant="paper", n_jobs=1)
    assert alone(one.points[0]) == alone(pucb_tiny.points[5])
    assert one.points[0].p_holm == one.points[0].p_value  # a one-point grid: no correction
    one = F.frontier("pucb", epsilons=(10.0,), amounts=(40,), seeds=(0, 1), variant="gaussian", n_jobs=1)
    assert alone(one.points[0]) == alone(pucb_tiny.points[3]) and one.delta == 1e-5
    # in the two-epsilon sweep, Holm's adjustment is what holm() gives on the line's two p-values
    line = [p for p in pucb_tiny.points if p.variant == "gaussian"]
    rejected, adjusted = F.holm([p.p_value for p in line], alpha=0.05)
    assert [p.p_holm for p in line] == pytest.approx(adjusted) and [p.beats_holm for p in line] == rejected
    assert all((p.p_value < 0.05) == p.beats_trivial for p in pucb_tiny.points)


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
    # the user's epsilon: the point's own where its unit covers the user, none for the paper's sigma, the group
    # bound of one 50-step episode for the transition unit (pinned in test_user_level_epsilon_of_the_transition_unit)
    user = {p.variant: (p.user_epsilon, p.user_epsilon_lower, p.user_unit) for p in f.points}
    assert user["select"] == user["fqi-episode"] == user["valid"] == (10.0, None, "episode")
    assert user["paper"] == (None, None, "episode")
    upper, lower, _ = user["fqi-transition"]
    assert 10.0 < lower <= upper and "[" in f.text()
    assert "privacy_unit" in f.to_dict()["points"][0] and "first_beating_select" in f.to_dict()
    with pytest.raises(ValueError, match="not a variant of dpq on the fixed environment"):
        F.frontier("dpq", variant="select", environment="fixed", epsilons=(1.0,), amounts=(2000,), seeds=(0,))
    with pytest.raises(ValueError, match="environment applies only to agents 'dpq' and 'frozenlake'"):
        F.frontier("pucb", environment="fixed", **TINY)


def test_user_level_epsilon_of_the_transition_unit():
    # one user holds one 50-step episode: the frontier reports privcal.accounting.groups.group_epsilon of the run's
    # sigma (clip C = 1), Poisson rate q = 256 / 2000 transitions and 10 x 100 steps, at the frontier's delta
    from privcal.accounting.groups import group_epsilon

    f = F.frontier("dpq", epsilons=(1.0,), amounts=(2000,), seeds=(0, 1), variant="fqi-transition", n_jobs=1)
    (p,) = f.points
    upper, lower = group_epsilon(p.noise, 256 / 2000, 1000, 50, 1e-4)
    assert (p.user_epsilon, p.user_epsilon_lower) == (upper, lower) and p.user_unit == "episode"
    # far above the transition's epsilon 1: docs/groups.md's Numbers give [146.2, 155.6] at 5000 transitions
    assert 100.0 < lower <= upper
    row = f.rows()[0]
    assert (row["user_epsilon"], row["user_epsilon_lower"]) == (upper, lower)
    assert f"[{lower:.4g}, {upper:.4g}]" in f.markdown() and f"[{lower:.4g}, {upper:.4g}]" in f.text()


def test_gpope_references(monkeypatch):
    from dataclasses import replace

    from privcal.rl import frontier_plans
    from privcal.rl.gpope import experiments as G

    small = replace(G.SETTINGS["fast"], chain_eval=500, step_grid=(1e-3, 1e-1))
    monkeypatch.setattr(frontier_plans, "gpope_context", lambda setting: (small, G.make_context("chain", small, 0)))
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
    (ax,) = fig.axes  # pucb: one privacy unit (one user's episode), one panel
    assert ax.get_xscale() == "log" and "ε per episode" in ax.get_xlabel() and "regret" in ax.get_ylabel()
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert {"PUCB, Laplace counters (valid)", "PUCB, Gaussian counters (valid)",
            "paper's budget split and E (no valid guarantee)", "T = 40", "trivial: uniform policy"} <= set(labels)
    with pytest.raises(ValueError):
        F.plot_frontier(pucb_tiny, str(tmp_path / "frontier.jpg"))


def _synthetic(agent="dpq", infeasible=True):
    """A small hand-made frontier (no training): every variant of the agent at two amounts and three epsilons,
    the paper's sigma infeasible at epsilon 10."""
    pts = []
    for v in F.AGENT_VARIANTS[agent]:
        unit = F.UNITS[agent][v]
        for a in (2000, 10000):
            for k, e in enumerate((1.0, 10.0, 100.0)):
                if infeasible and v == "paper" and e == 10.0:
                    pts.append(F.FrontierPoint(v, e, a, privacy_unit=unit, infeasible="no sigma meets the target",
                                               user_unit=F.USER_UNITS[agent]))
                    continue
                vals = (10.0 + 3 * k, 11.0 + 3 * k, 12.0 + 3 * k)
                user = None if v == "paper" else (e if unit != "transition" else 150.0 * e)
                pts.append(F.FrontierPoint(v, e, a, vals, 11.0 + 3 * k, 1.0, 9.0 + 3 * k, k > 0, 1.0, privacy_unit=unit,
                                           p_value=0.01, p_holm=0.03, beats_holm=k > 1, user_unit=F.USER_UNITS[agent],
                                           user_epsilon=user,
                                           user_epsilon_lower=140.0 * e if unit == "transition" else None))
    refs = {a: {"trivial": {"mean": 12.2, "se": 0.0, "label": "best data-independent policy"},
                "non_private": {"mean": 20.0, "std": 0.5, "values": [20.0, 20.0]},
                "optimum": {"mean": 20.8, "se": 0.0, "label": "threshold at theta"}} for a in (2000, 10000)}
    return F.Frontier(agent, "fast", "policy_return", "return per episode", True, "samples T", 1e-4, 0.95, (0, 1, 2),
                      tuple(pts), refs)


def test_plot_one_panel_per_unit_legends_unambiguous_and_nothing_clipped():
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    f = _synthetic("dpq")
    assert F.panels(f) == ["transition", "episode", "reward-function"]
    fig = F.plot_frontier(f)
    fig.canvas.draw()
    frame = fig.bbox
    axes = fig.axes
    # each x axis names its unit; the user's panel says it is user-level
    assert ["per transition" in axes[0].get_xlabel(), "per episode" in axes[1].get_xlabel(),
            "per reward function" in axes[2].get_xlabel()] == [True, True, True]
    assert "user-level" in axes[1].get_xlabel()
    for ax in axes:
        legend = ax.get_legend()
        methods = [(h, t.get_text()) for h, t in zip(legend.legend_handles, legend.get_texts())
                   if (h.get_gid() or "").startswith("method:")]
        assert methods  # every panel shows its methods
        looks = {(matplotlib.colors.to_hex(h.get_color()), h.get_marker()) for h, _ in methods}
        assert len(looks) == len(methods)  # each method's handle differs in colour or marker
        assert all(h.get_marker() not in (None, "None", "", " ") for h, _ in methods)  # markers in the legend
        for h, label in methods:
            if h.get_gid() == "method:paper":
                assert "no valid guarantee" in label
        box = legend.get_window_extent()
        assert frame.x0 <= box.x0 and box.x1 <= frame.x1 and frame.y0 <= box.y0 and box.y1 <= frame.y1
    # one colour per method: a method has the same colour in every panel it appears in
    colours = {}
    for ax in axes:
        for h in ax.get_legend().legend_handles:
            if (h.get_gid() or "").startswith("method:"):
                colours.setdefault(h.get_gid(), set()).add(matplotlib.colors.to_hex(h.get_color()))
    assert all(len(c) == 1 for c in colours.values())
    assert len({next(iter(c)) for c in colours.values()}) == len(colours)  # and methods differ in colour
    # the transition unit is drawn again at its user-level epsilon in the user's panel, with its own marker
    user_handles = [t.get_text() for t in axes[1].get_legend().get_texts()]
    assert any("user-level ε" in t for t in user_handles)
    # the infeasible note: one, in the reward-function panel, inside the figure and clear of every axes' frame
    notes = [t for ax in axes for t in ax.texts if t.get_gid() == "infeasible"]
    assert len(notes) == 1 and "paper, T=2000: eps = 10;" in notes[0].get_text()
    box = notes[0].get_bbox_patch().get_window_extent()
    assert frame.x0 <= box.x0 and box.x1 <= frame.x1 and frame.y0 <= box.y0 and box.y1 <= frame.y1
    assert all(not box.overlaps(ax.get_window_extent()) for ax in axes)
    plt.close(fig)


def test_plot_axes_must_match_the_panels(pucb_tiny):
    pytest.importorskip("matplotlib")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(2, 1)
    with pytest.raises(ValueError, match="3 panel"):
        F.plot_frontier(_synthetic("dpq"), ax=axes[0])
    with pytest.raises(ValueError, match="not both"):
        F.plot_frontier(pucb_tiny, ax=axes[0], figure=fig)
    F.plot_frontier(pucb_tiny, ax=axes[1])  # one panel: one Axes
    assert "episode" in axes[1].get_xlabel() and "Holm" in axes[1].get_title()
    plt.close(fig)


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


# ------------------------------------------------------------------------------ frozenlake


@pytest.fixture(scope="module")
def frozenlake_tiny():
    pytest.importorskip("gymnasium")
    return F.frontier("frozenlake", epsilons=(1.0, 100.0), amounts=(300,), seeds=(0, 1, 2), n_jobs=1)


def test_frozenlake_frontier_is_paired_over_the_seeds_maps_and_user_level(frozenlake_tiny):
    from scipy import stats

    from privcal.rl.toytext import random_map as RM

    f = frozenlake_tiny
    assert [(p.variant, p.epsilon) for p in f.points] == [("select", 1.0), ("select", 100.0),
                                                          ("fqi-episode", 1.0), ("fqi-episode", 100.0)]
    prior = RM.prior_reference()
    refs = np.array([prior.value_on(RM.map_environment(RM.draw_map(s))[1]) for s in (0, 1, 2)])
    for p in f.points:
        # one user = one episode: the user-level epsilon is the point's own, in the episode unit
        assert p.privacy_unit == "episode" and p.user_unit == "episode" and p.user_epsilon == p.epsilon
        # the p-value is the paired one-sided t test of (value - the reference policy's value on the seed's map),
        # recomputed with scipy's one-sample t test (an independent implementation)
        want = stats.ttest_1samp(np.array(p.values) - refs, 0.0, alternative="greater").pvalue
        assert p.p_value == pytest.approx(want, rel=1e-9)
    assert f.references[300]["trivial"]["mean"] == prior.value
    assert "paired over seeds" in f.text() and f.settings["test"] == F.PAIRED_NOTE
    assert f.points[2].guarantee.startswith("(1, 1e-05)-DP w.r.t. one episode")
    back = F.Frontier.from_dict(json.loads(json.dumps(f.to_dict())))
    assert back.rows() == f.rows()


def test_frozenlake_picture_legend_handles_distinct(frozenlake_tiny, tmp_path):
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig = F.plot_frontier(frozenlake_tiny, tmp_path / "fl.png")
    (ax,) = fig.axes
    legend = ax.get_legend()
    methods = [(h, t.get_text()) for h, t in zip(legend.legend_handles, legend.get_texts())
               if (h.get_gid() or "").startswith("method:")]
    looks = {(matplotlib.colors.to_hex(h.get_color()), h.get_marker()) for h, _ in methods}
    assert len(methods) == 2 and len(looks) == 2
    assert "per episode" in ax.get_xlabel() and "non-private fqi-dpsgd" in " ".join(t.get_text() for t in
                                                                                  legend.get_texts())
    plt.close(fig)


def test_frozenlake_environment_choice():
    with pytest.raises(ValueError, match="environment"):
        F.frontier("frozenlake", environment="random-peak", epsilons=(1.0,), amounts=(300,), seeds=(0,))
    with pytest.raises(ValueError, match="not a variant of frozenlake"):
        F.frontier("frozenlake", variant="valid", epsilons=(1.0,), amounts=(300,), seeds=(0,))


def test_the_plan_lists_each_points_seeds_then_each_amounts_reference():
    # counting by hand: 2 variants x 2 epsilons x 1 amount, 3 seeds each, then the non-private reference's 3 seeds
    from privcal.rl import frontier_plans as P

    assert F.FrontierSettings is P.FrontierSettings  # one class, importable from both modules
    checked = P.FrontierSettings(epsilons=(1.0, 10.0), amounts=(40,), seeds=(0, 1, 2), variant="all", delta=1e-5)
    plan = P.plan_unchecked("pucb", checked, ("valid", "gaussian"))
    assert len(plan.tasks) == (2 * 2 + 1) * 3
    assert [row[:3] + row[4:] for row in plan.points] == [("valid", 1.0, 40, "", 0), ("valid", 10.0, 40, "", 3),
                                                          ("gaussian", 1.0, 40, "", 6), ("gaussian", 10.0, 40, "", 9)]
    assert plan.references == {40: {"non_private": 12}}
    # each point's tasks carry its own variant, epsilon and seed; the gaussian variant alone gets the delta
    assert [(t[5], t[3], t[6], t[7]) for t in plan.tasks[6:9]] == [("gaussian", 1.0, s, 1e-5) for s in (0, 1, 2)]
    assert all(t[7] is None for t in plan.tasks[:6] + plan.tasks[12:])
    assert plan.settings["failure_probability"] == 0.1 and plan.fixed["trivial"]["label"] == "uniform policy"
