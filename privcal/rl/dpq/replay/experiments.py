"""Figure 1 (returns against episodes for each sigma, over seeds, in parallel) and the references
(move-to-the-middle and uniformly random policies, by Monte Carlo on the same dynamics)."""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Optional

import numpy as np

from privcal import _rng
from privcal import _validate as V
from privcal.rl.dpq.replay.config import PAPER_SIGMAS, ReplayConfig, checked_config
from privcal.rl.dpq.replay.loop import unchecked_train_replay

__all__ = ["replay_curves", "reference_returns"]


def _run_returns(config: ReplayConfig, seed: int) -> np.ndarray:
    """One seeded run's episode returns (top level, so joblib can ship it to workers)."""
    return unchecked_train_replay(config, seed, False, None).episode_returns


def replay_curves(sigmas: Iterable[float] = PAPER_SIGMAS, seeds: Iterable[int] = range(10), *,
                  config: Optional[ReplayConfig] = None, n_jobs: Optional[int] = -1) -> dict:
    """Figure 1 as the authors' loop draws it: per sigma, every seed's episode returns.

    Runs go through ``privcal.rl.parallel.run_trials`` (joblib, configured backend); every run is
    seeded by its own int seed, so the curves do not depend on ``n_jobs``.

    Args:
        sigmas: noise stds, each in [0, inf) (0 is the non-private run); default
            :data:`PAPER_SIGMAS`.
        seeds: int seeds >= 0, one run each; default 0..9 (the authors' loop.py).
        config: the loop's other settings (its ``sigma`` is replaced); default ``ReplayConfig()``.
        n_jobs: parallel jobs: an int >= 1, -1 (all cores) or None (joblib's default); default -1;
            1 runs the seeds one after the other in this process.

    Returns:
        a dict label -> array of shape (seeds, episodes); labels "non-private" and "sigma=0.2" etc.,
        in the order of ``sigmas``.

    Raises:
        ValueError: an argument is outside its range.
    """
    from dataclasses import replace

    from privcal.rl.parallel import run_trials

    config = checked_config(config)
    sigmas = tuple(V.nonnegative("sigmas[i]", s) for s in sigmas)
    seeds = tuple(seeds)
    for sd in seeds:
        if not _rng._nonnegative_int(sd):
            raise ValueError(f"seeds must be ints >= 0, got {sd!r}")
    if not sigmas or not seeds:
        raise ValueError("sigmas and seeds must not be empty")
    configs = {("non-private" if s == 0 else f"sigma={s:g}"): replace(config, sigma=s) for s in sigmas}
    tasks = [(cfg, int(sd)) for cfg in configs.values() for sd in seeds]
    results = run_trials(_run_returns, tasks, n_jobs)
    out = {}
    for i, label in enumerate(configs):
        out[label] = np.array(results[i * len(seeds):(i + 1) * len(seeds)])
    return out


def reference_returns(episodes: int = 20_000, *, episode_steps: int = 50, seed: _rng.Seed = 0) -> dict:
    """Mean episode return of the move-to-the-middle and the uniformly random policy (Monte Carlo).

    Same dynamics as ``privcal.rl.envs.IntervalEnv`` (s_0 ~ U[0, 1], move by U[0, 0.25] clipped to
    [0, 1], reward 0.5 - |s' - 0.5|), simulated for all episodes at once. Move to the middle: right
    when s < 0.5, left otherwise (the optimum, 20.7, which
    finite-horizon dynamic programming on a grid confirms, see the tests; random: 10.9).

    Args:
        episodes: independent episodes per policy, an int >= 2; default 20,000.
        episode_steps: steps per episode, an int >= 1; default 50.
        seed: seed of the simulation (``privcal._rng``); default 0.

    Returns:
        {"move_to_middle": {"mean": ..., "standard_error": ...}, "random": {...}} with the
        standard error of the mean over episodes.

    Raises:
        ValueError: an argument is outside its range.
    """
    from privcal.rl.envs import unchecked_simulate

    episodes = V.positive_int("episodes", episodes)
    if episodes < 2:
        raise ValueError(f"episodes must be an integer >= 2 (a standard error needs two), got {episodes!r}")
    episode_steps = V.positive_int("episode_steps", episode_steps)
    rng_mid, rng_rand = _rng.spawn(seed, 2, "seed")
    out = {}
    for name, rng in (("move_to_middle", rng_mid), ("random", rng_rand)):
        r = unchecked_simulate("middle" if name == "move_to_middle" else name, episodes, episode_steps, rng)
        out[name] = {"mean": float(r.mean()), "standard_error": float(r.std(ddof=1) / math.sqrt(episodes))}
    return out
