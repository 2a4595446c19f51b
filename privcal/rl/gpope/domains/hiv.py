r"""HIV treatment simulator (Ernst, Stan, Goncalves & Wehenkel 2006; model of Adams et al. 2004).

State x = (T1, T2, T1*, T2*, V, E) [cells/ml, copies/ml]: healthy CD4+ T-lymphocytes (type 1) and
macrophages (type 2), their infected counterparts, free virus, and immune effectors (CTL). Drugs:
reverse-transcriptase inhibitor efficacy eps1 and protease inhibitor efficacy eps2; the 4 actions are
(eps1, eps2) in {(0, 0), (0, 0.3), (0.7, 0), (0.7, 0.3)} (Ernst et al. 2006, Sec. 5). Dynamics (days):

    dT1/dt  = lambda1 - d1 T1 - (1 - eps1) k1 V T1
    dT2/dt  = lambda2 - d2 T2 - (1 - f eps1) k2 V T2
    dT1*/dt = (1 - eps1) k1 V T1 - delta T1* - m1 E T1*
    dT2*/dt = (1 - f eps1) k2 V T2 - delta T2* - m2 E T2*
    dV/dt   = (1 - eps2) N_T delta (T1* + T2*) - c V - [(1 - eps1) rho1 k1 T1 + (1 - f eps1) rho2 k2 T2] V
    dE/dt   = lambda_E + b_E (T1* + T2*) / (T1* + T2* + K_b) E - d_E (T1* + T2*) / (T1* + T2* + K_d) E - delta_E E

with the parameters of Adams et al. 2004 (Table 1 there; repeated in Ernst et al. 2006, Table 1):
:data:`PARAMETERS`. One decision every 5 days (the ODE is integrated over [0, 5] with scipy's LSODA,
``scipy.integrate.odeint``, with a banded Jacobian so that k patients integrate together);
reward (Ernst et al. 2006, Eq. 20), evaluated at the state reached after the 5 days:

    r = -(Q V + R1 eps1^2 + R2 eps2^2 - S E),   Q = 0.1, R1 = 20000, R2 = 2000, S = 1000.

Start: the unhealthy steady state x0 = (163573, 5, 11945, 46, 63919, 24) (Ernst et al. 2006), with
optional multiplicative log-normal jitter ``start_noise`` (0 = as published). Episodes last
``horizon`` decisions (Ernst et al.: 200, i.e. 1000 days). Features: the uncoupled Fourier basis on
log10(x) (6 features describing the patient, GPOPE Sec. 7), order 2 by default (13 features).
Off-policy setup (GPOPE Sec. 7): target = greedy policy of a Q-function learned by Q-learning on these
features, behaviour = softmax of the same Q (temperature in units of the scaled reward).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Optional

import numpy as np
from numpy.typing import ArrayLike
from scipy.integrate import odeint

from privcal import _rng
from privcal import _validate as V
from privcal.rl.gpope.domains.features import FourierBasis
from privcal.rl.gpope.domains.policies import Greedy, Softmax, collect, collect_unchecked, q_learning

__all__ = ["PARAMETERS", "REWARD", "ACTIONS", "X0_UNHEALTHY", "X0_HEALTHY", "hiv_derivatives",
           "HIVBatch", "HIVEnv", "hiv_features", "HIVLearning", "learn_hiv_policies", "sample_hiv",
           "sample_hiv_unchecked"]

#: Adams et al. 2004 (Table 1), as used by Ernst et al. 2006 (Table 1).
PARAMETERS = {
    "lambda1": 1e4, "d1": 0.01, "k1": 8e-7, "m1": 1e-5, "rho1": 1.0,
    "lambda2": 31.98, "d2": 0.01, "k2": 1e-4, "f": 0.34, "m2": 1e-5, "rho2": 1.0,
    "delta": 0.7, "NT": 100.0, "c": 13.0,
    "lambdaE": 1.0, "bE": 0.3, "Kb": 100.0, "dE": 0.25, "Kd": 500.0, "deltaE": 0.1,
}
#: Reward weights of Ernst et al. 2006, Eq. (20).
REWARD = {"Q": 0.1, "R1": 20000.0, "R2": 2000.0, "S": 1000.0}
#: (eps1, eps2) of the four actions: none, PI only, RTI only, both (Ernst et al. 2006, Sec. 5).
ACTIONS = np.array([[0.0, 0.0], [0.0, 0.3], [0.7, 0.0], [0.7, 0.3]])
#: Unhealthy (start) and healthy steady states (Adams et al. 2004; Ernst et al. 2006, Sec. 5).
X0_UNHEALTHY = np.array([163573.0, 5.0, 11945.0, 46.0, 63919.0, 24.0])
X0_HEALTHY = np.array([967839.0, 621.0, 76.0, 6.0, 415.0, 353108.0])
DAYS_PER_STEP = 5.0
GAMMA = 0.98


def hiv_derivatives(x: ArrayLike, eps1: ArrayLike, eps2: ArrayLike,
                    p: dict[str, float] = PARAMETERS) -> np.ndarray:
    """Right-hand side of the Adams et al. 2004 ODE for states x of shape (6,) or (k, 6).

    Args:
        x: states (T1, T2, T1*, T2*, V, E), shape (6,) or (k, 6).
        eps1: reverse-transcriptase inhibitor efficacy, in [0, 1] (scalar or per state).
        eps2: protease inhibitor efficacy, in [0, 1] (scalar or per state).
        p: the model parameters; default :data:`PARAMETERS` (Adams et al. 2004).

    Returns:
        dx/dt, same shape as ``x`` (per day).
    """
    x = np.asarray(x, dtype=float)
    t1, t2, t1s, t2s, v, e = np.moveaxis(x, -1, 0)
    inf1 = (1 - eps1) * p["k1"] * v * t1
    inf2 = (1 - p["f"] * eps1) * p["k2"] * v * t2
    infected = t1s + t2s
    out = np.stack([
        p["lambda1"] - p["d1"] * t1 - inf1,
        p["lambda2"] - p["d2"] * t2 - inf2,
        inf1 - p["delta"] * t1s - p["m1"] * e * t1s,
        inf2 - p["delta"] * t2s - p["m2"] * e * t2s,
        (1 - eps2) * p["NT"] * p["delta"] * infected - p["c"] * v
        - ((1 - eps1) * p["rho1"] * p["k1"] * t1 + (1 - p["f"] * eps1) * p["rho2"] * p["k2"] * t2) * v,
        p["lambdaE"] + p["bE"] * infected / (infected + p["Kb"]) * e
        - p["dE"] * infected / (infected + p["Kd"]) * e - p["deltaE"] * e,
    ], axis=-1)
    return out


def hiv_reward(x_next: ArrayLike, eps1: ArrayLike, eps2: ArrayLike,
               w: dict[str, float] = REWARD) -> np.ndarray:
    """r = -(Q V + R1 eps1^2 + R2 eps2^2 - S E) (Ernst et al. 2006, Eq. 20).

    Args:
        x_next: states reached, shape (..., 6).
        eps1: reverse-transcriptase inhibitor efficacy.
        eps2: protease inhibitor efficacy.
        w: the weights Q, R1, R2, S; default :data:`REWARD`.
    """
    x_next = np.asarray(x_next, dtype=float)
    return -(w["Q"] * x_next[..., 4] + w["R1"] * eps1 ** 2 + w["R2"] * eps2 ** 2
             - w["S"] * x_next[..., 5])


def _integrate(x, eps1, eps2, days=DAYS_PER_STEP) -> np.ndarray:
    """Integrate k patients over ``days`` with LSODA; the Jacobian is block-diagonal (band 5)."""
    k = x.shape[0]

    def rhs(y, _t):
        return hiv_derivatives(y.reshape(k, 6), eps1, eps2).ravel()

    y = odeint(rhs, x.ravel(), [0.0, days], ml=5, mu=5, rtol=1e-6, atol=1e-6, mxstep=50000)
    out = y[-1].reshape(k, 6)
    if not np.all(np.isfinite(out)):
        raise FloatingPointError("HIV ODE integration produced non-finite states")
    return np.maximum(out, 0.0)


@dataclass(frozen=True)
class HIVBatch:
    """k HIV patients stepped together (batched environment of :mod:`privcal.rl.gpope.domains.policies`).

    ``horizon`` decisions per episode (5 days each); ``start_noise`` the std of the multiplicative
    log-normal jitter on the start state (0: the published unhealthy steady state).
    """

    horizon: int = 200
    start_noise: float = 0.0
    n_actions: int = 4
    state_dim: int = 6

    def reset(self, k: int, rng: np.random.Generator) -> np.ndarray:
        """k start states, shape (k, 6).

        Args:
            k: number of patients, an int >= 1 (trusted: the caller validated it).
            rng: the generator of the jitter.
        """
        x = np.tile(X0_UNHEALTHY, (k, 1))
        if self.start_noise > 0:
            x = x * np.exp(self.start_noise * rng.standard_normal((k, 6)))
        return x

    def observe(self, state: ArrayLike) -> np.ndarray:
        """Observations = states (float64), shape (k, 6).

        Args:
            state: states, shape (k, 6).
        """
        return np.asarray(state, dtype=float)

    def step(self, state: ArrayLike, actions: ArrayLike) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Five days of treatment: (next states, rewards, terminated (never)).

        Args:
            state: states, shape (k, 6).
            actions: k action indices in {0, 1, 2, 3} (rows of :data:`ACTIONS`).
        """
        eps = ACTIONS[np.asarray(actions)]
        nxt = _integrate(np.asarray(state, dtype=float), eps[:, 0], eps[:, 1])
        return nxt, hiv_reward(nxt, eps[:, 0], eps[:, 1]), np.zeros(nxt.shape[0], dtype=bool)


