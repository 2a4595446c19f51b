"""CLI robustness: extreme or degenerate inputs get an answer (exit 0) or a one-line
refusal (exit 2) quickly, never a traceback or a hang; Ctrl-C exits 130 with one line; warnings are one
``privcal: warning:`` line. The fast paths added for this stay upper bounds (checked against the slow ones).

Most cases run in-process (``privcal.cli.main``); the few that could hang, take tens of seconds or need a
signal run in a subprocess under a hang cap of minutes (never a performance deadline: the suite must pass on a loaded
machine). Interrupt tests wait for a readiness line on stderr (``PRIVCAL_READY=1``), never for a sleep.
"""

from __future__ import annotations

import math
import os
import signal
import subprocess
import sys
import warnings

import pytest

from privcal import cli
from privcal.analysis import kov as K
from privcal.accounting import api

_TIMEOUT = 600.0  # a hang cap, not a performance target

_BIG, _TINY = "1e300", "1e-300"

# --- calibrate / epsilon: every numeric flag at its edges --------------------------------------------
_CAL = ["calibrate", "--epsilon", "1", "--delta", "1e-5"]
_EPS = ["epsilon", "--sigma", "1", "--delta", "1e-5"]
_IN_PROCESS = [
    *[["calibrate", "--epsilon", v, "--delta", "1e-5"] for v in ("0", "-1", "nan", "inf", _BIG, _TINY)],
    *[["calibrate", "--epsilon", "1", "--delta", v] for v in ("0", "1", "-1", "nan", "inf", _TINY, "0.9999999999999999")],
    *[["epsilon", "--sigma", v, "--delta", "1e-5"] for v in ("0", "-1", "nan", "inf", _BIG, "1e-200", _TINY)],
    *[["epsilon", "--sigma", "1", "--delta", v] for v in ("0", "1", "nan", _TINY, "0.9999999999999999")],
    *[[*c, "--steps", v] for c in (_CAL, _EPS) for v in ("0", "-5", "100000000", "1000000000000")],
    *[[*c, "--sensitivity", v] for c in (_CAL, _EPS) for v in ("0", "-1", "nan", "inf", _BIG, _TINY)],
    *[[*c, "--sample-rate", v, "--steps", "100"] for c in (_CAL, _EPS) for v in ("0", "-0.5", "1.5", "nan", "1", _TINY, "1e-12")
      if not (c is _CAL and v in (_TINY, "1e-12"))],  # those two take 30-60 s: in _SUBPROCESS below
    [*_CAL, "--sample-rate", "0.01", "--steps", "1000", "--sampling", "without_replacement"],
    [*_EPS, "--sample-rate", "0.01", "--steps", "1000", "--accountant", "paper"],
    ["epsilon", "--sigma", "1e-200", "--delta", "1e-5", "--steps", "10", "--sample-rate", "0.5", "--accountant", "paper"],
    ["epsilon", "--sigma", "1e-200", "--delta", "1e-5", "--steps", "10", "--accountant", "kov"],
    ["epsilon", "--sigma", "1e-300", "--delta", "1e-5", "--accountant", "rdp"],
    ["epsilon", "--sigma", _BIG, "--delta", "1e-5", "--accountant", "kov"],
    ["epsilon", "--sigma", _BIG, "--delta", "1e-5", "--accountant", "rdp"],
    ["calibrate", "--epsilon", "1", "--delta", _TINY, "--accountant", "kov", "--steps", "10"],
    ["calibrate", "--epsilon", "1e-6", "--delta", "1e-5", "--accountant", "rdp", "--steps", "10"],
    ["calibrate", "--epsilon", "1000", "--delta", "0.5", "--accountant", "paper"],
    ["calibrate", "--epsilon", "1", "--delta", "1e-5", "--steps", "100000000", "--accountant", "rdp"],
    ["epsilon", "--sigma", "1", "--delta", "1e-5", "--steps", "100000000", "--accountant", "kov"],
    # --- table --------------------------------------------------------------------------------------
    *[["table", "--epsilons", v] for v in ("0", "-1", "nan", "inf", "", "1,,2", "x")],
    *[["table", "--delta", v] for v in ("0", "1", "nan", _TINY)],
    *[["table", "--setting", "gaussian", "--steps", v] for v in ("0", "-1")],
    *[["table", "--setting", "gaussian", "--sensitivity", v] for v in ("0", "nan", "inf")],
    *[["table", f"--{flag}", v] for flag in ("samples", "batch-size", "resets", "actions") for v in ("0", "-3")],
    *[["table", f"--{flag}", v] for flag in ("lr", "k", "lipschitz") for v in ("0", "-1", "nan", "inf")],
    *[["table", "--setting", "gpope", f"--{flag}", v] for flag in ("trajectories", "iterations") for v in ("0", "-1")],
    # --- train --------------------------------------------------------------------------------------
    ["train", "pucb", "--episodes", "1000000000000", "--epsilon", "1"],
    ["train", "pucb", "--states", "100000", "--episodes", "10", "--epsilon", "1"],
    ["train", "gpope", "--epsilon", "1", "--iterations", "1000000000000"],
    *[["train", "pucb", f"--{flag}", v, "--epsilon", "1"] for flag in ("states", "actions", "horizon", "episodes") for v in ("0", "-1")],
    *[["train", "pucb", "--episodes", "5", "--epsilon", v] for v in ("0", "-1", "nan", "inf")],
    *[["train", "pucb", "--episodes", "5", "--epsilon", "1", "--failure-probability", v] for v in ("0", "1", "nan")],
    *[["train", "dpq", "--epsilon", v, "--delta", "1e-5"] for v in ("0", "-1", "nan", "inf")],
    *[["train", "dpq", "--epsilon", "1", "--delta", v] for v in ("0", "1", "nan")],
    *[["train", "dpq", "--sigma", v] for v in ("0", "-1", "nan")],
    *[["train", "dpq", "--sigma", "1", f"--{flag}", v] for flag in ("samples", "batch-size", "resets") for v in ("0", "-1")],
    *[["train", "dpq", "--sigma", "1", f"--{flag}", v] for flag in ("lr", "lipschitz", "gamma", "beta") for v in ("-1", "nan", "inf")],
    *[["train", "gpope", "--epsilon", v] for v in ("0", "-1", "nan", "inf")],
    *[["train", "gpope", "--epsilon", "1", "--delta", v] for v in ("0", "1", "nan")],
    *[["train", "gpope", "--epsilon", "1", f"--{flag}", v] for flag in ("trajectories", "iterations", "eval-trajectories", "q-episodes", "horizon") for v in ("0", "-1")],
    *[["train", "gpope", "--epsilon", "1", f"--{flag}", v] for flag in ("step-size", "clip") for v in ("0", "-1", "nan", "inf")],
    # --- conflicting or ignored flags -----------------------------------------------------------------
    ["table", "--setting", "gpope", "--steps", "5"],
    ["table", "--samples", "10", "--iterations", "3"],
    ["table", "--setting", "gaussian", "--lr", "0.1"],
    ["epsilon", "--sigma", "1", "--delta", "1e-5", "--sampling", "without_replacement"],
    ["calibrate", "--epsilon", "1", "--delta", "1e-5", "--neighbouring", "zero_out"],
    ["train", "dpq", "--epsilon", "0.9", "--delta", "1e-4", "--sigma", "1"],
    ["train", "dpq", "--method", "non-private", "--sigma", "1"],
    ["train", "gpope", "--epsilon", "1", "--horizon", "3"],
    ["train", "gpope", "--epsilon", "1", "--q-episodes", "3"],
    ["train", "gpope", "--non-private", "--clip", "1"],
    ["verify", "--list", "--write", "x.md"],
    # --- verify -------------------------------------------------------------------------------------
    ["verify", "--write", "/nonexistent_dir/out.md"],
    ["verify", "--write", "/"],
    ["verify", "--claim", "no-such-claim"],
    ["verify", "--seed", "-1"],
]

