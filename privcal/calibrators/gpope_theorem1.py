"""GPOPE's Theorem 1: the printed closed form (not valid) and a valid version with explicit constants.

Theorem 1 of the GPOPE paper ("Privacy Preserving Off-Policy Evaluation") sets sigma >= c2 sqrt(N log(1/delta)) /
(m epsilon) for epsilon < c1 N / m^2; as printed it is false for any constants, and its appendix does not give
c2 = 2 (the verdicts and their evidence: ``privcal.calibrators.gpope``, tests/test_gpope_accounting.py).
:func:`theorem1_sigma` is a valid version (WBK Thm 9 with explicit constants and the epsilon range it needs);
:func:`theorem1_sigma_paper` the printed form. ``privcal.calibrators.gpope`` re-exports every public name.
"""

from __future__ import annotations

import functools
import math
import warnings
from typing import Callable, Optional, TypeVar

from .. import _validate as V
from ..errors import InfeasibleError
from .gpope_sensitivity import priced_per_clip, relation_value

__all__ = [
    "THEOREM1_C2_PAPER",
    "theorem1_c1_paper",
    "theorem1_sigma_paper",
    "theorem1_sigma_paper_unchecked",
    "theorem1_constants",
    "THEOREM1_CONSTANTS",
    "THEOREM1_C1",
    "THEOREM1_C2",
    "THEOREM1_C3",
    "THEOREM1_C4",
    "THEOREM1_NOISE_MIN",
    "theorem1_epsilon_range",
    "theorem1_sigma",
    "theorem1_sigma_unchecked",
]

#: c2 implied by the last display of GPOPE App. B.2: delta = min_lambda exp(N lambda^2/(m^2 sigma^2) -
#: lambda epsilon) = exp(-m^2 sigma^2 epsilon^2 / (4 N)) <= delta  <=>  sigma >= 2 sqrt(N ln(1/delta)) / (m eps).
#: Not self-consistent: the display before it bounds the log moment by 4 N lambda^2/(m^2 sigma^2) (itself
#: dropping the "+1" of Lemma 1's lambda(lambda+1)), and with that coefficient the same algebra gives
#: c2 = 4; with lambda(lambda+1) even c2 = 4 misses delta by a factor ~e^{epsilon/2}. So c2 = 2 does not
#: follow even from Lemma 1 taken at face value (tests/test_gpope_accounting.py).
THEOREM1_C2_PAPER = 2.0


def theorem1_c1_paper(trajectories: int, sigma: float) -> float:
    """c1 of GPOPE Thm 1 as the appendix constrains it: c1 = 2 ln(m / sigma) (not a constant).

    GPOPE App. B.2 requires lambda <= sigma^2 ln(m / sigma) (a condition carried over from Abadi et al.
    2016, Lemma 3, which Lemma 1 does not need); at the minimiser lambda* = epsilon m^2 sigma^2 / (2N) of
    the last display this is epsilon <= 2 ln(m/sigma) N / m^2, i.e. c1 = 2 ln(m / sigma), which depends on
    m and sigma and is <= 0 when sigma >= m.

    Args:
        trajectories: m, the number of trajectories, an int >= 1.
        sigma: Alg. 1's noise scale in units of the clip h, in (0, inf).

    Returns:
        c1 = 2 ln(m / sigma) (dimensionless; may be <= 0).

    Raises:
        ValueError: an argument is outside its range.
    """
    m = V.positive_int("trajectories", trajectories)
    s = V.positive("sigma", sigma)
    return 2.0 * math.log(m / s)


