"""Runs that almost never touch the differing record: ``(0, delta)``-DP without any accountant.

If the record on which two neighbouring data sets differ enters no batch of the whole run with probability
at least ``1 - p``, the run is ``(0, p)``-DP for every noise scale, and ``epsilon = 0`` is its exact value at
every ``delta >= p``.

**Proof.** Let ``N`` be the event that the differing record's slot is drawn into no batch. For Poisson
sampling and for fixed-size batches drawn afresh at each step (without replacement), the batch draws use
fresh randomness at each step, independent of the data and of the earlier outputs, so
``P(N) = prod_i (1 - q_i)`` (``q_i`` the inclusion probability of one record at release ``i``; under
add/remove with fixed-size batches the larger data set's rate ``b / (n + 1)`` is below the stated ``b / n``).
Conditioned on ``N`` every batch is drawn from the records the two data sets share, with the same law under
both (for Poisson each record is included independently; for fixed-size batches a uniform ``b``-subset of the
shared records), so the outputs, however adaptive, have the same conditional law ``P_0`` under both data
sets. Writing the output law as ``P(N) P_0 + (1 - P(N)) R`` under ``D`` and ``P(N) P_0 + (1 - P(N)) R'``
under ``D'``, every event ``S`` has ``|P_D(S) - P_D'(S)| <= 1 - P(N) = p``: the total variation distance is at
most ``p``, which is ``(0, p)``-DP (hockey-stick divergence at ``epsilon = 0``). The argument uses neither
the noise nor the sensitivity; it holds under add/remove, replace-one and zero-out alike.

Releases that see every record (plain releases, and runs over epochs -- shuffled, balls-in-bins, full
batch -- where every record sits in a batch of each epoch) have inclusion probability 1, so the shortcut
never applies to them.

Rounding: ``p = -expm1(sum_i T_i log1p(-q_i))`` is evaluated in floating point, each operation within a few
units in the last place; the comparison with ``delta`` is made on ``p (1 + INCLUSION_ROUNDING)``, an upper
bound on the exact ``p`` (derived in :data:`INCLUSION_ROUNDING`).
"""

from __future__ import annotations

import math

from .events import ComposedEvent, EpochsEvent, Event, Releases, SelfComposedEvent, SubsampledEvent

__all__ = ["INCLUSION_ROUNDING", "inclusion_probability", "releases_inclusion_probability", "negligible",
           "note"]

#: Relative room on the evaluated inclusion probability. log1p and expm1 are within 1 ulp (u = 2^-53) in
#: glibc and numpy; a sum of k terms T_i log1p(-q_i) has relative error at most k u (k <= a few thousand
#: groups in any history privcal prices: the room below covers k up to 2^20) plus 2u per product, and expm1
#: of a value x <= 0 with relative error e has relative error at most e + u near 0 (|expm1'(x) x / expm1(x)|
#: <= 1 for x <= 0). 2^-30 ~ 9.3e-10 is far above (2^20 + 4) u ~ 1.2e-10 and far below any delta it decides.
INCLUSION_ROUNDING = 2.0 ** -30


def _log_exclusion(event: Event) -> float:
    """sum over releases of log(1 - q_i): the log-probability that one record enters no batch (0 for an
    event that reads no record; -inf as soon as one release reads every record)."""
    if isinstance(event, SelfComposedEvent):
        inner = _log_exclusion(event.event)
        return 0.0 if inner == 0.0 else inner * event.count
    if isinstance(event, ComposedEvent):
        return math.fsum(_log_exclusion(e) for e in event.events)
    if isinstance(event, SubsampledEvent):
        if event.sample_rate >= 1.0:
            return -math.inf
        # the record enters this release's batch with probability q, then the inner event may read it: an
        # upper bound on the inclusion is q whatever the inner event is
        return math.log1p(-event.sample_rate)
    if isinstance(event, EpochsEvent):
        return -math.inf  # every record sits in a batch of every epoch
    return -math.inf  # a plain release reads every record


def inclusion_probability(event: Event) -> float:
    """An upper bound on the probability that one given record is drawn into some batch of the run ``event``
    (1 for any run with a release that reads every record).

    Args:
        event: a privcal event (a history, a self-composition, a subsampled release, ...).
    """
    log_out = _log_exclusion(event)
    if log_out == -math.inf:
        return 1.0
    return min(1.0, -math.expm1(log_out) * (1.0 + INCLUSION_ROUNDING))


def releases_inclusion_probability(releases: Releases) -> float:
    """:func:`inclusion_probability` of ``steps`` releases at rate ``sample_rate`` (1 without subsampling).

    Args:
        releases: the validated setting.
    """
    if not releases.subsampled:
        return 1.0
    p = -math.expm1(releases.steps * math.log1p(-releases.sample_rate))
    return min(1.0, p * (1.0 + INCLUSION_ROUNDING))


def negligible(p: float, delta: float) -> bool:
    """Whether a run whose record-inclusion probability is at most ``p`` is (0, delta)-DP by the argument of
    this module (``p <= delta``).

    Args:
        p: an upper bound on the inclusion probability (:func:`inclusion_probability`).
        delta: the target delta, in (0, 1).
    """
    return p <= delta


#: The accountant name reports carry when this shortcut answered.
NAME = "inclusion"

#: The guarantee line of such a report.
GUARANTEE = ("exact: (0, delta)-DP for every sigma >= 0, because the differing record enters no batch with "
             "probability >= 1 - delta (privcal.accounting.inclusion)")


def note(p: float, delta: float) -> str:
    """The one line said when the shortcut answers.

    Args:
        p: the inclusion probability bound.
        delta: the target delta.
    """
    return (f"the differing record enters some batch of the run with probability at most {p:.3g} <= delta = "
            f"{delta:g}: epsilon = 0 for every sigma >= 0 (no noise is needed at this delta)")
