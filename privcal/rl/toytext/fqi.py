r"""Fitted-Q iteration by DP-SGD over users' FrozenLake episodes: (epsilon, delta)-DP for one episode (one user).

The tabular counterpart of ``privcal.rl.dpq.fqi_dpsgd`` (the interval environment's learner, whose hat features
and two actions do not fit a 16-state, 4-action grid). What it shares with that learner: the fitted-Q targets
from the previously *released* parameters, Poisson sampling at a rate set from public numbers only, clipping
of each record's summed gradient, Gaussian noise calibrated by ``privcal.calibrate_report``, the step divided by
the public expected batch size, and premises measured on what was summed. :func:`train_fqi_frozenlake`:

* **Model** (tabular, public one-hot features): Q_w(s, a) = w[a, s], i.e. phi(s) = e_s with ||phi||_2 = 1.
* **Fitted-Q iteration** (Ernst, Geurts & Wehenkel 2005), discount gamma: for k = 1..K, targets
  y = r + gamma max_b Q_{w_{k-1}}(s', b) from the released w_{k-1} (w_0 public: zeros, or a data-independent
  prior Q such as the optimal Q of the random-map prior's mean MDP, which decides the greedy action where the data
  say little), then ``steps`` DP-SGD steps on the
  squared loss (Q_w(s, a) - y)^2 / 2, warm-started at w_{k-1}.
* **DP-SGD** (Abadi et al. 2016, Alg. 1) with the **episode** as the record (one user = one episode of H
  transitions): each step, every episode enters the batch independently with probability q = min(1, b / N_pub),
  b the expected batch in episodes and N_pub the **public** number of episodes (the planned budget, or a given
  public size; never the data's own size, which differs between add/remove neighbours). A sampled episode's
  gradient g_i = sum_t (Q_w(s_t, a_t) - y_t) e_{a_t, s_t} is clipped to L2 norm C (:func:`clip_records`), the
  clipped sum gets N(0, sigma^2 I), and w <- w - lr (sum + noise) / (q N_pub).
* **Pricing**: sigma = ``privcal.calibrate_report(epsilon, delta, steps=K x steps, sample_rate=q,
  sensitivity=C, accountant="pld")``: K x steps Poisson-subsampled Gaussian releases under add/remove neighbours,
  composed by privcal's PLD accountant (a certified upper bound on epsilon; q = 1 is priced as plain Gaussian
  composition). The released object is the last w; its greedy policy argmax_a w[a, s] (ties: the first action)
  is post-processing.

**Premises** (measured on what the mechanism used): the largest norm of a clipped episode gradient *as summed*
(after clipping, so a broken clip shows), the number of noisy steps against the number priced. A failed premise
voids the guarantee in the output.

**Utility**: the greedy policy's exact return (goal probability within H) on the environment's MDP, by backward
induction (no simulation error). It reads the private map and is not covered by the guarantee.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Optional

import numpy as np

from privcal import _rng
from privcal import _validate as V
from privcal.rl.pucb.tabular import TabularMDP
from privcal.rl.toytext.frozenlake import OfflineEpisodes, policy_value

__all__ = ["TabularFQIConfig", "TabularFQIResult", "FQISettings", "clip_records", "episode_gradients",
           "train_fqi_frozenlake"]

_NORM_SLACK = 1e-9  # relative rounding allowance when the clipped norms are checked against C


@dataclass(frozen=True)
class TabularFQIConfig:
    """The learner's settings. The defaults were chosen on random maps, seeds 0-19, 10000 episodes, epsilon = 1
    (a small grid over the step size, steps, batch and discount): mean exact value 0.34 private, 0.41 without
    noise, against the reference policy's 0.22 on the same maps. Numbers quoted elsewhere use other seeds.

    Args:
        iterations: K, fitted-Q iterations, an int >= 1; default 10.
        steps: DP-SGD steps per iteration, an int >= 1; default 80.
        batch: expected episodes per step b (q = min(1, b / N_pub)), in (0, inf); default 250.
        clip: C, the per-episode L2 clipping norm, in (0, inf); default 1.
        lr: step size, in (0, inf); default 0.5.
        gamma: discount of the fitted-Q targets, in [0, 1); default 0.95.
    """

    iterations: int = 10
    steps: int = 80
    batch: float = 250.0
    clip: float = 1.0
    lr: float = 0.5
    gamma: float = 0.95

    def __post_init__(self):
        V.positive_int("iterations", self.iterations)
        V.positive_int("steps", self.steps)
        V.positive("batch", self.batch)
        V.positive("clip", self.clip)
        V.positive("lr", self.lr)
        if not 0.0 <= V.nonnegative("gamma", self.gamma) < 1.0:
            raise ValueError(f"gamma must be in [0, 1), got {self.gamma!r}")


@dataclass(frozen=True)
class TabularFQIResult:
    """What :func:`train_fqi_frozenlake` released (``weights`` (A, S)) and measured."""

    epsilon: Optional[float]
    delta: Optional[float]
    sigma: float
    sample_rate: float
    noisy_steps: int
    episodes: int
    public_size: int
    public_size_source: str
    value: float
    greedy: tuple
    config: TabularFQIConfig
    largest_clipped_norm: float
    premises: tuple = ()
    accountant_notes: tuple = ()
    guarantee: str = ""
    weights: np.ndarray = field(repr=False, default=None)

    @property
    def premises_held(self) -> bool:
        """Whether every premise held (True for the non-private learner, which has none)."""
        return all(ok for _, ok, _ in self.premises)

    def sample_rate_source(self) -> str:
        """Where q and the step's normaliser come from, in words."""
        return (f"q = min(1, b / N_pub) = {self.sample_rate:.6g}: expected batch b = {self.config.batch:g} episodes "
                f"per step over the public size N_pub = {self.public_size} episodes ({self.public_size_source}); "
                f"the data's own size is not read; every step is divided by q N_pub = "
                f"{self.sample_rate * self.public_size:g}")

    def to_dict(self) -> dict:
        """JSON-ready summary (without the weights)."""
        return {"epsilon": self.epsilon, "delta": self.delta, "sigma": self.sigma, "sample_rate": self.sample_rate,
                "sample_rate_source": self.sample_rate_source(), "sampling": "poisson" if self.sample_rate < 1
                else "full_batch", "neighbouring": "add_remove", "noisy_steps": self.noisy_steps,
                "episodes": self.episodes, "public_size": self.public_size, "value": self.value,
                "greedy_policy": list(self.greedy), "config": asdict(self.config),
                "largest_clipped_norm": self.largest_clipped_norm,
                "premises": [{"name": n, "held": bool(h), "evidence": e} for n, h, e in self.premises],
                "accountant_notes": list(self.accountant_notes), "guarantee": self.guarantee}


