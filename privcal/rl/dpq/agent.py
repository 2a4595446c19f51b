r"""DP Q-learning with functional noise (Wang & Hegde 2019, Algorithm 1) and the Q-learning baselines.

``privcal.calibrators.dpq`` *calibrates* (sigma, beta) for Algorithm 1; this module *runs* it. One training
loop serves Algorithm 1 and the Q-network baselines of App. E.2 (``method``):

* ``"dpq"`` - Algorithm 1: one exact Ornstein-Uhlenbeck noise path g_a ~ GP(0, sigma^2 exp(-beta|x-y|))
  per action (``privcal.analysis.noise.OrnsteinUhlenbeckPaths``), the released function is Q(., a) + g_a,
  redrawn J times (every floor(T/B)/J updates); sigma from ``privcal.calibrators.dpq.calibrate`` or given;
* ``"non_private"`` - the same learner without noise;
* ``"input_perturbation"`` - Venkatasubramanian 2013: every observed reward gets N(0, sigma_r^2)
  (``privcal.rl.dpq.baselines.input_perturbation_sigma``);
* ``"dpsgd"`` - Abadi et al. 2016: per-example gradients clipped to C, the sum gets N(0, z^2 C^2 I)
  (``privcal.rl.dpq.baselines.dpsgd_noise_multiplier*``);
* ``"bgp16"`` - output perturbation in the style of Balle, Gomrokchi & Precup 2016: like ``"dpq"`` but
  with independent N(0, sigma^2) at each visited (state, action) instead of a continuous path
  (``privcal.rl.dpq.baselines.WhiteNoisePaths``); for utility comparison only, NOT DP w.r.t. reward
  functions (see ``privcal.rl.dpq.baselines``).

Algorithm 1, as run here (t counts samples, j updates; T samples, batch B, U = floor(T/B) updates):

    for t = 0 .. T-1:
        if t = jB for an update j < U with j = 0 (mod U/J): redraw g_a for every action (lines 7-9)
        a_t = argmax_a Q(s_t, a) + g_a(s_t)          (line 12; epsilon-greedy, see below)
        observe r_t, s_{t+1}; reveal g_a(s_{t+1}) for every a (lines 14-18, exact law: noise/)
        if t + 1 = (j + 1)B, j < U:                   (line 22: one SGD step on the last B samples)
            y_i = r_i + gamma max_a [Q(s_{i+1}, a) + g_a(s_{i+1})]            (line 19)
            l_i = (Q(s_i, a_i) + g_{a_i}(s_i) - y_i)^2 / 2                     (line 20)
            theta <- theta - lr (1/B) sum_i grad_theta l_i, then project to Lipschitz <= L

Choices the paper leaves open (all parameters of :class:`Hyperparameters`, defaults stated there):

* Only full batches are trained on: U = floor(T/B) updates, as ``privcal.calibrators.dpq.calibrate`` counts
  floor(T/B) releases. The T - UB trailing samples are still *acted* on (so T = 5000 gives all 100
  episodes; only complete episodes are recorded) but never used in an update; acting on the
  released Q + g is post-processing and costs no privacy.
* J must divide U (``ValueError`` otherwise): path p serves updates pU/J .. (p+1)U/J - 1; the trailing
  samples use the last path. J = U (App. E.3) redraws before every update.
* Line 22 writes theta + alpha grad; we descend (theta - alpha grad): it is a loss. Semi-gradient:
  y is a constant. No target network: y uses the current theta, which is constant during a batch
  (Algorithm 1 line 19 uses Q_theta); no replay buffer: each update uses exactly the last B samples.
* Noise inside the max of line 19: max_a [Q + g_a](s_{t+1}) (the released function's maximum).
* States never visited: the released function is queried wherever it is asked (the path is extended
  at new points from its exact conditional law given all revealed points), so Q + g is defined on all
  of [0, 1]; :meth:`TrainResult.released_q` does that with the last path.
* The episode start s_0 is revealed on every path when the episode starts (Algorithm 1 inserts only
  s_{t+1}); a reset reveals the current state again on the new paths.
* Exploration: epsilon-greedy with rate ``exploration`` on top of the (noisy) greedy action, for every
  method; independent of the rewards, so it is post-processing (Wang & Hegde 2019, Sec. 3.3).
* Episodes are truncated at 50 steps, never terminated: the target bootstraps from the last state.
* gamma, network size, activation, initial output scale, lr: :class:`Hyperparameters`.

What is valid (:func:`train_dpq`, ``variant="valid"``, the default): private by construction.

* Every update starts from the released function. Release j is R_j = N_j + G_j, the network N_j =
  N_(theta_j) plus the noise G_j = g_0 + ... + g_j (one fresh, independent OU layer per release and
  action, :class:`_SummedPaths`); the update computes theta_(j+1) from the batch and R_j's values and
  the next function is Q_(j+1) = R_j + Delta_j, Delta_j = N_(j+1) - N_j, released as
  R_(j+1) = Q_(j+1) + g_(j+1) = N_(j+1) + G_(j+1). Why a release then costs one update's change
  (post-processing argument): theta_j is a deterministic function of the rewards and the earlier
  releases R_0 .. R_(j-1) (and of randomness independent of the rewards), and so is
  G_j - g_j = R_(j-1) - N_(j-1). So the j+1-th mechanism maps (rewards, R_0 .. R_j) to
  R_j + Delta_j(rewards, R_0 .. R_j) + g_(j+1). Under adaptive composition the earlier releases are
  fixed and shared by the two reward functions, so its two means differ by Delta_j - Delta'_j only:
  the parameters may have drifted apart through all earlier updates, but that drift is inside R_j,
  which both runs start from. Without the restart (release N_(j+1) + g_(j+1)) the means differ by
  N_(j+1) - N'_(j+1), up to 2 (j+1) c.
* Every update's change is certified in function space on the actual new parameters
  (:func:`certified_step`): sup_s |Delta_j(s, a)| <= c (``update_clip``; grid of spacing h <= c/(4L)
  plus the slack (Lip(N_new) + Lip(N_old)) h / 2 between grid points) and Lip_s Delta_j(., a) <= l
  (``update_lipschitz``): l >= 2L holds always (Lip(N_new) + Lip(N_old) <= 2L after the projection);
  below 2L the derivative of Delta_j is evaluated on the grid and the slack
  (curv(N_new) + curv(N_old)) h / 2 added between grid points (``privcal.rl.mlp.curvature_bound``, tanh
  networks). While a bound exceeds its clip the step is scaled back (the analogue of DP-SGD's gradient
  clipping); if no tried step certifies, the parameters stay (Delta_j = 0). Units: c in units of Q
  (reward), l in units of Q per unit state.
* Lemma 6 then bounds each release's RKHS sensitivity, for any two reward functions, by
  ||Delta_j - Delta'_j||_H^2 <= (1 + beta/2)(2c)^2 + (2l)^2/(2 beta) per action, minimal at beta = l/c
  (``privcal.analysis.rkhs.restarted_release_sensitivity_squared``): it no longer grows with j and no longer
  charges the networks' own slope 2L. ``privcal.calibrators.dpq`` composes the U x m releases exactly.

A fresh noise layer serves every release (the function before each update, and the function after
the last one), so J = floor(T/B) is required. The run records what it observed in
``TrainResult.premises`` (every update certified in sup and slope, every update restarted from the
released function, every network L-Lipschitz, fresh noise, states in [0, 1], sigma and beta as
calibrated) and states "(epsilon, delta)-DP w.r.t. reward functions" only when all held. The guarantee
covers the released functions and what is computed from them (actions, the policy); the episode returns
and the certificate statistics the run reports are computed from the private rewards and are not
covered. The price of the restart: the noise in the released function accumulates, G_j has standard
deviation sigma sqrt(j + 1) at every state. ``variant="paper"`` runs the paper's plain SGD steps with
the paper's sigma (no restart, one path per release): no valid guarantee (its per-update bound
4 alpha L (k+1)/B fails, see ``privcal verify`` DPQ-update-sup).

Randomness: ``privcal._rng.spawn(seed, 5)`` gives independent streams for the environment, the initial
weights, the noise paths, exploration and the baselines' noise; same seed, same returns.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, fields, replace
from typing import Any, Callable, Optional

from privcal import _rng
from privcal import _validate as V
from privcal.rl.dpq.certificate import MAX_GRID, GridValues, certified_step, certified_step_unchecked, grid_size
from privcal.rl.dpq.hyperparameters import (METHODS, PAPER_E3, Hyperparameters, check_gamma, check_resets,
                                           paper_beta, paper_beta_e3, update_lipschitz_of, valid_hyperparameters)
from privcal.rl.dpq.run import RunNoise, TrainResult, initial_network, make_env, run_unchecked
from privcal.rl.dpq.updates import Minibatch, batch_gradients, certified_update, sgd_update

__all__ = [
    "METHODS",
    "Hyperparameters",
    "PAPER_E3",
    "TrainResult",
    "TrainSettings",
    "paper_beta",
    "paper_beta_e3",
    "check_gamma",
    "check_resets",
    "MAX_GRID",
    "GridValues",
    "Minibatch",
    "batch_gradients",
    "certified_update",
    "sgd_update",
    "certified_step",
    "certified_step_unchecked",
    "grid_size",
    "functional_noise",
    "functional_noise_unchecked",
    "train",
    "train_unchecked",
    "initial_network",
    "train_dpq",
    "train_dpq_without_noise",
    "update_lipschitz_of",
    "valid_hyperparameters",
]


def functional_noise(epsilon: float, delta: float, hp: Hyperparameters, resets: int, *,
                     actions: int = 2, variant: str = "valid") -> tuple[float, float, Any]:
    """(sigma, beta, calibration) of Algorithm 1 for a target (epsilon, delta):
    ``privcal.calibrators.dpq_noise.functional_noise`` at ``hp.learner_shape(variant)``.

    ``variant="valid"`` is the valid analysis at the update clip ``hp.update_clip`` (default
    ``privcal.calibrators.dpq.DEFAULT_UPDATE_CLIP``), which needs J = floor(T/B); ``"paper"`` solves the paper's own
    formulas consistently (see ``privcal.calibrators.dpq``); ``"corrected"`` is a deprecated alias of ``"valid"``.
    The calibrator validates the arguments.

    Args:
        epsilon: target epsilon, in (0, inf).
        delta: target delta, in (0, 1).
        hp: the learner's settings (T, B, alpha, L and the update clip are read from it).
        resets: J, the number of noise paths, an int >= 1 dividing floor(T/B) (equal to it for valid).
        actions: number of actions (one noise path each), an int >= 1; default 2.
        variant: "valid" (default) or "paper".

    Returns:
        (sigma, the functional-noise std; beta, the kernel parameter; the calibrator's result).

    Raises:
        InfeasibleError: the paper variant finds no noise bound k (the message names T, B, lr, L, J).
        ValueError: an argument is outside its range, or J != floor(T/B) under the valid variant.
    """
    from privcal.calibrators import dpq_noise

    return dpq_noise.functional_noise(epsilon, delta, hp.learner_shape(variant), resets, actions=actions, variant=variant,
                                      stacklevel=3)


def functional_noise_unchecked(epsilon: float, delta: float, hp: Hyperparameters, resets: int, *,
                               actions: int = 2, variant: str = "valid") -> tuple[float, float, Any]:
    """:func:`functional_noise` for settings already validated (``hp`` was, on construction; ``resets``,
    ``actions`` and ``variant`` by the caller): only the target is checked (``calibrators.dpq.check_target``,
    epsilon <= MAX_EPSILON), then ``calibrators.dpq_noise.functional_noise_unchecked``.

    Args:
        epsilon: target epsilon, in (0, MAX_EPSILON].
        delta: target delta, in (0, 1).
        hp: the learner's settings (validated).
        resets: J, trusted.
        actions: number of actions, trusted; default 2.
        variant: "valid" (default) or "paper", trusted.

    Returns:
        (sigma, beta, the calibrator's result), as :func:`functional_noise`.
    """
    from privcal.calibrators import dpq, dpq_noise

    target = dpq.check_target(epsilon, delta)
    return dpq_noise.functional_noise_unchecked(*target, hp.learner_shape(variant), resets, actions, variant)


@dataclass(frozen=True)
class TrainSettings:
    """The noise, target, learner, seed and environment of one DP-Q run: what :func:`train` and :func:`train_dpq`
    read (defaults in one place: here; the functions check the values).

    Attributes:
        hp: the learner's settings, a :class:`Hyperparameters`; default None: ``Hyperparameters()``.
        sigma: the noise level, in (0, inf), or None; default None (:func:`train`: required except for
            non_private; :func:`train_dpq`: instead of a target, no privacy claim).
        beta: kernel parameter beta of exp(-beta |x - y|), in (0, inf), or None; default None (the calibrated
            one, or App. E.3's ``paper_beta()`` = 2222 when ``sigma`` is given).
        resets: J, the number of noise paths, an int dividing floor(T/B), or None; default None: floor(T/B).
        epsilon: target epsilon, in (0, inf), or None; default None (:func:`train`: recorded only).
        delta: target delta, in (0, 1), or None; default None (:func:`train`: recorded only).
        variant: "valid" (default) or "paper" ("corrected": a deprecated alias of "valid"); read by
            :func:`train_dpq` only.
        seed: seed of everything (environment, weights, noise, exploration; ``privcal._rng``); default 0.
        env: the environment; default None: a fresh :class:`privcal.rl.envs.IntervalEnv`.
        calibration: recorded only (e.g. the calibrator's result); default None; read by :func:`train` only.
        guarantee: recorded only: the privacy claim in words; default ""; read by :func:`train` only.
    """

    hp: Optional[Hyperparameters] = None
    sigma: Optional[float] = None
    beta: Optional[float] = None
    resets: Optional[int] = None
    epsilon: Optional[float] = None
    delta: Optional[float] = None
    variant: str = "valid"
    seed: _rng.Seed = 0
    env: Any = None
    calibration: Any = None
    guarantee: str = ""


#: The :class:`TrainSettings` fields each function reads (a keyword outside them is refused by :func:`train`,
#: and replaces a field of ``hp`` in :func:`train_dpq`).
_TRAIN_FIELDS = tuple(f.name for f in fields(TrainSettings) if f.name != "variant")
_TRAIN_DPQ_FIELDS = tuple(f.name for f in fields(TrainSettings) if f.name not in ("calibration", "guarantee"))


def _check_hp(hp) -> Hyperparameters:
    if hp is None:
        return Hyperparameters()
    if not isinstance(hp, Hyperparameters):
        raise ValueError(f"hp must be a Hyperparameters instance, got {type(hp).__name__}")
    return hp


def train(method: str = "dpq", settings: Optional[TrainSettings] = None, *,
          progress: Optional[Callable[[int, int], None]] = None, **keywords: Any) -> TrainResult:
    """Run one method for ``hp.samples`` samples with a *given* noise level; returns a TrainResult.

    Use :func:`train_dpq` or ``privcal.rl.dpq.baselines`` (or ``privcal.rl.dpq.experiments.noise_for``)
    to get sigma from a target (epsilon, delta). ``env`` may be any env with 1-D observations in
    [0, 1], discrete actions and the Gymnasium reset/step API.

    Args:
        method: one of :data:`METHODS`: "dpq" (Algorithm 1, default), "non_private",
            "input_perturbation", "dpsgd" or "bgp16".
        settings: the run's :class:`TrainSettings` (its ``variant`` is not read here); default None: built
            from ``keywords``.
        progress: called as ``progress(done_samples, total)`` after each update; default None.
        keywords: fields of :class:`TrainSettings` but ``variant``, replacing those of ``settings``; each is listed below.
        hp: the learner's settings; default ``Hyperparameters()``.
        sigma: the noise level, in (0, inf), required except for non_private (ignored there):
            functional-noise std (dpq), independent-noise std (bgp16), reward-noise std
            (input_perturbation) or noise multiplier z (dpsgd).
        beta: kernel parameter beta of exp(-beta |x - y|) for dpq, in (0, inf); default App. E.3's
            ``paper_beta()`` = 2222 whatever ``hp.lr`` is. Ignored by the other methods.
        resets: J, the number of noise paths for dpq and bgp16, an int dividing floor(T/B);
            default floor(T/B) (a new path before every update). Ignored by the other methods.
        epsilon: recorded only (no calibration here); default None.
        delta: recorded only; default None.
        calibration: recorded only (e.g. the calibrator's result); default None.
        guarantee: recorded only: the privacy claim in words; default "".
        seed: seed of everything (environment, weights, noise, exploration; ``privcal._rng``);
            default 0.
        env: the environment; default a fresh :class:`privcal.rl.envs.IntervalEnv`.

    With ``hp.update_clip`` set, every "dpq" update is certified (:func:`certified_step`; slope clip
    :func:`update_lipschitz_of`), starts from the released function (the noise layers of the releases are
    summed) and the function after the last update gets a fresh noise layer; ``TrainResult.certificate``
    records it. No privacy claim is computed here (see :func:`train_dpq`).

    Returns:
        the run's :class:`TrainResult`.

    Raises:
        ValueError: an argument is outside its range (the message names it).
        TypeError: a keyword is none of the fields above.
    """
    run = V.settings_with("train", TrainSettings, settings, keywords, allowed=_TRAIN_FIELDS)
    sigma, beta, resets = run.sigma, run.beta, run.resets
    V.choice("method", method, METHODS)
    hp = _check_hp(run.hp)
    updates = hp.updates
    if method == "non_private":
        sigma = None
    elif sigma is None:
        raise ValueError(f"sigma is required for method {method!r} (see train_dpq / privcal.rl.dpq.baselines)")
    else:
        sigma = V.positive("sigma", sigma)
    if method == "dpq":
        resets = updates if resets is None else check_resets(resets, updates)
        beta = paper_beta_e3() if beta is None else V.positive("beta", beta)
    elif method == "bgp16":
        resets, beta = (updates if resets is None else check_resets(resets, updates)), None
    else:
        resets, beta = None, None
    return run_unchecked(RunNoise(method, sigma, beta, resets), hp, run.seed, run.env, progress, epsilon=run.epsilon,
                         delta=run.delta, calibration=run.calibration, guarantee=run.guarantee)


#: The keywords :func:`train_unchecked` passes on to ``run_unchecked`` beside the run's noise.
_UNCHECKED_OPTIONS = ("seed", "env", "progress", "net", "epsilon", "delta", "calibration", "guarantee")


def train_unchecked(method: str, *, hp: Hyperparameters, sigma: Optional[float], beta: Optional[float],
                    resets: Optional[int], **options: Any) -> TrainResult:
    """Deprecated (docs/deprecation.md): ``privcal.rl.dpq.run.run_unchecked(RunNoise(method, sigma, beta, resets),
    hp, seed, env, progress, net=net, **record)``, the kernel it calls, gives the same run.

    Args:
        method: one of :data:`METHODS` (not checked).
        hp: the learner's settings, a validated :class:`Hyperparameters`.
        sigma: the noise level, a float in (0, inf), or None for non_private (not checked).
        beta: the kernel parameter for dpq, a float in (0, inf), else None (not checked).
        resets: J for dpq and bgp16, an int dividing floor(T/B), else None (not checked).
        options: seed (default 0), env (default None: a fresh :class:`privcal.rl.envs.IntervalEnv`), progress
            (default None), net (default None: :func:`initial_network` of the run), and the recorded epsilon,
            delta, calibration and guarantee.

    Returns:
        the run's :class:`TrainResult`.
    """
    warnings.warn("privcal.rl.dpq.agent.train_unchecked is deprecated; use privcal.rl.dpq.run.run_unchecked("
                  "RunNoise(method, sigma, beta, resets), hp, seed, env, progress)", DeprecationWarning, stacklevel=2)
    for key in options:
        if key not in _UNCHECKED_OPTIONS:
            raise TypeError(f"train_unchecked() got an unexpected keyword argument {key!r}")
    seed = options.pop("seed", 0)
    env, progress, net = (options.pop(key, None) for key in ("env", "progress", "net"))
    return run_unchecked(RunNoise(method, sigma, beta, resets), hp, seed, env, progress, net=net, **options)


def train_dpq(settings: Optional[TrainSettings] = None, *, progress: Optional[Callable[[int, int], None]] = None,
              **keywords: Any) -> TrainResult:
    """Algorithm 1 of Wang & Hegde 2019: train, return per-episode returns and the released Q + g.

    Either a target (``epsilon``, ``delta``): sigma and beta come from ``privcal.calibrators.dpq.calibrate``
    for J = ``resets``; or ``sigma`` directly, in which case no privacy claim is made (``epsilon``
    and ``delta``, if given, are only recorded). A ``beta`` other than the calibrated one voids the
    claim too. The calibration counts one noise path per action of ``env``.

    ``variant="valid"``: every update starts from the released function and is certified to move each
    action's Q by at most ``hp.update_clip`` (default ``privcal.calibrators.dpq.DEFAULT_UPDATE_CLIP`` = 0.01,
    units of Q) over the states [0, 1], with a Lipschitz constant at most ``hp.update_lipschitz`` (default
    ``DEFAULT_UPDATE_LIPSCHITZ`` = 0.02 for tanh networks, 2L for relu) (:func:`certified_step`); a fresh
    noise layer serves every release (J must equal floor(T/B); the function after the last update gets
    its own), and the result's ``premises`` record what this run observed: every update certified in sup
    and slope and restarted from the release, every network L-Lipschitz, fresh noise per release, every
    state in [0, 1], sigma and beta as calibrated. ``guarantee`` states
    "(epsilon, delta)-DP w.r.t. reward functions ..." only when every premise held, otherwise
    "no valid guarantee: <failed premise>". ``variant="paper"`` runs the plain SGD steps (certified only
    if ``hp.update_clip`` is set) and says "no valid guarantee (paper analysis)".

    Args:
        settings: the run's :class:`TrainSettings` (its ``calibration`` and ``guarantee`` are not read here);
            default None: built from ``keywords``.
        progress: called as ``progress(done_samples, total)`` after each update; default None.
        keywords: fields of :class:`TrainSettings` but ``calibration`` and ``guarantee``, replacing those of
            ``settings``; any other keyword is a field of ``hp`` to replace, e.g. ``samples=1000`` or
            ``update_clip=0.05``; each is listed below.
        epsilon: target epsilon, in (0, inf); with ``delta``, instead of ``sigma``.
        delta: target delta, in (0, 1).
        sigma: functional-noise std given directly, in (0, inf) (no privacy claim).
        beta: kernel parameter beta of exp(-beta |x - y|), in (0, inf); default the calibrated one
            (or App. E.3's ``paper_beta()`` = 2222 when ``sigma`` is given).
        resets: J, the number of noise paths, an int dividing floor(T/B); default floor(T/B)
            (App. E.3; required by the valid variant).
        variant: "valid" (default) or "paper" (the paper's formulas solved consistently: not a valid
            guarantee); "corrected" is a deprecated alias of "valid".
        hp: the learner's settings; default ``Hyperparameters()``.
        seed: seed of everything (``privcal._rng``); default 0.
        env: the environment; default a fresh :class:`privcal.rl.envs.IntervalEnv`.

    Returns:
        the run's :class:`TrainResult` (``guarantee`` states the claim, ``premises`` what it rests on,
        ``certificate`` the update certificate, ``calibration`` the calibrator's result).

    Raises:
        ValueError: bad hyperparameters (B > T, lr <= 0, J not dividing floor(T/B), L <= 0, ...),
            neither ``sigma`` nor both ``epsilon`` and ``delta``, or a premise of the valid variant that
            cannot hold in this setting (J < floor(T/B): noise reuse; update_clip too small to certify).
        InfeasibleError: the paper variant finds no sigma for the target.
    """
    from privcal.calibrators import dpq, dpq_noise

    run = V.settings_with("train_dpq", TrainSettings, settings,
                          {k: v for k, v in keywords.items() if k in _TRAIN_DPQ_FIELDS})
    overrides = {k: v for k, v in keywords.items() if k not in _TRAIN_DPQ_FIELDS}
    epsilon, delta, sigma, beta, env = run.epsilon, run.delta, run.sigma, run.beta, run.env
    hp = _check_hp(run.hp)
    if overrides:
        hp = replace(hp, **overrides)
    resets = hp.updates if run.resets is None else check_resets(run.resets, hp.updates)
    variant = dpq.check_variant(run.variant, stacklevel=3)
    if variant == "valid":
        hp = valid_hyperparameters(hp)
    calibration = None
    cal_beta = None
    if sigma is None:
        if epsilon is None or delta is None:
            raise ValueError("give either sigma or both epsilon and delta")
        env = make_env(env)  # the calibration counts one noise path per action of this env
        # validated here once (hp, resets and variant above), then the calibrator's kernel trusts them
        target = dpq.check_target(epsilon, delta)  # epsilon and delta are recorded as given
        actions = V.positive_int("actions", int(env.action_space.n))
        sigma, cal_beta, calibration = dpq_noise.functional_noise_unchecked(*target, hp.learner_shape(variant), resets,
                                                                      actions, variant)
        beta = cal_beta if beta is None else V.positive("beta", beta)
    else:
        sigma = V.positive("sigma", sigma)
        beta = paper_beta_e3() if beta is None else V.positive("beta", beta)
    result = run_unchecked(RunNoise("dpq", sigma, beta, resets), hp, run.seed, env, progress, epsilon=epsilon,
                           delta=delta, calibration=calibration)
    if variant == "paper":
        result.guarantee = ("no valid guarantee (paper analysis): the paper's Thm 5 formulas solved "
                            "consistently, see privcal.calibrators.dpq")
        if calibration is None:
            result.guarantee = "no valid guarantee (paper analysis): sigma given directly, no privacy claim computed"
        return result
    result.premises = _premises(result, calibration, cal_beta)
    failed = [name for name, held, _ in result.premises if not held]
    if failed:
        result.guarantee = f"no valid guarantee: {failed[0]}"
    else:
        c = hp.update_clip
        result.guarantee = (
            f"({calibration.epsilon:g}, {calibration.delta:g})-DP w.r.t. reward functions (any two), valid "
            f"analysis: update clip c = {c:g} (units of Q) and slope clip l = {update_lipschitz_of(hp):g} certified "
            f"on all {result.updates} updates, each update started from the released function, fresh "
            f"noise per release, exact composition of {result.updates} x {calibration.actions} GP releases; "
            f"covers the released Q + g and what is computed from it (actions, policy), not the printed returns "
            f"and run statistics")
    return result


def train_dpq_without_noise(*, hp: Optional[Hyperparameters] = None, seed: _rng.Seed = 0, env: Any = None,
                            progress: Optional[Callable[[int, int], None]] = None,
                            **overrides: Any) -> TrainResult:
    """The valid variant's learner with sigma = 0: the same learner as :func:`train_dpq` without its noise.

    Every update is certified in sup (``hp.update_clip``, default ``DEFAULT_UPDATE_CLIP``) and slope
    (``update_lipschitz_of(hp)``) and starts from the released function, exactly as in the valid variant,
    but every noise layer is zero. It answers whether the learner itself learns at the given settings,
    apart from the noise. No privacy claim (``guarantee`` says so).

    Args:
        hp: the learner's settings; default ``Hyperparameters()``; the valid variant's clips fill the unset ones
            (:func:`valid_hyperparameters`).
        seed: seed of everything (the same streams as :func:`train_dpq`); default 0.
        env: the environment; default a fresh :class:`privcal.rl.envs.IntervalEnv`.
        progress: called as ``progress(done_samples, total)`` after each update; default None.
        **overrides: fields of ``hp`` to replace.

    Returns:
        the run's :class:`TrainResult` (``sigma`` 0, ``certificate`` filled).

    Raises:
        ValueError: bad hyperparameters.
    """
    hp = _check_hp(hp)
    if overrides:
        hp = replace(hp, **overrides)
    hp = valid_hyperparameters(hp)
    # sigma = 0: every noise layer is the zero function; beta only shapes the (zero) paths
    result = run_unchecked(RunNoise("dpq", 0.0, 1.0, hp.updates), hp, seed, env, progress)
    result.guarantee = ("none: the valid variant's learner (certified updates restarted from the release) "
                        "without noise")
    return result


def _premises(result: TrainResult, calibration, cal_beta) -> list:
    """(name, held, evidence) of every premise of the valid analysis, as observed in ``result``."""
    hp, cert, U = result.hyperparameters, result.certificate, result.updates
    c = hp.update_clip
    out = []
    if calibration is None:
        out.append(("calibrated noise: sigma and beta from privcal.calibrators.dpq.calibrate (valid)", False,
                    "sigma given directly: no privacy claim computed"))
    else:
        same = result.beta == cal_beta and result.sigma == calibration.sigma
        out.append(("calibrated noise: sigma and beta from privcal.calibrators.dpq.calibrate (valid)", bool(same),
                    f"sigma = {result.sigma:.6g}, beta = {result.beta:.6g} (calibrated beta = {cal_beta:.6g}) for "
                    f"T = {hp.samples}, B = {hp.batch_size}, L = {hp.lipschitz:g}, c = {c:g}, "
                    f"{calibration.actions} actions"))
        actions = len(result.noise) if result.noise is not None else calibration.actions
        out.append(("one noise path per action, as calibrated", actions == calibration.actions,
                    f"{actions} actions in the run, {calibration.actions} calibrated"))
    out.append((f"every update certified: sup_s |Q_new(s, a) - Q_old(s, a)| <= c = {c:g} on [0, 1]",
                bool(cert) and cert["max_certified"] <= c,
                f"{U} updates, largest certified change {cert.get('max_certified', math.nan):.4g} on a grid of "
                f"{cert.get('grid_size')} points; {cert.get('scaled')} steps scaled back, {cert.get('skipped')} "
                f"skipped (smallest factor {cert.get('min_factor', math.nan):.3g})"))
    lip = update_lipschitz_of(hp)
    out.append((f"every update's slope certified: Lip_s(Q_new(s, a) - Q_old(s, a)) <= l = {lip:g}",
                bool(cert) and cert["max_certified_lipschitz"] <= lip and cert.get("update_lipschitz") == lip,
                f"largest certified slope change {cert.get('max_certified_lipschitz', math.nan):.4g} "
                f"(l = {cert.get('update_lipschitz')} in the run)"))
    out.append(("every update starts from the released function (R_j + change; noise layers summed)",
                cert.get("restart") == "released", f"restart: {cert.get('restart')}"))
    out.append((f"every network L-Lipschitz in the state (L = {hp.lipschitz:g})",
                bool(cert) and cert["max_lipschitz"] <= hp.lipschitz,
                f"largest prod ||W_i||_2 over the run {cert.get('max_lipschitz', math.nan):.6g}"))
    out.append(("fresh noise for every release (J = floor(T/B), a new path after the last update)",
                result.resets == U and cert.get("paths") == U + 1,
                f"J = {result.resets}, {cert.get('paths')} paths drawn for {U} updates"))
    out.append(("every state in the certified domain [0, 1]",
                bool(cert) and 0.0 <= cert["state_min"] and cert["state_max"] <= 1.0,
                f"states observed in [{cert.get('state_min', math.nan):.6g}, {cert.get('state_max', math.nan):.6g}]"))
    return out
