"""The front door: ``privcal.epsilon`` and ``privcal.calibrate`` (and their detailed reports).

A *setting* describes what ran: ``steps`` releases of a mechanism with L2 (or RKHS-norm) sensitivity
``sensitivity`` and Gaussian (or Gaussian-process) noise of standard deviation ``sigma``, each
optionally on a random subsample (``sample_rate``, ``sampling="poisson" | "without_replacement"``). A
:class:`~privcal.accounting.front_door_settings.Run` holds all of it but ``sigma`` (give one, or its fields as
keywords). ``accountant`` (with the PLD's knobs: a :class:`~privcal.accounting.front_door_settings.PricingOptions`,
or its fields as keywords) picks the bound:

* ``"exact"``  the exact privacy profile (Balle & Wang 2018) — the lower limit of every valid bound;
* ``"paper"``  Wang & Hegde 2019, Thm 5 (the epsilon-expression of its proof); with subsampling,
  GPOPE Lemma 1 + the moments tail (not a valid bound in general: the report says where it fails);
* ``"kov"``    Kairouz-Oh-Viswanath optimal homogeneous composition;
* ``"rdp"``    Renyi DP with the improved conversion (subsampled: Mironov-Talwar-Zhang 2019 for Poisson,
  Wang-Balle-Kasiviswanathan 2018 Thm 27 without replacement);
* ``"pld"``    privacy loss distributions (``privcal.pld``): a certified bracket [lower, upper], the upper
  end reported;
* ``"best"``   the smallest certified upper bound among the *valid* accountants that support the setting
  (``"exact"`` alone when it applies: every valid bound is >= the exact value; otherwise the PLD, and
  RDP only where the PLD gives no finite answer or says its bracket is wider than the accuracy asked of
  it -- then the smaller answer wins; see :func:`~privcal.accounting.selection.stages`). When an accountant tried first gives no
  answer (a delta below what the PLD can certify, a grid over its memory cap) the report names it, why,
  and who answered instead; pure and approximate DP releases fall back to ``"basic"`` (basic
  composition, KOV), so they never answer inf where a finite bound exists.

Reports carry ``bracket``: certified (lower, upper) bounds on epsilon when the winning accountant gives
them (PLD; the exact profile: (epsilon, epsilon)), else None. Which accountants support an event, and
whether they are valid for it, is decided once per kind of event (the accountants' support depends only
on the kinds of the releases, see ``privcal.accounting.registry.ACCOUNTANTS``), not by building
every accountant on every call.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from typing import Any, Optional

from .. import _validate as V
from ..analysis import composition
from . import search as _search
from ..errors import InfeasibleError
from .protocol import Accountant
from .accountants import PaperAccountant
from .events import Event, Neighbouring, Releases, flatten_unchecked, kind, relation_of
from .relations import conversion
from .front_door_settings import PricingOptions, Run, keyword_docs, options_for, settings_for
from .front_door_settings import pld_options  # noqa: F401 (importable from here: privcal.accounting.history)
from . import inclusion as _inclusion
from .selection import (  # noqa: F401 (resolve_accountants, stages, wide, make_accountant, grouped, FALLBACK_ONLY: importable from here too)
    ACCOUNTANT_CHOICES,
    FAILURES,
    FALLBACK_ONLY,
    bracket_of,
    declined_notes,
    failure_note,
    grouped,
    make_accountant,
    priced,
    raise_none,
    resolve_accountants,
    stages,
    wide,
)

__all__ = [
    "ACCOUNTANT_CHOICES",
    "Run",
    "PricingOptions",
    "EpsilonReport",
    "CalibrationReport",
    "epsilon",
    "epsilon_of",
    "epsilon_of_report",
    "HistoryReport",
    "epsilon_report",
    "calibrate",
    "calibrate_report",
]



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
    #: whether the bracket's lower end bounds the mechanism itself (its pair is realised by two neighbouring
    #: data sets: docs/pld.md section 1), not only the dominating pair priced; None without a bracket
    realisable: bool | None = None


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
    #: whether the bracket's lower end bounds the mechanism itself (its pair is realised by two neighbouring
    #: data sets: docs/pld.md section 1), not only the dominating pair priced; None without a bracket
    realisable: bool | None = None

    @property
    def noise_multiplier(self) -> float:
        """sigma / sensitivity."""
        return self.sigma / self.sensitivity


def _resolve(accountant: str, releases: Releases, event: Event) -> list[str]:
    """Names of the accountants to use for ``releases`` (``event``: the releases at some sigma): the one
    asked for, or every valid one for "best"."""
    return resolve_accountants(accountant, event, _describe(releases))


def _describe(releases: Releases) -> str:
    if not releases.subsampled:
        return f"{releases.steps} Gaussian releases"
    return f"{releases.sampling} subsampling under {releases.neighbouring.value} neighbours"


_SETTING_DOC = """
    Args:
        {first}
        delta: target delta, in (0, 1).
        run: what ran, a :class:`~privcal.accounting.front_door_settings.Run`; default None: its defaults.
        options: how it is priced, a :class:`~privcal.accounting.front_door_settings.PricingOptions`; default
            None: its defaults.
        keywords: fields of ``Run`` and ``PricingOptions``, replacing those of ``run`` and ``options``:
""" + keyword_docs(Run, PricingOptions) + "\n"


def epsilon_report(
    sigma: float,
    delta: float,
    run: Optional[Run] = None,
    *,
    options: Optional[PricingOptions] = None,
    **keywords: Any,
) -> EpsilonReport:
    """:func:`epsilon` with the accountant used, its guarantee and notes.
    {doc}"""
    run, options = settings_for("epsilon_report", run, options, keywords)
    sigma = V.positive("sigma", sigma)
    delta = V.open_unit("delta", delta)
    rel = run.releases()
    pld = options.pld()
    accountant = options.accountant
    trivial = _trivial_epsilon(sigma, delta, rel, accountant)
    return trivial if trivial is not None else _epsilon_report(sigma, delta, rel, accountant, with_bracket=True, pld=pld)


def _trivial(rel: Releases, delta: float, accountant: str) -> Optional[float]:
    """The run's inclusion probability bound when ``accountant`` is "best" and it is at most ``delta``
    (``privcal.accounting.inclusion``: (0, delta)-DP for every sigma), else None. An accountant named by the
    caller prices the setting itself."""
    if accountant != "best":
        return None
    p = _inclusion.releases_inclusion_probability(rel)
    return p if _inclusion.negligible(p, delta) else None


def _trivial_epsilon(sigma: float, delta: float, rel: Releases, accountant: str) -> Optional[EpsilonReport]:
    """The report epsilon = 0 when :func:`_trivial` applies, else None."""
    p = _trivial(rel, delta, accountant)
    if p is None:
        return None
    return EpsilonReport(
        0.0, delta, sigma, rel.sensitivity, rel.steps, _inclusion.NAME, True, _inclusion.GUARANTEE,
        (_inclusion.note(p, delta),), rel.sample_rate, rel.sampling if rel.subsampled else None,
        rel.neighbouring.value if rel.subsampled else None, (0.0, 0.0), True,
    )


def _epsilon_report(sigma: float, delta: float, rel: Releases, accountant: str, *, with_bracket: bool,
                    pld: Optional[dict] = None) -> EpsilonReport:
    """epsilon_report for validated inputs (``with_bracket=False``: no lower bound computed, for
    :func:`epsilon`, which returns the upper bound alone)."""
    event = rel.event(sigma)
    value, acc, bracket, notes = priced(_resolve(accountant, rel, event), event, delta, with_bracket=with_bracket,
                                         pld=pld)
    notes = (() if math.isfinite(value) else (f"no finite epsilon at delta = {delta:g}",)) + notes
    notes += _lemma1_notes(acc, delta)
    return EpsilonReport(
        value, delta, sigma, rel.sensitivity, rel.steps, acc.name, acc.valid, acc.guarantee, notes,
        rel.sample_rate, rel.sampling if rel.subsampled else None,
        rel.neighbouring.value if rel.subsampled else None, bracket, realisable_lower(acc, bracket),
    )


def epsilon(
    sigma: float,
    delta: float,
    run: Optional[Run] = None,
    *,
    options: Optional[PricingOptions] = None,
    **keywords: Any,
) -> float:
    """Epsilon at ``delta`` of ``steps`` Gaussian (or GP) releases with noise standard deviation ``sigma``.

    Every valid accountant reports an upper bound on the true epsilon (``"exact"``: the true value).
    ``"best"`` (the default) is the smallest certified upper bound among the valid accountants that
    support the setting: the exact profile for plain releases; for subsampled ones the PLD's upper bound
    (RDP's where the PLD gives no finite answer, or the smaller of the two where the PLD's bracket is
    wider than its accuracy). :func:`epsilon_report` says which accountant answered, why another did
    not, its guarantee and, where there is one, the certified bracket [lower, upper]. ``epsilon(...)`` is
    ``epsilon_report(...).epsilon``. Example::

        >>> round(privcal.epsilon(1.0, 1e-5), 4)   # one release, sensitivity 1: exact profile
        4.3772
        >>> round(privcal.epsilon(10.0, 1e-5, steps=100), 4)   # 100 releases compose to mu = 1
        4.3772
    {doc}
    Returns:
        epsilon, an upper bound on the true epsilon for valid accountants (``inf``: no finite bound).
    """
    run, options = settings_for("epsilon", run, options, keywords)
    sigma = V.positive("sigma", sigma)
    delta = V.open_unit("delta", delta)
    rel = run.releases()
    pld = options.pld()
    accountant = options.accountant
    if _trivial(rel, delta, accountant) is not None:
        return 0.0
    event = rel.event(sigma)
    return priced(_resolve(accountant, rel, event), event, delta, with_bracket=False, pld=pld)[0]


def epsilon_of(event: Event, delta: float, *, options: Optional[PricingOptions] = None, **keywords: Any) -> float:
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
        options: how it is priced, a :class:`~privcal.accounting.front_door_settings.PricingOptions`; default
            None: its defaults.
        keywords: fields of ``PricingOptions``, replacing those of ``options``:
        accountant: "best" (default: the smallest certified upper bound among the valid accountants
            that support the history; the exact profile when it applies), "exact", "paper", "kov", "rdp",
            "pld" or "basic" (pure / approximate DP by basic composition, for Laplace and (epsilon, delta)
            events).
        pld_accuracy: requested relative width of the PLD's epsilon bracket, in (0, 1); default None (1e-3).
        memory_limit: cap of the memory of one PLD evaluation, in bytes, at least 2^20 (1 MiB); default None (256 MiB).

    Returns:
        epsilon, an upper bound on the true epsilon for valid accountants.

    Raises:
        UnsupportedEventError: no (valid) accountant prices this history.
        InfeasibleError: no accountant could price it (the message gives each one's reason, one line).
    """
    return epsilon_of_report(event, delta, options=options_for("epsilon_of", options, keywords),
                             with_bracket=False).epsilon


