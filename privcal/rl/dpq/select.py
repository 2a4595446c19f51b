r"""Private selection over a public, finite policy class: a valid DP learner for the reward-function unit.

Under Wang & Hegde 2019's relation (reward functions with |r - r'|_inf <= 1 are neighbours) and rewards
in [0, 0.5], every two data sets are neighbours (``privcal.rl.units``): the guarantee must hold for any
change of the data, and a packing argument shows epsilon >= ln(K (p - delta)) is needed to output one of
K well-separated near-optimal policies with probability p. Selection over K public policies meets that
scale. :func:`train_select` does:

1. **Policy class** (public, data-independent): the K threshold policies pi_k(s) = right if s < tau_k else
   left, tau_k = (k + 1/2) / K, k = 0..K-1 (:func:`thresholds`). On the interval environment with reward
   peak theta, pi_k with tau_k nearest to theta is near-optimal.
2. **Scores** (the data): u_k = the mean return of pi_k over ``rollouts`` episodes run in the environment
   with the private reward, *clipped* to [0, R], R = r_max H = 0.5 x 50 = 25 (rewards lie in [0, 0.5],
   episodes have H = 50 steps, so the clip never binds on honest data; it is what the proof uses).
3. **Selection**, pure epsilon-DP for *any* change of the data (``selector``):

   * ``"randomized-response"`` (default): release k* = argmax_k u_k (first index on ties) with
     probability e^eps / (e^eps + K - 1), every other k with probability 1 / (e^eps + K - 1). Every
     output has probability in [1/(e^eps + K - 1), e^eps/(e^eps + K - 1)] whatever the data, so the
     ratio of any output's probabilities under two data sets is at most e^eps (Warner 1965; the K-ary
     form, Kairouz, Oh & Viswanath 2016, Sec. 3).
   * ``"exponential"``: P(k) proportional to exp(eps u_k / (2 Delta)). Sensitivity: for any two data
     sets D, D' and every k, |u_k(D) - u_k(D')| <= Delta = R, because both scores lie in [0, R] after the
     clip. Then P_D(k) / P_D'(k) <= e^(eps/2) e^(eps/2) (numerator and normaliser), i.e. eps-DP
     (McSherry & Talwar 2007, Thm 6; Dwork & Roth 2014, Thm 3.10).
   * ``"noisy-max"``: release argmax_k (u_k + Z_k), Z_k i.i.d. Laplace(2 Delta / eps). eps-DP for scores
     of sensitivity Delta that may move in different directions: fix Z_j (j != k); if k wins on D with
     Z_k = z, it wins on D' with Z_k = z + 2 Delta (its score drops at most Delta, the others rise at
     most Delta), and the Laplace density ratio over a shift 2 Delta is e^eps (Dwork & Roth 2014, Claim
     3.9, whose counting-query version needs only Laplace(1/eps)).

   All three are (eps, 0)-DP, hence (eps, delta)-DP for every delta: ``delta`` is recorded, not used.
4. **Release and evaluation**: the released policy is pi_k; ``policy_return`` is its expected return
   per episode for the same reward, by simulation (``evaluation_episodes`` episodes, seed
   ``[seed, 11]``), with its standard error. The evaluation reads the private reward and is not covered
   by the guarantee (a reference number for the user, like the training curves of the other learners).

The guarantee covers any change of the data, so it also covers any finer unit (one transition or one
episode of the rollouts): ``privacy_unit`` may name it, and the guarantee says it is the stronger one.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Optional

import numpy as np
from numpy.typing import ArrayLike

from privcal import _rng
from privcal import _validate as V
from privcal.rl import envs
from privcal.rl.units import check_unit, describe

__all__ = ["SELECTORS", "PROTECTED_UNITS", "SCORE_RANGE", "SelectSettings", "SelectResult", "thresholds", "clip_scores",
           "selection_probabilities", "select", "train_select"]

SELECTORS = ("randomized-response", "exponential", "noisy-max")
#: units the selection protects: any change of the data (reward function), hence any finer unit too
PROTECTED_UNITS = ("reward-function", "transition", "episode")
#: R: a score (mean return of a threshold policy) lies in [0, R] = [0, 0.5 x 50]: rewards in [0, 0.5], H = 50
SCORE_RANGE = 0.5 * envs.EPISODE_STEPS


@dataclass(frozen=True)
class SelectSettings:
    """What :func:`train_select` reads besides its target epsilon (defaults in one place: here;
    :func:`train_select` checks the values).

    Attributes:
        delta: target delta, in (0, 1), or None (default); recorded only (the selection is pure eps-DP).
        selector: one of :data:`SELECTORS`; default "randomized-response".
        policies: K, the number of threshold policies, an int >= 2; default 40.
        samples: environment steps the scores may use, an int >= K x 50 (one episode per policy); the
            rollouts per policy are floor(samples / (50 K)); default 20000 (10 episodes per policy).
        peak: the reward's peak theta in [0, 1], or None (default) to draw it from ``seed``
            (``privcal.rl.envs.draw_peak``, the random-peak variant).
        privacy_unit: "reward-function" (default: any change of the data), "transition" or "episode"
            (covered too, being finer).
        evaluation_episodes: episodes simulated to estimate ``policy_return``, an int >= 2; default 2000.
        seed: seed of the rollouts, the mechanism and the evaluation, an int >= 0; default 0.
    """

    delta: Optional[float] = None
    selector: str = "randomized-response"
    policies: int = 40
    samples: int = 20000
    peak: Optional[float] = None
    privacy_unit: str = "reward-function"
    evaluation_episodes: int = 2000
    seed: int = 0


@dataclass(frozen=True)
class SelectResult:
    """What :func:`train_select` released and measured.

    ``chosen`` is the released policy's index, ``threshold`` its tau; ``scores`` the clipped scores (private
    data: not covered by the guarantee, reported for inspection); ``policy_return`` and
    ``policy_return_se`` the released policy's expected return per episode and its standard error over
    ``evaluation_episodes`` simulated episodes; ``peak`` the reward's theta.
    """

    method: str
    selector: str
    privacy_unit: str
    epsilon: float
    delta: Optional[float]
    policies: int
    rollouts: int
    samples: int
    chosen: int
    threshold: float
    peak: float
    policy_return: float
    policy_return_se: float
    evaluation_episodes: int
    scores: tuple = field(repr=False, default=())
    seed: Optional[int] = 0
    guarantee: str = ""

    def to_dict(self) -> dict:
        """JSON-ready summary (what ``privcal train dpq --method select --format json`` prints)."""
        return {"method": self.method, "selector": self.selector, "privacy_unit": self.privacy_unit,
                "privacy_unit_description": describe(self.privacy_unit), "epsilon": self.epsilon,
                "delta": self.delta, "guarantee": self.guarantee, "policies": self.policies,
                "rollouts_per_policy": self.rollouts, "samples": self.samples, "chosen": self.chosen,
                "threshold": self.threshold, "peak": self.peak, "policy_return": self.policy_return,
                "policy_return_se": self.policy_return_se, "evaluation_episodes": self.evaluation_episodes,
                "score_range": SCORE_RANGE, "seed": self.seed}


def thresholds(policies: int = 40) -> np.ndarray:
    """tau_k = (k + 1/2) / K, k = 0..K-1: the public threshold policies (right below tau, left from tau on).

    Args:
        policies: K, an int >= 2; default 40.

    Returns:
        the K thresholds, increasing, in (0, 1).
    """
    k = V.positive_int("policies", policies)
    if k < 2:
        raise ValueError(f"policies must be an integer >= 2 (a selection needs two), got {policies!r}")
    return (np.arange(k) + 0.5) / k


def clip_scores(scores: ArrayLike) -> np.ndarray:
    """Scores clipped to [0, :data:`SCORE_RANGE`], the range the sensitivity Delta = R is proved for.

    Args:
        scores: one finite score per policy.

    Raises:
        ValueError: a score is not finite.
    """
    u = np.asarray(scores, dtype=float).ravel()
    if u.size < 2 or not np.all(np.isfinite(u)):
        raise ValueError(f"scores must be at least 2 finite numbers, got {scores!r}")
    return np.clip(u, 0.0, SCORE_RANGE)


def selection_probabilities(scores: ArrayLike, epsilon: float, selector: str = "randomized-response") -> np.ndarray:
    """Exact output probabilities of the randomized-response or exponential selection on (clipped) scores.

    Args:
        scores: one finite score per policy (clipped here to [0, R]).
        epsilon: the privacy parameter, in (0, inf).
        selector: "randomized-response" (default) or "exponential" (noisy-max has no closed form).

    Returns:
        P(release k) for every k, summing to 1.

    Raises:
        ValueError: an argument is outside its range.
    """
    V.choice("selector", selector, SELECTORS[:2])
    return _probabilities(clip_scores(scores), V.positive("epsilon", epsilon), selector)


def _probabilities(u, eps, selector) -> np.ndarray:
    k = u.size
    if selector == "randomized-response":
        # e^eps / (e^eps + K - 1) written as 1 / (1 + (K - 1) e^-eps): no overflow at large eps
        top = 1.0 / (1.0 + (k - 1) * math.exp(-eps))
        p = np.full(k, (1.0 - top) / (k - 1))
        p[int(np.argmax(u))] = top
        return p
    logits = eps * u / (2.0 * SCORE_RANGE)
    w = np.exp(logits - logits.max())
    return w / w.sum()


def select(scores: ArrayLike, epsilon: float, selector: str = "randomized-response", *, seed: _rng.Seed = 0) -> int:
    """Release one index by eps-DP selection on the scores (clipped to [0, R]); see the module docstring.

    Args:
        scores: one finite score per policy.
        epsilon: the privacy parameter, in (0, inf).
        selector: one of :data:`SELECTORS`; default "randomized-response".
        seed: the mechanism's randomness (``privcal._rng``); default 0.

    Returns:
        the released index.

    Raises:
        ValueError: an argument is outside its range.
    """
    V.choice("selector", selector, SELECTORS)
    return _select(clip_scores(scores), V.positive("epsilon", epsilon), selector, _rng.as_generator(seed, "seed"))


def _select(u, eps, selector, rng) -> int:
    if selector == "noisy-max":
        return int(np.argmax(u + rng.laplace(0.0, 2.0 * SCORE_RANGE / eps, u.size)))
    return int(rng.choice(u.size, p=_probabilities(u, eps, selector)))


def train_select(settings: Optional[SelectSettings] = None, *, epsilon: float, **keywords) -> SelectResult:
    """Private selection of a threshold policy on the interval environment; see the module docstring.

    Args:
        settings: the run's :class:`SelectSettings`; default None: built from ``keywords``.
        epsilon: target epsilon, in (0, inf).
        keywords: fields of :class:`SelectSettings`, replacing those of ``settings``; each is listed below.
{keywords}

    Returns:
        the :class:`SelectResult`.

    Raises:
        ValueError: an argument is outside its range.
        TypeError: a keyword is no field of :class:`SelectSettings`.
    """
    run = V.settings_with("train_select", SelectSettings, settings, keywords)
    delta, selector, samples = run.delta, run.selector, run.samples
    eps = V.positive("epsilon", epsilon)
    if delta is not None:
        V.open_unit("delta", delta)
    V.choice("selector", selector, SELECTORS)
    unit = check_unit(run.privacy_unit, PROTECTED_UNITS, "select")
    taus = thresholds(run.policies)
    k = taus.size
    t = V.positive_int("samples", samples)
    rollouts = t // (envs.EPISODE_STEPS * k)
    if rollouts < 1:
        raise ValueError(f"samples must be at least {envs.EPISODE_STEPS * k} (one episode of {envs.EPISODE_STEPS} "
                         f"steps per policy, {k} policies), got {samples!r}")
    n_eval, seed, theta = envs.run_inputs(run.evaluation_episodes, run.seed, run.peak)
    return _train_select(_Selection(eps, delta, selector, unit, taus, rollouts), theta, n_eval, int(seed))


train_select.__doc__ = train_select.__doc__.replace("{keywords}", V.keyword_docs(SelectSettings))


@dataclass(frozen=True)
class _Selection:
    """The checked private choice of :func:`_train_select`: the target, the selector, the privacy unit, the
    public threshold candidates and the rollouts each gets."""

    eps: float
    delta: Optional[float]
    selector: str
    unit: str
    taus: np.ndarray
    rollouts: int


def _train_select(selection: _Selection, theta, n_eval, seed) -> SelectResult:
    eps, delta, selector, unit = selection.eps, selection.delta, selection.selector, selection.unit
    taus, rollouts = selection.taus, selection.rollouts
    k = taus.size
    per_episode = np.repeat(taus, rollouts)  # episode i runs policy i // rollouts
    returns = envs.episode_returns(lambda s: (s < per_episode).astype(np.intp), theta, episodes=k * rollouts,
                                   seed=[seed, 9])
    u = clip_scores(returns.reshape(k, rollouts).mean(axis=1))
    chosen = _select(u, eps, selector, _rng.as_generator([seed, 10]))
    tau = float(taus[chosen])
    value, se = envs.policy_return(lambda s: (s < tau).astype(np.intp), theta, episodes=n_eval, seed=[seed, 11])
    finer = "" if unit == "reward-function" else f", which includes one {unit} changed"
    guarantee = (f"({eps:g}, 0)-DP for any change of the data (reward-function unit{finer}): {selector} "
                 f"selection over {k} public threshold policies, scores clipped to [0, {SCORE_RANGE:g}]; pure "
                 f"epsilon-DP, so (epsilon, delta)-DP for every delta")
    return SelectResult("select", selector, unit, eps, delta, k, rollouts, k * rollouts * envs.EPISODE_STEPS,
                        chosen, tau, theta, value, se, n_eval, tuple(float(x) for x in u), seed, guarantee)