# inputs whose search must stay bounded (minutes, or a hang, without its bounds), and the slowest inputs (a PLD calibration at a tiny sample rate,
# 30-60 s on 2 cores): each in its own process, with a timeout. The processes start together when the first of these
# tests runs (module fixture): each is one busy core, so they share both cores instead of queueing.
_SUBPROCESS = [
    ["calibrate", "--epsilon", "1", "--delta", "1e-5", "--sample-rate", _TINY, "--steps", "100"],
    ["calibrate", "--epsilon", "1", "--delta", "1e-5", "--sample-rate", "1e-12", "--steps", "100"],
    ["calibrate", "--epsilon", "1", "--delta", "1e-5", "--steps", "100000000", "--accountant", "kov"],
    ["calibrate", "--epsilon", "1", "--delta", "1e-5", "--steps", "1000000", "--accountant", "kov"],
    ["table", "--setting", "gaussian", "--steps", "100000000"],
    ["table", "--setting", "gaussian", "--steps", "1000000"],  # the largest k priced on the exact KOV profile
    ["epsilon", "--sigma", "1e-200", "--delta", "1e-5", "--steps", "10", "--sample-rate", "0.5"],
]


# The inputs above that have an answer (exit 0): extreme but valid settings, priced or calibrated (an epsilon
# of inf, a huge or tiny sigma are answers). Every other input above is out of range, contradictory or
# beyond a stated limit (sigma <= 1e12, the memory budget) and must be refused (exit 2): one outcome each.
_ANSWERED = {tuple(a.split()) for a in (
    "calibrate --epsilon 1e-300 --delta 1e-5",  # sigma ~ 4e4: delta(0) = TV distance < 1e-5
    "calibrate --epsilon 1 --delta 1e-300", "calibrate --epsilon 1 --delta 0.9999999999999999",
    "epsilon --sigma 1e300 --delta 1e-5", "epsilon --sigma 1e-200 --delta 1e-5", "epsilon --sigma 1e-300 --delta 1e-5",
    "epsilon --sigma 1 --delta 1e-300", "epsilon --sigma 1 --delta 0.9999999999999999",
    "calibrate --epsilon 1 --delta 1e-5 --steps 100000000", "calibrate --epsilon 1 --delta 1e-5 --steps 1000000000000",
    "epsilon --sigma 1 --delta 1e-5 --steps 100000000", "epsilon --sigma 1 --delta 1e-5 --steps 1000000000000",
    "calibrate --epsilon 1 --delta 1e-5 --sensitivity 1e-300",  # sigma 3.7e-300 (the sensitivity / sigma ratio)
    "epsilon --sigma 1 --delta 1e-5 --sensitivity 1e300", "epsilon --sigma 1 --delta 1e-5 --sensitivity 1e-300",
    "calibrate --epsilon 1 --delta 1e-5 --sample-rate 1 --steps 100",
    "epsilon --sigma 1 --delta 1e-5 --sample-rate 1 --steps 100",
    "epsilon --sigma 1 --delta 1e-5 --sample-rate 1e-300 --steps 100",
    "epsilon --sigma 1 --delta 1e-5 --sample-rate 1e-12 --steps 100",
    "calibrate --epsilon 1 --delta 1e-5 --sample-rate 0.01 --steps 1000 --sampling without_replacement",  # + a warning
    "epsilon --sigma 1 --delta 1e-5 --sample-rate 0.01 --steps 1000 --accountant paper",
    "epsilon --sigma 1e-200 --delta 1e-5 --steps 10 --sample-rate 0.5 --accountant paper",
    "epsilon --sigma 1e-200 --delta 1e-5 --steps 10 --accountant kov",
    "epsilon --sigma 1e-300 --delta 1e-5 --accountant rdp", "epsilon --sigma 1e300 --delta 1e-5 --accountant kov",
    "epsilon --sigma 1e300 --delta 1e-5 --accountant rdp",
    "calibrate --epsilon 1 --delta 1e-300 --accountant kov --steps 10",
    "calibrate --epsilon 1000 --delta 0.5 --accountant paper",
    "calibrate --epsilon 1 --delta 1e-5 --steps 100000000 --accountant rdp",
    "epsilon --sigma 1 --delta 1e-5 --steps 100000000 --accountant kov",
    "table --delta 1e-300",
    *(" ".join(argv) for argv in _SUBPROCESS),  # each of the inputs whose search must stay bounded has an answer
)}


