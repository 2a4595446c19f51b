r"""Private-UCB-VI (Chowdhury & Zhou 2021, the joint-DP value-iteration learner) with privcal's counters.

Setting (Chowdhury & Zhou, "Differentially private regret minimization in episodic MDPs", AAAI 2022,
arXiv 2112.10599; the same model as ``privcal.rl.pucb.tabular``): S states, A actions, horizon
H, time-dependent transitions P_h(s' | s, a) and mean rewards r_h(s, a) in [0, 1]; T episodes, one per
user. Steps are 0-based here (h = 0..H-1).

**Privacy unit and guarantee.** One user = one episode's trajectory (its H + 1 states, H actions and H
rewards); two runs are neighbours when they differ in one whole user (k-neighbouring user sequences,
joint DP under continual observation: every output except the actions recommended to that user; Vietri,
Balle, Krishnamurthy & Wu 2020, Def. 3, the JDP setting Chowdhury & Zhou follow, not re-checked here
against their text). The algorithm
keeps three families of private counters, one stream per (h, s, a) (or (h, s, a, s')) with one value per
episode: rewards R, visits N and transitions M. Replacing user k changes, at each step, at most two
streams of each family (the old and the new (h, s, a)) by at most 1 each, and through the releases no
other user's input (the billboard argument: the other users' data enter only through the releases). So:

* ``counter_noise="gaussian"`` (default): :class:`privcal.analysis.counter.GaussianBinaryCounter` with one sigma
  for all counters, the sigma of ``privcal.rl.pucb.agent.counter_sigma``: calibrated on the l2 sensitivity
  sqrt(6 H L) of the vector of all p-sums (L = floor(log2 T) + 1 tree levels) with the exact Gaussian
  profile (Balle & Wang 2018, Thm 8; adaptive composition of Gaussian mechanisms, Dong, Roth & Su 2022,
  Cor. 3.3): the releases are (epsilon, delta)-DP, the agent (epsilon, delta)-JDP (the billboard lemma of
  Hsu, Huang, Roth, Roughgarden & Wu 2016, the argument of Vietri et al.'s JDP proof).
* ``counter_noise="laplace"``: :class:`privcal.analysis.counter.BinaryCounter` at epsilon' = epsilon / (6H) per
  counter (l1 sensitivity 6 H of one user's inputs; ``privcal.rl.pucb.agent.counter_epsilon``): epsilon-JDP,
  the form of guarantee Chowdhury & Zhou state (pure epsilon-JDP, their Table 1). The paper's per-counter
  split could not be read here; the 6H above is derived for replace-one neighbours (an epsilon/(3H) split,
  as Vietri et al. print it for PUCB, gives 2 epsilon).

**Planning (Private-UCB-VI, the valid bonus).** Before each episode, from the releases N~, R~, M~ and the
counters' uniform error bound E (:func:`counter_error_bound`: with probability >= 1 - beta/2,
|release - count| <= E for every covered stream and round; the *valid* union bound of ``privcal.analysis.counter``):

    D     = N~ + E                         (>= N on the event: an upper bound on the true count)
    r^    = R~ / D,   P^(s') = max(M~(s'), 0) / D
    b_h   = (1 + W_h) sqrt(L / (2 D)) + (3 + (2 + F) W_h) E / D,    W_h = H - h - 1
    Q^_h  = min{H - h, r^ + P^ . V^_{h+1} + b_h}  where D >= 1, else H - h;   V^_h = max_a Q^_h,

with L = :func:`confidence_log` = ln(4 S A H T / beta) and F = :func:`transition_factor` (S for Laplace
counters, sqrt(S) for Gaussian ones). The estimates with the denominator shifted by E and a bonus of the
form H sqrt(L / (N~ + E)) + S H E / (N~ + E) follow the structure of Chowdhury & Zhou's Private-UCB-VI (the
value-iteration instance of their private optimistic framework, on privately released counts) as far as it
could be recalled; the paper's text was not available to check it, and the constants above are derived here
(``docs/ucbvi.md``), not taken from the paper. Optimism (Q^_h >= Q*_h for all h, s, a and
episodes) holds with probability >= 1 - beta; proof sketch, on the counters' event and the Hoeffding event:

* rewards: r D - R~ = (r N - R) + r (D - N) + (R - R~) <= sqrt(N L / 2) + 2E + E, and N <= D, so
  r - r^ <= sqrt(L / (2D)) + 3E / D (Hoeffding on the N i.i.d. rewards in [0, 1] of (h, s, a), one-sided,
  union over the S A H pairs and the T possible counts);
* transitions, for the fixed V*_{h+1} in [0, W_h]: (P - P^) . V* D = (P.V* N - M.V*) + P.V* (D - N)
  + (M - max(M~, 0)) . V* <= W_h sqrt(N L / 2) + 2 E W_h + (M - M~) . V*, and (M - M~) . V* <= F E W_h:
  S errors of at most E each (Laplace), or one Gaussian weighted sum of standard deviation at most
  sqrt(popcount(t)) sigma sqrt(S) W_h, bounded by sqrt(S) W_h E (Gaussian; :func:`transition_factor`);
* P^ >= 0 and V^_{h+1} >= V*_{h+1} (induction from h = H) give P^ . V^_{h+1} >= P^ . V*_{h+1}, and the
  clip at H - h keeps Q^_h >= Q*_h because Q*_h <= H - h.

The union bound spends beta/2 on the counters (:func:`covered_streams`: every counter for Laplace, the
3 S A H visit, reward and weighted-transition streams for Gaussian, all T rounds) and beta/2 on the
2 S A H T one-sided Hoeffding events: L = ln(2 S A H T / (beta / 2)).

``epsilon=None`` is the non-private reference: exact counters and E = 0 (UCB-VI with a Hoeffding bonus,
Azar, Osband & Munos 2017, UCBVI with a Chernoff-Hoeffding bonus): the same code path.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass, field
from typing import Callable, Optional

import numpy as np
from numpy.typing import ArrayLike

from privcal import _rng
from privcal import _validate as V
from privcal.analysis import gaussian as _gaussian
from privcal.analysis.counter import (
    BinaryCounter,
    ExactCounter,
    GaussianBinaryCounter,
    error_bound as laplace_error_bound,
    gaussian_error_bound_unchecked,
    gaussian_psum_sensitivity_unchecked,
    gaussian_sigma_unchecked,
)
from privcal.rl.pucb.agent import EpisodeCounterAgent, episode_counter_inputs, num_counters, play_episodes
from privcal.rl.pucb.tabular import TabularMDP, uniform_policy_return

__all__ = [
    "PRIVACY_UNIT",
    "COUNTER_NOISES",
    "SENSITIVE_STREAMS_PER_STEP",
    "num_counters",
    "confidence_log",
    "counter_noise_scale",
    "covered_streams",
    "counter_error_bound",
    "transition_factor",
    "bonus",
    "optimistic_q",
    "episode_inputs",
    "PrivateUCBVI",
    "UCBVIRun",
    "run_ucbvi",
    "run_ucbvi_unchecked",
]

#: What one user is, and which runs are neighbours.
PRIVACY_UNIT = ("one user = one episode's trajectory (H + 1 states, H actions, H rewards); neighbouring runs "
                "replace one user (k-neighbouring user sequences: joint DP under continual observation, "
                "Vietri et al. 2020, Def. 3)")
#: Noise of the private counters: Gaussian ((epsilon, delta)-JDP) or Laplace (pure epsilon-JDP).
COUNTER_NOISES = ("gaussian", "laplace")
#: Streams one user's replacement changes per step: 2 per family (old and new (h, s, a)), 3 families.
SENSITIVE_STREAMS_PER_STEP = 6


def confidence_log(states: int, actions: int, horizon: int, episodes: int, failure_probability: float) -> float:
    """L = ln(4 S A H T / beta): the log term of the Hoeffding part of the bonus (valid union bound).

    Half of beta goes to the 2 S A H T one-sided Hoeffding events (rewards and transitions of every
    (h, s, a), every possible count 1..T); the other half to the counters (:func:`counter_error_bound`).

    Args:
        states: number of states S, an integer >= 1.
        actions: number of actions A, an integer >= 1.
        horizon: episode length H, an integer >= 1.
        episodes: number of episodes T, an integer >= 1.
        failure_probability: beta, in (0, 1).

    Returns:
        L, in (0, inf).

    Raises:
        ValueError: an argument is outside its range.
    """
    s, a, h = (V.positive_int("states", states), V.positive_int("actions", actions),
               V.positive_int("horizon", horizon))
    t = V.positive_int("episodes", episodes)
    beta = V.open_unit("failure_probability", failure_probability)
    return math.log(4.0 * s * a * h * t / beta)


def counter_noise_scale(epsilon: float, horizon: int, episodes: int, *, counter_noise: str = "gaussian",
                        delta: Optional[float] = None) -> float:
    """Noise scale of every p-sum: Gaussian sigma for (epsilon, delta)-JDP, or Laplace b for epsilon-JDP.

    Gaussian: sigma = sqrt(6 H L) / mu(epsilon, delta), the exact Gaussian profile (Balle & Wang 2018,
    Thm 8) at the l2 sensitivity of all p-sums (``privcal.analysis.counter.gaussian_sigma`` with 6H streams).
    Laplace: b = L / (epsilon / (6H)) = 6 H L / epsilon (l1 sensitivity 6 H L; Chan, Shi & Song 2011,
    Thm 3.5, and basic composition over the 6H streams). L = floor(log2 T) + 1.

    Args:
        epsilon: target JDP epsilon, in (0, inf).
        horizon: episode length H, an integer >= 1.
        episodes: number of episodes T, an integer >= 1.
        counter_noise: "gaussian" (default) or "laplace".
        delta: JDP delta in (0, 1), for "gaussian" only; default None.

    Returns:
        sigma or b (unit: counts), in (0, inf).

    Raises:
        ValueError: an argument is outside its range, or delta does not fit the noise.
    """
    eps = V.positive("epsilon", epsilon)
    h = V.positive_int("horizon", horizon)
    t = V.positive_int("episodes", episodes)
    noise = V.choice("counter_noise", counter_noise, COUNTER_NOISES)
    d = _check_delta(noise, delta)
    return _noise_scale(eps, h, t, noise, d)


def _check_delta(noise: str, delta) -> Optional[float]:
    if noise == "laplace":
        if delta is not None:
            raise ValueError(f"delta is used only with counter_noise='gaussian' (Laplace counters are pure "
                             f"epsilon-JDP), got delta={delta!r}")
        return None
    if delta is None:
        raise ValueError("delta must be in (0, 1) for counter_noise='gaussian', got None")
    return V.open_unit("delta", delta)


def _noise_scale(eps: float, h: int, t: int, noise: str, delta: Optional[float]) -> float:
    streams = SENSITIVE_STREAMS_PER_STEP * h
    if noise == "gaussian":
        return gaussian_sigma_unchecked(t, eps, delta, streams=streams)
    return t.bit_length() * streams / eps


def covered_streams(states: int, actions: int, horizon: int, counter_noise: str = "gaussian") -> int:
    """Number of streams the counters' error bound must cover, for the bonus of :func:`bonus` to be valid.

    Laplace: every counter, K = 2 S A H + S^2 A H (the transition term adds S per-counter errors).
    Gaussian: 3 S A H (the visit and reward counters, and one weighted sum of the S transition errors per
    (h, s, a), :func:`transition_factor`).

    Args:
        states: number of states S, an integer >= 1.
        actions: number of actions A, an integer >= 1.
        horizon: episode length H, an integer >= 1.
        counter_noise: "gaussian" (default) or "laplace".

    Returns:
        The number of streams, an integer >= 3.

    Raises:
        ValueError: an argument is outside its range.
    """
    num_counters(states, actions, horizon)  # validates S, A, H
    noise = V.choice("counter_noise", counter_noise, COUNTER_NOISES)
    return _covered(int(states), int(actions), int(horizon), noise)


def _covered(s: int, a: int, h: int, noise: str) -> int:
    return 3 * s * a * h if noise == "gaussian" else 2 * s * a * h + s * s * a * h


def counter_error_bound(noise_scale: float, states: int, actions: int, horizon: int, episodes: int,
                        failure_probability: float, *, counter_noise: str = "gaussian") -> float:
    """The counters' valid uniform error bound E at failure probability beta / 2 (what the bonus uses).

    With probability >= 1 - beta/2, |release - count| <= E for every covered stream
    (:func:`covered_streams`) and every round: exact per-round tails of the tree's error and a union
    bound over rounds and streams (``privcal.analysis.counter.gaussian_error_bound`` for Gaussian counters,
    ``privcal.analysis.counter.error_bound`` for Laplace ones). The bonus of :func:`bonus` is valid only with this
    E or a larger one.

    Args:
        noise_scale: Gaussian sigma or Laplace b of each p-sum (:func:`counter_noise_scale`), in (0, inf).
        states: number of states S, an integer >= 1.
        actions: number of actions A, an integer >= 1.
        horizon: episode length H, an integer >= 1.
        episodes: number of episodes T, an integer >= 1.
        failure_probability: the agent's total beta, in (0, 1) (the counters get beta / 2).
        counter_noise: "gaussian" (default) or "laplace".

    Returns:
        E (unit: counts), in (0, inf).

    Raises:
        ValueError: an argument is outside its range.
    """
    scale = V.positive("noise_scale", noise_scale)
    k = covered_streams(states, actions, horizon, counter_noise)
    t = V.positive_int("episodes", episodes)
    beta = V.open_unit("failure_probability", failure_probability)
    return _error_bound(scale, k, t, beta, counter_noise)


def _error_bound(scale: float, k: int, t: int, beta: float, noise: str) -> float:
    if noise == "gaussian":
        return gaussian_error_bound_unchecked(t, scale, beta / 2.0, counters=k)
    # Laplace: the per-counter epsilon' whose scale L / epsilon' is b
    return laplace_error_bound(t, t.bit_length() / scale, beta / 2.0, counters=k)


def bonus(denominator: ArrayLike, error_bound: float, log_term: float, transition_factor: float,
          value_range: float) -> np.ndarray:
    """The valid optimism bonus b = (1 + W) sqrt(L / (2D)) + (3 + (2 + F) W) E / D (module docstring).

    F = :func:`transition_factor`: S for Laplace counters (the S transition errors added up), sqrt(S) for
    Gaussian counters (one Gaussian weighted sum, see the module docstring).

    Args:
        denominator: D = N~ + E, any shape; entries < 1 get inf (no estimate: Q^ takes its maximum).
        error_bound: the counters' E, in [0, inf) (0: exact counters).
        log_term: L = :func:`confidence_log`, in (0, inf).
        transition_factor: F, in [0, inf).
        value_range: W = H - h - 1, the range of V*_{h+1}, in [0, inf).

    Returns:
        b, an array shaped like ``denominator`` (inf where D < 1).

    Raises:
        ValueError: an argument is outside its range.
    """
    e = V.nonnegative("error_bound", error_bound)
    lt = V.positive("log_term", log_term)
    f = V.nonnegative("transition_factor", transition_factor)
    w = V.nonnegative("value_range", value_range)
    return _bonus(np.asarray(denominator, dtype=float), e, lt, f, w)


def _bonus(d: np.ndarray, e: float, lt: float, f: float, w: float) -> np.ndarray:
    ok = d >= 1.0
    safe = np.where(ok, d, 1.0)
    b = (1.0 + w) * np.sqrt(lt / (2.0 * safe)) + (3.0 + (2.0 + f) * w) * e / safe
    return np.where(ok, b, np.inf)


def transition_factor(states: int, counter_noise: Optional[str]) -> float:
    """F of :func:`bonus`: S (Laplace counters, or exact ones, where E = 0), sqrt(S) (Gaussian counters).

    Laplace: sum_{s'} (M - M~)(s') V*(s') <= S E W, each of the S errors bounded by E. Gaussian: the
    release errors xi(s') of the S transition counters of one (h, s, a) are independent
    N(0, popcount(t) sigma^2), independent of the data, so for the fixed V*_{h+1} the sum
    sum_{s'} xi(s') V*(s') is N(0, popcount(t) sigma^2 |V*|_2^2) with |V*|_2 <= sqrt(S) W: it obeys the
    same uniform bound as one counter, times sqrt(S) W (the union bound of :func:`counter_error_bound`
    counts it as one of its 3 S A H streams).

    Args:
        states: number of states S, an integer >= 1.
        counter_noise: "gaussian", "laplace" or None (exact counters).

    Returns:
        F, in [1, S].

    Raises:
        ValueError: an argument is outside its range.
    """
    s = V.positive_int("states", states)
    if counter_noise is not None:
        V.choice("counter_noise", counter_noise, COUNTER_NOISES)
    return math.sqrt(s) if counter_noise == "gaussian" else float(s)


def optimistic_q(rewards: ArrayLike, counts: ArrayLike, transitions: ArrayLike, error_bound: float,
                 log_term: float, transition_factor: float) -> np.ndarray:
    """Q^ (H, S, A) of Private-UCB-VI from counter releases (module docstring: estimates, bonus, clip).

    Args:
        rewards: reward-sum releases R~, shape (H, S, A).
        counts: visit-count releases N~, shape (H, S, A).
        transitions: transition-count releases M~, shape (H, S, A, S).
        error_bound: the counters' uniform error bound E, in [0, inf).
        log_term: L = :func:`confidence_log`, in (0, inf).
        transition_factor: F of :func:`bonus` (:func:`transition_factor`), in [0, inf).

    Returns:
        Q^, shape (H, S, A), with Q^_h in [0, H - h].

    Raises:
        ValueError: the shapes disagree or an argument is outside its range.
    """
    r = np.asarray(rewards, dtype=float)
    n = np.asarray(counts, dtype=float)
    m = np.asarray(transitions, dtype=float)
    if r.ndim != 3 or n.shape != r.shape or m.shape != r.shape + (r.shape[1],):
        raise ValueError("rewards and counts must have shape (H, S, A) and transitions (H, S, A, S); "
                         f"got {r.shape}, {n.shape}, {m.shape}")
    return _optimistic_q(r, n, m, V.nonnegative("error_bound", error_bound), V.positive("log_term", log_term),
                         V.nonnegative("transition_factor", transition_factor))


def _optimistic_q(r: np.ndarray, n: np.ndarray, m: np.ndarray, e: float, lt: float, f: float) -> np.ndarray:
    hor, s, _ = r.shape
    d = n + e
    ok = d >= 1.0
    safe = np.where(ok, d, 1.0)
    r_hat = r / safe
    p_hat = np.maximum(m, 0.0) / safe[..., None]
    q = np.empty_like(r)
    v_next = np.zeros(s)
    for h in range(hor - 1, -1, -1):
        cap = float(hor - h)
        b = _bonus(d[h], e, lt, f, cap - 1.0)
        est = r_hat[h] + p_hat[h] @ v_next + b
        q[h] = np.where(ok[h], np.minimum(cap, est), cap)
        v_next = q[h].max(axis=1)
    return q


def episode_inputs(states: int, actions: int, visited: ArrayLike, chosen: ArrayLike,
                   rewards: ArrayLike) -> dict:
    """One episode's inputs to the three counter families: r, 1 and 1 at the visited (h, s, a) / (h, s, a, s').

    Args:
        states: number of states S, an integer >= 1.
        actions: number of actions A, an integer >= 1.
        visited: the states s_0..s_H, integers in [0, S), shape (H + 1,).
        chosen: the actions a_0..a_{H-1}, integers in [0, A), shape (H,).
        rewards: the rewards, in [0, 1], shape (H,).

    Returns:
        {"rewards": (H, S, A), "counts": (H, S, A), "transitions": (H, S, A, S)} arrays of inputs.

    Raises:
        ValueError: the shapes disagree.
    """
    st = np.asarray(visited, dtype=np.int64)
    ac = np.asarray(chosen, dtype=np.int64)
    rw = np.asarray(rewards, dtype=float)
    h = ac.shape[0] if ac.ndim == 1 else -1
    if h < 1 or st.shape != (h + 1,) or rw.shape != (h,):
        raise ValueError(f"an episode needs states (H + 1,), actions (H,), rewards (H,); got {st.shape}, "
                         f"{ac.shape}, {rw.shape}")
    return episode_counter_inputs(V.positive_int("states", states), V.positive_int("actions", actions), st, ac, rw)




class PrivateUCBVI(EpisodeCounterAgent):
    r"""Private-UCB-VI agent (Chowdhury & Zhou 2021) with the valid bonus; ``epsilon=None``: non-private UCB-VI.

    Per episode: ``pi = agent.policy()`` (greedy in :meth:`q_values`, ties broken uniformly at random,
    shape (H, S)), run the episode, ``agent.observe(states, actions, rewards)`` (each counter fed once).

    Args:
        states: number of states S, an integer >= 1.
        actions: number of actions A, an integer >= 1.
        horizon: episode length H, an integer >= 1.
        episodes: number of episodes T the counters are built for, an integer >= 1.
        epsilon: JDP epsilon, in (0, inf); None (default) for the non-private reference.
        delta: JDP delta in (0, 1) with ``counter_noise="gaussian"``; None with "laplace" or no privacy.
        failure_probability: beta of the optimism event, in (0, 1); default 0.1 (half for the counters).
        seed: None, a non-negative int, a SeedSequence or a Generator; default None.
        counter_noise: "gaussian" (default) or "laplace" (see the module docstring).

    Attributes: ``noise_scale`` (sigma or b), ``error_bound`` E, ``log_term`` L, ``jdp_epsilon`` and
    ``jdp_delta`` (the guarantee: an upper bound on epsilon at ``jdp_delta``), ``privacy_unit``,
    ``guarantee`` (in words), ``counters`` (the three families).

    Raises:
        ValueError: an argument is outside its range.
    """

    def __init__(self, states: int, actions: int, horizon: int, episodes: int, epsilon: Optional[float] = None,
                 delta: Optional[float] = None, failure_probability: float = 0.1, seed: _rng.Seed = None, *,
                 counter_noise: str = "gaussian"):
        eps = None if epsilon is None else V.positive("epsilon", epsilon)
        noise = V.choice("counter_noise", counter_noise, COUNTER_NOISES)
        if eps is None and delta is not None:
            raise ValueError(f"delta needs an epsilon (epsilon=None is the non-private reference), got {delta!r}")
        d = None if eps is None else _check_delta(noise, delta)
        self._setup(V.positive_int("states", states), V.positive_int("actions", actions),
                    V.positive_int("horizon", horizon), V.positive_int("episodes", episodes), eps, d,
                    V.open_unit("failure_probability", failure_probability), seed, noise)

    @classmethod
    def unchecked(cls, states: int, actions: int, horizon: int, episodes: int, epsilon: Optional[float],
                  delta: Optional[float], failure_probability: float, seed: _rng.Seed,
                  counter_noise: str) -> "PrivateUCBVI":
        """The agent of the constructor from arguments the caller has validated (same draws).

        Args:
            states: S, an int >= 1 (not checked).
            actions: A, an int >= 1 (not checked).
            horizon: H, an int >= 1 (not checked).
            episodes: T, an int >= 1 (not checked).
            epsilon: JDP epsilon or None (not checked).
            delta: JDP delta or None (not checked).
            failure_probability: beta in (0, 1) (not checked).
            seed: as for the constructor.
            counter_noise: "gaussian" or "laplace" (not checked).

        Returns:
            The agent.
        """
        agent = cls.__new__(cls)
        agent._setup(states, actions, horizon, episodes, epsilon, delta, failure_probability, seed, counter_noise)
        return agent

    def _setup(self, s, a, h, t, eps, delta, beta, seed, noise) -> None:
        self.states, self.actions, self.horizon, self.episodes = s, a, h, t
        self.failure_probability = beta
        self.private = eps is not None
        self.epsilon = eps
        self.counter_noise = noise if self.private else None
        self.privacy_unit = PRIVACY_UNIT
        streams = _rng.spawn(seed, 4)
        self._rng = streams[3]  # tie-breaking only (data independent)
        shapes = {"rewards": (h, s, a), "counts": (h, s, a), "transitions": (h, s, a, s)}
        self.log_term = math.log(4.0 * s * a * h * t / beta)
        self.transition_factor = math.sqrt(s) if self.counter_noise == "gaussian" else float(s)
        if not self.private:
            self.noise_scale = 0.0
            self.error_bound = 0.0
            self.jdp_epsilon = self.jdp_delta = None
            self.counters = {name: ExactCounter(t, shape) for name, shape in shapes.items()}
            self.guarantee = "none (non-private reference: exact counters)"
            return
        self.noise_scale = _noise_scale(eps, h, t, noise, delta)
        self.error_bound = _error_bound(self.noise_scale, _covered(s, a, h, noise), t, beta, noise)
        streams_changed = SENSITIVE_STREAMS_PER_STEP * h
        if noise == "gaussian":
            mu = gaussian_psum_sensitivity_unchecked(t, streams=streams_changed) / self.noise_scale
            self.jdp_epsilon = _gaussian.epsilon_exact_unchecked(delta, mu)  # upper bound, <= target
            self.jdp_delta = delta
            self.counters = {name: GaussianBinaryCounter.unchecked(t, self.noise_scale, shape, seed=st)
                             for (name, shape), st in zip(shapes.items(), streams[:3])}
            self.guarantee = (f"({self.jdp_epsilon:.6g}, {delta:g})-JDP for one user's episode (replaced): "
                              f"Gaussian counters, sigma {self.noise_scale:.6g} on the l2 sensitivity "
                              f"sqrt(6HL) (exact Gaussian profile)")
        else:
            per_counter = t.bit_length() / self.noise_scale
            self.jdp_epsilon = streams_changed * per_counter
            self.jdp_delta = 0.0
            self.counters = {name: BinaryCounter.unchecked(t, per_counter, shape, seed=st)
                             for (name, shape), st in zip(shapes.items(), streams[:3])}
            self.guarantee = (f"{self.jdp_epsilon:.6g}-JDP for one user's episode (replaced): Laplace counters "
                              f"at epsilon/(6H) = {per_counter:.6g} each")

    @property
    def releases(self) -> dict:
        """Current counter releases {"rewards", "counts", "transitions"} (copies)."""
        return {name: c.estimate for name, c in self.counters.items()}

    def q_values(self) -> np.ndarray:
        """Q^ (H, S, A) of :func:`optimistic_q` on the current releases, with this agent's E and L.

        Returns:
            Q^, shape (H, S, A).
        """
        rel = self.releases
        return _optimistic_q(rel["rewards"], rel["counts"], rel["transitions"], self.error_bound, self.log_term,
                             self.transition_factor)


@dataclass(frozen=True)
class UCBVIRun:
    """Outcome of :func:`run_ucbvi`: exact per-episode regret rho* - rho^{pi_k} and the settings.

    Fields: ``episode_regret`` (T,), ``optimal_return`` rho*, ``uniform_regret`` rho* - rho^uniform (the
    trivial reference, exact), ``epsilon``, ``delta`` (the JDP delta: 0 for Laplace, None without privacy),
    ``jdp_epsilon``, ``counter_noise``, ``noise_scale``, ``error_bound`` E, ``log_term`` L,
    ``max_counter_error`` (largest |release - count| seen, a diagnostic not released by the agent),
    ``failure_probability``, ``seed``, ``privacy_unit``, ``guarantee``, ``info``.
    """

    episode_regret: np.ndarray
    optimal_return: float
    uniform_regret: float
    epsilon: Optional[float]
    delta: Optional[float]
    jdp_epsilon: Optional[float]
    counter_noise: Optional[str]
    noise_scale: float
    error_bound: float
    log_term: float
    max_counter_error: float
    failure_probability: float
    seed: object = None
    privacy_unit: str = PRIVACY_UNIT
    guarantee: str = ""
    info: dict = field(default_factory=dict)

    @property
    def regret_per_episode(self) -> float:
        """Mean exact regret per episode, sum_k (rho* - rho^{pi_k}) / T."""
        return float(self.episode_regret.mean())

    def to_dict(self) -> dict:
        """JSON-ready summary (no per-episode array): what a command-line record of one run holds.

        Returns:
            A dict with the method, the privacy unit and guarantee, the noise and error bound, and the exact
            regret per episode beside the uniform policy's.
        """
        from privcal.records import clean

        private = self.epsilon is not None
        return clean({"method": "private-ucb-vi" if private else "ucb-vi (non-private)",
                      "privacy_unit": "episode" if private else None,
                      "privacy_unit_description": PRIVACY_UNIT if private else None, "guarantee": self.guarantee,
                      "epsilon": self.epsilon, "delta": self.delta,
                      "jdp_epsilon": self.jdp_epsilon, "counter_noise": self.counter_noise,
                      "noise_scale": self.noise_scale, "error_bound": self.error_bound, "log_term": self.log_term,
                      "max_counter_error": self.max_counter_error,
                      "counter_error_within_bound": self.max_counter_error <= self.error_bound or not private,
                      "failure_probability": self.failure_probability, "episodes": int(self.episode_regret.size),
                      "regret_per_episode": self.regret_per_episode,
                      "uniform_regret_per_episode": self.uniform_regret,
                      "optimal_return": self.optimal_return, "seed": self.seed, "mdp": self.info.get("mdp")})


def run_ucbvi(mdp: TabularMDP, episodes: int, epsilon: Optional[float] = None, delta: Optional[float] = None,
              failure_probability: float = 0.1, seed: _rng.Seed = None, *, counter_noise: str = "gaussian",
              progress: Optional[Callable[[int, int], None]] = None) -> UCBVIRun:
    """Run Private-UCB-VI (or the non-private reference, ``epsilon=None``) for ``episodes`` episodes.

    The regret of each episode is exact: rho* - p0 . V^{pi_k}_0 by backward induction on the true MDP.

    Args:
        mdp: the environment, a :class:`privcal.rl.pucb.tabular.TabularMDP`.
        episodes: number of episodes T (users), an integer >= 1.
        epsilon: JDP epsilon, in (0, inf); None (default) for the non-private reference.
        delta: JDP delta in (0, 1) with Gaussian counters; None with Laplace counters or no privacy.
        failure_probability: beta, in (0, 1); default 0.1.
        seed: None, a non-negative int, a SeedSequence or a Generator; the agent (children 0-3) and the
            episode sampling (child 4) get independent streams. Default None.
        counter_noise: "gaussian" (default) or "laplace".
        progress: called as ``progress(done, total)`` after each episode; default None.

    Returns:
        A :class:`UCBVIRun`.

    Raises:
        ValueError: an argument is outside its range.
    """
    if not isinstance(mdp, TabularMDP):
        raise ValueError(f"mdp must be a TabularMDP, got {type(mdp).__name__}")
    eps = None if epsilon is None else V.positive("epsilon", epsilon)
    noise = V.choice("counter_noise", counter_noise, COUNTER_NOISES)
    if eps is None and delta is not None:
        raise ValueError(f"delta needs an epsilon (epsilon=None is the non-private reference), got {delta!r}")
    d = None if eps is None else _check_delta(noise, delta)
    return run_ucbvi_unchecked(mdp, V.positive_int("episodes", episodes), eps, d,
                               V.open_unit("failure_probability", failure_probability), seed,
                               counter_noise=noise, progress=progress)


def run_ucbvi_unchecked(mdp: TabularMDP, episodes: int, epsilon: Optional[float], delta: Optional[float],
                        failure_probability: float, seed: _rng.Seed, *, counter_noise: str = "gaussian",
                        progress: Optional[Callable[[int, int], None]] = None) -> UCBVIRun:
    """:func:`run_ucbvi` on arguments already checked (the kernel experiments and the CLI call).

    Args:
        mdp: the :class:`privcal.rl.pucb.tabular.TabularMDP`.
        episodes: T, an int >= 1 (not checked).
        epsilon: JDP epsilon or None (not checked).
        delta: JDP delta or None (not checked).
        failure_probability: beta in (0, 1) (not checked).
        seed: as for :func:`run_ucbvi`.
        counter_noise: "gaussian" or "laplace" (not checked).
        progress: called as ``progress(done, total)`` after each episode, or None.

    Returns:
        A :class:`UCBVIRun`.
    """
    agent = PrivateUCBVI.unchecked(mdp.states, mdp.actions, mdp.horizon, episodes, epsilon, delta,
                                   failure_probability, seed, counter_noise)
    regret, optimal, max_err = play_episodes(agent, mdp, episodes, seed, progress)
    uniform = optimal - uniform_policy_return(mdp)
    return UCBVIRun(episode_regret=regret, optimal_return=optimal, uniform_regret=uniform,
                    epsilon=epsilon, delta=agent.jdp_delta, jdp_epsilon=agent.jdp_epsilon,
                    counter_noise=agent.counter_noise, noise_scale=agent.noise_scale,
                    error_bound=agent.error_bound, log_term=agent.log_term, max_counter_error=max_err,
                    failure_probability=failure_probability,
                    seed=int(seed) if isinstance(seed, numbers.Integral) else seed,
                    guarantee=agent.guarantee, info={"mdp": mdp.name, "episodes": episodes})