@dataclass(frozen=True)
class HistoryReport:
    """Epsilon of a history of events, with the accountant that answered, its guarantee and notes."""

    epsilon: float
    delta: float
    accountant: str
    valid: bool
    guarantee: str
    notes: tuple[str, ...] = field(default=())
    #: certified (lower, upper) bounds on epsilon (PLD; exact: (epsilon, epsilon)), else None
    bracket: tuple[float, float] | None = None
    #: whether the bracket's lower end bounds the mechanism itself (its pair is realised by two neighbouring
    #: data sets: docs/pld.md section 1), not only the dominating pair priced; None without a bracket
    realisable: bool | None = None
    #: the one neighbouring relation the whole history is priced under ("add_remove", "replace_one",
    #: "zero_out"), or None when no release states one (plain releases: the relation their sensitivities
    #: are stated under)
    neighbouring: str | None = None


def relation_notes(event: Event, relation: Optional[Neighbouring]) -> tuple[str, ...]:
    """One note per subsampled release kind of ``event`` stated under another relation than the history's
    ``relation``, naming the conversion that prices it (``privcal.accounting.relations.CONVERSIONS``).

    Args:
        event: a history.
        relation: its relation (``events.relation_of``).
    """
    if relation is None:
        return ()
    notes = []
    for k in sorted({k for k in (kind(leaf) for leaf, _ in flatten_unchecked(event)) if k is not None and k[1] != relation},
                    key=str):
        conv = conversion(k[0], k[1], relation, k[2])
        notes.append(f"{k[0]} releases stated under {k[1].value} neighbours are priced under {relation.value}, the "
                     f"history's one relation: {conv.proof if conv else 'no proven pair'}")
    return tuple(notes)


