r"""Random-map FrozenLake: the map is the private part, drawn from a stated public prior.

On gymnasium's fixed 4x4 map the optimal policy (goal within H = 20 with probability 0.1991) is known without
data, so no private learner can beat "the best data-independent policy" there. Offline learning has a meaning
when the map itself is unknown, as the interval environment's random peak theta (``privcal.rl.envs``):

**Prior** (:func:`draw_map`, privcal's own seeded generator, independent of gymnasium's ``generate_random_map``
whose output may change between gymnasium versions): a 4x4 grid, start S = cell 0 and goal G = cell 15 fixed,
every other cell a hole H with probability :data:`HOLE_PROBABILITY` = 0.2 and frozen F otherwise, independently;
the map is redrawn until a frozen 4-connected path leads from S to G (:func:`has_path`), so the goal is
reachable with positive probability under the slippery dynamics. **Dynamics**: gymnasium's FrozenLake table for
that map (``gymnasium.make("FrozenLake-v1", desc=map, is_slippery=True)``, ``toytext.frozenlake.tables_from_desc``).
**Data**: users' episodes collected in the drawn map by the uniform behaviour policy (``collect_episodes``).

**Reference** (:func:`prior_reference`): the best data-independent policy *in expectation over the prior*,
within a stated public class of data-independent policies: the uniform random policy, the 256 public candidate
policies (``candidate_policies``), the optimal policy of the prior's mean MDP (the transition tables averaged
over the design sample of maps: a policy planned for "a typical map"), and the optimal stationary policy
(first-step greedy action of the H-step optimum) of each map of the design sample. The class member with the
best mean exact value over :data:`DESIGN_MAPS` public design maps is chosen; its expectation over the prior is
then estimated on :data:`EVALUATION_MAPS` *independent* public maps (exact value per map by backward
induction), with its standard error over the maps. Choosing on one sample and reporting on another keeps the
reported reference free of the selection's optimism. The best data-independent policy over *all* policies (a
planning problem over the posterior of a POMDP) is not computed: the reference is the best of the class, and
every output says so.

What a learner's run is compared with, per seed: the reference policy's exact value on that seed's map (a paired
comparison; the mean over seeds estimates the prior expectation), and the map's own optimum beside it.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from numpy.typing import ArrayLike

from privcal import _rng
from privcal import _validate as V
from privcal.rl.pucb.tabular import TabularMDP
from privcal.rl.toytext.frozenlake import (CANDIDATE_SEED, HORIZON, FrozenLakeTables, OfflineEpisodes,
                                           candidate_policies, optimal_value, tables_from_desc, tables_mdp)

__all__ = ["SIZE", "HOLE_PROBABILITY", "MAP_STREAM", "DESIGN_MAPS", "EVALUATION_MAPS", "has_path", "draw_map",
           "public_maps", "map_environment", "mean_mdp", "stationary_values", "PriorReference", "prior_reference",
           "STUCK_STEPS", "hitting_probabilities", "hole_exposure_scores"]

#: the grid's side (4x4 maps)
SIZE = 4
#: probability that a cell other than S and G is a hole
HOLE_PROBABILITY = 0.2
#: the stream of a run's map: the map of seed s is drawn from ``SeedSequence([s, MAP_STREAM])``
MAP_STREAM = 41
#: maps of the public design sample (the reference policy is chosen on them)
DESIGN_MAPS = 200
#: maps of the public evaluation sample (the reference's expectation over the prior is estimated on them)
EVALUATION_MAPS = 2000


def has_path(desc: tuple) -> bool:
    """Whether a 4-connected path of non-hole cells leads from "S" to a "G" (breadth-first search).

    Args:
        desc: the map's rows, strings over "SFHG".

    Returns:
        True when the goal is reachable.
    """
    rows = [str(r) for r in desc]
    n_r, n_c = len(rows), len(rows[0])
    start = next((i, j) for i in range(n_r) for j in range(n_c) if rows[i][j] == "S")
    seen, todo = {start}, deque([start])
    while todo:
        i, j = todo.popleft()
        if rows[i][j] == "G":
            return True
        for di, dj in ((0, 1), (1, 0), (0, -1), (-1, 0)):
            k, m = i + di, j + dj
            if 0 <= k < n_r and 0 <= m < n_c and (k, m) not in seen and rows[k][m] != "H":
                seen.add((k, m))
                todo.append((k, m))
    return False


def _draw(rng: np.random.Generator, hole_probability: float) -> tuple:
    while True:
        holes = rng.random(SIZE * SIZE) < hole_probability
        cells = np.where(holes, "H", "F")
        cells[0], cells[-1] = "S", "G"
        desc = tuple("".join(cells[i * SIZE:(i + 1) * SIZE]) for i in range(SIZE))
        if has_path(desc):
            return desc


def draw_map(seed: int, hole_probability: float = HOLE_PROBABILITY) -> tuple:
    """The private map of seed ``seed``: a draw of the prior (module docstring) from ``SeedSequence([seed, 41])``.

    Args:
        seed: a non-negative int.
        hole_probability: probability of a hole per cell other than S and G, in [0, 1); default 0.2.

    Returns:
        The map's 4 rows, e.g. ("SFFF", "FHFH", "FFFH", "HFFG").

    Raises:
        ValueError: an argument is outside its range.
    """
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed must be a non-negative int, got {seed!r}")
    p = V.nonnegative("hole_probability", hole_probability)
    if p >= 1.0:
        raise ValueError(f"hole_probability must be in [0, 1), got {hole_probability!r}")
    return _draw(_rng.as_generator([int(seed), MAP_STREAM]), p)


def public_maps(count: int, sample: str = "design") -> tuple:
    """A fixed public sample of ``count`` maps of the prior: "design" or "evaluation" (independent streams).

    Args:
        count: an int >= 1.
        sample: "design" (``SeedSequence([CANDIDATE_SEED, 1])``) or "evaluation" (``[CANDIDATE_SEED, 2]``).

    Returns:
        A tuple of maps (each a tuple of rows).
    """
    n = V.positive_int("count", count)
    V.choice("sample", sample, ("design", "evaluation"))
    rng = _rng.as_generator([CANDIDATE_SEED, 1 if sample == "design" else 2])
    return tuple(_draw(rng, HOLE_PROBABILITY) for _ in range(n))


def map_environment(desc: tuple, horizon: int = HORIZON) -> tuple:
    """(tables, finite-horizon MDP) of a map: gymnasium's slippery dynamics for ``desc``.

    Args:
        desc: the map's rows.
        horizon: H, an int >= 1; default :data:`HORIZON`.

    Returns:
        (:class:`~privcal.rl.toytext.frozenlake.FrozenLakeTables`, :class:`~privcal.rl.pucb.tabular.TabularMDP`).
    """
    tab = tables_from_desc(desc)
    return tab, tables_mdp(tab, horizon, f"frozenlake(random map {'/'.join(tab.desc)}, slippery, H={horizon})")


def stationary_values(mdp: TabularMDP, policies: ArrayLike) -> np.ndarray:
    """Exact returns initial @ V^pi_0 of K deterministic stationary policies pi_k(s), by backward induction.

    V_h = r_pi + P_pi V_{h+1}, V_H = 0 (as ``policy_value``, vectorised over the K policies).

    Args:
        mdp: the MDP (time-homogeneous tables, as :func:`map_environment` builds).
        policies: an int array (K, S) of actions.

    Returns:
        The K returns, shape (K,).
    """
    pol = np.asarray(policies)
    if pol.ndim != 2 or pol.shape[1] != mdp.states or pol.dtype.kind not in "iu":
        raise ValueError(f"policies must be an int array (K, {mdp.states}), got shape {pol.shape}")
    s = np.arange(mdp.states)
    p = mdp.transitions[0][s, pol]  # (K, S, S')
    r = mdp.rewards[0][s, pol]  # (K, S)
    v = np.zeros(pol.shape)
    for _ in range(mdp.horizon):
        v = r + np.einsum("kst,kt->ks", p, v)
    return v @ mdp.initial


def _nonstationary_value(mdp: TabularMDP, policy: np.ndarray) -> float:
    v = np.zeros(mdp.states)
    s = np.arange(mdp.states)
    for h in range(mdp.horizon - 1, -1, -1):
        a = policy[h]
        v = mdp.rewards[h][s, a] + mdp.transitions[h][s, a] @ v
    return float(mdp.initial @ v)


@dataclass(frozen=True)
class PriorReference:
    """The best data-independent policy of the stated class in expectation over the prior (module docstring).

    ``value`` is its mean exact return over the evaluation maps and ``se`` the standard error of that mean
    (std over maps / sqrt(maps)); ``optimum`` and ``optimum_se`` the same for each map's own optimal policy (an
    oracle that knows the map); ``label`` names the chosen member; ``kind`` is "stationary" (``policy`` (S,)
    actions), "mean-mdp" (``policy`` (H, S) actions) or "uniform" (no ``policy``); ``class_description`` the
    class in words.
    """

    value: float
    se: float
    optimum: float
    optimum_se: float
    label: str
    kind: str
    policy: tuple
    design_maps: int
    evaluation_maps: int
    horizon: int
    class_description: str

    def value_on(self, mdp: TabularMDP) -> float:
        """The reference policy's exact return on one map's MDP.

        Args:
            mdp: the map's MDP (:func:`map_environment`).
        """
        if self.kind == "uniform":
            return float(mdp.initial @ _uniform(mdp))
        pol = np.asarray(self.policy, dtype=np.int64)
        if self.kind == "stationary":
            return float(stationary_values(mdp, pol[None])[0])
        return _nonstationary_value(mdp, pol)

    def to_dict(self) -> dict:
        """JSON-ready copy (without the policy)."""
        return {"value": self.value, "se": self.se, "optimum": self.optimum, "optimum_se": self.optimum_se,
                "label": self.label, "design_maps": self.design_maps, "evaluation_maps": self.evaluation_maps,
                "horizon": self.horizon, "class": self.class_description}


CLASS_DESCRIPTION = ("best of: the uniform policy, 256 public random stationary policies, the optimal policy of "
                     "the prior's mean MDP, and the optimal stationary policy of each design map")


@lru_cache(maxsize=8)
def mean_mdp(design_maps: int = DESIGN_MAPS, horizon: int = HORIZON) -> TabularMDP:
    """The prior's mean MDP: transition tables and mean rewards averaged over the public design maps.

    A mixture of transition kernels is a kernel, so this is an MDP; planning in it gives a data-independent
    policy for "a typical map" (one member of the reference's class), and its optimal Q is a public starting
    point for a learner.

    Args:
        design_maps: maps averaged, an int >= 1; default :data:`DESIGN_MAPS`.
        horizon: H, an int >= 1; default :data:`HORIZON`.

    Returns:
        The :class:`~privcal.rl.pucb.tabular.TabularMDP`.
    """
    h = V.positive_int("horizon", horizon)
    tabs = [map_environment(d, h)[0] for d in public_maps(V.positive_int("design_maps", design_maps), "design")]
    p = np.mean([t.transitions for t in tabs], axis=0)
    reward = np.mean([t.rewards * t.transitions for t in tabs], axis=0) / np.maximum(p, 1e-300)
    return tables_mdp(FrozenLakeTables(p, reward, tabs[0].terminal, tabs[0].initial, ()), h, "mean MDP of the prior")


@lru_cache(maxsize=8)
def prior_reference(design_maps: int = DESIGN_MAPS, evaluation_maps: int = EVALUATION_MAPS,
                    horizon: int = HORIZON) -> PriorReference:
    """The reference of the random-map environment: the best class member on the design sample, evaluated exactly
    on every map of the independent evaluation sample (module docstring). Public: reads no data.

    Args:
        design_maps: maps the member is chosen on, an int >= 1; default :data:`DESIGN_MAPS`.
        evaluation_maps: maps its expectation is estimated on, an int >= 2; default :data:`EVALUATION_MAPS`.
        horizon: H, an int >= 1; default :data:`HORIZON`.

    Returns:
        The :class:`PriorReference`.
    """
    n_d = V.positive_int("design_maps", design_maps)
    n_e = V.positive_int("evaluation_maps", evaluation_maps)
    if n_e < 2:
        raise ValueError(f"evaluation_maps must be an integer >= 2 (a standard error needs two), got {n_e}")
    h = V.positive_int("horizon", horizon)
    design = [map_environment(d, h) for d in public_maps(n_d, "design")]
    _, mean_pol = optimal_value(mean_mdp(n_d, h))
    stat = np.vstack([candidate_policies(), np.array([optimal_value(m)[1][0] for _, m in design])])
    uniform = np.array([float(m.initial @ _uniform(m)) for _, m in design])
    scores = np.array([stationary_values(m, stat) for _, m in design])  # (maps, K)
    mean_scores = scores.mean(axis=0)
    mean_mdp_score = float(np.mean([_nonstationary_value(m, mean_pol) for _, m in design]))
    best = int(np.argmax(mean_scores))
    options = [(float(uniform.mean()), "uniform random policy", "uniform", ()),
               (mean_mdp_score, "optimal policy of the prior's mean MDP (planned for a typical map)", "mean-mdp",
                tuple(map(tuple, mean_pol.tolist()))),
               (float(mean_scores[best]), ("public candidate policy" if best < 256 else "optimal stationary policy of "
                                           "a design map") + f" #{best % 256 if best < 256 else best - 256}",
                "stationary", tuple(stat[best].tolist()))]
    _, label, kind, policy = max(options, key=lambda o: o[0])
    evaluation = [m for _, m in (map_environment(d, h) for d in public_maps(n_e, "evaluation"))]
    ref = PriorReference(0.0, 0.0, 0.0, 0.0, label, kind, policy, n_d, n_e, h, CLASS_DESCRIPTION)
    vals = np.array([ref.value_on(m) for m in evaluation])
    opt = np.array([float(m.initial @ optimal_value(m)[0][0]) for m in evaluation])
    return PriorReference(float(vals.mean()), float(vals.std(ddof=1) / np.sqrt(n_e)), float(opt.mean()),
                          float(opt.std(ddof=1) / np.sqrt(n_e)), label, kind, policy, n_d, n_e, h, CLASS_DESCRIPTION)


def _uniform(mdp: TabularMDP) -> np.ndarray:
    v = np.zeros(mdp.states)
    for h in range(mdp.horizon - 1, -1, -1):
        v = (mdp.rewards[h] + mdp.transitions[h] @ v).mean(axis=1)
    return v


#: consecutive final steps an episode must spend in one non-goal cell, without reward, to count as ended in a hole
STUCK_STEPS = 5


def hitting_probabilities(policies: ArrayLike, horizon: int = HORIZON) -> np.ndarray:
    """P(policy k visits cell c within H steps) on the hole-free 4x4 map (public: no private map is read).

    Cell c is made absorbing and the start distribution is pushed through the slippery dynamics for H steps; the
    mass absorbed at c is the probability of reaching it.

    Args:
        policies: deterministic stationary policies, an int array (K, 16).
        horizon: H, an int >= 1; default :data:`HORIZON`.

    Returns:
        An array (K, 16) in [0, 1].
    """
    pol = np.asarray(policies)
    h = V.positive_int("horizon", horizon)
    tab = tables_from_desc(("SFFF", "FFFF", "FFFF", "FFFG"))
    n_s = tab.transitions.shape[0]
    if pol.ndim != 2 or pol.shape[1] != n_s or pol.dtype.kind not in "iu":
        raise ValueError(f"policies must be an int array (K, {n_s}), got shape {pol.shape}")
    p = tab.transitions[np.arange(n_s), pol]  # (K, S, S')
    out = np.zeros(pol.shape)
    for c in range(n_s):
        pc = p.copy()
        pc[:, c, :] = 0.0
        pc[:, c, c] = 1.0
        dist = np.broadcast_to(tab.initial, pol.shape).copy()
        for _ in range(h):
            dist = np.einsum("ks,kst->kt", dist, pc)
        out[:, c] = dist[:, c]
    return np.clip(out, 0.0, 1.0)


def hole_exposure_scores(data: OfflineEpisodes, hitting: ArrayLike, public_size: int) -> np.ndarray:
    r"""u_k = (1 / n_pub) sum_i (1 - d_i h_k(c_i)): candidates penalised for the holes the users fell into.

    An episode *ended in a hole* at cell c_i (d_i = 1) when its last :data:`STUCK_STEPS` steps stay in one cell
    that is not the (public) goal, without reward (holes are absorbing); h_k(c) is candidate k's probability of
    visiting c within H on the hole-free map (:func:`hitting_probabilities`, public). Each episode adds one term
    in [0, 1], so one episode added, removed or replaced moves every u_k by at most 1 / n_pub (n_pub public).

    Args:
        data: the episodes (``OfflineEpisodes``).
        hitting: h, an array (K, 16) in [0, 1].
        public_size: n_pub, an int >= 1.

    Returns:
        u, shape (K,).
    """
    n_pub = V.positive_int("public_size", public_size)
    hit = np.asarray(hitting, dtype=float)
    last = data.next_states[:, -STUCK_STEPS:]
    goal = data.behaviour.shape[0] - 1
    stuck = np.all(last == last[:, :1], axis=1) & (last[:, 0] != goal) & (data.rewards.sum(axis=1) == 0)
    cells = last[stuck, 0]
    deaths = np.bincount(cells, minlength=hit.shape[1])
    return (data.episodes - hit @ deaths) / n_pub
