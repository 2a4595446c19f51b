"""``privcal train AGENT --seeds``: per-seed results, mean, Student-t interval and the seed-level verdict
(``privcal.rl.verdict.summarize_seeds``), in every format; and ``train dpq --environment`` (Algorithm 1 against the
best 0-DP policy of its environment)."""

from __future__ import annotations

import argparse
import csv
import io
import json
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from privcal import cli
from privcal.cli.train import seed_list
from privcal.rl.verdict import student_t_interval, summarize_seeds, verdict_over_seeds


def _run(capsys, *argv):
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


# -------------------------------------------------------------------------------------------- parsing


def test_seed_list_takes_ranges_and_lists():
    assert seed_list("0-3") == [0, 1, 2, 3]
    assert seed_list("0,1,5") == [0, 1, 5]
    assert seed_list("0-2,7") == [0, 1, 2, 7]
    assert seed_list("4-4") == [4]
    for bad in ("3-1", "1,1", "0-2,2", "", "1,,2", "a", "-1", "1.5"):
        with pytest.raises(argparse.ArgumentTypeError):
            seed_list(bad)


# -------------------------------------------------------------------------------------- the statistics


def test_student_t_interval_is_the_closed_form():
    # values 1, 2, 3, 4: mean 2.5, s = sqrt(5/3); t_{0.975, 3} = 3.182446305284263 (scipy.stats.t; the printed
    # t table gives 3.182): half-width 3.182446305284263 * sqrt(5/3) / 2 (closed form)
    half = 3.182446305284263 * math.sqrt(5.0 / 3.0) / 2.0
    lo, hi = student_t_interval([1.0, 2.0, 3.0, 4.0])
    assert lo == pytest.approx(2.5 - half, rel=1e-12) and hi == pytest.approx(2.5 + half, rel=1e-12)
    # 90 %: t_{0.95, 3} = 2.353363434801823 (scipy.stats.t; table 2.353)
    lo, hi = student_t_interval([1.0, 2.0, 3.0, 4.0], level=0.9)
    assert hi - 2.5 == pytest.approx(2.353363434801823 * math.sqrt(5.0 / 3.0) / 2.0, rel=1e-12)
    assert all(math.isnan(x) for x in student_t_interval([1.0, math.inf]))
    with pytest.raises(ValueError, match="at least 2"):
        student_t_interval([1.0])


def test_a_mean_that_beats_inside_an_interval_that_does_not_clear_cannot_tell():
    # 13, 14, 15 against an exact 12: mean 14, standard error 1/sqrt(3), t = 2 sqrt(3) = 3.46 (closed form). The
    # one-sided 95 % quantile with 2 degrees of freedom is 2.920 and the 97.5 % one 4.303 (t table): a one-sided
    # 95 % test says "beats", but the two-sided 95 % interval 14 +- 4.303/sqrt(3) = [11.52, 16.48] contains 12, so
    # the verdict printed beside that interval must be "cannot tell"
    values = [13.0, 14.0, 15.0]
    assert verdict_over_seeds(values, 12.0, higher_is_better=True, reference_label="r").verdict == "beats"
    s = summarize_seeds(values, 12.0, higher_is_better=True, reference_label="r", seeds=[0, 1, 2])
    assert s.ci[0] == pytest.approx(14.0 - 4.302652729749464 / math.sqrt(3.0), rel=1e-12)
    assert s.ci[0] < 12.0 < s.mean
    assert s.verdict.verdict == "cannot tell" and s.verdict.confidence == 0.975
    assert "interval clears the reference" in s.verdict.test
    assert summarize_seeds([15.0, 16.0, 17.0], 12.0, higher_is_better=True, reference_label="r").verdict.verdict == \
        "beats"  # interval [13.52, 18.48]
    assert summarize_seeds([8.0, 9.0, 10.0], 12.0, higher_is_better=True, reference_label="r").verdict.verdict == \
        "does not beat"  # interval [6.52, 11.48]
    # lower is better (regret): the same numbers mirrored
    assert summarize_seeds([8.0, 9.0, 10.0], 12.0, higher_is_better=False, reference_label="r").verdict.verdict == \
        "beats"


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(-100, 100, allow_nan=False), min_size=2, max_size=8),
       st.floats(-100, 100, allow_nan=False), st.booleans())
def test_the_verdict_never_contradicts_the_printed_interval(values, reference, higher):
    # with an exact reference the one-sided (1 + level)/2 t test is the interval: beats iff the interval lies on the
    # better side, does not beat iff on the worse side (ties at a bound fall to "cannot tell")
    s = summarize_seeds(values, reference, higher_is_better=higher, reference_label="r")
    lo, hi = s.ci
    if np.ptp(values) == 0:  # no spread: the values are compared as they are
        return
    better_side = lo > reference if higher else hi < reference
    worse_side = hi < reference if higher else lo > reference
    margin = 1e-9 * (1 + abs(reference) + abs(hi - lo))
    if abs(lo - reference) > margin and abs(hi - reference) > margin:
        assert (s.verdict.verdict == "beats") == better_side
        assert (s.verdict.verdict == "does not beat") == worse_side


