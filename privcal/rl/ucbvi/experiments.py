r"""Regret of Private-UCB-VI over seeds, against the uniform policy and PUCB at the same epsilon.

For each method, privacy level and seed, one run on one fixed MDP records the exact regret of every episode
(rho* - rho^{pi_k}, by backward induction: no evaluation error); the run's utility is its mean regret per
episode. Over the seeds: the mean, a two-sided 95 % Student-t interval, and the verdict of
``privcal.rl.verdict.verdict_over_seeds`` against the uniform policy's exact regret per episode (lower is
better; one-sided Welch t bound at 0.95, the sign test beside it). Every cell is one family of seeds
tested once: no multiplicity correction across the grid is applied (say so when a grid is read).

Environments: ``"random"``, the random MDP of PUCB's frontier (S = 3, A = 2, H = 3, MDP seed 0,
``privcal.rl.pucb.experiments.make_mdp``), and ``"frozenlake"`` (``privcal.rl.toytext``, gymnasium's 4x4
slippery map, horizon 20). Methods: ``"ucbvi"`` (this package), ``"pucb"`` (Vietri et al. 2020, valid
variant, same counter noise and the same sigma: both calibrate on 6H streams), ``"ucbvi-nonprivate"``
(exact counters; the reference without privacy).

Privacy unit: one user = one episode, replaced (joint DP); Gaussian counters give (epsilon, delta)-JDP,
Laplace counters epsilon-JDP.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any, Iterable, Optional

import numpy as np
from numpy.typing import ArrayLike

from privcal import _validate as V
from privcal.rl.parallel import check_engine, run_trials_unchecked
from privcal.rl.pucb.agent import PUCBOptions, run_pucb_unchecked
from privcal.rl.pucb.experiments import unchecked_make_mdp
from privcal.rl.pucb.tabular import TabularMDP, backward_induction, uniform_policy_return
from privcal.rl.ucbvi.agent import COUNTER_NOISES, PRIVACY_UNIT, UCBVISettings, run_ucbvi_unchecked
from privcal.rl.verdict import verdict_over_seeds

__all__ = ["ENVIRONMENTS", "METHODS", "SETTINGS", "make_environment", "RegretCell", "ComparisonSettings",
           "regret_experiment", "t_interval"]

ENVIRONMENTS = ("random", "frozenlake")
METHODS = ("ucbvi", "pucb", "ucbvi-nonprivate")
#: "fast": seconds (tests); "full": the sizes of docs/ucbvi.md (minutes on 2 cores).
SETTINGS = {
    "fast": {"episodes": 200, "seeds": (0, 1), "epsilons": (10.0,)},
    "full": {"episodes": 10_000, "seeds": tuple(range(10)), "epsilons": (1.0, 3.0, 10.0)},
}


def make_environment(environment: str, *, horizon: Optional[int] = None) -> TabularMDP:
    """The experiments' MDPs: "random" (S = 3, A = 2, H = 3, MDP seed 0) or "frozenlake" (needs gymnasium).

    Args:
        environment: one of :data:`ENVIRONMENTS`.
        horizon: FrozenLake's horizon, an int >= 1; default None (``privcal.rl.toytext.HORIZON``); refused
            for "random" (whose H = 3 is the frontier's).

    Returns:
        The :class:`privcal.rl.pucb.tabular.TabularMDP`.

    Raises:
        ValueError: an argument is outside its range.
        ImportError: "frozenlake" without gymnasium.
    """
    V.choice("environment", environment, ENVIRONMENTS)
    if environment == "random":
        if horizon is not None:
            raise ValueError(f"horizon is fixed at 3 for environment='random', got {horizon!r}")
        return unchecked_make_mdp("random", 3, 2, 3, 0)
    from privcal.rl import toytext

    return toytext.frozen_lake_mdp(horizon=toytext.HORIZON if horizon is None else horizon)


def t_interval(values: ArrayLike, confidence: float = 0.95) -> tuple:
    """Two-sided Student-t interval for the mean of ``values`` (n - 1 degrees of freedom).

    Args:
        values: per-seed values, at least 2 finite floats.
        confidence: two-sided confidence, in (0, 1); default 0.95.

    Returns:
        (mean, low, high).

    Raises:
        ValueError: fewer than 2 values, or a non-finite one.
    """
    from scipy.stats import t as student_t

    v = np.asarray(values, dtype=float).ravel()
    if v.size < 2 or not np.all(np.isfinite(v)):
        raise ValueError(f"values must be at least 2 finite numbers, got {values!r}")
    conf = V.open_unit("confidence", confidence)
    mean = float(v.mean())
    half = float(student_t.ppf(0.5 + conf / 2.0, v.size - 1)) * float(v.std(ddof=1)) / math.sqrt(v.size)
    return mean, mean - half, mean + half


@dataclass(frozen=True)
class RegretCell:
    """One (method, epsilon) cell: per-seed regret per episode, mean, 95 % t interval, verdict vs uniform.

    ``guarantee`` says what the privacy protects; ``error_bound`` is the counters' E of the first seed (all
    seeds share it); ``verdict`` is the dict of ``privcal.rl.verdict.Verdict``.
    """

    method: str
    epsilon: Optional[float]
    delta: Optional[float]
    episodes: int
    seeds: tuple
    regret_per_episode: tuple
    mean: float
    ci_low: float
    ci_high: float
    uniform_regret: float
    error_bound: float
    verdict: dict
    guarantee: str

    def to_dict(self) -> dict:
        """JSON-ready copy."""
        return {"method": self.method, "epsilon": self.epsilon, "delta": self.delta, "episodes": self.episodes,
                "seeds": list(self.seeds), "regret_per_episode": list(self.regret_per_episode),
                "mean": self.mean, "ci95": [self.ci_low, self.ci_high], "uniform_regret": self.uniform_regret,
                "error_bound": self.error_bound, "verdict": self.verdict, "guarantee": self.guarantee,
                "privacy_unit": PRIVACY_UNIT}

    def line(self) -> str:
        """One line of text: method, epsilon, mean [CI], uniform, verdict."""
        eps = "non-private" if self.epsilon is None else f"eps={self.epsilon:g}"
        return (f"{self.method:17s} {eps:12s} T={self.episodes:<7d} regret/episode {self.mean:.4f} "
                f"[{self.ci_low:.4f}, {self.ci_high:.4f}] (uniform {self.uniform_regret:.4f}, "
                f"E={self.error_bound:.4g}): "
                f"{self.verdict['verdict']} the uniform policy ({len(self.seeds)} seeds)")


def _one_run(method: str, mdp: TabularMDP, episodes: int, settings: UCBVISettings) -> tuple:
    """One seeded run (top level, so joblib can ship it): (regret per episode, E, guarantee). ``settings`` holds
    the cell's epsilon and delta; PUCB reads them with its own rules, the non-private reference drops them."""
    if method == "pucb":
        rules = PUCBOptions(settings.failure_probability, counter_noise=settings.counter_noise,
                            delta=settings.delta if settings.counter_noise == "gaussian" else None)
        run = run_pucb_unchecked(mdp, episodes, settings.epsilon, settings.seed, rules)
        return float(run.episode_regret.mean()), float(run.error_bound), run.guarantee
    eps = None if method == "ucbvi-nonprivate" else settings.epsilon
    run = run_ucbvi_unchecked(mdp, episodes, replace(settings, epsilon=eps,
                                                     delta=None if eps is None else settings.delta))
    return float(run.episode_regret.mean()), float(run.error_bound), run.guarantee


