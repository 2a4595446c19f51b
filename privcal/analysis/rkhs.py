r"""The RKHS of Wang & Hegde's functional mechanism and the sensitivities measured in it.

Kernel ``K(x, y) = exp(-beta |x - y|)`` on ``[0, 1]`` (or ``[a, b]``), whose RKHS is the Sobolev
space H^1 with the inner product of Lemma 6 (Wang & Hegde, NeurIPS 2019, App. C):

    <f, g> = 1/2 (f(0) g(0) + f(1) g(1)) + 1/(2 beta) * int_0^1 (f' g' + beta^2 f g) dx.

Norms of callables (quadrature), of sampled functions (exact for the piecewise-linear
interpolant) and of kernel expansions (closed form ``a^T K a``), and the RKHS sensitivity of the
Q-update used in the proof of Theorem 5 and of the output-perturbation alternative of Sec. 3.2.

On an interval ``[a, b]`` the same formula is used with ``a, b`` in place of ``0, 1``; it is the
pull-back of the ``[0, 1]`` space under ``x = a + (b - a) t`` with ``beta_01 = beta * (b - a)``:
``<f, g>_{[a,b], beta} = <F, G>_{[0,1], beta (b-a)}`` where ``F(t) = f(a + (b - a) t)``, and the
kernel ``exp(-beta |x - y|) = exp(-beta (b - a) |s - t|)`` transforms the same way.

Findings (tests in ``tests/test_rkhs.py`` hold the evidence):

* Reproducing property ``<f, K(., y)> = f(y)`` of Lemma 6: holds.
* The inequality ``f(x)^2 <= c <f, f>`` with the paper's ``c = 2 beta``: its proof uses
  ``int_0^x f' = f(x)``, i.e. ``f(0) = 0``. The sharp constant is ``c = sup_x K(x, x) = 1``
  (Cauchy-Schwarz, equality for ``f = K(., y)``), so ``c = 2 beta`` holds iff ``beta >= 1/2``.
  The lemma's conclusion (an RKHS) is unaffected: any finite ``c`` suffices.
* Thm 5's bound ``(1 + beta/2) (v L)^2 + L^2/(2 beta)`` puts the Lipschitz constant ``L`` of one
  value function on ``f = Q - Q'``; a difference of two ``L``-Lipschitz functions is only
  ``2L``-Lipschitz and the paper's ``(v^2 + v) L^2`` is then exceeded (explicit triangle wave).
* The proof of Thm 5 names the kernel ``exp(-4 alpha L (k+1) |x - y|/B)`` (``beta = v L``) while
  the statement sets ``beta = 1/v``.
* The proof of Thm 5 bounds one update by ``||Q - Q'||_inf <= 4 alpha L (k+1)/B``
  (``update_sup_bound``): the 1/B treats a batch as if one reward changed, but under the paper's
  adjacency ``||r - r'||_inf <= 1`` all B rewards change, and the input-Lipschitz constant ``L``
  does not bound how far a parameter step moves the function: a network whose only moving parameter
  is the output bias (0-Lipschitz in the state) shifts by ``alpha`` under ``r`` versus ``r + 1``
  (``privcal verify``, claim DPQ-update-sup). The valid analysis certifies the update in the agent
  instead (``privcal.rl.dpq.agent``: ``sup |Q_new - Q_old| <= c``) and prices release ``j`` with
  ``clipped_release_sensitivity_squared``: ``sup |Q_j - Q'_j| <= 2 j c`` (the neighbours' parameters
  drift apart through every earlier update), ``Lip(Q_j - Q'_j) <= 2L``.
* Sec. 3.2's output-perturbation bound ``2 r0^2 (1 + beta/2)/(1-gamma)^2 + L^2/beta`` is half of
  what the Lemma 6 norm gives for ``sup|Q - Q'| <= 2 r0/(1-gamma)`` and ``Lip(Q - Q') <= 2L``;
  ``Q = r0/(1-gamma)``, ``Q' = -Q`` exceeds it.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable
from dataclasses import dataclass

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
    "update_sup_bound",
    "v_parameter",
    "kernel_beta_thm5",
    "kernel_beta_thm5_unchecked",
    "kernel_beta_thm5_proof_paper",
    "sensitivity_squared_bound",
    "sensitivity_minimizing_beta",
    "update_sensitivity_squared_paper",
    "update_sensitivity_squared",
    "clipped_release_sensitivity_squared",
    "clipped_run_sensitivity_squared",
    "clipped_run_minimizing_beta",
    "restarted_release_sensitivity_squared",
    "restarted_minimizing_beta",
    "output_perturbation_sensitivity_squared_paper",
    "output_perturbation_sensitivity_squared",
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


def _validate_h1(f, g, beta, df, dg, interval, breakpoints, *, same: bool):
    """Validate the arguments of inner_product / norm_squared / norm (g, dg unused when ``same``)."""
    beta = V.positive("beta", beta)
    interval = _interval(interval)
    f = _callable("f", f)
    if df is not None:
        df = _callable("df", df)
    if not same:
        g = _callable("g", g)
        if dg is not None:
            dg = _callable("dg", dg)
    if breakpoints is not None:
        breakpoints = _finite_array("breakpoints", breakpoints, ndim=1)
    return f, g, beta, df, dg, interval, breakpoints


def _h1_form(f, g, beta, df, dg, interval, breakpoints, *, same: bool) -> float:
    """The Lemma 6 form <f, g> (or <f, f> when ``same``) for validated inputs."""
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
    f, g, beta, df, dg, interval, breakpoints = _validate_h1(
        f, g, beta, df, dg, interval, breakpoints, same=False
    )
    return _inner_product(f, g, beta, df=df, dg=dg, interval=interval, breakpoints=breakpoints)


def _inner_product(f, g, beta, *, df=None, dg=None, interval=_UNIT, breakpoints=None) -> float:
    """inner_product for validated inputs (interval a float pair, breakpoints None or a float array)."""
    return _h1_form(f, g, beta, df, dg, interval, breakpoints, same=False)


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
    f, _, beta, df, _, interval, breakpoints = _validate_h1(
        f, None, beta, df, None, interval, breakpoints, same=True
    )
    return _norm_squared(f, beta, df=df, interval=interval, breakpoints=breakpoints)


def _norm_squared(f, beta, *, df=None, interval=_UNIT, breakpoints=None) -> float:
    """norm_squared for validated inputs."""
    return _h1_form(f, None, beta, df, None, interval, breakpoints, same=True)


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
    f, _, beta, df, _, interval, breakpoints = _validate_h1(
        f, None, beta, df, None, interval, breakpoints, same=True
    )
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


# ----------------------------------------------------------------------------------------------
# sensitivities (Theorem 5 and Section 3.2)


def _validate_update(lr, k, batch_size) -> tuple[float, float, int]:
    """Validate (lr, k, batch_size) of the Thm 5 update quantities."""
    lr = V.positive("lr", lr)
    k = V.nonnegative("k", k)
    batch_size = V.positive_int("batch_size", batch_size)
    return lr, k, batch_size


def update_sup_bound(lr: float, k: float, batch_size: int, lipschitz: float) -> float:
    """Sup-norm bound on the difference of two Q-updates under neighbouring rewards (as in the paper).

    Formula: ``||Q - Q'||_inf <= 4 alpha L (k + 1) / B`` (``alpha = lr``, ``L = lipschitz``,
    ``B = batch_size``), on the event that the noise paths stay in ``[-k, k]``.
    Source: Wang & Hegde 2019, proof of Thm 5.
    Fails: under ``||r - r'||_inf <= 1`` all B rewards of a batch change (not one), and ``L`` (a
    slope in the state) does not bound a parameter step: the output bias alone moves Q by ``alpha``
    (claim DPQ-update-sup of ``privcal verify``). The valid analysis certifies the update instead,
    see ``clipped_release_sensitivity_squared``.

    Args:
        lr: learning rate alpha of the Q-update, in (0, inf).
        k: the paper's bound on the noise path, sup |g| <= k, in [0, inf).
        batch_size: batch size B, an integer >= 1.
        lipschitz: Lipschitz constant L of the value function, in [0, inf).

    Returns:
        the sup-norm bound (units of Q), in [0, inf).

    Raises:
        ValueError: an argument is outside its range.
    """
    lr, k, batch_size = _validate_update(lr, k, batch_size)
    lipschitz = V.nonnegative("lipschitz", lipschitz)
    return _update_sup_bound(lr, k, batch_size, lipschitz)


def _update_sup_bound(lr: float, k: float, batch_size: int, lipschitz: float) -> float:
    """update_sup_bound for validated inputs."""
    return 4.0 * lr * lipschitz * (k + 1.0) / batch_size


def v_parameter(lr: float, k: float, batch_size: int) -> float:
    """The paper's shorthand ``v`` (sup bound per unit Lipschitz constant).

    Formula: ``v = 4 alpha (k + 1) / B``. Source: Wang & Hegde 2019, proof of Thm 5.

    Args:
        lr: learning rate alpha of the Q-update, in (0, inf).
        k: the paper's bound on the noise path, sup |g| <= k, in [0, inf).
        batch_size: batch size B, an integer >= 1.

    Returns:
        v, in (0, inf).

    Raises:
        ValueError: an argument is outside its range.
    """
    lr, k, batch_size = _validate_update(lr, k, batch_size)
    return _v_parameter(lr, k, batch_size)


def _v_parameter(lr: float, k: float, batch_size: int) -> float:
    """v_parameter for validated inputs."""
    return 4.0 * lr * (k + 1.0) / batch_size


def kernel_beta_thm5(lr: float, k: float, batch_size: int) -> float:
    """Kernel parameter chosen in Theorem 5.

    Formula: ``beta = 1/v = B / (4 alpha (k + 1))``; it minimises
    ``(1 + beta/2)(v L)^2 + L^2/(2 beta)`` (see ``sensitivity_minimizing_beta``).
    Source: Wang & Hegde 2019, Thm 5 (statement and proof).

    Args:
        lr: learning rate alpha of the Q-update, in (0, inf).
        k: the paper's bound on the noise path, sup |g| <= k, in [0, inf).
        batch_size: batch size B, an integer >= 1.

    Returns:
        the kernel beta of exp(-beta |x - y|), in (0, inf).

    Raises:
        ValueError: an argument is outside its range.
    """
    lr, k, batch_size = _validate_update(lr, k, batch_size)
    return _kernel_beta_thm5(lr, k, batch_size)


def _kernel_beta_thm5(lr: float, k: float, batch_size: int) -> float:
    """kernel_beta_thm5 for validated inputs."""
    return 1.0 / _v_parameter(lr, k, batch_size)


def kernel_beta_thm5_unchecked(lr: float, k: float, batch_size: int) -> float:
    """:func:`kernel_beta_thm5` without validation, for callers that validated the arguments or pass constants
    (``privcal.rl.dpq.agent``: App. E.3's beta = 2222 when sigma is given): the same beta.

    Args:
        lr: alpha, a float in (0, inf) (not checked).
        k: the noise bound k, a float in [0, inf) (not checked).
        batch_size: B, an int >= 1 (not checked).

    Returns:
        beta = 1/v, in (0, inf).
    """
    return _kernel_beta_thm5(lr, k, batch_size)


def kernel_beta_thm5_proof_paper(lr: float, k: float, batch_size: int, lipschitz: float) -> float:
    """Kernel parameter as printed in the kernel of the proof of Theorem 5.

    Formula: ``beta = 4 alpha L (k + 1) / B`` (from ``K(x, y) = exp(-4 alpha L (k+1)|x-y|/B)``).
    Source: Wang & Hegde 2019, proof of Thm 5. Fails: inconsistent with ``beta = 1/v`` of the
    statement and of the sensitivity algebra; kept only to reproduce the printed text.

    Args:
        lr: learning rate alpha of the Q-update, in (0, inf).
        k: the paper's bound on the noise path, sup |g| <= k, in [0, inf).
        batch_size: batch size B, an integer >= 1.
        lipschitz: Lipschitz constant L of the value function, in [0, inf).

    Returns:
        the printed kernel beta, in [0, inf).

    Raises:
        ValueError: an argument is outside its range.
    """
    lr, k, batch_size = _validate_update(lr, k, batch_size)
    lipschitz = V.nonnegative("lipschitz", lipschitz)
    return _kernel_beta_thm5_proof_paper(lr, k, batch_size, lipschitz)


def _kernel_beta_thm5_proof_paper(lr: float, k: float, batch_size: int, lipschitz: float) -> float:
    """kernel_beta_thm5_proof_paper for validated inputs."""
    return _update_sup_bound(lr, k, batch_size, lipschitz)


def sensitivity_squared_bound(sup_norm: float, lipschitz: float, beta: float) -> float:
    """Upper bound on ``||f||_H^2`` from ``|f| <= D`` and ``|f'| <= L'`` on ``[0, 1]``.

    Formula: ``||f||^2 <= (1 + beta/2) D^2 + L'^2 / (2 beta)``, term by term:
    ``1/2 (f(0)^2 + f(1)^2) <= D^2``, ``(beta/2) int f^2 <= (beta/2) D^2``,
    ``1/(2 beta) int f'^2 <= L'^2/(2 beta)``. ``lipschitz`` is the Lipschitz constant of ``f``
    itself (for ``f = Q - Q'`` with ``Q, Q'`` both ``L``-Lipschitz, pass ``2L``).
    Source: Wang & Hegde 2019, Lemma 6 norm, as used in the proof of Thm 5.

    Args:
        sup_norm: D, a bound on sup |f|, in [0, inf).
        lipschitz: L', the Lipschitz constant of f, in [0, inf).
        beta: kernel parameter beta of exp(-beta |x - y|), in (0, inf).

    Returns:
        the bound on ||f||_H^2, in [0, inf).

    Raises:
        ValueError: an argument is outside its range.
    """
    sup_norm = V.nonnegative("sup_norm", sup_norm)
    lipschitz = V.nonnegative("lipschitz", lipschitz)
    beta = V.positive("beta", beta)
    return _sensitivity_squared_bound(sup_norm, lipschitz, beta)


def _sensitivity_squared_bound(sup_norm: float, lipschitz: float, beta: float) -> float:
    """sensitivity_squared_bound for validated inputs."""
    d, lip = sup_norm, lipschitz
    return (1.0 + beta / 2.0) * d * d + lip * lip / (2.0 * beta)


def sensitivity_minimizing_beta(sup_norm: float, lipschitz: float) -> float:
    """Kernel parameter minimising ``sensitivity_squared_bound`` for fixed ``D`` and ``L'``.

    Formula: ``beta* = L'/D``, where the bound equals ``D^2 + D L'``. With the paper's
    ``D = v L, L' = L`` this is Thm 5's ``beta = 1/v``; with ``L' = 2L`` it is ``2/v``.
    Note: ``beta`` is the noise kernel's, so changing it also changes Lemma 8's sup term.
    Source: calculus on the bound of Wang & Hegde 2019, proof of Thm 5.

    Args:
        sup_norm: D, a bound on sup |f|, in (0, inf).
        lipschitz: L', the Lipschitz constant of f, in (0, inf).

    Returns:
        the minimising kernel beta, in (0, inf).

    Raises:
        ValueError: an argument is outside its range.
    """
    sup_norm = V.positive("sup_norm", sup_norm)
    lipschitz = V.positive("lipschitz", lipschitz)
    return _sensitivity_minimizing_beta(sup_norm, lipschitz)


def _sensitivity_minimizing_beta(sup_norm: float, lipschitz: float) -> float:
    """sensitivity_minimizing_beta for validated inputs."""
    return lipschitz / sup_norm


def update_sensitivity_squared_paper(lr: float, k: float, batch_size: int, lipschitz: float) -> float:
    """Squared RKHS sensitivity of one Q-update as printed in Theorem 5 (the ``C(alpha,k,L,B)``).

    Formula: ``C = (v^2 + v) L^2`` with ``v = 4 alpha (k + 1)/B``; equals
    ``sensitivity_squared_bound(v L, L, 1/v)``.
    Source: Wang & Hegde 2019, Thm 5 (statement and proof).
    Fails: it uses ``L`` as the Lipschitz constant of ``Q - Q'``; for two ``L``-Lipschitz value
    functions the difference is only ``2L``-Lipschitz and ``||Q - Q'||_H^2`` can exceed
    ``C`` (by a factor close to 2 for small ``v``); see ``update_sensitivity_squared``.

    Args:
        lr: learning rate alpha of the Q-update, in (0, inf).
        k: the paper's bound on the noise path, sup |g| <= k, in [0, inf).
        batch_size: batch size B, an integer >= 1.
        lipschitz: Lipschitz constant L of the value function, in [0, inf).

    Returns:
        C as printed (squared RKHS norm), in [0, inf).

    Raises:
        ValueError: an argument is outside its range.
    """
    lr, k, batch_size = _validate_update(lr, k, batch_size)
    lipschitz = V.nonnegative("lipschitz", lipschitz)
    return _update_sensitivity_squared_paper(lr, k, batch_size, lipschitz)


def _update_sensitivity_squared_paper(lr: float, k: float, batch_size: int, lipschitz: float) -> float:
    """update_sensitivity_squared_paper for validated inputs."""
    v = _v_parameter(lr, k, batch_size)
    return (v * v + v) * lipschitz * lipschitz


def update_sensitivity_squared(
    lr: float, k: float, batch_size: int, lipschitz: float, *, beta: float | None = None
) -> float:
    """Valid squared RKHS sensitivity of one Q-update (``Q, Q'`` both ``L``-Lipschitz).

    Formula: ``(1 + beta/2)(v L)^2 + (2L)^2/(2 beta)``; at the paper's ``beta = 1/v`` (default)
    this is ``(v^2 + 5v/2) L^2``, at ``beta = 2/v`` the minimum ``(v^2 + 2v) L^2``.
    Source: Wang & Hegde 2019, proof of Thm 5, with ``Lip(Q - Q') <= 2L`` (triangle inequality).

    Args:
        lr: learning rate alpha of the Q-update, in (0, inf).
        k: the paper's bound on the noise path, sup |g| <= k, in [0, inf).
        batch_size: batch size B, an integer >= 1.
        lipschitz: Lipschitz constant L of the value function, in [0, inf).
        beta: kernel parameter beta of exp(-beta |x - y|), in (0, inf); default None, the paper's
            1/v (``kernel_beta_thm5``).

    Returns:
        the squared RKHS sensitivity, in [0, inf).

    Raises:
        ValueError: an argument is outside its range.
    """
    lr, k, batch_size = _validate_update(lr, k, batch_size)
    lipschitz = V.nonnegative("lipschitz", lipschitz)
    if beta is not None:
        beta = V.positive("beta", beta)
    return _update_sensitivity_squared(lr, k, batch_size, lipschitz, beta=beta)


def _update_sensitivity_squared(
    lr: float, k: float, batch_size: int, lipschitz: float, *, beta: float | None = None
) -> float:
    """update_sensitivity_squared for validated inputs."""
    d = _update_sup_bound(lr, k, batch_size, lipschitz)
    if beta is None:
        beta = _kernel_beta_thm5(lr, k, batch_size)
    return _sensitivity_squared_bound(d, 2.0 * lipschitz, beta)


def _discount(discount) -> float:
    """``discount`` as a float in [0, 1)."""
    g = V.probability("discount", discount)
    if g >= 1.0:
        raise ValueError(f"discount must be in [0, 1), got {discount!r}")
    return g


def output_perturbation_sensitivity_squared_paper(
    reward_bound: float, discount: float, lipschitz: float, beta: float
) -> float:
    """Squared RKHS sensitivity of releasing ``Q`` once, as printed in Section 3.2.

    Formula: ``||Q - Q'||_H^2 <= 2 r0^2 (1 + beta/2) / (1 - gamma)^2 + L^2 / beta``.
    Source: Wang & Hegde 2019, paragraph after Corollary 7.
    Fails: exactly half of the Lemma 6 bound for ``|Q|, |Q'| <= r0/(1-gamma)``,
    ``Lip(Q), Lip(Q') <= L``; ``Q = r0/(1-gamma)``, ``Q' = -Q`` has
    ``||Q - Q'||^2 = 4 r0^2 (1 + beta/2)/(1-gamma)^2`` (see
    ``output_perturbation_sensitivity_squared``).

    Args:
        reward_bound: r0, a bound on |reward|, in [0, inf).
        discount: gamma, in [0, 1).
        lipschitz: Lipschitz constant L of the value function, in [0, inf).
        beta: kernel parameter beta of exp(-beta |x - y|), in (0, inf).

    Returns:
        the printed bound (squared RKHS norm), in [0, inf).

    Raises:
        ValueError: an argument is outside its range.
    """
    reward_bound, discount, lipschitz, beta = _validate_output(reward_bound, discount, lipschitz, beta)
    return _output_perturbation_sensitivity_squared_paper(reward_bound, discount, lipschitz, beta)


def _validate_output(reward_bound, discount, lipschitz, beta) -> tuple[float, float, float, float]:
    """Validate the arguments of the output-perturbation sensitivities."""
    reward_bound = V.nonnegative("reward_bound", reward_bound)
    discount = _discount(discount)
    lipschitz = V.nonnegative("lipschitz", lipschitz)
    beta = V.positive("beta", beta)
    return reward_bound, discount, lipschitz, beta


def _output_perturbation_sensitivity_squared_paper(
    reward_bound: float, discount: float, lipschitz: float, beta: float
) -> float:
    """output_perturbation_sensitivity_squared_paper for validated inputs."""
    r0, gamma, lip = reward_bound, discount, lipschitz
    return 2.0 * r0 * r0 * (1.0 + beta / 2.0) / (1.0 - gamma) ** 2 + lip * lip / beta


def output_perturbation_sensitivity_squared(
    reward_bound: float, discount: float, lipschitz: float, beta: float
) -> float:
    """Valid squared RKHS sensitivity of releasing ``Q`` once (Section 3.2 setting).

    Formula: ``sensitivity_squared_bound(2 r0/(1-gamma), 2L, beta)
    = 4 r0^2 (1 + beta/2)/(1 - gamma)^2 + 2 L^2/beta`` (twice the printed bound), from
    ``|Q| <= r0/(1-gamma)`` and ``Lip(Q) <= L`` for both value functions.
    Source: Wang & Hegde 2019, Sec. 3.2 and Lemma 6; the workshop version (Thm 4 proof) prints
    the same ``4 r0^2`` factor.

    Args:
        reward_bound: r0, a bound on |reward|, in [0, inf).
        discount: gamma, in [0, 1).
        lipschitz: Lipschitz constant L of the value function, in [0, inf).
        beta: kernel parameter beta of exp(-beta |x - y|), in (0, inf).

    Returns:
        the squared RKHS sensitivity, in [0, inf).

    Raises:
        ValueError: an argument is outside its range.
    """
    reward_bound, discount, lipschitz, beta = _validate_output(reward_bound, discount, lipschitz, beta)
    return _output_perturbation_sensitivity_squared(reward_bound, discount, lipschitz, beta)


def _output_perturbation_sensitivity_squared(
    reward_bound: float, discount: float, lipschitz: float, beta: float
) -> float:
    """output_perturbation_sensitivity_squared for validated inputs."""
    return _sensitivity_squared_bound(2.0 * reward_bound / (1.0 - discount), 2.0 * lipschitz, beta)


# ----------------------------------------------------------------------------------------------
# sensitivities of an agent whose every update is certified (valid analysis of Algorithm 1)


def _sum_of_squares(n: int) -> float:
    """1^2 + 2^2 + ... + n^2."""
    return n * (n + 1.0) * (2.0 * n + 1.0) / 6.0


def _validate_clipped(update_clip, updates, lipschitz) -> tuple[float, int, float]:
    update_clip = V.positive("update_clip", update_clip)
    updates = V.positive_int("updates", updates)
    lipschitz = V.positive("lipschitz", lipschitz)
    return update_clip, updates, lipschitz


def clipped_release_sensitivity_squared(update_clip: float, updates: int, lipschitz: float, beta: float) -> float:
    """Squared RKHS sensitivity of the function released after ``updates`` certified updates (one action).

    Formula: ``(1 + beta/2) (2 j c)^2 + (2L)^2 / (2 beta)`` with ``j = updates``, ``c = update_clip``:
    ``sensitivity_squared_bound`` of ``f = Q_j - Q'_j``, where ``Q_j``, ``Q'_j`` are the functions the
    agent holds after ``j`` updates on two reward functions (any two: the bound does not use the
    rewards). Every update is certified to move each action's Q by at most ``c`` in sup norm over
    [0, 1], so ``|Q_j - Q'_j| <= sum_i (|Q_i - Q_(i-1)| + |Q'_i - Q'_(i-1)|) <= 2 j c`` (the same
    initial network); both are ``L``-Lipschitz, so ``f`` is ``2L``-Lipschitz.
    Source: Wang & Hegde 2019, Lemma 6 norm (as used in the proof of Thm 5), with the per-update
    premise made true by the agent (``privcal.rl.dpq.agent``) instead of assumed.

    Args:
        update_clip: c, the certified bound on one update's change of Q in sup norm, in (0, inf)
            (units of Q, i.e. of reward).
        updates: j, the number of certified updates before the release, an int >= 1.
        lipschitz: L, the enforced Lipschitz bound of Q in the state, in (0, inf).
        beta: kernel parameter beta of exp(-beta |x - y|), in (0, inf).

    Returns:
        the squared RKHS sensitivity of the release (one action), in (0, inf).

    Raises:
        ValueError: an argument is outside its range.
    """
    update_clip, updates, lipschitz = _validate_clipped(update_clip, updates, lipschitz)
    beta = V.positive("beta", beta)
    return _clipped_release_sensitivity_squared(update_clip, updates, lipschitz, beta)


def _clipped_release_sensitivity_squared(update_clip, updates, lipschitz, beta) -> float:
    """clipped_release_sensitivity_squared for validated inputs."""
    return _sensitivity_squared_bound(2.0 * updates * update_clip, 2.0 * lipschitz, beta)


def clipped_run_sensitivity_squared(update_clip: float, updates: int, lipschitz: float, beta: float, *,
                                    actions: int = 1) -> float:
    """Sum of the squared RKHS sensitivities of every release of a certified run: U releases x m actions.

    Formula: ``m sum_(j=1..U) [(1 + beta/2)(2 j c)^2 + (2L)^2/(2 beta)]
    = m [(1 + beta/2) 4 c^2 U(U+1)(2U+1)/6 + U (2L)^2/(2 beta)]``. Composing Gaussian-process
    releases with independent noise paths of scale sigma is a Gaussian mechanism with
    ``mu^2 = (this sum) / sigma^2`` (Wang & Hegde 2019, Prop. 4; Gaussian composition is exact).
    The release before the first update (the initial network) does not depend on the rewards.
    Source: :func:`clipped_release_sensitivity_squared`, summed.

    Args:
        update_clip: c, the certified bound on one update's change of Q in sup norm, in (0, inf)
            (units of Q).
        updates: U, the number of certified updates (releases that depend on the rewards), an int >= 1.
        lipschitz: L, the enforced Lipschitz bound of Q in the state, in (0, inf).
        beta: kernel parameter beta of exp(-beta |x - y|), in (0, inf).
        actions: m, the number of actions (one noise path each per release), an int >= 1; default 1.

    Returns:
        the summed squared sensitivity, in (0, inf).

    Raises:
        ValueError: an argument is outside its range.
    """
    update_clip, updates, lipschitz = _validate_clipped(update_clip, updates, lipschitz)
    beta = V.positive("beta", beta)
    actions = V.positive_int("actions", actions)
    return _clipped_run_sensitivity_squared(update_clip, updates, lipschitz, beta, actions)


def _clipped_run_sensitivity_squared(update_clip, updates, lipschitz, beta, actions=1) -> float:
    """clipped_run_sensitivity_squared for validated inputs."""
    sup_part = 4.0 * update_clip**2 * _sum_of_squares(updates)
    lip_part = updates * (2.0 * lipschitz) ** 2
    return actions * ((1.0 + beta / 2.0) * sup_part + lip_part / (2.0 * beta))


def clipped_run_minimizing_beta(update_clip: float, updates: int, lipschitz: float) -> float:
    """Kernel beta minimising :func:`clipped_run_sensitivity_squared` (one beta for every release).

    Formula: with ``A = 4 c^2 U(U+1)(2U+1)/6`` and ``C = U (2L)^2/2`` the sum is
    ``m (A (1 + beta/2) + C/beta)``, minimal at ``beta = sqrt(2 C / A)`` where it equals
    ``m (A + sqrt(2 A C))``. Source: calculus on :func:`clipped_run_sensitivity_squared`.

    Args:
        update_clip: c, the certified bound on one update's change of Q in sup norm, in (0, inf).
        updates: U, the number of certified updates, an int >= 1.
        lipschitz: L, the enforced Lipschitz bound of Q in the state, in (0, inf).

    Returns:
        the minimising kernel beta, in (0, inf).

    Raises:
        ValueError: an argument is outside its range.
    """
    return _clipped_run_minimizing_beta(*_validate_clipped(update_clip, updates, lipschitz))


def _clipped_run_minimizing_beta(update_clip, updates, lipschitz) -> float:
    """clipped_run_minimizing_beta for validated inputs."""
    a = 4.0 * update_clip**2 * _sum_of_squares(updates)
    c = updates * (2.0 * lipschitz) ** 2 / 2.0
    return math.sqrt(2.0 * c / a)


# ----------------------------------------------------------------------------------------------
# every update starts from the released function (valid analysis of Algorithm 1: privcal.calibrators.dpq)


def _validate_restarted(update_clip, update_lipschitz) -> tuple[float, float]:
    return V.positive("update_clip", update_clip), V.positive("update_lipschitz", update_lipschitz)


def restarted_release_sensitivity_squared(update_clip: float, update_lipschitz: float, beta: float) -> float:
    """Squared RKHS sensitivity of one release when every update starts from the released function.

    Formula: ``(1 + beta/2) (2c)^2 + (2l)^2 / (2 beta)`` with ``c = update_clip``, ``l = update_lipschitz``:
    ``sensitivity_squared_bound`` of ``f = Delta - Delta'``. Release j + 1 is R_j + Delta_j + g_(j+1),
    where R_j is the earlier release and Delta_j = Q_new - Q_old is the j-th update's change, certified
    to satisfy sup_s |Delta_j(s)| <= c and Lip_s(Delta_j) <= l. Under adaptive composition R_j is given
    (the same for both reward functions), so the two means differ by Delta_j - Delta'_j: sup <= 2c,
    Lipschitz <= 2l, whatever the rewards and however far the parameters drifted. Lemma 6's norm
    ``||f||_H^2 = (f(0)^2 + f(1)^2)/2 + (1/(2 beta)) int_0^1 (f'^2 + beta^2 f^2)
    <= sup^2 (1 + beta/2) + Lip^2 / (2 beta)`` gives the formula.
    Source: Wang & Hegde 2019, Lemma 6 norm (as used in the proof of Thm 5), with both premises certified
    by the agent (``privcal.rl.dpq.agent.certified_step``).

    Args:
        update_clip: c, the certified bound on one update's change of Q in sup norm, in (0, inf) (units of Q).
        update_lipschitz: l, the certified bound on the Lipschitz constant of one update's change, in
            (0, inf) (units of Q per unit state).
        beta: kernel parameter beta of exp(-beta |x - y|), in (0, inf).

    Returns:
        the squared RKHS sensitivity of one release (one action), in (0, inf).

    Raises:
        ValueError: an argument is outside its range.
    """
    update_clip, update_lipschitz = _validate_restarted(update_clip, update_lipschitz)
    beta = V.positive("beta", beta)
    return _restarted_release_sensitivity_squared(update_clip, update_lipschitz, beta)


def _restarted_release_sensitivity_squared(update_clip, update_lipschitz, beta) -> float:
    """restarted_release_sensitivity_squared for validated inputs."""
    return _sensitivity_squared_bound(2.0 * update_clip, 2.0 * update_lipschitz, beta)


def restarted_minimizing_beta(update_clip: float, update_lipschitz: float) -> float:
    """Kernel beta minimising :func:`restarted_release_sensitivity_squared`: ``beta = l / c``.

    Formula: ``(1 + beta/2) 4 c^2 + 2 l^2 / beta`` is minimal at ``beta = sqrt(2 * 2 l^2 / (4 c^2)) = l / c``,
    where it equals ``4 c^2 + 4 c l`` (``sensitivity_minimizing_beta`` with D = 2c, L' = 2l).
    Source: calculus on :func:`restarted_release_sensitivity_squared`.

    Args:
        update_clip: c, the certified bound on one update's change of Q in sup norm, in (0, inf).
        update_lipschitz: l, the certified bound on the Lipschitz constant of one update's change, in (0, inf).

    Returns:
        the minimising kernel beta, in (0, inf).

    Raises:
        ValueError: an argument is outside its range.
    """
    update_clip, update_lipschitz = _validate_restarted(update_clip, update_lipschitz)
    return update_lipschitz / update_clip
