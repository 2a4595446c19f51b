"""The claim model: what a claim records, what its check returns, and the context a check runs in.

This module imports no claims module: the claims modules import it (their ``@claim`` decorator and the
:class:`Outcome` they return), and :mod:`privcal.verify.registry` imports the claims modules. The
import graph is therefore model <- claims_* <- registry, without a cycle.

Verdicts (the vocabulary of ``privcal verify`` and docs/claims.md):

* ``holds``: no counterexample on the stated domain (the evidence names the bound checked and where);
* ``fails``: a counterexample on the stated domain (a pinned, deterministic one, so the verdict and the
  document are the same on every machine); when a derived condition under which the statement holds was
  verified, the outcome states it and the corrected statement is that condition;
* ``holds-under-condition``: kept in the vocabulary for statements that are conditional as printed;
* ``not-run``: the check could not run or its own consistency test failed (never a silent pass).

Text that reports print (``evidence``, ``counterexample``, ``condition``, ``corrected``) holds only what is
the same on every machine and library version: the bounds checked, pinned inputs and closed-form values
rounded to a few significant digits. Measured numbers (rounding errors, Monte Carlo estimates, audit
bounds, hypothesis-found examples) go into ``Outcome.data``.
"""

from __future__ import annotations

import contextlib
import random
import zlib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from privcal import _validate as V

__all__ = [
    "BUDGETS",
    "FAILS",
    "FULL_FACTOR",
    "HOLDS",
    "NOT_RUN",
    "UNDER",
    "VERDICTS",
    "Claim",
    "ClaimResult",
    "Context",
    "Outcome",
    "claim",
]

HOLDS = "holds"
FAILS = "fails"
UNDER = "holds-under-condition"
NOT_RUN = "not-run"
#: Every verdict a check may return, in report order.
VERDICTS = (HOLDS, FAILS, UNDER, NOT_RUN)
#: Budgets of ``privcal verify``: quick (all claims well under a minute), full (larger searches).
BUDGETS = ("quick", "full")
#: Hypothesis searches run this many times more examples in the full budget.
FULL_FACTOR = 20


@dataclass(frozen=True)
class Outcome:
    """What a check found: the verdict, stable evidence, and the measured numbers behind it.

    Attributes:
        verdict: one of :data:`VERDICTS`.
        evidence: what was checked and the bound it was checked against (stable text, printed in reports).
        counterexample: a pinned counterexample (stable text), or None.
        condition: a derived condition under which the statement was verified to hold, or None.
        corrected: the corrected statement with the numbers this check computed (rounded), or None; it
            replaces :attr:`Claim.corrected` in reports, so text and computation cannot disagree.
        data: measured, machine- or version-dependent numbers (Monte Carlo estimates, rounding errors,
            audit bounds, hypothesis-found examples); in the JSON report, never in docs/claims.md.
    """

    verdict: str
    evidence: str
    counterexample: str | None = None
    condition: str | None = None
    corrected: str | None = None
    data: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.verdict not in VERDICTS:
            raise ValueError(f"verdict must be one of {VERDICTS}, got {self.verdict!r}")
        if self.verdict == UNDER and not self.condition:
            raise ValueError("a holds-under-condition outcome must state its condition")


@dataclass(frozen=True)
class Claim:
    """One claim of a paper and its check (``check`` is a module-level function of a :class:`Context`).

    Attributes:
        id: stable identifier (docs and users refer to it).
        paper: the paper, as cited in reports.
        location: where in the paper (section, equation, theorem).
        statement: the statement as printed.
        method: how it is checked.
        function: the privcal function implementing the literal (printed) version.
        check: ``check(ctx: Context) -> Outcome``.
        corrected: the corrected statement (static text; a check may refine it in its Outcome), or None.
        corrected_function: the privcal function implementing the corrected version, or None.
    """

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
    """A claim with the outcome of its check and the wall-clock seconds it took.

    Attributes:
        claim: the claim.
        outcome: what its check found.
        seconds: wall-clock seconds of the check (machine-dependent; never in docs/claims.md).
        budget: the budget it ran at (one of :data:`BUDGETS`).
        seed: the seed it ran with (non-negative int).
    """

    claim: Claim
    outcome: Outcome
    seconds: float
    budget: str
    seed: int

    @property
    def corrected(self) -> str | None:
        """The corrected statement to report: the outcome's computed one, else the claim's."""
        return self.outcome.corrected or self.claim.corrected


def check_budget(budget: Any) -> str:
    """``budget`` if it is one of :data:`BUDGETS`, else ``ValueError`` naming it."""
    return V.choice("budget", budget, BUDGETS)


def check_seed(seed: Any) -> int:
    """``seed`` as a non-negative int, else ``ValueError`` naming it."""
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or int(seed) < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
    return int(seed)


