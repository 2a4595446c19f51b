"""The comparison behind ``privcal table``: the sigma each bound demands, side by side.

For every target epsilon (at one delta) a row gives sigma under each bound and its ratio to the exact
sigma (the least noise any valid analysis can justify). Paper closed forms are *checked* on the exact
profile: a row is flagged where a closed form's sigma does not in fact give (epsilon, delta)-DP.

Settings:

* ``dpq`` — Wang & Hegde 2019, DP Q-learning (App. E.3 defaults: T = 5000 samples, B = 64, alpha = 3e-4,
  k = 23, L = 4). Each of the T/B updates releases a Gaussian-process mechanism with RKHS sensitivity
  D = sqrt(C), C = (v^2 + v) L^2, v = 4 alpha (k + 1)/B (Thm 5 proof). That D assumes Q - Q' is
  L-Lipschitz; it can be 2L-Lipschitz, so a column gives the exact sigma at the valid D
  (``privcal.analysis.rkhs.update_sensitivity_squared``) and rows mark every sigma below it. Valid accountants count the
  floor(T/B) full-batch updates that Algorithm 1 performs; the paper formulas use T/B literally as printed.
  delta here is the composition delta only; the Lemma 8 sup-bound failure term that Thm 5 adds on
  top is not included.
* ``gaussian`` — ``steps`` releases of a Gaussian mechanism with L2 sensitivity ``sensitivity``.
* ``gpope`` — GPOPE Algorithm 1 (:mod:`privcal.calibrators.gpope`), one column per bound of
  :func:`privcal.calibrators.gpope.calibrate`.

Every accountant column is calibrated by that accountant's own method (``Accountant._sigma_for``: the
closed form for exact, the windowed order search for RDP, the generic root finder for KOV); the
end-to-end columns come from the paper calibrators (:mod:`~privcal.calibrators.dpq`,
:mod:`~privcal.calibrators.gpope`), which reach the accountants the same way.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Iterable, Optional

from .. import _validate as V
from ..analysis import composition, rkhs
from ..accounting.accountants import ExactAccountant, KOVAccountant, RDPAccountant
from ..accounting import realisable
from ..accounting.pld_accountant import PLDAccountant
from ..accounting.protocol import Accountant
from ..privacy_loss import MemoryLimitError
from ..accounting.events import Neighbouring, Releases
from ..errors import CalibrationError, InfeasibleError
from . import dpq, gpope

__all__ = [
    "Column", "Row", "Lead", "Table", "dpq_table", "gaussian_table", "gpope_table",
    "DPQ_DEFAULTS", "DEFAULT_EPSILONS", "GPOPE_DEFAULTS", "GPOPE_EPSILONS", "MAX_EPSILON",
]

#: Wang & Hegde 2019, App. E.3: T samples, batch size B, learning rate alpha, k, Lipschitz constant L.
DPQ_DEFAULTS = {"samples": 5000, "batch_size": 64, "lr": 3e-4, "k": 23, "lipschitz": 4.0}
#: Default targets: the paper's 0.45 and 0.9 among a spread up to where the closed forms break.
DEFAULT_EPSILONS = (0.1, 0.45, 0.9, 2.0, 4.0, 8.0)

_TABLE_RTOL = 1e-7  # relative precision of the root-found columns (the table prints 4-5 digits)


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
    use = next((k for k in finite if row.sigmas[k] <= least * (1.0 + 10 * _TABLE_RTOL)), "")
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


_COLUMNS = {
    "exact": Column("exact", "exact", "exact Gaussian profile of the composition (Balle & Wang 2018)", False),
    "exact_valid_d": Column(
        "exact_valid_d", "exact, valid D",
        "exact profile with the valid update sensitivity (v^2+5v/2)L^2 (Lip(Q-Q') <= 2L; the paper uses L)", False,
    ),
    "thm5_proof": Column(
        "thm5_proof", "Thm5 proof", "Wang & Hegde Thm 5, closed form at the end of the proof", True
    ),
    "thm5_statement": Column(
        "thm5_statement", "Thm5 stated", "Wang & Hegde Thm 5 as printed in the statement (C outside the root)", True
    ),
    "kov_quoted": Column(
        "kov_quoted", "KOV quoted", "bound quoted in the Thm 5 proof: sqrt(2T' ln(1.25/d) ln(e+e/d)) D/e", True
    ),
    "kov": Column("kov", "KOV optimal", "Kairouz-Oh-Viswanath optimal composition, best per-step epsilon0", False),
    "rdp": Column("rdp", "RDP", "Renyi DP of the Gaussian, improved conversion", False),
    "pld": Column("pld", "PLD", "privacy loss distribution (privcal.pld), certified upper end", False),
    "e2e_paper": Column(
        "e2e_paper", "Thm5 solved",
        "privcal.calibrators.dpq.calibrate(variant='paper'): the paper's formulas with k solved so that its own conditions "
        "hold (delta = total, split in halves)", True,
    ),
    "e2e_valid": Column(
        "e2e_valid", "end-to-end valid",
        "privcal.calibrators.dpq.calibrate(): every update certified to move Q by at most the update clip (the agent enforces "
        "it), sensitivity of each adaptive release from that clip and L (Lemma 6), exact composition, beta solved; "
        "no noise bound k needed (delta = total, all for composition)", True,
    ),
}


#: The largest target epsilon of a table (privcal.calibrators.dpq.MAX_EPSILON, 1e6).
MAX_EPSILON = dpq.MAX_EPSILON


def _epsilons(epsilons: Iterable[float]) -> tuple[float, ...]:
    """The target epsilons, validated: each in (0, MAX_EPSILON] (an error names ``epsilons[i]``)."""
    eps = tuple(V.positive(f"epsilons[{i}]", e) for i, e in enumerate(epsilons))
    for i, e in enumerate(eps):
        if e > MAX_EPSILON:
            raise ValueError(f"epsilons[{i}] must be in (0, {MAX_EPSILON:g}], got {e!r}")
    if not eps:
        raise ValueError("epsilons must contain at least one value, got none")
    return eps


def _accountant_sigma(
    accountant: type[Accountant], epsilon: float, delta: float, steps: int, sensitivity: float,
    hint: Optional[float] = None,
) -> float:
    """Sigma of ``steps`` unsubsampled Gaussian releases under ``accountant``, by its own calibration
    (``Accountant._sigma_for``; validated inputs), or inf when it cannot reach the target."""
    releases = Releases._unchecked(sensitivity, steps, 1.0, "poisson", Neighbouring.ADD_REMOVE)
    try:
        return accountant()._sigma_for(releases, epsilon, delta, sigma_hint=hint, rtol=_TABLE_RTOL)
    except InfeasibleError:
        return math.inf


def _rows(
    epsilons: tuple[float, ...],
    delta: float,
    steps: int,
    sensitivity: float,
    paper_sigmas: Callable[[float], dict[str, float]],
    valid_sensitivity: Optional[float] = None,
    end_to_end: Optional[Callable[[float], tuple[dict, dict]]] = None,
    with_pld: bool = False,
) -> tuple[Row, ...]:
    """Rows for ``steps`` releases of sensitivity ``sensitivity``; ``paper_sigmas(eps)`` gives the
    closed-form columns; ``valid_sensitivity`` (if the paper's sensitivity is not valid) adds the
    exact sigma at the valid sensitivity and marks every column below it; ``end_to_end(eps)`` gives
    further (sigmas, details) columns. Inputs are validated by the caller. Checked columns are checked
    on the exact composed profile at the setting they solve: the table's, or for a column whose details
    carry its own ``sensitivity``, ``updates`` and ``delta_composition`` (an end-to-end column), those;
    its ratio is to the exact sigma at that same setting, and a ``valid_sensitivity`` in its details
    gives its own floor for ``below_valid_sensitivity``."""
    rows = []
    for eps in epsilons:
        exact = _accountant_sigma(ExactAccountant, eps, delta, steps, sensitivity)
        sigmas = {"exact": exact}
        if valid_sensitivity is not None:
            sigmas["exact_valid_d"] = _accountant_sigma(ExactAccountant, eps, delta, steps, valid_sensitivity)
        sigmas.update(paper_sigmas(eps))
        sigmas["kov"] = _accountant_sigma(KOVAccountant, eps, delta, steps, sensitivity, exact)
        sigmas["rdp"] = _accountant_sigma(RDPAccountant, eps, delta, steps, sensitivity, exact)
        if with_pld:
            sigmas["pld"] = _accountant_sigma(PLDAccountant, eps, delta, steps, sensitivity, exact)
        details = {}
        if end_to_end is not None:
            more, details = end_to_end(eps)
            sigmas.update(more)
        floor = sigmas.get("exact_valid_d")
        ratios, exact_eps, below = {}, {}, []
        for key, sigma in sigmas.items():
            own = details.get(key, {})
            if "sensitivity" in own:  # an end-to-end column: its own k, sensitivity, updates and delta split
                at = dict(steps=own["updates"], sensitivity=own["sensitivity"])
                own_delta = own["delta_composition"]
                reference = own["exact_sigma"] = _accountant_sigma(
                    ExactAccountant, eps, own_delta, at["steps"], at["sensitivity"]
                )
                own_floor = (
                    _accountant_sigma(ExactAccountant, eps, own_delta, at["steps"], own["valid_sensitivity"])
                    if "valid_sensitivity" in own else None
                )
            else:
                at, own_delta, reference, own_floor = dict(steps=steps, sensitivity=sensitivity), delta, exact, floor
            ratios[key] = sigma / reference
            if _COLUMNS[key].checked and math.isfinite(sigma):
                exact_eps[key] = composition._epsilon_composed_exact(sigma, own_delta, **at)
                if own_floor is not None and sigma < own_floor:
                    below.append(key)
        insufficient = tuple(k for k, e in exact_eps.items() if e > eps)
        rows.append(Row(eps, delta, sigmas, ratios, insufficient, exact_eps, tuple(below), details))
    return tuple(rows)


def dpq_table(
    epsilons: Iterable[float] = DEFAULT_EPSILONS,
    delta: float = 1e-5,
    *,
    samples: int = DPQ_DEFAULTS["samples"],
    batch_size: int = DPQ_DEFAULTS["batch_size"],
    lr: float = DPQ_DEFAULTS["lr"],
    k: float = DPQ_DEFAULTS["k"],
    lipschitz: float = DPQ_DEFAULTS["lipschitz"],
    resets: Optional[int] = None,
    actions: int = 2,
    end_to_end: bool = True,
) -> Table:
    """Sigma per bound for DP Q-learning (Wang & Hegde 2019, Thm 5 / App. E.3), one row per epsilon.

    The accounting columns use the given k; with ``end_to_end`` two more columns come from
    :func:`privcal.calibrators.dpq.calibrate`, which solves for k (and beta, and the delta split) itself:
    the paper's formulas made self-consistent, and the valid analysis.

    Args:
        epsilons: target epsilons, a non-empty sequence of values in (0, MAX_EPSILON = 1e6]; default
            DEFAULT_EPSILONS = (0.1, 0.45, 0.9, 2.0, 4.0, 8.0).
        delta: target delta, in (0, 1); default 1e-5. For the accounting columns it is the composition
            delta; for the end-to-end columns the total delta.
        samples: T, the number of samples processed, an int >= 1; default 5000 (App. E.3).
        batch_size: B, samples per update, an int in [1, samples]; default 64.
        lr: alpha, the learning rate, in (0, inf); default 3e-4.
        k: noise bound of the accounting columns, in (0, inf); default 23.
        lipschitz: L, the Lipschitz constant of the Q-function, in (0, inf); default 4.
        resets: J, the number of times the noise paths are redrawn, an int >= 1; default None:
            floor(T/B) as in App. E.3.
        actions: m, noise paths per reset (one per action), an int >= 1; default 2.
        end_to_end: whether to add the two columns solved by :func:`privcal.calibrators.dpq.calibrate`; default True.

    Returns:
        a :class:`Table` with reference "exact".

    Raises:
        ValueError: an argument is outside its range.
    """
    epsilons = _epsilons(epsilons)
    delta = V.open_unit("delta", delta)
    samples, batch_size = V.samples_and_batch(samples, batch_size)
    lr = V.positive("lr", lr)
    k = V.positive("k", k)
    lipschitz = V.positive("lipschitz", lipschitz)
    resets = samples // batch_size if resets is None else V.positive_int("resets", resets)
    actions = V.positive_int("actions", actions)

    c = rkhs._update_sensitivity_squared_paper(lr, k, batch_size, lipschitz)  # C = (v^2 + v) L^2
    sensitivity = math.sqrt(c)
    valid_sensitivity = math.sqrt(rkhs._update_sensitivity_squared(lr, k, batch_size, lipschitz))
    updates = samples // batch_size  # full-batch updates performed by Algorithm 1
    t_prime = samples / batch_size  # T' = T/B as printed

    def paper(eps):
        return {
            "thm5_proof": composition._thm5_sigma_proof_paper(eps, delta, steps=t_prime, sensitivity=sensitivity),
            "thm5_statement": composition._thm5_sigma_statement_paper(eps, delta, steps=t_prime, c=c),
            "kov_quoted": composition._sigma_kov_quoted_paper(eps, delta, steps=t_prime, sensitivity=sensitivity),
        }

    v = rkhs._v_parameter(lr, k, batch_size)
    params = {
        "resets": resets,
        "actions": actions,
        "samples": samples,
        "batch_size": batch_size,
        "lr": lr,
        "k": k,
        "lipschitz": lipschitz,
        "v": v,
        "beta": 1.0 / v,
        "C": c,
        "sensitivity": sensitivity,
        "valid_sensitivity": valid_sensitivity,
        "updates": updates,
        "T_over_B": t_prime,
    }
    notes = (
        f"D = sqrt(C) = {sensitivity:.6g} (RKHS sensitivity of one update, Thm 5 proof: C = (v^2+v)L^2, "
        f"v = 4 alpha (k+1)/B = {v:.6g}); valid accountants count {updates} updates, paper formulas T/B = {t_prime:g}.",
        "delta is the composition delta; Thm 5 adds the Lemma 8 failure term J exp(-(2k - 8.68 sqrt(beta) sigma)^2/2) "
        f"on top, whose condition 2k > 8.68 sqrt(beta) sigma needs sigma < {2 * k / (8.68 * math.sqrt(1.0 / v)):.4g} here.",
        f"The paper's D treats Q - Q' as L-Lipschitz; it can be 2L-Lipschitz, and the valid sensitivity is "
        f"sqrt((v^2+5v/2)L^2) = {valid_sensitivity:.6g} (privcal.analysis.rkhs.update_sensitivity_squared); "
        "'*' marks a paper closed form whose sigma is below the exact sigma at that valid D; the other "
        "columns compare accountants at the paper's D.",
    )
    keys = ("exact", "exact_valid_d", "thm5_proof", "thm5_statement", "kov_quoted", "kov", "rdp")

    def solved(eps):
        setting = dict(samples=samples, batch_size=batch_size, lr=lr, lipschitz=lipschitz, resets=resets, actions=actions)
        sigmas, details = {}, {}
        for key, variant in (("e2e_paper", "paper"), ("e2e_valid", "valid")):
            try:
                r = dpq.calibrate_unchecked(eps, delta, variant=variant, **setting)
            except InfeasibleError:
                sigmas[key], details[key] = math.inf, {"feasible": False}
                continue
            sigmas[key] = r.sigma
            details[key] = {
                "k": r.k, "beta": r.beta, "update_clip": r.update_clip if variant == "valid" else None, "delta_composition": r.delta_composition, "delta_tail": r.delta_tail,
                # the setting it solves, where the table checks it: its own sensitivity D(k, beta), the
                # floor(T/B) updates Algorithm 1 performs (the paper variant's T/B = 78.125 counts a
                # fractional one) and its own share of delta
                "sensitivity": r.sensitivity, "updates": math.floor(r.updates),
            }
            if variant == "paper":  # the valid sensitivity at the same k and beta = 1/v
                details[key]["valid_sensitivity"] = math.sqrt(
                    rkhs._update_sensitivity_squared(lr, r.k, batch_size, lipschitz, beta=r.beta)
                )
        return sigmas, details

    if end_to_end:
        keys += ("e2e_paper", "e2e_valid")
        notes += (
            f"Thm5 solved / end-to-end valid: delta is the TOTAL delta (Thm5 solved: composition + noise-bound "
            f"failure; valid: all composition, its update clip replaces k), J = {resets} resets x {actions} actions; "
            "the k Thm5 solved solves for is shown in brackets. Each is checked "
            f"at the setting it solves (its own k and sensitivity, {updates} updates, its share of delta for "
            "composition), and its ratio is to the exact sigma at that same setting.",
        )
    rows = _rows(epsilons, delta, updates, sensitivity, paper, valid_sensitivity, solved if end_to_end else None)
    # only the end-to-end valid column is valid for Algorithm 1 as a whole: the accountant columns
    # use the paper's D at the given k, whose noise bound the sigma does not keep (see the notes)
    valid = ("e2e_valid",) if end_to_end else ()
    return Table(
        "dpq", params, tuple(_kov_column(updates) if key == "kov" else _COLUMNS[key] for key in keys), rows, notes,
        valid_keys=valid, paper_key="thm5_statement", reference_exact=True, reference_valid=False,
    )


def gaussian_table(
    epsilons: Iterable[float] = DEFAULT_EPSILONS, delta: float = 1e-5, *, steps: int = 1, sensitivity: float = 1.0
) -> Table:
    """Sigma per bound for ``steps`` composed Gaussian releases of sensitivity ``sensitivity``.

    Args:
        epsilons: target epsilons, a non-empty sequence of values in (0, MAX_EPSILON = 1e6]; default DEFAULT_EPSILONS.
        delta: target delta, in (0, 1); default 1e-5.
        steps: number of composed releases, an int >= 1; default 1.
        sensitivity: L2 sensitivity of each release, in (0, inf); default 1.

    Returns:
        a :class:`Table` with reference "exact".

    Raises:
        ValueError: an argument is outside its range.
    """
    epsilons = _epsilons(epsilons)
    delta = V.open_unit("delta", delta)
    steps = V.positive_int("steps", steps)
    sensitivity = V.positive("sensitivity", sensitivity)

    def paper(eps):
        return {
            "thm5_proof": composition._thm5_sigma_proof_paper(eps, delta, steps=steps, sensitivity=sensitivity),
            "kov_quoted": composition._sigma_kov_quoted_paper(eps, delta, steps=steps, sensitivity=sensitivity),
        }

    cols = tuple(_kov_column(steps) if key == "kov" else _COLUMNS[key]
                 for key in ("exact", "thm5_proof", "kov_quoted", "kov", "rdp", "pld"))
    params = {"steps": steps, "sensitivity": sensitivity}
    return Table(
        "gaussian", params, cols, _rows(epsilons, delta, steps, sensitivity, paper, with_pld=True),
        valid_keys=("exact", "kov", "rdp", "pld"), paper_key="thm5_proof",
    )


def _kov_column(steps: int) -> Column:
    """The KOV column, saying so when ``steps`` is beyond the optimal search and KOV's closed form serves."""
    from ..analysis import kov

    if not kov._uses_closed_form(steps):
        return _COLUMNS["kov"]
    return replace(_COLUMNS["kov"], source=(
        f"Kairouz-Oh-Viswanath, beyond {kov._K_CLOSED_FORM:.0e} steps its closed form (Thm 3.4; valid, looser "
        "than the optimal composition)"))


#: GPOPE defaults: m trajectories, N iterations (the paper's chain experiments use eps = 0.1, delta = 1e-5).
GPOPE_DEFAULTS = {"trajectories": 1000, "iterations": 10_000}
GPOPE_EPSILONS = (0.1, 0.5, 1.0, 2.0, 5.0)

_GPOPE_COLUMNS = {
    "pld": Column("pld", "PLD", "valid: privacy loss distribution (privcal.pld), replace-one neighbours (sensitivity "
                  "2h), certified upper end", False),
    "rdp": Column("rdp", "RDP (WBK Thm 27)", "valid: subsampled RDP, replace-one neighbours (sensitivity 2h), Thm 27 <= Thm 9", False),
    "thm9": Column("thm9", "RDP (Thm 9)", "valid: WBK Thm 9 alone, full sum over j = 2..alpha", False),
    "rdp_h": Column("rdp_h", "RDP, sens. h", "paper's sensitivity h (WBK Thm 27 at h): not valid under replace-one, nor "
                    "under zero-out (the null trajectory displaces another; docs/pld.md 1.3)", True),
    "theorem1": Column("theorem1", "Thm 1 valid", "Theorem 1's closed form with derived constants (inf outside its proven range)", False),
    "lemma1": Column("lemma1", "Lemma 1", "paper: GPOPE Lemma 1 (j = 2 term only) + moments tail, sensitivity h", True),
    "theorem1_paper": Column("theorem1_paper", "Thm 1 paper", "paper: Theorem 1 as printed, c2 = 2", True),
}


#: The verdicts' lower bounds (the realisable pair, :func:`_gpope_bracket`): the grids they are tried on, in units
#: of the pair's rule grid (``realisable.unchecked_grid``), each with its budget on a composition's window in
#: cells (None: the memory cap alone, 2^21 cells), coarse first -- a lower bound on any grid is a lower bound, so a
#: coarse one that exceeds the target decides the verdict, and a finer grid is composed only where it does not.
#: The rule grid itself, without a budget, comes last, so no verdict
#: it decides is lost. The printed bound (the paper column's) starts on 2x: within 0.1% of the rule grid's bound at
#: the README's table (1.41907 vs 1.41984, 25.355 vs 25.377, 296.21 vs 296.17) for a quarter of its time (half the
#: cells, and the window's FFT); 8x loses 10-25% (1.26, 19.7, 270) for another quarter. The budget 2^19 binds only
#: at the smallest sigmas, whose bounds are far above any target (sigma = 0.1357 in the README's table: 2522 on
#: 32x the rule grid in 0.12 s, where 8x takes 0.22 s for 2639; the PLD's upper end is 2668).
_VERDICT_GRIDS = ((8.0, 2**19), (2.0, 2**19), (1.0, None))
_PRINTED_GRIDS = ((2.0, 2**19), (1.0, None))
#: the GPOPE table's paper column: the one its lead rows give a verdict on, with the lower bound in words
_GPOPE_PAPER = "theorem1_paper"


def _gpope_bracket(sigma: float, delta: float, trajectories: int, iterations: int,
                   target: Optional[float] = None, *, printed: bool = True, known: float = 0.0,
                   valid_upper: Optional[Callable[[], float]] = None) -> tuple[float, float]:
    """(lower, upper) epsilon of GPOPE at noise multiplier ``sigma`` for a realisable worst-case pair.

    The pair: every trajectory's clipped gradient is -h e at every iterate and the replaced one's is +h e
    instead (clipping makes such gradients of norm h realisable); each iteration picks the replaced
    trajectory with probability q = 1/m independently, so one iteration releases (1 - q) N(0, (sigma h)^2)
    + q N(2h e, (sigma h)^2) against N(0, (sigma h)^2) (shifted by h e): the subsampled Gaussian pair at
    sensitivity 2h. Its PLD bracket (privcal.pld) is certified. The pair is realised (so the lower end bounds
    the true epsilon of Algorithm 1 from below) and it is the dominating pair of one trajectory drawn without
    replacement under replace-one neighbours (docs/pld.md 1.2; so the upper end bounds it from above).

    With a ``target``, the lower end is the realisable pair's bound on the first grid of :data:`_VERDICT_GRIDS`
    (``printed``: :data:`_PRINTED_GRIDS`) on which it exceeds the target (the verdict is then decided), else
    the largest over them all; a certified lower bound either way. ``known``: a certified lower bound on this
    sigma's epsilon found elsewhere (the table's, at a larger sigma: see :func:`_known_lower`); where it exceeds
    the target, a column that is not ``printed`` composes no lower bound of its own. ``valid_upper``: another
    certified upper end (the table's: the valid RDP accountant's), consulted only where the PLD's probe is not
    finite or leaves the target undecided (a certified lower bound above the target means no upper end can
    certify it); a target it certifies needs no lower end either.
    """
    # noise h N(0, sigma^2 I) against a shift of 2h: sensitivity 2 in units of h, Poisson add/remove pair
    event = Releases._unchecked(2.0, iterations, 1.0 / trajectories, "poisson", Neighbouring.ADD_REMOVE).event(sigma)
    # cheap certified ends first: the PLD's rule-grid upper end, then (only where it does not certify the
    # target) the realisable pair's binned lower bound; the other upper end and the PLD's refined bracket only
    # where they leave the target undecided. A target certified by an upper end needs no lower end: 0 (trivially
    # valid) stands.
    acc = PLDAccountant()._compose(event)
    try:
        upper = float(acc.pld.unchecked_probe_epsilon(delta))
    except MemoryLimitError:
        upper = math.inf
    if target is not None and upper <= target:
        return 0.0, upper
    lower = 0.0
    if printed or target is None or not known > target:
        h = realisable.unchecked_grid(event)
        for factor, cells in ((1.0, None),) if target is None else _PRINTED_GRIDS if printed else _VERDICT_GRIDS:
            try:
                lower = max(lower, realisable.unchecked_epsilon_lower(event, delta, h * factor, max_cells=cells))
            except MemoryLimitError:
                pass
            if target is not None and lower > target:
                break
    lower = max(lower, known)
    if valid_upper is not None and (not math.isfinite(upper) or target is None or lower <= target):
        upper = min(upper, valid_upper())
        if target is not None and upper <= target:
            return 0.0, upper
    if target is None or lower <= target < upper:
        try:
            lo, hi = acc._bracket(delta)
            lower, upper = max(lower, lo), min(upper, hi)
        except MemoryLimitError:
            pass
    return min(lower, upper), upper


def _known_lower(found: list, sigma: float) -> float:
    """The largest certified lower bound in ``found`` ((sigma', lower) pairs of the realisable pair at the same
    delta, m and N) at a sigma' >= ``sigma``; 0 if there is none. It bounds the epsilon at ``sigma`` too: the
    pair's releases at sigma' are those at sigma plus independent N(0, (sigma'^2 - sigma^2) h^2 I) noise (its
    gradients do not depend on the iterates), a post-processing, so the pair's epsilon is non-increasing in
    sigma, and Algorithm 1's at sigma is at least the pair's at sigma, at least the pair's at sigma'."""
    return max((lo for s, lo in found if s >= sigma), default=0.0)


def gpope_table(
    epsilons: Iterable[float] = GPOPE_EPSILONS,
    delta: float = 1e-5,
    *,
    trajectories: int = GPOPE_DEFAULTS["trajectories"],
    iterations: int = GPOPE_DEFAULTS["iterations"],
    lead_only: bool = False,
) -> Table:
    """Sigma of GPOPE Algorithm 1 (noise h N(0, sigma^2 I)) per bound, one row per epsilon.

    The reference is the valid subsampled RDP under replace-one neighbours (``privcal.calibrators.gpope.calibrate``'s
    default); paper columns are checked against it ('!' where their sigma is not (epsilon, delta)-DP).
    Each column is ``privcal.calibrators.gpope.calibrate`` with that bound.

    Args:
        epsilons: target epsilons, a non-empty sequence of values in (0, MAX_EPSILON = 1e6]; default
            GPOPE_EPSILONS = (0.1, 0.5, 1.0, 2.0, 5.0).
        delta: target delta, in (0, 1); default 1e-5.
        trajectories: m, the number of trajectories (one drawn per iteration), an int >= 1; default 1000.
        iterations: N, the number of iterations of Alg. 1, an int >= 1; default 10,000.
        lead_only: compute only what :meth:`Table.lead` reads (the default text view); default False. The PLD
            column is calibrated; an RDP column (WBK Thm 27, Thm 9) only where its epsilon at the PLD's sigma
            does not exceed the target (else its sigma is larger, so it cannot be the least: one evaluation
            instead of a calibration); the paper's sensitivity-h and Lemma 1 columns, and the verdicts on
            columns other than the paper's, are not computed. A column not computed is nan (None in json),
            and the table's notes say which. The lead is the full table's, the same numbers.

    Returns:
        a :class:`Table` with reference "rdp"; sigma in units of the clip h.

    Raises:
        ValueError: an argument is outside its range.
    """
    epsilons = _epsilons(epsilons)
    delta = V.open_unit("delta", delta)
    m = V.positive_int("trajectories", trajectories)
    n = V.positive_int("iterations", iterations)
    setting = dict(iterations=n, trajectories=m)
    rows, skipped, not_computed = [], {}, []
    for eps in epsilons:
        sigmas = {}
        for key, kw in (
            ("pld", dict(bound="pld")), ("rdp", dict(bound="rdp")), ("thm9", dict(bound="thm9")), ("rdp_h", None),
            ("theorem1", dict(bound="theorem1")), ("lemma1", dict(bound="lemma1")), ("theorem1_paper", dict(bound="theorem1_paper")),
        ):
            if lead_only and (key in ("rdp_h", "lemma1") or (
                    key in ("rdp", "thm9") and math.isfinite(sigmas.get("pld", math.inf))
                    and gpope.epsilon_at_unchecked(sigmas["pld"], delta, bound=key, **setting) > eps)):
                sigmas[key] = math.nan  # not read by the lead (or its sigma exceeds the PLD's)
                not_computed.append((eps, key))
                continue
            try:
                if kw is None and math.isfinite(sigmas.get("rdp", math.inf)):
                    # the paper's sensitivity h under the replace-one pair (not valid): RDP depends on sigma /
                    # sensitivity only, so its sigma at sensitivity h is the "rdp" column's (2h) halved
                    sigmas[key] = sigmas["rdp"] / gpope.SENSITIVITY_PER_CLIP["replace_one"]
                elif kw is None:
                    sigmas[key] = RDPAccountant()._sigma_for(
                        Releases._unchecked(1.0, n, 1.0 / m, "without_replacement", Neighbouring.REPLACE_ONE), eps, delta)
                else:
                    sigmas[key] = gpope.calibrate_sigma_unchecked(eps, delta, **setting, **kw)
            except InfeasibleError:
                sigmas[key] = math.inf
            except (MemoryLimitError, MemoryError, CalibrationError) as exc:  # e.g. a PLD grid beyond its cap:
                sigmas[key] = math.inf  # the other columns are printed regardless
                skipped.setdefault(key, " ".join(str(exc).split()))
        rows.append((eps, sigmas))
    reference = "pld" if all(math.isfinite(s["pld"]) for _, s in rows) else "rdp"
    done, found = [], []  # found: (sigma, certified lower bound) of the realisable pair, for _known_lower
    for eps, sigmas in rows:
        ref = sigmas[reference]
        checked = [k for k in sigmas if _GPOPE_COLUMNS[k].checked and math.isfinite(sigmas[k])]
        # the PLD bracket of the pair, which is both realised and the dominating pair priced under replace-one
        # (docs/pld.md 1.2): its lower end bounds Algorithm 1's epsilon from below, its upper end (the reference's
        # probe) from above; the valid replace-one RDP accountant's upper end only where the PLD leaves the target
        # undecided (at the README's table the PLD's is 2-400x below it at every checked sigma). Larger sigmas
        # first: a lower bound found there decides the verdicts at the smaller ones (_known_lower); the paper
        # column's lower end is printed (the verdict): its own, from the finer grids
        bounds = {}
        for k in sorted(checked, key=lambda k: -sigmas[k]):
            s = sigmas[k]
            bounds[k] = _gpope_bracket(
                s, delta, m, n, target=eps, printed=k == _GPOPE_PAPER, known=_known_lower(found, s),
                valid_upper=functools.partial(gpope._valid_epsilon, s, delta, m, n, "replace_one"))
            if bounds[k][0] > 0:
                found.append((s, bounds[k][0]))
        upper = {k: bounds[k][1] for k in checked}
        lower = {k: bounds[k][0] for k in checked}
        # '!' only where a certified lower bound of a realisable pair exceeds the target (privcal.verify._common)
        insufficient = tuple(k for k in lower if lower[k] > eps)
        done.append(Row(eps, delta, sigmas, {k: v / ref for k, v in sigmas.items()}, insufficient, upper,
                        lower_epsilons=lower))
    rows = done
    params = {"trajectories": m, "iterations": n, "sample_rate": 1.0 / m}
    if not_computed:
        keys = ", ".join(dict.fromkeys(k for _, k in not_computed))
        skipped["lead only"] = (f"{keys} not computed where the lead does not read them (nan): an RDP column where "
                                "its epsilon at the PLD's sigma exceeds the target (its sigma is larger); the "
                                "full comparison computes every column")
    notes = tuple(f"{key} not computed: {why}" if key != "lead only" else f"lead only: {why}"
                  for key, why in skipped.items()) + (
        "sigma is Algorithm 1's noise multiplier (noise h N(0, sigma^2 I)); one trajectory's clipped gradient has "
        "sensitivity 2h under the paper's replace-one neighbours; a trajectory replaced by a null one has sensitivity h "
        "but still displaces another from the draw, so zero-out is priced at 2h too (docs/pld.md 1.3).",
        "Thm 1 valid is inf where epsilon lies outside the range its constants are proven for "
        "(privcal.calibrators.gpope.theorem1_epsilon_range).",
    )
    return Table(
        "gpope", params, tuple(_GPOPE_COLUMNS.values()), tuple(rows), notes, reference=reference,
        valid_keys=("pld", "rdp", "thm9", "theorem1"), paper_key=_GPOPE_PAPER, reference_exact=False,
    )
