"""Runs over epochs whose batch sampler is not Poisson: both ends of the truth, and Poisson's figure beside them.

A DP-SGD run of E epochs over N records in batches of b is priced for the sampler it actually ran
(``privcal.accounting.samplers``; docs/samplers.md):

* ``"shuffle"``: fixed-size batches of a permutation (fresh each epoch, or one ``persistent`` permutation);
* ``"balls_in_bins"``: each record assigned to one uniformly random step of each epoch;
* ``"full_batch"``: every record in every step.

The report gives the valid upper bound (no amplification: the Gaussian with mu = sqrt(E) / s), the certified
lower bound of a realisable worst case (the max statistic of the epoch's outputs), and what Poisson accounting
at rate q = b/N over the same number of steps would say -- labelled *not valid for this sampler* (Chua, Ghazi,
Kamath, Kumar, Manurangsi, Sinha & Zhang, ICML 2024): where it is below the lower bound, it is provably
optimistic.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Optional, Union

from .. import _validate as V
from ..errors import UnsupportedEventError
from . import samplers
from .api import calibrate, epsilon
from .events import Neighbouring

__all__ = ["RUN_SAMPLERS", "DEFAULT_RELATION", "SampledRun", "SampledRunSettings", "SampledRunReport",
           "sampled_run_epsilon", "sampled_run_calibrate", "validated_run"]

#: the samplers priced here (Poisson and fixed-size batches drawn afresh each step: ``privcal.epsilon``)
RUN_SAMPLERS = ("shuffle", "balls_in_bins", "full_batch")
#: the relation each is priced under when none is named: shuffled batches under zero-out (removing a record
#: would move every later batch boundary: refused), the others under add/remove
DEFAULT_RELATION = {"shuffle": "zero_out", "balls_in_bins": "add_remove", "full_batch": "add_remove"}


@dataclass(frozen=True)
class SampledRunReport:
    """Both ends of the epsilon of a run over epochs, for the sampler it ran, and Poisson's (invalid) figure.

    Attributes:
        epsilon: the valid upper bound on epsilon at ``delta`` (no amplification).
        lower: a certified lower bound: a realisable pair of neighbouring data sets loses at least this much.
        poisson_epsilon: what Poisson accounting at q = batch_size / dataset_size over the same steps says: NOT
            valid for this sampler (below ``lower`` it is provably optimistic).
        delta, sigma, sensitivity: as asked (sigma absolute, sensitivity under ``neighbouring``).
        sampling, neighbouring, persistent: the sampler, the relation priced, whether one permutation is kept.
        epochs, batch_size, dataset_size, steps_per_epoch, steps: the run (T = ceil(N / b), steps = E T).
        guarantee: what ``epsilon`` is, in words; privacy_unit: what one neighbouring change is.
        notes: anything a reader must know (e.g. Poisson's figure below the lower bound).
    """

    epsilon: float
    lower: float
    poisson_epsilon: float
    delta: float
    sigma: float
    sensitivity: float
    sampling: str
    neighbouring: str
    persistent: bool
    epochs: int
    batch_size: int
    dataset_size: int
    steps_per_epoch: int
    steps: int
    guarantee: str
    privacy_unit: str
    notes: tuple = field(default=())


@dataclass(frozen=True)
class SampledRun:
    """A run over epochs, validated (:func:`validated_run` builds it): what the pricing of one sampler needs.

    Attributes:
        sampling: "shuffle", "balls_in_bins" or "full_batch".
        epochs: E, an int >= 1.
        batch_size: b, an int in [1, dataset_size].
        dataset_size: N, an int >= 1.
        sensitivity: of one step's sum under ``neighbouring``, in (0, inf).
        neighbouring: the relation priced (a :class:`~privcal.accounting.events.Neighbouring`).
        persistent: one permutation (or assignment) for the whole run.
        steps_per_epoch: T = ceil(N / b) (1 for a full batch of all N records).
    """

    sampling: str
    epochs: int
    batch_size: int
    dataset_size: int
    sensitivity: float
    neighbouring: Neighbouring
    persistent: bool
    steps_per_epoch: int

    @property
    def steps(self) -> int:
        """E T, the number of releases."""
        return self.epochs * self.steps_per_epoch

    @property
    def releases_upper(self) -> int:
        """The releases of the valid upper bound's Gaussian: E T for a full batch, E otherwise (each record in
        one batch per epoch, no amplification)."""
        return self.steps if self.sampling == "full_batch" else self.epochs

    @property
    def sample_rate(self) -> float:
        """b / N, the rate Poisson accounting would use."""
        return self.batch_size / self.dataset_size


@dataclass(frozen=True)
class SampledRunSettings:
    """A run over epochs as asked, not yet validated (defaults in one place: here; :meth:`validated` checks it).

    Attributes:
        sampling: "shuffle", "balls_in_bins" or "full_batch" (required).
        epochs: E, an int >= 1 (required).
        batch_size: b, an int in [1, dataset_size] (required).
        dataset_size: N, an int >= 1 (required).
        sensitivity: of one step's sum under ``neighbouring``, in (0, inf); default 1 (zero-out and add/remove:
            the clip norm C; replace-one: 2C).
        neighbouring: "zero_out" (default for shuffle), "add_remove" (default otherwise) or "replace_one";
            shuffle under add/remove is refused (no proof: a removed record moves every later batch boundary).
        persistent: one permutation (or assignment) for the whole run; default False (fresh each epoch).
    """

    sampling: str
    epochs: int
    batch_size: int
    dataset_size: int
    sensitivity: float = 1.0
    neighbouring: Optional[Union[Neighbouring, str]] = None
    persistent: bool = False

    def validated(self) -> SampledRun:
        """The :class:`SampledRun` of these fields (:func:`validated_run`: a ``ValueError`` names the argument)."""
        return validated_run(self.sampling, self.epochs, self.batch_size, self.dataset_size, self.sensitivity,
                             self.neighbouring, self.persistent)


_REQUIRED = ("sampling", "epochs", "batch_size", "dataset_size")


def _settings(where: str, settings: Optional[SampledRunSettings], keywords: dict) -> SampledRunSettings:
    """``settings`` with ``keywords`` replacing its fields; without ``settings``, a missing required field raises
    the ``TypeError`` Python raises for a missing keyword-only argument of ``where``."""
    if settings is None:
        for key in keywords:
            if key not in SampledRunSettings.__dataclass_fields__:
                raise TypeError(f"{where}() got an unexpected keyword argument {key!r}")
        missing = [name for name in _REQUIRED if name not in keywords]
        if missing:
            quoted = [repr(name) for name in missing]
            listed = quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + " and " + quoted[-1]
            plural = "argument" if len(missing) == 1 else "arguments"
            raise TypeError(f"{where}() missing {len(missing)} required keyword-only {plural}: {listed}")
    return V.settings_with(where, SampledRunSettings, settings, keywords)


def validated_run(sampling: str, epochs: int, batch_size: int, dataset_size: int, sensitivity: float,
                  neighbouring: Optional[Union[Neighbouring, str]], persistent: bool) -> SampledRun:
    """The run, each field validated (a ``ValueError`` names the argument), the pair refused where
    ``samplers.refusal`` says so.

    Args:
        sampling: "shuffle", "balls_in_bins" or "full_batch".
        epochs: an int >= 1.
        batch_size: an int in [1, dataset_size].
        dataset_size: an int >= 1.
        sensitivity: in (0, inf).
        neighbouring: a relation, or None (:data:`DEFAULT_RELATION`).
        persistent: True or False.
    """
    sampling = V.choice("sampling", sampling, RUN_SAMPLERS)
    epochs = V.positive_int("epochs", epochs)
    n = V.positive_int("dataset_size", dataset_size)
    b = V.positive_int("batch_size", batch_size)
    if b > n:
        raise ValueError(f"batch_size must be in [1, dataset_size={n}], got {batch_size!r}")
    sensitivity = V.positive("sensitivity", sensitivity)
    relation = Neighbouring(V.choice("neighbouring", DEFAULT_RELATION[sampling] if neighbouring is None else
                                     getattr(neighbouring, "value", neighbouring), tuple(r.value for r in Neighbouring)))
    if not isinstance(persistent, bool):
        raise ValueError(f"persistent must be True or False, got {persistent!r}")
    if persistent and sampling == "full_batch":
        raise ValueError("persistent applies to shuffle and balls_in_bins, not sampling='full_batch'")
    why = samplers.refusal(sampling, relation)
    if why is not None:
        raise UnsupportedEventError(f"sampling={sampling!r} with neighbouring={relation.value!r} is refused: {why}")
    steps_per_epoch = 1 if sampling == "full_batch" and b == n else math.ceil(n / b)
    return SampledRun(sampling, epochs, b, n, sensitivity, relation, persistent, steps_per_epoch)


_UNIT = {
    Neighbouring.ADD_REMOVE: "one record added or removed",
    Neighbouring.REPLACE_ONE: "one record replaced by another",
    Neighbouring.ZERO_OUT: "one record replaced by a null record (its clipped contribution removed)",
}


def sampled_run_epsilon(sigma: float, delta: float, settings: Optional[SampledRunSettings] = None,
                        **keywords) -> SampledRunReport:
    """Epsilon at ``delta`` of E epochs of DP-SGD-style releases (Gaussian noise ``sigma`` on a sum of
    contributions of sensitivity ``sensitivity``) over ``dataset_size`` records in batches of ``batch_size``,
    priced for the sampler the run used: the valid upper bound, a certified realisable lower bound, and
    Poisson's figure (not valid for this sampler).

    Args:
        sigma: noise standard deviation (absolute), in (0, inf).
        delta: in (0, 1).
        settings: the run, a :class:`SampledRunSettings`; default None: built from ``keywords``.
        keywords: fields of :class:`SampledRunSettings` (``sampling``, ``epochs``, ``batch_size`` and
            ``dataset_size``, required without ``settings``; ``sensitivity``, ``neighbouring``, ``persistent``),
            replacing those of ``settings``.

    Returns:
        the report.

    Raises:
        ValueError: an argument is outside its range.
        UnsupportedEventError: the (sampling, relation) pair is refused (one line saying what is valid).
    """
    settings = _settings("sampled_run_epsilon", settings, keywords)
    sigma = V.positive("sigma", sigma)
    delta = V.open_unit("delta", delta)
    run = settings.validated()
    s = sigma / run.sensitivity
    upper = samplers.epsilon_upper(s, run.epochs, delta, sampler=run.sampling, steps_per_epoch=run.steps_per_epoch,
                                   relation=run.neighbouring)
    lower = samplers.epsilon_lower(s, run.steps_per_epoch, run.epochs, delta, sampler=run.sampling,
                                   persistent=run.persistent, relation=run.neighbouring)
    poisson = (epsilon(sigma, delta, sensitivity=run.sensitivity, steps=run.steps, sample_rate=run.sample_rate)
               if run.batch_size < run.dataset_size else upper)
    return _report(run, upper, min(lower, upper), poisson, delta, sigma)


def _report(run: SampledRun, upper: float, lower: float, poisson: float, delta: float, sigma: float) -> SampledRunReport:
    notes = []
    if run.sampling != "full_batch":
        if poisson < lower:
            notes.append(f"Poisson accounting's {poisson:.4g} is below the certified lower bound {lower:.4g}: "
                         "provably optimistic for this sampler")
        else:
            notes.append(f"Poisson accounting's {poisson:.4g} is not valid for this sampler (it prices another "
                         "mechanism); the truth lies in [lower, epsilon]")
    guarantee = ("upper bound on epsilon (no amplification: each record in one batch per epoch, the Gaussian with "
                 "mu = sqrt(epochs) / noise multiplier; docs/samplers.md)" if run.sampling != "full_batch" else
                 "exact epsilon (every record in every step: the Gaussian with mu = sqrt(steps) / noise multiplier)")
    return SampledRunReport(upper, lower, poisson, delta, sigma, run.sensitivity, run.sampling, run.neighbouring.value,
                            run.persistent, run.epochs, run.batch_size, run.dataset_size, run.steps_per_epoch,
                            run.steps, guarantee, _UNIT[run.neighbouring], tuple(notes))


def sampled_run_calibrate(epsilon_target: float, delta: float, settings: Optional[SampledRunSettings] = None,
                          **keywords) -> tuple[float, SampledRunReport, float]:
    """Smallest sigma whose valid upper bound (:func:`sampled_run_epsilon`) meets (epsilon, delta): closed form,
    the exact Gaussian calibration at E releases (E T for a full batch); and the sigma Poisson accounting would
    pick (not valid for this sampler).

    Args:
        epsilon_target: target epsilon, in (0, inf).
        delta: in (0, 1).
        settings: the run, a :class:`SampledRunSettings`; default None: built from ``keywords``.
        keywords: fields of :class:`SampledRunSettings` (as :func:`sampled_run_epsilon`), replacing those of
            ``settings``.

    Returns:
        (sigma, the report at sigma, the sigma of Poisson accounting at the same target: not valid here).
    """
    settings = _settings("sampled_run_calibrate", settings, keywords)
    epsilon_target = V.positive("epsilon", epsilon_target)
    delta = V.open_unit("delta", delta)
    run = settings.validated()
    sigma = calibrate(epsilon_target, delta, sensitivity=run.sensitivity, steps=run.releases_upper)
    report = sampled_run_epsilon(sigma, delta, sampling=run.sampling, epochs=run.epochs, batch_size=run.batch_size,
                                 dataset_size=run.dataset_size, sensitivity=run.sensitivity,
                                 neighbouring=run.neighbouring, persistent=run.persistent)
    poisson = (calibrate(epsilon_target, delta, sensitivity=run.sensitivity, steps=run.steps,
                         sample_rate=run.sample_rate) if run.batch_size < run.dataset_size else sigma)
    return sigma, report, poisson
