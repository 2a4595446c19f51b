r"""Which dominating pair privcal prices for each (sampling scheme, neighbouring relation), and why.

One place decides this for every accountant that prices subsampled Gaussian releases (the RDP accountant
and ``privcal.pld``); the proofs are in ``docs/pld.md``, section 1. With s the noise multiplier (sigma over
the sensitivity meant under the event's relation) and q the sample rate:

* **Poisson, add/remove** — priced by the pair A = (1 - q) N(0, s^2) + q N(1, s^2) against B = N(0, s^2) and
  its reverse (B, A): the two directions of a tight dominating pair (Zhu, Dong & Wang 2022, arXiv
  2106.08567, Sec. 5 and Thm 10 for adaptive composition; Mironov, Talwar & Zhang 2019 for its RDP).
  Realised by a data set whose other examples contribute 0 and an added example contributing 1.
* **Without replacement, replace-one** — the same pair at the replace-one sensitivity (Balle, Barthe &
  Gaboardi 2018, arXiv 1807.01647, Thm 10 gives its profile; Zhu, Dong & Wang 2022, Sec. 5, domination for
  composition; Wang, Balle & Kasiviswanathan 2018, Thm 9 / 27 for its RDP). Realised too: with a fixed batch
  of b out of n, D = (a, c, ..., c) and D' = (c, c, ..., c) with f(a) - f(c) = the sensitivity give, after a
  shift by b f(c), exactly A against B (the replaced record is in the batch with probability q = b / n,
  and whoever fills the batch otherwise contributes f(c)).
* **Without replacement, zero-out** — one record replaced by a null record with f(null) = 0. The Poisson
  pair at the zero-out sensitivity is **not** a dominating pair here (Lebeda, Regehr, Kamath & Steinke 2024,
  arXiv 2405.20769, the Poisson-versus-without-replacement pitfall): the null record still takes a slot in
  the fixed-size batch, so it displaces another record. Realisable counterexample: others contribute -C,
  the differing record +C against null, giving (1 - q) N(-C) + q N(+C) against (1 - q) N(-C) + q N(0).
  privcal prices zero-out as replace-one on the universe X u {null} at **twice** the zero-out sensitivity:
  every zero-out neighbour pair is a replace-one pair there, and ||f(x) - f(x')|| <= ||f(x) - f(null)|| +
  ||f(null) - f(x')|| <= 2 Delta. That pair dominates (previous item), but it is not realised by a
  zero-out pair, so its lower end does not prove a zero-out mechanism non-private
  (:func:`realisable` is False; ``privcal.accounting.realisable`` prices the realisable pair above from below).
  With q = 1 nothing is displaced: the release is the plain Gaussian at the zero-out sensitivity.

Any other (sampling, relation) pair (e.g. Poisson with replace-one) has no proof here and is refused by
every accountant (``UnsupportedEventError`` naming the pair).

A history has one relation (``privcal.accounting.relations``): :func:`priced_event`, :func:`sensitivity_factor`
and :func:`realisable` take the history's relation, and price a release stated under another one by its
conversion (without replacement in an add/remove history: the Poisson pair at the replace-one sensitivity,
twice the zero-out one; zero-out in a replace-one history: the replace-one pair at twice its sensitivity;
docs/pld.md section 1.5).
"""

from __future__ import annotations

import math
from typing import Optional

from ..errors import UnsupportedEventError
from . import relations
from .events import EpochsEvent, GaussianEvent, Neighbouring, SubsampledEvent, unwrap_unchecked

__all__ = ["PRICED", "REFUSED_REASON", "epochs_mu2", "priced_event", "realisable", "sensitivity_factor"]

#: (sampling, relation) -> (the relation priced, the factor on the event's sensitivity, the source).
PRICED = {
    ("poisson", Neighbouring.ADD_REMOVE): (
        Neighbouring.ADD_REMOVE, 1.0, "Poisson pair; Zhu-Dong-Wang 2022 Sec. 5, Mironov-Talwar-Zhang 2019"),
    ("without_replacement", Neighbouring.REPLACE_ONE): (
        Neighbouring.REPLACE_ONE, 1.0, "Balle-Barthe-Gaboardi 2018 Thm 10; Zhu-Dong-Wang 2022 Sec. 5; WBK 2018 Thm 9/27"),
    ("without_replacement", Neighbouring.ZERO_OUT): (
        Neighbouring.REPLACE_ONE, 2.0, "replace-one on X u {null} at twice the sensitivity (docs/pld.md, 1.3)"),
}

#: Why a (sampling, relation) pair outside :data:`PRICED` is refused.
REFUSED_REASON = ("no dominating pair is proven here for {sampling} sampling with {relation} neighbours "
                  "(priced: poisson/add_remove, without_replacement/replace_one, without_replacement/zero_out)")


