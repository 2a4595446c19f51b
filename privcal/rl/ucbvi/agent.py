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
from typing import Any, Callable, Optional

import numpy as np

from privcal import _rng
from privcal import _validate as V
from privcal.analysis import gaussian as _gaussian
from privcal.analysis.counter import (
    BinaryCounter,
    ExactCounter,
    GaussianBinaryCounter,
    gaussian_psum_sensitivity_unchecked,
)
from privcal.rl.pucb.bounds import num_counters
from privcal.rl.pucb.episodes import EpisodeCounterAgent, play_episodes
from privcal.rl.ucbvi.bounds import (
    COUNTER_NOISES,
    PRIVACY_UNIT,
    SENSITIVE_STREAMS_PER_STEP,
    bonus,
    check_delta,
    confidence_log,
    counter_error_bound,
    counter_error_bound_unchecked,
    counter_noise_scale,
    covered_streams,
    covered_streams_unchecked,
    episode_inputs,
    noise_scale_unchecked,
    optimistic_q,
    optimistic_q_unchecked,
    transition_factor,
)
from privcal.rl.pucb.tabular import TabularMDP, uniform_policy_return

__all__ = [
    "UCBVISettings",
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

@dataclass(frozen=True)
class UCBVISettings:
    """A Private-UCB-VI run's privacy, confidence, seed and counters (defaults in one place: here; checked by
    :class:`PrivateUCBVI` and :func:`run_ucbvi`, taken as given by :meth:`PrivateUCBVI.unchecked` and
    :func:`run_ucbvi_unchecked`).

    Attributes:
        epsilon: JDP epsilon, in (0, inf); None (default) for the non-private reference.
        delta: JDP delta in (0, 1) with ``counter_noise="gaussian"``; None with "laplace" or no privacy.
        failure_probability: beta of the optimism event, in (0, 1); default 0.1 (half for the counters).
        seed: None, a non-negative int, a SeedSequence or a Generator; default None.
        counter_noise: "gaussian" (default) or "laplace" (see the module docstring).
    """

    epsilon: Optional[float] = None
    delta: Optional[float] = None
    failure_probability: float = 0.1
    seed: _rng.Seed = None
    counter_noise: str = "gaussian"


class PrivateUCBVI(EpisodeCounterAgent):
    r"""Private-UCB-VI agent (Chowdhury & Zhou 2021) with the valid bonus; ``epsilon=None``: non-private UCB-VI.

    Per episode: ``pi = agent.policy()`` (greedy in :meth:`q_values`, ties broken uniformly at random,
    shape (H, S)), run the episode, ``agent.observe(states, actions, rewards)`` (each counter fed once).

    Args:
        states: number of states S, an integer >= 1.
        actions: number of actions A, an integer >= 1.
        horizon: episode length H, an integer >= 1.
        episodes: number of episodes T the counters are built for, an integer >= 1.
        epsilon: JDP epsilon, in (0, inf); default None: the one of ``settings`` (None there: the non-private
            reference).
        settings: a :class:`UCBVISettings`; default None: built from ``epsilon`` and ``keywords``.
        keywords: the other fields of :class:`UCBVISettings` (their defaults live there), replacing those of
            ``settings``:
            ``delta``: JDP delta in (0, 1) with ``counter_noise="gaussian"``; None (default) with "laplace" or
            no privacy.
            ``failure_probability``: beta of the optimism event, in (0, 1); default 0.1 (half for the counters).
            ``seed``: None (default), a non-negative int, a SeedSequence or a Generator.
            ``counter_noise``: "gaussian" (default) or "laplace" (see the module docstring).

    Attributes: ``noise_scale`` (sigma or b), ``error_bound`` E, ``log_term`` L, ``jdp_epsilon`` and
    ``jdp_delta`` (the guarantee: an upper bound on epsilon at ``jdp_delta``), ``privacy_unit``,
    ``guarantee`` (in words), ``counters`` (the three families).

    Raises:
        ValueError: an argument is outside its range.
        TypeError: a keyword is no field of :class:`UCBVISettings`, or ``settings`` is of another type.
    """

    def __init__(self, states: int, actions: int, horizon: int, episodes: int, epsilon: Optional[float] = None,
                 settings: Optional[UCBVISettings] = None, **keywords: Any):
        given = V.settings_with("PrivateUCBVI.__init__", UCBVISettings, settings, _privacy(keywords, epsilon))

        def dims() -> tuple:
            return (V.positive_int("states", states), V.positive_int("actions", actions),
                    V.positive_int("horizon", horizon), V.positive_int("episodes", episodes))

        sizes, checked = _checked_settings(given, dims)
        self._setup(*sizes, checked)

    @classmethod
    def unchecked(cls, states: int, actions: int, horizon: int, episodes: int,
                  settings: UCBVISettings) -> "PrivateUCBVI":
        """The agent of the constructor from arguments the caller has validated (same draws).

        Args:
            states: S, an int >= 1 (not checked).
            actions: A, an int >= 1 (not checked).
            horizon: H, an int >= 1 (not checked).
            episodes: T, an int >= 1 (not checked).
            settings: the :class:`UCBVISettings` (not checked: epsilon and delta as the constructor leaves them,
                ``failure_probability`` in (0, 1), ``counter_noise`` "gaussian" or "laplace").

        Returns:
            The agent.
        """
        agent = cls.__new__(cls)
        agent._setup(states, actions, horizon, episodes, settings)
        return agent

    def _setup(self, s, a, h, t, settings: UCBVISettings) -> None:
        eps, delta, beta, seed = settings.epsilon, settings.delta, settings.failure_probability, settings.seed
        noise = settings.counter_noise
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
        self.noise_scale = noise_scale_unchecked(eps, h, t, noise, delta)
        covered = covered_streams_unchecked(s, a, h, noise)
        self.error_bound = counter_error_bound_unchecked(self.noise_scale, covered, t, beta, noise)
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
        return optimistic_q_unchecked(rel["rewards"], rel["counts"], rel["transitions"], self.error_bound,
                                      self.log_term, self.transition_factor)


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
              settings: Optional[UCBVISettings] = None, *, progress: Optional[Callable[[int, int], None]] = None,
              **keywords: Any) -> UCBVIRun:
    """Run Private-UCB-VI (or the non-private reference, ``epsilon=None``) for ``episodes`` episodes.

    The regret of each episode is exact: rho* - p0 . V^{pi_k}_0 by backward induction on the true MDP.

    Args:
        mdp: the environment, a :class:`privcal.rl.pucb.tabular.TabularMDP`.
        episodes: number of episodes T (users), an integer >= 1.
        epsilon: JDP epsilon, in (0, inf); default None: the one of ``settings`` (None there: the non-private
            reference).
        delta: JDP delta in (0, 1) with Gaussian counters; None with Laplace counters or no privacy; default
            None: the one of ``settings``.
        settings: a :class:`UCBVISettings`; default None: built from ``epsilon``, ``delta`` and ``keywords``.
        progress: called as ``progress(done, total)`` after each episode; default None.
        keywords: the other fields of :class:`UCBVISettings` (their defaults live there), replacing those of
            ``settings``:
            ``failure_probability``: beta, in (0, 1); default 0.1.
            ``seed``: None (default), a non-negative int, a SeedSequence or a Generator; the agent (children
            0-3) and the episode sampling (child 4) get independent streams.
            ``counter_noise``: "gaussian" (default) or "laplace".

    Returns:
        A :class:`UCBVIRun`.

    Raises:
        ValueError: an argument is outside its range.
        TypeError: a keyword is no field of :class:`UCBVISettings`, or ``settings`` is of another type.
    """
    given = V.settings_with("run_ucbvi", UCBVISettings, settings, _privacy(keywords, epsilon, delta))
    if not isinstance(mdp, TabularMDP):
        raise ValueError(f"mdp must be a TabularMDP, got {type(mdp).__name__}")
    t, checked = _checked_settings(given, lambda: V.positive_int("episodes", episodes))
    return run_ucbvi_unchecked(mdp, t, checked, progress=progress)


