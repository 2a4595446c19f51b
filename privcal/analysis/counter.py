r"""Private continual counting with the binary (tree) mechanism.

A stream sigma_1, ..., sigma_T of values in [0, 1] arrives one value per round; after every round
the mechanism releases an estimate of the prefix sum c(t) = sigma_1 + ... + sigma_t.
The binary mechanism (Chan, Shi & Song 2011, "Private and continual release of statistics",
Alg. 2 / Thm 3.5; Dwork, Naor, Pitassi & Rothblum 2010, "DP under continual observation") keeps the
dyadic partial sums ("p-sums") of the stream: the p-sum at level j that ends at round t covers the
2^j rounds (t - 2^j, t] and exists when 2^j divides t. The release at round t adds the noisy p-sums
of the set bits of t, so it uses popcount(t) of them.

Noise scale (and why). Levels j = 0, 1, ..., floor(log2 T) are the only ones whose p-sums fit in
[1, T], so there are L = floor(log2 T) + 1 = T.bit_length() levels and every stream element lies in
exactly one p-sum per level, i.e. in at most L released p-sums. Changing one element by at most 1
changes the vector of all p-sums by at most L in L1 norm, so Laplace noise of scale
b = L / epsilon on every p-sum makes the whole sequence of releases epsilon-DP (Laplace mechanism,
then post-processing). CSS11 write "log T" for L: for T = 2^k there are k + 1 levels, so we use
L = floor(log2 T) + 1 (= ceil(log2 T) unless T is a power of two); the ceil(log2 T) + 1 sometimes
quoted is one level too many when T is not a power of two. VBKW's PC(T, epsilon) (ICML 2020,
App. A.3) does not state its scale; its error bound (:func:`error_bound_paper`) is checked against
the scale used here in ``privcal.rl.pucb.checks.counter_error_check``: with log = log2 it holds
for T >= 2 at the usual failure probability, is 0 (violated) at T = 1, and fails for a failure
probability close to 1.

Gaussian noise (:class:`GaussianBinaryCounter`). The same tree with N(0, sigma^2) on every p-sum
is the Gaussian mechanism on the vector of all p-sums, priced by its l2 sensitivity
(:func:`gaussian_psum_sensitivity`: sqrt(L) per changed input, against L in l1) with the exact
Gaussian profile (:func:`gaussian_sigma`, Balle & Wang 2018), so it is (epsilon, delta)-DP. Its
release error at round t is exactly N(0, popcount(t) sigma^2) and :func:`gaussian_error_bound` is
the union bound over rounds and counters of these Gaussian tails. When one unit touches many
streams (PUCB: 6H of them) the l2 sensitivity grows like the square root of their number instead of
linearly, which is where the Gaussian counters win.

Noise is drawn lazily (one Laplace array per round, for the one p-sum that completes in that round)
from a ``numpy.random.Generator`` (``privcal._rng``), so a seed reproduces the run. Memory is 2 L
floats per counter.

The noise scales and the error bounds are in :mod:`privcal.analysis.counter_bounds` (Laplace noise) and
:mod:`privcal.analysis.counter_gaussian_bounds` (Gaussian noise), the tree's shape in
:mod:`privcal.analysis.counter_tree`; this module re-exports them, so ``from privcal.analysis.counter import error_bound`` works.

Names: the probability that an error bound fails is ``failure_probability`` (VBKW call it beta;
in privcal ``beta`` is only the kernel parameter of exp(-beta |x - y|)). The deprecated keyword ``beta=``
is accepted with a ``DeprecationWarning``.
"""

from __future__ import annotations

import math
import numbers
from typing import Union

import numpy as np
from numpy.typing import ArrayLike

from privcal import _rng
from privcal import _validate as V
from privcal.analysis.counter_bounds import (
    error_bound,
    error_bound_paper,
    error_variance,
    gaussian_error_bound,
    gaussian_error_bound_unchecked,
    gaussian_psum_sensitivity,
    gaussian_psum_sensitivity_unchecked,
    gaussian_sigma,
    gaussian_sigma_unchecked,
    gaussian_sup_error_failure_lower_bound,
    laplace_scale,
    laplace_sum_sf,
    num_levels,
    num_levels_unchecked,
    popcount_histogram,
    psums_used,
    psums_used_unchecked,
    sup_error_failure_lower_bound,
)
from privcal.errors import InfeasibleError

