"""Accountants price events: one protocol, several bounds.

Every accountant follows the protocol of Google's ``dp_accounting``: ``supports(event)``,
``compose(event, count=1) -> self``, ``epsilon(delta)``, ``delta(epsilon)``. An accountant that cannot
price an event raises :class:`~privcal.errors.UnsupportedEventError` at ``compose``; it never guesses.
A *valid* accountant reports an upper bound on epsilon (or ``inf``); ``valid`` and ``guarantee`` say
which side a number is on.

Each accountant also owns its calibration: :meth:`Accountant.sigma_for` returns the smallest sigma
for which given :class:`~privcal.accounting.events.Releases` meet a target (epsilon, delta) under
this accountant, by the accountant's own fast path (the closed form for the exact profile, a search on
a window of orders for Renyi DP, the generic conservative root finder otherwise). The front door, the
comparison tables and the paper calibrators all calibrate through it.

* :class:`ExactAccountant` — the exact privacy profile of composed Gaussian / Gaussian-process releases:
  their composition is one Gaussian with mu^2 = sum of mu_i^2 (Balle & Wang 2018; Dong, Roth & Su 2019).
* :class:`PaperAccountant` — the epsilon-expression of the proof of Wang & Hegde 2019, Thm 5; for
  subsampled releases, GPOPE's Lemma 1 with the moments-accountant tail (not a valid bound in general).
* :class:`KOVAccountant` — Kairouz, Oh & Viswanath 2015, optimal homogeneous composition; for Gaussian
  steps the per-step (epsilon0, delta0) is chosen optimally on the step's exact profile.
* :class:`RDPAccountant` — Renyi DP (Mironov 2017) on an order grid, improved conversion to (epsilon, delta);
  subsampled Gaussians by Mironov-Talwar-Zhang 2019 (Poisson, add/remove) and Wang-Balle-Kasiviswanathan
  2018 Thm 27 (without replacement, replace-one or zero-out); its home is ``privcal.accounting.rdp_accountant``,
  re-exported here.
* ``privcal.pld.PLDAccountant`` ("pld") — privacy loss distributions with certified brackets; it lives
  in ``privcal.pld``. The base class and the table of which releases each accountant prices are in
  ``privcal.accounting.protocol`` (below both); ``privcal.accounting.registry.ACCOUNTANTS`` names them all.

Public methods validate their arguments once; the trusted kernels ``compose_unchecked`` /
``epsilon_unchecked`` / ``delta_unchecked`` / ``sigma_for_unchecked`` take arguments already validated
(the protocol: ``privcal.accounting.protocol``).
"""

from __future__ import annotations

import math
import warnings
from typing import Optional, Union

import numpy as np
from numpy.typing import ArrayLike

from .. import _validate as V
from ..analysis import composition, gaussian, kov, rdp, subsampling
from ..errors import InfeasibleError, UnsupportedEventError
from .protocol import GAUSSIAN_LEAVES as _GAUSSIAN_LEAVES
from .protocol import SUPPORT, Accountant
from .protocol import subsampled_gaussian as _subsampled_gaussian
from .events import ApproxDPEvent, Event, Neighbouring, Releases, SubsampledEvent, flatten_unchecked, unwrap_unchecked
from .rdp_accountant import DEFAULT_ORDERS, NM_FLOOR, RDPAccountant, valid_subsampled_rdp
from .rdp_accountant import CappedOrders  # noqa: F401 (importable from here too)

__all__ = [
    "Accountant",
    "ExactAccountant",
    "PaperAccountant",
    "KOVAccountant",
    "RDPAccountant",
]

_DEFAULT_RTOL = 1e-9


class _GaussianMuAccountant(Accountant):
    """Shared ledger of accountants that only need the total mu^2 of Gaussian releases."""

    def __init__(self, *, neighbouring: Optional[Union[Neighbouring, str]] = None):
        super().__init__(neighbouring)
        self._mu2 = 0.0

    def _supports_leaf(self, event):
        return SUPPORT["exact"](event)

    def _add(self, event, count):
        self._mu2 += count * (event.mu * event.mu)  # inf (not OverflowError) for a vanishing sigma

    @property
    def mu(self) -> float:
        """The Gaussian-DP parameter of the whole composition, sqrt(sum of mu_i^2)."""
        return math.sqrt(self._mu2)


