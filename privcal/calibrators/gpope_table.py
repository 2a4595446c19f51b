"""``privcal table --setting gpope``: the sigma of GPOPE Algorithm 1 under each bound, with certified verdicts.

One column per bound of :func:`privcal.calibrators.gpope.calibrate`; the reference is the valid PLD (or, where
the PLD gives no sigma, the valid subsampled RDP) under replace-one neighbours. A paper column is flagged only
where a certified lower bound of a realisable worst-case pair (:func:`gpope_bracket`) exceeds the target. The
result type is :mod:`privcal.calibrators.table_model`; :mod:`privcal.calibrators.table` re-exports this module's
public names.
"""

from __future__ import annotations

import functools
import math
import dataclasses
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Optional

from .. import _validate as V
from ..accounting import realisable
from ..accounting.accountants import RDPAccountant
from ..accounting.events import Neighbouring, Releases
from ..accounting.pld_accountant import PLDAccountant
from ..errors import CalibrationError, InfeasibleError
from ..privacy_loss import MemoryLimitError
from . import gpope
from .table_model import Column, Row, Table, validated_epsilons

__all__ = ["gpope_table", "BracketOptions", "gpope_bracket", "known_lower", "GPOPE_DEFAULTS", "GPOPE_EPSILONS", "VERDICT_GRIDS",
           "PRINTED_GRIDS"]

#: GPOPE defaults: m trajectories, N iterations (the paper's chain experiments use eps = 0.1, delta = 1e-5).
GPOPE_DEFAULTS = {"trajectories": 1000, "iterations": 10_000}
#: Default target epsilons of the GPOPE table.
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


#: The verdicts' lower bounds (the realisable pair, :func:`gpope_bracket`): the grids they are tried on, in units
#: of the pair's rule grid (``realisable.unchecked_grid``), each with its budget on a composition's window in
#: cells (None: the memory cap alone, 2^21 cells), coarse first -- a lower bound on any grid is a lower bound, so a
#: coarse one that exceeds the target decides the verdict, and a finer grid is composed only where it does not.
#: The rule grid itself, without a budget, comes last, so no verdict
#: it decides is lost. The printed bound (the paper column's) starts on 2x: within 0.1% of the rule grid's bound at
#: the README's table (1.41907 vs 1.41984, 25.355 vs 25.377, 296.21 vs 296.17) for a quarter of its time (half the
#: cells, and the window's FFT); 8x loses 10-25% (1.26, 19.7, 270) for another quarter. The budget 2^19 binds only
#: at the smallest sigmas, whose bounds are far above any target (sigma = 0.1357 in the README's table: 2522 on
#: 32x the rule grid in 0.12 s, where 8x takes 0.22 s for 2639; the PLD's upper end is 2668).
VERDICT_GRIDS = ((8.0, 2**19), (2.0, 2**19), (1.0, None))
#: The grids of the printed bound (the paper column's verdict), finest last (see :data:`VERDICT_GRIDS`).
PRINTED_GRIDS = ((2.0, 2**19), (1.0, None))
#: the GPOPE table's paper column: the one its lead rows give a verdict on, with the lower bound in words
_GPOPE_PAPER = "theorem1_paper"


@dataclass(frozen=True)
class BracketOptions:
    """Where :func:`gpope_bracket` looks for its ends (defaults in one place).

    Fields:
        printed: the bracket is printed (the paper column's verdict): its own lower end from
            :data:`PRINTED_GRIDS`; default True.
        known: a certified lower bound on this sigma's epsilon found elsewhere, in [0, inf); default 0.
        valid_upper: a callable returning another certified upper end, or None; default None.
    """

    printed: bool = True
    known: float = 0.0
    valid_upper: Optional[Callable[[], float]] = None


