r"""The DP-Q-learning experiment of Wang & Hegde as its authors' code runs it (Figure 1), no valid guarantee.

The workshop version of *Private Q-Learning with Functional Noise in Continuous Spaces* links the
authors' code (public repository ``wangbx66/differentially-private-q-learning``, ``dpql.py`` run over
sigma in {0, 0.2, ..., 1.0} and seeds 0..9 by ``loop.py``). That code is a DQN-style loop, not
Algorithm 1 as written. This module runs that loop on privcal's interval environment
(``privcal.rl.envs.IntervalEnv``, App. E.1: the same dynamics, with the actions' directions swapped,
which is a relabelling of a symmetric task), in numpy, deterministic under a seed; and
:func:`replay_privacy_report` computes what a valid privacy analysis of the loop would have to
account for, and which of its premises fail.

**There is no valid privacy guarantee for this loop** (``ReplayResult.guarantee`` says so; the
reasons are computed by :func:`replay_privacy_report`). Use ``privcal.rl.dpq.agent`` for Algorithm 1.

Where the authors' code departs from Algorithm 1's text (pseudo-code says X; code does Y; we do Y):

* Data: pseudo-code trains on each batch of B fresh samples once (floor(T/B) updates); code keeps
  every transition in a replay buffer (capacity 10,000 > T = 5,000, so nothing is evicted) and, from
  the step the buffer holds B = 128 transitions on, takes one optimiser step per environment step on
  B transitions drawn uniformly without replacement from the whole buffer (T - B + 1 = 4,873
  updates for 100 episodes of 50 steps); so does :func:`train_replay` (``buffer_size``, ``batch_size``).
* Optimiser: pseudo-code takes a plain gradient step with alpha = 3e-4; code uses PyTorch's RMSprop
  with its defaults (lr = 1e-2, smoothing 0.99, offset 1e-8, no momentum) after clamping every
  gradient coordinate to [-1, 1]; we do the same (``optimizer``: "rmsprop", "adam" or "sgd", with
  PyTorch's update rules; ``grad_clamp``).
* Loss: pseudo-code's squared error; code's Huber loss (PyTorch ``smooth_l1_loss``, threshold 1),
  averaged over the batch; we do the same (``huber_threshold``).
* Target: pseudo-code bootstraps from the current Q; code from a target network copied from the
  policy network after episodes 0, 10, 20, ...; we do the same (``target_update``, in episodes).
  gamma = 0.999 (code); the 50th step of an episode is treated as terminal (its target is the reward
  alone, code), ``bootstrap_last=False``.
* Network: pseudo-code's Q is L-Lipschitz in the state (the analysis needs it); code's is an
  unconstrained 1-16-16-2 ReLU network with PyTorch's default initialisation (weights and biases
  U(-1/sqrt(fan_in), 1/sqrt(fan_in))); we do the same (``privcal.rl.mlp.LipschitzMLP`` for the forward
  and backward passes, its bound set to the largest float so it never projects).
* Exploration: code acts epsilon-greedily with a rate decaying from 0.9 to 0.05 as
  0.05 + 0.85 exp(-t/200) over environment steps t; we do the same (``exploration_*``).
* Noise: pseudo-code calibrates sigma, k and beta = 1/v from Theorem 5 (beta in the thousands) and
  redraws the path J times; code sets sigma by hand (0.2 .. 1.0), uses the kernel exp(-|x - y|)
  (beta = 1) and draws a new path, lazily at the queried states, for every episode. We do the same
  with privcal's exact Ornstein-Uhlenbeck paths (``privcal.noise.OrnsteinUhlenbeckPaths``, one
  path per action; ``beta``, ``sigma``, ``noise_reset``), revealed at every buffered state when a
  path is drawn rather than at the queried ones only: the values used have the same joint law.
* Where the noise enters: code adds the policy network's path g_a(s) to its output *everywhere* the
  network is called: in the action choice (argmax_a Q(s, a) + g_a(s)), in the prediction inside the
  loss (Q(s_i, a_i) + g_{a_i}(s_i)), and the target network adds its *own, independent* path
  h_a to the target (r_i + gamma max_a [Q'(s'_i, a) + h_a(s'_i)]); both paths are redrawn after every
  episode. The noise never touches the parameters: it only shifts the residual inside the Huber loss.
  We do the same.
* Code's lazy sampler extrapolates to the right of the largest sampled state from the *smallest*
  one's value (``buffer[0]`` for ``buffer[-1]``), so its values are not exactly the stated Gaussian
  process; by default (``sampler="privcal"``) we sample the process exactly (privcal's paths), which is
  what the paper states. ``sampler="authors"`` reproduces the authors' experimental loop instead of the
  paper: :class:`AuthorsNoiseSampler`, queried lazily in the code's order (the action's state, then the
  batch's states for the policy network, then the live next states for the target network), whose law
  depends on that order.
* sigma = 0 is the non-private run (code skips the noise when sigma = 0).

Randomness: ``privcal._rng.spawn(seed, 5)`` gives independent streams for the environment, the
initial weights, the replay sampling, the exploration and the noise paths; same seed, same returns.
The references (:func:`reference_returns`): the move-to-the-middle policy and the uniformly random
policy, by Monte Carlo on the same dynamics.
"""

