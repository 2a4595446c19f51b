"""The claims registry: what each paper states, how privcal checks it, and the verdict the check computes.

A :class:`Claim` records one quantitative privacy statement of a paper (id, paper, location, the
statement as printed, how it is checked, the privcal function that implements the literal version,
the corrected statement and its function). Its check is a module-level function
``check(ctx: Context) -> Outcome`` that *computes* the verdict:

* ``holds``: no counterexample on the stated domain (with the method and domain in the evidence);
* ``fails``: a counterexample on the stated domain (the smallest one found, with its evidence);
* ``holds-under-condition``: counterexamples exist, none under the condition stated in the outcome.

:func:`run_claims` runs checks at a budget (``quick``: all claims well under a minute on one
core; ``full``: larger searches and Monte Carlo samples, under 15 minutes). A check that raises is
reported with verdict ``not-run`` and the error (never silently dropped). Randomness is
reproducible: every check draws from ``Context.rng`` / ``Context.find``, seeded from ``seed`` and
the claim id; hypothesis runs with ``database=None`` and an explicit ``random.Random``.
"""

from __future__ import annotations

import contextlib
import random
import time
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

__all__ = [
    "BUDGETS",
    "VERDICTS",
    "Claim",
    "ClaimResult",
    "Context",
    "Outcome",
    "all_claims",
    "claim_ids",
    "get_claim",
    "run_claim",
    "run_claims",
]

BUDGETS = ("quick", "full")
VERDICTS = ("holds", "fails", "holds-under-condition", "not-run")
#: Hypothesis searches run this many times more examples in the full budget.
FULL_FACTOR = 20


@dataclass(frozen=True)
class Outcome:
    """What a check found: the verdict, human-readable evidence, and the numbers behind it."""

    verdict: str
    evidence: str
    counterexample: str | None = None
    condition: str | None = None
    data: dict = field(default_factory=dict)

    def __post_init__(self):
        if self.verdict not in VERDICTS:
            raise ValueError(f"verdict must be one of {VERDICTS}, got {self.verdict!r}")
        if self.verdict == "holds-under-condition" and not self.condition:
            raise ValueError("a holds-under-condition outcome must state its condition")


@dataclass(frozen=True)
class Claim:
    """One claim of a paper and its check (``check`` is a module-level function of a Context)."""

    id: str
    paper: str
    location: str
    statement: str
    method: str
    function: str
    check: Callable = field(repr=False, compare=False)
    corrected: str | None = None
    corrected_function: str | None = None


@dataclass(frozen=True)
class ClaimResult:
    """A claim with the outcome of its check and the wall-clock seconds it took."""

    claim: Claim
    outcome: Outcome
    seconds: float
    budget: str
    seed: int


class Context:
    """Budget, seeds and the reproducible random sources handed to a check."""

    def __init__(self, budget: str, seed: int, claim_id: str):
        self.budget = _budget(budget)
        self.seed = _seed(seed)
        self.claim_id = claim_id
        self._key = zlib.crc32(claim_id.encode("utf-8"))

    @property
    def full(self) -> bool:
        return self.budget == "full"

    def pick(self, quick, full):
        """``quick`` or ``full`` depending on the budget."""
        return full if self.full else quick

    def rng(self, stream: int = 0) -> np.random.Generator:
        """A numpy Generator seeded by (seed, claim id, stream)."""
        return np.random.default_rng(np.random.SeedSequence([self.seed, self._key, int(stream)]))

    def seed_int(self, stream: int = 0) -> int:
        """A non-negative int derived from (seed, claim id, stream), for library functions taking seeds."""
        return int(np.random.SeedSequence([self.seed, self._key, int(stream)]).generate_state(1)[0])

    def find(self, strategy, condition, *, examples: int, stream: int = 0):
        """Smallest example (hypothesis-shrunk) satisfying ``condition``, or None if none was found.

        Runs ``examples`` examples (multiplied by FULL_FACTOR in the full budget) with ``database=None`` and a
        ``random.Random`` seeded from (seed, claim id, stream), so the result is reproducible.
        """
        from hypothesis import HealthCheck, find, settings
        from hypothesis.errors import NoSuchExample

        count = self.examples(examples)
        conf = settings(
            max_examples=count,
            database=None,
            derandomize=False,
            deadline=None,
            suppress_health_check=list(HealthCheck),
        )
        with _without_local_constants():
            try:
                return find(strategy, condition, settings=conf, random=random.Random(self.seed_int(stream)))
            except NoSuchExample:
                return None

    def examples(self, quick: int) -> int:
        """Number of examples a search of base size ``quick`` runs at this budget."""
        return int(quick) * (FULL_FACTOR if self.full else 1)


