r"""Monte Carlo checks of the private counters and of PrivQ's error bound (VBKW ICML 2020).

- :func:`counter_error_check`: does the counter bound (4/eps) ln(1/beta) log(T)^{5/2} of VBKW
  App. A.3 hold at the binary mechanism's noise scale? (and the valid union bound of
  :func:`privcal.analysis.counter.error_bound`)
- :func:`pucb_error_bound_check`: does PrivQ's E_epsilon bound all 2SAH + S^2AH counters at once?
- :func:`collusion_attack`: the JDP example of VBKW App. A.2.

Every check is seeded (``privcal._rng``) and reports exact Clopper-Pearson intervals
(``privcal._stats``); a verdict is "holds" if the interval's upper end is <= the failure
probability, "fails" if its lower end is above it, else "inconclusive".
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Optional

import numpy as np

from privcal import _rng
from privcal import _validate as V
from privcal._stats import clopper_pearson
from privcal.analysis.counter import BinaryCounter
from privcal.analysis.counter_bounds import (
    accept_old_beta,
    error_bound_paper_unchecked as counter_error_bound_paper_unchecked,
    error_bound_unchecked as counter_error_bound_unchecked,
    sup_error_failure_lower_bound_unchecked,
)
from privcal.rl.pucb.bounds import (
    BUDGET_SPLITS,
    counter_epsilon_paper_unchecked,
    counter_epsilon_unchecked,
    error_bound_paper_unchecked,
    num_counters_unchecked,
)

__all__ = ["counter_error_check", "ErrorBoundCheckSettings", "pucb_error_bound_check", "collusion_attack"]


def _sup_errors(steps: int, epsilon: float, shape, seed, stream: str = "random") -> np.ndarray:
    """sup_t |release_t - c(t)| for independent counters of ``shape`` (Monte Carlo helper)."""
    counter_rng, stream_rng = _rng.spawn(seed, 2)
    counter = BinaryCounter(steps, epsilon, shape, seed=counter_rng)
    exact = np.zeros(shape)
    sup = np.zeros(shape)
    for _ in range(steps):
        values = stream_rng.random(shape) if stream == "random" else np.zeros(shape)
        exact += values
        np.maximum(sup, np.abs(counter.update(values) - exact), out=sup)
    return sup


def _verdict(lo: float, hi: float, failure_probability: float) -> str:
    if hi <= failure_probability:
        return "holds"
    if lo > failure_probability:
        return "fails"
    return "inconclusive"


@accept_old_beta
def counter_error_check(steps: int, epsilon: float, failure_probability: float, *,
                        trials: int = 2000, seed: _rng.Seed = 0, log_base: float = 2.0,
                        confidence: float = 0.95) -> dict:
    """Monte Carlo check of the counter bound (4/eps) ln(1/beta) log(T)^{5/2} (VBKW App. A.3).

    ``trials`` independent counters of length ``steps`` (random streams in [0, 1]); counts how often
    sup_t |release - count| exceeds the paper's bound and the valid union bound
    (:func:`privcal.analysis.counter.error_bound`), with exact Clopper-Pearson intervals at ``confidence``.
    Verdict "holds" if the upper end <= beta, "fails" if the lower end > beta. Looseness is each
    bound divided by the empirical (1 - beta)-quantile of the sup error.

    Args:
        steps: stream length T, an integer >= 1.
        epsilon: privacy parameter of each counter, in (0, inf).
        failure_probability: beta, the bounds' failure probability, in (0, 1) (old keyword
            ``beta=`` deprecated).
        trials: number of independent counters, an integer >= 1; default 2000.
        seed: seed of the counters and the streams; default 0.
        log_base: base of the paper's log(T), in (0, inf) and != 1; default 2.
        confidence: level of the two-sided Clopper-Pearson intervals, in (0, 1); default 0.95.

    Returns:
        A dict with the settings, ``sup_error_quantile`` and, under "paper" and "union", the bound,
        failures, failure rate, interval, verdict, looseness and rigorous failure lower bound.

    Raises:
        ValueError: an argument is outside its range.
    """
    t = V.positive_int("steps", steps)
    eps = V.positive("epsilon", epsilon)
    b = V.open_unit("failure_probability", failure_probability)
    n = V.positive_int("trials", trials)
    base = V.positive("log_base", log_base)
    if base == 1.0:
        raise ValueError(f"log_base must be positive and != 1, got {log_base!r}")
    conf = V.open_unit("confidence", confidence)
    sup = _sup_errors(t, eps, (n,), seed)
    quantile = float(np.quantile(sup, 1.0 - b))
    out = {"steps": t, "epsilon": eps, "failure_probability": b, "trials": n,
           "confidence": confidence, "sup_error_quantile": quantile}
    for name, bound in (("paper", counter_error_bound_paper_unchecked(t, eps, b, log_base=base)),
                        ("union", counter_error_bound_unchecked(t, eps, b))):
        fails = int(np.sum(sup > bound))
        lo, hi = clopper_pearson(fails, n, conf)
        out[name] = {"bound": bound, "failures": fails, "failure_rate": fails / n,
                     "interval": (lo, hi), "verdict": _verdict(lo, hi, b),
                     "looseness": bound / quantile if quantile > 0 else math.inf,
                     "failure_lower_bound": sup_error_failure_lower_bound_unchecked(bound, t, eps)}
    return out


@dataclass(frozen=True)
class ErrorBoundCheckSettings:
    """The Monte Carlo side of :func:`pucb_error_bound_check` (defaults in one place: here; checked there).

    Attributes:
        trials: number of Monte Carlo runs, an integer >= 1; default 200.
        seed: seed of the counters; default 0.
        budget_split: per-counter epsilon, "paper" (epsilon/(3H), default) or "valid".
        confidence: level of the two-sided Clopper-Pearson interval, in (0, 1); default 0.95.
    """

    trials: int = 200
    seed: _rng.Seed = 0
    budget_split: str = "paper"
    confidence: float = 0.95


@accept_old_beta
def pucb_error_bound_check(states: int, actions: int, horizon: int, episodes: int,
                           epsilon: float, failure_probability: float, **keywords: Any) -> dict:
    """Does PrivQ's E_epsilon bound all 2SAH + S^2AH counters uniformly w.p. >= 1 - beta'?

    Rigorous lower bound on the failure probability
    (:func:`privcal.analysis.counter.sup_error_failure_lower_bound` over K counters), the valid union bound
    for comparison, and a Monte Carlo estimate over ``trials`` runs of all K counters (the error
    does not depend on the stream, so streams are zeros).

    Args:
        states: number of states S, an integer >= 1.
        actions: number of actions A, an integer >= 1.
        horizon: episode length H, an integer >= 1.
        episodes: number of episodes T, an integer >= 1.
        epsilon: JDP epsilon of the agent, in (0, inf).
        failure_probability: the paper's beta', in (0, 1) (old keyword ``beta=`` deprecated).
        keywords: fields of :class:`ErrorBoundCheckSettings` (``trials``, ``seed``, ``budget_split``,
            ``confidence``; defaults there), or ``settings``, an :class:`ErrorBoundCheckSettings` whose fields
            the other keywords replace.

    Returns:
        A dict with the number of counters, the per-counter epsilon, the bound E, the valid union
        bound, the rigorous failure lower bound, the failures, the interval and the verdict.

    Raises:
        ValueError: an argument is outside its range.
    """
    st = V.settings_with("pucb_error_bound_check", ErrorBoundCheckSettings, keywords.pop("settings", None), keywords)
    trials, seed, budget_split, confidence = st.trials, st.seed, st.budget_split, st.confidence
    s = V.positive_int("states", states)
    a = V.positive_int("actions", actions)
    h = V.positive_int("horizon", horizon)
    t = V.positive_int("episodes", episodes)
    eps = V.positive("epsilon", epsilon)
    b = V.open_unit("failure_probability", failure_probability)
    n = V.positive_int("trials", trials)
    V.choice("budget_split", budget_split, BUDGET_SPLITS)
    conf = V.open_unit("confidence", confidence)
    k = num_counters_unchecked(s, a, h)
    split = counter_epsilon_unchecked if budget_split == "valid" else counter_epsilon_paper_unchecked
    ce = split(eps, h)
    bound = error_bound_paper_unchecked(3.0 * h * ce, s, a, h, t, b)
    sup = _sup_errors(t, ce, (n, k), seed, stream="zeros").max(axis=1)
    fails = int(np.sum(sup > bound))
    lo, hi = clopper_pearson(fails, n, conf)
    return {"counters": k, "counter_epsilon": ce, "bound": bound,
            "union_bound": counter_error_bound_unchecked(t, ce, b, counters=k),
            "failure_lower_bound": sup_error_failure_lower_bound_unchecked(bound, t, ce, k),
            "failures": fails, "trials": n, "interval": (lo, hi),
            "verdict": _verdict(lo, hi, b)}


def collusion_attack(epsilon: float, *, steps: int = 16, target: Optional[int] = None,
                     trials: int = 20_000, seed: _rng.Seed = 0, confidence: float = 0.95) -> dict:
    r"""The JDP example of VBKW App. A.2: users t-1 and t+1 collude to learn user t's bit.

    They know their own bits and see the releases m~_{t-1}, m~_{t+1}; they guess
    u_t = [m~_{t+1} - u_{t+1} - m~_{t-1} > 1/2]. With one Laplace(1/epsilon) draw xi reused in
    every round (m~_t = m_t + xi) the difference is exactly u_t. With the binary mechanism the
    stream is epsilon-DP, so no guess beats e^epsilon / (1 + e^epsilon) on a uniform bit.

    Args:
        epsilon: privacy parameter of both mechanisms, in (0, inf).
        steps: stream length T, an integer >= 3; default 16.
        target: round t of the attacked user, an integer in [2, T - 1]; default None (T // 2).
        trials: number of independent streams, an integer >= 1; default 20000.
        seed: seed of the bits and both mechanisms' noise; default 0.
        confidence: level of the two-sided Clopper-Pearson intervals, in (0, 1); default 0.95.

    Returns:
        A dict with the settings, ``dp_limit`` = e^epsilon / (1 + e^epsilon) and, under
        "single_draw" and "binary", the accuracy, its interval and the largest |residual|.

    Raises:
        ValueError: an argument is outside its range.
    """
    eps = V.positive("epsilon", epsilon)
    t_steps = V.positive_int("steps", steps)
    if t_steps < 3:
        raise ValueError(f"steps must be >= 3 (rounds t-1, t, t+1), got {steps!r}")
    tgt = t_steps // 2 if target is None else V.positive_int("target", target)
    if not 2 <= tgt <= t_steps - 1:
        raise ValueError(f"target must be in [2, {t_steps - 1}], got {target!r}")
    n = V.positive_int("trials", trials)
    conf = V.open_unit("confidence", confidence)
    bits_rng, draw_rng, counter_rng = _rng.spawn(seed, 3)
    bits = bits_rng.integers(0, 2, size=(t_steps, n)).astype(float)
    prefix = np.cumsum(bits, axis=0)  # prefix[t-1] = m_t
    # one Laplace draw reused across rounds (the [SS18]-style mechanism)
    xi = draw_rng.laplace(0.0, 1.0 / eps, size=n)
    single_before, single_after = prefix[tgt - 2] + xi, prefix[tgt] + xi
    # binary mechanism
    counter = BinaryCounter(t_steps, eps, (n,), seed=counter_rng)
    releases = np.array([counter.update(bits[i]) for i in range(t_steps)])
    truth = bits[tgt - 1]
    out = {"epsilon": eps, "steps": t_steps, "target": tgt, "trials": n,
           "dp_limit": math.exp(eps) / (1.0 + math.exp(eps))}
    for name, before, after in (("single_draw", single_before, single_after),
                                ("binary", releases[tgt - 2], releases[tgt])):
        recovered = after - bits[tgt] - before
        correct = int(np.sum((recovered > 0.5) == (truth > 0.5)))
        out[name] = {"accuracy": correct / n,
                     "interval": clopper_pearson(correct, n, conf),
                     "max_abs_residual": float(np.max(np.abs(recovered - truth)))}
    return out
