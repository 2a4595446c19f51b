"""privcal: privacy accounting and noise calibration for differentially private RL.

The front door::

    import privcal
    privcal.calibrate(1.0, 1e-5, steps=100)           # sigma for (1, 1e-5)-DP after 100 releases
    privcal.epsilon(10.0, 1e-5, steps=100)            # epsilon of 100 releases at sigma = 10
    privcal.calibrate_report(1.0, 1e-5, steps=100, accountant="paper").notes

Modules: ``gaussian`` (classic and exact Gaussian mechanism), ``rkhs`` (Lemma 6 RKHS norms and
sensitivities), ``composition`` (exact, Wang-Hegde Thm 5, KOV, DRV), ``rdp`` (Renyi DP),
``events`` / ``accountants`` / ``calibration`` (the accounting layer).
"""

from .accountants import ACCOUNTANTS, ExactAccountant, KOVAccountant, PaperAccountant, RDPAccountant
from .api import (
    ACCOUNTANT_CHOICES,
    CalibrationReport,
    EpsilonReport,
    calibrate,
    calibrate_report,
    epsilon,
    epsilon_report,
)
from .calibration import calibrate_sigma
from .errors import CalibrationError, InfeasibleError, PrivcalError, UnsupportedEventError
from .events import (
    ApproxDPEvent,
    ComposedEvent,
    GaussianEvent,
    GaussianProcessEvent,
    SubsampledEvent,
)

__version__ = "0.1.0"

__all__ = [
    "ACCOUNTANTS",
    "ACCOUNTANT_CHOICES",
    "ApproxDPEvent",
    "CalibrationError",
    "CalibrationReport",
    "ComposedEvent",
    "EpsilonReport",
    "ExactAccountant",
    "GaussianEvent",
    "GaussianProcessEvent",
    "InfeasibleError",
    "KOVAccountant",
    "PaperAccountant",
    "PrivcalError",
    "RDPAccountant",
    "SubsampledEvent",
    "UnsupportedEventError",
    "calibrate",
    "calibrate_report",
    "calibrate_sigma",
    "epsilon",
    "epsilon_report",
]
