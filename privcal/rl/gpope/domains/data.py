r"""Off-policy evaluation data: trajectories, importance ratios and their validation.

A trajectory H = {(S_t, A_t, R_t, S_{t+1})}_{t < tau} of one individual (GPOPE paper, Sec. 2-3) is
stored with pi_b(A_t | S_t) and pi(A_t | S_t), from which the per-step importance ratio
rho_t = pi(A_t | S_t) / pi_b(A_t | S_t) of GPOPE Eq. (2.1) is computed. ``terminated[t]`` says that
S_{t+1} is terminal (absorbing, value 0): its feature vector is then 0; a trajectory cut by a time
limit ends with ``terminated = False`` and bootstraps from S_tau.

:class:`Dataset` stores m trajectories column-wise (concatenated, with offsets) together with the
feature map and gamma, validates them once, and hands out one trajectory's features on demand, so
that memory stays O(transitions x state dimension) rather than O(transitions x features).

Bad input raises ``ValueError`` naming the trajectory and the field: an empty trajectory, features of
the wrong shape or non-finite, a zero behaviour probability (rho undefined), a non-finite reward or
ratio. Nothing is dropped silently.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any, Optional

import numpy as np
from numpy.typing import ArrayLike

from privcal import _validate as V

__all__ = ["Trajectory", "Dataset", "importance_ratios", "discounted_returns"]

_CHUNK_ROWS = 65536


@dataclass(frozen=True)
class Trajectory:
    """One trajectory (arrays of length tau >= 1; observations may have trailing state dimensions).

    Fields: S_t (``observations``), A_t, R_t, S_{t+1} (``next_observations``), whether S_{t+1} is
    terminal, pi_b(A_t | S_t) (``behaviour_probs``) and pi(A_t | S_t) (``target_probs``).
    """

    observations: np.ndarray
    actions: np.ndarray
    rewards: np.ndarray
    next_observations: np.ndarray
    terminated: np.ndarray
    behaviour_probs: np.ndarray
    target_probs: np.ndarray


def importance_ratios(target_probs: ArrayLike, behaviour_probs: ArrayLike,
                      offsets: Optional[ArrayLike] = None) -> np.ndarray:
    """rho_t = pi(A_t|S_t) / pi_b(A_t|S_t) (GPOPE Eq. 2.1); ValueError naming the trajectory on pi_b = 0.

    A zero behaviour probability for an action that was taken makes the ratio undefined (the data
    cannot have come from pi_b).

    Args:
        target_probs: pi(A_t | S_t) per step, 1-d, each in [0, 1].
        behaviour_probs: pi_b(A_t | S_t) per step, same length, each in (0, 1].
        offsets: trajectory offsets (m + 1 entries), only to name the trajectory in errors;
            default None (errors name the step).

    Returns:
        rho per step.

    Raises:
        ValueError: shapes differ, a probability is outside [0, 1], or pi_b = 0.
    """
    t = np.asarray(target_probs, dtype=float)
    b = np.asarray(behaviour_probs, dtype=float)
    if t.shape != b.shape or t.ndim != 1:
        raise ValueError(f"target_probs and behaviour_probs must be 1-d of equal length, got "
                         f"{t.shape} and {b.shape}")
    for name, p in (("target_probs", t), ("behaviour_probs", b)):
        bad = ~((p >= 0) & (p <= 1))
        if bad.any():
            k = int(np.argmax(bad))
            raise ValueError(f"{_where(k, offsets)}: field {name!r} must be a probability in [0, 1], "
                             f"got {p[k]!r}")
    zero = b == 0
    if zero.any():
        k = int(np.argmax(zero))
        raise ValueError(f"{_where(k, offsets)}: field 'behaviour_probs' is 0 for the action taken, "
                         f"so rho = pi / pi_b is undefined (the action cannot come from pi_b)")
    return t / b


def _where(k: int, offsets) -> str:
    if offsets is None:
        return f"step {k}"
    i = int(np.searchsorted(offsets, k, side="right") - 1)
    return f"trajectory {i} (step {k - int(offsets[i])})"


def discounted_returns(rewards: ArrayLike, gamma: float) -> np.ndarray:
    """G_t = sum_{k >= t} gamma^(k - t) R_k for one trajectory (backward recursion G_t = R_t + gamma G_{t+1}).

    Args:
        rewards: R_0..R_{tau-1} of one trajectory.
        gamma: the discount factor, in [0, 1].

    Raises:
        ValueError: ``gamma`` is outside [0, 1].
    """
    gamma = V.in_closed("gamma", gamma, 0.0, 1.0)
    r = np.asarray(rewards, dtype=float)
    g = np.empty_like(r)
    acc = 0.0
    for t in range(r.size - 1, -1, -1):
        acc = r[t] + gamma * acc
        g[t] = acc
    return g


class Dataset:
    """m trajectories for (off-)policy evaluation with linear features, validated on construction.

    Parameters are the concatenation over trajectories of the per-step arrays (length T = sum tau_i),
    ``offsets`` (length m + 1, offsets[0] = 0, offsets[-1] = T, strictly increasing: every trajectory
    has at least one transition).

    Args:
        observations: S_t, shape (T, ...) (any trailing state dimensions the feature map accepts).
        next_observations: S_{t+1}, same shape.
        rewards: R_t, shape (T,), finite.
        terminated: whether S_{t+1} is terminal (then its features are 0), shape (T,).
        rho: importance ratios pi / pi_b, shape (T,), finite and >= 0.
        offsets: trajectory boundaries, m + 1 strictly increasing ints from 0 to T.
        features: a feature map: ``n_features`` and ``__call__(observations) -> (k, n_features)``.
        gamma: the discount factor, in [0, 1].
        actions: A_t, shape (T,), or None; default None.
        validate: check everything on construction (default True; False only for data already
            checked, e.g. :meth:`subset`).

    Raises:
        ValueError: a field is inconsistent or invalid (the message names the trajectory and field).
    """

    def __init__(self, observations: ArrayLike, next_observations: ArrayLike, rewards: ArrayLike,
                 terminated: ArrayLike, rho: ArrayLike, offsets: ArrayLike, *, features: Any,
                 gamma: float, actions: Optional[ArrayLike] = None, validate: bool = True):
        self.gamma = V.in_closed("gamma", gamma, 0.0, 1.0)
        self.features = features
        self.observations = np.asarray(observations)
        self.next_observations = np.asarray(next_observations)
        self.rewards = np.asarray(rewards, dtype=float)
        self.terminated = np.asarray(terminated, dtype=bool)
        self.rho = np.asarray(rho, dtype=float)
        self.actions = None if actions is None else np.asarray(actions)
        self.offsets = np.asarray(offsets, dtype=np.int64)
        self.n_features = int(features.n_features)
        if validate:
            self._validate()

    # ------------------------------------------------------------------ construction
    @classmethod
    def from_trajectories(cls, trajectories: Iterable[Trajectory], *, features: Any,
                          gamma: float) -> "Dataset":
        """Concatenate :class:`Trajectory` objects (rho from their probabilities) and validate.

        Args:
            trajectories: one or more :class:`Trajectory`.
            features: the feature map (see the class docstring).
            gamma: the discount factor, in [0, 1].

        Raises:
            ValueError: no trajectory, an empty one, or inconsistent fields (named).
        """
        trajectories = list(trajectories)
        if not trajectories:
            raise ValueError("trajectories must contain at least one trajectory, got 0")
        fields = ("observations", "actions", "rewards", "next_observations", "terminated",
                  "behaviour_probs", "target_probs")
        lengths = []
        for i, tr in enumerate(trajectories):
            tau = len(np.asarray(tr.rewards))
            if tau == 0:
                raise ValueError(f"trajectory {i}: field 'rewards' has length 0 (a trajectory needs "
                                 f"at least one transition)")
            for name in fields:
                arr = np.asarray(getattr(tr, name))
                if arr.ndim == 0 or arr.shape[0] != tau:
                    raise ValueError(f"trajectory {i}: field {name!r} has length "
                                     f"{arr.shape[0] if arr.ndim else 0}, expected {tau} "
                                     f"(the length of 'rewards')")
            lengths.append(tau)
        offsets = np.concatenate([[0], np.cumsum(lengths)])
        cat = {name: np.concatenate([np.asarray(getattr(tr, name)) for tr in trajectories])
               for name in fields}
        rho = importance_ratios(cat["target_probs"], cat["behaviour_probs"], offsets)
        return cls(cat["observations"], cat["next_observations"], cat["rewards"],
                   cat["terminated"], rho, offsets, features=features, gamma=gamma,
                   actions=cat["actions"])

    # ------------------------------------------------------------------ validation
    def _validate(self) -> None:
        off = self.offsets
        if off.ndim != 1 or off.size < 2 or off[0] != 0:
            raise ValueError(f"offsets must be 1-d, start at 0 and hold m + 1 >= 2 entries, got "
                             f"{off[:5]}...")
        lengths = np.diff(off)
        if np.any(lengths <= 0):
            i = int(np.argmax(lengths <= 0))
            raise ValueError(f"trajectory {i}: field 'rewards' has length {int(lengths[i])} "
                             f"(a trajectory needs at least one transition)")
        total = int(off[-1])
        for name in ("observations", "next_observations", "rewards", "terminated", "rho"):
            arr = getattr(self, name)
            if arr.ndim == 0 or arr.shape[0] != total:
                raise ValueError(f"field {name!r} has {arr.shape[0] if arr.ndim else 0} rows, "
                                 f"expected {total} (offsets[-1])")
        if self.observations.shape != self.next_observations.shape:
            raise ValueError(f"observations and next_observations differ in shape: "
                             f"{self.observations.shape} vs {self.next_observations.shape}")
        for name, arr in (("rewards", self.rewards), ("rho", self.rho)):
            bad = ~np.isfinite(arr)
            if bad.any():
                k = int(np.argmax(bad))
                raise ValueError(f"{_where(k, off)}: field {name!r} is not finite ({arr[k]!r})")
        if np.any(self.rho < 0):
            k = int(np.argmax(self.rho < 0))
            raise ValueError(f"{_where(k, off)}: field 'rho' is negative ({self.rho[k]!r})")
        if self.n_features < 1:
            raise ValueError(f"features.n_features must be >= 1, got {self.n_features}")
        self._check_features("observations", self.observations)
        self._check_features("next_observations", self.next_observations)

    def _check_features(self, name: str, obs: np.ndarray) -> None:
        off = self.offsets
        m = self.m
        start = 0
        while start < m:
            stop = int(np.searchsorted(off, off[start] + _CHUNK_ROWS, side="right") - 1)
            stop = max(stop, start + 1)
            stop = min(stop, m)
            rows = obs[off[start]:off[stop]]
            phi = self._call_features(rows)
            if phi.shape != (rows.shape[0], self.n_features) or not np.all(np.isfinite(phi)):
                for i in range(start, stop):  # name the first offending trajectory
                    part = self._call_features(obs[off[i]:off[i + 1]], i, name)
                    tau = int(off[i + 1] - off[i])
                    if part.shape != (tau, self.n_features):
                        raise ValueError(f"trajectory {i}: field 'features' of {name} has shape "
                                         f"{part.shape}, expected ({tau}, {self.n_features})")
                    if not np.all(np.isfinite(part)):
                        raise ValueError(f"trajectory {i}: field 'features' of {name} is not finite")
                raise ValueError(f"field 'features' of {name}: shape {phi.shape}, expected "
                                 f"({rows.shape[0]}, {self.n_features})")
            start = stop

    def _call_features(self, rows, i=None, name=None) -> np.ndarray:
        try:
            return np.asarray(self.features(rows), dtype=float)
        except ValueError as exc:
            where = "" if i is None else f"trajectory {i}: "
            raise ValueError(f"{where}field {name or 'observations'!r} rejected by the feature map: "
                             f"{exc}") from exc

    # ------------------------------------------------------------------ access
    @property
    def m(self) -> int:
        """Number of trajectories."""
        return int(self.offsets.size - 1)

    @property
    def lengths(self) -> np.ndarray:
        """tau_i of every trajectory."""
        return np.diff(self.offsets)

    @property
    def n_transitions(self) -> int:
        """T, the total number of transitions."""
        return int(self.offsets[-1])

    def trajectory_features(self, i: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(Phi, Phi', rho, R) of trajectory i: Phi' has zero rows where S_{t+1} is terminal.

        Args:
            i: trajectory index in 0..m-1.
        """
        a, b = int(self.offsets[i]), int(self.offsets[i + 1])
        phi = self._call_features(self.observations[a:b])
        nxt = self._call_features(self.next_observations[a:b])
        term = self.terminated[a:b]
        if term.any():
            nxt = np.where(term[:, None], 0.0, nxt)
        return phi, nxt, self.rho[a:b], self.rewards[a:b]

    def chunks(self, max_rows: int = _CHUNK_ROWS) -> Iterator[tuple]:
        """Yield (start, stop, Phi, Phi', rho, R, traj_index) over whole trajectories, ~max_rows rows each.

        Args:
            max_rows: target rows per chunk (a trajectory is never split), an int >= 1; default 65536.
        """
        off = self.offsets
        start = 0
        while start < self.m:
            stop = int(np.searchsorted(off, off[start] + max_rows, side="right") - 1)
            stop = min(max(stop, start + 1), self.m)
            a, b = int(off[start]), int(off[stop])
            phi = self._call_features(self.observations[a:b])
            nxt = self._call_features(self.next_observations[a:b])
            term = self.terminated[a:b]
            if term.any():  # a new array: never write into what the feature map returned
                nxt = np.where(term[:, None], 0.0, nxt)
            idx = np.repeat(np.arange(start, stop), np.diff(off[start:stop + 1]))
            yield start, stop, phi, nxt, self.rho[a:b], self.rewards[a:b], idx
            start = stop

    def subset(self, indices: ArrayLike) -> "Dataset":
        """The dataset of the trajectories ``indices`` (in that order), without re-validation.

        Args:
            indices: trajectory indices in 0..m-1 (repeats allowed).
        """
        idx = np.asarray(indices, dtype=np.int64)
        lengths = self.lengths[idx]
        rows = np.concatenate([np.arange(self.offsets[i], self.offsets[i + 1]) for i in idx]) \
            if idx.size else np.zeros(0, dtype=np.int64)
        offsets = np.concatenate([[0], np.cumsum(lengths)])
        return Dataset(self.observations[rows], self.next_observations[rows], self.rewards[rows],
                       self.terminated[rows], self.rho[rows], offsets, features=self.features,
                       gamma=self.gamma,
                       actions=None if self.actions is None else self.actions[rows],
                       validate=False)

    def __repr__(self) -> str:
        return (f"Dataset(m={self.m}, transitions={self.n_transitions}, "
                f"n_features={self.n_features}, gamma={self.gamma}, features={self.features!r})")