from __future__ import annotations

import math
import numbers
import time
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from typing import Any, Callable, Optional

import numpy as np
from numpy.typing import ArrayLike

from privcal import _rng
from privcal import _validate as V
from privcal.rl.mlp import LipschitzMLP

__all__ = [
    "GUARANTEE",
    "OPTIMIZERS",
    "SAMPLERS",
    "AuthorsNoiseSampler",
    "NOISE_RESETS",
    "PAPER_SIGMAS",
    "REPORTED_RETURNS",
    "SETTINGS",
    "ReplayConfig",
    "ReplayResult",
    "Premise",
    "ReplayPrivacyReport",
    "Optimizer",
    "SGD",
    "RMSprop",
    "Adam",
    "make_optimizer",
    "huber_loss",
    "huber_grad",
    "train_replay",
    "replay_curves",
    "replay_privacy_report",
    "reference_returns",
]

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
_SAMPLER_LABELS = {"privcal": "privcal: exact Ornstein-Uhlenbeck paths (the Gaussian process the paper states)",
                   "authors": "authors: their lazy sampler, right extrapolation conditioned on the first buffered "
                              "value (the authors' experimental loop, not the paper)"}
#: sigma of Figure 1 (authors' loop.py; 0 is the non-private run).
PAPER_SIGMAS = (0.0, 0.2, 0.4, 0.6, 0.8, 1.0)
#: Returns of this loop as privcal's issue 12 stated them: measured there by running the authors' loop
#: (last-10-episode return after 100 episodes: non-private, sigma = 0.2, 0.4), NOT numbers of the paper,
#: which prints no returns (Wang & Hegde 2019, Figure 1 shows learning curves only); and this environment's
#: references, the move-to-the-middle policy (the optimum) and the uniformly random policy.
REPORTED_RETURNS = {"non-private": 20.2, 0.2: 19.6, 0.4: 17.2, "move_to_middle": 20.7, "random": 10.9}
#: Figure 1 sizes: "fast" (tests and the notebook's default) and "full" (the authors' loop.py).
SETTINGS = {
    "fast": {"episodes": 40, "seeds": (0, 1, 2), "sigmas": PAPER_SIGMAS},
    "full": {"episodes": 100, "seeds": tuple(range(10)), "sigmas": PAPER_SIGMAS},
}
_ACTIONS = 2
_LARGEST = float(np.finfo(float).max)


# ---------------------------------------------------------------------------------------------------
# configuration


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
        put("rmsprop_decay", _decay("rmsprop_decay", self.rmsprop_decay))
        decays = tuple(self.adam_decays) if isinstance(self.adam_decays, (tuple, list)) else None
        if decays is None or len(decays) != 2:
            raise ValueError(f"adam_decays must be a pair of numbers in [0, 1), got {self.adam_decays!r}")
        put("adam_decays", tuple(_decay("adam_decays[i]", d) for d in decays))
        put("optimizer_offset", V.positive("optimizer_offset", self.optimizer_offset))
        if self.grad_clamp is not None:
            put("grad_clamp", V.positive("grad_clamp", self.grad_clamp))
        put("huber_threshold", V.positive("huber_threshold", self.huber_threshold))
        put("gamma", _decay("gamma", self.gamma))
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


def _decay(name: str, value) -> float:
    """A smoothing constant or discount in [0, 1); ``ValueError`` naming the range otherwise."""
    x = V.in_closed(name, value, 0.0, 1.0)
    if x >= 1.0:
        raise ValueError(f"{name} must be in [0, 1), got {value!r}")
    return x


def _check_config(config) -> ReplayConfig:
    if config is None:
        return ReplayConfig()
    if not isinstance(config, ReplayConfig):
        raise ValueError(f"config must be a ReplayConfig, got {type(config).__name__}")
    return config


# ---------------------------------------------------------------------------------------------------
# loss and optimisers


def huber_loss(residual: ArrayLike, threshold: float = 1.0) -> np.ndarray:
    r"""Huber loss of a residual x: x^2 / 2 for |x| <= c, c (|x| - c / 2) beyond (Huber 1964).

    With c = 1 this is PyTorch's ``smooth_l1_loss`` (its ``beta`` = 1), which the authors' code uses.

    Args:
        residual: the residual(s) x = prediction - target (any shape).
        threshold: c, where the loss turns linear, in (0, inf); default 1.

    Returns:
        the elementwise loss, same shape as ``residual``.

    Raises:
        ValueError: ``threshold`` is outside its range.
    """
    return _huber_loss(np.asarray(residual, dtype=float), V.positive("threshold", threshold))


def _huber_loss(x, c):
    ax = np.abs(x)
    return np.where(ax <= c, 0.5 * x * x, c * (ax - 0.5 * c))


def huber_grad(residual: ArrayLike, threshold: float = 1.0) -> np.ndarray:
    """Derivative of :func:`huber_loss` in the residual: x clipped to [-c, c].

    Args:
        residual: the residual(s) x = prediction - target (any shape).
        threshold: c, in (0, inf); default 1.

    Returns:
        the elementwise derivative, same shape as ``residual``.

    Raises:
        ValueError: ``threshold`` is outside its range.
    """
    c = V.positive("threshold", threshold)
    return np.clip(np.asarray(residual, dtype=float), -c, c)


