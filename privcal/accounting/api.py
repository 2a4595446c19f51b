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
* ``"pld"``    privacy loss distributions (``privcal.pld``): a certified bracket [lower, upper], the upper
  end reported;
* ``"best"``   the smallest certified upper bound among the *valid* accountants that support the setting
  (``"exact"`` alone when it applies: every valid bound is >= the exact value; otherwise every valid
  one is priced -- PLD and RDP for subsampled releases -- and the smallest answer wins: a PLD grid can be
  looser than RDP at 10^6-10^7 steps).

Reports carry ``bracket``: certified (lower, upper) bounds on epsilon when the winning accountant gives
them (PLD; the exact profile: (epsilon, epsilon)), else None. Which accountants support an event, and
whether they are valid for it, is decided once per kind of event (the accountants' support depends only
on the kinds of the releases, see ``privcal.accounting.registry.ACCOUNTANTS``), not by building
every accountant on every call.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from typing import Optional, Union

from .. import _validate as V
from .. import composition
from ..errors import InfeasibleError, UnsupportedEventError
from ..privacy_loss import MemoryLimitError
from .protocol import Accountant
from .registry import ACCOUNTANTS
from .events import Event, Neighbouring, Releases, Sampling, SubsampledEvent, _flatten, _unwrap

__all__ = [
    "ACCOUNTANT_CHOICES",
    "EpsilonReport",
    "CalibrationReport",
    "epsilon",
    "epsilon_of",
    "epsilon_report",
    "calibrate",
    "calibrate_report",
]

ACCOUNTANT_CHOICES = ("best", *ACCOUNTANTS)


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
    neighbouring: str | None = None
    #: certified (lower, upper) bounds on epsilon, upper == ``epsilon`` (PLD; exact: (epsilon, epsilon));
    #: None when the accountant gives no lower bound
    bracket: tuple[float, float] | None = None


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
    neighbouring: str | None = None
    #: certified (lower, upper) bounds on the epsilon at ``sigma``, upper == ``achieved_epsilon`` (PLD;
    #: exact: (epsilon, epsilon)); None when the accountant gives no lower bound
    bracket: tuple[float, float] | None = None

    @property
    def noise_multiplier(self) -> float:
        """sigma / sensitivity."""
        return self.sigma / self.sensitivity


def _releases(sensitivity, steps, sample_rate, sampling, neighbouring) -> Releases:
    """The validated description of what ran (each rule checked once, naming the user's argument)."""
    return Releases(
        sensitivity, steps, 1.0 if sample_rate is None else sample_rate, sampling, neighbouring
    )


def _resolve(accountant: str, releases: Releases, event: Event) -> list[str]:
    """Names of the accountants to use for ``releases`` (``event``: the releases at some sigma): the one
    asked for, or every valid one for "best"."""
    return resolve_accountants(accountant, event, _describe(releases))


def resolve_accountants(accountant: str, event: Event, what: str = "") -> list[str]:
    """Names of the accountants to price ``event``: the one asked for, or for "best" every valid one that
    supports it (only "exact" when it applies: every valid bound is >= the exact value).

    Decided from the kinds of the releases in ``event`` (cached per kind), without building the
    accountants: see :func:`_verdicts`.

    Args:
        accountant: "best" or a name of ``privcal.ACCOUNTANTS``.
        event: what ran.
        what: how error messages describe the event (default: its repr).

    Returns:
        the names, in the order of ``privcal.ACCOUNTANTS``.

    Raises:
        UnsupportedEventError: the accountant (or, for "best", every valid one) cannot price ``event``.
    """
    V.choice("accountant", accountant, ACCOUNTANT_CHOICES)
    verdicts = _verdicts(event)
    if accountant == "best" and "exact" in verdicts:  # the exact profile is valid wherever it applies
        return ["exact"]
    if accountant != "best":
        if accountant not in verdicts:
            raise UnsupportedEventError(f"the {accountant} accountant does not support {what or repr(event)}")
        return [accountant]
    names = [name for name, valid in verdicts.items() if valid]
    if not names:
        raise UnsupportedEventError(f"no valid accountant supports {what or repr(event)}")
    return ["exact"] if "exact" in names else names


