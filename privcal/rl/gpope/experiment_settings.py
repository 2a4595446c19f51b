"""The sizes and run settings of the GPOPE paper's experiments (``privcal.rl.gpope.experiments``).

:data:`SETTINGS` holds the *fast* (tests, notebook, CI) and *full* (the paper's 100 trials) sizes of each
domain, :data:`CLIP` the clip h per domain and :data:`DEFAULT_STEP` one run's default step size;
:class:`FigureRun` says how a figure function runs (parallelism, seed, privacy target). The experiments
module re-exports every name here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Optional

import numpy as np

__all__ = ["CLIP", "DEFAULT_STEP", "Setting", "SETTINGS", "FigureRun"]

#: Clip h of Alg. 1 per domain (public choice, about the norm of a typical unclipped gradient).
CLIP = {"chain": 0.05, "mountain-car": 0.5, "hiv": 0.5}
#: Default constant step size of one GPOPE / GTD2 run per domain (``privcal train gpope`` uses it). Chain:
#: 0.1, chosen on public simulated data so that the default run (m = N = 1000) learns: non-private GTD2
#: reaches MSPBE 0.0058 against 0.038 for theta = 0, GPOPE at epsilon = 1 (valid RDP) 0.022 (seed 0; 0.01
#: barely moved: 0.029 non-private). The figures tune their step sizes on a grid instead.
DEFAULT_STEP = {"chain": 0.1, "mountain-car": 1e-3, "hiv": 1e-3}


@dataclass(frozen=True)
class Setting:
    """Sizes of one experiment setting (``SETTINGS['fast']`` / ``SETTINGS['full']``).

    ``trials`` private data sets per point; per domain the data sizes m (``*_m``), the fixed m of the
    step-size sweeps, the size of the independent MSPBE sample (``*_eval``) and the Q-learning
    episodes of the behaviour policy; ``step_grid`` the step sizes tried when tuning on public data
    (``tune_trials`` data sets), ``epsilons`` of Figures 3-4, ``dplsl_ridge_grid`` DP-LSL's ridge
    factors (times m).
    """

    trials: int
    chain_m: tuple
    chain_fixed_m: int
    chain_eval: int
    mc_m: tuple
    mc_fixed_m: int
    mc_eval: int
    mc_q_episodes: int
    hiv_m: tuple
    hiv_eval: int
    hiv_horizon: int
    hiv_q_episodes: int
    step_grid: tuple
    tune_trials: int
    epsilons: tuple = (0.1, 0.5, 1.0)
    dplsl_ridge_grid: tuple = (0.01, 0.1, 1.0, 10.0)


def _grid(lo, hi, k):
    return tuple(float(v) for v in np.logspace(lo, hi, k))


SETTINGS = {
    "fast": Setting(trials=3, chain_m=(100, 300, 1000), chain_fixed_m=300, chain_eval=20000,
                    mc_m=(30, 100), mc_fixed_m=100, mc_eval=300, mc_q_episodes=64,
                    hiv_m=(20, 50), hiv_eval=100, hiv_horizon=20, hiv_q_episodes=32,
                    step_grid=_grid(-5, 0, 6), tune_trials=1),
    "full": Setting(trials=100, chain_m=(100, 300, 1000, 3000, 10000), chain_fixed_m=3000,
                    chain_eval=100000, mc_m=(100, 300, 1000, 3000), mc_fixed_m=1000, mc_eval=5000,
                    mc_q_episodes=500, hiv_m=(100, 300, 1000), hiv_eval=1000, hiv_horizon=200,
                    hiv_q_episodes=256, step_grid=_grid(-6, 1, 15), tune_trials=5),
}


@dataclass(frozen=True)
class FigureRun:
    """How a figure function runs (defaults in one place; every figure takes these as keywords).

    Fields:
        n_jobs: parallel trials (``privcal.rl.parallel.run_trials``): an int >= 1, -1 (all cores or
            workers) or None (joblib's configured default); default -1.
        seed: int seed >= 0 of every stream (keyed by figure, m and trial); default 0.
        epsilon: target epsilon, in (0, inf); default 0.1 (the paper's). Figures 3 and 4 use the
            setting's ``epsilons`` instead and take no ``epsilon`` keyword.
        delta: target delta, in (0, 1); default 1e-5.
        progress: called as ``progress(done, total)`` over the data sizes; default None.
        backend: None (joblib's configured backend, default), "local" (loky processes) or "dask".
        scheduler: Dask scheduler address (``"tcp://host:8786"``), with backend "dask" only; default None.
    """

    n_jobs: Optional[int] = -1
    seed: int = 0
    epsilon: float = 0.1
    delta: float = 1e-5
    progress: Optional[Callable[[int, int], None]] = None
    backend: Optional[str] = None
    scheduler: Optional[str] = None