def test_every_listed_answer_is_an_input_above():
    assert _ANSWERED <= {tuple(a) for a in _IN_PROCESS + _SUBPROCESS}


def _check(code: int, out: str, err: str, argv: list[str]) -> None:
    assert "Traceback" not in err + out, argv
    assert code == (0 if tuple(argv) in _ANSWERED else 2), (argv, code, err)
    if code == 2:
        assert len(err.strip().splitlines()) == 1, (argv, err)
    else:
        assert out.strip(), argv


@pytest.mark.parametrize("argv", _IN_PROCESS, ids=" ".join)
def test_bad_or_extreme_input_answers_or_refuses_in_one_line(argv, capsys):
    code = cli.main(argv)
    out, err = capsys.readouterr()
    _check(code, out, err, argv)


def _run(argv: list[str], **kw) -> subprocess.Popen:
    code = f"import sys; from privcal.cli import main; sys.exit(main({argv!r}))"
    return subprocess.Popen(
        [sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kw
    )


@pytest.fixture(scope="module")
def started(request):
    """argv -> its running process, for the selected cases of the test below, all started at once."""
    wanted = {tuple(item.callspec.params["argv"]) for item in request.session.items
              if getattr(item, "originalname", None) == "test_formerly_slow_inputs_finish_within_the_timeout"
              and hasattr(item, "callspec")}
    procs = {tuple(argv): _run(argv) for argv in _SUBPROCESS if tuple(argv) in wanted}
    yield procs
    for proc in procs.values():
        if proc.poll() is None:
            proc.kill()
            proc.communicate()


@pytest.mark.parametrize("argv", _SUBPROCESS, ids=" ".join)
def test_formerly_slow_inputs_finish_within_the_timeout(argv, started):
    proc = started[tuple(argv)]
    try:
        out, err = proc.communicate(timeout=_TIMEOUT)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        pytest.fail(f"privcal {' '.join(argv)} took more than {_TIMEOUT:g} s")
    _check(proc.returncode, out, err, argv)


def _launch(argv: list[str], module: bool = False) -> subprocess.Popen:
    """The ``privcal`` command's own entry point (privcal_launcher), or ``python -m privcal``, with readiness
    lines on stderr."""
    code = "import sys, privcal_launcher; sys.exit(privcal_launcher.main())"
    start = ["-m", "privcal"] if module else ["-c", code]
    env = dict(os.environ, PRIVCAL_READY="1")
    return subprocess.Popen([sys.executable, *start, *argv], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=env)


def _interrupt_after(proc: subprocess.Popen, line: str) -> tuple[str, str]:
    first = proc.stderr.readline()  # blocks until the process says it got there (no sleep)
    assert first.strip() == "privcal: starting", first
    while first.strip() != line:
        first = proc.stderr.readline()
        assert first, f"the process ended before {line!r}"
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=_TIMEOUT)
    return out, err


