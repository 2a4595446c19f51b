"""privcal: privacy accounting and noise calibration for differentially private RL.

The front door::

    import privcal
    privcal.calibrate(1.0, 1e-5, steps=100)           # sigma for (1, 1e-5)-DP after 100 releases
    privcal.epsilon(10.0, 1e-5, steps=100)            # epsilon of 100 releases at sigma = 10
    privcal.calibrate_report(1.0, 1e-5, steps=100, accountant="paper").notes

Layers (imports flow downward only):

* the analysis modules, flat public import paths, one formula per function: ``gaussian`` (classic and
  exact Gaussian mechanism), ``rkhs`` (Lemma 6 RKHS norms and sensitivities), ``composition`` (exact,
  Wang-Hegde Thm 5), ``kov`` (Kairouz-Oh-Viswanath, DRV), ``rdp`` (Renyi DP), ``subsampling``,
  ``supremum`` (Lemma 8), ``counter`` (binary mechanism);
* ``privcal.accounting``: events, accountants, calibration and this front door;
* ``privcal.calibrators``: the papers' end-to-end calibrations (``dpq``, ``gpope``) and ``table``;
* ``privcal.noise`` (exact GP noise paths), ``privcal.verify`` (the claims registry), ``privcal.rl``
  (environments, agents, experiments), ``privcal.cli``.

The former flat paths ``privcal.events``, ``privcal.accountants``, ``privcal.calibration``,
``privcal.api``, ``privcal.dpq``, ``privcal.gpope`` and ``privcal.table`` still import, with a
DeprecationWarning (removed in 0.3.0): they are the same module objects as their new homes.
"""

import sys as _sys


def _run_as_main() -> bool:
    """Whether this interpreter runs ``python -m privcal`` (its command line, not any later import)."""
    argv = list(getattr(_sys, "orig_argv", ()))
    return any(a == "-m" and argv[i + 1: i + 2] == ["privcal"] for i, a in enumerate(argv))


if _run_as_main():  # Ctrl-C during the heavy imports below: one line and exit 130 (privcal_launcher)
    import privcal_launcher as _launcher

    _launcher.install()

from . import accounting as accounting
from . import calibrators as calibrators
from .accounting import accountants as _accountants
from .accounting import api as _api
from .accounting import calibration as _calibration
from .accounting import events as _events
from .accounting import (
    ACCOUNTANT_CHOICES,
    ACCOUNTANTS,
    ApproxDPEvent,
    CalibrationReport,
    ComposedEvent,
    EpsilonReport,
    ExactAccountant,
    GaussianEvent,
    GaussianProcessEvent,
    LaplaceEvent,
    KOVAccountant,
    Neighbouring,
    NeighbouringWarning,
    PoissonSampledEvent,
    SampledWithoutReplacementEvent,
    SelfComposedEvent,
    from_dp_accounting,
    PaperAccountant,
    RDPAccountant,
    Releases,
    SubsampledEvent,
    calibrate,
    calibrate_report,
    epsilon,
    epsilon_of,
    epsilon_report,
    search_sigma,
)
from .accounting.calibration import calibrate_sigma  # former name of search_sigma, kept importable
from .calibrators import dpq as _dpq
from .calibrators import gpope as _gpope
from .calibrators import table as _table
from .errors import CalibrationError, InfeasibleError, PrivcalError, UnsupportedEventError
from .pld import PLDAccountant

# The former flat import paths (deprecated since 0.2.0, removed in 0.3.0: docs/deprecation.md) name the moved
# modules themselves, not copies, so ``import privcal.dpq`` / ``from privcal.events import GaussianEvent`` /
# monkeypatching keep working, with a DeprecationWarning naming the new home. This is their one shim: an
# import finder for ``import privcal.<old>`` and a module ``__getattr__`` for ``privcal.<old>``.
_MOVED = {
    "events": "privcal.accounting.events", "accountants": "privcal.accounting.accountants",
    "calibration": "privcal.accounting.calibration", "api": "privcal.accounting.api",
    "dpq": "privcal.calibrators.dpq", "gpope": "privcal.calibrators.gpope", "table": "privcal.calibrators.table",
}


def _warn_moved(old: str, stacklevel: int) -> None:
    import warnings

    warnings.warn(f"privcal.{old} is deprecated: import {_MOVED[old]} (the same module); removed in 0.3.0",
                  DeprecationWarning, stacklevel=stacklevel)


class _MovedModules:
    """Import finder and loader of the former flat paths: the module found is the one at its new home."""

    @staticmethod
    def find_spec(fullname, path=None, target=None):
        prefix, _, old = fullname.partition(".")
        if prefix != __name__ or old not in _MOVED:
            return None
        import importlib.util

        return importlib.util.spec_from_loader(fullname, _MovedModules)

    _specs: dict = {}

    @staticmethod
    def create_module(spec):
        import importlib

        old = spec.name.partition(".")[2]
        _warn_moved(old, stacklevel=3)  # the import machinery's own frames are skipped by warnings
        module = importlib.import_module(_MOVED[old])
        _MovedModules._specs[module.__name__] = module.__spec__  # the machinery overwrites it
        return module

    @staticmethod
    def exec_module(module):
        # already executed at its new home: only its own spec is put back
        module.__spec__ = _MovedModules._specs.pop(module.__name__, module.__spec__)


if not any(f is _MovedModules for f in _sys.meta_path):
    _sys.meta_path.append(_MovedModules)


def __getattr__(name: str):
    if name in _MOVED:
        import importlib

        _warn_moved(name, stacklevel=3)
        return importlib.import_module(_MOVED[name])
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


from ._version import __version__  # the installed distribution's version (pyproject.toml)

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
    "LaplaceEvent",
    "InfeasibleError",
    "KOVAccountant",
    "Neighbouring",
    "NeighbouringWarning",
    "PaperAccountant",
    "PLDAccountant",
    "PoissonSampledEvent",
    "PrivcalError",
    "RDPAccountant",
    "Releases",
    "SampledWithoutReplacementEvent",
    "SelfComposedEvent",
    "SubsampledEvent",
    "UnsupportedEventError",
    "calibrate",
    "calibrate_report",
    "epsilon",
    "epsilon_of",
    "epsilon_report",
    "from_dp_accounting",
    "search_sigma",
]
