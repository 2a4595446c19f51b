r"""Experiments of Wang & Hegde 2019, Sec. 4 (Figures 1 and 2) and a Monte Carlo check of Prop. 10.

* :func:`figure1` - learning curves of Algorithm 1 for several sigma and J (return vs samples, mean
  +- 1 std over seeds), plus the non-private learner.
* :func:`figure2` - every method at one (epsilon, delta), in two versions (:func:`noise_for`):
  ``"paper"`` - each method's noise as the paper computed it (Algorithm 1: App. E.3's printed
  sigma = 0.32 / 0.74 for epsilon = 0.9 / 0.45, delta = 1e-4, kernel beta = 2222; input perturbation:
  KOV; DP-SGD: Abadi et al. Thm 1 with c2 = sqrt(2), a per-example guarantee); ``"valid"`` - noise from
  a valid calibration for reward-function neighbours at the hyperparameters actually used
  (Algorithm 1: ``privcal.calibrators.dpq.calibrate(variant="valid")`` at the update clip ``hp.update_clip``
  (default 0.01, units of Q) and slope clip ``hp.update_lipschitz`` (default 0.02), run with both certified
  on every update, every update started from the released function, and J = floor(T/B);
  input perturbation: exact composition; DP-SGD: sensitivity 2B C, exact composition). BGP16-style
  output perturbation uses Algorithm 1's sigma in both versions and is never DP here (utility
  comparison only).
* :func:`prop10_check` - Prop. 10 on random finite MDPs by Monte Carlo, under both readings of v'
  (``privcal.rl.dpq.prop10``, re-exported here).
* :func:`plot_curves` - PNG (matplotlib, the ``plot`` extra, imported only there).

Settings (:data:`SETTINGS`): ``"fast"`` (CI and notebooks: T = 2000, 3 seeds) and ``"full"`` (the
paper's T = 5000, 10 seeds). Runs over seeds and configurations go through
``privcal.rl.parallel`` (all local cores by default, one BLAS thread per worker; ``backend="dask"``
with a ``scheduler`` address runs them on a Dask cluster); without joblib they run sequentially.
Every run is seeded by its arguments; the same call gives the same curves on any engine.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Optional

import numpy as np

from privcal import _rng
from privcal import _validate as V
from privcal.calibrators import dpq as dpq_calibrator
from privcal.calibrators import dpq_noise
from privcal.calibrators.dpq_noise import NoiseSetting
from privcal.rl.dpq import agent as dpq_agent
from privcal.rl.parallel import run_trials_unchecked, check_engine
from privcal.rl.dpq.agent import PAPER_E3, Hyperparameters, check_gamma
from privcal.rl.dpq.run import RunNoise, run_unchecked
from privcal.rl.dpq.prop10 import (  # noqa: F401  (re-exported: Prop. 10 has its own module)
    Prop10Settings,
    optimal_policy,
    policy_values,
    prop10_bound_paper,
    prop10_bound_proof,
    prop10_check,
    random_finite_mdp,
)

__all__ = [
    "SETTINGS",
    "VERSIONS",
    "LEARNING_RATE",
    "NoiseSetting",
    "FigureRun",
    "Curves",
    "hyperparameters",
    "noise_for",
    "figure1",
    "figure2",
    "plot_curves",
]

#: fast: CI and notebooks (about 10 s in all); full: the paper's T = 5000 and 10 seeds (about 70 s, 1 core).
SETTINGS = {
    "fast": {"samples": 2000, "seeds": (0, 1, 2), "sigmas": (0.1, 0.32, 0.74, 2.0),
             "epsilons": (0.9, 0.45),
             "prop10": {"n_states": (4, 64, 256), "sigmas": (1.0,), "mdps": 1, "draws": 30}},
    "full": {"samples": 5000, "seeds": tuple(range(10)), "sigmas": (0.1, 0.32, 0.74, 2.0),
             "epsilons": (0.9, 0.45),
             "prop10": {"n_states": (4, 16, 64, 256), "sigmas": (0.1, 1.0), "mdps": 3, "draws": 200}},
}
VERSIONS = ("paper", "valid")
#: Learning rate of the experiments' learner: App. E.3's 3e-4 does not learn in 78 SGD steps (see
#: ``privcal.rl.dpq.agent.Hyperparameters``); alpha = 1 does (non-private 19.6 of 20.7).
LEARNING_RATE = 1.0
FIGURE2_METHODS = ("non_private", "dpq", "bgp16", "input_perturbation", "dpsgd")
_DELTA = PAPER_E3["delta"]


def _setting(setting: str) -> dict:
    return SETTINGS[V.choice("setting", setting, tuple(SETTINGS))]


def hyperparameters(setting: str = "fast", **overrides: Any) -> Hyperparameters:
    """The experiments' learner: :class:`~privcal.rl.dpq.agent.Hyperparameters` with T of ``setting``
    and lr = :data:`LEARNING_RATE`.

    Args:
        setting: "fast" (T = 2000, default) or "full" (T = 5000), see :data:`SETTINGS`.
        **overrides: fields to replace, e.g. ``lr=3e-4`` for App. E.3's.

    Raises:
        ValueError: an unknown setting or a field outside its range.
    """
    conf = _setting(setting)
    return Hyperparameters(**{"samples": conf["samples"], "lr": LEARNING_RATE, **overrides})


# ---------------------------------------------------------------------------------------------------
# noise levels


def noise_for(method: str, epsilon: float, delta: float, hp: Hyperparameters,
              version: str = "valid") -> NoiseSetting:
    """Noise of ``method`` for a target (epsilon, delta) at ``hp`` in ``version`` "paper" or "valid".

    See the module docstring for the choices; an infeasible calibration is returned (not raised) with
    ``infeasible`` set, so a figure can say why a curve is missing.

    Args:
        method: one of ``privcal.rl.dpq.agent.METHODS``.
        epsilon: target epsilon, in (0, inf).
        delta: target delta, in (0, 1).
        hp: the learner's settings (T, B, lr, L enter the calibrations).
        version: "valid" (default) or "paper".

    Returns:
        the method's :class:`NoiseSetting`.

    Raises:
        ValueError: an argument is outside its range.
    """
    V.choice("method", method, dpq_agent.METHODS)
    V.choice("version", version, VERSIONS)
    return unchecked_noise_for(method, V.positive("epsilon", epsilon), V.open_unit("delta", delta), hp, version)


def unchecked_noise_for(method, epsilon, delta, hp, version) -> NoiseSetting:
    """:func:`noise_for` on ``method``, ``version`` and ``hp`` already checked (the kernel the sweeps, the frontier
    and ``privcal train dpq`` call): ``privcal.calibrators.dpq_noise.noise_for_unchecked`` with App. E.3's printed sigma
    for the paper version where the paper gives one; the calibrators check the target (epsilon, delta) once."""
    printed = None
    if method in ("dpq", "bgp16") and version == "paper" and delta == PAPER_E3["delta"]:
        printed = PAPER_E3["sigma"].get(epsilon)
    return dpq_noise.noise_for_unchecked(
        method, epsilon, delta, hp, version, printed=None if printed is None else (printed, dpq_agent.paper_beta()))


# ---------------------------------------------------------------------------------------------------
# runs


@dataclass(frozen=True)
class Curves:
    """Per-episode returns, shape (seeds, episodes), per curve label; what produced each; what is missing."""

    title: str
    returns: dict
    noise: dict
    missing: dict = field(default_factory=dict)
    episode_steps: int = 50
    hyperparameters: Optional[Hyperparameters] = None

    @property
    def labels(self) -> list:
        return list(self.returns)

    def summary(self, last: int = 10) -> list[dict]:
        """Per label: mean return of the last ``last`` episodes (mean and std over seeds).

        Args:
            last: number of final episodes averaged per seed, an int >= 1; default 10.

        Returns:
            one dict per label (label, final_mean, final_sd, seeds, noise), missing curves last.
        """
        last = V.positive_int("last", last)
        rows = []
        for label, r in self.returns.items():
            tail = r[:, -last:].mean(axis=1)
            rows.append({"label": label, "final_mean": float(tail.mean()),
                         "final_sd": float(tail.std(ddof=1)) if tail.size > 1 else 0.0,
                         "seeds": int(r.shape[0]), "noise": self.noise.get(label)})
        for label, reason in self.missing.items():
            rows.append({"label": label, "final_mean": None, "final_sd": None, "seeds": 0,
                         "noise": reason})
        return rows


@dataclass(frozen=True)
class FigureRun:
    """How :func:`figure1` and :func:`figure2` run: the seeds, the learner and the engine (defaults in one place:
    here; the figures check the values).

    Attributes:
        seeds: int seeds (one run each); default None: the setting's.
        n_jobs: parallel jobs (``privcal.rl.parallel.run_trials``): an int >= 1, -1 (all local cores, default) or
            None (joblib's configured backend).
        hp: the learner, a :class:`~privcal.rl.dpq.agent.Hyperparameters`; default None: :func:`hyperparameters`
            of the setting.
        backend: None (default: joblib's configured backend), "local" or "dask" (``privcal.rl.parallel``).
        scheduler: the Dask scheduler address with ``backend="dask"``, e.g. "tcp://host:8786"; default None.
    """

    seeds: Optional[Iterable[int]] = None
    n_jobs: Optional[int] = -1
    hp: Optional[Hyperparameters] = None
    backend: Optional[str] = None
    scheduler: Optional[str] = None


def _run_one(method, hp, sigma, beta, resets, seed) -> np.ndarray:
    """One seeded training run (a top-level function so joblib can ship it to workers)."""
    # the kernel: every config was checked when the figure built it (noise_for, check_resets)
    return run_unchecked(RunNoise(method, sigma, beta, resets), hp, seed, None, None).episode_returns


def _collect(configs, seeds, engine) -> dict:
    """configs: label -> (method, hp, sigma, beta, resets); returns label -> array (seeds, episodes)."""
    seeds = tuple(int(s) for s in seeds)
    if not seeds:
        raise ValueError("seeds must not be empty")
    tasks = [(*cfg, sd) for cfg in configs.values() for sd in seeds]
    results = run_trials_unchecked(_run_one, tasks, *engine, None)
    out, pos = {}, 0
    for label in configs:
        out[label] = np.array(results[pos:pos + len(seeds)])
        pos += len(seeds)
    return out


def figure1(setting: str = "fast", run: Optional[FigureRun] = None, *, sigmas: Optional[Iterable[float]] = None,
            resets: Optional[Iterable[int]] = None, **keywords: Any) -> Curves:
    """Figure 1: Algorithm 1 for each sigma x J (kernel beta of App. E.3), plus the non-private learner.

    Args:
        setting: "fast" (default) or "full" (:data:`SETTINGS`).
        run: the seeds, the learner and the engine, a :class:`FigureRun`; default None: built from ``keywords``.
        sigmas: functional-noise stds, each in (0, inf); default the setting's.
        resets: values of J, each dividing U = floor(T/B); default (1, U) (one path for the whole
            run, a new path every update).
        keywords: fields of :class:`FigureRun`, replacing those of ``run``; each is listed below.
        seeds: int seeds (one run each); default the setting's.
        n_jobs: parallel jobs (``privcal.rl.parallel.run_trials``): an int >= 1, -1 (all local cores,
            default) or None (joblib's configured backend).
        hp: the learner; default :func:`hyperparameters` of ``setting``.
        backend: None (default: joblib's configured backend), "local" or "dask" (``privcal.rl.parallel``).
        scheduler: the Dask scheduler address with ``backend="dask"``, e.g. "tcp://host:8786"; default None.

    Returns:
        the :class:`Curves`, one label per (sigma, J) plus "non-private".

    Raises:
        ValueError: an argument is outside its range.
        TypeError: a keyword is no field of :class:`FigureRun`.
    """
    run = V.settings_with("figure1", FigureRun, run, keywords)
    seeds = run.seeds
    conf = _setting(setting)
    engine = check_engine(run.n_jobs, run.backend, run.scheduler)
    hp = hyperparameters(setting) if run.hp is None else run.hp
    sigmas = conf["sigmas"] if sigmas is None else tuple(V.positive("sigma", s) for s in sigmas)
    resets = (1, hp.updates) if resets is None else tuple(dict.fromkeys(resets))
    for j in resets:
        dpq_agent.check_resets(j, hp.updates)
    beta = dpq_agent.paper_beta()
    configs = {"non-private": ("non_private", hp, None, None, None)}
    noise = {"non-private": "no noise"}
    for j in resets:
        for s in sigmas:
            label = f"sigma={s:g}, J={j}"
            configs[label] = ("dpq", hp, s, beta, j)
            noise[label] = f"functional noise sigma={s:g}, beta={beta:.5g}, J={j}"
    returns = _collect(configs, conf["seeds"] if seeds is None else seeds, engine)
    return Curves(title=f"Algorithm 1, T={hp.samples}, B={hp.batch_size}, lr={hp.lr:g} ({setting})",
                  returns=returns, noise=noise, hyperparameters=hp)


def figure2(epsilon: float, version: str = "valid", setting: str = "fast", run: Optional[FigureRun] = None, *,
            delta: float = _DELTA, methods: Sequence[str] = FIGURE2_METHODS, **keywords: Any) -> Curves:
    """Figure 2: every method at (epsilon, delta) with the noise of ``version`` (:func:`noise_for`).

    Methods whose calibration is infeasible are listed in ``Curves.missing`` with the reason.

    Args:
        epsilon: target epsilon, in (0, inf).
        version: "valid" (default) or "paper".
        setting: "fast" (default) or "full" (:data:`SETTINGS`).
        run: the seeds, the learner and the engine, a :class:`FigureRun`; default None: built from ``keywords``.
        delta: target delta, in (0, 1); default 1e-4 (App. E.3).
        methods: methods of ``privcal.rl.dpq.agent.METHODS``; default all five.
        keywords: fields of :class:`FigureRun`, replacing those of ``run``; each is listed below.
        seeds: int seeds (one run each); default the setting's.
        n_jobs: parallel jobs: an int >= 1, -1 (all local cores, default) or None (joblib's backend).
        hp: the learner; default :func:`hyperparameters` of ``setting``.
        backend: None (default), "local" or "dask" (``privcal.rl.parallel``).
        scheduler: the Dask scheduler address with ``backend="dask"``; default None.

    Returns:
        the :class:`Curves`, one label per feasible method.

    Raises:
        ValueError: an argument is outside its range.
        TypeError: a keyword is no field of :class:`FigureRun`.
    """
    run = V.settings_with("figure2", FigureRun, run, keywords)
    seeds = run.seeds
    conf = _setting(setting)
    engine = check_engine(run.n_jobs, run.backend, run.scheduler)
    hp = hyperparameters(setting) if run.hp is None else run.hp
    V.choice("version", version, VERSIONS)
    epsilon, delta = V.positive("epsilon", epsilon), V.open_unit("delta", delta)
    configs, noise, missing = {}, {}, {}
    for method in methods:
        ns = unchecked_noise_for(V.choice("method", method, dpq_agent.METHODS), epsilon, delta, hp, version)
        tag = {True: "DP", False: "not DP", None: "reference"}[ns.dp]
        label = method if ns.sigma is None else f"{method} (sigma={ns.sigma:.3g}, {tag})"
        if ns.infeasible:
            missing[method] = ns.infeasible
            continue
        resets = hp.updates if method in ("dpq", "bgp16") else None
        run_hp = hp
        if method == "dpq" and version == "valid":  # the clips it was calibrated for
            run_hp = dpq_agent.valid_hyperparameters(hp)
        configs[label] = (method, run_hp, ns.sigma, ns.beta, resets)
        noise[label] = ns
    returns = _collect(configs, conf["seeds"] if seeds is None else seeds, engine) if configs else {}
    return Curves(title=f"epsilon={epsilon:g}, delta={delta:g}, {version} noise, T={hp.samples}, "
                        f"lr={hp.lr:g} ({setting})",
                  returns=returns, noise=noise, missing=missing, hyperparameters=hp)


def plot_curves(curves: Curves, path: Any = None, ax: Any = None,
                labels: Optional[Sequence[str]] = None, title: Optional[str] = None,
                references: bool = True) -> Any:
    """Return vs samples (mean +- 1 std over seeds) per label (all, or ``labels``); PNG to ``path``.

    With ``references`` the random policy (the trivial reference a learner must beat, grey dotted) and
    the move-to-the-middle policy (the optimum, black dashed) are drawn as horizontal lines
    (``privcal.rl.envs.reference_return``, 20,000 simulated episodes each). Needs matplotlib (the ``plot``
    extra).

    Args:
        curves: what :func:`figure1` or :func:`figure2` returned.
        path: PNG file to write (str or path-like); default None (no file).
        ax: matplotlib axes to draw on; default None (a new figure).
        labels: the labels to draw, among ``curves.labels``; default all.
        title: plot title; default ``curves.title``.
        references: draw the random-policy and move-to-the-middle lines; default True.

    Returns:
        ``str(path)`` when a new figure was saved, else the axes.

    Raises:
        ValueError: an unknown label.
        ImportError: matplotlib is not installed.
    """
    if labels is not None:
        unknown = [lab for lab in labels if lab not in curves.returns]
        if unknown:
            raise ValueError(f"labels must be among {curves.labels}, got {unknown}")
    try:
        import matplotlib

        if ax is None and path is not None:
            matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError("plot_curves needs matplotlib: pip install 'privcal[plot]'") from exc
    own = ax is None
    if own:
        fig, ax = plt.subplots(figsize=(7, 4))
    for label in curves.labels if labels is None else labels:
        r = curves.returns[label]
        x = np.arange(1, r.shape[1] + 1) * curves.episode_steps
        mean, sd = r.mean(axis=0), r.std(axis=0)
        (line,) = ax.plot(x, mean, label=label, lw=1.2)
        ax.fill_between(x, mean - sd, mean + sd, color=line.get_color(), alpha=0.15)
    if references:
        from privcal.rl.envs import reference_return

        ax.axhline(reference_return("middle")[0], color="black", ls="--", lw=0.8, label="move to middle (optimum)")
        ax.axhline(reference_return("random")[0], color="gray", ls=":", lw=1.0, label="random policy (trivial)")
    if curves.missing:
        text = "no valid sigma: " + ", ".join(curves.missing)
        ax.text(0.02, 0.02, text, transform=ax.transAxes, fontsize=7, color="darkred")
    ax.set_xlabel("samples")
    ax.set_ylabel("return per episode")
    ax.set_title(curves.title if title is None else title, fontsize=8)
    ax.legend(fontsize=6, loc="upper left")
    if own and path is not None:
        fig.tight_layout()
        fig.savefig(path, dpi=100)
        plt.close(fig)
        return str(path)
    return ax
