r"""PUCB's formulas: the counters' privacy budget, their error bound E and PrivQ's optimism bonuses.

Vietri, Balle, Krishnamurthy & Wu, ICML 2020, Alg. 2 and 3 (the choices where the paper is silent, and the
proof of the valid budget split, are in :mod:`privcal.rl.pucb.agent`, which re-exports every public name of
this module). ``*_unchecked`` functions are the trusted kernels of their checked namesakes, for callers that
have validated their arguments.
"""

from __future__ import annotations

import math
from typing import Optional

import numpy as np
from numpy.typing import ArrayLike

from privcal import _validate as V
from privcal.analysis.counter_bounds import (
    accept_old_beta,
    gaussian_sigma,
)

__all__ = [
    "BUDGET_SPLITS",
    "ERROR_BOUNDS",
    "COUNTER_NOISES",
    "PRIVACY_UNIT",
    "UNKNOWN_RULES",
    "check_error_bound",
    "num_counters",
    "counter_epsilon",
    "counter_epsilon_paper",
    "jdp_epsilon",
    "counter_sigma",
    "check_counter_noise",
    "error_bound_paper",
    "bonus_phi",
    "bonus_psi",
    "private_q",
    "informative_count",
    "num_counters_unchecked",
    "counter_epsilon_unchecked",
    "counter_epsilon_paper_unchecked",
    "jdp_epsilon_unchecked",
    "error_bound_paper_unchecked",
    "private_q_unchecked",
    "informative_count_unchecked",
]

BUDGET_SPLITS = ("valid", "paper")
ERROR_BOUNDS = ("valid", "paper")
#: Noise of the private counters: Laplace (the paper's, epsilon-JDP) or Gaussian ((epsilon, delta)-JDP).
COUNTER_NOISES = ("laplace", "gaussian")
#: What one user is, and which runs are neighbours (VBKW Def. 3 and 4).
PRIVACY_UNIT = ("one user = one episode's trajectory (H + 1 states, H actions, H rewards); "
                "neighbouring runs replace one user (t-neighbours, VBKW Def. 3: joint DP under continual "
                "observation)")


def check_error_bound(error_bound: str) -> str:
    """``error_bound`` checked against :data:`ERROR_BOUNDS`; the former name "union" means "valid".

    Args:
        error_bound: "valid" or "paper" (see :class:`~privcal.rl.pucb.agent.PUCB`); "union", the former spelling of "valid",
            warns (DeprecationWarning) and is read as "valid".

    Returns:
        The checked rule, "valid" or "paper".

    Raises:
        ValueError: ``error_bound`` is not one of :data:`ERROR_BOUNDS`.
    """
    if error_bound == "union":
        import warnings

        warnings.warn('error_bound="union" is now spelled "valid"', DeprecationWarning, stacklevel=3)
        return "valid"
    return V.choice("error_bound", error_bound, ERROR_BOUNDS)
UNKNOWN_RULES = ("optimistic", "paper")

# ----------------------------------------------------------------------------------------------
# formulas
# ----------------------------------------------------------------------------------------------

def num_counters(states: int, actions: int, horizon: int) -> int:
    """Number of private counters PUCB keeps: K = 2 S A H + S^2 A H (VBKW Alg. 2 / Alg. 3).

    Args:
        states: number of states S, an integer >= 1.
        actions: number of actions A, an integer >= 1.
        horizon: episode length H, an integer >= 1.

    Returns:
        K, an integer >= 3.

    Raises:
        ValueError: an argument is not a positive integer.
    """
    return num_counters_unchecked(V.positive_int("states", states), V.positive_int("actions", actions),
                         V.positive_int("horizon", horizon))


def num_counters_unchecked(states: int, actions: int, horizon: int) -> int:
    """:func:`num_counters` without validation (trusted kernel; arguments positive ints).

    Args:
        states: number of states S, an integer >= 1 (not checked).
        actions: number of actions A, an integer >= 1 (not checked).
        horizon: episode length H, an integer >= 1 (not checked).
    """
    s, a, h = states, actions, horizon
    return 2 * s * a * h + s * s * a * h


