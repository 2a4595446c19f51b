"""DP-Q's hyperparameters (Wang & Hegde 2019, App. E) and their checks: the settings object of every DP-Q run.

:class:`Hyperparameters` holds a run's settings with the paper's defaults (App. E.3) and checks them once on
construction; :func:`valid_hyperparameters` fills in what the valid analysis needs (the update certificate's
clips). ``privcal.rl.dpq.agent`` re-exports every public name.
"""

from __future__ import annotations

import copy
import numbers
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Optional

import numpy as np

from privcal import _validate as V
from privcal.rl.dpq.certificate import grid_size
from privcal.rl.mlp import ACTIVATIONS

if TYPE_CHECKING:
    from privcal.calibrators.dpq import LearnerShape

__all__ = ["METHODS", "PAPER_E3", "Hyperparameters", "valid_hyperparameters", "update_lipschitz_of", "check_gamma",
           "paper_beta", "paper_beta_e3", "check_resets"]

METHODS = ("dpq", "non_private", "input_perturbation", "dpsgd", "bgp16")

#: Wang & Hegde 2019, App. E.3: the parameters of Figure 2 (alpha, k, L, B, T, and sigma per epsilon;
#: the paper computes v = 6.19e-5, but 4 alpha (k+1) / B = 4.5e-4 at these values).
PAPER_E3 = {
    "lr": 3e-4, "k": 23, "lipschitz": 4.0, "batch_size": 64, "samples": 5000, "delta": 1e-4,
    "sigma": {0.9: 0.32, 0.45: 0.74}, "v_printed": 6.19e-5,
}