class HIVEnv:
    """Gymnasium-style single patient: ``reset(seed=None) -> (x, info)``, ``step(a) -> (x', r, terminated, truncated, info)``.

    Args:
        horizon: decisions per episode, an int >= 1; default 200 (Ernst et al. 2006).
        start_noise: std of the log-normal start jitter, in [0, inf); default 0.

    Raises:
        ValueError: an argument is outside its range.
    """

    n_actions = 4

    def __init__(self, horizon: int = 200, start_noise: float = 0.0):
        self.batch = HIVBatch(V.positive_int("horizon", horizon), V.nonnegative("start_noise", start_noise))
        self.np_random = _rng.as_generator(None)
        self.state = None
        self.t = 0

    def reset(self, *, seed: _rng.Seed = None,
              options: Optional[dict] = None) -> tuple[np.ndarray, dict[str, Any]]:
        """Start an episode; returns (state, info).

        Args:
            seed: reseeds ``self.np_random`` (``privcal._rng``), or None to keep it; default None.
            options: ignored (Gymnasium's reset argument); default None.
        """
        if seed is not None:
            self.np_random = _rng.as_generator(seed, "seed")
        self.state = self.batch.reset(1, self.np_random)[0]
        self.t = 0
        return self.state.copy(), {}

    def step(self, action: int) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        """Five days with treatment ``action``: (state, reward, terminated, truncated, info).

        Args:
            action: an index in {0, 1, 2, 3} (rows of :data:`ACTIONS`).

        Raises:
            RuntimeError: ``reset`` was not called.
            ValueError: an invalid action.
        """
        if self.state is None:
            raise RuntimeError("call reset() before step()")
        if action not in range(4):
            raise ValueError(f"action must be in {{0, 1, 2, 3}}, got {action!r}")
        nxt, r, _ = self.batch.step(self.state[None, :], np.array([action]))
        self.state = nxt[0]
        self.t += 1
        return self.state.copy(), float(r[0]), False, self.t >= self.batch.horizon, {}