def counter_epsilon_paper(epsilon: float, horizon: int) -> float:
    """Per-counter epsilon as printed: epsilon' = epsilon / (3H) (VBKW Alg. 2).

    Fails under Definition 3 (replace-one neighbours): it gives 2 epsilon-JDP, see
    :func:`counter_epsilon`.

    Args:
        epsilon: target JDP epsilon of the agent, in (0, inf).
        horizon: episode length H, an integer >= 1.

    Returns:
        epsilon', in (0, inf).

    Raises:
        ValueError: an argument is outside its range.
    """
    return counter_epsilon_paper_unchecked(V.positive("epsilon", epsilon), V.positive_int("horizon", horizon))


def counter_epsilon_paper_unchecked(epsilon: float, horizon: int) -> float:
    """:func:`counter_epsilon_paper` without validation (trusted kernel).

    Args:
        epsilon: target JDP epsilon of the agent, in (0, inf) (not checked).
        horizon: episode length H, an integer >= 1 (not checked).
    """
    return epsilon / (3.0 * horizon)


def counter_epsilon(epsilon: float, horizon: int) -> float:
    """Per-counter epsilon that makes PUCB epsilon-JDP under VBKW Def. 3: epsilon / (6H).

    Replacing user t changes, at each of the H steps, one unit of input in two counters of each of
    the three families (reward values in [0, 1]): L1 change <= 6H, each unit costing epsilon' by the
    binary mechanism (CSS11 Thm 3.5) and basic composition; the billboard argument of VBKW does
    the rest.

    Args:
        epsilon: target JDP epsilon of the agent, in (0, inf).
        horizon: episode length H, an integer >= 1.

    Returns:
        epsilon', in (0, inf).

    Raises:
        ValueError: an argument is outside its range.
    """
    return counter_epsilon_unchecked(V.positive("epsilon", epsilon), V.positive_int("horizon", horizon))


def counter_epsilon_unchecked(epsilon: float, horizon: int) -> float:
    """:func:`counter_epsilon` without validation (trusted kernel).

    Args:
        epsilon: target JDP epsilon of the agent, in (0, inf) (not checked).
        horizon: episode length H, an integer >= 1 (not checked).
    """
    return epsilon / (6.0 * horizon)  # guarded by tests/test_pucb.py::test_num_counters_and_budget


def jdp_epsilon(counter_eps: float, horizon: int) -> float:
    """Upper bound on the JDP epsilon of PUCB run with per-counter epsilon': 6 H epsilon'.

    Same argument as :func:`counter_epsilon` (L1 change of the counters' inputs <= 6H per user).

    Args:
        counter_eps: per-counter epsilon', in (0, inf).
        horizon: episode length H, an integer >= 1.

    Returns:
        The JDP epsilon bound, in (0, inf).

    Raises:
        ValueError: an argument is outside its range.
    """
    return jdp_epsilon_unchecked(V.positive("counter_eps", counter_eps), V.positive_int("horizon", horizon))


def jdp_epsilon_unchecked(counter_eps: float, horizon: int) -> float:
    """:func:`jdp_epsilon` without validation (trusted kernel).

    Args:
        counter_eps: per-counter epsilon', in (0, inf) (not checked).
        horizon: episode length H, an integer >= 1 (not checked).
    """
    return 6.0 * horizon * counter_eps  # guarded by tests/test_pucb.py::test_num_counters_and_budget


def counter_sigma(epsilon: float, delta: float, horizon: int, episodes: int) -> float:
    r"""Noise sigma of PUCB's Gaussian counters that makes the agent (epsilon, delta)-JDP.

    sigma = :func:`privcal.analysis.counter.gaussian_sigma` (T, epsilon, delta, streams=6H): one user (one
    episode, replaced) changes the round-t input of at most 6H counters by at most 1 each (see
    :func:`counter_epsilon`), so the vector of all p-sums of all counters moves by at most
    sqrt(6 H L) in l2, L = floor(log2 T) + 1; calibrated with the exact Gaussian profile (Balle &
    Wang 2018). The module docstring gives the adaptive-composition and billboard argument.

    Args:
        epsilon: target JDP epsilon of the agent, in (0, inf).
        delta: target JDP delta of the agent, in (0, 1).
        horizon: episode length H, an integer >= 1.
        episodes: number of episodes T (the counters' stream length), an integer >= 1.

    Returns:
        sigma, the standard deviation of the noise on every p-sum (unit: counts), in (0, inf).

    Raises:
        ValueError: an argument is outside its range.
    """
    return gaussian_sigma(V.positive_int("episodes", episodes), V.positive("epsilon", epsilon),
                          V.open_unit("delta", delta), streams=6 * V.positive_int("horizon", horizon))  # guarded by tests/test_pucb.py::test_counter_sigma_is_the_exact_profile_at_sqrt_6hl


