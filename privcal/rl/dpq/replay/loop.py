"""One run of the authors' DQN-style loop (:func:`train_replay`): replay buffer, epsilon-greedy exploration,
target network, the noise inside the Huber residual; labelled with no guarantee."""

from __future__ import annotations

import math
import numbers
import time
from dataclasses import asdict, dataclass, field
from typing import Callable, Optional

import numpy as np

from privcal import _rng
from privcal import _validate as V
from privcal.rl.mlp import LipschitzMLP
from privcal.rl.dpq.replay.config import ACTIONS, GUARANTEE, LARGEST, SAMPLER_LABELS, ReplayConfig, checked_config
from privcal.rl.dpq.replay.optimizers import unchecked_make_optimizer
from privcal.rl.dpq.replay.sampler import ReplayPaths

__all__ = ["ReplayResult", "train_replay"]


@dataclass
class ReplayResult:
    """One run of the authors' loop: per-episode returns and what was run; labelled with no guarantee.

    Attributes:
        config: the :class:`ReplayConfig` run.
        episode_returns: the return (sum of rewards, exploration included) of every training episode,
            as the authors' code records it; shape (episodes,).
        updates: optimiser steps taken (``config.updates``).
        seed: the int seed (None when a Generator, SeedSequence or None was given).
        q: the trained policy network (without noise).
        guarantee: :data:`GUARANTEE` (no valid privacy guarantee).
        update_sensitivities: if measured, per update the largest change, over a grid of 101 states
            and both actions, between the network after the step on the batch's rewards r and after
            the step on r + 1 or r - 1 (same batch, noise and state): a lower bound on that update's
            sensitivity in sup norm, hence in the RKHS norm of exp(-beta |x - y|); else None.
        timings: wall time in seconds: env, act, noise, update (and sensitivity when measured).
    """

    config: ReplayConfig
    episode_returns: np.ndarray
    updates: int
    seed: Optional[int]
    q: LipschitzMLP
    guarantee: str = GUARANTEE
    update_sensitivities: Optional[np.ndarray] = None
    timings: dict = field(default_factory=dict)

    def mean_return(self, last: int = 10) -> float:
        """Mean return of the last ``last`` episodes.

        Args:
            last: number of final episodes, an int >= 1; default 10.

        Returns:
            the mean return (sum of rewards per episode).
        """
        last = V.positive_int("last", last)
        return float(np.mean(self.episode_returns[-last:]))

    def to_dict(self) -> dict:
        """JSON-ready summary (what ``privcal train dpq --loop replay --format json`` would print)."""
        out = {
            "loop": "replay",
            "experiment": "Wang & Hegde, Figure 1, as the authors' code runs it",
            "guarantee": self.guarantee,
            "epsilon": None,
            "delta": None,
            "sigma": self.config.sigma,
            "beta": self.config.beta,
            "sampler": (SAMPLER_LABELS[self.config.sampler] if self.config.private else None),
            "updates": self.updates,
            "seed": self.seed,
            "episode_returns": [float(x) for x in self.episode_returns],
            "mean_return_last_10": self.mean_return(10),
            "config": asdict(self.config),
            "timings": dict(self.timings),
        }
        if self.update_sensitivities is not None:
            d = self.update_sensitivities
            out["update_sensitivities"] = {"max": float(d.max()), "rms": float(np.sqrt(np.mean(d * d))),
                                           "count": int(d.size)}
        return out


