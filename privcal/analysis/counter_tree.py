r"""Tree geometry of the binary mechanism for continual counting: levels, p-sums per round and their histogram.

The dyadic p-sums of Chan, Shi & Song 2011 (Alg. 2, Sec. 3.4): a stream of T rounds has L = T.bit_length()
levels, the release at round t adds popcount(t) noisy p-sums, and :func:`popcount_histogram` counts the
rounds by that number. The Laplace and Gaussian error bounds (:mod:`privcal.analysis.counter_bounds`,
:mod:`privcal.analysis.counter_gaussian_bounds`) are built on these counts; ``privcal.analysis.counter_bounds``
re-exports every public name of this module.

``*_unchecked`` functions are the trusted kernels of their checked namesakes: they skip validation and
are for callers that have validated their arguments already.
"""

from __future__ import annotations

import math
from typing import Union

import numpy as np
from numpy.typing import ArrayLike

from privcal import _validate as V

__all__ = [
    "num_levels",
    "psums_used",
    "popcount_histogram",
    "num_levels_unchecked",
    "psums_used_unchecked",
    "popcount_histogram_unchecked",
]


def num_levels(steps: int) -> int:
    """Number of tree levels of the binary mechanism for a stream of ``steps`` rounds.

    L = floor(log2 T) + 1 = T.bit_length(): levels 0..floor(log2 T) hold the dyadic p-sums that fit
    in [1, T]; every round lies in at most one p-sum per level (Chan, Shi & Song 2011, Sec. 3.4).

    Args:
        steps: stream length T (number of rounds), an integer >= 1.

    Returns:
        L, an integer >= 1.

    Raises:
        ValueError: ``steps`` is not a positive integer.
    """
    return _num_levels(V.positive_int("steps", steps))


def _num_levels(steps: int) -> int:
    return steps.bit_length()


def psums_used(t: ArrayLike) -> Union[int, np.ndarray]:
    """Number of noisy p-sums added up in the release at round ``t`` (t >= 1): popcount(t).

    Works elementwise on integer arrays. Source: the binary decomposition of t (CSS11 Alg. 2).

    Args:
        t: round index, an integer >= 1, or an array of them (integral floats are accepted).

    Returns:
        popcount(t): an int for a scalar ``t``, else an int64 array of the shape of ``t``.

    Raises:
        ValueError: ``t`` holds a value that is not an integer >= 1.
    """
    arr = np.asarray(t)
    if arr.dtype.kind == "b" or arr.dtype.kind not in "iuf":
        raise ValueError(f"t must be an integer >= 1, got {t!r}")
    if arr.dtype.kind == "f" and not np.all(np.isfinite(arr) & (np.mod(arr, 1) == 0)):
        raise ValueError(f"t must be an integer >= 1, got {t!r}")
    arr = arr.astype(np.int64)
    if np.any(arr < 1):
        raise ValueError(f"t must be an integer >= 1, got {t!r}")
    return _psums_used(arr)


def _psums_used(arr: np.ndarray) -> Union[int, np.ndarray]:
    """popcount of an int64 array (or 0-d array) of rounds >= 1."""
    counts = np.zeros(arr.shape, dtype=np.int64)
    work = arr.copy()
    while np.any(work):
        counts += work & 1
        work >>= 1
    return counts if counts.ndim else int(counts)


def popcount_histogram(steps: int) -> np.ndarray:
    """Number of rounds t in 1..T whose release uses exactly k p-sums, for k = 0..L (index k).

    N_k = #{1 <= t <= T : popcount(t) = k}, counted digit by digit over the binary expansion of
    T + 1 in O(log^2 T) operations (exact integers, returned as float64).

    Args:
        steps: stream length T, an integer >= 1.

    Returns:
        Array of L + 1 counts (float64), index k = number of p-sums.

    Raises:
        ValueError: ``steps`` is not a positive integer.
    """
    return _popcount_histogram(V.positive_int("steps", steps))


def _popcount_histogram(steps: int) -> np.ndarray:
    n = steps + 1  # count t in [0, n), then drop t = 0
    levels = n.bit_length()
    counts = [0] * (levels + 1)
    ones_above = 0
    for j in range(levels - 1, -1, -1):
        if (n >> j) & 1:
            # t equals n above bit j, has 0 at bit j and any j low bits
            for low in range(j + 1):
                counts[ones_above + low] += math.comb(j, low)
            ones_above += 1
    counts[0] -= 1  # t = 0
    return np.array(counts[: _num_levels(steps) + 1], dtype=float)


def num_levels_unchecked(steps: int) -> int:
    """:func:`num_levels` without validation (trusted kernel).

    Args:
        steps: stream length T, a Python int >= 1 (not checked).

    Returns:
        L = T.bit_length().
    """
    return _num_levels(steps)


def psums_used_unchecked(t: np.ndarray) -> Union[int, np.ndarray]:
    """:func:`psums_used` without validation (trusted kernel): popcount of int64 rounds.

    Args:
        t: an int64 array (or 0-d array) of rounds >= 0 (not checked; round 0 uses 0 p-sums).

    Returns:
        popcount(t): an int for a 0-d array, else an int64 array of the shape of ``t``.
    """
    return _psums_used(t)


def popcount_histogram_unchecked(steps: int) -> np.ndarray:
    """:func:`popcount_histogram` without validation (trusted kernel).

    Args:
        steps: stream length T, a Python int >= 1 (not checked).

    Returns:
        Array of L + 1 counts (float64), index k = number of p-sums.
    """
    return _popcount_histogram(steps)
