"""One PUCB run as ``privcal train pucb`` reports it: the run, its non-private baseline and its record.

:func:`train_pucb_unchecked` runs PUCB (Vietri, Balle, Krishnamurthy & Wu, ICML 2020) on a seeded tabular MDP
(and, with references, the non-private baseline with exact counters on the same MDP and seed), and builds the
record every output format prints: the cumulative regret, the counters' error bound against the largest error
seen, the uniform policy's exact regret (the trivial reference) and the verdict of
``privcal.rl.verdict.verdict_one_run`` against it (lower is better). The command line's glue, which checks
the flags and renders the record, is ``privcal.cli.pucb``.

Privacy unit: one user = one episode's trajectory, replaced (joint DP; :data:`privcal.rl.pucb.agent.PRIVACY_UNIT`).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any, Callable, Optional

import numpy as np

from privcal import _rng
from privcal.rl.pucb.agent import PRIVACY_UNIT, PUCBOptions, PUCBRun, run_pucb_unchecked
from privcal.rl.pucb.tabular import TabularMDP, uniform_policy_return
from privcal.rl.verdict import Verdict, no_reference, verdict_one_run

__all__ = ["TrainSettings", "TrainRun", "train_pucb_unchecked"]


@dataclass(frozen=True)
class TrainSettings:
    """The checked settings of one ``privcal train pucb`` run.

    Attributes:
        episodes: number of episodes T, an int >= 1.
        epsilon: the JDP epsilon, in (0, inf), or None for the non-private baseline (exact counters).
        failure_probability: beta of the counters' error bound, in (0, 1).
        seed: seed of the agent and the episodes (``privcal._rng``).
        budget_split: "valid" or "paper" (:class:`privcal.rl.pucb.agent.PUCB`).
        error_bound: the checked error-bound rule, "valid" or "paper".
        unknown: rule for pairs with few visits, "optimistic" or "paper".
        counter_noise: "laplace" or "gaussian".
        delta: the JDP delta with Gaussian counters, else None.
        accuracy: regret above which an episode counts as suboptimal, in [0, inf), or None for 0.1 times the
            optimal return.
        references: compute the references (the non-private baseline and the uniform policy).
    """

    episodes: int
    epsilon: Optional[float]
    failure_probability: float
    seed: _rng.Seed
    budget_split: str = "valid"
    error_bound: str = "valid"
    unknown: str = "optimistic"
    counter_noise: str = "laplace"
    delta: Optional[float] = None
    accuracy: Optional[float] = None
    references: bool = True

    @property
    def runs(self) -> int:
        """Number of learner runs: 2 with references and a privacy budget (the private one, then the baseline), else 1."""
        return 2 if self.references and self.epsilon is not None else 1


@dataclass(frozen=True)
class TrainRun:
    """What :func:`train_pucb_unchecked` returns.

    Attributes:
        record: the json record (key order as printed).
        result: PUCB's run.
        baseline: the non-private baseline's run, or None.
        verdict: the verdict against the uniform policy, or None without references.
    """

    record: dict
    result: PUCBRun
    baseline: Optional[PUCBRun]
    verdict: Optional[Verdict] = None


def train_pucb_unchecked(mdp: TabularMDP, settings: TrainSettings,
                         progress: Optional[Callable[[int], Optional[Callable[..., Any]]]] = None) -> TrainRun:
    """One run of ``privcal train pucb`` from checked settings (trusted: nothing is validated here).

    Args:
        mdp: the tabular MDP.
        settings: the checked settings.
        progress: ``progress(offset)`` gives the callback of the run that starts after ``offset`` episodes (the
            baseline's offset is ``settings.episodes``), or None; default None.

    Returns:
        The :class:`TrainRun`: the record and both runs.
    """
    s, episodes = settings, settings.episodes
    start = time.perf_counter()
    rules = PUCBOptions(s.failure_probability, s.budget_split, s.error_bound, s.unknown, s.counter_noise, s.delta)
    result = run_pucb_unchecked(mdp, episodes, s.epsilon, s.seed, rules, None if progress is None else progress(0))
    baseline = None
    if s.runs == 2:
        baseline = run_pucb_unchecked(mdp, episodes, None, s.seed, PUCBOptions(s.failure_probability),
                                      None if progress is None else progress(episodes))
    seconds = time.perf_counter() - start
    accuracy = 0.1 * result.optimal_return if s.accuracy is None else s.accuracy
    cumulative = result.cumulative_regret
    refs = {}
    if s.references:
        gap = result.optimal_return - uniform_policy_return(mdp)
        refs = {"random_policy_regret_per_episode": gap,
                "random_policy_final_regret": gap * episodes,
                "non_private_final_regret": None if baseline is None else float(baseline.cumulative_regret[-1])}
    out = {
        "algorithm": "non-private" if s.epsilon is None else "pucb",
        "epsilon": result.epsilon,
        "jdp_epsilon": result.jdp_epsilon,
        "counter_epsilon": result.counter_epsilon,
        "counter_noise": result.counter_noise,
        "delta": result.delta,
        "noise_scale": result.noise_scale,
        "privacy_unit": None if s.epsilon is None else "episode",
        "privacy_unit_description": PRIVACY_UNIT,
        "guarantee": result.guarantee,
        "budget_split": s.budget_split,
        "error_bound_rule": s.error_bound,
        "error_bound": result.error_bound,
        "unknown": s.unknown,
        "failure_probability": result.failure_probability,
        "mdp": mdp.name,
        "states": mdp.states, "actions": mdp.actions, "horizon": mdp.horizon,
        "episodes": episodes, "seed": s.seed,
        "optimal_return": result.optimal_return,
        "final_regret": float(cumulative[-1]),
        "accuracy": accuracy,
        "suboptimal_episodes": result.suboptimal_episodes(accuracy),
        "max_counter_error": result.max_counter_error,
        "counter_error_within_bound": (None if result.epsilon is None else
                                       bool(result.max_counter_error <= result.error_bound)),
        "references": refs,
        "seconds": seconds,
    }
    # the realised regret is random (the run's own episodes): its standard error over the episodes, not an
    # exact value, against the uniform policy's exact expected regret
    per_episode = np.diff(np.asarray(cumulative, dtype=float), prepend=0.0)
    se = float(per_episode.std(ddof=1) / math.sqrt(episodes)) if episodes > 1 else math.inf
    out["regret_per_episode"], out["regret_per_episode_se"] = float(cumulative[-1]) / episodes, se
    verdict = None
    if refs:
        verdict = verdict_one_run(float(cumulative[-1]) / episodes, refs["random_policy_regret_per_episode"],
                                  higher_is_better=False, reference_label="uniform policy (trivial reference)",
                                  value_se=se)
        out["verdict"], out["verdict_test"] = verdict.verdict, verdict.to_dict()
    else:
        out.update(no_reference("--no-references"))
    return TrainRun(out, result, baseline, verdict)
