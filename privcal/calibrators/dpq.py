r"""End-to-end noise calibration for DP Q-learning with functional noise (Wang & Hegde 2019).

Theorem 5 makes Algorithm 1 (epsilon, delta_composition + delta_tail)-DP when three things hold at once:

1. the T/B updates, each a Gaussian-process release with RKHS sensitivity D(k, beta), compose to
   (epsilon, delta_composition) — sigma grows with D, which grows with k through v = 4 alpha (k+1)/B;
2. every noise path stays within [-k, k] except with probability delta_tail (Lemma 8) — which needs k
   large compared with sqrt(beta) sigma;
3. the conditions under which those two bounds hold.

So sigma depends on k and the failure term depends on sigma: :func:`calibrate` solves this coupled
system for the smallest sigma, and raises :class:`~privcal.errors.InfeasibleError` naming the binding
condition when no k works.

``variant="corrected"`` (default) uses only valid pieces:

* sensitivity ``privcal.rkhs.update_sensitivity_squared`` = (1 + beta/2)(vL)^2 + (2L)^2/(2 beta)
  (Q - Q' is 2L-Lipschitz, not L), with the kernel beta searched (the paper fixes beta = 1/v);
* composition by the exact Gaussian profile of the composed GP releases (Balle & Wang 2018; the
  GP mechanism is a Gaussian mechanism with mu = D/sigma, Wang & Hegde Prop. 4), floor(T/B) updates,
  calibrated by the exact accountant (``ExactAccountant._sigma_for``, its closed form);
* failure term ``privcal.supremum.thm5_failure``: both tails of each of the J x m paths (J resets,
  m actions), Borell-TIS with the variance sigma^2, the Lemma 8 series constant (8.6838...),
  valid for k > c sqrt(beta) sigma;
* the delta split between the two terms searched on a grid.

``variant="paper"`` applies the paper's formulas literally, but solves them consistently: sigma from the
theorem statement (C = (v^2+v)L^2 outside the square root, T/B releases, delta/2 as in App. E.3),
beta = 1/v, the failure term of App. E.3 1 - (1 - exp(-(2k - 8.68 sqrt(beta) sigma)^2/2))^J with its
condition 2k > 8.68 sqrt(beta) sigma, k an integer. App. E.3's own answer (k = 23, sigma = 0.313)
violates that condition; :func:`check` reports which conditions a given (k, sigma) meets.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Optional

import numpy as np

from .. import _validate as V
from .. import composition, gaussian, rkhs, supremum
from ..accounting.accountants import ExactAccountant
from ..accounting.events import Neighbouring, Releases
from ..errors import InfeasibleError

__all__ = ["DPQCalibration", "calibrate", "check", "VARIANTS"]

VARIANTS = ("corrected", "paper")

_K_GRID = np.geomspace(1e-3, 1e9, 3000)  # candidate noise bounds k (refined by bisection)
# candidate fractions of delta given to the failure term
_SPLITS = np.concatenate([np.geomspace(1e-5, 0.02, 23, endpoint=False), np.linspace(0.02, 0.98, 25)])
_BETA_FACTORS = np.geomspace(1.0 / 64, 64.0, 49)  # beta = factor / v, searched in the corrected variant
_PAPER_K_MAX = 10**6


@dataclass(frozen=True)
class DPQCalibration:
    """Result of :func:`calibrate` / :func:`check`: a noise scale, its noise bound k, kernel beta and
    delta split, and every condition of the analysis checked at them.

    Attributes:
        sigma: scale of the Gaussian-process noise of each update (absolute, the GP is
            GP(0, sigma^2 exp(-beta |x - y|))), in (0, inf).
        k: noise bound: every noise path is assumed to stay in [-k, k] (Lemma 8), in (0, inf); an
            integer for ``variant="paper"``.
        beta: kernel parameter beta of exp(-beta |x - y|), in (0, inf).
        delta_composition: the part of ``delta`` spent on composing the updates, in (0, delta).
        delta_tail: probability that some noise path leaves [-k, k] (the failure term), in [0, 1]
            (1.0 when its condition fails).
        feasible: True when every entry of ``conditions`` holds.
        accountant: how the composition was priced: "exact" (ExactAccountant) or the paper's
            statement form.
        variant: "corrected" or "paper".
        epsilon: target epsilon, in (0, inf).
        delta: target total delta (composition + failure term), in (0, 1).
        sensitivity: RKHS-norm sensitivity of one update, in (0, inf).
        updates: number of composed updates: floor(T/B) (corrected) or T/B as printed (paper).
        resets: J, the number of times the noise paths are redrawn, an int >= 1.
        actions: m, noise paths per reset (one per action), an int >= 1.
        conditions: condition (in words) -> whether it holds at (sigma, k, beta).
        notes: what was used, in words.
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


