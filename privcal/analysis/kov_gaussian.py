r"""KOV for the Gaussian: k Gaussian releases priced by Kairouz, Oh & Viswanath 2015 with the best per-step pair.

The per-step (epsilon0, delta0) is taken from the exact single-step Gaussian profile (Balle & Wang 2018) and
optimised over epsilon0 (:func:`kov_gaussian_epsilon`, :func:`kov_gaussian_delta`); each epsilon0 is priced by
the exact KOV profile (:mod:`privcal.analysis.kov_profile`, Thm 3.3) up to :data:`K_CLOSED_FORM` steps and by
Thm 3.4's closed form (:mod:`privcal.analysis.kov_closed_forms`) beyond. :mod:`privcal.analysis.kov`
re-exports every public name.
"""

from __future__ import annotations

import math

import numpy as np

from .. import _validate as V
from . import gaussian as G
from ..errors import InfeasibleError
from .kov_closed_forms import kov_epsilon_approx_unchecked
from .kov_profile import STEPS_MAX, kov_delta_unchecked, kov_epsilon_unchecked

__all__ = [
    "kov_gaussian_epsilon",
    "kov_gaussian_epsilon_with_step",
    "kov_gaussian_delta",
    "kov_gaussian_delta_with_step",
    "kov_gaussian_epsilon_unchecked",
    "kov_gaussian_delta_unchecked",
    "uses_closed_form",
    "K_CLOSED_FORM",
]

_STEP_GRID = 12  # coarse points of the eps0 search
_STEP_XTOL = 1e-4  # tolerance in log eps0 of the refinement
# privcal.analysis.gaussian keeps the relative error of delta_exact near 1e-11 (its _FLOAT_ERROR_LIMIT, plus a
# few ulps from exp/log); the per-step delta0 is raised by ten times that, so that rounding there can
# never make a KOV bound fall below the true profile.
_DELTA0_INFLATION = 1.0 + 1e-10
#: Beyond this many steps the Gaussian KOV search prices each eps0 by the closed form of Thm 3.4 (an upper
#: bound on the optimal composition; sigma about 20% larger at 1e6 to 1e8 steps) instead of the exact profile,
#: whose cost grows like sqrt(k) per evaluation (a calibration at 1e7 steps costs up to 20 s, at 1e8 minutes).
#: Below it, the profile is summed in float64 with its rounding margin (no mpmath): relative error of delta
#: below 3e-8.
K_CLOSED_FORM = 10**6
# Upward relative margin on the float64 evaluation of Thm 3.4 (a few dozen roundings of 1.1e-16 each).
_CLOSED_FORM_MARGIN = 1e-12


def uses_closed_form(steps: int) -> bool:
    """Whether the Gaussian KOV functions price ``steps`` steps by Thm 3.4's closed form (beyond :data:`K_CLOSED_FORM`).

    Args:
        steps: number of composed Gaussian releases, an int >= 1.

    Returns:
        True when steps > K_CLOSED_FORM.
    """
    return steps > K_CLOSED_FORM


def _step_epsilon(eps0: float, delta0: float, steps: int, delta: float) -> float:
    """Composed epsilon of k (eps0, delta0) steps for the Gaussian search: exact profile (float64 margin),
    or Thm 3.4's closed form beyond K_CLOSED_FORM steps. Always an upper bound on the optimal epsilon."""
    if uses_closed_form(steps):
        return kov_epsilon_approx_unchecked(eps0, delta0, steps=steps, delta=delta) * (1.0 + _CLOSED_FORM_MARGIN)
    return kov_epsilon_unchecked(eps0, delta0, steps=steps, delta=delta, precise=False)


def _step_delta(eps0: float, mu0: float) -> float:
    """Per-step delta0 = delta_exact(eps0, mu0) (Balle & Wang 2018), rounded up past its error."""
    return min(1.0, G.delta_exact_unchecked(eps0, mu0) * _DELTA0_INFLATION)


