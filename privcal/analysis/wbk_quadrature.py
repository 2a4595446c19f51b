r"""The forward differences of Wang, Balle & Kasiviswanathan's Thm 27 as proven upper bounds: a trapezoid
quadrature with its discretisation, window and rounding errors charged (docs/rdp.md).

For the Gaussian mechanism with noise multiplier s, Delta^l (the l-th forward difference at 0 of
x -> e^{(x-1) x / (2 s^2)}) is an integral over z of phi(z) (e^u - 1)^l, u = z/s - 1/(2 s^2), whose integrand has
two log-concave humps. :func:`forward_difference_rows` sums each hump on the lattice of step :data:`Z_STEP`
over a window of :data:`Z_HALF_WINDOW` around its peak (:func:`hump_peaks`), and charges what the trapezoid
rule misses (:func:`log_discretisation_bound`, Trefethen & Weideman 2014, Thm 5.1), what the window leaves out
and the float sums' rounding; :func:`log_forward_differences_gaussian` keeps the rows per noise multiplier.
``privcal.analysis.subsampling.rdp_without_replacement_gaussian`` builds the RDP on them.
"""

from __future__ import annotations

import collections
import math
import threading

import numpy as np

from privcal.analysis.log_sums import exp_or_zero, segment_logsumexp, segments

__all__ = ["Z_STEP", "Z_HALF_WINDOW", "U", "FD_CACHE", "FD_CACHE_SIZE", "hump_peaks", "forward_difference_rows",
           "log_forward_differences_gaussian", "log_discretisation_bound"]

_LOG2 = math.log(2.0)
_LOG4 = math.log(4.0)


#: trapezoid step of the forward-difference integrals: a power of two, so that every node k * step (k an
#: integer, |k| < 2^48) and every sum of two of them is a float exactly, and the rule's nodes are the lattice
#: of the error bound (docs/rdp.md, section 2); its discretisation term is below e^-5000 of Delta^l there
Z_STEP = 0.0625
#: each log-concave hump (curvature <= -1) is summed over its peak +- 11; what is left out is charged from the
#: window's end terms (below e^-60 of the peak), docs/rdp.md, section 3
Z_HALF_WINDOW = 11.0
#: relative rounding unit of float64 (half an ulp of 1), the unit of the rounding terms of docs/rdp.md, section 4
U = 2.0**-53


def hump_peaks(l: np.ndarray, s: float, z0: float) -> tuple[np.ndarray, np.ndarray]:
    """Peaks of the two log-concave humps of phi(z) (e^u - 1)^l, u = z/s - 1/(2 s^2), on z < z0 and z > z0.

    Args:
        l: the even orders of the forward differences, a float array.
        s: the noise multiplier, in (0, inf).
        z0: where e^u = 1 (z0 = 1 / (2 s)), the boundary between the humps.

    Returns:
        (left, right): each row's peak on z < z0 and on z > z0.
    """

    # both humps bisected in one array (right hump first, then left): the slope d/dz of l log|e^u - 1| - z^2/2
    # is l g / s - z with g = 1 / (1 - e^-u) on either side (g = -1 / (e^-u - 1) is the same float)
    ll = np.concatenate([l, l])
    lo = np.concatenate([np.full_like(l, z0), z0 - 60.0 - 2.0 * l / s - 2.0 * np.sqrt(l)])
    hi = np.concatenate([z0 + l / s + 60.0 + 2.0 * np.sqrt(l), np.full_like(l, z0)])
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        # bisection on the decreasing slope, vectorised over l: the brackets are < 60 + 3 l / s + 4 sqrt(l) wide,
        # so 44 halvings locate each peak to < 2e-6 wherever l / s <= 1e7, far inside the trapezoid step 1/16 the
        # window is rounded to (its +-11 reach keeps what is left out below e^-60 for any offset < 0.1). The bound
        # on what is left out does not rest on this: it checks each window end's slope (_window_ends_point_away)
        for i in range(44):
            m = 0.5 * (lo + hi)
            u = m / s - 0.5 / (s * s)
            pos = ll * (-1.0 / np.expm1(-u)) / s - m > 0
            lo, hi = np.where(pos, m, lo), np.where(pos, hi, m)
            # the caller reads a peak only through round(peak / step), the centre of its window on the lattice:
            # once every bracket lies in one rounding cell (x -> round(x / step) is non-decreasing, the brackets
            # are nested), the 44th midpoint rounds as the current one does, and the halvings stop (in ~20)
            if i >= _PEAK_CHECK_FROM and i % 4 == 0 and np.array_equal(np.round(lo / Z_STEP), np.round(hi / Z_STEP)):
                break
    peak = 0.5 * (lo + hi)
    return peak[l.size:], peak[:l.size]