__all__ = [
    "num_levels",
    "laplace_scale",
    "psums_used",
    "error_variance",
    "error_bound_paper",
    "error_bound",
    "sup_error_failure_lower_bound",
    "popcount_histogram",
    "laplace_sum_sf",
    "gaussian_psum_sensitivity",
    "gaussian_sigma",
    "gaussian_error_bound",
    "gaussian_sup_error_failure_lower_bound",
    "gaussian_psum_sensitivity_unchecked",
    "gaussian_sigma_unchecked",
    "gaussian_error_bound_unchecked",
    "BinaryCounter",
    "GaussianBinaryCounter",
    "ExactCounter",
]

def _check_shape(shape) -> tuple[int, ...]:
    if isinstance(shape, numbers.Integral) and not isinstance(shape, bool):
        shape = (int(shape),)
    try:
        dims = tuple(shape)
    except TypeError:
        raise ValueError(f"shape must be a tuple of non-negative integers, got {shape!r}") from None
    for d in dims:
        if isinstance(d, bool) or not isinstance(d, numbers.Integral) or d < 0:
            raise ValueError(f"shape must be a tuple of non-negative integers, got {shape!r}")
    return tuple(int(d) for d in dims)


def _check_stream_values(values, shape, clip: bool) -> np.ndarray:
    arr = np.asarray(values, dtype=float)
    try:
        arr = np.broadcast_to(arr, shape)
    except ValueError:
        raise ValueError(f"values must broadcast to the counter shape {shape}, "
                         f"got an array of shape {arr.shape}") from None
    if np.isnan(arr).any():
        raise ValueError("values must be numbers in [0, 1], got nan")
    if clip:
        return np.clip(arr, 0.0, 1.0)
    bad = (arr < 0.0) | (arr > 1.0)
    if bad.any():
        first = arr[bad].flat[0]
        raise ValueError(f"values must be in [0, 1] (pass clip=True to clip), got {first!r}")
    return arr


class _CounterBase:
    """Shared bookkeeping: the round index and the per-round validation of the fed values."""

    def __init__(self, steps, shape, clip: bool):
        self._init_base(V.positive_int("steps", steps), _check_shape(shape), clip)

    def _init_base(self, steps: int, shape: tuple[int, ...], clip: bool) -> None:
        """The bookkeeping from checked ``steps`` and ``shape``."""
        self.steps = steps
        self.shape = shape
        self.clip = bool(clip)
        self.t = 0

    def _next_round(self, values) -> np.ndarray:
        if self.t >= self.steps:
            raise InfeasibleError(
                f"the counter was built for steps={self.steps} rounds; a further value would "
                "void its privacy guarantee (build a counter with a larger steps)")
        arr = _check_stream_values(values, self.shape, self.clip)
        self.t += 1
        return arr

    @property
    def counters(self) -> int:
        """Number of counters held (product of ``shape``)."""
        return int(np.prod(self.shape, dtype=np.int64))


class _TreeCounter(_CounterBase):
    """The binary-mechanism bookkeeping shared by the Laplace and the Gaussian counters.

    Subclasses set ``levels`` and ``_rng`` and define ``_draw()`` (one noise array of shape ``shape``
    for the p-sum that completes in the current round) and ``variance``.
    """

    def _allocate(self) -> None:
        self._exact = np.zeros((self.levels,) + self.shape)  # running exact p-sums, one per level
        self._noisy = np.zeros((self.levels,) + self.shape)  # their noisy releases
        self._estimate = np.zeros(self.shape)

    def _draw(self) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError

    @property
    def estimate(self) -> np.ndarray:
        """Releases after the rounds fed so far (zeros before the first round); a copy."""
        return self._estimate.copy()

    @property
    def nbytes(self) -> int:
        """Memory held by the tree: the exact and the noisy p-sums, L per counter each (bytes)."""
        return int(self._exact.nbytes + self._noisy.nbytes)

    def update(self, values: ArrayLike) -> np.ndarray:
        """Feed one value per counter (round t -> t + 1) and return the releases for round t + 1.

        Args:
            values: one value in [0, 1] per counter, broadcastable to ``shape``.

        Returns:
            The releases (noisy prefix sums) after this round, an array of shape ``shape``.

        Raises:
            ValueError: a value is outside [0, 1] (and ``clip`` is False) or the shape is wrong.
            InfeasibleError: the counter has already been fed ``steps`` rounds.
        """
        arr = self._next_round(values)
        t = self.t
        level = (t & -t).bit_length() - 1  # trailing zeros of t: the p-sum completing now
        psum = arr + self._exact[:level].sum(axis=0) if level else arr.copy()
        self._exact[:level] = 0.0
        self._exact[level] = psum
        self._noisy[:level] = 0.0
        self._noisy[level] = psum + self._draw()
        bits = [j for j in range(self.levels) if (t >> j) & 1]
        self._estimate = self._noisy[bits].sum(axis=0)
        return self._estimate.copy()


