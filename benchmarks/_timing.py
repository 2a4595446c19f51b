"""Wall-clock helpers shared by the benchmark scripts (run as `python benchmarks/<script>.py`)."""

from __future__ import annotations

import statistics
import time


def _runs(fn, repeat: int):
    times, value = [], None
    for _ in range(max(1, int(repeat))):
        start = time.perf_counter()
        value = fn()
        times.append(time.perf_counter() - start)
    return times, value


def best_of(fn, repeat: int = 1) -> tuple[float, object]:
    """(smallest wall time in seconds over ``repeat`` calls, the last return value)."""
    times, value = _runs(fn, repeat)
    return min(times), value


def median_of(fn, repeat: int = 1) -> tuple[float, object]:
    """(median wall time in seconds over ``repeat`` calls, the last return value)."""
    times, value = _runs(fn, repeat)
    return statistics.median(times), value
