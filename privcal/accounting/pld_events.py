r"""Events become privacy loss distributions: which releases have a PLD, and their (pair, count) factors.

The bridge between the accounting layer (events, their neighbouring relations and the dominating pair each
(sampling, relation) is priced by, ``privcal.accounting.pairs``) and the mathematics of ``privcal.privacy_loss``
(pairs of distributions, discretisation, composition). Used by ``privcal.accounting.pld_accountant`` and
re-exported by ``privcal.pld``.
"""

from __future__ import annotations

import math
from typing import Optional

from .. import _validate as V
from ..errors import UnsupportedEventError
from ..privacy_loss import (
    DEFAULT_ABSOLUTE_ACCURACY,
    DEFAULT_ACCURACY,
    DEFAULT_MEMORY_LIMIT,
    PLD,
    ApproxDPPair,
    GaussianPair,
    LaplacePair,
    SubsampledGaussianPair,
)
from . import pairs
from .events import ApproxDPEvent, EpochsEvent, Event, LaplaceEvent, SubsampledEvent, flatten_unchecked, unwrap_unchecked, relation_of
from .protocol import GAUSSIAN_LEAVES, SUPPORT

__all__ = ["from_event", "supports", "leaf_supported", "factors", "realisable"]


def leaf_supported(event: Event) -> bool:
    """Whether one release has a PLD here (``protocol.SUPPORT["pld"]``).

    Args:
        event: a single release.
    """
    return SUPPORT["pld"](event)


def realisable(ledger, relation=None) -> bool:
    """Whether the pairs priced for these leaves in a history of ``relation`` are realised, in both orders, by
    two neighbouring data sets (so the lower end bounds the mechanism's own epsilon from below): all but
    sampling without replacement under zero-out neighbours at q < 1 in a zero-out history (priced by the
    replace-one pair at twice the sensitivity, a dominating pair, not a zero-out one) and sampling without
    replacement in an add/remove history (realised in the removal order only); ``privcal.accounting.pairs``,
    docs/pld.md section 1.

    Args:
        ledger: (leaf, count) pairs, as ``privcal.accounting.events.flatten`` gives them.
        relation: the history's neighbouring relation (``events.relation_of``); default None (each leaf's own).
    """
    return all(pairs.realisable(leaf, relation) if isinstance(leaf, SubsampledEvent) else
               leaf.sampling == "full_batch" for leaf, _ in ledger if isinstance(leaf, (SubsampledEvent, EpochsEvent)))


def supports(event: Event) -> bool:
    """Whether ``event`` (any history) has a PLD here: Gaussian and Gaussian-process releases, Laplace
    releases, (epsilon, delta)-DP events, and subsampled Gaussians (Poisson with add/remove neighbours;
    without replacement with replace-one or zero-out neighbours, the latter priced as replace-one at twice
    its sensitivity).

    Args:
        event: the event to price.

    Returns:
        True when every leaf of the history is supported.
    """
    return isinstance(event, Event) and all(leaf_supported(leaf) for leaf, _ in flatten_unchecked(event))


def factors(ledger, relation=None) -> list:
    """(pair, count) factors of a ledger of (leaf, count): Gaussian releases merged into one Gaussian
    (mu^2 adds up, Dong, Roth & Su 2019, Cor. 3.3), equal pairs grouped, releases without loss dropped;
    each subsampled release by the dominating pair of its (sampling, relation) (``pairs.priced_event``).

    Args:
        ledger: (leaf, count) pairs of supported releases.
        relation: the history's neighbouring relation (``events.relation_of``); default None (each leaf's own).
    """
    mu2 = 0.0
    groups: dict = {}
    for leaf, n in ledger:
        pair = None
        if isinstance(leaf, GAUSSIAN_LEAVES):
            mu2 += n * leaf.mu * leaf.mu
            continue
        if isinstance(leaf, EpochsEvent):  # the no-amplification Gaussian (docs/samplers.md)
            mu2 += n * pairs.epochs_mu2(leaf, relation)
            continue
        if isinstance(leaf, SubsampledEvent):
            nm = unwrap_unchecked(pairs.priced_event(leaf, relation).event)[0].noise_multiplier  # zero-out w/o repl.: 2x sensitivity
            if math.isinf(nm):
                continue
            if leaf.sample_rate >= 1.0:
                mu2 += n / (nm * nm)
                continue
            pair = SubsampledGaussianPair(nm, leaf.sample_rate)
        elif isinstance(leaf, LaplaceEvent):
            pair = LaplacePair(leaf.sensitivity / leaf.scale)
        elif isinstance(leaf, ApproxDPEvent):
            if leaf.epsilon == 0 and leaf.delta == 0:
                continue
            pair = ApproxDPPair(leaf.epsilon, leaf.delta)
        else:  # pragma: no cover - filtered by supports()
            raise UnsupportedEventError(f"no PLD for {leaf!r}")
        key = pair.key()
        old = groups.get(key)
        groups[key] = (pair, n + (old[1] if old else 0))
    out = list(groups.values())
    if mu2 > 0:
        out.insert(0, (GaussianPair(math.sqrt(mu2)), 1))
    return out


def from_event(
    event: Event,
    *,
    value_discretization: Optional[float] = None,
    accuracy: float = DEFAULT_ACCURACY,
    absolute_accuracy: float = DEFAULT_ABSOLUTE_ACCURACY,
    memory_limit: float = DEFAULT_MEMORY_LIMIT,
) -> PLD:
    """The PLD of ``event`` (any history of supported events; see :func:`supports`).

    Args:
        event: what ran.
        value_discretization: grid spacing h of the loss, in nats, in (0, inf); default None: chosen
            automatically (coarse first, refined until the bracket meets the accuracy).
        accuracy: relative width of the epsilon bracket to reach, in (0, 1); default 1e-3.
        absolute_accuracy: absolute width of the epsilon bracket to reach, in (0, inf); default 1e-4
            (the larger of the two widths is the target).
        memory_limit: cap of the memory of one evaluation, in bytes, in (0, inf); default 256 MiB. A grid
            above it is coarsened (up to 16x, recorded in ``PLD.notes``); beyond that
            ``MemoryLimitError`` (a ``ValueError``) names the cap and the accuracy to relax.

    Returns:
        A lazy :class:`~privcal.privacy_loss.PLD`.

    Raises:
        ValueError: an argument is outside its range.
        UnsupportedEventError: ``event`` has a release with no PLD here.
    """
    if not isinstance(event, Event):
        raise ValueError(f"event must be a privcal Event, got {event!r}")
    if value_discretization is not None:
        value_discretization = V.positive("value_discretization", value_discretization)
    accuracy = V.open_unit("accuracy", accuracy)
    absolute_accuracy = V.positive("absolute_accuracy", absolute_accuracy)
    memory_limit = V.positive("memory_limit", memory_limit)
    if not supports(event):
        raise UnsupportedEventError(f"no PLD for {event!r}")
    ledger = flatten_unchecked(event)
    relation = relation_of(event)
    return PLD(factors(ledger, relation), value_discretization=value_discretization, accuracy=accuracy,
               absolute_accuracy=absolute_accuracy, memory_limit=memory_limit,
               realisable=realisable(ledger, relation))
