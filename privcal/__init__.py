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
* ``privcal.analysis.noise`` (exact GP noise paths), ``privcal.verify`` (the claims registry), ``privcal.rl``
  (environments, agents, experiments), ``privcal.cli``.

The former flat paths ``privcal.events``, ``privcal.accountants``, ``privcal.calibration``,
``privcal.api``, ``privcal.dpq``, ``privcal.gpope`` and ``privcal.table``, and the flat paths of the RL layer
(``privcal.rl.dpq_agent``, ``privcal.rl.experiments_pucb``, ...: ``privcal.rl`` is one subpackage per
algorithm family) still import, with a DeprecationWarning (removed in 0.3.0): they are the same module
objects as their new homes.
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
    PricingOptions,
    SampledWithoutReplacementEvent,
    SelfComposedEvent,
    from_dp_accounting,
    PaperAccountant,
    RDPAccountant,
    Releases,
    Run,
    SubsampledEvent,
    EpochsEvent,
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

# The former module paths (deprecated since 0.2.0, removed in 0.3.0: docs/deprecation.md) name the moved
# modules themselves, not copies, so ``import privcal.dpq`` / ``from privcal.events import GaussianEvent`` /
# ``from privcal.rl import dpq_agent`` / monkeypatching keep working, with a DeprecationWarning naming the new
# home. This is their one shim: the table below, an import finder for ``import <old>`` (a moved package's
# submodules too: ``privcal.rl.domains.chain``) and a module ``__getattr__`` for ``privcal.<old>``.
_MOVED = {
    # 0.2.0: the accounting layer and the papers' calibrators
    "events": "privcal.accounting.events", "accountants": "privcal.accounting.accountants",
    "calibration": "privcal.accounting.calibration", "api": "privcal.accounting.api",
    "dpq": "privcal.calibrators.dpq", "gpope": "privcal.calibrators.gpope", "table": "privcal.calibrators.table",
    # 0.2.0: privcal.rl as one subpackage per algorithm family
    "rl.dpq_agent": "privcal.rl.dpq.agent", "rl.dpq_replay": "privcal.rl.dpq.replay",
    "rl.dpq_select": "privcal.rl.dpq.select", "rl.fqi_dpsgd": "privcal.rl.dpq.fqi_dpsgd",
    "rl.learners": "privcal.rl.dpq.learners", "rl.baselines": "privcal.rl.dpq.baselines",
    "rl.experiments_dpq": "privcal.rl.dpq.experiments",
    "rl.gpope_agent": "privcal.rl.gpope.agent", "rl.lstd": "privcal.rl.gpope.lstd",
    "rl.mspbe": "privcal.rl.gpope.mspbe", "rl.domains": "privcal.rl.gpope.domains",
    "rl.experiments_gpope": "privcal.rl.gpope.experiments",
    "rl.tabular": "privcal.rl.pucb.tabular", "rl.experiments_pucb": "privcal.rl.pucb.experiments",
    "rl.plots_pucb": "privcal.rl.pucb.plots", "rl.checks_pucb": "privcal.rl.pucb.checks",
}
# the release that removes a former path (0.3.0 unless listed here)
_REMOVED_IN = {}
# 0.3.0: the analysis layer in one folder (warns since 0.3.0, removed in 0.4.0)
for _name in ("gaussian", "rdp", "subsampling", "group_subsampling", "kov", "composition", "rkhs", "supremum",
              "counter", "noise"):
    _MOVED[_name] = f"privcal.analysis.{_name}"
    _REMOVED_IN[_name] = "0.4.0"
del _name


def _moved_home(fullname: str):
    """The new home of a former module path ``privcal.<old>`` (or of a submodule of a moved package), or None."""
    prefix, _, old = fullname.partition(".")
    if prefix != __name__:
        return None
    if old in _MOVED:
        return _MOVED[old]
    for moved, home in _MOVED.items():
        if old.startswith(moved + "."):
            return home + old[len(moved):]
    return None


def _warn_moved(fullname: str, stacklevel: int) -> None:
    import warnings

    old = fullname.partition(".")[2]
    removed = next((version for moved, version in _REMOVED_IN.items() if old == moved or old.startswith(moved + ".")),
                   "0.3.0")
    warnings.warn(f"{fullname} is deprecated: import {_moved_home(fullname)} (the same module); removed in {removed}",
                  DeprecationWarning, stacklevel=stacklevel)


class _MovedModules:
    """Import finder and loader of the former paths: the module found is the one at its new home."""

    @staticmethod
    def find_spec(fullname, path=None, target=None):
        if not fullname.startswith(__name__ + ".") or _moved_home(fullname) is None:
            return None
        import importlib.util

        return importlib.util.spec_from_loader(fullname, _MovedModules)

    _specs: dict = {}

    @staticmethod
    def create_module(spec):
        import importlib

        _warn_moved(spec.name, stacklevel=3)  # the import machinery's own frames are skipped by warnings
        module = importlib.import_module(_moved_home(spec.name))
        _MovedModules._specs[module.__name__] = module.__spec__  # the machinery overwrites it
        return module

    @staticmethod
    def exec_module(module):
        # already executed at its new home: only its own spec is put back
        module.__spec__ = _MovedModules._specs.pop(module.__name__, module.__spec__)


# first in the path: a moved package's own __path__ must not give its submodules a second module object
if not any(f is _MovedModules for f in _sys.meta_path):
    _sys.meta_path.insert(0, _MovedModules)


def __getattr__(name: str):
    if name in _MOVED:
        import importlib

        _warn_moved(f"{__name__}.{name}", stacklevel=3)
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
    "PricingOptions",
    "PrivcalError",
    "RDPAccountant",
    "Releases",
    "Run",
    "SampledWithoutReplacementEvent",
    "SelfComposedEvent",
    "SubsampledEvent",
    "EpochsEvent",
    "UnsupportedEventError",
    "calibrate",
    "calibrate_report",
    "epsilon",
    "epsilon_of",
    "epsilon_report",
    "from_dp_accounting",
    "search_sigma",
]
