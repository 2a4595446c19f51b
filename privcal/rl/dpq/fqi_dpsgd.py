r"""Fitted-Q iteration trained by DP-SGD: a valid DP Q-learner for the transition or the episode unit.

Data: ``episodes`` episodes of 50 steps collected on the interval environment by the uniformly random
behaviour policy (public and data-independent), each transition (s, a, r, s'). :func:`train_fqi_dpsgd`:

* **Model** (linear, public features): Q_w(s, a) = <w_a, phi(s)>, phi the M hat functions
  phi_j(s) = max(0, 1 - |s - c_j| (M - 1)), c_j = j / (M - 1), j = 0..M-1 (piecewise-linear
  interpolation on a uniform grid; at most two are non-zero and they sum to 1, so ||phi(s)||_2 <= 1).
* **Fitted-Q iteration** (Ernst, Geurts & Wehenkel 2005): for k = 1..K, targets
  y = r + gamma max_b Q_{w_{k-1}}(s', b) from the *released* parameters of the previous iteration
  (w_0 = 0), then ``steps`` DP-SGD steps on the squared loss (Q_w(s, a) - y)^2 / 2, warm-started at
  w_{k-1}. The targets depend on the data only through the record itself and through w_{k-1}, which is
  an output of the earlier (private) steps: adaptive composition covers it.
* **DP-SGD** (Abadi et al. 2016, Alg. 1), every step:

  - Poisson sampling: each record is in the batch independently with probability q = min(1, b / N_pub),
    b the expected batch and N_pub a **public** size of the data set in records (``public_size``; default
    the data budget the collector states before collecting: ``episodes`` episodes, i.e. 50 ``episodes``
    transitions or ``episodes`` episodes). Under add/remove neighbours the data's own size N differs between
    the two data sets, so q = b / N would itself depend on the private data; q is never computed from N;
  - per-record clipping to L2 norm C. A record is one transition (``privacy_unit="transition"``:
    gradient (Q_w(s, a) - y) phi(s) in the block of action a) or one episode (``"episode"``: the sum of
    its transitions' gradients, clipped as one vector). Adding or removing one record therefore moves the
    clipped sum by at most C (:func:`clipped_gradient_sum`);
  - the sum gets N(0, sigma^2 I), and w <- w - lr (sum + noise) / (q N_pub): the step is normalised by the
    public expected batch size q N_pub = min(b, N_pub), not by the realised batch or by q N.

  sigma = ``privcal.calibrate(epsilon, delta, steps=K x steps, sample_rate=q, sensitivity=C,
  accountant="best")``: K x steps Poisson-subsampled Gaussian releases under add/remove neighbours, all
  FQI iterations composed (the PLD accountant's certified upper bound; q = 1 is priced as plain
  Gaussian composition), with the same q the sampler runs at (one variable serves both). The released object is the last w; its greedy policy argmax_a Q_w(s, a) is
  post-processing.

What the run checks (``premises``): every record's clipped gradient had norm <= C (the largest is
recorded); the features were bounded by 1; the number of noisy steps equals the number priced.
``policy_return`` is the released greedy policy's expected return per episode for the same reward, by
simulation (``evaluation_episodes`` episodes, seed ``[seed, 21]``); like the returns of any training
curve it reads the private rewards and is not covered by the guarantee.

The guarantee is (epsilon, delta)-DP w.r.t. one transition (or one episode) added or removed. It does
not cover the reward-function unit (a change of the reward function changes every record), and
:func:`train_fqi_dpsgd` refuses it.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Optional

import numpy as np
from numpy.typing import ArrayLike

from privcal import _rng
from privcal import _validate as V
from privcal.accounting.groups import group_epsilon
from privcal.rl import envs
from privcal.rl.units import check_unit, describe

__all__ = ["PROTECTED_UNITS", "FQIConfig", "FQIResult", "features", "clipped_gradient_sum", "clipped_sum_unchecked", "collect",
           "FQIRun", "train_fqi_dpsgd"]

PROTECTED_UNITS = ("transition", "episode")
_ACTIONS = 2
_NORM_SLACK = 1e-9  # relative rounding allowance when the clipped norms are checked against C


@dataclass(frozen=True)
class FQIConfig:
    """The learner's settings (defaults: measured to learn at epsilon = 1 with 100 episodes, transition unit).

    Args:
        features: M, hat functions per action, an int >= 2; default 11.
        iterations: K, fitted-Q iterations, an int >= 1; default 10.
        steps: DP-SGD steps per iteration, an int >= 1; default 100.
        batch: expected records per step b (q = min(1, b / N)), in (0, inf); default None: 256 transitions
            or 16 episodes.
        clip: C, the per-record L2 clipping norm, in (0, inf); default 1 (a transition's gradient is
            |Q - y| ||phi|| <= |Q - y|).
        lr: step size, in (0, inf); default 0.5.
        gamma: discount, in [0, 1); default 0.5 (as privcal's Algorithm 1 runs).
    """

    features: int = 11
    iterations: int = 10
    steps: int = 100
    batch: Optional[float] = None
    clip: float = 1.0
    lr: float = 0.5
    gamma: float = 0.5

    def __post_init__(self):
        if V.positive_int("features", self.features) < 2:
            raise ValueError(f"features must be an integer >= 2, got {self.features!r}")
        V.positive_int("iterations", self.iterations)
        V.positive_int("steps", self.steps)
        if self.batch is not None:
            V.positive("batch", self.batch)
        V.positive("clip", self.clip)
        V.positive("lr", self.lr)
        g = V.nonnegative("gamma", self.gamma)
        if g >= 1:
            raise ValueError(f"gamma must be in [0, 1), got {self.gamma!r}")


@dataclass(frozen=True)
class FQIRun:
    """What :func:`train_fqi_dpsgd` reads besides its target, the learner's :class:`FQIConfig` and the data
    (defaults in one place: here; :func:`train_fqi_dpsgd` checks the values).

    Attributes:
        privacy_unit: "transition" (default) or "episode"; "reward-function" is refused (not protected).
        episodes: the data budget in 50-step episodes, an int >= 1, stated before collecting (public); default
            100 (5000 transitions). Without ``data`` the run collects exactly this many.
        peak: the reward's peak theta in [0, 1], or None (default) to draw it from ``seed``
            (``privcal.rl.envs.draw_peak``, the random-peak variant).
        evaluation_episodes: episodes simulated to estimate ``policy_return``, an int >= 2; default 2000.
        seed: seed of the data, the sampling, the noise and the evaluation, an int >= 0; default 0.
        public_size: N_pub, the public size in records (transitions, or episodes for the episode unit) that
            sets q = min(1, b / N_pub) and the step's normaliser q N_pub, an int >= 1; default None: the budget
            (50 ``episodes`` transitions, or ``episodes`` episodes).
    """

    privacy_unit: str = "transition"
    episodes: int = 100
    peak: Optional[float] = None
    evaluation_episodes: int = 2000
    seed: int = 0
    public_size: Optional[int] = None


@dataclass(frozen=True)
class FQIResult:
    """What :func:`train_fqi_dpsgd` released and measured (``weights``: the released w, shape (2, M))."""

    method: str
    privacy_unit: str
    epsilon: Optional[float]
    delta: Optional[float]
    sigma: float
    sample_rate: float
    noisy_steps: int
    records: int
    episodes: int
    peak: float
    policy_return: float
    policy_return_se: float
    evaluation_episodes: int
    config: FQIConfig
    weights: np.ndarray = field(repr=False, default=None)
    premises: tuple = ()
    accountant_notes: tuple = ()
    seed: Optional[int] = 0
    guarantee: str = ""
    #: the transition unit's user-level guarantee, one episode of EPISODE_STEPS transitions removed (one user's
    #: data): a valid upper bound and a certified lower bound at ``delta`` (privcal.accounting.groups); None
    #: for the episode unit (already user-level) and the non-private learner
    user_epsilon: Optional[float] = None
    user_epsilon_lower: Optional[float] = None
    #: N_pub, the public size in records from which q is set, and what it is
    public_size: Optional[int] = None
    public_size_source: str = ""
    #: q N_pub = min(b, N_pub): the public expected batch size that normalises every step
    step_normaliser: Optional[float] = None

    def greedy_actions(self, states: ArrayLike) -> np.ndarray:
        """argmax_a Q_w(s, a) of the released w (ties: action 0).

        Args:
            states: positions in [0, 1].
        """
        return _greedy(self.weights, np.asarray(states, dtype=float).reshape(-1))

    def to_dict(self) -> dict:
        """JSON-ready summary (what ``privcal train dpq --method fqi-dpsgd --format json`` prints)."""
        return {"method": self.method, "privacy_unit": self.privacy_unit,
                "privacy_unit_description": describe(self.privacy_unit),
                # records enter each step's batch independently with probability sample_rate: priced as such
                "sampling": "poisson" if self.sample_rate < 1.0 else "full_batch", "neighbouring": "add_remove",
                "epsilon": self.epsilon,
                "delta": self.delta, "guarantee": self.guarantee, "sigma": self.sigma,
                "sample_rate": self.sample_rate, "noisy_steps": self.noisy_steps, "records": self.records,
                "episodes": self.episodes, "samples": self.episodes * envs.EPISODE_STEPS, "peak": self.peak,
                "policy_return": self.policy_return, "policy_return_se": self.policy_return_se,
                "evaluation_episodes": self.evaluation_episodes, "config": asdict(self.config),
                "premises": [{"name": n, "held": bool(h), "evidence": e} for n, h, e in self.premises],
                "accountant_notes": list(self.accountant_notes), "seed": self.seed,
                "user_unit": "episode", "user_epsilon": self.user_epsilon,
                "user_epsilon_lower": self.user_epsilon_lower,
                "public_size": self.public_size, "expected_batch_size": self.step_normaliser,
                "step_normaliser": self.step_normaliser, "sample_rate_source": self.sample_rate_source()}

    def sample_rate_source(self) -> str:
        """Which public quantities the sampling rate q and the step's normaliser came from, in words."""
        rec = "transitions" if self.privacy_unit == "transition" else "episodes"
        return (f"q = min(1, b / N_pub) = {self.sample_rate:.6g}: expected batch b = {self.config_batch():g} {rec} per "
                f"step over the public size N_pub = {self.public_size} {rec} ({self.public_size_source}); the data's "
                f"own size is not read; every step is divided by q N_pub = {self.step_normaliser:g}")

    def config_batch(self) -> float:
        """b, the expected batch asked for (records per step, before the cap at N_pub)."""
        return _batch(self.config, self.privacy_unit)


def features(states: ArrayLike, count: int = 11) -> np.ndarray:
    """Hat features phi_j(s) = max(0, 1 - |s - j/(M-1)| (M-1)), shape (..., M); ||phi(s)||_2 <= 1 on [0, 1].

    Args:
        states: positions in [0, 1] (any shape).
        count: M, an int >= 2; default 11.
    """
    m = V.positive_int("count", count)
    if m < 2:
        raise ValueError(f"count must be an integer >= 2, got {count!r}")
    return _features(np.asarray(states, dtype=float), m)


def _features(s, m):
    centres = np.linspace(0.0, 1.0, m)
    return np.maximum(0.0, 1.0 - np.abs(s[..., None] - centres) * (m - 1))


def _greedy(w, s):
    return np.argmax(_features(s, w.shape[1]) @ w.T, axis=-1).astype(np.intp)


def clipped_gradient_sum(weights: ArrayLike, phi: ArrayLike, actions: ArrayLike, targets: ArrayLike, clip: float, *,
                         episode_length: Optional[int] = None) -> tuple[np.ndarray, np.ndarray]:
    """Sum of per-record gradients of (Q_w(s, a) - y)^2 / 2, each record's clipped to L2 norm ``clip``.

    A record is one transition (``episode_length`` None) or ``episode_length`` consecutive transitions
    (one episode: the sum of its transitions' gradients is clipped as one vector). Each clipped record
    has norm <= clip, so adding or removing one record moves the sum by at most ``clip`` in L2.

    Args:
        weights: w, shape (2, M).
        phi: features of the transitions' states, shape (n, M).
        actions: actions in {0, 1}, shape (n,).
        targets: y, shape (n,).
        clip: C, in (0, inf).
        episode_length: transitions per record, an int >= 1 dividing n, or None (one transition per
            record, default).

    Returns:
        (the clipped sum, shape (2, M); the records' norms before clipping).

    Raises:
        ValueError: shapes do not match or an argument is outside its range.
    """
    w = np.asarray(weights, dtype=float)
    phi = np.asarray(phi, dtype=float)
    a = np.asarray(actions)
    y = np.asarray(targets, dtype=float)
    if w.ndim != 2 or w.shape[0] != _ACTIONS or phi.ndim != 2 or phi.shape[1] != w.shape[1]:
        raise ValueError(f"weights must have shape (2, M) and phi (n, M), got {w.shape} and {phi.shape}")
    if a.shape != (phi.shape[0],) or y.shape != a.shape or not np.all((a == 0) | (a == 1)):
        raise ValueError("actions must be n values in {0, 1} and targets n numbers, n = len(phi)")
    h = 1 if episode_length is None else V.positive_int("episode_length", episode_length)
    if phi.shape[0] % h:
        raise ValueError(f"episode_length must divide the number of transitions {phi.shape[0]}, got {h}")
    return clipped_sum_unchecked(w, phi, a.astype(np.intp), y, V.positive("clip", clip), h)[:2]


def clipped_sum_unchecked(w: np.ndarray, phi: np.ndarray, a: np.ndarray, y: np.ndarray, clip: float,
                          h: int) -> tuple:
    """The per-record clipped gradient sum of the squared TD error, without validation.

    Args:
        w: the weights, shape (2, M).
        phi: the transitions' features, shape (n, M).
        a: the actions, integers in {0, 1} of shape (n,).
        y: the targets, shape (n,).
        clip: the clip norm C, in (0, inf) (not checked).
        h: the transitions per record (1: a transition; the episode length: an episode), dividing n.

    Returns:
        (the clipped sum, the records' norms before clipping, the norms of the contributions actually summed).
    """
    err = np.einsum("ij,ij->i", phi, w[a]) - y
    per = np.zeros((phi.shape[0], _ACTIONS, phi.shape[1]))
    per[np.arange(phi.shape[0]), a] = err[:, None] * phi
    if h > 1:
        per = per.reshape(-1, h, _ACTIONS, phi.shape[1]).sum(axis=1)  # guarded by tests/test_rl_learners.py::test_one_episode_moves_the_episode_clipped_sum_by_at_most_the_clip
    norms = np.sqrt(np.einsum("ijk,ijk->i", per, per))
    scale = np.minimum(1.0, clip / np.maximum(norms, 1e-300))  # guarded by tests/test_rl_learners.py::test_one_transition_moves_the_clipped_sum_by_at_most_the_clip
    return np.einsum("i,ijk->jk", scale, per), norms, norms * scale


def collect(episodes: int, peak: float, seed: _rng.Seed = 0) -> dict:
    """Episodes of the uniformly random behaviour policy on the interval environment with reward peak ``peak``.

    Args:
        episodes: number of 50-step episodes, an int >= 1.
        peak: the reward's peak theta, in [0, 1].
        seed: seed of the simulation; default 0.

    Returns:
        {"s", "a", "r", "s2"}: arrays of shape (episodes, 50).
    """
    n = V.positive_int("episodes", episodes)
    theta = V.in_closed("peak", peak, 0.0, 1.0)
    return _collect(n, theta, _rng.as_generator(seed, "seed"))


def _collect(n, theta, rng) -> dict:
    steps = envs.EPISODE_STEPS
    out = {k: np.empty((n, steps)) for k in ("s", "r", "s2")}
    out["a"] = np.empty((n, steps), dtype=np.intp)
    s = rng.uniform(0.0, 1.0, n)
    for t in range(steps):
        a = (rng.random(n) < 0.5).astype(np.intp)
        move = envs.MAX_STEP * rng.random(n)
        s2 = np.clip(np.where(a == 1, s + move, s - move), 0.0, 1.0)
        out["s"][:, t], out["a"][:, t], out["s2"][:, t] = s, a, s2
        out["r"][:, t] = envs.reward(s2, theta)
        s = s2
    return out


def train_fqi_dpsgd(settings: Optional[FQIRun] = None, *, epsilon: Optional[float], delta: Optional[float],
                    config: Optional[FQIConfig] = None, data: Optional[dict] = None, **keywords) -> FQIResult:
    """Fitted-Q iteration by DP-SGD on random-behaviour data; see the module docstring.

    Args:
        settings: the run's :class:`FQIRun`; default None: built from ``keywords``.
        epsilon: target epsilon, in (0, inf); None (with ``delta`` None) for the non-private learner
            (the same clipping, no noise).
        delta: target delta, in (0, 1); None only with ``epsilon`` None.
        config: the learner's :class:`FQIConfig`; default ``FQIConfig()``.
        data: the private data set, or None (default: collected by the random behaviour policy, ``episodes``
            episodes): {"s", "a", "r", "s2"} arrays of shape (n, 50) (n episodes, as :func:`collect` returns)
            or, for the transition unit, of shape (n,) (n transitions). Its size n may differ from the budget
            (a neighbouring data set has one record more or less); n is never used to set q or to normalise.
        keywords: fields of :class:`FQIRun`, replacing those of ``settings``; each is listed below.
        privacy_unit: "transition" (default) or "episode"; "reward-function" is refused (not protected).
        episodes: the data budget in 50-step episodes, an int >= 1, stated before collecting (public);
            default 100 (5000 transitions). Without ``data`` the run collects exactly this many.
        peak: the reward's peak theta in [0, 1], or None (default) to draw it from ``seed``
            (``privcal.rl.envs.draw_peak``, the random-peak variant).
        evaluation_episodes: episodes simulated to estimate ``policy_return``, an int >= 2; default 2000.
        seed: seed of the data, the sampling, the noise and the evaluation, an int >= 0; default 0.
        public_size: N_pub, the public size in records (transitions, or episodes for the episode unit) that
            sets q = min(1, b / N_pub) and the step's normaliser q N_pub, an int >= 1; default the budget
            (50 ``episodes`` transitions, or ``episodes`` episodes).

    Returns:
        the :class:`FQIResult`.

    Raises:
        ValueError: an argument is outside its range, or the unit is not protected.
        InfeasibleError: no sigma reaches the target.
        TypeError: a keyword is no field of :class:`FQIRun`.
    """
    run = V.settings_with("train_fqi_dpsgd", FQIRun, settings, keywords)
    episodes, public_size = run.episodes, run.public_size
    unit = check_unit(run.privacy_unit, PROTECTED_UNITS, "fqi-dpsgd")
    if (epsilon is None) != (delta is None):
        raise ValueError("give both epsilon and delta, or neither (the non-private learner)")
    eps = None if epsilon is None else V.positive("epsilon", epsilon)
    dlt = None if delta is None else V.open_unit("delta", delta)
    n_ep = V.positive_int("episodes", episodes)
    cfg = FQIConfig() if config is None else config
    if not isinstance(cfg, FQIConfig):
        raise ValueError(f"config must be an FQIConfig, got {type(cfg).__name__}")
    n_eval, seed, theta = envs.run_inputs(run.evaluation_episodes, run.seed, run.peak)
    budget = n_ep * envs.EPISODE_STEPS if unit == "transition" else n_ep
    n_pub = budget if public_size is None else V.positive_int("public_size", public_size)
    source = ("the data budget: " + (f"{n_ep} episodes of {envs.EPISODE_STEPS} transitions" if unit == "transition"
                                     else f"{n_ep} episodes")) if public_size is None else "given as public"
    d = None if data is None else _check_data(data, unit)
    # q and the normaliser from public numbers only: b (the expected batch) and N_pub; never the data's own size
    q = min(1.0, _batch(cfg, unit) / n_pub)  # guarded by tests/test_rl_learners.py::test_fqi_calibration_round_trip_and_premises
    norm = q * n_pub
    steps = cfg.iterations * cfg.steps  # guarded by tests/test_rl_learners.py::test_fqi_calibration_round_trip_and_premises
    sigma, notes = 0.0, ()
    if eps is not None:
        sigma, notes = _calibrate(eps, dlt, steps, q, cfg.clip)  # the sampler's own q; guarded by tests/test_rl_learners.py::test_fqi_calibration_round_trip_and_premises
    return _train(_Run(eps, dlt, unit, n_ep, cfg, theta, n_eval, int(seed), q, sigma, notes, n_pub, source, norm), d)


def _batch(cfg: FQIConfig, unit: str) -> float:
    """b, the expected records per step: the config's, or 256 transitions / 16 episodes."""
    return (256.0 if unit == "transition" else 16.0) if cfg.batch is None else float(cfg.batch)


def _check_data(data, unit) -> dict:
    """The arrays of a given data set, checked: (n, 50) episodes, or (n,) transitions for the transition unit."""
    if not isinstance(data, dict) or not {"s", "a", "r", "s2"} <= set(data):
        raise ValueError("data must be a dict with arrays 's', 'a', 'r', 's2' (privcal.rl.dpq.fqi_dpsgd.collect)")
    out = {k: np.asarray(data[k], dtype=np.intp if k == "a" else float) for k in ("s", "a", "r", "s2")}
    shape = out["s"].shape
    flat = len(shape) == 1 and unit == "transition"
    if not (flat or (len(shape) == 2 and shape[1] == envs.EPISODE_STEPS)) or shape[0] < 1 \
            or any(x.shape != shape for x in out.values()):
        raise ValueError(f"data arrays must share the shape (n, {envs.EPISODE_STEPS}) (n episodes) or, for the "
                         f"transition unit, (n,) (n transitions), n >= 1; got {shape}")
    if not (np.all((out["a"] == 0) | (out["a"] == 1)) and np.all((out["s"] >= 0) & (out["s"] <= 1))
            and np.all((out["s2"] >= 0) & (out["s2"] <= 1)) and np.all(np.isfinite(out["r"]))):
        raise ValueError("data must hold actions in {0, 1}, states in [0, 1] and finite rewards")
    return out


def _calibrate(eps, delta, steps, q, clip) -> tuple[float, tuple]:
    import privcal

    rep = privcal.calibrate_report(eps, delta, steps=steps, sample_rate=None if q >= 1.0 else q, sensitivity=clip,
                           accountant="best")
    return float(rep.sigma), (f"sigma from privcal.calibrate_report(accountant='best'), the report of "
                              f"privcal.calibrate: {rep.accountant}, "
                              f"achieved epsilon {rep.achieved_epsilon:.6g}",) + tuple(rep.notes)


@dataclass(frozen=True)
class _Run:
    """The checked settings of one run of :func:`_train`: the target, the privacy unit, the data budget, the
    config, the task, the evaluation, the seed, the sampler's q, the calibrated sigma and its notes, and the
    public size N_pub with its source and the step normaliser q N_pub."""

    eps: Optional[float]
    delta: Optional[float]
    unit: str
    episodes: int
    cfg: FQIConfig
    theta: float
    evaluation_episodes: int
    seed: int
    q: float
    sigma: float
    notes: tuple
    public_size: int
    public_source: str
    normaliser: float


def _train(run: _Run, d=None) -> FQIResult:
    eps, delta, unit, n_ep, cfg, theta = run.eps, run.delta, run.unit, run.episodes, run.cfg, run.theta
    n_eval, seed, q, sigma, notes = run.evaluation_episodes, run.seed, run.q, run.sigma, run.notes
    n_pub, source, norm = run.public_size, run.public_source, run.normaliser
    data_rng, sample_rng, noise_rng = _rng.spawn([seed, 20], 3)
    if d is None:
        d = _collect(n_ep, theta, data_rng)
    h = envs.EPISODE_STEPS
    m = cfg.features
    phi = _features(d["s"], m).reshape(-1, m)  # (N transitions, M), episode-major
    phi2 = _features(d["s2"], m).reshape(-1, m)
    a, r = d["a"].reshape(-1), d["r"].reshape(-1)
    # the data's own number of records: the sampler draws each of them at rate q; nothing else reads it
    records = a.size if unit == "transition" else d["s"].shape[0]
    per_record = 1 if unit == "transition" else h  # guarded by tests/test_guard_fqi_dpsgd.py::test_one_episode_moves_the_trained_weights_by_exactly_the_clip
    w = np.zeros((_ACTIONS, m))
    largest_clipped, noisy = 0.0, 0
    for _ in range(cfg.iterations):
        y = r + cfg.gamma * (phi2 @ w.T).max(axis=1)  # targets from the released w of the last iteration
        for _ in range(cfg.steps):
            chosen = np.flatnonzero(sample_rng.random(records) < q)  # Poisson sampling of records; guarded by tests/test_guard_fqi_dpsgd.py::test_every_record_is_in_the_batch_at_sample_rate_1
            rows = (chosen[:, None] * per_record + np.arange(per_record)).reshape(-1)
            total, _, used = clipped_sum_unchecked(w, phi[rows], a[rows], y[rows], cfg.clip, per_record)  # guarded by tests/test_guard_fqi_dpsgd.py::test_one_episode_moves_the_trained_weights_by_exactly_the_clip
            if used.size:  # the premise is measured on what was summed (after clipping), so it can fail
                largest_clipped = max(largest_clipped, float(used.max()))
            if sigma > 0.0:
                total = total + sigma * noise_rng.standard_normal(total.shape)  # guarded by tests/test_guard_fqi_dpsgd.py::test_the_noise_of_a_step_has_the_calibrated_sigma
                noisy += 1  # guarded by tests/test_rl_learners.py::test_fqi_calibration_round_trip_and_premises
            w = w - cfg.lr * total / norm  # the public expected batch size q N_pub; guarded by tests/test_guard_fqi_dpsgd.py::test_an_added_record_moves_one_step_by_its_own_clipped_gradient_over_the_public_batch
    value, se = envs.policy_return(lambda s: _greedy(w, s), theta, episodes=n_eval, seed=[seed, 21])
    premises = ()
    guarantee = "none (non-private: the same learner without noise)"
    if eps is not None:
        steps = cfg.iterations * cfg.steps
        premises = (
            ("per-record clip", largest_clipped <= cfg.clip * (1.0 + _NORM_SLACK),
             f"largest clipped {unit} gradient norm {largest_clipped:.6g} <= C = {cfg.clip:g}"),
            ("bounded features", bool(phi.max() <= 1.0 and np.sqrt((phi ** 2).sum(axis=1)).max() <= 1.0),
             "hat features in [0, 1] with ||phi||_2 <= 1"),
            ("steps priced", noisy == steps, f"{noisy} noisy steps, {steps} priced"),
        )
        held = all(ok for _, ok, _ in premises)
        guarantee = (f"({eps:g}, {delta:g})-DP w.r.t. {describe(unit)} added or removed: DP-SGD with Poisson sampling q = {q:.4g}, "
                     f"per-{unit} clip C = {cfg.clip:g}, sigma = {sigma:.5g} over {steps} steps "
                     f"({cfg.iterations} FQI iterations)") if held else \
            "no guarantee: a premise failed (" + "; ".join(e for _, ok, e in premises if not ok) + ")"
    user = (None, None)
    if eps is not None and unit == "transition" and all(ok for _, ok, _ in premises):
        # one user contributes an episode of h transitions: the guarantee for the user beside the transition's
        user = group_epsilon(sigma / cfg.clip, q, cfg.iterations * cfg.steps, h, delta)
    n_episodes = d["s"].shape[0] if d["s"].ndim == 2 else n_ep
    return FQIResult("fqi-dpsgd", unit, eps, delta, sigma, q, noisy, records, n_episodes, theta, value, se, n_eval,
                     cfg, w, premises, notes, seed, guarantee, *user, n_pub, source, norm)