def _inputs(epsilon, delta, samples, batch_size, lr, lipschitz, resets, actions, variant):
    """The arguments of :func:`calibrate` / :func:`check`, validated once (each names the user's argument)."""
    epsilon = V.positive("epsilon", epsilon)
    delta = V.open_unit("delta", delta)
    samples, batch_size = V.samples_and_batch(samples, batch_size)
    lr = V.positive("lr", lr)
    lipschitz = V.positive("lipschitz", lipschitz)
    resets = V.positive_int("resets", resets)
    actions = V.positive_int("actions", actions)
    V.choice("variant", variant, VARIANTS)
    return epsilon, delta, samples, batch_size, lr, lipschitz, resets, actions


# ---------------------------------------------------------------------------------------------------
# corrected variant


def _z_tail(delta_tail: float, paths: int) -> float:
    """Smallest margin/sigma z with 1 - (1 - 2 exp(-z^2/2))^paths <= delta_tail."""
    p = -math.expm1(math.log1p(-delta_tail) / paths)  # per-path budget
    return math.sqrt(2.0 * math.log(2.0 / p)) if p < 2.0 else 0.0


def _sigma_and_ratio(k, factor, *, mu_star, updates, lr, batch_size, lipschitz, c):
    """sigma(k) and (k - c sqrt(beta) sigma)/sigma for beta = factor/v (broadcasts over k and factor)."""
    v = 4.0 * lr * (k + 1.0) / batch_size
    beta = factor / v
    d2 = (1.0 + beta / 2.0) * (v * lipschitz) ** 2 + (2.0 * lipschitz) ** 2 / (2.0 * beta)
    sigma = math.sqrt(updates) * np.sqrt(d2) / mu_star
    return sigma, (k - c * np.sqrt(beta) * sigma) / sigma


def _corrected_for(mu_star, delta_tail, paths, **kw):
    """Smallest sigma over (k, beta) for one delta split: (sigma, k, factor) or None.

    On the k grid x beta-factor grid, the first feasible k of each factor; the best factor's k is
    then refined by bisection (the margin ratio increases through the first crossing)."""
    z = _z_tail(delta_tail, paths)
    sig, ratio = _sigma_and_ratio(_K_GRID[None, :], _BETA_FACTORS[:, None], mu_star=mu_star, **kw)
    ok = ratio >= z
    if not ok.any():
        return None
    first = np.where(ok.any(axis=1), ok.argmax(axis=1), -1)
    rows = np.nonzero(first >= 0)[0]
    j = rows[np.argmin(sig[rows, first[rows]])]
    i, factor = first[j], _BETA_FACTORS[j]
    lo, hi = (_K_GRID[i - 1] if i > 0 else 0.0), _K_GRID[i]
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        if _sigma_and_ratio(mid, factor, mu_star=mu_star, **kw)[1] >= z:
            hi = mid
        else:
            lo = mid
    hi = hi * (1.0 + 1e-9)  # a hair inside the feasible side, so the exact re-check agrees
    sigma, _ = _sigma_and_ratio(hi, factor, mu_star=mu_star, **kw)
    return float(sigma), float(hi), float(factor)


def _calibrate_corrected(epsilon, delta, samples, batch_size, lr, lipschitz, resets, actions):
    updates = samples // batch_size
    kw = dict(updates=updates, lr=lr, batch_size=batch_size, lipschitz=lipschitz, c=supremum.LEMMA8_CONSTANT)
    best = None
    for f in _SPLITS:
        delta_tail = f * delta
        delta_comp = delta - delta_tail
        found = _corrected_for(gaussian._mu_exact(epsilon, delta_comp), delta_tail, resets * actions, **kw)
        if found and (best is None or found[0] < best[0]):
            best = (*found, delta_comp)
    if best is None:
        raise InfeasibleError(
            "no noise bound k satisfies k > c*sqrt(beta)*sigma with the tail probability within delta: "
            "sigma grows with k through the sensitivity as fast as k itself (binding condition: Lemma 8 "
            "tail, k - c sqrt(beta) sigma >= z sigma); raise epsilon or delta, or lower lr * L / B"
        )
    _, k, factor, delta_comp = best
    beta = factor / rkhs._v_parameter(lr, k, batch_size)
    return _evaluate_corrected(epsilon, delta, k, beta, delta_comp, samples, batch_size, lr, lipschitz, resets, actions)


