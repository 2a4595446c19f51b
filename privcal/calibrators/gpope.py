r"""GPOPE (gradient-perturbed off-policy evaluation) privacy formulas: sensitivity and Theorem 1.

The GPOPE paper ("Privacy Preserving Off-Policy Evaluation", ../shared/papers/003_a2204df6124aecb1.txt)
runs N iterations; each one picks one of m trajectories uniformly at random, clips its primal-dual
gradient to norm h (Alg. 1, step 5) and adds h * N(0, sigma^2 I) (step 6). Its privacy analysis is
Lemma 1 (per-step log moment, see :func:`privcal.analysis.subsampling.rdp_gpope_lemma1_paper`) and Theorem 1
(sigma >= c2 sqrt(N log(1/delta)) / (m epsilon) for epsilon < c1 N / m^2).

Verdicts (evidence in tests/test_gpope_accounting.py and tests/test_subsampling.py):

* Sensitivity. One released clipped gradient has l2 sensitivity **2h**, not h, under replace-one
  neighbours (Def. 1, "differ by exactly one point", with m fixed so that q = 1/m) *and* under
  add/remove: the output is one trajectory's gradient (not a sum), so changing the data set swaps the
  released vector for another one in the h-ball -- e.g. b_hat and -b_hat at theta = w = 0. The paper's
  h (proof of Lemma 1: "without loss of generality ... sum of the others = 0") is not rescued by the
  zero-out relation either (a trajectory replaced by a null one whose clipped gradient is 0): the null
  trajectory is still drawn with probability 1/m in place of another, so with the others at -h the pair is
  (1 - q) N(-h) + q N(+h) against (1 - q) N(-h) + q N(0) (Lebeda, Regehr, Kamath & Steinke 2024), and privcal
  prices zero-out as replace-one at 2h (``privcal.accounting.pairs``, docs/pld.md section 1).
* Theorem 1 as printed is false for any constants: with epsilon near c1 N/m^2 and N >> m^2 the printed
  sigma tends to 0 and the mechanism is not (epsilon, delta)-DP (a post-processing lower bound in the
  tests, even with the paper's sensitivity h). Its appendix is not self-consistent either (see
  :data:`THEOREM1_C2_PAPER`): c2 = 2 does not follow from its own Lemma 1. A valid version needs, besides
  epsilon <= c1 N/m^2, an upper limit epsilon <= c4 ln(1/delta) (which implies the appendix's unstated
  noise floor sigma >= noise_min * Delta) and a *lower* limit epsilon >= c3 (N ln(1/delta)^2)^{1/3} / m
  (WBK Thm 9's j >= 3 terms do not vanish as sigma grows). :func:`theorem1_sigma` gives it with explicit
  constants (c2 ~ 4.51 per unit of sensitivity); :func:`theorem1_sigma_paper` the printed form, c2 = 2.

The formulas live in two modules this one re-exports: ``privcal.calibrators.gpope_sensitivity`` (the released
gradient and its sensitivity) and ``privcal.calibrators.gpope_theorem1`` (Theorem 1, printed and valid); this
module calibrates sigma with every bound (:func:`calibrate`).
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from typing import Any, Optional

import numpy as np

from .. import _validate as V
from ..analysis import rdp, subsampling
from ..accounting import pairs
from ..accounting.accountants import PaperAccountant, RDPAccountant
from ..accounting.registry import ACCOUNTANTS
from ..accounting.events import ComposedEvent, Neighbouring, Releases, SelfComposedEvent
from ..errors import InfeasibleError
from ..privacy_loss import MemoryLimitError
from ..analysis.rdp import GridEdgeWarning
from .gpope_sensitivity import (SAMPLING_OF_RELATION, SENSITIVITY_PER_CLIP, Relation, clip_gradient,  # noqa: F401
                                 primal_dual_gradient, priced_per_clip, rdp_per_iteration, relation_value,
                                 sensitivity, sensitivity_paper)
from .gpope_theorem1 import (THEOREM1_C1, THEOREM1_C2, THEOREM1_C2_PAPER, THEOREM1_C3, THEOREM1_C4,  # noqa: F401
                             THEOREM1_CONSTANTS, THEOREM1_NOISE_MIN, theorem1_c1_paper, theorem1_constants,
                             theorem1_epsilon_range, theorem1_sigma, theorem1_sigma_paper,
                             theorem1_sigma_paper_unchecked, theorem1_sigma_unchecked)

__all__ = [
    "SENSITIVITY_PER_CLIP",
    "Relation",
    "clip_gradient",
    "primal_dual_gradient",
    "sensitivity",
    "sensitivity_paper",
    "rdp_per_iteration",
    "THEOREM1_C2_PAPER",
    "theorem1_c1_paper",
    "theorem1_sigma_paper",
    "theorem1_constants",
    "THEOREM1_CONSTANTS",
    "THEOREM1_C1",
    "THEOREM1_C2",
    "THEOREM1_C3",
    "THEOREM1_C4",
    "THEOREM1_NOISE_MIN",
    "theorem1_epsilon_range",
    "theorem1_sigma",
    "BOUNDS",
    "GPOPECalibration",
    "GPOPECalibrationSettings",
    "calibrate",
    "calibrate_report",
    "calibrate_report_unchecked",
    "calibrate_sigma_unchecked",
    "epsilon_at_unchecked",
    "priced_per_clip",
    "gpope_event",
    "valid_epsilon_unchecked",
    "Thm9Accountant",
]

#: Deprecated alias of :data:`SENSITIVITY_PER_CLIP`, keyed by the deprecated spellings ("replace" = replace-one);
#: reached as ``ADJACENCIES`` with a DeprecationWarning (since 0.2.0, removed in 0.3.0).
_ADJACENCIES = {"replace": 2.0, "add_remove": 2.0, "zero_out": 1.0}


def __getattr__(name: str):
    if name == "ADJACENCIES":
        warnings.warn("privcal.calibrators.gpope.ADJACENCIES is deprecated: use SENSITIVITY_PER_CLIP (keyed by "
                      "'replace_one', not 'replace'); removed in 0.3.0", DeprecationWarning, stacklevel=2)
        return _ADJACENCIES
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# --------------------------------------------------------------------------------------------------

#: The bounds :func:`calibrate` offers: valid ones first ("best": the smallest sigma among the valid
#: accountants "rdp" and "pld").
BOUNDS = ("best", "rdp", "pld", "thm9", "theorem1", "lemma1", "theorem1_paper")
#: The accountant-priced valid bounds "best" chooses from.
_BEST_OF = ("rdp", "pld")


@dataclass(frozen=True)
class GPOPECalibrationSettings:
    """How :func:`calibrate` and :func:`calibrate_report` calibrate, beside the target and the run's size (defaults in
    one place: here; checked by those two functions, taken as given by the ``*_unchecked`` kernels).

    Attributes:
        clip: h, the l2 clipping norm of one gradient, in (0, inf); default 1 (it only scales ``noise_std``).
        bound: one of :data:`BOUNDS`; default "best" (the smaller of the valid "rdp" and "pld" sigmas).
        neighbouring: the neighbouring relation, a :class:`~privcal.Neighbouring` or its value: "replace_one"
            (default), "add_remove" or "zero_out".
    """

    clip: float = 1.0
    bound: str = "best"
    neighbouring: Relation = "replace_one"


def _calibration_settings(where: str, settings: Optional[GPOPECalibrationSettings], keywords: dict) -> tuple:
    """(settings with ``keywords`` applied, the deprecated ``adjacency`` keyword or None) for the function ``where``;
    settings given alone are taken as they are (their type is the only thing to check)."""
    adjacency = keywords.pop("adjacency", None)
    if not keywords and type(settings) is GPOPECalibrationSettings:
        return settings, adjacency
    return V.settings_with(where, GPOPECalibrationSettings, settings, keywords), adjacency


@dataclass(frozen=True)
class GPOPECalibration:
    """Result of :func:`calibrate_report`: sigma for a target (epsilon, delta), the bound and the
    accountant that gave it, and the epsilon a valid accountant certifies at it. The same kind of report
    as ``privcal.calibrators.dpq.calibrate``'s :class:`~privcal.calibrators.dpq.DPQCalibration` (``sigma``,
    ``accountant``, ``epsilon``, ``delta``, ``notes``).

    Attributes:
        sigma: Alg. 1's noise scale in units of the clip h (the noise is clip * N(0, sigma^2 I)), in (0, inf).
        noise_std: clip * sigma, the absolute noise standard deviation.
        epsilon: target epsilon, in (0, inf).
        delta: target delta, in (0, 1).
        iterations: N, the number of iterations of Alg. 1.
        trajectories: m, the number of trajectories (one drawn per iteration).
        bound: the bound asked for, one of :data:`BOUNDS`.
        neighbouring: the neighbouring relation, "replace_one", "add_remove" or "zero_out".
        valid: whether the bound used is a valid (epsilon, delta) guarantee.
        valid_epsilon: an upper bound on epsilon at this sigma from a valid accountant, same
            neighbouring: the PLD's certified upper bound when PLD priced sigma, else the valid RDP
            accountant's (for the paper bounds: whether their sigma is actually enough).
        notes: warnings and explanations, in words.
        accountant: the accountant that priced sigma: "rdp" (WBK Thm 27 / MTZ), "pld" (privacy loss
            distribution, certified), "rdp-thm9" (WBK Thm 9 alone) or "paper" (Lemma 1 + moments tail);
            None for the closed forms ("theorem1", "theorem1_paper").
    """

    sigma: float
    noise_std: float
    epsilon: float
    delta: float
    iterations: int
    trajectories: int
    bound: str
    neighbouring: str
    valid: bool
    valid_epsilon: float
    notes: tuple[str, ...] = ()
    accountant: Optional[str] = None

    @property
    def adjacency(self) -> str:
        """Former name of :attr:`neighbouring` (deprecated since 0.2.0, removed in 0.3.0)."""
        warnings.warn("GPOPECalibration.adjacency is deprecated: use .neighbouring; removed in 0.3.0",
                      DeprecationWarning, stacklevel=2)
        return self.neighbouring


def _innermost(event):
    """``event`` without its self-composition layers (a composition of one event counts as that event)."""
    while True:
        if isinstance(event, SelfComposedEvent):
            event = event.event
        elif isinstance(event, ComposedEvent) and len(event.events) == 1:
            event = event.events[0]
        else:
            return event


class Thm9Accountant(RDPAccountant):
    """RDP accountant whose without-replacement steps use WBK 2018 Thm 9 alone (the full sum, Wang, Balle &
    Kasiviswanathan 2019, Thm 9): the ``"thm9"`` bound of :func:`calibrate`."""

    name = "rdp-thm9"

    def _subsampled_rdp(self, event, orders):
        event = pairs.priced_event(event)  # zero-out: replace-one at twice the sensitivity
        if event.sampling == "without_replacement":
            nm = _innermost(event.event).noise_multiplier
            if math.isinf(nm):  # no information released
                return np.zeros_like(orders)
            return subsampling.rdp_without_replacement_gaussian_thm9_unchecked(orders, nm, event.sample_rate)
        return super()._subsampled_rdp(event, orders)


def _releases(trajectories: int, iterations: int, neighbouring: str) -> Releases:
    """N GPOPE iterations as releases: one of m trajectories per iteration (q = 1/m), sensitivity
    Delta * h under the neighbouring's named relation, noise h N(0, sigma^2 I) -- in units of h, sensitivity
    Delta and noise sigma."""
    return Releases.unchecked(
        SENSITIVITY_PER_CLIP[neighbouring], iterations, 1.0 / trajectories, SAMPLING_OF_RELATION[neighbouring],
        Neighbouring(neighbouring),
    )


def gpope_event(sigma: float, trajectories: int, iterations: int, neighbouring: str) -> SelfComposedEvent:
    """The event of N GPOPE iterations at noise multiplier sigma (noise h N(0, sigma^2 I)).

    Args:
        sigma: noise multiplier in units of the clip h, in (0, inf] (not checked).
        trajectories: m, one trajectory drawn per iteration (q = 1/m), an int >= 1 (not checked).
        iterations: N, an int >= 1 (not checked).
        neighbouring: "replace_one", "add_remove" or "zero_out" (not checked).

    Returns:
        The composed event, N self-compositions of the subsampled Gaussian of one iteration.
    """
    return _releases(trajectories, iterations, neighbouring).event(sigma)


def valid_epsilon_unchecked(sigma: float, delta: float, trajectories: int, iterations: int,
                            neighbouring: str) -> float:
    """Epsilon of N iterations at ``sigma`` under the valid RDP accountant (trusted: inputs not checked).

    A paper sigma far too small puts the RDP optimum at the grid edge, so GridEdgeWarning is silenced.

    Args:
        sigma: noise multiplier in units of the clip h, in (0, inf).
        delta: target delta, in (0, 1).
        trajectories: m, an int >= 1.
        iterations: N, an int >= 1.
        neighbouring: "replace_one", "add_remove" or "zero_out".

    Returns:
        An upper bound on epsilon (RDP conversion).
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", GridEdgeWarning)
        return RDPAccountant().compose_unchecked(gpope_event(sigma, trajectories, iterations, neighbouring)).epsilon_unchecked(delta)


