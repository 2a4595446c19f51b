"""The front door: ``privcal.epsilon`` and ``privcal.calibrate`` (and their detailed reports).

A *setting* describes what ran: ``steps`` releases of a mechanism with L2 (or RKHS-norm) sensitivity
``sensitivity`` and Gaussian (or Gaussian-process) noise of standard deviation ``sigma``.
``accountant`` picks the bound:

* ``"exact"``  the exact privacy profile (Balle & Wang 2018) — the lower limit of every valid bound;
* ``"paper"``  Wang & Hegde 2019, Thm 5 (the epsilon-expression of its proof);
* ``"kov"``    Kairouz-Oh-Viswanath optimal homogeneous composition;
* ``"rdp"``    Renyi DP with the improved conversion;
* ``"best"``   the tightest *valid* accountant that supports the setting (``"exact"`` when it
  applies: every valid bound is >= the exact value).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from . import _validate as V
from . import composition, gaussian
from .accountants import ACCOUNTANTS
from .calibration import calibrate_sigma
from .events import ComposedEvent, Event, GaussianEvent

__all__ = [
    "ACCOUNTANT_CHOICES",
    "EpsilonReport",
    "CalibrationReport",
    "epsilon",
    "epsilon_report",
    "calibrate",
    "calibrate_report",
]

ACCOUNTANT_CHOICES = ("best", *ACCOUNTANTS)
_SETTING_KEYS: tuple[str, ...] = ()  # extended by the subsampling work (sample_rate, sampling)


@dataclass(frozen=True)
class EpsilonReport:
    """Epsilon of a setting, with which accountant produced it and which side of the truth it is on."""

    epsilon: float
    delta: float
    sigma: float
    sensitivity: float
    steps: int
    accountant: str
    valid: bool
    guarantee: str
    notes: tuple[str, ...] = field(default=())


@dataclass(frozen=True)
class CalibrationReport:
    """Sigma for a target (epsilon, delta), the epsilon the accountant certifies at that sigma, and notes."""

    sigma: float
    epsilon: float
    delta: float
    achieved_epsilon: float
    sensitivity: float
    steps: int
    accountant: str
    valid: bool
    guarantee: str
    notes: tuple[str, ...] = field(default=())

    @property
    def noise_multiplier(self) -> float:
        """sigma / sensitivity."""
        return self.sigma / self.sensitivity


def _check_setting(setting: dict) -> None:
    unknown = sorted(set(setting) - set(_SETTING_KEYS))
    if unknown:
        raise TypeError(f"unknown setting {unknown}; known settings: {list(_SETTING_KEYS) or 'none'}")


def _check_accountant(accountant) -> str:
    if accountant not in ACCOUNTANT_CHOICES:
        raise ValueError(f"accountant must be one of {ACCOUNTANT_CHOICES}, got {accountant!r}")
    return accountant


def _event(sigma: float, sensitivity: float, steps: int) -> Event:
    return ComposedEvent(GaussianEvent(sigma / sensitivity), steps)


def _resolve(accountant: str, event: Event) -> list[str]:
    """Names of the accountants to try: the one asked for, or every valid one for "best"."""
    if accountant != "best":
        return [accountant]
    names = [n for n, cls in ACCOUNTANTS.items() if cls.valid and cls().supports(event)]
    # The exact profile is the lower limit of every valid bound: when it applies, it is the best.
    return ["exact"] if "exact" in names else names


def epsilon_report(
    sigma, delta, *, sensitivity=1.0, steps=1, accountant="best", **setting
) -> EpsilonReport:
    """:func:`epsilon` with the accountant used, its guarantee and notes."""
    sigma = V.positive("sigma", sigma)
    delta = V.open_unit("delta", delta)
    sensitivity = V.positive("sensitivity", sensitivity)
    steps = V.positive_int("steps", steps)
    accountant = _check_accountant(accountant)
    _check_setting(setting)
    event = _event(sigma, sensitivity, steps)
    best = None
    for name in _resolve(accountant, event):
        cls = ACCOUNTANTS[name]
        value = float(cls().compose(event).epsilon(delta))
        if best is None or value < best[0]:
            best = (value, cls)
    value, cls = best
    notes = () if math.isfinite(value) else (f"no finite epsilon at delta = {delta:g}",)
    return EpsilonReport(value, delta, sigma, sensitivity, steps, cls.name, cls.valid, cls.guarantee, notes)


def epsilon(sigma, delta, *, sensitivity=1.0, steps=1, accountant="best", **setting) -> float:
    """Epsilon at ``delta`` of ``steps`` Gaussian (or GP) releases with noise ``sigma``.

    Every accountant offered reports an upper bound on the true epsilon (``"exact"``: the true value);
    :func:`epsilon_report` says which accountant answered and its guarantee. Example::

        >>> round(privcal.epsilon(1.0, 1e-5), 4)   # one release, sensitivity 1: exact profile
        4.3772
        >>> round(privcal.epsilon(10.0, 1e-5, steps=100), 4)   # 100 releases compose to mu = 1
        4.3772
    """
    return epsilon_report(
        sigma, delta, sensitivity=sensitivity, steps=steps, accountant=accountant, **setting
    ).epsilon


def calibrate_report(
    epsilon, delta, *, sensitivity=1.0, steps=1, accountant="best", **setting
) -> CalibrationReport:
    """:func:`calibrate` with the achieved epsilon, the accountant used and notes.

    With ``accountant="paper"`` the notes also say whether the closed-form sigma printed at the end of
    the proof of Wang & Hegde's Thm 5 is actually sufficient here (checked on the exact profile).
    """
    epsilon = V.positive("epsilon", epsilon)
    delta = V.open_unit("delta", delta)
    sensitivity = V.positive("sensitivity", sensitivity)
    steps = V.positive_int("steps", steps)
    accountant = _check_accountant(accountant)
    _check_setting(setting)
    names = _resolve(accountant, _event(1.0, sensitivity, steps))
    best = None
    for name in names:
        sigma = _calibrate_one(name, epsilon, delta, sensitivity, steps)
        if best is None or sigma < best[0]:
            best = (sigma, name)
    sigma, name = float(best[0]), best[1]
    cls = ACCOUNTANTS[name]
    achieved = float(cls().compose(_event(sigma, sensitivity, steps)).epsilon(delta))
    notes = _paper_notes(epsilon, delta, sensitivity, steps) if name == "paper" else ()
    return CalibrationReport(
        sigma, epsilon, delta, achieved, sensitivity, steps, name, cls.valid, cls.guarantee, notes
    )


def calibrate(epsilon, delta, *, sensitivity=1.0, steps=1, accountant="best", **setting) -> float:
    """Smallest sigma for which ``steps`` Gaussian (or GP) releases are (epsilon, delta)-DP under the
    chosen accountant (``"best"``: the tightest valid one). The answer is checked before it is returned.

    Raises ``InfeasibleError`` when no sigma reaches the target (e.g. KOV with delta too small).
    """
    return calibrate_report(
        epsilon, delta, sensitivity=sensitivity, steps=steps, accountant=accountant, **setting
    ).sigma


def _calibrate_one(name: str, epsilon: float, delta: float, sensitivity: float, steps: int) -> float:
    if name == "exact":  # closed-form fast path: one Gaussian with mu = sqrt(steps) * sensitivity / sigma
        return composition.sigma_composed_exact(epsilon, delta, steps=steps, sensitivity=sensitivity)
    hint = gaussian.sigma_exact(epsilon, delta, sensitivity=sensitivity * math.sqrt(steps))
    return calibrate_sigma(
        lambda s: _event(s, sensitivity, steps), epsilon, delta, ACCOUNTANTS[name], sigma_hint=hint
    )


def _paper_notes(epsilon: float, delta: float, sensitivity: float, steps: int) -> tuple[str, ...]:
    closed = composition.thm5_sigma_proof_paper(epsilon, delta, steps=steps, sensitivity=sensitivity)
    exact_eps = composition.epsilon_composed_exact(closed, delta, steps=steps, sensitivity=sensitivity)
    if exact_eps > epsilon:
        return (
            f"paper closed form not sufficient here: Thm 5 closed-form sigma = {closed:.6g} gives exact "
            f"epsilon {exact_eps:.6g} > {epsilon:g}",
        )
    return (f"paper closed form sufficient here: Thm 5 closed-form sigma = {closed:.6g}",)