def _minimise_log_step(objective, u_lo: float, u_hi: float, *, widen_down: bool):
    """Minimise objective(u) over u in [u_lo, u_hi] (u = log eps0): coarse grid, then bounded Brent.

    The grid is widened (upward, and downward if ``widen_down``) while its best point is at an end.
    Any u gives a valid bound, so a local minimum is still a valid (if less tight) answer. Returns
    (value, u); value is inf when every u is infeasible.
    """
    us = np.linspace(u_lo, u_hi, _STEP_GRID)
    values = [objective(float(u)) for u in us]
    for _ in range(6):  # widen while the best point is at an end of the grid
        j = int(np.argmin(values))
        if not math.isfinite(values[j]) or 0 < j < len(us) - 1 or (j == 0 and not widen_down):
            break
        width = us[-1] - us[0]
        if j == 0:
            extra = np.linspace(us[0] - width, us[0], _STEP_GRID)[:-1]
            us = np.concatenate([extra, us])
            values = [objective(float(u)) for u in extra] + values
        else:
            extra = np.linspace(us[-1], us[-1] + width, _STEP_GRID)[1:]
            us = np.concatenate([us, extra])
            values += [objective(float(u)) for u in extra]
    j = int(np.argmin(values))
    best_value, best_u = values[j], float(us[j])
    if not math.isfinite(best_value):
        return best_value, best_u
    left = float(us[max(j - 1, 0)])
    right = float(us[min(j + 1, len(us) - 1)])
    if right > left:
        from scipy import optimize  # here, not at the top: scipy.optimize costs ~0.2 s of CPU at import

        res = optimize.minimize_scalar(
            objective, bounds=(left, right), method="bounded", options={"xatol": _STEP_XTOL}
        )
        if res.fun < best_value:
            best_value, best_u = float(res.fun), float(res.x)
    return best_value, best_u


def _validate_gaussian_steps(sigma, steps, sensitivity) -> tuple[float, int, float]:
    """Validate (sigma, steps, sensitivity) of the kov_gaussian_* functions; mu0 = sensitivity/sigma finite."""
    sigma = V.positive("sigma", sigma)
    steps = V.positive_int("steps", steps)
    sensitivity = V.positive("sensitivity", sensitivity)
    if steps > STEPS_MAX:
        raise ValueError(f"steps must be in [1, {STEPS_MAX:.0e}], got {steps!r}")
    mu0 = sensitivity / sigma
    if not 0.0 < mu0 < math.inf:
        raise ValueError(
            f"sensitivity / sigma must be in (0, inf) in float64, got {sensitivity!r} / {sigma!r} = {mu0!r}"
        )
    return sigma, steps, sensitivity


def kov_gaussian_epsilon_with_step(
    sigma: float, *, steps: int, delta: float, sensitivity: float = 1.0
) -> tuple[float, float, float]:
    """(epsilon, epsilon0, delta0): KOV optimal composition of T' Gaussian releases, best per-step split.

    epsilon = min over eps0 > 0 of kov_epsilon(eps0, delta_exact(eps0, D/sigma), steps=steps, delta=delta),
    with the exact single-step profile (Balle & Wang 2018; delta0 raised by 1e-10 relative to cover its
    rounding) and Kairouz, Oh & Viswanath 2015, Thm 3.3. Every eps0 gives a valid upper bound; the
    minimum is searched over log eps0 from the smallest feasible eps0 (k delta0 about delta) upward by
    a coarse grid and a bounded Brent refinement (about 25 evaluations). The profile is summed in
    float64 with its rounding margin (relative error of delta below 3e-8 up to 1e6 steps); beyond 1e6
    steps each eps0 is priced by the closed form of Thm 3.4 instead (:func:`kov_epsilon_approx`, a
    proven upper bound on the optimal composition; the calibrated sigma is about 20% larger than the
    exact-profile KOV one at 1e6 to 1e8 steps, delta = 1e-5), so that 1e8 steps take
    seconds, not minutes. Either way the result is an upper bound on epsilon.
    Describing each Gaussian step by ONE (eps0, delta0) pair loses a lot: e.g. sigma = 5, 80 steps,
    delta = 1e-5 gives 62.5 against the exact 8.72.

    Args:
        sigma: noise standard deviation of each step (absolute), in (0, inf).
        steps: number of composed Gaussian releases, an integer in [1, 1e8].
        delta: target delta of the composition, in (0, 1).
        sensitivity: L2 (or RKHS-norm) sensitivity of each release, in (0, inf); default 1.

    Returns:
        (epsilon, epsilon0, delta0): the composed epsilon (an upper bound) and the per-step pair
        that attains it.

    Raises:
        ValueError: an argument is outside its range.
        InfeasibleError: no per-step epsilon0 reaches delta.
    """
    sigma, steps, sensitivity = _validate_gaussian_steps(sigma, steps, sensitivity)
    delta = V.open_unit("delta", delta)
    return _kov_gaussian_epsilon_with_step(sigma, steps=steps, delta=delta, sensitivity=sensitivity)