def _privacy(keywords: dict, epsilon: Optional[float], delta: Optional[float] = None) -> dict:
    """``keywords`` with ``epsilon`` and ``delta`` added where given (not None): the fields they replace."""
    given = {name: value for name, value in (("epsilon", epsilon), ("delta", delta)) if value is not None}
    return {**given, **keywords}


def _checked_settings(given: UCBVISettings, check_sizes: Callable[[], Any]) -> tuple:
    """(sizes, checked :class:`UCBVISettings`) for :class:`PrivateUCBVI` and :func:`run_ucbvi`, each value checked
    once, in this order: epsilon, the counter noise, delta against them, the sizes (``check_sizes()``), the
    failure probability."""
    eps = None if given.epsilon is None else V.positive("epsilon", given.epsilon)
    noise = V.choice("counter_noise", given.counter_noise, COUNTER_NOISES)
    if eps is None and given.delta is not None:
        raise ValueError(f"delta needs an epsilon (epsilon=None is the non-private reference), got {given.delta!r}")
    d = None if eps is None else check_delta(noise, given.delta)
    sizes = check_sizes()
    beta = V.open_unit("failure_probability", given.failure_probability)
    return sizes, UCBVISettings(eps, d, beta, given.seed, noise)


def run_ucbvi_unchecked(mdp: TabularMDP, episodes: int, settings: UCBVISettings, *,
                        progress: Optional[Callable[[int, int], None]] = None) -> UCBVIRun:
    """:func:`run_ucbvi` on arguments already checked (the kernel experiments and the CLI call).

    Args:
        mdp: the :class:`privcal.rl.pucb.tabular.TabularMDP`.
        episodes: T, an int >= 1 (not checked).
        settings: the :class:`UCBVISettings` (not checked, as :meth:`PrivateUCBVI.unchecked` takes them).
        progress: called as ``progress(done, total)`` after each episode, or None.

    Returns:
        A :class:`UCBVIRun`.
    """
    epsilon, failure_probability, seed = settings.epsilon, settings.failure_probability, settings.seed
    agent = PrivateUCBVI.unchecked(mdp.states, mdp.actions, mdp.horizon, episodes, settings)
    regret, optimal, max_err = play_episodes(agent, mdp, episodes, seed, progress)
    uniform = optimal - uniform_policy_return(mdp)
    return UCBVIRun(episode_regret=regret, optimal_return=optimal, uniform_regret=uniform,
                    epsilon=epsilon, delta=agent.jdp_delta, jdp_epsilon=agent.jdp_epsilon,
                    counter_noise=agent.counter_noise, noise_scale=agent.noise_scale,
                    error_bound=agent.error_bound, log_term=agent.log_term, max_counter_error=max_err,
                    failure_probability=failure_probability,
                    seed=int(seed) if isinstance(seed, numbers.Integral) else seed,
                    guarantee=agent.guarantee, info={"mdp": mdp.name, "episodes": episodes})