class Optimizer:
    """Base of the numpy optimisers on a flat parameter vector: ``step`` checks shapes, advances the state.

    Subclasses (:class:`SGD`, :class:`RMSprop`, :class:`Adam`) define the update rule.
    """

    name = ""

    def step(self, params: ArrayLike, grads: ArrayLike) -> np.ndarray:
        """The parameters after one step on ``grads`` (the optimiser's state advances).

        Args:
            params: the current parameters, a flat float array.
            grads: the gradient at ``params``, same shape.

        Returns:
            the new parameters (a new array).

        Raises:
            ValueError: ``params`` and ``grads`` differ in shape.
        """
        params = np.asarray(params, dtype=float)
        grads = np.asarray(grads, dtype=float)
        if params.shape != grads.shape:
            raise ValueError(f"grads must have the shape of params {params.shape}, got {grads.shape}")
        return self._step(params, grads)

    def _step(self, params, grads):
        new, self._state = self._propose(params, grads, self._state)
        return new

    def _peek(self, params, grads):
        """The step ``_step`` would take, without advancing the state."""
        return self._propose(params, grads, self._state)[0]


class SGD(Optimizer):
    """Plain gradient descent: theta <- theta - lr g (PyTorch ``optim.SGD`` without momentum).

    Args:
        lr: the step size, in (0, inf).

    Raises:
        ValueError: ``lr`` is outside its range.
    """

    name = "sgd"

    def __init__(self, lr: float):
        self.lr = V.positive("lr", lr)
        self._state = None

    def _propose(self, params, grads, state):
        return params - self.lr * grads, state


class RMSprop(Optimizer):
    r"""RMSprop as PyTorch runs it (no momentum, not centred), from v_0 = 0.

        v_t = d v_{t-1} + (1 - d) g_t^2,    theta_t = theta_{t-1} - lr g_t / (sqrt(v_t) + offset).

    Tieleman & Hinton 2012 (lecture 6.5); PyTorch ``optim.RMSprop`` (d = alpha = 0.99, offset = eps =
    1e-8 by default). Since v_t >= (1 - d) g_t^2, no coordinate moves by more than lr / sqrt(1 - d)
    in one step (0.1 at the defaults), whatever the gradient.

    Args:
        lr: the step size, in (0, inf).
        decay: d, the smoothing constant, in [0, 1); default 0.99.
        offset: added to sqrt(v_t), in (0, inf); default 1e-8.

    Raises:
        ValueError: an argument is outside its range.
    """

    name = "rmsprop"

    def __init__(self, lr: float, decay: float = 0.99, offset: float = 1e-8):
        self.lr = V.positive("lr", lr)
        self.decay = _decay("decay", decay)
        self.offset = V.positive("offset", offset)
        self._state = None

    def _propose(self, params, grads, state):
        v = (1.0 - self.decay) * grads * grads
        if state is not None:
            v += self.decay * state
        return params - self.lr * grads / (np.sqrt(v) + self.offset), v


class Adam(Optimizer):
    r"""Adam as PyTorch runs it (bias-corrected moments), from m_0 = v_0 = 0.

        m_t = d1 m_{t-1} + (1 - d1) g_t,    v_t = d2 v_{t-1} + (1 - d2) g_t^2,
        theta_t = theta_{t-1} - lr (m_t / (1 - d1^t)) / (sqrt(v_t / (1 - d2^t)) + offset).

    Kingma & Ba 2015, Alg. 1 (offset added outside the square root, as PyTorch ``optim.Adam``).

    Args:
        lr: the step size, in (0, inf).
        decays: (d1, d2), each in [0, 1); default (0.9, 0.999).
        offset: added to the bias-corrected sqrt(v_t), in (0, inf); default 1e-8.

    Raises:
        ValueError: an argument is outside its range.
    """

    name = "adam"

    def __init__(self, lr: float, decays: tuple = (0.9, 0.999), offset: float = 1e-8):
        self.lr = V.positive("lr", lr)
        if not isinstance(decays, (tuple, list)) or len(decays) != 2:
            raise ValueError(f"decays must be a pair of numbers in [0, 1), got {decays!r}")
        self.decays = tuple(_decay("decays[i]", d) for d in decays)
        self.offset = V.positive("offset", offset)
        self._state = None

    def _propose(self, params, grads, state):
        d1, d2 = self.decays
        m, v, t = (np.zeros_like(grads), np.zeros_like(grads), 0) if state is None else state
        t += 1
        m = d1 * m + (1.0 - d1) * grads
        v = d2 * v + (1.0 - d2) * grads * grads
        m_hat = m / (1.0 - d1 ** t)
        v_hat = v / (1.0 - d2 ** t)
        return params - self.lr * m_hat / (np.sqrt(v_hat) + self.offset), (m, v, t)


def make_optimizer(config: ReplayConfig) -> Optimizer:
    """The optimiser named by ``config.optimizer`` with the config's lr and constants.

    Args:
        config: the loop's settings (a :class:`ReplayConfig`).

    Returns:
        a fresh :class:`SGD`, :class:`RMSprop` or :class:`Adam` (state at zero).

    Raises:
        ValueError: ``config`` is not a ReplayConfig.
    """
    return _make_optimizer(_check_config(config))