def _evaluate_corrected(epsilon, delta, k, beta, delta_comp, samples, batch_size, lr, lipschitz, resets, actions,
                        sigma=None):
    """Check every condition of the corrected analysis at (k, beta, sigma) with the library functions."""
    updates = samples // batch_size
    d = math.sqrt(rkhs._update_sensitivity_squared(lr, k, batch_size, lipschitz, beta=beta))
    releases = Releases._unchecked(d, updates, 1.0, "poisson", Neighbouring.ADD_REMOVE)
    if sigma is None:
        sigma = ExactAccountant()._sigma_for(releases, epsilon, delta_comp)
    eps_comp = ExactAccountant()._compose(releases.event(sigma))._epsilon(delta_comp)
    cond_tail = supremum._thm5_condition(k, beta, sigma)
    delta_tail = supremum._thm5_failure(k, beta, sigma, resets, actions=actions) if cond_tail else 1.0
    conditions = {
        "composition: exact epsilon <= target": bool(eps_comp <= epsilon),
        "Lemma 8 (valid): k > c sqrt(beta) sigma": bool(cond_tail),
        "delta_composition + delta_tail <= delta": bool(delta_comp + delta_tail <= delta),
    }
    return DPQCalibration(
        sigma=float(sigma), k=float(k), beta=float(beta), delta_composition=float(delta_comp),
        delta_tail=float(delta_tail), feasible=all(conditions.values()), accountant="exact",
        variant="corrected", epsilon=epsilon, delta=delta, sensitivity=d, updates=updates,
        resets=resets, actions=actions, conditions=conditions,
        notes=(
            f"sensitivity: valid (1 + beta/2)(vL)^2 + (2L)^2/(2 beta), beta = {beta:.6g}",
            f"composition: exact Gaussian profile over {updates} updates",
            f"failure term: both tails, {resets} resets x {actions} actions paths, c = {supremum.LEMMA8_CONSTANT:.6f}",
        ),
    )


# ---------------------------------------------------------------------------------------------------
# paper variant


def _paper_sigma(epsilon, delta_comp, k, samples, batch_size, lr, lipschitz):
    c = rkhs._update_sensitivity_squared_paper(lr, k, batch_size, lipschitz)
    return composition._thm5_sigma_statement_paper(epsilon, delta_comp, steps=samples / batch_size, c=c)


