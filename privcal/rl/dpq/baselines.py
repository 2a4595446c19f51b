r"""Baselines of Wang & Hegde 2019, App. E.2, with their privacy calibrations (and what each guarantees).

Neighbouring inputs throughout (Wang & Hegde, Sec. 3.1): two reward functions with |r - r'|_inf <= 1.

* **Input perturbation** (Venkatasubramanian 2013): every observed reward r_t gets N(0, sigma_r^2).
  Each reward moves by at most 1 between neighbours, so T samples are T (adaptively chosen) Gaussian
  releases with sensitivity 1. App. E.2 composes them with Kairouz-Oh-Viswanath (``accountant="kov"``,
  the paper's choice, valid); ``"exact"`` is the tight value (T releases = one Gaussian with
  mu = sqrt(T)/sigma_r, Balle & Wang 2018; adaptive composition of Gaussians is exact).
* **DP-SGD** (Abadi et al. 2016): per-example gradients clipped to norm C, the sum gets N(0, z^2 C^2 I),
  floor(T/B) steps, no subsampling (sample rate q = 1: each update uses the whole last batch).
  App. E.2 uses Abadi et al.'s Thm 1, z >= c2 q sqrt(steps ln(1/delta)) / epsilon, with c2 = sqrt(2)
  (:func:`dpsgd_noise_multiplier_paper`). Thm 1 guarantees (epsilon, delta)-DP for datasets differing
  in ONE example (sensitivity C of the clipped sum), under its condition epsilon < c1 q^2 steps. Between
  neighbouring *reward functions* every example of a batch may change, so each clipped gradient may
  move anywhere in its C-ball: the sum moves by up to 2BC. :func:`dpsgd_noise_multiplier` gives the
  valid z for either unit ("example": sensitivity 1 in units of C; "reward_function": 2B), composed by
  privcal's exact accountant or RDP.
* **BGP16-style output perturbation** (Balle, Gomrokchi & Precup 2016), for *utility comparison only*:
  the Q-learner of Algorithm 1 with the functional noise replaced by independent N(0, sigma^2) values
  at each visited (state, action) (:class:`WhiteNoisePaths`, the beta -> inf limit of the OU path).
  This protects the finite vector of values at visited states (the reward-sequence neighbourhood of
  BGP16), **not** the released function: queried at many new states, the independent noise averages
  out and reveals Q. It is NOT differentially private w.r.t. reward functions (Wang & Hegde, Sec. 4).
  In the experiments it uses the same sigma as Algorithm 1, so the comparison isolates the effect of
  correlated (functional) vs independent noise on utility.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterator

import numpy as np
from numpy.typing import ArrayLike

from privcal import _rng
from privcal import _validate as V
from privcal.calibrators.dpq_noise import (dpsgd_noise_multiplier_paper, dpsgd_noise_multiplier_unchecked,
                                    input_perturbation_sigma_unchecked)

__all__ = [
    "INPUT_PERTURBATION_ACCOUNTANTS",
    "DPSGD_UNITS",
    "input_perturbation_sigma",
    "dpsgd_noise_multiplier_paper",
    "dpsgd_noise_multiplier",
    "dpsgd_epsilon",
    "WhiteNoisePath",
    "WhiteNoisePaths",
]

INPUT_PERTURBATION_ACCOUNTANTS = ("kov", "exact", "rdp")
DPSGD_UNITS = ("example", "reward_function")


def input_perturbation_sigma(epsilon: float, delta: float, *, samples: int,
                             accountant: str = "kov") -> float:
    """Reward-noise std sigma_r making T noisy rewards (epsilon, delta)-DP w.r.t. |r - r'|_inf <= 1.

    sigma_r = privcal.calibrate(epsilon, delta, sensitivity=1, steps=T, accountant=accountant):
    T Gaussian releases of sensitivity 1 (Venkatasubramanian 2013; composed by Kairouz, Oh &
    Viswanath 2015 as in Wang & Hegde 2019, App. E.2, or by the exact profile, Balle & Wang 2018).
    E.g. T = 5000, delta = 1e-4: KOV 1021 and exact 247 at epsilon = 0.9.

    Args:
        epsilon: target epsilon, in (0, inf).
        delta: target delta, in (0, 1).
        samples: T, the number of noisy rewards, an int >= 1.
        accountant: "kov" (the paper's, default), "exact" or "rdp" (all valid).

    Returns:
        sigma_r, the std of the Gaussian noise on each reward (reward units).

    Raises:
        ValueError: an argument is outside its range.
    """
    samples = V.positive_int("samples", samples)
    V.choice("accountant", accountant, INPUT_PERTURBATION_ACCOUNTANTS)
    return input_perturbation_sigma_unchecked(epsilon, delta, samples, accountant)


def _unit_sensitivity(unit, batch_size) -> float:
    V.choice("unit", unit, DPSGD_UNITS)
    batch_size = V.positive_int("batch_size", batch_size)
    return 1.0 if unit == "example" else 2.0 * batch_size


def dpsgd_noise_multiplier(epsilon: float, delta: float, *, steps: int, batch_size: int,
                           unit: str = "reward_function", accountant: str = "exact") -> float:
    """Valid noise multiplier z (noise std z C on the clipped-gradient sum) for ``steps`` full-batch steps.

    Sensitivity of the sum of B per-example gradients clipped to C, in units of C: 1 for one example
    added/removed (``unit="example"``, Abadi et al.'s neighbourhood), 2B when the reward function
    changes (``"reward_function"``: every clipped gradient may move across its C-ball). Then
    z = privcal.calibrate(epsilon, delta, sensitivity=that, steps=steps, accountant=accountant)
    (no subsampling; ``"exact"``: composed Gaussian profile, ``"rdp"``: Renyi DP, both valid).

    Args:
        epsilon: target epsilon, in (0, inf).
        delta: target delta, in (0, 1).
        steps: number of full-batch SGD steps, an int >= 1.
        batch_size: B, examples per batch, an int >= 1.
        unit: "reward_function" (sensitivity 2B, default) or "example" (sensitivity 1).
        accountant: a ``privcal.calibrate`` accountant, e.g. "exact" (default) or "rdp".

    Returns:
        z, the noise multiplier (noise std z C on the clipped-gradient sum).

    Raises:
        ValueError: an argument is outside its range.
    """
    from privcal import calibrate

    steps = V.positive_int("steps", steps)
    return calibrate(epsilon, delta, sensitivity=_unit_sensitivity(unit, batch_size), steps=steps,
                     accountant=accountant)


def dpsgd_epsilon(noise_multiplier: float, delta: float, *, steps: int, batch_size: int,
                  unit: str = "example", accountant: str = "exact") -> float:
    """Epsilon at ``delta`` of DP-SGD with noise multiplier z (inverse of :func:`dpsgd_noise_multiplier`).

    Args:
        noise_multiplier: z (noise std z C on the clipped-gradient sum), in (0, inf).
        delta: target delta, in (0, 1).
        steps: number of full-batch SGD steps, an int >= 1.
        batch_size: B, examples per batch, an int >= 1.
        unit: "example" (sensitivity 1, default) or "reward_function" (sensitivity 2B).
        accountant: a ``privcal.epsilon`` accountant, e.g. "exact" (default) or "rdp".

    Returns:
        an upper bound on epsilon at ``delta``.

    Raises:
        ValueError: an argument is outside its range.
    """
    from privcal import epsilon

    steps = V.positive_int("steps", steps)
    return epsilon(noise_multiplier, delta, sensitivity=_unit_sensitivity(unit, batch_size), steps=steps,
                   accountant=accountant)


class WhiteNoisePath:
    """Independent N(0, sigma^2) at every queried point, remembered until ``reset`` (BGP16-style noise).

    The beta -> infinity limit of :class:`privcal.analysis.noise.OrnsteinUhlenbeckPath` with the same interface
    (``sample_point``, ``sample``, ``reset``). Not a sample path of any continuous process: querying
    many new points gives independent values whose average reveals the underlying function.

    Args:
        sigma: std of every value, in (0, inf).
        seed: seed of the values (``privcal._rng``); default None.
    """

    def __init__(self, sigma: float, seed: _rng.Seed = None):
        self.sigma = V.positive("sigma", sigma)
        self._rng = _rng.as_generator(seed, "seed")
        self._values: dict = {}

    def __len__(self) -> int:
        return len(self._values)

    def sample_point(self, x: float) -> float:
        """The value at ``x`` (drawn on the first query, remembered after).

        Args:
            x: a finite real point.

        Raises:
            ValueError: ``x`` is not a finite real number.
        """
        if isinstance(x, bool) or not isinstance(x, numbers.Real) or not math.isfinite(x):
            raise ValueError(f"x must be a finite real number, got {x!r}")
        x = float(x)
        v = self._values.get(x)
        if v is None:
            v = self._values[x] = self.sigma * float(self._rng.standard_normal())
        return v

    def sample(self, points: ArrayLike) -> np.ndarray:
        """The values at ``points`` (same shape).

        Args:
            points: finite real points, any shape.
        """
        pts = np.asarray(points, dtype=float)
        return np.array([self.sample_point(float(x)) for x in pts.reshape(-1)]).reshape(pts.shape)

    def reset(self) -> None:
        """Forget every value (the next queries draw new ones)."""
        self._values = {}


class WhiteNoisePaths:
    """One :class:`WhiteNoisePath` per action, mirroring :class:`privcal.analysis.noise.OrnsteinUhlenbeckPaths`.

    Args:
        n_paths: number of paths (actions), an int >= 1.
        sigma: std of every value, in (0, inf).
        seed: seed of all paths (independent children, ``privcal._rng.spawn``); default None.
    """

    def __init__(self, n_paths: int, sigma: float, seed: _rng.Seed = None):
        n_paths = V.positive_int("n_paths", n_paths)
        children = _rng.spawn(seed, n_paths, "seed")
        self._setup(V.positive("sigma", sigma), children)

    @classmethod
    def unchecked(cls, n_paths: int, sigma: float, seed: _rng.Seed = None) -> "WhiteNoisePaths":
        """The paths of ``WhiteNoisePaths(n_paths, sigma, seed)``, built without validating ``n_paths`` and
        ``sigma``, for callers that validated them (the BGP16 runs of ``privcal.rl.dpq.agent``): same draws.

        Args:
            n_paths: number of paths (actions), an int >= 1 (not checked).
            sigma: std of every value, a float in (0, inf) (not checked).
            seed: seed of all paths (``privcal._rng.spawn``); default None.

        Returns:
            The paths.
        """
        paths = cls.__new__(cls)
        paths._setup(sigma, _rng.spawn(seed, n_paths, "seed"))
        return paths

    def _setup(self, sigma: float, children) -> None:
        self._paths = []
        for child in children:  # sigma checked once for all paths
            path = WhiteNoisePath.__new__(WhiteNoisePath)
            path.sigma, path._rng, path._values = sigma, _rng.as_generator(child, "seed"), {}
            self._paths.append(path)

    def __len__(self) -> int:
        return len(self._paths)

    def __getitem__(self, action: int) -> WhiteNoisePath:
        return self._paths[action]

    def __iter__(self) -> Iterator[WhiteNoisePath]:
        return iter(self._paths)

    def sample_all(self, points: ArrayLike) -> np.ndarray:
        """Values of every path at ``points``: shape (n_paths, *points.shape).

        Args:
            points: finite real points, any shape.
        """
        return np.stack([p.sample(points) for p in self._paths])

    def reset(self) -> None:
        """New independent values on every path (Algorithm 1's reset, lines 7-9)."""
        for p in self._paths:
            p.reset()