#: The accountant that owns each accountant-priced bound's calibration, and the relation it is priced
#: under (None: the one asked for). "lemma1" is the paper's accounting: Lemma 1 with its sensitivity h.
_ACCOUNTANT_BOUNDS = {
    "rdp": (RDPAccountant, None), "pld": (ACCOUNTANTS["pld"], None), "thm9": (Thm9Accountant, None),
    "lemma1": (PaperAccountant, "zero_out"),
}
#: The bounds that are valid (epsilon, delta) guarantees.
_VALID_BOUNDS = ("best", "rdp", "pld", "thm9", "theorem1")


def calibrate_report(
    epsilon: float,
    delta: float,
    *,
    iterations: int,
    trajectories: int,
    settings: Optional[GPOPECalibrationSettings] = None,
    **keywords: Any,
) -> GPOPECalibration:
    """:func:`calibrate` with the valid epsilon at the returned sigma and notes.

    What it calibrates: the noise scale sigma of GPOPE Algorithm 1 (noise clip * N(0, sigma^2 I)) for a
    target (epsilon, delta) under ``bound`` (see :func:`calibrate`). The accountant-priced bounds
    ("rdp", "pld", "thm9", "lemma1") reach their accountant's calibration through its one method
    ``Accountant.sigma_for_unchecked`` (RDP: the windowed order search; PLD: its secant on a fixed grid);
    "best" (the default) runs "rdp" and "pld" and keeps the smaller sigma, and ``accountant`` says
    which one gave it; "theorem1" and "theorem1_paper" are closed forms. The answer is then priced by a
    valid accountant (``valid_epsilon``: PLD's certified upper bound when PLD priced it, else RDP's).
    This is the documented calibrator; :func:`calibrate` is its shortcut for the sigma alone.

    Args:
        epsilon: target epsilon, in (0, inf).
        delta: target delta, in (0, 1).
        iterations: N, the number of iterations of Alg. 1, an int >= 1.
        trajectories: m, the number of trajectories (one drawn per iteration), an int >= 1.
        settings: a :class:`GPOPECalibrationSettings`; default None: built from ``keywords``.
        keywords: fields of :class:`GPOPECalibrationSettings` (their defaults live there), replacing those of
            ``settings``:
            ``clip``: h, the l2 clipping norm of one gradient, in (0, inf); default 1. It only scales
            ``noise_std``.
            ``bound``: one of :data:`BOUNDS`: "best" (default), "rdp", "pld", "thm9", "theorem1", "lemma1",
            "theorem1_paper".
            ``neighbouring``: the neighbouring relation, "replace_one" (default), "add_remove" or "zero_out".
            ``adjacency``: deprecated alias of ``neighbouring`` (its "replace" is "replace_one").

    Returns:
        a :class:`GPOPECalibration`.

    Raises:
        ValueError: an argument is outside its range.
        InfeasibleError: the bound cannot reach the target (e.g. "theorem1" outside its epsilon range).
        TypeError: a keyword is no field of :class:`GPOPECalibrationSettings`, or ``settings`` is of another type.
    """
    given, adjacency = _calibration_settings("calibrate_report", settings, keywords)
    e = V.positive("epsilon", epsilon)
    d = V.open_unit("delta", delta)
    n = V.positive_int("iterations", iterations)
    m = V.positive_int("trajectories", trajectories)
    h = V.positive("clip", given.clip)
    bound = V.choice("bound", given.bound, BOUNDS)
    neighbouring = relation_value(given.neighbouring, adjacency)
    return calibrate_report_unchecked(e, d, iterations=n, trajectories=m, clip=h, bound=bound, neighbouring=neighbouring)