def _make_optimizer(config):
    if config.optimizer == "sgd":
        return SGD(config.lr)
    if config.optimizer == "rmsprop":
        return RMSprop(config.lr, config.rmsprop_decay, config.optimizer_offset)
    return Adam(config.lr, config.adam_decays, config.optimizer_offset)


# ---------------------------------------------------------------------------------------------------
# the loop


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
            "sampler": (_SAMPLER_LABELS[self.config.sampler] if self.config.private else None),
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
    config = _check_config(config)
    if not isinstance(measure_sensitivity, (bool, np.bool_)):
        raise ValueError(f"measure_sensitivity must be True or False, got {measure_sensitivity!r}")
    return _train_replay(config, seed, bool(measure_sensitivity), progress)


def _torch_init(net: LipschitzMLP, rng: np.random.Generator) -> None:
    """PyTorch's default ``nn.Linear`` initialisation: weights and biases U(-1/sqrt(fan_in), +)."""
    for w, b in zip(net.weights, net.biases):
        bound = 1.0 / math.sqrt(w.shape[1])
        w[...] = rng.uniform(-bound, bound, size=w.shape)
        b[...] = rng.uniform(-bound, bound, size=b.shape)


def _network(config, rng) -> LipschitzMLP:
    net = LipschitzMLP((1, *config.hidden, _ACTIONS), lipschitz=_LARGEST, activation=config.activation,
                       seed=rng)
    _torch_init(net, rng)
    return net


class AuthorsNoiseSampler:
    r"""The authors' lazy noise sampler: both actions' values at a state, drawn when first asked for.

    The facts of the authors' ``noisebuffer`` (``dpql.py``), with kernel k(x, y) = exp(-beta |x - y|)
    (their code: beta = 1). The sampled states are kept sorted with both actions' values v(x):

    * no state yet: v(s) ~ N(0, sigma^2), independently per action;
    * a sampled state: its stored values;
    * s left of the smallest sampled state x_1: v(s) ~ N(k(s, x_1) v(x_1), sigma^2 (1 - k(s, x_1)^2))
      (exact: the OU process is Markov);
    * s between neighbours x_- < s < x_+: the exact bridge, mean (sinh(beta (x_+ - s)) v(x_-) +
      sinh(beta (s - x_-)) v(x_+)) / sinh(beta (x_+ - x_-)), variance sigma^2 (1 - (k(x_-, s)
      sinh(beta (x_+ - s)) + k(x_+, s) sinh(beta (s - x_-))) / sinh(beta (x_+ - x_-)));
    * s right of the largest sampled state x_n: v(s) ~ N(k(s, x_n) v(x_1), sigma^2 (1 - k(s, x_n)^2)):
      the mean conditions on the *first* (smallest) buffered state's value, not on v(x_n). So the values
      are not the stated Gaussian process, and their law depends on the order of the queries.

    Randomness from ``seed`` (``privcal._rng``); two standard normals per new state (action 0, then 1).

    Args:
        beta: kernel parameter beta, in (0, inf).
        sigma: standard deviation of the process, in (0, inf).
        seed: None, an int >= 0, a SeedSequence or a Generator; default None.

    Raises:
        ValueError: an argument is outside its range.
    """

    def __init__(self, beta: float, sigma: float, seed: _rng.Seed = None):
        self.beta = V.positive("beta", beta)
        self.sigma = V.positive("sigma", sigma)
        self._rng = _rng.as_generator(seed, "seed")
        self._xs: list = []
        self._vs: list = []

    def __len__(self) -> int:
        return len(self._xs)

    def reset(self) -> None:
        """Forget every sampled state (the authors' ``reset`` after each episode)."""
        self._xs, self._vs = [], []

    def sample(self, s: float) -> np.ndarray:
        """Both actions' values at state ``s`` (drawn now if ``s`` was never asked for).

        Args:
            s: the state, a number in [0, 1] (the interval environment's states).

        Returns:
            an array of 2 values (action 0, action 1).

        Raises:
            ValueError: ``s`` is not a number in [0, 1].
        """
        s = V.in_closed("s", s, 0.0, 1.0)
        return self._sample(s)

    def _sample(self, s: float) -> np.ndarray:
        import bisect

        xs, vs, beta, sigma = self._xs, self._vs, self.beta, self.sigma
        i = bisect.bisect_left(xs, s)
        if i < len(xs) and xs[i] == s:
            return vs[i]
        z = self._rng.standard_normal(_ACTIONS)
        if not xs:
            v = sigma * z
        elif i == 0:  # left of the smallest: exact
            k = math.exp(-beta * (xs[0] - s))
            v = k * vs[0] + sigma * math.sqrt(1.0 - k * k) * z
        elif i == len(xs):  # right of the largest: the authors condition on the smallest state's value
            k = math.exp(-beta * (s - xs[-1]))
            v = k * vs[0] + sigma * math.sqrt(1.0 - k * k) * z
        else:  # the exact bridge between the neighbours
            lo, hi = xs[i - 1], xs[i]
            w = math.sinh(beta * (hi - lo))
            w_lo, w_hi = math.sinh(beta * (hi - s)) / w, math.sinh(beta * (s - lo)) / w
            var = 1.0 - (math.exp(-beta * (s - lo)) * w_lo + math.exp(-beta * (hi - s)) * w_hi)
            v = w_lo * vs[i - 1] + w_hi * vs[i] + sigma * math.sqrt(max(var, 0.0)) * z
        xs.insert(i, s)
        vs.insert(i, v)
        return v