def check_counter_noise(counter_noise: str, epsilon: Optional[float], delta: Optional[float],
                        budget_split: str, error_bound: str) -> Optional[float]:
    """``counter_noise`` and ``delta`` checked together with the options they constrain (one owner
    of these refusals for the agent, :func:`run_pucb` and the CLI).

    Gaussian counters need an epsilon and a delta in (0, 1) and refuse the paper's budget split and
    E_epsilon (Laplace formulas); Laplace counters refuse a delta (they are pure epsilon-JDP).

    Args:
        counter_noise: "laplace" or "gaussian".
        epsilon: the JDP epsilon (already validated), or None for the non-private baseline.
        delta: the JDP delta, in (0, 1) for Gaussian counters, None for Laplace counters.
        budget_split: "valid" or "paper" (already validated).
        error_bound: "valid" or "paper" (already validated).

    Returns:
        The delta to use: the validated delta (Gaussian) or None (Laplace).

    Raises:
        ValueError: a refusal, in one line naming the argument.
    """
    V.choice("counter_noise", counter_noise, COUNTER_NOISES)
    if counter_noise == "laplace":
        if delta is not None:
            raise ValueError(f"delta is used only with counter_noise='gaussian' (the Laplace counters are "
                             f"pure epsilon-JDP), got delta={delta!r}")
        return None
    if epsilon is None:
        raise ValueError("counter_noise='gaussian' needs an epsilon (epsilon=None is the non-private "
                         "baseline, with exact counters)")
    if delta is None:
        raise ValueError("delta must be in (0, 1) for counter_noise='gaussian', got None")
    if error_bound == "paper":
        raise ValueError("error_bound='paper' is the paper's E_epsilon, a Laplace formula; with "
                         "counter_noise='gaussian' use error_bound='valid'")
    if budget_split == "paper":
        raise ValueError("budget_split='paper' is the paper's Laplace split epsilon/(3H); with "
                         "counter_noise='gaussian' use budget_split='valid'")
    return V.open_unit("delta", delta)


@accept_old_beta
def error_bound_paper(epsilon: float, states: int, actions: int, horizon: int, episodes: int,
                      failure_probability: float) -> float:
    r"""E_epsilon = (3/epsilon) H ln((2SAH + S^2AH)/beta') log2(T)^{5/2}, with beta' = beta.

    VBKW Alg. 3 (footnote 6 has (beta')^{-1} in the denominator, a typo: ln(K beta') < 0).
    It is the counter bound (4/epsilon') ln(K/beta') log(T)^{5/2} at epsilon' = epsilon/(3H) but
    with constant 3H instead of 12H, i.e. 4 times smaller than the union bound it stands for;
    it fails at small T (see :func:`privcal.rl.pucb.checks.pucb_error_bound_check`).

    Args:
        epsilon: JDP epsilon of the agent, in (0, inf).
        states: number of states S, an integer >= 1.
        actions: number of actions A, an integer >= 1.
        horizon: episode length H, an integer >= 1.
        episodes: number of episodes T, an integer >= 1.
        failure_probability: the paper's beta', in (0, 1) (old keyword ``beta=`` deprecated).

    Returns:
        E_epsilon (unit: counts), >= 0.

    Raises:
        ValueError: an argument is outside its range.
    """
    return error_bound_paper_unchecked(
        V.positive("epsilon", epsilon), V.positive_int("states", states),
        V.positive_int("actions", actions), V.positive_int("horizon", horizon),
        V.positive_int("episodes", episodes),
        V.open_unit("failure_probability", failure_probability))


def error_bound_paper_unchecked(epsilon: float, states: int, actions: int, horizon: int, episodes: int,
                                failure_probability: float) -> float:
    """:func:`error_bound_paper` without validation (trusted kernel; VBKW Alg. 3 as printed).

    Args:
        epsilon: JDP epsilon of the agent, in (0, inf) (not checked).
        states: number of states S, an integer >= 1 (not checked).
        actions: number of actions A, an integer >= 1 (not checked).
        horizon: episode length H, an integer >= 1 (not checked).
        episodes: number of episodes T, an integer >= 1 (not checked).
        failure_probability: the paper's beta', in (0, 1) (not checked).
    """
    k = num_counters_unchecked(states, actions, horizon)
    return (3.0 / epsilon * horizon * math.log(k / failure_probability)
            * math.log2(episodes) ** 2.5)