#: the halvings of :func:`hump_peaks` check from this one on (every 4th) whether the window centres are settled
#: (before it, brackets of width >= 60 * 2^-16 ~ 1e-3 straddle a rounding cell's edge too often to be worth a check)
_PEAK_CHECK_FROM = 16


def log_forward_differences_gaussian(s: float, lmax: int) -> np.ndarray:
    r"""Upper bounds on ln Delta^l for l = 0..lmax (entries at odd l are nan), Delta^l = l-th forward difference at 0
    of x -> e^{(x-1) x / (2 s^2)} = e^{(x-1) eps(x)} for the Gaussian eps(x) = x / (2 s^2) (row 0 exact); read-only.

    The rows of :func:`forward_difference_rows`, kept per s (the last ``FD_CACHE_SIZE`` noise multipliers): a
    calibration asks for the same s with a growing lmax (a probe on a window of orders, then the check on all
    orders; a cap on the orders that doubles), and each row is computed on its own (its peaks, window and sum
    depend on l and s alone), so a larger lmax computes only the rows beyond the kept ones, and a smaller one
    is a prefix of them: the same values, bit for bit, as a fresh computation (tests/test_subsampling.py).

    Args:
        s: the noise multiplier, a float > 0 (trusted).
        lmax: the highest difference order, an int >= 0 (trusted).

    Returns:
        An array of lmax + 1 upper bounds on ln Delta^l (nan at odd l).
    """
    with _FD_LOCK:
        have = FD_CACHE.get(s)
        if have is not None:
            FD_CACHE.move_to_end(s)
    if have is not None and have.size > lmax:
        return have[: lmax + 1]
    top = -1 if have is None else have.size - 1  # rows 0..top are known
    out = np.full(lmax + 1, np.nan)
    out[0] = 0.0
    if have is not None:
        out[: top + 1] = have
    first = max(2, top + 1 + (top + 1) % 2)  # the first even l not yet known
    if first <= lmax:
        out[first::2] = forward_difference_rows(s, np.arange(first, lmax + 1, 2, dtype=float))
    out.setflags(write=False)
    with _FD_LOCK:
        FD_CACHE[s] = out
        FD_CACHE.move_to_end(s)
        while len(FD_CACHE) > FD_CACHE_SIZE:
            FD_CACHE.popitem(last=False)
    return out


#: the forward differences of the last FD_CACHE_SIZE noise multipliers (:func:`log_forward_differences_gaussian`)
#:
#: :meta hide-value:
FD_CACHE: "collections.OrderedDict[float, np.ndarray]" = collections.OrderedDict()
#: how many noise multipliers :data:`FD_CACHE` keeps (least recently used first out)
FD_CACHE_SIZE = 64
_FD_LOCK = threading.Lock()


