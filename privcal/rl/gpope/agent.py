r"""GPOPE (gradient-perturbed off-policy evaluation, GPOPE paper Alg. 1) and non-private GTD2.

For i = 1..N (GPOPE paper, ../shared/papers/003_a2204df6124aecb1.txt, Alg. 1):
  2. draw one of the m trajectories uniformly at random (with replacement across iterations);
  3. A_i, b_i, C_i from all its tau_i transitions (Eq. 2.2):
       A_i = (1/tau) sum_t rho_t phi_t (phi_t - gamma phi_{t+1})^T,  b_i = (1/tau) sum_t rho_t R_t phi_t,
       C_i = (1/tau) sum_t phi_t phi_t^T;
  4. B_i = [[0, -A_i^T], [A_i, C_i]] [theta; w] - [0; b_i]  (Eq. 4.1);
  5. clip: B_i / max(1, ||B_i||_2 / h);
  6. add h * zeta, zeta ~ N(0, sigma^2 I_2n);
  7. [theta; w] <- [theta; w] - s_i * (clipped + noise), s_i the step size (the paper's beta_i).
The matrices are never formed: A_i theta, A_i^T w, C_i w and b_i are O(tau n) products with the
trajectory's feature matrix. Non-private GTD2 (Sutton et al. 2009; Liu et al. 2015, Eq. 2.3) is the
same loop with sigma = 0 and no clipping (:func:`gtd2`).

sigma is Alg. 1's noise scale (noise h N(0, sigma^2 I)). Pass it directly, or pass (epsilon, delta)
and it is computed by ``privcal.calibrators.gpope.calibrate`` with ``bound``: "rdp" (default, valid: subsampled
RDP without replacement, WBK 2018 Thm 27 / Thm 9), "thm9" (valid: WBK Thm 9 alone, full sum),
"theorem1" (valid explicit constants), "lemma1" (the paper's Lemma 1 as printed with sensitivity h:
not an upper bound) or "theorem1_paper" (Theorem 1 as printed, c2 = 2: not valid).

Step sizes s_i (Theorems 2-3): ``schedule="constant"`` s_i = step_size (Thm 2 takes
step_size = eta / N^k); ``"diminishing"`` s_i = step_size / i (Thm 3 with step_size =
eta / lambda_min(Q), eta > 1); or a callable i -> s_i (i = 1..N).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any, Optional, Union

import numpy as np
from numpy.typing import ArrayLike

from privcal import _rng
from privcal import _validate as V
from privcal.calibrators import gpope as _gpope_calibrator

__all__ = ["GPOPEResult", "GPOPESettings", "step_sizes", "gpope", "gpope_unchecked", "trajectory_gradient", "gtd2", "BOUNDS",
           "VALID_BOUND", "PAPER_BOUND"]

BOUNDS = ("best", "pld", "rdp", "thm9", "theorem1", "lemma1", "theorem1_paper")
VALID_BOUND = "best"
PAPER_BOUND = "lemma1"

#: A step-size schedule: "constant", "diminishing", or a callable i -> s_i (i = 1..N).
Schedule = Union[str, Callable[[int], float]]

#: Per-trajectory features are cached when they take at most this many bytes (else recomputed).
_CACHE_BYTES = 256 * 2**20


@dataclass(frozen=True)
class GPOPEResult:
    """Output of :func:`gpope` / :func:`gtd2` (theta is the released value-function weight vector).

    ``sigma`` is the noise multiplier (noise clip * N(0, sigma^2 I)), ``clip`` the clip h (None: no
    clipping), ``step_size`` the first step size s_1, ``bound`` the accounting that chose sigma (None
    when sigma was given), ``clipped_fraction`` the fraction of iterations whose gradient was clipped,
    ``diverged`` whether theta or w left the floats, ``history`` the recorded metric.
    """

    theta: np.ndarray
    w: np.ndarray
    sigma: float
    clip: float | None
    iterations: int
    trajectories: int
    step_size: float
    schedule: str
    epsilon: float | None = None
    delta: float | None = None
    bound: str | None = None
    clipped_fraction: float = 0.0
    diverged: bool = False
    history: dict = field(default_factory=dict)


def calibrate_sigma(epsilon: float, delta: float, *, iterations: int, trajectories: int,
                    clip: float = 1.0, bound: str = VALID_BOUND) -> float:
    """Former name of ``privcal.calibrators.gpope.calibrate`` (same arguments); deprecated since 0.2.0,
    removed in 0.3.0."""
    import warnings

    warnings.warn("privcal.rl.gpope.agent.calibrate_sigma is deprecated: use privcal.calibrators.gpope.calibrate "
                  "(same arguments); removed in 0.3.0", DeprecationWarning, stacklevel=2)
    return _gpope_calibrator.calibrate(epsilon, delta, iterations=iterations, trajectories=trajectories,
                                       clip=clip, bound=bound)


def step_sizes(schedule: Schedule, step_size: float, iterations: int) -> np.ndarray:
    """s_1..s_N: constant (Thm 2), diminishing step_size / i (Thm 3), or a callable i -> s_i.

    Args:
        schedule: "constant", "diminishing" or a callable i -> s_i (i = 1..N).
        step_size: s_1, in (0, inf) (unused by a callable schedule).
        iterations: N, an int >= 1.

    Returns:
        the N step sizes.

    Raises:
        ValueError: an unknown schedule, or a step size that is not finite and positive.
    """
    return _step_sizes(schedule, step_size, V.positive_int("iterations", iterations))


def _step_sizes(schedule, step_size, n) -> np.ndarray:
    if not callable(schedule) and schedule in ("constant", "diminishing"):
        step_size = V.positive("step_size", step_size)
    return _checked_steps(schedule, step_size, n)


def _checked_steps(schedule, step_size, n) -> np.ndarray:
    """The N step sizes from a checked ``step_size`` (any callable's values are checked here)."""
    i = np.arange(1, n + 1, dtype=float)
    if callable(schedule):
        steps = np.array([float(schedule(int(k))) for k in i])
    elif schedule == "constant":
        steps = np.full(n, step_size)
    elif schedule == "diminishing":
        steps = step_size / i
    else:
        raise ValueError(f"schedule must be 'constant', 'diminishing' or a callable, got {schedule!r}")
    if not np.all(np.isfinite(steps)) or np.any(steps <= 0):
        raise ValueError("step sizes must be finite and positive")
    return steps


class _Trajectories:
    """Per-trajectory (Phi, Phi' , rho, R), cached when small enough."""

    def __init__(self, dataset):
        self.ds = dataset
        per_row = 2 * dataset.n_features * 8
        self.cache = None
        if dataset.n_transitions * per_row <= _CACHE_BYTES:
            self.cache = {}
            for start, stop, phi, nxt, rho, rew, _ in dataset.chunks():
                off = dataset.offsets
                base = int(off[start])
                for i in range(start, stop):
                    a, b = int(off[i]) - base, int(off[i + 1]) - base
                    self.cache[i] = (phi[a:b], nxt[a:b], rho[a:b], rew[a:b])

    def __getitem__(self, i):
        if self.cache is not None:
            return self.cache[i]
        return self.ds.trajectory_features(i)


def trajectory_gradient(tr: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray], theta: np.ndarray,
                        w: np.ndarray, gamma: float) -> np.ndarray:
    """B_i(theta, w) of GPOPE Eq. (4.1) from one trajectory, without forming A_i, C_i.

    Args:
        tr: one trajectory's (Phi, Phi', rho, R): features (tau, n), next-state features (tau, n),
            importance ratios (tau,) and rewards (tau,).
        theta: value weights, shape (n,).
        w: auxiliary weights, shape (n,).
        gamma: discount factor.

    Returns:
        The primal-dual gradient (-A_i^T w, A_i theta + C_i w - b_i) / tau, shape (2n,), unclipped.
    """
    phi, nxt, rho, rew = tr
    tau = rew.shape[0]
    d = phi - gamma * nxt
    phi_w = phi @ w
    a_theta = phi.T @ (rho * (d @ theta))
    at_w = d.T @ (rho * phi_w)
    c_w = phi.T @ phi_w
    b = phi.T @ (rho * rew)
    return np.concatenate([-at_w, a_theta + c_w - b]) / tau


