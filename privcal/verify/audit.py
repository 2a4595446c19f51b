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

Mechanisms provided (``privcal.verify.audit_mechanisms``, whose names this module re-exports; the auditor
samples their real outputs, in chunks): :class:`GaussianMechanism` (composed Gaussian releases),
:class:`GaussianProcessMechanism` (the Gaussian-process mechanism observed at finitely many points) and
:class:`SubsampledGaussianMechanism` (the Poisson-subsampled Gaussian).
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
from privcal.verify.audit_mechanisms import (GaussianMechanism, GaussianProcessMechanism,
                                             SubsampledGaussianMechanism)

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


@dataclass(frozen=True)
class _CallableMechanism:
    sampler: Callable

    def sample(self, neighbour: int, size: int, rng: np.random.Generator) -> Any:
        return self.sampler(neighbour, size, rng)


def _draw(mech: Any, neighbour: int, size: int, rng: np.random.Generator) -> np.ndarray:
    """Outputs of a mechanism for validated arguments: the kernel ``sample_unchecked`` when the mechanism has one."""
    kernel = getattr(mech, "sample_unchecked", None)
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