def forward_difference_rows(s: float, l: np.ndarray) -> np.ndarray:
    r"""Upper bounds on ln Delta^l at each even l >= 2 of the float array ``l`` (uncached; each entry depends on its
    l alone), with a proven error bound charged (docs/rdp.md).

    Since e^{x(x-1)/(2s^2)} = E[W^x] with W = exp(Z/s - 1/(2s^2)), Z ~ N(0, 1),
        Delta^l = E[(W - 1)^l] = int g(z) dz,   g(z) = phi(z) (e^{z/s - 1/(2s^2)} - 1)^l,
    a positive integral for even l (no alternating sum, so no cancellation), summed in log space by the trapezoid
    rule on the lattice z = k h (h = ``Z_STEP``, a power of two: the nodes are exact) over the two log-concave
    humps of g (either side of z0 = 1/(2s)), each over its window centre +- ``Z_HALF_WINDOW``. The value returned
    is ln(T + R + D) + rho, where (docs/rdp.md, sections 2-4)

    * T is the windowed sum, each node's |e^u - 1| raised by the effect of the rounding of u (so that each term
      bounds the exact one from above);
    * R = (1/2) sum of window-end terms e^{t_end} (the outer two ends, and each inner end when the windows leave a
      gap on its side of z0): the lattice points outside the windows, bounded by the curvature <= -1 of ln g on
      each side of z0 once each such end's slope is checked to point away from its hump (a row whose check fails
      is +inf, and the caller's min then takes Thm 9's term);
    * D = 4 e^{-2 pi^2 / h^2} E[(W + 1)^l] / (1 - e^{-4 pi^2 / h^2}): Trefethen & Weideman 2014 (SIAM Review 56,
      Thm 5.1), the trapezoid rule's error for a function analytic in the strip |Im z| < a with
      int |g(x + iy)| dx <= M there is at most 2M / (e^{2 pi a / h} - 1); g is entire,
      |g(x + iy)| <= phi(x) e^{y^2/2} (e^{x/s - 1/(2s^2)} + 1)^l gives M = e^{a^2/2} E[(W + 1)^l], and
      a = 2 pi / h (a factor 2 of margin for the rounding of D itself);
    * rho = 2^-48 (A + n) bounds the rounding of the float evaluation of ln T (A bounds the magnitudes of the
      terms' parts, n the number of nodes).

    tests/test_wbk_certificate.py checks the bound against 300-digit mpmath alternating sums and pins each term.

    Args:
        s: the noise multiplier, in (0, inf).
        l: the even orders, a float array (each >= 2).

    Returns:
        the upper bounds on ln Delta^l, one per entry of ``l`` (+inf where a window check fails).
    """
    z0 = 0.5 / s
    left, right = hump_peaks(l, s, z0)
    half = int(Z_HALF_WINDOW / Z_STEP)
    width = 2 * half + 1
    base = np.arange(-half, half + 1) * Z_STEP
    centre_left = np.round(left / Z_STEP) * Z_STEP
    centre_right = np.round(right / Z_STEP) * Z_STEP
    # both windows on the lattice z = k * step, the left one then the right one; right-window points already in
    # the left one are dropped. One buffer, operation by operation in place: the floating-point operations of the
    # expressions in the comments, in their order, so their values bit for bit
    z = np.empty((l.size, 2 * width))
    np.add(centre_left[:, None], base, out=z[:, :width])
    np.add(centre_right[:, None], base, out=z[:, width:])
    drop = z[:, width:] <= z[:, width - 1:width] + 0.5 * Z_STEP
    c = 0.5 / (s * s)
    z_max = np.maximum(np.abs(centre_left), np.abs(centre_right)) + half * Z_STEP  # >= |z| at every node
    # the computed u differs from z / s - c by at most 3u (|z| / s + c) (four roundings); |e^u - 1| then exceeds
    # |e^u~ - 1| by at most e^u~ e^d d with d = 4u (|z| / s + c), and e^d d <= 2d = 2^-50 (|z| / s + c)
    slack = (z_max / s + c) * 2.0**-50
    u = np.divide(z, s)
    u -= 0.5 / (s * s)  # u = z / s - 1 / (2 s^2)
    with np.errstate(divide="ignore", over="ignore"):
        # ln(|e^u - 1| + e^u slack) <= max(u, 0) + ln(1 - e^{-|u|} + slack): one expm1 and one log for both sides
        terms = np.abs(u)
        for op in (np.negative, np.expm1, np.negative):
            op(terms, out=terms)
        terms += slack[:, None]
        np.log(terms, out=terms)
        terms += np.maximum(u, 0.0, out=u)  # ln(-expm1(-|u|) + slack) + max(u, 0)
    terms *= l[:, None]
    np.multiply(z, 0.5, out=u)
    u *= z
    terms -= u  # l ln(|e^u - 1| + slack) - 0.5 z z
    columns = [0, width - 1, width, 2 * width - 1]  # the windows' first and last nodes
    end_z, end_t = z[:, columns], terms[:, columns]  # copies
    # the inner ends bound the points between the windows on their own side of z0 (if there are such points)
    gap = ~drop[:, 0]
    used = np.ones(end_z.shape, dtype=bool)
    used[:, 1] = gap & (end_z[:, 1] < z0)
    used[:, 2] = gap & (end_z[:, 2] > z0)
    np.copyto(end_t, -np.inf, where=~used)
    np.copyto(terms[:, width:], -np.inf, where=drop)
    log_norm = math.log(Z_STEP) - 0.5 * math.log(2.0 * math.pi)
    log_sum = _row_logsumexp(terms) + log_norm
    # R: the lattice points beyond an end (away from its hump, on its side of z0), weighted h, sum to at most
    # h e^{t_end} / sqrt(2 pi) * sum_{k >= 1} e^{-(k h)^2 / 2} <= e^{t_end} / sqrt(2 pi) * sqrt(pi / 2) = e^{t_end} / 2
    log_rest = _row_logsumexp(end_t) - _LOG2  # (the outer ends' terms are finite)
    log_rest = np.where(_window_ends_point_away(end_z, used, l, s, z0), log_rest, np.inf)
    log_disc = log_discretisation_bound(s, l, Z_STEP)
    rho = (l * (z_max / s + c + 36.0 + abs(math.log(2.0 * s * s))) + z_max * z_max + 2 * width) * 2.0**-48
    # the rounding analysis needs d <= 1/16 (e^d <= 2) and exact nodes (|z / h| < 2^48): z_max / s + c <= 2^47,
    # true for s >= 1.1e-6; a row beyond it is +inf (Thm 9's term is taken)
    rho = np.where(z_max / s + c <= 2.0**47, rho, np.inf)
    with np.errstate(invalid="ignore"):
        return np.logaddexp(np.logaddexp(log_sum, log_rest), log_disc) + rho