@dataclass(frozen=True)
class GPOPESettings:
    """Algorithm 1's inputs besides the data: the noise (sigma, or (epsilon, delta) and a bound), N, the clip,
    the step sizes, the seed and the start (defaults in one place: here; checked by :func:`gpope`).

    Attributes:
        sigma: noise multiplier, in [0, inf) (noise = clip * N(0, sigma^2 I)); give it or (``epsilon``, ``delta``).
        epsilon: target epsilon, in (0, inf) (sigma from ``privcal.calibrators.gpope.calibrate`` with ``bound``).
        delta: target delta, in (0, 1).
        bound: accounting for (epsilon, delta), one of :data:`BOUNDS`; default :data:`VALID_BOUND` (valid).
        iterations: N, an int >= 1; default None (m: one expected visit per trajectory).
        clip: the clip h, in (0, inf), or None for no clipping (only with sigma = 0); default 1.
        step_size: s_1, in (0, inf); default 0.5.
        schedule: "constant" (default), "diminishing" or a callable i -> s_i (:func:`step_sizes`).
        seed: seed of the trajectory draws and the noise (``privcal._rng``); default None.
        theta0: initial theta, shape (n_features,); default None (zeros).
        w0: initial w, shape (n_features,); default None (zeros).
    """

    sigma: Optional[float] = None
    epsilon: Optional[float] = None
    delta: Optional[float] = None
    bound: str = VALID_BOUND
    iterations: Optional[int] = None
    clip: Optional[float] = 1.0
    step_size: float = 0.5
    schedule: Any = "constant"
    seed: _rng.Seed = None
    theta0: Optional[ArrayLike] = None
    w0: Optional[ArrayLike] = None


