r"""GPOPE (gradient-perturbed off-policy evaluation) privacy formulas: sensitivity and Theorem 1.

The GPOPE paper ("Privacy Preserving Off-Policy Evaluation", ../shared/papers/003_a2204df6124aecb1.txt)
runs N iterations; each one picks one of m trajectories uniformly at random, clips its primal-dual
gradient to norm h (Alg. 1, step 5) and adds h * N(0, sigma^2 I) (step 6). Its privacy analysis is
Lemma 1 (per-step log moment, see :func:`privcal.analysis.subsampling.rdp_gpope_lemma1_paper`) and Theorem 1
(sigma >= c2 sqrt(N log(1/delta)) / (m epsilon) for epsilon < c1 N / m^2).

Verdicts (evidence in tests/test_gpope_accounting.py and tests/test_subsampling.py):

* Sensitivity. One released clipped gradient has l2 sensitivity **2h**, not h, under replace-one
  neighbours (Def. 1, "differ by exactly one point", with m fixed so that q = 1/m) *and* under
  add/remove: the output is one trajectory's gradient (not a sum), so changing the data set swaps the
  released vector for another one in the h-ball -- e.g. b_hat and -b_hat at theta = w = 0. The paper's
  h (proof of Lemma 1: "without loss of generality ... sum of the others = 0") is not rescued by the
  zero-out relation either (a trajectory replaced by a null one whose clipped gradient is 0): the null
  trajectory is still drawn with probability 1/m in place of another, so with the others at -h the pair is
  (1 - q) N(-h) + q N(+h) against (1 - q) N(-h) + q N(0) (Lebeda, Regehr, Kamath & Steinke 2024), and privcal
  prices zero-out as replace-one at 2h (``privcal.accounting.pairs``, docs/pld.md section 1).
* Theorem 1 as printed is false for any constants: with epsilon near c1 N/m^2 and N >> m^2 the printed
  sigma tends to 0 and the mechanism is not (epsilon, delta)-DP (a post-processing lower bound in the
  tests, even with the paper's sensitivity h). Its appendix is not self-consistent either (see
  :data:`THEOREM1_C2_PAPER`): c2 = 2 does not follow from its own Lemma 1. A valid version needs, besides
  epsilon <= c1 N/m^2, an upper limit epsilon <= c4 ln(1/delta) (which implies the appendix's unstated
  noise floor sigma >= noise_min * Delta) and a *lower* limit epsilon >= c3 (N ln(1/delta)^2)^{1/3} / m
  (WBK Thm 9's j >= 3 terms do not vanish as sigma grows). :func:`theorem1_sigma` gives it with explicit
  constants (c2 ~ 4.51 per unit of sensitivity); :func:`theorem1_sigma_paper` the printed form, c2 = 2.
"""

from __future__ import annotations

import functools
import math
import warnings
from dataclasses import dataclass
from typing import Callable, Optional, TypeVar, Union

import numpy as np
from numpy.typing import ArrayLike

from .. import _validate as V
from ..analysis import rdp, subsampling
from ..accounting import pairs
from ..accounting.accountants import PaperAccountant, RDPAccountant
from ..accounting.registry import ACCOUNTANTS
from ..accounting.events import ComposedEvent, Neighbouring, Releases, SelfComposedEvent
from ..errors import InfeasibleError
from ..privacy_loss import MemoryLimitError
from ..analysis.rdp import GridEdgeWarning

__all__ = [
    "SENSITIVITY_PER_CLIP",
    "Relation",
    "clip_gradient",
    "primal_dual_gradient",
    "sensitivity",
    "sensitivity_paper",
    "rdp_per_iteration",
    "THEOREM1_C2_PAPER",
    "theorem1_c1_paper",
    "theorem1_sigma_paper",
    "theorem1_constants",
    "THEOREM1_CONSTANTS",
    "THEOREM1_C1",
    "THEOREM1_C2",
    "THEOREM1_C3",
    "THEOREM1_C4",
    "THEOREM1_NOISE_MIN",
    "theorem1_epsilon_range",
    "theorem1_sigma",
    "BOUNDS",
    "GPOPECalibration",
    "calibrate",
    "calibrate_report",
    "calibrate_report_unchecked",
    "calibrate_sigma_unchecked",
    "epsilon_at_unchecked",
    "priced_per_clip",
    "gpope_event",
    "valid_epsilon_unchecked",
    "Thm9Accountant",
]

