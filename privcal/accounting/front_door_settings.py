"""What the front door prices and how: :class:`Run` (the releases, as a function of sigma) and
:class:`PricingOptions` (the accountant and the PLD's knobs).

Both are frozen dataclasses holding the values as the caller gave them; their defaults live here only.
:func:`privcal.epsilon`, :func:`privcal.calibrate` and their reports take ``run=`` and ``options=`` or the
fields of either as keywords (``privcal.epsilon(1.1, 1e-5, steps=1000, sample_rate=0.01)``);
:func:`privcal.epsilon_of` takes ``options=`` or its fields. The values are checked where they are used, each
once and in a fixed order (:meth:`Run.releases`, :meth:`PricingOptions.pld`; the accountant's name when the
accountants are resolved), so that a bad argument is named as in the keyword call.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Optional, Union

from .. import _validate as V
from .events import Neighbouring, Releases, Sampling

__all__ = ["Run", "PricingOptions", "settings_for", "options_for", "pld_options", "keyword_docs"]

#: one mebibyte in bytes: the least memory cap the front door takes (:func:`pld_options`)
MIB = 2**20


@dataclass(frozen=True)
class Run:
    """What ran: ``steps`` releases of a Gaussian (or Gaussian-process) mechanism of sensitivity
    ``sensitivity``, each optionally on a random subsample; the noise is the front door's ``sigma``. Not
    checked when built: :meth:`releases` checks it.

    Attributes:
        sensitivity: L2 (or RKHS-norm) sensitivity of one release under ``neighbouring``, in (0, inf);
            default 1. With subsampling: the sensitivity of one release on the subsample.
        steps: number of releases (adaptive composition), an int >= 1; default 1.
        sample_rate: each release runs on a random subsample: Poisson inclusion probability, or batch
            size / dataset size without replacement; in (0, 1]. Default None: no subsampling.
        sampling: "poisson" (default) or "without_replacement" (fixed-size batches).
        neighbouring: the neighbouring relation, a :class:`~privcal.accounting.events.Neighbouring` or
            "add_remove" / "replace_one" / "zero_out"; default: add/remove for Poisson, replace-one
            without replacement (then a clipped contribution of norm h has sensitivity 2h; left unstated,
            it is implied with a NeighbouringWarning).
    """

    sensitivity: float = 1.0
    steps: int = 1
    sample_rate: Optional[float] = None
    sampling: Sampling = "poisson"
    neighbouring: Optional[Union[Neighbouring, str]] = None

    def releases(self) -> Releases:
        """The validated :class:`~privcal.accounting.events.Releases` of this run: each rule checked once, naming
        the field (``ValueError``); ``sampling`` and ``neighbouring`` only with a ``sample_rate`` (as on the
        command line: plain releases are priced alike under every relation, their sensitivity read under the
        caller's)."""
        sample_rate, sampling, neighbouring = self.sample_rate, self.sampling, self.neighbouring
        if sample_rate is None and (sampling != "poisson" or neighbouring is not None):
            given = " and ".join(n for n, v in (("sampling", sampling != "poisson"), ("neighbouring", neighbouring))
                                 if v)
            raise ValueError(f"{given} appl{'y' if ' and ' in given else 'ies'} only with sample_rate (no "
                             "subsampling without it; a plain release's sensitivity is read under the relation you "
                             "state it in)")
        return Releases(self.sensitivity, self.steps, 1.0 if sample_rate is None else sample_rate, sampling,
                        neighbouring)


@dataclass(frozen=True)
class PricingOptions:
    """How a run or a history is priced: which accountant answers and the PLD's accuracy and memory cap. Not
    checked when built: :meth:`pld` checks the PLD's knobs, the accountant's name is checked when the
    accountants are resolved (``privcal.accounting.selection.resolve_accountants``).

    Attributes:
        accountant: "best" (default: the smallest certified upper bound among the valid accountants
            that support the setting: the exact profile for plain releases, else the PLD's, with RDP
            priced only where the PLD gives no finite answer), "exact", "paper", "kov", "rdp", "pld" or
            "basic".
        pld_accuracy: requested relative width of the PLD's epsilon bracket, in (0, 1); default None
            (the PLD accountant's default, 1e-3).
        memory_limit: cap of the memory of one PLD evaluation, in bytes, in [2^20, inf) (the command line's
            --memory-limit is in MiB); default None (256 MiB). A grid above it makes the PLD coarsen or refuse;
            "best" then answers with another valid accountant and says so in the notes.
    """

    accountant: str = "best"
    pld_accuracy: Optional[float] = None
    memory_limit: Optional[float] = None

    def pld(self) -> Optional[dict]:
        """The PLD accountant's options set here, validated (:func:`pld_options`), or None."""
        return pld_options(self.pld_accuracy, self.memory_limit)


_RUN_FIELDS = frozenset(f.name for f in dataclasses.fields(Run))


def _typed(where: str, name: str, value, cls: type):
    if value is not None and not isinstance(value, cls):
        raise TypeError(f"{where}() {name} must be a {cls.__name__}, got {value!r}")
    return value


def settings_for(where: str, run: Optional[Run], options: Optional[PricingOptions],
                 keywords: dict) -> tuple[Run, PricingOptions]:
    """The :class:`Run` and :class:`PricingOptions` of a front-door call: ``run`` and ``options`` (None: the
    defaults) with ``keywords`` replacing their fields. A keyword that is a field of neither raises the
    ``TypeError`` Python raises for an unexpected keyword argument of ``where``; ``run`` or ``options`` of
    another type raises ``TypeError``. The values are not checked here (:meth:`Run.releases`,
    :meth:`PricingOptions.pld`).

    Args:
        where: the function's name, for the messages.
        run: the run given, or None.
        options: the options given, or None.
        keywords: the call's other keyword arguments.
    """
    _typed(where, "run", run, Run)
    _typed(where, "options", options, PricingOptions)
    own = {k: v for k, v in keywords.items() if k in _RUN_FIELDS}
    rest = {k: v for k, v in keywords.items() if k not in _RUN_FIELDS}
    return (V.settings_with(where, Run, run, own), V.settings_with(where, PricingOptions, options, rest))


def options_for(where: str, options: Optional[PricingOptions], keywords: dict) -> PricingOptions:
    """The :class:`PricingOptions` of a call pricing a history (``privcal.epsilon_of``): ``options`` (None: the
    defaults) with ``keywords`` replacing its fields; another keyword raises ``TypeError`` as Python would.

    Args:
        where: the function's name, for the messages.
        options: the options given, or None.
        keywords: the call's other keyword arguments.
    """
    return V.settings_with(where, PricingOptions, _typed(where, "options", options, PricingOptions), keywords)


def pld_options(pld_accuracy: Optional[float], memory_limit: Optional[float]) -> Optional[dict]:
    """The PLD accountant's options the caller set (validated), or None.

    Args:
        pld_accuracy: requested relative width of the PLD's epsilon bracket, in (0, 1), or None.
        memory_limit: cap of the memory of one PLD evaluation, in bytes, at least 2^20 (1 MiB), or None.
    """
    out = {}
    if pld_accuracy is not None:
        out["accuracy"] = V.open_unit("pld_accuracy", pld_accuracy)
    if memory_limit is not None:
        out["memory_limit"] = V.positive("memory_limit", memory_limit)
        if out["memory_limit"] < MIB:  # bytes here, MiB on the command line: a MiB count is refused, not a fallback
            raise ValueError(f"memory_limit is in bytes and must be at least 1 MiB ({MIB}), got {memory_limit!r} "
                             f"(the command line's --memory-limit is in MiB: {memory_limit!r} MiB is "
                             f"memory_limit={float(memory_limit) * MIB:.0f})")
    return out or None


keyword_docs = V.keyword_docs  # (the ground floor holds it: the rl layer uses it too)
