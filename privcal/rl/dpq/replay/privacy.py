"""What a valid privacy analysis of the loop would need (Wang & Hegde, Thm 5's premises) and which premises
the loop breaks (:func:`replay_privacy_report`)."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Optional

import numpy as np
from numpy.typing import ArrayLike

from privcal import _validate as V
from privcal.rl.dpq.replay.config import ReplayConfig, checked_config

__all__ = ["Premise", "ReplayPrivacyReport", "replay_privacy_report", "reward_uses"]


@dataclass(frozen=True)
class Premise:
    """One premise of the functional-noise analysis (Wang & Hegde, Thm 5) checked against the loop.

    Attributes:
        name: the premise, in words.
        holds: whether the loop as configured satisfies it.
        detail: the computed reason.
    """

    name: str
    holds: bool
    detail: str


@dataclass(frozen=True)
class ReplayPrivacyReport:
    """What a valid (epsilon, delta) analysis of the replay loop would have to account for.

    Attributes:
        steps: environment steps T (each reveals one reward).
        updates: optimiser steps; each reads ``batch_size`` rewards (releases that touch rewards).
        batch_size: rewards per update.
        reward_uses_expected_max: the largest, over transitions, expected number of updates that read
            its reward (the first transitions: they are in the buffer longest).
        reward_uses_expected_mean: that expectation averaged over all transitions
            (= updates * batch_size / steps).
        reward_uses_max: the most updates any one reward can enter (every update while it is buffered).
        noise_paths: paths drawn per network and action over the run.
        updates_per_path_max: the most updates served by one path (no fresh noise in between).
        updates_per_path_mean: the mean over the paths that serve at least one update.
        premises: every premise checked (:class:`Premise`).
        valid_guarantee: always False for this loop: some premise fails, or sigma is not calibrated.
        epsilon: target epsilon of the sigma bound, or None.
        delta: target delta of the sigma bound, or None.
        sigma_needed_lower_bound: if sensitivities and (epsilon, delta) were given, the smallest sigma
            the idealised analysis (``assumptions``) would accept; a lower bound on what that analysis
            needs, not on the loop's true privacy loss; else None.
        sensitivity_total: sqrt(sum of the squared per-update sensitivity witnesses), or None.
        sigma: the sigma the loop was configured with.
        assumptions: what the sigma bound assumes that the loop does not satisfy.
        changes_needed: what would have to change for a valid guarantee.
    """

    steps: int
    updates: int
    batch_size: int
    reward_uses_expected_max: float
    reward_uses_expected_mean: float
    reward_uses_max: int
    noise_paths: int
    updates_per_path_max: int
    updates_per_path_mean: float
    premises: tuple
    valid_guarantee: bool
    epsilon: Optional[float]
    delta: Optional[float]
    sigma_needed_lower_bound: Optional[float]
    sensitivity_total: Optional[float]
    sigma: float
    assumptions: tuple
    changes_needed: tuple

    @property
    def failed(self) -> list:
        """Names of the premises that fail."""
        return [p.name for p in self.premises if not p.holds]

    def to_dict(self) -> dict:
        """JSON-ready dict of every field (premises as dicts)."""
        out = asdict(self)
        out["premises"] = [asdict(p) for p in self.premises]
        out["assumptions"] = list(self.assumptions)
        out["changes_needed"] = list(self.changes_needed)
        out["failed"] = self.failed
        return out

    def describe(self) -> str:
        """The report as text lines (for printing)."""
        lines = [
            "privacy of the replay loop: NO valid guarantee" if not self.valid_guarantee else "valid",
            f"  releases touching rewards: {self.updates} updates x {self.batch_size} rewards "
            f"(T = {self.steps} steps)",
            f"  replay reuse of one reward: expected {self.reward_uses_expected_max:.1f} updates "
            f"(first transitions), {self.reward_uses_expected_mean:.1f} on average, at most "
            f"{self.reward_uses_max}",
            f"  noise reuse: {self.noise_paths} paths per action and network, up to "
            f"{self.updates_per_path_max} updates per path (mean {self.updates_per_path_mean:.1f})",
        ]
        for p in self.premises:
            lines.append(f"  [{'holds' if p.holds else 'FAILS'}] {p.name}: {p.detail}")
        if self.sigma_needed_lower_bound is not None:
            lines.append(
                f"  idealised analysis at epsilon={self.epsilon:g}, delta={self.delta:g}: sigma >= "
                f"{self.sigma_needed_lower_bound:.4g} (run's sigma: {self.sigma:g}; total witnessed "
                f"sensitivity {self.sensitivity_total:.4g})")
            lines += [f"    assumes: {a}" for a in self.assumptions]
        lines += [f"  would need: {c}" for c in self.changes_needed]
        return "\n".join(lines)


def replay_privacy_report(config: Optional[ReplayConfig] = None, *, epsilon: Optional[float] = None,
                          delta: Optional[float] = None,
                          update_sensitivities: Optional[ArrayLike] = None) -> ReplayPrivacyReport:
    r"""Counts and premises of a valid analysis of the replay loop at ``config``; no guarantee is given.

    Counted exactly from the configuration (no run): the updates that read rewards; the replay reuse
    of one reward (the transition pushed at step t is read by update u, t <= u <= t + capacity - 1,
    with probability B / min(u, capacity), so its expected number of uses is
    sum_u B / min(u, capacity) and its maximum the number of such u); the noise reuse (updates
    served by one path). Premises of the functional-noise analysis (Wang & Hegde Thm 5 as privcal's
    valid calibration reads it) are checked: calibrated sigma, fresh noise per release, each reward
    in one release, a certified bound on the update's change of Q, noise on what is released.

    With per-update sensitivity witnesses d_u (``ReplayResult.update_sensitivities`` of a run with
    ``measure_sensitivity=True``) and a target (epsilon, delta), the report adds the smallest sigma
    an *idealised* analysis would accept: every update a release of Q + sigma g with fresh GP noise
    g, so that the releases compose as Gaussian mechanisms with sensitivities Delta_u >= d_u
    (RKHS norm >= sup norm for k(x, x) = 1), i.e. exactly as one Gaussian mechanism with sensitivity
    sqrt(sum_u Delta_u^2) (Dong, Roth & Su 2019, GDP composition; Hall, Rinaldo & Wasserman 2013 for
    the functional release); sigma >= ``privcal.analysis.gaussian.sigma_exact(epsilon, delta,
    sensitivity=sqrt(sum_u d_u^2))`` (Balle & Wang 2018). The loop satisfies none of that analysis'
    assumptions (listed in the report), so this is what the idealised analysis would need at least,
    not a guarantee and not a bound on the loop's true privacy loss.

    Args:
        config: the loop's settings; default ``ReplayConfig()``.
        epsilon: target epsilon for the sigma bound, in (0, inf), or None; default None.
        delta: target delta for the sigma bound, in (0, 1), or None; default None.
        update_sensitivities: per-update sensitivity witnesses of a run of this config, one per
            update, each in [0, inf), or None; default None.

    Returns:
        the :class:`ReplayPrivacyReport`.

    Raises:
        ValueError: an argument is outside its range, or the witnesses do not match the update count.
    """
    config = checked_config(config)
    if (epsilon is None) != (delta is None):
        raise ValueError(f"epsilon and delta must be given together, got epsilon={epsilon!r}, "
                         f"delta={delta!r}")
    if epsilon is not None:
        epsilon = V.positive("epsilon", epsilon)
        delta = V.open_unit("delta", delta)
    if update_sensitivities is not None:
        d = np.asarray(update_sensitivities, dtype=float).reshape(-1)
        if d.size != config.updates:
            raise ValueError(f"update_sensitivities must have one entry per update ({config.updates}), "
                             f"got {d.size}")
        if not np.all(np.isfinite(d)) or np.any(d < 0):
            raise ValueError("update_sensitivities must be finite and >= 0")
        update_sensitivities = d
    return _replay_privacy_report(config, epsilon, delta, update_sensitivities)


def reward_uses(config) -> tuple[np.ndarray, np.ndarray]:
    """Per transition t = 1..T: expected and maximal number of updates reading its reward.

    Args:
        config: a checked :class:`~privcal.rl.dpq.replay.config.ReplayConfig` (steps, batch_size, buffer_size).

    Returns:
        (expected uses, maximal uses), two arrays of length T.
    """
    T, B, cap = config.steps, config.batch_size, config.buffer_size
    u = np.arange(1, T + 1)
    # update at step u (u >= B) draws B of min(u, cap) buffered transitions uniformly
    p = np.where(u >= B, B / np.minimum(u, cap), 0.0)
    prefix = np.concatenate([[0.0], np.cumsum(p)])
    t = u
    lo = np.maximum(t, B)
    hi = np.minimum(T, t + cap - 1)
    count = np.maximum(hi - lo + 1, 0)
    expected = np.where(count > 0, prefix[hi] - prefix[lo - 1], 0.0)
    return expected, count


def _updates_per_path(config) -> np.ndarray:
    """Updates served by each policy path (one entry per path)."""
    if config.noise_reset == "update":
        return np.ones(config.updates, dtype=int)
    if config.noise_reset == "never":
        return np.array([config.updates])
    L, B = config.episode_steps, config.batch_size
    starts = np.arange(config.episodes) * L + 1  # steps of episode e: e L + 1 .. (e + 1) L
    ends = starts + L - 1
    return np.maximum(ends - np.maximum(starts, B) + 1, 0)


def _replay_privacy_report(config, epsilon, delta, d) -> ReplayPrivacyReport:
    expected, count = reward_uses(config)
    per_path = _updates_per_path(config)
    serving = per_path[per_path > 0]
    B, K = config.batch_size, config.updates
    e_max = float(expected.max())
    premises = (
        Premise("sigma calibrated to a target (epsilon, delta)", False,
                f"sigma = {config.sigma:g} is set by hand (the authors' loop.py sweeps 0..1); no "
                "calibration links it to any (epsilon, delta)" if config.private else
                "sigma = 0: no noise at all"),
        Premise("fresh, independent noise for every release", config.noise_reset == "update",
                f"one path per action serves up to {int(per_path.max())} updates "
                f"(noise_reset={config.noise_reset!r}); releases sharing a path are not independent "
                "Gaussian releases, and their differences can cancel the noise")
        if config.noise_reset != "update" else
        Premise("fresh, independent noise for every release", True,
                "noise_reset='update' draws new paths before every update"),
        Premise("each reward enters one release", e_max <= 1.0,
                f"replay: a reward is read by {e_max:.1f} updates in expectation (the first "
                f"transitions), {float(expected.mean()):.1f} on average and up to {int(count.max())}; "
                f"and under |r - r'|_inf <= 1 all {B} rewards of a batch change at once, so an "
                "update's sensitivity is not that of one changed reward (no 1/B)"),
        Premise("certified bound on how far one update moves Q (sensitivity)", False,
                "the network has no Lipschitz or function-space constraint; clamping gradient "
                "coordinates and the optimiser's normalisation bound the parameter step"
                + (f" (at most lr/sqrt(1 - decay) = {config.lr / math.sqrt(1 - config.rmsprop_decay):.3g}"
                   " per coordinate for RMSprop)" if config.optimizer == "rmsprop" else "")
                + ", not the change of Q, which grows with the weights"),
        Premise("noise added to what is released", False,
                "the paths are added to the network's outputs (action choice, prediction and target "
                "in the loss) but never to the parameters: the trained network is a function of the "
                "rewards whose dependence no noise masks"),
    )
    sigma_lb = total = None
    if d is not None and epsilon is not None and K > 0:
        total = float(np.sqrt(np.sum(d * d)))
        if total > 0.0:
            from privcal.analysis import gaussian

            sigma_lb = gaussian.sigma_exact_unchecked(epsilon, delta, sensitivity=total)
    assumptions = (
        f"every one of the {K} updates releases Q + sigma g with its own fresh path g (the loop "
        f"reuses a path for up to {int(per_path.max())} updates)",
        "the released functions are what the updates depend on, so post-processing covers the "
        "parameters (the loop's parameters are never noised)",
        "the sensitivity of update u is at least the witnessed d_u: r versus r +- 1 on the same batch, "
        "noise, parameters and optimiser state, sup over 101 states and both actions (a lower bound "
        "on the true worst case)",
        "Gaussian composition of the updates at those sensitivities (exact for fresh Gaussian noise)",
    )
    changes = (
        "certify each update's change of Q in function space (clip the update, as privcal's "
        "valid Algorithm 1 does) so the sensitivity is a bound, not an observation",
        "fresh noise for every release, or an analysis of reused paths (their differences leak)",
        "account for every update that reads a reward with all B rewards changing under "
        "|r - r'|_inf <= 1 (no 1/B), or sample without reuse",
        "calibrate sigma from the composition instead of setting it by hand",
    )
    return ReplayPrivacyReport(
        steps=config.steps, updates=K, batch_size=B, reward_uses_expected_max=e_max,
        reward_uses_expected_mean=float(expected.mean()), reward_uses_max=int(count.max()),
        noise_paths={"episode": config.episodes, "update": K, "never": 1}[config.noise_reset],
        updates_per_path_max=int(per_path.max()),
        updates_per_path_mean=float(serving.mean()) if serving.size else 0.0,
        premises=premises, valid_guarantee=False, epsilon=epsilon, delta=delta,
        sigma_needed_lower_bound=sigma_lb, sensitivity_total=total, sigma=config.sigma,
        assumptions=assumptions, changes_needed=changes)