class Context:
    """Budget, seeds and the reproducible random sources handed to a check.

    The constructor validates ``budget`` and ``seed``; :func:`privcal.verify.registry.run_claims` validates them
    once and builds each claim's Context without validating again.

    Args:
        budget: one of :data:`BUDGETS`.
        seed: non-negative int seeding every random search and sample of the check.
        claim_id: id of the claim being checked (mixed into every seed).
    """

    def __init__(self, budget: str, seed: int, claim_id: str) -> None:
        self._set(check_budget(budget), check_seed(seed), claim_id)

    @classmethod
    def unchecked(cls, budget: str, seed: int, claim_id: str) -> Context:
        """A Context for a budget and seed the caller validated (the registry: once per run, not per claim); the
        trusted constructor (no check).

        Args:
            budget: one of :data:`BUDGETS` (trusted).
            seed: a non-negative int (trusted).
            claim_id: id of the claim being checked.
        """
        ctx = cls.__new__(cls)
        ctx._set(budget, seed, claim_id)
        return ctx

    def _set(self, budget: str, seed: int, claim_id: str) -> None:
        self.budget = budget
        self.seed = seed
        self.claim_id = claim_id
        self._key = zlib.crc32(claim_id.encode("utf-8"))

    @property
    def full(self) -> bool:
        """True at the full budget."""
        return self.budget == "full"

    def pick(self, quick: Any, full: Any) -> Any:
        """``quick`` or ``full`` depending on the budget.

        Args:
            quick: value at the quick budget.
            full: value at the full budget.

        Returns:
            ``full`` at the full budget, else ``quick``.
        """
        return full if self.full else quick

    def rng(self, stream: int = 0) -> np.random.Generator:
        """A numpy Generator seeded by (seed, claim id, stream).

        Args:
            stream: non-negative int distinguishing independent random sources of one check; default 0.

        Returns:
            a fresh ``numpy.random.Generator``.
        """
        return np.random.default_rng(np.random.SeedSequence([self.seed, self._key, int(stream)]))

    def seed_int(self, stream: int = 0) -> int:
        """A non-negative int derived from (seed, claim id, stream), for library functions taking seeds.

        Args:
            stream: non-negative int distinguishing independent random sources of one check; default 0.

        Returns:
            a non-negative int below 2^32.
        """
        return int(np.random.SeedSequence([self.seed, self._key, int(stream)]).generate_state(1)[0])

    def find(self, strategy: Any, condition: Callable[[Any], bool], *, examples: int, stream: int = 0,
             pinned: Sequence = ()) -> Any:
        """An example satisfying ``condition``: the first pinned one, else one found by hypothesis, else None.

        The ``pinned`` inputs are tried first, in order (as hypothesis's ``@example``): a counterexample that
        matters for a verdict is pinned, so the verdict and the reported example are the same on every
        machine and hypothesis version. Then ``examples`` examples are searched (multiplied by
        :data:`FULL_FACTOR` in the full budget) with ``database=None`` and a ``random.Random`` seeded from
        (seed, claim id, stream); a found example is hypothesis-shrunk and version-dependent, so reports
        keep it in ``Outcome.data``.

        Args:
            strategy: a hypothesis strategy drawing candidate inputs.
            condition: predicate, True for a counterexample.
            examples: number of examples at the quick budget (positive int).
            stream: non-negative int distinguishing independent searches of one check; default 0.
            pinned: explicit inputs tried first; default none.

        Returns:
            the first pinned input satisfying ``condition``, else a hypothesis-found one, else None.
        """
        for example in pinned:
            if condition(example):
                return example
        from hypothesis import HealthCheck, settings
        from hypothesis import find as hypothesis_find
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
                return hypothesis_find(strategy, condition, settings=conf,
                                       random=random.Random(self.seed_int(stream)))
            except NoSuchExample:
                return None

    def examples(self, quick: int) -> int:
        """Number of examples a search of base size ``quick`` runs at this budget.

        Args:
            quick: number of examples at the quick budget (positive int).

        Returns:
            ``quick`` at the quick budget, ``quick * FULL_FACTOR`` at the full budget.
        """
        return int(quick) * (FULL_FACTOR if self.full else 1)


@contextlib.contextmanager
def _without_local_constants() -> Iterator[None]:
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


def claim(registry: list, id: str, **fields: Any) -> Callable[[Callable], Callable]:
    """Decorator used by the claims modules: register the decorated check under ``id`` in ``registry``, as a
    :class:`Claim` of ``fields`` (the defaults live in :class:`Claim`).

    Args:
        registry: the claims module's list of claims (appended to).
        id: stable claim id.
        fields: the other fields of :class:`Claim` except ``check`` (the decorated function): ``paper``,
            ``location``, ``statement``, ``method``, ``function`` (each required), ``corrected`` and
            ``corrected_function`` (default None).

    Returns:
        the decorator (it returns the check unchanged).
    """
    if "check" in fields:
        raise TypeError("claim() got an unexpected keyword argument 'check' (the decorated function is the check)")

    def register(check: Callable) -> Callable:
        registry.append(Claim(id=id, check=check, **fields))
        return check

    return register
