"""Exact binomial confidence bounds (Clopper & Pearson 1934), shared by the Monte Carlo checks."""

from __future__ import annotations

import numpy as np
from scipy import special, stats

from . import _validate as V

__all__ = [
    "clopper_pearson_lower",
    "clopper_pearson_upper",
    "clopper_pearson",
    "clopper_pearson_lower_array",
    "clopper_pearson_upper_array",
]


def clopper_pearson_lower(successes, trials, alpha) -> float:
    """One-sided Clopper-Pearson lower confidence bound (level 1 - alpha) of a binomial proportion.

    lower = Beta quantile alpha of Beta(k, n - k + 1); 0 when k = 0 (Clopper & Pearson 1934).
    """
    n = V.positive_int("trials", trials)
    k = int(successes)
    if not 0 <= k <= n:
        raise ValueError(f"successes must be in [0, {n}], got {successes!r}")
    a = V.open_unit("alpha", alpha)
    return 0.0 if k == 0 else float(stats.beta.ppf(a, k, n - k + 1))


def clopper_pearson_upper(successes, trials, alpha) -> float:
    """One-sided Clopper-Pearson upper confidence bound (level 1 - alpha) of a binomial proportion.

    upper = Beta quantile 1 - alpha of Beta(k + 1, n - k); 1 when k = n (Clopper & Pearson 1934).
    """
    n = V.positive_int("trials", trials)
    k = int(successes)
    if not 0 <= k <= n:
        raise ValueError(f"successes must be in [0, {n}], got {successes!r}")
    a = V.open_unit("alpha", alpha)
    return 1.0 if k == n else float(stats.beta.isf(a, k + 1, n - k))


def clopper_pearson(successes, trials, confidence=0.95) -> tuple[float, float]:
    """Exact two-sided Clopper-Pearson interval at level ``confidence`` (each side at (1 - confidence)/2)."""
    a = (1.0 - V.open_unit("confidence", confidence)) / 2.0
    return clopper_pearson_lower(successes, trials, a), clopper_pearson_upper(successes, trials, a)


def clopper_pearson_lower_array(successes, trials: int, alpha: float) -> np.ndarray:
    """:func:`clopper_pearson_lower` for an array of success counts out of the same ``trials`` (no validation)."""
    k = np.asarray(successes, dtype=float)
    with np.errstate(invalid="ignore"):
        out = special.betaincinv(k, trials - k + 1.0, alpha)
    return np.where(k == 0, 0.0, out)


def clopper_pearson_upper_array(successes, trials: int, alpha: float) -> np.ndarray:
    """:func:`clopper_pearson_upper` for an array of success counts out of the same ``trials`` (no validation)."""
    k = np.asarray(successes, dtype=float)
    with np.errstate(invalid="ignore"):
        out = special.betainccinv(k + 1.0, trials - k, alpha)
    return np.where(k >= trials, 1.0, out)