def gpope(dataset: Any, settings: Optional[GPOPESettings] = None, *,
          metric: Optional[Callable[[np.ndarray], float]] = None, record_every: Optional[int] = None,
          progress: Optional[Callable[[int, int], None]] = None, **keywords: Any) -> GPOPEResult:
    """Run GPOPE (Alg. 1) on a :class:`~privcal.rl.gpope.domains.data.Dataset`; returns a :class:`GPOPEResult`.

    Privacy holds for the trajectory-level replace-one adjacency of the GPOPE paper (Def. 1) with the
    guarantee of the bound used to pick sigma; it does not cover step sizes or clip tuned on the
    private data.

    Args:
        dataset: the m trajectories, a :class:`~privcal.rl.gpope.domains.data.Dataset`.
        settings: Algorithm 1's inputs, a :class:`GPOPESettings`; default None: built from ``keywords``.
        metric: theta -> float, recorded into ``history`` every ``record_every`` iterations;
            default None.
        record_every: recording period, an int >= 1; default N (only the end).
        progress: called as ``progress(done, N)`` after each block of iterations; default None.
        keywords: fields of :class:`GPOPESettings` (``sigma``, ``epsilon``, ``delta``, ``bound``, ``iterations``,
            ``clip``, ``step_size``, ``schedule``, ``seed``, ``theta0``, ``w0``), replacing those of ``settings``.

    Returns:
        the run's :class:`GPOPEResult`.

    Raises:
        ValueError: an argument is outside its range or a combination is inconsistent.
    """
    s = V.settings_with("gpope", GPOPESettings, settings, keywords)
    sigma, epsilon, delta, bound, iterations, clip = s.sigma, s.epsilon, s.delta, s.bound, s.iterations, s.clip
    step_size, schedule, seed, theta0, w0 = s.step_size, s.schedule, s.seed, s.theta0, s.w0
    m = dataset.m
    n_iter = m if iterations is None else V.positive_int("iterations", iterations)
    if sigma is not None and (epsilon is not None or delta is not None):
        raise ValueError("give either sigma or (epsilon, delta), not both")
    if sigma is None:
        if epsilon is None or delta is None:
            raise ValueError("give sigma, or both epsilon and delta")
        if clip is None:
            raise ValueError("a private run needs a clip h (clip=None only with sigma=0)")
        sigma = _gpope_calibrator.calibrate(epsilon, delta, iterations=n_iter, trajectories=m, clip=clip,  # guarded by tests/test_rl_gpope.py::test_calibrated_sigma_is_the_accounting_layers
                                            bound=bound)
    else:
        bound = None
    sigma = V.nonnegative("sigma", sigma)
    if clip is None and sigma > 0:
        raise ValueError("sigma > 0 needs a clip h: the noise is h * N(0, sigma^2 I)")
    h = None if clip is None else V.positive("clip", clip)
    steps = _step_sizes(schedule, step_size, n_iter)
    n = dataset.n_features
    theta = np.zeros(n) if theta0 is None else np.array(theta0, dtype=float)
    w = np.zeros(n) if w0 is None else np.array(w0, dtype=float)
    if theta.shape != (n,) or w.shape != (n,):
        raise ValueError(f"theta0 and w0 must have shape ({n},), got {theta.shape} and {w.shape}")
    rng = _rng.as_generator(seed, "seed")
    every = n_iter if record_every is None else V.positive_int("record_every", record_every)
    record = dict(schedule=schedule if isinstance(schedule, str) else "callable", epsilon=epsilon,
                  delta=delta, bound=bound)
    return _gpope(dataset, _Run(sigma, h, steps, rng, (theta, w), (metric, every, progress), record))