#: Neighbouring relations (``privcal.Neighbouring`` values) :func:`sensitivity` knows, with the
#: sensitivity of one released clipped gradient in units of the clip h.
SENSITIVITY_PER_CLIP = {"replace_one": 2.0, "add_remove": 2.0, "zero_out": 1.0}
#: Former name of :data:`SENSITIVITY_PER_CLIP`, keyed by the former spellings ("replace" = replace-one);
#: reached as ``ADJACENCIES`` with a DeprecationWarning (since 0.2.0, removed in 0.3.0).
_ADJACENCIES = {"replace": 2.0, "add_remove": 2.0, "zero_out": 1.0}


def __getattr__(name: str):
    if name == "ADJACENCIES":
        warnings.warn("privcal.calibrators.gpope.ADJACENCIES is deprecated: use SENSITIVITY_PER_CLIP (keyed by "
                      "'replace_one', not 'replace'); removed in 0.3.0", DeprecationWarning, stacklevel=2)
        return _ADJACENCIES
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def priced_per_clip(neighbouring: str, trajectories: int) -> float:
    """The sensitivity, in units of h, at which the valid bounds price one iteration under ``neighbouring``.

    2 for every relation when m > 1 -- zero-out included, since the null trajectory still takes the
    draw's slot and displaces another one, so zero-out is priced as replace-one at twice its sensitivity h
    (``privcal.accounting.pairs``; docs/pld.md, section 1.3) -- and the relation's own sensitivity at m = 1.

    Args:
        neighbouring: a validated relation value, "replace_one", "add_remove" or "zero_out" (not checked).
        trajectories: m, an int >= 1 (not checked).

    Returns:
        The priced sensitivity per clip, 1.0 or 2.0.
    """
    if trajectories > 1:
        return 2.0
    return SENSITIVITY_PER_CLIP[neighbouring]


#: The sampling each relation implies: one of m trajectories drawn per iteration is Poisson-like under
#: add/remove (``rdp_per_iteration``), a fixed batch of one drawn without replacement otherwise.
_SAMPLING = {"replace_one": "without_replacement", "add_remove": "poisson", "zero_out": "without_replacement"}


#: A neighbouring relation: a :class:`~privcal.Neighbouring` or its value.
Relation = Union[Neighbouring, str]


def _relation(neighbouring, adjacency=None) -> str:
    """The validated relation's value ("replace_one", "add_remove" or "zero_out").

    Accepts a :class:`~privcal.Neighbouring` or its value; the former keyword ``adjacency`` and the
    former spelling "replace" still work, with a DeprecationWarning."""
    if adjacency is not None:
        warnings.warn("adjacency= is deprecated; use neighbouring=", DeprecationWarning, stacklevel=3)
        neighbouring = adjacency
    if isinstance(neighbouring, str) and neighbouring == "replace":
        warnings.warn('neighbouring "replace" is now spelt "replace_one"', DeprecationWarning, stacklevel=3)
        neighbouring = "replace_one"
    return Neighbouring(V.choice("neighbouring", neighbouring, tuple(SENSITIVITY_PER_CLIP))).value


def clip_gradient(gradient: ArrayLike, clip: float) -> np.ndarray:
    """Clip to l2 norm ``clip``: g / max(1, ||g||_2 / h) (GPOPE Alg. 1, step 5).

    Args:
        gradient: the vector g to clip, any real array (taken as float).
        clip: h, the l2 norm bound, in (0, inf).

    Returns:
        g scaled down to norm h if its norm exceeds h, else g (as a float array).

    Raises:
        ValueError: ``clip`` is outside its range.
    """
    h = V.positive("clip", clip)
    g = np.asarray(gradient, dtype=float)
    norm = float(np.linalg.norm(g))
    return g / max(1.0, norm / h)


def primal_dual_gradient(
    a_hat: ArrayLike, b_hat: ArrayLike, c_hat: ArrayLike, theta: ArrayLike, w: ArrayLike
) -> np.ndarray:
    """Stacked primal and negative dual gradient B(theta, w) = [[0, -A^T], [A, C]] [theta; w] - [0; b] (GPOPE Eq. 4.1).

    A, b, C are one trajectory's estimates of GPOPE Eq. (2.2): A = (1/tau) sum rho_t phi_t (phi_t - gamma
    phi_{t+1})^T, b = (1/tau) sum rho_t R_t phi_t, C = (1/tau) sum phi_t phi_t^T.

    Args:
        a_hat: A, an (n, n) real matrix.
        b_hat: b, a length-n real vector.
        c_hat: C, an (n, n) real matrix.
        theta: the primal parameter, a length-n real vector (n features).
        w: the dual parameter, a length-n real vector.

    Returns:
        the length-2n vector [-A^T w; A theta + C w - b].

    Raises:
        ValueError: the shapes do not match ``theta``.
    """
    a = np.asarray(a_hat, dtype=float)
    b = np.asarray(b_hat, dtype=float)
    c = np.asarray(c_hat, dtype=float)
    th = np.asarray(theta, dtype=float)
    ww = np.asarray(w, dtype=float)
    n = th.shape[0]
    if a.shape != (n, n) or c.shape != (n, n) or b.shape != (n,) or ww.shape != (n,):
        raise ValueError(f"a_hat and c_hat must be ({n}, {n}) and b_hat, w length {n} to match theta")
    return np.concatenate([-a.T @ ww, a @ th + c @ ww - b])


