"""The one seeding helper: every random stream in privcal comes from here.

A *seed* is ``None`` (fresh entropy), a non-negative int, a sequence of non-negative ints (as numpy
takes them: ``[seed, key]`` gives a stream keyed by ``key``), a ``numpy.random.SeedSequence`` or a
``numpy.random.Generator`` (used as is, so a caller can thread one stream through several calls).
"""

from __future__ import annotations

import numbers
from collections.abc import Sequence
from typing import Union

import numpy as np

__all__ = ["Seed", "as_generator", "spawn"]

#: What privcal accepts wherever it takes a ``seed``.
Seed = Union[None, int, Sequence[int], np.random.SeedSequence, np.random.Generator]


def as_generator(seed: Seed, name: str = "seed") -> np.random.Generator:
    """A numpy ``Generator`` from a seed (a Generator is returned as is).

    Args:
        seed: None, a non-negative int, a non-empty sequence of non-negative ints, a SeedSequence or
            a Generator.
        name: the argument's name in the caller, for the error message.

    Raises:
        ValueError: ``seed`` is none of the accepted kinds (e.g. a negative int or a bool).
    """
    if isinstance(seed, np.random.Generator):
        return seed
    if seed is None or isinstance(seed, np.random.SeedSequence):
        return np.random.default_rng(seed)
    if _nonnegative_int(seed):
        return np.random.default_rng(int(seed))
    if isinstance(seed, (list, tuple)) and seed and all(_nonnegative_int(k) for k in seed):
        return np.random.default_rng([int(k) for k in seed])
    raise ValueError(
        f"{name} must be None, a non-negative int, a sequence of them, a SeedSequence or a numpy Generator, "
        f"got {seed!r}"
    )


def _nonnegative_int(value) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, bool) and int(value) >= 0


def spawn(seed: Seed, n: int, name: str = "seed") -> list[np.random.Generator]:
    """``n`` statistically independent child generators of ``seed``.

    Args:
        seed: as in :func:`as_generator`; the same int seed always gives the same children.
        n: number of children, >= 0.
        name: the argument's name in the caller, for the error message.
    """
    rng = as_generator(seed, name)
    if hasattr(rng, "spawn"):  # numpy >= 1.25
        return rng.spawn(n)
    return [np.random.default_rng(rng.integers(0, 2**63, size=4)) for _ in range(n)]
