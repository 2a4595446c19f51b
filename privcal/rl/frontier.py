r"""The privacy-utility frontier: utility against epsilon and the amount of data, valid and paper noise.

:func:`frontier` sweeps the target epsilon and the amount of data for one agent, trains a few seeds per
point in parallel (:func:`privcal.rl._parallel.run_trials`: all local cores by default, or a Dask
cluster), and reports per point the mean and standard deviation of the utility over seeds beside two
references at the same amount of data: the **trivial** policy or predictor, which any useful method must
beat, and the **non-private** baseline (the same learner without noise). Each point says whether it
beats the trivial reference with the stated confidence (:func:`beats_reference`, one-sided Student t over
seeds, its p-value :func:`one_sided_p_value`), alone and after Holm's step-down correction over the epsilon
grid of its (variant, amount) line (:func:`holm`, :data:`CORRECTION`): "the first epsilon that beats"
(:meth:`Frontier.first_beating`) is read across the grid, so it uses the corrected verdict.

Every epsilon is in its point's own privacy unit. A point whose unit is finer than one user (dpq's transition:
one transition of a user's 50-step episode) also carries the user-level epsilon, one user's whole episode
(``privcal.accounting.groups.group_epsilon``, as ``privcal train dpq --method fqi-dpsgd --privacy-unit
transition`` prints it); :func:`plot_frontier` draws one panel per unit, each x axis naming it.

=========  ============================  ===============================  ============================
agent      amount of data                utility (per seed)               trivial reference
=========  ============================  ===============================  ============================
``dpq``    samples T (environment        released greedy policy's return  best data-independent policy
           steps), random-peak interval  per episode (500 simulated       in expectation over theta
           env (default)                 episodes; select, fqi: 2000)     (``envs.trivial_return``)
``dpq``    samples T, fixed interval     return per episode, mean of the  random policy (exact
           env ("fixed" environment)     last 10 episodes, higher better   simulation, its std. error)
``gpope``  trajectories m (chain,        MSPBE on an independent sample   theta = 0 (exact)
           N = m iterations)             (lower better)
``pucb``   episodes T (tabular MDP)      cumulative regret / T, exact     uniform policy: rho* -
                                         (lower better)                   rho^uniform (exact)
=========  ============================  ===============================  ============================

Noise per variant (labelled everywhere; ``variant="all"``, the default, runs every variant of the agent,
``"both"`` runs valid and paper). Every point names its privacy unit (``privacy_unit``, ``privcal.rl.units``):

* dpq on the random-peak environment (the default; theta ~ U[0, 1] drawn from each seed, so a data-independent
  policy cannot be optimal) also runs the valid learners: ``"select"`` (``privcal.rl.dpq.select``,
  randomized response over 40 threshold policies, pure epsilon-DP, unit reward-function), ``"fqi-transition"``
  and ``"fqi-episode"`` (``privcal.rl.dpq.fqi_dpsgd``, DP-SGD fitted-Q iteration on floor(T/50) episodes of
  random-behaviour data, units transition and episode). The non-private reference is fitted-Q without noise;
  "optimum" is the threshold policy at each seed's theta. Algorithm 1 ("valid", "paper") is evaluated by its
  released greedy policy (the last released function, Q + the last noise path).

* ``"valid"``: dpq - ``privcal.rl.dpq.agent.train_dpq(variant="valid")`` (the calibrator's valid
  analysis at the certified update clip; every run checks its premises, and a point whose run broke a
  premise says so); gpope - ``privcal.calibrators.gpope.calibrate`` with
  ``privcal.rl.gpope.agent.VALID_BOUND``; pucb - Laplace counters, ``budget_split="valid"``,
  ``error_bound="valid"`` (epsilon-JDP).
* ``"gaussian"`` (pucb only): Gaussian binary-mechanism counters (``counter_noise="gaussian"``, sigma
  calibrated on the l2 sensitivity sqrt(6HL) with the exact Gaussian profile, E the union bound of the
  Gaussian tails): a valid (epsilon, delta)-JDP guarantee, delta from ``delta`` (default 1e-5).
* ``"paper"``: the paper's sigma, no valid guarantee: dpq - ``privcal.rl.dpq.experiments.noise_for``
  version "paper" (App. E.3's printed sigma where it exists, else the paper's formulas solved); gpope -
  ``gpope_agent.PAPER_BOUND`` (Lemma 1 as printed); pucb - the paper's budget split and error bound E.

A calibration that does not exist (``InfeasibleError``) gives a point with no values and the reason in
``infeasible``; it is reported, never dropped. GPOPE's step sizes are tuned on public data (an
independent sample, ``privcal.rl.gpope.experiments.tune_step_size``), per (variant, epsilon, m).
Every task is seeded by its arguments (dpq: the seed; gpope: the data set ``SeedSequence([0, 1, m, seed])``,
shared by every variant and epsilon, and a noise stream keyed by (m, seed, variant, epsilon); pucb: the
seed, on one fixed MDP), so the frontier does not depend on ``n_jobs``, the backend or the other points of
the sweep.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from typing import Any, Optional

import numpy as np
from numpy.typing import ArrayLike

from privcal import _validate as V
from privcal.errors import InfeasibleError
from privcal.rl._parallel import run_trials_unchecked, check_engine

__all__ = ["AGENTS", "VARIANTS", "AGENT_VARIANTS", "VARIANT_CHOICES", "SETTINGS", "USER_UNITS", "CORRECTION",
           "FrontierPoint", "Frontier", "beats_reference", "one_sided_p_value", "holm", "holm_over_grid", "frontier",
           "panels", "plot_frontier"]

AGENTS = ("dpq", "gpope", "pucb")
#: Noise variants shared by every agent; ``frontier(variant="both")`` runs both.
VARIANTS = ("valid", "paper")
#: Every variant of each agent, in table order; ``frontier(variant="all")`` (default) runs them. PUCB's
#: "gaussian" is valid, with Gaussian counters and an (epsilon, delta)-JDP guarantee.
AGENT_VARIANTS = {"dpq": ("select", "fqi-transition", "fqi-episode", "valid", "paper"), "gpope": ("valid", "paper"),
                  "pucb": ("valid", "gaussian", "paper")}
#: dpq's valid learners (privcal.rl.dpq.select, privcal.rl.dpq.fqi_dpsgd): random-peak environment only
DPQ_LEARNERS = ("select", "fqi-transition", "fqi-episode")
#: dpq environments: "random-peak" (default: theta drawn per seed, privcal.rl.envs.draw_peak) or "fixed" (App. E.1)
ENVIRONMENTS = ("random-peak", "fixed")
_ORDER = ("select", "fqi-transition", "fqi-episode", "valid", "gaussian", "paper")
#: every value of ``frontier(variant=...)``: a variant of ``AGENT_VARIANTS``, "both" or "all"
VARIANT_CHOICES = ("valid", "paper", "gaussian", "select", "fqi-transition", "fqi-episode", "both", "all")
#: the privacy unit of each (agent, variant)
_UNITS = {"dpq": {"select": "reward-function", "fqi-transition": "transition", "fqi-episode": "episode",
                  "valid": "reward-function", "paper": "reward-function"},
          "gpope": {"valid": "trajectory", "paper": "trajectory"},
          "pucb": {"valid": "episode", "gaussian": "episode", "paper": "episode"}}
#: the unit of one user, per agent: a user contributes one 50-step episode (dpq, pucb) or one trajectory (gpope).
#: A point whose unit is finer than the user (dpq's "transition") reports the user-level epsilon beside its own.
USER_UNITS = {"dpq": "episode", "gpope": "trajectory", "pucb": "episode"}
#: units that cover one user's whole contribution: the user-level epsilon is the point's own (upper bound)
_COVERS_USER = ("episode", "trajectory", "reward-function")
#: what the "beats" of each frontier line is corrected for, in words (every output says it)
CORRECTION = ("Holm (1979) step-down over the epsilon grid of each (variant, amount) line: the family-wise error "
              "of the line's 'beats' claims is at most 1 - confidence")
_EVAL_EPISODES = 500  # dpq, random-peak: simulated episodes per released policy (seed [seed, 31])
_LAST = 10  # dpq: episodes averaged per seed

#: Default sweeps per agent and setting: "fast" (minutes on 2 cores) and "paper" (the papers' sizes).
SETTINGS = {
    "dpq": {
        "fast": {"epsilons": (0.9, 3.0, 5.0, 7.0, 10.0, 100.0, 300.0, 1000.0, 10000.0), "amounts": (2000, 10000),
                 "seeds": (0, 1, 2), "delta": 1e-4},
        "paper": {"epsilons": (0.45, 0.9, 3.0, 5.0, 7.0, 10.0, 100.0, 300.0, 1000.0, 10000.0),
                  "amounts": (5000, 20000), "seeds": tuple(range(10)), "delta": 1e-4},
    },
    "gpope": {
        "fast": {"epsilons": (0.1, 1.0, 3.0, 5.0, 7.0, 10.0, 100.0, 300.0), "amounts": (100, 300, 1000),
                 "seeds": (0, 1, 2), "delta": 1e-5},
        "paper": {"epsilons": (0.1, 0.5, 1.0, 3.0, 5.0, 7.0, 10.0, 100.0, 300.0),
                  "amounts": (100, 300, 1000, 3000, 10000),
                  "seeds": tuple(range(10)), "delta": 1e-5},
    },
    "pucb": {
        "fast": {"epsilons": (1.0, 3.0, 5.0, 7.0, 10.0, 100.0, 300.0, 1000.0, 10000.0), "amounts": (500, 2000),
                 "seeds": (0, 1, 2), "delta": 1e-5},  # delta: the gaussian variant's only (Laplace: pure eps-JDP)
        "paper": {"epsilons": (0.1, 1.0, 3.0, 5.0, 7.0, 10.0, 100.0, 300.0, 1000.0, 10000.0), "amounts": (2000, 10000),
                  "seeds": (0, 1, 2, 3, 4), "delta": 1e-5},
    },
}

_UTILITY = {  # name, axis label, higher is better, amount name, trivial reference's label
    "dpq": ("final_return", "return per episode (mean of the last 10 episodes)", True, "samples T",
            "random policy"),
    "dpq-random-peak": ("policy_return", "return per episode of the released greedy policy", True, "samples T",
                        "best data-independent policy"),
    "gpope": ("mspbe", "MSPBE (log scale)", False, "trajectories m", "theta = 0"),
    "pucb": ("regret_per_episode", "cumulative regret / episodes", False, "episodes T", "uniform policy"),
}


# ------------------------------------------------------------------------------------- the bound


def beats_reference(values: ArrayLike, reference: float, *, higher_is_better: bool,
                    confidence: float = 0.95, reference_se: float = 0.0) -> tuple[Optional[bool], float]:
    r"""Whether the mean utility over seeds beats a reference, by a one-sided Student-t bound.

    With n values, mean m and sample standard deviation s, the standard error is
    se = sqrt(s^2 / n + se_ref^2) (the reference's own standard error added in quadrature; 0 for an exact
    reference) and t = t_{n-1}^{-1}(confidence). Higher is better: the lower bound m - t se must exceed the
    reference; lower is better: the upper bound m + t se must be below it. The claim holds with the
    stated confidence under the normal model of the per-seed utilities (seeds independent); a
    non-finite value (a diverged run) counts as the worst possible value.

    Args:
        values: per-seed utilities, a 1-D sequence of floats (at least 2 for a verdict).
        reference: the reference's value.
        higher_is_better: True for returns, False for losses and regret.
        confidence: one-sided confidence level, in (0, 1); default 0.95.
        reference_se: standard error of the reference, in [0, inf); default 0 (exact).

    Returns:
        (verdict, bound): verdict True / False, or None with fewer than 2 values; bound the one-sided
        confidence bound on the mean (nan with fewer than 2 values).

    Raises:
        ValueError: an argument is outside its range.
    """
    vals = np.asarray(values, dtype=float).ravel()
    return _beats_reference(vals, float(reference), bool(higher_is_better),
                            V.open_unit("confidence", confidence), V.nonnegative("reference_se", reference_se))


def _beats_reference(vals, reference, higher, confidence, reference_se) -> tuple[Optional[bool], float]:
    n = vals.size
    if n < 2:
        return None, math.nan
    if not np.all(np.isfinite(vals)):  # a diverged run: the worst value
        return False, (-math.inf if higher else math.inf)
    from scipy.stats import t as student_t

    se = math.sqrt(float(vals.var(ddof=1)) / n + reference_se ** 2)
    q = float(student_t.ppf(confidence, n - 1))
    mean = float(vals.mean())
    if higher:
        bound = mean - q * se
        return bool(bound > reference), bound
    bound = mean + q * se
    return bool(bound < reference), bound


def one_sided_p_value(values: ArrayLike, reference: float, *, higher_is_better: bool,
                      reference_se: float = 0.0) -> Optional[float]:
    r"""One-sided p-value of "the mean utility is no better than the reference", by Student t over seeds.

    With n values, mean m, sample standard deviation s and se = sqrt(s^2 / n + se_ref^2) (as
    :func:`beats_reference`), t = (m - reference) / se (sign flipped when lower is better) and
    p = P(T_{n-1} >= t), the upper tail of Student's t with n - 1 degrees of freedom. So p < 1 - c exactly
    when :func:`beats_reference` at confidence c says True. With se = 0 the comparison is exact: p = 0 if the
    mean is strictly better, else 1. A non-finite value (a diverged run) gives p = 1.

    Args:
        values: per-seed utilities, a 1-D sequence of floats (at least 2 for a p-value).
        reference: the reference's value.
        higher_is_better: True for returns, False for losses and regret.
        reference_se: standard error of the reference, in [0, inf); default 0 (exact).

    Returns:
        p in [0, 1], or None with fewer than 2 values.

    Raises:
        ValueError: ``reference_se`` is negative.
    """
    vals = np.asarray(values, dtype=float).ravel()
    return _p_value(vals, float(reference), bool(higher_is_better), V.nonnegative("reference_se", reference_se))


def _p_value(vals, reference, higher, reference_se) -> Optional[float]:
    n = vals.size
    if n < 2:
        return None
    if not np.all(np.isfinite(vals)):
        return 1.0
    from scipy.stats import t as student_t

    diff = float(vals.mean()) - reference
    diff = diff if higher else -diff
    se = math.sqrt(float(vals.var(ddof=1)) / n + reference_se ** 2)
    if se == 0.0:
        return 0.0 if diff > 0.0 else 1.0
    return float(student_t.sf(diff / se, n - 1))


def holm(p_values: Iterable[Optional[float]], alpha: float = 0.05) -> tuple[list, list]:
    r"""Holm's step-down procedure: which hypotheses to reject with family-wise error at most ``alpha``.

    Sort the m p-values that are not None, p_(1) <= ... <= p_(m); reject H_(1), ..., H_(k) where k is the
    largest index with p_(j) <= alpha / (m - j + 1) for every j <= k (Holm 1979, "A simple sequentially
    rejective multiple test procedure", Scand. J. Statist. 6, 65-70). The adjusted p-value of H_(i) is
    max_{j <= i} min(1, (m - j + 1) p_(j)), and H_(i) is rejected exactly when it is <= alpha. The
    family-wise error is controlled under any dependence between the tests. A None (no test: an infeasible
    point, fewer than two seeds) is not in the family and stays None.

    Args:
        p_values: p-values in [0, 1] or None.
        alpha: family-wise error level, in (0, 1); default 0.05.

    Returns:
        (rejected, adjusted): per input, True / False (None for a None input) and the adjusted p-value
        (None for a None input).

    Raises:
        ValueError: a p-value outside [0, 1] or ``alpha`` outside (0, 1).
    """
    ps = list(p_values)
    for x in ps:
        if x is not None and not 0.0 <= x <= 1.0:
            raise ValueError(f"p_values must be in [0, 1] or None, got {x!r}")
    alpha = V.open_unit("alpha", alpha)
    tested = sorted((x, i) for i, x in enumerate(ps) if x is not None)
    m = len(tested)
    rejected, adjusted = [None] * len(ps), [None] * len(ps)
    running = 0.0
    for j, (x, i) in enumerate(tested):
        running = max(running, min(1.0, (m - j) * x))
        adjusted[i] = running
        rejected[i] = running <= alpha
    return rejected, adjusted


def holm_over_grid(points: Iterable["FrontierPoint"], confidence: float = 0.95) -> tuple:
    """The points with ``p_holm`` and ``beats_holm`` set: :func:`holm` at alpha = 1 - confidence over the epsilon
    grid of each (variant, amount) line, from each point's ``p_value`` (:data:`CORRECTION`).

    Args:
        points: :class:`FrontierPoint` objects (their ``p_value`` set, None for no test).
        confidence: in (0, 1); default 0.95.

    Returns:
        the points in the same order, as a tuple.
    """
    from dataclasses import replace

    pts = list(points)
    alpha = 1.0 - V.open_unit("confidence", confidence)
    lines: dict = {}
    for k, p in enumerate(pts):
        lines.setdefault((p.variant, p.amount), []).append(k)
    for idx in lines.values():
        rejected, adjusted = holm([pts[k].p_value for k in idx], alpha)
        for k, r, a in zip(idx, rejected, adjusted):
            pts[k] = replace(pts[k], beats_holm=r, p_holm=a)
    return tuple(pts)


# ------------------------------------------------------------------------------------- results


@dataclass(frozen=True)
class FrontierPoint:
    """One (variant, epsilon, amount) point: per-seed utilities, their mean and std, and the verdict.

    ``privacy_unit`` says what one neighbouring change is (``privcal.rl.units``). ``verdict`` is
    ``privcal.rl.verdict.verdict_over_seeds`` against the trivial reference ("beats", "does not beat" or
    "cannot tell": a one-sided Welch t bound, the reference's standard error added; "" with fewer than two
    seeds or no values) and ``sign_test_p`` its exact one-sided sign-test p-value.

    ``values`` is empty and ``infeasible`` holds the calibrator's reason when no noise exists for the
    target. ``noise`` is the noise level used (dpq: functional-noise sigma; gpope: noise multiplier
    sigma; pucb: the counters' error bound E). ``bound`` is the one-sided confidence bound of
    :func:`beats_reference` and ``beats_trivial`` its verdict (None with fewer than two seeds or no
    values), for this point alone. ``p_value`` is the one-sided Student-t p-value of the same test
    (:func:`one_sided_p_value`); ``p_holm`` and ``beats_holm`` the Holm-adjusted p-value and verdict over the
    epsilon grid of the point's (variant, amount) line (:func:`holm_over_grid`, :data:`CORRECTION`): the
    "first epsilon that beats" of :meth:`Frontier.first_beating` reads ``beats_holm``. ``guarantee`` states the
    privacy claim in words.

    ``user_epsilon`` is the epsilon of the same run for one *user* (``user_unit``: one user's whole episode or
    trajectory), an upper bound at the frontier's delta: for a unit that covers the user (episode, trajectory,
    reward-function) the point's own epsilon; for the transition unit (dpq's "fqi-transition": one transition
    of a 50-step episode) the group bound of ``privcal.accounting.groups.group_epsilon`` over the run's
    sigma, sample rate and steps, with its certified lower bound in ``user_epsilon_lower``. None where the
    point has no valid guarantee (the paper's noise, a failed premise, an infeasible calibration).
    """

    variant: str
    epsilon: float
    amount: int
    values: tuple = ()
    mean: Optional[float] = None
    std: Optional[float] = None
    bound: Optional[float] = None
    beats_trivial: Optional[bool] = None
    noise: Optional[float] = None
    guarantee: str = ""
    infeasible: str = ""
    privacy_unit: str = ""
    verdict: str = ""
    sign_test_p: Optional[float] = None
    p_value: Optional[float] = None
    p_holm: Optional[float] = None
    beats_holm: Optional[bool] = None
    user_unit: str = ""
    user_epsilon: Optional[float] = None
    user_epsilon_lower: Optional[float] = None


@dataclass(frozen=True)
class Frontier:
    """What :func:`frontier` measured: the points and, per amount of data, the references.

    ``references`` maps each amount to {"trivial": {"mean", "se", "label"}, "non_private": {"mean",
    "std", "values"}} plus agent-specific extras (dpq: "optimum", the move-to-the-middle policy;
    gpope: "lstd", the non-private closed form). ``settings`` records the sizes, delta, seeds and the
    learner's fixed parameters.
    """

    agent: str
    setting: str
    utility: str
    utility_label: str
    higher_is_better: bool
    amount_name: str
    delta: Optional[float]
    confidence: float
    seeds: tuple
    points: tuple
    references: dict
    settings: dict = field(default_factory=dict)

    def rows(self) -> list[dict]:
        """One flat dict per point, with its amount's references (the table and csv form).

        Returns:
            dicts with keys agent, variant, privacy_unit, epsilon, amount, mean, std, seeds, bound, beats_trivial,
            p_value, p_holm, beats_holm, correction ("holm": :data:`CORRECTION`), user_unit, user_epsilon,
            user_epsilon_lower, verdict, sign_test_p, trivial, non_private, noise, guarantee, infeasible, in the
            order of ``points``.
        """
        out = []
        for p in self.points:
            ref = self.references.get(p.amount, {})
            out.append({"agent": self.agent, "variant": p.variant, "privacy_unit": p.privacy_unit,
                        "epsilon": p.epsilon, "amount": p.amount,
                        "mean": p.mean, "std": p.std, "seeds": len(p.values), "bound": p.bound,
                        "beats_trivial": p.beats_trivial, "p_value": p.p_value, "p_holm": p.p_holm,
                        "beats_holm": p.beats_holm, "correction": "holm",
                        "user_unit": p.user_unit, "user_epsilon": p.user_epsilon,
                        "user_epsilon_lower": p.user_epsilon_lower,
                        "verdict": p.verdict, "sign_test_p": p.sign_test_p,
                        "trivial": ref.get("trivial", {}).get("mean"),
                        "non_private": ref.get("non_private", {}).get("mean"),
                        "noise": p.noise, "guarantee": p.guarantee, "infeasible": p.infeasible})
        return out

    def first_beating(self, variant: str = "valid", corrected: bool = True) -> dict:
        """Per amount, the smallest epsilon whose point beats the trivial reference (None if none does).

        Args:
            variant: "valid" (default), "gaussian" (pucb), "paper", or a dpq learner ("select",
                "fqi-transition", "fqi-episode").
            corrected: True (default): the Holm-corrected verdict over the line's epsilon grid
                (``beats_holm``, :data:`CORRECTION`); False: each point's own verdict (``beats_trivial``),
                with no control of the error across the grid.

        Returns:
            amount -> epsilon (in the variant's own privacy unit) or None.
        """
        V.choice("variant", variant, _ORDER)
        out = {}
        for p in self.points:
            if p.variant != variant:
                continue
            out.setdefault(p.amount, None)
            if (p.beats_holm if corrected else p.beats_trivial) and (out[p.amount] is None
                                                                    or p.epsilon < out[p.amount]):
                out[p.amount] = p.epsilon
        return out

    def _variants(self) -> list:
        return [v for v in _ORDER if any(p.variant == v for p in self.points)]

    def to_dict(self) -> dict:
        """JSON-ready copy (infinite numbers as None, via ``privcal.records.clean``).

        Returns:
            a dict with the fields, ``points`` as dicts, ``correction`` (:data:`CORRECTION`), per variant
            ``first_beating_<variant>`` (Holm-corrected) and ``first_beating_<variant>_uncorrected``, and the
            user unit.
        """
        from privcal.records import clean

        d = {k: v for k, v in asdict(self).items() if k != "points"}
        d["references"] = {str(k): v for k, v in self.references.items()}
        d["points"] = [asdict(p) for p in self.points]
        d["correction"] = CORRECTION
        d["user_unit"] = USER_UNITS[self.agent]
        for v in dict.fromkeys(["valid"] + self._variants()):
            key = f"first_beating_{v.replace('-', '_')}"
            d[key] = {str(k): e for k, e in self.first_beating(v).items()}
            d[key + "_uncorrected"] = {str(k): e for k, e in self.first_beating(v, corrected=False).items()}
        return clean(d)

    @classmethod
    def from_dict(cls, data: dict) -> "Frontier":
        """The :class:`Frontier` back from :meth:`to_dict`'s output (e.g. a saved JSON file), to redraw or
        re-tabulate it without training. Numbers that were not finite come back as None (nan in ``values``).

        Args:
            data: a dict as :meth:`to_dict` returns it.

        Returns:
            the Frontier.

        Raises:
            ValueError: a field is missing.
        """
        from dataclasses import fields

        names = [f.name for f in fields(cls) if f.name != "points"]
        missing = [n for n in names + ["points"] if n not in data and n != "settings"]
        if missing:
            raise ValueError(f"data is not a saved frontier: missing {', '.join(missing)}")
        kw = {n: data[n] for n in names if n in data}
        kw["seeds"] = tuple(kw["seeds"])
        kw["references"] = {int(k): v for k, v in data["references"].items()}
        point_fields = {f.name for f in fields(FrontierPoint)}
        points = []
        for p in data["points"]:
            p = {k: v for k, v in p.items() if k in point_fields}
            p["values"] = tuple(math.nan if x is None else x for x in p.get("values", ()))
            points.append(FrontierPoint(**p))
        return cls(points=tuple(points), **kw)

    def text(self) -> str:
        """A table for people: one line per point, then the references per amount.

        Returns:
            the text, lines of at most about 130 columns plus the guarantees.
        """
        better = "higher" if self.higher_is_better else "lower"
        alpha = 1.0 - self.confidence
        user = USER_UNITS[self.agent]
        lines = [f"privacy-utility frontier: {self.agent} ({self.setting}), utility {self.utility} ({better} is "
                 f"better), {len(self.seeds)} seeds per point"
                 + (f", delta = {self.delta:g}" if self.delta is not None else ""),
                 f"beats: beats the trivial reference alone, one-sided Student-t test over seeds at confidence "
                 f"{self.confidence:g} (p < {alpha:.2g}; reference std. error added in quadrature)",
                 f"Holm: {CORRECTION}",
                 f"epsilon: in the point's own unit; user eps: one user's whole {user} (upper bound at the same "
                 f"delta; [lower, upper] for a finer unit)",
                 f"{'variant':14s} {'unit':15s} {'epsilon':>8s} {'user eps':>19s} "
                 f"{self.amount_name.split()[-1]:>6s} {'mean':>9s} {'std':>8s} {'bound':>9s} {'p':>8s} "
                 f"{'beats':>5s} {'Holm':>5s} {'noise':>9s}"]
        for p in self.points:
            head = f"{p.variant:14s} {p.privacy_unit:15s} {p.epsilon:8.4g} {_user(p):>19s} {p.amount:6d}"
            if p.infeasible:
                lines.append(f"{head}  infeasible: {p.infeasible[:60]}")
                continue
            yes = {True: "yes", False: "no", None: "-"}
            lines.append(f"{head} {_num(p.mean):>9s} {_num(p.std):>8s} {_num(p.bound):>9s} {_num(p.p_value):>8s} "
                         f"{yes[p.beats_trivial]:>5s} {yes[p.beats_holm]:>5s} {_num(p.noise):>9s}")
        lines.append("references (same amount of data):")
        for amount, ref in self.references.items():
            parts = [f"{ref['trivial']['label']} {_num(ref['trivial']['mean'])}"]
            if ref["trivial"].get("se"):
                parts[-1] += f" (se {_num(ref['trivial']['se'])})"
            parts.append(f"non-private {_num(ref['non_private']['mean'])} (std {_num(ref['non_private']['std'])})")
            for extra in ("optimum", "lstd"):
                if extra in ref:
                    parts.append(f"{ref[extra]['label']} {_num(ref[extra]['mean'])}")
            lines.append(f"  {self.amount_name} = {amount}: " + "; ".join(parts))
        short = self.amount_name.split()[-1]
        for v in self._variants():
            if v == "paper":
                continue
            first, raw = self.first_beating(v), self.first_beating(v, corrected=False)
            unit = _UNITS[self.agent].get(v, "")
            name = "valid (Algorithm 1)" if (v == "valid" and self.agent == "dpq") else v
            lines.append(f"smallest {name} epsilon (per {unit}) that beats the trivial reference, Holm over the "
                         "grid: " + ", ".join(
                f"{short}={a}: {'none' if e is None else f'{e:g}'} (uncorrected: "
                f"{'none' if raw[a] is None else f'{raw[a]:g}'})" for a, e in first.items()))
        guarantees = dict.fromkeys(f"  {p.variant} (unit {p.privacy_unit}): {p.guarantee}" for p in self.points
                                   if p.guarantee)
        lines.append("guarantees:")
        lines.extend(guarantees)
        return "\n".join(lines)

    def markdown(self) -> str:
        """The points as a markdown table (references as columns).

        Returns:
            the table, then one line naming the correction.
        """
        user = USER_UNITS[self.agent]
        head = ["variant", "privacy unit", "epsilon", f"user epsilon (one {user})", self.amount_name, "mean", "std",
                "bound", "p", "beats trivial", "beats (Holm)", "trivial", "non-private", "noise"]
        lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        yes = {True: "yes", False: "no", None: "—"}
        for p, r in zip(self.points, self.rows()):
            first = [r["variant"], r["privacy_unit"], f"{r['epsilon']:g}", _user(p), str(r["amount"])]
            if r["infeasible"]:
                cells = first + ["infeasible: " + r["infeasible"].replace("|", "\\|")[:80]] + [""] * 8
            else:
                cells = first + [_num(r["mean"]), _num(r["std"]), _num(r["bound"]), _num(r["p_value"]),
                                 yes[r["beats_trivial"]], yes[r["beats_holm"]], _num(r["trivial"]),
                                 _num(r["non_private"]), _num(r["noise"])]
            lines.append("| " + " | ".join(cells) + " |")
        lines.append("")
        lines.append(f"beats (Holm): {CORRECTION}; p: one-sided Student-t p-value over seeds.")
        return "\n".join(lines)


def _user(p) -> str:
    """The user-level epsilon in words: '-' (no valid guarantee), 'same' bound, or [lower, upper]."""
    if p.user_epsilon is None:
        return "-"
    if p.user_epsilon_lower is None:
        return f"{p.user_epsilon:.4g}"
    return f"[{p.user_epsilon_lower:.4g}, {p.user_epsilon:.4g}]"


def _num(x) -> str:
    if x is None:
        return "-"
    if isinstance(x, float) and math.isnan(x):
        return "nan"
    return f"{x:.4g}"


# ------------------------------------------------------------------------------------- tasks


def _dpq_task(kind, hp, epsilon, delta, sigma, beta, seed, environment="fixed") -> tuple:
    """One Algorithm-1 run: (utility, premises held or None, guarantee, noise). kind: "valid", "paper" or
    "non_private". Fixed environment: the mean return of the last 10 training episodes; random-peak: the
    released greedy policy's return at the seed's theta (``_EVAL_EPISODES`` simulated episodes)."""
    from privcal.rl import envs
    from privcal.rl.dpq import agent as dpq_agent

    env = None
    if environment == "random-peak":
        env = envs.IntervalEnv(peak=envs.draw_peak(seed))
    if kind == "valid":
        res = dpq_agent.train_dpq(epsilon=epsilon, delta=delta, variant="valid", hp=hp, seed=seed, env=env)
        held = bool(res.premises) and all(ok for _, ok, _ in res.premises)
        guarantee = res.guarantee
    elif kind == "paper":
        res = dpq_agent.train("dpq", hp=hp, sigma=sigma, beta=beta, seed=seed, env=env)
        held, guarantee = None, ""
    else:
        res = dpq_agent.train("non_private", hp=hp, seed=seed, env=env)
        held, guarantee = None, ""
    if env is None:
        r = np.asarray(res.episode_returns, dtype=float)
        return float(r[-_LAST:].mean()), held, guarantee, res.sigma
    value, _ = envs.policy_return(res.greedy_actions, env.peak, episodes=_EVAL_EPISODES, seed=[seed, 31])
    return value, held, guarantee, res.sigma


def _learner_task(variant, samples, epsilon, delta, seed) -> tuple:
    """One run of a valid learner on the random-peak environment: (policy return, premises held, guarantee,
    sigma or None, (user-level epsilon upper, lower) or None). variant: "select", "fqi-transition",
    "fqi-episode", or "fqi-non-private". The user-level pair is the transition unit's (the learner's own
    ``privcal.accounting.groups.group_epsilon`` over its sigma, sample rate and steps, one episode of 50
    transitions)."""
    from privcal.rl.dpq import select as dpq_select
    from privcal.rl.dpq import fqi_dpsgd
    from privcal.rl.envs import EPISODE_STEPS

    if variant == "select":
        res = dpq_select.train_select(epsilon=epsilon, delta=delta, samples=samples, seed=seed)
        return res.policy_return, True, res.guarantee, None, None
    unit = "episode" if variant == "fqi-episode" else "transition"
    if epsilon is None:  # the non-private reference: the same learner without noise
        delta = None
    res = fqi_dpsgd.train_fqi_dpsgd(epsilon=epsilon, delta=delta, privacy_unit=unit,
                                    episodes=samples // EPISODE_STEPS, seed=seed)
    held = all(ok for _, ok, _ in res.premises)
    user = None
    if epsilon is not None and unit == "transition" and res.user_epsilon is not None:
        user = (res.user_epsilon, res.user_epsilon_lower)
    return res.policy_return, held, res.guarantee, (res.sigma if epsilon is not None else None), user


def _gpope_task(ctx, m, base_seed, trial, sigma, clip, step, stream) -> float:
    """MSPBE of one GPOPE run on data set ``trial`` of size m (data shared by every variant and epsilon)."""
    from privcal.rl.gpope.experiments import unchecked_gpope_score, trial_rng

    data = ctx.sample(m, trial_rng(base_seed, 1, m, trial))
    return float(unchecked_gpope_score(ctx, data, sigma, clip, step, trial_rng(base_seed, 2, m, trial, *stream)))


def _gpope_lstd(ctx, m, base_seed, trial) -> float:
    from privcal.rl.gpope.experiments import trial_rng
    from privcal.rl.gpope.lstd import lstd

    data = ctx.sample(m, trial_rng(base_seed, 1, m, trial))
    return float(ctx.score(lstd(data, ridge=1e-10)))


def _pucb_task(mdp, episodes, epsilon, failure_probability, variant, seed, delta=None) -> tuple:
    """Cumulative regret per episode of one PUCB run, and its error bound E. variant: "valid" (Laplace
    counters), "gaussian" (Gaussian counters at ``delta``) or "paper"."""
    from privcal.rl.pucb.agent import run_pucb_unchecked

    rule = "paper" if variant == "paper" else "valid"
    noise = "gaussian" if variant == "gaussian" else "laplace"
    run = run_pucb_unchecked(mdp, episodes, epsilon, failure_probability, seed, budget_split=rule, error_bound=rule,
                    counter_noise=noise, delta=delta if noise == "gaussian" else None)
    return float(run.episode_regret.sum() / episodes), float(run.error_bound)


def _task(kind, *args):
    """Dispatch one task (a single top-level function keeps the task list homogeneous)."""
    if kind == "dpq":
        return _dpq_task(*args)
    if kind == "learner":
        return _learner_task(*args)
    if kind == "gpope":
        return _gpope_task(*args)
    if kind == "lstd":
        return _gpope_lstd(*args)
    return _pucb_task(*args)


# ------------------------------------------------------------------------------------- planning


def _stats(values) -> tuple:
    vals = np.asarray(values, dtype=float)
    if vals.size == 0:
        return None, None
    if not np.all(np.isfinite(vals)):
        return math.inf, math.nan
    return float(vals.mean()), float(vals.std(ddof=1)) if vals.size > 1 else 0.0


def _plan_dpq(setting, epsilons, amounts, seeds, variants, delta, environment="fixed"):
    """(tasks, how to read them back, references, settings) of the dpq frontier."""
    from privcal.rl.dpq import experiments as X
    from privcal.rl.envs import EPISODE_STEPS, reference_return

    base = "fast" if setting == "fast" else "full"
    tasks, plan, refs = [], [], {}
    hp0 = X.hyperparameters(base)
    peaked = environment == "random-peak"
    for T in amounts:
        if T < EPISODE_STEPS or T < hp0.batch_size:
            raise ValueError(f"amounts must be at least {max(EPISODE_STEPS, hp0.batch_size)} samples for dpq (one "
                             f"episode of {EPISODE_STEPS} steps and one batch of {hp0.batch_size}), got {T}")
        if "select" in variants and T < 40 * EPISODE_STEPS:
            raise ValueError(f"amounts must be at least {40 * EPISODE_STEPS} samples for select (one episode of "
                             f"each of its 40 policies), got {T}")
        hp = X.hyperparameters(base, samples=T)
        for v in variants:
            for eps in epsilons:
                start = len(tasks)
                if v in DPQ_LEARNERS:
                    tasks += [("learner", v, T, eps, delta, sd) for sd in seeds]
                    plan.append((v, eps, T, None, "", start))
                    continue
                ns = X.unchecked_noise_for("dpq", eps, delta, hp, v)
                if ns.infeasible:
                    plan.append((v, eps, T, None, ns.infeasible, 0))
                    continue
                tasks += [("dpq", v, hp, eps, delta, ns.sigma, ns.beta, sd, environment) for sd in seeds]
                plan.append((v, eps, T, ns.sigma, "", start))
        refs[T] = {"non_private": len(tasks)}
        if peaked:
            tasks += [("learner", "fqi-non-private", T, None, None, sd) for sd in seeds]
        else:
            tasks += [("dpq", "non_private", hp, None, None, None, None, sd) for sd in seeds]
    settings = {"learner": {k: v for k, v in asdict(hp0).items() if k != "samples"}, "last_episodes": _LAST,
                "environment": environment}
    if peaked:
        from privcal.rl import envs

        triv, triv_se = envs.trivial_return()
        trivial = {"mean": triv, "se": triv_se, "label": "best data-independent policy (move-to-middle, "
                   "expected over theta ~ U[0, 1])"}
        opt = [envs.policy_return(lambda s, t=envs.draw_peak(sd): (s < t).astype(np.intp), envs.draw_peak(sd),
                                  episodes=_EVAL_EPISODES, seed=[sd, 31])[0] for sd in seeds]
        optimum = {"mean": float(np.mean(opt)), "se": float(np.std(opt, ddof=1) / np.sqrt(len(opt)))
                   if len(opt) > 1 else 0.0, "label": "threshold at theta (knows theta), mean over the seeds"}
        settings.update(environment="privcal.rl.envs.IntervalEnv(peak=draw_peak(seed)): random-peak variant, "
                        "theta ~ U[0, 1] per seed", utility="released greedy policy's return per episode, "
                        f"{_EVAL_EPISODES} simulated episodes (select and fqi: 2000)",
                        non_private="fqi-dpsgd without noise (transition unit)", last_episodes=None)
        return tasks, plan, refs, {"trivial": trivial, "optimum": optimum}, settings
    rnd, rnd_se = reference_return("random")
    mid, mid_se = reference_return("middle")
    trivial = {"mean": rnd, "se": rnd_se, "label": "random policy"}
    optimum = {"mean": mid, "se": mid_se, "label": "move-to-middle policy"}
    settings["environment"] = "privcal.rl.envs.IntervalEnv (Wang & Hegde 2019, App. E.1)"
    return tasks, plan, refs, {"trivial": trivial, "optimum": optimum}, settings


def _dpq_guarantee(variant, results, eps, delta):
    if variant in DPQ_LEARNERS:
        held = [r[1] for r in results]
        if all(held):
            return results[0][2]
        return f"no guarantee: a premise failed in {held.count(False)} of {len(held)} seeds ({results[0][2]})"
    if variant == "paper":
        return "no valid guarantee: the paper's sigma (privcal.rl.dpq.experiments.noise_for, version 'paper')"
    held = [r[1] for r in results]
    if all(held):
        return (f"({eps:g}, {delta:g})-DP w.r.t. reward functions (valid analysis, every premise held in "
                f"every seed)")
    bad = next(r[2] for r in results if not r[1])
    return f"{bad} (in {held.count(False)} of {len(held)} seeds)"


def _gpope_context(setting):
    from privcal.rl.gpope import experiments as G

    s = G.SETTINGS["fast" if setting == "fast" else "full"]
    return s, G.make_context("chain", s, 0)


def _plan_gpope(setting, epsilons, amounts, seeds, variants, delta, ctx_setting):
    from privcal.calibrators import gpope as cal
    from privcal.rl.gpope import experiments as G
    from privcal.rl.gpope.agent import PAPER_BOUND, VALID_BOUND

    s, ctx = ctx_setting
    clip = G.CLIP["chain"]
    bounds = {"valid": VALID_BOUND, "paper": PAPER_BOUND}
    tasks, plan, refs = [], [], {}
    for m in amounts:
        for v in variants:
            for eps in epsilons:
                try:
                    sigma = float(cal.calibrate(eps, delta, iterations=m, trajectories=m, clip=clip,
                                                bound=bounds[v]))
                except InfeasibleError as exc:
                    plan.append((v, eps, m, None, str(exc), 0))
                    continue
                step = G.tune_step_size(ctx, m, sigma, clip, s.step_grid, s.tune_trials, 0)
                start = len(tasks)
                tasks += [("gpope", ctx, m, 0, sd, sigma, clip, step, (VARIANTS.index(v), _key(eps))) for sd in seeds]
                plan.append((v, eps, m, sigma, "", start))
        step0 = G.tune_step_size(ctx, m, 0.0, clip, s.step_grid, s.tune_trials, 0)
        refs[m] = {"non_private": len(tasks)}
        tasks += [("gpope", ctx, m, 0, sd, 0.0, clip, step0, (len(VARIANTS), 0)) for sd in seeds]
        refs[m]["lstd"] = len(tasks)
        tasks += [("lstd", ctx, m, 0, sd) for sd in seeds]
    trivial = {"mean": float(ctx.score(np.zeros(ctx.evaluator.b.shape[0]))), "se": 0.0, "label": "theta = 0"}
    settings = {"domain": "chain", "clip": clip, "iterations": "N = m", "step_size": "tuned on public data per "
                "(variant, epsilon, m)", "eval_trajectories": ctx.evaluator.trajectories,
                "bounds": bounds}
    return tasks, plan, refs, {"trivial": trivial}, settings


def _plan_pucb(setting, epsilons, amounts, seeds, variants, mdp, delta=None):
    from privcal.rl.pucb.tabular import backward_induction, uniform_policy_return

    tasks, plan, refs = [], [], {}
    fail = 0.1
    for T in amounts:
        for v in variants:
            for eps in epsilons:
                start = len(tasks)
                tasks += [("pucb", mdp, T, eps, fail, v, sd, delta if v == "gaussian" else None) for sd in seeds]
                plan.append((v, eps, T, None, "", start))
        refs[T] = {"non_private": len(tasks)}
        tasks += [("pucb", mdp, T, None, fail, "valid", sd, None) for sd in seeds]
    optimal = float(mdp.initial @ backward_induction(mdp).values[0])
    trivial = {"mean": optimal - uniform_policy_return(mdp), "se": 0.0, "label": "uniform policy"}
    return tasks, plan, refs, {"trivial": trivial}, {"failure_probability": fail}


# ------------------------------------------------------------------------------------- frontier


def _seed(value) -> int:
    """A seed: a non-negative int (``ValueError`` naming it otherwise)."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 0:
        raise ValueError(f"seeds must be non-negative integers, got {value!r}")
    return int(value)


def _key(epsilon: float) -> int:
    """An int naming an epsilon exactly (its IEEE-754 bits): the noise stream of a point depends on its
    own epsilon, not on the other epsilons of the sweep."""
    return int(np.float64(epsilon).view(np.uint64))


def frontier(agent: str, *, epsilons: Optional[Iterable[float]] = None, amounts: Optional[Iterable[int]] = None,
             seeds: Optional[Iterable[int]] = None, variant: str = "all", setting: str = "fast",
             delta: Optional[float] = None, confidence: float = 0.95, n_jobs: Optional[int] = -1,
             backend: Optional[str] = None, scheduler: Optional[str] = None,
             progress: Optional[Callable[[int, int], None]] = None,
             environment: Optional[str] = None) -> Frontier:
    """Sweep epsilon x amount of data for one agent under valid and/or paper noise; utility per point.

    See the module docstring for the utilities, the references and the noise of each variant.

    Args:
        agent: "dpq" (Wang & Hegde 2019 Algorithm 1 on the interval environment), "gpope" (GPOPE on
            the chain) or "pucb" (PUCB on a random tabular MDP).
        epsilons: target epsilons, each in (0, inf); default the setting's (:data:`SETTINGS`).
        amounts: amounts of data, ints >= 1 (dpq: samples T >= 64; gpope: trajectories m; pucb:
            episodes); default the setting's.
        seeds: seeds per point, non-negative ints (2 or more for a verdict); default the setting's.
        variant: "valid", "paper", "gaussian" (pucb only: Gaussian counters), a dpq learner ("select",
            "fqi-transition", "fqi-episode"; random-peak environment only), "both" (valid and paper) or
            "all" (default: every variant of the agent, :data:`AGENT_VARIANTS`; dpq on the fixed
            environment: valid and paper).
        setting: "fast" (default: small sizes, minutes on 2 cores) or "paper" (the papers' sizes:
            dpq T = 5000, 10 seeds; gpope the full chain setting; pucb S = 10, A = 3, H = 10).
        delta: target delta, in (0, 1); default the setting's (dpq 1e-4 as App. E.3; gpope 1e-5; pucb
            1e-5, used by its gaussian variant only: Laplace counters are pure epsilon-JDP, and giving a
            delta to a pucb sweep without the gaussian variant is an error).
        confidence: one-sided confidence of the "beats trivial" verdict, in (0, 1); default 0.95.
        n_jobs: parallel runs: an int >= 1, -1 (all cores or workers, default) or None (joblib's
            configured default).
        backend: None (joblib's configured backend, default), "local" (loky processes) or "dask".
        scheduler: Dask scheduler address (``"tcp://host:8786"``), with backend "dask" only; default None.
        progress: called as ``progress(done, total)`` (training runs) as results arrive; default None.
        environment: dpq only: "random-peak" (default: the reward's peak theta drawn per seed, utility the
            released greedy policy's return, trivial reference the best data-independent policy in
            expectation over theta) or "fixed" (App. E.1: utility the mean of the last 10 training
            episodes, trivial reference the random policy; Algorithm 1 only). Default None.

    Returns:
        the :class:`Frontier` (points in the order variant, amount, epsilon).

    Raises:
        ValueError: an argument is outside its range.
    """
    V.choice("agent", agent, AGENTS)
    V.choice("setting", setting, ("fast", "paper"))
    V.choice("variant", variant, VARIANT_CHOICES)
    if agent == "dpq":
        environment = "random-peak" if environment is None else V.choice("environment", environment, ENVIRONMENTS)
    elif environment is not None:
        raise ValueError(f"environment applies only to agent 'dpq', got {environment!r}")
    own = AGENT_VARIANTS[agent] if environment != "fixed" else VARIANTS
    if variant not in ("both", "all") and variant not in own:
        raise ValueError(f"variant {variant!r} is not a variant of {agent}"
                         + (" on the fixed environment" if environment == "fixed" else "")
                         + f" (its variants: {', '.join(own)})")
    conf = SETTINGS[agent][setting]
    eps_list = tuple(V.positive("epsilons", e) for e in (conf["epsilons"] if epsilons is None else epsilons))
    amount_list = tuple(V.positive_int("amounts", a) for a in (conf["amounts"] if amounts is None else amounts))
    seed_list = tuple(_seed(s) for s in (conf["seeds"] if seeds is None else seeds))
    if not eps_list or not amount_list or not seed_list:
        raise ValueError("epsilons, amounts and seeds must not be empty")
    eps_list, amount_list = tuple(dict.fromkeys(eps_list)), tuple(dict.fromkeys(amount_list))
    variants = {"both": VARIANTS, "all": own}.get(variant, (variant,))
    if agent == "pucb" and "gaussian" not in variants:
        if delta is not None:
            raise ValueError(f"delta is used only by pucb's gaussian variant (Laplace counters are pure "
                             f"epsilon-JDP), got {delta!r}")
    else:
        delta = conf["delta"] if delta is None else V.open_unit("delta", delta)
    confidence = V.open_unit("confidence", confidence)
    engine = check_engine(n_jobs, backend, scheduler)
    return _frontier(agent, eps_list, amount_list, seed_list, variants, setting, delta, confidence, engine,
                     progress, environment)


def _frontier(agent, epsilons, amounts, seeds, variants, setting, delta, confidence, engine,
              progress=None, environment=None) -> Frontier:
    name, label, higher, amount_name, _ = _UTILITY["dpq-random-peak" if environment == "random-peak" else agent]
    if agent == "dpq":
        tasks, plan, ref_idx, fixed, settings = _plan_dpq(setting, epsilons, amounts, seeds, variants, delta,
                                                          environment)
    elif agent == "gpope":
        tasks, plan, ref_idx, fixed, settings = _plan_gpope(setting, epsilons, amounts, seeds, variants, delta,
                                                            _gpope_context(setting))
    else:
        from privcal.rl.pucb.experiments import SETTINGS as PS, unchecked_make_mdp

        sizes = PS["fast" if setting == "fast" else "full"]
        mdp = unchecked_make_mdp("random", sizes["states"], sizes["actions"], sizes["horizon"], 0)
        tasks, plan, ref_idx, fixed, settings = _plan_pucb(setting, epsilons, amounts, seeds, variants, mdp, delta)
        settings.update(mdp=mdp.name, states=mdp.states, actions=mdp.actions, horizon=mdp.horizon)
    results = run_trials_unchecked(_task, tasks, *engine, progress)
    n = len(seeds)
    trivial = fixed["trivial"]
    points = []
    order = sorted(range(len(plan)), key=lambda i: (_ORDER.index(plan[i][0]), amounts.index(plan[i][2]),
                                                    epsilons.index(plan[i][1])))
    for i in order:
        v, eps, amount, noise, infeasible, start = plan[i]
        unit = _UNITS[agent][v]
        if infeasible:
            points.append(FrontierPoint(v, eps, amount, guarantee=_guarantee(agent, v, None, eps, delta),
                                        infeasible=infeasible, privacy_unit=unit, user_unit=USER_UNITS[agent]))
            continue
        res = results[start:start + n]
        if agent == "dpq":
            values = tuple(r[0] for r in res)
            noise = noise if noise is not None else res[0][3]
        elif agent == "pucb":
            values = tuple(r[0] for r in res)
            noise = res[0][1]
        else:
            values = tuple(res)
        mean, std = _stats(values)
        verdict, bound = _beats_reference(np.asarray(values), trivial["mean"], higher, confidence, trivial["se"])
        p_value = _p_value(np.asarray(values, dtype=float), trivial["mean"], higher, trivial["se"])
        user_eps, user_low = _user_epsilon(agent, v, unit, eps, res)
        word, sign_p = "", None
        if len(values) >= 2:
            from privcal.rl.verdict import verdict_over_seeds

            vs = verdict_over_seeds(values, trivial["mean"], higher_is_better=higher, reference_label=trivial["label"],
                                    reference_se=trivial["se"], confidence=confidence)
            word, sign_p = vs.verdict, vs.sign_test_p
        points.append(FrontierPoint(v, eps, amount, values, mean, std, None if math.isnan(bound) else bound,
                                    verdict, noise, _guarantee(agent, v, res, eps, delta), privacy_unit=unit,
                                    verdict=word, sign_test_p=sign_p, p_value=p_value, user_unit=USER_UNITS[agent],
                                    user_epsilon=user_eps, user_epsilon_lower=user_low))
    points = holm_over_grid(points, confidence)
    references = {}
    for amount in amounts:
        idx = ref_idx[amount]
        np_res = results[idx["non_private"]:idx["non_private"] + n]
        np_vals = [r[0] if isinstance(r, tuple) else r for r in np_res]
        mean, std = _stats(np_vals)
        ref = {"trivial": dict(trivial), "non_private": {"mean": mean, "std": std, "values": np_vals}}
        if "optimum" in fixed:
            ref["optimum"] = dict(fixed["optimum"])
        if "lstd" in idx:
            vals = results[idx["lstd"]:idx["lstd"] + n]
            ref["lstd"] = {"mean": _stats(vals)[0], "label": "LSTD (non-private closed form)"}
        references[amount] = ref
    settings.update(epsilons=list(epsilons), amounts=list(amounts), variants=list(variants))
    return Frontier(agent=agent, setting=setting, utility=name, utility_label=label, higher_is_better=higher,
                    amount_name=amount_name, delta=delta, confidence=confidence, seeds=tuple(seeds),
                    points=tuple(points), references=references, settings=settings)


def _user_epsilon(agent, variant, unit, eps, results) -> tuple:
    """(upper, lower) user-level epsilon of one point (:class:`FrontierPoint`): None without a valid guarantee;
    the point's own epsilon (upper) for a unit that covers the user; the learner's group bound for the
    transition unit, the same in every seed (it depends on sigma, the sample rate and the steps only)."""
    if variant == "paper":
        return None, None
    if agent == "dpq" and not all(r[1] for r in results):  # a premise failed: no guarantee to translate
        return None, None
    if unit in _COVERS_USER:
        return float(eps), None
    pairs = {r[4] for r in results}
    if len(pairs) != 1 or None in pairs:  # the learner reported no user-level bound: none is claimed
        return None, None
    upper, lower = pairs.pop()
    return float(upper), (None if lower is None else float(lower))


def _guarantee(agent, variant, results, eps, delta) -> str:
    if agent == "dpq":
        if results is None:
            return ("no valid sigma (valid analysis)" if variant == "valid"
                    else "no valid guarantee: the paper's sigma does not exist here")
        return _dpq_guarantee(variant, results, eps, delta)
    if agent == "gpope":
        from privcal.rl.gpope.agent import PAPER_BOUND, VALID_BOUND

        if variant == "valid":
            return f"({eps:g}, {delta:g})-DP w.r.t. one trajectory replaced, valid bound {VALID_BOUND!r}"
        return f"no valid guarantee: the paper's sigma (bound {PAPER_BOUND!r}, which privcal verify shows failing)"
    if variant == "valid":
        return f"{eps:g}-JDP, Laplace counters (valid budget split eps/(6H) and valid error bound)"
    if variant == "gaussian":
        return (f"({eps:g}, {delta:g})-JDP, Gaussian counters (l2 sensitivity sqrt(6HL), exact Gaussian profile, "
                f"E from the Gaussian tails)")
    return "no valid guarantee: the paper's budget split eps/(3H) (2 eps-JDP) and error bound E"


# ------------------------------------------------------------------------------------- picture


#: the panels' order: finest unit first
_PANEL_ORDER = ("transition", "episode", "trajectory", "reward-function")


def panels(result: Frontier) -> list:
    """The privacy units of :func:`plot_frontier`'s panels, one panel per unit, finest first.

    A unit finer than the user (dpq's transition) also shows its points at their user-level epsilon in the user's
    panel, so the user's panel exists whenever such points do.

    Args:
        result: what :func:`frontier` returned.

    Returns:
        the units, e.g. ["transition", "episode", "reward-function"] for dpq on the random-peak environment.
    """
    units = {p.privacy_unit for p in result.points}
    if any(p.user_epsilon is not None and p.privacy_unit not in _COVERS_USER for p in result.points):
        units.add(USER_UNITS[result.agent])
    return [u for u in _PANEL_ORDER if u in units]


#: one colour and one marker per method (the same in every panel and agent)
_COLOURS = {"select": "tab:purple", "fqi-transition": "tab:blue", "fqi-episode": "tab:green", "valid": "tab:orange",
            "gaussian": "tab:cyan", "paper": "tab:red"}
_MARKERS = {"select": "D", "fqi-transition": "v", "fqi-episode": "P", "valid": "o", "gaussian": "^", "paper": "s"}
_USER_MARKER = "X"  # a finer unit's points drawn at their user-level epsilon
#: the amount of data by line style (first, second, ... amount of the sweep)
_AMOUNT_STYLES = ("-", "--", "-.", (0, (1, 1.5)))
#: the x axis of each unit's panel
_AXIS = {"transition": "ε per transition (one (s, a, r, s') of a user's 50-step episode)",
         "episode": "ε per episode (one user's whole episode)",
         "trajectory": "ε per trajectory (one user's trajectory, replaced)",
         "reward-function": "ε per reward function (any change of the data, so also per user)"}


def _method_label(agent: str, variant: str) -> str:
    """A method's legend label; the paper's noise always says it has no valid guarantee."""
    if variant == "paper":
        return {"pucb": "paper's budget split and E (no valid guarantee)"}.get(agent, "paper σ (no valid guarantee)")
    return {("dpq", "valid"): "Algorithm 1, valid σ", ("gpope", "valid"): "GPOPE, valid σ",
            ("pucb", "valid"): "PUCB, Laplace counters (valid)", ("pucb", "gaussian"): "PUCB, Gaussian counters (valid)",
            ("dpq", "select"): "select (randomized response, 40 policies)",
            ("dpq", "fqi-transition"): "fqi-dpsgd, transition unit", ("dpq", "fqi-episode"): "fqi-dpsgd, episode unit",
            }.get((agent, variant), variant)


def plot_frontier(result: Frontier, path: Any = None, ax: Any = None, figure: Any = None) -> Any:
    """Utility against epsilon (log x), one panel per privacy unit (:func:`panels`), each x axis naming its unit.

    One colour and one marker per method; the amount of data by line style; a marker is filled where the
    point beats the trivial reference after Holm's correction over its line's epsilon grid (``beats_holm``)
    and hollow where it does not. A unit finer than the user (dpq's transition) is drawn in its own panel and
    again, marker "X", at its user-level epsilon (upper bound) in the user's panel. The paper's noise is
    labelled "no valid guarantee". Error bars are one sample standard deviation over seeds. The trivial
    reference is a thick black line, each amount's non-private baseline a grey line in that amount's style, the
    optimum (dpq) an olive dotted line. Infeasible calibrations (no point, a gap in the line) are listed under
    the panel's x axis. The legend sits right of each panel, inside the figure. Needs matplotlib (the ``plot``
    extra).

    Args:
        result: what :func:`frontier` returned.
        path: PNG or SVG file to write (``privcal.plot.check_path`` rules); default None (no file).
        ax: matplotlib axes to draw on: one Axes when the result has one panel, or a sequence of Axes, one per
            panel; default None (new axes).
        figure: a matplotlib Figure or SubFigure to draw the panels in, stacked (e.g. one agent of a larger
            picture); default None (a new figure). Not with ``ax``.

    Returns:
        the Figure or SubFigure drawn on (the root figure is closed after saving when ``path`` is given).

    Raises:
        ValueError: ``ax`` does not match the panels, or both ``ax`` and ``figure`` are given.
    """
    from privcal import plot as P

    plt = P._pyplot()
    if path is not None:
        P.check_path(path)
    units = panels(result)
    if ax is not None and figure is not None:
        raise ValueError("give ax or figure, not both")
    if ax is not None:
        axes = [ax] if hasattr(ax, "plot") else list(ax)
        if len(axes) != len(units):
            raise ValueError(f"ax: the {result.agent} frontier has {len(units)} panel(s), one per privacy unit "
                             f"({', '.join(units)}); got {len(axes)} axes")
        fig = axes[0].figure
    else:
        fig = figure if figure is not None else plt.figure(layout="constrained", figsize=(12.5, 4.6 * len(units)))
        axes = list(np.atleast_1d(fig.subplots(len(units), 1, squeeze=False)[:, 0]))
    for unit, panel in zip(units, axes):
        _draw_panel(result, unit, panel, explain=ax is not None)
    if ax is None:  # what the markers and bars mean, once per agent, across the figure's width
        fig.suptitle(_explanation(result), fontsize=9)
    if path is not None:
        root = fig.get_figure(root=True) if hasattr(fig, "get_figure") else fig
        P.save(root, path)
    return fig


def _explanation(result: Frontier) -> str:
    better = "higher" if result.higher_is_better else "lower"
    return (f"{result.agent}: privacy-utility frontier ({result.setting} setting; {better} is better). Filled marker: "
            f"beats the trivial reference (one-sided t over the {len(result.seeds)} seeds, Holm over each line's ε "
            f"grid, family-wise error {1 - result.confidence:.2g});\nhollow: not shown to beat it. Error bars: mean "
            "+- 1 sample standard deviation over seeds. One panel per privacy unit; each x axis names its unit.")


def _delta_note(result: Frontier) -> str:
    if result.delta is None:
        return ""
    if result.agent == "pucb":  # Laplace counters are pure epsilon-JDP; the delta is the Gaussian counters'
        return f" [δ = {result.delta:g} for the Gaussian counters; Laplace: pure ε]"
    return f" [δ = {result.delta:g}]"


def _draw_panel(result: Frontier, unit: str, ax: Any, explain: bool) -> None:
    from matplotlib.lines import Line2D

    amounts = list(result.references)
    short = result.amount_name.split()[-1]
    user = USER_UNITS[result.agent]
    series = []  # (variant, drawn at the user-level epsilon, its points), in legend order
    for v in _ORDER:
        pts_v = [p for p in result.points if p.variant == v and p.privacy_unit == unit]
        if pts_v:
            series.append((v, False, pts_v))
        if unit == user:  # a finer unit drawn again at its user-level epsilon, in the user's panel
            pts_u = [p for p in result.points if p.variant == v and p.privacy_unit not in _COVERS_USER
                     and p.user_epsilon is not None]
            if pts_u:
                series.append((v, True, pts_u))
    missing = [p for _, user_level, pts in series if not user_level for p in pts if p.infeasible]
    handles = {}
    # the last series of the legend is drawn first, with the largest markers, so that coinciding points of
    # different methods show as nested markers instead of hiding each other
    sizes = np.linspace(30.0, 30.0 + 22.0 * (len(series) - 1), len(series))
    for (v, user_level, pts_v), size in reversed(list(zip(series, sizes))):
        colour = _COLOURS[v]
        marker = _USER_MARKER if user_level else _MARKERS[v]
        for ai, amount in enumerate(amounts):
            pts = [p for p in pts_v if p.amount == amount]
            if not pts or all(p.infeasible for p in pts):
                continue
            # an infeasible point is a gap in its line (nan), never bridged
            x = np.array([p.user_epsilon if user_level else p.epsilon for p in pts], dtype=float)
            y = np.array([math.nan if (p.infeasible or p.mean is None) else p.mean for p in pts], dtype=float)
            err = np.array([p.std or 0.0 for p in pts], dtype=float)
            beat = np.array([bool(p.beats_holm) for p in pts])
            style = _AMOUNT_STYLES[ai % len(_AMOUNT_STYLES)]
            ax.errorbar(x, y, yerr=err, linestyle=style, color=colour, capsize=2, linewidth=1.3, gid=f"method:{v}")
            ok = np.isfinite(y)
            ax.scatter(x[ok & beat], y[ok & beat], marker=marker, color=colour, s=size, zorder=3)
            ax.scatter(x[ok & ~beat], y[ok & ~beat], marker=marker, facecolors="white", edgecolors=colour, s=size,
                       linewidths=1.2, zorder=3)
            label = _method_label(result.agent, v) + (", at its user-level ε (upper bound)" if user_level else "")
            handles[(v, user_level)] = Line2D([], [], color=colour, marker=marker, markersize=7, linewidth=1.3,
                                              label=label, gid=f"method:{v}")
    method_handles = [handles[(v, u)] for v, u, _ in series if (v, u) in handles]
    ref_handles = []
    for ai, amount in enumerate(amounts):
        style = _AMOUNT_STYLES[ai % len(_AMOUNT_STYLES)]
        np_mean = result.references[amount]["non_private"]["mean"]
        if np_mean is not None and math.isfinite(np_mean):
            ax.axhline(np_mean, linestyle=style, color="0.55", linewidth=1.1)
    amount_handles = [Line2D([], [], color="black", linestyle=_AMOUNT_STYLES[ai % len(_AMOUNT_STYLES)],
                             linewidth=1.3, label=f"{short} = {amount}") for ai, amount in enumerate(amounts)]
    ref_handles.append(Line2D([], [], color="0.55", linewidth=1.1, label="non-private (no noise; style: its "
                                                                          f"{short})"))
    triv = result.references[amounts[0]]["trivial"]
    ax.axhline(triv["mean"], color="black", linewidth=2.2, zorder=2)
    ref_handles.append(Line2D([], [], color="black", linewidth=2.2, label=f"trivial: {triv['label']}"))
    opt = result.references[amounts[0]].get("optimum")
    if opt is not None:
        ax.axhline(opt["mean"], linestyle=(0, (1, 1)), color="tab:olive", linewidth=1.4)
        ref_handles.append(Line2D([], [], linestyle=(0, (1, 1)), color="tab:olive", linewidth=1.4,
                                  label=opt["label"]))
    hollow = Line2D([], [], linestyle="none", marker="o", markerfacecolor="white", markeredgecolor="black",
                    label="hollow: not shown to beat trivial (Holm)")
    ax.set_xscale("log")
    if result.agent == "gpope":
        ax.set_yscale("log")
    title = f"{result.agent}: ε per {unit.replace('-', ' ')}"
    if explain:  # drawn on the caller's axes: the explanation goes with the panel
        import textwrap

        title = textwrap.fill(_explanation(result).replace("\n", " "), 110)
    ax.set_title(title, fontsize=8.5)
    ax.set_xlabel(_AXIS[unit] + (", user-level" if unit == user and unit != "reward-function" else "")
                  + _delta_note(result) + ", log scale", fontsize=8.5)
    ax.set_ylabel(result.utility_label, fontsize=8.5)
    ax.grid(True, which="both", alpha=0.3)
    handles = method_handles + amount_handles + [hollow] + ref_handles
    legend = ax.legend(handles=handles, fontsize=7.5, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0)
    for shown, handle in zip(legend.legend_handles, handles):  # the legend draws copies: keep the method's name
        shown.set_gid(handle.get_gid())
    if missing:  # under the x label: never over the data
        import textwrap

        groups: dict = {}
        for p in missing:
            groups.setdefault((p.variant, p.amount), []).append(f"{p.epsilon:g}")
        text = ("infeasible calibration (no point; a gap in its line): "
                + "; ".join(f"{v}, {short}={a}: eps = {', '.join(e)}" for (v, a), e in groups.items()))
        ax.annotate(textwrap.fill(text, 120), xy=(0.0, 0.0), xycoords=("axes fraction", ax.xaxis.label),
                    xytext=(0, -4), textcoords="offset points", va="top", ha="left", fontsize=7, color="darkred",
                    bbox={"facecolor": "white", "edgecolor": "darkred", "pad": 2}, gid="infeasible")
