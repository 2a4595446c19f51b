"""privcal.cli.toytext (``privcal train frozenlake``): one run, --seeds with the verdict over seeds, and refusals."""

from __future__ import annotations

import argparse
import json

import numpy as np
import pytest

from privcal.cli import toytext as cli

gym = pytest.importorskip("gymnasium")


def _run(argv, capsys):
    p = argparse.ArgumentParser()
    cli.add_parser(p.add_subparsers())
    args = p.parse_args(["frozenlake", *argv])
    assert args._run(args) == 0
    return capsys.readouterr().out


def test_one_run_states_unit_guarantee_references_and_verdict(capsys):
    out = json.loads(_run(["--method", "select", "--epsilon", "1", "--episodes", "300", "--json"], capsys))
    assert out["privacy_unit"] == "episode" and out["epsilon"] == 1.0 and out["guarantee"].startswith("(1, 0)-DP")
    assert out["verdict"] in ("beats", "does not beat") and "one seed" in out["verdict_test"]["test"]
    assert set(out["references"]) >= {"trivial", "trivial_expectation", "non_private", "optimum", "note"}
    text = _run(["--method", "select", "--epsilon", "1", "--episodes", "300"], capsys)
    assert "privacy unit          episode" in text and "reference class" in text


def test_seeds_report_the_paired_verdict_over_seeds(capsys):
    from privcal.rl.verdict import summarize_seeds

    out = json.loads(_run(["--method", "select", "--epsilon", "1", "--episodes", "300", "--seeds", "0-3",
                           "--n-jobs", "1", "--json"], capsys))
    runs = out["runs"]
    assert [r["seed"] for r in runs] == [0, 1, 2, 3] and out["privacy_unit"] == "episode"
    # recomputed: the per-seed exact values against each seed's own reference value (paired: the maps differ)
    values, refs = [r["value"] for r in runs], [r["reference"] for r in runs]
    s = summarize_seeds(values, refs[0], higher_is_better=True, reference_label="x", reference_values=refs)
    assert out["paired"] is True and out["verdict"] == s.verdict.verdict
    assert out["mean"] == pytest.approx(np.mean(values)) and (out["ci_low"], out["ci_high"]) == tuple(s.ci)
    csv = _run(["--method", "select", "--epsilon", "1", "--episodes", "300", "--seeds", "0,1", "--n-jobs", "1",
                "--format", "csv"], capsys).splitlines()
    assert csv[0].startswith("seed,value") and len(csv) == 3


@pytest.mark.parametrize("argv, match", [
    ([], "--method is required"),
    (["--method", "select"], "--epsilon is required"),
    (["--method", "select", "--epsilon", "1", "--delta", "1e-5"], "select is pure epsilon-DP"),
    (["--method", "fqi-dpsgd", "--epsilon", "1"], "needs --delta"),
    (["--method", "fqi-dpsgd", "--epsilon", "1", "--delta", "1e-5", "--selector", "noisy-max"], "--selector"),
    (["--method", "select", "--epsilon", "1", "--plot", "x.png"], "--plot"),
    (["--method", "select", "--epsilon", "-1"], "epsilon"),
])
def test_bad_input_raises_value_error(argv, match):
    p = argparse.ArgumentParser()
    cli.add_parser(p.add_subparsers())
    args = p.parse_args(["frozenlake", *argv])
    with pytest.raises(ValueError, match=match):
        args._run(args)
