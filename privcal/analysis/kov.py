r"""Kairouz, Oh & Viswanath 2015: optimal homogeneous composition, and the composition theorems it refines.

* the exact profile of k-fold adaptive composition of (epsilon0, delta0)-DP mechanisms at every
  epsilon (:func:`kov_delta`), its inverse (:func:`kov_epsilon`), Thm 3.3's grid
  (:func:`kov_epsilon_grid_paper`) and the closed form of Thm 3.4 (:func:`kov_epsilon_approx`),
  Kairouz, Oh & Viswanath 2015 (ICML; arXiv 1311.0776);
* Dwork, Rothblum & Vadhan 2010 advanced composition (:func:`drv_epsilon`) and basic composition
  (:func:`basic_epsilon`), the bounds KOV improves on;
* KOV for the Gaussian: the per-step (epsilon0, delta0) taken from the exact single-step Gaussian
  profile and optimised over epsilon0 (:func:`kov_gaussian_epsilon`, :func:`kov_gaussian_delta`).

The number of composed mechanisms is ``steps`` (k in the papers). Every function takes the per-step
mechanism's parameters positionally, then keyword-only ``steps`` and the query (``delta`` for an
epsilon, ``epsilon`` for a delta), e.g. ``kov_epsilon(0.1, 1e-8, steps=100, delta=1e-5)``, so that an
old positional call fails loudly instead of swapping numbers. ``privcal.analysis.composition`` re-exports every
public name of this module.

Numerics of the KOV profile. With p = e^eps0 / (1 + e^eps0), q = 1 - p,

    delta_RR(eps) = sum_{l : (k-2l) eps0 > eps} C(k,l) p^(k-l) q^l (1 - e^(eps - (k-2l) eps0))

is a sum of positive terms whose logarithms are concave in l; it is summed in log space over the
window of terms within 60 nats of the largest one (the neglected rest is bounded and added), with an
upward margin that covers float64 rounding, so the value returned is never below the true one. When
that rounding bound exceeds 1e-8 (k beyond about 5 * 10^5) the window is re-summed with mpmath.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import special

from .. import _validate as V
from . import gaussian as G
from ..errors import InfeasibleError

__all__ = [
    "kov_delta",
    "kov_epsilon",
    "kov_epsilon_grid_paper",
    "kov_epsilon_approx",
    "drv_epsilon",
    "basic_epsilon",
    "kov_gaussian_epsilon",
    "kov_gaussian_epsilon_with_step",
    "kov_gaussian_delta",
    "kov_gaussian_delta_with_step",
]

_EPS = float(np.finfo(float).eps)
_LN2 = math.log(2.0)

# Largest number of composed mechanisms the KOV functions accept (the mpmath window grows as sqrt(k)).
_K_MAX = 10**8
# Terms more than this many nats below the largest one are not summed (their total is bounded and added).
_WINDOW_NATS = 60.0
# Up to this many terms are summed in full; beyond, a coarse grid locates the window first.
_FULL_SUM_MAX = 4096
_COARSE_POINTS = 257
# Relative float64 error bound of delta_RR above which the window is re-summed with mpmath.
_MP_REL_ERROR = 1e-8
# Up to this k, kov_epsilon evaluates the profile at all grid points at once (a (k/2)^2 array).
_GRID_MATRIX_MAX = 400


def _log_e_plus(log_x: float) -> float:
    """ln(e + x) from ln x, without overflow."""
    return float(np.logaddexp(1.0, log_x))


# ---------------------------------------------------------------------------------------------------
# Kairouz, Oh & Viswanath 2015: optimal homogeneous composition


def _log1mexp(x: np.ndarray) -> np.ndarray:
    """log(1 - e^x) for x < 0, accurate over the whole range."""
    with np.errstate(divide="ignore"):
        return np.where(x > -_LN2, np.log(-np.expm1(x)), np.log1p(-np.exp(x)))


def _fail_probability(delta0: float, k: int) -> float:
    """1 - (1 - delta0)^k, rounded up (the probability that some step 'fails')."""
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


def _gap(m, eps0: float, eps: float):
    """m * eps0 - eps for integer-valued m: sign exact, relative error below 2 ulps (float or array)."""
    prod = m * eps0
    # prod - eps is exact when it is small (Sterbenz), so adding the product's rounding error is enough
    return (prod - eps) + _product_error(m, eps0, prod)


class _RandomizedResponse:
    """k-fold composition of randomized response with parameter eps0 (the KOV dominating pair).

    log_a(l) = log[C(k, l) p^(k-l) q^l], p = e^eps0/(1 + e^eps0), q = 1 - p; term l of delta_RR(eps)
    is active when its gap (k - 2l) eps0 - eps is positive. Private helper.
    """

    def __init__(self, eps0: float, k: int):
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
        return _gap(self.k - 2.0 * l, self.eps0, eps)

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
            return self._log_terms(self.log_a(ls), _gap(self.k - 2.0 * ls, self.eps0, eps))

        log_sum, lo, hi = _lse_concave(fn, n)
        if precise and self.log_err > _MP_REL_ERROR and log_sum > -math.inf:
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
        """log sum_{l<i} a_l (shift=False) or log sum_{l<i} a_l e^{-(k-2l) eps0} (shift=True); float64."""
        if self._log_a is not None:
            values = self._log_a[:i] - (self._m[:i] * self.eps0 if shift else 0.0)
            top = float(np.max(values))
            return top + math.log(float(np.sum(np.exp(values - top))))

        def fn(ls):
            v = self.log_a(ls)
            return v - (self.k - 2.0 * ls) * self.eps0 if shift else v

        return _lse_concave(fn, i)[0]


def _validate_kov(epsilon0, delta0, steps) -> tuple[float, float, int]:
    """Validate the per-step (epsilon0, delta0) and the number of steps of the KOV functions."""
    epsilon0 = V.in_closed("epsilon0", epsilon0, 0.0, _EPS0_CEIL)
    delta0 = V.probability("delta0", delta0)
    steps = V.positive_int("steps", steps)
    if steps > _K_MAX:
        raise ValueError(f"steps must be in [1, {_K_MAX:.0e}], got {steps!r}")
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
    epsilon0, delta0, steps = _validate_kov(epsilon0, delta0, steps)
    epsilon = V.nonnegative("epsilon", epsilon)
    return _kov_delta(epsilon0, delta0, steps=steps, epsilon=epsilon)


def _kov_delta(epsilon0: float, delta0: float, *, steps: int, epsilon: float, precise: bool = True) -> float:
    """kov_delta for validated inputs: 1 - (1 - delta0)^k (1 - delta_RR), rounded up.

    ``precise=False`` skips the mpmath re-summation (k beyond about 5e5): still an upper bound, with the
    float64 margin (relative error of delta_RR below 4e-6 at k = 1e8, 3e-7 at k = 1e7).
    """
    k = steps
    fail = _fail_probability(delta0, k)
    if fail >= 1.0 or epsilon0 == 0.0:
        return fail
    log_rr = _RandomizedResponse(epsilon0, k).log_delta(epsilon, precise)
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
    epsilon0, delta0, steps = _validate_kov(epsilon0, delta0, steps)
    delta = V.open_unit("delta", delta)
    return _kov_epsilon(epsilon0, delta0, steps=steps, delta=delta)


def _kov_epsilon(epsilon0: float, delta0: float, *, steps: int, delta: float, precise: bool = True) -> float:
    """kov_epsilon for validated inputs; ``precise=False`` as in :func:`_kov_delta` (still an upper bound)."""
    k = steps
    fail = _fail_probability(delta0, k)
    if fail >= delta:
        raise InfeasibleError(
            f"no epsilon reaches delta={delta!r}: the {k} steps alone fail with probability "
            f"1 - (1 - delta0)^k = {fail!r} >= delta (delta0={delta0!r})"
        )
    if epsilon0 == 0.0:
        return 0.0
    rr = _RandomizedResponse(epsilon0, k)
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


def kov_epsilon_grid_paper(epsilon0: float, delta0: float, *, steps: int) -> list[tuple[float, float]]:
    """Kairouz, Oh & Viswanath 2015, Thm 3.3 as printed: the pairs (eps_i, delta_i), i = 0 .. floor(k/2).

    eps_i = (k - 2i) eps0,  delta_i = 1 - (1 - delta0)^k (1 - delta_i^RR),
    delta_i^RR = sum_{l=0}^{i-1} C(k,l) (e^{(k-l) eps0} - e^{(k-2i+l) eps0}) / (1 + e^eps0)^k.
    Each sum is evaluated term by term in log space (O(k^2) work: meant for checks, k up to ~10^4).

    Args:
        epsilon0: per-step epsilon, in [0, 1e250].
        delta0: per-step delta, in [0, 1].
        steps: number k of composed mechanisms, an integer in [1, 20000].

    Returns:
        the floor(k/2) + 1 pairs (epsilon_i, delta_i), epsilon decreasing.

    Raises:
        ValueError: an argument is outside its range.
    """
    epsilon0, delta0, steps = _validate_kov(epsilon0, delta0, steps)
    if steps > 20000:
        raise ValueError(f"steps must be <= 20000 for the O(k^2) grid, got {steps!r}")
    return _kov_epsilon_grid_paper(epsilon0, delta0, steps=steps)


def _kov_epsilon_grid_paper(epsilon0: float, delta0: float, *, steps: int) -> list[tuple[float, float]]:
    """kov_epsilon_grid_paper for validated inputs."""
    k = steps
    fail = _fail_probability(delta0, k)
    log_norm = k * float(np.logaddexp(0.0, epsilon0))  # log (1 + e^eps0)^k
    ls = np.arange(k // 2 + 1, dtype=float)
    log_binom = float(special.gammaln(k + 1.0)) - special.gammaln(ls + 1.0) - special.gammaln(k - ls + 1.0)
    pairs = []
    for i in range(k // 2 + 1):
        if i == 0 or epsilon0 == 0.0:
            rr = 0.0
        else:
            l = ls[:i]
            # e^{(k-l) eps0} - e^{(k-2i+l) eps0} = e^{(k-l) eps0} (1 - e^{-2(i-l) eps0})
            terms = log_binom[:i] + (k - l) * epsilon0 + _log1mexp(-2.0 * (i - l) * epsilon0) - log_norm
            top = float(np.max(terms))
            rr = math.exp(top + math.log(float(np.sum(np.exp(terms - top)))))
        pairs.append(((k - 2 * i) * epsilon0, min(1.0, fail + (1.0 - fail) * rr)))
    return pairs


def kov_epsilon_approx(epsilon0: float, delta0: float, *, steps: int, delta: float) -> float:
    """Closed-form epsilon of Kairouz, Oh & Viswanath 2015, Thm 3.4 (an upper bound on the optimal one).

    eps~ = min{ k eps0,
                (e^eps0 - 1) eps0 k / (e^eps0 + 1) + eps0 sqrt(2k ln(e + sqrt(k eps0^2) / delta~)),
                (e^eps0 - 1) eps0 k / (e^eps0 + 1) + eps0 sqrt(2k ln(1 / delta~)) },
    where delta~ solves 1 - (1 - delta0)^k (1 - delta~) = delta.

    Args:
        epsilon0: per-step epsilon, in [0, 1e250].
        delta0: per-step delta, in [0, 1].
        steps: number k of composed mechanisms, an integer in [1, 1e8].
        delta: target delta of the composition, in (0, 1).

    Returns:
        epsilon of the composition, in [0, k * epsilon0].

    Raises:
        ValueError: an argument is outside its range.
        InfeasibleError: 1 - (1 - delta0)^k >= delta (delta~ would not be positive).
    """
    epsilon0, delta0, steps = _validate_kov(epsilon0, delta0, steps)
    delta = V.open_unit("delta", delta)
    return _kov_epsilon_approx(epsilon0, delta0, steps=steps, delta=delta)


def _kov_epsilon_approx(epsilon0: float, delta0: float, *, steps: int, delta: float) -> float:
    """kov_epsilon_approx for validated inputs."""
    k = steps
    fail = _fail_probability(delta0, k)
    if fail >= delta:
        raise InfeasibleError(
            f"Thm 3.4 needs delta~ > 0 but 1 - (1 - delta0)^k = {fail!r} >= delta = {delta!r}"
        )
    log_dt = math.log(delta - fail) - math.log1p(-fail)  # log delta~
    if epsilon0 == 0.0:
        return 0.0
    drift = k * epsilon0 * math.tanh(epsilon0 / 2.0)  # (e^eps0 - 1) eps0 k / (e^eps0 + 1)
    first = drift + epsilon0 * math.sqrt(2.0 * k * _log_e_plus(math.log(math.sqrt(k) * epsilon0) - log_dt))
    second = drift + epsilon0 * math.sqrt(2.0 * k * -log_dt)
    return min(k * epsilon0, first, second)


def drv_epsilon(epsilon0: float, delta0: float, *, steps: int, delta: float) -> float:
    """Advanced composition: eps = sqrt(2k ln(1/delta')) eps0 + k eps0 (e^eps0 - 1), delta' = delta - k delta0

    Dwork, Rothblum & Vadhan 2010 (FOCS), Thm III.3; Dwork & Roth 2014, Thm 3.20: k-fold adaptive
    composition of (eps0, delta0)-DP mechanisms is (eps, k delta0 + delta')-DP.

    Args:
        epsilon0: per-step epsilon, in [0, 1e250].
        delta0: per-step delta, in [0, 1].
        steps: number k of composed mechanisms, an integer in [1, 1e8].
        delta: target delta of the composition, in (0, 1).

    Returns:
        epsilon of the composition, in [0, inf).

    Raises:
        ValueError: an argument is outside its range.
        InfeasibleError: delta' = delta - k delta0 <= 0.
    """
    epsilon0, delta0, steps = _validate_kov(epsilon0, delta0, steps)
    delta = V.open_unit("delta", delta)
    return _drv_epsilon(epsilon0, delta0, steps=steps, delta=delta)


def _drv_epsilon(epsilon0: float, delta0: float, *, steps: int, delta: float) -> float:
    """drv_epsilon for validated inputs."""
    k = steps
    slack = delta - k * delta0
    if not slack > 0:
        raise InfeasibleError(f"advanced composition needs delta - k*delta0 > 0, got {slack!r}")
    return math.sqrt(2.0 * k * -math.log(slack)) * epsilon0 + k * epsilon0 * math.expm1(epsilon0)


def basic_epsilon(epsilon0: float, delta0: float, *, steps: int, delta: float) -> float:
    """Basic composition: k (eps0, delta0)-DP steps are (k eps0, k delta0)-DP; k eps0 if k delta0 <= delta.

    Dwork & Roth 2014, Thm 3.16.

    Args:
        epsilon0: per-step epsilon, in [0, 1e250].
        delta0: per-step delta, in [0, 1].
        steps: number k of composed mechanisms, an integer in [1, 1e8].
        delta: target delta of the composition, in (0, 1).

    Returns:
        epsilon of the composition, k * epsilon0.

    Raises:
        ValueError: an argument is outside its range.
        InfeasibleError: k delta0 > delta.
    """
    epsilon0, delta0, steps = _validate_kov(epsilon0, delta0, steps)
    delta = V.open_unit("delta", delta)
    return _basic_epsilon(epsilon0, delta0, steps=steps, delta=delta)


def _basic_epsilon(epsilon0: float, delta0: float, *, steps: int, delta: float) -> float:
    """basic_epsilon for validated inputs."""
    k = steps
    if k * delta0 > delta:
        raise InfeasibleError(f"basic composition needs k*delta0 <= delta, got {k * delta0!r} > {delta!r}")
    return k * epsilon0


# ---------------------------------------------------------------------------------------------------
# KOV with the per-step (eps0, delta0) of the exact Gaussian profile


_STEP_GRID = 12  # coarse points of the eps0 search
_STEP_XTOL = 1e-4  # tolerance in log eps0 of the refinement
# privcal.analysis.gaussian keeps the relative error of delta_exact near 1e-11 (its _FLOAT_ERROR_LIMIT, plus a
# few ulps from exp/log); the per-step delta0 is raised by ten times that, so that rounding there can
# never make a KOV bound fall below the true profile.
_DELTA0_INFLATION = 1.0 + 1e-10
# Beyond this many steps the Gaussian KOV search prices each eps0 by the closed form of Thm 3.4 (an upper
# bound on the optimal composition; sigma about 20% larger at 1e6 to 1e8 steps) instead of the exact profile, whose cost grows
# like sqrt(k) per evaluation (a calibration at 1e7 steps took up to 20 s, at 1e8 minutes). Below it, the
# profile is summed in float64 with its rounding margin (no mpmath): relative error of delta below 3e-8.
_K_CLOSED_FORM = 10**6
# Upward relative margin on the float64 evaluation of Thm 3.4 (a few dozen roundings of 1.1e-16 each).
_CLOSED_FORM_MARGIN = 1e-12


def _uses_closed_form(steps: int) -> bool:
    """Whether the Gaussian KOV functions price ``steps`` steps by Thm 3.4's closed form."""
    return steps > _K_CLOSED_FORM


def _step_epsilon(eps0: float, delta0: float, steps: int, delta: float) -> float:
    """Composed epsilon of k (eps0, delta0) steps for the Gaussian search: exact profile (float64 margin),
    or Thm 3.4's closed form beyond _K_CLOSED_FORM steps. Always an upper bound on the optimal epsilon."""
    if _uses_closed_form(steps):
        return _kov_epsilon_approx(eps0, delta0, steps=steps, delta=delta) * (1.0 + _CLOSED_FORM_MARGIN)
    return _kov_epsilon(eps0, delta0, steps=steps, delta=delta, precise=False)


def _step_delta(eps0: float, mu0: float) -> float:
    """Per-step delta0 = delta_exact(eps0, mu0) (Balle & Wang 2018), rounded up past its error."""
    return min(1.0, G._delta_exact(eps0, mu0) * _DELTA0_INFLATION)


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
    if steps > _K_MAX:
        raise ValueError(f"steps must be in [1, {_K_MAX:.0e}], got {steps!r}")
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
    eps0_min = G._epsilon_exact(delta0_max, mu0)
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
    return _kov_gaussian_epsilon(sigma, steps=steps, delta=delta, sensitivity=sensitivity)


def _kov_gaussian_epsilon(sigma: float, *, steps: int, delta: float, sensitivity: float = 1.0) -> float:
    """kov_gaussian_epsilon for validated inputs."""
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
        value = _kov_delta(eps0, delta0, steps=steps, epsilon=epsilon, precise=False)
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
    return _kov_gaussian_delta(sigma, steps=steps, epsilon=epsilon, sensitivity=sensitivity)


def _kov_gaussian_delta(sigma: float, *, steps: int, epsilon: float, sensitivity: float = 1.0) -> float:
    """kov_gaussian_delta for validated inputs."""
    return _kov_gaussian_delta_with_step(sigma, steps=steps, epsilon=epsilon, sensitivity=sensitivity)[0]
