r"""Regret experiments of PUCB (Vietri, Balle, Krishnamurthy & Wu, ICML 2020) and its baseline.

One seeded tabular MDP (:func:`make_mdp`) is shared by all runs; for each privacy level in
:data:`EPSILONS` and each seed, :func:`privcal.rl.pucb.run_pucb` records the exact regret of every
episode. :class:`RegretExperiment` holds the result (cumulative regret, number of
accuracy-suboptimal episodes, VBKW Def. 1 and 2); ``privcal.rl.pucb.plots`` draws it.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from typing import Any, Callable, Iterable, Optional

import numpy as np

from privcal import _rng
from privcal import _validate as V
from privcal.analysis.counter_bounds import accept_old_beta
from privcal.rl.parallel import run_trials_unchecked, check_engine
from privcal.rl.pucb.agent import (BUDGET_SPLITS, UNKNOWN_RULES, PUCBOptions, check_counter_noise,
                                   check_error_bound, run_pucb_unchecked)
from privcal.rl.pucb.tabular import TabularMDP, backward_induction, random_mdp_unchecked, river_swim_unchecked

__all__ = [
    "SETTINGS",
    "EPSILONS",
    "MDP_KINDS",
    "make_mdp",
    "RegretExperiment",
    "RegretSettings",
    "regret_experiment",
]

#: Experiment sizes. "fast" runs in seconds (tests, notebook in CI); "full" is the size of the
#: PUCB benchmark (S = 10, A = 3, H = 10, T = 10^4 episodes) over five seeds.
SETTINGS = {
    "fast": {"states": 3, "actions": 2, "horizon": 3, "episodes": 2000, "seeds": (0, 1)},
    "full": {"states": 10, "actions": 3, "horizon": 10, "episodes": 10_000,
             "seeds": (0, 1, 2, 3, 4)},
}
#: Privacy levels of the experiments; None is the non-private (UBEV-style) baseline.
EPSILONS = (0.1, 1.0, 10.0, None)
#: MDP families of :func:`make_mdp`.
MDP_KINDS = ("random", "riverswim")


def _label(epsilon) -> str:
    return "non-private" if epsilon is None else f"epsilon={epsilon:g}"


@dataclass(frozen=True)
class RegretExperiment:
    """Exact per-episode regret, shape (seeds, T), for each privacy level (keyed by label).

    Fields: ``setting`` (sizes, seeds, MDP name and agent options), ``epsilons`` (privacy levels,
    None for the baseline), ``episode_regret`` / ``error_bounds`` / ``informative_counts`` /
    ``jdp_epsilons`` (dicts keyed by label) and ``accuracy`` (threshold of Def. 1).
    """

    setting: dict
    epsilons: tuple
    episode_regret: dict
    error_bounds: dict
    informative_counts: dict
    jdp_epsilons: dict
    accuracy: float

    @property
    def labels(self) -> list:
        """Labels in the order of ``epsilons`` ("epsilon=0.1", ..., "non-private")."""
        return [_label(e) for e in self.epsilons]

    def cumulative(self, label: str) -> np.ndarray:
        """Cumulative regret (seeds, T) of one privacy level.

        Args:
            label: one of :attr:`labels`.

        Returns:
            Cumulative regret, shape (seeds, T).
        """
        return np.cumsum(self.episode_regret[label], axis=1)

    def suboptimal_episodes(self, label: str) -> np.ndarray:
        """Per seed, the number of episodes with rho* - rho^{pi_t} > accuracy (VBKW Def. 1).

        Args:
            label: one of :attr:`labels`.

        Returns:
            Integer counts, shape (seeds,).
        """
        return np.sum(self.episode_regret[label] > self.accuracy, axis=1)

    def summary(self) -> list:
        """One row per privacy level: final regret (mean, sd over seeds), suboptimal episodes, E.

        Returns:
            A list of dicts, one per label, in the order of :attr:`labels`.
        """
        rows = []
        for label in self.labels:
            final = self.cumulative(label)[:, -1]
            sub = self.suboptimal_episodes(label)
            rows.append({"label": label, "final_regret_mean": float(final.mean()),
                         "final_regret_sd": float(final.std(ddof=1)) if final.size > 1 else 0.0,
                         "suboptimal_mean": float(sub.mean()),
                         "episodes": int(self.episode_regret[label].shape[1]),
                         "error_bound": self.error_bounds[label],
                         "informative_count": self.informative_counts[label],
                         "jdp_epsilon": self.jdp_epsilons[label]})
        return rows


def make_mdp(kind: str, states: int, actions: int, horizon: int,
             seed: _rng.Seed = 0) -> TabularMDP:
    """The experiments' MDPs: ``"random"`` (:func:`random_mdp`) or ``"riverswim"`` (A must be 2).

    Args:
        kind: "random" (Dirichlet transitions, uniform mean rewards) or "riverswim".
        states: number of states S, an integer >= 1 (>= 2 for riverswim).
        actions: number of actions A, an integer >= 1 (exactly 2 for riverswim).
        horizon: episode length H, an integer >= 1.
        seed: seed of the random MDP (unused by riverswim); default 0.

    Returns:
        The :class:`privcal.rl.pucb.tabular.TabularMDP`.

    Raises:
        ValueError: an argument is outside its range.
    """
    V.choice("kind", kind, MDP_KINDS)
    return unchecked_make_mdp(kind, V.positive_int("states", states), V.positive_int("actions", actions),
                              V.positive_int("horizon", horizon), seed)


def unchecked_make_mdp(kind: str, states: int, actions: int, horizon: int, seed=0) -> TabularMDP:
    """:func:`make_mdp` on arguments already checked (the kernel the CLI and the frontier call)."""
    if kind == "random":
        return random_mdp_unchecked(states, actions, horizon, seed)
    if actions != 2:
        raise ValueError(f"kind 'riverswim' needs actions = 2 (move left or right), got actions = {actions!r}")
    if states < 2:
        raise ValueError(f"states must be >= 2 for a chain, got {states!r}")
    return river_swim_unchecked(states, horizon)


def _one_run(env, episodes, epsilon, seed, options: PUCBOptions, progress) -> tuple:
    """One seeded PUCB run (top level, so joblib can ship it): (regret, E, informative count, JDP eps); the
    non-private baseline keeps exact counters (Laplace rules, no delta)."""
    if epsilon is None:
        options = replace(options, counter_noise="laplace", delta=None)
    run = run_pucb_unchecked(env, episodes, epsilon, seed, options, progress)
    return run.episode_regret, run.error_bound, run.info["informative_count"], run.jdp_epsilon


#: the sizes a :class:`RegretSettings` may override in the named setting
_SIZES = ("states", "actions", "horizon", "episodes")


@dataclass(frozen=True)
class RegretSettings:
    """What :func:`regret_experiment` runs, beyond the named setting's sizes (defaults in one place: here).

    Attributes:
        epsilons: privacy levels, each in (0, inf) or None (the non-private baseline); default :data:`EPSILONS`.
        seeds: agent seeds (non-negative ints); default None (the setting's seeds).
        mdp: MDP family, "random" (default) or "riverswim" (:func:`make_mdp`).
        mdp_seed: seed of the random MDP; default 0.
        accuracy: regret threshold of a suboptimal episode, in [0, inf); default None (10% of the optimal expected
            return rho*).
        failure_probability: the paper's beta', in (0, 1); default 0.1 (old keyword ``beta=`` deprecated).
        budget_split: "valid" (default) or "paper", see :class:`privcal.rl.pucb.PUCB`.
        error_bound: "valid" (default) or "paper", see :class:`privcal.rl.pucb.PUCB`.
        unknown: "optimistic" (default) or "paper", see :func:`privcal.rl.pucb.private_q`.
        counter_noise: noise of the private runs' counters, "laplace" (default, epsilon-JDP) or "gaussian"
            ((epsilon, delta)-JDP), see :class:`privcal.rl.pucb.PUCB`; the non-private baseline keeps exact counters.
        delta: JDP delta of the private runs, in (0, 1), with ``counter_noise="gaussian"`` only; default None.
        states, actions, horizon, episodes: replace the named setting's size (ints >= 1); default None (keep it).

    The values are checked by :func:`regret_experiment`.
    """

    epsilons: Iterable[Optional[float]] = EPSILONS
    seeds: Optional[Iterable[int]] = None
    mdp: str = "random"
    mdp_seed: _rng.Seed = 0
    accuracy: Optional[float] = None
    failure_probability: float = 0.1
    budget_split: str = "valid"
    error_bound: str = "valid"
    unknown: str = "optimistic"
    counter_noise: str = "laplace"
    delta: Optional[float] = None
    states: Optional[int] = None
    actions: Optional[int] = None
    horizon: Optional[int] = None
    episodes: Optional[int] = None


def _regret_settings(settings: Optional[RegretSettings], keywords: dict) -> tuple:
    """(settings, the size overrides in the order given), unknown keywords refused."""
    names = {f.name for f in fields(RegretSettings)}
    for key, value in keywords.items():  # in the order given, as the sizes are checked
        if key not in names:
            raise ValueError(f"unknown setting override {key!r}")
        if key in _SIZES:
            V.positive_int(key, value)
    if settings is not None and not isinstance(settings, RegretSettings):
        raise ValueError(f"settings must be a RegretSettings, got {settings!r}")
    s = RegretSettings(**keywords) if settings is None else replace(settings, **keywords)
    order = [k for k in keywords if k in _SIZES] + [k for k in _SIZES if k not in keywords]
    return s, [(k, getattr(s, k)) for k in order if getattr(s, k) is not None]


@accept_old_beta
def regret_experiment(setting: str = "fast", *, settings: Optional[RegretSettings] = None,
                      progress: Optional[Callable[[int, int], None]] = None,
                      n_jobs: Optional[int] = -1, backend: Optional[str] = None,
                      scheduler: Optional[str] = None, **keywords: Any) -> RegretExperiment:
    """Regret over T episodes and number of accuracy-suboptimal episodes, per epsilon and seed.

    One MDP is shared by all runs; seeds vary the agent and the environment's sampling.

    Args:
        setting: "fast" or "full" (:data:`SETTINGS`); default "fast".
        settings: what runs, a :class:`RegretSettings`; default None: built from ``keywords``.
        progress: called as ``progress(done, total)`` with episodes done over all runs (after every
            episode when the runs are sequential, after every run otherwise); default None.
        n_jobs: parallel runs (``privcal.rl.parallel.run_trials``): an int >= 1 (1: in this process,
            one after the other), -1 (all cores or workers) or None (joblib's configured default);
            default -1. The result does not depend on it (each run is seeded by its own seed).
        backend: None (joblib's configured backend, default), "local" (loky processes) or "dask".
        scheduler: Dask scheduler address (``"tcp://host:8786"``), with backend "dask" only; default None.
        keywords: fields of :class:`RegretSettings` (``epsilons``, ``seeds``, ``mdp``, ``error_bound``,
            ``episodes``, ...), replacing those of ``settings``.

    Returns:
        A :class:`RegretExperiment`; its ``setting`` records the sizes and options used.

    Raises:
        ValueError: an argument is outside its range.
    """
    V.choice("setting", setting, tuple(SETTINGS))
    conf = dict(SETTINGS[setting])
    s, sizes = _regret_settings(settings, keywords)
    for key, value in sizes:
        conf[key] = V.positive_int(key, value)
    seeds, mdp, mdp_seed, accuracy = s.seeds, s.mdp, s.mdp_seed, s.accuracy
    budget_split, unknown, counter_noise = s.budget_split, s.unknown, s.counter_noise
    if seeds is not None:
        conf["seeds"] = tuple(int(x) for x in seeds)
    if not conf["seeds"]:
        raise ValueError("seeds must not be empty")
    V.choice("mdp", mdp, MDP_KINDS)
    V.choice("budget_split", budget_split, BUDGET_SPLITS)
    error_bound = check_error_bound(s.error_bound)
    V.choice("unknown", unknown, UNKNOWN_RULES)
    fail = V.open_unit("failure_probability", s.failure_probability)
    eps_list = tuple(None if e is None else V.positive("epsilon", e) for e in s.epsilons)
    some_eps = next((e for e in eps_list if e is not None), 1.0)  # the refusals do not depend on its value
    delta = check_counter_noise(counter_noise, some_eps, s.delta, budget_split, error_bound)
    env = unchecked_make_mdp(mdp, conf["states"], conf["actions"], conf["horizon"], mdp_seed)
    conf["mdp"] = env.name
    optimal = float(env.initial @ backward_induction(env).values[0])
    acc = 0.1 * optimal if accuracy is None else V.nonnegative("accuracy", accuracy)
    engine = check_engine(n_jobs, backend, scheduler)
    t_total = conf["episodes"]
    total = len(eps_list) * len(conf["seeds"]) * t_total
    sequential = engine[0] == 1 and engine[1] is None
    options = PUCBOptions(fail, budget_split, error_bound, unknown, counter_noise, delta)
    tasks = []
    for eps in eps_list:
        for sd in conf["seeds"]:
            cb = None
            if sequential and progress is not None:  # per episode, in this process
                offset = len(tasks) * t_total
                cb = lambda d, _t, o=offset: progress(o + d, total)  # noqa: E731
            tasks.append((env, t_total, eps, sd, options, cb))
    per_run = None if sequential or progress is None else (lambda d, _n: progress(d * t_total, total))
    runs = iter(run_trials_unchecked(_one_run, tasks, *engine, per_run))
    regrets, bounds, counts, jdps = {}, {}, {}, {}
    for eps in eps_list:
        label = _label(eps)
        rows = []
        for _ in conf["seeds"]:
            regret, bound, count, jdp = next(runs)
            rows.append(regret)
            bounds[label], counts[label], jdps[label] = bound, count, jdp
        regrets[label] = np.array(rows)
    conf.update(failure_probability=fail, budget_split=budget_split, error_bound=error_bound,
                unknown=unknown, counter_noise=counter_noise, delta=delta)
    return RegretExperiment(setting=conf, epsilons=eps_list, episode_regret=regrets,
                            error_bounds=bounds, informative_counts=counts, jdp_epsilons=jdps,
                            accuracy=acc)