class BinaryCounter(_TreeCounter):
    r"""An array of independent binary-mechanism counters, each epsilon-DP for its whole stream.

    ``BinaryCounter(steps, epsilon, shape, seed)`` holds ``prod(shape)`` counters; each call
    ``update(values)`` feeds one value in [0, 1] to every counter (``values`` broadcasts to
    ``shape``) and returns the new releases (noisy prefix sums), also available as ``estimate``.
    Mechanism: Chan, Shi & Song 2011 Alg. 2 (binary mechanism), Laplace scale b = L/epsilon with
    L = floor(log2 steps) + 1 (:func:`laplace_scale`). Out-of-range values raise ``ValueError``
    unless ``clip=True``. Releases are unbiased (E[release_t] = c(t)) with variance
    :func:`error_variance`; they are *not* monotone in t (VBKW App. A.3 says PC is monotone: that
    needs a post-processing step such as a running max, which keeps DP but not unbiasedness).
    :class:`GaussianBinaryCounter` is the same tree with Gaussian noise ((epsilon, delta)-DP).

    Args:
        steps: stream length T (rounds the counters may be fed), an integer >= 1.
        epsilon: privacy parameter of each counter's whole stream, in (0, inf).
        shape: shape of the array of counters, an int or a tuple of ints >= 0; default () (one
            counter).
        seed: None, a non-negative int, a ``numpy.random.SeedSequence`` or a
            ``numpy.random.Generator`` (used and advanced as is); default None (fresh entropy).
        clip: clip fed values into [0, 1] instead of rejecting them; default False.

    Raises:
        ValueError: an argument is outside its range.
    """

    def __init__(self, steps: int, epsilon: float, shape: Union[int, tuple[int, ...]] = (),
                 seed: _rng.Seed = None, *, clip: bool = False):
        super().__init__(steps, shape, clip)
        self._setup(V.positive("epsilon", epsilon), seed)

    @classmethod
    def unchecked(cls, steps: int, epsilon: float, shape: tuple[int, ...] = (), seed: _rng.Seed = None, *,
                  clip: bool = False) -> "BinaryCounter":
        """The counter of ``BinaryCounter(steps, epsilon, shape, seed, clip=clip)``, built without validation.

        For callers that validated the arguments (e.g. :class:`privcal.rl.pucb.agent.PUCB`, whose
        per-counter epsilon is derived from its own validated epsilon): same noise, same draws.

        Args:
            steps: stream length T, an int >= 1 (not checked).
            epsilon: privacy parameter of each counter's whole stream, a float in (0, inf) (not checked).
            shape: shape of the array of counters, a tuple of ints >= 0 (not checked, not converted
                from an int); default ().
            seed: as for the constructor (converted by ``privcal._rng``); default None.
            clip: clip fed values into [0, 1] instead of rejecting them; default False.

        Returns:
            The counter.
        """
        counter = cls.__new__(cls)
        counter._init_base(steps, shape, clip)
        counter._setup(epsilon, seed)
        return counter

    def _setup(self, epsilon: float, seed: _rng.Seed) -> None:
        self.epsilon = epsilon
        self.levels = num_levels_unchecked(self.steps)
        self.laplace_scale = self.levels / self.epsilon
        self._rng = _rng.as_generator(seed)
        self._allocate()

    def _draw(self) -> np.ndarray:
        return self._rng.laplace(0.0, self.laplace_scale, size=self.shape)

    @property
    def variance(self) -> float:
        """Exact variance of the current release error, popcount(t) 2 b^2 (0 before round 1)."""
        if self.t == 0:
            return 0.0
        return float(psums_used_unchecked(np.asarray(self.t, dtype=np.int64))) * 2.0 * self.laplace_scale ** 2