def sensitivity(clip: float, neighbouring: Relation = "replace_one", *, adjacency: Optional[str] = None) -> float:
    """l2 sensitivity of one released clipped gradient of GPOPE Alg. 1: 2h (replace, add_remove) or h (zero_out).

    The released vector is clip(B(x_i)) for *one* sampled trajectory x_i, every such vector lies in the
    ball of radius h, and two of them can be opposite (||clip(g) - clip(g')|| = 2h, e.g. the gradients at
    theta = w = 0 of two trajectories whose rewards differ in sign). Replace-one (GPOPE Def. 1 with m fixed)
    swaps x for x': 2h. Add/remove also gives 2h: removing x replaces the component N(clip(B(x)), .) of the
    output mixture by the other trajectories' components, which may sit at -h (a sum over a Poisson
    batch would give h, a single sampled gradient does not). Zero-out (x replaced by a null trajectory
    whose clipped gradient is 0): h -- the paper's convention (:func:`sensitivity_paper`); but the valid
    bounds still price it at 2h, because the null trajectory displaces another from the draw (see
    :func:`rdp_per_iteration`).

    Args:
        clip: h, the l2 clipping norm of one gradient, in (0, inf).
        neighbouring: the neighbouring relation, one of "replace_one" (default), "add_remove", "zero_out".
        adjacency: former name of ``neighbouring`` (deprecated; its "replace" is "replace_one").

    Returns:
        the l2 sensitivity, in the units of ``clip``: 2h or h.

    Raises:
        ValueError: an argument is outside its range.
    """
    h = V.positive("clip", clip)
    neighbouring = _relation(neighbouring, adjacency)
    return _sensitivity(h, neighbouring)


def _sensitivity(clip: float, neighbouring: str = "replace_one") -> float:
    """:func:`sensitivity` for validated inputs."""
    return SENSITIVITY_PER_CLIP[neighbouring] * clip


def sensitivity_paper(clip: float) -> float:
    """The sensitivity the GPOPE paper uses for one clipped gradient: h (proof of Lemma 1, Eq. B.1).

    GPOPE App. B.1 sets one trajectory's clipped gradient to e1 and the others' to 0 "without loss of
    generality", giving D_alpha(mu0 || mu1) = alpha / (2 sigma^2) for unit shift. It is not without loss of
    generality: the valid value is 2h under the paper's neighbouring relation (:func:`sensitivity`).

    Args:
        clip: h, the l2 clipping norm of one gradient, in (0, inf).

    Returns:
        h (not a valid sensitivity).

    Raises:
        ValueError: ``clip`` is outside its range.
    """
    return V.positive("clip", clip)


def rdp_per_iteration(
    orders: ArrayLike, sigma: float, *, trajectories: int, neighbouring: Relation = "replace_one",
    adjacency: Optional[str] = None,
) -> np.ndarray:
    """Valid RDP of one GPOPE iteration (one of m trajectories, clipped to h, plus h N(0, sigma^2 I)).

    With q = 1/m and the noise multiplier s = sigma / Delta (Delta = sensitivity / h, :func:`sensitivity`):
    * "add_remove": exactly the Poisson sampled Gaussian rdp_poisson_gaussian(orders, sigma/2, 1/m)
      (MTZ 2019). Removing x turns M(d) = sum_i w_i [(1-q) N(g_i) + q N(g_x)] into sum_i w_i N(g_i); by
      joint quasi-convexity of D_alpha (van Erven & Harremoes 2014, Thm 13) the divergence is at most the
      worst single pair (1-q) N(g_i) + q N(g_x) vs N(g_i), shift <= 2h, and that pair is attained.
    * "replace_one": WBK 2018 Thm 9, full sum, base Gaussian at s = sigma/2 (replace-one sensitivity 2h).
    * "zero_out": the same as "replace_one" (x replaced by a null trajectory has sensitivity h, but the null
      trajectory still takes the draw's slot, displacing another: priced as replace-one at 2h; at m = 1
      nothing is displaced and s = sigma).

    (The two without-replacement cases use WBK's Gaussian-specific Thm 27, never above Thm 9.)

    Args:
        orders: Renyi orders alpha, a non-empty 1-D sequence of finite numbers > 1.
        sigma: Alg. 1's noise scale in units of the clip h (the noise is h N(0, sigma^2 I)), in (0, inf).
        trajectories: m, the number of trajectories (one is drawn per iteration, q = 1/m), an int >= 1.
        neighbouring: the neighbouring relation, "replace_one" (default), "add_remove" or "zero_out".
        adjacency: former name of ``neighbouring`` (deprecated; its "replace" is "replace_one").

    Returns:
        the RDP curve of one iteration (nats), one value per order.

    Raises:
        ValueError: an argument is outside its range.
    """
    orders = rdp.check_orders(orders)
    sigma = V.positive("sigma", sigma)
    m = V.positive_int("trajectories", trajectories)
    neighbouring = _relation(neighbouring, adjacency)
    return _rdp_per_iteration(orders, sigma, trajectories=m, neighbouring=neighbouring)