def theorem1_sigma_paper(
    epsilon: float, delta: float, *, iterations: int, trajectories: int, c2: float = THEOREM1_C2_PAPER
) -> float:
    """GPOPE Thm 1 as printed: sigma = c2 sqrt(N ln(1/delta)) / (m epsilon), c2 = 2 by default (App. B.2).

    sigma is the noise scale of Alg. 1 (noise h N(0, sigma^2 I)). The theorem's other condition,
    epsilon < c1 N / m^2, is :func:`theorem1_c1_paper`. Not a valid calibration: the appendix's algebra is
    not self-consistent (see THEOREM1_C2_PAPER), it rests on Lemma 1 (not an upper bound) and on
    sensitivity h (it is 2h). Use :func:`theorem1_sigma` for explicit valid constants.

    Args:
        epsilon: target epsilon, in (0, inf).
        delta: target delta, in (0, 1).
        iterations: N, the number of iterations of Alg. 1, an int >= 1.
        trajectories: m, the number of trajectories, an int >= 1.
        c2: the theorem's constant, in (0, inf); default THEOREM1_C2_PAPER = 2 (App. B.2).

    Returns:
        sigma as printed, Alg. 1's noise scale in units of the clip h (not a valid calibration).

    Raises:
        ValueError: an argument is outside its range.
    """
    e = V.positive("epsilon", epsilon)
    d = V.open_unit("delta", delta)
    n = V.positive_int("iterations", iterations)
    m = V.positive_int("trajectories", trajectories)
    c = V.positive("c2", c2)
    return theorem1_sigma_paper_unchecked(e, d, iterations=n, trajectories=m, c2=c)


def theorem1_sigma_paper_unchecked(
    epsilon: float, delta: float, *, iterations: int, trajectories: int, c2: float = THEOREM1_C2_PAPER
) -> float:
    """:func:`theorem1_sigma_paper` for validated inputs (the trusted kernel).

    Args:
        epsilon: in (0, inf) (trusted).
        delta: in (0, 1) (trusted).
        iterations: N, an int >= 1 (trusted).
        trajectories: m, an int >= 1 (trusted).
        c2: the constant; default :data:`THEOREM1_C2_PAPER`.
    """
    return c2 * math.sqrt(iterations * math.log(1.0 / delta)) / (trajectories * epsilon)


# --------------------------------------------------------------------------------------------------
# Theorem 1 with valid explicit constants (WBK 2018 Thm 9, full sum, + moments tail)
# --------------------------------------------------------------------------------------------------


def _g_over_u(u: float) -> float:
    """G(u)/u = sum_{j>=3} u^{j-3} / j! = (e^u - 1 - u - u^2/2) / u^3, with G(u) = sum_{j>=3} u^{j-2}/j!."""
    if u < 1e-3:
        return 1.0 / 6.0 + u / 24.0 + u * u / 120.0
    return (math.expm1(u) - u - 0.5 * u * u) / u**3


_F = TypeVar("_F", bound=Callable)