def _kov_gaussian_epsilon_with_step(
    sigma: float, *, steps: int, delta: float, sensitivity: float = 1.0
) -> tuple[float, float, float]:
    """kov_gaussian_epsilon_with_step for validated inputs."""
    mu0 = sensitivity / sigma
    # largest per-step delta0 with 1 - (1 - delta0)^k < delta, and the eps0 that reaches it
    delta0_max = -math.expm1(math.log1p(-delta) / steps)
    eps0_min = G.epsilon_exact_unchecked(delta0_max, mu0)
    if eps0_min == 0.0:
        # tiny mu0: each step is (0, delta0)-DP with delta0 = total variation, and k of them are
        # (0, 1 - (1 - delta0)^k)-DP, which the epsilon_exact above found to be below delta
        delta0 = _step_delta(0.0, mu0)
        return _step_epsilon(0.0, delta0, steps, delta), 0.0, delta0
    found = {}

    def objective(u: float) -> float:
        eps0 = math.exp(u)
        delta0 = _step_delta(eps0, mu0)
        try:
            value = _step_epsilon(eps0, delta0, steps, delta)
        except InfeasibleError:
            return math.inf
        if value < found.get("value", math.inf):
            found.update(value=value, eps0=eps0, delta0=delta0)
        return value

    u0 = math.log(eps0_min)
    _minimise_log_step(objective, u0 + 1e-9, u0 + math.log(4.0), widen_down=False)
    if "value" not in found:
        raise InfeasibleError(
            f"no per-step epsilon0 makes {steps} Gaussian steps (mu0={mu0!r}) ({delta!r})-feasible"
        )
    return found["value"], found["eps0"], found["delta0"]


def kov_gaussian_epsilon(sigma: float, *, steps: int, delta: float, sensitivity: float = 1.0) -> float:
    """KOV optimal-composition epsilon of T' Gaussian releases with the best per-step (eps0, delta0).

    min over eps0 of kov_epsilon(eps0, delta_exact(eps0, D/sigma), steps=steps, delta=delta) (Kairouz, Oh &
    Viswanath 2015, Thm 3.3; Balle & Wang 2018). An upper bound, never below
    ``privcal.analysis.composition.epsilon_composed_exact``; see :func:`kov_gaussian_epsilon_with_step`.

    Args:
        sigma: noise standard deviation of each step (absolute), in (0, inf).
        steps: number of composed Gaussian releases, an integer in [1, 1e8].
        delta: target delta of the composition, in (0, 1).
        sensitivity: L2 (or RKHS-norm) sensitivity of each release, in (0, inf); default 1.

    Returns:
        epsilon of the composition, an upper bound, in [0, inf).

    Raises:
        ValueError: an argument is outside its range.
        InfeasibleError: no per-step epsilon0 reaches delta.
    """
    sigma, steps, sensitivity = _validate_gaussian_steps(sigma, steps, sensitivity)
    delta = V.open_unit("delta", delta)
    return kov_gaussian_epsilon_unchecked(sigma, steps=steps, delta=delta, sensitivity=sensitivity)


def kov_gaussian_epsilon_unchecked(sigma: float, *, steps: int, delta: float, sensitivity: float = 1.0) -> float:
    """:func:`kov_gaussian_epsilon` without validation, for callers that validated the arguments (the KOV
    accountant): the same upper bound on epsilon.

    Args:
        sigma: noise standard deviation of each step, a float in (0, inf) (not checked).
        steps: number of composed Gaussian releases, an int in [1, 1e8] (not checked).
        delta: target delta of the composition, a float in (0, 1) (not checked).
        sensitivity: sensitivity of each release, a float in (0, inf), sensitivity / sigma finite (not checked);
            default 1.

    Returns:
        epsilon of the composition, an upper bound, in [0, inf).

    Raises:
        InfeasibleError: no per-step epsilon0 reaches delta.
    """
    return _kov_gaussian_epsilon_with_step(sigma, steps=steps, delta=delta, sensitivity=sensitivity)[0]