class _Paths:
    """The two networks' noise (one OU path per action each), or no noise when sigma = 0.

    The authors' code reveals a path lazily at the states it is queried at. Every state an update
    queries is a buffered one, so for paths that live a whole episode (or the run) we reveal them at
    *every* buffered state at once when they are drawn, and at each new state when it is buffered;
    an update then only looks values up. The values used have the same joint law either way (the
    marginal of the same Gaussian process), and this is several times faster. With a new path before
    every update (``noise_reset="update"``) only the batch's states are revealed.
    """

    def __init__(self, config, rng, capacity):
        self.on = config.private
        self.authors = config.sampler == "authors"
        self.eager = config.noise_reset != "update" and not self.authors
        if self.on and self.authors:  # the authors' sampler, queried lazily in their code's order
            policy_rng, target_rng = _rng.spawn(rng, 2)
            self.policy = AuthorsNoiseSampler(config.beta, config.sigma, seed=policy_rng)
            self.target = AuthorsNoiseSampler(config.beta, config.sigma, seed=target_rng)
        elif self.on:
            from privcal.noise import OrnsteinUhlenbeckPaths

            policy_rng, target_rng = _rng.spawn(rng, 2)
            self.policy = OrnsteinUhlenbeckPaths(_ACTIONS, config.beta, config.sigma, seed=policy_rng)
            self.target = OrnsteinUhlenbeckPaths(_ACTIONS, config.beta, config.sigma, seed=target_rng)
            if self.eager:
                self.g_s = np.empty((capacity, _ACTIONS))  # policy paths at the buffered states s
                self.h_s2 = np.empty((capacity, _ACTIONS))  # target paths at the buffered next states

    def at_state(self, s: float) -> np.ndarray:
        """g_a(s) of the policy paths for every action."""
        if self.authors:
            return self.policy._sample(s)
        return np.array([p.sample_point(s) for p in self.policy])

    def pushed(self, pos: int, s: float, s2: float) -> None:
        """Reveal the paths at a newly buffered transition (eager mode)."""
        if self.eager:
            self.g_s[pos] = [p.sample_point(s) for p in self.policy]
            self.h_s2[pos] = [p.sample_point(s2) for p in self.target]

    def batch(self, idx, states, actions, next_live, live) -> tuple[np.ndarray, np.ndarray]:
        """(g_{a_i}(s_i) of the policy paths, h_a(s'_i) of the target paths for live i: (n, actions))."""
        if self.eager:
            return self.g_s[idx, actions], self.h_s2[idx][live]
        if self.authors:  # code's order: policy_net(state_batch), then target_net(non-final next states)
            chosen = np.array([self.policy._sample(float(x))[a] for x, a in zip(states, actions)])
            nxt = np.array([self.target._sample(float(x)) for x in next_live]).reshape(-1, _ACTIONS)
            return chosen, nxt
        chosen = np.empty(states.size)
        for a in range(_ACTIONS):
            sel = actions == a
            if sel.any():
                chosen[sel] = self.policy[a].sample(states[sel])
        return chosen, self.target.sample_all(next_live).T

    def reset(self, S, S2, size) -> None:
        """New independent paths; in eager mode revealed at every buffered state."""
        self.policy.reset()
        self.target.reset()
        if self.authors:
            return
        if self.eager and size:
            self.g_s[:size] = self.policy.sample_all(S[:size]).T
            self.h_s2[:size] = self.target.sample_all(S2[:size]).T


def _train_replay(config, seed, measure, progress) -> ReplayResult:
    """Kernel of :func:`train_replay` (arguments checked)."""
    from privcal.rl.envs import IntervalEnv

    env_rng, init_rng, replay_rng, explore_rng, noise_rng = _rng.spawn(seed, 5, "seed")
    env = IntervalEnv(max_episode_steps=config.episode_steps)
    env_seed = int(env_rng.integers(0, 2**62))
    policy = _network(config, init_rng)
    target = policy.copy()
    probe = policy.copy() if measure else None
    params = policy.get_params()
    opt = _make_optimizer(config)
    noise = _Paths(config, noise_rng, config.buffer_size)
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
                a = int(explore_rng.integers(_ACTIONS))
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
                sens.append(_witness(policy, probe, opt, params, grads, cache, ab, residual, c_huber,
                                     clamp, rows, grid))
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
    g_out = np.zeros((rows.size, _ACTIONS))
    g_out[rows, actions] = np.clip(residual, -c_huber, c_huber) / rows.size
    grads = LipschitzMLP.flatten(net.backward(cache, g_out))
    if clamp is not None:
        np.clip(grads, -clamp, clamp, out=grads)
    return grads


