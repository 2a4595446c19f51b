r"""Experiments of the GPOPE paper, Sec. 7 (Figures 1-4), in a *fast* setting (tests, notebook, CI) and
the paper's *full* setting (100 trials).

Every figure function returns an :class:`ExperimentResult` (x values, and per curve the mean,
standard deviation and number of diverged runs over trials) and :func:`plot` writes it as a PNG with
standard-deviation bands. What each figure runs:

* :func:`figure1a` -- chain, MSPBE vs data size m at (epsilon, delta) = (0.1, 1e-5): GPOPE with the
  *valid* sigma (``privcal.calibrators.gpope.calibrate``, bound "rdp": subsampled RDP without replacement,
  replace-one neighbours) at the tuned step size and at 0.1x and 10x it, GPOPE with the paper's
  sigma (Lemma 1 as printed with sensitivity h, bound "lemma1") at its own tuned step,
  DP-LSW and DP-LSL (BGP16), and the non-private LSTD and the zero predictor theta = 0 as references.
* :func:`figure1b` -- chain, MSPBE vs step size at fixed m (same methods; the baselines are flat).
* :func:`figure2` -- Mountain Car on-policy: (a) MSPBE vs m: GPOPE (valid and paper sigma), DP-LSW
  (on a grid aggregation of the state space), LSTD; (b) MSPBE vs step size.
* :func:`figure3` -- Mountain Car, GPOPE (valid sigma) at several epsilons vs m: (a) on-policy with
  LSTD, (b) off-policy (uniform target) with WIS-LSTD.
* :func:`figure4` -- HIV simulator, off-policy: relative MSPBE vs m, GPOPE at several epsilons
  (valid sigma) and WIS-LSTD.

The sizes (:data:`SETTINGS`), the clip per domain (:data:`CLIP`) and the run settings (:class:`FigureRun`)
live in ``privcal.rl.gpope.experiment_settings`` and are importable from here.

Protocol (choices the paper leaves open are parameters with these defaults): N = m iterations (one
expected visit per trajectory), constant step size, clip h per domain (:data:`CLIP`); step sizes and
DP-LSL's ridge are tuned on *public* data -- an independent sample of the same domain, never the
private one (GPOPE Sec. 7: "tuned using similar public data") -- by the mean MSPBE over
``tune_trials`` runs on a log grid. The MSPBE uses A, b, C from an independent evaluation sample of
``eval_trajectories`` trajectories (chain: 20 000 fast / 100 000 full; Mountain Car: 300 / 5 000;
HIV: 100 / 1 000). Each trial draws its own private data set; every random number comes from a
stream keyed by (figure, m, trial) under ``seed`` (``SeedSequence([seed, ...])``, through
``privcal._rng``), so results do not depend on the execution order or backend.

Parallelism: trials run through :func:`privcal.rl.parallel.run_trials`: by default on all local cores
(``n_jobs=-1``) with whatever backend :func:`joblib.parallel_config` selects (loky processes when none
is), one BLAS thread per worker. ``backend="dask", scheduler="tcp://host:8786"`` runs them on a Dask
distributed cluster (the ``dask`` extra; privcal installed on every worker); any other joblib backend
works through the configuration, with no code changes::

    result = figure1a("full", backend="dask", scheduler="tcp://scheduler-address:8786")

    import ray; from ray.util.joblib import register_ray; register_ray(); ray.init(address="auto")
    with joblib.parallel_config(backend="ray"):
        result = figure4("full")

(tests/test_rl_gpope.py checks this with a registered custom backend, ``threading`` and ``loky``;
tests/test_parallel.py with a Dask LocalCluster.)
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Optional, Union

import numpy as np
from numpy.typing import ArrayLike

from privcal import _rng as R
from privcal import _validate as V
from privcal.rl.parallel import run_trials_unchecked, check_engine, run_trials
from privcal.rl.gpope import agent as gpope_agent
from privcal.calibrators import gpope as _gpope_calibrator
from privcal.rl.gpope.agent import PAPER_BOUND, VALID_BOUND
from privcal.rl.gpope.lstd import dp_lsl, dp_lsw, first_visit_returns, lstd, wis_lstd
from privcal.rl.gpope.mspbe import MSPBE
from privcal.rl.gpope.figure_plot import plot
from privcal.rl.gpope.experiment_settings import CLIP, DEFAULT_STEP, SETTINGS, FigureRun, Setting

__all__ = ["Setting", "SETTINGS", "FigureRun", "CLIP", "DEFAULT_STEP", "ExperimentResult", "DomainContext",
           "make_context", "run_trials", "tune_step_size", "figure1a", "figure1b", "figure2", "figure3", "figure4",
           "plot"]


def _setting(setting, overrides) -> Setting:
    if isinstance(setting, str):
        V.choice("setting", setting, sorted(SETTINGS))
    base = SETTINGS[setting] if isinstance(setting, str) else setting
    return replace(base, **overrides) if overrides else base


_RUN_FIELDS = ("n_jobs", "seed", "epsilon", "delta", "progress", "backend", "scheduler")
_RUN_FIELDS_NO_EPSILON = tuple(f for f in _RUN_FIELDS if f != "epsilon")


def _split_keywords(where, run, keywords, fields):
    """(FigureRun, Setting overrides): the keywords in ``fields`` build the run settings, the others
    replace fields of the experiment :class:`Setting`."""
    own = {k: v for k, v in keywords.items() if k in fields}
    overrides = {k: v for k, v in keywords.items() if k not in fields}
    return V.settings_with(where, FigureRun, run, own, allowed=fields), overrides


@dataclass(frozen=True)
class _Study:
    """One figure panel's fixed inputs: its name, domain context, sizes, seed, parallel engine, privacy
    target, baselines, progress callback and y label."""

    name: str
    ctx: DomainContext
    setting: Setting
    seed: int
    engine: tuple
    epsilon: float
    delta: float
    baselines: tuple
    progress: Optional[Callable[[int, int], None]]
    ylabel: str = "MSPBE"


@dataclass
class ExperimentResult:
    """x values and curves {name: {"mean", "std", "diverged"}} (arrays over x), plus metadata."""

    name: str
    xlabel: str
    ylabel: str
    x: np.ndarray
    curves: dict = field(default_factory=dict)
    meta: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        """JSON-ready copy (arrays as lists)."""
        return {"name": self.name, "xlabel": self.xlabel, "ylabel": self.ylabel,
                "x": np.asarray(self.x).tolist(),
                "curves": {k: {kk: np.asarray(vv).tolist() for kk, vv in v.items()}
                           for k, v in self.curves.items()},
                "meta": self.meta}


# ---------------------------------------------------------------------------------------- domains


@dataclass
class DomainContext:
    """Everything public about a domain: sampler, MSPBE evaluator, and the DP-LS* ingredients.

    For Mountain Car, DP-LSW runs on a 12 x 12 grid aggregation of (position, velocity): the cell
    features are the Fourier features of the cell centres and the weights rho are the cell
    frequencies of the (public, independent) evaluation sample plus a 1e-3 floor, so that neither
    depends on the private data. The MSPBE of Mountain Car and HIV adds 1e-8 to C's diagonal.
    """

    kind: str
    evaluator: MSPBE
    gamma: float
    env: object = None
    behaviour: object = None
    target: object = None
    off_policy: bool = False
    relative: bool = False
    cells: object = None          # state aggregation for DP-LSW / DP-LSL (None: tabular ids)
    cell_phi: np.ndarray = None   # features of the N (aggregated) states
    cell_rho: np.ndarray = None   # public weights over them
    return_range: tuple = (0.0, 1.0)

    def sample(self, m: int, rng: R.Seed) -> Any:
        """m trajectories of the domain, a :class:`~privcal.rl.gpope.domains.data.Dataset`.

        Args:
            m: number of trajectories, an int >= 1.
            rng: seed or Generator of the sample (``privcal._rng``).
        """
        from privcal.rl.gpope.domains import chain, hiv, mountain_car
        if self.kind == "chain":
            return chain.sample_chain(m, rng)
        if self.kind == "mountain-car":
            return mountain_car.sample_mountain_car(m, rng, behaviour=self.behaviour, env=self.env,
                                                    off_policy=self.off_policy)
        return hiv.sample_hiv(m, rng, target=self.target, behaviour=self.behaviour, env=self.env)

    def score(self, theta: ArrayLike) -> float:
        """MSPBE of theta (relative MSPBE for HIV).

        Args:
            theta: value-function weights, shape (n_features,).
        """
        return self.evaluator.relative(theta) if self.relative else self.evaluator(theta)

    def state_index(self, observations: ArrayLike) -> np.ndarray:
        """State ids of observations for DP-LSW / DP-LSL (the grid cell, or the tabular state).

        Args:
            observations: an array of observations.
        """
        if self.cells is None:
            return np.asarray(observations)
        return self.cells.index(observations)


def make_context(kind: str, setting: Setting, seed: int = 0, *, off_policy: bool = False,
                 progress: Optional[Callable[[int, int], None]] = None) -> DomainContext:
    """Build a domain's public context (behaviour policy learned with seed-derived randomness).

    Args:
        kind: "chain", "mountain-car" or "hiv".
        setting: the experiment's :class:`Setting` (evaluation-sample size, Q-learning episodes).
        seed: int seed >= 0 of the evaluation sample and the behaviour policy; default 0.
        off_policy: Mountain Car only: evaluate the uniform policy from the behaviour's data;
            default False.
        progress: called as ``progress(done, total)`` while the behaviour policy learns; default None.

    Raises:
        ValueError: an unknown domain.
    """
    V.choice("kind", kind, ("chain", "mountain-car", "hiv"))
    from privcal.rl.gpope.domains import chain, hiv, mountain_car
    from privcal.rl.gpope.domains.features import GridCells
    rng = trial_rng(seed, 7919)
    if kind == "chain":
        ev = MSPBE.from_dataset(chain.sample_chain(setting.chain_eval, rng))
        n = chain.N_STATES - 1
        return DomainContext("chain", ev, chain.GAMMA, cell_phi=np.eye(n),
                             cell_rho=np.full(n, 1.0 / n), return_range=(0.0, 1.0))
    if kind == "mountain-car":
        env = mountain_car.MountainCarBatch.from_gymnasium()
        beh = mountain_car.learn_behaviour(env, episodes=setting.mc_q_episodes, seed=_key(seed, 31),
                                           progress=progress)
        data = mountain_car.sample_mountain_car(setting.mc_eval, rng, behaviour=beh, env=env,
                                                off_policy=off_policy)
        ev = MSPBE.from_dataset(data, ridge=1e-8)
        cells = GridCells([env.min_position, -env.max_speed], [env.max_position, env.max_speed],
                          (12, 12))
        counts = np.bincount(cells.index(data.observations), minlength=cells.n_states)
        rho = counts / counts.sum() + 1e-3 / cells.n_states
        g = mountain_car.GAMMA
        worst = -(1 - g ** env.horizon) / (1 - g)
        return DomainContext("mountain-car", ev, g, env=env, behaviour=beh, off_policy=off_policy,
                             cells=cells, cell_phi=beh.q.features(cells.centers()),
                             cell_rho=rho / rho.sum(), return_range=(worst, 0.0))
    if kind == "hiv":
        env = hiv.HIVBatch(horizon=setting.hiv_horizon)
        target, beh = hiv.learn_hiv_policies(env, episodes=setting.hiv_q_episodes, seed=_key(seed, 37),
                                             progress=progress)
        ev = MSPBE.from_dataset(hiv.sample_hiv(setting.hiv_eval, rng, target=target, behaviour=beh,
                                               env=env), ridge=1e-8)
        return DomainContext("hiv", ev, hiv.GAMMA, env=env, behaviour=beh, target=target,
                             off_policy=True, relative=True)
    raise AssertionError(kind)  # pragma: no cover - checked above


# ---------------------------------------------------------------------------------------- trials


def _key(seed, *key) -> np.random.SeedSequence:
    """The seed sequence of the stream keyed by ``key`` under ``seed`` (one stream per (figure, m, trial))."""
    return np.random.SeedSequence([int(seed), *[int(k) for k in key]])


def trial_rng(seed, *key) -> np.random.Generator:
    """The generator of one trial's stream: ``seed`` keyed by ``key`` (independent across keys)."""
    return R.as_generator(_key(seed, *key))