def _rdp_per_iteration(orders: np.ndarray, sigma: float, *, trajectories: int, neighbouring: str = "replace_one") -> np.ndarray:
    """:func:`rdp_per_iteration` for validated inputs."""
    s = sigma / priced_per_clip(neighbouring, trajectories)
    if neighbouring == "add_remove":
        return subsampling.rdp_poisson_gaussian_unchecked(orders, s, 1.0 / trajectories)
    return subsampling.rdp_without_replacement_gaussian_unchecked(orders, s, 1.0 / trajectories)


# --------------------------------------------------------------------------------------------------
# Theorem 1 as printed (constants from Appendix B.2)
# --------------------------------------------------------------------------------------------------

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
    return _theorem1_sigma_paper(e, d, iterations=n, trajectories=m, c2=c)


def _theorem1_sigma_paper(
    epsilon: float, delta: float, *, iterations: int, trajectories: int, c2: float = THEOREM1_C2_PAPER
) -> float:
    """:func:`theorem1_sigma_paper` for validated inputs."""
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

    The second parameter was called ``beta`` before; it is not the kernel beta, and ``beta=`` is still
    accepted (deprecated).

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
        adjacency: former name of ``neighbouring`` (deprecated; its "replace" is "replace_one").

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
    neighbouring = _relation(neighbouring, adjacency)
    return _theorem1_sigma(e, d, iterations=n, trajectories=m, neighbouring=neighbouring)


def _theorem1_sigma(epsilon: float, delta: float, *, iterations: int, trajectories: int,
                    neighbouring: str = "replace_one") -> float:
    """:func:`theorem1_sigma` for validated inputs."""
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
# --------------------------------------------------------------------------------------------------

#: The bounds :func:`calibrate` offers: valid ones first ("best": the smallest sigma among the valid
#: accountants "rdp" and "pld").
BOUNDS = ("best", "rdp", "pld", "thm9", "theorem1", "lemma1", "theorem1_paper")
#: The accountant-priced valid bounds "best" chooses from.
_BEST_OF = ("rdp", "pld")


@dataclass(frozen=True)
class GPOPECalibration:
    """Result of :func:`calibrate_report`: sigma for a target (epsilon, delta), the bound and the
    accountant that gave it, and the epsilon a valid accountant certifies at it. The same kind of report
    as ``privcal.calibrators.dpq.calibrate``'s :class:`~privcal.calibrators.dpq.DPQCalibration` (``sigma``,
    ``accountant``, ``epsilon``, ``delta``, ``notes``).

    Attributes:
        sigma: Alg. 1's noise scale in units of the clip h (the noise is clip * N(0, sigma^2 I)), in (0, inf).
        noise_std: clip * sigma, the absolute noise standard deviation.
        epsilon: target epsilon, in (0, inf).
        delta: target delta, in (0, 1).
        iterations: N, the number of iterations of Alg. 1.
        trajectories: m, the number of trajectories (one drawn per iteration).
        bound: the bound asked for, one of :data:`BOUNDS`.
        neighbouring: the neighbouring relation, "replace_one", "add_remove" or "zero_out".
        valid: whether the bound used is a valid (epsilon, delta) guarantee.
        valid_epsilon: an upper bound on epsilon at this sigma from a valid accountant, same
            neighbouring: the PLD's certified upper bound when PLD priced sigma, else the valid RDP
            accountant's (for the paper bounds: whether their sigma is actually enough).
        notes: warnings and explanations, in words.
        accountant: the accountant that priced sigma: "rdp" (WBK Thm 27 / MTZ), "pld" (privacy loss
            distribution, certified), "rdp-thm9" (WBK Thm 9 alone) or "paper" (Lemma 1 + moments tail);
            None for the closed forms ("theorem1", "theorem1_paper").
    """

    sigma: float
    noise_std: float
    epsilon: float
    delta: float
    iterations: int
    trajectories: int
    bound: str
    neighbouring: str
    valid: bool
    valid_epsilon: float
    notes: tuple[str, ...] = ()
    accountant: Optional[str] = None

    @property
    def adjacency(self) -> str:
        """Former name of :attr:`neighbouring` (deprecated since 0.2.0, removed in 0.3.0)."""
        warnings.warn("GPOPECalibration.adjacency is deprecated: use .neighbouring; removed in 0.3.0",
                      DeprecationWarning, stacklevel=2)
        return self.neighbouring