def test_ctrl_c_exits_130_with_one_line():
    # inside the run: after the arguments are parsed, a million PUCB episodes are under way
    proc = _launch(["train", "pucb", "--episodes", "1000000", "--epsilon", "1", "--json"])
    out, err = _interrupt_after(proc, "privcal: ready")
    assert proc.returncode == 130, err
    assert err.strip().splitlines() == ["privcal: interrupted"]


@pytest.mark.parametrize("module", [False, True], ids=["privcal", "python -m privcal"])
def test_ctrl_c_during_the_imports_exits_130_with_one_line(module):
    # the signal lands while privcal (numpy, scipy, sympy, ...) is being imported, or at the latest before the
    # arguments are parsed: either way one line and 130, never a traceback (``python -m privcal`` imports the
    # package before its __main__: privcal/__init__ installs the handler first when run that way)
    proc = _launch(["train", "pucb", "--episodes", "1000000", "--epsilon", "1", "--json"], module=module)
    out, err = _interrupt_after(proc, "privcal: starting")
    assert proc.returncode == 130, err
    assert err.strip().splitlines() == ["privcal: interrupted"]


def test_warnings_are_one_privcal_line():
    # without_replacement without --neighbouring warns (replace-one implied): one line, then the answer
    argv = ["calibrate", "--epsilon", "1", "--delta", "1e-5", "--steps", "10", "--sample-rate", "0.1",
            "--sampling", "without_replacement"]
    out, err = _run(argv).communicate(timeout=_TIMEOUT)
    assert out.startswith("sigma = ")
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("privcal: warning: --sampling without_replacement"), err
    assert "--neighbouring replace_one" in lines[0]  # the advice names the flag (the library says neighbouring=)


