"""GPOPE's released quantity and its sensitivity: the clipped primal-dual gradient of one trajectory.

The GPOPE paper ("Privacy Preserving Off-Policy Evaluation", ../shared/papers/003_a2204df6124aecb1.txt) clips
one trajectory's primal-dual gradient to norm h (Alg. 1, step 5) and adds h * N(0, sigma^2 I) (step 6). One
released clipped gradient has l2 sensitivity 2h under replace-one and add/remove neighbours (not the paper's h);
zero-out is priced as replace-one at 2h (the verdicts: ``privcal.calibrators.gpope``). Also the per-iteration RDP
of the subsampled release. ``privcal.calibrators.gpope`` re-exports every public name.
"""

from __future__ import annotations

import warnings
from typing import Optional, Union

import numpy as np
from numpy.typing import ArrayLike

from .. import _validate as V
from ..analysis import rdp, subsampling
from ..accounting import pairs
from ..accounting.events import Neighbouring

__all__ = [
    "SENSITIVITY_PER_CLIP",
    "SAMPLING_OF_RELATION",
    "Relation",
    "relation_value",
    "clip_gradient",
    "primal_dual_gradient",
    "sensitivity",
    "sensitivity_paper",
    "rdp_per_iteration",
    "priced_per_clip",
]

#: Neighbouring relations (``privcal.Neighbouring`` values) :func:`sensitivity` knows, with the
#: sensitivity of one released clipped gradient in units of the clip h.
SENSITIVITY_PER_CLIP = {"replace_one": 2.0, "add_remove": 2.0, "zero_out": 1.0}

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
SAMPLING_OF_RELATION = {"replace_one": "without_replacement", "add_remove": "poisson", "zero_out": "without_replacement"}


#: A neighbouring relation: a :class:`~privcal.Neighbouring` or its value.
Relation = Union[Neighbouring, str]


def relation_value(neighbouring: "Relation", adjacency: Optional[str] = None) -> str:
    """The validated relation's value ("replace_one", "add_remove" or "zero_out").

    Accepts a :class:`~privcal.Neighbouring` or its value; the deprecated keyword ``adjacency`` and the
    deprecated spelling "replace" are accepted too, with a DeprecationWarning.

    Args:
        neighbouring: a :class:`~privcal.Neighbouring` or its value.
        adjacency: the deprecated spelling of ``neighbouring``, or None.
    """
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
        adjacency: deprecated alias of ``neighbouring`` (its "replace" is "replace_one").

    Returns:
        the l2 sensitivity, in the units of ``clip``: 2h or h.

    Raises:
        ValueError: an argument is outside its range.
    """
    h = V.positive("clip", clip)
    neighbouring = relation_value(neighbouring, adjacency)
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
        adjacency: deprecated alias of ``neighbouring`` (its "replace" is "replace_one").

    Returns:
        the RDP curve of one iteration (nats), one value per order.

    Raises:
        ValueError: an argument is outside its range.
    """
    orders = rdp.check_orders(orders)
    sigma = V.positive("sigma", sigma)
    m = V.positive_int("trajectories", trajectories)
    neighbouring = relation_value(neighbouring, adjacency)
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
