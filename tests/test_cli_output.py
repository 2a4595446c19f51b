"""One output vocabulary: --format text|json|csv|markdown everywhere results are
printed, null for inf in json and inf in csv, train --plot with reference lines, verify progress on stderr."""

from __future__ import annotations

import csv
import io
import json
import math

import numpy as np
import pytest

from privcal import cli
from privcal.cli import out as _cli_out


def _run(capsys, *argv):
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


# ------------------------------------------------------------------ the shared emitter


def test_emit_writes_null_in_json_inf_in_csv_and_a_field_table_in_markdown(capsys):
    record = {"epsilon": math.inf, "sigma": 1.5, "notes": [], "name": "exact"}
    _cli_out.emit("json", record, "text")
    assert json.loads(capsys.readouterr().out) == {"epsilon": None, "sigma": 1.5, "notes": [], "name": "exact"}
    _cli_out.emit("csv", record, "text")
    rows = list(csv.reader(io.StringIO(capsys.readouterr().out)))
    assert rows == [["epsilon", "sigma", "notes", "name"], ["inf", "1.5", "", "exact"]]
    _cli_out.emit("markdown", record, "text")
    md = capsys.readouterr().out.splitlines()
    assert md[:2] == ["| field | value |", "|---|---|"] and "| epsilon | inf |" in md
    _cli_out.emit("text", record, lambda: "for people")
    assert capsys.readouterr().out == "for people\n"


def test_emit_csv_of_a_curve_has_one_row_per_point(capsys):
    _cli_out.emit("csv", {"final": 3.0}, "t", {"episode": [1, 2, 3], "regret": [0.5, 1.0, math.inf]})
    rows = list(csv.reader(io.StringIO(capsys.readouterr().out)))
    assert rows == [["episode", "regret"], ["1", "0.5"], ["2", "1.0"], ["3", "inf"]]


@pytest.mark.parametrize("command", [
    ["epsilon", "--sigma", "1", "--delta", "1e-5", "--steps", "10"],
    ["calibrate", "--epsilon", "1", "--delta", "1e-5", "--steps", "10"],
])
def test_calibrate_and_epsilon_speak_every_format(capsys, command):
    _, out, _ = _run(capsys, *command, "--format", "json")
    as_json = json.loads(out)
    code, out, _ = _run(capsys, *command, "--format", "csv")
    header, row = list(csv.reader(io.StringIO(out)))
    assert code == 0 and set(header) == set(as_json)
    assert float(row[header.index("delta")]) == as_json["delta"]
    code, out, _ = _run(capsys, *command, "--format", "markdown")
    assert code == 0 and out.startswith("| field | value |")
    code, _, err = _run(capsys, *command, "--json", "--format", "csv")
    assert code == 2 and "--json contradicts --format csv" in err


def test_json_writes_null_where_csv_writes_inf(capsys):
    # sigma 1e-300 at sensitivity 1: mu = 1e300, mu^2 overflows, epsilon is inf (no finite bound)
    argv = ["epsilon", "--sigma", "1e-300", "--delta", "1e-5", "--accountant", "exact"]
    _, out, _ = _run(capsys, *argv, "--format", "json")
    assert json.loads(out)["epsilon"] is None
    _, out, _ = _run(capsys, *argv, "--format", "csv")
    header, row = list(csv.reader(io.StringIO(out)))
    assert row[header.index("epsilon")] == "inf"


# ------------------------------------------------------------------ verify


def test_verify_csv_and_progress_only_outside_json(capsys):
    claim = "WH-prop3-classic-gaussian"
    code, out, err = _run(capsys, "verify", "--claim", claim, "--format", "csv")
    rows = list(csv.reader(io.StringIO(out)))
    assert code == 0 and rows[0][:4] == ["id", "paper", "location", "verdict"] and rows[1][0] == claim
    assert f"verify {claim}" in err and "1/1" in err
    code, out, err = _run(capsys, "verify", "--claim", claim, "--json")
    assert code == 0 and json.loads(out)["claims"][0]["id"] == claim and err == ""


# ------------------------------------------------------------------ train: references, formats, plots


def test_uniform_policy_return_matches_the_closed_form_on_a_two_action_bandit():
    from privcal.rl.pucb.tabular import TabularMDP, uniform_policy_return

    # one state, two actions, horizon 2, mean rewards 0.2 and 0.6: the uniform policy earns 0.4 per step
    transitions = np.ones((2, 1, 2, 1))
    rewards = np.array([[[0.2, 0.6]], [[0.2, 0.6]]])
    assert uniform_policy_return(TabularMDP(transitions, rewards, np.ones(1))) == pytest.approx(0.8, rel=1e-12)