@dataclass(frozen=True)
class Hyperparameters:
    """Learner settings shared by every method (App. E.3's where the paper gives them, ours elsewhere).

    samples (T) = 5000, batch_size (B) = 64, lr (alpha) = 3e-4 and lipschitz (L) = 4 are App. E.3's
    (L^2 = 16). With alpha = 3e-4 the floor(5000/64) = 78 plain SGD steps of Algorithm 1 do not move
    this network measurably: the non-private mean return of the last 20 episodes stays at 1.5
    (10 seeds; the initial greedy policy drifts to an edge), against 19.6 at alpha = 1 (the
    move-to-the-middle policy earns 20.7), which is what the experiments use
    (``privcal.rl.dpq.experiments.LEARNING_RATE``). The valid calibration does not depend on alpha (the
    certified update and slope clips bound every step): at T = 5000, B = 64, c = 0.01, l = 0.02,
    epsilon = 0.9, delta = 1e-4 it needs sigma = 1.51 (``privcal.calibrators.dpq``).
    Not in the paper: gamma = 0.5 (the task is nearly myopic; with only 78 updates gamma = 0.9 learns
    worse, 15.2 at alpha = 1); hidden = (32, 32) tanh units; output_scale = 0.1 (the last layer starts
    small, so the initial Q is nearly flat); exploration = 0.1 (epsilon-greedy); clip = 1 (DP-SGD's C);
    update_clip = None (plain SGD steps; the valid variant of :func:`train_dpq` sets it, default
    ``privcal.calibrators.dpq.DEFAULT_UPDATE_CLIP`` = 0.01).

    Attributes:
        samples: T, the number of environment steps, an int >= 1; default 5000.
        batch_size: B, samples per SGD update, an int in [1, samples]; default 64.
        lr: alpha, the SGD step size, in (0, inf); default 3e-4.
        lipschitz: L, the enforced Lipschitz bound of Q in the state, in (0, inf); default 4.
        gamma: the discount factor, in [0, 1); default 0.5.
        hidden: widths of the hidden layers (ints >= 1); default (32, 32).
        activation: "tanh" or "relu"; default "tanh".
        output_scale: factor on the last layer's initial weights, in (0, inf); default 0.1.
        exploration: epsilon-greedy rate, in [0, 1]; default 0.1.
        clip: DP-SGD's per-example clipping norm C, in (0, inf); default 1.
        update_clip: c, the certified bound on one update's change of each action's Q in sup norm over
            the states [0, 1], in (0, inf), units of Q (= units of reward), or None (no certificate);
            default None. With c set, every ``"dpq"`` update is scaled back until the certificate holds
            (:func:`certified_step`). It must be at least 4 L / 262144 (the certificate's grid has
            ceil(4 L / c) + 1 points).
        update_lipschitz: l, the certified bound on the Lipschitz constant in the state of one update's
            change Q_new(., a) - Q_old(., a), in (0, inf), units of Q per unit state, or None; default
            None: l = 2 L, the bound Lip(Q_new) + Lip(Q_old) that always holds. Below 2 L it needs
            activation "tanh" (the slope change is certified on the grid with a curvature bound,
            ``privcal.rl.mlp.slope_difference_bound``); the grid then has at least ceil(8 L^2 / l) + 1 points.

    Raises:
        ValueError: a field is outside its range.
    """

    samples: int = 5000
    batch_size: int = 64
    lr: float = 3e-4
    lipschitz: float = 4.0
    gamma: float = 0.5
    hidden: tuple = (32, 32)
    activation: str = "tanh"
    output_scale: float = 0.1
    exploration: float = 0.1
    clip: float = 1.0
    update_clip: Optional[float] = None
    update_lipschitz: Optional[float] = None

    def __post_init__(self):
        samples, batch = V.samples_and_batch(self.samples, self.batch_size)
        object.__setattr__(self, "samples", samples)
        object.__setattr__(self, "batch_size", batch)
        object.__setattr__(self, "lr", V.positive("lr", self.lr))
        object.__setattr__(self, "lipschitz", V.positive("lipschitz", self.lipschitz))
        object.__setattr__(self, "gamma", check_gamma(self.gamma))
        hidden = tuple(self.hidden) if not isinstance(self.hidden, (int, np.integer)) else (self.hidden,)
        object.__setattr__(self, "hidden", tuple(V.positive_int("hidden[i]", h) for h in hidden))
        V.choice("activation", self.activation, ACTIVATIONS)
        object.__setattr__(self, "output_scale", V.positive("output_scale", self.output_scale))
        object.__setattr__(self, "exploration", V.probability("exploration", self.exploration))
        object.__setattr__(self, "clip", V.positive("clip", self.clip))
        if self.update_lipschitz is not None:
            lip = V.positive("update_lipschitz", self.update_lipschitz)
            object.__setattr__(self, "update_lipschitz", lip)
            if self.activation != "tanh" and lip < 2.0 * self.lipschitz:
                raise ValueError(
                    f"update_lipschitz must be at least 2 * lipschitz = {2.0 * self.lipschitz:g} for activation "
                    f"{self.activation!r} (only a tanh network's slope change is certified on a grid), got {lip!r}")
        if self.update_clip is not None:
            object.__setattr__(self, "update_clip", V.positive("update_clip", self.update_clip))
            grid_size(self.update_clip, self.lipschitz, self.update_lipschitz)

    @property
    def updates(self) -> int:
        """U = floor(T / B): the number of SGD updates (full batches only)."""
        return self.samples // self.batch_size

    def learner_shape(self, variant: str = "valid") -> "LearnerShape":
        """What the noise calibration of ``variant`` reads of these settings
        (``privcal.calibrators.dpq.LearnerShape``): T, B, alpha, L and the clips; for any variant but "paper" with
        the valid variant's defaults filled in first (:func:`valid_hyperparameters`).

        Args:
            variant: the calibration's variant; default "valid".

        Returns:
            the :class:`~privcal.calibrators.dpq.LearnerShape`; the update clip defaults to
            ``privcal.calibrators.dpq.DEFAULT_UPDATE_CLIP`` and the slope clip to :func:`update_lipschitz_of`.
        """
        from privcal.calibrators.dpq import DEFAULT_UPDATE_CLIP, LearnerShape

        hp = self if variant == "paper" else valid_hyperparameters(self)
        return LearnerShape(hp.samples, hp.batch_size, hp.lr, hp.lipschitz,
                            update_clip=hp.update_clip if hp.update_clip is not None else DEFAULT_UPDATE_CLIP,
                            update_lipschitz=update_lipschitz_of(hp))


