r"""PUCB and PrivQ (Vietri, Balle, Krishnamurthy & Wu, ICML 2020, Alg. 2 and 3) and the UBEV-style
non-private baseline: the agent, its formulas and :func:`run_pucb`.

The rest of the PUCB layer lives in its own modules of ``privcal.rl.pucb`` (whose names the package
``privcal.rl.pucb`` re-exports): ``experiments`` (regret experiments), ``plots`` (figures, matplotlib
imported lazily), ``checks`` (Monte Carlo checks of the counter and PrivQ bounds, the collusion
attack), ``tabular`` (the MDPs), ``episodes`` (the episode loop shared with Private-UCB-VI, whose names
this module re-exports), ``bounds`` (the counters' budget, the error bound E and PrivQ's bonuses, whose
names this module re-exports); ``sup_error_failure_lower_bound`` is defined in ``privcal.analysis.counter`` and
``clopper_pearson`` in ``privcal._stats``.

PUCB keeps three families of private counters, each one stream per (s, a, h) (or (s, a, s', h)) with
one value per episode: rewards r~(s, a, h), visits n~(s, a, h) and transitions m~(s, a, s', h),
2SAH + S^2AH counters in all (binary mechanism, :class:`privcal.analysis.counter.BinaryCounter`). Before each
episode PrivQ plans on the releases with the optimism bonus
    conf = (H + 1) phi~ + psi~   if n~ >= 2 E,   else H            (Alg. 3),
    phi~ = sqrt(2 ln(T/beta') / max(n~ - E, 1)),
    psi~ = (1 + S H) (3 E / n~ + 2 E^2 / n~^2)                        (footnote 7),
    E    = (3/epsilon) H ln((2SAH + S^2AH)/beta') log(T)^{5/2}         (Alg. 3; footnote 6),
Q~+ = min{H, Q~ + conf}, and the agent acts greedily (ties broken uniformly at random).
The non-private baseline is the same agent with exact counters and E = 0 (so psi~ = 0): one code
path.

Names: the paper's failure probability beta (and beta') is ``failure_probability`` here; in privcal
``beta`` is only the kernel parameter of exp(-beta |x - y|). The old keyword ``beta=`` is still
accepted, with a ``DeprecationWarning``.

Choices where the paper is silent or inconsistent (each is a parameter; defaults stated):
- beta' is not defined in the short paper: we use beta' = beta = ``failure_probability``.
- log(T) in E is read as log2(T) (the counters' bound writes ln for beta and log for T); the log of
  the union term is natural (it comes from ln(1/beta) of the counter bound).
- Footnote 6 writes ln((2SAH + S^2AH)/(beta')^{-1}) = ln(K beta'), negative for small beta';
  Algorithm 3 writes ln(K (beta')^{-1}). We use Algorithm 3.
- Where n~ < 2E ("unknown" pairs) conf = H, so Q~+ = min{H, Q~ + H}, which is H only if Q~ >= 0.
  With noisy counters Q~ = (r~ + m~ V~)/n~ can be very negative (small or negative n~, negative
  noise on r~), making Q~+ < 0 <= Q*: the printed PrivQ is then not optimistic. ``unknown=
  "optimistic"`` (default) sets Q~+ = H on unknown pairs, the optimism the analysis relies on;
  ``unknown="paper"`` applies min{H, Q~ + H} as printed (and H where n~ <= 0, Q~ being undefined).
- Privacy budget: the paper sets epsilon' = epsilon/(3H). Under Definition 3 (t-neighbours differ
  in the whole t-th user) one episode changes up to 2 counters of each family at each step by up to
  1 each (the old and the new (s, a, h)), so the counters' inputs move by up to 6H in L1 norm and
  epsilon/(3H) only gives 2 epsilon-JDP. ``budget_split="valid"`` (default) uses epsilon/(6H) and is
  epsilon-JDP; ``"paper"`` reproduces epsilon/(3H). E is always computed for the epsilon' in use.
- ``error_bound="valid"`` (default) uses the valid uniform bound of :func:`privcal.analysis.counter.error_bound`
  over all K counters (exact Laplace-sum tails, union bound); ``"paper"`` uses E above, which
  ``privcal verify`` shows failing (claim VBKW-E-eps). ``"union"`` is the former name of
  ``"valid"`` (deprecated).

Privacy unit: one user = one episode's trajectory (its H + 1 states, H actions and H rewards), and
neighbouring runs replace one user (t-neighbouring user sequences, VBKW Def. 3); the guarantee is
joint DP under continual observation (Def. 3 covers every output except those of episode t itself,
M_{-t}, past and future, and the released policy). Every run reports this (:data:`PRIVACY_UNIT`,
``PUCBRun.privacy_unit``).

Counter noise (``counter_noise``):
- ``"laplace"`` (default, the paper's): binary-mechanism counters with Laplace noise at the
  per-counter epsilon' above; pure epsilon-JDP.
- ``"gaussian"``: :class:`privcal.analysis.counter.GaussianBinaryCounter` with one sigma for all K
  counters (:func:`counter_sigma`). Replacing user t changes the round-t input of at most 6H
  counters (2 per family and step, as above), each by at most 1, and, given the releases so far,
  no other input (the other users act on the releases only). Round t lies in at most L =
  floor(log2 T) + 1 p-sums of each counter, one per level, and which ones depends on t alone. So
  each round's release (the completed p-sum of every counter) is a Gaussian mechanism whose l2
  sensitivity is fixed in advance: sqrt(6H) for the at most L releases whose p-sum contains round
  t, 0 for the others. Their adaptive composition is sqrt(6HL)/sigma-GDP (Dong, Roth & Su 2022,
  Cor. 3.3 with the adaptive composition of Thm 3.2), i.e. the exact Gaussian profile with
  mu = sqrt(6HL)/sigma (Balle & Wang 2018), on which sigma is calibrated
  (:func:`privcal.analysis.counter.gaussian_psum_sensitivity`: sqrt(6HL) in l2 against 6HL in l1 for the
  Laplace counters): the releases are (epsilon, delta)-DP. PrivQ and the policies are
  post-processing of the releases and each user's actions depend only on them and on that user's
  own data, so the billboard lemma (Hsu, Huang, Roth, Roughgarden & Wu, "Private matchings and
  allocations", stated for (epsilon, delta)) gives (epsilon, delta)-JDP, the argument of VBKW's
  proof with the counters' (epsilon, delta) in place of epsilon. E is the union bound of the exact
  Gaussian tails over all K counters (:func:`privcal.analysis.counter.gaussian_error_bound`). The paper's
  budget split and its E_epsilon are Laplace formulas: ``budget_split="paper"`` and
  ``error_bound="paper"`` are refused with Gaussian counters.
"""