def test_reference_returns_of_the_interval_environment_match_the_paper():
    from privcal.rl.envs import reference_return

    # Wang & Hegde 2019 (workshop code): random policy 10.9, move-to-middle optimum 20.7; both are
    # means of 20000 simulated episodes with their standard errors, so 5 standard errors plus the paper's
    # rounding (0.05) is a bound that a correct simulation breaks with probability < 1e-6
    for policy, paper in (("random", 10.9), ("middle", 20.7)):
        mean, se = reference_return(policy, seed=3)
        assert abs(mean - paper) <= 5 * se + 0.05, (policy, mean, se)
    with pytest.raises(ValueError, match="policy"):
        reference_return("greedy")


def test_train_pucb_json_carries_the_references_and_the_valid_default(capsys):
    from privcal.rl.pucb.experiments import make_mdp
    from privcal.rl.pucb.tabular import uniform_policy_return

    code, out, err = _run(capsys, "train", "pucb", "--epsilon", "1", "--episodes", "20", "--json")
    d = json.loads(out)
    assert code == 0 and err == ""
    assert d["error_bound_rule"] == "valid" and d["failure_probability"] == 0.1
    gap = d["optimal_return"] - uniform_policy_return(make_mdp("random", 10, 3, 10, seed=0))
    assert d["references"]["random_policy_regret_per_episode"] == pytest.approx(gap, rel=1e-12)
    assert len(d["regret"]) == len(d["non_private_regret"]) == 20
    assert d["references"]["non_private_final_regret"] == d["non_private_regret"][-1]
    _, out, _ = _run(capsys, "train", "pucb", "--epsilon", "1", "--episodes", "20", "--json", "--no-references")
    assert json.loads(out)["references"] == {} and "non_private_regret" not in json.loads(out)


def test_train_pucb_former_flag_names_warn_and_mean_the_same(capsys):
    base = ["train", "pucb", "--epsilon", "1", "--episodes", "10", "--json", "--no-references"]
    _, new, _ = _run(capsys, *base, "--failure-probability", "0.2", "--error-bound", "valid")
    with pytest.warns(DeprecationWarning, match="--failure-probability"):
        _, old, _ = _run(capsys, *base, "--beta", "0.2")
    with pytest.warns(DeprecationWarning, match="--error-bound valid"):
        _, union, _ = _run(capsys, *base, "--failure-probability", "0.2", "--error-bound", "union")
    strip = lambda text: {k: v for k, v in json.loads(text).items() if k != "seconds"}  # noqa: E731
    assert strip(new) == strip(old) == strip(union)
    code, _, err = _run(capsys, *base, "--beta", "0.2", "--failure-probability", "0.2")
    assert code == 2 and "former name" in err


def test_train_dpq_labels_equal_flag_values_and_former_variant_warns(capsys):
    code, out, _ = _run(capsys, "train", "dpq", "--method", "dp-sgd", "--sigma", "1", "--samples", "200",
                        "--json", "--no-references")
    assert code == 0 and json.loads(out)["method"] == "dp-sgd"
    code, _, err = _run(capsys, "train", "dpq", "--sigma", "1", "--samples", "1e12")
    assert code == 2 and "memory budget" in err and len(err.splitlines()) == 1


@pytest.mark.parametrize("agent", [
    ["pucb", "--epsilon", "1", "--episodes", "30"],
    ["dpq", "--sigma", "1", "--samples", "500"],
    ["gpope", "--epsilon", "1", "--trajectories", "200"],
])
def test_train_plot_writes_a_picture(capsys, tmp_path, agent):
    pytest.importorskip("matplotlib")
    path = tmp_path / "curve.png"
    code, out, err = _run(capsys, "train", *agent, "--plot", str(path), "--format", "csv")
    assert code == 0 and path.stat().st_size > 1000
    assert f"wrote {path}" in err and out.count("\n") > 3  # the curve's rows on stdout


def test_train_plot_refuses_a_bad_path_before_training(capsys, tmp_path):
    for bad in (str(tmp_path / "curve.pdf"), str(tmp_path / "missing" / "curve.png")):
        code, out, err = _run(capsys, "train", "pucb", "--epsilon", "1", "--episodes", "30", "--plot", bad)
        assert code == 2 and out == "" and len(err.splitlines()) == 1