def test_file_errors_are_one_line(tmp_path, capsys, monkeypatch):
    def fail(args):
        open(tmp_path / "missing" / "x.csv")

    monkeypatch.setattr(cli, "cmd_table", fail)
    assert cli.main(["table"]) == 2
    err = capsys.readouterr().err
    assert err.splitlines() == [f"privcal: error: {tmp_path / 'missing' / 'x.csv'}: No such file or directory"]


# --- the fast paths are upper bounds --------------------------------------------------------------------


@pytest.mark.parametrize("sigma", [20.0, 60.0, 200.0])
def test_kov_closed_form_beyond_the_threshold_is_above_the_exact_profile(sigma, monkeypatch):
    # Thm 3.4 (Kairouz, Oh & Viswanath 2015) bounds the optimal composition from above at every eps0,
    # so the searched minimum is above the exact-profile one; checked at k = 2000 by moving the threshold.
    steps, delta = 2000, 1e-5
    exact = K.kov_gaussian_epsilon(sigma, steps=steps, delta=delta)
    from privcal.analysis import kov_gaussian

    monkeypatch.setattr(kov_gaussian, "K_CLOSED_FORM", 1000)
    closed = K.kov_gaussian_epsilon(sigma, steps=steps, delta=delta)
    assert exact < closed < 1.5 * exact  # strict: the patched threshold did switch to the closed form


@pytest.mark.parametrize("eps0", [0.001, 0.01, 0.1])
def test_kov_float_margin_is_above_the_mpmath_sum(eps0, monkeypatch):
    # precise=False keeps float64's rounding margin instead of re-summing with mpmath (forced here at
    # k = 5000): never below the precise value, and within the margin of it.
    from privcal.analysis import kov_profile

    monkeypatch.setattr(kov_profile, "MP_REL_ERROR", 0.0)
    steps, delta0 = 5000, 1e-9
    for eps in (0.5, 2.0):
        precise = K.kov_delta_unchecked(eps0, delta0, steps=steps, epsilon=eps)
        fast = K.kov_delta_unchecked(eps0, delta0, steps=steps, epsilon=eps, precise=False)
        assert precise <= fast <= precise * (1 + 1e-6)
    precise = K.kov_epsilon_unchecked(eps0, delta0, steps=steps, delta=1e-5)
    fast = K.kov_epsilon_unchecked(eps0, delta0, steps=steps, delta=1e-5, precise=False)
    assert precise <= fast <= precise * (1 + 1e-6)


def test_tiny_noise_multiplier_gives_inf_only_where_the_bound_is_beyond_1e190():
    # just above the floor the valid subsampled RDP still answers (about 5e198 here); below it, inf
    above = api.epsilon(1e-99, 1e-5, steps=10, sample_rate=0.5)
    below = api.epsilon(1e-101, 1e-5, steps=10, sample_rate=0.5)
    assert 1e190 < above < math.inf
    assert below == math.inf