def calibrate_report_unchecked(
    epsilon: float,
    delta: float,
    *,
    iterations: int,
    trajectories: int,
    clip: float = GPOPECalibrationSettings.clip,
    bound: str = GPOPECalibrationSettings.bound,
    neighbouring: str = GPOPECalibrationSettings.neighbouring,
) -> GPOPECalibration:
    """:func:`calibrate_report` without validation, for callers that validated the arguments (``privcal train gpope``, whose command
    line checks each value once, and the GPOPE table): the same report, the same sigma.

    Args:
        epsilon: target epsilon, a float in (0, inf) (not checked).
        delta: target delta, a float in (0, 1) (not checked).
        iterations: N, an int >= 1 (not checked).
        trajectories: m, an int >= 1 (not checked).
        clip: h, a float in (0, inf) (not checked); default 1.
        bound: one of :data:`BOUNDS` (not checked); default "best".
        neighbouring: a ``privcal.Neighbouring`` value, "replace_one" (default), "add_remove" or "zero_out"
            (not checked; no deprecated spelling).

    Returns:
        a :class:`GPOPECalibration`.

    Raises:
        InfeasibleError: the bound cannot reach the target.
    """
    e, d, n, m = epsilon, delta, iterations, trajectories
    sigma, name, last, skipped = _calibrated(e, d, n, m, bound, neighbouring)
    notes = list(skipped)
    valid = bound in _VALID_BOUNDS
    if bound == "lemma1":
        notes.append("GPOPE Lemma 1 + moments tail with sensitivity h, as printed: not a valid bound in general")
    elif bound == "theorem1_paper":
        notes.append("GPOPE Theorem 1 as printed (c2 = 2): false for some parameters, not a valid bound")
    if name == "pld" and last is not None and last[0] == sigma:
        valid_eps = last[1]  # the calibration's last evaluation at this sigma: a certified upper end
    elif name == "pld":
        valid_eps = ACCOUNTANTS["pld"]().compose_unchecked(gpope_event(sigma, m, n, neighbouring)).epsilon_unchecked(d)
    else:
        valid_eps = valid_epsilon_unchecked(sigma, d, m, n, neighbouring)
    if not valid and valid_eps > e:
        notes.append(f"at this sigma the valid RDP accountant ({neighbouring} neighbours) gives epsilon {valid_eps:.4g} > {e:g}")
    return GPOPECalibration(
        float(sigma), float(clip * sigma), e, d, n, m, bound, neighbouring, valid, float(valid_eps), tuple(notes),
        name,
    )