def _sigma(epsilon, delta, m, bound, clip=1.0):
    """sigma of Alg. 1 for N = m iterations on m trajectories (independent of the clip h)."""
    return _gpope_calibrator.calibrate(epsilon, delta, iterations=m, trajectories=m, clip=clip, bound=bound)


def unchecked_gpope_score(ctx, data, sigma, clip, step, rng) -> float:
    """MSPBE of GPOPE with N = m, a constant step and zero start (the kernel: sigma comes from the
    calibrator, clip from CLIP and step from the public grid, all checked)."""
    n = data.n_features
    run = gpope_agent.GPOPESettings(sigma=sigma, clip=clip, iterations=data.m, step_size=float(step),
                                    schedule="constant", seed=rng)
    res = gpope_agent.gpope_unchecked(data, run)
    return math.inf if res.diverged else ctx.score(res.theta)


def tune_step_size(ctx: DomainContext, m: int, sigma: float, clip: float, grid: Sequence[float],
                   trials: int, seed: int) -> float:
    """Step size of the grid with the smallest mean MSPBE on *public* data (independent samples).

    Args:
        ctx: the domain's public context (:func:`make_context`).
        m: trajectories per public data set, an int >= 1.
        sigma: GPOPE's noise multiplier, in [0, inf).
        clip: the clip h, in (0, inf).
        grid: step sizes to try, each in (0, inf).
        trials: public data sets averaged per step size, an int >= 1.
        seed: int seed >= 0 (streams keyed by (seed, 101/102, m, trial, step)).

    Returns:
        the best step size of ``grid``.
    """
    scores = np.zeros(len(grid))
    for t in range(trials):
        data = ctx.sample(m, trial_rng(seed, 101, m, t))
        for j, step in enumerate(grid):
            scores[j] += unchecked_gpope_score(ctx, data, sigma, clip, step, trial_rng(seed, 102, m, t, j))
    return float(grid[int(np.argmin(scores))])


