"""The noise of each DP-Q learner, in one place: Wang & Hegde's functional noise (the valid and the paper
calibrations of :mod:`privcal.calibrators.dpq`), the DP-SGD noise multiplier of the FQI baseline and the
input-perturbation sigma, for both versions of each (:func:`noise_for_unchecked`). The agent
(``privcal.rl.dpq.agent``), its experiments, the frontier and ``privcal train dpq``'s baselines ask here, so that
``--epsilon`` makes one trip from the command line to its sigma.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Optional, Protocol

from .. import _validate as V
from ..errors import InfeasibleError
from .dpq import DPQCalibration, LearnerShape, VARIANT_ALIASES, calibrate_learner_unchecked, check_target, checked_inputs

__all__ = ["Learner", "NoiseSetting", "functional_noise", "functional_noise_unchecked", "noise_for_unchecked",
           "dpsgd_noise_multiplier_paper", "dpsgd_noise_multiplier_unchecked", "input_perturbation_sigma_unchecked"]



class Learner(Protocol):
    """A learner's settings as :func:`noise_for_unchecked` reads them (``privcal.rl.dpq.agent.Hyperparameters``)."""

    def learner_shape(self, variant: str = "valid") -> LearnerShape:
        """The :class:`LearnerShape` the calibration of ``variant`` reads (the valid one fills in the clips).

        Args:
            variant: "valid" (default) or "paper".

        Returns:
            the :class:`LearnerShape`.
        """


@dataclass(frozen=True)
class NoiseSetting:
    """The noise one method gets in one version of Figure 2, and what it guarantees.

    ``sigma`` as in :func:`privcal.rl.dpq.agent.train`; ``dp`` is True when the noise carries a valid
    (epsilon, delta)-DP guarantee w.r.t. reward functions with |r - r'|_inf <= 1, False when it does not
    (or only for another neighbourhood), None for the non-private learner. ``infeasible`` holds the
    calibrator's reason when no sigma exists (then no run is made).
    """

    method: str
    version: str
    sigma: Optional[float] = None
    beta: Optional[float] = None
    dp: Optional[bool] = None
    source: str = ""
    infeasible: str = ""


def functional_noise(epsilon: float, delta: float, learner: LearnerShape, resets: int, *, actions: int = 2,
                     variant: str = "valid", stacklevel: int = 2) -> tuple[float, float, DPQCalibration]:
    """(sigma, beta, calibration) of Algorithm 1 for a target (epsilon, delta): :func:`calibrate` at ``learner``.

    Args:
        epsilon: target epsilon, in (0, MAX_EPSILON = 1e6].
        delta: target total delta, in (0, 1).
        learner: T, B, alpha, L and the clips c, l (:class:`LearnerShape`); each is validated here.
        resets: J, an int >= 1; must equal floor(T/B) for ``variant="valid"``.
        actions: m, the number of actions (one noise path each), an int >= 1; default 2.
        variant: "valid" (default) or "paper"; "corrected" is a deprecated alias of "valid".
        stacklevel: as in ``warnings.warn`` from this function: the default 2 points at its caller.

    Returns:
        (sigma, the functional-noise std; beta, the kernel parameter; the :class:`DPQCalibration`).

    Raises:
        ValueError: an argument is outside its range, or J != floor(T/B) under the valid variant.
        InfeasibleError: the paper variant finds no noise bound k (the message names T, B, lr, L, J).
    """
    epsilon, delta, checked, resets, actions, variant_name = checked_inputs(epsilon, delta, learner, resets, actions, variant,
                                                                     stacklevel=stacklevel + 2)
    return _functional_noise(epsilon, delta, checked, resets, actions, variant_name, variant)


def functional_noise_unchecked(epsilon: float, delta: float, learner: LearnerShape, resets: int, actions: int = 2,
                               variant: str = "valid") -> tuple[float, float, DPQCalibration]:
    """:func:`functional_noise` for arguments already validated (``privcal.rl.dpq.agent.train_dpq``: the target by
    :func:`check_target`, the rest by its Hyperparameters): :func:`calibrate_unchecked` at ``learner``.

    Args:
        epsilon: target epsilon, in (0, MAX_EPSILON] (not checked).
        delta: target total delta, in (0, 1) (not checked).
        learner: T, B, alpha, L and the clips (not checked).
        resets: J (must equal floor(T/B) for ``variant="valid"``: checked).
        actions: m (not checked); default 2.
        variant: "valid" (default) or "paper" (not checked).

    Returns:
        (sigma, beta, the :class:`DPQCalibration`), as :func:`functional_noise`.

    Raises:
        ValueError: J != floor(T/B) under the valid variant.
        InfeasibleError: the paper variant finds no noise bound k (the message names T, B, lr, L, J).
    """
    return _functional_noise(epsilon, delta, learner, resets, actions, variant, variant)