def episode_gradients(weights: np.ndarray, data: OfflineEpisodes, targets: np.ndarray,
                      episodes: np.ndarray) -> np.ndarray:
    """Per-episode gradients of sum_t (Q_w(s_t, a_t) - y_t)^2 / 2, one row (A S,) per chosen episode.

    Args:
        weights: w, shape (A, S).
        data: the episodes.
        targets: y, shape (episodes, H).
        episodes: indices of the chosen episodes, ints.

    Returns:
        An array (len(episodes), A S): row i is sum_t (w[a_t, s_t] - y_t) e_{a_t, s_t} of episode episodes[i].
    """
    w = np.asarray(weights, dtype=float)
    n_a, n_s = w.shape
    s, a = data.states[episodes], data.actions[episodes]
    err = w[a, s] - targets[episodes]
    k = len(episodes)
    index = (np.arange(k)[:, None] * (n_a * n_s) + a * n_s + s).ravel()
    return np.bincount(index, weights=err.ravel(), minlength=k * n_a * n_s).reshape(k, n_a * n_s)


def clip_records(gradients: np.ndarray, clip: float) -> tuple[np.ndarray, np.ndarray]:
    """Each row scaled to L2 norm at most ``clip``: (clipped rows, their norms *after* clipping).

    Args:
        gradients: per-record gradients, shape (n, d).
        clip: C, in (0, inf).

    Returns:
        (the clipped rows, their norms), so that adding or removing one record moves the sum by at most C.
    """
    g = np.asarray(gradients, dtype=float)
    c = V.positive("clip", clip)
    norms = np.sqrt(np.einsum("ij,ij->i", g, g))
    clipped = g * np.minimum(1.0, c / np.maximum(norms, 1e-300))[:, None]
    return clipped, np.sqrt(np.einsum("ij,ij->i", clipped, clipped))


