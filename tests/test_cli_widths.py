"""Text output fits 100 columns: every command at fast settings, stdout and stderr; verify's
compact default view and --verbose; a history names the accountant that priced it; the bracket line is short
and says only "wide" when it tells nothing of the tightness."""

from __future__ import annotations

import json

import pytest

from privcal import cli
from privcal.cli import out as _out

_HISTORY = '[{"sigma": 1.0, "steps": 10}, {"sigma": 2.0, "steps": 5, "sample_rate": 0.1}]'

_COMMANDS = [
    ["table"], ["table", "--setting", "gaussian"], ["table", "--setting", "gpope", "--epsilons", "1"],
    ["calibrate", "--epsilon", "1", "--delta", "1e-5", "--steps", "10", "--sample-rate", "0.1"],
    ["calibrate", "--epsilon", "1", "--delta", "1e-5", "--steps", "10", "--sample-rate", "0.1",
     "--sampling", "without_replacement"],
    ["epsilon", "--sigma", "1", "--delta", "1e-5", "--steps", "20", "--sample-rate", "0.01", "--sampling",
     "without_replacement", "--neighbouring", "zero_out"],  # the longest setting line
    ["epsilon", "--sigma", "0.01", "--delta", "1e-5", "--sample-rate", "0.01"],  # a wide bracket and a PLD note
    ["epsilon", "--sigma", "1e-20", "--delta", "1e-5", "--sample-rate", "0.5"],  # rdp answers, the PLD's note
    ["epsilon", "--history", "{history}", "--delta", "1e-5"],
    ["calibrate", "--epsilon", "1", "--delta", "1e-5", "--history", "{history}"],
    ["verify", "--claim", "WH-prop3-classic-gaussian", "--claim", "WH-lemma8-constant"],
    ["verify", "--claim", "WH-prop3-classic-gaussian", "--verbose"],
    ["verify", "--list"],
    ["train", "dpq", "--samples", "640", "--epsilon", "0.9", "--delta", "1e-4"],
    ["train", "dpq", "--samples", "640", "--sigma", "0.3"],
    ["train", "dpq", "--loop", "replay", "--episodes", "2", "--sigma", "0.1", "--batch-size", "16"],
    ["train", "pucb", "--episodes", "20", "--epsilon", "1"],
    ["train", "gpope", "--epsilon", "1", "--trajectories", "30", "--eval-trajectories", "30"],
]


@pytest.fixture
def history(tmp_path):
    path = tmp_path / "history.json"
    path.write_text(_HISTORY)
    return str(path)


@pytest.mark.parametrize("argv", _COMMANDS, ids=" ".join)
def test_text_output_fits_100_columns(argv, history, capsys):
    assert cli.main([a.format(history=history) for a in argv]) == 0
    out, err = capsys.readouterr()
    wide = [line for line in (out + err).splitlines() if len(line) > 100]
    assert out.strip() and not wide, wide


def test_fit_wraps_under_the_value_column_and_keeps_what_fits():
    line = "  privacy               " + "word " * 40
    wrapped = _out.fit(line).splitlines()
    assert len(wrapped) > 1 and all(len(w) <= 100 for w in wrapped)
    assert all(w.startswith(" " * 24) and w[24] != " " for w in wrapped[1:])  # under the value
    assert _out.fit("short line\n  ok") == "short line\n  ok"
    assert _out.fit("note: " + "x " * 60).splitlines()[1].startswith("  x")


def test_verify_compact_view_and_verbose(capsys):
    assert cli.main(["verify", "--claim", "WH-lemma8-constant"]) == 0
    compact = capsys.readouterr().out
    assert "[FAILS] WH-lemma8-constant" in compact and "counterexample:" in compact
    assert "statement:" not in compact and "--verbose" in compact
    assert cli.main(["verify", "--claim", "WH-lemma8-constant", "--verbose"]) == 0
    verbose = capsys.readouterr().out
    assert "statement:" in verbose and "evidence:" in verbose and "check:" in verbose
    assert cli.main(["verify", "--claim", "WH-lemma8-constant", "--verbose", "--json"]) == 2


def test_a_history_names_the_accountant_that_priced_it(history, capsys):
    for argv in (["epsilon", "--history", history, "--delta", "1e-5"],
                 ["calibrate", "--epsilon", "1", "--delta", "1e-5", "--history", history]):
        assert cli.main([*argv, "--json"]) == 0
        record = json.loads(capsys.readouterr().out)
        assert record["accountant"] in ("pld", "rdp")  # the one that answered, never "best"
        assert cli.main(argv) == 0
        assert f"accountant  {record['accountant']}" in capsys.readouterr().out


def test_the_bracket_line_is_short_and_says_wide_when_uninformative():
    # [0, 8969.65] (the example): the lower end says nothing of the tightness
    assert cli.bracket_line((0.0, 8969.65), True) == (
        "  bracket     wide (lower end 0): a certified upper bound of unknown tightness")
    line = cli.bracket_line((0.999564, 1.0), True)
    assert line == "  bracket     [0.999564, 1], certified; lower end: a realisable pair loses at least this much"
    assert "not of this mechanism" in cli.bracket_line((0.5, 1.0), False)
    assert cli.bracket_line((1.0, 1.0), True) is None and cli.bracket_line(None, True) is None
