r"""End-to-end noise calibration for DP Q-learning with functional noise (Wang & Hegde 2019).

Algorithm 1 releases, before each update j = 0 .. U (U = floor(T/B)), the function Q_j(., a) + g_(j,a)
for every action a, g a Gaussian-process path GP(0, sigma^2 exp(-beta|x - y|)); actions, targets and
the next update are computed from released values only.

``variant="valid"`` (default; ``"corrected"`` is a deprecated alias) is private by construction:

* premises, made true in the agent (``privcal.rl.dpq.agent``): every update starts from the released
  function (release j + 1 = release j + Delta_j + fresh noise) and its change Delta_j moves each action's
  Q by at most ``update_clip`` c in sup norm over the state space [0, 1], with Lipschitz constant in the
  state at most ``update_lipschitz`` l, both certified on the actual new parameters (grid values plus
  the slack between grid points; the step is scaled back until both hold), the analogue of DP-SGD's
  gradient clipping;
* sensitivity: under adaptive composition the j-th release is computed from the rewards and the
  earlier releases, which are shared by the two runs; the agent's state beyond them (its parameters)
  enters only through Delta_j, so for ANY two reward functions the two means differ by
  Delta_j - Delta'_j: sup <= 2c and Lip <= 2l. Lemma 6 gives
  ||Delta_j - Delta'_j||_H^2 <= (1 + beta/2)(2c)^2 + (2l)^2/(2 beta)
  (``privcal.analysis.rkhs.restarted_release_sensitivity_squared``), the same for every release, minimal at
  beta = l / c. (Without the restart the parameters of the two runs drift apart through every earlier
  update, release j differs by up to 2 j c with slope 2L, ``privcal.analysis.rkhs.clipped_release_sensitivity_squared``:
  an analysis whose noise grows with the number of releases.) The agent's docstring
  writes the post-processing argument out;
* composition: U x m independent GP releases are one Gaussian mechanism with
  mu^2 = sum_j m ||Q_j - Q'_j||_H^2 / sigma^2 (Prop. 4; exact), priced by the exact accountant at the
  whole delta, with beta = l / c (``rkhs.restarted_minimizing_beta``);
* no noise bound k and no Lemma 8 failure term: the paper needs sup|g| <= k only to bound the update
  (the targets contain the noise); the certified clip bounds it whatever the noise, so k is not
  needed (``DPQCalibration.k`` is inf, ``delta_tail`` 0);
* noise reuse (J < U): refused (``ValueError``). Proof sketch: if two releases share a path g,
  (Q_i + g) - (Q_j + g) = Q_i - Q_j is revealed without noise; given the earlier release, Q_i - Q_j is a
  deterministic function of the rewards (the bias-only network of ``privcal verify`` claim
  DPQ-noise-reuse moves by lr per unit reward change), so the output distributions under r and r + 1
  are mutually singular and delta(epsilon) = 1 for every epsilon. Counting those releases as
  independent Gaussian releases is not an upper bound; the valid variant needs J = U (the agent also
  draws a fresh path for the release after the last update).

The 1/B premise of the paper (one update moves Q by at most 4 alpha L (k+1)/B,
``rkhs.update_sup_bound``) fails: all B rewards of a batch change, and the output bias alone moves Q by
alpha (claim DPQ-update-sup). No variant here rests on it ("corrected" is a deprecated spelling of
"valid").

``variant="paper"`` applies the paper's formulas literally, but solves them consistently: sigma from the
theorem statement (C = (v^2+v)L^2 outside the square root, T/B releases, delta/2 as in App. E.3),
beta = 1/v, the failure term of App. E.3 1 - (1 - exp(-(2k - 8.68 sqrt(beta) sigma)^2/2))^J with its
condition 2k > 8.68 sqrt(beta) sigma, k an integer. App. E.3's own answer (k = 23, sigma = 0.313)
violates that condition; :func:`check` reports which conditions a given (k, sigma) meets. It is NOT a
valid guarantee.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import MISSING, dataclass, field, fields, replace
from typing import Optional

import numpy as np

from .. import _validate as V
from ..analysis import composition, rkhs, supremum
from ..accounting.accountants import ExactAccountant
from ..accounting.events import Neighbouring, Releases
from ..errors import InfeasibleError

__all__ = ["DPQCalibration", "LearnerShape", "CalibrationSettings", "calibrate", "calibrate_report", "calibrate_unchecked",
           "calibrate_learner_unchecked", "check", "check_target", "check_variant", "checked_inputs",
           "paper_sigma_unchecked", "VARIANTS", "VARIANT_ALIASES", "CHECK_VARIANT", "DEFAULT_UPDATE_CLIP", "DEFAULT_UPDATE_LIPSCHITZ",
           "MAX_EPSILON"]

#: The largest target epsilon a calibration accepts (here and in privcal.calibrators.table): beyond it every
#: sigma is negligible and no bound tells a user anything, and the closed forms of several bounds leave
#: float64 (a target of 1e300 met a math domain error in the table and an infeasible exact search here).
MAX_EPSILON = 1e6

VARIANTS = ("valid", "paper")
#: Deprecated spellings of :data:`VARIANTS` (docs/deprecation.md): "corrected" is "valid".
VARIANT_ALIASES = {"corrected": "valid"}
#: The variant :func:`check` evaluates when its keywords name none: the paper's (it checks printed parameters).
CHECK_VARIANT = "paper"
#: Default certified bound c on one update's change of Q (sup norm over [0, 1], units of Q = reward).
DEFAULT_UPDATE_CLIP = 0.01
#: Default certified bound l on the Lipschitz constant (in the state) of one update's change of Q (units of Q
#: per unit state); the agent certifies it for tanh networks (``privcal.rl.mlp.slope_difference_bound``).
DEFAULT_UPDATE_LIPSCHITZ = 0.02
_PAPER_K_MAX = 10**6


@dataclass(frozen=True)
class LearnerShape:
    """What the noise calibrations read of a DP-Q learner's settings
    (``privcal.rl.dpq.agent.Hyperparameters.learner_shape`` builds it).

    Attributes:
        samples: T, the number of samples processed, an int >= 1.
        batch_size: B, samples per update, an int in [1, samples].
        lr: alpha, the learning rate, in (0, inf).
        lipschitz: L, the Lipschitz constant of the Q-function in the state, in (0, inf).
        update_clip: c, the certified bound on one update's change of Q (valid variant), in (0, inf);
            default :data:`DEFAULT_UPDATE_CLIP`.
        update_lipschitz: l, the certified bound on one update's slope change (valid variant), in (0, inf);
            default :data:`DEFAULT_UPDATE_LIPSCHITZ`.
    """

    samples: int
    batch_size: int
    lr: float
    lipschitz: float
    update_clip: float = DEFAULT_UPDATE_CLIP
    update_lipschitz: float = DEFAULT_UPDATE_LIPSCHITZ

    @property
    def updates(self) -> int:
        """U = floor(T / B): the number of updates (full batches only)."""
        return self.samples // self.batch_size


@dataclass(frozen=True, kw_only=True)
class CalibrationSettings(LearnerShape):
    """What :func:`calibrate`, :func:`calibrate_unchecked` and :func:`check` read besides the target (epsilon,
    delta): the learner (the fields of :class:`LearnerShape`, defaults there), the noise resets J, the actions m
    and the variant. Built from the functions' keywords (``calibrate(0.9, 1e-4, samples=5000, ...)``) or given
    as ``settings``; the functions check the values.

    Attributes:
        samples: T, the number of samples processed, an int >= 1 (floor(T/B) updates).
        batch_size: B, samples per update, an int in [1, samples].
        lr: alpha, the learning rate, in (0, inf) (used by the paper variant only).
        lipschitz: L, the enforced Lipschitz constant of the Q-function in the state, in (0, inf).
        update_clip: c, the certified bound on one update's change of Q (valid variant), in (0, inf); default
            :data:`DEFAULT_UPDATE_CLIP`.
        update_lipschitz: l, the certified bound on one update's slope change (valid variant), in (0, inf);
            default :data:`DEFAULT_UPDATE_LIPSCHITZ`.
        resets: J, the number of times the noise paths are redrawn, an int >= 1; must equal floor(T/B) for
            ``variant="valid"``.
        actions: m, the number of actions (one noise path each), an int >= 1; default 2.
        variant: "valid" (default) or "paper"; "corrected" is a deprecated alias of "valid".
    """

    resets: int
    actions: int = 2
    variant: str = "valid"


def _settings(where: str, settings: Optional[CalibrationSettings], keywords: dict) -> CalibrationSettings:
    """``settings`` with ``keywords`` replacing its fields, the values not checked (the kernels trust them, the
    public functions check them once in :func:`checked_inputs`). A keyword that is no field, or (without
    ``settings``) a missing required one, raises ``TypeError`` as Python would for the function ``where``;
    ``settings`` of another type raises ``TypeError`` naming :class:`CalibrationSettings`."""
    names = [f.name for f in fields(CalibrationSettings)]
    for key in keywords:
        if key not in names:
            raise TypeError(f"{where}() got an unexpected keyword argument {key!r}")
    if settings is not None and not isinstance(settings, CalibrationSettings):
        raise TypeError(f"{where}() settings must be a CalibrationSettings, got {settings!r}")
    if settings is None:
        missing = [repr(f.name) for f in fields(CalibrationSettings)
                   if f.default is MISSING and f.default_factory is MISSING and f.name not in keywords]
        if missing:
            listed = missing[0] if len(missing) == 1 else (
                f"{missing[0]} and {missing[1]}" if len(missing) == 2
                else ", ".join(missing[:-1]) + f", and {missing[-1]}")
            raise TypeError(f"{where}() missing {len(missing)} required keyword-only argument"
                            f"{'s' if len(missing) > 1 else ''}: {listed}")
    return CalibrationSettings(**keywords) if settings is None else replace(settings, **keywords)


@dataclass(frozen=True)
class DPQCalibration:
    """Result of :func:`calibrate` / :func:`check`: a noise scale, its noise bound k, kernel beta and
    delta split, and every condition of the analysis checked at them.

    Attributes:
        sigma: scale of the Gaussian-process noise of each update (absolute, the GP is
            GP(0, sigma^2 exp(-beta |x - y|))), in (0, inf).
        k: noise bound: every noise path is assumed to stay in [-k, k] (Lemma 8), in (0, inf); an
            integer for ``variant="paper"``; inf for ``variant="valid"`` (no bound is assumed).
        beta: kernel parameter beta of exp(-beta |x - y|), in (0, inf).
        delta_composition: the part of ``delta`` spent on composing the updates, in (0, delta]
            (all of it for ``variant="valid"``).
        delta_tail: probability that some noise path leaves [-k, k] (the failure term), in [0, 1]
            (1.0 when its condition fails; 0 for ``variant="valid"``, which needs no k).
        feasible: True when every entry of ``conditions`` holds.
        accountant: how the composition was priced: "exact" (ExactAccountant) or the paper's
            statement form.
        variant: "valid" or "paper".
        epsilon: target epsilon, in (0, MAX_EPSILON = 1e6].
        delta: target total delta (composition + failure term), in (0, 1).
        sensitivity: RKHS-norm sensitivity of one update, in (0, inf); for ``variant="valid"`` the
            equal-release equivalent sqrt(sum over releases and actions of the squared sensitivities / U),
            so that U releases of it compose to the same Gaussian mechanism.
        updates: number of composed updates: floor(T/B) (valid) or T/B as printed (paper).
        resets: J, the number of times the noise paths are redrawn, an int >= 1.
        actions: m, noise paths per reset (one per action), an int >= 1.
        conditions: condition (in words) -> whether it holds at (sigma, k, beta).
        notes: what was used, in words.
        update_clip: c, the certified bound on one update's change of Q (sup norm, units of Q) the
            valid variant assumes; None for the paper variant.
        update_lipschitz: l, the certified bound on the Lipschitz constant of one update's change of Q
            (units of Q per unit state) the valid variant assumes; None for the paper variant.
    """

    sigma: float
    k: float
    beta: float
    delta_composition: float
    delta_tail: float
    feasible: bool
    accountant: str
    variant: str
    epsilon: float
    delta: float
    sensitivity: float
    updates: float
    resets: int
    actions: int
    conditions: dict[str, bool] = field(default_factory=dict)
    notes: tuple[str, ...] = ()
    update_clip: Optional[float] = None
    update_lipschitz: Optional[float] = None


def check_variant(variant: str, stacklevel: int = 4) -> str:
    """``variant`` in :data:`VARIANTS`; the deprecated "corrected" maps to "valid" with a DeprecationWarning.

    Args:
        variant: "valid", "paper", or the deprecated alias "corrected".
        stacklevel: as in ``warnings.warn``; the default 4 points at the caller of the public function
            that called :func:`checked_inputs`.

    Returns:
        the variant's current name.

    Raises:
        ValueError: ``variant`` is none of these.
    """
    if variant in VARIANT_ALIASES:
        warnings.warn(f"variant={variant!r} is deprecated; use variant={VARIANT_ALIASES[variant]!r}",
                      DeprecationWarning, stacklevel=stacklevel)
        return VARIANT_ALIASES[variant]
    return V.choice("variant", variant, VARIANTS)


def _fresh_noise(resets: int, updates: int) -> int:
    """J for the valid variant: J = floor(T/B) (one fresh noise path per release), else ``ValueError``."""
    if resets != updates:
        raise ValueError(
            f"resets must equal the number of updates floor(T/B) = {updates} under variant='valid', got "
            f"{resets!r}: premise 'fresh noise for every release' fails (J < floor(T/B) reuses one noise path "
            f"for {updates / resets:g} updates, which reveals their differences without noise: not DP at any "
            f"epsilon, see privcal.calibrators.dpq)")
    return resets


def check_target(epsilon: float, delta: float) -> tuple[float, float]:
    """The target (epsilon, delta) of a calibration, validated as :func:`calibrate` validates it (the first two
    of its checks), for callers that validate the other arguments elsewhere and then call
    :func:`calibrate_unchecked` (``privcal.rl.dpq.agent.train_dpq``).

    Args:
        epsilon: target epsilon, in (0, MAX_EPSILON = 1e6].
        delta: target total delta, in (0, 1).

    Returns:
        (epsilon, delta) as floats.

    Raises:
        ValueError: an argument is outside its range.
    """
    epsilon = V.positive("epsilon", epsilon)
    if epsilon > MAX_EPSILON:
        raise ValueError(f"epsilon must be in (0, {MAX_EPSILON:g}], got {epsilon!r}")
    return epsilon, V.open_unit("delta", delta)


def checked_inputs(epsilon: float, delta: float, learner: LearnerShape, resets: int, actions: int, variant: str,
                   stacklevel: int = 4) -> tuple:
    """The arguments of :func:`calibrate` / :func:`check`, validated once (each names the user's argument), as
    (epsilon, delta, learner, resets, actions, variant).

    Args:
        epsilon: target epsilon, in (0, MAX_EPSILON].
        delta: target total delta, in (0, 1).
        learner: the learner's :class:`LearnerShape` (T, B, alpha, L and the clips).
        resets: J, an int >= 1.
        actions: m, an int >= 1.
        variant: "valid" or "paper" ("corrected": a deprecated alias of "valid").
        stacklevel: as in :func:`check_variant`; default 4.

    Returns:
        the validated (epsilon, delta, learner, resets, actions, variant).
    """
    epsilon, delta = check_target(epsilon, delta)
    samples, batch_size = V.samples_and_batch(learner.samples, learner.batch_size)
    lr = V.positive("lr", learner.lr)
    lipschitz = V.positive("lipschitz", learner.lipschitz)
    resets = V.positive_int("resets", resets)
    actions = V.positive_int("actions", actions)
    variant = check_variant(variant, stacklevel)
    update_clip, update_lipschitz = learner.update_clip, learner.update_lipschitz
    if variant == "valid":
        update_clip = V.positive("update_clip", update_clip)
        update_lipschitz = V.positive("update_lipschitz", update_lipschitz)
        _fresh_noise(resets, samples // batch_size)
    learner = LearnerShape(samples, batch_size, lr, lipschitz, update_clip=update_clip,
                           update_lipschitz=update_lipschitz)
    return epsilon, delta, learner, resets, actions, variant


# ---------------------------------------------------------------------------------------------------
# valid variant


def _evaluate_valid(epsilon, delta, learner, resets, actions, beta=None, sigma=None):
    """The valid analysis at (c, l, beta[, sigma]): U equal releases of sensitivity d, composed exactly, no k."""
    updates = learner.updates
    update_clip, update_lipschitz = learner.update_clip, learner.update_lipschitz
    if beta is None:
        beta = update_lipschitz / update_clip  # rkhs.restarted_minimizing_beta
    d = math.sqrt(actions * rkhs.restarted_release_sensitivity_squared_unchecked(update_clip, update_lipschitz, beta))
    releases = Releases.unchecked(d, updates, 1.0, "poisson", Neighbouring.ADD_REMOVE)
    if sigma is None:
        sigma = ExactAccountant().sigma_for_unchecked(releases, epsilon, delta)
    eps_comp = ExactAccountant().compose_unchecked(releases.event(sigma)).epsilon_unchecked(delta)
    conditions = {
        "composition: exact epsilon <= target": bool(eps_comp <= epsilon),
        "fresh noise for every release (J = floor(T/B))": bool(resets == updates),
    }
    return DPQCalibration(
        sigma=float(sigma), k=math.inf, beta=float(beta), delta_composition=delta, delta_tail=0.0,
        feasible=all(conditions.values()), accountant="exact", variant="valid", epsilon=epsilon, delta=delta,
        sensitivity=d, updates=updates, resets=resets, actions=actions, conditions=conditions,
        notes=(
            f"premises (certified by the agent in every run): each update moves every action's Q by at most "
            f"update_clip c = {update_clip:g} (units of Q) in sup norm over [0, 1], with Lipschitz constant at "
            f"most update_lipschitz l = {update_lipschitz:g}, and starts from the released function",
            f"sensitivity: each release differs from the earlier one by one update's change, so two reward "
            f"functions give sup <= 2c and Lip <= 2l (Lemma 6 bound (1 + beta/2)(2c)^2 + (2l)^2/(2 beta)) for "
            f"each of {actions} actions; beta = {beta:.6g}; D = {d:.6g} per release (all actions)",
            f"composition: exact Gaussian profile of the {updates} x {actions} GP releases, all of delta",
            "no noise bound k and no failure term: the clip bounds each update whatever the noise",
        ),
        update_clip=update_clip,
        update_lipschitz=update_lipschitz,
    )


# ---------------------------------------------------------------------------------------------------
# paper variant


def paper_sigma_unchecked(epsilon: float, delta_comp: float, k: float, samples: int, batch_size: int, lr: float,
                          lipschitz: float) -> float:
    """Thm 5's sigma as printed (Wang & Hegde 2019), for validated arguments.

    Args:
        epsilon: the target epsilon (not checked).
        delta_comp: the composition's share of delta (App. E.3: delta / 2) (not checked).
        k: the noise bound k (not checked).
        samples: T (not checked).
        batch_size: B (not checked).
        lr: alpha (not checked).
        lipschitz: L (not checked).

    Returns:
        sigma = sqrt(2 (T/B) ln(e + epsilon/delta)) C / epsilon with C = (v^2 + v) L^2.
    """
    c = rkhs.update_sensitivity_squared_paper_unchecked(lr, k, batch_size, lipschitz)
    return composition.thm5_sigma_statement_paper_unchecked(epsilon, delta_comp, steps=samples / batch_size, c=c)


def _evaluate_paper(epsilon, delta, k, learner, resets, actions, sigma=None):
    samples, batch_size, lr, lipschitz = learner.samples, learner.batch_size, learner.lr, learner.lipschitz
    delta_comp = delta / 2.0  # App. E.3 splits 1e-4 as 5e-5 + 5e-5
    beta = rkhs.kernel_beta_thm5_unchecked(lr, k, batch_size)
    if sigma is None:
        sigma = paper_sigma_unchecked(epsilon, delta_comp, k, samples, batch_size, lr, lipschitz)
    cond = supremum.thm5_condition_paper_unchecked(k, beta, sigma)
    delta_tail = supremum.thm5_failure_e3_paper_unchecked(k, beta, sigma, resets) if cond else 1.0
    c = rkhs.update_sensitivity_squared_paper_unchecked(lr, k, batch_size, lipschitz)
    conditions = {
        "Thm 5: 2k > 8.68 sqrt(beta) sigma": bool(cond),
        "Thm 5 (statement): sigma >= sqrt(2 T/B ln(e + eps/delta)) C / eps": bool(
            sigma >= paper_sigma_unchecked(epsilon, delta_comp, k, samples, batch_size, lr, lipschitz)
        ),
        "App. E.3: delta_g <= delta/2": bool(delta_tail <= delta - delta_comp),
    }
    return DPQCalibration(
        sigma=float(sigma), k=float(k), beta=float(beta), delta_composition=delta_comp,
        delta_tail=float(delta_tail), feasible=all(conditions.values()), accountant="paper (Thm 5 statement form)",
        variant="paper", epsilon=epsilon, delta=delta, sensitivity=math.sqrt(c), updates=samples / batch_size,
        resets=resets, actions=actions, conditions=conditions,
        notes=("paper formulas literally: not a valid privacy guarantee (see privcal verify / table)",),
    )


def _calibrate_paper(epsilon, delta, learner, resets, actions):
    samples, batch_size, lr, lipschitz = learner.samples, learner.batch_size, learner.lr, learner.lipschitz
    # The paper's conditions, vectorised over integer k (then re-checked with the library functions):
    # sigma(k) = sqrt(2 T/B ln(e + eps/(delta/2))) C(k)/eps, gap = 2k - 8.68 sqrt(beta) sigma with
    # beta = 1/v, and 1 - (1 - exp(-gap^2/2))^J <= delta/2.
    k = np.arange(1, _PAPER_K_MAX + 1, dtype=float)
    v = 4.0 * lr * (k + 1.0) / batch_size
    c = (v * v + v) * lipschitz**2
    sigma = math.sqrt(2.0 * samples / batch_size * math.log(math.e + 2.0 * epsilon / delta)) * c / epsilon
    gap = 2.0 * k - supremum.LEMMA8_CONSTANT_PAPER * sigma / np.sqrt(v)
    with np.errstate(over="ignore", under="ignore"):
        p = np.exp(-0.5 * gap * gap)
    delta_g = -np.expm1(resets * np.log1p(-np.minimum(p, 1.0 - 1e-16)))
    ok = np.nonzero((gap > 0) & (delta_g <= delta / 2.0))[0]
    for i in ok[:3]:  # the first candidate, re-checked exactly (neighbours in case of rounding)
        r = _evaluate_paper(epsilon, delta, int(k[i]), learner, resets, actions)
        if r.feasible:
            return r
    raise InfeasibleError(
        f"no integer k <= {_PAPER_K_MAX} satisfies Thm 5's 2k > 8.68 sqrt(beta) sigma together with "
        "App. E.3's delta_g <= delta/2 (sqrt(beta) sigma grows like k^1.5 for large k)"
    )


# ---------------------------------------------------------------------------------------------------
# public


def calibrate(epsilon: float, delta: float, settings: Optional[CalibrationSettings] = None,
              **keywords) -> DPQCalibration:
    """Smallest sigma (with its kernel beta and delta split) making Algorithm 1 (epsilon, delta)-DP.

    What it calibrates: the scale sigma of the Gaussian-process noise GP(0, sigma^2 exp(-beta|x-y|))
    added to each released Q-function of DP Q-learning with functional noise. With ``variant="valid"``
    every update starts from the released function, so the sensitivity of every release comes from the
    update clip c and slope clip l that the agent certifies (sup <= 2c, Lip <= 2l, Lemma 6), the U x m
    releases are composed exactly (``ExactAccountant.sigma_for_unchecked``) at the whole ``delta``, beta = l / c
    minimises the sensitivity, and no noise bound k is needed; J must equal floor(T/B). With ``variant="paper"`` sigma is the statement
    form of Thm 5 (``composition.thm5_sigma_statement_paper``) with the smallest integer k meeting the
    paper's conditions (not a valid guarantee). Every condition is re-checked after the search.
    Source: Wang & Hegde 2019, Thm 5, Lemma 6, Lemma 8, App. E.3; see the module docstring for the
    valid analysis and its proof sketch.

    Args:
        epsilon: target epsilon, in (0, MAX_EPSILON = 1e6].
        delta: target total delta, in (0, 1).
        settings: the learner, J, m and the variant, a :class:`CalibrationSettings`; default None: built from
            ``keywords``.
        keywords: fields of :class:`CalibrationSettings`, replacing those of ``settings``; each is listed below.
        samples: T, the number of samples processed, an int >= 1 (floor(T/B) updates); required.
        batch_size: B, samples per update, an int in [1, samples]; required.
        lr: alpha, the learning rate, in (0, inf) (used by the paper variant only); required.
        lipschitz: L, the enforced Lipschitz constant of the Q-function in the state, in (0, inf); required.
        resets: J, the number of times the noise paths are redrawn, an int >= 1; must equal
            floor(T/B) for ``variant="valid"``; required.
        actions: m, the number of actions (one noise path each), an int >= 1; default 2.
        variant: "valid" (default) or "paper"; "corrected" is a deprecated alias of "valid".
        update_clip: c, the bound on one update's change of each action's Q in sup norm over [0, 1]
            that the agent certifies, in (0, inf), units of Q (= units of reward); default
            :data:`DEFAULT_UPDATE_CLIP` = 0.01. Used by the valid variant only.
        update_lipschitz: l, the bound on the Lipschitz constant in the state of one update's change of
            each action's Q that the agent certifies, in (0, inf), units of Q per unit state; default
            :data:`DEFAULT_UPDATE_LIPSCHITZ` = 0.02 (the agent certifies l < 2L for tanh networks only; give
            2L for a relu network, which always holds). Used by the valid variant only.

    Returns:
        a :class:`DPQCalibration` with ``feasible`` True; its ``conditions`` list every condition checked.

    Raises:
        ValueError: an argument is outside its range, or J != floor(T/B) under the valid variant (the
            message names the premise).
        InfeasibleError: the paper variant finds no k meeting every printed condition.
        TypeError: a keyword is no field of :class:`CalibrationSettings`, or a required one is missing.
    """
    s = _settings("calibrate", settings, keywords)
    epsilon, delta, learner, resets, actions, variant = checked_inputs(epsilon, delta, s, s.resets, s.actions,
                                                                       s.variant)
    return calibrate_learner_unchecked(epsilon, delta, learner, resets, actions, variant)


def calibrate_unchecked(epsilon: float, delta: float, settings: Optional[CalibrationSettings] = None,
                        **keywords) -> DPQCalibration:
    """:func:`calibrate` without validating the arguments, for callers that validated them
    (``privcal.rl.dpq.agent.train_dpq``: :func:`check_target`, its Hyperparameters, its resets and variant):
    the same calibration. J != floor(T/B) still raises under "valid" (a premise, not a range check), and
    "corrected" is read as "valid" without a warning.

    Args:
        epsilon: target epsilon, a float in (0, MAX_EPSILON] (not checked).
        delta: target total delta, a float in (0, 1) (not checked).
        settings: the learner, J, m and the variant, a :class:`CalibrationSettings` (its values not checked);
            default None: built from ``keywords``.
        keywords: fields of :class:`CalibrationSettings` (not checked), replacing those of ``settings``; each is listed below.
        samples (T, an int >= 1), batch_size (B, in [1, samples]), lr (alpha > 0), lipschitz (L > 0),
        resets (J; must equal floor(T/B) for ``variant="valid"``: checked), actions (m; default 2),
        variant ("valid", default, or "paper"), update_clip (c; default :data:`DEFAULT_UPDATE_CLIP`),
        update_lipschitz (l; default :data:`DEFAULT_UPDATE_LIPSCHITZ`).

    Returns:
        a :class:`DPQCalibration` with ``feasible`` True.

    Raises:
        ValueError: J != floor(T/B) under the valid variant.
        InfeasibleError: the paper variant finds no k meeting every printed condition.
    """
    s = _settings("calibrate_unchecked", settings, keywords)
    return calibrate_learner_unchecked(epsilon, delta, s, s.resets, s.actions, VARIANT_ALIASES.get(s.variant, s.variant))


def calibrate_learner_unchecked(epsilon: float, delta: float, learner: LearnerShape, resets: int, actions: int,
                                variant: str) -> DPQCalibration:
    """:func:`calibrate_unchecked` at ``learner`` (T, B, alpha, L and the clips), inputs already checked
    (:func:`checked_inputs`).

    Args:
        epsilon: target epsilon, in (0, MAX_EPSILON] (not checked).
        delta: target total delta, in (0, 1) (not checked).
        learner: the learner's :class:`LearnerShape` (checked).
        resets: J (checked).
        actions: m (checked).
        variant: "valid" or "paper" (checked).

    Returns:
        the feasible :class:`DPQCalibration`.

    Raises:
        InfeasibleError: no setting meets every condition.
    """
    if variant == "valid":
        _fresh_noise(resets, learner.updates)
        result = _evaluate_valid(epsilon, delta, learner, resets, actions)
    else:
        result = _calibrate_paper(epsilon, delta, learner, resets, actions)
    if not result.feasible:  # the search and the final check disagree: never return it as feasible
        failed = "; ".join(name for name, met in result.conditions.items() if not met)
        raise InfeasibleError(f"calibration found no setting meeting every condition (not met: {failed})")
    return result


def check(epsilon: float, delta: float, settings: Optional[CalibrationSettings] = None, *, sigma: float,
          k: Optional[float] = None, beta: Optional[float] = None, **keywords) -> DPQCalibration:
    """Evaluate a given sigma (and k, for the paper) against the conditions of ``variant`` (no search).

    ``check(0.9, 1e-4, sigma=0.313, k=23, samples=5000, batch_size=64, lr=3e-4, lipschitz=4,
    resets=78)`` shows App. E.3's parameters failing Theorem 5's own condition 2k > 8.68 sqrt(beta) sigma.
    The paper variant splits delta in halves (App. E.3) and fixes beta = 1/v; the valid variant composes
    every release exactly at the whole delta with the sensitivities of ``update_clip`` (no k).

    Args:
        epsilon: target epsilon, in (0, MAX_EPSILON = 1e6].
        delta: target total delta, in (0, 1).
        sigma: scale of the Gaussian-process noise (absolute), in (0, inf).
        k: noise bound, in (0, inf); required by the paper variant, ignored by the valid one; default None.
        beta: kernel parameter beta of exp(-beta|x-y|), in (0, inf); default None: the paper's 1/v,
            v = 4 alpha (k+1)/B (paper), or l / c (valid, ``rkhs.restarted_minimizing_beta``). The paper
            variant always uses 1/v.
        settings: the learner, J, m and the variant, a :class:`CalibrationSettings`; default None: built from
            ``keywords`` (with variant :data:`CHECK_VARIANT` = "paper" unless they name one).
        keywords: fields of :class:`CalibrationSettings`, replacing those of ``settings``; each is listed below.
        samples: T, the number of samples processed, an int >= 1; required.
        batch_size: B, samples per update, an int in [1, samples]; required.
        lr: alpha, the learning rate, in (0, inf); required.
        lipschitz: L, the Lipschitz constant of the Q-function, in (0, inf); required.
        resets: J, the number of times the noise paths are redrawn, an int >= 1 (= floor(T/B) for valid);
            required.
        actions: m, noise paths per reset, an int >= 1; default 2.
        variant: "paper" (default, :data:`CHECK_VARIANT`) or "valid" ("corrected" is a deprecated alias of
            "valid").
        update_clip: c, the certified bound on one update's change of Q (sup norm, units of Q), in
            (0, inf); default 0.01. Used by the valid variant only.
        update_lipschitz: l, the certified bound on the Lipschitz constant of one update's change of Q
            (units of Q per unit state), in (0, inf); default 0.02. Used by the valid variant only.

    Returns:
        a :class:`DPQCalibration` whose ``feasible`` says whether every condition holds.

    Raises:
        ValueError: an argument is outside its range (or k is missing for the paper variant, or
            J != floor(T/B) for the valid one).
        TypeError: a keyword is no field of :class:`CalibrationSettings`, or a required one is missing.
    """
    if settings is None and "variant" not in keywords:
        keywords = {**keywords, "variant": CHECK_VARIANT}
    s = _settings("check", settings, keywords)
    epsilon, delta, learner, resets, actions, variant = checked_inputs(epsilon, delta, s, s.resets, s.actions,
                                                                       s.variant)
    sigma = V.positive("sigma", sigma)
    if variant == "paper":
        if k is None:
            raise ValueError("k is required by variant='paper' (the noise bound of Thm 5), got None")
        k = V.positive("k", k)
        return _evaluate_paper(epsilon, delta, k, learner, resets, actions, sigma=sigma)
    if beta is not None:
        beta = V.positive("beta", beta)
    return _evaluate_valid(epsilon, delta, learner, resets, actions, beta=beta, sigma=sigma)

#: The same report under the name every calibrator shares (``privcal.calibrate_report``,
#: ``privcal.calibrators.gpope.calibrate_report``): a :class:`DPQCalibration`.
calibrate_report = calibrate
