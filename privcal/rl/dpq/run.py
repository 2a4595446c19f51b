"""One run of DP-Q's training loop (Algorithm 1 of Wang & Hegde 2019, and the baselines of App. E.2) and
what it produces: :func:`run_unchecked` runs it for checked settings, :class:`TrainResult` holds the outcome.

``privcal.rl.dpq.agent`` checks the arguments, calibrates the noise and states the guarantee; this module only
runs: the noise of the releases, the update rule (plain SGD or certified), the agent acting in its
environment, the minibatch, then the loop. ``privcal.rl.dpq.agent`` re-exports every public name.
"""

from __future__ import annotations

import math
import numbers
import time
from dataclasses import asdict, dataclass, field
from typing import Any, Callable, Optional

import numpy as np
from numpy.typing import ArrayLike

from privcal import _rng
from privcal import _validate as V
from privcal.rl.dpq.hyperparameters import Hyperparameters
from privcal.rl.dpq.updates import CertifiedUpdate, Minibatch, PlainUpdate
from privcal.rl.mlp import LipschitzMLP

__all__ = ["RunNoise", "TrainResult", "initial_network", "make_env", "run_unchecked"]


@dataclass
class TrainResult:
    """What a training run produced: per-episode returns, the released Q-function and the noise used.

    ``sigma`` is the functional-noise std (dpq), the reward-noise std (input_perturbation) or the
    noise multiplier z (dpsgd: std z * clip on the clipped-gradient sum); ``guarantee`` says in words
    what privacy claim the noise carries, and ``premises`` lists (name, held, evidence) for every
    premise of the valid analysis as observed in this run (:func:`train_dpq`, variant "valid"; empty
    otherwise): the claim is made only when every premise held. ``certificate`` summarises the update
    certificate (empty without ``update_clip``): update_clip, update_lipschitz, grid_size, max_certified
    (the largest certified sup change of an update), max_certified_lipschitz (the largest certified slope
    change), scaled (updates whose step was scaled back), skipped (updates scaled to nothing),
    min_factor, max_lipschitz, paths (noise layers drawn per action), state_min, state_max, restart
    ("released": every update started from the released function) (these statistics, like the episode
    returns, are computed from the private rewards and are not covered by the guarantee). ``timings`` splits the wall time (seconds) into env, act (forward
    passes), noise (path queries and resets) and update. ``seed`` is the int seed of the run (None when a Generator, a
    SeedSequence or None was given).
    """

    method: str
    episode_returns: np.ndarray
    sigma: Optional[float]
    beta: Optional[float]
    resets: Optional[int]
    updates: int
    hyperparameters: Hyperparameters
    q: LipschitzMLP
    noise: object = None
    calibration: object = None
    epsilon: Optional[float] = None
    delta: Optional[float] = None
    guarantee: str = ""
    timings: dict = field(default_factory=dict)
    seed: Optional[int] = 0
    projections: int = 0
    premises: list = field(default_factory=list)
    certificate: dict = field(default_factory=dict)

    def released_q(self, states: ArrayLike) -> np.ndarray:
        """Released function at ``states`` (1-D, in [0, 1]): Q(s, a) + g_a(s), shape (n, actions).

        For ``dpq`` the last noise path is extended exactly at new states (querying changes the
        stored path, not its law); ``bgp16`` adds its independent values; the other methods release
        Q itself.

        Args:
            states: positions in [0, 1] (any shape; flattened to n states).

        Returns:
            the released values, shape (n, actions).
        """
        s = np.asarray(states, dtype=float).reshape(-1)
        q = self.q(s[:, None])
        if self.noise is not None and self.sigma != 0.0:  # sigma = 0 (train_dpq_without_noise): every path is 0
            q = q + self.noise.sample_all(s).T
        return q

    def greedy_actions(self, states: ArrayLike) -> np.ndarray:
        """argmax_a of :meth:`released_q` at ``states``.

        Args:
            states: positions in [0, 1] (any shape; flattened to n states).

        Returns:
            n action indices.
        """
        return np.argmax(self.released_q(states), axis=1)

    def to_dict(self) -> dict:
        """JSON-ready summary (what ``privcal train dpq --json`` prints)."""
        cal = self.calibration
        out = {
            "method": self.method,
            "episode_returns": [float(x) for x in self.episode_returns],
            "sigma": self.sigma,
            "beta": self.beta,
            "resets": self.resets,
            "updates": self.updates,
            "epsilon": self.epsilon,
            "delta": self.delta,
            "guarantee": self.guarantee,
            "premises": [{"name": n, "held": bool(h), "evidence": e} for n, h, e in self.premises],
            "certificate": dict(self.certificate),
            "seed": self.seed,
            "mean_return_last_10": (float(np.mean(self.episode_returns[-10:]))
                                    if len(self.episode_returns) else None),
            "hyperparameters": asdict(self.hyperparameters),
            "timings": dict(self.timings),
        }
        if cal is not None and hasattr(cal, "k"):
            out["calibration"] = {
                "variant": cal.variant, "k": None if math.isinf(cal.k) else cal.k, "beta": cal.beta,
                "delta_composition": cal.delta_composition, "delta_tail": cal.delta_tail,
                "accountant": cal.accountant, "sensitivity": cal.sensitivity,
                "update_clip": getattr(cal, "update_clip", None), "notes": list(cal.notes),
            }
        elif cal is not None:
            out["calibration"] = {k: v for k, v in cal.items()} if isinstance(cal, dict) else str(cal)
        return out