def gpope_unchecked(dataset: Any, settings: GPOPESettings, *, metric: Optional[Callable[[np.ndarray], float]] = None,
                    record_every: Optional[int] = None,
                    progress: Optional[Callable[[int, int], None]] = None) -> GPOPEResult:
    """:func:`gpope` with a given sigma from zero starts, without validating the arguments, for callers that
    validated them (``privcal train gpope`` checks each value once, then runs GPOPE and its non-private
    baseline): the same run as ``gpope(dataset, settings, ...)``.

    Args:
        dataset: the m trajectories, a :class:`~privcal.rl.gpope.domains.data.Dataset`.
        settings: the run (not checked): ``sigma`` in [0, inf), ``clip`` in (0, inf) or None (only with sigma = 0),
            ``iterations`` an int >= 1, ``step_size`` in (0, inf), ``schedule`` "constant" or "diminishing",
            ``seed``; the start is zero (``theta0``, ``w0`` and the (epsilon, delta) fields are not read).
        metric: theta -> float, recorded into ``history`` every ``record_every`` iterations; default None.
        record_every: recording period, an int >= 1 (not checked); default N (only the end).
        progress: called as ``progress(done, N)`` after each block of iterations; default None.

    Returns:
        the run's :class:`GPOPEResult`.
    """
    n, st = dataset.n_features, settings
    steps = _checked_steps(st.schedule, st.step_size, st.iterations)
    every = st.iterations if record_every is None else record_every
    record = dict(schedule=st.schedule, epsilon=None, delta=None, bound=None)
    return _gpope(dataset, _Run(st.sigma, st.clip, steps, _rng.as_generator(st.seed, "seed"),
                                (np.zeros(n), np.zeros(n)), (metric, every, progress), record))


@dataclass(frozen=True)
class _Run:
    """One checked GPOPE run: noise multiplier ``sigma`` >= 0, clip ``h`` > 0 (or None with sigma = 0), the
    finite positive ``steps`` (N = len(steps)), the Generator ``rng``, ``start`` = (theta, w), ``watch`` =
    (metric, every, progress) and ``record``, the result fields (schedule, epsilon, delta, bound) it reports."""

    sigma: float
    h: Optional[float]
    steps: np.ndarray
    rng: np.random.Generator
    start: tuple
    watch: tuple
    record: dict


def _gpope(dataset, run: _Run) -> GPOPEResult:
    """Kernel of :func:`gpope`: N = len(run.steps) iterations from ``run.start``, arguments already checked."""
    sigma, h, steps, rng = run.sigma, run.h, run.steps, run.rng
    theta, w = run.start
    metric, every, progress = run.watch
    m = dataset.m
    n_iter = steps.size
    n = dataset.n_features
    picks = rng.integers(m, size=n_iter)  # guarded by tests/test_guard_gpope_agent.py::test_each_iteration_draws_one_trajectory_uniformly
    trajs = _Trajectories(dataset)
    gamma = dataset.gamma
    noise_scale = 0.0 if h is None else h * sigma  # guarded by tests/test_rl_gpope.py::test_noise_is_clip_times_sigma
    history = {"iteration": [], "metric": []} if metric is not None else {}
    block = 4096
    with np.errstate(over="ignore", invalid="ignore"):
        loop = _Loop(steps=steps, gamma=gamma, clip=h, noise_scale=noise_scale, features=n, block=block,
                     metric=metric, every=every, progress=progress)
        theta, w, clipped, diverged = _loop(trajs, picks, theta, w, rng, loop, history)
    return GPOPEResult(theta=theta, w=w, sigma=float(sigma), clip=h, iterations=n_iter,
                       trajectories=m, step_size=float(steps[0]), clipped_fraction=clipped / n_iter,
                       diverged=diverged, history=history, **run.record)