def calibrate_sigma_unchecked(
    epsilon: float,
    delta: float,
    *,
    iterations: int,
    trajectories: int,
    bound: str = GPOPECalibrationSettings.bound,
    neighbouring: str = GPOPECalibrationSettings.neighbouring,
) -> float:
    """The sigma of :func:`calibrate_report_unchecked` alone, without pricing it again (for callers that
    only read ``.sigma``, such as the GPOPE table): the same calibration, the same sigma, and none of the
    report's extra work (the valid epsilon at sigma is a full RDP evaluation for the RDP-priced and
    closed-form bounds).

    Args:
        epsilon: target epsilon, a float in (0, inf) (not checked).
        delta: target delta, a float in (0, 1) (not checked).
        iterations: N, an int >= 1 (not checked).
        trajectories: m, an int >= 1 (not checked).
        bound: one of :data:`BOUNDS` (not checked); default "best".
        neighbouring: a ``privcal.Neighbouring`` value, "replace_one" (default), "add_remove" or "zero_out"
            (not checked; no deprecated spelling).

    Returns:
        sigma, Alg. 1's noise scale in units of the clip h.

    Raises:
        InfeasibleError: the bound cannot reach the target.
    """
    return _calibrated(epsilon, delta, iterations, trajectories, bound, neighbouring)[0]


