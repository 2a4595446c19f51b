"""Progress of long work: a bar where the work can be counted, a line with the elapsed time
where it cannot, both on stderr, carriage returns only on a terminal. No test waits on the clock: lines are
drawn by calling the objects, and the one thread test waits for a line under a hang cap."""

from __future__ import annotations

import io
import threading

import pytest

from privcal import cli
from privcal.cli import pricing
from privcal.cli import progress as P

_HANG_CAP = 600.0  # seconds: a hang cap, not a performance target


class _Terminal(io.StringIO):
    def __init__(self, tty: bool):
        super().__init__()
        self.tty = tty
        self.wrote = threading.Event()

    def isatty(self) -> bool:
        return self.tty

    def write(self, text: str) -> int:
        self.wrote.set()
        return super().write(text)


def test_the_bar_redraws_in_place_on_a_terminal():
    stream = _Terminal(tty=True)
    bar = P.ProgressBar(4, stream=stream, label="run", min_interval=0.0)
    for done in range(5):
        bar(done)
    bar.close()
    text = stream.getvalue()
    assert text.count("\r") == 5 and text.count("\n") == 1 and text.endswith("\n")  # one line, ended once
    assert " 4/4 " in text.split("\r")[-1]


def test_the_bar_writes_whole_lines_elsewhere_without_carriage_returns():
    stream = _Terminal(tty=False)
    bar = P.ProgressBar(4, stream=stream, label="run", min_interval=0.0)
    for done in range(5):
        bar(done)
    bar(4)  # the completion is said once
    bar.close()
    lines = stream.getvalue().splitlines()
    assert "\r" not in stream.getvalue()
    # the first redraw waits LOG_INTERVAL seconds: a short run writes only its completion line
    assert len(lines) == 1 and lines[0].startswith("run [######") and " 4/4 " in lines[0]


def test_a_bar_that_drew_nothing_writes_nothing():
    # train dpq refused its input after the bar was made: no blank line before the error
    stream = _Terminal(tty=False)
    P.ProgressBar(10, stream=stream).close()
    tty = _Terminal(tty=True)
    P.ProgressBar(10, stream=tty).close()
    assert stream.getvalue() == "" and tty.getvalue() == ""


@pytest.mark.parametrize("tty", [True, False])
def test_the_working_line(tty):
    stream = _Terminal(tty=tty)
    work = P.Working("privcal: pricing 10000 release groups (best)", stream=stream)
    work.draw()
    work.close()
    text = stream.getvalue()
    if tty:  # drawn in place, then erased: the answer is not printed after a stale line
        assert text.startswith("\rprivcal: pricing 10000 release groups (best) ... ") and text.endswith("\r\033[K")
    else:
        assert "\r" not in text and text.startswith("privcal: pricing 10000 release groups (best) ... ")
        assert text.endswith("s\n")


def test_the_working_line_is_drawn_by_its_thread_once_the_work_outlasts_after():
    stream = _Terminal(tty=True)
    with P.Working("work", stream=stream, after=0.0, interval=60.0):
        assert stream.wrote.wait(_HANG_CAP)  # the thread drew the line (no sleep: wait for the write)
    assert stream.getvalue().startswith("\rwork ... ") and stream.getvalue().endswith("\r\033[K")


def test_the_working_line_is_not_drawn_in_a_log():
    stream = _Terminal(tty=False)
    with P.Working("work", stream=stream, after=0.0) as work:
        assert work._thread is None  # no thread: a pipe or a log gets no elapsed-time lines
    assert stream.getvalue() == ""


def test_nothing_is_drawn_for_short_work():
    stream = _Terminal(tty=True)
    with P.Working("work", stream=stream, after=_HANG_CAP):
        pass
    assert stream.getvalue() == ""


class _Recorder:
    labels: list = []

    def __init__(self, label, *a, **k):
        self.labels.append(label)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return None


@pytest.fixture
def working(monkeypatch):
    _Recorder.labels = []
    monkeypatch.setattr(pricing, "Working", _Recorder)  # the pricing commands draw the working line
    return _Recorder.labels


def test_history_table_and_calibration_show_the_working_line(working, tmp_path, capsys):
    history = tmp_path / "h.json"
    history.write_text('[{"sigma": 1.0, "steps": 10}, {"sigma": 2.0, "steps": 5}]')
    assert cli.main(["epsilon", "--history", str(history), "--delta", "1e-5"]) == 0
    assert cli.main(["calibrate", "--epsilon", "1", "--delta", "1e-5", "--history", str(history)]) == 0
    assert cli.main(["table", "--setting", "gaussian", "--epsilons", "1"]) == 0
    assert cli.main(["epsilon", "--sigma", "1", "--delta", "1e-5", "--json"]) == 0  # machine-read: quiet
    assert working == ["privcal: pricing 2 release groups (best)", "privcal: calibrating 2 release groups (best)",
                       "privcal: table gaussian"]


def test_train_gpope_shows_the_working_line_after_its_bar(monkeypatch, capsys):
    labels = []

    class Recorder(_Recorder):
        def __init__(self, label, *a, **k):
            labels.append(label)

    monkeypatch.setattr(P, "Working", Recorder)
    assert cli.main(["train", "gpope", "--epsilon", "1", "--trajectories", "30", "--eval-trajectories", "30"]) == 0
    assert labels == ["gpope: references and evaluation"]
