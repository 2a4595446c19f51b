"""Small helpers shared by the claims modules: number formatting, threshold search, Clopper-Pearson."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
from scipy import optimize

from privcal._stats import clopper_pearson_lower, clopper_pearson_upper
from privcal.verify.model import FAILS, HOLDS, NOT_RUN, UNDER

__all__ = ["g", "first_crossing", "cp_lower", "cp_upper", "HOLDS", "FAILS", "UNDER", "NOT_RUN"]


def g(x: float | None, digits: int = 4) -> str:
    """A number with ``digits`` significant digits (stable text for reports); "none" for None."""
    if x is None:
        return "none"
    x = float(x)
    if math.isnan(x):
        return "nan"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return f"{x:.{digits}g}"


def first_crossing(excess: Callable[[float], float], lo: float, hi: float, *, points: int = 120) -> float | None:
    """Smallest x in [lo, hi] (geometric scan, then brentq) where ``excess`` turns positive; None if never.

    ``excess(x) > 0`` means "the claim fails at x". Returns the root of the first sign change.
    """
    xs = np.geomspace(lo, hi, points)
    prev_x = None
    for x in xs:
        if excess(float(x)) > 0:
            if prev_x is None:
                return float(x)
            return float(optimize.brentq(excess, prev_x, float(x), xtol=1e-12, rtol=1e-12))
        prev_x = float(x)
    return None


def cp_lower(hits: int, n: int, alpha: float) -> float:
    """One-sided Clopper-Pearson lower bound (level 1 - alpha)."""
    return clopper_pearson_lower(hits, n, alpha)


def cp_upper(hits: int, n: int, alpha: float) -> float:
    """One-sided Clopper-Pearson upper bound (level 1 - alpha)."""
    return clopper_pearson_upper(hits, n, alpha)