def train_replay(config: Optional[ReplayConfig] = None, *, seed: _rng.Seed = 0,
                 measure_sensitivity: bool = False,
                 progress: Optional[Callable[[int, int], None]] = None) -> ReplayResult:
    """Run the authors' loop (the paper's Figure 1 experiment) once; the result has no valid guarantee.

    See the module docstring for the loop and where it departs from Algorithm 1.

    Args:
        config: the settings; default ``ReplayConfig()`` (the authors' values, non-private).
        seed: seed of everything (environment, weights, replay sampling, exploration, noise;
            ``privcal._rng``); default 0.
        measure_sensitivity: also record, per update, a lower bound on its sensitivity
            (``ReplayResult.update_sensitivities``; about doubles the run time); default False.
        progress: called as ``progress(step, total_steps)`` after every episode; default None.

    Returns:
        the run's :class:`ReplayResult`.

    Raises:
        ValueError: an argument is outside its range (the message names it).
        ImportError: gymnasium (the ``rl`` extra) is not installed.
    """
    config = checked_config(config)
    if not isinstance(measure_sensitivity, (bool, np.bool_)):
        raise ValueError(f"measure_sensitivity must be True or False, got {measure_sensitivity!r}")
    return unchecked_train_replay(config, seed, bool(measure_sensitivity), progress)


def _torch_init(net: LipschitzMLP, rng: np.random.Generator) -> None:
    """PyTorch's default ``nn.Linear`` initialisation: weights and biases U(-1/sqrt(fan_in), +)."""
    for w, b in zip(net.weights, net.biases):
        bound = 1.0 / math.sqrt(w.shape[1])
        w[...] = rng.uniform(-bound, bound, size=w.shape)
        b[...] = rng.uniform(-bound, bound, size=b.shape)


def _network(config, rng) -> LipschitzMLP:
    net = LipschitzMLP((1, *config.hidden, ACTIONS), lipschitz=LARGEST, activation=config.activation,
                       seed=rng)
    _torch_init(net, rng)
    return net


def unchecked_train_replay(config, seed, measure, progress) -> ReplayResult:
    """Kernel of :func:`train_replay` (arguments checked)."""
    from privcal.rl.envs import IntervalEnv

    env_rng, init_rng, replay_rng, explore_rng, noise_rng = _rng.spawn(seed, 5, "seed")
    env = IntervalEnv(max_episode_steps=config.episode_steps)
    env_seed = int(env_rng.integers(0, 2**62))
    policy = _network(config, init_rng)
    target = policy.copy()
    probe = policy.copy() if measure else None
    params = policy.get_params()
    opt = unchecked_make_optimizer(config)
    noise = ReplayPaths(config, noise_rng, config.buffer_size)
    B, cap, gamma, clamp = config.batch_size, config.buffer_size, config.gamma, config.grad_clamp
    c_huber = config.huber_threshold
    e_end, e_span = config.exploration_end, config.exploration_start - config.exploration_end
    decay = config.exploration_decay

    S = np.empty(cap)
    A = np.empty(cap, dtype=np.intp)
    R = np.empty(cap)
    S2 = np.empty(cap)
    TERM = np.zeros(cap, dtype=bool)
    size = pos = 0
    rows = np.arange(B)
    grid = np.linspace(0.0, 1.0, 101)[:, None]
    sens = []
    returns = np.empty(config.episodes)
    x1 = np.empty((1, 1))
    perf = time.perf_counter
    t_env = t_act = t_noise = t_update = t_sens = 0.0
    step = 0
    for episode in range(config.episodes):
        t0 = perf()
        obs, _ = env.reset(seed=env_seed if episode == 0 else None)
        t_env += perf() - t0
        s = float(obs[0])
        total = 0.0
        for t in range(config.episode_steps):
            # --- act: epsilon-greedy on the noisy policy network (code's select_action)
            t0 = perf()
            threshold = e_end + e_span * math.exp(-step / decay)
            step += 1
            if explore_rng.random() > threshold:
                x1[0, 0] = s
                q = policy(x1)[0]
                if noise.on:
                    t1 = perf()
                    q = q + noise.at_state(s)
                    t_noise += perf() - t1
                a = int(np.argmax(q))
            else:
                a = int(explore_rng.integers(ACTIONS))
            t1 = perf()
            obs2, r, terminated, truncated, _ = env.step(a)
            t_env += perf() - t1
            t_act += t1 - t0
            s2 = float(obs2[0])
            total += r
            S[pos], A[pos], R[pos], S2[pos] = s, a, r, s2
            TERM[pos] = terminated or (truncated and not config.bootstrap_last)
            if noise.on:
                t0 = perf()
                noise.pushed(pos, s, s2)
                t_noise += perf() - t0
            pos = (pos + 1) % cap
            size = min(size + 1, cap)
            s = s2
            if size < B:
                continue
            # --- one optimiser step on B transitions from the buffer (code's optimize_model)
            if noise.on and config.noise_reset == "update":
                t0 = perf()
                noise.reset(S, S2, 0)
                t_noise += perf() - t0
            t0 = perf()
            idx = replay_rng.choice(size, B, replace=False)
            sb, ab, rb, s2b, live = S[idx], A[idx], R[idx], S2[idx], ~TERM[idx]
            out, cache = policy.forward(sb[:, None])
            pred = out[rows, ab]
            nxt = target(s2b[live][:, None])
            if noise.on:
                t1 = perf()
                g_chosen, h_next = noise.batch(idx, sb, ab, s2b[live], live)
                pred = pred + g_chosen
                nxt = nxt + h_next
                t0 += perf() - t1
                t_noise += perf() - t1
            v_next = np.zeros(B)
            v_next[live] = nxt.max(axis=1)
            residual = pred - (rb + gamma * v_next)
            grads = _gradient(policy, cache, ab, residual, c_huber, clamp, rows)
            if measure:
                t1 = perf()
                sens.append(_witness(probe, opt, params, grads, residual, grid,
                                     lambda res: _gradient(policy, cache, ab, res, c_huber, clamp, rows)))
                t_sens += perf() - t1
                t0 += perf() - t1
            params = opt._step(params, grads)
            policy.set_params(params)
            t_update += perf() - t0
        returns[episode] = total
        if episode % config.target_update == 0:
            target.set_params(params)
        if noise.on and config.noise_reset == "episode":
            t0 = perf()
            noise.reset(S, S2, size)
            t_noise += perf() - t0
        if progress is not None:
            progress(step, config.steps)
    timings = {"env": t_env, "act": t_act, "noise": t_noise, "update": t_update}
    if measure:
        timings["sensitivity"] = t_sens
    return ReplayResult(config=config, episode_returns=returns, updates=config.updates,
                        seed=int(seed) if isinstance(seed, numbers.Integral) else None, q=policy,
                        update_sensitivities=np.array(sens) if measure else None, timings=timings)


