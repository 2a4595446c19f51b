"""``--sensitivity`` reaches the calibration: every CLI path from the flag to a sigma or an epsilon, at
sensitivity 2, agrees with the API called with the same setting (and differs from sensitivity 1).

tests/test_cli_robustness.py refuses bad sensitivities; a flag read and then dropped on its way passes those.
"""

from __future__ import annotations

import json

import pytest

import privcal
from privcal import cli
from privcal.accounting.sampled_runs import sampled_run_calibrate, sampled_run_epsilon

D = 1e-5
RUN = dict(sampling="shuffle", epochs=2, batch_size=10, dataset_size=100)
RUN_FLAGS = ["--sampling", "shuffle", "--epochs", "2", "--batch-size", "10", "--dataset-size", "100"]


def _json(capsys, *argv) -> dict:
    assert cli.main([*argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("flags, setting", [([], dict(steps=1)), (["--steps", "100", "--sample-rate", "0.01"],
                                                                   dict(steps=100, sample_rate=0.01))])
def test_calibrate_at_sensitivity_2_is_the_api_at_sensitivity_2(flags, setting, capsys):
    d = _json(capsys, "calibrate", "--epsilon", "1", "--delta", "1e-5", "--sensitivity", "2", *flags)
    want = privcal.calibrate_report(1.0, D, sensitivity=2.0, **setting)
    assert d["sigma"] == want.sigma and d["sensitivity"] == 2.0
    # the Gaussian mechanism's sigma is proportional to the sensitivity (sigma / sensitivity is what is priced).
    # The two calibrations are separate searches, each stopping once its certified epsilon is within
    # pld_accountant._EPS_RTOL = 1e-4 (relative) below the target: both noise multipliers price to an epsilon in
    # that band, and differ by at most about that much
    one = privcal.calibrate(1.0, D, **setting)
    for multiplier in (d["sigma"] / 2, one):
        assert 1.0 - 1.5e-4 <= privcal.epsilon(multiplier, D, **setting) <= 1.0
    assert d["sigma"] == pytest.approx(2 * one, rel=2e-4)


@pytest.mark.parametrize("flags, setting", [([], dict(steps=1)), (["--steps", "100", "--sample-rate", "0.01"],
                                                                   dict(steps=100, sample_rate=0.01))])
def test_epsilon_at_sensitivity_2_is_the_api_at_sensitivity_2(flags, setting, capsys):
    d = _json(capsys, "epsilon", "--sigma", "2", "--delta", "1e-5", "--sensitivity", "2", *flags)
    assert d["epsilon"] == privcal.epsilon(2.0, D, sensitivity=2.0, **setting)
    # sigma 2 at sensitivity 2 is sigma 1 at sensitivity 1 (the same noise multiplier)
    assert d["epsilon"] == pytest.approx(privcal.epsilon(1.0, D, **setting), rel=1e-9)


def test_a_sampled_run_at_sensitivity_2_is_the_api_at_sensitivity_2(capsys):
    d = _json(capsys, "calibrate", "--epsilon", "1", "--delta", "1e-5", "--sensitivity", "2", *RUN_FLAGS)
    sigma, _, _ = sampled_run_calibrate(1.0, D, sensitivity=2.0, **RUN)
    assert d["sigma"] == sigma and d["sensitivity"] == 2.0
    assert d["sigma"] == pytest.approx(2 * sampled_run_calibrate(1.0, D, **RUN)[0], rel=1e-6)
    e = _json(capsys, "epsilon", "--sigma", "2", "--delta", "1e-5", "--sensitivity", "2", *RUN_FLAGS)
    assert e["epsilon"] == sampled_run_epsilon(2.0, D, sensitivity=2.0, **RUN).epsilon


def test_the_gaussian_table_at_sensitivity_2_is_the_api_at_sensitivity_2(capsys):
    d = _json(capsys, "table", "--setting", "gaussian", "--epsilons", "1", "--steps", "10", "--sensitivity", "2")
    assert d["parameters"]["sensitivity"] == 2.0
    assert d["rows"][0]["sigma"]["exact"] == privcal.calibrate(1.0, D, steps=10, sensitivity=2.0, accountant="exact")


def test_a_sampled_run_without_its_counts_names_the_missing_flags(capsys):
    assert cli.main(["calibrate", "--epsilon", "1", "--delta", "1e-5", "--sampling", "shuffle", "--epochs", "2"]) == 2
    err = capsys.readouterr().err
    assert "--sampling shuffle needs --batch-size, --dataset-size" in err, err
