"""The claims registry: every claim of the claims modules, in report order, and the functions that run them.

A :class:`~privcal.verify.model.Claim` records one quantitative privacy statement of a paper; its check
``check(ctx: Context) -> Outcome`` *computes* the verdict (see :mod:`privcal.verify.model` for the
vocabulary). :func:`run_claims` runs checks at a budget (``quick``: all claims well under a minute on
one core; ``full``: larger searches and Monte Carlo samples, under 15 minutes). A check that raises is
reported with verdict ``not-run`` and the error (never silently dropped). Randomness is reproducible:
every check draws from ``Context.rng`` / ``Context.find``, seeded from ``seed`` and the claim id;
hypothesis runs with ``database=None`` and an explicit ``random.Random``.

Import graph: this module imports the claims modules (on first use, so ``privcal --help`` stays fast),
which import :mod:`privcal.verify.model` and helpers, never this module. The model's names are re-exported here for old imports.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable

from privcal.verify.model import (
    BUDGETS,
    FULL_FACTOR,
    NOT_RUN,
    VERDICTS,
    Claim,
    ClaimResult,
    Context,
    Outcome,
    check_budget,
    check_seed,
    claim,
)

__all__ = [
    "BUDGETS",
    "FULL_FACTOR",
    "VERDICTS",
    "Claim",
    "ClaimResult",
    "Context",
    "Outcome",
    "all_claims",
    "claim",
    "claim_ids",
    "get_claim",
    "run_claim",
    "run_claims",
]


def _modules() -> tuple:
    # imported on first use (sympy, mpmath, hypothesis), so `privcal --help` stays fast
    from privcal.verify import claims_cited, claims_dpq, claims_gpope, claims_vbkw, claims_wh, claims_wh_thm5

    return (claims_wh, claims_wh_thm5, claims_dpq, claims_cited, claims_vbkw, claims_gpope)


def all_claims() -> tuple[Claim, ...]:
    """Every registered claim, in report order (Wang & Hegde, DP Q-learning as run, cited theorems, VBKW, GPOPE).

    Returns:
        the claims; ``RuntimeError`` if two share an id.
    """
    out = tuple(c for module in _modules() for c in module.CLAIMS)
    ids = [c.id for c in out]
    if len(set(ids)) != len(ids):
        raise RuntimeError(f"duplicate claim ids: {sorted({i for i in ids if ids.count(i) > 1})}")
    return out


def claim_ids() -> tuple[str, ...]:
    """Ids of every registered claim, in report order.

    Returns:
        the ids.
    """
    return tuple(c.id for c in all_claims())


def get_claim(claim_id: str) -> Claim:
    """The claim with id ``claim_id``.

    Args:
        claim_id: a registered id (``privcal verify --list``).

    Returns:
        the claim.

    Raises:
        ValueError: the id is unknown.
    """
    for c in all_claims():
        if c.id == claim_id:
            return c
    raise ValueError(f"unknown claim id {claim_id!r} (list the ids with: privcal verify --list)")


def run_claim(c: Claim, *, budget: str = "quick", seed: int = 0) -> ClaimResult:
    """Run one claim's check; an exception becomes verdict ``not-run`` with the error as evidence.

    Args:
        c: the claim.
        budget: one of ``BUDGETS``; default "quick".
        seed: non-negative int seeding every random search and sample; default 0.

    Returns:
        the claim with its outcome and wall-clock seconds.

    Raises:
        ValueError: ``budget`` or ``seed`` is invalid.
    """
    return _run_claim(c, check_budget(budget), check_seed(seed))


def _run_claim(c: Claim, budget: str, seed: int) -> ClaimResult:
    """run_claim for a validated budget and seed."""
    ctx = Context.unchecked(budget, seed, c.id)
    start = time.perf_counter()
    try:
        outcome = c.check(ctx)
        if not isinstance(outcome, Outcome):
            raise TypeError(f"check returned {type(outcome).__name__}, expected Outcome")
    except Exception as exc:  # noqa: BLE001 - a check that cannot run is reported, never hidden
        outcome = Outcome(NOT_RUN, f"the check could not run: {type(exc).__name__}: {exc}")
    return ClaimResult(c, outcome, time.perf_counter() - start, budget, seed)


def run_claims(ids: Iterable[str] | None = None, *, budget: str = "quick", seed: int = 0,
               progress: Callable[[ClaimResult], None] | None = None) -> list[ClaimResult]:
    """Run the checks of ``ids`` (all claims when None or empty), in registry order.

    Args:
        ids: claim ids to run, or None / empty for all; default None.
        budget: one of ``BUDGETS``; default "quick".
        seed: non-negative int seeding every random search and sample; default 0.
        progress: called with each result after its claim ran, or None (default).

    Returns:
        one result per claim, in registry order.

    Raises:
        ValueError: an id, the budget or the seed is invalid (before anything runs).
    """
    budget = check_budget(budget)
    seed = check_seed(seed)
    claims = all_claims()
    wanted = list(ids or ())
    if wanted:
        known = {c.id for c in claims}
        for i in wanted:
            if i not in known:
                get_claim(i)  # raises the ValueError
        claims = tuple(c for c in claims if c.id in set(wanted))
    results = []
    for c in claims:
        r = _run_claim(c, budget, seed)
        results.append(r)
        if progress is not None:
            progress(r)
    return results
