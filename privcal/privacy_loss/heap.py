"""The C heap's policy for the PLD's large temporary arrays (glibc only; docs/pld.md Sec. 2.8, "Heap").

A PLD bracket allocates and frees arrays of 0.1-30 MB many times (the FFT's grids and spectra, the window's
suffix sums, the PMFs' cells). glibc serves a block above its mmap threshold (128 KiB at start) from a fresh
mapping and returns the heap's free top to the system above its trim threshold; either way the next array of
that size is a fresh mapping whose every page faults on its first write. Its dynamic rule raises the mmap
threshold to the size of each mapped block freed (at most 32 MiB on 64-bit systems) and the trim threshold to
twice that, but only once a large enough block has been freed: measured in a fresh process, q = 1e-3, sigma = 1.1,
1e5 steps, delta = 1e-15 faults on ~5,000 pages per call, call after call (~8 ms of 30), T = 1e7 steps on ~1,500 (~3
ms of 14).

:func:`tune_heap` sets the state that rule ends in after a 32 MiB block is freed -- mmap threshold 32 MiB (glibc's
``DEFAULT_MMAP_THRESHOLD_MAX``), trim threshold 64 MiB -- once, at the first :class:`~privcal.privacy_loss.PLD`:
the same calls then fault on no page (30 -> 21 ms and 14 -> 11 ms above; the 10,000-group noise schedule keeps its
peak resident memory, 325 MB = 310 MiB either way). What it costs: up to 64 MiB of freed heap stay with the
process instead of going back to the system, and blocks under 32 MiB come from the heap. It is process-wide
(mallopt(3)); set the environment variable ``PRIVCAL_HEAP=default`` before the first PLD to leave the C library's
policy alone. Nothing happens on another C library (musl, macOS, Windows). The numbers privcal reports do not depend
on it."""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import platform

__all__ = ["ENV", "MMAP_THRESHOLD", "TRIM_THRESHOLD", "heap_policy", "tune_heap"]

#: the environment variable read by :func:`tune_heap`: "tuned" (the default) or "default"
ENV = "PRIVCAL_HEAP"
#: glibc's DEFAULT_MMAP_THRESHOLD_MAX on 64-bit systems: the largest value its dynamic rule gives the threshold
MMAP_THRESHOLD = 32 * 2**20
#: twice the mmap threshold, as glibc's dynamic rule sets it
TRIM_THRESHOLD = 2 * MMAP_THRESHOLD
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3  # <malloc.h>
_VALUES = ("tuned", "default")
_state: list = []  # the policy once decided: [str]


def _requested() -> str:
    value = os.environ.get(ENV, "tuned").strip().lower() or "tuned"
    if value not in _VALUES:
        raise ValueError(f"{ENV} must be one of {', '.join(_VALUES)}, got {os.environ.get(ENV)!r}")
    return value


def tune_heap() -> str:
    """Set glibc's heap thresholds once (module doc) unless ``PRIVCAL_HEAP=default``; returns :func:`heap_policy`.
    Raises ValueError for another value of ``PRIVCAL_HEAP``."""
    if _state:
        return _state[0]
    if _requested() == "default":
        _state.append("default (PRIVCAL_HEAP=default)")
        return _state[0]
    if platform.system() != "Linux" or platform.libc_ver()[0] != "glibc":
        _state.append("default (not glibc)")
        return _state[0]
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        ok = (libc.mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD) == 1
              and libc.mallopt(_M_TRIM_THRESHOLD, TRIM_THRESHOLD) == 1)
    except (OSError, AttributeError):
        ok = False
    _state.append(f"tuned (mmap threshold {MMAP_THRESHOLD >> 20} MiB, trim threshold {TRIM_THRESHOLD >> 20} MiB)"
                  if ok else "default (mallopt refused)")
    return _state[0]


def heap_policy() -> str:
    """What :func:`tune_heap` did in this process ("not yet" before the first PLD)."""
    return _state[0] if _state else "not yet"