def _tune_ridge(ctx, m, grid, trials, epsilon, delta, seed) -> float:
    scores = np.zeros(len(grid))
    for t in range(trials):
        data = ctx.sample(m, trial_rng(seed, 201, m, t))
        mc = first_visit_returns(data, ctx.state_index, ctx.cell_phi.shape[0],
                                 return_range=ctx.return_range)
        for j, c in enumerate(grid):
            res = dp_lsl(mc, ctx.cell_phi, ctx.cell_rho, ridge=c * m, epsilon=epsilon, delta=delta,
                         rng=trial_rng(seed, 202, m, t, j))
            scores[j] += ctx.score(res.theta)
    return float(grid[int(np.argmin(scores))] * m)


@dataclass(frozen=True)
class _Methods:
    """What runs on each trial's data: GPOPE's (label, sigma, clip, step) runs, the baselines' names, the
    baselines' (epsilon, delta) and DP-LSL's ridge."""

    gpope_runs: tuple
    baselines: tuple
    epsilon: float
    delta: float
    ridge: Optional[float]


def _trial(ctx, m, t, seed, methods: _Methods):
    """One private data set of size m; every method on it. Returns {name: score}."""
    gpope_runs, baselines, epsilon, delta, ridge = (methods.gpope_runs, methods.baselines, methods.epsilon,
                                                    methods.delta, methods.ridge)
    data = ctx.sample(m, trial_rng(seed, 1, m, t))
    out = {}
    for k, (name, sigma, clip, step) in enumerate(gpope_runs):
        out[name] = unchecked_gpope_score(ctx, data, sigma, clip, step, trial_rng(seed, 2, m, t, k))
    if "LSTD" in baselines:
        out["LSTD"] = ctx.score(lstd(data, ridge=1e-10))
    if "WIS-LSTD" in baselines:
        out["WIS-LSTD"] = ctx.score(wis_lstd(data, ridge=1e-10))
    if "theta=0" in baselines:
        out["theta=0"] = ctx.score(np.zeros(data.n_features))
    if "DP-LSW" in baselines or "DP-LSL" in baselines:
        mc = first_visit_returns(data, ctx.state_index, ctx.cell_phi.shape[0],
                                 return_range=ctx.return_range)
        if "DP-LSW" in baselines:
            out["DP-LSW"] = ctx.score(dp_lsw(mc, ctx.cell_phi, ctx.cell_rho, epsilon=epsilon,
                                             delta=delta, rng=trial_rng(seed, 3, m, t)).theta)
        if "DP-LSL" in baselines:
            out["DP-LSL"] = ctx.score(dp_lsl(mc, ctx.cell_phi, ctx.cell_rho, ridge=ridge,
                                             epsilon=epsilon, delta=delta,
                                             rng=trial_rng(seed, 4, m, t)).theta)
    return out


