r"""Verdicts: does a run (or a set of seeds) beat the trivial reference, fail to, or can we not tell?

Every ``privcal train`` output carries a :class:`Verdict` against its trivial reference (the best
data-independent policy, the random or uniform policy, the zero predictor), with the test used:

* **one seed** (:func:`verdict_one_run`): the run's utility and the reference are compared with their
  evaluation standard errors (a released policy's return estimated by simulation; an exact value has
  standard error 0). With z = (u - u_ref) / sqrt(se^2 + se_ref^2) (sign flipped when lower is better) and
  the one-sided normal quantile z_c at the confidence c: "beats" when z > z_c, "does not beat" when
  z < -z_c, else "cannot tell"; with both standard errors 0 the values are compared as they are (a tie
  does not beat). The test is about *this run's* output only: one seed says nothing about the method's
  spread over seeds, and the verdict says so.
* **several seeds** (:func:`verdict_over_seeds`): a one-sided Welch t bound on the mean over seeds, the
  reference's own standard error added in quadrature (Welch-Satterthwaite degrees of freedom):
  "beats" when the confidence bound on the mean is better than the reference, "does not beat" when the
  opposite bound is worse, else "cannot tell"; the exact sign test (the number of seeds better than the
  reference against Binomial(n, 1/2)) is reported beside it. A non-finite value (a diverged run) counts
  as the worst value.
* **a result over seeds** (:func:`summarize_seeds`, what ``privcal train AGENT --seeds 0-19`` prints): the
  per-seed values, their mean, the two-sided ``level`` (default 0.95) Student-t interval of the mean
  (:func:`student_t_interval`: mean +- t_{(1 + level)/2, n - 1} s / sqrt(n), s with ddof = 1; the quantile
  from scipy.stats.t), and the verdict of :func:`verdict_over_seeds` at one-sided confidence (1 + level)/2.
  With an exact reference, "beats" is then exactly "the interval lies on the better side of the reference",
  "does not beat" "on the worse side" and "cannot tell" "it contains the reference": the verdict never
  contradicts the printed interval. When each seed has its own reference value (GPOPE's zero predictor is
  scored on each seed's own evaluation sample) the test is paired: the same one-sided t test on the
  per-seed differences (run minus reference) against 0. One comparison per command, so no multiplicity
  correction (a grid of points is ``privcal frontier``'s).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any, Optional, Sequence

import numpy as np
from numpy.typing import ArrayLike

from privcal import _validate as V

__all__ = ["VERDICTS", "DIVERGENCE_RULE", "BLOW_UP", "Verdict", "diverged", "worse_than_trivial", "no_reference",
           "OneRunTestSettings", "verdict_one_run", "verdict_over_seeds", "DEFAULT_LEVEL", "SeedSummary",
           "SeedSummarySettings", "student_t_interval", "summarize_seeds"]

#: What "diverged" means for a loss-minimising trainer (``privcal train gpope``): the iterates blew up. A loss that
#: is merely worse than the trivial predictor's is :func:`worse_than_trivial`, another field.
DIVERGENCE_RULE = ("diverged: the parameters or the final loss left the floats (non-finite), or the final loss is "
                   "more than 1e6 times the loss of the initial parameters (theta = 0): the iterates blew up")
#: the factor above the initial loss at which a finite final loss counts as blown up
BLOW_UP = 1e6

VERDICTS = ("beats", "does not beat", "cannot tell")


@dataclass(frozen=True)
class Verdict:
    """A verdict against a reference and how it was reached.

    ``verdict`` is one of :data:`VERDICTS`; ``test`` names the test in words (and says "one seed" when
    there was one); ``value`` the run's utility (or the mean over seeds); ``reference`` the reference's
    value and ``reference_label`` what it is; ``statistic`` the z or t statistic (positive = better
    than the reference; None for an exact comparison); ``p_value`` the one-sided p-value of "no better
    than the reference" (None for an exact comparison); ``sign_test_p`` the exact one-sided sign-test
    p-value over seeds (None for one seed); ``seeds`` the number of values.
    """

    verdict: str
    test: str
    value: float
    reference: float
    reference_label: str
    higher_is_better: bool
    confidence: float
    seeds: int
    statistic: Optional[float] = None
    p_value: Optional[float] = None
    sign_test_p: Optional[float] = None

    def to_dict(self) -> dict:
        """JSON-ready copy (non-finite numbers as None)."""
        from privcal.records import clean

        return clean(asdict(self))

    def line(self) -> str:
        """One line for the text reports."""
        p = "" if self.p_value is None else f", p = {self.p_value:.3g}"
        return (f"{self.verdict} the {self.reference_label} ({self.value:.4g} against {self.reference:.4g}{p}; "
                f"{self.test})")


def no_reference(reason: str) -> dict:
    """The ``verdict`` fields of a run that computed no reference: "cannot tell", and why.

    Args:
        reason: why there is no reference (e.g. "--no-references").

    Returns:
        {"verdict": "cannot tell", "verdict_test": {"verdict", "test", "seeds"}}.
    """
    test = f"no reference computed ({reason}): nothing to compare with"
    return {"verdict": "cannot tell", "verdict_test": {"verdict": "cannot tell", "test": test, "seeds": 1}}


def diverged(final_loss: float, initial_loss: float, parameters_finite: bool = True) -> bool:
    """Whether a run diverged by :data:`DIVERGENCE_RULE`: non-finite parameters or loss, or a final loss more than
    :data:`BLOW_UP` times the initial one.

    Args:
        final_loss: the loss of the released parameters (MSPBE).
        initial_loss: the loss of the initial parameters (theta = 0: the trivial predictor's).
        parameters_finite: whether every parameter stayed finite; default True.

    Returns:
        True when the run diverged.
    """
    final, initial = float(final_loss), float(initial_loss)
    return (not parameters_finite) or not math.isfinite(final) or final > BLOW_UP * max(initial, 1e-300)


def worse_than_trivial(final_loss: float, initial_loss: float) -> bool:
    """Whether the released parameters' loss is above the trivial predictor's (theta = 0), diverged or not.

    Args:
        final_loss: the loss of the released parameters.
        initial_loss: the loss of theta = 0.
    """
    final = float(final_loss)
    return not math.isfinite(final) or final > float(initial_loss)


@dataclass(frozen=True)
class OneRunTestSettings:
    """The evaluation errors and confidence of :func:`verdict_one_run`'s test (defaults in one place: here;
    checked there).

    Attributes:
        value_se: standard error of the run's value (simulation of the released policy), in [0, inf); default 0.
        reference_se: standard error of the reference, in [0, inf); default 0 (exact).
        confidence: one-sided confidence, in (0, 1); default 0.95.
        basis: where both values come from when no standard error is given, for the test's text (e.g. "both
            estimated on the same 20000 simulated trajectories"); default None: they are exact values.
    """

    value_se: float = 0.0
    reference_se: float = 0.0
    confidence: float = 0.95
    basis: Optional[str] = None


def verdict_one_run(value: float, reference: float, *, higher_is_better: bool, reference_label: str,
                    settings: Optional[OneRunTestSettings] = None, **keywords: Any) -> Verdict:
    """Verdict of one run (one seed) against a reference: a one-sided z test with evaluation standard errors.

    Args:
        value: the run's utility (return, MSPBE, regret per episode); a non-finite value does not beat.
        reference: the reference's utility, finite.
        higher_is_better: True for returns, False for losses and regret.
        reference_label: what the reference is, e.g. "best data-independent policy".
        settings: the test's errors and confidence, a :class:`OneRunTestSettings`; default None: built from
            ``keywords``.
        keywords: fields of :class:`OneRunTestSettings` (``value_se``, ``reference_se``, ``confidence``,
            ``basis``), replacing those of ``settings``.

    Returns:
        the :class:`Verdict`.

    Raises:
        ValueError: an argument is outside its range.
    """
    test = V.settings_with("verdict_one_run", OneRunTestSettings, settings, keywords)
    ref = float(reference)
    if not math.isfinite(ref):
        raise ValueError(f"reference must be finite, got {reference!r}")
    se, se_ref = V.nonnegative("value_se", test.value_se), V.nonnegative("reference_se", test.reference_se)
    conf = V.open_unit("confidence", test.confidence)
    checked = OneRunTestSettings(se, se_ref, conf, test.basis)
    return _one_run(float(value), ref, bool(higher_is_better), str(reference_label), checked)


def _one_run(value, ref, higher, label, test: OneRunTestSettings) -> Verdict:
    se, se_ref, conf, basis = test.value_se, test.reference_se, test.confidence, test.basis
    sign = 1.0 if higher else -1.0
    common = dict(value=value, reference=ref, reference_label=label, higher_is_better=higher, confidence=conf,
                  seeds=1)
    if not math.isfinite(value):
        return Verdict("does not beat", "one seed: the run's value is not finite (diverged)", **common)
    scale = math.hypot(se, se_ref)
    if scale == 0.0:
        better = sign * (value - ref) > 0
        how = "exact values compared (no evaluation error)" if basis is None else f"{basis}, compared as they are"
        return Verdict("beats" if better else "does not beat", f"one seed: {how}; says nothing about other seeds",
                       **common)
    from scipy.stats import norm

    z = sign * (value - ref) / scale
    q = float(norm.ppf(conf))
    verdict = "beats" if z > q else "does not beat" if z < -q else "cannot tell"
    return Verdict(verdict, f"one seed: one-sided z test at confidence {conf:g} with the evaluation standard "
                            f"errors ({se:.3g} run, {se_ref:.3g} reference); says nothing about other seeds",
                   statistic=float(z), p_value=float(norm.sf(z)), **common)


def verdict_over_seeds(values: ArrayLike, reference: float, *, higher_is_better: bool, reference_label: str,
                       reference_se: float = 0.0, confidence: float = 0.95) -> Verdict:
    """Verdict of several seeds against a reference: one-sided Welch t bound, with the sign test beside it.

    Args:
        values: per-seed utilities, a 1-D sequence of at least 2 floats.
        reference: the reference's utility, finite.
        higher_is_better: True for returns, False for losses and regret.
        reference_label: what the reference is.
        reference_se: standard error of ``reference``, in [0, inf); default 0 (exact).
        confidence: one-sided confidence, in (0, 1); default 0.95.

    Returns:
        the :class:`Verdict`.

    Raises:
        ValueError: an argument is outside its range (fewer than 2 values: use :func:`verdict_one_run`).
    """
    vals = np.asarray(values, dtype=float).ravel()
    if vals.size < 2:
        raise ValueError(f"values must hold at least 2 seeds (one seed: verdict_one_run), got {vals.size}")
    ref = float(reference)
    if not math.isfinite(ref):
        raise ValueError(f"reference must be finite, got {reference!r}")
    return _over_seeds(vals, ref, bool(higher_is_better), str(reference_label),
                       V.nonnegative("reference_se", reference_se), V.open_unit("confidence", confidence))


def _over_seeds(vals, ref, higher, label, se_ref, conf) -> Verdict:
    from scipy.stats import binom, norm
    from scipy.stats import t as student_t

    n = vals.size
    sign = 1.0 if higher else -1.0
    wins = int(np.sum(np.where(np.isfinite(vals), sign * (vals - ref) > 0, False)))
    sign_p = float(binom.sf(wins - 1, n, 0.5))  # P(at least `wins` of n better | median = reference)
    mean = float(vals.mean()) if np.all(np.isfinite(vals)) else (-math.inf if higher else math.inf)
    common = dict(value=mean, reference=ref, reference_label=label, higher_is_better=higher, confidence=conf,
                  seeds=n, sign_test_p=sign_p)
    test = (f"{n} seeds: one-sided Welch t bound at confidence {conf:g} (reference std. error added); "
            f"sign test {wins}/{n} better")
    if not np.all(np.isfinite(vals)):
        return Verdict("does not beat", test + "; a diverged seed counts as the worst value", **common)
    var = float(vals.var(ddof=1)) / n
    se2 = var + se_ref ** 2
    if se2 == 0.0:
        better = sign * (mean - ref) > 0
        return Verdict("beats" if better else "does not beat", test + "; no spread: values compared", **common)
    # Welch-Satterthwaite degrees of freedom (the reference's part has infinite degrees of freedom)
    df = se2 ** 2 / (var ** 2 / (n - 1)) if var > 0 else math.inf
    t = sign * (mean - ref) / math.sqrt(se2)
    dist = student_t(df) if math.isfinite(df) else norm
    q = float(dist.ppf(conf))
    verdict = "beats" if t > q else "does not beat" if t < -q else "cannot tell"
    p = float(dist.sf(t))
    return Verdict(verdict, test, statistic=float(t), p_value=p, **common)


# ------------------------------------------------------------------------------ results over seeds

#: two-sided level of the interval over seeds (the verdict's one-sided confidence is (1 + level) / 2)
DEFAULT_LEVEL = 0.95


def student_t_interval(values: ArrayLike, level: float = DEFAULT_LEVEL) -> tuple[float, float]:
    """Two-sided Student-t interval of the mean of ``values``: mean +- t_{(1+level)/2, n-1} s / sqrt(n).

    Args:
        values: per-seed values, a 1-D sequence of at least 2 numbers.
        level: two-sided coverage, in (0, 1); default 0.95.

    Returns:
        (lower, upper); (nan, nan) when a value is not finite (a diverged run has no interval).

    Raises:
        ValueError: fewer than 2 values, or ``level`` outside (0, 1).
    """
    vals = np.asarray(values, dtype=float).ravel()
    if vals.size < 2:
        raise ValueError(f"values must hold at least 2 seeds for an interval, got {vals.size}")
    return _interval(vals, V.open_unit("level", level))


def _interval(vals, level) -> tuple[float, float]:
    from scipy.stats import t as student_t

    if not np.all(np.isfinite(vals)):
        return math.nan, math.nan
    n = vals.size
    mean = float(vals.mean())
    half = float(student_t.ppf(0.5 + level / 2.0, n - 1)) * float(vals.std(ddof=1)) / math.sqrt(n)
    return mean - half, mean + half


@dataclass(frozen=True)
class SeedSummary:
    """Per-seed values, their mean and interval, and the verdict against the trivial reference.

    ``values`` are in the order of ``seeds``; ``ci`` is the two-sided ``level`` Student-t interval of the
    mean; ``reference`` the trivial reference (the mean of ``reference_values`` when each seed has its own);
    ``paired`` whether the verdict tested the per-seed differences; ``verdict`` the
    :class:`privcal.rl.verdict.Verdict` (its ``test`` names the test).
    """

    seeds: tuple
    values: tuple
    mean: float
    std: float
    ci: tuple
    level: float
    reference: float
    reference_se: float
    reference_label: str
    higher_is_better: bool
    paired: bool
    verdict: Verdict
    reference_values: Optional[tuple] = None

    def to_dict(self) -> dict:
        """JSON-ready fields (non-finite numbers as None)."""
        from privcal.records import clean

        return clean({"seeds": list(self.seeds), "values": list(self.values), "mean": self.mean, "std": self.std,
                      "ci_low": self.ci[0], "ci_high": self.ci[1], "ci_level": self.level,
                      "ci_method": f"two-sided {self.level:g} Student-t interval of the mean over {len(self.seeds)} "
                                   f"seeds (t quantile with {len(self.seeds) - 1} degrees of freedom)",
                      "reference": self.reference, "reference_se": self.reference_se,
                      "reference_label": self.reference_label, "higher_is_better": self.higher_is_better,
                      "paired": self.paired, "verdict": self.verdict.verdict, "verdict_test": self.verdict.to_dict(),
                      "reference_values": None if self.reference_values is None else list(self.reference_values)})

    def line(self) -> str:
        """The verdict in one line for the text reports."""
        v = self.verdict
        p = "" if v.p_value is None else f", p = {v.p_value:.3g}"
        ref = f"{self.reference:.4g} (the mean of the seeds' own references)" if self.paired else f"{self.reference:.4g}"
        return (f"{v.verdict} the {self.reference_label} over {len(self.seeds)} seeds "
                f"(mean {self.mean:.4g} against {ref}{p}; {v.test})")


@dataclass(frozen=True)
class SeedSummarySettings:
    """The seeds, the reference's spread and the level of :func:`summarize_seeds` (defaults in one place: here;
    checked there).

    Attributes:
        seeds: the seeds, as many as the values; default None (0, 1, ...).
        reference_se: standard error of the reference, in [0, inf); default 0 (exact).
        reference_values: each seed's own reference value, as many as the values, or None (default: one
            reference for every seed).
        level: two-sided level of the interval, in (0, 1); the verdict's one-sided confidence is
            (1 + level) / 2; default 0.95.
    """

    seeds: Optional[Sequence[int]] = None
    reference_se: float = 0.0
    reference_values: Optional[ArrayLike] = None
    level: float = DEFAULT_LEVEL


def summarize_seeds(values: ArrayLike, reference: float, *, higher_is_better: bool, reference_label: str,
                    settings: Optional[SeedSummarySettings] = None, **keywords: Any) -> SeedSummary:
    """Mean, Student-t interval and seed-level verdict of per-seed utilities against a trivial reference.

    Args:
        values: the per-seed utilities (returns, MSPBE, regret per episode), at least 2.
        reference: the trivial reference's utility, finite (ignored for the test when ``reference_values``
            differ across seeds: the test is then paired).
        higher_is_better: True for returns, False for losses and regret.
        reference_label: what the reference is, e.g. "best data-independent policy".
        settings: the seeds, the reference's spread and the level, a :class:`SeedSummarySettings`; default None:
            built from ``keywords``.
        keywords: fields of :class:`SeedSummarySettings` (``seeds``, ``reference_se``, ``reference_values``,
            ``level``), replacing those of ``settings``.

    Returns:
        the :class:`SeedSummary`.

    Raises:
        ValueError: an argument is outside its range or the lengths differ.
    """
    given = V.settings_with("summarize_seeds", SeedSummarySettings, settings, keywords)
    seeds, reference_se, reference_values, level = (given.seeds, given.reference_se, given.reference_values,
                                                    given.level)
    vals = np.asarray(values, dtype=float).ravel()
    if vals.size < 2:
        raise ValueError(f"values must hold at least 2 seeds (one seed: privcal.rl.verdict.verdict_one_run), "
                         f"got {vals.size}")
    ids = tuple(range(vals.size)) if seeds is None else tuple(int(s) for s in seeds)
    if len(ids) != vals.size:
        raise ValueError(f"seeds must have as many entries as values ({vals.size}), got {len(ids)}")
    lvl = V.open_unit("level", level)
    se_ref = V.nonnegative("reference_se", reference_se)
    label = str(reference_label)
    higher = bool(higher_is_better)
    confidence = 0.5 + lvl / 2.0
    refs = None
    if reference_values is not None:
        refs = np.asarray(reference_values, dtype=float).ravel()
        if refs.size != vals.size or not np.all(np.isfinite(refs)):
            raise ValueError(f"reference_values must be {vals.size} finite numbers, one per seed, got {refs.size}")
    paired = refs is not None and bool(np.ptp(refs) > 0)
    if paired:
        ref = float(refs.mean())
        raw = verdict_over_seeds(vals - refs, 0.0, higher_is_better=higher, reference_label=label,
                                 confidence=confidence)
        how = "paired one-sided t test of the per-seed differences (run minus its seed's reference)"
    else:
        ref = float(reference if refs is None else refs[0])
        raw = verdict_over_seeds(vals, ref, higher_is_better=higher, reference_label=label, reference_se=se_ref,
                                 confidence=confidence)
        how = "one-sided Welch t test" + (" (the reference's standard error added)" if se_ref > 0 else "")
    wins = raw.test.split("sign test ", 1)[1].split(" better")[0]  # "k/n" seeds better than the reference
    clears = (f"whether the {lvl:g} two-sided interval of the differences clears 0" if paired else
              f"whether the {lvl:g} two-sided interval clears the reference")
    test = (f"{vals.size} seeds: {how} at confidence {confidence:g}, i.e. {clears}; sign test {wins} better"
            + ("; a diverged seed counts as the worst value" if not np.all(np.isfinite(vals)) else ""))
    verdict = Verdict(raw.verdict, test, float(vals.mean()), ref, label, higher, confidence, vals.size,
                      raw.statistic, raw.p_value, raw.sign_test_p)
    finite = bool(np.all(np.isfinite(vals)))
    return SeedSummary(ids, tuple(float(v) for v in vals), float(vals.mean()) if finite else math.nan,
                       float(vals.std(ddof=1)) if finite else math.nan, _interval(vals, lvl), lvl, ref,
                       0.0 if paired else se_ref, label, higher, paired, verdict,
                       None if refs is None else tuple(float(r) for r in refs))