def _functional_noise(epsilon, delta, learner, resets, actions, variant, shown) -> tuple[float, float, DPQCalibration]:
    """:func:`calibrate_unchecked` at ``learner``; an infeasible calibration names the settings (``shown``: the
    variant as the caller spelled it)."""
    try:
        cal = calibrate_learner_unchecked(epsilon, delta, learner, resets, actions, VARIANT_ALIASES.get(variant, variant))
    except InfeasibleError as exc:
        raise InfeasibleError(
            f"{exc} [at T={learner.samples}, B={learner.batch_size}, lr={learner.lr:g}, L={learner.lipschitz:g}, "
            f"J={resets}, variant={shown}]") from exc
    return cal.sigma, cal.beta, cal


def dpsgd_noise_multiplier_paper(epsilon: float, delta: float, *, steps: int, sample_rate: float = 1.0,
                                 c2: float = math.sqrt(2.0)) -> float:
    """Noise multiplier z = c2 q sqrt(steps ln(1/delta)) / epsilon (Abadi et al. 2016, Thm 1).

    With c2 = sqrt(2) and q = 1 as Wang & Hegde 2019, App. E.2. Thm 1 is stated "for some constants
    c1, c2" with the condition epsilon < c1 q^2 steps; it is a per-example guarantee (one example
    added/removed, sensitivity C). Checked with privcal at steps = 78, delta = 1e-4, epsilon = 0.9:
    z = 42.1 gives exact epsilon 0.634 and RDP epsilon 0.710 per example (sufficient there).
    ``privcal.rl.dpq.baselines`` re-exports it.

    Args:
        epsilon: target epsilon, in (0, inf).
        delta: target delta, in (0, 1).
        steps: number of SGD steps, an int >= 1.
        sample_rate: q, the fraction of the data in each batch, in (0, 1]; default 1.
        c2: Thm 1's constant, in (0, inf); default sqrt(2) (App. E.2).

    Returns:
        z, the noise multiplier (noise std z C on the clipped-gradient sum).

    Raises:
        ValueError: an argument is outside its range.
    """
    epsilon = V.positive("epsilon", epsilon)
    delta = V.open_unit("delta", delta)
    steps = V.positive_int("steps", steps)
    sample_rate = V.rate("sample_rate", sample_rate)
    c2 = V.positive("c2", c2)
    return c2 * sample_rate * math.sqrt(steps * math.log(1.0 / delta)) / epsilon


def dpsgd_noise_multiplier_unchecked(epsilon: float, delta: float, steps: int, batch_size: int, unit: str,
                                     accountant: str = "exact") -> float:
    """DP-SGD's valid noise multiplier z for ``steps``, ``batch_size`` and ``unit`` already validated (the caller's
    ``Hyperparameters``): ``privcal.calibrate`` at sensitivity 1 (one example) or 2 B (reward functions: the
    clipped-gradient sum moves by up to 2 B C), which checks the target and the accountant.

    Args:
        epsilon: target epsilon, in (0, inf).
        delta: target delta, in (0, 1).
        steps: number of full-batch SGD steps, trusted.
        batch_size: B, trusted.
        unit: "reward_function" or "example", trusted.
        accountant: a ``privcal.calibrate`` accountant; default "exact".

    Returns:
        z, the noise multiplier (noise std z C on the clipped-gradient sum).
    """
    from ..accounting.api import calibrate as calibrate_sigma

    return calibrate_sigma(epsilon, delta, sensitivity=1.0 if unit == "example" else 2.0 * batch_size, steps=steps,
                           accountant=accountant)


def input_perturbation_sigma_unchecked(epsilon: float, delta: float, samples: int, accountant: str) -> float:
    """Reward-noise std sigma_r making T noisy rewards (epsilon, delta)-DP w.r.t. |r - r'|_inf <= 1, for
    ``samples`` and ``accountant`` already validated: ``privcal.calibrate`` (sensitivity 1, T steps) checks the
    target.

    Args:
        epsilon: target epsilon, in (0, inf).
        delta: target delta, in (0, 1).
        samples: T, trusted.
        accountant: a ``privcal.calibrate`` accountant, trusted.

    Returns:
        sigma_r, the std of the Gaussian noise on each reward (reward units).
    """
    from ..accounting.api import calibrate as calibrate_sigma

    return calibrate_sigma(epsilon, delta, sensitivity=1.0, steps=samples, accountant=accountant)