def _aggregate(rows, names):
    curves = {}
    for name in names:
        vals = np.array([[r.get(name, np.nan) for r in row] for row in rows], dtype=float)
        finite = np.where(np.isfinite(vals), vals, np.nan)
        with warnings.catch_warnings():  # an all-diverged row gives nan with a RuntimeWarning
            warnings.simplefilter("ignore", RuntimeWarning)
            curves[name] = {"mean": np.nanmean(finite, axis=1), "std": np.nanstd(finite, axis=1),
                            "diverged": np.sum(~np.isfinite(vals), axis=1)}
    return curves


def _vs_m(study: _Study, ms, gpope_specs):
    """MSPBE vs m. gpope_specs: list of (label, epsilon, bound, step multiplier)."""
    name, ctx, s, seed, engine = study.name, study.ctx, study.setting, study.seed, study.engine
    epsilon, delta, baselines, progress = study.epsilon, study.delta, study.baselines, study.progress
    V.positive("epsilon", epsilon)
    V.open_unit("delta", delta)
    clip = CLIP[ctx.kind]
    meta = {"sigma": {}, "step_size": {}, "ridge": {}, "trials": s.trials, "epsilon": epsilon,
            "delta": delta, "clip": clip, "iterations": "N = m",
            "eval_trajectories": ctx.evaluator.trajectories}
    rows = []
    for mi, m in enumerate(ms):
        runs = []
        tuned = {}
        for label, eps, bound, mult in gpope_specs:
            sigma = _sigma(eps, delta, m, bound)
            key = (eps, bound)
            if key not in tuned:
                tuned[key] = tune_step_size(ctx, m, sigma, clip, s.step_grid, s.tune_trials, seed)
            runs.append((label, sigma, clip, tuned[key] * mult))
            meta["sigma"].setdefault(label, []).append(sigma)
            meta["step_size"].setdefault(label, []).append(tuned[key] * mult)
        ridge = None
        if "DP-LSL" in baselines:
            ridge = _tune_ridge(ctx, m, s.dplsl_ridge_grid, s.tune_trials, epsilon, delta, seed)
            meta["ridge"][str(m)] = ridge
        methods = _Methods(tuple(runs), tuple(baselines), epsilon, delta, ridge)
        tasks = [(ctx, m, t, seed, methods) for t in range(s.trials)]
        rows.append(run_trials_unchecked(_trial, tasks, *engine, None))
        if progress is not None:
            progress(mi + 1, len(ms))
    names = [r[0] for r in runs] + list(baselines)
    return ExperimentResult(name, "data size m (trajectories)", study.ylabel, np.array(ms),
                            _aggregate(rows, names), meta)


