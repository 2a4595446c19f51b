"""``privcal table --setting dpq|gaussian``: the sigma each bound demands for composed Gaussian releases.

For every target epsilon (at one delta) a row gives sigma under each bound and its ratio to the exact
sigma (the least noise any valid analysis can justify). Paper closed forms are *checked* on the exact
profile: a row is flagged where a closed form's sigma does not in fact give (epsilon, delta)-DP.

* ``dpq`` (:func:`dpq_table`) — Wang & Hegde 2019, DP Q-learning (App. E.3 defaults: T = 5000 samples,
  B = 64, alpha = 3e-4, k = 23, L = 4; :class:`DPQTableSettings`), with the end-to-end columns of
  :func:`privcal.calibrators.dpq.calibrate`;
* ``gaussian`` (:func:`gaussian_table`) — ``steps`` releases of a Gaussian mechanism with L2 sensitivity
  ``sensitivity``.

Every accountant column is calibrated by that accountant's own method (``Accountant.sigma_for_unchecked``). The
result type is :mod:`privcal.calibrators.table_model`; :mod:`privcal.calibrators.table` re-exports this
module's public names.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any, Callable, Iterable, Optional

from .. import _validate as V
from ..analysis import composition, kov_gaussian, rkhs_sensitivity
from ..accounting.accountants import ExactAccountant, KOVAccountant, RDPAccountant
from ..accounting.pld_accountant import PLDAccountant
from ..accounting.protocol import Accountant
from ..accounting.events import Neighbouring, Releases
from ..errors import InfeasibleError
from . import dpq
from .table_model import TABLE_RTOL, Column, Row, Table, validated_epsilons

__all__ = ["dpq_table", "gaussian_table", "DPQTableSettings", "DPQ_DEFAULTS", "DEFAULT_EPSILONS"]


@dataclass(frozen=True)
class DPQTableSettings:
    """The DP Q-learning setting of :func:`dpq_table`: Wang & Hegde 2019, App. E.3 by default.

    Attributes:
        samples: T, the number of samples processed, an int >= 1; default 5000 (App. E.3).
        batch_size: B, samples per update, an int in [1, samples]; default 64.
        lr: alpha, the learning rate, in (0, inf); default 3e-4.
        k: noise bound of the accounting columns, in (0, inf); default 23.
        lipschitz: L, the Lipschitz constant of the Q-function, in (0, inf); default 4.
        resets: J, the number of times the noise paths are redrawn, an int >= 1; default None: floor(T/B)
            as in App. E.3.
        actions: m, noise paths per reset (one per action), an int >= 1; default 2.
        end_to_end: whether to add the two columns solved by :func:`privcal.calibrators.dpq.calibrate`;
            default True.

    The values are checked by :func:`dpq_table`.
    """

    samples: int = 5000
    batch_size: int = 64
    lr: float = 3e-4
    k: float = 23
    lipschitz: float = 4.0
    resets: Optional[int] = None
    actions: int = 2
    end_to_end: bool = True


#: Wang & Hegde 2019, App. E.3: T samples, batch size B, learning rate alpha, k, Lipschitz constant L
#: (the defaults of :class:`DPQTableSettings`).
DPQ_DEFAULTS = {name: getattr(DPQTableSettings(), name) for name in ("samples", "batch_size", "lr", "k", "lipschitz")}
#: Default targets: the paper's 0.45 and 0.9 among a spread up to where the closed forms break.
DEFAULT_EPSILONS = (0.1, 0.45, 0.9, 2.0, 4.0, 8.0)


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


def _accountant_sigma(
    accountant: type[Accountant], epsilon: float, delta: float, steps: int, sensitivity: float,
    hint: Optional[float] = None,
) -> float:
    """Sigma of ``steps`` unsubsampled Gaussian releases under ``accountant``, by its own calibration
    (``Accountant.sigma_for_unchecked``; validated inputs), or inf when it cannot reach the target."""
    releases = Releases.unchecked(sensitivity, steps, 1.0, "poisson", Neighbouring.ADD_REMOVE)
    try:
        return accountant().sigma_for_unchecked(releases, epsilon, delta, sigma_hint=hint, rtol=TABLE_RTOL)
    except InfeasibleError:
        return math.inf


@dataclass(frozen=True)
class _Composed:
    """What the rows of a table compose: ``steps`` releases of sensitivity ``sensitivity``; ``valid_sensitivity``
    (if the paper's sensitivity is not valid) adds the exact sigma at the valid sensitivity and marks every
    column below it; ``with_pld`` adds the PLD column."""

    steps: int
    sensitivity: float
    valid_sensitivity: Optional[float] = None
    with_pld: bool = False


def _rows(
    epsilons: tuple[float, ...],
    delta: float,
    releases: _Composed,
    paper_sigmas: Callable[[float], dict[str, float]],
    end_to_end: Optional[Callable[[float], tuple[dict, dict]]] = None,
) -> tuple[Row, ...]:
    """Rows for ``releases``; ``paper_sigmas(eps)`` gives the closed-form columns; ``end_to_end(eps)`` gives
    further (sigmas, details) columns. Inputs are validated by the caller. Checked columns are checked
    on the exact composed profile at the setting they solve: the table's, or for a column whose details
    carry its own ``sensitivity``, ``updates`` and ``delta_composition`` (an end-to-end column), those;
    its ratio is to the exact sigma at that same setting, and a ``valid_sensitivity`` in its details
    gives its own floor for ``below_valid_sensitivity``."""
    steps, sensitivity, valid_sensitivity = releases.steps, releases.sensitivity, releases.valid_sensitivity
    rows = []
    for eps in epsilons:
        exact = _accountant_sigma(ExactAccountant, eps, delta, steps, sensitivity)
        sigmas = {"exact": exact}
        if valid_sensitivity is not None:
            sigmas["exact_valid_d"] = _accountant_sigma(ExactAccountant, eps, delta, steps, valid_sensitivity)
        sigmas.update(paper_sigmas(eps))
        sigmas["kov"] = _accountant_sigma(KOVAccountant, eps, delta, steps, sensitivity, exact)
        sigmas["rdp"] = _accountant_sigma(RDPAccountant, eps, delta, steps, sensitivity, exact)
        if releases.with_pld:
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
                exact_eps[key] = composition.epsilon_composed_exact_unchecked(sigma, own_delta, **at)
                if own_floor is not None and sigma < own_floor:
                    below.append(key)
        insufficient = tuple(k for k, e in exact_eps.items() if e > eps)
        rows.append(Row(eps, delta, sigmas, ratios, insufficient, exact_eps, tuple(below), details))
    return tuple(rows)


def dpq_table(
    epsilons: Iterable[float] = DEFAULT_EPSILONS,
    delta: float = 1e-5,
    *,
    settings: Optional[DPQTableSettings] = None,
    **overrides: Any,
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
        settings: the setting, a :class:`DPQTableSettings`; default None: App. E.3's (T = 5000, B = 64,
            alpha = 3e-4, k = 23, L = 4, J = floor(T/B), m = 2, end-to-end columns).
        overrides: fields of :class:`DPQTableSettings` as keywords (``samples``, ``batch_size``, ``lr``, ``k``,
            ``lipschitz``, ``resets``, ``actions``, ``end_to_end``; their ranges are the class's), replacing
            those of ``settings``.

    Returns:
        a :class:`Table` with reference "exact".

    Raises:
        ValueError: an argument is outside its range.
    """
    if settings is not None and not isinstance(settings, DPQTableSettings):
        raise ValueError(f"settings must be a DPQTableSettings, got {settings!r}")
    s = replace(settings if settings is not None else DPQTableSettings(), **overrides)
    epsilons = validated_epsilons(epsilons)
    delta = V.open_unit("delta", delta)
    samples, batch_size = V.samples_and_batch(s.samples, s.batch_size)
    lr = V.positive("lr", s.lr)
    k = V.positive("k", s.k)
    lipschitz = V.positive("lipschitz", s.lipschitz)
    resets = samples // batch_size if s.resets is None else V.positive_int("resets", s.resets)
    actions = V.positive_int("actions", s.actions)
    s = DPQTableSettings(samples, batch_size, lr, k, lipschitz, resets, actions, s.end_to_end)

    c = rkhs_sensitivity.update_sensitivity_squared_paper_unchecked(lr, k, batch_size, lipschitz)  # C = (v^2 + v) L^2
    sensitivity = math.sqrt(c)
    valid_sensitivity = math.sqrt(rkhs_sensitivity.update_sensitivity_squared_unchecked(lr, k, batch_size, lipschitz))
    updates = samples // batch_size  # full-batch updates performed by Algorithm 1
    t_prime = samples / batch_size  # T' = T/B as printed

    def paper(eps):
        return {
            "thm5_proof": composition.thm5_sigma_proof_paper_unchecked(eps, delta, steps=t_prime, sensitivity=sensitivity),
            "thm5_statement": composition.thm5_sigma_statement_paper_unchecked(eps, delta, steps=t_prime, c=c),
            "kov_quoted": composition.sigma_kov_quoted_paper_unchecked(eps, delta, steps=t_prime, sensitivity=sensitivity),
        }

    v = rkhs_sensitivity.v_parameter_unchecked(lr, k, batch_size)
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
    keys = ("exact", "exact_valid_d", "thm5_proof", "thm5_statement", "kov_quoted", "kov", "rdp")
    if s.end_to_end:
        keys += ("e2e_paper", "e2e_valid")
    rows = _rows(epsilons, delta, _Composed(updates, sensitivity, valid_sensitivity), paper,
                 (lambda eps: _dpq_solved(eps, delta, s)) if s.end_to_end else None)
    # only the end-to-end valid column is valid for Algorithm 1 as a whole: the accountant columns
    # use the paper's D at the given k, whose noise bound the sigma does not keep (see the notes)
    valid = ("e2e_valid",) if s.end_to_end else ()
    return Table(
        "dpq", params, tuple(_kov_column(updates) if key == "kov" else _COLUMNS[key] for key in keys), rows,
        _dpq_notes(s, params), valid_keys=valid, paper_key="thm5_statement", reference_exact=True,
        reference_valid=False,
    )


def _dpq_notes(s: DPQTableSettings, params: dict[str, Any]) -> tuple[str, ...]:
    """The notes under the dpq table, for validated settings ``s`` and the table's ``params``."""
    sensitivity, valid_sensitivity, v = params["sensitivity"], params["valid_sensitivity"], params["v"]
    updates, t_prime = params["updates"], params["T_over_B"]
    notes = (
        f"D = sqrt(C) = {sensitivity:.6g} (RKHS sensitivity of one update, Thm 5 proof: C = (v^2+v)L^2, "
        f"v = 4 alpha (k+1)/B = {v:.6g}); valid accountants count {updates} updates, paper formulas T/B = {t_prime:g}.",
        "delta is the composition delta; Thm 5 adds the Lemma 8 failure term J exp(-(2k - 8.68 sqrt(beta) sigma)^2/2) "
        f"on top, whose condition 2k > 8.68 sqrt(beta) sigma needs sigma < {2 * s.k / (8.68 * math.sqrt(1.0 / v)):.4g} here.",
        f"The paper's D treats Q - Q' as L-Lipschitz; it can be 2L-Lipschitz, and the valid sensitivity is "
        f"sqrt((v^2+5v/2)L^2) = {valid_sensitivity:.6g} (privcal.analysis.rkhs.update_sensitivity_squared); "
        "'*' marks a paper closed form whose sigma is below the exact sigma at that valid D; the other "
        "columns compare accountants at the paper's D.",
    )
    if s.end_to_end:
        notes += (
            f"Thm5 solved / end-to-end valid: delta is the TOTAL delta (Thm5 solved: composition + noise-bound "
            f"failure; valid: all composition, its update clip replaces k), J = {s.resets} resets x {s.actions} actions; "
            "the k Thm5 solved solves for is shown in brackets. Each is checked "
            f"at the setting it solves (its own k and sensitivity, {updates} updates, its share of delta for "
            "composition), and its ratio is to the exact sigma at that same setting.",
        )
    return notes


def _dpq_solved(eps: float, delta: float, s: DPQTableSettings) -> tuple[dict, dict]:
    """The end-to-end columns at target ``eps``: (sigmas, details) of ``privcal.calibrators.dpq.calibrate``'s
    paper and valid variants, for validated settings ``s`` (the variants solve their own k)."""
    setting = dict(samples=s.samples, batch_size=s.batch_size, lr=s.lr, lipschitz=s.lipschitz, resets=s.resets,
                   actions=s.actions)
    sigmas, details = {}, {}
    for key, variant in (("e2e_paper", "paper"), ("e2e_valid", "valid")):
        try:
            r = dpq.calibrate_unchecked(eps, delta, variant=variant, **setting)
        except InfeasibleError:
            sigmas[key], details[key] = math.inf, {"feasible": False}
            continue
        sigmas[key] = r.sigma
        details[key] = {
            "k": r.k, "beta": r.beta, "update_clip": r.update_clip if variant == "valid" else None,
            "delta_composition": r.delta_composition, "delta_tail": r.delta_tail,
            # the setting it solves, where the table checks it: its own sensitivity D(k, beta), the
            # floor(T/B) updates Algorithm 1 performs (the paper variant's T/B = 78.125 counts a
            # fractional one) and its own share of delta
            "sensitivity": r.sensitivity, "updates": math.floor(r.updates),
        }
        if variant == "paper":  # the valid sensitivity at the same k and beta = 1/v
            details[key]["valid_sensitivity"] = math.sqrt(
                rkhs_sensitivity.update_sensitivity_squared_unchecked(
                    s.lr, r.k, s.batch_size, s.lipschitz, beta=r.beta)
            )
    return sigmas, details


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
    epsilons = validated_epsilons(epsilons)
    delta = V.open_unit("delta", delta)
    steps = V.positive_int("steps", steps)
    sensitivity = V.positive("sensitivity", sensitivity)

    def paper(eps):
        return {
            "thm5_proof": composition.thm5_sigma_proof_paper_unchecked(eps, delta, steps=steps, sensitivity=sensitivity),
            "kov_quoted": composition.sigma_kov_quoted_paper_unchecked(eps, delta, steps=steps, sensitivity=sensitivity),
        }

    cols = tuple(_kov_column(steps) if key == "kov" else _COLUMNS[key]
                 for key in ("exact", "thm5_proof", "kov_quoted", "kov", "rdp", "pld"))
    params = {"steps": steps, "sensitivity": sensitivity}
    return Table(
        "gaussian", params, cols, _rows(epsilons, delta, _Composed(steps, sensitivity, with_pld=True), paper),
        valid_keys=("exact", "kov", "rdp", "pld"), paper_key="thm5_proof",
    )


def _kov_column(steps: int) -> Column:
    """The KOV column, saying so when ``steps`` is beyond the optimal search and KOV's closed form serves."""
    if not kov_gaussian.uses_closed_form(steps):
        return _COLUMNS["kov"]
    return replace(_COLUMNS["kov"], source=(
        f"Kairouz-Oh-Viswanath, beyond {kov_gaussian.K_CLOSED_FORM:.0e} steps its closed form (Thm 3.4; valid, looser "
        "than the optimal composition)"))