def test_kov_report_says_when_the_closed_form_was_used():
    report = api.epsilon_report(1e5, 1e-5, steps=10**8, accountant="kov")
    assert "Thm 3.4" in report.guarantee
    assert "Thm 3.4" not in api.epsilon_report(100.0, 1e-5, steps=10**4, accountant="kov").guarantee


# --- each listed message is a user message naming the flag and its valid range --------


@pytest.fixture
def histories(tmp_path):
    two = tmp_path / "two.json"  # one plain group, one subsampled: the exact accountant prices only the first
    two.write_text('[{"sigma": 1.0, "steps": 10}, {"sigma": 2.0, "steps": 5, "sample_rate": 0.1}]')
    binary = tmp_path / "binary.json"
    binary.write_bytes(bytes([0x93, 0xff, 0x00, 0x81]) * 16)
    return {"two": str(two), "binary": str(binary)}


_MESSAGES = [  # argv (with {two}/{binary} for history files), what stderr must say, what it must not say
    (["epsilon", "--sigma", "1e-300", "--delta", "1e-5", "--accountant", "pld"],
     "--sigma 1e-300 is too small for --accountant pld: sensitivity / sigma = 1e+300 must be at most 1e+10",
     "NaN"),
    (["epsilon", "--sigma", "1e-20", "--delta", "1e-5", "--accountant", "pld"],  # was a traceback (TypeError)
     "--sigma 1e-20 is too small for --accountant pld", "ufunc"),
    (["table", "--epsilons", "1e300"], "--epsilons: each target must be in (0, 1e+06], got 1e+300", "domain"),
    (["epsilon", "--history", "{two}", "--delta", "1e-5", "--accountant", "exact"],
     "--accountant exact cannot price {two}", "Event("),
    (["epsilon", "--history", "{binary}", "--delta", "1e-5"], "history file '{binary}' is not a text file", "codec"),
    (["calibrate", "--epsilon", "1", "--delta", "1e-5", "--history", "{two}", "--scale", "5"],
     "--scale must be a group index in [0, 1]", "scaled"),
    (["verify", "--seed", "-1"], "argument --seed: must be a whole number in [0, 1e15]", "non-negative int"),
    (["train", "dpq", "--seed", "-1", "--sigma", "1"], "argument --seed: must be a whole number in [0, 1e15]", "Generator"),
    (["train", "gpope", "--seed", "-1", "--epsilon", "1"], "argument --seed: must be a whole number in [0, 1e15]", "expected"),
    (["train", "pucb", "--seed", "-1", "--epsilon", "1"], "argument --seed: must be a whole number in [0, 1e15]", "expected"),
    (["train", "dpq", "--epsilon", "1e300", "--delta", "1e-4"], "--epsilon must be in (0, 1e+06], got 1e+300", "{{"),
    # advice names the flags that exist: a refusal of the library in its argument names, said in flags
    (["train", "pucb", "--counter-noise", "gaussian", "--error-bound", "paper", "--delta", "1e-5", "--epsilon", "1"],
     "with --counter-noise gaussian use --error-bound valid", "='"),
    (["calibrate", "--epsilon", "1", "--delta", "1e-5", "--history", "{two}", "--accountant", "kov"],
     "--accountant kov cannot price {two}", "Event("),
    # the PLD's memory advice names the flags that exist (not memory_limit, value_discretization)
    (["epsilon", "--sigma", "1e-6", "--delta", "1e-5", "--accountant", "pld"],
     "relax --pld-accuracy (now 0.001) or raise --memory-limit", "_"),
]


@pytest.mark.parametrize("argv, says, not_says", _MESSAGES, ids=lambda v: " ".join(v) if isinstance(v, list) else "")
def test_listed_messages_name_the_flag_and_its_range(argv, says, not_says, histories, capsys):
    argv = [a.format(**histories) for a in argv]
    code = cli.main(argv)
    out, err = capsys.readouterr()
    assert code == 2 and out == "", (argv, out)
    assert len(err.strip().splitlines()) == 1, err
    assert says.format(**histories) in err, err
    assert not_says.format(**histories) not in err.split(": error: ", 1)[-1], err