def _vs_step(study: _Study, m):
    """MSPBE vs step size at data size m (GPOPE with the valid and the paper sigma, flat baselines)."""
    name, ctx, s, seed, engine = study.name, study.ctx, study.setting, study.seed, study.engine
    epsilon, delta, baselines, progress = study.epsilon, study.delta, study.baselines, study.progress
    V.positive("epsilon", epsilon)
    V.open_unit("delta", delta)
    clip = CLIP[ctx.kind]
    grid = s.step_grid
    sig = {b: _sigma(epsilon, delta, m, b) for b in (VALID_BOUND, PAPER_BOUND)}
    ridge = _tune_ridge(ctx, m, s.dplsl_ridge_grid, s.tune_trials, epsilon, delta, seed) \
        if "DP-LSL" in baselines else None
    runs = []
    for step in grid:
        runs.append((f"GPOPE valid sigma @ {step:.3g}", sig[VALID_BOUND], clip, step))
        runs.append((f"GPOPE paper sigma @ {step:.3g}", sig[PAPER_BOUND], clip, step))
    methods = _Methods(tuple(runs), tuple(baselines), epsilon, delta, ridge)
    tasks = [(ctx, m, t, seed, methods) for t in range(s.trials)]
    res = run_trials_unchecked(_trial, tasks, *engine, None)
    if progress is not None:
        progress(1, 1)
    curves = {}
    for label in ("GPOPE valid sigma", "GPOPE paper sigma"):
        rows = [[{label: r[f"{label} @ {step:.3g}"]} for r in res] for step in grid]
        curves[label] = _aggregate(rows, [label])[label]
    for b in baselines:
        vals = _aggregate([[{b: r[b]} for r in res]], [b])[b]
        curves[b] = {k: np.repeat(v, len(grid)) for k, v in vals.items()}
    meta = {"m": m, "sigma": sig, "trials": s.trials, "epsilon": epsilon, "delta": delta,
            "clip": clip, "ridge": ridge, "eval_trajectories": ctx.evaluator.trajectories}
    return ExperimentResult(name, "step size", "MSPBE", np.array(grid), curves, meta)


