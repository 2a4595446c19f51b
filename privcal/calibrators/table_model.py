"""The result of ``privcal table``: its columns, rows and lead rows, and the verdict on the paper's sigma.

:class:`Table` holds one :class:`Row` per target epsilon and one :class:`Column` per bound; :meth:`Table.lead`
reads, per row, the sigma to use (the tightest column valid for the setting) and the verdict on the paper's
sigma (:class:`Lead`). The tables themselves are computed in :mod:`privcal.calibrators.composition_table`
(dpq and gaussian settings), :mod:`privcal.calibrators.gpope_table` and
:mod:`privcal.calibrators.sampler_table`; :mod:`privcal.calibrators.render` prints them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Iterable, Optional

from .. import _validate as V
from . import dpq

__all__ = ["Column", "Row", "Lead", "Table", "MAX_EPSILON", "TABLE_RTOL", "validated_epsilons"]

#: Relative precision of the root-found columns (the table prints 4-5 digits).
TABLE_RTOL = 1e-7

#: The largest target epsilon of a table (privcal.calibrators.dpq.MAX_EPSILON, 1e6).
MAX_EPSILON = dpq.MAX_EPSILON


@dataclass(frozen=True)
class Column:
    """One bound: its key, a short header, where it comes from, and whether the table checks it.

    Attributes:
        key: identifier of the column (a key of :attr:`Row.sigmas`).
        header: short header for display.
        source: where the bound comes from, in words.
        checked: True when the table checks this column's sigma on the reference at the setting the
            column solves (a paper closed form at the table's setting; an end-to-end column at its own
            k, sensitivity, number of updates and composition delta).
    """

    key: str
    header: str
    source: str
    checked: bool


@dataclass(frozen=True)
class Row:
    """One target epsilon: the sigma each bound demands, and what the checks found.

    Attributes:
        epsilon: target epsilon, in (0, inf).
        delta: target delta, in (0, 1).
        sigmas: column key -> sigma that bound demands (inf when infeasible).
        ratios: column key -> sigma / the reference column's sigma.
        insufficient: keys of checked columns whose sigma is not (epsilon, delta)-DP under the reference.
        reference_epsilons: checked column key -> epsilon at that column's sigma under the reference.
        lower_epsilons: checked column key -> a certified LOWER bound on the true epsilon at that column's
            sigma, from a realisable worst-case pair (gpope setting: the PLD lower end; empty where the
            reference is exact, whose value is itself the truth).
        below_valid_sensitivity: keys whose sigma is below the exact sigma at the valid sensitivity
            (dpq setting only; empty otherwise).
        details: column key -> extra numbers (e.g. the solved k of an end-to-end column, and the
            setting it is checked at: sensitivity, updates, delta_composition, exact_sigma).
    """

    epsilon: float
    delta: float
    sigmas: dict[str, float]
    ratios: dict[str, float]
    insufficient: tuple[str, ...]
    reference_epsilons: dict[str, float]
    below_valid_sensitivity: tuple[str, ...] = ()
    details: dict[str, dict[str, Any]] = field(default_factory=dict)
    lower_epsilons: dict[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class Lead:
    """What a user acts on for one target epsilon: the sigma to use, and a verdict on the paper's sigma.

    Attributes:
        epsilon: target epsilon, in (0, inf).
        delta: target delta, in (0, 1).
        sigma: the smallest sigma among the columns valid for the setting (inf when none is finite).
        source: key of the column ``sigma`` comes from ("" when there is none).
        source_name: that column in words, e.g. "end-to-end valid (k=2512)".
        paper_sigma: the sigma of the paper's headline formula (inf when it gives none).
        paper_source: key of that column ("" when the table has none).
        paper_epsilon: epsilon at ``paper_sigma`` under the reference (exact, or an upper bound when
            the table's reference is not exact); nan when not computed.
        paper_private: True / False when the reference is exact; False is never decided from an upper
            bound (then None: not certified); None also when there is no paper sigma.
        verdict: ``paper_private`` and ``paper_epsilon`` in words.
    """

    epsilon: float
    delta: float
    sigma: float
    source: str
    source_name: str
    paper_sigma: float
    paper_source: str
    paper_epsilon: float
    paper_private: Optional[bool]
    verdict: str


@dataclass(frozen=True)
class Table:
    """A comparison table: one row per target epsilon, one column per bound.

    Attributes:
        setting: "dpq", "gaussian" or "gpope".
        parameters: the setting's parameters (name -> value).
        columns: the :class:`Column` of each bound, in display order.
        rows: one :class:`Row` per target epsilon.
        notes: explanations printed under the table, in words.
        reference: key of the column ratios are taken to and paper columns are checked on; default
            "exact".
        valid_keys: keys of the columns whose sigma a valid analysis proves (epsilon, delta)-DP for the
            setting (candidates for the sigma to use); default ().
        paper_key: key of the paper's headline formula, the one the lead rows give a verdict on;
            default "" (none).
        reference_exact: True when the reference is the exact privacy profile (its epsilon is a true
            value, so a sigma above target epsilon is "not private"); False when it is an upper bound
            (then such a sigma is only "not certified"); default True.
        reference_valid: True when a sigma that passes the reference check is thereby proven private;
            False when the reference itself rests on an unproven assumption (dpq: the paper's
            sensitivity D), so passing it proves nothing; default True.
        paper_label: what the lead rows call the column of ``paper_key`` ("paper"; "Poisson" for a run over
            epochs, where it is Poisson accounting's sigma, not valid for the sampler).
    """

    setting: str
    parameters: dict[str, Any]
    columns: tuple[Column, ...]
    rows: tuple[Row, ...]
    notes: tuple[str, ...] = field(default=())
    reference: str = "exact"
    valid_keys: tuple[str, ...] = ()
    paper_key: str = ""
    reference_exact: bool = True
    reference_valid: bool = True
    paper_label: str = "paper"

    def lead(self) -> tuple[Lead, ...]:
        """Per target epsilon, the sigma to use (tightest valid column, named) and the verdict on the paper's sigma.

        Returns:
            one :class:`Lead` per row, in row order.
        """
        headers = {c.key: c.header for c in self.columns}
        return tuple(_lead(self, row, headers) for row in self.rows)

    def as_dict(self) -> dict[str, Any]:
        """Plain-data form (for JSON): non-finite numbers become None.

        Returns:
            a dict of plain lists, dicts, strings and numbers.
        """
        return {
            "setting": self.setting,
            "reference": self.reference,
            "parameters": self.parameters,
            "columns": [c.__dict__ for c in self.columns],
            "rows": [
                {
                    "epsilon": r.epsilon,
                    "delta": r.delta,
                    "sigma": {k: _jsonable(v) for k, v in r.sigmas.items()},
                    "ratio_to_exact": {k: _jsonable(v) for k, v in r.ratios.items()},
                    "insufficient": list(r.insufficient),
                    "reference_epsilon_at_sigma": {k: _jsonable(v) for k, v in r.reference_epsilons.items()},
                    "below_valid_sensitivity": list(r.below_valid_sensitivity),
                    "details": r.details,
                }
                for r in self.rows
            ],
            "notes": list(self.notes),
            "valid_keys": list(self.valid_keys),
            "paper_key": self.paper_key,
            "reference_exact": self.reference_exact,
            "reference_valid": self.reference_valid,
            "lead": [
                {k: (_jsonable(v) if isinstance(v, float) else v) for k, v in lead.__dict__.items()}
                for lead in self.lead()
            ],
        }


def _named(key: str, header: str, row: Row) -> str:
    """A column's header, with the k it solved for (or the update clip that replaces k) when it has one."""
    details = row.details.get(key, {})
    if details.get("update_clip") is not None:
        return f"{header} (clip {details['update_clip']:g})"
    k = details.get("k")
    return header if k is None else f"{header} (k={k:.4g})"


def _lead(table: Table, row: Row, headers: dict[str, str]) -> Lead:
    finite = [k for k in table.valid_keys if k in row.sigmas and math.isfinite(row.sigmas[k])]
    least = min((row.sigmas[k] for k in finite), default=math.inf)
    # the first valid column (in the table's order) within the columns' root-finding precision of the least
    use = next((k for k in finite if row.sigmas[k] <= least * (1.0 + 10 * TABLE_RTOL)), "")
    sigma = row.sigmas[use] if use else math.inf
    name = _named(use, headers[use], row) if use else "none"
    paper = table.paper_key if table.paper_key in row.sigmas else ""
    paper_sigma = row.sigmas[paper] if paper else math.inf
    paper_eps = row.reference_epsilons.get(paper, math.nan)
    if not paper:
        private, verdict = None, ""
    elif not math.isfinite(paper_sigma):
        private, verdict = None, "gives no sigma here"
    elif math.isnan(paper_eps):
        private, verdict = None, "not checked"
    elif paper_eps <= row.epsilon and not table.reference_valid:
        private, verdict = None, f"not certified: eps {paper_eps:.3g} only at the paper's own assumptions"
    elif paper_eps <= row.epsilon:
        private = True
        verdict = f"private: actual eps {paper_eps:.3g}" if table.reference_exact else f"private: eps <= {paper_eps:.3g}"
    elif table.reference_exact:
        private, verdict = False, f"not private: actual eps {paper_eps:.3g}"
    elif row.lower_epsilons.get(paper, 0.0) > row.epsilon:  # proven from a certified lower bound
        private, verdict = False, f"not private: eps >= {row.lower_epsilons[paper]:.3g}"
    elif paper in row.lower_epsilons:  # an upper bound above target does not show the sigma is not private
        private, verdict = None, f"not certified: eps in [{row.lower_epsilons[paper]:.3g}, {paper_eps:.3g}]"
    else:
        private, verdict = None, f"not certified: eps <= {paper_eps:.3g}"
    return Lead(row.epsilon, row.delta, sigma, use, name, paper_sigma, paper, paper_eps, private, verdict)


def _jsonable(x: float) -> Optional[float]:
    return x if math.isfinite(x) else None


def validated_epsilons(epsilons: Iterable[float]) -> tuple[float, ...]:
    """The target epsilons of a table, validated: each in (0, MAX_EPSILON] (an error names ``epsilons[i]``).

    Args:
        epsilons: target epsilons, a non-empty iterable of values in (0, MAX_EPSILON = 1e6].

    Returns:
        the epsilons as a tuple of floats.

    Raises:
        ValueError: an epsilon is outside its range, or there is none.
    """
    eps = tuple(V.positive(f"epsilons[{i}]", e) for i, e in enumerate(epsilons))
    for i, e in enumerate(eps):
        if e > MAX_EPSILON:
            raise ValueError(f"epsilons[{i}] must be in (0, {MAX_EPSILON:g}], got {e!r}")
    if not eps:
        raise ValueError("epsilons must contain at least one value, got none")
    return eps
