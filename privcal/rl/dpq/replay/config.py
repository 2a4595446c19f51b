"""Settings of the authors' loop (:class:`ReplayConfig`, every default the value in their ``dpql.py``), its
labels and Figure 1's sizes; ``checked_config`` is the check every entry point runs once."""

from __future__ import annotations

import numbers
from dataclasses import dataclass
from typing import Optional

import numpy as np

from privcal import _validate as V

__all__ = ["GUARANTEE", "OPTIMIZERS", "NOISE_RESETS", "SAMPLERS", "PAPER_SIGMAS", "REPORTED_RETURNS", "SETTINGS",
           "ReplayConfig"]


#: What the replay loop's output guarantees: nothing (the label every result carries).
GUARANTEE = ("no valid guarantee: the paper's experiment (Wang & Hegde, Figure 1) as its authors' code "
             "runs it; sigma is set by hand, not calibrated, and the loop breaks the premises of the "
             "privacy analysis (see privcal.rl.dpq.replay.replay_privacy_report)")
OPTIMIZERS = ("rmsprop", "adam", "sgd")
#: When the noise paths are redrawn: after every episode (authors' code), before every update, never.
NOISE_RESETS = ("episode", "update", "never")
#: How the noise paths are sampled: "privcal" (exact Ornstein-Uhlenbeck paths, the process the paper states) or
#: "authors" (the authors' lazy sampler, :class:`AuthorsNoiseSampler`: their experimental loop, not the paper).
SAMPLERS = ("privcal", "authors")
SAMPLER_LABELS = {"privcal": "privcal: exact Ornstein-Uhlenbeck paths (the Gaussian process the paper states)",
                  "authors": "authors: their lazy sampler, right extrapolation conditioned on the first buffered "
                             "value (the authors' experimental loop, not the paper)"}
#: sigma of Figure 1 (authors' loop.py; 0 is the non-private run).
PAPER_SIGMAS = (0.0, 0.2, 0.4, 0.6, 0.8, 1.0)
#: Returns of this loop as measured by running the authors' loop
#: (last-10-episode return after 100 episodes: non-private, sigma = 0.2, 0.4), NOT numbers of the paper,
#: which prints no returns (Wang & Hegde 2019, Figure 1 shows learning curves only); and this environment's
#: references, the move-to-the-middle policy (the optimum) and the uniformly random policy.
REPORTED_RETURNS = {"non-private": 20.2, 0.2: 19.6, 0.4: 17.2, "move_to_middle": 20.7, "random": 10.9}
#: Figure 1 sizes: "fast" (tests and the notebook's default) and "full" (the authors' loop.py).
SETTINGS = {
    "fast": {"episodes": 40, "seeds": (0, 1, 2), "sigmas": PAPER_SIGMAS},
    "full": {"episodes": 100, "seeds": tuple(range(10)), "sigmas": PAPER_SIGMAS},
}
#: the interval environment's two actions
ACTIONS = 2
#: the network's Lipschitz bound: the largest float, so it never projects (the authors' network is unconstrained)
LARGEST = float(np.finfo(float).max)