_PAIR = [("GPOPE valid sigma (tuned step)", VALID_BOUND, 1.0),
         ("GPOPE valid sigma (0.1x step)", VALID_BOUND, 0.1),
         ("GPOPE valid sigma (10x step)", VALID_BOUND, 10.0),
         ("GPOPE paper sigma (tuned step)", PAPER_BOUND, 1.0)]


def figure1a(setting: Union[str, Setting] = "fast", run: Optional[FigureRun] = None,
             **keywords: Any) -> ExperimentResult:
    """GPOPE Fig. 1(a): chain, MSPBE vs m (see the module docstring for the curves).

    Args:
        setting: "fast" (default), "full" (:data:`SETTINGS`) or a :class:`Setting`.
        run: a :class:`FigureRun` (None: its defaults), its fields replaced by the keywords below.
        **keywords: the :class:`FigureRun` fields ``n_jobs`` (default -1), ``seed`` (0), ``epsilon`` (0.1, the paper's), ``delta``
            (1e-5), ``progress`` (None), ``backend`` (None) and ``scheduler`` (None), as documented
            there; any other keyword replaces a field of the :class:`Setting` (e.g. ``trials=5``).

    Raises:
        ValueError: an argument is outside its range.
    """
    r, overrides = _split_keywords("figure1a", run, keywords, _RUN_FIELDS)
    engine = check_engine(r.n_jobs, r.backend, r.scheduler)
    s = _setting(setting, overrides)
    ctx = make_context("chain", s, r.seed)
    specs = [(label, r.epsilon, bound, mult) for label, bound, mult in _PAIR]
    study = _Study("figure1a", ctx, s, r.seed, engine, r.epsilon, r.delta,
                   ("DP-LSW", "DP-LSL", "LSTD", "theta=0"), r.progress)
    return _vs_m(study, s.chain_m, specs)


def figure1b(setting: Union[str, Setting] = "fast", run: Optional[FigureRun] = None,
             **keywords: Any) -> ExperimentResult:
    """GPOPE Fig. 1(b): chain, MSPBE vs step size at m = chain_fixed_m.

    Args:
        setting: "fast" (default), "full" (:data:`SETTINGS`) or a :class:`Setting`.
        run: a :class:`FigureRun` (None: its defaults), its fields replaced by the keywords below.
        **keywords: the :class:`FigureRun` fields ``n_jobs`` (default -1), ``seed`` (0), ``epsilon`` (0.1, the paper's), ``delta``
            (1e-5), ``progress`` (None), ``backend`` (None) and ``scheduler`` (None), as documented
            there; any other keyword replaces a field of the :class:`Setting` (e.g. ``trials=5``).

    Raises:
        ValueError: an argument is outside its range.
    """
    r, overrides = _split_keywords("figure1b", run, keywords, _RUN_FIELDS)
    engine = check_engine(r.n_jobs, r.backend, r.scheduler)
    s = _setting(setting, overrides)
    ctx = make_context("chain", s, r.seed)
    study = _Study("figure1b", ctx, s, r.seed, engine, r.epsilon, r.delta, ("DP-LSW", "DP-LSL", "theta=0"),
                   r.progress)
    return _vs_step(study, s.chain_fixed_m)


