"""Brent's root finder in pure Python, so that a calibration does not import ``scipy.optimize``.

``scipy.optimize`` pulls in ``scipy.linalg`` and its solvers, about 0.2 s of CPU at import, while privcal's
calibrations only need one bracketed scalar root. :func:`brentq` is Brent's method (R. P. Brent, *Algorithms
for Minimization without Derivatives*, Prentice-Hall 1973, ch. 4, procedure *zero*) in the variant that
SciPy's ``scipy.optimize.brentq`` implements (inverse quadratic interpolation when three distinct points are
known, secant otherwise, bisection whenever the interpolated step is not short enough). It takes the same
steps in the same floating-point operations, so it returns the same root after the same function calls
(tests/test_roots.py checks both against SciPy on many functions).
"""

from __future__ import annotations

import math
from typing import Callable

__all__ = ["brentq"]

_EPS = 2.220446049250313e-16  # float64 machine epsilon


def brentq(f: Callable[[float], float], a: float, b: float, *, xtol: float = 2e-12, rtol: float = 4 * _EPS,
           maxiter: int = 100) -> float:
    """A root of ``f`` in [a, b], where f(a) and f(b) differ in sign (Brent 1973, ch. 4).

    Stops when the bracket around the best point x is shorter than xtol + rtol |x| (or f(x) = 0), like
    ``scipy.optimize.brentq`` with the same arguments.

    Args:
        f: a real function of one real variable (trusted to return a float).
        a: one end of the bracket, a finite float.
        b: the other end, a finite float; f(a) and f(b) must differ in sign (or one be 0).
        xtol: absolute tolerance, in (0, inf); default 2e-12.
        rtol: relative tolerance, at least 4 x machine epsilon; default 4 x machine epsilon.
        maxiter: the largest number of iterations, an int >= 1; default 100.

    Returns:
        the root's estimate x.

    Raises:
        ValueError: f(a) and f(b) have the same sign, or a tolerance is outside its range.
        RuntimeError: no convergence within ``maxiter`` iterations.
    """
    if not xtol > 0:
        raise ValueError(f"xtol must be in (0, inf), got {xtol!r}")
    if not rtol >= 4 * _EPS:
        raise ValueError(f"rtol must be at least 4 x machine epsilon ({4 * _EPS:g}), got {rtol!r}")
    x_prev, x_cur = float(a), float(b)
    f_prev, f_cur = float(f(x_prev)), float(f(x_cur))
    if f_prev == 0:
        return x_prev
    if f_cur == 0:
        return x_cur
    if math.copysign(1.0, f_prev) == math.copysign(1.0, f_cur):
        raise ValueError(f"f(a) and f(b) must have different signs, got f({a!r}) = {f_prev!r} and f({b!r}) = {f_cur!r}")
    # x_cur: the best estimate; x_blk: the other end of the bracket (f changes sign between them);
    # x_prev: the previous estimate; s_cur, s_prev: the last two steps
    x_blk = f_blk = s_prev = s_cur = 0.0
    for _ in range(maxiter):
        if f_prev != 0 and f_cur != 0 and math.copysign(1.0, f_prev) != math.copysign(1.0, f_cur):
            x_blk, f_blk = x_prev, f_prev  # the sign changed between the last two points: a new bracket
            s_prev = s_cur = x_cur - x_prev
        if abs(f_blk) < abs(f_cur):  # keep the smaller |f| as the estimate
            x_prev, x_cur, x_blk = x_cur, x_blk, x_cur
            f_prev, f_cur, f_blk = f_cur, f_blk, f_cur
        tol = (xtol + rtol * abs(x_cur)) / 2
        half = (x_blk - x_cur) / 2  # the bisection step
        if f_cur == 0 or abs(half) < tol:
            return x_cur
        if abs(s_prev) > tol and abs(f_cur) < abs(f_prev):
            if x_prev == x_blk:  # two distinct points: secant
                step = -f_cur * (x_cur - x_prev) / (f_cur - f_prev)
            else:  # three: inverse quadratic interpolation
                d_prev = (f_prev - f_cur) / (x_prev - x_cur)
                d_blk = (f_blk - f_cur) / (x_blk - x_cur)
                step = -f_cur * (f_blk * d_blk - f_prev * d_prev) / (d_blk * d_prev * (f_blk - f_prev))
            if 2 * abs(step) < min(abs(s_prev), 3 * abs(half) - tol):  # short enough: take it
                s_prev, s_cur = s_cur, step
            else:
                s_prev = s_cur = half
        else:
            s_prev = s_cur = half
        x_prev, f_prev = x_cur, f_cur
        x_cur += s_cur if abs(s_cur) > tol else (tol if half > 0 else -tol)
        f_cur = float(f(x_cur))
    raise RuntimeError(f"Brent's method did not converge in {maxiter} iterations")