def _calibrate(eps: float, delta: float, steps: int, q: float, clip: float) -> tuple:
    import privcal

    rep = privcal.calibrate_report(eps, delta, steps=steps, sample_rate=None if q >= 1.0 else q, sensitivity=clip,
                                   accountant="pld")
    return float(rep.sigma), (f"sigma from privcal.calibrate_report(accountant='pld'): {rep.accountant}, achieved "
                              f"epsilon {rep.achieved_epsilon:.6g} (upper bound)",) + tuple(rep.notes)


@dataclass(frozen=True)
class FQISettings:
    """One fitted-Q run's privacy target, learner, public size, seed and start (defaults in one place: here;
    checked by :func:`train_fqi_frozenlake`).

    Attributes:
        epsilon: target epsilon, in (0, inf); None (with ``delta`` None) for the non-private learner (the same
            clipping, no noise). Default None, but :func:`train_fqi_frozenlake` called without ``settings`` needs
            it as a keyword.
        delta: target delta, in (0, 1); None only with ``epsilon`` None (default None, required as ``epsilon``).
        config: the :class:`TabularFQIConfig`; default None (``TabularFQIConfig()``).
        public_size: N_pub, the public number of episodes, an int >= 1; default None: the data's planned budget,
            which the caller states as public (``data.episodes`` when the collector was asked for that many).
        seed: seed of the sampling and the noise, a non-negative int; default 0.
        initial: w_0, a public, data-independent starting Q of shape (A, S) (e.g. the optimal Q of the prior's
            mean MDP, ``random_map.mean_mdp``); default None (zeros).
    """

    epsilon: Optional[float] = None
    delta: Optional[float] = None
    config: Optional[TabularFQIConfig] = None
    public_size: Optional[int] = None
    seed: int = 0
    initial: Optional[np.ndarray] = None