def figure2(setting: Union[str, Setting] = "fast", run: Optional[FigureRun] = None,
            **keywords: Any) -> tuple[ExperimentResult, ExperimentResult]:
    """GPOPE Fig. 2: Mountain Car on-policy; returns (a) MSPBE vs m, (b) MSPBE vs step size.

    Args:
        setting: "fast" (default), "full" (:data:`SETTINGS`) or a :class:`Setting`.
        run: a :class:`FigureRun` (None: its defaults), its fields replaced by the keywords below.
        **keywords: the :class:`FigureRun` fields ``n_jobs`` (default -1), ``seed`` (0), ``epsilon`` (0.1, the paper's), ``delta``
            (1e-5), ``progress`` (None), ``backend`` (None) and ``scheduler`` (None), as documented
            there; any other keyword replaces a field of the :class:`Setting` (e.g. ``trials=5``).

    Raises:
        ValueError: an argument is outside its range.
    """
    r, overrides = _split_keywords("figure2", run, keywords, _RUN_FIELDS)
    engine = check_engine(r.n_jobs, r.backend, r.scheduler)
    s = _setting(setting, overrides)
    ctx = make_context("mountain-car", s, r.seed)
    specs = [(label, r.epsilon, bound, mult) for label, bound, mult in _PAIR]
    a = _vs_m(_Study("figure2a", ctx, s, r.seed, engine, r.epsilon, r.delta, ("DP-LSW", "LSTD", "theta=0"),
                     r.progress), s.mc_m, specs)
    b = _vs_step(_Study("figure2b", ctx, s, r.seed, engine, r.epsilon, r.delta, ("DP-LSW", "theta=0"),
                        r.progress), s.mc_fixed_m)
    return a, b


def figure3(setting: Union[str, Setting] = "fast", run: Optional[FigureRun] = None,
            **keywords: Any) -> tuple[ExperimentResult, ExperimentResult]:
    """GPOPE Fig. 3: Mountain Car, GPOPE (valid sigma) at several epsilons: (a) on-policy, (b) off-policy.

    The epsilons are the setting's ``epsilons``.

    Args:
        setting: "fast" (default), "full" (:data:`SETTINGS`) or a :class:`Setting`.
        run: a :class:`FigureRun` (None: its defaults), its fields replaced by the keywords below.
        **keywords: the :class:`FigureRun` fields ``n_jobs`` (default -1), ``seed`` (0), ``delta``
            (1e-5), ``progress`` (None), ``backend`` (None) and ``scheduler`` (None), as documented
            there; any other keyword replaces a field of the :class:`Setting` (e.g. ``trials=5``).

    Raises:
        ValueError: an argument is outside its range.
    """
    r, overrides = _split_keywords("figure3", run, keywords, _RUN_FIELDS_NO_EPSILON)
    engine = check_engine(r.n_jobs, r.backend, r.scheduler)
    s = _setting(setting, overrides)
    out = []
    for off, ref, name in ((False, "LSTD", "figure3a"), (True, "WIS-LSTD", "figure3b")):
        ctx = make_context("mountain-car", s, r.seed, off_policy=off)
        specs = [(f"GPOPE eps={e:g}", e, VALID_BOUND, 1.0) for e in s.epsilons]
        study = _Study(name, ctx, s, r.seed, engine, s.epsilons[0], r.delta, (ref, "theta=0"), r.progress)
        out.append(_vs_m(study, s.mc_m, specs))
    return tuple(out)


def figure4(setting: Union[str, Setting] = "fast", run: Optional[FigureRun] = None,
            **keywords: Any) -> ExperimentResult:
    """GPOPE Fig. 4: HIV off-policy, relative MSPBE vs m, GPOPE (valid sigma) at several epsilons, WIS-LSTD.

    The epsilons are the setting's ``epsilons``.

    Args:
        setting: "fast" (default), "full" (:data:`SETTINGS`) or a :class:`Setting`.
        run: a :class:`FigureRun` (None: its defaults), its fields replaced by the keywords below.
        **keywords: the :class:`FigureRun` fields ``n_jobs`` (default -1), ``seed`` (0), ``delta``
            (1e-5), ``progress`` (None), ``backend`` (None) and ``scheduler`` (None), as documented
            there; any other keyword replaces a field of the :class:`Setting` (e.g. ``trials=5``).

    Raises:
        ValueError: an argument is outside its range.
    """
    r, overrides = _split_keywords("figure4", run, keywords, _RUN_FIELDS_NO_EPSILON)
    engine = check_engine(r.n_jobs, r.backend, r.scheduler)
    s = _setting(setting, overrides)
    ctx = make_context("hiv", s, r.seed)
    specs = [(f"GPOPE eps={e:g}", e, VALID_BOUND, 1.0) for e in s.epsilons]
    study = _Study("figure4", ctx, s, r.seed, engine, s.epsilons[0], r.delta, ("WIS-LSTD", "theta=0"),
                   r.progress, ylabel="relative MSPBE")
    return _vs_m(study, s.hiv_m, specs)