@contextlib.contextmanager
def _without_local_constants():
    """Hide the numeric literals hypothesis harvests from imported local modules while searching.

    Hypothesis (>= 6.13x) occasionally draws "interesting" constants found in the source of the
    non-installed modules in ``sys.modules``; which modules those are depends on what the process
    imported before (the CLI, a test session) and on the working directory, so the same seed would
    explore different examples. The built-in global constants stay; the cache of permitted
    constants is cleared on entry and exit. A no-op for hypothesis versions without the feature.
    """
    try:
        from hypothesis.internal.conjecture import providers
    except ImportError:  # pragma: no cover
        yield
        return
    original = getattr(providers, "_get_local_constants", None)
    cache = getattr(providers, "CONSTANTS_CACHE", None)
    constants = getattr(providers, "Constants", None)
    if original is None or cache is None or constants is None:  # pragma: no cover
        yield
        return
    empty = constants()
    cache.cache.clear()
    providers._get_local_constants = lambda: empty
    try:
        yield
    finally:
        providers._get_local_constants = original
        cache.cache.clear()


def _budget(budget) -> str:
    if budget not in BUDGETS:
        raise ValueError(f"budget must be one of {BUDGETS}, got {budget!r}")
    return budget


def _seed(seed) -> int:
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or int(seed) < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
    return int(seed)


# ---------------------------------------------------------------------------------------------------
# registration


def claim(registry: list, id: str, *, paper: str, location: str, statement: str, method: str,
          function: str, corrected: str | None = None, corrected_function: str | None = None):
    """Decorator used by the claims modules: register the decorated check under ``id`` in ``registry``."""

    def register(check: Callable) -> Callable:
        registry.append(Claim(
            id=id, paper=paper, location=location, statement=statement, method=method,
            function=function, check=check, corrected=corrected, corrected_function=corrected_function,
        ))
        return check

    return register


def all_claims() -> tuple[Claim, ...]:
    """Every registered claim, in report order (Wang & Hegde, cited theorems, VBKW, GPOPE)."""
    from privcal.verify import claims_cited, claims_gpope, claims_vbkw, claims_wh, claims_wh_thm5

    out = (*claims_wh.CLAIMS, *claims_wh_thm5.CLAIMS, *claims_cited.CLAIMS, *claims_vbkw.CLAIMS,
           *claims_gpope.CLAIMS)
    ids = [c.id for c in out]
    if len(set(ids)) != len(ids):
        raise RuntimeError(f"duplicate claim ids: {sorted({i for i in ids if ids.count(i) > 1})}")
    return out


def claim_ids() -> tuple[str, ...]:
    """Ids of every registered claim, in report order."""
    return tuple(c.id for c in all_claims())


def get_claim(claim_id) -> Claim:
    """The claim with id ``claim_id``; ``ValueError`` naming it if unknown."""
    for c in all_claims():
        if c.id == claim_id:
            return c
    raise ValueError(f"unknown claim id {claim_id!r} (list the ids with: privcal verify --list)")


def run_claim(c: Claim, *, budget: str = "quick", seed: int = 0) -> ClaimResult:
    """Run one claim's check; an exception becomes verdict ``not-run`` with the error as evidence."""
    ctx = Context(budget, seed, c.id)
    start = time.perf_counter()
    try:
        outcome = c.check(ctx)
        if not isinstance(outcome, Outcome):
            raise TypeError(f"check returned {type(outcome).__name__}, expected Outcome")
    except Exception as exc:  # noqa: BLE001 - a check that cannot run is reported, never hidden
        outcome = Outcome("not-run", f"the check could not run: {type(exc).__name__}: {exc}")
    return ClaimResult(c, outcome, time.perf_counter() - start, ctx.budget, ctx.seed)


def run_claims(ids=None, *, budget: str = "quick", seed: int = 0,
               progress: Callable | None = None) -> list[ClaimResult]:
    """Run the checks of ``ids`` (all claims when None or empty), in registry order.

    Unknown ids or budgets raise ``ValueError`` before anything runs. ``progress(result)`` is
    called after each claim if given.
    """
    _budget(budget)
    _seed(seed)
    claims = all_claims()
    if ids:
        known = {c.id for c in claims}
        for i in ids:
            if i not in known:
                get_claim(i)  # raises the ValueError
        wanted = set(ids)
        claims = tuple(c for c in claims if c.id in wanted)
    results = []
    for c in claims:
        r = run_claim(c, budget=budget, seed=seed)
        results.append(r)
        if progress is not None:
            progress(r)
    return results