#: (registered classes, kind signature) -> {name: valid} of the accountants that support such events
_VERDICTS: dict[tuple, dict[str, bool]] = {}


def _kind(leaf: Event) -> tuple:
    """What an accountant's support of a release depends on: its type, and for a subsampled release the
    sampling, the neighbouring relation, the inner release's type and whether it runs once."""
    if isinstance(leaf, SubsampledEvent):
        inner, count = _unwrap(leaf.event)
        return SubsampledEvent, leaf.sampling, leaf.neighbouring, type(inner), count == 1
    return (type(leaf),)


def _verdicts(event: Event) -> dict[str, bool]:
    """{name: valid} of the registered accountants that support ``event`` on a fresh ledger.

    Support and validity depend only on the kinds of the leaves (:func:`_kind`) and on whether they are
    all equal (KOV composes only identical releases), so the answer is computed once per such signature,
    on fresh accountants, and reused: a front-door call costs a flatten and a dictionary look-up."""
    if not isinstance(event, Event):
        return {}
    leaves = [leaf for leaf, _ in _flatten(event)]
    first = leaves[0]
    key = (
        tuple(ACCOUNTANTS.items()),
        frozenset(_kind(leaf) for leaf in leaves),
        all(leaf == first for leaf in leaves),
    )
    found = _VERDICTS.get(key)
    if found is None:
        found = {}
        for name, cls in ACCOUNTANTS.items():
            fresh = cls()
            if fresh.supports(event):
                found[name] = bool(fresh.valid_for(event))
        _VERDICTS[key] = found
    return found


def _priced(names: list[str], event: Event, delta: float, *, with_bracket: bool) -> tuple[float, Accountant, tuple, tuple]:
    """(epsilon, accountant, bracket or None, notes): the smallest certified epsilon among ``names`` at
    ``delta`` for ``event``. A grid that an accountant cannot afford (``privcal.pld.MemoryLimitError``,
    naming its memory cap) is skipped, with a note, when another accountant answers."""
    best = None
    notes: list[str] = []
    for i, name in enumerate(names):
        acc = ACCOUNTANTS[name]()._compose_supported(event)  # support resolved once per kind of event
        try:
            value = float(acc._epsilon(delta))
        except (MemoryLimitError, MemoryError) as exc:
            if len(names) == 1 or (best is None and i == len(names) - 1):
                raise
            notes.append(f"{name} skipped: {exc}")
            continue
        if best is None or value < best[0]:
            best = (value, acc)
    value, acc = best
    bracket = _bracket(acc, value, delta) if with_bracket else None
    return value, acc, bracket, tuple(notes)


def _bracket(acc: Accountant, value: float, delta: float) -> Optional[tuple[float, float]]:
    """Certified (lower, upper) epsilon of ``acc`` at ``delta``, upper = ``value`` (the reported upper
    bound; the accountant's own bracket may end a little higher or lower, both ends are certified), or
    None when ``acc`` gives no lower bound."""
    if acc.name == "exact":
        return (value, value)
    own = getattr(acc, "_bracket", None)
    if own is None or not math.isfinite(value):
        return None
    lower, _ = own(delta)
    return (min(float(lower), value), value)


def _describe(releases: Releases) -> str:
    if not releases.subsampled:
        return f"{releases.steps} Gaussian releases"
    return (
        f"{releases.sampling} subsampling under {releases.neighbouring.value} neighbours (subsampled Gaussians "
        "are priced for poisson with add_remove, and without_replacement with replace_one or zero_out)"
    )