def _gradient(net, cache, actions, residual, c_huber, clamp, rows) -> np.ndarray:
    """Flat gradient of mean_i Huber(residual_i) through Q(s_i, a_i), clamped coordinatewise."""
    g_out = np.zeros((rows.size, ACTIONS))
    g_out[rows, actions] = np.clip(residual, -c_huber, c_huber) / rows.size
    grads = LipschitzMLP.flatten(net.backward(cache, g_out))
    if clamp is not None:
        np.clip(grads, -clamp, clamp, out=grads)
    return grads


def _witness(probe, opt, params, grads, residual, grid, gradient_at) -> float:
    """max over r' in {r + 1, r - 1} and the grid of |Q after the step on r - Q after the step on r'|;
    ``gradient_at(residual)`` is the step's gradient (:func:`_gradient` on the same batch) at other residuals.

    A neighbouring reward function r' = r +- 1 (|r - r'|_inf = 1) shifts every residual by -+1; same
    batch, noise, parameters and optimiser state. The sup over a grid is a lower bound on the sup norm
    of the change, and for a kernel with k(x, x) = 1 on the RKHS norm too (|f(x)| <= |f|_H).
    """
    probe.set_params(opt._peek(params, grads))
    base = probe(grid)
    worst = 0.0
    for shift in (-1.0, 1.0):  # r' = r + 1 lowers the residual by 1, r - 1 raises it
        g2 = gradient_at(residual + shift)
        probe.set_params(opt._peek(params, g2))
        worst = max(worst, float(np.abs(probe(grid) - base).max()))
    return worst
