r"""PUCB and PrivQ (Vietri, Balle, Krishnamurthy & Wu, ICML 2020, Alg. 2 and 3), the UBEV-style
non-private baseline, and the experiments around them.

PUCB keeps three families of private counters, each one stream per (s, a, h) (or (s, a, s', h)) with
one value per episode: rewards r~(s, a, h), visits n~(s, a, h) and transitions m~(s, a, s', h),
2SAH + S^2AH counters in all (binary mechanism, :class:`privcal.counter.BinaryCounter`). Before each
episode PrivQ plans on the releases with the optimism bonus
    conf = (H + 1) phi~ + psi~   if n~ >= 2 E,   else H            (Alg. 3),
    phi~ = sqrt(2 ln(T/beta') / max(n~ - E, 1)),
    psi~ = (1 + S H) (3 E / n~ + 2 E^2 / n~^2)                        (footnote 7),
    E    = (3/epsilon) H ln((2SAH + S^2AH)/beta') log(T)^{5/2}         (Alg. 3; footnote 6),
Q~+ = min{H, Q~ + conf}, and the agent acts greedily (ties broken uniformly at random).
The non-private baseline is the same agent with exact counters and E = 0 (so psi~ = 0): one code
path.

Choices where the paper is silent or inconsistent (each is a parameter; defaults stated):
- beta' is not defined in the short paper: we use beta' = beta.
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
- ``error_bound="paper"`` uses E above; ``"union"`` uses the valid uniform bound of
  :func:`privcal.counter.error_bound` over all K counters (exact Laplace-sum tails, union bound).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable, Optional

import numpy as np

from privcal._stats import clopper_pearson
from privcal._validate import open_unit, positive, positive_int
from privcal.counter import (
    BinaryCounter,
    ExactCounter,
    error_bound as counter_error_bound,
    error_bound_paper as counter_error_bound_paper,
    laplace_scale,
    num_levels,
)
from privcal.rl.tabular import (
    EpisodeSampler,
    TabularMDP,
    _policy_values,
    backward_induction,
    random_mdp,
    river_swim,
)

__all__ = [
    "num_counters",
    "counter_epsilon",
    "counter_epsilon_paper",
    "jdp_epsilon",
    "error_bound_paper",
    "bonus_phi",
    "bonus_psi",
    "private_q",
    "informative_count",
    "sup_error_failure_lower_bound",
    "PUCB",
    "PUCBRun",
    "run_pucb",
    "SETTINGS",
    "EPSILONS",
    "make_mdp",
    "RegretExperiment",
    "regret_experiment",
    "plot_regret",
    "clopper_pearson",
    "counter_error_check",
    "pucb_error_bound_check",
    "collusion_attack",
]

BUDGET_SPLITS = ("valid", "paper")
ERROR_BOUNDS = ("paper", "union")
UNKNOWN_RULES = ("optimistic", "paper")


# ----------------------------------------------------------------------------------------------
# formulas
# ----------------------------------------------------------------------------------------------

def num_counters(states, actions, horizon) -> int:
    """Number of private counters PUCB keeps: K = 2 S A H + S^2 A H (VBKW Alg. 2 / Alg. 3)."""
    s = positive_int("states", states)
    a = positive_int("actions", actions)
    h = positive_int("horizon", horizon)
    return 2 * s * a * h + s * s * a * h


def counter_epsilon_paper(epsilon, horizon) -> float:
    """Per-counter epsilon as printed: epsilon' = epsilon / (3H) (VBKW Alg. 2).

    Fails under Definition 3 (replace-one neighbours): it gives 2 epsilon-JDP, see
    :func:`counter_epsilon`.
    """
    return positive("epsilon", epsilon) / (3.0 * positive_int("horizon", horizon))


def counter_epsilon(epsilon, horizon) -> float:
    """Per-counter epsilon that makes PUCB epsilon-JDP under VBKW Def. 3: epsilon / (6H).

    Replacing user t changes, at each of the H steps, one unit of input in two counters of each of
    the three families (reward values in [0, 1]): L1 change <= 6H, each unit costing epsilon' by the
    binary mechanism (CSS11 Thm 3.5) and basic composition; the billboard argument of VBKW does
    the rest.
    """
    return positive("epsilon", epsilon) / (6.0 * positive_int("horizon", horizon))


def jdp_epsilon(counter_eps, horizon) -> float:
    """Upper bound on the JDP epsilon of PUCB run with per-counter epsilon': 6 H epsilon'.

    Same argument as :func:`counter_epsilon` (L1 change of the counters' inputs <= 6H per user).
    """
    return 6.0 * positive_int("horizon", horizon) * positive("counter_eps", counter_eps)


def error_bound_paper(epsilon, states, actions, horizon, episodes, beta) -> float:
    r"""E_epsilon = (3/epsilon) H ln((2SAH + S^2AH)/beta') log2(T)^{5/2}, with beta' = beta.

    VBKW Alg. 3 (footnote 6 has (beta')^{-1} in the denominator, a typo: ln(K beta') < 0).
    It is the counter bound (4/epsilon') ln(K/beta') log(T)^{5/2} at epsilon' = epsilon/(3H) but
    with constant 3H instead of 12H, i.e. 4 times smaller than the union bound it stands for;
    it fails at small T (see :func:`pucb_error_bound_check`).
    """
    eps = positive("epsilon", epsilon)
    k = num_counters(states, actions, horizon)
    h = positive_int("horizon", horizon)
    t = positive_int("episodes", episodes)
    b = open_unit("beta", beta)
    return 3.0 / eps * h * math.log(k / b) * math.log2(t) ** 2.5


def bonus_phi(counts, error_bound, episodes, beta):
    """Sampling-error bonus phi~ = sqrt(2 ln(T/beta') / max(n~ - E, 1)) (VBKW footnote 7)."""
    e = _nonneg_float("error_bound", error_bound)
    t = positive_int("episodes", episodes)
    b = open_unit("beta", beta)
    n = np.asarray(counts, dtype=float)
    return np.sqrt(2.0 * math.log(t / b) / np.maximum(n - e, 1.0))


def bonus_psi(counts, error_bound, states, horizon):
    """Counter-error bonus psi~ = (1 + S H)(3E/n~ + 2E^2/n~^2) (VBKW footnote 7); inf if n~ <= 0."""
    e = _nonneg_float("error_bound", error_bound)
    s = positive_int("states", states)
    h = positive_int("horizon", horizon)
    n = np.asarray(counts, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        psi = (1.0 + s * h) * (3.0 * e / n + 2.0 * e * e / (n * n))
    if e == 0.0:
        psi = np.where(n > 0, 0.0, np.inf)
    return np.where(n > 0, psi, np.inf)


def private_q(rewards, counts, transitions, error_bound, episodes, beta, *,
              unknown: str = "optimistic") -> np.ndarray:
    r"""PrivQ (VBKW Alg. 3): optimistic Q~+ of shape (H, S, A) from counter releases.

    ``rewards`` r~ (H, S, A), ``counts`` n~ (H, S, A), ``transitions`` m~ (H, S, A, S), E =
    ``error_bound``. For h = H..1: conf = (H+1) phi~ + psi~ if n~ >= 2E else H;
    Q~ = (r~ + sum_{s'} V~_{h+1}(s') m~(s')) / n~; Q~+ = min{H, Q~ + conf}; V~_h = max_a Q~+.
    Unknown pairs (n~ < 2E): ``unknown="optimistic"`` gives Q~+ = H; ``"paper"`` gives
    min{H, Q~ + H} as printed (H where n~ <= 0, Q~ undefined), which is not optimistic when the
    noisy Q~ < 0. With exact counts and E = 0 this is the UBEV-style baseline (bonus
    (H+1) sqrt(2 ln(T/beta)/max(n, 1)), no privacy term; unvisited pairs get H).
    """
    if unknown not in UNKNOWN_RULES:
        raise ValueError(f"unknown must be one of {UNKNOWN_RULES}, got {unknown!r}")
    r = np.asarray(rewards, dtype=float)
    n = np.asarray(counts, dtype=float)
    m = np.asarray(transitions, dtype=float)
    if r.ndim != 3 or n.shape != r.shape or m.shape != r.shape + (r.shape[1],):
        raise ValueError("rewards and counts must have shape (H, S, A) and transitions "
                         f"(H, S, A, S); got {r.shape}, {n.shape}, {m.shape}")
    hor, s, _ = r.shape
    e = _nonneg_float("error_bound", error_bound)
    positive_n = n > 0
    known = positive_n & (n >= 2.0 * e)
    n_safe = np.where(positive_n, n, 1.0)
    conf = np.where(known, (hor + 1) * bonus_phi(n_safe, e, episodes, beta)
                    + bonus_psi(n_safe, e, s, hor), float(hor))
    use_formula = known if unknown == "optimistic" else positive_n
    q_plus = np.empty_like(r)
    v_next = np.zeros(s)
    for h in range(hor - 1, -1, -1):
        q = (r[h] + m[h] @ v_next) / n_safe[h]
        q_plus[h] = np.where(use_formula[h], np.minimum(hor, q + conf[h]), float(hor))
        v_next = q_plus[h].max(axis=1)
    return q_plus


def informative_count(error_bound, states, horizon, episodes, beta) -> float:
    """Smallest count n~ at which PrivQ's bonus drops below H (below it, Q~+ = H: no learning).

    Solves (H + 1) phi~(n) + psi~(n) = H for n >= 2E by bisection (both terms decrease in n).
    Returns inf if the bonus never drops below H. Derived from VBKW Alg. 3 / footnote 7.
    """
    e = _nonneg_float("error_bound", error_bound)
    s = positive_int("states", states)
    h = positive_int("horizon", horizon)

    def conf(n: float) -> float:
        return float((h + 1) * bonus_phi(n, e, episodes, beta) + bonus_psi(n, e, s, h))

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


def _nonneg_float(name: str, value) -> float:
    v = float(value)
    if not (v >= 0.0) or math.isinf(v):
        raise ValueError(f"{name} must be in [0, inf), got {value!r}")
    return v


# ----------------------------------------------------------------------------------------------
# the agent
# ----------------------------------------------------------------------------------------------

class PUCB:
    r"""PUCB agent (VBKW Alg. 2); ``epsilon=None`` gives the UBEV-style non-private baseline.

    ``PUCB(states, actions, horizon, episodes, epsilon, beta, seed)``. Per episode:
    ``q = agent.q_values()`` (PrivQ on the releases so far), ``pi = agent.policy(q)`` (greedy,
    uniform tie-breaking, shape (H, S)), run the episode, then ``agent.observe(states, actions,
    rewards)`` feeds every counter once (1 or r to the visited (s, a, h) and (s, a, s', h), 0 to
    all others). Options: ``budget_split`` ("valid": epsilon/(6H), "paper": epsilon/(3H)),
    ``error_bound`` ("paper": E_epsilon of Alg. 3, "union": valid bound of the counters) and
    ``unknown`` ("optimistic": Q~+ = H where n~ < 2E, "paper": min{H, Q~ + H}).
    """

    def __init__(self, states, actions, horizon, episodes, epsilon=None, beta=0.1, seed=None, *,
                 budget_split: str = "valid", error_bound: str = "paper",
                 unknown: str = "optimistic"):
        self.states = positive_int("states", states)
        self.actions = positive_int("actions", actions)
        self.horizon = positive_int("horizon", horizon)
        self.episodes = positive_int("episodes", episodes)
        self.beta = open_unit("beta", beta)
        if budget_split not in BUDGET_SPLITS:
            raise ValueError(f"budget_split must be one of {BUDGET_SPLITS}, got {budget_split!r}")
        if error_bound not in ERROR_BOUNDS:
            raise ValueError(f"error_bound must be one of {ERROR_BOUNDS}, got {error_bound!r}")
        if unknown not in UNKNOWN_RULES:
            raise ValueError(f"unknown must be one of {UNKNOWN_RULES}, got {unknown!r}")
        self.budget_split = budget_split
        self.error_bound_kind = error_bound
        self.unknown = unknown
        self.private = epsilon is not None
        h, s, a, t = self.horizon, self.states, self.actions, self.episodes
        seeds = np.random.SeedSequence(seed).spawn(4)
        self._rng = np.random.default_rng(seeds[3])  # tie-breaking only (data independent)
        shapes = {"rewards": (h, s, a), "counts": (h, s, a), "transitions": (h, s, a, s)}
        if self.private:
            self.epsilon = positive("epsilon", epsilon)
            split = counter_epsilon if budget_split == "valid" else counter_epsilon_paper
            self.counter_epsilon = split(self.epsilon, h)
            self.jdp_epsilon = jdp_epsilon(self.counter_epsilon, h)
            self.counters = {name: BinaryCounter(t, self.counter_epsilon, shape, seed=sd)
                             for (name, shape), sd in zip(shapes.items(), seeds[:3])}
            if error_bound == "paper":
                # E_epsilon of Alg. 3 written through epsilon' (= epsilon/(3H) in the paper)
                self.error_bound = error_bound_paper(3.0 * h * self.counter_epsilon, s, a, h, t,
                                                     self.beta)
            else:
                self.error_bound = counter_error_bound(t, self.counter_epsilon, self.beta,
                                                       counters=num_counters(s, a, h))
        else:
            self.epsilon = self.counter_epsilon = self.jdp_epsilon = None
            self.counters = {name: ExactCounter(t, shape) for name, shape in shapes.items()}
            self.error_bound = 0.0

    @property
    def releases(self) -> dict:
        """Current counter releases {"rewards", "counts", "transitions"} (copies)."""
        return {name: c.estimate for name, c in self.counters.items()}

    def q_values(self) -> np.ndarray:
        """Q~+ (H, S, A) from PrivQ (VBKW Alg. 3) on the current releases."""
        rel = self.releases
        return private_q(rel["rewards"], rel["counts"], rel["transitions"], self.error_bound,
                         self.episodes, self.beta, unknown=self.unknown)

    def policy(self, q=None) -> np.ndarray:
        """Greedy policy pi[h, s] = argmax_a Q~+(s, a, h), ties broken uniformly at random."""
        q = self.q_values() if q is None else np.asarray(q, dtype=float)
        ties = q >= q.max(axis=2, keepdims=True)
        keys = np.where(ties, self._rng.random(q.shape), -1.0)
        return keys.argmax(axis=2)

    def observe(self, states, actions, rewards) -> None:
        """Feed one episode (H + 1 states, H actions, H rewards) to every counter once."""
        h = self.horizon
        st = np.asarray(states, dtype=np.int64)
        ac = np.asarray(actions, dtype=np.int64)
        rw = np.asarray(rewards, dtype=float)
        if st.shape != (h + 1,) or ac.shape != (h,) or rw.shape != (h,):
            raise ValueError(f"an episode needs states ({h + 1},), actions ({h},), rewards ({h},); "
                             f"got {st.shape}, {ac.shape}, {rw.shape}")
        for name, values in _episode_inputs(self.states, self.actions, st, ac, rw).items():
            self.counters[name].update(values)


@dataclass(frozen=True)
class PUCBRun:
    """Outcome of :func:`run_pucb`: exact per-episode regret rho* - rho^{pi_t} and the settings."""

    episode_regret: np.ndarray
    optimal_return: float
    epsilon: Optional[float]
    counter_epsilon: Optional[float]
    jdp_epsilon: Optional[float]
    error_bound: float
    max_counter_error: float
    beta: float
    seed: Optional[int]
    info: dict = field(default_factory=dict)

    @property
    def cumulative_regret(self) -> np.ndarray:
        """Regret(t) = sum_{k <= t} (rho* - rho^{pi_k}) (VBKW Def. 2), exact."""
        return np.cumsum(self.episode_regret)

    def suboptimal_episodes(self, accuracy) -> int:
        """Number of episodes whose policy is not accuracy-optimal: rho* - rho^{pi_t} > accuracy."""
        acc = _nonneg_float("accuracy", accuracy)
        return int(np.sum(self.episode_regret > acc))


def run_pucb(mdp: TabularMDP, episodes, epsilon=None, beta=0.1, seed=None, *,
             budget_split: str = "valid", error_bound: str = "paper", unknown: str = "optimistic",
             progress: Optional[Callable[[int, int], None]] = None) -> PUCBRun:
    """Run PUCB (or the non-private baseline, ``epsilon=None``) for ``episodes`` episodes.

    The regret of each episode is exact: rho* - p0 . V^{pi_t}_1 by backward induction on the true
    MDP (no sampled returns). ``progress(done, total)`` is called after each episode if given.
    ``max_counter_error`` is the largest |release - true count| seen over all counters and
    episodes (a diagnostic to compare with ``error_bound``; not released by the agent).
    """
    if not isinstance(mdp, TabularMDP):
        raise ValueError(f"mdp must be a TabularMDP, got {type(mdp).__name__}")
    t_total = positive_int("episodes", episodes)
    agent = PUCB(mdp.states, mdp.actions, mdp.horizon, t_total, epsilon, beta, seed,
                 budget_split=budget_split, error_bound=error_bound, unknown=unknown)
    env_rng = np.random.default_rng(np.random.SeedSequence(seed).spawn(5)[4])
    sampler = EpisodeSampler(mdp)
    optimal = float(mdp.initial @ backward_induction(mdp).values[0])
    exact = {name: ExactCounter(t_total, c.shape) for name, c in agent.counters.items()}
    regret = np.empty(t_total)
    max_err = 0.0
    for k in range(t_total):
        pol = agent.policy()
        regret[k] = optimal - float(mdp.initial @ _policy_values(mdp, pol)[0])
        states, actions, rewards = sampler.sample(pol, env_rng)
        agent.observe(states, actions, rewards)
        if agent.private:
            exact_inputs = _episode_inputs(mdp.states, mdp.actions, states, actions, rewards)
            for name, c in exact.items():
                c.update(exact_inputs[name])
                max_err = max(max_err, float(np.max(np.abs(agent.counters[name].estimate
                                                            - c.estimate))))
        if progress is not None:
            progress(k + 1, t_total)
    if np.any(regret < -1e-9 * mdp.horizon):
        raise RuntimeError("negative regret: the optimal values are wrong")
    return PUCBRun(episode_regret=np.maximum(regret, 0.0), optimal_return=optimal,
                   epsilon=agent.epsilon, counter_epsilon=agent.counter_epsilon,
                   jdp_epsilon=agent.jdp_epsilon, error_bound=agent.error_bound,
                   max_counter_error=max_err, beta=agent.beta,
                   seed=seed if seed is None else int(seed),
                   info={"budget_split": budget_split, "error_bound": error_bound,
                         "unknown": unknown,
                         "mdp": mdp.name, "informative_count": informative_count(
                             agent.error_bound, mdp.states, mdp.horizon, t_total, agent.beta)})


def _episode_inputs(states_n: int, actions_n: int, states, actions, rewards) -> dict:
    """Counter inputs of one episode: r or 1 at the visited (h, s, a) / (h, s, a, s'), else 0."""
    h = len(actions)
    steps = np.arange(h)
    r_in = np.zeros((h, states_n, actions_n))
    n_in = np.zeros((h, states_n, actions_n))
    m_in = np.zeros((h, states_n, actions_n, states_n))
    r_in[steps, states[:-1], actions] = rewards
    n_in[steps, states[:-1], actions] = 1.0
    m_in[steps, states[:-1], actions, states[1:]] = 1.0
    return {"rewards": r_in, "counts": n_in, "transitions": m_in}


# ----------------------------------------------------------------------------------------------
# experiments
# ----------------------------------------------------------------------------------------------

#: Experiment sizes. "fast" runs in seconds (tests, notebook in CI); "full" is the size of the
#: issue's benchmark (S = 10, A = 3, H = 10, T = 10^4 episodes) over five seeds.
SETTINGS = {
    "fast": {"states": 3, "actions": 2, "horizon": 3, "episodes": 2000, "seeds": (0, 1)},
    "full": {"states": 10, "actions": 3, "horizon": 10, "episodes": 10_000,
             "seeds": (0, 1, 2, 3, 4)},
}
#: Privacy levels of the experiments; None is the non-private (UBEV-style) baseline.
EPSILONS = (0.1, 1.0, 10.0, None)


def _label(epsilon) -> str:
    return "non-private" if epsilon is None else f"epsilon={epsilon:g}"


@dataclass(frozen=True)
class RegretExperiment:
    """Exact per-episode regret, shape (seeds, T), for each privacy level (keyed by label)."""

    setting: dict
    epsilons: tuple
    episode_regret: dict
    error_bounds: dict
    informative_counts: dict
    jdp_epsilons: dict
    accuracy: float

    @property
    def labels(self) -> list:
        """Labels in the order of ``epsilons`` ("epsilon=0.1", ..., "non-private")."""
        return [_label(e) for e in self.epsilons]

    def cumulative(self, label) -> np.ndarray:
        """Cumulative regret (seeds, T) of one privacy level."""
        return np.cumsum(self.episode_regret[label], axis=1)

    def suboptimal_episodes(self, label) -> np.ndarray:
        """Per seed, the number of episodes with rho* - rho^{pi_t} > accuracy (VBKW Def. 1)."""
        return np.sum(self.episode_regret[label] > self.accuracy, axis=1)

    def summary(self) -> list:
        """One row per privacy level: final regret (mean, sd over seeds), suboptimal episodes, E."""
        rows = []
        for label in self.labels:
            final = self.cumulative(label)[:, -1]
            sub = self.suboptimal_episodes(label)
            rows.append({"label": label, "final_regret_mean": float(final.mean()),
                         "final_regret_sd": float(final.std(ddof=1)) if final.size > 1 else 0.0,
                         "suboptimal_mean": float(sub.mean()),
                         "episodes": int(self.episode_regret[label].shape[1]),
                         "error_bound": self.error_bounds[label],
                         "informative_count": self.informative_counts[label],
                         "jdp_epsilon": self.jdp_epsilons[label]})
        return rows


def make_mdp(kind: str, states, actions, horizon, seed=0) -> TabularMDP:
    """The experiments' MDPs: ``"random"`` (:func:`random_mdp`) or ``"riverswim"`` (A must be 2)."""
    if kind == "random":
        return random_mdp(states, actions, horizon, seed=seed)
    if kind == "riverswim":
        if positive_int("actions", actions) != 2:
            raise ValueError(f"actions must be 2 for riverswim, got {actions!r}")
        return river_swim(states, horizon)
    raise ValueError(f"mdp must be 'random' or 'riverswim', got {kind!r}")


def regret_experiment(setting: str = "fast", *, epsilons=EPSILONS, seeds=None,
                      mdp: str = "random", mdp_seed=0, accuracy=None, beta=0.1,
                      budget_split: str = "valid", error_bound: str = "paper",
                      unknown: str = "optimistic",
                      progress: Optional[Callable[[int, int], None]] = None,
                      **overrides) -> RegretExperiment:
    """Regret over T episodes and number of accuracy-suboptimal episodes, per epsilon and seed.

    ``setting`` is "fast" or "full" (:data:`SETTINGS`); ``overrides`` replace its entries
    (states, actions, horizon, episodes). One MDP (``mdp`` kind, ``mdp_seed``) is shared by all
    runs; seeds vary the agent and the environment's sampling. ``accuracy`` defaults to 0.1 rho*
    (10% of the optimal expected return).
    """
    if setting not in SETTINGS:
        raise ValueError(f"setting must be one of {tuple(SETTINGS)}, got {setting!r}")
    conf = dict(SETTINGS[setting])
    for key, value in overrides.items():
        if key not in ("states", "actions", "horizon", "episodes"):
            raise ValueError(f"unknown setting override {key!r}")
        conf[key] = value
    if seeds is not None:
        conf["seeds"] = tuple(int(s) for s in seeds)
    if not conf["seeds"]:
        raise ValueError("seeds must not be empty")
    env = make_mdp(mdp, conf["states"], conf["actions"], conf["horizon"], seed=mdp_seed)
    conf["mdp"] = env.name
    optimal = float(env.initial @ backward_induction(env).values[0])
    acc = 0.1 * optimal if accuracy is None else _nonneg_float("accuracy", accuracy)
    eps_list = tuple(None if e is None else positive("epsilon", e) for e in epsilons)
    t_total = positive_int("episodes", conf["episodes"])
    regrets, bounds, counts, jdps = {}, {}, {}, {}
    done_runs = 0
    total = len(eps_list) * len(conf["seeds"]) * t_total
    for eps in eps_list:
        label = _label(eps)
        rows = []
        for sd in conf["seeds"]:
            offset = done_runs * t_total
            cb = None if progress is None else (lambda d, _t, o=offset: progress(o + d, total))
            run = run_pucb(env, t_total, eps, beta, sd, budget_split=budget_split,
                           error_bound=error_bound, unknown=unknown, progress=cb)
            rows.append(run.episode_regret)
            bounds[label] = run.error_bound
            counts[label] = run.info["informative_count"]
            jdps[label] = run.jdp_epsilon
            done_runs += 1
        regrets[label] = np.array(rows)
    conf.update(beta=beta, budget_split=budget_split, error_bound=error_bound, unknown=unknown)
    return RegretExperiment(setting=conf, epsilons=eps_list, episode_regret=regrets,
                            error_bounds=bounds, informative_counts=counts, jdp_epsilons=jdps,
                            accuracy=acc)


def plot_regret(experiment: RegretExperiment, path) -> str:
    """Save a PNG: cumulative regret (mean and min-max band over seeds) and suboptimal episodes.

    Needs matplotlib (the ``plot`` extra), imported here only.
    """
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError("plot_regret needs matplotlib: pip install 'privcal[plot]'") from exc
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4))
    labels = experiment.labels
    for label in labels:
        cum = experiment.cumulative(label)
        x = np.arange(1, cum.shape[1] + 1)
        line, = ax1.plot(x, cum.mean(axis=0), label=label)
        ax1.fill_between(x, cum.min(axis=0), cum.max(axis=0), color=line.get_color(), alpha=0.2)
    ax1.set_xlabel("episode t")
    ax1.set_ylabel("cumulative regret (exact)")
    conf = experiment.setting
    ax1.set_title(f"PUCB on {conf['mdp']}, E: {conf['error_bound']}, split: {conf['budget_split']}",
                  fontsize=9)
    ax1.legend(fontsize=8)
    subs = [experiment.suboptimal_episodes(label) for label in labels]
    ax2.bar(range(len(labels)), [s.mean() for s in subs],
            yerr=[[s.mean() - s.min() for s in subs], [s.max() - s.mean() for s in subs]])
    ax2.set_xticks(range(len(labels)))
    ax2.set_xticklabels(labels, fontsize=8)
    ax2.set_ylabel(f"episodes with regret > {experiment.accuracy:.3g}")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return str(path)


def _sup_errors(steps: int, epsilon: float, shape, seed, stream: str = "random") -> np.ndarray:
    """sup_t |release_t - c(t)| for independent counters of ``shape`` (Monte Carlo helper)."""
    counter_ss, stream_ss = np.random.SeedSequence(seed).spawn(2)
    rng = np.random.default_rng(stream_ss)
    counter = BinaryCounter(steps, epsilon, shape, seed=counter_ss)
    exact = np.zeros(shape)
    sup = np.zeros(shape)
    for _ in range(steps):
        values = rng.random(shape) if stream == "random" else np.zeros(shape)
        exact += values
        np.maximum(sup, np.abs(counter.update(values) - exact), out=sup)
    return sup


def _verdict(lo: float, hi: float, beta: float) -> str:
    if hi <= beta:
        return "holds"
    if lo > beta:
        return "fails"
    return "inconclusive"


def sup_error_failure_lower_bound(bound, steps, epsilon, counters=1) -> float:
    """Rigorous lower bound on P(sup_t |error_t| > bound) for ``counters`` independent counters.

    Rounds t = 2^j (j = 0..L-1) each release exactly one p-sum, of distinct levels, so their errors
    are independent Laplace(b): P(no failure) <= (1 - exp(-bound/b))^{L * counters}.
    """
    e = _nonneg_float("bound", bound)
    b = laplace_scale(steps, epsilon)
    n = num_levels(steps) * positive_int("counters", counters)
    return float(-math.expm1(n * math.log1p(-math.exp(-e / b)))) if e > 0 else 1.0


def counter_error_check(steps, epsilon, beta, *, trials=2000, seed=0, log_base=2.0,
                        confidence=0.95) -> dict:
    """Monte Carlo check of the counter bound (4/eps) ln(1/beta) log(T)^{5/2} (VBKW App. A.3).

    ``trials`` independent counters of length ``steps`` (random streams in [0, 1]); counts how often
    sup_t |release - count| exceeds the paper's bound and the valid union bound
    (:func:`privcal.counter.error_bound`), with exact Clopper-Pearson intervals at ``confidence``.
    Verdict "holds" if the upper end <= beta, "fails" if the lower end > beta. Looseness is each
    bound divided by the empirical (1 - beta)-quantile of the sup error.
    """
    t = positive_int("steps", steps)
    eps = positive("epsilon", epsilon)
    b = open_unit("beta", beta)
    n = positive_int("trials", trials)
    sup = _sup_errors(t, eps, (n,), seed)
    quantile = float(np.quantile(sup, 1.0 - b))
    out = {"steps": t, "epsilon": eps, "beta": b, "trials": n, "confidence": confidence,
           "sup_error_quantile": quantile}
    for name, bound in (("paper", counter_error_bound_paper(t, eps, b, log_base=log_base)),
                        ("union", counter_error_bound(t, eps, b))):
        fails = int(np.sum(sup > bound))
        lo, hi = clopper_pearson(fails, n, confidence)
        out[name] = {"bound": bound, "failures": fails, "failure_rate": fails / n,
                     "interval": (lo, hi), "verdict": _verdict(lo, hi, b),
                     "looseness": bound / quantile if quantile > 0 else math.inf,
                     "failure_lower_bound": sup_error_failure_lower_bound(bound, t, eps)}
    return out


def pucb_error_bound_check(states, actions, horizon, episodes, epsilon, beta, *, trials=200,
                           seed=0, budget_split="paper", confidence=0.95) -> dict:
    """Does PrivQ's E_epsilon bound all 2SAH + S^2AH counters uniformly w.p. >= 1 - beta'?

    Rigorous lower bound on the failure probability (:func:`sup_error_failure_lower_bound` over K
    counters), the valid union bound for comparison, and a Monte Carlo estimate over ``trials``
    runs of all K counters (the error does not depend on the stream, so streams are zeros).
    """
    h = positive_int("horizon", horizon)
    t = positive_int("episodes", episodes)
    b = open_unit("beta", beta)
    k = num_counters(states, actions, h)
    split = counter_epsilon if budget_split == "valid" else counter_epsilon_paper
    ce = split(epsilon, h)
    bound = error_bound_paper(3.0 * h * ce, states, actions, h, t, b)
    sup = _sup_errors(t, ce, (positive_int("trials", trials), k), seed, stream="zeros").max(axis=1)
    fails = int(np.sum(sup > bound))
    lo, hi = clopper_pearson(fails, trials, confidence)
    return {"counters": k, "counter_epsilon": ce, "bound": bound,
            "union_bound": counter_error_bound(t, ce, b, counters=k),
            "failure_lower_bound": sup_error_failure_lower_bound(bound, t, ce, k),
            "failures": fails, "trials": int(trials), "interval": (lo, hi),
            "verdict": _verdict(lo, hi, b)}


def collusion_attack(epsilon, *, steps=16, target=None, trials=20_000, seed=0,
                     confidence=0.95) -> dict:
    r"""The JDP example of VBKW App. A.2: users t-1 and t+1 collude to learn user t's bit.

    They know their own bits and see the releases m~_{t-1}, m~_{t+1}; they guess
    u_t = [m~_{t+1} - u_{t+1} - m~_{t-1} > 1/2]. With one Laplace(1/epsilon) draw xi reused in
    every round (m~_t = m_t + xi) the difference is exactly u_t. With the binary mechanism the
    stream is epsilon-DP, so no guess beats e^epsilon / (1 + e^epsilon) on a uniform bit.
    Returns both accuracies (with Clopper-Pearson intervals) and that limit.
    """
    eps = positive("epsilon", epsilon)
    t_steps = positive_int("steps", steps)
    if t_steps < 3:
        raise ValueError(f"steps must be >= 3 (rounds t-1, t, t+1), got {steps!r}")
    tgt = t_steps // 2 if target is None else positive_int("target", target)
    if not 2 <= tgt <= t_steps - 1:
        raise ValueError(f"target must be in [2, {t_steps - 1}], got {target!r}")
    n = positive_int("trials", trials)
    seeds = np.random.SeedSequence(seed).spawn(3)
    bits = np.random.default_rng(seeds[0]).integers(0, 2, size=(t_steps, n)).astype(float)
    prefix = np.cumsum(bits, axis=0)  # prefix[t-1] = m_t
    # one Laplace draw reused across rounds (the [SS18]-style mechanism)
    xi = np.random.default_rng(seeds[1]).laplace(0.0, 1.0 / eps, size=n)
    single_before, single_after = prefix[tgt - 2] + xi, prefix[tgt] + xi
    # binary mechanism
    counter = BinaryCounter(t_steps, eps, (n,), seed=seeds[2])
    releases = np.array([counter.update(bits[i]) for i in range(t_steps)])
    truth = bits[tgt - 1]
    out = {"epsilon": eps, "steps": t_steps, "target": tgt, "trials": n,
           "dp_limit": math.exp(eps) / (1.0 + math.exp(eps))}
    for name, before, after in (("single_draw", single_before, single_after),
                                ("binary", releases[tgt - 2], releases[tgt])):
        recovered = after - bits[tgt] - before
        correct = int(np.sum((recovered > 0.5) == (truth > 0.5)))
        out[name] = {"accuracy": correct / n,
                     "interval": clopper_pearson(correct, n, confidence),
                     "max_abs_residual": float(np.max(np.abs(recovered - truth)))}
    return out
