"""Progress of long runs of the command line, on stderr: a bar where the work can be counted
(:class:`ProgressBar`), a line with the elapsed time where it cannot (:class:`Working`). Dependency-free.

On a terminal it is one line redrawn in place (a carriage return, at most every ``min_interval`` seconds).
Anywhere else (a pipe, a log file, a test's capture) carriage returns would garble the text, so it writes
whole lines instead, at most one every :data:`LOG_INTERVAL` seconds, plus one when the work completes.
"""

from __future__ import annotations

import sys
import threading
import time
from typing import Optional, TextIO

__all__ = ["ProgressBar", "Working", "LOG_INTERVAL", "on_terminal"]

#: Seconds between two progress lines when the stream is not a terminal.
LOG_INTERVAL = 10.0


def on_terminal(stream: TextIO) -> bool:
    """Whether ``stream`` is a terminal (a stream without ``isatty`` is not).

    Args:
        stream: a text stream.
    """
    isatty = getattr(stream, "isatty", None)
    try:
        return bool(isatty()) if isatty is not None else False
    except ValueError:  # a closed stream
        return False


class ProgressBar:
    """A progress bar on a stream (stderr by default): redrawn in place on a terminal, whole lines elsewhere.

    Call it as ``bar(done, total=None)``; :meth:`close` ends the line.

    Args:
        total: the amount of work (at least 1 is used).
        stream: where to draw; default None (``sys.stderr``).
        width: characters of the bar; default 30.
        label: text before the bar; default "pucb".
        min_interval: seconds between redraws on a terminal (the last one is always drawn); default 0.1.
    """

    def __init__(self, total: int, stream: Optional[TextIO] = None, width: int = 30, label: str = "pucb",
                 min_interval: float = 0.1):
        self.total = max(int(total), 1)
        self.stream = sys.stderr if stream is None else stream
        self.width = width
        self.label = label
        self.tty = on_terminal(self.stream)
        self.min_interval = min_interval if self.tty else max(min_interval, LOG_INTERVAL)
        self._start = time.perf_counter()
        self._last = time.perf_counter() if not self.tty else -float("inf")  # no line at the very start of a log
        self._open = False  # a terminal line drawn and not yet ended
        self._completed = False

    def __call__(self, done: int, total: int | None = None) -> None:
        if total is not None:
            self.total = max(int(total), 1)
        now = time.perf_counter()
        complete = done >= self.total
        if not complete and now - self._last < self.min_interval:
            return
        if complete and self._completed and not self.tty:
            return  # one completion line in a log
        self._last = now
        self._completed = complete
        frac = min(max(done / self.total, 0.0), 1.0)
        filled = int(round(frac * self.width))
        elapsed = now - self._start
        eta = f"{elapsed * (1 - frac) / frac:5.1f}s" if frac > 0 else "    ?"
        line = f"{self.label} [{'#' * filled}{'.' * (self.width - filled)}] {done}/{self.total} {elapsed:5.1f}s eta {eta}"
        self._open = _write_line(self.stream, self.tty, line) or self._open

    def close(self) -> None:
        """End the line (on a terminal, when one was drawn)."""
        if self._open:
            self.stream.write("\n")
            self.stream.flush()
            self._open = False


class Working:
    """A line saying what is being done and for how long, for work whose progress cannot be counted (pricing a
    long history, a table, an evaluation): a context manager; nothing is drawn for work shorter than ``after``
    seconds.

    On a terminal the line is redrawn in place every ``interval`` seconds and erased at the end. Elsewhere (a
    pipe, a log) nothing is drawn: the elapsed time alone is no news in a log, and a refusal or an answer
    stays the only text of a run.

    Args:
        label: what is being done, e.g. "pricing 10000 release groups".
        stream: where to draw; default None (``sys.stderr``).
        after: seconds of work before the first line; default 2.
        interval: seconds between redraws on a terminal; default 0.5.
    """

    def __init__(self, label: str, stream: Optional[TextIO] = None, after: float = 2.0, interval: float = 0.5):
        self.label = label
        self.stream = sys.stderr if stream is None else stream
        self.tty = on_terminal(self.stream)
        self.after = after
        self.interval = interval
        self._start = time.perf_counter()
        self._stop = threading.Event()
        self._thread: Optional[threading.Thread] = None
        self._open = False

    def draw(self) -> None:
        """Write the line once (the thread calls it on a terminal; called elsewhere, a whole line)."""
        line = f"{self.label} ... {time.perf_counter() - self._start:.0f}s"
        self._open = _write_line(self.stream, self.tty, line) or self._open

    def _run(self) -> None:
        if self._stop.wait(self.after):
            return
        while True:
            self.draw()
            if self._stop.wait(self.interval):
                return

    def __enter__(self) -> "Working":
        self._start = time.perf_counter()
        if not self.tty:
            return self
        self._thread = threading.Thread(target=self._run, name="privcal-progress", daemon=True)
        self._thread.start()
        return self

    def close(self) -> None:
        """Stop drawing; on a terminal, erase the line."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        if self._open:
            self.stream.write("\r\033[K")
            self.stream.flush()
            self._open = False

    def __exit__(self, *exc: object) -> None:
        self.close()


def _write_line(stream, tty: bool, line: str) -> bool:
    """Redraw ``line`` in place on a terminal (True: a line is open), else write it whole (False)."""
    if tty:
        stream.write("\r" + line)
    else:
        stream.write(line + "\n")
    stream.flush()
    return tty