def noise_for_unchecked(method: str, epsilon: float, delta: float, learner: Learner, version: str,
                        printed: Optional[tuple[float, float]] = None) -> NoiseSetting:
    """The noise of ``method`` for a target (epsilon, delta) in ``version`` "paper" or "valid": the one place
    that computes it (``privcal.rl.dpq.experiments.noise_for`` validates and calls it, as do the sweeps, the
    frontier and ``privcal train dpq``'s baselines). ``method``, ``version`` and ``learner`` are trusted; the
    calibrations called check the target (epsilon, delta) once. An infeasible calibration is returned (not
    raised) with ``infeasible`` set, so that a figure can say why a curve is missing.

    Args:
        method: "dpq", "bgp16", "input_perturbation", "dpsgd" or "non_private" (trusted).
        epsilon: target epsilon, in (0, MAX_EPSILON].
        delta: target delta, in (0, 1).
        learner: the learner's settings, an object with ``learner_shape(variant)`` (``Hyperparameters``).
        version: "valid" or "paper" (trusted).
        printed: (sigma, beta) the paper printed for this target (App. E.3), used by the paper version of
            "dpq" and "bgp16" when given; default None.

    Returns:
        the method's :class:`NoiseSetting`.
    """
    if method == "non_private":
        return NoiseSetting(method, version, source="no noise")
    if method in ("dpq", "bgp16"):
        dp = None
        if version == "paper":
            if printed is not None:
                sigma, beta = printed
                source = (f"App. E.3 printed sigma = {sigma} (computed for alpha = 3e-4, T = 5000), "
                          f"beta = 1/v")
            else:
                try:
                    target = check_target(epsilon, delta)
                    shape = learner.learner_shape("paper")
                    sigma, beta, _ = functional_noise_unchecked(*target, shape, shape.updates, variant="paper")
                except InfeasibleError as exc:
                    return NoiseSetting(method, version, infeasible=str(exc))
                source = "privcal.calibrators.dpq.calibrate(variant='paper'): the paper's formulas solved consistently"
            dp = False
        else:
            try:
                target = check_target(epsilon, delta)
                shape = learner.learner_shape("valid")
                sigma, beta, cal = functional_noise_unchecked(*target, shape, shape.updates)
            except InfeasibleError as exc:
                return NoiseSetting(method, version, infeasible=f"privcal.calibrators.dpq.calibrate (valid): {exc}")
            source = (f"privcal.calibrators.dpq.calibrate valid (update clip c = {cal.update_clip:g} and slope clip "
                      f"l = {cal.update_lipschitz:g} certified on every update, each update started from the released "
                      f"function, exact composition)")
            dp = method == "dpq"
        if method == "bgp16":
            return NoiseSetting(method, version, sigma=sigma, dp=False,
                                source=f"same sigma as Algorithm 1 ({source}); "
                                       f"not DP w.r.t. reward functions")
        return NoiseSetting(method, version, sigma=sigma, beta=beta, dp=dp, source=source)
    shape = learner.learner_shape("paper")  # the baselines read T, B and U only
    if method == "input_perturbation":
        accountant = "kov" if version == "paper" else "exact"
        sigma = input_perturbation_sigma_unchecked(epsilon, delta, shape.samples, accountant)
        return NoiseSetting(method, version, sigma=sigma, dp=True,
                            source=f"{shape.samples} Gaussian releases of sensitivity 1, "
                                   f"{accountant} composition")
    # dpsgd
    if version == "paper":
        z = dpsgd_noise_multiplier_paper(epsilon, delta, steps=shape.updates)
        return NoiseSetting(method, version, sigma=z, dp=False,
                            source="Abadi et al. Thm 1, c2 = sqrt(2), q = 1: per-example guarantee only")
    z = dpsgd_noise_multiplier_unchecked(epsilon, delta, shape.updates, shape.batch_size, "reward_function")
    return NoiseSetting(method, version, sigma=z, dp=True,
                        source=f"clipped-sum sensitivity 2B C = {2 * shape.batch_size} C, exact composition")