def epsilon_at_unchecked(sigma: float, delta: float, *, iterations: int, trajectories: int, bound: str) -> float:
    """Epsilon that the accountant-priced valid ``bound`` ("rdp" or "thm9") certifies for Algorithm 1 at noise
    multiplier ``sigma`` under replace-one neighbours (the releases :func:`calibrate_sigma_unchecked` calibrates):
    one evaluation. It is non-increasing in sigma, so where it exceeds a target epsilon the bound's calibrated
    sigma is larger than ``sigma`` (the GPOPE table's lead uses this to skip calibrations that cannot win).

    Args:
        sigma: noise multiplier, a float in (0, inf) (not checked).
        delta: a float in (0, 1) (not checked).
        iterations: N, an int >= 1 (not checked).
        trajectories: m, an int >= 1 (not checked).
        bound: "rdp" or "thm9" (not checked).

    Returns:
        the certified epsilon (inf where the bound cannot certify one).
    """
    accountant, _ = _ACCOUNTANT_BOUNDS[bound]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", GridEdgeWarning)
        return accountant().compose_unchecked(gpope_event(sigma, trajectories, iterations, "replace_one")).epsilon_unchecked(delta)


def _calibrated(e: float, d: float, n: int, m: int, bound: str, neighbouring: str):
    """(sigma, name of the accountant that priced it or None, its ``calibrated`` record or None, notes) for
    validated arguments: the calibration shared by :func:`calibrate_report_unchecked` and
    :func:`calibrate_sigma_unchecked`."""
    notes = []
    name = None
    last = None
    paper = 2.0 * math.sqrt(n * math.log(1.0 / d)) / (m * e)  # the paper's closed form as a start

    # zero-out is priced as replace-one at 2h when m > 1 (:func:`priced_per_clip`): the valid accountants
    # calibrate those very releases, so that both relations start each search alike and get the same sigma
    priced = "replace_one" if neighbouring == "zero_out" and m > 1 else neighbouring

    def hint(key: str) -> Optional[float]:
        # the PLD's own start (no hint: its central-limit start, refined on a 4x coarser grid) brackets its
        # root in fewer probes of the rule grid than the paper's closed form, which can be 3x off
        return None if key == "pld" else paper

    used = {}  # the accountant objects that calibrated: their last evaluation gives the achieved epsilon
    if bound == "best":
        found = {}
        for key in _BEST_OF:
            accountant, _ = _ACCOUNTANT_BOUNDS[key]
            try:
                used[key] = accountant()
                found[key] = used[key].sigma_for_unchecked(_releases(m, n, priced), e, d, sigma_hint=hint(key))
            except (InfeasibleError, MemoryLimitError, MemoryError) as exc:  # or a PLD grid beyond its cap
                if key == _BEST_OF[-1] and not found:
                    raise
                notes.append(f"{key} skipped: {exc}")
        bound_used = min(found, key=found.get)
        sigma = found[bound_used]
        name = _ACCOUNTANT_BOUNDS[bound_used][0].name
        last = getattr(used[bound_used], "calibrated", None)
    elif bound in _ACCOUNTANT_BOUNDS:
        accountant, priced_under = _ACCOUNTANT_BOUNDS[bound]
        acc = accountant()
        sigma = acc.sigma_for_unchecked(_releases(m, n, priced_under or priced), e, d, sigma_hint=hint(bound))
        name = accountant.name
        last = getattr(acc, "calibrated", None)
    elif bound == "theorem1":
        sigma = theorem1_sigma_unchecked(e, d, iterations=n, trajectories=m, neighbouring=neighbouring)
    else:
        sigma = theorem1_sigma_paper_unchecked(e, d, iterations=n, trajectories=m)
    return sigma, name, last, tuple(notes)