class ExactAccountant(_GaussianMuAccountant):
    """Exact privacy profile of composed Gaussian and Gaussian-process releases.

    T releases with mu_i = sensitivity_i / sigma_i compose to one Gaussian with mu = sqrt(sum mu_i^2)
    (Dong, Roth & Su 2019, Cor. 3.3); its profile is Balle & Wang 2018, Thm 8. This is the lower limit
    every other bound is compared to. Calibration is closed form (:func:`privcal.analysis.composition.sigma_composed_exact`).

    Args:
        neighbouring: the one neighbouring relation of everything this accountant composes ("add_remove",
            "replace_one", "zero_out" or a :class:`~privcal.accounting.events.Neighbouring`); default None
            (the relation the releases state; ``privcal.accounting.relations``).
    """

    name = "exact"
    guarantee = "exact epsilon (tight privacy profile)"

    def epsilon_unchecked(self, delta: float) -> float:
        """Upper bound on epsilon of the ledger at ``delta`` (already validated; :meth:`Accountant.epsilon`).

        Args:
            delta: in (0, 1) (trusted).
        """
        if math.isinf(self._mu2):  # sigma so small that mu overflows: no finite epsilon
            return math.inf
        return 0.0 if self._mu2 == 0 else gaussian.epsilon_exact_unchecked(delta, self.mu)

    def delta_unchecked(self, epsilon: float) -> float:
        """Upper bound on delta of the ledger at ``epsilon`` (already validated; :meth:`Accountant.delta`).

        Args:
            epsilon: in [0, inf) (trusted).
        """
        if math.isinf(self._mu2):
            return 1.0
        return 0.0 if self._mu2 == 0 else gaussian.delta_exact_unchecked(epsilon, self.mu)

    def sigma_for_unchecked(self, releases: Releases, epsilon: float, delta: float, *,
                            sigma_hint: Optional[float] = None, rtol: float = _DEFAULT_RTOL) -> float:
        # documented on Accountant.sigma_for_unchecked; here a closed form: one Gaussian with
        # mu = sqrt(steps) * sensitivity / sigma
        self._check_supported(releases)
        return composition.sigma_composed_exact_unchecked(epsilon, delta, steps=releases.steps, sensitivity=releases.sensitivity)


