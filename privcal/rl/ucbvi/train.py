"""One Private-UCB-VI run as ``privcal train ucbvi`` reports it: the run, its non-private baseline and its record.

:func:`train_ucbvi_unchecked` runs the learner (and, with references, the same learner on exact counts, same MDP
and seed), and builds the record every output format prints: the run's regret per episode with its standard
error over episodes, the uniform policy's exact expected regret per episode (the trivial reference), and the
verdict of ``privcal.rl.verdict.verdict_one_run`` against it (lower is better). The command line's glue,
which checks the flags and renders the record, is ``privcal.cli.ucbvi``.

Privacy unit: one user = one episode, replaced (joint DP).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Optional

import numpy as np

from privcal import _rng
from privcal.rl.pucb.tabular import TabularMDP
from privcal.rl.ucbvi.agent import UCBVIRun, UCBVISettings, run_ucbvi_unchecked
from privcal.rl.ucbvi.experiments import make_environment
from privcal.rl.verdict import Verdict, no_reference, verdict_one_run

__all__ = ["TrainSettings", "TrainRun", "train_ucbvi_unchecked"]


@dataclass(frozen=True)
class TrainSettings:
    """The checked settings of one ``privcal train ucbvi`` run.

    Attributes:
        environment: "random" or "frozenlake" (``privcal.rl.ucbvi.experiments.make_environment``).
        episodes: number of episodes T, an int >= 1.
        epsilon: the JDP epsilon, in (0, inf), or None for the non-private learner (exact counts).
        delta: the JDP delta, in (0, 1), with Gaussian counters; None otherwise.
        failure_probability: beta of the counters' error bound and the bonus, in (0, 1).
        seed: seed of the agent and the episodes (``privcal._rng``).
        counter_noise: "gaussian" or "laplace".
        horizon: H of the frozenlake environment, or None for its default.
        references: compute the references (the non-private baseline and the uniform policy).
    """

    environment: str
    episodes: int
    epsilon: Optional[float]
    delta: Optional[float]
    failure_probability: float
    seed: _rng.Seed
    counter_noise: str
    horizon: Optional[int] = None
    references: bool = True

    @property
    def runs(self) -> int:
        """Number of learner runs: 2 with references and a privacy budget (the private one, then the baseline), else 1."""
        return 2 if self.references and self.epsilon is not None else 1


@dataclass(frozen=True)
class TrainRun:
    """What :func:`train_ucbvi_unchecked` returns.

    Attributes:
        record: the json record (key order as printed).
        result: the learner's run.
        baseline: the non-private baseline's run, or None.
        mdp: the environment.
        cumulative: cumulative regret after each episode.
        se: standard error of the regret per episode over the episodes.
        verdict: the verdict against the uniform policy, or None without references.
    """

    record: dict
    result: UCBVIRun
    baseline: Optional[UCBVIRun]
    mdp: TabularMDP
    cumulative: np.ndarray
    se: float
    verdict: Optional[Verdict] = field(default=None)


def train_ucbvi_unchecked(settings: TrainSettings,
                          progress: Optional[Callable[[int], Optional[Callable[..., Any]]]] = None) -> TrainRun:
    """One run of ``privcal train ucbvi`` from checked settings (trusted: nothing is validated here).

    Args:
        settings: the checked settings.
        progress: ``progress(offset)`` gives the callback of the run that starts after ``offset`` episodes (the
            baseline's offset is ``settings.episodes``), or None; default None.

    Returns:
        The :class:`TrainRun`: the record, both runs and what the text output needs.
    """
    epsilon, episodes, beta = settings.epsilon, settings.episodes, settings.failure_probability
    mdp = make_environment(settings.environment, horizon=settings.horizon)
    start = time.perf_counter()
    private = UCBVISettings(epsilon, settings.delta, beta, settings.seed, settings.counter_noise)
    result = run_ucbvi_unchecked(mdp, episodes, private, progress=None if progress is None else progress(0))
    baseline = None
    if settings.runs == 2:
        baseline = run_ucbvi_unchecked(mdp, episodes, replace(private, epsilon=None, delta=None),
                                       progress=None if progress is None else progress(episodes))
    seconds = time.perf_counter() - start
    regret = np.asarray(result.episode_regret, dtype=float)
    cumulative = np.cumsum(regret)
    # the realised regret is random (which policy each episode ran depends on the run's own noise and episodes):
    # its standard error over the episodes, against the uniform policy's exact expected regret
    se = float(regret.std(ddof=1) / math.sqrt(episodes)) if episodes > 1 else math.inf
    out = dict(result.to_dict())
    out.update({
        "algorithm": "non-private" if epsilon is None else "private-ucb-vi",
        "environment": settings.environment, "mdp": mdp.name, "states": mdp.states, "actions": mdp.actions,
        "horizon": mdp.horizon, "episodes": episodes, "seed": settings.seed,
        "privacy_unit": None if epsilon is None else "episode",
        "regret_per_episode": result.regret_per_episode, "regret_per_episode_se": se,
        "final_regret": float(cumulative[-1]),
        "counter_error_within_bound": (None if epsilon is None else
                                       bool(result.max_counter_error <= result.error_bound)),
        "seconds": seconds,
    })
    refs = {}
    if settings.references:
        refs = {"uniform_policy_regret_per_episode": float(result.uniform_regret),
                "non_private_regret_per_episode": (None if baseline is None else
                                                   float(np.mean(baseline.episode_regret)))}
    out["references"] = refs
    verdict = None
    if refs:
        verdict = verdict_one_run(out["regret_per_episode"], refs["uniform_policy_regret_per_episode"],
                                  higher_is_better=False, reference_label="uniform policy (trivial reference)",
                                  value_se=se)
        out["verdict"], out["verdict_test"] = verdict.verdict, verdict.to_dict()
    else:
        out.update(no_reference("--no-references"))
    return TrainRun(out, result, baseline, mdp, cumulative, se, verdict)
