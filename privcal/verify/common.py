"""Small helpers shared by the claims modules: number formatting, threshold search, Clopper-Pearson, and the
certified lower bounds a "not private" verdict may rest on.

A claims module says a sigma (or a mechanism, or a paper's statement) is NOT (epsilon, delta)-DP only from a
LOWER bound on the privacy loss of a realisable worst-case pair: the exact profile of a Gaussian mechanism (a
true value), the lower end of a certified PLD bracket of a realisable pair (:func:`poisson_pair_delta_lower`),
a counting argument, or a statistical lower bound with its confidence (``privcal.verify.audit``). An upper bound
(RDP, the moments accountant, KOV, a paper's own bound) exceeding the target never makes a claim fail on privacy
grounds.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
from scipy import optimize

from privcal._stats import clopper_pearson_lower, clopper_pearson_upper
from privcal.verify.model import FAILS, HOLDS, NOT_RUN, UNDER

__all__ = ["g", "first_crossing", "cp_lower", "cp_upper", "poisson_pair_delta_lower", "EXACT_PROFILE", "HOLDS",
           "FAILS", "UNDER", "NOT_RUN"]

#: how evidence names the basis of a "not private" verdict resting on the exact Gaussian profile
EXACT_PROFILE = "exact Gaussian privacy profile, Balle & Wang 2018: a true value, not an upper bound"


def g(x: float | None, digits: int = 4) -> str:
    """A number with ``digits`` significant digits (stable text for reports); "none" for None.

    Args:
        x: the number, or None.
        digits: significant digits, an int >= 1; default 4.

    Returns:
        The text: "none", "nan", "inf", "-inf" or the number in ``%g`` style.
    """
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

    ``excess(x) > 0`` means "the claim fails at x".

    Args:
        excess: x -> a number, positive where the claim fails.
        lo: lower end of the scan, in (0, hi).
        hi: upper end of the scan.
        points: geometric scan points, an int >= 2; default 120.

    Returns:
        The root of the first sign change (``lo`` when ``excess(lo) > 0``), or None if ``excess`` never turns
        positive on the scan.
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
    """One-sided Clopper-Pearson lower bound (level 1 - alpha) on a binomial proportion.

    Args:
        hits: successes, an int in [0, n].
        n: trials, an int >= 1.
        alpha: one-sided error level, in (0, 1).

    Returns:
        The lower confidence bound, in [0, 1].
    """
    return clopper_pearson_lower(hits, n, alpha)


def cp_upper(hits: int, n: int, alpha: float) -> float:
    """One-sided Clopper-Pearson upper bound (level 1 - alpha) on a binomial proportion.

    Args:
        hits: successes, an int in [0, n].
        n: trials, an int >= 1.
        alpha: one-sided error level, in (0, 1).

    Returns:
        The upper confidence bound, in [0, 1].
    """
    return clopper_pearson_upper(hits, n, alpha)


def poisson_pair_delta_lower(epsilon: float, noise_multiplier: float, sample_rate: float, steps: int) -> float:
    """Certified lower bound on delta(epsilon) of ``steps`` releases of the Poisson-subsampled Gaussian pair.

    The pair N(0, s^2) against (1 - q) N(0, s^2) + q N(1, s^2) per release (s = ``noise_multiplier``, q =
    ``sample_rate``, shift 1 = the sensitivity), both neighbouring directions: the lower end of the certified
    PLD bracket (``privcal.pld``, dominated discretization, round-off and truncation accounted for). The pair is
    realisable (``PLD.realisable``), so the value bounds the delta of every mechanism that contains the pair from
    below: a value above a claimed delta proves the claim false. 0 when the grid would exceed the memory cap
    (no lower bound, never a false one).

    Args:
        epsilon: in [0, inf).
        noise_multiplier: noise standard deviation in units of the shift, in (0, inf).
        sample_rate: Poisson sampling probability q, in (0, 1].
        steps: number of composed releases, a positive int.

    Returns:
        the lower bound on delta(epsilon), in [0, 1].
    """
    from privcal.accounting.events import Neighbouring, Releases
    from privcal.pld import MemoryLimitError, from_event

    event = Releases(1.0, int(steps), float(sample_rate), "poisson", Neighbouring.ADD_REMOVE).event(
        float(noise_multiplier))
    pld = from_event(event)
    if not pld.realisable:  # pragma: no cover - Poisson add/remove pairs are realisable
        return 0.0
    try:
        return float(pld.delta_bracket(float(epsilon))[0])
    except MemoryLimitError:
        return 0.0
