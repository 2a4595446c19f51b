"""The command-line interface."""

import csv
import io
import json
import subprocess
import sys

import pytest

from privcal.cli import main


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_table_text_default(capsys):
    # the default leads with what a user acts on and fits a terminal; --wide adds every bound
    code, out, err = run(capsys, "table", "--epsilons", "0.9")
    assert code == 0 and err == ""
    assert "sigma to use" in out and "end-to-end valid (clip 0.01)" in out and "not private: actual eps" in out
    assert max(len(line) for line in out.splitlines()) <= 100
    code, out, err = run(capsys, "table", "--epsilons", "0.9", "--wide")
    assert code == 0 and err == ""
    assert "exact" in out and "Thm5 stated" in out and "KOV optimal" in out and "RDP" in out


@pytest.mark.parametrize("fmt", ["markdown", "csv", "json"])
def test_table_formats(capsys, fmt):
    code, out, _ = run(capsys, "table", "--epsilons", "0.45,0.9", "--delta", "1e-4", "--format", fmt)
    assert code == 0
    if fmt == "json":
        data = json.loads(out)
        assert [r["epsilon"] for r in data["rows"]] == [0.45, 0.9]
        assert "thm5_statement" in data["rows"][0]["insufficient"]
    elif fmt == "csv":
        rows = list(csv.DictReader(io.StringIO(out)))
        assert float(rows[1]["sigma_exact"]) > 0 and rows[0]["epsilon"] == "0.45"
    else:
        assert out.startswith("**DP Q-learning") and "| epsilon |" in out


def test_table_gaussian_setting(capsys):
    code, out, _ = run(capsys, "table", "--setting", "gaussian", "--steps", "10", "--format", "json")
    assert code == 0 and json.loads(out)["parameters"]["steps"] == 10


def test_calibrate_and_epsilon_json(capsys):
    code, out, _ = run(capsys, "calibrate", "--epsilon", "1", "--delta", "1e-5", "--steps", "100", "--json")
    r = json.loads(out)
    assert code == 0 and r["accountant"] == "exact" and r["achieved_epsilon"] <= 1.0
    code, out, _ = run(capsys, "epsilon", "--sigma", str(r["sigma"]), "--delta", "1e-5", "--steps", "100", "--json")
    e = json.loads(out)
    assert code == 0 and e["epsilon"] <= 1.0


def test_calibrate_text_with_paper_note(capsys):
    code, out, _ = run(capsys, "calibrate", "--epsilon", "50", "--delta", "1e-5", "--accountant", "paper")
    assert code == 0 and out.startswith("sigma = ") and "not sufficient" in out