from __future__ import annotations

import numbers
import warnings
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Optional

import numpy as np

from privcal import _rng
from privcal import _validate as V
from privcal._stats import clopper_pearson
from privcal.analysis import gaussian as _gaussian
from privcal.analysis.counter import (
    BinaryCounter,
    ExactCounter,
    GaussianBinaryCounter,
    gaussian_error_bound_unchecked,
    gaussian_psum_sensitivity_unchecked,
    gaussian_sigma_unchecked,
    sup_error_failure_lower_bound,
)
from privcal.analysis.counter_bounds import accept_old_beta, error_bound_unchecked
from privcal.rl.pucb.bounds import (
    BUDGET_SPLITS,
    COUNTER_NOISES,
    ERROR_BOUNDS,
    PRIVACY_UNIT,
    UNKNOWN_RULES,
    bonus_phi,
    bonus_psi,
    check_counter_noise,
    check_error_bound,
    counter_epsilon,
    counter_epsilon_paper,
    counter_epsilon_paper_unchecked,
    counter_epsilon_unchecked,
    counter_sigma,
    error_bound_paper,
    error_bound_paper_unchecked,
    informative_count,
    informative_count_unchecked,
    jdp_epsilon,
    jdp_epsilon_unchecked,
    num_counters,
    num_counters_unchecked,
    private_q,
    private_q_unchecked,
)
from privcal.rl.pucb.episodes import EpisodeCounterAgent, episode_counter_inputs, play_episodes
from privcal.rl.pucb.tabular import TabularMDP