def _conversion(event: SubsampledEvent, relation: Optional[Neighbouring]) -> relations.Conversion:
    """The conversion of ``event`` to the history's ``relation`` (None: its own relation)."""
    found = relations.conversion(event.sampling, event.neighbouring, relation or event.neighbouring,
                                 event.sample_rate >= 1.0)
    if found is None:
        raise UnsupportedEventError(
            f"{event.sampling}/{event.neighbouring.value} releases have no proven dominating pair under "
            f"{(relation or event.neighbouring).value} neighbours ({relations.DOCS})")
    return found


def sensitivity_factor(event: SubsampledEvent, relation: Optional[Neighbouring] = None) -> float:
    """Factor on the event's sensitivity under which privcal prices it in a history of ``relation``: 2 for
    sampling without replacement under zero-out neighbours (replace-one on X u {null}; at q = 1 only when
    the history is replace-one), else 1 (``privcal.accounting.relations.CONVERSIONS``).

    Args:
        event: a subsampled event with a priced (sampling, relation) pair.
        relation: the history's neighbouring relation; default None (the event's own).

    Returns:
        1.0 or 2.0.
    """
    return _conversion(event, relation).factor


def priced_event(event: SubsampledEvent, relation: Optional[Neighbouring] = None) -> SubsampledEvent:
    """The subsampled Gaussian release privcal actually prices for ``event`` in a history of ``relation``
    (see the module docstring and ``privcal.accounting.relations``): ``event`` itself under its own
    relation, except without replacement under zero-out (q < 1), which becomes replace-one with the noise
    multiplier halved (the sensitivity doubled); under an add/remove history a without-replacement release
    becomes the Poisson pair at its replace-one sensitivity (twice its zero-out sensitivity).

    Args:
        event: a subsampled Gaussian (or Gaussian-process) release with a priced (sampling, relation) pair.
        relation: the history's neighbouring relation; default None (the event's own).

    Returns:
        a SubsampledEvent around a GaussianEvent.
    """
    conv = _conversion(event, relation)
    target = relation or event.neighbouring
    if target == Neighbouring.ZERO_OUT:  # priced as replace-one on X u {null}
        target = Neighbouring.REPLACE_ONE
    if conv.factor == 1.0 and conv.sampling == event.sampling and target == event.neighbouring:
        return event
    nm = unwrap_unchecked(event.event)[0].noise_multiplier
    inner = GaussianEvent.unchecked(nm / conv.factor if math.isfinite(nm) else nm)
    return SubsampledEvent.unchecked(inner, event.sample_rate, conv.sampling, target)


def realisable(event: SubsampledEvent, relation: Optional[Neighbouring] = None) -> bool:
    """Whether the pair priced for ``event`` in a history of ``relation`` is realised, in both orders, by two
    neighbouring data sets under that relation (so that a certified lower bound of the pair bounds the
    mechanism's own epsilon from below): True for Poisson add/remove, without-replacement replace-one, and
    without-replacement zero-out in a replace-one history; False for without-replacement zero-out at q < 1
    under its own relation (a dominating pair, not a zero-out one) and for without-replacement releases in an
    add/remove history (realised in the removal order only).

    Args:
        event: a subsampled event with a priced (sampling, relation) pair.
        relation: the history's neighbouring relation; default None (the event's own).

    Returns:
        True or False.
    """
    return _conversion(event, relation).realised == "both"


def epochs_mu2(event: EpochsEvent, relation: Optional[Neighbouring] = None) -> float:
    """mu^2 of the Gaussian pair that dominates a run over epochs in a history of ``relation`` (the
    no-amplification bound, docs/samplers.md): releases x (factor / noise multiplier)^2, with ``releases`` =
    epochs (one batch per epoch; epochs x steps_per_epoch for a full batch) and the conversion's factor on the
    sensitivity (2 for a zero-out run in a replace-one history, ``privcal.accounting.relations``).

    Args:
        event: a run over epochs of a Gaussian (or Gaussian-process) release, its pair not refused.
        relation: the history's neighbouring relation; default None (the event's own).

    Returns:
        mu^2, in [0, inf].
    """
    conv = relations.conversion(event.sampling, event.neighbouring, relation or event.neighbouring,
                                event.sampling == "full_batch")
    if conv is None:
        raise UnsupportedEventError(
            f"{event.sampling}/{event.neighbouring.value} runs have no proven bound under "
            f"{(relation or event.neighbouring).value} neighbours ({relations.DOCS}; docs/samplers.md)")
    nm = unwrap_unchecked(event.event)[0].noise_multiplier
    if math.isinf(nm):
        return 0.0
    try:
        return event.releases * (conv.factor / nm) ** 2
    except OverflowError:  # a vanishing noise multiplier: no finite bound
        return math.inf