class PaperAccountant(_GaussianMuAccountant):
    """The papers' own accounting, as printed.

    * Gaussian / GP releases: Wang & Hegde 2019, proof of Thm 5: eps = T'D^2/(2 sigma^2) +
      sqrt(2 T'D^2 w/sigma^2), w = ln(e + sqrt(T'D^2/sigma^2)/delta), with T'D^2/sigma^2 = sum of mu_i^2
      (the proof multiplies moment bounds, so it extends to unequal releases unchanged). A valid upper
      bound wherever checked against the exact profile (tests/test_composition.py); the theorem's
      *closed-form sigma* is a different matter, see ``privcal.analysis.composition.thm5_sigma_proof_paper``.
    * Subsampled releases: GPOPE Lemma 1 as printed (``privcal.analysis.subsampling.rdp_gpope_lemma1_paper``)
      composed over the steps, with Abadi et al.'s moments-accountant tail. Lemma 1 keeps only the j = 2
      term of WBK Thm 9 and is not an upper bound in general, so ``valid`` is False;
      :meth:`lemma1_sufficient` tells whether, at a given delta, Lemma 1 is at least the valid RDP (MTZ /
      WBK Thm 27) at the order the tail picks — then the reported epsilon is an upper bound after all.

    The two kinds cannot be mixed in one ledger.

    Args:
        orders: Renyi orders (finite, > 1) of the moments tail for subsampled releases; default
            ``privcal.analysis.rdp.DEFAULT_ORDERS``.
        neighbouring: the one neighbouring relation of everything this accountant composes ("add_remove",
            "replace_one", "zero_out" or a :class:`~privcal.accounting.events.Neighbouring`); default None
            (the relation the releases state; ``privcal.accounting.relations``).
    """

    name = "paper"
    _THM5_GUARANTEE = "upper bound on epsilon (Wang & Hegde 2019, Thm 5 proof expression)"

    def __init__(self, orders: Optional[ArrayLike] = None, *, neighbouring: Optional[Union[Neighbouring, str]] = None):
        super().__init__(neighbouring=neighbouring)
        self._setup(DEFAULT_ORDERS if orders is None else rdp.check_orders(orders))

    def _setup(self, orders: np.ndarray) -> None:
        self.orders = orders
        self._lemma1 = np.zeros_like(self.orders)
        # the subsampled releases composed, with their counts: their valid RDP (for lemma1_sufficient alone)
        # is computed when asked, not at every compose (a Lemma 1 calibration composes at every probe)
        self._sampled: dict = {}
        self._subsampled: bool | None = None

    def _fresh(self):
        new = type(self).__new__(type(self))
        _GaussianMuAccountant.__init__(new, neighbouring=self._requested)
        new._setup(self.orders)
        return new

    def _supports_leaf(self, event):
        kind = isinstance(event, _GAUSSIAN_LEAVES), _subsampled_gaussian(event)
        if not any(kind):
            return False
        return self._subsampled is None or self._subsampled == kind[1]

    def _supports_together(self, leaves):
        # Thm 5 (plain releases) and Lemma 1 (subsampled ones) are different accountings: one per ledger
        return len({_subsampled_gaussian(leaf) for leaf in leaves}) == 1

    def _add(self, event, count):
        if isinstance(event, SubsampledEvent):
            self._subsampled = True
            nm = unwrap_unchecked(event.event)[0].noise_multiplier
            if nm < NM_FLOOR:  # Lemma 1's terms divide by nm^2 (underflow); inf as for the valid RDP
                self._lemma1 = self._lemma1 + math.inf
            elif not math.isinf(nm):
                self._lemma1 = self._lemma1 + count * subsampling.rdp_gpope_lemma1_paper_unchecked(
                    self.orders, nm, event.sample_rate
                )
            self._sampled[event] = self._sampled.get(event, 0) + count
        else:
            self._subsampled = False
            super()._add(event, count)

    def _valid_rdp(self) -> np.ndarray:
        """The valid RDP (MTZ / WBK Thm 27) of the subsampled releases composed, at ``orders``."""
        total = np.zeros_like(self.orders)
        for event, count in self._sampled.items():
            total = total + count * valid_subsampled_rdp(self.orders, event, self._relation)
        return total

    def _tail(self, delta: float) -> tuple[float, float]:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", rdp.GridEdgeWarning)
            return rdp.moments_tail_epsilon_unchecked(self.orders, self._lemma1, delta)

    @property
    def valid(self) -> bool:  # type: ignore[override]
        """False once the ledger holds subsampled releases (Lemma 1 is not an upper bound in general)."""
        return not self._subsampled

    def valid_for(self, event: Event) -> bool:
        """Whether epsilon would be a valid upper bound after composing ``event`` (not for subsampled
        releases, priced by GPOPE Lemma 1).

        Args:
            event: the event that would be composed.
        """
        return not self._subsampled and not any(_subsampled_gaussian(leaf) for leaf, _ in flatten_unchecked(event))

    def lemma1_sufficient(self, delta: float) -> bool:
        """Whether, at ``delta``, Lemma 1 is >= the valid RDP at the order the moments tail picks — in
        which case the epsilon reported here is an upper bound after all.

        Args:
            delta: in (0, 1).
        """
        return self.lemma1_sufficient_unchecked(V.open_unit("delta", delta))

    @property
    def subsampled(self) -> bool:
        """Whether the ledger holds subsampled releases (priced by GPOPE Lemma 1); False while it is empty."""
        return bool(self._subsampled)

    def lemma1_sufficient_unchecked(self, delta: float) -> bool:
        """:meth:`lemma1_sufficient` for a ``delta`` already validated.

        Args:
            delta: in (0, 1) (trusted).
        """
        if not self._subsampled:
            return True
        _, order = self._tail(delta)
        if not np.isfinite(order):
            return True
        i = int(np.nonzero(self.orders == order)[0][0])
        return bool(self._lemma1[i] >= self._valid_rdp()[i])

    @property
    def guarantee(self) -> str:  # type: ignore[override]
        """What the reported number is, in words (depends on what was composed)."""
        if not self._subsampled:
            return self._THM5_GUARANTEE
        return "GPOPE Lemma 1 + moments tail as printed: NOT a valid bound in general"

    def epsilon_unchecked(self, delta: float) -> float:
        """Upper bound on epsilon of the ledger at ``delta`` (already validated; :meth:`Accountant.epsilon`).

        Args:
            delta: in (0, 1) (trusted).
        """
        if self._subsampled:
            return float(self._tail(delta)[0]) if np.any(self._lemma1) else 0.0
        if self._mu2 == 0:
            return 0.0
        if math.isinf(self._mu2):
            return math.inf
        return composition.thm5_epsilon_paper_unchecked(1.0, delta, steps=1, sensitivity=self.mu)

    def delta_unchecked(self, epsilon: float) -> float:
        """Upper bound on delta of the ledger at ``epsilon`` (already validated; :meth:`Accountant.delta`).

        Args:
            epsilon: in [0, inf) (trusted).
        """
        if self._subsampled:
            if not np.any(self._lemma1):
                return 0.0
            return float(rdp.moments_tail_delta_unchecked(self.orders, self._lemma1, epsilon)[0])
        if self._mu2 == 0:
            return 0.0
        if math.isinf(self._mu2):
            return 1.0
        return composition.thm5_delta_paper_unchecked(epsilon, 1.0, steps=1, sensitivity=self.mu)