_SETTING_DOC = """
    Args:
        {first}
        delta: target delta, in (0, 1).
        sensitivity: L2 (or RKHS-norm) sensitivity of one release under ``neighbouring``, in (0, inf);
            default 1. With subsampling: the sensitivity of one release on the subsample.
        steps: number of releases (adaptive composition), an int >= 1; default 1.
        sample_rate: each release runs on a random subsample: Poisson inclusion probability, or batch
            size / dataset size without replacement; in (0, 1]. Default None: no subsampling.
        sampling: "poisson" (default) or "without_replacement" (fixed-size batches).
        neighbouring: the neighbouring relation, a :class:`~privcal.accounting.events.Neighbouring` or
            "add_remove" / "replace_one" / "zero_out"; default: add/remove for Poisson, replace-one
            without replacement (then a clipped contribution of norm h has sensitivity 2h; left unstated,
            it is implied with a NeighbouringWarning).
        accountant: "best" (default: the smallest certified upper bound among the valid accountants
            that support the setting), "exact", "paper", "kov", "rdp" or "pld".
"""


def epsilon_report(
    sigma: float,
    delta: float,
    *,
    sensitivity: float = 1.0,
    steps: int = 1,
    sample_rate: Optional[float] = None,
    sampling: Sampling = "poisson",
    neighbouring: Optional[Union[Neighbouring, str]] = None,
    accountant: str = "best",
) -> EpsilonReport:
    """:func:`epsilon` with the accountant used, its guarantee and notes.
    {doc}"""
    sigma = V.positive("sigma", sigma)
    delta = V.open_unit("delta", delta)
    rel = _releases(sensitivity, steps, sample_rate, sampling, neighbouring)
    return _epsilon_report(sigma, delta, rel, accountant, with_bracket=True)


def _epsilon_report(sigma: float, delta: float, rel: Releases, accountant: str, *, with_bracket: bool) -> EpsilonReport:
    """epsilon_report for validated inputs (``with_bracket=False``: no lower bound computed, for
    :func:`epsilon`, which returns the upper bound alone)."""
    event = rel.event(sigma)
    value, acc, bracket, notes = _priced(_resolve(accountant, rel, event), event, delta, with_bracket=with_bracket)
    notes = (() if math.isfinite(value) else (f"no finite epsilon at delta = {delta:g}",)) + notes
    notes += _lemma1_notes(acc, delta)
    return EpsilonReport(
        value, delta, sigma, rel.sensitivity, rel.steps, acc.name, acc.valid, acc.guarantee, notes,
        rel.sample_rate, rel.sampling if rel.subsampled else None,
        rel.neighbouring.value if rel.subsampled else None, bracket,
    )


def epsilon(
    sigma: float,
    delta: float,
    *,
    sensitivity: float = 1.0,
    steps: int = 1,
    sample_rate: Optional[float] = None,
    sampling: Sampling = "poisson",
    neighbouring: Optional[Union[Neighbouring, str]] = None,
    accountant: str = "best",
) -> float:
    """Epsilon at ``delta`` of ``steps`` Gaussian (or GP) releases with noise standard deviation ``sigma``.

    Every valid accountant reports an upper bound on the true epsilon (``"exact"``: the true value).
    ``"best"`` (the default) is the smallest certified upper bound among the valid accountants that
    support the setting: the exact profile for plain releases; for subsampled ones the smaller of the
    PLD's upper bound and RDP's. :func:`epsilon_report` says which accountant answered, its guarantee
    and, where there is one, the certified bracket [lower, upper]. ``epsilon(...)`` is
    ``epsilon_report(...).epsilon``. Example::

        >>> round(privcal.epsilon(1.0, 1e-5), 4)   # one release, sensitivity 1: exact profile
        4.3772
        >>> round(privcal.epsilon(10.0, 1e-5, steps=100), 4)   # 100 releases compose to mu = 1
        4.3772
    {doc}
    Returns:
        epsilon, an upper bound on the true epsilon for valid accountants (``inf``: no finite bound).
    """
    sigma = V.positive("sigma", sigma)
    delta = V.open_unit("delta", delta)
    rel = _releases(sensitivity, steps, sample_rate, sampling, neighbouring)
    event = rel.event(sigma)
    return _priced(_resolve(accountant, rel, event), event, delta, with_bracket=False)[0]