__all__ = [
    "EpisodeCounterAgent",
    "play_episodes",
    "episode_counter_inputs",
    "num_counters",
    "counter_epsilon",
    "counter_epsilon_paper",
    "counter_sigma",
    "check_counter_noise",
    "jdp_epsilon",
    "COUNTER_NOISES",
    "PRIVACY_UNIT",
    "error_bound_paper",
    "bonus_phi",
    "bonus_psi",
    "private_q",
    "informative_count",
    "PUCB",
    "PUCBRun",
    "run_pucb",
    "run_pucb_unchecked",
    "PUCBOptions",
    "check_error_bound",
    "check_memory",
    "num_counters_unchecked",
    "counter_epsilon_unchecked",
    "counter_epsilon_paper_unchecked",
    "jdp_epsilon_unchecked",
    "error_bound_paper_unchecked",
    "private_q_unchecked",
    "informative_count_unchecked",
    # defined in privcal.analysis.counter and privcal._stats, importable from here
    "sup_error_failure_lower_bound",
    "clopper_pearson",
]


def _deprecated_beta(owner: str) -> property:
    """A read-only ``beta`` attribute: the old name of ``failure_probability`` (deprecated)."""

    def getter(self) -> float:
        warnings.warn(f"{owner}.beta is deprecated: use {owner}.failure_probability",
                      DeprecationWarning, stacklevel=2)
        return self.failure_probability

    return property(getter, doc="Deprecated name of ``failure_probability``.")


# ----------------------------------------------------------------------------------------------
# the agent
# ----------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class PUCBOptions:
    """PUCB's rules and counters, beside the MDP's size, T, epsilon and the seed (checked by :class:`PUCB` and
    :func:`run_pucb`; the trusted kernels take them as given).

    Attributes:
        failure_probability: the paper's beta', in (0, 1); default 0.1.
        budget_split: "valid" (epsilon / (6H) per counter, default) or "paper" (epsilon / (3H)).
        error_bound: "valid" (default) or "paper" (as returned by :func:`check_error_bound`).
        unknown: "optimistic" (default) or "paper" (:func:`private_q`).
        counter_noise: "laplace" (default) or "gaussian".
        delta: JDP delta of Gaussian counters (as returned by :func:`check_counter_noise`); None for Laplace.
    """

    failure_probability: float = 0.1
    budget_split: str = "valid"
    error_bound: str = "valid"
    unknown: str = "optimistic"
    counter_noise: str = "laplace"
    delta: Optional[float] = None