@dataclass(frozen=True)
class ReplayConfig:
    """Settings of the authors' loop; every default is the value in their ``dpql.py``.

    Attributes:
        sigma: std of the functional noise, in [0, inf); 0 (default) is the non-private run.
        beta: kernel parameter beta of exp(-beta |x - y|), in (0, inf); default 1 (code).
        noise_reset: when both noise paths are redrawn: "episode" (after every episode, code;
            default), "update" (before every optimiser step) or "never".
        episodes: number of episodes, an int >= 1; default 100.
        episode_steps: steps per episode, an int >= 1; default 50 (App. E.1).
        batch_size: B, transitions per update, an int in [1, episodes * episode_steps]; default 128.
        buffer_size: replay capacity (oldest overwritten first), an int >= batch_size; default 10,000.
        optimizer: "rmsprop" (default), "adam" or "sgd" (PyTorch's update rules).
        lr: the step size, in (0, inf); default 1e-2 (PyTorch's RMSprop default).
        rmsprop_decay: RMSprop's smoothing constant of the squared gradients, in [0, 1); default 0.99.
        adam_decays: Adam's smoothing constants of the first and second moments, each in [0, 1);
            default (0.9, 0.999).
        optimizer_offset: added to sqrt(second moment) in RMSprop's and Adam's denominators, in
            (0, inf); default 1e-8.
        grad_clamp: every gradient coordinate is clamped to [-grad_clamp, grad_clamp] before the step,
            in (0, inf), or None for no clamping; default 1 (code).
        huber_threshold: where the Huber loss turns from quadratic to linear, in (0, inf); default 1.
        gamma: discount factor, in [0, 1); default 0.999.
        target_update: the target network is copied from the policy network after every episode
            whose index (from 0) is a multiple of this, an int >= 1; default 10.
        hidden: hidden-layer widths, ints >= 1; default (16, 16).
        activation: "relu" (default, code) or "tanh".
        exploration_start: epsilon-greedy rate at step 0, in [0, 1]; default 0.9.
        exploration_end: the rate it decays to, in [0, 1]; default 0.05.
        exploration_decay: decay time in environment steps, in (0, inf); default 200.
        bootstrap_last: if True the last step of an episode bootstraps from the next state; if False
            (default, code) it is treated as terminal.
        sampler: "privcal" (default: exact OU paths, the Gaussian process the paper states) or "authors"
            (the authors' lazy sampler, :class:`AuthorsNoiseSampler`, queried in their code's order:
            their experimental loop, not the paper).

    Raises:
        ValueError: a field is outside its range (the message names it).
    """

    sigma: float = 0.0
    beta: float = 1.0
    noise_reset: str = "episode"
    episodes: int = 100
    episode_steps: int = 50
    batch_size: int = 128
    buffer_size: int = 10_000
    optimizer: str = "rmsprop"
    lr: float = 1e-2
    rmsprop_decay: float = 0.99
    adam_decays: tuple = (0.9, 0.999)
    optimizer_offset: float = 1e-8
    grad_clamp: Optional[float] = 1.0
    huber_threshold: float = 1.0
    gamma: float = 0.999
    target_update: int = 10
    hidden: tuple = (16, 16)
    activation: str = "relu"
    exploration_start: float = 0.9
    exploration_end: float = 0.05
    exploration_decay: float = 200.0
    bootstrap_last: bool = False
    sampler: str = "privcal"

    def __post_init__(self):
        put = lambda name, value: object.__setattr__(self, name, value)  # noqa: E731 (frozen)
        put("sigma", V.nonnegative("sigma", self.sigma))
        put("beta", V.positive("beta", self.beta))
        V.choice("noise_reset", self.noise_reset, NOISE_RESETS)
        put("episodes", V.positive_int("episodes", self.episodes))
        put("episode_steps", V.positive_int("episode_steps", self.episode_steps))
        put("batch_size", V.positive_int("batch_size", self.batch_size))
        steps = self.episodes * self.episode_steps
        if self.batch_size > steps:
            raise ValueError(f"batch_size must be in [1, episodes * episode_steps = {steps}], "
                             f"got {self.batch_size!r}")
        put("buffer_size", V.positive_int("buffer_size", self.buffer_size))
        if self.buffer_size < self.batch_size:
            raise ValueError(f"buffer_size must be >= batch_size = {self.batch_size} (else no update "
                             f"ever runs), got {self.buffer_size!r}")
        V.choice("optimizer", self.optimizer, OPTIMIZERS)
        put("lr", V.positive("lr", self.lr))
        put("rmsprop_decay", check_decay("rmsprop_decay", self.rmsprop_decay))
        decays = tuple(self.adam_decays) if isinstance(self.adam_decays, (tuple, list)) else None
        if decays is None or len(decays) != 2:
            raise ValueError(f"adam_decays must be a pair of numbers in [0, 1), got {self.adam_decays!r}")
        put("adam_decays", tuple(check_decay("adam_decays[i]", d) for d in decays))
        put("optimizer_offset", V.positive("optimizer_offset", self.optimizer_offset))
        if self.grad_clamp is not None:
            put("grad_clamp", V.positive("grad_clamp", self.grad_clamp))
        put("huber_threshold", V.positive("huber_threshold", self.huber_threshold))
        put("gamma", check_decay("gamma", self.gamma))
        put("target_update", V.positive_int("target_update", self.target_update))
        hidden = (self.hidden,) if isinstance(self.hidden, numbers.Integral) else tuple(self.hidden)
        put("hidden", tuple(V.positive_int("hidden[i]", h) for h in hidden))
        V.choice("activation", self.activation, ("relu", "tanh"))
        put("exploration_start", V.probability("exploration_start", self.exploration_start))
        put("exploration_end", V.probability("exploration_end", self.exploration_end))
        put("exploration_decay", V.positive("exploration_decay", self.exploration_decay))
        if not isinstance(self.bootstrap_last, (bool, np.bool_)):
            raise ValueError(f"bootstrap_last must be True or False, got {self.bootstrap_last!r}")
        put("bootstrap_last", bool(self.bootstrap_last))
        V.choice("sampler", self.sampler, SAMPLERS)

    @property
    def steps(self) -> int:
        """T = episodes * episode_steps, the number of environment steps (transitions)."""
        return self.episodes * self.episode_steps

    @property
    def updates(self) -> int:
        """Optimiser steps: one per environment step once the buffer holds a batch, T - B + 1."""
        return self.steps - self.batch_size + 1

    @property
    def private(self) -> bool:
        """True when noise is added (sigma > 0); the run is *not* differentially private either way."""
        return self.sigma > 0.0


def check_decay(name: str, value) -> float:
    """A smoothing constant or discount in [0, 1); ``ValueError`` naming the range otherwise."""
    x = V.in_closed(name, value, 0.0, 1.0)
    if x >= 1.0:
        raise ValueError(f"{name} must be in [0, 1), got {value!r}")
    return x


def checked_config(config) -> ReplayConfig:
    """``config`` checked once at an entry point: None gives the defaults; anything but a ReplayConfig is refused."""
    if config is None:
        return ReplayConfig()
    if not isinstance(config, ReplayConfig):
        raise ValueError(f"config must be a ReplayConfig, got {type(config).__name__}")
    return config
