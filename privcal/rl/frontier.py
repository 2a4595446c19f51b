r"""The privacy-utility frontier: utility against epsilon and the amount of data, valid and paper noise.

This module holds :func:`frontier`: it checks a sweep's settings, runs its tasks and reads each point, its verdict
and its guarantee from the runs. What each agent's sweep runs (the settings object, the seeded tasks and the
references) is planned in ``privcal.rl.frontier_plans``, the training runs are in ``privcal.rl.frontier_tasks``, the
statistics in ``privcal.rl.frontier_stats``, the result type in ``privcal.rl.frontier_result`` and the picture in
``privcal.rl.frontier_plot``. Every public name of the last three modules, and the settings and variant names of
``frontier_plans``, is importable from here.

:func:`frontier` sweeps the target epsilon and the amount of data for one agent, trains a few seeds per
point in parallel (:func:`privcal.rl.parallel.run_trials`: all local cores by default, or a Dask
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

==============  ============================  ===============================  ============================
agent           amount of data                utility (per seed)               trivial reference
==============  ============================  ===============================  ============================
``dpq``         samples T (environment        released greedy policy's return  best data-independent policy
                steps), random-peak interval  per episode (500 simulated       in expectation over theta
                env (default)                 episodes; select, fqi: 2000)     (``envs.trivial_return``)
``dpq``         samples T, fixed interval     return per episode, mean of the  random policy (exact
                env ("fixed" environment)     last 10 episodes, higher better   simulation, its std. error)
``gpope``       trajectories m (chain,        MSPBE on an independent sample   theta = 0 (exact)
                N = m iterations)             (lower better)
``pucb``        episodes T (tabular MDP)      cumulative regret / T, exact     uniform policy: rho* -
                                              (lower better)                   rho^uniform (exact)
``frozenlake``  episodes n (users), random-   released policy's goal           best data-independent policy
                map FrozenLake (default) or   probability within H = 20,       of a stated class, expected
                the fixed map                 exact (higher better)            over the map prior (fixed
                                                                               map: uniform policy)
==============  ============================  ===============================  ============================

FrozenLake (``privcal.rl.toytext``) runs ``"select"`` (exponential mechanism over public policies, pure epsilon-DP)
and ``"fqi-episode"`` (fitted-Q iteration by DP-SGD), both in the episode unit (one user = one episode, so the
user-level epsilon is the point's own). Its maps differ from seed to seed far more than the learners' effect, so
its points are tested paired (:data:`PAIRED_NOTE`): each seed's value minus the reference policy's exact value on
the same map. The non-private reference is fitted-Q without noise; "optimum" each map's optimum, expected over the
prior.

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
from collections.abc import Callable
from typing import Any, Optional

import numpy as np

from privcal import _validate as V
from privcal.rl.parallel import check_engine, run_trials_unchecked
from privcal.rl.frontier_plot import method_label, panels, plot_frontier
from privcal.rl.frontier_result import (COVERS_USER, PAIRED_NOTE, UNITS, USER_UNITS, VARIANT_ORDER, Frontier,
                                        FrontierPoint)
from privcal.rl.frontier_plans import DPQ_LEARNERS, VARIANTS, FrontierSettings, plan_unchecked
from privcal.rl.frontier_tasks import run_task
from privcal.rl.frontier_stats import (CORRECTION, beats_reference, holm, holm_over_grid, one_sided_p_value,
                                       unchecked_beats_reference, unchecked_p_value)

__all__ = ["AGENTS", "VARIANTS", "AGENT_VARIANTS", "VARIANT_CHOICES", "SETTINGS", "USER_UNITS", "CORRECTION",
           "FrontierPoint", "Frontier", "FrontierSettings", "beats_reference", "one_sided_p_value", "holm",
           "holm_over_grid", "frontier",
           "panels", "plot_frontier", "ENVIRONMENTS", "FROZENLAKE_ENVIRONMENTS", "DPQ_LEARNERS", "UNITS",
           "COVERS_USER", "VARIANT_ORDER", "PAIRED_NOTE", "method_label"]

AGENTS = ("dpq", "gpope", "pucb", "frozenlake")
#: Every variant of each agent, in table order; ``frontier(variant="all")`` (default) runs them. PUCB's
#: "gaussian" is valid, with Gaussian counters and an (epsilon, delta)-JDP guarantee.
AGENT_VARIANTS = {"dpq": ("select", "fqi-transition", "fqi-episode", "valid", "paper"), "gpope": ("valid", "paper"),
                  "pucb": ("valid", "gaussian", "paper"), "frozenlake": ("select", "fqi-episode")}
#: dpq environments: "random-peak" (default: theta drawn per seed, privcal.rl.envs.draw_peak) or "fixed" (App. E.1)
ENVIRONMENTS = ("random-peak", "fixed")
#: frozenlake environments: "random-map" (default: the map drawn per seed from the public prior,
#: privcal.rl.toytext.random_map) or "fixed" (gymnasium's public 4x4 map)
FROZENLAKE_ENVIRONMENTS = ("random-map", "fixed")
#: every value of ``frontier(variant=...)``: a variant of ``AGENT_VARIANTS``, "both" or "all"
VARIANT_CHOICES = ("valid", "paper", "gaussian", "select", "fqi-transition", "fqi-episode", "both", "all")
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
    "frozenlake": {
        "fast": {"epsilons": (0.1, 1.0, 10.0, 100.0), "amounts": (1000, 10000), "seeds": tuple(range(100)),
                 "delta": 1e-5},
        "paper": {"epsilons": (0.1, 0.3, 1.0, 3.0, 10.0, 30.0, 100.0), "amounts": (1000, 10000),
                  "seeds": tuple(range(200)), "delta": 1e-5},
    },
}

_UTILITY = {  # name, axis label, higher is better, amount name, trivial reference's label
    "dpq": ("final_return", "return per episode (mean of the last 10 episodes)", True, "samples T",
            "random policy"),
    "dpq-random-peak": ("policy_return", "return per episode of the released greedy policy", True, "samples T",
                        "best data-independent policy"),
    "gpope": ("mspbe", "MSPBE (log scale)", False, "trajectories m", "theta = 0"),
    "pucb": ("regret_per_episode", "cumulative regret / episodes", False, "episodes T", "uniform policy"),
    "frozenlake": ("value", "goal probability within H = 20 of the released policy (exact)", True, "episodes n",
                   "best data-independent policy in expectation over the map prior"),
}


# ------------------------------------------------------------------------------------- frontier


def _stats(values) -> tuple:
    vals = np.asarray(values, dtype=float)
    if vals.size == 0:
        return None, None
    if not np.all(np.isfinite(vals)):
        return math.inf, math.nan
    return float(vals.mean()), float(vals.std(ddof=1)) if vals.size > 1 else 0.0


def _seed(value) -> int:
    """A seed: a non-negative int (``ValueError`` naming it otherwise)."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 0:
        raise ValueError(f"seeds must be non-negative integers, got {value!r}")
    return int(value)


