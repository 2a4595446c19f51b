r"""Empirical privacy auditing: statistically valid LOWER bounds on delta(epsilon) from samples.

A mechanism is audited through its outputs on one pair of neighbouring inputs, neighbour 0 and
neighbour 1 (any object with ``sample(neighbour, size, rng) -> array`` of shape ``(size,)`` or
``(size, d)``; a plain callable ``sampler(neighbour, size, rng)`` is wrapped). Every test set
S gives, by the definition of (epsilon, delta)-DP applied to the pair,

    delta(epsilon) >= P_hi(S) - e^epsilon P_lo(S),

where (P_hi, P_lo) is (P_1, P_0) or (P_0, P_1). The auditor estimates both probabilities from
fresh samples and replaces them by one-sided Clopper-Pearson bounds (Clopper & Pearson 1934): a
lower bound on P_hi(S), an upper bound on P_lo(S), each at level alpha / (2 m) where m is the
number of test sets tried (Bonferroni). With probability at least ``confidence`` = 1 - alpha
over the sampling, all 2m bounds hold at once, hence simultaneously for every epsilon

    delta(epsilon) >= max_S [P_hi_lower(S) - e^epsilon P_lo_upper(S)]          (AuditResult.delta_lower)
    epsilon(delta) >= max_S ln((P_hi_lower(S) - delta) / P_lo_upper(S))        (AuditResult.epsilon_lower)

for the true privacy profile of the mechanism (it is at least as large on any pair of inputs).
A claimed (epsilon, delta) is *refuted* when the statistical LOWER bound delta_lower(epsilon) exceeds
delta (equivalently, when epsilon_lower at the claimed delta exceeds epsilon): with probability
>= ``confidence`` the mechanism is then not (epsilon, delta)-DP. Nothing here compares an upper bound
(an accountant's epsilon) with the claim: "not private" rests only on the lower bound of the audited
pair; "not refuted" proves nothing either way.

Test sets are threshold sets {T >= tau} and {T <= tau} of a scalar statistic T: the mechanism's
``statistic`` when it has one (e.g. its log-likelihood ratio, which makes the threshold sets the
Neyman-Pearson optimal ones), otherwise a linear discriminant learned on a separate calibration
sample. The thresholds are quantiles of that calibration sample (denser in both tails, where the
optimal sets for small delta live), so they do not depend on the evaluation samples and the
Bonferroni count is exact. Setting used in this spirit: Jagielski, Ullman & Oprea 2020 (auditing
DP-SGD); Nasr et al. 2021.

Mechanisms provided (all sample the real outputs, in chunks):

* :class:`GaussianMechanism` - ``steps`` releases of a Gaussian mechanism, neighbours shifted by
  ``sensitivity`` in every release (the composed Gaussian; ``steps=1`` the plain one);
* :class:`GaussianProcessMechanism` - ``steps`` releases of the Gaussian-process mechanism
  f + g, g ~ GP(0, sigma^2 exp(-beta|x - y|)), observed at finitely many points (exact
  Ornstein-Uhlenbeck sampling, ``privcal.analysis.noise.sample_ou_grid``), neighbours f = 0 and f = shift;
* :class:`SubsampledGaussianMechanism` - ``steps`` releases of the Poisson-subsampled Gaussian in
  units of the sensitivity: N(0, s^2) against (1 - q) N(0, s^2) + q N(1, s^2) (Mironov, Talwar &
  Zhang 2019; also GPOPE's own worst-case pair, App. B.1).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from privcal import _validate as V
from privcal._stats import (
    clopper_pearson_lower,
    clopper_pearson_lower_array,
    clopper_pearson_upper,
    clopper_pearson_upper_array,
)
from privcal.analysis.noise import sample_ou_grid

__all__ = [
    "AuditResult",
    "AuditSettings",
    "audit",
    "clopper_pearson_lower",
    "clopper_pearson_upper",
    "GaussianMechanism",
    "GaussianProcessMechanism",
    "SubsampledGaussianMechanism",
]

_CHUNK_VALUES = 4_000_000  # floats sampled at a time (memory bound of one chunk: 32 MB)


# ---------------------------------------------------------------------------------------------------
# mechanisms
#
# Each mechanism's public ``sample`` validates its arguments and calls the kernel ``_sample``, which trusts
# them; :func:`audit` (which validated its own arguments) calls the kernel.


def _neighbour(neighbour: Any) -> int:
    if isinstance(neighbour, bool) or neighbour not in (0, 1):
        raise ValueError(f"neighbour must be 0 or 1, got {neighbour!r}")
    return int(neighbour)


def _size(size: Any) -> int:
    if isinstance(size, bool) or not isinstance(size, (int, np.integer)) or int(size) < 0:
        raise ValueError(f"size must be a non-negative integer, got {size!r}")
    return int(size)




@dataclass(frozen=True)
class GaussianMechanism:
    """``steps`` Gaussian releases N(0, sigma^2) (neighbour 0) vs N(sensitivity, sigma^2) (neighbour 1).

    Output shape (size, steps). ``statistic`` is the log-likelihood ratio ln p1/p0 =
    (sensitivity / sigma^2) * sum(x) - steps * sensitivity^2 / (2 sigma^2) (a monotone function of the
    sum, so its threshold sets are the Neyman-Pearson ones). Exact profile: Gaussian with
    mu = sqrt(steps) * sensitivity / sigma (``privcal.analysis.composition.delta_composed_exact``).

    Args:
        sigma: noise standard deviation per release (absolute), in (0, inf).
        sensitivity: shift between the neighbours in every release, in (0, inf); default 1.
        steps: number of composed releases, a positive int; default 1.

    Raises:
        ValueError: an argument is outside its range.
    """

    sigma: float
    sensitivity: float = 1.0
    steps: int = 1

    def __post_init__(self) -> None:
        V.positive("sigma", self.sigma)
        V.positive("sensitivity", self.sensitivity)
        V.positive_int("steps", self.steps)

    @property
    def dimension(self) -> int:
        """Numbers per output: ``steps``."""
        return int(self.steps)

    def sample(self, neighbour: int, size: int, rng: np.random.Generator) -> np.ndarray:
        """``size`` outputs of the mechanism on ``neighbour``.

        Args:
            neighbour: which neighbouring input, 0 or 1.
            size: number of independent outputs, a non-negative int.
            rng: the ``numpy.random.Generator`` to draw from.

        Returns:
            array of shape (size, dimension).
        """
        return self._sample(_neighbour(neighbour), _size(size), rng)

    def _sample(self, neighbour: int, size: int, rng: np.random.Generator) -> np.ndarray:
        return self.sensitivity * neighbour + self.sigma * rng.standard_normal((size, int(self.steps)))

    def statistic(self, outputs: ArrayLike) -> np.ndarray:
        """Log-likelihood ratio of each output (a monotone function of its sum).

        Args:
            outputs: array of shape (n, dimension), outputs of :meth:`sample`.

        Returns:
            array of shape (n,): ln p1/p0 of each output.
        """
        x = np.asarray(outputs, dtype=float).reshape(len(outputs), -1)
        s2 = self.sigma * self.sigma
        return (self.sensitivity / s2) * x.sum(axis=1) - self.steps * self.sensitivity**2 / (2.0 * s2)


@dataclass(frozen=True)
class GaussianProcessMechanism:
    """``steps`` releases of the GP mechanism observed at ``points``: g (neighbour 0) vs shift + g (neighbour 1).

    g ~ GP(0, sigma^2 exp(-beta |x - y|)) drawn exactly at the sorted ``points`` by
    ``privcal.analysis.noise.sample_ou_grid`` (a fresh path per release, as after every noise reset of
    Wang & Hegde's Alg. 1); ``shift`` holds the values of the difference f = Q - Q' at ``points``.
    Output shape (size, steps * len(points)). ``statistic`` is the exact log-likelihood ratio
    sum_t (f^T Sigma^-1 x_t) - steps f^T Sigma^-1 f / 2, Sigma = sigma^2 K(points). The observed
    mechanism is Gaussian with mu = sqrt(steps f^T K^-1 f) / sigma <= sqrt(steps) ||f||_H / sigma
    (Wang & Hegde 2019, Prop. 4 with Lemma 6; equality when f is a kernel section observed at its centre).

    Args:
        shift: values of f = Q - Q' at ``points``, one finite float per point.
        points: observation points, a non-empty strictly increasing sequence of finite floats.
        beta: kernel parameter of exp(-beta |x - y|), in (0, inf).
        sigma: noise scale of the GP (absolute), in (0, inf).
        steps: number of composed releases (fresh path each), a positive int; default 1.

    Raises:
        ValueError: an argument is outside its range.
    """

    shift: tuple
    points: tuple
    beta: float
    sigma: float
    steps: int = 1

    def __post_init__(self) -> None:
        V.positive("beta", self.beta)
        V.positive("sigma", self.sigma)
        V.positive_int("steps", self.steps)
        pts = np.asarray(self.points, dtype=float)
        f = np.asarray(self.shift, dtype=float)
        if pts.ndim != 1 or pts.size == 0 or np.any(np.diff(pts) <= 0) or not np.all(np.isfinite(pts)):
            raise ValueError(f"points must be a non-empty strictly increasing sequence, got {self.points!r}")
        if f.shape != pts.shape or not np.all(np.isfinite(f)):
            raise ValueError(f"shift must hold one finite value per point ({pts.size}), got {self.shift!r}")

    @property
    def dimension(self) -> int:
        """Numbers per output: ``steps * len(points)``."""
        return int(self.steps) * len(self.points)

    def _weights(self) -> tuple[np.ndarray, float]:
        pts = np.asarray(self.points, dtype=float)
        f = np.asarray(self.shift, dtype=float)
        cov = self.sigma**2 * np.exp(-self.beta * np.abs(pts[:, None] - pts[None, :]))
        w = np.linalg.solve(cov, f)
        return w, float(f @ w)

    def mu(self) -> float:
        """mu of the observed (composed) mechanism: sqrt(steps f^T Sigma^-1 f).

        Returns:
            the mu of the equivalent Gaussian mechanism (its exact profile is ``privcal.analysis.gaussian.delta_exact``).
        """
        return math.sqrt(self.steps * self._weights()[1])

    def sample(self, neighbour: int, size: int, rng: np.random.Generator) -> np.ndarray:
        """``size`` outputs (``steps`` fresh exact OU paths each, at ``points``) on ``neighbour``.

        Args:
            neighbour: which neighbouring input, 0 or 1.
            size: number of independent outputs, a non-negative int.
            rng: the ``numpy.random.Generator`` to draw from.

        Returns:
            array of shape (size, dimension).
        """
        return self._sample(_neighbour(neighbour), _size(size), rng)

    def _sample(self, neighbour: int, size: int, rng: np.random.Generator) -> np.ndarray:
        k = len(self.points)
        paths = sample_ou_grid(self.beta, self.sigma, np.asarray(self.points, float), size * int(self.steps),
                               seed=rng)
        out = paths.reshape(size, int(self.steps) * k)
        if neighbour:
            out += np.tile(np.asarray(self.shift, dtype=float), int(self.steps))
        return out

    def statistic(self, outputs: ArrayLike) -> np.ndarray:
        """Exact log-likelihood ratio of each output: sum_t f^T Sigma^-1 x_t - steps f^T Sigma^-1 f / 2.

        Args:
            outputs: array of shape (n, dimension), outputs of :meth:`sample`.

        Returns:
            array of shape (n,): ln p1/p0 of each output.
        """
        w, quad = self._weights()
        x = np.asarray(outputs, dtype=float).reshape(len(outputs), int(self.steps), len(self.points))
        return (x @ w).sum(axis=1) - self.steps * quad / 2.0


@dataclass(frozen=True)
class SubsampledGaussianMechanism:
    """``steps`` releases of the Poisson-subsampled Gaussian, in units of the sensitivity.

    Neighbour 0: N(0, s^2) per release; neighbour 1: N(1, s^2) with probability q = ``sample_rate``
    and N(0, s^2) otherwise, independently per release (s = ``noise_multiplier``). Output shape
    (size, steps). ``statistic`` is the log-likelihood ratio sum_t ln(1 - q + q exp((2 x_t - 1)/(2 s^2))).
    Source: Mironov, Talwar & Zhang 2019 (the sampled Gaussian mechanism); GPOPE App. B.1 (q = 1/m).

    Args:
        noise_multiplier: noise standard deviation in units of the sensitivity (s), in (0, inf).
        sample_rate: Poisson sampling probability q, in (0, 1].
        steps: number of composed releases, a positive int; default 1.

    Raises:
        ValueError: an argument is outside its range.
    """

    noise_multiplier: float
    sample_rate: float
    steps: int = 1

    def __post_init__(self) -> None:
        V.positive("noise_multiplier", self.noise_multiplier)
        V.rate("sample_rate", self.sample_rate)
        V.positive_int("steps", self.steps)

    @property
    def dimension(self) -> int:
        """Numbers per output: ``steps``."""
        return int(self.steps)

    def sample(self, neighbour: int, size: int, rng: np.random.Generator) -> np.ndarray:
        """``size`` outputs of the mechanism on ``neighbour``.

        Args:
            neighbour: which neighbouring input, 0 or 1.
            size: number of independent outputs, a non-negative int.
            rng: the ``numpy.random.Generator`` to draw from.

        Returns:
            array of shape (size, dimension).
        """
        return self._sample(_neighbour(neighbour), _size(size), rng)

    def _sample(self, neighbour: int, size: int, rng: np.random.Generator) -> np.ndarray:
        t = int(self.steps)
        out = self.noise_multiplier * rng.standard_normal((size, t))
        if neighbour:
            out += rng.random((size, t)) < self.sample_rate
        return out

    def statistic(self, outputs: ArrayLike) -> np.ndarray:
        """Log-likelihood ratio of each output: sum_t ln(1 - q + q exp((2 x_t - 1)/(2 s^2))).

        Args:
            outputs: array of shape (n, dimension), outputs of :meth:`sample`.

        Returns:
            array of shape (n,): ln p1/p0 of each output.
        """
        x = np.asarray(outputs, dtype=float).reshape(len(outputs), -1)
        s2 = self.noise_multiplier**2
        q = float(self.sample_rate)
        if q == 1.0:
            return ((2.0 * x - 1.0) / (2.0 * s2)).sum(axis=1)
        per = np.logaddexp(math.log1p(-q), math.log(q) + (2.0 * x - 1.0) / (2.0 * s2))
        return per.sum(axis=1)


@dataclass(frozen=True)
class _CallableMechanism:
    sampler: Callable

    def sample(self, neighbour: int, size: int, rng: np.random.Generator) -> Any:
        return self.sampler(neighbour, size, rng)


def _draw(mech: Any, neighbour: int, size: int, rng: np.random.Generator) -> np.ndarray:
    """Outputs of a mechanism for validated arguments: the kernel ``_sample`` when the mechanism has one."""
    kernel = getattr(mech, "_sample", None)
    return np.asarray((kernel or mech.sample)(neighbour, size, rng), dtype=float)


# ---------------------------------------------------------------------------------------------------
# the audit


@dataclass(frozen=True)
class AuditResult:
    """Outcome of :func:`audit`; every bound holds with probability >= ``confidence``.

    ``tests`` rows are (direction, threshold, p_hi_lower, p_lo_upper): direction "high" is the set
    {T >= threshold} with P_hi = P_1, "low" is {T <= threshold} with P_hi = P_0.

    Attributes:
        epsilon: the epsilon audited, in [0, inf).
        delta_lower: lower confidence bound on delta(epsilon), in [0, 1].
        claimed_delta: the claimed delta at epsilon, or None.
        epsilon_lower: lower confidence bound on epsilon at ``claimed_delta`` (None without a claim).
        refuted: whether the statistical lower bound delta_lower exceeds claimed_delta (None without a
            claim); True means the claim is false with probability >= ``confidence``, False proves nothing.
        confidence: probability that every bound holds, in (0, 1).
        samples: evaluation outputs per neighbour.
        calibration_samples: calibration outputs per neighbour (thresholds, learned statistic).
        best_test: the test-set row attaining delta_lower (empty if none is positive).
        tests: every test-set row.
    """

    epsilon: float
    delta_lower: float
    claimed_delta: float | None
    epsilon_lower: float | None
    refuted: bool | None
    confidence: float
    samples: int
    calibration_samples: int
    best_test: tuple
    tests: tuple = field(repr=False)

    def delta_lower_at(self, epsilon: float) -> float:
        """Lower confidence bound on delta(epsilon) for any epsilon >= 0 (same confidence event).

        Args:
            epsilon: the epsilon, in [0, inf).

        Returns:
            the lower bound on delta(epsilon), in [0, 1].

        Raises:
            ValueError: ``epsilon`` is outside its range.
        """
        e = V.nonnegative("epsilon", epsilon)
        return _delta_lower(self.tests, e)[0]

    def epsilon_lower_at(self, delta: float) -> float:
        """Lower confidence bound on the smallest epsilon with (epsilon, delta)-DP (0 if none found).

        Args:
            delta: the delta, in [0, 1].

        Returns:
            the lower bound on epsilon(delta), in [0, inf] (inf: no finite epsilon is consistent).

        Raises:
            ValueError: ``delta`` is outside its range.
        """
        d = V.probability("delta", delta)
        return _epsilon_lower(self.tests, d)

    def summary(self) -> str:
        """One line: the lower bound, the claim and whether it is refuted.

        Returns:
            the line (it holds measured numbers: for logs and the JSON report, not for docs/claims.md).
        """
        text = (f"delta({self.epsilon:.4g}) >= {self.delta_lower:.4g} with confidence {self.confidence:g} "
                f"({self.samples} samples per neighbour, {len(self.tests)} test sets, Bonferroni)")
        if self.claimed_delta is not None:
            verdict = "REFUTED" if self.refuted else "not refuted"
            text += (f"; claim ({self.epsilon:.4g}, {self.claimed_delta:.4g}): {verdict}; "
                     f"epsilon at the claimed delta >= {self.epsilon_lower:.4g}")
        return text


def _delta_lower(tests, epsilon: float) -> tuple[float, int]:
    best, arg = 0.0, -1
    for i, (_, _, hi, lo) in enumerate(tests):
        if hi <= best:
            continue
        log_term = epsilon + math.log(lo) if lo > 0 else -math.inf
        value = hi - (math.exp(log_term) if log_term < 700 else math.inf)
        if value > best:
            best, arg = value, i
    return best, arg


def _epsilon_lower(tests, delta: float) -> float:
    best = 0.0
    for _, _, hi, lo in tests:
        if hi > delta:
            value = math.inf if lo <= 0 else math.log((hi - delta) / lo)
            best = max(best, value)
    return best


def _as_mechanism(mechanism):
    if hasattr(mechanism, "sample"):
        return mechanism
    if callable(mechanism):
        return _CallableMechanism(mechanism)
    raise ValueError(f"mechanism must have a sample(neighbour, size, rng) method or be callable, got {mechanism!r}")


def _sample_statistic(mech, neighbour: int, size: int, rng, statistic, dim: int) -> np.ndarray:
    """The statistic of ``size`` outputs (``dim`` numbers each) of one neighbour, in memory-bounded chunks."""
    chunk = max(1, _CHUNK_VALUES // max(dim, 1))
    parts = []
    done = 0
    while done < size:
        n = min(chunk, size - done)
        out = _draw(mech, neighbour, n, rng)
        if out.shape[0] != n:
            raise ValueError(f"the sampler returned {out.shape[0]} outputs, expected {n}")
        t = np.asarray(statistic(out), dtype=float).reshape(-1)
        if t.shape != (n,):
            raise ValueError(f"the statistic must return one number per output, got shape {t.shape}")
        parts.append(t)
        done += n
    return np.concatenate(parts)


def _learned_statistic(x0: np.ndarray, x1: np.ndarray):
    """Linear discriminant w^T x learned on calibration outputs (ridge-regularised pooled covariance)."""
    a0 = x0.reshape(len(x0), -1)
    a1 = x1.reshape(len(x1), -1)
    if a0.shape[1] == 1:
        sign = 1.0 if a1.mean() >= a0.mean() else -1.0
        return _Linear(np.array([sign]))
    diff = a1.mean(axis=0) - a0.mean(axis=0)
    cov = 0.5 * (np.cov(a0, rowvar=False) + np.cov(a1, rowvar=False))
    cov = np.atleast_2d(cov)
    ridge = 1e-6 * float(np.trace(cov)) / cov.shape[0] + 1e-300
    return _Linear(np.linalg.solve(cov + ridge * np.eye(cov.shape[0]), diff))


@dataclass(frozen=True)
class _Linear:
    weights: np.ndarray

    def __call__(self, outputs):
        x = np.asarray(outputs, dtype=float).reshape(len(outputs), -1)
        return x @ self.weights


def _threshold_levels(count: int, n_cal: int) -> np.ndarray:
    """About ``count`` quantile levels in (0, 1): half evenly spaced, half geometric towards both tails
    (down to about 1/n_cal), where the optimal test sets for small delta live."""
    quarter = max(1, count // 4)
    tail = np.geomspace(max(1.0 / n_cal, 1e-12), 0.5, quarter)
    middle = np.linspace(0.0, 1.0, max(1, count - 2 * quarter) + 2)[1:-1]
    return np.unique(np.concatenate([tail, middle, 1.0 - tail]))


@dataclass(frozen=True)
class AuditSettings:
    """How :func:`audit` samples and tests: the claim, the sample sizes, the confidence, the thresholds, the
    statistic and the seed (defaults in one place: here; checked by :func:`audit`).

    Attributes:
        claimed_delta: the delta an accountant claims at ``epsilon``, in [0, 1], or None (default: no claim).
        samples: evaluation outputs per neighbour, a positive int; default 100000.
        calibration_samples: further outputs per neighbour choosing the thresholds, a positive int; default
            None (samples // 4, at least 1).
        confidence: probability that every bound holds, in (0, 1); default 0.95.
        thresholds: about how many thresholds per direction, a positive int; default 64.
        statistic: scalar statistic of the outputs, or None (default: ``mechanism.statistic`` if it has one,
            else a linear discriminant learned on the calibration outputs).
        seed: seed of the numpy Generator (or a Generator); default 0.
    """

    claimed_delta: float | None = None
    samples: int = 100_000
    calibration_samples: int | None = None
    confidence: float = 0.95
    thresholds: int = 64
    statistic: Callable[[np.ndarray], ArrayLike] | None = None
    seed: int | np.random.Generator | None = 0


def audit(mechanism: Any, epsilon: float, settings: AuditSettings | None = None, **keywords: Any) -> AuditResult:
    r"""Lower confidence bound on delta(epsilon) of ``mechanism`` from samples; optionally test a claim.

    delta_lower = max_S [CP_lower(P_hi(S)) - e^epsilon CP_upper(P_lo(S))] over threshold sets S of a
    scalar statistic, each Clopper-Pearson bound at level (1 - confidence) / (2 m), m = number of sets
    (Bonferroni): with probability >= ``confidence`` the true delta(epsilon) of the mechanism is at
    least delta_lower (simultaneously for every epsilon, see :meth:`AuditResult.delta_lower_at`).
    ``claimed_delta`` (what an accountant claims at ``epsilon``) is refuted when the LOWER bound delta_lower
    exceeds it (never from an upper bound: a refutation holds with probability >= ``confidence``).
    ``samples`` fresh outputs per neighbour are used for the bound; ``calibration_samples``
    (default samples // 4) further outputs per neighbour choose the thresholds (and learn a linear
    statistic when neither ``statistic`` nor ``mechanism.statistic`` is given). ``seed`` seeds a
    numpy Generator. Sources: the definition of (epsilon, delta)-DP; Clopper & Pearson 1934.

    Args:
        mechanism: an object with ``sample(neighbour, size, rng) -> array`` of shape (size,) or (size, d)
            (optionally ``statistic(outputs) -> (size,)``), or a callable ``sampler(neighbour, size, rng)``.
        epsilon: the epsilon at which delta is bounded, in [0, inf).
        settings: the claim, sample sizes, confidence, thresholds, statistic and seed, an
            :class:`AuditSettings`; default None: built from ``keywords``.
        keywords: fields of :class:`AuditSettings` (``claimed_delta``, ``samples``, ``calibration_samples``,
            ``confidence``, ``thresholds``, ``statistic``, ``seed``), replacing those of ``settings``.

    Returns:
        the :class:`AuditResult`.

    Raises:
        ValueError: an argument is outside its range, or the mechanism or statistic returns wrong shapes.
    """
    settings = V.settings_with("audit", AuditSettings, settings, keywords)
    claimed_delta, samples, calibration_samples = (settings.claimed_delta, settings.samples,
                                                   settings.calibration_samples)
    confidence, thresholds, statistic, seed = (settings.confidence, settings.thresholds, settings.statistic,
                                               settings.seed)
    mech = _as_mechanism(mechanism)
    eps = V.nonnegative("epsilon", epsilon)
    if claimed_delta is not None:
        claimed_delta = V.probability("claimed_delta", claimed_delta)
    n = V.positive_int("samples", samples)
    n_cal = V.positive_int("calibration_samples", calibration_samples if calibration_samples is not None
                           else max(1, n // 4))
    conf = V.open_unit("confidence", confidence)
    count = V.positive_int("thresholds", thresholds)
    rng = np.random.default_rng(seed)

    cal0 = _draw(mech, 0, n_cal, rng)
    cal1 = _draw(mech, 1, n_cal, rng)
    if statistic is None:
        statistic = getattr(mech, "statistic", None)
    if statistic is None:
        statistic = _learned_statistic(cal0, cal1)
    elif not callable(statistic):
        raise ValueError(f"statistic must be callable, got {statistic!r}")
    pooled = np.concatenate([np.asarray(statistic(cal0), float), np.asarray(statistic(cal1), float)])
    taus = np.unique(np.quantile(pooled, _threshold_levels(count, pooled.size)))
    taus = taus[np.isfinite(taus)]

    dim = max(1, int(cal0[:1].size))
    t0 = np.sort(_sample_statistic(mech, 0, n, rng, statistic, dim))
    t1 = np.sort(_sample_statistic(mech, 1, n, rng, statistic, dim))
    m = 2 * taus.size
    a = (1.0 - conf) / (2.0 * m)
    # counts of {T >= tau} and {T <= tau} under each neighbour
    ge0 = n - np.searchsorted(t0, taus, side="left")
    ge1 = n - np.searchsorted(t1, taus, side="left")
    le0 = np.searchsorted(t0, taus, side="right")
    le1 = np.searchsorted(t1, taus, side="right")
    tests = []
    for direction, hi_counts, lo_counts in (("high", ge1, ge0), ("low", le0, le1)):
        hi_lower = clopper_pearson_lower_array(hi_counts, n, a)
        lo_upper = clopper_pearson_upper_array(lo_counts, n, a)
        for tau, h, lo in zip(taus, hi_lower, lo_upper):
            tests.append((direction, float(tau), float(h), float(lo)))
    tests = tuple(tests)
    delta_lower, arg = _delta_lower(tests, eps)
    eps_lower = refuted = None
    if claimed_delta is not None:
        refuted = bool(delta_lower > claimed_delta)
        eps_lower = _epsilon_lower(tests, claimed_delta)
    return AuditResult(
        epsilon=eps, delta_lower=float(delta_lower), claimed_delta=claimed_delta, epsilon_lower=eps_lower,
        refuted=refuted, confidence=conf, samples=n, calibration_samples=n_cal,
        best_test=tests[arg] if arg >= 0 else (), tests=tests,
    )