def gpope_bracket(sigma: float, delta: float, trajectories: int, iterations: int,
                  target: Optional[float] = None, options: Optional[BracketOptions] = None,
                  **keywords: Any) -> tuple[float, float]:
    """(lower, upper) epsilon of GPOPE at noise multiplier ``sigma`` for a realisable worst-case pair.

    The pair: every trajectory's clipped gradient is -h e at every iterate and the replaced one's is +h e
    instead (clipping makes such gradients of norm h realisable); each iteration picks the replaced
    trajectory with probability q = 1/m independently, so one iteration releases (1 - q) N(0, (sigma h)^2)
    + q N(2h e, (sigma h)^2) against N(0, (sigma h)^2) (shifted by h e): the subsampled Gaussian pair at
    sensitivity 2h. Its PLD bracket (privcal.pld) is certified. The pair is realised (so the lower end bounds
    the true epsilon of Algorithm 1 from below) and it is the dominating pair of one trajectory drawn without
    replacement under replace-one neighbours (docs/pld.md 1.2; so the upper end bounds it from above).

    With a ``target``, the lower end is the realisable pair's bound on the first grid of :data:`VERDICT_GRIDS`
    (``printed``: :data:`PRINTED_GRIDS`) on which it exceeds the target (the verdict is then decided), else
    the largest over them all; a certified lower bound either way. ``known``: a certified lower bound on this
    sigma's epsilon found elsewhere (the table's, at a larger sigma: see :func:`known_lower`); where it exceeds
    the target, a column that is not ``printed`` composes no lower bound of its own. ``valid_upper``: another
    certified upper end (the table's: the valid RDP accountant's), consulted only where the PLD's probe is not
    finite or leaves the target undecided (a certified lower bound above the target means no upper end can
    certify it); a target it certifies needs no lower end either. Arguments are not checked (the table's).

    Args:
        sigma: noise multiplier of Algorithm 1 (noise h N(0, sigma^2 I)), a float in (0, inf).
        delta: target delta, a float in (0, 1).
        trajectories: m, an int >= 1 (one trajectory drawn per iteration, q = 1/m).
        iterations: N, an int >= 1.
        target: the target epsilon the verdict is about, or None for the full bracket; default None.
        options: a :class:`BracketOptions` (None: its defaults), its fields replaced by the keywords.
        **keywords: the :class:`BracketOptions` fields ``printed`` (default True), ``known`` (0) and
            ``valid_upper`` (None).

    Returns:
        (lower, upper): a certified lower and upper bound on epsilon (lower 0 where a certified upper end
        already meets the target).
    """
    opts = BracketOptions(**keywords) if options is None else dataclasses.replace(options, **keywords)
    printed, known, valid_upper = opts.printed, opts.known, opts.valid_upper
    # noise h N(0, sigma^2 I) against a shift of 2h: sensitivity 2 in units of h, Poisson add/remove pair
    event = Releases.unchecked(2.0, iterations, 1.0 / trajectories, "poisson", Neighbouring.ADD_REMOVE).event(sigma)
    # cheap certified ends first: the PLD's rule-grid upper end, then (only where it does not certify the
    # target) the realisable pair's binned lower bound; the other upper end and the PLD's refined bracket only
    # where they leave the target undecided. A target certified by an upper end needs no lower end: 0 (trivially
    # valid) stands.
    acc = PLDAccountant().compose_unchecked(event)
    try:
        upper = float(acc.pld.unchecked_probe_epsilon(delta))
    except MemoryLimitError:
        upper = math.inf
    if target is not None and upper <= target:
        return 0.0, upper
    lower = 0.0
    if printed or target is None or not known > target:
        h = realisable.unchecked_grid(event)
        for factor, cells in ((1.0, None),) if target is None else PRINTED_GRIDS if printed else VERDICT_GRIDS:
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
            lo, hi = acc.bracket_unchecked(delta)
            lower, upper = max(lower, lo), min(upper, hi)
        except MemoryLimitError:
            pass
    return min(lower, upper), upper


def known_lower(found: list, sigma: float) -> float:
    """The largest certified lower bound in ``found`` ((sigma', lower) pairs of the realisable pair at the same
    delta, m and N) at a sigma' >= ``sigma``; 0 if there is none. It bounds the epsilon at ``sigma`` too: the
    pair's releases at sigma' are those at sigma plus independent N(0, (sigma'^2 - sigma^2) h^2 I) noise (its
    gradients do not depend on the iterates), a post-processing, so the pair's epsilon is non-increasing in
    sigma, and Algorithm 1's at sigma is at least the pair's at sigma, at least the pair's at sigma'.

    Args:
        found: (sigma', lower) pairs, certified lower bounds of the realisable pair at the same delta, m and N.
        sigma: the noise multiplier the bound is wanted at, a float.

    Returns:
        the largest lower bound at a sigma' >= sigma, or 0.0.
    """
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
            #: Default target epsilons of the GPOPE table.
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
    epsilons = validated_epsilons(epsilons)
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
                    sigmas[key] = RDPAccountant().sigma_for_unchecked(
                        Releases.unchecked(1.0, n, 1.0 / m, "without_replacement", Neighbouring.REPLACE_ONE), eps, delta)
                else:
                    sigmas[key] = gpope.calibrate_sigma_unchecked(eps, delta, **setting, **kw)
            except InfeasibleError:
                sigmas[key] = math.inf
            except (MemoryLimitError, MemoryError, CalibrationError) as exc:  # e.g. a PLD grid beyond its cap:
                sigmas[key] = math.inf  # the other columns are printed regardless
                skipped.setdefault(key, " ".join(str(exc).split()))
        rows.append((eps, sigmas))
    reference = "pld" if all(math.isfinite(s["pld"]) for _, s in rows) else "rdp"
    done, found = [], []  # found: (sigma, certified lower bound) of the realisable pair, for known_lower
    for eps, sigmas in rows:
        ref = sigmas[reference]
        checked = [k for k in sigmas if _GPOPE_COLUMNS[k].checked and math.isfinite(sigmas[k])]
        # the PLD bracket of the pair, which is both realised and the dominating pair priced under replace-one
        # (docs/pld.md 1.2): its lower end bounds Algorithm 1's epsilon from below, its upper end (the reference's
        # probe) from above; the valid replace-one RDP accountant's upper end only where the PLD leaves the target
        # undecided (at the README's table the PLD's is 2-400x below it at every checked sigma). Larger sigmas
        # first: a lower bound found there decides the verdicts at the smaller ones (known_lower); the paper
        # column's lower end is printed (the verdict): its own, from the finer grids
        bounds = {}
        for k in sorted(checked, key=lambda k: -sigmas[k]):
            s = sigmas[k]
            bounds[k] = gpope_bracket(
                s, delta, m, n, target=eps, printed=k == _GPOPE_PAPER, known=known_lower(found, s),
                valid_upper=functools.partial(gpope.epsilon_at_unchecked, s, delta, iterations=n, trajectories=m,
                                              bound="rdp"))
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