def _window_ends_point_away(ends: np.ndarray, used: np.ndarray, l: np.ndarray, s: float, z0: float) -> np.ndarray:
    """Per row, whether the slope of ln g at each window end that bounds points left out (columns: left window's
    first and last node, right window's first and last node; ``used`` marks the inner ends that do) points away from
    its hump: the outer ends on their own side of z0, first nodes on the ascent (slope > 0), last nodes on the
    descent (slope < 0). The slope of
    l ln|e^u - 1| - z^2 / 2 is l / (s (1 - e^-u)) - z; each end is ~11 from its peak, where |slope| >= 10, so a
    margin of 1e-6 of the slope's parts leaves no doubt about its sign."""
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        u = ends / s - 0.5 / (s * s)
        pull = l[:, None] / (s * -np.expm1(-u))
        slope = pull - ends
        margin = 1e-6 * (np.abs(pull) + np.abs(ends) + 1.0)
        up, down = slope > margin, slope < -margin
    ok = up[:, 0] & (ends[:, 0] < z0) & down[:, 3] & (ends[:, 3] > z0)
    ok &= down[:, 1] | ~used[:, 1]
    ok &= up[:, 2] | ~used[:, 2]
    return ok


def log_discretisation_bound(s: float, l: np.ndarray, h: float) -> np.ndarray:
    """ln of twice the trapezoid rule's error bound for Delta^l on the lattice of step h (docs/rdp.md, section 2):
    Trefethen & Weideman 2014, Thm 5.1, with M = e^{a^2/2} E[(W + 1)^l], E[(W + 1)^l] = sum_k C(l, k) e^{k(k-1)/(2s^2)},
    at a = 2 pi / h: ln 4 - 2 pi^2 / h^2 - ln(1 - e^{-4 pi^2 / h^2}) + ln E[(W + 1)^l] (the factor 2 is margin).

    Args:
        s: the noise multiplier, in (0, inf).
        l: the even orders, a float array.
        h: the lattice step of the trapezoid rule, in (0, inf).

    Returns:
        the log of the charged discretisation error, one per entry of ``l``.
    """
    ints = tuple(int(x) for x in l)
    k, _, log_binom, offsets, lengths, _ = segments(ints, 0)
    log_moment = segment_logsumexp(log_binom + k * (k - 1.0) / (2.0 * s * s), offsets, lengths)
    a = 2.0 * math.pi / h
    return _LOG4 - 0.5 * a * a - math.log(-math.expm1(-2.0 * math.pi * a / h)) + log_moment


def _row_logsumexp(a: np.ndarray) -> np.ndarray:
    """ln sum_j e^{a[i, j]} of each row of a 2-D float array whose rows have a finite maximum; overwrites ``a``.

    The operations of ``scipy.special.logsumexp(a, axis=1)`` (SciPy >= 1.15) for such rows, hence its values
    bit for bit, without its array-API dispatch (which cost more than the sum itself, ~3 ms a call here):
    the maxima are taken out of the sum (their terms e^0 set to 0, as e^-inf would be) and added back through
    log1p, ln(count of maxima) and the maximum.
    """
    peak = np.max(a, axis=1, keepdims=True)
    mask = a == peak
    count = np.count_nonzero(mask, axis=1).astype(a.dtype)[:, None]
    np.subtract(a, peak, out=a)
    exp_or_zero(a)
    np.copyto(a, 0.0, where=mask)
    total = np.sum(a, axis=1, keepdims=True, dtype=a.dtype)
    total = np.where(total == 0, total, total / count)
    return (np.log1p(total) + np.log(count) + peak)[:, 0]