def train_fqi_frozenlake(data: OfflineEpisodes, mdp: TabularMDP, settings: Optional[FQISettings] = None,
                         **keywords: Any) -> TabularFQIResult:
    """Fitted-Q iteration by DP-SGD on offline FrozenLake episodes, episode unit (module docstring).

    Args:
        data: the users' episodes (``collect_episodes``); the private input.
        mdp: the environment's MDP, used only to evaluate the released policy exactly (not by the learner).
        settings: the run, a :class:`FQISettings`; default None: built from ``keywords`` (then ``epsilon`` and
            ``delta`` are required).
        keywords: fields of :class:`FQISettings` (``epsilon``, ``delta``, ``config``, ``public_size``, ``seed``,
            ``initial``), replacing those of ``settings``.

    Returns:
        The :class:`TabularFQIResult`.

    Raises:
        ValueError: an argument is outside its range.
        InfeasibleError: no sigma reaches the target.
    """
    missing = [f"'{k}'" for k in ("epsilon", "delta") if settings is None and k not in keywords]
    if missing:
        raise TypeError(f"train_fqi_frozenlake() missing {len(missing)} required keyword-only argument"
                        f"{'s' if len(missing) > 1 else ''}: {' and '.join(missing)}")
    st = V.settings_with("train_fqi_frozenlake", FQISettings, settings, keywords)
    epsilon, delta, config, public_size, seed, initial = (st.epsilon, st.delta, st.config, st.public_size, st.seed,
                                                          st.initial)
    if (epsilon is None) != (delta is None):
        raise ValueError("give both epsilon and delta, or neither (the non-private learner)")
    eps = None if epsilon is None else V.positive("epsilon", epsilon)
    dlt = None if delta is None else V.open_unit("delta", delta)
    cfg = TabularFQIConfig() if config is None else config
    if not isinstance(cfg, TabularFQIConfig):
        raise ValueError(f"config must be a TabularFQIConfig, got {type(cfg).__name__}")
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed must be a non-negative int, got {seed!r}")
    n_pub = data.episodes if public_size is None else V.positive_int("public_size", public_size)
    source = "the planned number of episodes, public" if public_size is None else "given as public"
    q = min(1.0, cfg.batch / n_pub)
    steps = cfg.iterations * cfg.steps
    sigma, notes = 0.0, ()
    if eps is not None:
        sigma, notes = _calibrate(eps, dlt, steps, q, cfg.clip)
    sample_rng, noise_rng = _rng.spawn([int(seed), 51], 2)
    n_s, n_a = mdp.states, mdp.actions
    w = np.zeros((n_a, n_s)) if initial is None else np.array(initial, dtype=float)
    if w.shape != (n_a, n_s) or not np.all(np.isfinite(w)):
        raise ValueError(f"initial must be finite numbers of shape {(n_a, n_s)}, got shape {w.shape}")
    largest, noisy = 0.0, 0
    n = data.episodes
    for _ in range(cfg.iterations):
        y = data.rewards + cfg.gamma * w.max(axis=0)[data.next_states]  # from the released w of the last iteration
        for _ in range(cfg.steps):
            chosen = np.flatnonzero(sample_rng.random(n) < q)  # Poisson sampling of episodes
            clipped, used = clip_records(episode_gradients(w, data, y, chosen), cfg.clip)
            if used.size:  # measured on what is summed (after clipping), so a broken clip shows
                largest = max(largest, float(used.max()))
            total = clipped.sum(axis=0)
            if sigma > 0.0:
                total = total + sigma * noise_rng.standard_normal(total.shape)
                noisy += 1
            w = w - cfg.lr * total.reshape(n_a, n_s) / (q * n_pub)
    greedy = np.argmax(w, axis=0)
    value = float(mdp.initial @ policy_value(mdp, np.eye(n_a)[greedy])[0])
    premises, guarantee = (), "none (non-private: the same learner without noise)"
    if eps is not None:
        premises = (("per-episode clip", largest <= cfg.clip * (1.0 + _NORM_SLACK),
                     f"largest clipped episode gradient norm as summed {largest:.6g} <= C = {cfg.clip:g}"),
                    ("steps priced", noisy == steps, f"{noisy} noisy steps, {steps} priced"))
        if all(ok for _, ok, _ in premises):
            guarantee = (f"({eps:g}, {delta:g})-DP w.r.t. one episode (one user's whole trajectory) added or "
                         f"removed: DP-SGD fitted-Q iteration, Poisson sampling q = {q:.4g}, per-episode clip "
                         f"C = {cfg.clip:g}, sigma = {sigma:.5g} over {steps} steps ({cfg.iterations} FQI iterations), "
                         f"PLD accountant")
        else:
            guarantee = "no guarantee: a premise failed (" + "; ".join(e for _, ok, e in premises if not ok) + ")"
    return TabularFQIResult(eps, dlt, sigma, q, noisy, n, n_pub, source, value, tuple(int(x) for x in greedy), cfg,
                            largest, premises, notes, guarantee, w)
