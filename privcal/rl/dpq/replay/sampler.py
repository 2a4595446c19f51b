"""The noise of the loop's two networks: privcal's exact Ornstein-Uhlenbeck paths revealed at every buffered
state (:class:`ReplayPaths`), or the authors' lazy sampler (:class:`AuthorsNoiseSampler`)."""

from __future__ import annotations

import math

import numpy as np

from privcal import _rng
from privcal import _validate as V
from privcal.rl.dpq.replay.config import ACTIONS

__all__ = ["AuthorsNoiseSampler"]


class AuthorsNoiseSampler:
    r"""The authors' lazy noise sampler: both actions' values at a state, drawn when first asked for.

    The facts of the authors' ``noisebuffer`` (``dpql.py``), with kernel k(x, y) = exp(-beta |x - y|)
    (their code: beta = 1). The sampled states are kept sorted with both actions' values v(x):

    * no state yet: v(s) ~ N(0, sigma^2), independently per action;
    * a sampled state: its stored values;
    * s left of the smallest sampled state x_1: v(s) ~ N(k(s, x_1) v(x_1), sigma^2 (1 - k(s, x_1)^2))
      (exact: the OU process is Markov);
    * s between neighbours x_- < s < x_+: the exact bridge, mean (sinh(beta (x_+ - s)) v(x_-) +
      sinh(beta (s - x_-)) v(x_+)) / sinh(beta (x_+ - x_-)), variance sigma^2 (1 - (k(x_-, s)
      sinh(beta (x_+ - s)) + k(x_+, s) sinh(beta (s - x_-))) / sinh(beta (x_+ - x_-)));
    * s right of the largest sampled state x_n: v(s) ~ N(k(s, x_n) v(x_1), sigma^2 (1 - k(s, x_n)^2)):
      the mean conditions on the *first* (smallest) buffered state's value, not on v(x_n). So the values
      are not the stated Gaussian process, and their law depends on the order of the queries.

    Randomness from ``seed`` (``privcal._rng``); two standard normals per new state (action 0, then 1).

    Args:
        beta: kernel parameter beta, in (0, inf).
        sigma: standard deviation of the process, in (0, inf).
        seed: None, an int >= 0, a SeedSequence or a Generator; default None.

    Raises:
        ValueError: an argument is outside its range.
    """

    def __init__(self, beta: float, sigma: float, seed: _rng.Seed = None):
        self.beta = V.positive("beta", beta)
        self.sigma = V.positive("sigma", sigma)
        self._rng = _rng.as_generator(seed, "seed")
        self._xs: list = []
        self._vs: list = []

    def __len__(self) -> int:
        return len(self._xs)

    def reset(self) -> None:
        """Forget every sampled state (the authors' ``reset`` after each episode)."""
        self._xs, self._vs = [], []

    def sample(self, s: float) -> np.ndarray:
        """Both actions' values at state ``s`` (drawn now if ``s`` was never asked for).

        Args:
            s: the state, a number in [0, 1] (the interval environment's states).

        Returns:
            an array of 2 values (action 0, action 1).

        Raises:
            ValueError: ``s`` is not a number in [0, 1].
        """
        s = V.in_closed("s", s, 0.0, 1.0)
        return self._sample(s)

    def _sample(self, s: float) -> np.ndarray:
        import bisect

        xs, vs, beta, sigma = self._xs, self._vs, self.beta, self.sigma
        i = bisect.bisect_left(xs, s)
        if i < len(xs) and xs[i] == s:
            return vs[i]
        z = self._rng.standard_normal(ACTIONS)
        if not xs:
            v = sigma * z
        elif i == 0:  # left of the smallest: exact
            k = math.exp(-beta * (xs[0] - s))
            v = k * vs[0] + sigma * math.sqrt(1.0 - k * k) * z
        elif i == len(xs):  # right of the largest: the authors condition on the smallest state's value
            k = math.exp(-beta * (s - xs[-1]))
            v = k * vs[0] + sigma * math.sqrt(1.0 - k * k) * z
        else:  # the exact bridge between the neighbours
            lo, hi = xs[i - 1], xs[i]
            w = math.sinh(beta * (hi - lo))
            w_lo, w_hi = math.sinh(beta * (hi - s)) / w, math.sinh(beta * (s - lo)) / w
            var = 1.0 - (math.exp(-beta * (s - lo)) * w_lo + math.exp(-beta * (hi - s)) * w_hi)
            v = w_lo * vs[i - 1] + w_hi * vs[i] + sigma * math.sqrt(max(var, 0.0)) * z
        xs.insert(i, s)
        vs.insert(i, v)
        return v


