"""The tasks of the privacy-utility frontier (``privcal.rl.frontier``): one seeded training run per call.

Each task returns the utility of one run of one agent at one (variant, epsilon, amount of data, seed); the
frontier plans the task list and reads the results back. :func:`run_task` is the single top-level function the
parallel engine runs (``privcal.rl.parallel.run_trials``), so that the task list stays homogeneous. Every task is
seeded by its arguments only.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

import numpy as np

__all__ = ["EVAL_EPISODES", "LAST_EPISODES", "DPQTask", "GPOPETask", "dpq_task", "learner_task", "gpope_task",
           "gpope_lstd_task", "pucb_task", "frozenlake_task", "run_task"]

#: dpq, random-peak environment: simulated episodes per released policy (seed [seed, 31])
EVAL_EPISODES = 500
#: dpq, fixed environment: training episodes averaged per seed (the last ones)
LAST_EPISODES = 10


@dataclass(frozen=True)
class DPQTask:
    """One Algorithm-1 run of the dpq frontier.

    Fields:
        kind: "valid", "paper" or "non_private".
        hp: the learner's hyperparameters (``privcal.rl.dpq.experiments.hyperparameters``).
        epsilon: target epsilon (valid only), or None.
        delta: target delta (valid only), or None.
        sigma: the paper's noise (paper only), or None.
        beta: the paper's noise decay (paper only), or None.
        seed: the run's seed.
        environment: "fixed" (default) or "random-peak".
    """

    kind: str
    hp: Any
    epsilon: Optional[float]
    delta: Optional[float]
    sigma: Optional[float]
    beta: Optional[float]
    seed: int
    environment: str = "fixed"


@dataclass(frozen=True)
class GPOPETask:
    """One GPOPE run of the gpope frontier on data set ``trial`` of size ``m``.

    Fields:
        ctx: the domain's public context (``privcal.rl.gpope.experiments.make_context``).
        m: trajectories of the data set.
        base_seed: the seed every stream is keyed under.
        trial: the data set's index (its data is shared by every variant and epsilon).
        sigma: GPOPE's noise multiplier.
        clip: the clip h.
        step: the constant step size.
        stream: the key of the noise stream, (variant index, epsilon key).
    """

    ctx: Any
    m: int
    base_seed: int
    trial: int
    sigma: float
    clip: float
    step: float
    stream: tuple


def dpq_task(task: DPQTask) -> tuple:
    """One Algorithm-1 run: (utility, premises held or None, guarantee, noise). Fixed environment: the mean
    return of the last :data:`LAST_EPISODES` training episodes; random-peak: the released greedy policy's return
    at the seed's theta (:data:`EVAL_EPISODES` simulated episodes).

    Args:
        task: the run, a :class:`DPQTask`.
    """
    from privcal.rl import envs
    from privcal.rl.dpq import agent as dpq_agent

    kind, hp, epsilon, delta, sigma, beta, seed, environment = (task.kind, task.hp, task.epsilon, task.delta,
                                                                task.sigma, task.beta, task.seed, task.environment)

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
        return float(r[-LAST_EPISODES:].mean()), held, guarantee, res.sigma
    value, _ = envs.policy_return(res.greedy_actions, env.peak, episodes=EVAL_EPISODES, seed=[seed, 31])
    return value, held, guarantee, res.sigma


def learner_task(variant: str, samples: int, epsilon: Optional[float], delta: Optional[float], seed: int) -> tuple:
    """One run of a valid learner on the random-peak environment: (policy return, premises held, guarantee,
    sigma or None, (user-level epsilon upper, lower) or None). The user-level pair is the transition unit's (the
    learner's own ``privcal.accounting.groups.group_epsilon`` over its sigma, sample rate and steps, one episode
    of 50 transitions).

    Args:
        variant: "select", "fqi-transition", "fqi-episode", or "fqi-non-private".
        samples: environment steps T.
        epsilon: target epsilon, or None (the non-private reference).
        delta: target delta, or None.
        seed: the run's seed.
    """
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


def gpope_task(task: GPOPETask) -> float:
    """MSPBE of one GPOPE run on data set ``task.trial`` of size ``task.m`` (data shared by every variant and
    epsilon).

    Args:
        task: the run, a :class:`GPOPETask`.
    """
    from privcal.rl.gpope.experiments import unchecked_gpope_score, trial_rng

    t = task
    data = t.ctx.sample(t.m, trial_rng(t.base_seed, 1, t.m, t.trial))
    return float(unchecked_gpope_score(t.ctx, data, t.sigma, t.clip, t.step,
                                       trial_rng(t.base_seed, 2, t.m, t.trial, *t.stream)))


def gpope_lstd_task(ctx: Any, m: int, base_seed: int, trial: int) -> float:
    """MSPBE of non-private LSTD on data set ``trial`` of size m (the same data as :func:`gpope_task`).

    Args:
        ctx: the domain's public context (``privcal.rl.gpope.experiments.make_context``).
        m: trajectories of the data set.
        base_seed: the seed every stream is keyed under.
        trial: the data set's index.
    """
    from privcal.rl.gpope.experiments import trial_rng
    from privcal.rl.gpope.lstd import lstd

    data = ctx.sample(m, trial_rng(base_seed, 1, m, trial))
    return float(ctx.score(lstd(data, ridge=1e-10)))


def pucb_task(mdp: Any, episodes: int, epsilon: Optional[float], failure_probability: float, variant: str,
              seed: int, delta: Optional[float] = None) -> tuple:
    """Cumulative regret per episode of one PUCB run, and its error bound E.

    Args:
        mdp: the tabular MDP (``privcal.rl.pucb.tabular``).
        episodes: episodes T.
        epsilon: target epsilon, or None (non-private).
        failure_probability: the run's failure probability.
        variant: "valid" (Laplace counters), "gaussian" (Gaussian counters at ``delta``) or "paper".
        seed: the run's seed.
        delta: the Gaussian counters' delta, or None (default).
    """
    from privcal.rl.pucb.agent import PUCBOptions, run_pucb_unchecked

    rule = "paper" if variant == "paper" else "valid"
    noise = "gaussian" if variant == "gaussian" else "laplace"
    rules = PUCBOptions(failure_probability, rule, rule, counter_noise=noise,
                        delta=delta if noise == "gaussian" else None)
    run = run_pucb_unchecked(mdp, episodes, epsilon, seed, rules)
    return float(run.episode_regret.sum() / episodes), float(run.error_bound)


def frozenlake_task(variant: str, episodes: int, epsilon: Optional[float], delta: Optional[float], seed: int,
                    environment: str) -> tuple:
    """One FrozenLake run (``privcal.rl.toytext.experiment.run_frozenlake``): (exact value, premises held,
    guarantee, sigma or None, None, the reference policy's exact value on the seed's map).

    Args:
        variant: "select", "fqi-episode" or "fqi-non-private".
        episodes: episodes n (users).
        epsilon: target epsilon, or None.
        delta: target delta, or None.
        seed: the run's seed.
        environment: "random-map" or "fixed".
    """
    from privcal.rl.toytext.experiment import run_frozenlake

    method = "select" if variant == "select" else "fqi-dpsgd"
    if variant == "fqi-non-private":
        epsilon = delta = None
    res = run_frozenlake(method, epsilon=epsilon, delta=None if method == "select" else delta, environment=environment,
                         episodes=episodes, seed=seed, non_private=False)
    return res.value, res.premises_held, res.guarantee, res.details.get("sigma"), None, res.reference


def run_task(kind: str, *args: Any) -> Any:
    """Dispatch one task (a single top-level function keeps the task list homogeneous).

    Args:
        kind: "frozenlake", "dpq" (one :class:`DPQTask`), "learner", "gpope" (one :class:`GPOPETask`), "lstd" or
            "pucb".
        *args: the task's arguments.
    """
    if kind == "frozenlake":
        return frozenlake_task(*args)
    if kind == "dpq":
        return dpq_task(*args)
    if kind == "learner":
        return learner_task(*args)
    if kind == "gpope":
        return gpope_task(*args)
    if kind == "lstd":
        return gpope_lstd_task(*args)
    return pucb_task(*args)