@accept_old_beta
def bonus_phi(counts: ArrayLike, error_bound: float, episodes: int,
              failure_probability: float) -> np.ndarray:
    """Sampling-error bonus phi~ = sqrt(2 ln(T/beta') / max(n~ - E, 1)) (VBKW footnote 7).

    Args:
        counts: noisy visit counts n~ (any shape, any real values).
        error_bound: counter error bound E, in [0, inf).
        episodes: number of episodes T, an integer >= 1.
        failure_probability: the paper's beta', in (0, 1) (old keyword ``beta=`` deprecated).

    Returns:
        phi~, an array shaped like ``counts``.

    Raises:
        ValueError: an argument is outside its range.
    """
    return _bonus_phi(np.asarray(counts, dtype=float), V.nonnegative("error_bound", error_bound),
                      V.positive_int("episodes", episodes),
                      V.open_unit("failure_probability", failure_probability))


def _bonus_phi(counts, error_bound: float, episodes: int, failure_probability: float):
    n = np.asarray(counts, dtype=float)
    return np.sqrt(2.0 * math.log(episodes / failure_probability)
                   / np.maximum(n - error_bound, 1.0))


def bonus_psi(counts: ArrayLike, error_bound: float, states: int, horizon: int) -> np.ndarray:
    """Counter-error bonus psi~ = (1 + S H)(3E/n~ + 2E^2/n~^2) (VBKW footnote 7); inf if n~ <= 0.

    Args:
        counts: noisy visit counts n~ (any shape, any real values).
        error_bound: counter error bound E, in [0, inf).
        states: number of states S, an integer >= 1.
        horizon: episode length H, an integer >= 1.

    Returns:
        psi~, an array shaped like ``counts`` (inf where n~ <= 0; 0 where n~ > 0 if E = 0).

    Raises:
        ValueError: an argument is outside its range.
    """
    return _bonus_psi(np.asarray(counts, dtype=float), V.nonnegative("error_bound", error_bound),
                      V.positive_int("states", states), V.positive_int("horizon", horizon))


