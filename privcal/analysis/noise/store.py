"""A sorted store of (point, value) pairs: chunked arrays with O(log n) lookup and insertion.

Storage is a sorted list of chunks (``array('d')`` of at most 2 * ``LOAD`` doubles each, 16 bytes
per point) with a list of chunk maxima: locating a point costs two bisections (O(log n)) and an
insertion a memmove inside one chunk (O(``LOAD``)), so the cost per point stays flat from 10^3 to
10^6 points (benchmarks/bench_noise.py); memory is O(n). A flat copy of the whole store (two
float64 arrays, 16 bytes per point) is built on demand for vectorised lookups and kept until the
next insertion.

The store knows nothing about random processes: ``privcal.analysis.noise.ou`` keeps a path's sampled values
in it and decides what to draw.
"""

from __future__ import annotations

import bisect
from array import array
from typing import Optional

import numpy as np

__all__ = ["LOAD", "SortedStore"]

#: Target chunk length; a chunk is split in two when it grows beyond 2 * LOAD points.
LOAD = 512


class SortedStore:
    """Distinct float points, kept sorted, each with one float value.

    Built empty; :meth:`locate` finds a point or its neighbours, :meth:`insert` adds a point at
    the place :meth:`locate` found, :meth:`flat` returns all pairs as two sorted arrays and
    :meth:`rebuild` replaces the content by such arrays.
    """

    def __init__(self) -> None:
        self.clear()

    def clear(self) -> None:
        """Remove every point."""
        self._xs: list[array] = []
        self._fs: list[array] = []
        self._maxes: list[float] = []
        self._n = 0
        self._flat_cache: Optional[tuple[np.ndarray, np.ndarray]] = None

    def __len__(self) -> int:
        return self._n

    @property
    def nbytes(self) -> int:
        """Bytes held by the stored points and values (16 per point, plus chunk bookkeeping)."""
        data = sum(a.buffer_info()[1] for a in self._xs) * 16
        return data + 8 * len(self._maxes)

    def flat(self) -> tuple[np.ndarray, np.ndarray]:
        """(points, values) as two sorted float64 arrays (cached; do not modify them).

        Returns:
            (X, F), each of length ``len(self)``.
        """
        if self._flat_cache is None:
            if self._n:
                X = np.concatenate([np.frombuffer(a, dtype=float) for a in self._xs])
                F = np.concatenate([np.frombuffer(a, dtype=float) for a in self._fs])
            else:
                X = F = np.empty(0)
            self._flat_cache = (X, F)
        return self._flat_cache

    def rebuild(self, points: np.ndarray, values: np.ndarray) -> None:
        """Replace the content by sorted distinct ``points`` and their ``values``, cut into chunks.

        Args:
            points: strictly increasing float64 array (trusted: not checked).
            values: float64 array of the same length.
        """
        self._xs, self._fs, self._maxes = [], [], []
        for i in range(0, points.size, LOAD):
            xa, fa = array("d"), array("d")
            xa.frombytes(memoryview(np.ascontiguousarray(points[i:i + LOAD])).cast("B"))
            fa.frombytes(memoryview(np.ascontiguousarray(values[i:i + LOAD])).cast("B"))
            self._xs.append(xa)
            self._fs.append(fa)
            self._maxes.append(xa[-1])
        self._n = int(points.size)
        self._flat_cache = (points, values)

    def locate(self, x: float) -> tuple:
        """Where ``x`` is, or would be inserted, and its stored neighbours (O(log n)).

        Args:
            x: a float point.

        Returns:
            ``(where, value, left, right)``: ``value`` is the stored value if ``x`` is stored
            (then the other entries are None), else None; ``where`` is the insertion place to pass
            to :meth:`insert`; ``left`` / ``right`` are the (point, value) pairs of the nearest
            stored points below / above ``x``, or None where there is none.
        """
        maxes = self._maxes
        if not maxes:
            return None, None, None, None
        ci = bisect.bisect_left(maxes, x)
        last = len(maxes) - 1
        if ci > last:
            ci = last
            xs, fs = self._xs[ci], self._fs[ci]
            j = len(xs)
        else:
            xs, fs = self._xs[ci], self._fs[ci]
            j = bisect.bisect_left(xs, x)
            if xs[j] == x:
                return None, fs[j], None, None
        if j > 0:
            left = (xs[j - 1], fs[j - 1])
        elif ci > 0:
            left = (self._xs[ci - 1][-1], self._fs[ci - 1][-1])
        else:
            left = None
        right = (xs[j], fs[j]) if j < len(xs) else None  # None: beyond the largest point
        return (ci, j), None, left, right

    def insert(self, where: Optional[tuple[int, int]], x: float, value: float) -> None:
        """Insert the new point ``x`` with ``value`` at the place :meth:`locate` returned.

        Args:
            where: the first entry of :meth:`locate`'s answer for ``x`` (None if the store is
                empty); the store must not have changed in between.
            x: the point (not stored yet).
            value: its value.
        """
        if where is None:
            self._xs, self._fs, self._maxes = [array("d", [x])], [array("d", [value])], [x]
            self._n, self._flat_cache = 1, None
            return
        ci, j = where
        xs, fs, maxes = self._xs[ci], self._fs[ci], self._maxes
        xs.insert(j, x)
        fs.insert(j, value)
        if x > maxes[ci]:
            maxes[ci] = x
        if len(xs) > 2 * LOAD:
            self._xs.insert(ci + 1, xs[LOAD:])
            self._fs.insert(ci + 1, fs[LOAD:])
            del xs[LOAD:]
            del fs[LOAD:]
            maxes[ci] = xs[-1]
            maxes.insert(ci + 1, self._xs[ci + 1][-1])
        self._n += 1
        self._flat_cache = None
