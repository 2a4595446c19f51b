r"""The statistics of the privacy-utility frontier: does a point beat its reference, and Holm over the grid.

:func:`beats_reference` (one-sided Student-t bound over seeds) and its p-value :func:`one_sided_p_value`, Holm's
step-down procedure :func:`holm` and its application over each (variant, amount) line's epsilon grid
(:func:`holm_over_grid`, :data:`CORRECTION`). ``unchecked_beats_reference`` and ``unchecked_p_value`` are the same
tests on arrays already checked (the trusted layer that ``privcal.rl.frontier`` calls per point).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Optional

import numpy as np
from numpy.typing import ArrayLike

from privcal import _validate as V

__all__ = ["CORRECTION", "beats_reference", "one_sided_p_value", "holm", "holm_over_grid",
           "unchecked_beats_reference", "unchecked_p_value"]

#: what the "beats" of each frontier line is corrected for, in words (every output says it)
CORRECTION = ("Holm (1979) step-down over the epsilon grid of each (variant, amount) line: the family-wise error "
              "of the line's 'beats' claims is at most 1 - confidence")

def beats_reference(values: ArrayLike, reference: float, *, higher_is_better: bool,
                    confidence: float = 0.95, reference_se: float = 0.0) -> tuple[Optional[bool], float]:
    r"""Whether the mean utility over seeds beats a reference, by a one-sided Student-t bound.

    With n values, mean m and sample standard deviation s, the standard error is
    se = sqrt(s^2 / n + se_ref^2) (the reference's own standard error added in quadrature; 0 for an exact
    reference) and t = t_{n-1}^{-1}(confidence). Higher is better: the lower bound m - t se must exceed the
    reference; lower is better: the upper bound m + t se must be below it. The claim holds with the
    stated confidence under the normal model of the per-seed utilities (seeds independent); a
    non-finite value (a diverged run) counts as the worst possible value.

    Args:
        values: per-seed utilities, a 1-D sequence of floats (at least 2 for a verdict).
        reference: the reference's value.
        higher_is_better: True for returns, False for losses and regret.
        confidence: one-sided confidence level, in (0, 1); default 0.95.
        reference_se: standard error of the reference, in [0, inf); default 0 (exact).

    Returns:
        (verdict, bound): verdict True / False, or None with fewer than 2 values; bound the one-sided
        confidence bound on the mean (nan with fewer than 2 values).

    Raises:
        ValueError: an argument is outside its range.
    """
    vals = np.asarray(values, dtype=float).ravel()
    return unchecked_beats_reference(vals, float(reference), bool(higher_is_better),
                            V.open_unit("confidence", confidence), V.nonnegative("reference_se", reference_se))


def unchecked_beats_reference(vals: np.ndarray, reference: float, higher: bool, confidence: float,
                              reference_se: float) -> tuple[Optional[bool], float]:
    """:func:`beats_reference` on checked inputs (a float array, a float, a bool, confidence in (0, 1), se >= 0).

    Args:
        vals: per-seed utilities, a float array.
        reference: the reference's value.
        higher: True when higher is better.
        confidence: one-sided confidence, in (0, 1).
        reference_se: the reference's standard error, >= 0.
    """
    n = vals.size
    if n < 2:
        return None, math.nan
    if not np.all(np.isfinite(vals)):  # a diverged run: the worst value
        return False, (-math.inf if higher else math.inf)
    from scipy.stats import t as student_t

    se = math.sqrt(float(vals.var(ddof=1)) / n + reference_se ** 2)
    q = float(student_t.ppf(confidence, n - 1))
    mean = float(vals.mean())
    if higher:
        bound = mean - q * se
        return bool(bound > reference), bound
    bound = mean + q * se
    return bool(bound < reference), bound


def one_sided_p_value(values: ArrayLike, reference: float, *, higher_is_better: bool,
                      reference_se: float = 0.0) -> Optional[float]:
    r"""One-sided p-value of "the mean utility is no better than the reference", by Student t over seeds.

    With n values, mean m, sample standard deviation s and se = sqrt(s^2 / n + se_ref^2) (as
    :func:`beats_reference`), t = (m - reference) / se (sign flipped when lower is better) and
    p = P(T_{n-1} >= t), the upper tail of Student's t with n - 1 degrees of freedom. So p < 1 - c exactly
    when :func:`beats_reference` at confidence c says True. With se = 0 the comparison is exact: p = 0 if the
    mean is strictly better, else 1. A non-finite value (a diverged run) gives p = 1.

    Args:
        values: per-seed utilities, a 1-D sequence of floats (at least 2 for a p-value).
        reference: the reference's value.
        higher_is_better: True for returns, False for losses and regret.
        reference_se: standard error of the reference, in [0, inf); default 0 (exact).

    Returns:
        p in [0, 1], or None with fewer than 2 values.

    Raises:
        ValueError: ``reference_se`` is negative.
    """
    vals = np.asarray(values, dtype=float).ravel()
    return unchecked_p_value(vals, float(reference), bool(higher_is_better),
                             V.nonnegative("reference_se", reference_se))


def unchecked_p_value(vals: np.ndarray, reference: float, higher: bool, reference_se: float) -> Optional[float]:
    """:func:`one_sided_p_value` on checked inputs (a float array, a float, a bool, se >= 0).

    Args:
        vals: per-seed utilities, a float array.
        reference: the reference's value.
        higher: True when higher is better.
        reference_se: the reference's standard error, >= 0.
    """
    n = vals.size
    if n < 2:
        return None
    if not np.all(np.isfinite(vals)):
        return 1.0
    from scipy.stats import t as student_t

    diff = float(vals.mean()) - reference
    diff = diff if higher else -diff
    se = math.sqrt(float(vals.var(ddof=1)) / n + reference_se ** 2)
    if se == 0.0:
        return 0.0 if diff > 0.0 else 1.0
    return float(student_t.sf(diff / se, n - 1))


def holm(p_values: Iterable[Optional[float]], alpha: float = 0.05) -> tuple[list, list]:
    r"""Holm's step-down procedure: which hypotheses to reject with family-wise error at most ``alpha``.

    Sort the m p-values that are not None, p_(1) <= ... <= p_(m); reject H_(1), ..., H_(k) where k is the
    largest index with p_(j) <= alpha / (m - j + 1) for every j <= k (Holm 1979, "A simple sequentially
    rejective multiple test procedure", Scand. J. Statist. 6, 65-70). The adjusted p-value of H_(i) is
    max_{j <= i} min(1, (m - j + 1) p_(j)), and H_(i) is rejected exactly when it is <= alpha. The
    family-wise error is controlled under any dependence between the tests. A None (no test: an infeasible
    point, fewer than two seeds) is not in the family and stays None.

    Args:
        p_values: p-values in [0, 1] or None.
        alpha: family-wise error level, in (0, 1); default 0.05.

    Returns:
        (rejected, adjusted): per input, True / False (None for a None input) and the adjusted p-value
        (None for a None input).

    Raises:
        ValueError: a p-value outside [0, 1] or ``alpha`` outside (0, 1).
    """
    ps = list(p_values)
    for x in ps:
        if x is not None and not 0.0 <= x <= 1.0:
            raise ValueError(f"p_values must be in [0, 1] or None, got {x!r}")
    alpha = V.open_unit("alpha", alpha)
    tested = sorted((x, i) for i, x in enumerate(ps) if x is not None)
    m = len(tested)
    rejected, adjusted = [None] * len(ps), [None] * len(ps)
    running = 0.0
    for j, (x, i) in enumerate(tested):
        running = max(running, min(1.0, (m - j) * x))
        adjusted[i] = running
        rejected[i] = running <= alpha
    return rejected, adjusted


def holm_over_grid(points: Iterable["FrontierPoint"], confidence: float = 0.95) -> tuple:
    """The points with ``p_holm`` and ``beats_holm`` set: :func:`holm` at alpha = 1 - confidence over the epsilon
    grid of each (variant, amount) line, from each point's ``p_value`` (:data:`CORRECTION`).

    Args:
        points: :class:`FrontierPoint` objects (their ``p_value`` set, None for no test).
        confidence: in (0, 1); default 0.95.

    Returns:
        the points in the same order, as a tuple.
    """
    from dataclasses import replace

    pts = list(points)
    alpha = 1.0 - V.open_unit("confidence", confidence)
    lines: dict = {}
    for k, p in enumerate(pts):
        lines.setdefault((p.variant, p.amount), []).append(k)
    for idx in lines.values():
        rejected, adjusted = holm([pts[k].p_value for k in idx], alpha)
        for k, r, a in zip(idx, rejected, adjusted):
            pts[k] = replace(pts[k], beats_holm=r, p_holm=a)
    return tuple(pts)