def _witness(policy, probe, opt, params, grads, cache, actions, residual, c_huber, clamp, rows,
             grid) -> float:
    """max over r' in {r + 1, r - 1} and the grid of |Q after the step on r - Q after the step on r'|.

    A neighbouring reward function r' = r +- 1 (|r - r'|_inf = 1) shifts every residual by -+1; same
    batch, noise, parameters and optimiser state. The sup over a grid is a lower bound on the sup norm
    of the change, and for a kernel with k(x, x) = 1 on the RKHS norm too (|f(x)| <= |f|_H).
    """
    probe.set_params(opt._peek(params, grads))
    base = probe(grid)
    worst = 0.0
    for shift in (-1.0, 1.0):  # r' = r + 1 lowers the residual by 1, r - 1 raises it
        g2 = _gradient(policy, cache, actions, residual + shift, c_huber, clamp, rows)
        probe.set_params(opt._peek(params, g2))
        worst = max(worst, float(np.abs(probe(grid) - base).max()))
    return worst


# ---------------------------------------------------------------------------------------------------
# Figure 1 and the references


def _run_returns(config: ReplayConfig, seed: int) -> np.ndarray:
    """One seeded run's episode returns (top level, so joblib can ship it to workers)."""
    return _train_replay(config, seed, False, None).episode_returns