def epsilon_of(event: Event, delta: float, *, accountant: str = "best") -> float:
    """Epsilon at ``delta`` of any history of events, as dp_accounting's ``get_epsilon``.

    ``event`` may be a list composition (``ComposedEvent([e1, e2, ...])``), repetitions
    (``SelfComposedEvent``), subsampled events (``PoissonSampledEvent``,
    ``SampledWithoutReplacementEvent``) and their nestings, or a converted dp_accounting event
    (:func:`privcal.from_dp_accounting`). Example::

        >>> history = privcal.ComposedEvent([
        ...     privcal.SelfComposedEvent(privcal.GaussianEvent(10.0), 50),   # mu^2 = 50 / 100
        ...     privcal.SelfComposedEvent(privcal.GaussianEvent(2.0), 2),     # mu^2 = 2 / 4
        ... ])
        >>> round(privcal.epsilon_of(history, 1e-5), 4)   # one Gaussian with mu = 1 (exact profile)
        4.3772

    Args:
        event: what ran.
        delta: in (0, 1).
        accountant: "best" (default: the smallest certified upper bound among the valid accountants
            that support the history; the exact profile when it applies), "exact", "paper", "kov", "rdp"
            or "pld".

    Returns:
        epsilon, an upper bound on the true epsilon for valid accountants.

    Raises:
        UnsupportedEventError: no (valid) accountant prices this history.
    """
    if not isinstance(event, Event):
        raise ValueError(f"event must be a privcal Event, got {event!r}")
    delta = V.open_unit("delta", delta)
    return _priced(resolve_accountants(accountant, event), event, delta, with_bracket=False)[0]


def calibrate_report(
    epsilon: float,
    delta: float,
    *,
    sensitivity: float = 1.0,
    steps: int = 1,
    sample_rate: Optional[float] = None,
    sampling: Sampling = "poisson",
    neighbouring: Optional[Union[Neighbouring, str]] = None,
    accountant: str = "best",
) -> CalibrationReport:
    """:func:`calibrate` with the achieved epsilon, the accountant used and notes.

    With ``accountant="paper"`` the notes also say whether the paper's bound is actually sufficient here:
    for plain releases whether the closed-form sigma printed at the end of the proof of Wang & Hegde's
    Thm 5 gives (epsilon, delta)-DP on the exact profile; for subsampled ones whether GPOPE's Lemma 1 is
    at least the valid RDP at the order used.
    {doc}"""
    epsilon = V.positive("epsilon", epsilon)
    delta = V.open_unit("delta", delta)
    rel = _releases(sensitivity, steps, sample_rate, sampling, neighbouring)
    return _calibrate_report(epsilon, delta, rel, accountant, with_bracket=True)


def _calibrate_report(epsilon: float, delta: float, rel: Releases, accountant: str, *,
                      with_bracket: bool) -> CalibrationReport:
    """calibrate_report for validated inputs (``with_bracket=False``: no lower bound computed, for
    :func:`calibrate`). With several valid accountants each one calibrates; the smallest sigma wins (each
    answer is checked by its own accountant: its upper epsilon is <= the target there)."""
    names = _resolve(accountant, rel, rel.event(1.0))
    best, notes = None, ()
    for i, name in enumerate(names):
        try:
            sigma = ACCOUNTANTS[name]()._sigma_for(rel, epsilon, delta)
        except (MemoryLimitError, MemoryError, InfeasibleError) as exc:
            if len(names) == 1 or (best is None and i == len(names) - 1):
                raise
            notes += (f"{name} skipped: {exc}",)
            continue
        if best is None or sigma < best[0]:
            best = (sigma, name)
    sigma, name = float(best[0]), best[1]
    acc = ACCOUNTANTS[name]()._compose_supported(rel.event(sigma))
    achieved = float(acc._epsilon(delta))
    bracket = _bracket(acc, achieved, delta) if with_bracket else None
    notes += _lemma1_notes(acc, delta)
    if name == "paper" and not rel.subsampled:
        notes += _thm5_notes(epsilon, delta, rel.sensitivity, rel.steps)
    return CalibrationReport(
        sigma, epsilon, delta, achieved, rel.sensitivity, rel.steps, name, acc.valid, acc.guarantee, notes,
        rel.sample_rate, rel.sampling if rel.subsampled else None,
        rel.neighbouring.value if rel.subsampled else None, bracket,
    )