def _streams(seed):
    """Independent streams of ``seed`` (``privcal._rng.spawn``): the environment's int seed (Gymnasium's
    ``reset`` takes an int, drawn from the first child's seed sequence), weights, noise, exploration
    and mechanism noise."""
    env_rng, *rngs = _rng.spawn(seed, 5, "seed")
    bits = env_rng.bit_generator
    seed_seq = getattr(bits, "seed_seq", None) or bits._seed_seq  # public from numpy 1.25
    return int(seed_seq.generate_state(1)[0]), *rngs


def make_env(env: Any) -> Any:
    """``env``, or App. E.1's ``privcal.rl.envs.IntervalEnv`` when it is None.

    Args:
        env: an environment, or None.

    Returns:
        the environment a run uses.
    """
    if env is not None:
        return env
    from privcal.rl.envs import IntervalEnv

    return IntervalEnv.unchecked()  # App. E.1's defaults: nothing to validate


def initial_network(hp: Hyperparameters, actions: int, seed: _rng.Seed = 0) -> LipschitzMLP:
    """The network a run of ``seed`` starts from (its weights drawn from the run's own stream).

    Args:
        hp: the learner's settings, a validated :class:`Hyperparameters`.
        actions: the number of actions, an int >= 1.
        seed: seed of the run (``privcal._rng``); default 0.

    Returns:
        a fresh :class:`~privcal.rl.mlp.LipschitzMLP` with one input and ``actions`` outputs.
    """
    return _network(hp, V.positive_int("sizes[i]", actions), _Streams(*_streams(seed)).net)


def _network(hp: Hyperparameters, actions: int, rng) -> LipschitzMLP:
    """The Q-network of ``hp`` with ``actions`` outputs, its weights drawn from ``rng``."""
    return LipschitzMLP.unchecked((1, *hp.hidden, actions), lipschitz=hp.lipschitz, activation=hp.activation,
                                  seed=rng, output_scale=hp.output_scale)