class KOVAccountant(Accountant):
    """Optimal homogeneous composition (Kairouz, Oh & Viswanath 2015, Thm 3.3, exact profile).

    Supports k repetitions of one event: an ``ApproxDPEvent`` (epsilon0, delta0), or a Gaussian /
    Gaussian-process release, for which every epsilon0 gives a valid (epsilon0, delta_exact(epsilon0))
    step and the best epsilon0 is searched. Heterogeneous compositions raise ``UnsupportedEventError``.

    Args:
        neighbouring: the one neighbouring relation of everything this accountant composes ("add_remove",
            "replace_one", "zero_out" or a :class:`~privcal.accounting.events.Neighbouring`); default None
            (the relation the releases state; ``privcal.accounting.relations``).
    """

    name = "kov"

    def __init__(self, *, neighbouring: Optional[Union[Neighbouring, str]] = None):
        super().__init__(neighbouring)
        self._event: Event | None = None
        self._count = 0

    def supports(self, event: Event) -> bool:
        """Whether ``event`` can be priced here: an (epsilon, delta) or Gaussian event, identical to
        everything composed so far (homogeneous composition).

        Args:
            event: the event to price.
        """
        return super().supports(event)

    def _supports_together(self, leaves):
        reference = leaves[0] if self._event is None else self._event
        return all(leaf == reference for leaf in leaves)

    def _supports_leaf(self, event):
        return SUPPORT["kov"](event)

    def _compose(self, event, count=1):
        leaves = [leaf for leaf, _ in flatten_unchecked(event)] if isinstance(event, Event) else []
        if leaves and all(self._supports_leaf(leaf) for leaf in leaves) and not self._supports_together(leaves):
            held = self._event if self._event is not None else leaves[0]
            other = next(leaf for leaf in leaves if leaf != held)
            raise UnsupportedEventError(
                "the kov accountant composes only identical events (homogeneous composition); "
                f"holds {held!r}, got {other!r}"
            )
        return super()._compose(event, count)

    def _add(self, event, count):
        self._event = event
        self._count += count

    @property
    def guarantee(self) -> str:  # type: ignore[override]
        """What the reported number is, in words (says when the closed form of Thm 3.4 was used)."""
        base = "upper bound on epsilon (Kairouz-Oh-Viswanath optimal composition)"
        if isinstance(self._event, _GAUSSIAN_LEAVES) and kov.uses_closed_form(self._count):
            return (
                f"upper bound on epsilon (Kairouz-Oh-Viswanath, closed form of Thm 3.4 beyond "
                f"{kov.K_CLOSED_FORM:.0e} steps: looser than the optimal composition)"
            )
        return base

    def epsilon_unchecked(self, delta: float) -> float:
        """Upper bound on epsilon of the ledger at ``delta`` (already validated; :meth:`Accountant.epsilon`).

        Args:
            delta: in (0, 1) (trusted).
        """
        e, k = self._event, self._count
        if e is None:
            return 0.0
        try:
            if isinstance(e, ApproxDPEvent):
                return kov.kov_epsilon_unchecked(e.epsilon, e.delta, steps=k, delta=delta)
            if math.isinf(e.noise_multiplier):
                return 0.0
            if e.noise_multiplier < NM_FLOOR:  # the one-step profile overflows; inf is an upper bound
                return math.inf
            return kov.kov_gaussian_epsilon_unchecked(1.0, delta=delta, steps=k, sensitivity=e.mu)
        except InfeasibleError:
            return math.inf

    def delta_unchecked(self, epsilon: float) -> float:
        """Upper bound on delta of the ledger at ``epsilon`` (already validated; :meth:`Accountant.delta`).

        Args:
            epsilon: in [0, inf) (trusted).
        """
        e, k = self._event, self._count
        if e is None:
            return 0.0
        if isinstance(e, ApproxDPEvent):
            return kov.kov_delta_unchecked(e.epsilon, e.delta, steps=k, epsilon=epsilon)
        if math.isinf(e.noise_multiplier):
            return 0.0
        if e.noise_multiplier < NM_FLOOR:  # as in _epsilon: 1 is an upper bound
            return 1.0
        return kov.kov_gaussian_delta_unchecked(sigma=1.0, epsilon=epsilon, steps=k, sensitivity=e.mu)