class PUCB(EpisodeCounterAgent):
    r"""PUCB agent (VBKW Alg. 2); ``epsilon=None`` gives the UBEV-style non-private baseline.

    Per episode: ``q = agent.q_values()`` (PrivQ on the releases so far), ``pi = agent.policy(q)``
    (greedy, uniform tie-breaking, shape (H, S)), run the episode, then ``agent.observe(states,
    actions, rewards)`` feeds every counter once (1 or r to the visited (s, a, h) and
    (s, a, s', h), 0 to all others).

    Args:
        states: number of states S, an integer >= 1.
        actions: number of actions A, an integer >= 1.
        horizon: episode length H, an integer >= 1.
        episodes: number of episodes T the counters are built for, an integer >= 1.
        epsilon: JDP epsilon, in (0, inf); None (default) for the non-private baseline.
        failure_probability: the paper's beta' of the error bound and the bonus, in (0, 1);
            default 0.1 (old keyword ``beta=`` deprecated).
        seed: None, a non-negative int, a SeedSequence or a Generator; the counters' noise and
            the tie-breaking come from independent children of it. Default None.
        keywords: the rules, fields of :class:`PUCBOptions` (their defaults live there):
            ``budget_split``: per-counter epsilon, "valid" (epsilon/(6H), default) or "paper"
            (epsilon/(3H), 2 epsilon-JDP).
            ``error_bound``: counter error bound E, "valid" (default: the union bound of
            :func:`privcal.analysis.counter.error_bound`) or "paper" (E_epsilon of Alg. 3, which fails);
            "union" is the deprecated former name of "valid".
            ``unknown``: Q~+ where n~ < 2E, "optimistic" (H, default) or "paper" (min{H, Q~ + H}).
            ``counter_noise``: "laplace" (default, the paper's: epsilon-JDP) or "gaussian" (Gaussian
            binary-mechanism counters, :func:`counter_sigma`: (epsilon, delta)-JDP; needs
            ``delta``, refuses the paper's budget split and error bound).
            ``delta``: JDP delta, in (0, 1), with ``counter_noise="gaussian"`` only; default None.

    Attributes (besides the arguments): ``counter_epsilon`` (Laplace) or ``counter_sigma``
    (Gaussian), ``noise_scale`` (Laplace b or Gaussian sigma of each p-sum), ``jdp_epsilon`` and
    ``jdp_delta`` (the guarantee: an upper bound on epsilon at ``jdp_delta``, 0 for Laplace),
    ``error_bound`` E, ``privacy_unit`` and ``guarantee`` (in words).

    Raises:
        ValueError: an argument is outside its range, or ``counter_noise`` conflicts with
            ``delta``, ``budget_split`` or ``error_bound``.
    """

    beta = _deprecated_beta("PUCB")

    @accept_old_beta
    def __init__(self, states: int, actions: int, horizon: int, episodes: int,
                 epsilon: Optional[float] = None, failure_probability: float = PUCBOptions.failure_probability,
                 seed: _rng.Seed = None, **keywords: Any):
        def dims() -> list:
            return [V.positive_int(name, value) for name, value in
                    (("states", states), ("actions", actions), ("horizon", horizon), ("episodes", episodes))]

        # (eight parameters: the positional order of 0.2.0, kept by the deprecation policy)
        given = V.settings_with("PUCB", PUCBOptions, None, keywords, allowed=_RULE_KEYWORDS)
        given = replace(given, failure_probability=failure_probability)
        eps, dims, rules = _checked_options(epsilon, given, dims)
        self._setup(*dims, eps, seed, rules)

    @classmethod
    def unchecked(cls, states: int, actions: int, horizon: int, episodes: int, epsilon: Optional[float],
                  seed: _rng.Seed, options: PUCBOptions) -> "PUCB":
        """The agent of the constructor from arguments the caller has validated (same draws).

        Args:
            states: S, an int >= 1 (not checked).
            actions: A, an int >= 1 (not checked).
            horizon: H, an int >= 1 (not checked).
            episodes: T, an int >= 1 (not checked).
            epsilon: JDP epsilon in (0, inf), or None for the non-private baseline (not checked).
            seed: None, a non-negative int, a SeedSequence or a Generator.
            options: the :class:`PUCBOptions`, as :class:`PUCB` checks them (not checked).

        Returns:
            The agent.
        """
        agent = cls.__new__(cls)
        agent._setup(states, actions, horizon, episodes, epsilon, seed, options)
        return agent

    def _setup(self, states, actions, horizon, episodes, epsilon, seed, options: PUCBOptions) -> None:
        failure_probability, budget_split, error_bound = (options.failure_probability, options.budget_split,
                                                          options.error_bound)
        unknown, counter_noise, delta = options.unknown, options.counter_noise, options.delta
        self.states, self.actions, self.horizon, self.episodes = states, actions, horizon, episodes
        self.failure_probability = failure_probability
        self.budget_split = budget_split
        self.error_bound_kind = error_bound
        self.unknown = unknown
        self.private = epsilon is not None
        self.counter_noise = counter_noise
        self.delta = delta
        self.privacy_unit = PRIVACY_UNIT
        self.counter_sigma = None
        self.jdp_delta = None
        h, s, a, t = horizon, states, actions, episodes
        streams = _rng.spawn(seed, 4)
        self._rng = streams[3]  # tie-breaking only (data independent)
        shapes = {"rewards": (h, s, a), "counts": (h, s, a), "transitions": (h, s, a, s)}
        if self.private and counter_noise == "gaussian":
            self.epsilon = epsilon
            self.counter_epsilon = None
            # arguments validated by __init__ or the caller of unchecked: the unchecked kernels
            self.counter_sigma = self.noise_scale = gaussian_sigma_unchecked(t, epsilon, delta, streams=6 * h)  # guarded by tests/test_pucb.py::test_gaussian_agent_guarantee_counters_and_bound
            sensitivity = gaussian_psum_sensitivity_unchecked(t, streams=6 * h)
            # the guarantee at this sigma, from the exact profile (an upper bound on epsilon, <= target)
            self.jdp_epsilon = _gaussian.epsilon_exact_unchecked(delta, sensitivity / self.counter_sigma)
            self.jdp_delta = delta
            self.counters = {name: GaussianBinaryCounter.unchecked(t, self.counter_sigma, shape, seed=stream)
                             for (name, shape), stream in zip(shapes.items(), streams[:3])}
            self.error_bound = gaussian_error_bound_unchecked(t, self.counter_sigma, failure_probability,
                                                              counters=num_counters_unchecked(s, a, h))
            self.guarantee = (f"({self.jdp_epsilon:.6g}, {delta:g})-JDP, Gaussian counters calibrated on "
                              f"the l2 sensitivity sqrt(6HL) (exact Gaussian profile)")
        elif self.private:
            self.epsilon = epsilon
            self.jdp_delta = 0.0
            split = counter_epsilon_unchecked if budget_split == "valid" else counter_epsilon_paper_unchecked  # guarded by tests/test_guard_pucb_agent.py::test_laplace_counters_use_the_split_budget
            self.counter_epsilon = split(self.epsilon, h)
            self.jdp_epsilon = jdp_epsilon_unchecked(self.counter_epsilon, h)
            if not self.counter_epsilon > 0:  # epsilon / (6H) underflowed: the check BinaryCounter made
                raise ValueError(f"epsilon must be in (0, inf), got {self.counter_epsilon!r}")
            self.counters = {name: BinaryCounter.unchecked(t, self.counter_epsilon, shape, seed=stream)  # guarded by tests/test_guard_pucb_agent.py::test_laplace_counters_use_the_split_budget
                             for (name, shape), stream in zip(shapes.items(), streams[:3])}
            self.noise_scale = self.counters["counts"].laplace_scale
            self.guarantee = (f"{self.jdp_epsilon:g}-JDP, Laplace counters (budget split {budget_split}"
                              + (": the paper's epsilon/(3H) gives twice the target)" if budget_split == "paper"
                                 else ")"))
            if error_bound == "paper":
                # E_epsilon of Alg. 3 written through epsilon' (= epsilon/(3H) in the paper)
                self.error_bound = error_bound_paper_unchecked(3.0 * h * self.counter_epsilon, s, a, h, t,
                                                      failure_probability)
            else:
                self.error_bound = error_bound_unchecked(t, self.counter_epsilon,
                                                        failure_probability,
                                                        counters=num_counters_unchecked(s, a, h))
        else:
            self.epsilon = self.counter_epsilon = self.jdp_epsilon = None
            self.counters = {name: ExactCounter(t, shape) for name, shape in shapes.items()}
            self.error_bound = 0.0
            self.noise_scale = 0.0
            self.guarantee = "none (non-private baseline: exact counters)"

    @property
    def releases(self) -> dict:
        """Current counter releases {"rewards", "counts", "transitions"} (copies)."""
        return {name: c.estimate for name, c in self.counters.items()}

    def q_values(self) -> np.ndarray:
        """Q~+ (H, S, A) from PrivQ (VBKW Alg. 3) on the current releases.

        Returns:
            Q~+, shape (H, S, A).
        """
        rel = self.releases
        return private_q_unchecked(rel["rewards"], rel["counts"], rel["transitions"], self.error_bound,
                          self.episodes, self.failure_probability, unknown=self.unknown)