@dataclass(frozen=True)
class ComparisonSettings:
    """What :func:`regret_experiment` compares (defaults in one place: here; checked by :func:`regret_experiment`).

    Attributes:
        setting: "fast" or "full" (:data:`SETTINGS`), the defaults of the next three; default "fast".
        epsilons: JDP epsilons, each in (0, inf); default None (the setting's).
        episodes: T, an int >= 1; default None (the setting's).
        seeds: agent seeds (non-negative ints, at least 2); default None (the setting's).
        methods: a subset of :data:`METHODS`; default ("ucbvi", "pucb"). "ucbvi-nonprivate" runs once (no epsilon).
        counter_noise: "gaussian" (default) or "laplace", for every private method.
        delta: JDP delta in (0, 1) with Gaussian counters (default 1e-5); must be None with Laplace counters.
        failure_probability: beta of both agents, in (0, 1); default 0.1.
        horizon: FrozenLake's horizon (``make_environment``); default None.
    """

    setting: str = "fast"
    epsilons: Optional[Iterable[float]] = None
    episodes: Optional[int] = None
    seeds: Optional[Iterable[int]] = None
    methods: Iterable[str] = ("ucbvi", "pucb")
    counter_noise: str = "gaussian"
    delta: Optional[float] = 1e-5
    failure_probability: float = 0.1
    horizon: Optional[int] = None


