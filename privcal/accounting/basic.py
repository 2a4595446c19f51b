"""A fallback accountant for pure and approximate DP releases: basic composition, KOV, RDP for the rest.

:class:`BasicAccountant` ("basic") prices histories of Laplace releases and (epsilon, delta)-DP events,
possibly next to Gaussian and subsampled Gaussian releases:

* a Laplace release with scale b and L1 sensitivity D is pure (D / b)-DP (Dwork & Roth 2014, Thm 3.6);
* (epsilon_i, delta_i)-DP releases compose adaptively to (sum epsilon_i, sum delta_i)-DP (basic
  composition, Dwork & Roth 2014, Thm 3.16; Dwork, Kenthapadi et al. 2006 for the adaptive case);
  so a pure eps0-DP release costs eps0 at delta 0, at every delta;
* when the history is k repetitions of one (eps0, delta0) release alone, the optimal homogeneous
  composition of Kairouz, Oh & Viswanath 2015 (Thm 3.3, ``privcal.analysis.kov.kov_epsilon``) is also
  valid, and the smaller of the two is reported;
* the Gaussian and subsampled Gaussian releases of the history are priced together by Renyi DP
  (:class:`~privcal.accounting.accountants.RDPAccountant`) at the delta left over, delta - sum delta_i,
  and their epsilon is added (basic composition of the two blocks, which holds under adaptivity).

Every number is an upper bound (``inf`` when delta is below sum delta_i). It is the answer of ``best``
only when the PLD accountant, which prices the same releases tightly, cannot certify a finite epsilon
(delta below its round-off bound, a grid beyond the memory cap): a pure eps-DP history then still
answers sum eps instead of ``inf``.
"""

from __future__ import annotations

import math
from typing import Optional, Union

from ..analysis import kov
from ..errors import InfeasibleError
from .accountants import RDPAccountant
from .protocol import SUPPORT, Accountant
from .events import ApproxDPEvent, Event, LaplaceEvent, Neighbouring

__all__ = ["BasicAccountant"]

#: relative slack on sums of deltas (float64 sums of at most 2^50 terms err by far less): the delta
#: left to the RDP block is shrunk by it, so rounding can never hand RDP more delta than is left
_DELTA_SLACK = 1e-12


def _pure_or_approx(event: Event) -> bool:
    return isinstance(event, (LaplaceEvent, ApproxDPEvent))


def _step(event: Event) -> tuple[float, float]:
    """(epsilon0, delta0) of one Laplace release or (epsilon, delta)-DP event."""
    if isinstance(event, LaplaceEvent):
        return event.sensitivity / event.scale, 0.0  # Dwork & Roth 2014, Thm 3.6
    return event.epsilon, event.delta


class BasicAccountant(Accountant):
    """Basic composition of pure / approximate DP releases (KOV for one kind of release alone), plus Renyi
    DP for the Gaussian releases of the same history (a history of those alone: exactly RDP's answer, so
    "best" does not price both); see the module docstring for the bounds and their sources.

    Args:
        neighbouring: the one neighbouring relation of everything this accountant composes ("add_remove",
            "replace_one", "zero_out" or a :class:`~privcal.accounting.events.Neighbouring`); default None
            (the relation the releases state; ``privcal.accounting.relations``).
    """

    name = "basic"
    guarantee = "upper bound on epsilon (basic composition of pure / approximate DP; Renyi DP for Gaussians)"

    def __init__(self, *, neighbouring: Optional[Union[Neighbouring, str]] = None):
        super().__init__(neighbouring)
        self._steps: dict[tuple[float, float], int] = {}  # (epsilon0, delta0) -> repetitions
        self._rdp: Optional[RDPAccountant] = None

    def _supports_leaf(self, event: Event) -> bool:
        return SUPPORT["basic"](event)

    def _add(self, event: Event, count: int) -> None:
        if _pure_or_approx(event):
            key = _step(event)
            self._steps[key] = self._steps.get(key, 0) + count
            return
        if self._rdp is None:  # priced under this ledger's relation (its releases are a part of the ledger's)
            self._rdp = RDPAccountant(neighbouring=self._relation)
        self._rdp.compose_unchecked(event, count)

    def _spent(self) -> tuple[float, float]:
        """(sum of epsilon0, sum of delta0) over the pure / approximate DP releases."""
        eps = math.fsum(k * e for (e, _), k in self._steps.items())
        dlt = math.fsum(k * d for (_, d), k in self._steps.items())
        return eps, dlt

    def epsilon_unchecked(self, delta: float) -> float:
        """Upper bound on epsilon of the ledger at ``delta`` (already validated; :meth:`Accountant.epsilon`).

        Args:
            delta: in (0, 1) (trusted).
        """
        eps, spent = self._spent()
        if self._rdp is not None:
            left = (delta - spent) * (1.0 - _DELTA_SLACK)
            if not left > 0:
                return math.inf
            return eps + self._rdp.epsilon_unchecked(left)
        value = eps if delta >= spent * (1.0 + _DELTA_SLACK) else math.inf
        if len(self._steps) == 1:  # k repetitions of one release: KOV's optimal composition is valid too
            (e0, d0), k = next(iter(self._steps.items()))
            try:
                value = min(value, kov.kov_epsilon(e0, d0, steps=k, delta=delta))
            except (InfeasibleError, ValueError):  # delta below what k steps fail with, or k beyond KOV's range
                pass  # (kov.kov_epsilon takes k <= 1e8): basic composition's answer stands
        return value

    def delta_unchecked(self, epsilon: float) -> float:
        """Upper bound on delta of the ledger at ``epsilon`` (already validated; :meth:`Accountant.delta`).

        Args:
            epsilon: in [0, inf) (trusted).
        """
        eps, spent = self._spent()
        if self._rdp is not None:
            if not epsilon > eps:
                return 1.0
            return min(1.0, spent * (1.0 + _DELTA_SLACK) + self._rdp.delta_unchecked((epsilon - eps) * (1.0 - _DELTA_SLACK)))
        value = min(1.0, spent * (1.0 + _DELTA_SLACK)) if epsilon >= eps else 1.0
        if len(self._steps) == 1:
            (e0, d0), k = next(iter(self._steps.items()))
            try:
                value = min(value, kov.kov_delta(e0, d0, steps=k, epsilon=epsilon))
            except ValueError:  # k beyond KOV's range: basic composition's answer stands
                pass
        return value
