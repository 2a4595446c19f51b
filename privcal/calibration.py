"""Conservative calibration: the smallest sigma whose *reported* epsilon meets the target.

One generic root-finder serves every accountant: it brackets sigma on a log scale, bisects the
bracket (Brent's method on log sigma, then bisection) down to a relative width ``rtol`` and returns the bracket's *feasible* end, after checking
that the accountant indeed reports epsilon <= target there. A σ returned is therefore always one
the accountant certifies; it exceeds the true minimum by at most a factor (1 + rtol).
"""

from __future__ import annotations

import math
import warnings
from typing import Callable

import numpy as np

from scipy import optimize

from . import _validate as V
from .accountants import ACCOUNTANTS, Accountant, RDPAccountant
from .errors import CalibrationError, InfeasibleError
from .events import Event
from .rdp import GridEdgeWarning

__all__ = ["calibrate_sigma", "calibrate_sigma_rdp", "accountant_factory"]

_SIGMA_MIN = 1e-12
_SIGMA_MAX = 1e12
_EPS = 2.220446049250313e-16  # float64 machine epsilon


def accountant_factory(accountant) -> Callable[[], Accountant]:
    """A zero-argument callable making fresh accountants from a name, a class or a factory."""
    if isinstance(accountant, str):
        if accountant not in ACCOUNTANTS:
            raise ValueError(f"accountant must be one of {sorted(ACCOUNTANTS)}, got {accountant!r}")
        return ACCOUNTANTS[accountant]
    if callable(accountant):
        return accountant
    raise ValueError(f"accountant must be a name, an Accountant class or a factory, got {accountant!r}")


def calibrate_sigma(
    make_event: Callable[[float], Event],
    target_epsilon,
    target_delta,
    accountant="exact",
    *,
    sigma_hint: float = 1.0,
    rtol: float = 1e-9,
) -> float:
    """Smallest sigma (to relative ``rtol``) with accountant(make_event(sigma)).epsilon(delta) <= target.

    ``make_event(sigma)`` builds the event for a candidate sigma; epsilon must be non-increasing in
    sigma (true of every accountant here). Raises ``InfeasibleError`` when even sigma = 1e12 does not
    reach the target, and ``CalibrationError`` if the final check fails.
    """
    target_epsilon = V.positive("target_epsilon", target_epsilon)
    target_delta = V.open_unit("target_delta", target_delta)
    sigma_hint = V.positive("sigma_hint", sigma_hint)
    rtol = V.in_closed("rtol", rtol, 1e-15, 0.5)
    factory = accountant_factory(accountant)

    def eps(sigma: float) -> float:
        # probing far-off sigmas puts the RDP optimum at a grid edge; only the final check may warn
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", GridEdgeWarning)
            return factory().compose(make_event(sigma)).epsilon(target_delta)

    def eps_final(sigma: float) -> float:
        return factory().compose(make_event(sigma)).epsilon(target_delta)

    # Bracket on a log scale: lo infeasible, hi feasible.
    hi = min(max(sigma_hint, _SIGMA_MIN), _SIGMA_MAX)
    if eps(hi) <= target_epsilon:
        lo = hi
        while True:
            lo = lo / 4.0
            if lo < _SIGMA_MIN:
                return _checked(hi, eps_final, target_epsilon)  # any sigma down to 1e-12 works
            if eps(lo) > target_epsilon:
                break
            hi = lo
    else:
        lo = hi
        while True:
            hi = hi * 4.0
            if hi > _SIGMA_MAX:
                raise InfeasibleError(
                    f"no sigma up to {_SIGMA_MAX:g} reaches epsilon <= {target_epsilon:g} at "
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
        root = math.exp(optimize.brentq(gap, math.log(lo), math.log(hi), xtol=rtol / 4, rtol=4 * _EPS))
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
    return _checked(hi, eps_final, target_epsilon)


def _checked(sigma: float, eps: Callable[[float], float], target: float) -> float:
    value = eps(sigma)
    if not value <= target:
        raise CalibrationError(
            f"calibration check failed: epsilon({sigma!r}) = {value!r} exceeds target {target!r}"
        )
    return sigma


def calibrate_sigma_rdp(
    make_event: Callable[[float], Event],
    target_epsilon,
    target_delta,
    accountant=RDPAccountant,
    *,
    sigma_hint: float = 1.0,
    rtol: float = 1e-9,
    window: float = 2.0,
) -> float:
    """:func:`calibrate_sigma` for Renyi-DP accountants, searching on a window of orders.

    Most of an RDP calibration's time goes into RDP values at orders far from the optimum. Here a
    coarse search on every sixth order finds sigma to 0.1%; then the search runs on the orders within
    a factor ``window`` of the optimal order (found on the full grid at the current sigma), and the
    answer is re-checked on the full grid. A window never gives a
    smaller epsilon than the full grid (fewer orders, larger minimum), so the windowed answer is always
    feasible; if the full-grid optimum at that answer lies inside the window, the two grids agree there
    and the answer is the full-grid one. Otherwise the window moves and the search repeats (at most
    four times, then the plain full-grid search). ``accountant`` is an RDPAccountant class (or subclass).
    """
    target_epsilon = V.positive("target_epsilon", target_epsilon)
    target_delta = V.open_unit("target_delta", target_delta)
    sigma = V.positive("sigma_hint", sigma_hint)
    window = V.in_closed("window", window, 1.5, 1e6)
    orders = accountant().orders

    def full(s: float) -> tuple[float, float]:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", GridEdgeWarning)
            return accountant().compose(make_event(s)).epsilon_and_order(target_delta)

    def search(sub, hint, tol):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", GridEdgeWarning)
            return calibrate_sigma(
                make_event, target_epsilon, target_delta, lambda: accountant(sub), sigma_hint=hint, rtol=tol
            )

    # A coarse start on every sixth order (feasible there, hence on the full grid), to 0.1%; its
    # optimal order centres the first window.
    sparse = np.unique(np.append(orders[::6], orders[-1]))
    try:
        sigma = search(sparse, sigma, 1e-3)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", GridEdgeWarning)
            _, best = accountant(sparse).compose(make_event(sigma)).epsilon_and_order(target_delta)
    except InfeasibleError:
        _, best = full(sigma)
    for _ in range(4):
        if not math.isfinite(best):
            break
        mask = (orders >= best / window) & (orders <= best * window)
        if mask.sum() < 3:
            window *= 2.0
            continue
        sub = orders[mask]
        try:
            sigma = search(sub, sigma, rtol)
        except InfeasibleError:  # the window cannot reach the target at any sigma: widen it
            window *= 4.0
            continue
        # the final check, on the full grid (warnings allowed: this is the answer's own epsilon)
        value, best = accountant().compose(make_event(sigma)).epsilon_and_order(target_delta)
        inside = sub[0] < best < sub[-1] or best in (orders[0], orders[-1])
        if value <= target_epsilon and inside:
            return sigma
    return calibrate_sigma(make_event, target_epsilon, target_delta, accountant, sigma_hint=sigma, rtol=rtol)