def test_a_per_seed_reference_is_tested_paired():
    # each seed has its own reference (GPOPE's theta = 0 on its own evaluation sample): the differences 1, 1.2, 0.8
    # (run minus reference, lower is better: run better by 1 +- 0.2) have mean 1, s = 0.2, t = 1 / (0.2/sqrt 3) =
    # 8.66 > 4.303: beats, although the runs' own interval [-0.48, 4.48] contains the mean reference 3
    runs, refs = [1.0, 2.0, 3.0], [2.0, 3.2, 3.8]
    s = summarize_seeds(runs, 0.0, higher_is_better=False, reference_label="zero", reference_values=refs)
    assert s.paired and s.reference == pytest.approx(3.0) and s.verdict.verdict == "beats"
    assert s.verdict.statistic == pytest.approx(1.0 / (0.2 / math.sqrt(3.0)), rel=1e-9)
    assert "paired" in s.verdict.test
    with pytest.raises(ValueError, match="reference_values"):
        summarize_seeds(runs, 0.0, higher_is_better=False, reference_label="zero", reference_values=[1.0])


# --------------------------------------------------------------------------------------------- the CLI

_PUCB = ("train", "pucb", "--states", "3", "--actions", "2", "--horizon", "3", "--episodes", "30", "--epsilon", "50")


def test_pucb_over_seeds_aggregates_the_one_seed_runs(capsys):
    code, out, err = _run(capsys, *_PUCB, "--seeds", "0-2", "--n-jobs", "1", "--format", "json")
    assert code == 0, err
    d = json.loads(out)
    singles = [json.loads(_run(capsys, *_PUCB, "--seed", str(s), "--format", "json")[1]) for s in (0, 1, 2)]
    per_seed = [x["final_regret"] / 30 for x in singles]
    assert [r["regret_per_episode"] for r in d["runs"]] == per_seed  # the runs are the one-seed runs
    assert [r["seed_verdict"] for r in d["runs"]] == [x["verdict"] for x in singles]
    s = summarize_seeds(per_seed, singles[0]["references"]["random_policy_regret_per_episode"],
                        higher_is_better=False, reference_label="u")
    assert d["mean"] == pytest.approx(np.mean(per_seed)) and (d["ci_low"], d["ci_high"]) == pytest.approx(s.ci)
    assert d["verdict"] == s.verdict.verdict and d["verdict_test"]["confidence"] == 0.975
    assert d["privacy_unit"] == "episode" and d["seeds"] == [0, 1, 2]
    assert d["references"]["trivial"] == singles[0]["references"]["random_policy_regret_per_episode"]


def test_every_format_carries_the_seeds_the_interval_and_the_verdict(capsys):
    base = (*_PUCB, "--seeds", "0,3", "--n-jobs", "1")
    code, text, _ = _run(capsys, *base)
    assert code == 0 and "95% CI [" in text and "verdict" in text and "privacy unit          episode" in text
    assert "Student-t over 2 seeds" in text and "trivial reference" in text
    code, out, _ = _run(capsys, *base, "--format", "csv")
    rows = list(csv.DictReader(io.StringIO(out)))
    assert [r["seed"] for r in rows] == ["0", "3"] and rows[0]["verdict"] and rows[0]["ci_low"]
    assert rows[0]["privacy_unit"] == "episode" and rows[0]["mean"] == rows[1]["mean"]
    code, out, _ = _run(capsys, *base, "--format", "markdown")
    assert "| ci_low |" in out and "| seed | regret_per_episode |" in out and "| verdict |" in out


@pytest.mark.parametrize("argv, match", [
    (("--seed", "1", "--seeds", "0-1"), "not both"),
    (("--seeds", "3"), "at least 2 seeds"),
    (("--n-jobs", "2"), "only with --seeds"),
    (("--seeds", "0-1", "--plot", "x.png"), "does not apply with --seeds"),
    (("--seeds", "0-1", "--backend", "dask"), "--scheduler"),
    (("--seeds", "0-1", "--n-jobs", "0"), "--n-jobs"),
])
def test_bad_seed_flags_are_refused_in_one_line(capsys, argv, match):
    code, out, err = _run(capsys, *_PUCB, *argv)
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1 and match in err, err


def test_fqi_transition_over_seeds_gives_the_user_level_epsilon_everywhere(capsys):
    argv = ("train", "dpq", "--method", "fqi-dpsgd", "--epsilon", "4", "--delta", "1e-5", "--samples", "100",
            "--seeds", "0-1", "--n-jobs", "1", "--no-references")
    d = json.loads(_run(capsys, *argv, "--format", "json")[1])
    one = json.loads(_run(capsys, *argv[:10], "--seed", "1", "--no-references", "--format", "json")[1])
    assert d["privacy_unit"] == "transition" and d["user_epsilon"] == one["user_epsilon"] > 4
    assert d["sample_rate_source"] == one["sample_rate_source"] and "public size N_pub = 100" in one["sample_rate_source"]
    assert d["verdict"] == "cannot tell" and d["references"] == {}  # --no-references: nothing to test against
    rows = list(csv.DictReader(io.StringIO(_run(capsys, *argv, "--format", "csv")[1])))
    assert float(rows[0]["user_epsilon"]) == pytest.approx(one["user_epsilon"])
    assert "user-level" in _run(capsys, *argv)[1]