#: log10 box of the Fourier features: covers the unhealthy and healthy equilibria with margins.
LOG10_LOW = np.array([3.0, 0.0, -1.0, -1.0, 0.0, 0.0])
LOG10_HIGH = np.array([6.5, 3.5, 5.5, 3.0, 6.5, 6.0])


def _log10(x):
    return np.log10(np.maximum(x, 1e-12))


def hiv_features(order: int = 2) -> FourierBasis:
    """Uncoupled Fourier basis of order ``order`` on log10(state) (1 + 6 order features).

    Args:
        order: the Fourier order, an int >= 0; default 2.
    """
    return FourierBasis(LOG10_LOW, LOG10_HIGH, order, coupled=False, transform=_log10)


@dataclass(frozen=True)
class HIVLearning:
    """How :func:`learn_hiv_policies` learns the HIV target and behaviour policies (defaults in one place).

    Fields:
        episodes: Q-learning episodes, an int >= 1; default 64.
        seed: seed of the learning (``privcal._rng``); default 0.
        order: Fourier order of the features, an int >= 0; default 2.
        step_size: Q-learning step size, in (0, inf); default 0.05.
        temperature: softmax temperature of the behaviour, in (0, inf) (scaled reward units); default 0.5.
        reward_scale: factor on the rewards while learning, in (0, inf); default 1e-5.
        batch: patients per Q-learning round, an int >= 1; default 32.
        progress: called as ``progress(round, rounds)``; default None.
    """

    episodes: int = 64
    seed: _rng.Seed = 0
    order: int = 2
    step_size: float = 0.05
    temperature: float = 0.5
    reward_scale: float = 1e-5
    batch: int = 32
    progress: Optional[Callable[[int, int], None]] = None