def run_unchecked(noise: RunNoise, hp: Hyperparameters, seed: _rng.Seed, env: Any,
                  progress: Optional[Callable[[int, int], None]], *, net: Optional[LipschitzMLP] = None,
                  **record: Any) -> TrainResult:
    """One run of the training loop for arguments already checked and normalised (the kernel of
    ``privcal.rl.dpq.agent.train``, ``train_unchecked``, ``train_dpq`` and ``train_dpq_without_noise``).

    Args:
        noise: the run's method and noise (:class:`RunNoise`), trusted.
        hp: the learner's settings, a validated ``Hyperparameters``.
        seed: seed of the run (``privcal._rng``).
        env: an env with 1-D observations in [0, 1] and discrete actions, or None for
            ``privcal.rl.envs.IntervalEnv`` (App. E.1).
        progress: called as progress(samples done, T) after each update, or None.
        net: the network to start from; default None: a fresh one from the run's stream.
        **record: recorded in the :class:`TrainResult` (epsilon, delta, calibration, guarantee).

    Returns:
        the run's :class:`TrainResult`.
    """
    streams = _Streams(*_streams(seed))
    env = make_env(env)
    actions = int(env.action_space.n)
    # hp's fields were validated by Hyperparameters; the env's action count is checked as LipschitzMLP would
    if net is None:
        net = _network(hp, V.positive_int("sizes[i]", actions), streams.net)
    recorded_seed = int(seed) if isinstance(seed, numbers.Integral) else None
    return _loop(noise, hp, net, env, streams, progress, seed=recorded_seed, **record)


# ----------------------------------------------------------------------------------------------------------
# the training loop of Algorithm 1 (and of the baselines), in named steps: the noise of the releases, the
# update rule (plain SGD or certified), the agent acting in its environment, the minibatch; then the loop.


@dataclass(frozen=True)
class RunNoise:
    """A run's checked method and noise: sigma None for non_private, beta and resets None where unused.

    Attributes:
        method: one of ``privcal.rl.dpq.agent.METHODS``.
        sigma: the noise level (as in ``privcal.rl.dpq.agent.train``), or None for non_private.
        beta: kernel parameter beta of the functional noise, or None where unused.
        resets: J, the number of noise releases, or None where unused.
    """

    method: str
    sigma: Optional[float]
    beta: Optional[float]
    resets: Optional[int]


@dataclass(frozen=True)
class _Streams:
    """The independent random streams of one run (:func:`_streams`)."""

    env_seed: int
    net: np.random.Generator
    noise: np.random.Generator
    explore: np.random.Generator
    mechanism: np.random.Generator


class _Clock:
    """Seconds spent in each part of the loop ("env", "act", "noise", "update")."""

    def __init__(self):
        self.seconds = {"env": 0.0, "act": 0.0, "noise": 0.0, "update": 0.0}
        self._t = time.perf_counter()

    def lap(self, part: str) -> None:
        """Charge the time since the last lap to ``part``."""
        now = time.perf_counter()
        self.seconds[part] += now - self._t
        self._t = now

    def start(self) -> None:
        """Start a lap (time before it is charged to no part)."""
        self._t = time.perf_counter()


def _release_noise(noise: RunNoise, certify: bool, actions: int, rng):
    """The noise paths of the released functions (one per action), or None: summed layers when every update
    starts from the released function (certified dpq), OU paths of kernel exp(-beta |x - y|) (dpq), white
    noise (bgp16); the other methods release no noisy function."""
    if certify:
        return _SummedPaths(actions, noise.beta, noise.sigma, rng)
    if noise.method == "dpq":
        from privcal.analysis.noise import OrnsteinUhlenbeckPaths

        return OrnsteinUhlenbeckPaths.unchecked(actions, noise.beta, noise.sigma, seed=rng)  # checked by train
    if noise.method == "bgp16":
        from privcal.rl.dpq.baselines import WhiteNoisePaths

        return WhiteNoisePaths.unchecked(actions, noise.sigma, seed=rng)  # checked by train
    return None