def calibrate(
    epsilon: float,
    delta: float,
    *,
    sensitivity: float = 1.0,
    steps: int = 1,
    sample_rate: Optional[float] = None,
    sampling: Sampling = "poisson",
    neighbouring: Optional[Union[Neighbouring, str]] = None,
    accountant: str = "best",
) -> float:
    """Smallest sigma for which ``steps`` Gaussian (or GP) releases are (epsilon, delta)-DP under the
    chosen accountant. The answer is checked before it is returned.

    ``"best"`` (the default): the smallest sigma whose certified upper epsilon is <= the target under
    some valid accountant that supports the setting -- the exact profile for plain releases; for
    subsampled ones the smaller of the PLD's and RDP's answers. ``calibrate(...)`` is
    ``calibrate_report(...).sigma``. Example::

        >>> round(privcal.calibrate(4.3772, 1e-5), 3)   # one release, sensitivity 1: exact profile
        1.0
    {doc}
    Returns:
        sigma, the noise standard deviation (absolute; the noise multiplier is sigma / sensitivity).

    Raises:
        InfeasibleError: no sigma reaches the target (e.g. KOV with delta too small).
        UnsupportedEventError: the accountant cannot price this setting.
    """
    epsilon = V.positive("epsilon", epsilon)
    delta = V.open_unit("delta", delta)
    rel = _releases(sensitivity, steps, sample_rate, sampling, neighbouring)
    return _calibrate_report(epsilon, delta, rel, accountant, with_bracket=False).sigma


for _fn, _first in (
    (epsilon_report, "sigma: noise standard deviation (absolute, not a multiplier), in (0, inf)."),
    (epsilon, "sigma: noise standard deviation (absolute, not a multiplier), in (0, inf)."),
    (calibrate_report, "epsilon: target epsilon, in (0, inf)."),
    (calibrate, "epsilon: target epsilon, in (0, inf)."),
):
    _fn.__doc__ = _fn.__doc__.replace("    {doc}", _SETTING_DOC.format(first=_first).rstrip("\n") + "\n")
del _fn, _first


def _lemma1_notes(acc, delta: float) -> tuple[str, ...]:
    if not getattr(acc, "_subsampled", False):
        return ()
    if acc._lemma1_sufficient(delta):
        return ("GPOPE Lemma 1 is at least the valid RDP at the order used: this epsilon is an upper bound here",)
    return ("GPOPE Lemma 1 is below the valid RDP at the order used: this epsilon is NOT an upper bound here",)


def _thm5_notes(epsilon: float, delta: float, sensitivity: float, steps: int) -> tuple[str, ...]:
    closed = composition._thm5_sigma_proof_paper(epsilon, delta, steps=steps, sensitivity=sensitivity)
    exact_eps = composition._epsilon_composed_exact(closed, delta, steps=steps, sensitivity=sensitivity)
    if exact_eps > epsilon:
        return (
            f"paper closed form not sufficient here: Thm 5 closed-form sigma = {closed:.6g} gives exact "
            f"epsilon {exact_eps:.6g} > {epsilon:g}",
        )
    return (f"paper closed form sufficient here: Thm 5 closed-form sigma = {closed:.6g}",)
