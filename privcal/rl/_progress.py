"""A dependency-free one-line progress bar for long runs (stderr; silent when the caller passes None)."""

from __future__ import annotations

import sys
import time
from typing import Optional, TextIO

__all__ = ["ProgressBar"]


class ProgressBar:
    """A one-line text progress bar on a stream (stderr by default), redrawn at most every 0.1 s.

    Call it as ``bar(done, total=None)``; :meth:`close` ends the line.

    Args:
        total: the amount of work (at least 1 is used).
        stream: where to draw; default None (``sys.stderr``).
        width: characters of the bar; default 30.
        label: text before the bar; default "pucb".
        min_interval: seconds between redraws (the last one is always drawn); default 0.1.
    """

    def __init__(self, total: int, stream: Optional[TextIO] = None, width: int = 30, label: str = "pucb",
                 min_interval: float = 0.1):
        self.total = max(int(total), 1)
        self.stream = sys.stderr if stream is None else stream
        self.width = width
        self.label = label
        self.min_interval = min_interval
        self._start = time.perf_counter()
        self._last = -float("inf")

    def __call__(self, done: int, total: int | None = None) -> None:
        if total is not None:
            self.total = max(int(total), 1)
        now = time.perf_counter()
        if done < self.total and now - self._last < self.min_interval:
            return
        self._last = now
        frac = min(max(done / self.total, 0.0), 1.0)
        filled = int(round(frac * self.width))
        elapsed = now - self._start
        eta = f"{elapsed * (1 - frac) / frac:5.1f}s" if frac > 0 else "    ?"
        self.stream.write(f"\r{self.label} [{'#' * filled}{'.' * (self.width - filled)}] "
                          f"{done}/{self.total} {elapsed:5.1f}s eta {eta}")
        self.stream.flush()

    def close(self) -> None:
        """End the line."""
        self.stream.write("\n")
        self.stream.flush()