def valid_hyperparameters(hp: "Hyperparameters") -> "Hyperparameters":
    """``hp`` with the valid variant's defaults filled in where unset: the update clip
    ``privcal.calibrators.dpq.DEFAULT_UPDATE_CLIP`` and, for tanh networks, the slope clip
    ``privcal.calibrators.dpq.DEFAULT_UPDATE_LIPSCHITZ`` (relu: 2 L, see :func:`update_lipschitz_of`).

    Args:
        hp: the learner's settings.

    Returns:
        the settings the valid variant runs and is calibrated with.
    """
    from privcal.calibrators import dpq

    changes = {}
    if hp.update_clip is None:
        changes["update_clip"] = dpq.DEFAULT_UPDATE_CLIP
    if hp.update_lipschitz is None and hp.activation == "tanh":
        changes["update_lipschitz"] = min(dpq.DEFAULT_UPDATE_LIPSCHITZ, 2.0 * hp.lipschitz)
    if not changes:
        return hp
    # hp's fields are valid already (its __post_init__ ran): set the two library defaults without validating
    # every field again (dataclasses.replace would), and check the premise they add, the certificate's grid
    filled = copy.copy(hp)
    for name, value in changes.items():
        object.__setattr__(filled, name, value)
    grid_size(filled.update_clip, filled.lipschitz, filled.update_lipschitz)
    return filled


def update_lipschitz_of(hp: "Hyperparameters") -> float:
    """l, the bound on one update's slope change the certificate enforces: ``hp.update_lipschitz`` or 2 L.

    Args:
        hp: the learner's settings.

    Returns:
        ``hp.update_lipschitz`` if set, else 2 ``hp.lipschitz`` (Lip(Q_new - Q_old) <= Lip(Q_new) + Lip(Q_old)).
    """
    return hp.update_lipschitz if hp.update_lipschitz is not None else 2.0 * hp.lipschitz


def check_gamma(gamma: float) -> float:
    """A discount factor checked to lie in [0, 1).

    Args:
        gamma: the discount factor, a real number in [0, 1).

    Returns:
        ``gamma`` as a float.

    Raises:
        ValueError: ``gamma`` is not a real number in [0, 1) (the message names the range).
    """
    if isinstance(gamma, bool) or not isinstance(gamma, numbers.Real) or not 0.0 <= float(gamma) < 1.0:
        raise ValueError(f"gamma must be in [0, 1), got {gamma!r}")
    return float(gamma)


def paper_beta(lr: float = PAPER_E3["lr"], batch_size: int = PAPER_E3["batch_size"],
               k: float = PAPER_E3["k"]) -> float:
    """Kernel parameter beta = 1/v, v = 4 alpha (k + 1) / B (Wang & Hegde 2019, Thm 5).

    Defaults are App. E.3's alpha = 3e-4, B = 64, k = 23: beta = 2222.2 (the paper prints
    v = 6.19e-5, i.e. beta = 16155, which does not follow from its own formula).

    Args:
        lr: the SGD step size alpha, in (0, inf); default 3e-4.
        batch_size: B, an int >= 1; default 64.
        k: the noise bound k of Thm 5, in (0, inf); default 23.

    Returns:
        beta of the kernel exp(-beta |x - y|), in (0, inf).
    """
    from privcal.analysis import rkhs

    return rkhs.kernel_beta_thm5(lr, k, batch_size)


def paper_beta_e3() -> float:
    """:func:`paper_beta` at App. E.3's constants (its defaults), which are not arguments to validate.

    Returns:
        beta = 1/v at alpha = 3e-4, k = 24, B = 64 (Wang & Hegde 2019, App. E.3).
    """
    from privcal.analysis import rkhs

    return rkhs.kernel_beta_thm5_unchecked(float(PAPER_E3["lr"]), float(PAPER_E3["k"]), int(PAPER_E3["batch_size"]))


def check_resets(resets: int, updates: int) -> int:
    """J as an int dividing U = floor(T/B); ``ValueError`` naming the valid choices otherwise.

    Args:
        resets: J, the number of noise paths (Algorithm 1 lines 7-9), an int >= 1 dividing ``updates``.
        updates: U = floor(T/B), the number of SGD updates (trusted: from ``Hyperparameters.updates``).

    Returns:
        ``resets`` as an int.

    Raises:
        ValueError: ``resets`` is not a positive int dividing ``updates``.
    """
    resets = V.positive_int("resets", resets)
    if updates % resets:
        divisors = [d for d in range(1, updates + 1) if updates % d == 0]
        raise ValueError(
            f"resets must divide the number of updates floor(T/B) = {updates} (one of {divisors}), "
            f"got {resets!r}"
        )
    return resets
