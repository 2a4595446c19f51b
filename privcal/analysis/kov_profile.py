r"""Kairouz, Oh & Viswanath 2015 (ICML; arXiv 1311.0776): the exact privacy profile of k-fold composition.

The optimal delta(epsilon) of the k-fold adaptive composition of (epsilon0, delta0)-DP mechanisms at every
epsilon (:func:`kov_delta`, Thm 3.3 extended between its grid points) and its inverse (:func:`kov_epsilon`),
with the dominating pair they sum (:class:`RandomizedResponse`). The paper's printed grid, its closed form
(Thm 3.4) and the composition theorems KOV improves on are in :mod:`privcal.analysis.kov_closed_forms`; KOV
with Gaussian steps in :mod:`privcal.analysis.kov_gaussian`. :mod:`privcal.analysis.kov` re-exports all three.

Numerics of the KOV profile. With p = e^eps0 / (1 + e^eps0), q = 1 - p,

    delta_RR(eps) = sum_{l : (k-2l) eps0 > eps} C(k,l) p^(k-l) q^l (1 - e^(eps - (k-2l) eps0))

is a sum of positive terms whose logarithms are concave in l; it is summed in log space over the
window of terms within 60 nats of the largest one (the neglected rest is bounded and added), with an
upward margin that covers float64 rounding, so the value returned is never below the true one. When
that rounding bound exceeds :data:`MP_REL_ERROR` (k beyond about 5 * 10^5) the window is re-summed with mpmath.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import special

from .. import _validate as V
from ..errors import InfeasibleError

__all__ = [
    "kov_delta",
    "kov_epsilon",
    "kov_delta_unchecked",
    "kov_epsilon_unchecked",
    "validated_kov_arguments",
    "fail_probability_unchecked",
    "exact_gap",
    "RandomizedResponse",
    "STEPS_MAX",
    "MP_REL_ERROR",
]

_EPS = float(np.finfo(float).eps)

#: Largest number of composed mechanisms the KOV functions accept (the mpmath window grows as sqrt(k)).
STEPS_MAX = 10**8
# Terms more than this many nats below the largest one are not summed (their total is bounded and added).
_WINDOW_NATS = 60.0
# Up to this many terms are summed in full; beyond, a coarse grid locates the window first.
_FULL_SUM_MAX = 4096
_COARSE_POINTS = 257
#: Relative float64 error bound of delta_RR above which the window is re-summed with mpmath.
MP_REL_ERROR = 1e-8
# Up to this k, kov_epsilon evaluates the profile at all grid points at once (a (k/2)^2 array).
_GRID_MATRIX_MAX = 400


def fail_probability_unchecked(delta0: float, k: int) -> float:
    """1 - (1 - delta0)^k, rounded up: the probability that some of k (eps0, delta0)-DP steps 'fails'.

    The delta0 part of Kairouz, Oh & Viswanath 2015, Thm 3.3 (delta = 1 - (1 - delta0)^k (1 - delta_RR)).
    Arguments are not checked.

    Args:
        delta0: per-step delta, a float in [0, 1] (not checked).
        k: number of steps, an int >= 1 (not checked).

    Returns:
        1 - (1 - delta0)^k rounded up (8 ulps), in [0, 1].
    """
    if delta0 == 0.0:
        return 0.0
    if k == 1:
        return delta0
    value = -math.expm1(k * math.log1p(-delta0))
    return min(1.0, value * (1.0 + 8.0 * _EPS))


def _lse_concave(fn, n: int):
    """log sum_{l=0}^{n-1} exp(fn(l)) for fn concave in l (vectorised over an int array), rounded up.

    Returns (log_sum, lo, hi): terms outside the window [lo, hi) are each below the window's maximum
    minus _WINDOW_NATS; their total is bounded by n times that and added, so the result is an upper
    bound on the float64 sum.
    """
    if n <= 0:
        return -math.inf, 0, 0
    if n <= _FULL_SUM_MAX:
        values = fn(np.arange(n, dtype=float))
        top = float(np.max(values))
        if top == -math.inf:
            return -math.inf, 0, n
        return top + math.log(float(np.sum(np.exp(values - top)))), 0, n
    grid = np.unique(np.linspace(0, n - 1, _COARSE_POINTS).round())
    coarse = fn(grid)
    j = int(np.argmax(coarse))
    top = float(coarse[j])
    if top == -math.inf:
        return -math.inf, 0, n
    above = np.nonzero(coarse > top - _WINDOW_NATS)[0]
    # concavity: the maximum lies within one grid cell of the best grid point, and outside the cells
    # adjacent to the above-threshold grid points every term is below the threshold
    lo = int(grid[max(int(above[0]) - 1, 0)])
    hi = int(grid[min(int(above[-1]) + 1, grid.size - 1)]) + 1
    values = fn(np.arange(lo, hi, dtype=float))
    wtop = float(np.max(values))
    log_sum = wtop + math.log(float(np.sum(np.exp(values - wtop))))
    outside = n - (hi - lo)
    if outside > 0:
        log_sum = float(np.logaddexp(log_sum, math.log(outside) + top - _WINDOW_NATS))
    return log_sum, lo, hi


_SPLITTER = 134217729.0  # 2^27 + 1, Dekker's splitting constant
# Smallest positive epsilon0 used: below it the exact gap computation could underflow. Raising a tiny
# epsilon0 to this value is conservative, since (eps0, delta0)-DP implies (eps0', delta0)-DP for eps0' > eps0.
_EPS0_FLOOR = 1e-280
_EPS0_CEIL = 1e250


def _product_error(a, b, prod):
    """a * b - prod exactly, for prod = fl(a * b) (Dekker's TwoProduct without fma)."""
    c = _SPLITTER * a
    a_hi = c - (c - a)
    a_lo = a - a_hi
    c = _SPLITTER * b
    b_hi = c - (c - b)
    b_lo = b - b_hi
    return ((a_hi * b_hi - prod) + a_hi * b_lo + a_lo * b_hi) + a_lo * b_lo


def exact_gap(m: float | np.ndarray, eps0: float, eps: float) -> float | np.ndarray:
    """m * eps0 - eps for integer-valued m: sign exact, relative error below 2 ulps (float or array).

    The sign decides which terms of delta_RR are active (term l where (k - 2l) eps0 > eps); the product's
    rounding error is recovered exactly by Dekker's TwoProduct (Dekker 1971), without fma.

    Args:
        m: integer-valued float or float array (k - 2l).
        eps0: per-step epsilon, a float.
        eps: epsilon of the composition, a float.

    Returns:
        m * eps0 - eps, float or array, with the exact sign.
    """
    prod = m * eps0
    # prod - eps is exact when it is small (Sterbenz), so adding the product's rounding error is enough
    return (prod - eps) + _product_error(m, eps0, prod)


class RandomizedResponse:
    """k-fold composition of randomized response with parameter eps0 (the KOV dominating pair).

    log_a(l) = log[C(k, l) p^(k-l) q^l], p = e^eps0/(1 + e^eps0), q = 1 - p; term l of delta_RR(eps)
    is active when its gap (k - 2l) eps0 - eps is positive (Kairouz, Oh & Viswanath 2015, Thm 3.3).
    Arguments are not checked (see :func:`validated_kov_arguments`).

    Args:
        epsilon0: per-step epsilon, a float in [0, 1e250]; raised to 1e-280 if smaller (conservative).
        steps: number k of composed steps, an int in [1, 1e8].

    Attributes:
        eps0: the per-step epsilon used (at least 1e-280).
        k: the number of steps.
        eps_top: the float at or just above the real k * eps0, where delta_RR vanishes.
        log_err: absolute error bound of one float64 log-term (the upward margin).
    """

    def __init__(self, epsilon0: float, steps: int):
        eps0, k = epsilon0, steps
        eps0 = max(eps0, _EPS0_FLOOR)  # conservative (see _EPS0_FLOOR)
        self.eps0 = eps0
        self.k = k
        softplus = math.log1p(math.exp(-eps0))
        self.log_p = -softplus
        self.log_q = -(eps0 + softplus)
        self.lgk = float(special.gammaln(k + 1.0))
        # absolute error bound of one float64 log-term: three gammaln (magnitudes <= lgk together twice),
        # two products (<= k |log p|, k |log q|), four additions, log1mexp and logsumexp, each <= 2 ulps
        self.log_err = 8.0 * _EPS * (self.lgk + k * (abs(self.log_p) + abs(self.log_q)) + 4.0)
        self.half = k // 2 + 1  # l = 0 .. floor(k/2) are the only terms that can be active at eps >= 0
        # the float just at or above the real k * eps0: there and beyond every term vanishes
        top = k * eps0
        self.eps_top = float(np.nextafter(top, math.inf)) if _product_error(float(k), eps0, top) > 0 else top
        if self.half <= _FULL_SUM_MAX:
            self._m = k - 2.0 * np.arange(self.half, dtype=float)  # k - 2l
            self._log_a = self.log_a(np.arange(self.half, dtype=float))
            self._prod = self._m * eps0  # (k - 2l) eps0 = _prod + _prod_err exactly
            self._prod_err = _product_error(self._m, eps0, self._prod)
        else:
            self._log_a = None

    def log_a(self, l: np.ndarray) -> np.ndarray:
        """log[C(k, l) p^(k-l) q^l], the log-weight of term l (float64, vectorised).

        Args:
            l: term indices, a float array of integer values in [0, k].

        Returns:
            the log-weights, an array of the shape of ``l``.
        """
        k = self.k
        return (
            self.lgk
            - special.gammaln(l + 1.0)
            - special.gammaln(k - l + 1.0)
            + (k - l) * self.log_p
            + l * self.log_q
        )

    def _gap_at(self, l: int, eps: float) -> float:
        if self._log_a is not None:
            return (float(self._prod[l]) - eps) + float(self._prod_err[l])
        return exact_gap(self.k - 2.0 * l, self.eps0, eps)

    def _active(self, eps: float) -> int:
        """Number n of active terms at eps (they are l = 0 .. n-1)."""
        n = int(min(self.half, max(0.0, math.ceil((self.k - eps / self.eps0) / 2.0))))
        while n > 0 and self._gap_at(n - 1, eps) <= 0:
            n -= 1
        while n < self.half and self._gap_at(n, eps) > 0:
            n += 1
        return n

    @staticmethod
    def _log_terms(log_a, gaps):
        # gaps rounded up by 4 ulps: each log(1 - e^-gap) is then an upper bound. Only the absolute
        # accuracy of the log matters here (it is added to log_a), which log(-expm1(-gap)) has.
        return log_a + np.log(-np.expm1(-gaps * (1.0 + 4.0 * _EPS)))

    def log_delta(self, eps: float, precise: bool = True) -> float:
        """log delta_RR(eps), never below the true value.

        With ``precise=False`` the mpmath re-summation is skipped: still an upper bound, but with the
        (wider) float64 margin.

        Args:
            eps: epsilon of the composition, a float >= 0.
            precise: re-sum with mpmath where the float64 margin exceeds :data:`MP_REL_ERROR`; default True.

        Returns:
            log delta_RR(eps), -inf where no term is active.
        """
        if eps >= self.eps_top:
            return -math.inf
        n = self._active(eps)
        if n == 0:
            return -math.inf
        if self._log_a is not None:
            gaps = (self._prod[:n] - eps) + self._prod_err[:n]
            values = self._log_terms(self._log_a[:n], gaps)
            top = float(values.max())
            return top + math.log(float(np.exp(values - top).sum())) + self.log_err

        def fn(ls):
            return self._log_terms(self.log_a(ls), exact_gap(self.k - 2.0 * ls, self.eps0, eps))

        log_sum, lo, hi = _lse_concave(fn, n)
        if precise and self.log_err > MP_REL_ERROR and log_sum > -math.inf:
            return self._log_delta_mp(eps, lo, hi, n, log_sum)
        return log_sum + self.log_err

    def _log_delta_mp(self, eps: float, lo: int, hi: int, n: int, float_log_sum: float) -> float:
        """The window [lo, hi) of the sum re-done with mpmath (ratio recursion), plus the bounded rest."""
        import mpmath  # here, not at the top: only this rare path needs it (``import privcal`` stays lighter)

        k = self.k
        dps = 25 + int(math.log10(self.lgk + 10.0))
        with mpmath.workdps(dps):
            eps0 = mpmath.mpf(self.eps0)
            e = mpmath.mpf(eps)
            log_p = -mpmath.log1p(mpmath.exp(-eps0))
            log_q = log_p - eps0
            ratio_q_p = mpmath.exp(-eps0)
            term = mpmath.exp(
                mpmath.loggamma(k + 1)
                - mpmath.loggamma(lo + 1)
                - mpmath.loggamma(k - lo + 1)
                + (k - lo) * log_p
                + lo * log_q
            )
            total = mpmath.mpf(0)
            for l in range(lo, hi):
                d = (k - 2 * l) * eps0 - e
                if d > 0:
                    total += term * -mpmath.expm1(-d)
                term *= mpmath.mpf(k - l) / (l + 1) * ratio_q_p
            if total <= 0:
                return -math.inf
            log_sum = float(mpmath.log(total))
        outside = n - (hi - lo)
        if outside > 0:
            # the float64 window maximum is within 1e-6 nats of the true one at this k
            bound = math.log(outside) + float_log_sum - _WINDOW_NATS + 1e-6
            log_sum = float(np.logaddexp(log_sum, bound))
        return log_sum + 1e-12

    def grid_log_deltas(self) -> np.ndarray:
        """log delta_RR at eps = (k - 2i) eps0 for i = 0 .. floor(k/2), all at once (small k only).

        At grid point i the active terms are l < i with gap 2 (i - l) eps0 (Thm 3.3's delta_i); float64
        values with the float margin, used to locate the grid cell of a root.

        Returns:
            the floor(k/2) + 1 values, increasing in i (the first is -inf).
        """
        i = np.arange(1, self.half, dtype=float)[:, None]  # row i = 0 is empty: delta_RR(k eps0) = 0
        l = np.arange(self.half, dtype=float)[None, :]
        active = l < i
        gaps = np.where(active, 2.0 * (i - l) * self.eps0, 1.0)
        values = np.where(active, self._log_a[None, :] + np.log(-np.expm1(-gaps)), -np.inf)
        top = values.max(axis=1)
        rows = top + np.log(np.exp(values - top[:, None]).sum(axis=1)) + self.log_err
        return np.concatenate(([-np.inf], rows))

    def log_partial(self, i: int, shift: bool) -> float:
        """log sum_{l<i} a_l (shift=False) or log sum_{l<i} a_l e^{-(k-2l) eps0} (shift=True); float64.

        Args:
            i: number of leading terms summed, an int in [0, floor(k/2) + 1].
            shift: weight term l by e^{-(k-2l) eps0}.

        Returns:
            the log of the partial sum (-inf when empty).
        """
        if self._log_a is not None:
            values = self._log_a[:i] - (self._m[:i] * self.eps0 if shift else 0.0)
            top = float(np.max(values))
            return top + math.log(float(np.sum(np.exp(values - top))))

        def fn(ls):
            v = self.log_a(ls)
            return v - (self.k - 2.0 * ls) * self.eps0 if shift else v

        return _lse_concave(fn, i)[0]


def validated_kov_arguments(epsilon0: float, delta0: float, steps: int) -> tuple[float, float, int]:
    """The per-step (epsilon0, delta0) and the number of steps of the KOV functions, validated.

    Args:
        epsilon0: per-step epsilon, in [0, 1e250].
        delta0: per-step delta, in [0, 1].
        steps: number k of composed mechanisms, an integer in [1, 1e8].

    Returns:
        (epsilon0, delta0, steps) as (float, float, int).

    Raises:
        ValueError: an argument is outside its range.
    """
    epsilon0 = V.in_closed("epsilon0", epsilon0, 0.0, _EPS0_CEIL)
    delta0 = V.probability("delta0", delta0)
    steps = V.positive_int("steps", steps)
    if steps > STEPS_MAX:
        raise ValueError(f"steps must be in [1, {STEPS_MAX:.0e}], got {steps!r}")
    return epsilon0, delta0, steps


def kov_delta(epsilon0: float, delta0: float, *, steps: int, epsilon: float) -> float:
    """Optimal delta(epsilon) of the k-fold adaptive composition of (epsilon0, delta0)-DP mechanisms.

    delta(eps) = 1 - (1 - delta0)^k (1 - delta_RR(eps)),
    delta_RR(eps) = sum_{l=0}^{k} C(k,l) [e^{(k-l) eps0} - e^eps e^{l eps0}]_+ / (1 + e^eps0)^k,
    the hockey-stick divergence of k-fold randomized response, for EVERY eps >= 0. Kairouz, Oh &
    Viswanath 2015 (ICML), Thm 3.3 gives it at eps = (k - 2i) eps0, where it equals
    1 - (1-delta0)^k (1 - delta_i); between grid points it is the convex hull of the privacy region
    (piecewise linear in e^eps). Log-space sum (module docstring); never below the true value.

    Args:
        epsilon0: per-step epsilon, in [0, 1e250].
        delta0: per-step delta, in [0, 1].
        steps: number k of composed mechanisms, an integer in [1, 1e8].
        epsilon: epsilon of the composition at which delta is evaluated, in [0, inf).

    Returns:
        delta, in [0, 1]: an upper bound on the optimal delta, within about 1e-8 relative.

    Raises:
        ValueError: an argument is outside its range.
    """
    epsilon0, delta0, steps = validated_kov_arguments(epsilon0, delta0, steps)
    epsilon = V.nonnegative("epsilon", epsilon)
    return kov_delta_unchecked(epsilon0, delta0, steps=steps, epsilon=epsilon)


def kov_delta_unchecked(
    epsilon0: float, delta0: float, *, steps: int, epsilon: float, precise: bool = True
) -> float:
    """:func:`kov_delta` without validation: 1 - (1 - delta0)^k (1 - delta_RR), rounded up.

    For callers that validated the arguments (the KOV accountant, the Gaussian KOV search). ``precise=False``
    skips the mpmath re-summation (k beyond about 5e5): still an upper bound, with the float64 margin (relative
    error of delta_RR below 4e-6 at k = 1e8, 3e-7 at k = 1e7).

    Args:
        epsilon0: per-step epsilon, a float in [0, 1e250] (not checked).
        delta0: per-step delta, a float in [0, 1] (not checked).
        steps: number k of composed mechanisms, an int in [1, 1e8] (not checked).
        epsilon: epsilon of the composition, a float in [0, inf) (not checked).
        precise: re-sum with mpmath where the float64 margin exceeds :data:`MP_REL_ERROR`; default True.

    Returns:
        delta, in [0, 1]: an upper bound on the optimal delta.
    """
    k = steps
    fail = fail_probability_unchecked(delta0, k)
    if fail >= 1.0 or epsilon0 == 0.0:
        return fail
    log_rr = RandomizedResponse(epsilon0, k).log_delta(epsilon, precise)
    rr = math.exp(log_rr) if log_rr < 0 else 1.0
    return min(1.0, (fail + (1.0 - fail) * rr) * (1.0 + 4.0 * _EPS))


def kov_epsilon(epsilon0: float, delta0: float, *, steps: int, delta: float) -> float:
    """Smallest epsilon with kov_delta(epsilon0, delta0, steps=k, epsilon=epsilon) <= delta (optimal).

    Inverse of :func:`kov_delta` (Kairouz, Oh & Viswanath 2015, Thm 3.3 at every epsilon): the grid cell
    (k - 2i) eps0 < eps <= (k - 2i + 2) eps0 is found from the monotone profile on the grid (all grid
    points at once for k <= 400, bisection beyond), the root inside it in closed form (there
    delta_RR = A - e^eps B exactly), then moved to the feasible side, so the result is never below
    the true value.

    Args:
        epsilon0: per-step epsilon, in [0, 1e250].
        delta0: per-step delta, in [0, 1].
        steps: number k of composed mechanisms, an integer in [1, 1e8].
        delta: target delta of the composition, in (0, 1).

    Returns:
        epsilon of the composition, in [0, k * epsilon0]: an upper bound on the optimal one.

    Raises:
        ValueError: an argument is outside its range.
        InfeasibleError: 1 - (1 - delta0)^k >= delta (no epsilon is enough).
    """
    epsilon0, delta0, steps = validated_kov_arguments(epsilon0, delta0, steps)
    delta = V.open_unit("delta", delta)
    return kov_epsilon_unchecked(epsilon0, delta0, steps=steps, delta=delta)


def kov_epsilon_unchecked(
    epsilon0: float, delta0: float, *, steps: int, delta: float, precise: bool = True
) -> float:
    """:func:`kov_epsilon` without validation, for callers that validated the arguments.

    Args:
        epsilon0: per-step epsilon, a float in [0, 1e250] (not checked).
        delta0: per-step delta, a float in [0, 1] (not checked).
        steps: number k of composed mechanisms, an int in [1, 1e8] (not checked).
        delta: target delta of the composition, a float in (0, 1) (not checked).
        precise: as in :func:`kov_delta_unchecked` (``False``: still an upper bound); default True.

    Returns:
        epsilon of the composition, in [0, k * epsilon0]: an upper bound on the optimal one.

    Raises:
        InfeasibleError: 1 - (1 - delta0)^k >= delta (no epsilon is enough).
    """
    k = steps
    fail = fail_probability_unchecked(delta0, k)
    if fail >= delta:
        raise InfeasibleError(
            f"no epsilon reaches delta={delta!r}: the {k} steps alone fail with probability "
            f"1 - (1 - delta0)^k = {fail!r} >= delta (delta0={delta0!r})"
        )
    if epsilon0 == 0.0:
        return 0.0
    rr = RandomizedResponse(epsilon0, k)
    epsilon0 = rr.eps0

    def feasible(eps: float, precise: bool = precise) -> bool:
        log_rr = rr.log_delta(eps, precise)
        value = fail + (1.0 - fail) * (math.exp(log_rr) if log_rr < 0 else 1.0)
        return value * (1.0 + 4.0 * _EPS) <= delta

    if feasible(0.0, precise=False):
        return 0.0
    # delta_RR may use at most (delta - fail) / (1 - fail); aim a little lower than the margins
    log_target = math.log(delta - fail) - math.log1p(-fail) - 2.0 * rr.log_err - 64.0 * _EPS

    # Locate the grid cell: smallest i in 1..imax+1 with delta_RR((k-2i) eps0) > target, where the
    # (imax+1)-th "grid point" is eps = 0. delta_RR increases with i.
    imax = k // 2

    def grid(i: int) -> float:
        return max(0.0, (k - 2.0 * i) * epsilon0)

    if k <= _GRID_MATRIX_MAX:
        on_grid = rr.grid_log_deltas()  # increasing in i
        i_star = int(np.searchsorted(on_grid[1:], log_target, side="right")) + 1
        log_rr_b = float(on_grid[i_star - 1]) if i_star > 1 else -math.inf
    else:
        lo_i, hi_i = 1, imax + 1  # the answer i* lies in [lo_i, hi_i]; grid(imax+1) = 0 is infeasible
        while lo_i < hi_i:
            mid = (lo_i + hi_i) // 2
            if rr.log_delta(grid(mid), precise=False) > log_target:
                hi_i = mid
            else:
                lo_i = mid + 1
        i_star = lo_i
        log_rr_b = rr.log_delta(grid(i_star - 1), precise=False) if i_star > 1 else -math.inf
    a = grid(i_star)
    b = rr.eps_top if i_star == 1 else grid(i_star - 1)
    # On (a, b) the active terms are l < i*, so delta_RR(eps) = A - e^eps B exactly, and
    # e^eps = e^b - (target - delta_RR(b)) / B  (conditioning no worse than that of the target).
    log_b_sum = rr.log_partial(i_star, shift=True)
    gap = -math.expm1(min(0.0, log_rr_b - log_target))  # (target - delta_RR(b)) / target
    x = -math.exp(log_target - b - log_b_sum) * gap
    candidate = b + math.log1p(x) if x > -1.0 else a
    candidate = min(max(candidate, a), b)
    # move to the feasible side (b is, up to rounding of the grid point; eps_top always is)
    step = max(candidate, epsilon0) * 16.0 * _EPS
    while candidate < rr.eps_top and not feasible(candidate):
        candidate = min(rr.eps_top, candidate + step)
        step *= 2.0
    return candidate