def epsilon_of_report(event: Event, delta: float, *, options: Optional[PricingOptions] = None,
                      with_bracket: bool = True, **keywords: Any) -> HistoryReport:
    """:func:`epsilon_of` with the accountant that answered, its guarantee, the bracket and notes (among
    them why an accountant "best" tried first gave no finite answer, and who answered instead).

    Args:
        event: what ran.
        delta: in (0, 1).
        options: how it is priced, a :class:`~privcal.accounting.front_door_settings.PricingOptions`; default
            None: its defaults.
        with_bracket: also compute the certified lower end (one more PLD composition); default True.
        keywords: fields of ``PricingOptions``, replacing those of ``options``:
        accountant: as in :func:`epsilon_of`; default "best".
        pld_accuracy: requested relative width of the PLD's epsilon bracket, in (0, 1); default None (1e-3).
        memory_limit: cap of the memory of one PLD evaluation, in bytes, at least 2^20 (1 MiB); default None (256 MiB).

    Returns:
        the report; ``epsilon`` is an upper bound on the true epsilon for valid accountants.
    """
    options = options_for("epsilon_of_report", options, keywords)
    if not isinstance(event, Event):
        raise ValueError(f"event must be a privcal Event, got {event!r}")
    delta = V.open_unit("delta", delta)
    pld = options.pld()
    accountant = options.accountant
    p = _inclusion.inclusion_probability(event) if accountant == "best" else 1.0
    if _inclusion.negligible(p, delta):
        relation = relation_of(event)
        return HistoryReport(0.0, delta, _inclusion.NAME, True, _inclusion.GUARANTEE, (_inclusion.note(p, delta),),
                             (0.0, 0.0) if with_bracket else None, True if with_bracket else None,
                             None if relation is None else relation.value)
    value, acc, bracket, notes = priced(resolve_accountants(accountant, event), event, delta,
                                         with_bracket=bool(with_bracket), pld=pld)
    notes = (() if math.isfinite(value) else (f"no finite epsilon at delta = {delta:g}",)) + notes
    relation = acc.neighbouring
    notes += relation_notes(event, relation)
    return HistoryReport(value, delta, acc.name, acc.valid, acc.guarantee, notes, bracket,
                         realisable_lower(acc, bracket), None if relation is None else relation.value)


def calibrate_report(
    epsilon: float,
    delta: float,
    run: Optional[Run] = None,
    *,
    options: Optional[PricingOptions] = None,
    **keywords: Any,
) -> CalibrationReport:
    """:func:`calibrate` with the achieved epsilon, the accountant used and notes.

    With ``accountant="paper"`` the notes also say whether the paper's bound is actually sufficient here:
    for plain releases whether the closed-form sigma printed at the end of the proof of Wang & Hegde's
    Thm 5 gives (epsilon, delta)-DP on the exact profile; for subsampled ones whether GPOPE's Lemma 1 is
    at least the valid RDP at the order used.
    {doc}"""
    run, options = settings_for("calibrate_report", run, options, keywords)
    epsilon = V.positive("epsilon", epsilon)
    delta = V.open_unit("delta", delta)
    rel = run.releases()
    pld = options.pld()
    accountant = options.accountant
    return _calibrate_report(epsilon, delta, rel, accountant, with_bracket=True, pld=pld)