def calibrate(
    epsilon: float,
    delta: float,
    *,
    iterations: int,
    trajectories: int,
    settings: Optional[GPOPECalibrationSettings] = None,
    **keywords: Any,
) -> float:
    """Noise multiplier sigma of GPOPE Algorithm 1 (noise clip * N(0, sigma^2 I)) for (epsilon, delta)-DP.

    The shortcut for ``calibrate_report(...).sigma``: :func:`calibrate_report` is the documented
    calibrator, and its report says which accountant priced sigma (``accountant``) and the valid epsilon
    at it. N = ``iterations``, each on one of m = ``trajectories`` trajectories drawn uniformly. ``bound``:

    * ``"best"`` (default, valid): the smaller of the "rdp" and "pld" sigmas -- the tightest valid
      accountant (PLD wherever its certified bound is the smaller one, which it is at the paper's
      settings: e.g. m = 1000, N = 1e4, epsilon = 0.5 under replace-one neighbours, sigma 1.95 against
      RDP's 3.39);
    * ``"rdp"`` (valid): Renyi DP of the subsampled Gaussian -- Wang, Balle & Kasiviswanathan
      2018, Thm 27 for sampling without replacement (never above their Thm 9, whose j >= 3 terms would
      otherwise put a floor under epsilon), Mironov-Talwar-Zhang for ``neighbouring="add_remove"`` --
      composed over N iterations, improved conversion; the smallest sigma it certifies;
    * ``"pld"`` (valid): the privacy loss distribution of the same releases (``privcal.pld``), the
      smallest sigma whose certified upper epsilon meets the target;
    * ``"thm9"`` (valid): the same with WBK Thm 9 alone (the full sum over j = 2..alpha);
    * ``"theorem1"`` (valid): Theorem 1's closed form with the explicit constants derived in
      :func:`theorem1_constants` (raises ``InfeasibleError`` outside its proven epsilon range);
    * ``"lemma1"`` (paper): Lemma 1 as printed with the paper's sensitivity h and the moments tail;
    * ``"theorem1_paper"`` (paper): Theorem 1 as printed, c2 = 2.

    The accountant-priced bounds go through the accountant's ``_sigma_for`` (see :func:`calibrate_report`).
    ``clip`` = h only scales the noise std (``calibrate_report(...).noise_std``); sigma itself does not
    depend on it. Source: GPOPE paper,
    Algorithm 1, Lemma 1, Theorem 1, App. B; see the module docstring for verdicts.

    Args:
        epsilon: target epsilon, in (0, inf).
        delta: target delta, in (0, 1).
        iterations: N, the number of iterations of Alg. 1, an int >= 1.
        trajectories: m, the number of trajectories (one drawn per iteration), an int >= 1.
        settings: a :class:`GPOPECalibrationSettings`; default None: built from ``keywords``.
        keywords: fields of :class:`GPOPECalibrationSettings` (their defaults live there), replacing those of
            ``settings``:
            ``clip``: h, the l2 clipping norm of one gradient, in (0, inf); default 1 (does not change sigma).
            ``bound``: one of :data:`BOUNDS` (above); default "best".
            ``neighbouring``: the neighbouring relation: "replace_one" (default: one trajectory replaced;
            sensitivity 2h), "add_remove" (2h) or "zero_out" (a trajectory replaced by a null one: sensitivity h,
            the paper's convention, but priced as replace-one at 2h by the valid bounds, because the null
            trajectory displaces another from the draw).
            ``adjacency``: deprecated alias of ``neighbouring`` (its "replace" is "replace_one").

    Returns:
        sigma, Alg. 1's noise scale in units of the clip h.

    Raises:
        ValueError: an argument is outside its range.
        InfeasibleError: the bound cannot reach the target.
        TypeError: a keyword is no field of :class:`GPOPECalibrationSettings`, or ``settings`` is of another type.
    """
    given, adjacency = _calibration_settings("calibrate", settings, keywords)
    return calibrate_report(epsilon, delta, iterations=iterations, trajectories=trajectories, settings=given,
                            adjacency=adjacency).sigma