def frontier(agent: str, settings: Optional[FrontierSettings] = None, *, n_jobs: Optional[int] = -1,
             backend: Optional[str] = None, scheduler: Optional[str] = None,
             progress: Optional[Callable[[int, int], None]] = None, **keywords: Any) -> Frontier:
    """Sweep epsilon x amount of data for one agent under valid and/or paper noise; utility per point.

    See the module docstring for the utilities, the references and the noise of each variant.

    Args:
        agent: "dpq" (Wang & Hegde 2019 Algorithm 1 on the interval environment), "gpope" (GPOPE on
            the chain), "pucb" (PUCB on a random tabular MDP) or "frozenlake".
        settings: the sweep, a :class:`FrontierSettings`; default None: built from ``keywords``, whose fields
            are (as keywords, replacing those of ``settings``):
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
        keywords: the fields of :class:`FrontierSettings` above and below (``environment``).
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
    sw = V.settings_with("frontier", FrontierSettings, settings, keywords)
    epsilons, amounts, seeds, variant, setting = sw.epsilons, sw.amounts, sw.seeds, sw.variant, sw.setting
    delta, confidence, environment = sw.delta, sw.confidence, sw.environment
    V.choice("agent", agent, AGENTS)
    V.choice("setting", setting, ("fast", "paper"))
    V.choice("variant", variant, VARIANT_CHOICES)
    if agent == "dpq":
        environment = "random-peak" if environment is None else V.choice("environment", environment, ENVIRONMENTS)
    elif agent == "frozenlake":
        environment = "random-map" if environment is None else V.choice("environment", environment,
                                                                         FROZENLAKE_ENVIRONMENTS)
    elif environment is not None:
        raise ValueError(f"environment applies only to agents 'dpq' and 'frozenlake', got {environment!r}")
    own = VARIANTS if (agent == "dpq" and environment == "fixed") else AGENT_VARIANTS[agent]
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
    checked = FrontierSettings(eps_list, amount_list, seed_list, variant, setting, delta, confidence, environment)
    return _frontier(agent, checked, variants, engine, progress)


def _frontier(agent, checked: FrontierSettings, variants, engine, progress=None) -> Frontier:
    """The sweep of :func:`frontier` from checked settings (tuples of epsilons, amounts and seeds; ``variants`` the
    variants it expands to; ``engine`` from ``check_engine``)."""
    epsilons, amounts, seeds, setting = checked.epsilons, checked.amounts, checked.seeds, checked.setting
    delta, confidence, environment = checked.delta, checked.confidence, checked.environment
    name, label, higher, amount_name, _ = _UTILITY["dpq-random-peak" if environment == "random-peak" else agent]
    sweep = plan_unchecked(agent, checked, variants)
    tasks, plan, ref_idx, fixed, settings = sweep.tasks, sweep.points, sweep.references, sweep.fixed, sweep.settings
    results = run_trials_unchecked(run_task, tasks, *engine, progress)
    n = len(seeds)
    trivial = fixed["trivial"]
    points = []
    order = sorted(range(len(plan)), key=lambda i: (VARIANT_ORDER.index(plan[i][0]), amounts.index(plan[i][2]),
                                                    epsilons.index(plan[i][1])))
    for i in order:
        v, eps, amount, noise, infeasible, start = plan[i]
        unit = UNITS[agent][v]
        if infeasible:
            points.append(FrontierPoint(v, eps, amount, guarantee=_guarantee(agent, v, None, eps, delta),
                                        infeasible=infeasible, privacy_unit=unit, user_unit=USER_UNITS[agent]))
            continue
        res = results[start:start + n]
        if agent in ("dpq", "frozenlake"):
            values = tuple(r[0] for r in res)
            noise = noise if noise is not None else res[0][3]
        elif agent == "pucb":
            values = tuple(r[0] for r in res)
            noise = res[0][1]
        else:
            values = tuple(res)
        mean, std = _stats(values)
        tested, ref_mean, ref_se, shift = np.asarray(values, dtype=float), trivial["mean"], trivial["se"], 0.0
        if agent == "frozenlake":  # paired: each seed's map has its own exact reference value (PAIRED_NOTE)
            own = np.asarray([r[5] for r in res], dtype=float)
            tested, ref_mean, ref_se, shift = tested - own, 0.0, 0.0, float(own.mean())
        verdict, bound = unchecked_beats_reference(tested, ref_mean, higher, confidence, ref_se)
        bound = bound + shift
        p_value = unchecked_p_value(tested, ref_mean, higher, ref_se)
        user_eps, user_low = _user_epsilon(agent, v, unit, eps, res)
        word, sign_p = "", None
        if len(values) >= 2:
            from privcal.rl.verdict import verdict_over_seeds

            vs = verdict_over_seeds(tested, ref_mean, higher_is_better=higher, reference_label=trivial["label"],
                                    reference_se=ref_se, confidence=confidence)
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
    if agent in ("dpq", "frozenlake") and not all(r[1] for r in results):  # a premise failed: no guarantee to translate
        return None, None
    if unit in COVERS_USER:
        return float(eps), None
    pairs = {r[4] for r in results}
    if len(pairs) != 1 or None in pairs:  # the learner reported no user-level bound: none is claimed
        return None, None
    upper, lower = pairs.pop()
    return float(upper), (None if lower is None else float(lower))


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


def _guarantee(agent, variant, results, eps, delta) -> str:
    if agent == "frozenlake":
        held = [r[1] for r in results]
        if all(held):
            return results[0][2]
        return f"no guarantee: a premise failed in {held.count(False)} of {len(held)} seeds ({results[0][2]})"
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