def _innermost(event):
    """``event`` without its self-composition layers (a composition of one event counts as that event)."""
    while True:
        if isinstance(event, SelfComposedEvent):
            event = event.event
        elif isinstance(event, ComposedEvent) and len(event.events) == 1:
            event = event.events[0]
        else:
            return event


class Thm9Accountant(RDPAccountant):
    """RDP accountant whose without-replacement steps use WBK 2018 Thm 9 alone (the full sum, Wang, Balle &
    Kasiviswanathan 2019, Thm 9): the ``"thm9"`` bound of :func:`calibrate`."""

    name = "rdp-thm9"

    def _subsampled_rdp(self, event, orders):
        event = pairs.priced_event(event)  # zero-out: replace-one at twice the sensitivity
        if event.sampling == "without_replacement":
            nm = _innermost(event.event).noise_multiplier
            if math.isinf(nm):  # no information released
                return np.zeros_like(orders)
            return subsampling.rdp_without_replacement_gaussian_thm9_unchecked(orders, nm, event.sample_rate)
        return super()._subsampled_rdp(event, orders)


def _releases(trajectories: int, iterations: int, neighbouring: str) -> Releases:
    """N GPOPE iterations as releases: one of m trajectories per iteration (q = 1/m), sensitivity
    Delta * h under the neighbouring's named relation, noise h N(0, sigma^2 I) -- in units of h, sensitivity
    Delta and noise sigma."""
    return Releases.unchecked(
        SENSITIVITY_PER_CLIP[neighbouring], iterations, 1.0 / trajectories, _SAMPLING[neighbouring],
        Neighbouring(neighbouring),
    )


def gpope_event(sigma: float, trajectories: int, iterations: int, neighbouring: str) -> SelfComposedEvent:
    """The event of N GPOPE iterations at noise multiplier sigma (noise h N(0, sigma^2 I)).

    Args:
        sigma: noise multiplier in units of the clip h, in (0, inf] (not checked).
        trajectories: m, one trajectory drawn per iteration (q = 1/m), an int >= 1 (not checked).
        iterations: N, an int >= 1 (not checked).
        neighbouring: "replace_one", "add_remove" or "zero_out" (not checked).

    Returns:
        The composed event, N self-compositions of the subsampled Gaussian of one iteration.
    """
    return _releases(trajectories, iterations, neighbouring).event(sigma)


