"""The accounting layer: events (what ran), accountants (what it costs), calibration and the front door.

* :mod:`privcal.accounting.events` — frozen descriptions: ``GaussianEvent``, ``GaussianProcessEvent``,
  ``ApproxDPEvent``, ``ComposedEvent`` (a list) and ``SelfComposedEvent`` (repetitions), ``SubsampledEvent``
  (with its ``Neighbouring`` relation; dp_accounting-shaped ``PoissonSampledEvent`` and
  ``SampledWithoutReplacementEvent``), and
  ``Releases`` (steps of a Gaussian mechanism as a function of sigma);
* :mod:`privcal.accounting.accountants` — ``ExactAccountant``, ``PaperAccountant``, ``KOVAccountant``,
  ``RDPAccountant``: one protocol, and each owns its calibration fast path (``sigma_for``);
* :mod:`privcal.accounting.calibration` — ``search_sigma``, the generic root finder for other events;
* :mod:`privcal.accounting.api` — the front door ``privcal.epsilon`` / ``privcal.calibrate`` and reports.

Built on the analysis modules (``privcal.analysis.gaussian``, ``composition``, ``kov``, ``rdp``, ``subsampling``);
used by the paper calibrators (``privcal.calibrators``), the CLI, ``privcal.verify`` and ``privcal.rl``.
"""

from .accountants import ExactAccountant, KOVAccountant, PaperAccountant, RDPAccountant
from .protocol import Accountant
from .registry import ACCOUNTANTS
from .api import (
    ACCOUNTANT_CHOICES,
    CalibrationReport,
    EpsilonReport,
    PricingOptions,
    Run,
    calibrate,
    calibrate_report,
    epsilon,
    epsilon_of,
    epsilon_report,
)
from .calibration import search_sigma
from .events import (
    ApproxDPEvent,
    ComposedEvent,
    Event,
    GaussianEvent,
    GaussianProcessEvent,
    LaplaceEvent,
    Neighbouring,
    NeighbouringWarning,
    PoissonSampledEvent,
    Releases,
    SampledWithoutReplacementEvent,
    SelfComposedEvent,
    SubsampledEvent,
    EpochsEvent,
)
from .interop import from_dp_accounting

__all__ = [
    "PricingOptions",
    "Run",
    "ACCOUNTANTS",
    "ACCOUNTANT_CHOICES",
    "Accountant",
    "ApproxDPEvent",
    "CalibrationReport",
    "ComposedEvent",
    "EpsilonReport",
    "Event",
    "ExactAccountant",
    "GaussianEvent",
    "GaussianProcessEvent",
    "LaplaceEvent",
    "KOVAccountant",
    "Neighbouring",
    "NeighbouringWarning",
    "PaperAccountant",
    "PoissonSampledEvent",
    "RDPAccountant",
    "Releases",
    "SampledWithoutReplacementEvent",
    "SelfComposedEvent",
    "SubsampledEvent",
    "EpochsEvent",
    "calibrate",
    "calibrate_report",
    "epsilon",
    "epsilon_of",
    "epsilon_report",
    "from_dp_accounting",
    "search_sigma",
]
