"""Machine-checked claims of the papers privcal implements, and an empirical privacy auditor.

* :func:`run_claims` runs the claims registry (``privcal verify``): every quantitative privacy
  statement of Wang & Hegde 2019, Vietri et al. 2020 and the GPOPE paper, with its check and the
  verdict the check computes (holds / fails / holds-under-condition; not-run if it could not run).
* :func:`privcal.verify.audit.audit` gives a statistically valid lower bound on a mechanism's
  delta(epsilon) from samples and tests an accountant's claim (module :mod:`privcal.verify.audit`;
  the package attribute ``audit`` is that module).
* :mod:`privcal.verify.report` renders results and regenerates docs/claims.md.
"""

from privcal.verify.model import BUDGETS, VERDICTS, Claim, ClaimResult, Outcome
from privcal.verify.registry import all_claims, claim_ids, get_claim, run_claim, run_claims

__all__ = [
    "AuditResult",
    "AuditSettings",
    "BUDGETS",
    "Claim",
    "ClaimResult",
    "GaussianMechanism",
    "GaussianProcessMechanism",
    "Outcome",
    "SubsampledGaussianMechanism",
    "VERDICTS",
    "all_claims",
    "claim_ids",
    "get_claim",
    "run_claim",
    "run_claims",
]

_AUDIT_NAMES = ("AuditResult", "AuditSettings", "GaussianMechanism", "GaussianProcessMechanism", "SubsampledGaussianMechanism")


def __getattr__(name: str):
    # PEP 562: the auditor (scipy.stats) is imported on first use, so `privcal --help` stays fast
    if name in _AUDIT_NAMES or name == "audit":
        import importlib

        module = importlib.import_module("privcal.verify.audit")
        return module if name == "audit" else getattr(module, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