def kov_gaussian_delta_with_step(
    sigma: float, *, steps: int, epsilon: float, sensitivity: float = 1.0
) -> tuple[float, float, float]:
    """(delta, epsilon0, delta0): KOV optimal composition of T' Gaussian releases, best per-step split.

    delta = min over eps0 of kov_delta(eps0, delta_exact(eps0, D/sigma), steps=steps, epsilon=epsilon):
    Kairouz, Oh & Viswanath 2015, Thm 3.3 with the exact single-step Gaussian profile (Balle & Wang
    2018). Any eps0 gives a valid upper bound on delta; the search runs over log eps0.

    Args:
        sigma: noise standard deviation of each step (absolute), in (0, inf).
        steps: number of composed Gaussian releases, an integer in [1, 1e8].
        epsilon: epsilon of the composition at which delta is evaluated, in [0, inf).
        sensitivity: L2 (or RKHS-norm) sensitivity of each release, in (0, inf); default 1.

    Returns:
        (delta, epsilon0, delta0): the composed delta (an upper bound) and the per-step pair that
        attains it.

    Raises:
        ValueError: an argument is outside its range.
    """
    sigma, steps, sensitivity = _validate_gaussian_steps(sigma, steps, sensitivity)
    epsilon = V.nonnegative("epsilon", epsilon)
    return _kov_gaussian_delta_with_step(sigma, steps=steps, epsilon=epsilon, sensitivity=sensitivity)


def _kov_gaussian_delta_with_step(
    sigma: float, *, steps: int, epsilon: float, sensitivity: float = 1.0
) -> tuple[float, float, float]:
    """kov_gaussian_delta_with_step for validated inputs."""
    mu0 = sensitivity / sigma
    found = {}

    def objective(u: float) -> float:
        eps0 = math.exp(u)
        delta0 = _step_delta(eps0, mu0)
        value = kov_delta_unchecked(eps0, delta0, steps=steps, epsilon=epsilon, precise=False)
        if value < found.get("value", math.inf):
            found.update(value=value, eps0=eps0, delta0=delta0)
        # minimise log delta so that the search sees differences between tiny deltas
        return math.log(value) if value > 0 else -1e300

    # eps0 from well below both scales (basic composition eps/k, one-step mu0) to well above
    scale_lo = max(min(mu0, epsilon / steps), 1e-6 * mu0)
    scale_hi = max(epsilon, mu0 * math.sqrt(2.0 * math.log(steps + 1.0)) + mu0 * mu0)
    _minimise_log_step(
        objective, math.log(scale_lo) - math.log(8.0), math.log(scale_hi) + math.log(4.0), widen_down=True
    )
    return found["value"], found["eps0"], found["delta0"]


def kov_gaussian_delta(sigma: float, *, steps: int, epsilon: float, sensitivity: float = 1.0) -> float:
    """KOV optimal-composition delta(epsilon) of T' Gaussian releases with the best per-step split.

    min over eps0 of kov_delta(eps0, delta_exact(eps0, D/sigma), steps=steps, epsilon=epsilon) (Kairouz, Oh &
    Viswanath 2015, Thm 3.3; Balle & Wang 2018). An upper bound, never below
    ``privcal.analysis.composition.delta_composed_exact``.

    Args:
        sigma: noise standard deviation of each step (absolute), in (0, inf).
        steps: number of composed Gaussian releases, an integer in [1, 1e8].
        epsilon: epsilon of the composition at which delta is evaluated, in [0, inf).
        sensitivity: L2 (or RKHS-norm) sensitivity of each release, in (0, inf); default 1.

    Returns:
        delta of the composition, an upper bound, in [0, 1].

    Raises:
        ValueError: an argument is outside its range.
    """
    sigma, steps, sensitivity = _validate_gaussian_steps(sigma, steps, sensitivity)
    epsilon = V.nonnegative("epsilon", epsilon)
    return kov_gaussian_delta_unchecked(sigma, steps=steps, epsilon=epsilon, sensitivity=sensitivity)


def kov_gaussian_delta_unchecked(sigma: float, *, steps: int, epsilon: float, sensitivity: float = 1.0) -> float:
    """:func:`kov_gaussian_delta` without validation, for callers that validated the arguments (the KOV
    accountant): the same upper bound on delta.

    Args:
        sigma: noise standard deviation of each step, a float in (0, inf) (not checked).
        steps: number of composed Gaussian releases, an int in [1, 1e8] (not checked).
        epsilon: epsilon of the composition, a float in [0, inf) (not checked).
        sensitivity: sensitivity of each release, a float in (0, inf), sensitivity / sigma finite (not checked);
            default 1.

    Returns:
        delta of the composition, an upper bound, in [0, 1].
    """
    return _kov_gaussian_delta_with_step(sigma, steps=steps, epsilon=epsilon, sensitivity=sensitivity)[0]