def learn_hiv_policies(env: HIVBatch, settings: Optional[HIVLearning] = None,
                       **keywords: Any) -> tuple[Greedy, Softmax]:
    """(target, behaviour): greedy and softmax policies of a Q learned by batched Q-learning (seeded).

    Q-learning runs on rewards x ``reward_scale`` (so Q is in those units) with gamma = GAMMA and
    epsilon-greedy exploration (0.2); the softmax temperature is in the same scaled units.

    Args:
        env: the HIV environment.
        settings: a :class:`HIVLearning` (None: its defaults), its fields replaced by the keywords.
        **keywords: the :class:`HIVLearning` fields ``episodes`` (default 64), ``seed`` (0), ``order`` (2),
            ``step_size`` (0.05), ``temperature`` (0.5), ``reward_scale`` (1e-5), ``batch`` (32) and
            ``progress`` (None).

    Raises:
        ValueError: an argument is outside its range.
    """
    st = V.settings_with("learn_hiv_policies", HIVLearning, settings, keywords)
    episodes, seed, order, step_size, reward_scale, batch, progress = (
        st.episodes, st.seed, st.order, st.step_size, st.reward_scale, st.batch, st.progress)
    temperature = V.positive("temperature", st.temperature)  # before the (slow) learning
    basis = hiv_features(order)
    q = q_learning(env, basis, episodes=episodes, rng=_rng.as_generator(seed, "seed"),
                   step_size=step_size, exploration=0.2, gamma=GAMMA, batch=batch,
                   reward_scale=reward_scale, progress=progress)
    return Greedy(q), Softmax(q, temperature)


def sample_hiv(trajectories: int, rng: _rng.Seed, *, target: Any, behaviour: Any, env: HIVBatch,
               gamma: float = GAMMA, reward_scale: float = 1e-5) -> Any:
    """m off-policy HIV trajectories (behaviour = softmax, target = greedy); rewards x ``reward_scale``.

    The scale leaves the relative MSPBE (:func:`privcal.rl.gpope.mspbe.relative_mspbe`) unchanged and keeps
    GPOPE's clipped gradients in a useful range.

    Args:
        trajectories: m, an int >= 1.
        rng: seed or Generator of the sample (``privcal._rng``).
        target: the evaluated policy (:func:`learn_hiv_policies`).
        behaviour: the behaviour policy.
        env: the HIV environment.
        gamma: the discount factor, in [0, 1]; default 0.98.
        reward_scale: factor on the rewards, in [0, inf); default 1e-5.

    Returns:
        a validated :class:`~privcal.rl.gpope.domains.data.Dataset`.
    """
    return collect(env, trajectories, behaviour, rng=rng, features=behaviour.q.features,
                   gamma=gamma, target=target, reward_scale=reward_scale)


def sample_hiv_unchecked(trajectories: int, rng: _rng.Seed, *, target: Any, behaviour: Any, env: HIVBatch,
                         gamma: float = GAMMA, reward_scale: float = 1e-5) -> Any:
    """:func:`sample_hiv` without validating ``trajectories`` and ``reward_scale``, for callers that validated
    them (``privcal train gpope``): the same sample.

    Args:
        trajectories: m, an int >= 1 (not checked).
        rng: seed or Generator of the sample (``privcal._rng``).
        target: the evaluated policy (:func:`learn_hiv_policies`).
        behaviour: the behaviour policy.
        env: the HIV environment.
        gamma: the discount factor, in [0, 1]; default 0.98.
        reward_scale: factor on the rewards, a float in [0, inf) (not checked); default 1e-5.

    Returns:
        a validated :class:`~privcal.rl.gpope.domains.data.Dataset`.
    """
    return collect_unchecked(env, trajectories, behaviour, rng=rng, features=behaviour.q.features,
                             gamma=gamma, target=target, reward_scale=reward_scale)
