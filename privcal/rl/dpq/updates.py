"""DP-Q's update rules (Wang & Hegde 2019, Algorithm 1 lines 14-22): the minibatch, the SGD step of the paper and
the baselines, and the certified step of the valid analysis with its running certificate.

:func:`sgd_update` takes one plain step (Algorithm 1, or a baseline's variant: input perturbation, DP-SGD);
:func:`certified_update` one step whose change is certified on a grid of the states
(``privcal.rl.dpq.certificate.certified_step``). :class:`PlainUpdate` and :class:`CertifiedUpdate` are what the
training loop of ``privcal.rl.dpq.agent`` calls once per minibatch. ``privcal.rl.dpq.agent`` re-exports the public
functions.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Optional

import numpy as np

from privcal.rl.dpq.certificate import GridValues, certified_step_unchecked, grid_size
from privcal.rl.dpq.hyperparameters import Hyperparameters, update_lipschitz_of
from privcal.rl.mlp import LipschitzMLP

__all__ = ["Minibatch", "batch_gradients", "sgd_update", "certified_update", "certificate_slope_clip",
           "PlainUpdate", "CertifiedUpdate"]


@dataclass(frozen=True)
class Minibatch:
    """One minibatch as the update rules read it (Algorithm 1 lines 14-18).

    Attributes:
        s: the states s_i, shape (B,).
        a: the actions a_i, integers, shape (B,).
        r: the rewards r_i, shape (B,).
        s2: the next states s_{i+1}, shape (B,).
        g: the revealed noise g_{a_i}(s_i), shape (B,).
        g2: the revealed noise g_a(s_{i+1}) of every action, shape (B, actions).
        term: whether s_{i+1} is terminal, booleans, shape (B,).
    """

    s: np.ndarray
    a: np.ndarray
    r: np.ndarray
    s2: np.ndarray
    g: np.ndarray
    g2: np.ndarray
    term: np.ndarray


def batch_gradients(method: str, net: LipschitzMLP, hp: Hyperparameters, batch: Minibatch,
                    sigma: Optional[float] = None, mech_rng: Optional[np.random.Generator] = None) -> list:
    """Gradient of the batch loss (Algorithm 1 lines 19-20, or a baseline's variant), divided by B.

    Args:
        method: one of :data:`METHODS` (not checked).
        net: the Q-network (not changed).
        hp: the learner's settings (``gamma`` and, for dpsgd, ``clip``).
        batch: the minibatch.
        sigma: the baseline's noise (input_perturbation: reward noise; dpsgd: noise multiplier), else None.
        mech_rng: the baseline's random stream, else None.

    Returns:
        [(dW_i / B, db_i / B)] per layer.
    """
    bs, ba, br, bs2, bg, bg2, bterm = batch.s, batch.a, batch.r, batch.s2, batch.g, batch.g2, batch.term
    gamma = hp.gamma
    B = bs.size
    rewards = br
    if method == "input_perturbation":  # Venkatasubramanian 2013: noise on every observed reward
        rewards = br + sigma * mech_rng.standard_normal(B)
    next_q = net(bs2[:, None]) + bg2
    y = rewards + np.where(bterm, 0.0, gamma * next_q.max(axis=1))
    out, inputs = net.forward(bs[:, None])
    err = out[np.arange(B), ba] + bg - y  # d l_i / d Q(s_i, a_i)
    grad_out = np.zeros_like(out)
    grad_out[np.arange(B), ba] = err
    if method == "dpsgd":  # Abadi et al. 2016, Alg. 1: clip per example, add N(0, z^2 C^2) to the sum
        grads, _ = net.clipped_gradient_sum_unchecked(inputs, grad_out, hp.clip)
        scale = sigma * hp.clip
        grads = [(dw + scale * mech_rng.standard_normal(dw.shape),
                  db + scale * mech_rng.standard_normal(db.shape)) for dw, db in grads]
    else:
        grads = net.backward(inputs, grad_out)
    return [(dw / B, db / B) for dw, db in grads]


def sgd_update(method: str, net: LipschitzMLP, hp: Hyperparameters, batch: Minibatch,
               sigma: Optional[float] = None, mech_rng: Optional[np.random.Generator] = None) -> int:
    """One SGD step on the batch (Algorithm 1 lines 19-22, or a baseline's variant), then the projection.

    Args:
        method: one of :data:`METHODS` (not checked).
        net: the Q-network; updated in place.
        hp: the learner's settings (``lr``, ``gamma``, ``clip``).
        batch: the minibatch.
        sigma: the baseline's noise (see :func:`batch_gradients`), else None.
        mech_rng: the baseline's random stream, else None.

    Returns:
        1 if the Lipschitz projection changed the parameters, else 0.
    """
    grads = batch_gradients(method, net, hp, batch, sigma, mech_rng)
    return int(net.step_unchecked(grads, hp.lr) != 1.0)


def certified_update(net: LipschitzMLP, hp: Hyperparameters, batch: Minibatch, cached: list, cert: dict) -> int:
    """One certified step of Algorithm 1 (valid analysis): :func:`certified_step` on the batch gradient.

    Args:
        net: the Q-network; updated in place.
        hp: the learner's settings (``lr``, ``gamma``, ``update_clip``, ``update_lipschitz``).
        batch: the minibatch.
        cached: [grid, the network's values on it, its slopes on it or None]; updated in place.
        cert: the certificate's statistics (``TrainResult.certificate``); updated in place.

    Returns:
        1 if the Lipschitz projection changed the parameters, else 0.
    """
    grads = batch_gradients("dpq", net, hp, batch)
    factor, bound, slope, values, slopes, projected = certified_step_unchecked(
        net, grads, hp.lr, hp.update_clip, cached[0], GridValues(cached[1], cached[2]), certificate_slope_clip(hp))
    cached[1], cached[2] = values, slopes
    cert["max_certified"] = max(cert["max_certified"], bound)
    cert["max_certified_lipschitz"] = max(cert["max_certified_lipschitz"], slope)
    cert["scaled"] += int(factor < 1.0)
    cert["skipped"] += int(factor == 0.0)
    cert["min_factor"] = min(cert["min_factor"], factor)
    cert["max_lipschitz"] = max(cert["max_lipschitz"], net.lipschitz_bound())
    return projected


def certificate_slope_clip(hp: Hyperparameters) -> Optional[float]:
    """The slope clip the grid certificate must enforce, or None when 2L (always true) is enough.

    Args:
        hp: the learner's settings (checked, with the certificate's clips).
    """
    lip = update_lipschitz_of(hp)
    return lip if lip < 2.0 * hp.lipschitz else None


class PlainUpdate:
    """One SGD step per minibatch (Algorithm 1 lines 19-22, or a baseline's variant: :func:`sgd_update`).

    Args:
        noise: the run's checked method and noise (``method``, ``sigma``).
        hp: the learner's settings.
        mech_rng: the baseline's random stream, or None.
    """

    certificate = None

    def __init__(self, noise: Any, hp: Hyperparameters, mech_rng: Optional[np.random.Generator]):
        self.noise, self.hp, self.mech_rng = noise, hp, mech_rng

    def __call__(self, net: LipschitzMLP, batch: Minibatch) -> int:
        return sgd_update(self.noise.method, net, self.hp, batch, self.noise.sigma, self.mech_rng)

    def visited(self, s: float, s2: float) -> None:
        """States the data reached (recorded by the certificate only).

        Args:
            s: a state of the transition.
            s2: its next state.
        """

    def new_path(self) -> None:
        """A fresh noise path was drawn (counted by the certificate only)."""


class CertifiedUpdate:
    """One certified step per minibatch (valid analysis: :func:`certified_update`), with its certificate:
    the change of every update is certified on a grid of the states, at most ``update_clip`` in sup norm
    and ``update_lipschitz_of(hp)`` in slope.

    Args:
        hp: the learner's settings (checked, with the certificate's clips).
        net: the Q-network the run starts from.
    """

    def __init__(self, hp: Hyperparameters, net: LipschitzMLP):
        self.hp = hp
        slope_clip = certificate_slope_clip(hp)
        n = grid_size(hp.update_clip, hp.lipschitz, slope_clip)
        grid = np.linspace(0.0, 1.0, n)[:, None]
        self.certificate = {
            "update_clip": hp.update_clip, "update_lipschitz": update_lipschitz_of(hp), "grid_size": n,
            "max_certified": 0.0, "max_certified_lipschitz": 0.0, "scaled": 0, "skipped": 0, "min_factor": 1.0,
            "max_lipschitz": net.lipschitz_bound(), "paths": 1, "state_min": math.inf, "state_max": -math.inf,
            "restart": "released"}
        values, slopes = net.input_derivative(grid)
        self.cached = [grid, values, slopes if slope_clip is not None else None]  # the network on the grid

    def __call__(self, net: LipschitzMLP, batch: Minibatch) -> int:
        return certified_update(net, self.hp, batch, self.cached, self.certificate)

    def visited(self, s: float, s2: float) -> None:
        """Record the range of the states the data reached.

        Args:
            s: a state of the transition.
            s2: its next state.
        """
        cert = self.certificate
        cert["state_min"] = min(cert["state_min"], s, s2)
        cert["state_max"] = max(cert["state_max"], s, s2)

    def new_path(self) -> None:
        """Count a fresh noise layer (one per release)."""
        self.certificate["paths"] += 1