@dataclass(frozen=True)
class PUCBRun:
    """Outcome of :func:`run_pucb`: exact per-episode regret rho* - rho^{pi_t} and the settings.

    Fields: ``episode_regret`` (T,), ``optimal_return`` rho*, ``epsilon``, ``counter_epsilon``
    (Laplace counters; None otherwise), ``jdp_epsilon`` (None for the baseline), ``error_bound`` E,
    ``max_counter_error`` (largest |release - count| seen), ``failure_probability``, ``seed``,
    ``info`` (settings, MDP name, informative count), ``counter_noise`` ("laplace", "gaussian" or
    None for the baseline), ``delta`` (the JDP delta: 0 for Laplace, None for the baseline),
    ``noise_scale`` (Laplace b or Gaussian sigma of each p-sum), ``privacy_unit`` and
    ``guarantee`` (the privacy claim in words).
    """

    episode_regret: np.ndarray
    optimal_return: float
    epsilon: Optional[float]
    counter_epsilon: Optional[float]
    jdp_epsilon: Optional[float]
    error_bound: float
    max_counter_error: float
    failure_probability: float
    seed: _rng.Seed
    info: dict = field(default_factory=dict)
    counter_noise: Optional[str] = "laplace"
    delta: Optional[float] = None
    noise_scale: float = 0.0
    privacy_unit: str = PRIVACY_UNIT
    guarantee: str = ""

    beta = _deprecated_beta("PUCBRun")

    @property
    def cumulative_regret(self) -> np.ndarray:
        """Regret(t) = sum_{k <= t} (rho* - rho^{pi_k}) (VBKW Def. 2), exact."""
        return np.cumsum(self.episode_regret)

    def suboptimal_episodes(self, accuracy: float) -> int:
        """Number of episodes whose policy is not accuracy-optimal: rho* - rho^{pi_t} > accuracy.

        Args:
            accuracy: regret threshold (unit: return), in [0, inf).

        Returns:
            The number of episodes, in [0, T].

        Raises:
            ValueError: ``accuracy`` is outside its range.
        """
        return int(np.sum(self.episode_regret > V.nonnegative("accuracy", accuracy)))