def _bonus_psi(counts, error_bound: float, states: int, horizon: int):
    e = error_bound
    n = np.asarray(counts, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        psi = (1.0 + states * horizon) * (3.0 * e / n + 2.0 * e * e / (n * n))
    if e == 0.0:
        psi = np.where(n > 0, 0.0, np.inf)
    return np.where(n > 0, psi, np.inf)


@accept_old_beta
def private_q(rewards: ArrayLike, counts: ArrayLike, transitions: ArrayLike, error_bound: float,
              episodes: int, failure_probability: float, *,
              unknown: str = "optimistic") -> np.ndarray:
    r"""PrivQ (VBKW Alg. 3): optimistic Q~+ of shape (H, S, A) from counter releases.

    For h = H..1: conf = (H+1) phi~ + psi~ if n~ >= 2E else H;
    Q~ = (r~ + sum_{s'} V~_{h+1}(s') m~(s')) / n~; Q~+ = min{H, Q~ + conf}; V~_h = max_a Q~+.
    Unknown pairs (n~ < 2E): ``unknown="optimistic"`` gives Q~+ = H; ``"paper"`` gives
    min{H, Q~ + H} as printed (H where n~ <= 0, Q~ undefined), which is not optimistic when the
    noisy Q~ < 0. With exact counts and E = 0 this is the UBEV-style baseline (bonus
    (H+1) sqrt(2 ln(T/beta)/max(n, 1)), no privacy term; unvisited pairs get H).

    Args:
        rewards: reward releases r~, shape (H, S, A).
        counts: visit-count releases n~, shape (H, S, A).
        transitions: transition-count releases m~, shape (H, S, A, S).
        error_bound: counter error bound E, in [0, inf).
        episodes: number of episodes T, an integer >= 1.
        failure_probability: the paper's beta', in (0, 1) (old keyword ``beta=`` deprecated).
        unknown: rule for pairs with n~ < 2E, "optimistic" (default) or "paper".

    Returns:
        Q~+, shape (H, S, A), values <= H.

    Raises:
        ValueError: an argument is outside its range or the shapes disagree.
    """
    V.choice("unknown", unknown, UNKNOWN_RULES)
    r = np.asarray(rewards, dtype=float)
    n = np.asarray(counts, dtype=float)
    m = np.asarray(transitions, dtype=float)
    if r.ndim != 3 or n.shape != r.shape or m.shape != r.shape + (r.shape[1],):
        raise ValueError("rewards and counts must have shape (H, S, A) and transitions "
                         f"(H, S, A, S); got {r.shape}, {n.shape}, {m.shape}")
    return private_q_unchecked(r, n, m, V.nonnegative("error_bound", error_bound),
                      V.positive_int("episodes", episodes),
                      V.open_unit("failure_probability", failure_probability), unknown=unknown)


def private_q_unchecked(rewards: np.ndarray, counts: np.ndarray, transitions: np.ndarray,
                        error_bound: float, episodes: int, failure_probability: float, *,
                        unknown: str = "optimistic") -> np.ndarray:
    """:func:`private_q` without validation (trusted kernel; arrays as :func:`private_q` checks them).

    Args:
        rewards: reward releases r~, shape (H, S, A) (not checked).
        counts: visit-count releases n~, shape (H, S, A) (not checked).
        transitions: transition-count releases m~, shape (H, S, A, S) (not checked).
        error_bound: counter error bound E, in [0, inf) (not checked).
        episodes: number of episodes T, an integer >= 1 (not checked).
        failure_probability: the paper's beta', in (0, 1) (not checked).
        unknown: rule for pairs with n~ < 2E, "optimistic" (default) or "paper" (not checked).
    """
    r, n, m, e = rewards, counts, transitions, error_bound
    hor, s, _ = r.shape
    positive_n = n > 0
    known = positive_n & (n >= 2.0 * e)
    n_safe = np.where(positive_n, n, 1.0)
    conf = np.where(known, (hor + 1) * _bonus_phi(n_safe, e, episodes, failure_probability)
                    + _bonus_psi(n_safe, e, s, hor), float(hor))
    use_formula = known if unknown == "optimistic" else positive_n
    q_plus = np.empty_like(r)
    v_next = np.zeros(s)
    for h in range(hor - 1, -1, -1):
        q = (r[h] + m[h] @ v_next) / n_safe[h]
        q_plus[h] = np.where(use_formula[h], np.minimum(hor, q + conf[h]), float(hor))
        v_next = q_plus[h].max(axis=1)
    return q_plus


@accept_old_beta
def informative_count(error_bound: float, states: int, horizon: int, episodes: int,
                      failure_probability: float) -> float:
    """Smallest count n~ at which PrivQ's bonus drops below H (below it, Q~+ = H: no learning).

    Solves (H + 1) phi~(n) + psi~(n) = H for n >= 2E by bisection (both terms decrease in n).
    Returns inf if the bonus never drops below H. Derived from VBKW Alg. 3 / footnote 7.

    Args:
        error_bound: counter error bound E, in [0, inf).
        states: number of states S, an integer >= 1.
        horizon: episode length H, an integer >= 1.
        episodes: number of episodes T, an integer >= 1.
        failure_probability: the paper's beta', in (0, 1) (old keyword ``beta=`` deprecated).

    Returns:
        The count (unit: visits), in (0, inf].

    Raises:
        ValueError: an argument is outside its range.
    """
    return informative_count_unchecked(V.nonnegative("error_bound", error_bound),
                              V.positive_int("states", states), V.positive_int("horizon", horizon),
                              V.positive_int("episodes", episodes),
                              V.open_unit("failure_probability", failure_probability))


def informative_count_unchecked(error_bound: float, states: int, horizon: int, episodes: int,
                                failure_probability: float) -> float:
    """:func:`informative_count` without validation (trusted kernel).

    Args:
        error_bound: counter error bound E, in [0, inf) (not checked).
        states: number of states S, an integer >= 1 (not checked).
        horizon: episode length H, an integer >= 1 (not checked).
        episodes: number of episodes T, an integer >= 1 (not checked).
        failure_probability: the paper's beta', in (0, 1) (not checked).
    """
    e, s, h = error_bound, states, horizon

    def conf(n: float) -> float:
        return float((h + 1) * _bonus_phi(n, e, episodes, failure_probability)
                     + _bonus_psi(n, e, s, h))

    low = max(2.0 * e, 1e-12)
    if conf(low) < h:
        return low
    high = max(low * 2.0, 1.0)
    while conf(high) >= h:
        high *= 2.0
        if high > 1e300:
            return math.inf
    for _ in range(200):
        mid = 0.5 * (low + high)
        if conf(mid) < h:
            high = mid
        else:
            low = mid
    return high
