"""Conservative calibration of arbitrary events: the smallest sigma whose *reported* epsilon meets a target.

Calibrating ``Releases`` (steps of a Gaussian mechanism, optionally subsampled) is the accountants' own
job (:meth:`privcal.accounting.accountants.Accountant.sigma_for`, with each accountant's fast path).
:func:`search_sigma` is the generic root finder for any other family of events, given as a function
``make_event(sigma)``: it brackets sigma on a log scale, runs Brent's method on log sigma, bisects the
bracket down to a relative width ``rtol`` and returns the bracket's *feasible* end, after checking that
the accountant indeed reports epsilon <= target there. A sigma returned is therefore always one the
accountant certifies; it exceeds the true minimum by at most a factor (1 + rtol).
"""

from __future__ import annotations

import warnings

from typing import Callable, Union

from .. import _validate as V
from . import search as _search
from .protocol import Accountant
from .registry import ACCOUNTANTS
from .events import Event

__all__ = ["search_sigma", "accountant_factory"]

AccountantSpec = Union[str, type, Callable[[], Accountant]]


def accountant_factory(accountant: AccountantSpec) -> Callable[[], Accountant]:
    """A zero-argument callable making fresh accountants.

    Args:
        accountant: a name of :data:`privcal.ACCOUNTANTS` ("exact", "paper", "kov", "rdp", "pld", "basic"), an
            Accountant class, or a zero-argument factory.
    """
    if isinstance(accountant, str):
        V.choice("accountant", accountant, tuple(ACCOUNTANTS))
        return ACCOUNTANTS[accountant]
    if callable(accountant):
        return accountant
    raise ValueError(f"accountant must be a name, an Accountant class or a factory, got {accountant!r}")


def search_sigma(
    make_event: Callable[[float], Event],
    target_epsilon: float,
    target_delta: float,
    accountant: AccountantSpec = "exact",
    *,
    sigma_hint: float = 1.0,
    rtol: float = 1e-9,
) -> float:
    """Smallest sigma (to relative ``rtol``) with accountant(make_event(sigma)).epsilon(delta) <= target.

    Args:
        make_event: builds the event for a candidate sigma; epsilon must be non-increasing in sigma
            (true of every accountant here).
        target_epsilon: in (0, inf).
        target_delta: in (0, 1).
        accountant: a name of :data:`privcal.ACCOUNTANTS`, ``"best"`` (at each candidate sigma, the smallest
            certified upper bound among the valid accountants that price the event, as
            :func:`privcal.epsilon_of`; a minimum of non-increasing functions of sigma is non-increasing, so
            the search applies), an Accountant class or a zero-argument factory; default "exact".
        sigma_hint: where the search starts, in (0, inf); default 1.
        rtol: relative precision of the answer, in [1e-15, 0.5]; default 1e-9.

    Returns:
        sigma, checked: the accountant reports epsilon <= target_epsilon at it.

    Raises:
        InfeasibleError: even sigma = 1e12 does not reach the target.
        CalibrationError: the final check fails.
    """
    target_epsilon = V.positive("target_epsilon", target_epsilon)
    target_delta = V.open_unit("target_delta", target_delta)
    sigma_hint = V.positive("sigma_hint", sigma_hint)
    rtol = V.in_closed("rtol", rtol, 1e-15, 0.5)
    if isinstance(accountant, str):
        V.choice("accountant", accountant, ("best", *ACCOUNTANTS))
    if accountant == "best":
        from .api import epsilon_of  # the front door builds on this module: imported when asked for

        def epsilon_at(sigma: float) -> float:
            return epsilon_of(make_event(sigma), target_delta)
    else:
        factory = accountant_factory(accountant)

        def epsilon_at(sigma: float) -> float:
            return factory().compose(make_event(sigma)).epsilon(target_delta)
    return _search.search(epsilon_at, target_epsilon, target_delta, sigma_hint=sigma_hint, rtol=rtol)


def calibrate_sigma(*args, **kwargs) -> float:
    """Former name of :func:`search_sigma` (deprecated since 0.2.0, removed in 0.3.0: it was easy to confuse
    with ``privcal.calibrate``)."""
    warnings.warn("calibrate_sigma is deprecated: use privcal.search_sigma (same arguments); removed in 0.3.0",
                  DeprecationWarning, stacklevel=2)
    return search_sigma(*args, **kwargs)


def calibrate_sigma_rdp(make_event, target_epsilon, target_delta, accountant=None, *, sigma_hint=1.0,
                        rtol=1e-9, window=None) -> float:
    """Former windowed RDP search on an arbitrary ``make_event``; now :func:`search_sigma` with an RDP
    accountant (the windowed fast path lives in ``RDPAccountant.sigma_for``). Deprecated since 0.2.0,
    removed in 0.3.0."""
    from .accountants import RDPAccountant

    warnings.warn("calibrate_sigma_rdp is deprecated: use privcal.search_sigma(make_event, ..., "
                  "privcal.RDPAccountant), or RDPAccountant().sigma_for(Releases(...), ...) for steps of a "
                  "Gaussian; removed in 0.3.0", DeprecationWarning, stacklevel=2)

    return search_sigma(make_event, target_epsilon, target_delta, accountant or RDPAccountant,
                        sigma_hint=sigma_hint, rtol=rtol)
