"""The front door: ``privcal.epsilon`` and ``privcal.calibrate`` (and their detailed reports).

A *setting* describes what ran: ``steps`` releases of a mechanism with L2 (or RKHS-norm) sensitivity
``sensitivity`` and Gaussian (or Gaussian-process) noise of standard deviation ``sigma``, each
optionally on a random subsample (``sample_rate``, ``sampling="poisson" | "without_replacement"``).
``accountant`` picks the bound:

* ``"exact"``  the exact privacy profile (Balle & Wang 2018) — the lower limit of every valid bound;
* ``"paper"``  Wang & Hegde 2019, Thm 5 (the epsilon-expression of its proof); with subsampling,
  GPOPE Lemma 1 + the moments tail (not a valid bound in general: the report says where it fails);
* ``"kov"``    Kairouz-Oh-Viswanath optimal homogeneous composition;
* ``"rdp"``    Renyi DP with the improved conversion (subsampled: Mironov-Talwar-Zhang 2019 for Poisson,
  Wang-Balle-Kasiviswanathan 2018 Thm 27 without replacement);
* ``"best"``   the tightest *valid* accountant that supports the setting (``"exact"`` when it
  applies: every valid bound is >= the exact value).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from . import _validate as V
from . import composition, gaussian
from .accountants import ACCOUNTANTS
from .calibration import calibrate_sigma, calibrate_sigma_rdp
from .errors import UnsupportedEventError
from .events import SAMPLINGS, ComposedEvent, Event, GaussianEvent, SubsampledEvent

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
_SETTING_KEYS: tuple[str, ...] = ("sample_rate", "sampling")


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
    sample_rate: float = 1.0
    sampling: str | None = None


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
    sample_rate: float = 1.0
    sampling: str | None = None

    @property
    def noise_multiplier(self) -> float:
        """sigma / sensitivity."""
        return self.sigma / self.sensitivity


@dataclass(frozen=True)
class _Setting:
    """What ran, validated: ``steps`` releases, optionally on a subsample."""

    sensitivity: float
    steps: int
    sample_rate: float = 1.0
    sampling: str = "poisson"

    def event(self, sigma: float) -> Event:
        inner: Event = GaussianEvent(sigma / self.sensitivity)
        if self.sample_rate < 1.0:
            inner = SubsampledEvent(inner, self.sample_rate, self.sampling)
        return ComposedEvent(inner, self.steps)

    @property
    def subsampled(self) -> bool:
        return self.sample_rate < 1.0


def _setting(sensitivity, steps, setting: dict) -> _Setting:
    unknown = sorted(set(setting) - set(_SETTING_KEYS))
    if unknown:
        raise TypeError(f"unknown setting {unknown}; known settings: {list(_SETTING_KEYS)}")
    sample_rate = setting.get("sample_rate", 1.0)
    sample_rate = 1.0 if sample_rate is None else V.probability("sample_rate", sample_rate)
    if sample_rate == 0:
        raise ValueError(f"sample_rate must be in (0, 1], got {setting['sample_rate']!r}")
    sampling = setting.get("sampling", "poisson")
    if sampling not in SAMPLINGS:
        raise ValueError(f"sampling must be one of {SAMPLINGS}, got {sampling!r}")
    return _Setting(V.positive("sensitivity", sensitivity), V.positive_int("steps", steps), sample_rate, sampling)


def _check_accountant(accountant) -> str:
    if accountant not in ACCOUNTANT_CHOICES:
        raise ValueError(f"accountant must be one of {ACCOUNTANT_CHOICES}, got {accountant!r}")
    return accountant


def _resolve(accountant: str, event: Event) -> list[str]:
    """Names of the accountants to try: the one asked for, or every valid one for "best"."""
    if accountant != "best":
        if not ACCOUNTANTS[accountant]().supports(event):
            raise UnsupportedEventError(f"the {accountant} accountant does not support this setting ({event!r})")
        return [accountant]
    names = [n for n, cls in ACCOUNTANTS.items() if cls().supports(event) and cls().valid_for(event)]
    # The exact profile is the lower limit of every valid bound: when it applies, it is the best.
    return ["exact"] if "exact" in names else names


def epsilon_report(
    sigma, delta, *, sensitivity=1.0, steps=1, accountant="best", **setting
) -> EpsilonReport:
    """:func:`epsilon` with the accountant used, its guarantee and notes."""
    sigma = V.positive("sigma", sigma)
    delta = V.open_unit("delta", delta)
    st = _setting(sensitivity, steps, setting)
    accountant = _check_accountant(accountant)
    event = st.event(sigma)
    best = None
    for name in _resolve(accountant, event):
        acc = ACCOUNTANTS[name]().compose(event)
        value = float(acc.epsilon(delta))
        if best is None or value < best[0]:
            best = (value, acc)
    value, acc = best
    notes = () if math.isfinite(value) else (f"no finite epsilon at delta = {delta:g}",)
    notes += _lemma1_notes(acc, delta)
    return EpsilonReport(
        value, delta, sigma, st.sensitivity, st.steps, acc.name, acc.valid, acc.guarantee, notes,
        st.sample_rate, st.sampling if st.subsampled else None,
    )


def epsilon(sigma, delta, *, sensitivity=1.0, steps=1, accountant="best", **setting) -> float:
    """Epsilon at ``delta`` of ``steps`` Gaussian (or GP) releases with noise ``sigma``.

    Settings: ``sample_rate=q`` (each release runs on a subsample) with ``sampling="poisson"`` (rate q,
    add/remove neighbours) or ``"without_replacement"`` (a fixed-size batch, q = batch/dataset size,
    replace-one neighbours); ``sensitivity`` is then that of one release on the subsample.
    Every valid accountant reports an upper bound on the true epsilon (``"exact"``: the true value);
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

    With ``accountant="paper"`` the notes also say whether the paper's bound is actually sufficient here:
    for plain releases whether the closed-form sigma printed at the end of the proof of Wang & Hegde's
    Thm 5 gives (epsilon, delta)-DP on the exact profile; for subsampled ones whether GPOPE's Lemma 1 is
    at least the valid RDP at the order used.
    """
    epsilon = V.positive("epsilon", epsilon)
    delta = V.open_unit("delta", delta)
    st = _setting(sensitivity, steps, setting)
    accountant = _check_accountant(accountant)
    names = _resolve(accountant, st.event(1.0))
    best = None
    for name in names:
        sigma = _calibrate_one(name, epsilon, delta, st)
        if best is None or sigma < best[0]:
            best = (sigma, name)
    sigma, name = float(best[0]), best[1]
    acc = ACCOUNTANTS[name]().compose(st.event(sigma))
    achieved = float(acc.epsilon(delta))
    notes = _lemma1_notes(acc, delta)
    if name == "paper" and not st.subsampled:
        notes += _thm5_notes(epsilon, delta, st.sensitivity, st.steps)
    return CalibrationReport(
        sigma, epsilon, delta, achieved, st.sensitivity, st.steps, name, acc.valid, acc.guarantee, notes,
        st.sample_rate, st.sampling if st.subsampled else None,
    )


def calibrate(epsilon, delta, *, sensitivity=1.0, steps=1, accountant="best", **setting) -> float:
    """Smallest sigma for which ``steps`` Gaussian (or GP) releases are (epsilon, delta)-DP under the
    chosen accountant (``"best"``: the tightest valid one). The answer is checked before it is returned.

    Settings as in :func:`epsilon` (``sample_rate``, ``sampling``). Raises ``InfeasibleError`` when no
    sigma reaches the target (e.g. KOV with delta too small).
    """
    epsilon = V.positive("epsilon", epsilon)
    delta = V.open_unit("delta", delta)
    st = _setting(sensitivity, steps, setting)
    names = _resolve(_check_accountant(accountant), st.event(1.0))
    return min(_calibrate_one(name, epsilon, delta, st) for name in names)


def _calibrate_one(name: str, epsilon: float, delta: float, st: _Setting) -> float:
    if name == "exact":  # closed-form fast path: one Gaussian with mu = sqrt(steps) * sensitivity / sigma
        return composition.sigma_composed_exact(epsilon, delta, steps=st.steps, sensitivity=st.sensitivity)
    # start from the unsubsampled exact sigma scaled by the sample rate (amplification ~ q)
    hint = gaussian.sigma_exact(epsilon, delta, sensitivity=st.sensitivity * math.sqrt(st.steps)) * st.sample_rate
    if name == "rdp":
        return calibrate_sigma_rdp(st.event, epsilon, delta, ACCOUNTANTS[name], sigma_hint=hint)
    return calibrate_sigma(st.event, epsilon, delta, ACCOUNTANTS[name], sigma_hint=hint)


def _lemma1_notes(acc, delta: float) -> tuple[str, ...]:
    if not getattr(acc, "_subsampled", False):
        return ()
    if acc.lemma1_sufficient(delta):
        return ("GPOPE Lemma 1 is at least the valid RDP at the order used: this epsilon is an upper bound here",)
    return ("GPOPE Lemma 1 is below the valid RDP at the order used: this epsilon is NOT an upper bound here",)


def _thm5_notes(epsilon: float, delta: float, sensitivity: float, steps: int) -> tuple[str, ...]:
    closed = composition.thm5_sigma_proof_paper(epsilon, delta, steps=steps, sensitivity=sensitivity)
    exact_eps = composition.epsilon_composed_exact(closed, delta, steps=steps, sensitivity=sensitivity)
    if exact_eps > epsilon:
        return (
            f"paper closed form not sufficient here: Thm 5 closed-form sigma = {closed:.6g} gives exact "
            f"epsilon {exact_eps:.6g} > {epsilon:g}",
        )
    return (f"paper closed form sufficient here: Thm 5 closed-form sigma = {closed:.6g}",)