@dataclass(frozen=True)
class _Loop:
    """The fixed inputs of GPOPE's iterations (checked by the caller)."""

    steps: np.ndarray
    gamma: float
    clip: Optional[float]
    noise_scale: float
    features: int
    block: int
    metric: Optional[Callable[[np.ndarray], float]]
    every: int
    progress: Optional[Callable[[int, int], None]]


def _loop(trajs, picks, theta, w, rng, loop: _Loop, history):
    """Alg. 1's N = len(loop.steps) iterations from (theta, w); returns (theta, w, clipped count, diverged)."""
    steps, gamma, h, noise_scale = loop.steps, loop.gamma, loop.clip, loop.noise_scale
    n, n_iter, block, metric, every, progress = (loop.features, steps.size, loop.block, loop.metric, loop.every,
                                                 loop.progress)
    clipped = 0
    diverged = False
    for start in range(0, n_iter, block):
        stop = min(start + block, n_iter)
        noise = rng.standard_normal((stop - start, 2 * n)) * noise_scale if noise_scale > 0 else None  # guarded by tests/test_rl_gpope.py::test_noise_is_clip_times_sigma
        for i in range(start, stop):
            g = trajectory_gradient(trajs[int(picks[i])], theta, w, gamma)
            if h is not None:
                norm = math.sqrt(float(g @ g))
                if norm > h:  # guarded by tests/test_guard_gpope_agent.py::test_a_gradient_between_h_and_2h_is_clipped_to_h
                    g = g * (h / norm)  # guarded by tests/test_guard_gpope_agent.py::test_a_gradient_between_h_and_2h_is_clipped_to_h
                    clipped += 1
            if noise is not None:
                g = g + noise[i - start]
            step = steps[i]
            theta = theta - step * g[:n]
            w = w - step * g[n:]
            if metric is not None and ((i + 1) % every == 0 or i + 1 == n_iter):
                history["iteration"].append(i + 1)
                history["metric"].append(float(metric(theta)))
        if not (np.all(np.isfinite(theta)) and np.all(np.isfinite(w))):
            diverged = True
            break
        if progress is not None:
            progress(stop, n_iter)
    return theta, w, clipped, diverged


def gtd2(dataset: Any, settings: Optional[GPOPESettings] = None, *,
         metric: Optional[Callable[[np.ndarray], float]] = None, record_every: Optional[int] = None,
         progress: Optional[Callable[[int, int], None]] = None, **keywords: Any) -> GPOPEResult:
    """Non-private GTD2 (Eq. 2.3): :func:`gpope` with sigma = 0 and no clipping (same code path).

    Args:
        dataset: the m trajectories, a :class:`~privcal.rl.gpope.domains.data.Dataset`.
        settings: a :class:`GPOPESettings` whose ``iterations``, ``step_size``, ``schedule``, ``seed``, ``theta0``
            and ``w0`` are read (its noise and clip are replaced by sigma = 0, no clip); default None.
        metric: theta -> float, recorded into ``history``; default None.
        record_every: recording period, an int >= 1; default N.
        progress: called as ``progress(done, N)``; default None.
        keywords: ``iterations`` (default m), ``step_size`` (default 0.5), ``schedule`` ("constant" default,
            "diminishing" or a callable), ``seed``, ``theta0``, ``w0`` (default zeros), replacing those of ``settings``.

    Returns:
        the run's :class:`GPOPEResult` (sigma = 0, clip None).
    """
    s = V.settings_with("gtd2", GPOPESettings, settings, keywords,
                        ("iterations", "step_size", "schedule", "seed", "theta0", "w0"))
    return gpope(dataset, replace(s, sigma=0.0, epsilon=None, delta=None, bound=VALID_BOUND, clip=None),
                 metric=metric, record_every=record_every, progress=progress)