@accept_old_beta
def run_pucb(mdp: TabularMDP, episodes: int, epsilon: Optional[float] = None,
             failure_probability: float = PUCBOptions.failure_probability, seed: _rng.Seed = None, *,
             progress: Optional[Callable[[int, int], None]] = None, **keywords: Any) -> PUCBRun:
    """Run PUCB (or the non-private baseline, ``epsilon=None``) for ``episodes`` episodes.

    The regret of each episode is exact: rho* - p0 . V^{pi_t}_1 by backward induction on the true
    MDP (no sampled returns). ``max_counter_error`` is the largest |release - true count| seen over
    all counters and episodes (a diagnostic to compare with ``error_bound``; not released by the
    agent).

    Args:
        mdp: the environment, a :class:`privcal.rl.pucb.tabular.TabularMDP`.
        episodes: number of episodes T, an integer >= 1.
        epsilon: JDP epsilon, in (0, inf); None (default) for the non-private baseline.
        failure_probability: the paper's beta', in (0, 1); default 0.1 (old keyword ``beta=``
            deprecated).
        seed: None, a non-negative int, a SeedSequence or a Generator; the agent and the episode
            sampling get independent children of it. Default None.
        progress: called as ``progress(done, total)`` after each episode; default None.
        keywords: the rules, fields of :class:`PUCBOptions` (their defaults live there):
            ``budget_split``: "valid" (epsilon/(6H), default) or "paper" (epsilon/(3H)).
            ``error_bound``: "valid" (default: the union bound) or "paper" (E_epsilon of Alg. 3); see
            :class:`PUCB`.
            ``unknown``: "optimistic" (default) or "paper", see :func:`private_q`.
            ``counter_noise``: "laplace" (default, epsilon-JDP) or "gaussian" ((epsilon, delta)-JDP), see
            :class:`PUCB`.
            ``delta``: JDP delta, in (0, 1), with ``counter_noise="gaussian"`` only; default None.

    Returns:
        A :class:`PUCBRun`.

    Raises:
        ValueError: an argument is outside its range (or ``counter_noise`` conflicts with another).
    """
    if not isinstance(mdp, TabularMDP):
        raise ValueError(f"mdp must be a TabularMDP, got {type(mdp).__name__}")
    given = V.settings_with("run_pucb", PUCBOptions, None, keywords, allowed=_RULE_KEYWORDS)
    given = replace(given, failure_probability=failure_probability)
    eps, episodes, rules = _checked_options(epsilon, given, lambda: V.positive_int("episodes", episodes))
    return run_pucb_unchecked(mdp, episodes, eps, seed, rules, progress)


#: The fields of :class:`PUCBOptions` that :class:`PUCB` and :func:`run_pucb` take as keywords (the failure
#: probability is a parameter of their own).
_RULE_KEYWORDS = ("budget_split", "error_bound", "unknown", "counter_noise", "delta")


def _checked_options(epsilon, given: PUCBOptions, check_sizes: Callable[[], Any]):
    """(epsilon, sizes, :class:`PUCBOptions`) from the arguments of :class:`PUCB` or :func:`run_pucb`, each checked
    once: epsilon, the budget split, the error bound, the sizes (``check_sizes()``), the failure probability, the
    rule for unknown pairs, then the counter noise against the others."""
    eps = None if epsilon is None else V.positive("epsilon", epsilon)
    split = V.choice("budget_split", given.budget_split, BUDGET_SPLITS)
    rule = check_error_bound(given.error_bound)
    sizes = check_sizes()
    fail = V.open_unit("failure_probability", given.failure_probability)
    rules = PUCBOptions(fail, split, rule, V.choice("unknown", given.unknown, UNKNOWN_RULES), given.counter_noise,
                        check_counter_noise(given.counter_noise, eps, given.delta, split, rule))
    return eps, sizes, rules