class _Buffers:
    """The buffers the loop fills for one minibatch (Algorithm 1 lines 14-18): B transitions (s_i, a_i, r_i,
    s_{i+1}), the revealed noise g_{a_i}(s_i) and g_a(s_{i+1}) of every action, and whether s_{i+1} is
    terminal; :attr:`view` is the :class:`Minibatch` the update rules read (the same arrays)."""

    def __init__(self, size: int, actions: int):
        self.s = np.empty(size)
        self.a = np.empty(size, dtype=np.intp)
        self.r = np.empty(size)
        self.s2 = np.empty(size)
        self.g = np.empty(size)
        self.g2 = np.empty((size, actions))
        self.term = np.zeros(size, dtype=bool)
        self.view = Minibatch(self.s, self.a, self.r, self.s2, self.g, self.g2, self.term)

    def store(self, i: int, s: float, g_s, a: int, outcome: tuple) -> None:
        """Row ``i``: the transition from ``s`` by ``a`` (``outcome`` as :meth:`_Agent.step` returns it:
        s', r, terminated, truncated, g(s')) and the noise revealed at its two states."""
        s2, r, terminated, _, g_s2 = outcome
        self.s[i], self.a[i], self.r[i], self.s2[i], self.g[i], self.g2[i], self.term[i] = (
            s, a, r, s2, g_s[a], g_s2, terminated)


class _Agent:
    """The agent in its environment: it reveals the noise of the current release at the states it visits
    (Algorithm 1 lines 11-13: g_a(s) of every action, exact and fixed once revealed), and acts greedily on
    Q + g, or uniformly at random with probability ``hp.exploration``."""

    def __init__(self, env, net: LipschitzMLP, paths, hp: Hyperparameters, explore_rng, actions: int,
                 clock: _Clock):
        self.env, self.net, self.paths, self.clock = env, net, paths, clock
        self.explore, self.explore_rng, self.actions = hp.exploration, explore_rng, actions
        self._zeros = np.zeros(actions)
        self._x1 = np.empty((1, 1))

    def reveal(self, s: float) -> np.ndarray:
        """g_a(s) for every action (zeros without noise paths); charged to "noise"."""
        g = np.array([p.sample_point(s) for p in self.paths]) if self.paths is not None else self._zeros
        self.clock.lap("noise")
        return g

    def reset(self, seed: Optional[int] = None) -> tuple[float, np.ndarray]:
        """A new episode: its first state and the noise revealed there."""
        self.clock.start()
        obs, _ = self.env.reset() if seed is None else self.env.reset(seed=seed)
        self.clock.lap("env")
        s = float(obs[0])
        return s, self.reveal(s)

    def new_release(self, s: float) -> np.ndarray:
        """Lines 7-9: new independent paths (a new layer under the certificate); the state revealed again."""
        self.clock.start()
        self.paths.reset()
        return self.reveal(s)

    def act(self, s: float, g_s: np.ndarray) -> int:
        """The action at ``s``: exploration, else argmax_a Q(s, a) + g_a(s)."""
        self.clock.start()
        if self.explore > 0.0 and self.explore_rng.random() < self.explore:
            a = int(self.explore_rng.integers(self.actions))
        else:
            self._x1[0, 0] = s
            a = int(np.argmax(self.net(self._x1)[0] + g_s))
        self.clock.lap("act")
        return a

    def step(self, a: int) -> tuple[float, float, bool, bool, np.ndarray]:
        """Take ``a``: (s', r, terminated, truncated, g(s'))."""
        obs2, r, terminated, truncated, _ = self.env.step(a)
        self.clock.lap("env")
        s2 = float(obs2[0])
        return s2, r, terminated, truncated, self.reveal(s2)