def test_the_cli_picture_is_the_chart_of_the_json_data(capsys, tmp_path):
    """One image comparison at low resolution: the CLI's --plot equals plot.learning_curve drawn from the
    numbers the same run prints as json (so the picture shows the data and its references, nothing else)."""
    pytest.importorskip("matplotlib")
    from matplotlib.testing.compare import compare_images

    from privcal import plot

    argv = ["train", "pucb", "--epsilon", "1", "--episodes", "40"]
    _, out, _ = _run(capsys, *argv, "--json")
    d = json.loads(out)
    episodes = np.arange(1, 41)
    fig = plot.learning_curve(
        episodes, {"pucb (epsilon=1)": d["regret"]},
        {"non-private baseline": d["non_private_regret"],
         "random policy": d["references"]["random_policy_regret_per_episode"] * episodes},
        title=f"PUCB on {d['mdp']}, seed 0", xlabel="episode", ylabel="cumulative regret")
    expected = tmp_path / "expected.png"
    fig.savefig(expected, dpi=30)
    actual = tmp_path / "actual.png"
    import matplotlib.figure

    saved = {}
    original = matplotlib.figure.Figure.savefig

    def low_res(self, fname, **kw):  # the CLI's figure, written at the same low resolution
        saved["path"] = fname
        return original(self, fname, dpi=30)

    matplotlib.figure.Figure.savefig = low_res
    try:
        code, _, _ = _run(capsys, *argv, "--plot", str(actual))
    finally:
        matplotlib.figure.Figure.savefig = original
    assert code == 0 and saved["path"] == str(actual)
    assert compare_images(str(expected), str(actual), tol=1e-3) is None


# ------------------------------------------------------------------ help text


def _parsers():
    import argparse

    root = cli.build_parser()
    stack, seen = [("privcal", root)], []
    while stack:
        name, parser = stack.pop()
        seen.append((name, parser))
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                stack += [(f"{name} {sub}", p) for sub, p in action.choices.items()]
    return seen


def test_every_flag_has_help_that_states_its_default():
    """Help text for every flag, with its default (flags without a value, required flags
    and positional choices excepted)."""
    import argparse

    missing = []
    for name, parser in _parsers():
        for action in parser._actions:
            if action.help == argparse.SUPPRESS or isinstance(action, (argparse._HelpAction, argparse._VersionAction,
                                                                         argparse._SubParsersAction)):
                continue
            text = (action.help or "") % {"default": action.default} if action.help else ""
            flagless = action.nargs == 0 or action.required or not action.option_strings
            if not text or (not flagless and "default" not in text and "required" not in text
                            and "no default" not in text):
                missing.append(f"{name} {'/'.join(action.option_strings) or action.dest}: {text!r}")
    assert not missing, "\n".join(missing)


def test_train_dpq_loop_replay_is_labelled_without_guarantee(capsys):
    code, out, err = _run(capsys, "train", "dpq", "--loop", "replay", "--sigma", "0.2", "--episodes", "4", "--json")
    d = json.loads(out)
    assert code == 0 and err == ""
    assert d["loop"] == "replay" and d["guarantee"].startswith("no valid guarantee") and d["epsilon"] is None
    assert len(d["episode_returns"]) == len(d["non_private_return"]) == 4 and "random_policy_return" in d["references"]
    for extra in (["--resets", "2"], ["--update-clip", "0.1"], ["--epsilon", "1", "--delta", "1e-5"]):
        code, _, err = _run(capsys, "train", "dpq", "--loop", "replay", "--sigma", "0.2", "--episodes", "2", *extra)
        assert code == 2 and len(err.splitlines()) == 1, extra
    code, _, err = _run(capsys, "train", "dpq", "--sigma", "1", "--episodes", "2")
    assert code == 2 and "--loop replay" in err


def test_json_notes_name_the_flags_as_the_text_does(capsys):
    # "every piece of advice names a flag that exists"; the JSON notes said memory_limit
    # (the library's argument) where the text said --memory-limit. 2 MiB forces a coarse grid here.
    argv = ("epsilon", "--sigma", "0.8", "--delta", "1e-5", "--steps", "1e5", "--sample-rate", "0.001",
            "--memory-limit", "2")
    notes = json.loads(_run(capsys, *argv, "--format", "json")[1])["notes"]
    text = _run(capsys, *argv)[1]
    assert notes and any("raise --memory-limit" in n for n in notes)
    assert not any("memory_limit" in n or "max(accuracy" in n for n in notes)
    assert "raise --memory-limit" in " ".join(text.split())
