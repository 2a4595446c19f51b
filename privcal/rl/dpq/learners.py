"""The valid DP Q-learners of ``privcal train dpq --method select|fqi-dpsgd``: one run, its references, its verdict.

:func:`run_learner` trains :mod:`privcal.rl.dpq.select` or :mod:`privcal.rl.dpq.fqi_dpsgd` on the interval
environment (by default the random-peak variant: theta drawn from the seed) and reports:

* ``policy_return``: the released greedy policy's expected return per episode (simulation, stated
  number of episodes, seed ``[seed, 11]`` or ``[seed, 21]``) and its standard error;
* the references, computed without privacy: ``best_data_independent_return`` (the best policy that does
  not read the data, in expectation over theta: ``privcal.rl.envs.trivial_return``),
  ``data_independent_return_at_peak`` (that same policy, move-to-middle, at this run's theta, with the same
  evaluation episodes), ``threshold_at_peak_return`` (the threshold policy at theta: near-optimal, it
  knows theta) and ``non_private_return`` (the same learner without noise: the exact argmax for select,
  no noise for fqi-dpsgd);
* ``verdict`` (``privcal.rl.verdict.verdict_one_run``): one seed, the released policy's return against
  ``best_data_independent_return`` (the reference ``privcal frontier dpq`` uses over seeds), both with their
  simulation standard errors. Move-to-middle at this run's theta is reported but not tested: near theta = 0.5 it
  is optimal itself, and an optimal learner could not beat it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import numpy as np

from privcal import _validate as V
from privcal.rl import envs

__all__ = ["LEARNERS", "DEFAULT_SAMPLES", "LearnerSettings", "LearnerRun", "run_learner"]

LEARNERS = ("select", "fqi-dpsgd")
#: default environment steps (samples T) per learner and unit: select 20000 (10 rollouts of each of 40
#: policies); fqi-dpsgd 5000 transitions (100 episodes) or 50000 (1000 episodes) for the episode unit
DEFAULT_SAMPLES = {("select", None): 20000, ("fqi-dpsgd", "transition"): 5000, ("fqi-dpsgd", "episode"): 50000}


@dataclass(frozen=True)
class LearnerSettings:
    """What :func:`run_learner` reads besides the method and its target (defaults in one place: here; the
    learners check the values).

    Attributes:
        privacy_unit: select: "reward-function", "transition" or "episode"; fqi-dpsgd: "transition" or
            "episode"; default None: "reward-function" for select, "transition" for fqi-dpsgd.
        samples: environment steps T, an int >= 50; default None: :data:`DEFAULT_SAMPLES` (fqi-dpsgd uses
            floor(T / 50) episodes).
        selector: select's mechanism (``privcal.rl.dpq.select.SELECTORS``); default "randomized-response".
        policies: select's K, an int >= 2; default 40.
        peak: theta in [0, 1], or None (default) to draw it from ``seed``.
        references: compute the references (without privacy) and the verdict; default True.
        seed: an int >= 0; default 0.
        expected_batch_size: fqi-dpsgd: b, the expected records per DP-SGD step, a public number in (0, inf);
            default None: 256 transitions or 16 episodes (``FQIConfig.batch``).
        public_size: fqi-dpsgd: N_pub, the public size in records that sets q = min(1, b / N_pub), an int >= 1;
            default None: the data budget (``samples`` transitions, or ``samples`` / 50 episodes).
    """

    privacy_unit: Optional[str] = None
    samples: Optional[int] = None
    selector: str = "randomized-response"
    policies: int = 40
    peak: Optional[float] = None
    references: bool = True
    seed: int = 0
    expected_batch_size: Optional[float] = None
    public_size: Optional[int] = None


@dataclass(frozen=True)
class LearnerRun:
    """A run with its references and verdict: ``record`` (JSON fields), ``text`` (the report) and ``result``."""

    record: dict
    text: str
    result: object


def run_learner(method: str, settings: Optional[LearnerSettings] = None, *, epsilon: float,
                delta: Optional[float], **keywords) -> LearnerRun:
    """Train ``select`` or ``fqi-dpsgd`` once and report policy_return, privacy_unit, references and verdict.

    Args:
        method: "select" or "fqi-dpsgd".
        settings: the run's :class:`LearnerSettings`; default None: built from ``keywords``.
        epsilon: target epsilon, in (0, inf).
        delta: target delta, in (0, 1) (fqi-dpsgd needs it; select records it: it is pure eps-DP).
        keywords: fields of :class:`LearnerSettings`, replacing those of ``settings``; each is listed below.
{keywords}

    Returns:
        the :class:`LearnerRun`.

    Raises:
        ValueError: an argument is outside its range or the unit is not protected by the method.
        InfeasibleError: no sigma reaches the target (fqi-dpsgd).
        TypeError: a keyword is no field of :class:`LearnerSettings`.
    """
    import time

    from privcal.rl.dpq import select as dpq_select
    from privcal.rl.dpq import fqi_dpsgd

    run = V.settings_with("run_learner", LearnerSettings, settings, keywords)
    privacy_unit, samples, selector, policies, peak = run.privacy_unit, run.samples, run.selector, run.policies, run.peak
    references, seed, expected_batch_size, public_size = (run.references, run.seed, run.expected_batch_size,
                                                         run.public_size)
    V.choice("method", method, LEARNERS)
    start = time.perf_counter()
    if method == "select" and (expected_batch_size is not None or public_size is not None):
        raise ValueError("expected_batch_size and public_size apply only to fqi-dpsgd (select samples nothing)")
    if method == "select":
        if privacy_unit is None:
            privacy_unit = "reward-function"
        t = DEFAULT_SAMPLES[("select", None)] if samples is None else samples
        result = dpq_select.train_select(epsilon=epsilon, delta=delta, selector=selector, policies=policies,
                                         samples=t, peak=peak, privacy_unit=privacy_unit, seed=seed)
        baseline = None
        if references:
            u = np.asarray(result.scores)
            tau = float(dpq_select.thresholds(policies)[int(np.argmax(u))])
            baseline = envs.policy_return(lambda s: (s < tau).astype(np.intp), result.peak,
                                          episodes=result.evaluation_episodes, seed=[seed, 11])
        eval_seed = [seed, 11]
    else:
        if privacy_unit is None:
            privacy_unit = "transition"
        if delta is None:
            raise ValueError("fqi-dpsgd needs delta in (0, 1) (--delta)")
        t = DEFAULT_SAMPLES.get(("fqi-dpsgd", privacy_unit), 5000) if samples is None else samples
        t = V.positive_int("samples", t)
        if t < envs.EPISODE_STEPS:
            raise ValueError(f"samples must be at least {envs.EPISODE_STEPS} (one episode), got {samples!r}")
        config = fqi_dpsgd.FQIConfig(batch=expected_batch_size)  # validates b
        result = fqi_dpsgd.train_fqi_dpsgd(epsilon=epsilon, delta=delta, privacy_unit=privacy_unit,
                                           episodes=t // envs.EPISODE_STEPS, peak=peak, seed=seed, config=config,
                                           public_size=public_size)
        baseline = None
        if references:
            np_run = fqi_dpsgd.train_fqi_dpsgd(epsilon=None, delta=None, privacy_unit=privacy_unit,
                                               episodes=result.episodes, peak=result.peak, seed=seed, config=config,
                                               public_size=public_size)
            baseline = (np_run.policy_return, np_run.policy_return_se)
        eval_seed = [seed, 21]
    record = result.to_dict()
    lines = [f"{method} on the interval environment, reward peak theta = {result.peak:.4f}"
             f"{' (drawn from the seed)' if peak is None else ''}, seed {seed}",
             f"  privacy unit          {record['privacy_unit']}: {record['privacy_unit_description']}",
             f"  privacy               {result.guarantee}",
             *([f"  batch sampler         {record['sampling']} ({record['neighbouring']} neighbours; priced as such)"]
               if record.get("sampling") else []),
             *([f"  sampling rate         {record['sample_rate_source']}"] if record.get("sample_rate_source") else []),
             *([f"  user-level            one episode ({envs.EPISODE_STEPS} transitions, one user's data) removed: "
                f"epsilon <= {record['user_epsilon']:.4g}, certified >= {record['user_epsilon_lower']:.4g} at delta "
                f"{record['delta']:g} (privcal.accounting.groups)"] if record.get("user_epsilon") is not None else []),
             f"  policy return         {result.policy_return:.3f} +- {result.policy_return_se:.3f} per episode "
             f"(released greedy policy, {result.evaluation_episodes} simulated episodes)"]
    refs = {}
    if references:
        from privcal.rl.verdict import verdict_one_run

        best, best_se = envs.trivial_return()
        mid, mid_se = envs.policy_return(envs.middle_policy, result.peak, episodes=result.evaluation_episodes,
                                         seed=eval_seed)
        opt, opt_se = envs.policy_return(lambda s: (s < result.peak).astype(np.intp), result.peak,
                                         episodes=result.evaluation_episodes, seed=eval_seed)
        refs = {"best_data_independent_return": best, "best_data_independent_return_se": best_se,
                "data_independent_return_at_peak": mid, "data_independent_return_at_peak_se": mid_se,
                "threshold_at_peak_return": opt, "threshold_at_peak_return_se": opt_se,
                "non_private_return": baseline[0], "non_private_return_se": baseline[1]}
        # the reference of the frontier: the best data-independent policy in expectation over theta ~ U[0, 1]
        # (12.22), the bar a learner that reads the data must clear. Move-to-middle at this run's own theta is
        # printed beside it, but not tested: near theta = 0.5 it is itself optimal, so an optimal learner "did not
        # beat" it (select, epsilon 7, seed 5: 20.61 against 20.70)
        verdict = verdict_one_run(result.policy_return, best, higher_is_better=True,
                                  reference_label="best data-independent policy in expectation over theta",
                                  value_se=result.policy_return_se, reference_se=best_se)
        record["verdict"] = verdict.verdict
        record["verdict_test"] = verdict.to_dict()
        lines += [f"  non-private learner   {baseline[0]:.3f} (same data and seed, no noise)",
                  f"  data-independent      {mid:.3f} at this theta (move-to-middle); {best:.3f} in expectation "
                  f"over theta ~ U[0, 1] (best data-independent policy)",
                  f"  threshold at theta    {opt:.3f} (near-optimal; knows theta)",
                  f"  verdict               {verdict.line()}"]
    if not references:
        from privcal.rl.verdict import no_reference

        record.update(no_reference("references=False (--no-references)"))
    record["references"] = refs
    record["seconds"] = time.perf_counter() - start
    lines.append(f"  time                  {record['seconds']:.2f} s")
    return LearnerRun(record, "\n".join(lines), result)


run_learner.__doc__ = run_learner.__doc__.replace("{keywords}", V.keyword_docs(LearnerSettings))
