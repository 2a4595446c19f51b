r"""What a privacy-utility frontier runs (``privcal.rl.frontier``): its settings, and per agent its plan.

A plan (:class:`SweepPlan`, from :func:`plan_unchecked`) is the sweep's list of seeded training tasks (each one
call of ``privcal.rl.frontier_tasks.run_task``), where each (variant, epsilon, amount) point's seeds land in that
list, the same for the non-private reference of each amount, the references that need no training (the trivial
policy or predictor, and the optimum where one is known) and the settings the result records. Each agent plans its
own: dpq (Wang & Hegde's Algorithm 1 with the paper's or the valid noise, or a valid learner), gpope (the chain
domain, sigma from ``privcal.calibrators.gpope.calibrate``; step sizes tuned on public data), pucb (one fixed
random MDP) and frozenlake. A calibration that does not exist gives a point with no tasks and its reason.

Every task is seeded by its own arguments (see ``privcal.rl.frontier``), so the plan, and so the frontier, does
not depend on the other points of the sweep.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass
from typing import Optional

import numpy as np

from privcal.errors import InfeasibleError
from privcal.rl.frontier_result import PAIRED_NOTE
from privcal.rl.frontier_tasks import EVAL_EPISODES, LAST_EPISODES, DPQTask, GPOPETask

__all__ = ["VARIANTS", "DPQ_LEARNERS", "FrontierSettings", "SweepPlan", "plan_unchecked", "gpope_context"]

#: Noise variants shared by every agent; ``frontier(variant="both")`` runs both.
VARIANTS = ("valid", "paper")
#: dpq's valid learners (privcal.rl.dpq.select, privcal.rl.dpq.fqi_dpsgd): random-peak environment only
DPQ_LEARNERS = ("select", "fqi-transition", "fqi-episode")


@dataclass(frozen=True)
class FrontierSettings:
    """What :func:`privcal.rl.frontier.frontier` sweeps (defaults in one place: here; checked by that function).

    Attributes:
        epsilons: target epsilons, each in (0, inf); default None (the setting's, ``privcal.rl.frontier.SETTINGS``).
        amounts: amounts of data, ints >= 1 (dpq: samples T >= 64; gpope: trajectories m; pucb: episodes; frozenlake:
            users' episodes); default None (the setting's).
        seeds: seeds per point, non-negative ints (2 or more for a verdict); default None (the setting's).
        variant: "valid", "paper", "gaussian" (pucb only), a dpq learner ("select", "fqi-transition",
            "fqi-episode"; random-peak environment only), "both" (valid and paper) or "all" (default: every variant
            of the agent, ``privcal.rl.frontier.AGENT_VARIANTS``).
        setting: "fast" (default: small sizes) or "paper" (the papers' sizes).
        delta: target delta, in (0, 1); default None (the setting's; pucb: its gaussian variant only).
        confidence: one-sided confidence of the "beats trivial" verdict, in (0, 1); default 0.95.
        environment: dpq: "random-peak" (default) or "fixed"; frozenlake: "random-map" (default) or "fixed";
            default None.
    """

    epsilons: Optional[Iterable[float]] = None
    amounts: Optional[Iterable[int]] = None
    seeds: Optional[Iterable[int]] = None
    variant: str = "all"
    setting: str = "fast"
    delta: Optional[float] = None
    confidence: float = 0.95
    environment: Optional[str] = None


@dataclass(frozen=True)
class SweepPlan:
    """What one frontier sweep runs and how its results are read back (:func:`plan_unchecked`).

    Attributes:
        tasks: the seeded training tasks, in order, each the argument tuple of
            ``privcal.rl.frontier_tasks.run_task``.
        points: one row per (variant, epsilon, amount) point: (variant, epsilon, amount, noise or None, the
            reason no calibration exists or "", index in ``tasks`` of the point's first seed; its seeds follow).
        references: per amount, the index in ``tasks`` of the first seed of the non-private reference
            (``"non_private"``) and, for gpope, of LSTD (``"lstd"``).
        fixed: the references computed without training: ``"trivial"`` (mean, se, label) and, where known,
            ``"optimum"``.
        settings: what the result records about the sweep's learners and environment.
    """

    tasks: list
    points: list
    references: dict
    fixed: dict
    settings: dict


def plan_unchecked(agent: str, settings: FrontierSettings, variants: tuple) -> SweepPlan:
    """The plan of one frontier sweep from settings :func:`privcal.rl.frontier.frontier` has checked.

    Args:
        agent: "dpq", "gpope", "pucb" or "frozenlake" (not checked).
        settings: the checked :class:`FrontierSettings`: tuples of epsilons, amounts and seeds, the setting, delta
            and the environment as :func:`privcal.rl.frontier.frontier` resolves them.
        variants: the variants the sweep runs (those ``settings.variant`` expands to).

    Returns:
        the :class:`SweepPlan`.

    Raises:
        ValueError: an amount is too small for a dpq learner.
    """
    epsilons, amounts, seeds, setting = settings.epsilons, settings.amounts, settings.seeds, settings.setting
    delta, environment = settings.delta, settings.environment
    if agent == "dpq":
        return SweepPlan(*_plan_dpq(setting, epsilons, amounts, seeds, variants, delta, environment))
    if agent == "frozenlake":
        return SweepPlan(*_plan_frozenlake(epsilons, amounts, seeds, variants, delta, environment))
    if agent == "gpope":
        return SweepPlan(*_plan_gpope(setting, epsilons, amounts, seeds, variants, delta, gpope_context(setting)))
    from privcal.rl.pucb.experiments import SETTINGS as PS, unchecked_make_mdp

    sizes = PS["fast" if setting == "fast" else "full"]
    mdp = unchecked_make_mdp("random", sizes["states"], sizes["actions"], sizes["horizon"], 0)
    tasks, plan, ref_idx, fixed, recorded = _plan_pucb(setting, epsilons, amounts, seeds, variants, mdp, delta)
    recorded.update(mdp=mdp.name, states=mdp.states, actions=mdp.actions, horizon=mdp.horizon)
    return SweepPlan(tasks, plan, ref_idx, fixed, recorded)


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
                tasks += [("dpq", DPQTask(v, hp, eps, delta, ns.sigma, ns.beta, sd, environment)) for sd in seeds]
                plan.append((v, eps, T, ns.sigma, "", start))
        refs[T] = {"non_private": len(tasks)}
        if peaked:
            tasks += [("learner", "fqi-non-private", T, None, None, sd) for sd in seeds]
        else:
            tasks += [("dpq", DPQTask("non_private", hp, None, None, None, None, sd)) for sd in seeds]
    settings = {"learner": {k: v for k, v in asdict(hp0).items() if k != "samples"}, "last_episodes": LAST_EPISODES,
                "environment": environment}
    if peaked:
        from privcal.rl import envs

        triv, triv_se = envs.trivial_return()
        trivial = {"mean": triv, "se": triv_se, "label": "best data-independent policy (move-to-middle, "
                   "expected over theta ~ U[0, 1])"}
        opt = [envs.policy_return(lambda s, t=envs.draw_peak(sd): (s < t).astype(np.intp), envs.draw_peak(sd),
                                  episodes=EVAL_EPISODES, seed=[sd, 31])[0] for sd in seeds]
        optimum = {"mean": float(np.mean(opt)), "se": float(np.std(opt, ddof=1) / np.sqrt(len(opt)))
                   if len(opt) > 1 else 0.0, "label": "threshold at theta (knows theta), mean over the seeds"}
        settings.update(environment="privcal.rl.envs.IntervalEnv(peak=draw_peak(seed)): random-peak variant, "
                        "theta ~ U[0, 1] per seed", utility="released greedy policy's return per episode, "
                        f"{EVAL_EPISODES} simulated episodes (select and fqi: 2000)",
                        non_private="fqi-dpsgd without noise (transition unit)", last_episodes=None)
        return tasks, plan, refs, {"trivial": trivial, "optimum": optimum}, settings
    rnd, rnd_se = reference_return("random")
    mid, mid_se = reference_return("middle")
    trivial = {"mean": rnd, "se": rnd_se, "label": "random policy"}
    optimum = {"mean": mid, "se": mid_se, "label": "move-to-middle policy"}
    settings["environment"] = "privcal.rl.envs.IntervalEnv (Wang & Hegde 2019, App. E.1)"
    return tasks, plan, refs, {"trivial": trivial, "optimum": optimum}, settings


def gpope_context(setting: str) -> tuple:
    """The public part of the gpope frontier: the chain experiment's sizes and its context (the domain, its
    features and the independent evaluation sample that scores every run, ``privcal.rl.gpope.experiments``).

    Args:
        setting: "fast" (the experiments' "fast" sizes) or "paper" (their "full" sizes) (not checked).

    Returns:
        (the experiment settings, the context of ``privcal.rl.gpope.experiments.make_context("chain", ...)``).
    """
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
                tasks += [("gpope", GPOPETask(ctx, m, 0, sd, sigma, clip, step, (VARIANTS.index(v), _key(eps))))
                          for sd in seeds]
                plan.append((v, eps, m, sigma, "", start))
        step0 = G.tune_step_size(ctx, m, 0.0, clip, s.step_grid, s.tune_trials, 0)
        refs[m] = {"non_private": len(tasks)}
        tasks += [("gpope", GPOPETask(ctx, m, 0, sd, 0.0, clip, step0, (len(VARIANTS), 0))) for sd in seeds]
        refs[m]["lstd"] = len(tasks)
        tasks += [("lstd", ctx, m, 0, sd) for sd in seeds]
    trivial = {"mean": float(ctx.score(np.zeros(ctx.evaluator.b.shape[0]))), "se": 0.0, "label": "theta = 0"}
    settings = {"domain": "chain", "clip": clip, "iterations": "N = m", "step_size": "tuned on public data per "
                "(variant, epsilon, m)", "eval_trajectories": ctx.evaluator.trajectories,
                "bounds": bounds}
    return tasks, plan, refs, {"trivial": trivial}, settings


def _plan_frozenlake(epsilons, amounts, seeds, variants, delta, environment):
    """(tasks, how to read them back, references, settings) of the FrozenLake frontier."""
    from privcal.rl.toytext import frozenlake as FL
    from privcal.rl.toytext import random_map as RM

    tasks, plan, refs = [], [], {}
    for n in amounts:
        for v in variants:
            for eps in epsilons:
                start = len(tasks)
                tasks += [("frozenlake", v, n, eps, delta, sd, environment) for sd in seeds]
                plan.append((v, eps, n, None, "", start))
        refs[n] = {"non_private": len(tasks)}
        tasks += [("frozenlake", "fqi-non-private", n, None, None, sd, environment) for sd in seeds]
    settings = {"environment": environment, "behaviour_policy": "uniform random", "horizon": FL.HORIZON,
                "test": PAIRED_NOTE,
                "non_private": "fqi-dpsgd without noise (same data)", "privacy_unit": "episode (one user)"}
    if environment == "random-map":
        prior = RM.prior_reference()
        trivial = {"mean": prior.value, "se": prior.se, "label": "best data-independent policy in expectation over "
                   f"the map prior ({prior.evaluation_maps} public maps; of a stated class)"}
        optimum = {"mean": prior.optimum, "se": prior.optimum_se, "label": "each map's optimum (knows the map), "
                   "expected over the prior"}
        settings.update(reference=prior.to_dict(), map_prior=f"4x4, start 0 and goal 15, hole probability "
                        f"{RM.HOLE_PROBABILITY:g} per other cell, redrawn until a path exists; map of seed s: "
                        f"SeedSequence([s, {RM.MAP_STREAM}])")
    else:
        mdp = FL.frozen_lake_mdp()
        trivial = {"mean": float(mdp.initial @ FL.uniform_value(mdp)[0]), "se": 0.0, "label": "uniform policy (the "
                   "fixed map is public: its optimal policy is data-independent)"}
        optimum = {"mean": float(mdp.initial @ FL.optimal_value(mdp)[0][0]), "se": 0.0,
                   "label": "optimal policy (data-independent on the public map)"}
    return tasks, plan, refs, {"trivial": trivial, "optimum": optimum}, settings


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


def _key(epsilon: float) -> int:
    """An int naming an epsilon exactly (its IEEE-754 bits): the noise stream of a point depends on its
    own epsilon, not on the other epsilons of the sweep."""
    return int(np.float64(epsilon).view(np.uint64))