def _evaluate_paper(epsilon, delta, k, samples, batch_size, lr, lipschitz, resets, actions, sigma=None):
    delta_comp = delta / 2.0  # App. E.3 splits 1e-4 as 5e-5 + 5e-5
    beta = rkhs._kernel_beta_thm5(lr, k, batch_size)
    if sigma is None:
        sigma = _paper_sigma(epsilon, delta_comp, k, samples, batch_size, lr, lipschitz)
    cond = supremum._thm5_condition_paper(k, beta, sigma)
    delta_tail = supremum._thm5_failure_e3_paper(k, beta, sigma, resets) if cond else 1.0
    c = rkhs._update_sensitivity_squared_paper(lr, k, batch_size, lipschitz)
    conditions = {
        "Thm 5: 2k > 8.68 sqrt(beta) sigma": bool(cond),
        "Thm 5 (statement): sigma >= sqrt(2 T/B ln(e + eps/delta)) C / eps": bool(
            sigma >= _paper_sigma(epsilon, delta_comp, k, samples, batch_size, lr, lipschitz)
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


def _calibrate_paper(epsilon, delta, samples, batch_size, lr, lipschitz, resets, actions):
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
        r = _evaluate_paper(epsilon, delta, int(k[i]), samples, batch_size, lr, lipschitz, resets, actions)
        if r.feasible:
            return r
    raise InfeasibleError(
        f"no integer k <= {_PAPER_K_MAX} satisfies Thm 5's 2k > 8.68 sqrt(beta) sigma together with "
        "App. E.3's delta_g <= delta/2 (sqrt(beta) sigma grows like k^1.5 for large k)"
    )


# ---------------------------------------------------------------------------------------------------
# public


def calibrate(
    epsilon: float,
    delta: float,
    *,
    samples: int,
    batch_size: int,
    lr: float,
    lipschitz: float,
    resets: int,
    actions: int = 2,
    variant: str = "corrected",
) -> DPQCalibration:
    """Smallest sigma (with its k, beta and delta split) making Algorithm 1 (epsilon, delta)-DP.

    What it calibrates: the scale sigma of the Gaussian-process noise GP(0, sigma^2 exp(-beta|x-y|))
    added to each Q-update of DP Q-learning with functional noise, together with the noise bound k, the
    kernel beta and the split of ``delta`` between composition and the Lemma 8 failure term. With
    ``variant="corrected"`` the composition is priced by the exact accountant: the returned sigma is
    ``ExactAccountant._sigma_for`` of the floor(T/B) updates at the solved (k, beta) (its closed form,
    evaluated vectorised over the k grid during the search). With ``variant="paper"`` sigma is the
    statement form of Thm 5 (``composition.thm5_sigma_statement_paper``), a closed form and no
    accountant. Every condition is re-checked after the search. Source: Wang & Hegde 2019, Thm 5,
    Lemma 8, App. E.3; see the module docstring for what ``variant`` changes.

    Args:
        epsilon: target epsilon, in (0, inf).
        delta: target total delta (composition + noise-bound failure), in (0, 1).
        samples: T, the number of samples processed, an int >= 1 (floor(T/B) updates).
        batch_size: B, samples per update, an int in [1, samples].
        lr: alpha, the learning rate, in (0, inf).
        lipschitz: L, the Lipschitz constant of the Q-function, in (0, inf).
        resets: J, the number of times the noise paths are redrawn, an int >= 1.
        actions: m, the number of actions (one noise path each), an int >= 1; default 2.
        variant: "corrected" (default: valid sensitivity, exact composition, valid Lemma 8 tail) or
            "paper" (the paper's formulas literally, solved consistently).

    Returns:
        a :class:`DPQCalibration` with ``feasible`` True; its ``conditions`` list every condition checked.

    Raises:
        ValueError: an argument is outside its range.
        InfeasibleError: no k meets every condition (the message names the binding one).
    """
    epsilon, delta, samples, batch_size, lr, lipschitz, resets, actions = _inputs(
        epsilon, delta, samples, batch_size, lr, lipschitz, resets, actions, variant
    )
    return _calibrate(epsilon, delta, samples=samples, batch_size=batch_size, lr=lr, lipschitz=lipschitz,
                      resets=resets, actions=actions, variant=variant)


def _calibrate(
    epsilon: float,
    delta: float,
    *,
    samples: int,
    batch_size: int,
    lr: float,
    lipschitz: float,
    resets: int,
    actions: int = 2,
    variant: str = "corrected",
) -> DPQCalibration:
    """:func:`calibrate` for validated inputs (privcal's own callers, e.g. the dpq table)."""
    solve = _calibrate_corrected if variant == "corrected" else _calibrate_paper
    result = solve(epsilon, delta, samples, batch_size, lr, lipschitz, resets, actions)
    if not result.feasible:  # the search and the final check disagree: never return it as feasible
        raise InfeasibleError(f"calibration found no k meeting every condition: {result.conditions}")
    return result


def check(
    epsilon: float,
    delta: float,
    *,
    sigma: float,
    k: float,
    samples: int,
    batch_size: int,
    lr: float,
    lipschitz: float,
    resets: int,
    actions: int = 2,
    variant: str = "paper",
    beta: Optional[float] = None,
) -> DPQCalibration:
    """Evaluate a given (sigma, k) against the conditions of ``variant`` (no search).

    ``check(0.9, 1e-4, sigma=0.313, k=23, samples=5000, batch_size=64, lr=3e-4, lipschitz=4,
    resets=78)`` shows App. E.3's parameters failing Theorem 5's own condition 2k > 8.68 sqrt(beta) sigma.
    The paper variant splits delta in halves (App. E.3) and fixes beta = 1/v; the corrected variant
    also splits delta in halves and checks the composition with the exact accountant.

    Args:
        epsilon: target epsilon, in (0, inf).
        delta: target total delta, in (0, 1).
        sigma: scale of the Gaussian-process noise (absolute), in (0, inf).
        k: noise bound, in (0, inf).
        samples: T, the number of samples processed, an int >= 1.
        batch_size: B, samples per update, an int in [1, samples].
        lr: alpha, the learning rate, in (0, inf).
        lipschitz: L, the Lipschitz constant of the Q-function, in (0, inf).
        resets: J, the number of times the noise paths are redrawn, an int >= 1.
        actions: m, noise paths per reset, an int >= 1; default 2.
        variant: "paper" (default) or "corrected".
        beta: kernel parameter beta of exp(-beta|x-y|), in (0, inf); default None: Thm 5's 1/v,
            v = 4 alpha (k+1)/B. Used by the corrected variant only (the paper fixes beta = 1/v).

    Returns:
        a :class:`DPQCalibration` whose ``feasible`` says whether every condition holds.

    Raises:
        ValueError: an argument is outside its range.
    """
    epsilon, delta, samples, batch_size, lr, lipschitz, resets, actions = _inputs(
        epsilon, delta, samples, batch_size, lr, lipschitz, resets, actions, variant
    )
    sigma = V.positive("sigma", sigma)
    k = V.positive("k", k)
    if variant == "paper":
        return _evaluate_paper(epsilon, delta, k, samples, batch_size, lr, lipschitz, resets, actions, sigma=sigma)
    beta = rkhs._kernel_beta_thm5(lr, k, batch_size) if beta is None else V.positive("beta", beta)
    return _evaluate_corrected(
        epsilon, delta, k, beta, delta / 2.0, samples, batch_size, lr, lipschitz, resets, actions, sigma=sigma
    )