class GaussianBinaryCounter(_TreeCounter):
    r"""An array of binary-mechanism counters with Gaussian noise N(0, sigma^2) on every p-sum.

    Same tree, bookkeeping and interface as :class:`BinaryCounter` (``update``, ``estimate``,
    ``variance``, ``levels``, ``counters``); only the noise differs. The privacy of the releases
    depends on how many streams (and inputs) one unit of privacy may change, so the counter takes
    ``sigma`` and :func:`gaussian_sigma` calibrates it: e.g. ``GaussianBinaryCounter(T,
    gaussian_sigma(T, epsilon, delta), shape)`` makes each counter's whole stream
    (epsilon, delta)-DP when a unit changes one input of one stream; see
    :func:`gaussian_psum_sensitivity` for several streams (all the counters of ``shape`` are then
    covered by the one guarantee, because the noise is calibrated to the joint l2 sensitivity).
    The release at round t sums popcount(t) independent N(0, sigma^2) draws, so its error is
    exactly N(0, popcount(t) sigma^2) (:func:`gaussian_error_bound` bounds it uniformly).

    Args:
        steps: stream length T (rounds the counters may be fed), an integer >= 1.
        sigma: standard deviation of the noise on each p-sum, in (0, inf) (unit of the stream
            values).
        shape: shape of the array of counters, an int or a tuple of ints >= 0; default () (one
            counter).
        seed: None, a non-negative int, a ``numpy.random.SeedSequence`` or a
            ``numpy.random.Generator`` (used and advanced as is); default None (fresh entropy).
        clip: clip fed values into [0, 1] instead of rejecting them; default False.

    Raises:
        ValueError: an argument is outside its range.
    """

    def __init__(self, steps: int, sigma: float, shape: Union[int, tuple[int, ...]] = (),
                 seed: _rng.Seed = None, *, clip: bool = False):
        super().__init__(steps, shape, clip)
        self._setup(V.positive("sigma", sigma), seed)

    @classmethod
    def unchecked(cls, steps: int, sigma: float, shape: tuple[int, ...] = (), seed: _rng.Seed = None, *,
                  clip: bool = False) -> "GaussianBinaryCounter":
        """The counter of ``GaussianBinaryCounter(steps, sigma, shape, seed, clip=clip)``, built without validation.

        For callers that validated the arguments (e.g. :class:`privcal.rl.pucb.agent.PUCB`, whose sigma
        comes from its own calibration): same noise, same draws.

        Args:
            steps: stream length T, an int >= 1 (not checked).
            sigma: standard deviation of the noise on each p-sum, a float in (0, inf) (not checked).
            shape: shape of the array of counters, a tuple of ints >= 0 (not checked, not converted
                from an int); default ().
            seed: as for the constructor (converted by ``privcal._rng``); default None.
            clip: clip fed values into [0, 1] instead of rejecting them; default False.

        Returns:
            The counter.
        """
        counter = cls.__new__(cls)
        counter._init_base(steps, shape, clip)
        counter._setup(sigma, seed)
        return counter

    def _setup(self, sigma: float, seed: _rng.Seed) -> None:
        self.sigma = sigma
        self.levels = num_levels_unchecked(self.steps)
        self._rng = _rng.as_generator(seed)
        self._allocate()

    def _draw(self) -> np.ndarray:
        return self._rng.normal(0.0, self.sigma, size=self.shape)

    @property
    def variance(self) -> float:
        """Exact variance of the current release error, popcount(t) sigma^2 (0 before round 1)."""
        if self.t == 0:
            return 0.0
        return float(psums_used_unchecked(np.asarray(self.t, dtype=np.int64))) * self.sigma ** 2


class ExactCounter(_CounterBase):
    """Exact prefix sums with the :class:`BinaryCounter` interface (the non-private reference).

    No privacy: used by the non-private (UBEV-style) baseline so that it shares PUCB's code path.

    Args:
        steps: stream length T (rounds the counters may be fed), an integer >= 1.
        shape: shape of the array of counters, an int or a tuple of ints >= 0; default ().
        clip: clip fed values into [0, 1] instead of rejecting them; default False.

    Raises:
        ValueError: an argument is outside its range.
    """

    epsilon = math.inf
    laplace_scale = 0.0
    variance = 0.0

    def __init__(self, steps: int, shape: Union[int, tuple[int, ...]] = (), *,
                 clip: bool = False):
        super().__init__(steps, shape, clip)
        self._estimate = np.zeros(self.shape)

    @property
    def estimate(self) -> np.ndarray:
        """Exact prefix sums after the rounds fed so far; a copy."""
        return self._estimate.copy()

    def update(self, values: ArrayLike) -> np.ndarray:
        """Feed one value per counter and return the exact prefix sums.

        Args:
            values: one value in [0, 1] per counter, broadcastable to ``shape``.

        Returns:
            The exact prefix sums after this round, an array of shape ``shape``.

        Raises:
            ValueError: a value is outside [0, 1] (and ``clip`` is False) or the shape is wrong.
            InfeasibleError: the counter has already been fed ``steps`` rounds.
        """
        self._estimate = self._estimate + self._next_round(values)
        return self._estimate.copy()