def _accept_old_beta(fn: _F) -> _F:
    """Let :func:`theorem1_constants` take ``order_noise_ratio`` under its old keyword ``beta``
    (deprecated: ``beta`` names only the kernel parameter of exp(-beta |x - y|)); same result, with a
    ``DeprecationWarning``."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        if "beta" in kwargs:
            if "order_noise_ratio" in kwargs or len(args) > 1:
                raise TypeError(f"{fn.__qualname__}() got order_noise_ratio and its old name beta")
            warnings.warn(f"{fn.__qualname__}(beta=...) is deprecated: pass order_noise_ratio=...",
                          DeprecationWarning, stacklevel=2)
            kwargs["order_noise_ratio"] = kwargs.pop("beta")
        return fn(*args, **kwargs)

    return wrapper  # type: ignore[return-value]


@_accept_old_beta
def theorem1_constants(noise_min: float = 1.0, order_noise_ratio: float = 1.0, rho: float = 0.5,
                       order_min: int = 8) -> dict[str, float]:
    r"""Explicit constants of a valid GPOPE Theorem 1, derived from WBK 2018 Thm 9 (full sum) + Abadi's tail.

    Let q = 1/m, L = ln(1/delta), s = sigma / Delta the noise multiplier (Delta = sensitivity / h, 2 for
    replace-one), n = lambda + 1 with lambda >= 1 an integer. Thm 9 for the Gaussian bounds the per-step
    log moment by K(lambda) = ln(1 + S) <= S = S_2 + S_3, with
      S_2 = q^2 C(n,2) min{4(e^{1/s^2} - 1), 2 e^{1/s^2}} <= 2 kappa q^2 lambda(lambda+1) / s^2,
            kappa = noise_min^2 (e^{1/noise_min^2} - 1)       [(e^x - 1)/x increasing; needs s >= noise_min]
      S_3 = 2 sum_{j=3..n} q^j C(n,j) e^{j(j-1)/(2 s^2)}.
    Dividing term j of S_3 by q^2 lambda(lambda+1)/s^2 and using C(n,j) <= n(n-1)(n-2)^{j-2}/j! and
    j(j-1) <= 2 + (j-2)(n+1):  term ratio <= 2 s^2 e^{1/s^2} u^{j-2}/j!  with u = q (n-2) e^{(n+1)/(2 s^2)}.
    Under (P2) lambda + 2 <= r s^2 (r = ``order_noise_ratio``) and (P3) q lambda s^2 <= rho,
    s^2 u <= rho e^{r/2} and u <= u0 = rho e^{r/2} / noise_min^2, so (G(u)/u increasing)
      S_3 <= R0 q^2 lambda(lambda+1)/s^2,   R0 = 2 e^{1/noise_min^2} rho e^{r/2} G(u0)/u0,
    hence K(lambda) <= B q^2 lambda(lambda+1)/s^2 with B = 2 kappa + R0. Over N steps (RDP composition)
    and with Abadi et al. 2016 Thm 2 (tail bound), delta <= exp(b lambda(lambda+1) - lambda eps), b = N B q^2/s^2.
    Put s = c sqrt(N L) q / eps and lambda = floor(lambda_dag), lambda_dag = c^2 L / (2 B eps) = eps/(2b).
    With (P4) lambda_dag >= order_min, theta = lambda/lambda_dag >= 1 - 1/order_min and b lambda <= eps/2:
      b lambda(lambda+1) - lambda eps <= -(c^2 L / (4B)) (1 - 1/order_min - 1/order_min^2) <= -L
    as soon as c^2 = 4B / (1 - 1/order_min - 1/order_min^2). In terms of eps the conditions are
      (P1) s >= noise_min               <=>  eps <= (c / noise_min) sqrt(N L) / m,
      (P2) lambda_dag + 2 <= r s^2      <=   eps <= c1 N / m^2,  c1 = 2 B r / (1 + 2/order_min),
      (P3) q lambda_dag s^2 <= rho      <=>  eps >= c3 (N L^2)^{1/3} / m,  c3 = (c^4 / (2 B rho))^{1/3},
      (P4) lambda_dag >= order_min      <=>  eps <= c4 L,  c4 = c^2 / (2 B order_min),
    and then sigma >= Delta c2 sqrt(N L) / (m eps) with c2 = c gives (eps, delta)-DP (larger sigma only
    lowers Thm 9's bound, which is decreasing in s).

    The keyword ``beta=`` is a deprecated alias of the second parameter (which is not the kernel beta).

    Args:
        noise_min: the smallest noise multiplier s = sigma / Delta the constants cover (P1), in (0, inf);
            default 1.
        order_noise_ratio: r in (P2), an upper limit on (lambda + 2) / s^2 (Renyi order per squared noise
            multiplier), in (0, inf); default 1.
        rho: upper limit on q lambda s^2 in (P3), in (0, inf); default 0.5.
        order_min: the smallest moment order lambda_dag the constants cover (P4), an int >= 2; default 8.

    Returns:
        {"c1", "c2", "c3", "c4", "noise_min", "B"}: the constants of :func:`theorem1_epsilon_range` and
        :func:`theorem1_sigma` (dimensionless; c2 per unit of sensitivity), noise_min, and B.

    Raises:
        ValueError: an argument is outside its range.
    """
    s0 = V.positive("noise_min", noise_min)
    b = V.positive("order_noise_ratio", order_noise_ratio)
    r = V.positive("rho", rho)
    l0 = V.positive_int("order_min", order_min)
    if l0 < 2:
        raise ValueError(f"order_min must be >= 2, got {order_min!r}")
    return _theorem1_constants(s0, b, r, l0)


def _theorem1_constants(noise_min: float = 1.0, order_noise_ratio: float = 1.0, rho: float = 0.5,
                        order_min: int = 8) -> dict[str, float]:
    """:func:`theorem1_constants` for validated inputs."""
    s0, b, r, l0 = noise_min, order_noise_ratio, rho, order_min
    kappa = s0 * s0 * math.expm1(1.0 / (s0 * s0))
    u0 = r * math.exp(b / 2.0) / (s0 * s0)
    r0 = 2.0 * math.exp(1.0 / (s0 * s0)) * r * math.exp(b / 2.0) * _g_over_u(u0)
    big_b = 2.0 * kappa + r0
    c = 2.0 * math.sqrt(big_b / (1.0 - 1.0 / l0 - 1.0 / l0**2))
    return {
        "c1": 2.0 * big_b * b / (1.0 + 2.0 / l0),
        "c2": c,
        "c3": (c**4 / (2.0 * big_b * r)) ** (1.0 / 3.0),
        "c4": c * c / (2.0 * big_b * l0),
        "noise_min": s0,
        "B": big_b,
    }


#: Default valid constants (noise_min = 1, order_noise_ratio = 1, rho = 0.5, order_min = 8), computed, not typed:
#: c1 ~ 6.99, c2 ~ 4.51, c3 ~ 4.56, c4 ~ 0.291 (c2 multiplies sqrt(N L)/(m eps) in noise-multiplier units;
#: in Alg. 1's sigma it is Delta * c2, i.e. ~9.02 for the valid sensitivity 2h).
THEOREM1_CONSTANTS = _theorem1_constants()
THEOREM1_C1 = THEOREM1_CONSTANTS["c1"]
THEOREM1_C2 = THEOREM1_CONSTANTS["c2"]
THEOREM1_C3 = THEOREM1_CONSTANTS["c3"]
THEOREM1_C4 = THEOREM1_CONSTANTS["c4"]
THEOREM1_NOISE_MIN = THEOREM1_CONSTANTS["noise_min"]


def theorem1_epsilon_range(delta: float, *, iterations: int, trajectories: int) -> tuple[float, float]:
    """The epsilons for which the valid Theorem 1 (:func:`theorem1_sigma`) holds: (eps_min, eps_max).

    With L = ln(1/delta), eps_min = c3 (N L^2)^{1/3} / m and
    eps_max = min(c1 N / m^2, c4 L, (c2 / noise_min) sqrt(N L) / m) (conditions P3, P2, P4, P1 of
    :func:`theorem1_constants`; P1 is implied by P2 and P4 since c1 c4 <= c2^2). The range is non-empty
    iff (c3/c1)^{3/2} L m^{3/2} <= N <= (c4 m / c3)^3 L, which needs m >= (c3/c1)(c3/c4)^2 ~ 160 at the
    default constants (e.g. m = 1000, delta = 1e-5: 1.9e5 <= N <= 3.0e6).

    Args:
        delta: target delta, in (0, 1).
        iterations: N, the number of iterations of Alg. 1, an int >= 1.
        trajectories: m, the number of trajectories, an int >= 1.

    Returns:
        (eps_min, eps_max); the range is empty when eps_min > eps_max.

    Raises:
        ValueError: an argument is outside its range.
    """
    d = V.open_unit("delta", delta)
    n = V.positive_int("iterations", iterations)
    m = V.positive_int("trajectories", trajectories)
    return _theorem1_epsilon_range(d, iterations=n, trajectories=m)


def _theorem1_epsilon_range(delta: float, *, iterations: int, trajectories: int) -> tuple[float, float]:
    """:func:`theorem1_epsilon_range` for validated inputs."""
    n, m = iterations, trajectories
    big_l = math.log(1.0 / delta)
    eps_min = THEOREM1_C3 * (n * big_l * big_l) ** (1.0 / 3.0) / m
    eps_max = min(THEOREM1_C1 * n / m**2, THEOREM1_C4 * big_l,
                  THEOREM1_C2 / THEOREM1_NOISE_MIN * math.sqrt(n * big_l) / m)
    return eps_min, eps_max


def theorem1_sigma(epsilon: float, delta: float, *, iterations: int, trajectories: int,
                   neighbouring: Relation = "replace_one", adjacency: Optional[str] = None) -> float:
    """Valid GPOPE Theorem 1: sigma = Delta c2 sqrt(N ln(1/delta)) / (m epsilon), with explicit constants.

    sigma is Alg. 1's noise scale (noise h N(0, sigma^2 I)), Delta = sensitivity / h from
    :func:`sensitivity` (2 for "replace_one" and "add_remove", 1 for "zero_out", the paper's convention), and
    c2 = THEOREM1_C2 ~ 4.51 (:func:`theorem1_constants`, derived from WBK 2018 Thm 9 with every term, and
    Abadi et al. 2016's tail bound). Raises InfeasibleError when epsilon is outside
    :func:`theorem1_epsilon_range` (where this closed form is not proven; the numeric RDP accountant may
    still certify a sigma there).

    Args:
        epsilon: target epsilon, in (0, inf).
        delta: target delta, in (0, 1).
        iterations: N, the number of iterations of Alg. 1, an int >= 1.
        trajectories: m, the number of trajectories, an int >= 1.
        neighbouring: the neighbouring relation, "replace_one" (default), "add_remove" or "zero_out".
        adjacency: deprecated alias of ``neighbouring`` (its "replace" is "replace_one").

    Returns:
        sigma, Alg. 1's noise scale in units of the clip h (an upper bound on the smallest valid one).

    Raises:
        ValueError: an argument is outside its range.
        InfeasibleError: ``epsilon`` is outside :func:`theorem1_epsilon_range`.
    """
    e = V.positive("epsilon", epsilon)
    d = V.open_unit("delta", delta)
    n = V.positive_int("iterations", iterations)
    m = V.positive_int("trajectories", trajectories)
    neighbouring = relation_value(neighbouring, adjacency)
    return theorem1_sigma_unchecked(e, d, iterations=n, trajectories=m, neighbouring=neighbouring)


def theorem1_sigma_unchecked(epsilon: float, delta: float, *, iterations: int, trajectories: int,
                    neighbouring: str = "replace_one") -> float:
    """:func:`theorem1_sigma` for validated inputs (the trusted kernel; the epsilon range is still enforced).

    Args:
        epsilon: in (0, inf) (trusted).
        delta: in (0, 1) (trusted).
        iterations: N, an int >= 1 (trusted).
        trajectories: m, an int >= 1 (trusted).
        neighbouring: a relation value (trusted); default "replace_one".
    """
    e, d, n, m = epsilon, delta, iterations, trajectories
    eps_min, eps_max = _theorem1_epsilon_range(d, iterations=n, trajectories=m)
    if not eps_min <= e <= eps_max:
        raise InfeasibleError(
            f"GPOPE Theorem 1 (valid constants) needs {eps_min:.4g} <= epsilon <= {eps_max:.4g} for "
            f"iterations={n}, trajectories={m}, delta={d:g}; got epsilon={e:g}"
        )
    return priced_per_clip(neighbouring, m) * THEOREM1_C2 * math.sqrt(n * math.log(1.0 / d)) / (m * e)


# --------------------------------------------------------------------------------------------------
# Calibration of Algorithm 1's sigma