def _calibrate_report(epsilon: float, delta: float, rel: Releases, accountant: str, *,
                      with_bracket: bool, pld: Optional[dict] = None) -> CalibrationReport:
    """calibrate_report for validated inputs (``with_bracket=False``: no lower bound computed, for
    :func:`calibrate`). With several valid accountants each one of a :func:`stages` stage calibrates
    (RDP only when no other one answers); the smallest sigma wins (each answer is checked by its own
    accountant: its upper epsilon is <= the target there). An accountant that fails (infeasible under it,
    a grid over the memory cap, its numerics) is skipped with a note naming why and who answered. A run that
    touches the differing record with probability at most delta needs no noise (``privcal.accounting.inclusion``):
    with "best", sigma 0 and achieved epsilon 0, without a search."""
    p = _trivial(rel, delta, accountant)
    if p is not None:
        return CalibrationReport(
            0.0, epsilon, delta, 0.0, rel.sensitivity, rel.steps, _inclusion.NAME, True, _inclusion.GUARANTEE,
            (_inclusion.note(p, delta),), rel.sample_rate, rel.sampling if rel.subsampled else None,
            rel.neighbouring.value if rel.subsampled else None, (0.0, 0.0) if with_bracket else None,
            True if with_bracket else None,
        )
    names = _resolve(accountant, rel, rel.event(1.0))
    best, failed, errors, found = None, {}, {}, {}
    where = f"calibrating for (epsilon, delta) = ({epsilon:g}, {delta:g})"
    for stage in stages(names):
        for name in stage:
            acc = make_accountant(name, pld)
            try:
                sigma = float(acc.sigma_for_unchecked(rel, epsilon, delta))
            except FAILURES as exc:
                failed[name], errors[name] = failure_note(name, exc, where), exc
                continue
            if not 0 < sigma <= _search.SIGMA_MAX:  # never an absurd sigma: beyond the search's own range
                failed[name] = f"no sigma up to {_search.SIGMA_MAX:g} reaches the target (it returned {sigma:g})"
                errors[name] = InfeasibleError(f"{name}: {failed[name]}")
                continue
            found[name] = sigma
            if best is None or sigma < best[0]:
                best = (sigma, name, acc)
        if best is not None and not wide(getattr(best[2], "calibrated", None) and best[2].calibrated[2], delta):
            break
    if best is None:
        raise_none(names, failed, errors)
    sigma, name, searched = best
    notes = declined_notes(failed, name)
    if name != "pld" and "pld" in found:  # the PLD answered but a fallback priced beside it needs less noise
        notes += (f"pld: its bracket at delta = {delta:g} is wider than the requested accuracy and its sigma "
                  f"{found['pld']:.6g} is larger; answered by {name}",)
    done = getattr(searched, "calibrated", None)  # the accountant of the last probe, at the answer (PLD)
    if done is not None and done[0] == sigma and not with_bracket:
        acc, achieved = done[2], float(done[1])  # the probe's upper end (>= epsilon(); calibrate() reads sigma)
    elif done is not None and done[0] == sigma:
        acc = done[2]  # its PLD is already built: the bracket's upper end is what epsilon() reports
        try:
            achieved = float(acc.epsilon_unchecked(delta))
        except FAILURES as exc:  # the probe's upper end stands (certified, and never below the bracket's)
            achieved = float(done[1])
            notes += (f"pld: bracket not computed at the answer ({failure_note(name, exc, where)}); the achieved "
                      "epsilon is the upper end on its rule grid",)
    else:
        acc = make_accountant(name, pld).compose_unchecked(rel.event(sigma))
        achieved = float(acc.epsilon_unchecked(delta))
    bracket = None
    if with_bracket:
        bracket, more = bracket_of(acc, achieved, delta)
        notes += more
    notes += _lemma1_notes(acc, delta)
    if name == "paper" and not rel.subsampled:
        notes += _thm5_notes(epsilon, delta, rel.sensitivity, rel.steps)
    return CalibrationReport(
        sigma, epsilon, delta, achieved, rel.sensitivity, rel.steps, name, acc.valid, acc.guarantee, notes,
        rel.sample_rate, rel.sampling if rel.subsampled else None,
        rel.neighbouring.value if rel.subsampled else None, bracket, realisable_lower(acc, bracket),
    )


