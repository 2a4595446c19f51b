r"""One run of a private offline learner on FrozenLake, with its guarantee, references and verdict.

:func:`run_frozenlake` runs ``select`` (``privcal.rl.toytext.frozenlake.offline_select``: the exponential
mechanism or report-noisy-max over public candidate policies, pure epsilon-DP) or ``fqi-dpsgd``
(``privcal.rl.toytext.fqi.train_fqi_frozenlake``: fitted-Q iteration by DP-SGD, (epsilon, delta)-DP) on

* ``"random-map"`` (default): the map of seed s is the prior's draw ``random_map.draw_map(s)`` (the private part),
  the users' episodes are collected in it by the uniform behaviour policy. The trivial reference is the best
  data-independent policy of a stated class in expectation over the prior (``random_map.prior_reference``):
  per run its exact value on the drawn map (a paired comparison over seeds), and its prior expectation with a
  standard error; the drawn map's optimum is reported beside it. select's candidates are the optimal stationary
  policies of the public design maps (``random_map.DESIGN_MAPS``), public and data-independent, scored by
  ``random_map.hole_exposure_scores`` (each candidate penalised for the holes users fell into, weighted by its
  public probability of visiting them; per-episode importance weights of length-H paths under the uniform
  behaviour, 4^L, leave almost no episode that follows a candidate to the goal, so that score cannot rank them).
* ``"fixed"``: gymnasium's 4x4 map (select as ``frozenlake.offline_select``: importance-weighted returns over the
  256 public random candidates). There the optimal policy (0.1991 within H = 20) is data-independent (the map
  is public), so no learner can beat the best data-independent policy; the run is compared with the uniform
  (behaviour) policy, and the candidates' mean (a data-independent random pick) is reported beside it.

**Privacy unit: one episode = one user** (one user's whole H-step trajectory), so the user-level epsilon is the
run's own. The guarantee covers the released policy; the utility is its exact return (goal probability within
H) on the run's map, by backward induction, and like the references it reads the private map (not covered).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

import numpy as np

from privcal import _validate as V
from privcal.rl.toytext import fqi, frozenlake, random_map
from privcal.rl.units import describe

__all__ = ["METHODS", "ENVIRONMENTS", "SELECTORS", "FrozenLakeRun", "FrozenLakeSettings", "select_candidates",
           "run_frozenlake"]

METHODS = ("select", "fqi-dpsgd")
ENVIRONMENTS = ("random-map", "fixed")
SELECTORS = frozenlake.OFFLINE_SELECTORS
_BEHAVIOUR = "uniform random (each action with probability 1/4), public"
_DESIGN: list = []


@dataclass(frozen=True)
class FrozenLakeRun:
    """What :func:`run_frozenlake` measured: the released policy's exact ``value`` and its references.

    ``reference`` is the trivial reference's exact value on this run's map (random-map: the prior reference
    policy; fixed: the uniform policy), ``reference_expectation`` and ``reference_se`` its expectation over the
    prior and standard error (random-map; on the fixed map the exact value, se 0); ``optimum`` the map's optimal
    return (an oracle knowing the map); ``non_private`` the same learner without noise on the same data (select:
    the best candidate by the same scores, no noise; None when not run).
    """

    method: str
    environment: str
    desc: tuple
    epsilon: Optional[float]
    delta: Optional[float]
    episodes: int
    seed: int
    value: float
    reference: float
    reference_expectation: float
    reference_se: float
    reference_label: str
    optimum: float
    non_private: Optional[float]
    guarantee: str
    premises: tuple = ()
    details: dict = field(default_factory=dict)

    @property
    def premises_held(self) -> bool:
        """Whether every premise of the run held (True when it has none)."""
        return all(ok for _, ok, _ in self.premises)

    def to_dict(self) -> dict:
        """JSON-ready record."""
        return {"agent": "frozenlake", "method": self.method, "environment": self.environment, "map": list(self.desc),
                "privacy_unit": "episode", "privacy_unit_description": describe("episode"),
                "user_unit": "episode", "user_level_note": "one user = one episode: the user-level epsilon is the "
                "run's own", "epsilon": self.epsilon, "delta": self.delta, "guarantee": self.guarantee,
                "episodes": self.episodes, "behaviour_policy": _BEHAVIOUR, "seed": self.seed,
                "value": self.value, "value_note": frozenlake.GOAL_PROBABILITY_NOTE + "; exact (backward induction)",
                "reference": self.reference, "reference_expectation": self.reference_expectation,
                "reference_se": self.reference_se, "reference_label": self.reference_label, "optimum": self.optimum,
                "non_private": self.non_private,
                "premises": [{"name": n, "held": bool(h), "evidence": e} for n, h, e in self.premises],
                **self.details}


def select_candidates(environment: str) -> np.ndarray:
    """select's public candidate policies: random-map, the optimal stationary policies of the design maps; fixed,
    ``frozenlake.candidate_policies()``.

    Args:
        environment: "random-map" or "fixed".

    Returns:
        An int array (K, 16).
    """
    V.choice("environment", environment, ENVIRONMENTS)
    if environment == "fixed":
        return frozenlake.candidate_policies()
    return _design_optima()


def _design_optima() -> np.ndarray:
    if not _DESIGN:  # public and fixed: computed once per process
        maps = random_map.public_maps(random_map.DESIGN_MAPS, "design")
        _DESIGN.append(np.array([frozenlake.optimal_value(random_map.map_environment(d)[1])[1][0] for d in maps]))
    return _DESIGN[0]


def _hitting() -> np.ndarray:
    if not _HITTING:
        _HITTING.append(random_map.hitting_probabilities(_design_optima()))
    return _HITTING[0]


_HITTING: list = []


def _select_random_map(data, eps, n_pub, selector, seed, mdp, non_private) -> tuple:
    """select on a random map: hole-exposure scores (``random_map.hole_exposure_scores``, sensitivity 1 / n_pub)
    released by ``privcal.rl.dpq.select.select`` through ``frozenlake.selection_arguments`` with W = 1 (the proof
    of ``frozenlake.offline_select`` with scores per episode in [0, 1])."""
    from privcal.rl.dpq.select import select

    cand = _design_optima()
    u = random_map.hole_exposure_scores(data, _hitting(), n_pub)
    scaled, eps_arg = frozenlake.selection_arguments(u, eps, 1.0, n_pub)
    chosen = select(scaled, eps_arg, selector, seed=[seed, 61])
    values = random_map.stationary_values(mdp, cand)
    np_value = float(values[int(np.argmax(u))]) if non_private else None
    guarantee = (f"({eps:g}, 0)-DP for one episode (one user's trajectory) added, removed or replaced: {selector} "
                 f"selection over {cand.shape[0]} public candidate policies (the optimal stationary policies of the "
                 f"public design maps), scores = hole-exposure terms in [0, 1] per episode summed and divided by the "
                 f"public size {n_pub}; sensitivity {1.0 / n_pub:.4g}; pure epsilon-DP, so (epsilon, delta)-DP for "
                 f"every delta")
    extra = {"selector": selector, "score": "hole-exposure", "candidates": int(cand.shape[0]), "chosen": int(chosen),
             "candidate_mean": float(values.mean()), "best_candidate": float(values.max()),
             "delta_note": "pure epsilon-DP: the guarantee holds for every delta"}
    return float(values[chosen]), np_value, guarantee, extra


@dataclass(frozen=True)
class FrozenLakeSettings:
    """One FrozenLake run's privacy target, environment, size, seed and learner (defaults in one place: here;
    checked by :func:`run_frozenlake`).

    Attributes:
        epsilon: target epsilon, in (0, inf); None for the non-private learner (fqi-dpsgd only). Default None,
            but :func:`run_frozenlake` called without ``settings`` needs it as a keyword.
        delta: target delta, in (0, 1): required by fqi-dpsgd, recorded by select (pure epsilon-DP); default None.
        environment: "random-map" (default) or "fixed".
        episodes: the planned number of episodes (users), public, an int >= 1; default 10000.
        seed: seed of the map (random-map), the data and the mechanism, a non-negative int; default 0.
        selector: select's "exponential" (default) or "noisy-max".
        config: fqi-dpsgd's :class:`~privcal.rl.toytext.fqi.TabularFQIConfig`; default None (the defaults).
        public_size: N_pub, the public number of episodes; default None (``episodes``, stated before collecting).
        non_private: also run the same learner without noise on the same data (default True).
    """

    epsilon: Optional[float] = None
    delta: Optional[float] = None
    environment: str = "random-map"
    episodes: int = 10000
    seed: int = 0
    selector: str = "exponential"
    config: Optional[fqi.TabularFQIConfig] = None
    public_size: Optional[int] = None
    non_private: bool = True


def run_frozenlake(method: str, settings: Optional[FrozenLakeSettings] = None, **keywords: Any) -> FrozenLakeRun:
    """One run of ``select`` or ``fqi-dpsgd`` on FrozenLake (module docstring).

    Args:
        method: "select" or "fqi-dpsgd".
        settings: the run, a :class:`FrozenLakeSettings`; default None: built from ``keywords`` (then ``epsilon``
            is required).
        keywords: fields of :class:`FrozenLakeSettings` (``epsilon``, ``delta``, ``environment``, ``episodes``,
            ``seed``, ``selector``, ``config``, ``public_size``, ``non_private``), replacing those of ``settings``.

    Returns:
        The :class:`FrozenLakeRun`.

    Raises:
        ValueError: an argument is outside its range.
    """
    if settings is None and "epsilon" not in keywords:
        raise TypeError("run_frozenlake() missing 1 required keyword-only argument: 'epsilon'")
    st = V.settings_with("run_frozenlake", FrozenLakeSettings, settings, keywords)
    epsilon, delta, environment, episodes, seed = st.epsilon, st.delta, st.environment, st.episodes, st.seed
    selector, config, public_size, non_private = st.selector, st.config, st.public_size, st.non_private
    V.choice("method", method, METHODS)
    V.choice("environment", environment, ENVIRONMENTS)
    n = V.positive_int("episodes", episodes)
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed must be a non-negative int, got {seed!r}")
    seed = int(seed)
    if method == "select":
        V.positive("epsilon", epsilon)
        V.choice("selector", selector, SELECTORS)
    if delta is not None:
        V.open_unit("delta", delta)
    if environment == "random-map":
        desc = random_map.draw_map(seed)
        tables, mdp = random_map.map_environment(desc)
        prior = random_map.prior_reference()
        reference, expectation, ref_se = prior.value_on(mdp), prior.value, prior.se
        label = "best data-independent policy in expectation over the map prior (of a stated class)"
        extra_ref = {"reference_policy": prior.label, "reference_class": prior.class_description,
                     "reference_expectation_basis": f"{prior.evaluation_maps} public evaluation maps (exact value per "
                     f"map); chosen on {prior.design_maps} independent public design maps"}
    else:
        tables = frozenlake.frozen_lake_tables()
        mdp = frozenlake.tables_mdp(tables, frozenlake.HORIZON, "frozenlake(4x4, slippery, H=20)")
        desc = tables.desc
        reference = expectation = float(mdp.initial @ frozenlake.uniform_value(mdp)[0])
        ref_se = 0.0
        label = "uniform (behaviour) policy"
        extra_ref = {"fixed_map_note": "the map is public, so its optimal policy (0.1991 within H = 20) is "
                     "data-independent: no learner can beat the best data-independent policy there; the run is "
                     "compared with the uniform behaviour policy"}
    optimum = float(mdp.initial @ frozenlake.optimal_value(mdp)[0][0])
    data = frozenlake.collect_episodes(n, seed=seed, tables=tables)
    n_pub = n if public_size is None else V.positive_int("public_size", public_size)
    details: dict = {"public_size": n_pub, **extra_ref}
    if method == "select" and environment == "fixed":
        cand = select_candidates(environment)
        res = frozenlake.offline_select(data, epsilon, candidates=cand, public_size=n_pub, selector=selector,
                                        seed=[seed, 61], mdp=mdp)
        value, guarantee, premises = res.value, res.guarantee, ()
        np_value = None
        if non_private:
            best = int(np.argmax(res.scores))
            np_value = float(random_map.stationary_values(mdp, cand[best:best + 1])[0])
        details.update(selector=selector, score="importance", candidates=int(cand.shape[0]), clip=res.clip,
                       candidate_mean=res.candidate_mean, best_candidate=res.best_candidate,
                       uniform_value=res.uniform_value, chosen=res.chosen,
                       delta_note="pure epsilon-DP: the guarantee holds for every delta")
    elif method == "select":
        value, np_value, guarantee, extra = _select_random_map(data, float(epsilon), n_pub, selector, seed, mdp,
                                                               non_private)
        premises = ()
        details.update(extra)
    else:
        res = fqi.train_fqi_frozenlake(data, mdp, epsilon=epsilon, delta=delta, config=config,
                                       public_size=public_size, seed=seed)
        value, guarantee, premises = res.value, res.guarantee, res.premises
        np_value = None
        if non_private and epsilon is not None:
            np_value = fqi.train_fqi_frozenlake(data, mdp, epsilon=None, delta=None, config=config,
                                                public_size=public_size, seed=seed).value
        d = res.to_dict()
        details.update({k: d[k] for k in ("sigma", "sample_rate", "sample_rate_source", "sampling", "neighbouring",
                                          "noisy_steps", "config", "largest_clipped_norm", "accountant_notes",
                                          "greedy_policy")})
    return FrozenLakeRun(method, environment, tuple(desc), None if epsilon is None else float(epsilon), delta, n,
                         seed, float(value), float(reference), float(expectation), float(ref_se), label, optimum,
                         np_value, guarantee, tuple(premises), details)
