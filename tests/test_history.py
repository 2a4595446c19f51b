"""History files: groups of releases priced and calibrated as one composition."""

import json
import sys

import pytest

import privcal
from privcal.accounting.history import ReleaseGroup, calibrate_history, history_event, load_history
from privcal.errors import InfeasibleError


def _write(tmp_path, data, name="h.json"):
    path = tmp_path / name
    path.write_text(json.dumps(data) if name.endswith(".json") else data)
    return path


def test_json_history_is_the_composition_of_its_groups(tmp_path):
    path = _write(tmp_path, [{"sigma": 1.1, "steps": 1000, "sample_rate": 0.01}, {"sigma": 20.0, "steps": 10}])
    groups = load_history(path)
    expected = privcal.ComposedEvent([
        privcal.SelfComposedEvent(privcal.PoissonSampledEvent(0.01, privcal.GaussianEvent(1.1)), 1000),
        privcal.SelfComposedEvent(privcal.GaussianEvent(20.0), 10),
    ])
    assert privcal.epsilon_of(history_event(groups), 1e-5) == privcal.epsilon_of(expected, 1e-5)


@pytest.mark.skipif(sys.version_info < (3, 11), reason="tomllib is Python >= 3.11")
def test_toml_history_matches_json(tmp_path):
    toml = _write(tmp_path, '[[release]]\nsigma = 3.0\nsteps = 100\nsensitivity = 2.0\n', "h.toml")
    js = _write(tmp_path, [{"sigma": 3.0, "steps": 100, "sensitivity": 2.0}])
    assert privcal.epsilon_of(history_event(load_history(toml)), 1e-5) == privcal.epsilon_of(
        history_event(load_history(js)), 1e-5
    )


def test_scaling_every_group_of_a_one_group_history_is_calibrate(tmp_path):
    # closed form: scaling sigma = 1 by c is sigma = c, so c is privcal.calibrate's sigma (exact profile)
    groups = load_history(_write(tmp_path, [{"sigma": 1.0, "steps": 100}]))
    factor, sigmas, name = calibrate_history(groups, 1.0, 1e-5)
    assert name == "exact"
    assert factor == pytest.approx(privcal.calibrate(1.0, 1e-5, steps=100), rel=1e-8)
    assert sigmas == [factor]


def test_scaling_one_group_leaves_the_others_and_meets_the_target(tmp_path):
    groups = load_history(_write(tmp_path, [{"sigma": 30.0, "steps": 50}, {"sigma": 1.0, "steps": 10}]))
    factor, sigmas, name = calibrate_history(groups, 2.0, 1e-5, scaled=1)
    assert sigmas[0] == 30.0 and sigmas[1] == pytest.approx(factor)
    scaled = [ReleaseGroup(s, g.releases) for s, g in zip(sigmas, groups)]
    assert privcal.epsilon_of(history_event(scaled), 1e-5, accountant=name) <= 2.0
    # the unscaled group alone already exceeds a tiny target: no factor can help
    with pytest.raises(InfeasibleError):
        calibrate_history(load_history(_write(tmp_path, [{"sigma": 0.1, "steps": 50}, {"sigma": 1.0}])),
                          0.01, 1e-5, scaled=1)


def test_best_history_calibration_is_the_smallest_factor_among_valid_accountants(tmp_path):
    # a subsampled history: RDP and PLD both price it; best keeps the smaller factor, and its accountant
    # certifies the target at the scaled sigmas
    groups = load_history(_write(tmp_path, [{"sigma": 1.0, "steps": 300, "sample_rate": 0.01}, {"sigma": 20.0, "steps": 5}]))
    factor, sigmas, name = calibrate_history(groups, 1.0, 1e-5)
    each = {n: calibrate_history(groups, 1.0, 1e-5, accountant=n)[0] for n in ("rdp", "pld")}
    assert factor == min(each.values()) and name == min(each, key=each.get)
    scaled = [ReleaseGroup(s, g.releases) for s, g in zip(sigmas, groups)]
    assert privcal.epsilon_of(history_event(scaled), 1e-5, accountant=name) <= 1.0


@pytest.mark.parametrize(
    "data,message",
    [
        ([], "non-empty list"),
        ([{"steps": 3}], r"release\[0\] needs a sigma"),
        ([{"sigma": 1.0, "colour": "red"}], "unknown keys"),
        ([{"sigma": -1.0}], r"release\[0\]\.sigma must be in"),
        ([{"sigma": 1.0, "sample_rate": 2.0}], "sample_rate must be in"),
    ],
)
def test_bad_history_files_name_the_entry(tmp_path, data, message):
    with pytest.raises(ValueError, match=message):
        load_history(_write(tmp_path, data))


def test_unreadable_file_is_one_value_error(tmp_path):
    with pytest.raises(ValueError, match="cannot be read"):
        load_history(tmp_path / "missing.json")
    bad = tmp_path / "bad.json"
    bad.write_text("[{")
    with pytest.raises(ValueError, match="not valid JSON"):
        load_history(bad)


def test_file_errors_name_the_file_the_group_and_the_field(tmp_path, capsys):
    # a group with "steps": 0 said "--steps must be ...", a flag the user never typed; a TOML file with [[groups]]
    # had no hint of the table name
    from privcal.cli import main

    bad = tmp_path / "h.json"
    bad.write_text(json.dumps([{"sigma": 1.0}, {"sigma": 1.0, "steps": 0}]))
    assert main(["epsilon", "--history", str(bad), "--delta", "1e-5"]) == 2
    err = capsys.readouterr().err
    assert "h.json" in err and "release[1].steps must be an integer >= 1, got 0" in err and "--steps" not in err
    toml = tmp_path / "h.toml"
    toml.write_text("[[groups]]\nsigma = 1\n")
    assert main(["epsilon", "--history", str(toml), "--delta", "1e-5"]) == 2
    err = capsys.readouterr().err
    assert "must hold [[release]] tables" in err and "found [[groups]]" in err and err.count("\n") == 1


def test_history_settings_object_and_keywords_calibrate_alike(tmp_path):
    from privcal.accounting.history import HistorySettings, calibrate_history_report

    groups = load_history(_write(tmp_path, [{"sigma": 1.0, "steps": 100}, {"sigma": 20.0, "steps": 10}]))
    settings = HistorySettings(scaled=0, accountant="pld")
    # the same calibration whether the fields come as a settings object or as keywords
    assert calibrate_history(groups, 2.0, 1e-5, settings) == calibrate_history(groups, 2.0, 1e-5, scaled=0,
                                                                               accountant="pld")
    assert calibrate_history_report(groups, 2.0, 1e-5, settings).accountant == "pld"
    with pytest.raises(TypeError, match="unexpected keyword argument 'scale'"):
        calibrate_history(groups, 2.0, 1e-5, scale=1)