def test_the_gpope_table_at_a_small_delta_answers(capsys):
    # a legitimate request (it met an overflow refusal): the PLD prices it
    code = cli.main(["table", "--setting", "gpope", "--delta", "1e-10", "--epsilons", "1"])
    out, err = capsys.readouterr()
    assert code == 0 and err == "", err
    row = next(line for line in out.splitlines() if line.lstrip().startswith("1 "))
    assert "PLD" in row


# --- warnings only from the accountant that answered, advice naming a flag that exists ----


class _Report:
    def __init__(self, accountant):
        self.accountant = accountant


@pytest.mark.parametrize("answered, shown", [("pld", False), ("exact", False), ("rdp", True)])
def test_rdp_grid_edge_warning_only_when_rdp_answered(answered, shown, recwarn):
    from privcal.analysis import rdp

    def priced():
        warnings.warn("the optimal order for epsilon is the smallest order of the grid (1.01); extend it",
                      rdp.GridEdgeWarning)
        warnings.warn("sampling='without_replacement' prices replace-one neighbours", UserWarning)
        return _Report(answered)

    assert cli.answered(priced).accountant == answered
    said = [str(w.message) for w in recwarn]
    assert "sampling='without_replacement' prices replace-one neighbours" in said  # other warnings pass
    assert not any("extend it" in m for m in said)  # RDP's own advice names no flag: never shown as is
    edge = [m for m in said if "order grid" in m]
    assert edge == (["rdp answered with its optimal order at the edge of its order grid: a valid upper bound "
                     "that may be loose (--accountant pld gives a certified bracket)"] if shown else []), said


def test_warnings_name_flags_not_the_library_arguments(capsys):
    cli.show_warning("sampling='without_replacement' prices replace-one neighbours: pass "
                      "neighbouring='replace_one' to state it", UserWarning, "x.py", 1)
    assert capsys.readouterr().err == ("privcal: warning: --sampling without_replacement prices replace-one "
                                       "neighbours: pass --neighbouring replace_one to state it\n")


def test_a_table_shows_no_warning_of_a_bound_that_did_not_answer():
    # epsilon 1e6: RDP's column has its optimum at the grid's edge, but the lead (end-to-end valid) answers.
    # In a process of its own: pytest records warnings in-process, where the CLI leaves them to it
    out, err = _run(["table", "--epsilons", "1e6"]).communicate(timeout=_TIMEOUT)
    assert "end-to-end valid" in out and err == "", err


def test_numpy_messages_never_reach_the_user():
    # the PLD's search meets "overflow encountered in exp" on its way (a RuntimeWarning of numpy): not news
    out, err = _run(["calibrate", "--epsilon", "1e5", "--delta", "1e-5", "--accountant", "pld"]).communicate(
        timeout=_TIMEOUT)
    assert out.startswith("sigma = ") and err == "", err


# --- every ignored flag is refused; one parsing rule; usage on stderr -------------