def regret_experiment(environment: str = "random", settings: Optional[ComparisonSettings] = None, *,
                      n_jobs: Optional[int] = 1, **keywords: Any) -> list:
    """Mean regret per episode over seeds (95 % t interval, verdict vs the uniform policy) per method and epsilon.

    Seed ``sd`` of every method and epsilon runs with agent seed ``sd`` (a fixed seed per run); the MDP is the
    same for all runs.

    Args:
        environment: one of :data:`ENVIRONMENTS`; default "random".
        settings: what is compared, a :class:`ComparisonSettings`; default None: built from ``keywords``.
        keywords: fields of :class:`ComparisonSettings` (``setting``, ``epsilons``, ``episodes``, ``seeds``,
            ``methods``, ``counter_noise``, ``delta``, ``failure_probability``, ``horizon``), replacing those of
            ``settings``.
        n_jobs: parallel runs (``privcal.rl.parallel``): 1 (default, in this process), an int, or -1 (all cores).

    Returns:
        A list of :class:`RegretCell`, in the order methods x epsilons.

    Raises:
        ValueError: an argument is outside its range.
    """
    c = V.settings_with("regret_experiment", ComparisonSettings, settings, keywords)
    setting, epsilons, episodes, seeds, methods = c.setting, c.epsilons, c.episodes, c.seeds, c.methods
    counter_noise, delta, failure_probability, horizon = c.counter_noise, c.delta, c.failure_probability, c.horizon
    V.choice("setting", setting, tuple(SETTINGS))
    conf = SETTINGS[setting]
    eps_list = tuple(V.positive("epsilon", e) for e in (conf["epsilons"] if epsilons is None else epsilons))
    t = V.positive_int("episodes", conf["episodes"] if episodes is None else episodes)
    sds = tuple(conf["seeds"] if seeds is None else seeds)
    for sd in sds:
        if isinstance(sd, bool) or not isinstance(sd, (int, np.integer)) or sd < 0:
            raise ValueError(f"seeds must be non-negative ints, got {sd!r}")
    if len(sds) < 2:
        raise ValueError(f"seeds must hold at least 2 seeds (a t interval needs 2), got {len(sds)}")
    meth = tuple(V.choice("methods", m, METHODS) for m in methods)
    noise = V.choice("counter_noise", counter_noise, COUNTER_NOISES)
    if noise == "laplace" and delta is not None:
        raise ValueError(f"delta is used only with counter_noise='gaussian', got delta={delta!r}")
    d = V.open_unit("delta", delta) if noise == "gaussian" else None
    beta = V.open_unit("failure_probability", failure_probability)
    mdp = make_environment(environment, horizon=horizon)
    engine = check_engine(n_jobs, None, None)
    optimal = float(mdp.initial @ backward_induction(mdp).values[0])
    uniform = optimal - uniform_policy_return(mdp)
    plan = []
    for m in meth:
        for eps in ((None,) if m == "ucbvi-nonprivate" else eps_list):
            plan.append((m, eps))
    tasks = [(m, mdp, t, UCBVISettings(eps, d, beta, int(sd), noise)) for m, eps in plan for sd in sds]
    results = iter(run_trials_unchecked(_one_run, tasks, *engine, None))
    cells = []
    for m, eps in plan:
        rows = [next(results) for _ in sds]
        vals = np.array([r[0] for r in rows])
        mean, low, high = t_interval(vals)
        verdict = verdict_over_seeds(vals, uniform, higher_is_better=False,
                                     reference_label="uniform policy (exact regret per episode)")
        cells.append(RegretCell(m, eps, None if eps is None else d, t, sds, tuple(float(v) for v in vals), mean,
                                low, high, uniform, rows[0][1], verdict.to_dict(), rows[0][2]))
    return cells
