"""The generic conservative root finder behind every calibration (a trusted kernel: inputs already validated).

It brackets sigma on a log scale, runs Brent's method on log sigma, then bisects the bracket down to a
relative width ``rtol`` and returns the bracket's *feasible* end, after checking that the accountant
indeed reports epsilon <= target there. A sigma returned is therefore always one the accountant
certifies; it exceeds the true minimum by at most a factor (1 + rtol).
"""

from __future__ import annotations

import math
import warnings
from typing import Callable

from .. import _roots
from ..errors import CalibrationError, InfeasibleError
from ..analysis.rdp import GridEdgeWarning

SIGMA_MIN = 1e-12
SIGMA_MAX = 1e12
_EPS = 2.220446049250313e-16  # float64 machine epsilon


def quiet(epsilon_at: Callable[[float], float]) -> Callable[[float], float]:
    """``epsilon_at`` with GridEdgeWarning silenced: probing far-off sigmas puts the RDP optimum at a
    grid edge; only the final check of an answer may warn."""

    def probe(sigma: float) -> float:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", GridEdgeWarning)
            return epsilon_at(sigma)

    return probe


def search(
    epsilon_at: Callable[[float], float],
    target_epsilon: float,
    target_delta: float,
    *,
    sigma_hint: float,
    rtol: float,
    step: float = 4.0,
) -> float:
    """Smallest sigma (to relative ``rtol``) with ``epsilon_at(sigma) <= target_epsilon``.

    ``epsilon_at`` must be non-increasing in sigma (true of every accountant here). Raises
    ``InfeasibleError`` when even sigma = 1e12 does not reach the target, and ``CalibrationError`` if
    the final check fails. ``target_delta`` only enters the error messages. ``step`` (> 1): the factor of
    the first bracketing step from ``sigma_hint``; later steps are 4x (a hint known to be close brackets
    the root in a narrow interval, which Brent's method then closes in fewer probes).
    """
    eps = quiet(epsilon_at)
    # Bracket on a log scale: lo infeasible, hi feasible.
    hi = min(max(sigma_hint, SIGMA_MIN), SIGMA_MAX)
    factor = step
    if eps(hi) <= target_epsilon:
        lo = hi
        while True:
            lo, factor = lo / factor, 4.0
            if lo < SIGMA_MIN:
                return checked(hi, epsilon_at, target_epsilon)  # any sigma down to 1e-12 works
            if eps(lo) > target_epsilon:
                break
            hi = lo
    else:
        lo = hi
        while True:
            hi, factor = hi * factor, 4.0
            if hi > SIGMA_MAX:
                raise InfeasibleError(
                    f"no sigma up to {SIGMA_MAX:g} reaches epsilon <= {target_epsilon:g} at "
                    f"delta = {target_delta:g} with this accountant"
                )
            if eps(hi) <= target_epsilon:
                break
            lo = hi
    # Brent's method on log sigma. Every evaluation also tightens the bracket: the largest sigma seen
    # infeasible and the smallest seen feasible (epsilon is non-increasing in sigma).
    bracket = [lo, hi]

    def gap(log_sigma: float) -> float:
        sigma = math.exp(log_sigma)
        value = eps(sigma)
        if value <= target_epsilon:
            bracket[1] = min(bracket[1], sigma)
        else:
            bracket[0] = max(bracket[0], sigma)
        return min(math.log(value / target_epsilon), 700.0) if value > 0 else -700.0

    if hi / lo - 1.0 > rtol:
        root = math.exp(_roots.brentq(gap, math.log(lo), math.log(hi), xtol=rtol / 4, rtol=4 * _EPS))
        lo, hi = bracket
        # Step up from the root with growing steps until feasible (an accountant's own numerical
        # noise can leave Brent's root a little on the infeasible side).
        step = rtol / 2
        while hi / lo - 1.0 > rtol:
            candidate = max(root, lo) * (1.0 + step)
            if not lo < candidate < hi:
                break
            if eps(candidate) <= target_epsilon:
                hi = candidate
                break
            lo, step = candidate, step * 4
    # Bisection finishes the job if the feasible end is not yet within rtol of an infeasible point.
    while hi / lo - 1.0 > rtol:
        mid = math.sqrt(lo * hi)
        if mid <= lo or mid >= hi:
            break
        if eps(mid) <= target_epsilon:
            hi = mid
        else:
            lo = mid
    return checked(hi, epsilon_at, target_epsilon)


def checked(sigma: float, epsilon_at: Callable[[float], float], target: float) -> float:
    """``sigma`` after checking ``epsilon_at(sigma) <= target`` (CalibrationError otherwise)."""
    value = epsilon_at(sigma)
    if not value <= target:
        raise CalibrationError(
            f"calibration check failed: epsilon({sigma!r}) = {value!r} exceeds target {target!r}"
        )
    return sigma
