r"""Private-UCB-VI's formulas: the confidence log L, the counters' noise scale and valid error bound E, the bonus
and the optimistic Q^ (their derivation is in the docstring of ``privcal.rl.ucbvi.agent``, which re-exports the
public names here, and in docs/ucbvi.md).
"""

from __future__ import annotations

import math
from typing import Optional

import numpy as np
from numpy.typing import ArrayLike

from privcal import _validate as V
from privcal.analysis.counter import (
    error_bound as laplace_error_bound,
    gaussian_error_bound_unchecked,
    gaussian_sigma_unchecked,
)
from privcal.rl.pucb.bounds import num_counters
from privcal.rl.pucb.episodes import episode_counter_inputs

__all__ = [
    "PRIVACY_UNIT",
    "COUNTER_NOISES",
    "SENSITIVE_STREAMS_PER_STEP",
    "confidence_log",
    "counter_noise_scale",
    "check_delta",
    "noise_scale_unchecked",
    "covered_streams",
    "covered_streams_unchecked",
    "counter_error_bound",
    "counter_error_bound_unchecked",
    "transition_factor",
    "bonus",
    "optimistic_q",
    "optimistic_q_unchecked",
    "episode_inputs",
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
    d = check_delta(noise, delta)
    return noise_scale_unchecked(eps, h, t, noise, d)


def check_delta(noise: str, delta: Optional[float]) -> Optional[float]:
    """``delta`` checked against the counter noise: None for Laplace counters (pure epsilon-JDP), a value in
    (0, 1) for Gaussian ones.

    Args:
        noise: "gaussian" or "laplace" (trusted).
        delta: the JDP delta given, or None.

    Returns:
        The delta the counters use: None (Laplace) or the checked value (Gaussian).

    Raises:
        ValueError: a delta with Laplace counters, or none or one outside (0, 1) with Gaussian counters.
    """
    if noise == "laplace":
        if delta is not None:
            raise ValueError(f"delta is used only with counter_noise='gaussian' (Laplace counters are pure "
                             f"epsilon-JDP), got delta={delta!r}")
        return None
    if delta is None:
        raise ValueError("delta must be in (0, 1) for counter_noise='gaussian', got None")
    return V.open_unit("delta", delta)


def noise_scale_unchecked(eps: float, h: int, t: int, noise: str, delta: Optional[float]) -> float:
    """:func:`counter_noise_scale` on checked arguments (the trusted kernel the agent calls).

    Args:
        eps: JDP epsilon, in (0, inf) (trusted).
        h: horizon H, an int >= 1 (trusted).
        t: episodes T, an int >= 1 (trusted).
        noise: "gaussian" or "laplace" (trusted).
        delta: JDP delta in (0, 1) for "gaussian", None for "laplace" (trusted).

    Returns:
        sigma or b (unit: counts).
    """
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
    return covered_streams_unchecked(int(states), int(actions), int(horizon), noise)


def covered_streams_unchecked(s: int, a: int, h: int, noise: str) -> int:
    """:func:`covered_streams` on checked arguments.

    Args:
        s: number of states S, an int >= 1 (trusted).
        a: number of actions A, an int >= 1 (trusted).
        h: horizon H, an int >= 1 (trusted).
        noise: "gaussian" or "laplace" (trusted).

    Returns:
        The number of streams.
    """
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
    return counter_error_bound_unchecked(scale, k, t, beta, counter_noise)


def counter_error_bound_unchecked(scale: float, k: int, t: int, beta: float, noise: str) -> float:
    """:func:`counter_error_bound` on checked arguments, for ``k`` covered streams.

    Args:
        scale: Gaussian sigma or Laplace b of each p-sum, in (0, inf) (trusted).
        k: number of covered streams, an int >= 1 (trusted).
        t: episodes T, an int >= 1 (trusted).
        beta: the agent's total failure probability, in (0, 1) (trusted; the counters get beta / 2).
        noise: "gaussian" or "laplace" (trusted).

    Returns:
        E (unit: counts).
    """
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
    return optimistic_q_unchecked(r, n, m, V.nonnegative("error_bound", error_bound), V.positive("log_term", log_term),
                         V.nonnegative("transition_factor", transition_factor))


def optimistic_q_unchecked(r: np.ndarray, n: np.ndarray, m: np.ndarray, e: float, lt: float, f: float) -> np.ndarray:
    """:func:`optimistic_q` on checked float arrays (the trusted kernel the agent calls every episode).

    Args:
        r: reward-sum releases R~, shape (H, S, A) (trusted).
        n: visit-count releases N~, shape (H, S, A) (trusted).
        m: transition-count releases M~, shape (H, S, A, S) (trusted).
        e: the counters' error bound E, in [0, inf) (trusted).
        lt: L, in (0, inf) (trusted).
        f: F of :func:`bonus`, in [0, inf) (trusted).

    Returns:
        Q^, shape (H, S, A).
    """
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