def realisable_lower(acc: Accountant, bracket) -> Optional[bool]:
    """Whether the lower end of ``bracket`` bounds the mechanism's own epsilon from below: True for the exact
    profile, the PLD accountant's ``realisable`` (False for sampling without replacement under zero-out
    neighbours, priced by a dominating replace-one pair), None without a bracket.

    Args:
        acc: the accountant that answered.
        bracket: its (lower, upper) bracket, or None.
    """
    if bracket is None:
        return None
    return bool(getattr(acc, "realisable", True))




def calibrate(
    epsilon: float,
    delta: float,
    run: Optional[Run] = None,
    *,
    options: Optional[PricingOptions] = None,
    **keywords: Any,
) -> float:
    """Smallest sigma for which ``steps`` Gaussian (or GP) releases are (epsilon, delta)-DP under the
    chosen accountant. Every answer is checked: the accountant reports epsilon <= target at it.

    ``"best"`` (the default): the smallest sigma whose certified upper epsilon is <= the target under
    some valid accountant that supports the setting -- the exact profile for plain releases; for
    subsampled ones the PLD's answer (RDP's where the PLD finds none, or the smaller of the two where
    the PLD's bracket is wider than its accuracy). ``calibrate(...)`` is
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
    run, options = settings_for("calibrate", run, options, keywords)
    epsilon = V.positive("epsilon", epsilon)
    delta = V.open_unit("delta", delta)
    rel = run.releases()
    pld = options.pld()
    accountant = options.accountant
    return _calibrate_report(epsilon, delta, rel, accountant, with_bracket=False, pld=pld).sigma


for _fn, _first in (
    (epsilon_report, "sigma: noise standard deviation (absolute, not a multiplier), in (0, inf)."),
    (epsilon, "sigma: noise standard deviation (absolute, not a multiplier), in (0, inf)."),
    (calibrate_report, "epsilon: target epsilon, in (0, inf)."),
    (calibrate, "epsilon: target epsilon, in (0, inf)."),
):
    _fn.__doc__ = _fn.__doc__.replace("    {doc}", _SETTING_DOC.format(first=_first).rstrip("\n") + "\n")
del _fn, _first


def _lemma1_notes(acc, delta: float) -> tuple[str, ...]:
    if not (isinstance(acc, PaperAccountant) and acc.subsampled):
        return ()
    if acc.lemma1_sufficient_unchecked(delta):
        return ("GPOPE Lemma 1 is at least the valid RDP at the order used: this epsilon is an upper bound here",)
    return ("GPOPE Lemma 1 is below the valid RDP at the order used: this epsilon is NOT an upper bound here",)


def _thm5_notes(epsilon: float, delta: float, sensitivity: float, steps: int) -> tuple[str, ...]:
    closed = composition.thm5_sigma_proof_paper_unchecked(epsilon, delta, steps=steps, sensitivity=sensitivity)
    exact_eps = composition.epsilon_composed_exact_unchecked(closed, delta, steps=steps, sensitivity=sensitivity)
    if exact_eps > epsilon:
        return (
            f"paper closed form not sufficient here: Thm 5 closed-form sigma = {closed:.6g} gives exact "
            f"epsilon {exact_eps:.6g} > {epsilon:g}",
        )
    return (f"paper closed form sufficient here: Thm 5 closed-form sigma = {closed:.6g}",)
