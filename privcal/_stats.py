"""Exact binomial confidence bounds (Clopper & Pearson 1934), shared by the Monte Carlo checks."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike
from scipy import special, stats

from . import _validate as V

__all__ = [
    "clopper_pearson_lower",
    "clopper_pearson_upper",
    "clopper_pearson",
    "clopper_pearson_lower_array",
    "clopper_pearson_upper_array",
]


def _counts(successes, trials) -> tuple[int, int]:
    """(successes, trials) as ints with 0 <= successes <= trials, trials >= 1."""
    n = V.positive_int("trials", trials)
    k = int(successes)
    if not 0 <= k <= n:
        raise ValueError(f"successes must be in [0, {n}], got {successes!r}")
    return k, n


def _clopper_pearson_lower(k: int, n: int, a: float) -> float:
    return 0.0 if k == 0 else float(stats.beta.ppf(a, k, n - k + 1))


def _clopper_pearson_upper(k: int, n: int, a: float) -> float:
    return 1.0 if k == n else float(stats.beta.isf(a, k + 1, n - k))


def clopper_pearson_lower(successes: int, trials: int, alpha: float) -> float:
    """One-sided Clopper-Pearson lower confidence bound (level 1 - alpha) of a binomial proportion.

    lower = Beta quantile alpha of Beta(k, n - k + 1); 0 when k = 0 (Clopper & Pearson 1934).

    Args:
        successes: number of successes k, an integer in [0, trials].
        trials: number of trials n, an integer >= 1.
        alpha: error probability of the one-sided bound, in (0, 1).

    Returns:
        The lower bound, in [0, 1].

    Raises:
        ValueError: an argument is outside its range.
    """
    k, n = _counts(successes, trials)
    return _clopper_pearson_lower(k, n, V.open_unit("alpha", alpha))


def clopper_pearson_upper(successes: int, trials: int, alpha: float) -> float:
    """One-sided Clopper-Pearson upper confidence bound (level 1 - alpha) of a binomial proportion.

    upper = Beta quantile 1 - alpha of Beta(k + 1, n - k); 1 when k = n (Clopper & Pearson 1934).

    Args:
        successes: number of successes k, an integer in [0, trials].
        trials: number of trials n, an integer >= 1.
        alpha: error probability of the one-sided bound, in (0, 1).

    Returns:
        The upper bound, in [0, 1].

    Raises:
        ValueError: an argument is outside its range.
    """
    k, n = _counts(successes, trials)
    return _clopper_pearson_upper(k, n, V.open_unit("alpha", alpha))


def clopper_pearson(successes: int, trials: int, confidence: float = 0.95) -> tuple[float, float]:
    """Exact two-sided Clopper-Pearson interval at level ``confidence`` (each side at (1 - confidence)/2).

    Args:
        successes: number of successes k, an integer in [0, trials].
        trials: number of trials n, an integer >= 1.
        confidence: coverage of the interval, in (0, 1); default 0.95.

    Returns:
        (lower, upper), both in [0, 1].

    Raises:
        ValueError: an argument is outside its range.
    """
    k, n = _counts(successes, trials)
    a = (1.0 - V.open_unit("confidence", confidence)) / 2.0
    return _clopper_pearson_lower(k, n, a), _clopper_pearson_upper(k, n, a)


def clopper_pearson_lower_array(successes: ArrayLike, trials: int, alpha: float) -> np.ndarray:
    """:func:`clopper_pearson_lower` for an array of success counts out of the same ``trials`` (no validation).

    Args:
        successes: success counts, integers in [0, trials] (any shape).
        trials: number of trials n, an integer >= 1 (trusted).
        alpha: error probability of each one-sided bound, in (0, 1) (trusted).

    Returns:
        Lower bounds shaped like ``successes``.
    """
    k = np.asarray(successes, dtype=float)
    with np.errstate(invalid="ignore"):
        out = special.betaincinv(k, trials - k + 1.0, alpha)
    return np.where(k == 0, 0.0, out)


def clopper_pearson_upper_array(successes: ArrayLike, trials: int, alpha: float) -> np.ndarray:
    """:func:`clopper_pearson_upper` for an array of success counts out of the same ``trials`` (no validation).

    Args:
        successes: success counts, integers in [0, trials] (any shape).
        trials: number of trials n, an integer >= 1 (trusted).
        alpha: error probability of each one-sided bound, in (0, 1) (trusted).

    Returns:
        Upper bounds shaped like ``successes``.
    """
    k = np.asarray(successes, dtype=float)
    with np.errstate(invalid="ignore"):
        out = special.betainccinv(k + 1.0, trials - k, alpha)
    return np.where(k >= trials, 1.0, out)
