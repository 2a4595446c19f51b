"""The update certificate of DP Q-learning's valid analysis: one step whose change is certified on a grid.

The function-space analogue of DP-SGD's clipping (Wang & Hegde 2019, Algorithm 1 with the valid analysis
described in ``privcal.rl.dpq.agent``): after a step, the change of every output over the states [0, 1] is
bounded in sup norm by ``update_clip`` and in slope by ``update_lipschitz``, from its values (and
derivatives) on a uniform grid plus the Lipschitz (curvature) slack between grid points; a step that does
not certify is scaled back. The agent's loop calls :func:`certified_step_unchecked` once per minibatch.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Optional

import numpy as np

from privcal import _validate as V
from privcal.rl.mlp import LipschitzMLP, unchecked_slope_difference_bound, unchecked_sup_difference_bound

__all__ = ["MAX_GRID", "GridValues", "grid_size", "certified_step", "certified_step_unchecked"]


#: Largest grid of the update certificate (points); a smaller update_clip / lipschitz is refused.
MAX_GRID = 2**18 + 1


def grid_size(update_clip: float, lipschitz: float, update_lipschitz: Optional[float] = None) -> int:
    """Grid points of the certificate: spacing h <= c / (4L), so the Lipschitz slack 2L h / 2 is <= c / 4;
    with a slope clip l < 2L also h <= l / (8 L^2) (the slope's slack M h / 2, M the two networks'
    curvature bound, is then about l / 10 for a trained (1, 32, 32, 2) tanh network at L = 4; a larger
    M only makes the certificate refuse more steps, never unsound).

    Args:
        update_clip: c, the sup-norm clip of one update, a float in (0, inf) (not checked).
        lipschitz: L, the networks' Lipschitz bound, a float in (0, inf) (not checked).
        update_lipschitz: l, the slope clip, a float in (0, inf), or None (no slope clip).

    Returns:
        the number of grid points on [0, 1], at least 2.

    Raises:
        ValueError: the grid would exceed :data:`MAX_GRID` points (the message names update_clip and
            update_lipschitz and the smallest values allowed).
    """
    need = 4.0 * lipschitz / update_clip  # guarded by tests/test_rl_dpq.py::test_certified_step_charges_the_old_networks_slope
    if update_lipschitz is not None and update_lipschitz < 2.0 * lipschitz:
        need = max(need, 8.0 * lipschitz**2 / update_lipschitz)
    n = math.ceil(need) + 1
    if n > MAX_GRID:
        raise ValueError(
            f"update_clip must be at least 4 * lipschitz / {MAX_GRID - 1} = {4.0 * lipschitz / (MAX_GRID - 1):.3g} "
            f"and update_lipschitz at least 8 * lipschitz^2 / {MAX_GRID - 1} = "
            f"{8.0 * lipschitz**2 / (MAX_GRID - 1):.3g} for lipschitz = {lipschitz:g}, got update_clip = "
            f"{update_clip!r}, update_lipschitz = {update_lipschitz!r}: premise 'every update certified' needs a "
            f"grid of {n} points on [0, 1] (more than {MAX_GRID})")
    return max(n, 2)


@dataclass(frozen=True)
class GridValues:
    """A network on the certificate's grid before a step: what :func:`certified_step_unchecked` compares the
    stepped network with.

    Attributes:
        values: the network's outputs on the grid, shape (n, outputs).
        slopes: the network's input derivatives on the grid (needed with a slope clip), or None (default).
    """

    values: np.ndarray
    slopes: Optional[np.ndarray] = None


#: Tries of the scaled-back step before an update is skipped.
_MAX_TRIALS = 40


def certified_step(net: LipschitzMLP, grads: list, lr: float, update_clip: float,
                   update_lipschitz: Optional[float] = None) -> tuple[float, float, float]:
    """theta <- project(theta - t lr grads) with the largest tried t in [0, 1] whose change is certified.

    The function-space analogue of DP-SGD's gradient clipping (valid analysis of Algorithm 1, see
    ``privcal.calibrators.dpq``). After the step and the Lipschitz projection, the change
    f = Q_new - Q_old of every output over the states [0, 1] is certified on the *actual new parameters*:

    * sup norm: ``privcal.rl.mlp.sup_difference_bound`` on a uniform grid (values at the grid points,
      plus (Lip(Q_new) + Lip(Q_old)) h / 2 between them), at most ``update_clip`` c;
    * Lipschitz constant (slope): at most ``update_lipschitz`` l. Lip(f) <= Lip(Q_new) + Lip(Q_old)
      always; when that exceeds l, ``privcal.rl.mlp.slope_difference_bound`` certifies it from f' at the
      grid points plus (curvature(Q_new) + curvature(Q_old)) h / 2 (tanh networks).

    The grid has ``grid_size(c, L, l)`` points (spacing at most c / (4L), and l / (8 L^2) when l < 2L).
    If a bound exceeds its clip, t is scaled back (to about 0.9 (clip - slack) / (largest grid
    change) of its value for the tighter of the two, at most halved, at least divided by 100) and the
    step redone from the old parameters, up to 40 times; if none certifies, the parameters are left
    unchanged (t = 0: the change is exactly 0, whose sup and slope are 0).

    Args:
        net: a network with one input (the state in [0, 1]); updated in place.
        grads: [(dW_i, db_i)] per layer, the descent direction per unit step (as ``net.backward`` /
            B returns it).
        lr: the step size alpha, in (0, inf).
        update_clip: c, the bound on the change of each output in sup norm over [0, 1], in (0, inf),
            units of the outputs (Q).
        update_lipschitz: l, the bound on the Lipschitz constant in the state of each output's change,
            in (0, inf), or None (default: 2L, which always holds). Below 2L the network must use tanh.

    Returns:
        (t, the step factor used, in [0, 1]; the certified bound on the sup change, in [0, c]; the
        certified bound on the change's Lipschitz constant, in [0, l]).

    Raises:
        ValueError: an argument is outside its range (the grid for c or l would be too large, the network
            does not have one input, l < 2L with a relu network, or grads does not match it).
    """
    lr = V.positive("lr", lr)
    update_clip = V.positive("update_clip", update_clip)
    if not isinstance(net, LipschitzMLP) or net.sizes[0] != 1:
        raise ValueError(f"net must be a LipschitzMLP with one input, got {net!r}")
    if update_lipschitz is not None:
        update_lipschitz = V.positive("update_lipschitz", update_lipschitz)
        if update_lipschitz >= 2.0 * net.lipschitz:
            update_lipschitz = None
        elif net.activation != "tanh":
            raise ValueError(f"update_lipschitz must be at least 2 * lipschitz = {2.0 * net.lipschitz:g} for "
                             f"activation {net.activation!r}, got {update_lipschitz!r}")
    shapes = [(w.shape, b.shape) for w, b in zip(net.weights, net.biases)]
    if len(grads) != len(shapes) or any(np.shape(dw) != ws or np.shape(db) != bs
                                        for (dw, db), (ws, bs) in zip(grads, shapes)):
        raise ValueError("grads must hold one (dW, db) per layer with the shapes of net's parameters")
    grid = np.linspace(0.0, 1.0, grid_size(update_clip, net.lipschitz, update_lipschitz))[:, None]
    values, slopes = net.input_derivative(grid)
    old = GridValues(values, slopes if update_lipschitz is not None else None)
    factor, bound, slope, _, _, _ = certified_step_unchecked(net, grads, lr, update_clip, grid, old, update_lipschitz)
    return factor, bound, slope


def certified_step_unchecked(net: LipschitzMLP, grads: list, lr: float, clip: float, grid: np.ndarray,
                             old: GridValues, lip_clip: Optional[float] = None) -> tuple:
    """:func:`certified_step` without validation, on a grid the caller keeps (the agent's update loop).

    Args:
        net: a one-input :class:`~privcal.rl.mlp.LipschitzMLP`; updated in place (not checked).
        grads: [(dW_i, db_i)] per layer, matching ``net`` (not checked).
        lr: alpha, a float in (0, inf) (not checked).
        clip: c, the sup-norm clip, a float in (0, inf) (not checked).
        grid: the states, shape (n, 1), uniform on [0, 1] with n = :func:`grid_size` points.
        old: the network on ``grid`` before the step (:class:`GridValues`: its outputs and, with ``lip_clip``, its
            input derivatives).
        lip_clip: l, the slope clip, or None: then the slope bound is Lip(Q_new) + Lip(Q_old) <= 2L, not
            enforced beyond the projection.

    Returns:
        (t, certified sup bound, certified slope bound, new values on the grid, new slopes on the grid
        (None without ``lip_clip``), 1 if projected else 0).
    """
    old_values, old_slopes = old.values, old.slopes
    if not all(np.isfinite(dw).all() and np.isfinite(db).all() for dw, db in grads):
        return 0.0, 0.0, 0.0, old_values, old_slopes, 0  # no step of a non-finite direction is certified
    weights = [w.copy() for w in net.weights]
    biases = [b.copy() for b in net.biases]
    lip_old = net.lipschitz_bound()
    curv_old = net.curvature_bound() if lip_clip is not None else math.inf
    spacing = 1.0 / (grid.shape[0] - 1)
    factor = 1.0
    for _ in range(_MAX_TRIALS):
        for w, b, w0, b0, (dw, db) in zip(net.weights, net.biases, weights, biases, grads):
            np.subtract(w0, factor * lr * dw, out=w)
            np.subtract(b0, factor * lr * db, out=b)
        projected = int(net.project() != 1.0)
        lip_new = net.lipschitz_bound()
        cap = lip_old + lip_new  # Lip(Q_new - Q_old) <= Lip(Q_new) + Lip(Q_old), always; guarded by tests/test_rl_dpq.py::test_certified_step_charges_the_old_networks_slope
        if lip_clip is None:
            values, slopes = net(grid), None
        else:
            values, slopes = net._input_derivative(grid)
        bound, largest = unchecked_sup_difference_bound(values, old_values, cap, spacing)
        shrink = 1.0
        if not bound <= clip:  # also a nan bound (non-finite gradients): never certified; guarded by tests/test_guard_mlp.py::test_a_step_whose_exact_change_exceeds_the_clip_is_scaled_back
            room = clip - 0.5 * cap * spacing
            shrink = 0.9 * room / largest if room > 0.0 and largest > 0.0 else 0.01
        slope = cap
        if lip_clip is not None and cap > lip_clip:
            curvature = curv_old + net.curvature_bound()
            slope, steepest = unchecked_slope_difference_bound(slopes, old_slopes, curvature, spacing, cap)
            if not slope <= lip_clip:
                room = lip_clip - 0.5 * curvature * spacing
                shrink = min(shrink, 0.9 * room / steepest if room > 0.0 and steepest > 0.0 else 0.01)
        if shrink == 1.0 and slope <= 2.0 * net.lipschitz:  # slope: nan-safe (cap is nan for nan weights)
            return factor, bound, slope, values, slopes, projected
        if not shrink < 1.0:  # nan: shrink as much as allowed
            shrink = 0.01
        factor *= min(0.5, max(0.01, shrink))
    for w, b, w0, b0 in zip(net.weights, net.biases, weights, biases):  # nothing certified: no step
        w[...] = w0
        b[...] = b0
    return 0.0, 0.0, 0.0, old_values, old_slopes, 0