#: Largest memory a PUCB run may need (bytes); larger requests are refused before allocating.
_MEMORY_BUDGET = 4 * 2**30


def _memory_estimate(states: int, actions: int, horizon: int, episodes: int) -> int:
    """Bytes a PUCB run needs, roughly: the private and the exact counters (L + 1 arrays of
    H x S x A x (S + 2) floats each, twice) plus the per-episode regret arrays and their report
    (about 64 bytes per episode)."""
    cells = horizon * states * actions * (states + 2)
    return 8 * cells * 2 * (2 * episodes.bit_length() + 4) + 64 * episodes


def check_memory(states: int, actions: int, horizon: int, episodes: int) -> None:
    """Refuse (ValueError naming the budget) a run that would need more than ``_MEMORY_BUDGET`` bytes.

    Args:
        states: number of states S, an integer >= 1 (trusted).
        actions: number of actions A, an integer >= 1 (trusted).
        horizon: episode length H, an integer >= 1 (trusted).
        episodes: number of episodes T, an integer >= 1 (trusted).

    Raises:
        ValueError: the run would need more than the memory budget (4 GiB); the message names the need.
    """
    need = _memory_estimate(states, actions, horizon, episodes)
    if need > _MEMORY_BUDGET:
        raise ValueError(
            f"a PUCB run with {states} states, {actions} actions, horizon {horizon} and {episodes} episodes "
            f"needs about {need / 2**30:.3g} GiB, more than the memory budget of "
            f"{_MEMORY_BUDGET / 2**30:g} GiB"
        )


def run_pucb_unchecked(mdp: TabularMDP, episodes: int, epsilon: Optional[float] = None, seed: _rng.Seed = None,
                       options: PUCBOptions = PUCBOptions(),
                       progress: Optional[Callable[[int, int], None]] = None) -> PUCBRun:
    """:func:`run_pucb` on arguments already checked (the trusted kernel the CLI and the experiments call).

    Validates nothing but the memory budget: the caller has checked every argument as :func:`run_pucb` does.

    Args:
        mdp: the environment, a :class:`privcal.rl.pucb.tabular.TabularMDP`.
        episodes: number of episodes T, an integer >= 1.
        epsilon: JDP epsilon, in (0, inf); None for the non-private baseline.
        seed: None, a non-negative int, a SeedSequence or a Generator.
        options: the rules and counters (checked); default :class:`PUCBOptions` ().
        progress: called as ``progress(done, total)`` after each episode, or None.

    Returns:
        A :class:`PUCBRun`.

    Raises:
        ValueError: the run would need more than the memory budget (:func:`check_memory`).
    """
    check_memory(mdp.states, mdp.actions, mdp.horizon, episodes)
    t_total = episodes
    agent = PUCB.unchecked(mdp.states, mdp.actions, mdp.horizon, t_total, epsilon, seed, options)
    failure_probability, counter_noise = options.failure_probability, options.counter_noise
    budget_split, error_bound, unknown = options.budget_split, options.error_bound, options.unknown
    regret, optimal, max_err = play_episodes(agent, mdp, t_total, seed, progress)
    return PUCBRun(episode_regret=regret, optimal_return=optimal,
                   epsilon=agent.epsilon, counter_epsilon=agent.counter_epsilon,
                   jdp_epsilon=agent.jdp_epsilon, error_bound=agent.error_bound,
                   max_counter_error=max_err, failure_probability=failure_probability,
                   seed=int(seed) if isinstance(seed, numbers.Integral) else seed,
                   counter_noise=counter_noise if agent.private else None, delta=agent.jdp_delta,
                   noise_scale=agent.noise_scale, privacy_unit=agent.privacy_unit,
                   guarantee=agent.guarantee,
                   info={"budget_split": budget_split, "error_bound": error_bound,
                         "unknown": unknown, "counter_noise": counter_noise,
                         "mdp": mdp.name, "informative_count": informative_count_unchecked(
                             agent.error_bound, mdp.states, mdp.horizon, t_total,
                             failure_probability)})