def valid_epsilon_unchecked(sigma: float, delta: float, trajectories: int, iterations: int,
                            neighbouring: str) -> float:
    """Epsilon of N iterations at ``sigma`` under the valid RDP accountant (trusted: inputs not checked).

    A paper sigma far too small puts the RDP optimum at the grid edge, so GridEdgeWarning is silenced.

    Args:
        sigma: noise multiplier in units of the clip h, in (0, inf).
        delta: target delta, in (0, 1).
        trajectories: m, an int >= 1.
        iterations: N, an int >= 1.
        neighbouring: "replace_one", "add_remove" or "zero_out".

    Returns:
        An upper bound on epsilon (RDP conversion).
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", GridEdgeWarning)
        return RDPAccountant().compose_unchecked(gpope_event(sigma, trajectories, iterations, neighbouring)).epsilon_unchecked(delta)


#: The accountant that owns each accountant-priced bound's calibration, and the relation it is priced
#: under (None: the one asked for). "lemma1" is the paper's accounting: Lemma 1 with its sensitivity h.
_ACCOUNTANT_BOUNDS = {
    "rdp": (RDPAccountant, None), "pld": (ACCOUNTANTS["pld"], None), "thm9": (Thm9Accountant, None),
    "lemma1": (PaperAccountant, "zero_out"),
}
#: The bounds that are valid (epsilon, delta) guarantees.
_VALID_BOUNDS = ("best", "rdp", "pld", "thm9", "theorem1")


def calibrate_report(
    epsilon: float,
    delta: float,
    *,
    iterations: int,
    trajectories: int,
    clip: float = 1.0,
    bound: str = "best",
    neighbouring: Relation = "replace_one",
    adjacency: Optional[str] = None,
) -> GPOPECalibration:
    """:func:`calibrate` with the valid epsilon at the returned sigma and notes.

    What it calibrates: the noise scale sigma of GPOPE Algorithm 1 (noise clip * N(0, sigma^2 I)) for a
    target (epsilon, delta) under ``bound`` (see :func:`calibrate`). The accountant-priced bounds
    ("rdp", "pld", "thm9", "lemma1") reach their accountant's calibration through its one method
    ``Accountant.sigma_for_unchecked`` (RDP: the windowed order search; PLD: its secant on a fixed grid);
    "best" (the default) runs "rdp" and "pld" and keeps the smaller sigma, and ``accountant`` says
    which one gave it; "theorem1" and "theorem1_paper" are closed forms. The answer is then priced by a
    valid accountant (``valid_epsilon``: PLD's certified upper bound when PLD priced it, else RDP's).
    This is the documented calibrator; :func:`calibrate` is its shortcut for the sigma alone.

    Args:
        epsilon: target epsilon, in (0, inf).
        delta: target delta, in (0, 1).
        iterations: N, the number of iterations of Alg. 1, an int >= 1.
        trajectories: m, the number of trajectories (one drawn per iteration), an int >= 1.
        clip: h, the l2 clipping norm of one gradient, in (0, inf); default 1. It only scales
            ``noise_std``.
        bound: one of :data:`BOUNDS`: "best" (default), "rdp", "pld", "thm9", "theorem1", "lemma1",
            "theorem1_paper".
        neighbouring: the neighbouring relation, "replace_one" (default), "add_remove" or "zero_out".
        adjacency: former name of ``neighbouring`` (deprecated; its "replace" is "replace_one").

    Returns:
        a :class:`GPOPECalibration`.

    Raises:
        ValueError: an argument is outside its range.
        InfeasibleError: the bound cannot reach the target (e.g. "theorem1" outside its epsilon range).
    """
    e = V.positive("epsilon", epsilon)
    d = V.open_unit("delta", delta)
    n = V.positive_int("iterations", iterations)
    m = V.positive_int("trajectories", trajectories)
    h = V.positive("clip", clip)
    V.choice("bound", bound, BOUNDS)
    neighbouring = _relation(neighbouring, adjacency)
    return calibrate_report_unchecked(e, d, iterations=n, trajectories=m, clip=h, bound=bound, neighbouring=neighbouring)


def calibrate_report_unchecked(
    epsilon: float,
    delta: float,
    *,
    iterations: int,
    trajectories: int,
    clip: float = 1.0,
    bound: str = "best",
    neighbouring: str = "replace_one",
) -> GPOPECalibration:
    """:func:`calibrate_report` without validation, for callers that validated the arguments (``privcal train gpope``, whose command
    line checks each value once, and the GPOPE table): the same report, the same sigma.

    Args:
        epsilon: target epsilon, a float in (0, inf) (not checked).
        delta: target delta, a float in (0, 1) (not checked).
        iterations: N, an int >= 1 (not checked).
        trajectories: m, an int >= 1 (not checked).
        clip: h, a float in (0, inf) (not checked); default 1.
        bound: one of :data:`BOUNDS` (not checked); default "best".
        neighbouring: a ``privcal.Neighbouring`` value, "replace_one" (default), "add_remove" or "zero_out"
            (not checked; no deprecated spelling).

    Returns:
        a :class:`GPOPECalibration`.

    Raises:
        InfeasibleError: the bound cannot reach the target.
    """
    e, d, n, m = epsilon, delta, iterations, trajectories
    sigma, name, last, skipped = _calibrated(e, d, n, m, bound, neighbouring)
    notes = list(skipped)
    valid = bound in _VALID_BOUNDS
    if bound == "lemma1":
        notes.append("GPOPE Lemma 1 + moments tail with sensitivity h, as printed: not a valid bound in general")
    elif bound == "theorem1_paper":
        notes.append("GPOPE Theorem 1 as printed (c2 = 2): false for some parameters, not a valid bound")
    if name == "pld" and last is not None and last[0] == sigma:
        valid_eps = last[1]  # the calibration's last evaluation at this sigma: a certified upper end
    elif name == "pld":
        valid_eps = ACCOUNTANTS["pld"]().compose_unchecked(gpope_event(sigma, m, n, neighbouring)).epsilon_unchecked(d)
    else:
        valid_eps = valid_epsilon_unchecked(sigma, d, m, n, neighbouring)
    if not valid and valid_eps > e:
        notes.append(f"at this sigma the valid RDP accountant ({neighbouring} neighbours) gives epsilon {valid_eps:.4g} > {e:g}")
    return GPOPECalibration(
        float(sigma), float(clip * sigma), e, d, n, m, bound, neighbouring, valid, float(valid_eps), tuple(notes),
        name,
    )


def calibrate_sigma_unchecked(
    epsilon: float,
    delta: float,
    *,
    iterations: int,
    trajectories: int,
    bound: str = "best",
    neighbouring: str = "replace_one",
) -> float:
    """The sigma of :func:`calibrate_report_unchecked` alone, without pricing it again (for callers that
    only read ``.sigma``, such as the GPOPE table): the same calibration, the same sigma, and none of the
    report's extra work (the valid epsilon at sigma is a full RDP evaluation for the RDP-priced and
    closed-form bounds).

    Args:
        epsilon: target epsilon, a float in (0, inf) (not checked).
        delta: target delta, a float in (0, 1) (not checked).
        iterations: N, an int >= 1 (not checked).
        trajectories: m, an int >= 1 (not checked).
        bound: one of :data:`BOUNDS` (not checked); default "best".
        neighbouring: a ``privcal.Neighbouring`` value, "replace_one" (default), "add_remove" or "zero_out"
            (not checked; no deprecated spelling).

    Returns:
        sigma, Alg. 1's noise scale in units of the clip h.

    Raises:
        InfeasibleError: the bound cannot reach the target.
    """
    return _calibrated(epsilon, delta, iterations, trajectories, bound, neighbouring)[0]


def epsilon_at_unchecked(sigma: float, delta: float, *, iterations: int, trajectories: int, bound: str) -> float:
    """Epsilon that the accountant-priced valid ``bound`` ("rdp" or "thm9") certifies for Algorithm 1 at noise
    multiplier ``sigma`` under replace-one neighbours (the releases :func:`calibrate_sigma_unchecked` calibrates):
    one evaluation. It is non-increasing in sigma, so where it exceeds a target epsilon the bound's calibrated
    sigma is larger than ``sigma`` (the GPOPE table's lead uses this to skip calibrations that cannot win).

    Args:
        sigma: noise multiplier, a float in (0, inf) (not checked).
        delta: a float in (0, 1) (not checked).
        iterations: N, an int >= 1 (not checked).
        trajectories: m, an int >= 1 (not checked).
        bound: "rdp" or "thm9" (not checked).

    Returns:
        the certified epsilon (inf where the bound cannot certify one).
    """
    accountant, _ = _ACCOUNTANT_BOUNDS[bound]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", GridEdgeWarning)
        return accountant().compose_unchecked(gpope_event(sigma, trajectories, iterations, "replace_one")).epsilon_unchecked(delta)


def _calibrated(e: float, d: float, n: int, m: int, bound: str, neighbouring: str):
    """(sigma, name of the accountant that priced it or None, its ``calibrated`` record or None, notes) for
    validated arguments: the calibration shared by :func:`calibrate_report_unchecked` and
    :func:`calibrate_sigma_unchecked`."""
    notes = []
    name = None
    last = None
    paper = 2.0 * math.sqrt(n * math.log(1.0 / d)) / (m * e)  # the paper's closed form as a start

    # zero-out is priced as replace-one at 2h when m > 1 (:func:`priced_per_clip`): the valid accountants
    # calibrate those very releases, so that both relations start each search alike and get the same sigma
    priced = "replace_one" if neighbouring == "zero_out" and m > 1 else neighbouring

    def hint(key: str) -> Optional[float]:
        # the PLD's own start (no hint: its central-limit start, refined on a 4x coarser grid) brackets its
        # root in fewer probes of the rule grid than the paper's closed form, which can be 3x off
        return None if key == "pld" else paper

    used = {}  # the accountant objects that calibrated: their last evaluation gives the achieved epsilon
    if bound == "best":
        found = {}
        for key in _BEST_OF:
            accountant, _ = _ACCOUNTANT_BOUNDS[key]
            try:
                used[key] = accountant()
                found[key] = used[key].sigma_for_unchecked(_releases(m, n, priced), e, d, sigma_hint=hint(key))
            except (InfeasibleError, MemoryLimitError, MemoryError) as exc:  # or a PLD grid beyond its cap
                if key == _BEST_OF[-1] and not found:
                    raise
                notes.append(f"{key} skipped: {exc}")
        bound_used = min(found, key=found.get)
        sigma = found[bound_used]
        name = _ACCOUNTANT_BOUNDS[bound_used][0].name
        last = getattr(used[bound_used], "calibrated", None)
    elif bound in _ACCOUNTANT_BOUNDS:
        accountant, priced_under = _ACCOUNTANT_BOUNDS[bound]
        acc = accountant()
        sigma = acc.sigma_for_unchecked(_releases(m, n, priced_under or priced), e, d, sigma_hint=hint(bound))
        name = accountant.name
        last = getattr(acc, "calibrated", None)
    elif bound == "theorem1":
        sigma = _theorem1_sigma(e, d, iterations=n, trajectories=m, neighbouring=neighbouring)
    else:
        sigma = _theorem1_sigma_paper(e, d, iterations=n, trajectories=m)
    return sigma, name, last, tuple(notes)


def calibrate(
    epsilon: float,
    delta: float,
    *,
    iterations: int,
    trajectories: int,
    clip: float = 1.0,
    bound: str = "best",
    neighbouring: Relation = "replace_one",
    adjacency: Optional[str] = None,
) -> float:
    """Noise multiplier sigma of GPOPE Algorithm 1 (noise clip * N(0, sigma^2 I)) for (epsilon, delta)-DP.

    The shortcut for ``calibrate_report(...).sigma``: :func:`calibrate_report` is the documented
    calibrator, and its report says which accountant priced sigma (``accountant``) and the valid epsilon
    at it. N = ``iterations``, each on one of m = ``trajectories`` trajectories drawn uniformly. ``bound``:

    * ``"best"`` (default, valid): the smaller of the "rdp" and "pld" sigmas -- the tightest valid
      accountant (PLD wherever its certified bound is the smaller one, which it is at the paper's
      settings: e.g. m = 1000, N = 1e4, epsilon = 0.5 under replace-one neighbours, sigma 1.95 against
      RDP's 3.39);
    * ``"rdp"`` (valid): Renyi DP of the subsampled Gaussian -- Wang, Balle & Kasiviswanathan
      2018, Thm 27 for sampling without replacement (never above their Thm 9, whose j >= 3 terms would
      otherwise put a floor under epsilon), Mironov-Talwar-Zhang for ``neighbouring="add_remove"`` --
      composed over N iterations, improved conversion; the smallest sigma it certifies;
    * ``"pld"`` (valid): the privacy loss distribution of the same releases (``privcal.pld``), the
      smallest sigma whose certified upper epsilon meets the target;
    * ``"thm9"`` (valid): the same with WBK Thm 9 alone (the full sum over j = 2..alpha);
    * ``"theorem1"`` (valid): Theorem 1's closed form with the explicit constants derived in
      :func:`theorem1_constants` (raises ``InfeasibleError`` outside its proven epsilon range);
    * ``"lemma1"`` (paper): Lemma 1 as printed with the paper's sensitivity h and the moments tail;
    * ``"theorem1_paper"`` (paper): Theorem 1 as printed, c2 = 2.

    The accountant-priced bounds go through the accountant's ``_sigma_for`` (see :func:`calibrate_report`).
    ``clip`` = h only scales the noise std (``calibrate_report(...).noise_std``); sigma itself does not
    depend on it. Source: GPOPE paper,
    Algorithm 1, Lemma 1, Theorem 1, App. B; see the module docstring for verdicts.

    Args:
        epsilon: target epsilon, in (0, inf).
        delta: target delta, in (0, 1).
        iterations: N, the number of iterations of Alg. 1, an int >= 1.
        trajectories: m, the number of trajectories (one drawn per iteration), an int >= 1.
        clip: h, the l2 clipping norm of one gradient, in (0, inf); default 1 (does not change sigma).
        bound: one of :data:`BOUNDS` (above); default "best".
        neighbouring: the neighbouring relation: "replace_one" (default: one trajectory replaced; sensitivity
            2h), "add_remove" (2h) or "zero_out" (a trajectory replaced by a null one: sensitivity h, the
            paper's convention, but priced as replace-one at 2h by the valid bounds, because the null
            trajectory displaces another from the draw).
        adjacency: former name of ``neighbouring`` (deprecated; its "replace" is "replace_one").

    Returns:
        sigma, Alg. 1's noise scale in units of the clip h.

    Raises:
        ValueError: an argument is outside its range.
        InfeasibleError: the bound cannot reach the target.
    """
    return calibrate_report(
        epsilon, delta, iterations=iterations, trajectories=trajectories, clip=clip, bound=bound,
        neighbouring=neighbouring, adjacency=adjacency,
    ).sigma
