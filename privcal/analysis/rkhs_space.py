r"""The RKHS of Wang & Hegde's functional mechanism: its kernel, inner product and norms.

Kernel ``K(x, y) = exp(-beta |x - y|)`` on ``[0, 1]`` (or ``[a, b]``), whose RKHS is the Sobolev
space H^1 with the inner product of Lemma 6 (Wang & Hegde, NeurIPS 2019, App. C):

    <f, g> = 1/2 (f(0) g(0) + f(1) g(1)) + 1/(2 beta) * int_0^1 (f' g' + beta^2 f g) dx.

Norms of callables (quadrature), of sampled functions (exact for the piecewise-linear interpolant) and of
kernel expansions (closed form ``a^T K a``). On an interval ``[a, b]`` the same formula is used with ``a, b``
in place of ``0, 1`` (the pull-back of the ``[0, 1]`` space with ``beta_01 = beta * (b - a)``). The
sensitivities measured in this norm are in :mod:`privcal.analysis.rkhs_sensitivity`; what the tests found
about Lemma 6 is summarised in :mod:`privcal.analysis.rkhs`, which re-exports both modules.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable
from dataclasses import dataclass
from typing import Optional

import numpy as np

from numpy.typing import ArrayLike

from privcal import _validate as V
from privcal.errors import PrivcalError

__all__ = [
    "kernel",
    "gram",
    "inner_product",
    "norm_squared",
    "norm",
    "norm_squared_sampled",
    "KernelExpansion",
    "expansion",
    "expansion_norm_squared",
    "expansion_inner_product",
]

_UNIT = (0.0, 1.0)
# Quadrature: requested accuracy, and the reported error above which the result is not trusted.
_EPSABS = 1e-14
_EPSREL = 1e-11
_TRUST_REL = 1e-8
_QUAD_LIMIT = 200
# Finite-difference step, relative to the interval length (4th-order stencils).
_FD_STEP = 2.0**-13


# ----------------------------------------------------------------------------------------------
# input checks (array-valued; scalars go through privcal._validate)


def _interval(interval) -> tuple[float, float]:
    try:
        a, b = interval
    except (TypeError, ValueError):
        raise ValueError(f"interval must be a pair (a, b) with a < b, got {interval!r}") from None
    for name, x in (("interval[0]", a), ("interval[1]", b)):
        if isinstance(x, bool) or not isinstance(x, numbers.Real) or not math.isfinite(x):
            raise ValueError(f"{name} must be a finite real number, got {x!r}")
    a, b = float(a), float(b)
    if not a < b:
        raise ValueError(f"interval must be a pair (a, b) with a < b, got {interval!r}")
    return a, b


def _finite_array(name: str, value, *, ndim: int | None = None) -> np.ndarray:
    try:
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be an array of real numbers, got {value!r}") from None
    if ndim is not None and arr.ndim != ndim:
        raise ValueError(f"{name} must be a {ndim}-D array, got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must contain only finite numbers, got {value!r}")
    return arr


def _points_in(name: str, value, a: float, b: float) -> np.ndarray:
    arr = _finite_array(name, value, ndim=1)
    if arr.size == 0:
        raise ValueError(f"{name} must not be empty")
    bad = arr[(arr < a) | (arr > b)]
    if bad.size:
        raise ValueError(f"{name} must lie in [{a:g}, {b:g}], got {bad[0]!r}")
    return arr


def _callable(name: str, value) -> Callable:
    if not callable(value):
        raise ValueError(f"{name} must be callable, got {value!r}")
    return value


def _evaluate(name: str, func: Callable, x: float) -> float:
    y = func(x)
    try:
        y = float(y)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must return a real number, got {y!r} at x={x!r}") from None
    if not math.isfinite(y):
        raise ValueError(f"{name} must be finite on the interval, got {y!r} at x={x!r}")
    return y


# ----------------------------------------------------------------------------------------------
# kernel


def kernel(x: ArrayLike, y: ArrayLike, beta: float) -> np.ndarray:
    """Laplace (Ornstein-Uhlenbeck) kernel of the Lemma 6 RKHS, broadcast over ``x`` and ``y``.

    Formula: ``K(x, y) = exp(-beta |x - y|)``.
    Source: Wang & Hegde 2019, Lemma 6.

    Args:
        x: first argument(s), finite real numbers (array-like, broadcast against ``y``).
        y: second argument(s), finite real numbers (array-like).
        beta: kernel parameter beta of exp(-beta |x - y|), in (0, inf) (inverse length).

    Returns:
        the kernel values, in (0, 1], with the broadcast shape of ``x`` and ``y``.

    Raises:
        ValueError: an argument is outside its range.
    """
    beta = V.positive("beta", beta)
    x = _finite_array("x", x)
    y = _finite_array("y", y)
    return _kernel(x, y, beta)


def _kernel(x: np.ndarray, y: np.ndarray, beta: float) -> np.ndarray:
    """kernel for validated inputs."""
    return np.exp(-beta * np.abs(x - y))


def gram(points: ArrayLike, beta: float) -> np.ndarray:
    """Gram matrix of the Lemma 6 kernel at ``points`` (1-D).

    Formula: ``G[i, j] = exp(-beta |x_i - x_j|)``; positive definite for distinct points, with
    ``det G = prod_i (1 - exp(-2 beta (x_(i+1) - x_(i))))`` over the sorted points (Markov
    property of the Ornstein-Uhlenbeck process).
    Source: Wang & Hegde 2019, Lemma 6 (kernel); Prop. 4 (the mechanism's covariance).

    Args:
        points: the points x_i, a 1-D array of finite real numbers.
        beta: kernel parameter beta of exp(-beta |x - y|), in (0, inf).

    Returns:
        the n x n Gram matrix.

    Raises:
        ValueError: an argument is outside its range.
    """
    beta = V.positive("beta", beta)
    points = _finite_array("points", points, ndim=1)
    return _gram(points, beta)


def _gram(points: np.ndarray, beta: float) -> np.ndarray:
    """gram for validated inputs."""
    x = points
    return np.exp(-beta * np.abs(x[:, None] - x[None, :]))


# ----------------------------------------------------------------------------------------------
# inner product of callables (quadrature)


def _derivative(func: Callable, x: float, lo: float, hi: float, step: float) -> float:
    """4th-order finite difference of ``func`` at ``x`` using only points of ``[lo, hi]``.

    Central stencil where it fits, otherwise the one-sided stencil towards the larger side; the
    step never exceeds an eighth of the piece, so a kink at a piece boundary is never straddled.
    """
    h = min(step, (hi - lo) / 8.0)
    if x - 2 * h >= lo and x + 2 * h <= hi:
        fm2, fm1, fp1, fp2 = (func(x + j * h) for j in (-2, -1, 1, 2))
        return float((fm2 - 8 * fm1 + 8 * fp1 - fp2) / (12 * h))
    s = 1.0 if x - lo < hi - x else -1.0
    f0, f1, f2, f3, f4 = (func(x + s * j * h) for j in range(5))
    return float(s * (-25 * f0 + 48 * f1 - 36 * f2 + 16 * f3 - 3 * f4) / (12 * h))


def _knots(a: float, b: float, breakpoints: np.ndarray | None) -> np.ndarray:
    """[a, breakpoints inside (a, b) ..., b], sorted (breakpoints already validated)."""
    if breakpoints is None:
        return np.array([a, b])
    pts = breakpoints
    inner = pts[(pts > a) & (pts < b)]
    return np.unique(np.concatenate(([a], inner, [b])))


def _quad_piece(integrand: Callable, lo: float, hi: float) -> float:
    from scipy import integrate  # here, not at the top: scipy.integrate pulls in scipy.optimize (~0.2 s at import)

    out = integrate.quad(
        integrand, lo, hi, epsabs=_EPSABS, epsrel=_EPSREL, limit=_QUAD_LIMIT, full_output=1
    )
    value, abserr = out[0], out[1]
    if not math.isfinite(value):
        raise PrivcalError(f"quadrature returned {value!r} on [{lo:g}, {hi:g}]")
    if len(out) > 3:  # QUADPACK flagged a problem (ier > 0)
        divergent = "divergent" in out[3]
        if divergent or abserr > max(_TRUST_REL * abs(value), 1e2 * _EPSABS):
            raise PrivcalError(
                f"quadrature on [{lo:g}, {hi:g}] cannot be trusted (value {value!r}, error "
                f"estimate {abserr!r}): {out[3].strip()} -- the norm may be infinite; otherwise "
                "pass the kinks as breakpoints and exact derivatives"
            )
    return value


@dataclass(frozen=True)
class _Form:
    """The arguments of the Lemma 6 form <f, g>: the functions, their derivatives (None: finite differences),
    beta, the interval and the kinks (``g``, ``dg`` unused for <f, f>)."""

    f: Callable
    g: Optional[Callable]
    beta: float
    df: Optional[Callable] = None
    dg: Optional[Callable] = None
    interval: tuple = _UNIT
    breakpoints: object = None


def _validate_h1(form: _Form, *, same: bool) -> _Form:
    """Validate the arguments of inner_product / norm_squared / norm (g, dg unused when ``same``)."""
    f, g, df, dg, breakpoints = form.f, form.g, form.df, form.dg, form.breakpoints
    beta = V.positive("beta", form.beta)
    interval = _interval(form.interval)
    f = _callable("f", f)
    if df is not None:
        df = _callable("df", df)
    if not same:
        g = _callable("g", g)
        if dg is not None:
            dg = _callable("dg", dg)
    if breakpoints is not None:
        breakpoints = _finite_array("breakpoints", breakpoints, ndim=1)
    return _Form(f, g, beta, df, dg, interval, breakpoints)


def _h1_form(form: _Form, *, same: bool) -> float:
    """The Lemma 6 form <f, g> (or <f, f> when ``same``) for validated inputs."""
    f, g, beta, df, dg, interval, breakpoints = (
        form.f, form.g, form.beta, form.df, form.dg, form.interval, form.breakpoints)
    a, b = interval
    knots = _knots(a, b, breakpoints)
    step = _FD_STEP * (b - a)

    fa, fb = _evaluate("f", f, a), _evaluate("f", f, b)
    if same:
        boundary = 0.5 * (fa * fa + fb * fb)
    else:
        boundary = 0.5 * (fa * _evaluate("g", g, a) + fb * _evaluate("g", g, b))

    total = 0.0
    beta2 = beta * beta
    for lo, hi in zip(knots[:-1], knots[1:]):
        lo, hi = float(lo), float(hi)

        def dfx(x, lo=lo, hi=hi):
            return float(df(x)) if df is not None else _derivative(f, x, lo, hi, step)

        if same:

            def integrand(x, dfx=dfx):
                fx = float(f(x))
                return dfx(x) ** 2 + beta2 * fx * fx

        else:

            def dgx(x, lo=lo, hi=hi):
                return float(dg(x)) if dg is not None else _derivative(g, x, lo, hi, step)

            def integrand(x, dfx=dfx, dgx=dgx):
                return dfx(x) * dgx(x) + beta2 * float(f(x)) * float(g(x))

        total += _quad_piece(integrand, lo, hi)
    return boundary + total / (2.0 * beta)


def inner_product(
    f: Callable[[float], float],
    g: Callable[[float], float],
    beta: float,
    *,
    df: Callable[[float], float] | None = None,
    dg: Callable[[float], float] | None = None,
    interval: tuple[float, float] = _UNIT,
    breakpoints: ArrayLike | None = None,
) -> float:
    r"""Lemma 6 inner product of two callables on ``interval = (a, b)``, by adaptive quadrature.

    Formula: ``<f, g> = 1/2 (f(a) g(a) + f(b) g(b)) + 1/(2 beta) int_a^b (f' g' + beta^2 f g) dx``
    (``a, b = 0, 1`` in the paper). On ``[a, b]`` this equals the ``[0, 1]`` inner product of
    ``F(t) = f(a + (b - a) t)`` with ``beta`` replaced by ``beta (b - a)``.
    Source: Wang & Hegde 2019, Lemma 6 (App. C).

    ``f`` and ``g`` map a float to a float. ``df``/``dg`` are their (weak) derivatives; when
    omitted, a 4th-order finite difference is used that stays inside each quadrature piece.
    Pass every kink of ``f``, ``g`` (e.g. kernel centres) as ``breakpoints``: quadrature and
    finite differences are split there. Raises ``PrivcalError`` if a quadrature piece does not
    reach a relative accuracy of about 1e-8 or looks divergent (infinite norm). Finite
    differences smooth an endpoint singularity of ``f'`` away, so for functions whose norm may
    be infinite pass ``df``.

    Args:
        f: first function, float -> float, finite on the interval.
        g: second function, float -> float, finite on the interval.
        beta: kernel parameter beta of exp(-beta |x - y|), in (0, inf).
        df: weak derivative of ``f``, float -> float; default None (finite differences).
        dg: weak derivative of ``g``, float -> float; default None (finite differences).
        interval: the domain (a, b), finite with a < b; default (0, 1).
        breakpoints: kinks of the functions (e.g. kernel centres), finite reals; default None.

    Returns:
        the inner product <f, g> (units of f times g).

    Raises:
        ValueError: an argument is outside its range.
        PrivcalError: the quadrature cannot be trusted (the norm may be infinite).
    """
    form = _validate_h1(_Form(f, g, beta, df, dg, interval, breakpoints), same=False)
    return _h1_form(form, same=False)


def norm_squared(
    f: Callable[[float], float],
    beta: float,
    *,
    df: Callable[[float], float] | None = None,
    interval: tuple[float, float] = _UNIT,
    breakpoints: ArrayLike | None = None,
) -> float:
    """Squared Lemma 6 norm of a callable, by quadrature (see ``inner_product``).

    Formula: ``||f||^2 = 1/2 (f(a)^2 + f(b)^2) + 1/(2 beta) int_a^b (f'^2 + beta^2 f^2) dx``.
    Source: Wang & Hegde 2019, Lemma 6 (App. C).

    Args:
        f: the function, float -> float, finite on the interval.
        beta: kernel parameter beta of exp(-beta |x - y|), in (0, inf).
        df: weak derivative of ``f``, float -> float; default None (finite differences).
        interval: the domain (a, b), finite with a < b; default (0, 1).
        breakpoints: kinks of the functions (e.g. kernel centres), finite reals; default None.

    Returns:
        the squared norm ||f||_H^2, in [0, inf).

    Raises:
        ValueError: an argument is outside its range.
        PrivcalError: the quadrature cannot be trusted (the norm may be infinite).
    """
    form = _validate_h1(_Form(f, None, beta, df, None, interval, breakpoints), same=True)
    f, beta, df, interval, breakpoints = form.f, form.beta, form.df, form.interval, form.breakpoints
    return _norm_squared(f, beta, df=df, interval=interval, breakpoints=breakpoints)


def _norm_squared(f, beta, *, df=None, interval=_UNIT, breakpoints=None) -> float:
    """norm_squared for validated inputs."""
    return _h1_form(_Form(f, None, beta, df, None, interval, breakpoints), same=True)


def norm(
    f: Callable[[float], float],
    beta: float,
    *,
    df: Callable[[float], float] | None = None,
    interval: tuple[float, float] = _UNIT,
    breakpoints: ArrayLike | None = None,
) -> float:
    """Lemma 6 norm ``||f||_H = sqrt(<f, f>)`` of a callable, by quadrature.

    Formula: square root of ``norm_squared``. Source: Wang & Hegde 2019, Lemma 6 (App. C).

    Args:
        f: the function, float -> float, finite on the interval.
        beta: kernel parameter beta of exp(-beta |x - y|), in (0, inf).
        df: weak derivative of ``f``, float -> float; default None (finite differences).
        interval: the domain (a, b), finite with a < b; default (0, 1).
        breakpoints: kinks of the functions (e.g. kernel centres), finite reals; default None.

    Returns:
        the norm ||f||_H, in [0, inf).

    Raises:
        ValueError: an argument is outside its range.
        PrivcalError: the quadrature cannot be trusted (the norm may be infinite).
    """
    form = _validate_h1(_Form(f, None, beta, df, None, interval, breakpoints), same=True)
    f, beta, df, interval, breakpoints = form.f, form.beta, form.df, form.interval, form.breakpoints
    return _norm(f, beta, df=df, interval=interval, breakpoints=breakpoints)


def _norm(f, beta, *, df=None, interval=_UNIT, breakpoints=None) -> float:
    """norm for validated inputs."""
    return math.sqrt(_norm_squared(f, beta, df=df, interval=interval, breakpoints=breakpoints))


def norm_squared_sampled(
    values: ArrayLike, points: ArrayLike, beta: float, *, interval: tuple[float, float] | None = _UNIT
) -> float:
    """Squared Lemma 6 norm of the piecewise-linear interpolant of samples, in closed form.

    Formula: with ``h_i = x_(i+1) - x_i`` and ``f_i`` the samples,
    ``1/2 (f_0^2 + f_n^2) + 1/(2 beta) sum_i [(f_(i+1) - f_i)^2 / h_i
    + beta^2 h_i (f_i^2 + f_i f_(i+1) + f_(i+1)^2) / 3]`` (exact integrals of a linear piece).
    Source: Wang & Hegde 2019, Lemma 6 (App. C) applied to a piecewise-linear function.

    ``points`` must be strictly increasing with first and last point the ends of ``interval``;
    ``interval=None`` takes the interval spanned by ``points``.

    Args:
        values: the samples f_i, a 1-D array of finite reals, one per point.
        points: the sample points x_i, strictly increasing, at least 2, from interval[0] to interval[1].
        beta: kernel parameter beta of exp(-beta |x - y|), in (0, inf).
        interval: the domain (a, b), finite with a < b, or None for (points[0], points[-1]);
            default (0, 1).

    Returns:
        the squared norm of the interpolant, in [0, inf).

    Raises:
        ValueError: an argument is outside its range.
    """
    beta = V.positive("beta", beta)
    x = _finite_array("points", points, ndim=1)
    f = _finite_array("values", values, ndim=1)
    if x.size < 2:
        raise ValueError(f"points must hold at least 2 points, got {x.size}")
    if f.shape != x.shape:
        raise ValueError(f"values must have the shape of points {x.shape}, got {f.shape}")
    h = np.diff(x)
    if not np.all(h > 0):
        raise ValueError("points must be strictly increasing")
    if interval is not None:
        a, b = _interval(interval)
        tol = 1e-12 * (b - a)
        if abs(x[0] - a) > tol or abs(x[-1] - b) > tol:
            raise ValueError(
                f"points must start at interval[0]={a:g} and end at interval[1]={b:g}, "
                f"got {x[0]!r} and {x[-1]!r}"
            )
    return _norm_squared_sampled(f, x, beta, interval=interval)


def _norm_squared_sampled(values: np.ndarray, points: np.ndarray, beta: float, *, interval=_UNIT) -> float:
    """norm_squared_sampled for validated inputs (interval only checked at the boundary)."""
    f, x = values, points
    h = np.diff(x)
    f0, f1 = f[:-1], f[1:]
    derivative_term = float(np.sum((f1 - f0) ** 2 / h))
    value_term = float(np.sum(h * (f0 * f0 + f0 * f1 + f1 * f1)) / 3.0)
    boundary = 0.5 * (f[0] ** 2 + f[-1] ** 2)
    return float(boundary + (derivative_term + beta * beta * value_term) / (2.0 * beta))


# ----------------------------------------------------------------------------------------------
# kernel expansions


@dataclass(frozen=True)
class KernelExpansion:
    """The function ``f(x) = sum_i a_i exp(-beta |x - x_i|)`` and its derivative.

    Its derivative is ``f'(x) = -beta sum_i a_i sign(x - x_i) exp(-beta |x - x_i|)``; at a centre
    ``derivative(x, side)`` gives the right (``side=1``), left (``side=-1``) or average
    (``side=0``) limit. Build it with ``expansion``.
    """

    coefficients: tuple[float, ...]
    centers: tuple[float, ...]
    beta: float

    def __call__(self, x: ArrayLike) -> np.ndarray:
        x = np.asarray(x, dtype=float)
        k = np.exp(-self.beta * np.abs(x[..., None] - np.asarray(self.centers)))
        return k @ np.asarray(self.coefficients)

    def derivative(self, x: ArrayLike, side: int = 0) -> np.ndarray:
        """Derivative at ``x``; at a centre the ``side`` limit (-1 left, 1 right, 0 average).

        Args:
            x: points at which to evaluate f' (array-like of reals).
            side: at a centre, -1 for the left limit, 1 for the right one, 0 for their average;
                default 0.

        Returns:
            f'(x), with the shape of ``x``.

        Raises:
            ValueError: ``side`` is not -1, 0 or 1.
        """
        side = V.choice("side", side, (-1, 0, 1))
        x = np.asarray(x, dtype=float)
        d = x[..., None] - np.asarray(self.centers)
        sign = np.where(d == 0, float(side), np.sign(d))
        k = -self.beta * sign * np.exp(-self.beta * np.abs(d))
        return k @ np.asarray(self.coefficients)


def _expansion_args(coefficients, centers, beta, interval):
    """Validate a kernel expansion: (coefficients, centers as float arrays, beta)."""
    beta = V.positive("beta", beta)
    a, b = _interval(interval)
    x = _points_in("centers", centers, a, b)
    c = _finite_array("coefficients", coefficients, ndim=1)
    if c.shape != x.shape:
        raise ValueError(f"coefficients must have the shape of centers {x.shape}, got {c.shape}")
    return c, x, beta


def expansion(
    coefficients: ArrayLike, centers: ArrayLike, beta: float, *, interval: tuple[float, float] = _UNIT
) -> KernelExpansion:
    """The kernel expansion ``f = sum_i a_i K(., x_i)`` as a callable with a derivative.

    Formula: ``f(x) = sum_i a_i exp(-beta |x - x_i|)``. Source: Wang & Hegde 2019, Lemma 6.
    Centres must lie in ``interval`` (where the reproducing property holds).

    Args:
        coefficients: the a_i, a 1-D array of finite reals, one per centre.
        centers: the x_i, a 1-D array of finite reals inside ``interval``.
        beta: kernel parameter beta of exp(-beta |x - y|), in (0, inf).
        interval: the domain (a, b), finite with a < b; default (0, 1).

    Returns:
        the expansion as a callable :class:`KernelExpansion`.

    Raises:
        ValueError: an argument is outside its range.
    """
    c, x, beta = _expansion_args(coefficients, centers, beta, interval)
    return _expansion(c, x, beta, interval=interval)


def _expansion(coefficients: np.ndarray, centers: np.ndarray, beta: float, *, interval=_UNIT) -> KernelExpansion:
    """expansion for validated inputs."""
    return KernelExpansion(tuple(map(float, coefficients)), tuple(map(float, centers)), beta)


def expansion_norm_squared(
    coefficients: ArrayLike, centers: ArrayLike, beta: float, *, interval: tuple[float, float] = _UNIT
) -> float:
    """Squared Lemma 6 norm of ``sum_i a_i K(., x_i)``, in closed form.

    Formula: ``||f||^2 = a^T G a`` with ``G = gram(centers, beta)`` (reproducing property
    ``<K(., x), K(., y)> = K(x, y)``, valid for centres inside the interval).
    Source: Wang & Hegde 2019, Lemma 6.

    Args:
        coefficients: the a_i, a 1-D array of finite reals, one per centre.
        centers: the x_i, a 1-D array of finite reals inside ``interval``.
        beta: kernel parameter beta of exp(-beta |x - y|), in (0, inf).
        interval: the domain (a, b), finite with a < b; default (0, 1).

    Returns:
        the squared norm, in [0, inf).

    Raises:
        ValueError: an argument is outside its range.
    """
    c, x, beta = _expansion_args(coefficients, centers, beta, interval)
    return _expansion_norm_squared(c, x, beta, interval=interval)


def _expansion_norm_squared(coefficients: np.ndarray, centers: np.ndarray, beta: float, *, interval=_UNIT) -> float:
    """expansion_norm_squared for validated inputs."""
    c = coefficients
    return float(c @ _gram(centers, beta) @ c)


def expansion_inner_product(
    coefficients_f: ArrayLike,
    centers_f: ArrayLike,
    coefficients_g: ArrayLike,
    centers_g: ArrayLike,
    beta: float,
    *,
    interval: tuple[float, float] = _UNIT,
) -> float:
    """Lemma 6 inner product of two kernel expansions, in closed form.

    Formula: ``<sum_i a_i K(., x_i), sum_j b_j K(., y_j)> = sum_ij a_i b_j exp(-beta |x_i - y_j|)``.
    Source: Wang & Hegde 2019, Lemma 6 (reproducing property).

    Args:
        coefficients_f: the a_i of the first expansion, a 1-D array of finite reals.
        centers_f: the x_i of the first expansion, finite reals inside ``interval``.
        coefficients_g: the b_j of the second expansion, a 1-D array of finite reals.
        centers_g: the y_j of the second expansion, finite reals inside ``interval``.
        beta: kernel parameter beta of exp(-beta |x - y|), in (0, inf).
        interval: the domain (a, b), finite with a < b; default (0, 1).

    Returns:
        the inner product.

    Raises:
        ValueError: an argument is outside its range.
    """
    a_, x, beta = _expansion_args(coefficients_f, centers_f, beta, interval)
    b_, y, _ = _expansion_args(coefficients_g, centers_g, beta, interval)
    return _expansion_inner_product(a_, x, b_, y, beta, interval=interval)


def _expansion_inner_product(
    coefficients_f: np.ndarray,
    centers_f: np.ndarray,
    coefficients_g: np.ndarray,
    centers_g: np.ndarray,
    beta: float,
    *,
    interval=_UNIT,
) -> float:
    """expansion_inner_product for validated inputs."""
    x, y = centers_f, centers_g
    return float(coefficients_f @ np.exp(-beta * np.abs(x[:, None] - y[None, :])) @ coefficients_g)