_IGNORED = [  # argv, the flag named in the one-line refusal
    (["train", "dpq", "--variant", "paper", "--update-clip", "0.1", "--epsilon", "1", "--delta", "1e-4"],
     "--update-clip applies only to --variant valid"),
    (["train", "dpq", "--method", "non-private", "--variant", "paper"], "takes no --variant"),
    (["train", "dpq", "--method", "dp-sgd", "--variant", "paper", "--sigma", "1"], "--variant paper chooses"),
    (["train", "pucb", "--non-private", "--error-bound", "paper"], "--error-bound and --budget-split"),
    (["train", "pucb", "--non-private", "--budget-split", "paper"], "--error-bound and --budget-split"),
    (["train", "gpope", "--non-private", "--bound", "paper"], "--delta and --bound"),
    (["train", "gpope", "--non-private", "--delta", "1e-5"], "--delta and --bound"),
    (["table", "--epsilons", ""], "argument --epsilons: expected one or more comma-separated values"),
    (["table", "--epsilons", ","], "argument --epsilons: expected one or more comma-separated values"),
    (["epsilon", "--history", "{sampling}", "--delta", "1e-5"], "release[0] sets sampling but no sample_rate"),
    (["epsilon", "--history", "{neighbouring}", "--delta", "1e-5"], "release[0] sets neighbouring but no"),
    (["epsilon", "--sigma", "1", "--delta", "1e-5", "--accountant", "rdp", "--memory-limit", "5"],
     "--memory-limit applies only to --accountant pld and best"),
    (["calibrate", "--epsilon", "1", "--delta", "1e-5", "--accountant", "exact", "--pld-accuracy", "0.1"],
     "--pld-accuracy applies only to --accountant pld and best"),
    (["plot", "profile", "--sigma", "3", "--delta", "1e-5", "--out", "x.png"], "--delta is not used by privcal plot"),
    (["verify", "--list", "--seed", "3"], "--list takes no"),
    (["verify", "--list", "--json"], "--list takes no"),
]


@pytest.mark.parametrize("argv, says", _IGNORED, ids=lambda v: " ".join(v) if isinstance(v, list) else "")
def test_every_ignored_flag_is_refused(argv, says, tmp_path, capsys):
    files = {}
    for key in ("sampling", "neighbouring"):
        path = tmp_path / f"{key}.json"
        path.write_text(f'[{{"sigma": 1.0, "steps": 10, "{key}": "{"poisson" if key == "sampling" else "add_remove"}"}}]')
        files[key] = str(path)
    code = cli.main([a.format(**files) for a in argv])
    out, err = capsys.readouterr()
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1, err
    assert says in err, err


@pytest.mark.parametrize("flag", [["table", "--batch-size", "1e9"], ["train", "pucb", "--states", "1e6"],
                                  ["table", "--samples", "1e4"], ["train", "gpope", "--eval-trajectories", "2e3"],
                                  ["train", "dpq", "--resets", "1e1"], ["verify", "--seed", "1e3"],
                                  ["frontier", "dpq", "--seeds", "0,1e1"], ["plot", "profile", "--steps", "1e2"]])
def test_counts_accept_float_notation_everywhere(flag):
    # 1e6 is a count wherever an integer count is (it was refused by --batch-size and --states)
    args = cli.build_parser().parse_args([*flag, *(["--out", "x.png"] if flag[0] == "plot" else [])])
    value = getattr(args, flag[-2].lstrip("-").replace("-", "_"))
    assert value == [0, 10] if flag[-2] == "--seeds" else value == int(float(flag[-1]))


@pytest.mark.parametrize("argv", [["table", "--setting", "gaussian", "--steps", "1e300"],  # was a traceback
                                  ["plot", "epsilon-vs-steps", "--sigma", "1", "--out", "x.png", "--steps", "1e16"],
                                  ["table", "--batch-size", "2.5"], ["train", "pucb", "--states", "0"],
                                  ["train", "gpope", "--q-episodes", "1.5"], ["calibrate", "--epsilon", "1",
                                  "--delta", "1e-5", "--steps", "-3"], ["frontier", "dpq", "--amounts", "0"],
                                  ["train", "dpq", "--seed", "0.5"]])
def test_non_integer_counts_are_refused_with_the_one_message_of_their_rule(argv, capsys):
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    low = "0" if "seed" in argv[-2] else "1"
    assert f": must be a whole number in [{low}, 1e15] (1e4 notation accepted), got '{argv[-1]}'" in err, err


@pytest.mark.parametrize("argv", [["train", "dpq", "--sigma", "1", "--gamma", g] for g in ("1", "2", "-0.5", "nan")])
def test_gamma_range_is_said_one_way(argv, capsys):
    assert cli.main(argv) == 2
    assert f"--gamma must be in [0, 1), got" in capsys.readouterr().err


def test_no_command_prints_usage_on_stderr_and_exits_2(capsys):
    assert cli.main([]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.startswith("usage: privcal")