# ---------------------------------------------------------------------- Algorithm 1 and its environment

_ALG1 = ("train", "dpq", "--epsilon", "10", "--delta", "1e-4", "--samples", "150", "--batch-size", "50",
         "--format", "json")


def test_algorithm1_is_judged_against_the_best_zero_dp_policy_of_its_environment(capsys):
    from privcal.rl import envs

    peaked = json.loads(_run(capsys, *_ALG1, "--environment", "random-peak", "--seed", "2")[1])
    best, best_se = envs.trivial_return()  # move-to-middle in expectation over theta: 12.22
    assert peaked["environment"] == "random-peak" and peaked["peak"] == envs.draw_peak(2)
    assert peaked["verdict_test"]["reference"] == best and abs(best - 12.22) < 0.01
    assert peaked["references"]["non_private_learner"].startswith("the same learner")
    fixed = json.loads(_run(capsys, *_ALG1, "--seed", "2")[1])  # default: App. E.1's fixed reward
    middle = envs.reference_return("middle")[0]  # optimal and 0-DP there: 20.71
    assert fixed["environment"] == "fixed" and fixed["peak"] == 0.5
    assert fixed["verdict_test"]["reference"] == middle and abs(middle - 20.71) < 0.05
    assert "random policy" not in fixed["verdict_test"]["reference_label"]
    # the verdict is the one-seed z test of the released greedy policy's return with both standard errors
    z = (fixed["policy_return"] - middle) / math.hypot(fixed["policy_return_se"], envs.reference_return("middle")[1])
    assert fixed["verdict_test"]["statistic"] == pytest.approx(z, rel=1e-9)


@pytest.mark.parametrize("argv, match", [
    (("--method", "select", "--epsilon", "5", "--environment", "fixed"), "--environment fixed does not apply"),
    (("--loop", "replay", "--sigma", "0.2", "--episodes", "2", "--environment", "fixed"), "--environment applies"),
    (("--method", "select", "--epsilon", "5", "--public-size", "100"), "does not apply to --method select"),
    (("--sigma", "1", "--expected-batch-size", "10"), "applies only to --method fqi-dpsgd"),
    (("--loop", "replay", "--sigma", "0.2", "--episodes", "2", "--seeds", "0-1"), "--seeds applies"),
])
def test_environment_and_sampling_flags_are_refused_where_they_do_not_apply(capsys, argv, match):
    code, out, err = _run(capsys, "train", "dpq", *argv)
    assert code == 2 and out == "" and match in err, err


def test_verdict_settings_objects_give_the_keyword_calls():
    # reference: the keyword call's own result (the same test on the same numbers)
    from privcal.rl.verdict import OneRunTestSettings, SeedSummarySettings, verdict_one_run

    kw = dict(higher_is_better=True, reference_label="r")
    a = verdict_one_run(10.5, 10, value_se=0.5, confidence=0.9, **kw)
    b = verdict_one_run(10.5, 10, settings=OneRunTestSettings(value_se=0.5, confidence=0.9), **kw)
    assert a == b and a.confidence == 0.9
    vals, refs = [1.0, 2.0, 4.0], [0.5, 0.5, 1.0]
    c = summarize_seeds(vals, 0.5, seeds=[3, 4, 5], reference_values=refs, level=0.9, **kw)
    d = summarize_seeds(vals, 0.5, settings=SeedSummarySettings(seeds=[3, 4, 5], reference_values=refs, level=0.9),
                        **kw)
    assert c == d and c.paired and c.seeds == (3, 4, 5)
    with pytest.raises(TypeError, match="summarize_seeds\\(\\) got an unexpected keyword argument 'levels'"):
        summarize_seeds(vals, 0.5, levels=0.9, **kw)
    with pytest.raises(ValueError, match="confidence"):
        verdict_one_run(1.0, 0.0, confidence=1.0, **kw)


def test_plot_spec_takes_its_labels_by_keyword_and_keeps_references_as_a_dict():
    from privcal.cli.train import PlotSpec

    spec = PlotSpec([1, 2], "run", [0.5, 0.25], title="t", xlabel="episodes", ylabel="regret")
    assert spec.references == {} and spec.log_y is False
    assert PlotSpec([1], "run", [0.0], title="t", xlabel="x", ylabel="y", references={"a": 1.0}).references == {"a": 1.0}
    with pytest.raises(TypeError):
        PlotSpec([1], "run", [0.0], "t", "x", "y")  # the labels are keyword-only