class ReplayPaths:
    """The two networks' noise (one OU path per action each), or no noise when sigma = 0.

    The authors' code reveals a path lazily at the states it is queried at. Every state an update
    queries is a buffered one, so for paths that live a whole episode (or the run) we reveal them at
    *every* buffered state at once when they are drawn, and at each new state when it is buffered;
    an update then only looks values up. The values used have the same joint law either way (the
    marginal of the same Gaussian process), and this is several times faster. With a new path before
    every update (``noise_reset="update"``) only the batch's states are revealed.
    """

    def __init__(self, config, rng, capacity):
        self.on = config.private
        self.authors = config.sampler == "authors"
        self.eager = config.noise_reset != "update" and not self.authors
        if self.on and self.authors:  # the authors' sampler, queried lazily in their code's order
            policy_rng, target_rng = _rng.spawn(rng, 2)
            self.policy = AuthorsNoiseSampler(config.beta, config.sigma, seed=policy_rng)
            self.target = AuthorsNoiseSampler(config.beta, config.sigma, seed=target_rng)
        elif self.on:
            from privcal.analysis.noise import OrnsteinUhlenbeckPaths

            policy_rng, target_rng = _rng.spawn(rng, 2)
            self.policy = OrnsteinUhlenbeckPaths(ACTIONS, config.beta, config.sigma, seed=policy_rng)
            self.target = OrnsteinUhlenbeckPaths(ACTIONS, config.beta, config.sigma, seed=target_rng)
            if self.eager:
                self.g_s = np.empty((capacity, ACTIONS))  # policy paths at the buffered states s
                self.h_s2 = np.empty((capacity, ACTIONS))  # target paths at the buffered next states

    def at_state(self, s: float) -> np.ndarray:
        """g_a(s) of the policy paths for every action."""
        if self.authors:
            return self.policy._sample(s)
        return np.array([p.sample_point(s) for p in self.policy])

    def pushed(self, pos: int, s: float, s2: float) -> None:
        """Reveal the paths at a newly buffered transition (eager mode)."""
        if self.eager:
            self.g_s[pos] = [p.sample_point(s) for p in self.policy]
            self.h_s2[pos] = [p.sample_point(s2) for p in self.target]

    def batch(self, idx, states, actions, next_live, live) -> tuple[np.ndarray, np.ndarray]:
        """(g_{a_i}(s_i) of the policy paths, h_a(s'_i) of the target paths for live i: (n, actions))."""
        if self.eager:
            return self.g_s[idx, actions], self.h_s2[idx][live]
        if self.authors:  # code's order: policy_net(state_batch), then target_net(non-final next states)
            chosen = np.array([self.policy._sample(float(x))[a] for x, a in zip(states, actions)])
            nxt = np.array([self.target._sample(float(x)) for x in next_live]).reshape(-1, ACTIONS)
            return chosen, nxt
        chosen = np.empty(states.size)
        for a in range(ACTIONS):
            sel = actions == a
            if sel.any():
                chosen[sel] = self.policy[a].sample(states[sel])
        return chosen, self.target.sample_all(next_live).T

    def reset(self, S, S2, size) -> None:
        """New independent paths; in eager mode revealed at every buffered state."""
        self.policy.reset()
        self.target.reset()
        if self.authors:
            return
        if self.eager and size:
            self.g_s[:size] = self.policy.sample_all(S[:size]).T
            self.h_s2[:size] = self.target.sample_all(S2[:size]).T