def replay_curves(sigmas: Iterable[float] = PAPER_SIGMAS, seeds: Iterable[int] = range(10), *,
                  config: Optional[ReplayConfig] = None, n_jobs: Optional[int] = -1) -> dict:
    """Figure 1 as the authors' loop draws it: per sigma, every seed's episode returns.

    Runs go through ``privcal.rl._parallel.run_trials`` (joblib, configured backend); every run is
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

    from privcal.rl._parallel import run_trials

    config = _check_config(config)
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
    when s < 0.5, left otherwise (reported as the optimum in privcal's issue 12: 20.7, which
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
    from privcal.rl.envs import _simulate

    episodes = V.positive_int("episodes", episodes)
    if episodes < 2:
        raise ValueError(f"episodes must be an integer >= 2 (a standard error needs two), got {episodes!r}")
    episode_steps = V.positive_int("episode_steps", episode_steps)
    rng_mid, rng_rand = _rng.spawn(seed, 2, "seed")
    out = {}
    for name, rng in (("move_to_middle", rng_mid), ("random", rng_rand)):
        r = _simulate("middle" if name == "move_to_middle" else name, episodes, episode_steps, rng)
        out[name] = {"mean": float(r.mean()), "standard_error": float(r.std(ddof=1) / math.sqrt(episodes))}
    return out


# ---------------------------------------------------------------------------------------------------
# what a valid analysis of the loop would need


@dataclass(frozen=True)
class Premise:
    """One premise of the functional-noise analysis (Wang & Hegde, Thm 5) checked against the loop.

    Attributes:
        name: the premise, in words.
        holds: whether the loop as configured satisfies it.
        detail: the computed reason.
    """

    name: str
    holds: bool
    detail: str


@dataclass(frozen=True)
class ReplayPrivacyReport:
    """What a valid (epsilon, delta) analysis of the replay loop would have to account for.

    Attributes:
        steps: environment steps T (each reveals one reward).
        updates: optimiser steps; each reads ``batch_size`` rewards (releases that touch rewards).
        batch_size: rewards per update.
        reward_uses_expected_max: the largest, over transitions, expected number of updates that read
            its reward (the first transitions: they are in the buffer longest).
        reward_uses_expected_mean: that expectation averaged over all transitions
            (= updates * batch_size / steps).
        reward_uses_max: the most updates any one reward can enter (every update while it is buffered).
        noise_paths: paths drawn per network and action over the run.
        updates_per_path_max: the most updates served by one path (no fresh noise in between).
        updates_per_path_mean: the mean over the paths that serve at least one update.
        premises: every premise checked (:class:`Premise`).
        valid_guarantee: always False for this loop: some premise fails, or sigma is not calibrated.
        epsilon: target epsilon of the sigma bound, or None.
        delta: target delta of the sigma bound, or None.
        sigma_needed_lower_bound: if sensitivities and (epsilon, delta) were given, the smallest sigma
            the idealised analysis (``assumptions``) would accept; a lower bound on what that analysis
            needs, not on the loop's true privacy loss; else None.
        sensitivity_total: sqrt(sum of the squared per-update sensitivity witnesses), or None.
        sigma: the sigma the loop was configured with.
        assumptions: what the sigma bound assumes that the loop does not satisfy.
        changes_needed: what would have to change for a valid guarantee.
    """

    steps: int
    updates: int
    batch_size: int
    reward_uses_expected_max: float
    reward_uses_expected_mean: float
    reward_uses_max: int
    noise_paths: int
    updates_per_path_max: int
    updates_per_path_mean: float
    premises: tuple
    valid_guarantee: bool
    epsilon: Optional[float]
    delta: Optional[float]
    sigma_needed_lower_bound: Optional[float]
    sensitivity_total: Optional[float]
    sigma: float
    assumptions: tuple
    changes_needed: tuple

    @property
    def failed(self) -> list:
        """Names of the premises that fail."""
        return [p.name for p in self.premises if not p.holds]

    def to_dict(self) -> dict:
        """JSON-ready dict of every field (premises as dicts)."""
        out = asdict(self)
        out["premises"] = [asdict(p) for p in self.premises]
        out["assumptions"] = list(self.assumptions)
        out["changes_needed"] = list(self.changes_needed)
        out["failed"] = self.failed
        return out

    def describe(self) -> str:
        """The report as text lines (for printing)."""
        lines = [
            "privacy of the replay loop: NO valid guarantee" if not self.valid_guarantee else "valid",
            f"  releases touching rewards: {self.updates} updates x {self.batch_size} rewards "
            f"(T = {self.steps} steps)",
            f"  replay reuse of one reward: expected {self.reward_uses_expected_max:.1f} updates "
            f"(first transitions), {self.reward_uses_expected_mean:.1f} on average, at most "
            f"{self.reward_uses_max}",
            f"  noise reuse: {self.noise_paths} paths per action and network, up to "
            f"{self.updates_per_path_max} updates per path (mean {self.updates_per_path_mean:.1f})",
        ]
        for p in self.premises:
            lines.append(f"  [{'holds' if p.holds else 'FAILS'}] {p.name}: {p.detail}")
        if self.sigma_needed_lower_bound is not None:
            lines.append(
                f"  idealised analysis at epsilon={self.epsilon:g}, delta={self.delta:g}: sigma >= "
                f"{self.sigma_needed_lower_bound:.4g} (run's sigma: {self.sigma:g}; total witnessed "
                f"sensitivity {self.sensitivity_total:.4g})")
            lines += [f"    assumes: {a}" for a in self.assumptions]
        lines += [f"  would need: {c}" for c in self.changes_needed]
        return "\n".join(lines)


def replay_privacy_report(config: Optional[ReplayConfig] = None, *, epsilon: Optional[float] = None,
                          delta: Optional[float] = None,
                          update_sensitivities: Optional[ArrayLike] = None) -> ReplayPrivacyReport:
    r"""Counts and premises of a valid analysis of the replay loop at ``config``; no guarantee is given.

    Counted exactly from the configuration (no run): the updates that read rewards; the replay reuse
    of one reward (the transition pushed at step t is read by update u, t <= u <= t + capacity - 1,
    with probability B / min(u, capacity), so its expected number of uses is
    sum_u B / min(u, capacity) and its maximum the number of such u); the noise reuse (updates
    served by one path). Premises of the functional-noise analysis (Wang & Hegde Thm 5 as privcal's
    valid calibration reads it) are checked: calibrated sigma, fresh noise per release, each reward
    in one release, a certified bound on the update's change of Q, noise on what is released.

    With per-update sensitivity witnesses d_u (``ReplayResult.update_sensitivities`` of a run with
    ``measure_sensitivity=True``) and a target (epsilon, delta), the report adds the smallest sigma
    an *idealised* analysis would accept: every update a release of Q + sigma g with fresh GP noise
    g, so that the releases compose as Gaussian mechanisms with sensitivities Delta_u >= d_u
    (RKHS norm >= sup norm for k(x, x) = 1), i.e. exactly as one Gaussian mechanism with sensitivity
    sqrt(sum_u Delta_u^2) (Dong, Roth & Su 2019, GDP composition; Hall, Rinaldo & Wasserman 2013 for
    the functional release); sigma >= ``privcal.gaussian.sigma_exact(epsilon, delta,
    sensitivity=sqrt(sum_u d_u^2))`` (Balle & Wang 2018). The loop satisfies none of that analysis'
    assumptions (listed in the report), so this is what the idealised analysis would need at least,
    not a guarantee and not a bound on the loop's true privacy loss.

    Args:
        config: the loop's settings; default ``ReplayConfig()``.
        epsilon: target epsilon for the sigma bound, in (0, inf), or None; default None.
        delta: target delta for the sigma bound, in (0, 1), or None; default None.
        update_sensitivities: per-update sensitivity witnesses of a run of this config, one per
            update, each in [0, inf), or None; default None.

    Returns:
        the :class:`ReplayPrivacyReport`.

    Raises:
        ValueError: an argument is outside its range, or the witnesses do not match the update count.
    """
    config = _check_config(config)
    if (epsilon is None) != (delta is None):
        raise ValueError(f"epsilon and delta must be given together, got epsilon={epsilon!r}, "
                         f"delta={delta!r}")
    if epsilon is not None:
        epsilon = V.positive("epsilon", epsilon)
        delta = V.open_unit("delta", delta)
    if update_sensitivities is not None:
        d = np.asarray(update_sensitivities, dtype=float).reshape(-1)
        if d.size != config.updates:
            raise ValueError(f"update_sensitivities must have one entry per update ({config.updates}), "
                             f"got {d.size}")
        if not np.all(np.isfinite(d)) or np.any(d < 0):
            raise ValueError("update_sensitivities must be finite and >= 0")
        update_sensitivities = d
    return _replay_privacy_report(config, epsilon, delta, update_sensitivities)


def _reward_uses(config) -> tuple[np.ndarray, np.ndarray]:
    """Per transition t = 1..T: expected and maximal number of updates reading its reward."""
    T, B, cap = config.steps, config.batch_size, config.buffer_size
    u = np.arange(1, T + 1)
    # update at step u (u >= B) draws B of min(u, cap) buffered transitions uniformly
    p = np.where(u >= B, B / np.minimum(u, cap), 0.0)
    prefix = np.concatenate([[0.0], np.cumsum(p)])
    t = u
    lo = np.maximum(t, B)
    hi = np.minimum(T, t + cap - 1)
    count = np.maximum(hi - lo + 1, 0)
    expected = np.where(count > 0, prefix[hi] - prefix[lo - 1], 0.0)
    return expected, count


def _updates_per_path(config) -> np.ndarray:
    """Updates served by each policy path (one entry per path)."""
    if config.noise_reset == "update":
        return np.ones(config.updates, dtype=int)
    if config.noise_reset == "never":
        return np.array([config.updates])
    L, B = config.episode_steps, config.batch_size
    starts = np.arange(config.episodes) * L + 1  # steps of episode e: e L + 1 .. (e + 1) L
    ends = starts + L - 1
    return np.maximum(ends - np.maximum(starts, B) + 1, 0)


def _replay_privacy_report(config, epsilon, delta, d) -> ReplayPrivacyReport:
    expected, count = _reward_uses(config)
    per_path = _updates_per_path(config)
    serving = per_path[per_path > 0]
    B, K = config.batch_size, config.updates
    e_max = float(expected.max())
    premises = (
        Premise("sigma calibrated to a target (epsilon, delta)", False,
                f"sigma = {config.sigma:g} is set by hand (the authors' loop.py sweeps 0..1); no "
                "calibration links it to any (epsilon, delta)" if config.private else
                "sigma = 0: no noise at all"),
        Premise("fresh, independent noise for every release", config.noise_reset == "update",
                f"one path per action serves up to {int(per_path.max())} updates "
                f"(noise_reset={config.noise_reset!r}); releases sharing a path are not independent "
                "Gaussian releases, and their differences can cancel the noise")
        if config.noise_reset != "update" else
        Premise("fresh, independent noise for every release", True,
                "noise_reset='update' draws new paths before every update"),
        Premise("each reward enters one release", e_max <= 1.0,
                f"replay: a reward is read by {e_max:.1f} updates in expectation (the first "
                f"transitions), {float(expected.mean()):.1f} on average and up to {int(count.max())}; "
                f"and under |r - r'|_inf <= 1 all {B} rewards of a batch change at once, so an "
                "update's sensitivity is not that of one changed reward (no 1/B)"),
        Premise("certified bound on how far one update moves Q (sensitivity)", False,
                "the network has no Lipschitz or function-space constraint; clamping gradient "
                "coordinates and the optimiser's normalisation bound the parameter step"
                + (f" (at most lr/sqrt(1 - decay) = {config.lr / math.sqrt(1 - config.rmsprop_decay):.3g}"
                   " per coordinate for RMSprop)" if config.optimizer == "rmsprop" else "")
                + ", not the change of Q, which grows with the weights"),
        Premise("noise added to what is released", False,
                "the paths are added to the network's outputs (action choice, prediction and target "
                "in the loss) but never to the parameters: the trained network is a function of the "
                "rewards whose dependence no noise masks"),
    )
    sigma_lb = total = None
    if d is not None and epsilon is not None and K > 0:
        total = float(np.sqrt(np.sum(d * d)))
        if total > 0.0:
            from privcal import gaussian

            sigma_lb = gaussian._sigma_exact(epsilon, delta, sensitivity=total)
    assumptions = (
        f"every one of the {K} updates releases Q + sigma g with its own fresh path g (the loop "
        f"reuses a path for up to {int(per_path.max())} updates)",
        "the released functions are what the updates depend on, so post-processing covers the "
        "parameters (the loop's parameters are never noised)",
        "the sensitivity of update u is at least the witnessed d_u: r versus r +- 1 on the same batch, "
        "noise, parameters and optimiser state, sup over 101 states and both actions (a lower bound "
        "on the true worst case)",
        "Gaussian composition of the updates at those sensitivities (exact for fresh Gaussian noise)",
    )
    changes = (
        "certify each update's change of Q in function space (clip the update, as privcal's "
        "valid Algorithm 1 does) so the sensitivity is a bound, not an observation",
        "fresh noise for every release, or an analysis of reused paths (their differences leak)",
        "account for every update that reads a reward with all B rewards changing under "
        "|r - r'|_inf <= 1 (no 1/B), or sample without reuse",
        "calibrate sigma from the composition instead of setting it by hand",
    )
    return ReplayPrivacyReport(
        steps=config.steps, updates=K, batch_size=B, reward_uses_expected_max=e_max,
        reward_uses_expected_mean=float(expected.mean()), reward_uses_max=int(count.max()),
        noise_paths={"episode": config.episodes, "update": K, "never": 1}[config.noise_reset],
        updates_per_path_max=int(per_path.max()),
        updates_per_path_mean=float(serving.mean()) if serving.size else 0.0,
        premises=premises, valid_guarantee=False, epsilon=epsilon, delta=delta,
        sigma_needed_lower_bound=sigma_lb, sensitivity_total=total, sigma=config.sigma,
        assumptions=assumptions, changes_needed=changes)