@pytest.mark.parametrize(
    "argv,needle",
    [
        (["table", "--delta", "2"], "delta must be in (0, 1)"),
        (["table", "--epsilons", "a,b"], "comma-separated"),
        (["calibrate", "--epsilon", "-1", "--delta", "1e-5"], "epsilon must be"),
        (["epsilon", "--sigma", "1", "--delta", "1e-5", "--steps", "0"], "--steps: must be a whole number in [1, 1e15]"),
        (["epsilon", "--sigma", "1", "--delta", "1e-5", "--accountant", "x"], "invalid choice"),
        (["frobnicate"], "invalid choice"),
    ],
)
def test_bad_input_one_line_exit_2(capsys, argv, needle):
    code, out, err = run(capsys, *argv)
    assert code == 2
    assert needle in err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_python_dash_m_entry_point():
    proc = subprocess.run(
        [sys.executable, "-m", "privcal", "table", "--format", "json", "--epsilons", "0.9"],
        capture_output=True, text=True, timeout=600,  # a hang cap (minutes), not a performance target
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["setting"] == "dpq"


def test_neighbouring_relation_is_named_in_the_output(capsys):
    # without replacement defaults to replace-one neighbours, and the JSON says so; zero-out halves
    # the sensitivity of a clipped contribution, so the same sigma calibrates a different relation
    from privcal import NeighbouringWarning

    with pytest.warns(NeighbouringWarning, match="replace-one"):  # implied, not stated
        code, out, _ = run(capsys, "calibrate", "--epsilon", "1", "--delta", "1e-5", "--steps", "100",
                           "--sample-rate", "0.1", "--sampling", "without_replacement", "--json")
    assert code == 0
    report = json.loads(out)
    assert report["sampling"] == "without_replacement" and report["neighbouring"] == "replace_one"
    code, out, _ = run(capsys, "calibrate", "--epsilon", "1", "--delta", "1e-5", "--steps", "100",
                       "--sample-rate", "0.1", "--sampling", "without_replacement", "--neighbouring", "zero_out",
                       "--json")
    assert code == 0 and json.loads(out)["neighbouring"] == "zero_out"


def test_unpriced_neighbouring_relation_is_one_line_and_exit_2(capsys):
    code, out, err = run(capsys, "epsilon", "--sigma", "2", "--delta", "1e-5", "--sample-rate", "0.1",
                         "--neighbouring", "replace_one")
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and "poisson subsampling under replace_one neighbours" in err


def test_history_file_epsilon_and_calibrate(capsys, tmp_path):
    import privcal

    path = tmp_path / "runs.json"
    path.write_text(json.dumps([{"sigma": 1.1, "steps": 1000, "sample_rate": 0.01}, {"sigma": 20.0, "steps": 10}]))
    code, out, _ = run(capsys, "epsilon", "--history", str(path), "--delta", "1e-5", "--json")
    expected = privcal.epsilon_of(privcal.ComposedEvent([
        privcal.SelfComposedEvent(privcal.PoissonSampledEvent(0.01, privcal.GaussianEvent(1.1)), 1000),
        privcal.SelfComposedEvent(privcal.GaussianEvent(20.0), 10),
    ]), 1e-5)
    assert code == 0 and json.loads(out)["epsilon"] == expected
    code, out, _ = run(capsys, "calibrate", "--history", str(path), "--epsilon", "2", "--delta", "1e-5", "--json")
    report = json.loads(out)
    # best = the smallest certified upper bound: the PLD accountant prices this mixed history tighter than RDP
    assert code == 0 and report["accountant"] == "pld" and len(report["sigmas"]) == 2
    # conflicting flags are refused, not ignored
    code, out, err = run(capsys, "epsilon", "--history", str(path), "--delta", "1e-5", "--steps", "3")
    assert code == 2 and out == "" and "--history" in err and err.count("\n") == 1


def test_counts_accept_float_notation(capsys):
    code, out, _ = run(capsys, "epsilon", "--sigma", "30", "--delta", "1e-5", "--steps", "1e4", "--json")
    assert code == 0 and json.loads(out)["steps"] == 10_000
    code, _, err = run(capsys, "epsilon", "--sigma", "30", "--delta", "1e-5", "--steps", "2.5")
    assert code == 2 and "whole number" in err


def test_plot_writes_a_chart(capsys, tmp_path):
    pytest.importorskip("matplotlib")
    out_file = tmp_path / "eps.png"
    code, out, _ = run(capsys, "plot", "epsilon-vs-steps", "--sigma", "3", "--delta", "1e-5", "--steps", "100",
                       "--out", str(out_file))
    assert code == 0 and out.strip() == str(out_file) and out_file.stat().st_size > 1000
    code, _, err = run(capsys, "plot", "profile", "--out", str(tmp_path / "p.png"))
    assert code == 2 and "needs --sigma" in err


def test_version_and_format_vocabulary(capsys):
    import privcal

    with pytest.raises(SystemExit) as stop:
        main(["--version"])
    assert stop.value.code == 0 and capsys.readouterr().out.strip() == f"privcal {privcal.__version__}"
    # --format json on the report commands, as on table; --json stays an alias
    code, out, _ = run(capsys, "calibrate", "--epsilon", "1", "--delta", "1e-5", "--format", "json")
    code2, out2, _ = run(capsys, "calibrate", "--epsilon", "1", "--delta", "1e-5", "--json")
    assert code == code2 == 0 and json.loads(out) == json.loads(out2)
    code, out, err = run(capsys, "epsilon", "--sigma", "3", "--delta", "1e-5", "--json", "--format", "text")
    assert code == 2 and out == "" and "contradicts" in err


def test_table_takes_the_pld_flags_and_plot_refuses_them_without_a_pld(capsys, monkeypatch):
    """`privcal table --pld-accuracy --memory-limit` set every PLD the table builds:
    the settings reach the accountants (recorded here), a bad value is one line and exit 2, and `plot`
    without --sample-rate (no PLD grid) refuses them instead of ignoring them."""
    from privcal.accounting import pld_accountant

    seen = []
    real = pld_accountant.PLDAccountant._setup

    def spy(self, accuracy, absolute_accuracy, memory_limit, value_discretization):
        seen.append((accuracy, memory_limit))
        real(self, accuracy, absolute_accuracy, memory_limit, value_discretization)

    monkeypatch.setattr(pld_accountant.PLDAccountant, "_setup", spy)
    code, out, _ = run(capsys, "table", "--setting", "gaussian", "--steps", "10", "--epsilons", "1",
                       "--pld-accuracy", "0.01", "--memory-limit", "64", "--format", "json")
    assert code == 0 and json.loads(out)
    assert seen and all(s == (0.01, 64 * 2**20) for s in seen)
    code, _, err = run(capsys, "table", "--pld-accuracy", "2")
    assert code == 2 and "--pld-accuracy must be in (0, 1)" in err and len(err.strip().splitlines()) == 1
    code, _, err = run(capsys, "plot", "profile", "--sigma", "2", "--pld-accuracy", "0.01", "--out", "x.png")
    assert code == 2 and "apply only with --sample-rate" in err


def test_flags_that_a_command_would_ignore_are_refused(capsys):
    """`frontier pucb --delta` without Gaussian counters (Laplace counters are pure epsilon-DP: delta would be
    ignored) and `train dpq --method select --sampler/--update-lipschitz` (Algorithm 1's knobs) exit 2 with
    one line naming the flag."""
    code, _, err = run(capsys, "frontier", "pucb", "--variant", "valid", "--delta", "1e-5")
    assert code == 2 and "--delta applies to pucb only" in err and len(err.strip().splitlines()) == 1
    for flag, value in (("--sampler", "authors"), ("--update-lipschitz", "0.1")):
        code, _, err = run(capsys, "train", "dpq", "--method", "select", "--epsilon", "7", "--delta", "1e-5",
                           flag, value)
        assert code == 2 and flag in err and "does not apply to --method select" in err


def test_a_missing_extra_is_one_line_and_exit_2(tmp_path, monkeypatch, capsys):
    # after `pip install -e .` alone (no plot / rl extras) a command that needs one says which, in one line
    from privcal import plot

    def missing():
        raise ImportError("privcal's plots need matplotlib: pip install 'privcal[plot]'")

    monkeypatch.setattr(plot, "_pyplot", missing)
    code = main(["plot", "profile", "--sigma", "1", "--out", str(tmp_path / "p.png")])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and err.startswith("privcal: error:") and "privcal[plot]" in err


@pytest.mark.parametrize("argv, says", [
    (["epsilon", "--sigma", "1", "--delta", "-1e-5"], "--delta must be in (0, 1), got -1e-05"),
    (["epsilon", "--sigma", "-1", "--delta", "1e-5"], "--sigma"),
    (["table", "--epsilons", "-1,2"], "--epsilons"),
])
def test_negative_numbers_reach_the_range_check(argv, says, capsys):
    # argparse read "-1e-5" as an unknown option ("expected one argument"): the value's own range is the message
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("privcal: error:") and says in err
    assert "expected one argument" not in err


@pytest.mark.parametrize("argv", [
    ["calibrate", "--epsilon", "1e300", "--delta", "1e-5"],
    ["train", "pucb", "--epsilon", "2e6"],
    ["train", "gpope", "--epsilon", "2e6"],
    ["train", "dpq", "--epsilon", "2e6", "--delta", "1e-4"],
    ["table", "--epsilons", "2e6"],
])
def test_one_epsilon_cap_for_every_subcommand(argv, capsys):
    # calibrate --epsilon 1e300 answered sigma = 7.07e-151, and 1e308 ran past 6 minutes; table capped at 1e6
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("privcal: error:") and "1e+06]" in err


def test_every_usage_refusal_starts_like_every_other(capsys):
    for argv in (["epsilon", "--sigma", "x", "--delta", "1e-5"], ["table", "--bogus"], ["train"]):
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert err.startswith("privcal: error: ") and err.count("\n") == 1 and "--help" in err, argv


@pytest.mark.parametrize("argv, says", [
    (["table", "--epsilons", "1,,2"], "without an empty item"),
    (["table", "--epsilons", "1,2,"], "without an empty item"),
    (["--version", "extra"], "--version takes no other argument"),
    (["table", "--memory-limit", "1e-9"], "--memory-limit must be a number of MiB in [1, inf)"),
])
def test_a_flag_value_is_never_silently_dropped(argv, says, capsys):
    # "1,,2" dropped its empty item, "--version extra" ignored "extra", --memory-limit 1e-9 printed the default table
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("privcal: error:") and says in err


def test_pucb_one_seed_verdict_tests_the_realised_regret_with_its_standard_error(capsys):
    # at epsilon 1 every count stays below the error bound: the agent plays the uniform policy, so its realised
    # regret is a random draw around the uniform policy's exact expected regret; compared "as exact" it printed
    # "beats" on seeds 1-6. Seed 1's z statistic is about 0 here: "cannot tell"
    assert main(["train", "pucb", "--states", "3", "--actions", "2", "--horizon", "3", "--episodes", "2000",
                 "--epsilon", "1", "--seed", "1", "--format", "json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert "z test" in d["verdict_test"]["test"] and d["verdict_test"]["statistic"] is not None
    assert d["verdict"] == "cannot tell"


def test_gpope_verdict_says_its_mspbe_is_an_estimate(capsys):
    assert main(["train", "gpope", "--domain", "chain", "--trajectories", "60", "--iterations", "200", "--epsilon",
                 "10", "--eval-trajectories", "400", "--format", "json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert "400 simulated trajectories" in d["verdict_test"]["test"] and "exact values" not in d["verdict_test"]["test"]