def _loop(noise: RunNoise, hp: Hyperparameters, net: LipschitzMLP, env, streams: _Streams, progress,
          **record) -> TrainResult:
    """Algorithm 1 (or a baseline): T samples, one update per minibatch of B for the first U = floor(T/B)
    minibatches, a new release of the noise every U/J updates."""
    B, T, U = hp.batch_size, hp.samples, hp.updates
    actions = int(env.action_space.n)
    period = U // noise.resets if noise.resets else None  # guarded by tests/test_rl_dpq.py::test_full_batches_only_and_resets
    # the update certificate (valid analysis): dpq with an update clip only; every update then starts
    # from the released function R_j = N_theta_j + G_j, whose noise G_j sums one fresh layer per release
    certify = noise.method == "dpq" and hp.update_clip is not None
    paths = _release_noise(noise, certify, actions, streams.noise)
    update = CertifiedUpdate(hp, net) if certify else PlainUpdate(noise, hp, streams.mechanism)
    clock = _Clock()
    agent = _Agent(env, net, paths, hp, streams.explore, actions, clock)
    batch = _Buffers(B, actions)
    returns, projections, ep_return = [], 0, 0.0
    s, g_s = agent.reset(seed=streams.env_seed)
    for t in range(T):
        j, i = divmod(t, B)
        if i == 0 and j < U and paths is not None and j % period == 0 and j > 0:  # guarded by tests/test_rl_dpq.py::test_full_batches_only_and_resets
            g_s = agent.new_release(s)
            update.new_path()
        a = agent.act(s, g_s)
        outcome = agent.step(a)
        s2, r, terminated, truncated, g_s2 = outcome
        ep_return += r
        update.visited(s, s2)
        if j < U:
            batch.store(i, s, g_s, a, outcome)
            if i == B - 1:
                clock.start()
                projections += update(net, batch.view)
                clock.lap("update")
                if certify and j == U - 1:  # the function after the last update gets its own fresh path; guarded by tests/test_rl_dpq.py::test_the_valid_run_restarts_from_the_released_function
                    g_s2 = agent.new_release(s2)
                    update.new_path()
                if progress is not None:
                    progress(t + 1, T)
        if terminated or truncated:
            returns.append(ep_return)
            ep_return = 0.0
            s, g_s = agent.reset()
        else:
            s, g_s = s2, g_s2
    if progress is not None:
        progress(T, T)
    return TrainResult(method=noise.method, episode_returns=np.array(returns), sigma=noise.sigma, beta=noise.beta,
                       resets=noise.resets, updates=U, hyperparameters=hp, q=net, noise=paths,
                       timings=dict(clock.seconds), projections=projections, certificate=update.certificate or {},
                       **record)


class _SummedPaths:
    """The noise of the released functions when every update starts from the released one (valid variant).

    Release j is R_j = N_(theta_j) + G_j with G_j = g_0 + ... + g_j, one fresh, independent layer of OU
    paths (one per action, ``privcal.analysis.noise.OrnsteinUhlenbeckPaths``) per release: :meth:`reset` adds a
    layer. Every layer is extended exactly at each queried state, so G_j is sampled from its exact law.
    Iterating yields one object per action with ``sample_point`` (the loop's interface)."""

    def __init__(self, actions, beta, sigma, rng):
        from privcal.analysis.noise import OrnsteinUhlenbeckPaths

        # beta and sigma checked once by train / train_dpq: one layer per release, none re-validated
        self._make = lambda: OrnsteinUhlenbeckPaths.unchecked(actions, beta, sigma, seed=rng)
        self.layers = [self._make()]
        self._actions = [_SummedAction(self.layers, a) for a in range(actions)]

    def __len__(self) -> int:
        return len(self._actions)

    def __iter__(self):
        return iter(self._actions)

    def reset(self) -> None:
        """A fresh layer for the next release (the earlier layers stay: they are part of it)."""
        self.layers.append(self._make())

    def sample_all(self, points: ArrayLike) -> np.ndarray:
        """G at ``points`` for every action, shape (actions, *points.shape)."""
        return sum(layer.sample_all(points) for layer in self.layers)


class _SummedAction:
    """One action's G_j (see :class:`_SummedPaths`)."""

    def __init__(self, layers, action):
        self._layers, self._action = layers, action

    def sample_point(self, s: float) -> float:
        a = self._action
        return float(sum(layer[a].sample_point(s) for layer in self._layers))
