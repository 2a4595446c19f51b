r"""Neighbouring relations, and the one relation under which a whole history is priced.

Releases of one history run on the same data, so they protect the same neighbours: a history has **one**
neighbouring relation. Each subsampled release states the relation its sensitivity is meant under; plain
releases (Gaussian, Gaussian-process, Laplace, (epsilon, delta) events) state none, and their sensitivity is
read under the history's relation. When the stated relations differ, each release is *converted* to the
history's relation by a proven dominating pair (:data:`CONVERSIONS`, proofs in docs/pld.md section 1.5), or
the history is refused (:func:`history_relation` raises ``UnsupportedEventError`` in one line naming both
relations and what would be valid).

The conversions (s = noise multiplier under the release's own relation, q < 1 its sample rate):

* **without replacement, replace-one -> add/remove**: removing a record x from D (n records, batch b,
  q = b/n) is coupled with a batch of D - x by drawing x with probability q in place of a uniformly chosen
  member y of that batch: the batch sums differ by f(x) - f(y), of norm at most the replace-one sensitivity.
  Joint convexity of the hockey-stick divergence over the coupling gives the Poisson pair (A, B) at the
  replace-one sensitivity (Balle, Barthe & Gaboardi 2018, arXiv 1807.01647, Thm 10's coupling; Lebeda,
  Regehr, Kamath & Steinke 2024, arXiv 2405.20769, Sec. 4), for removal, and (B, A) for addition (there the
  larger data set has n + 1 records and the rate b/(n + 1) < q, dominated by the pair at q). Valid for
  neighbouring data sets whose larger one has at least b/q records. Realised in the removal order only.
* **without replacement, zero-out -> add/remove**: the same coupling; ||f(x) - f(y)|| <= ||f(x) - f(null)||
  + ||f(null) - f(y)|| <= 2 x the zero-out sensitivity (triangle inequality through the null record).
* **without replacement, zero-out -> replace-one**: a replace-one change x -> x' moves f by at most twice
  the zero-out sensitivity (the same triangle inequality), so the replace-one pair at twice the sensitivity
  dominates; realised (f(null) = 0, f(x) = C, f(x') = f(others) = -C), at every q (q = 1 included).

Everything else across relations is refused: Poisson sampling under replace-one or zero-out has no proven
dominating pair here (a realisable replace-one pair, f(x) = 1, f(x') = -1, beats the add/remove pair), and a
replace-one release's sensitivity says nothing of a zero-out change unless the null record is in the
universe it was computed over.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Iterable, Optional

from ..errors import UnsupportedEventError

__all__ = ["Neighbouring", "Conversion", "CONVERSIONS", "REFUSED_EPOCHS", "conversion", "history_relation", "DOCS"]

#: where the conversions are proven
DOCS = "docs/pld.md, section 1.5"


class Neighbouring(str, enum.Enum):
    """Which datasets are neighbours; an event's sensitivity is defined under this relation.

    * ``ADD_REMOVE`` ("add_remove"): one example added or removed (the natural relation of Poisson
      subsampling);
    * ``REPLACE_ONE`` ("replace_one"): one example replaced by another (the natural relation of
      fixed-size batches drawn without replacement; a clipped contribution of norm h has sensitivity 2h);
    * ``ZERO_OUT`` ("zero_out"): one example replaced by a null one (a clipped contribution of norm h
      has sensitivity h). Under sampling without replacement the null example still takes a slot of the
      fixed-size batch, displacing another example, so privcal prices it as replace-one at twice the
      sensitivity (``privcal.accounting.pairs``; the Poisson pair would be optimistic, Lebeda et al. 2024).

    The names follow dp_accounting's ``NeighboringRelation`` (ADD_OR_REMOVE_ONE, REPLACE_ONE,
    REPLACE_SPECIAL). A history has one relation (:func:`history_relation`).
    """

    ADD_REMOVE = "add_remove"
    REPLACE_ONE = "replace_one"
    ZERO_OUT = "zero_out"

    def __str__(self) -> str:
        return self.value


_AR, _RO, _ZO = Neighbouring.ADD_REMOVE, Neighbouring.REPLACE_ONE, Neighbouring.ZERO_OUT


@dataclass(frozen=True)
class Conversion:
    """How a subsampled release stated under one relation is priced under a history's relation.

    Attributes:
        sampling: how the priced pair is read: "poisson" (A = (1 - q) N(0, s^2) + q N(1, s^2) against
            B = N(0, s^2), priced by the Poisson bounds, e.g. Mironov-Talwar-Zhang's RDP) or
            "without_replacement" (the same pair, priced by the replace-one bounds, e.g. WBK's RDP).
        factor: the factor on the release's stated sensitivity (the noise multiplier is divided by it).
        realised: which orders of the priced pair two neighbouring data sets realise exactly: "both",
            "remove" (the data set holding the record against the one without it) or "none".
        proof: the source, in a few words.
    """

    sampling: str
    factor: float
    realised: str
    proof: str


#: (sampling, stated relation, history relation, whole data set (q = 1)) -> Conversion; the identities are
#: the pairs of ``privcal.accounting.pairs.PRICED``
CONVERSIONS: dict[tuple, Conversion] = {
    ("poisson", _AR, _AR, False): Conversion(
        "poisson", 1.0, "both", "Poisson pair; Zhu-Dong-Wang 2022 Sec. 5, Mironov-Talwar-Zhang 2019"),
    ("poisson", _AR, _AR, True): Conversion("poisson", 1.0, "both", "the whole data set: the Gaussian pair"),
    ("without_replacement", _RO, _RO, False): Conversion(
        "without_replacement", 1.0, "both", "Balle-Barthe-Gaboardi 2018 Thm 10; Zhu-Dong-Wang 2022 Sec. 5"),
    ("without_replacement", _RO, _RO, True): Conversion(
        "without_replacement", 1.0, "both", "the whole data set: the Gaussian pair"),
    ("without_replacement", _ZO, _ZO, False): Conversion(
        "without_replacement", 2.0, "none", "replace-one on X u {null} at twice the sensitivity (docs/pld.md 1.3)"),
    ("without_replacement", _ZO, _ZO, True): Conversion(
        "without_replacement", 1.0, "both", "the whole data set: nothing displaced, the Gaussian pair"),
    ("without_replacement", _ZO, _RO, False): Conversion(
        "without_replacement", 2.0, "both", "replace-one at twice the zero-out sensitivity (docs/pld.md 1.5)"),
    ("without_replacement", _ZO, _RO, True): Conversion(
        "without_replacement", 2.0, "both", "replace-one at twice the zero-out sensitivity (docs/pld.md 1.5)"),
    ("without_replacement", _RO, _AR, False): Conversion(
        "poisson", 1.0, "remove", "coupling + joint convexity: the Poisson pair at the replace-one sensitivity "
        "(docs/pld.md 1.5)"),
    ("without_replacement", _ZO, _AR, False): Conversion(
        "poisson", 2.0, "remove", "coupling + joint convexity: the Poisson pair at twice the zero-out sensitivity "
        "(docs/pld.md 1.5)"),
    # runs over epochs (privcal.accounting.events.EpochsEvent; docs/samplers.md): the no-amplification Gaussian,
    # never realised by a shuffled or balls-in-bins run (samplers.epsilon_lower prices a realisable pair instead)
    ("shuffle", _ZO, _ZO, False): Conversion("shuffle", 1.0, "none", "no amplification (docs/samplers.md)"),
    ("shuffle", _RO, _RO, False): Conversion("shuffle", 1.0, "none", "no amplification (docs/samplers.md)"),
    ("shuffle", _ZO, _RO, False): Conversion(
        "shuffle", 2.0, "none", "no amplification at twice the zero-out sensitivity (docs/samplers.md)"),
    ("balls_in_bins", _AR, _AR, False): Conversion("balls_in_bins", 1.0, "none", "no amplification (docs/samplers.md)"),
    ("balls_in_bins", _RO, _RO, False): Conversion("balls_in_bins", 1.0, "none", "no amplification (docs/samplers.md)"),
    ("balls_in_bins", _ZO, _ZO, False): Conversion("balls_in_bins", 1.0, "none", "no amplification (docs/samplers.md)"),
    ("balls_in_bins", _ZO, _RO, False): Conversion(
        "balls_in_bins", 2.0, "none", "no amplification at twice the zero-out sensitivity (docs/samplers.md)"),
    ("full_batch", _AR, _AR, True): Conversion("full_batch", 1.0, "both", "every record in every step: the Gaussian"),
    ("full_batch", _RO, _RO, True): Conversion("full_batch", 1.0, "both", "every record in every step: the Gaussian"),
    ("full_batch", _ZO, _ZO, True): Conversion("full_batch", 1.0, "both", "every record in every step: the Gaussian"),
    ("full_batch", _ZO, _RO, True): Conversion(
        "full_batch", 2.0, "both", "every record in every step, at twice the zero-out sensitivity"),
}

#: runs over epochs whose own relation is refused, and why (what would be valid instead)
REFUSED_EPOCHS = {
    ("shuffle", _AR): "shuffled batches under add/remove neighbours are refused: removing a record moves every later "
                      "batch boundary of the permutation, and no bound is proven here; use zero_out (sensitivity C "
                      "for contributions clipped to C) or replace_one (2C), which keep the data-set size",
}


def conversion(sampling: str, stated: Neighbouring, relation: Neighbouring, full: bool) -> Optional[Conversion]:
    """The conversion of a subsampled release to a history's relation, or None where none is proven.

    Args:
        sampling: "poisson" or "without_replacement".
        stated: the release's own relation.
        relation: the history's relation.
        full: whether the release runs on the whole data set (sample rate 1).
    """
    return CONVERSIONS.get((sampling, stated, relation, bool(full)))


def _convertible(kinds: frozenset, relation: Neighbouring) -> list:
    """The kinds of ``kinds`` with no conversion to ``relation`` (identities of unpriced pairs count as
    convertible: the accountants refuse those releases themselves, naming the pair)."""
    return [k for k in kinds if k[1] != relation and conversion(k[0], k[1], relation, k[2]) is None]


def _name(kind: tuple) -> str:
    return f"{kind[0]}/{kind[1].value}" + (" at sample rate 1" if kind[2] else "")


def history_relation(kinds: Iterable[tuple], requested: Optional[Neighbouring] = None) -> Optional[Neighbouring]:
    """The one neighbouring relation a history is priced under.

    ``requested`` when given (every release must convert to it); else the relation all subsampled releases
    state, or, when they differ, the one relation to which each converts by a proven pair
    (:data:`CONVERSIONS`); None when no release states one (plain releases: their sensitivities' relation).

    Args:
        kinds: (sampling, stated relation, whole data set) of each subsampled release.
        requested: the relation asked for, or None.

    Raises:
        UnsupportedEventError: some release has no proven conversion to the relation asked for, or no single
            relation prices them all (one line naming the relations and what would be valid).
    """
    kinds = frozenset(kinds)
    for k in kinds:
        if (k[0], k[1]) in REFUSED_EPOCHS:
            raise UnsupportedEventError(REFUSED_EPOCHS[(k[0], k[1])])
    stated = {k[1] for k in kinds}
    if requested is not None:
        bad = _convertible(kinds, requested)
        if not bad:
            return requested
        try:
            other = history_relation(kinds)
        except UnsupportedEventError:
            other = None
        valid = (f"; it is priced under {other.value} neighbours (neighbouring='{other.value}')" if other is not None
                 else "; split the history by relation")
        raise UnsupportedEventError(
            f"this history cannot be priced under {requested.value} neighbours: its {', '.join(map(_name, bad))} "
            f"releases have no proven dominating pair under {requested.value} ({DOCS}){valid}")
    if len(stated) <= 1:
        return next(iter(stated), None)
    # a relation some release states first (the history protects what its releases say), then any other
    for relation in sorted((_AR, _RO, _ZO), key=lambda r: r not in stated):
        if not _convertible(kinds, relation):
            return relation
    raise UnsupportedEventError(
        f"this history mixes {', '.join(sorted(map(_name, kinds)))} releases, and no single neighbouring "
        f"relation prices them all by a proven pair ({DOCS}): poisson releases are priced only under add_remove; "
        "split the history by relation")
