"""``privcal table --setting gaussian --sampling shuffle|balls_in_bins|full_batch``: sigma per target epsilon for a run
over epochs, priced for the sampler it ran, beside what Poisson accounting would pick.

Columns (docs/samplers.md):

* ``upper`` -- the sigma to use: the least sigma whose valid upper bound (no amplification, the Gaussian with
  mu = sqrt(epochs) sensitivity / sigma) meets the target (closed form);
* ``lower`` -- the sigma below which the run is certainly *not* (epsilon, delta)-DP: there the certified lower
  bound of a realisable pair (the max statistic of an epoch) exceeds the target (a bisection on sigma, the
  certified lower epsilon being non-increasing in sigma: more noise is a post-processing of less);
* ``poisson`` -- the sigma Poisson accounting at q = batch / dataset over the same steps picks: NOT valid for this
  sampler; the lead rows give its verdict (not private where the certified lower bound at it exceeds the target).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Iterable, Optional

from .. import _validate as V
from ..accounting import samplers
from ..accounting.sampled_runs import SampledRun, SampledRunSettings, validated_run
from ..accounting.api import calibrate, epsilon
from .table_model import Column, Row, Table, validated_epsilons

__all__ = ["sampler_table", "SamplerTableSettings"]

#: relative precision of the ``lower`` column's bisection (the table prints 4 digits)
_LOWER_RTOL = 1e-5


def _columns(sampling: str) -> tuple[Column, ...]:
    name = {"shuffle": "shuffled", "balls_in_bins": "balls-in-bins", "full_batch": "full-batch"}[sampling]
    return (
        Column("upper", "valid (no amplif.)", f"{name} batches, no amplification: the Gaussian with mu = "
               "sqrt(epochs) / noise multiplier (docs/samplers.md); valid", False),
        Column("lower", "not private below", "the sigma below which a realisable pair (the max statistic of an "
               "epoch) certifiably loses more than the target: no valid analysis can go lower", False),
        Column("poisson", "Poisson", f"Poisson accounting at q = batch / dataset over the same steps: NOT valid "
               f"for {name} batches", True),
    )


@dataclass(frozen=True)
class SamplerTableSettings(SampledRunSettings):
    """The run of :func:`sampler_table`: E epochs over N records in batches of b, for the sampler the run used;
    the fields (and their defaults) of :class:`~privcal.accounting.sampled_runs.SampledRunSettings`: ``sampling``,
    ``epochs``, ``batch_size``, ``dataset_size``, ``sensitivity`` (default 1), ``neighbouring`` (default None:
    zero-out for shuffle, add/remove otherwise) and ``persistent`` (default False). The values are checked by
    :func:`sampler_table`."""


def _lower_sigma(target: float, delta: float, s_upper: float, run: SampledRun) -> float:
    """The largest sigma (to relative :data:`_LOWER_RTOL`, from below) at which the certified lower epsilon is above
    ``target``: every smaller sigma is certifiably not (target, delta)-DP; 0 when none is found below the valid
    sigma."""
    def lower(sigma: float) -> float:
        return samplers.epsilon_lower(sigma / run.sensitivity, run.steps_per_epoch, run.epochs, delta,
                                      sampler=run.sampling, persistent=run.persistent, relation=run.neighbouring)

    hi = s_upper  # lower(hi) <= upper(hi) <= target
    lo = hi / 2.0
    for _ in range(60):
        if lower(lo) > target:
            break
        hi, lo = lo, lo / 2.0
    else:
        return 0.0
    while hi - lo > _LOWER_RTOL * lo:  # invariant: lower(lo) > target >= lower(hi)
        mid = 0.5 * (lo + hi)
        if lower(mid) > target:
            lo = mid
        else:
            hi = mid
    return lo


def sampler_table(
    epsilons: Iterable[float],
    delta: float = 1e-5,
    *,
    settings: Optional[SamplerTableSettings] = None,
    **keywords: Any,
) -> Table:
    """Sigma per target epsilon for E epochs over N records in batches of b, for the sampler the run used.

    Args:
        epsilons: target epsilons, a non-empty sequence of values in (0, 1e6].
        delta: target delta, in (0, 1); default 1e-5.
        settings: the run, a :class:`SamplerTableSettings`; default None: built from ``keywords``.
        keywords: fields of :class:`SamplerTableSettings` as keywords (``sampling``, ``epochs``, ``batch_size``,
            ``dataset_size`` required without ``settings``; ``sensitivity``, ``neighbouring``, ``persistent``),
            replacing those of ``settings``.

    Returns:
        a :class:`~privcal.calibrators.table.Table` (setting "gaussian"), reference "upper" (an upper bound).
    """
    if settings is not None and not isinstance(settings, SamplerTableSettings):
        raise ValueError(f"settings must be a SamplerTableSettings, got {settings!r}")
    s = SamplerTableSettings(**keywords) if settings is None else replace(settings, **keywords)
    epsilons = validated_epsilons(epsilons)
    delta = V.open_unit("delta", delta)
    run = validated_run(s.sampling, s.epochs, s.batch_size, s.dataset_size, s.sensitivity, s.neighbouring,
                        s.persistent)
    sens, q, steps = run.sensitivity, run.sample_rate, run.steps
    rows = []
    for eps in epsilons:
        s_up = calibrate(eps, delta, sensitivity=sens, steps=run.releases_upper)
        s_low = _lower_sigma(eps, delta, s_up, run)
        s_poi = calibrate(eps, delta, sensitivity=sens, steps=steps, sample_rate=q) if q < 1 else s_up
        up_at_poi = samplers.epsilon_upper(s_poi / sens, run.epochs, delta, sampler=run.sampling,
                                           steps_per_epoch=run.steps_per_epoch, relation=run.neighbouring)
        low_at_poi = samplers.epsilon_lower(s_poi / sens, run.steps_per_epoch, run.epochs, delta,
                                            sampler=run.sampling, persistent=run.persistent, relation=run.neighbouring)
        sigmas = {"upper": s_up, "lower": s_low, "poisson": s_poi}
        rows.append(Row(
            eps, delta, sigmas, {k: v / s_up for k, v in sigmas.items()},
            # flagged only from the certified lower bound (an upper bound above the target proves nothing)
            ("poisson",) if low_at_poi > eps else (), {"poisson": up_at_poi},
            lower_epsilons={"poisson": low_at_poi},
            details={"poisson": {"epsilon_poisson_accounting": epsilon(s_poi, delta, sensitivity=sens,
                                                                       steps=steps, sample_rate=q)
                                 if q < 1 else eps}},
        ))
    params = {"sampling": run.sampling, "persistent": run.persistent, "neighbouring": run.neighbouring.value,
              "epochs": run.epochs, "batch_size": run.batch_size, "dataset_size": run.dataset_size,
              "steps_per_epoch": run.steps_per_epoch, "steps": steps, "sensitivity": sens}
    notes = (f"privacy unit: {run.neighbouring.value} neighbours; the truth lies between the 'not private below' sigma and "
             "the valid one",)
    return Table("gaussian", params, _columns(run.sampling), tuple(rows), notes, reference="upper",
                 valid_keys=("upper",), paper_key="poisson", reference_exact=False, paper_label="Poisson")
