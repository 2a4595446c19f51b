"""Accountants price events: one protocol, several bounds.

Every accountant follows the protocol of Google's ``dp_accounting``: ``supports(event)``,
``compose(event, count=1) -> self``, ``epsilon(delta)``, ``delta(epsilon)``. An accountant that cannot
price an event raises :class:`~privcal.errors.UnsupportedEventError` at ``compose``; it never guesses.
A *valid* accountant reports an upper bound on epsilon (or ``inf``); ``valid`` and ``guarantee`` say
which side a number is on.

* :class:`ExactAccountant` — the exact privacy profile of composed Gaussian / Gaussian-process releases:
  their composition is one Gaussian with mu^2 = sum of mu_i^2 (Balle & Wang 2018; Dong, Roth & Su 2019).
* :class:`PaperAccountant` — the epsilon-expression of the proof of Wang & Hegde 2019, Thm 5; for
  subsampled releases, GPOPE's Lemma 1 with the moments-accountant tail (not a valid bound in general).
* :class:`KOVAccountant` — Kairouz, Oh & Viswanath 2015, optimal homogeneous composition; for Gaussian
  steps the per-step (epsilon0, delta0) is chosen optimally on the step's exact profile.
* :class:`RDPAccountant` — Renyi DP (Mironov 2017) on an order grid, improved conversion to (epsilon, delta);
  subsampled Gaussians by Mironov-Talwar-Zhang 2019 (Poisson) and Wang-Balle-Kasiviswanathan 2018
  (without replacement).
"""

from __future__ import annotations

import abc
import math
import warnings

import numpy as np

from . import _validate as V
from . import composition, gaussian, rdp, subsampling
from .errors import InfeasibleError, UnsupportedEventError
from .events import ApproxDPEvent, Event, GaussianEvent, GaussianProcessEvent, SubsampledEvent, unwrap

__all__ = [
    "Accountant",
    "ExactAccountant",
    "PaperAccountant",
    "KOVAccountant",
    "RDPAccountant",
    "ACCOUNTANTS",
]

_GAUSSIAN_LEAVES = (GaussianEvent, GaussianProcessEvent)


def _subsampled_gaussian(event: Event) -> bool:
    """A SubsampledEvent around a (possibly composed-once) Gaussian or GP release."""
    return isinstance(event, SubsampledEvent) and isinstance(unwrap(event.event)[0], _GAUSSIAN_LEAVES) and (
        unwrap(event.event)[1] == 1
    )


def _valid_subsampled_rdp(orders: np.ndarray, event: SubsampledEvent) -> np.ndarray:
    """Valid RDP of one subsampled Gaussian release: MTZ 2019 (Poisson) or WBK 2018 Thm 27 (w/o repl.)."""
    nm = unwrap(event.event)[0].noise_multiplier
    if event.sampling == "poisson":
        return subsampling.rdp_poisson_gaussian(orders, nm, event.sample_rate)
    return subsampling.rdp_without_replacement_gaussian(orders, nm, event.sample_rate)


class Accountant(abc.ABC):
    """Base class: keeps the ledger of composed events and enforces the protocol."""

    #: short name used by the front door and the CLI
    name: str = ""
    #: True when every number reported is an upper bound on the true epsilon (resp. delta)
    valid: bool = True
    #: what the reported number is, in words
    guarantee: str = ""

    def __init__(self):
        self._ledger: list[tuple[Event, int]] = []

    def supports(self, event: Event) -> bool:
        """Whether ``event`` (with any nesting of ``ComposedEvent``) can be priced here."""
        if not isinstance(event, Event):
            return False
        inner, _ = unwrap(event)
        return self._supports_leaf(inner)

    def compose(self, event: Event, count: int = 1) -> "Accountant":
        """Add ``count`` adaptive repetitions of ``event`` to the ledger; returns ``self``."""
        if not self.supports(event):
            raise UnsupportedEventError(f"the {self.name} accountant cannot price {event!r}")
        inner, n = unwrap(event, count)
        self._add(inner, n)
        self._ledger.append((inner, n))
        return self

    def valid_for(self, event: Event) -> bool:
        """Whether the numbers reported after composing ``event`` would be upper bounds (no numerics)."""
        return type(self).valid

    @property
    def ledger(self) -> tuple[tuple[Event, int], ...]:
        """The (event, count) pairs composed so far."""
        return tuple(self._ledger)

    @abc.abstractmethod
    def _supports_leaf(self, event: Event) -> bool: ...

    @abc.abstractmethod
    def _add(self, event: Event, count: int) -> None: ...

    @abc.abstractmethod
    def epsilon(self, delta) -> float:
        """Epsilon at ``delta`` for everything composed so far (``inf`` if no finite bound)."""

    @abc.abstractmethod
    def delta(self, epsilon) -> float:
        """Delta at ``epsilon`` for everything composed so far."""

    def __repr__(self) -> str:
        return f"{type(self).__name__}(ledger={self._ledger!r})"


class _GaussianMuAccountant(Accountant):
    """Shared ledger of accountants that only need the total mu^2 of Gaussian releases."""

    def __init__(self):
        super().__init__()
        self._mu2 = 0.0

    def _supports_leaf(self, event):
        return isinstance(event, _GAUSSIAN_LEAVES)

    def _add(self, event, count):
        self._mu2 += count * event.mu**2

    @property
    def mu(self) -> float:
        """The Gaussian-DP parameter of the whole composition, sqrt(sum of mu_i^2)."""
        return math.sqrt(self._mu2)


class ExactAccountant(_GaussianMuAccountant):
    """Exact privacy profile of composed Gaussian and Gaussian-process releases.

    T releases with mu_i = sensitivity_i / sigma_i compose to one Gaussian with mu = sqrt(sum mu_i^2)
    (Dong, Roth & Su 2019, Cor. 3.3); its profile is Balle & Wang 2018, Thm 8. This is the lower limit
    every other bound is compared to.
    """

    name = "exact"
    guarantee = "exact epsilon (tight privacy profile)"

    def epsilon(self, delta) -> float:
        delta = V.open_unit("delta", delta)
        return 0.0 if self._mu2 == 0 else gaussian.epsilon_exact(delta, self.mu)

    def delta(self, epsilon) -> float:
        epsilon = V.nonnegative("epsilon", epsilon)
        return 0.0 if self._mu2 == 0 else gaussian.delta_exact(epsilon, self.mu)


class PaperAccountant(_GaussianMuAccountant):
    """The papers' own accounting, as printed.

    * Gaussian / GP releases: Wang & Hegde 2019, proof of Thm 5: eps = T'D^2/(2 sigma^2) +
      sqrt(2 T'D^2 w/sigma^2), w = ln(e + sqrt(T'D^2/sigma^2)/delta), with T'D^2/sigma^2 = sum of mu_i^2
      (the proof multiplies moment bounds, so it extends to unequal releases unchanged). A valid upper
      bound wherever checked against the exact profile (tests/test_composition.py); the theorem's
      *closed-form sigma* is a different matter, see ``privcal.composition.thm5_sigma_proof_paper``.
    * Subsampled releases: GPOPE Lemma 1 as printed (``privcal.subsampling.rdp_gpope_lemma1_paper``)
      composed over the steps, with Abadi et al.'s moments-accountant tail. Lemma 1 keeps only the j = 2
      term of WBK Thm 9 and is not an upper bound in general, so ``valid`` is False;
      :meth:`lemma1_sufficient` tells whether, at a given delta, Lemma 1 is at least the valid RDP (MTZ /
      WBK Thm 27) at the order the tail picks — then the reported epsilon is an upper bound after all.

    The two kinds cannot be mixed in one ledger.
    """

    name = "paper"
    _THM5_GUARANTEE = "upper bound on epsilon (Wang & Hegde 2019, Thm 5 proof expression)"

    def __init__(self, orders=None):
        super().__init__()
        self.orders = rdp._orders(rdp.DEFAULT_ORDERS if orders is None else orders)
        self._lemma1 = np.zeros_like(self.orders)
        self._valid_rdp = np.zeros_like(self.orders)
        self._subsampled: bool | None = None

    def _supports_leaf(self, event):
        kind = isinstance(event, _GAUSSIAN_LEAVES), _subsampled_gaussian(event)
        if not any(kind):
            return False
        return self._subsampled is None or self._subsampled == kind[1]

    def _add(self, event, count):
        if isinstance(event, SubsampledEvent):
            self._subsampled = True
            nm = unwrap(event.event)[0].noise_multiplier
            self._lemma1 = self._lemma1 + count * subsampling.rdp_gpope_lemma1_paper(
                self.orders, nm, event.sample_rate
            )
            self._valid_rdp = self._valid_rdp + count * _valid_subsampled_rdp(self.orders, event)
        else:
            self._subsampled = False
            super()._add(event, count)

    def _tail(self, delta: float) -> tuple[float, float]:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", rdp.GridEdgeWarning)
            return rdp.moments_tail_epsilon(self.orders, self._lemma1, delta)

    @property
    def valid(self) -> bool:  # type: ignore[override]
        """False once the ledger holds subsampled releases (Lemma 1 is not an upper bound in general)."""
        return not self._subsampled

    def valid_for(self, event: Event) -> bool:
        return not self._subsampled and not _subsampled_gaussian(unwrap(event)[0])

    def lemma1_sufficient(self, delta) -> bool:
        """Whether, at ``delta``, Lemma 1 is >= the valid RDP at the order the moments tail picks — in
        which case the epsilon reported here is an upper bound after all."""
        delta = V.open_unit("delta", delta)
        if not self._subsampled:
            return True
        _, order = self._tail(delta)
        if not np.isfinite(order):
            return True
        i = int(np.nonzero(self.orders == order)[0][0])
        return bool(self._lemma1[i] >= self._valid_rdp[i])

    @property
    def guarantee(self) -> str:  # type: ignore[override]
        if not self._subsampled:
            return self._THM5_GUARANTEE
        return "GPOPE Lemma 1 + moments tail as printed: NOT a valid bound in general"

    def epsilon(self, delta) -> float:
        delta = V.open_unit("delta", delta)
        if self._subsampled:
            return float(self._tail(delta)[0])
        if self._mu2 == 0:
            return 0.0
        return composition.thm5_epsilon_paper(1.0, delta, steps=1, sensitivity=self.mu)

    def delta(self, epsilon) -> float:
        epsilon = V.nonnegative("epsilon", epsilon)
        if self._subsampled:
            return float(rdp.moments_tail_delta(self.orders, self._lemma1, epsilon)[0])
        if self._mu2 == 0:
            return 0.0
        return composition.thm5_delta_paper(epsilon, 1.0, steps=1, sensitivity=self.mu)


class KOVAccountant(Accountant):
    """Optimal homogeneous composition (Kairouz, Oh & Viswanath 2015, Thm 3.3, exact profile).

    Supports k repetitions of one event: an ``ApproxDPEvent`` (epsilon0, delta0), or a Gaussian /
    Gaussian-process release, for which every epsilon0 gives a valid (epsilon0, delta_exact(epsilon0))
    step and the best epsilon0 is searched. Heterogeneous compositions raise ``UnsupportedEventError``.
    """

    name = "kov"
    guarantee = "upper bound on epsilon (Kairouz-Oh-Viswanath optimal composition)"

    def __init__(self):
        super().__init__()
        self._event: Event | None = None
        self._count = 0

    def supports(self, event):
        if not super().supports(event):
            return False
        inner, _ = unwrap(event)
        return self._event is None or inner == self._event

    def _supports_leaf(self, event):
        return isinstance(event, (*_GAUSSIAN_LEAVES, ApproxDPEvent))

    def compose(self, event, count=1):
        if super().supports(event) and not self.supports(event):
            raise UnsupportedEventError(
                "the kov accountant composes only identical events (homogeneous composition); "
                f"already holds {self._event!r}, got {unwrap(event)[0]!r}"
            )
        return super().compose(event, count)

    def _add(self, event, count):
        self._event = event
        self._count += count

    def epsilon(self, delta) -> float:
        delta = V.open_unit("delta", delta)
        e, k = self._event, self._count
        if e is None:
            return 0.0
        try:
            if isinstance(e, ApproxDPEvent):
                return composition.kov_epsilon(e.epsilon, e.delta, k, delta)
            return composition.kov_gaussian_epsilon(1.0, delta, steps=k, sensitivity=e.mu)
        except InfeasibleError:
            return math.inf

    def delta(self, epsilon) -> float:
        epsilon = V.nonnegative("epsilon", epsilon)
        e, k = self._event, self._count
        if e is None:
            return 0.0
        if isinstance(e, ApproxDPEvent):
            return composition.kov_delta(epsilon, e.epsilon, e.delta, k)
        return composition.kov_gaussian_delta(epsilon, 1.0, steps=k, sensitivity=e.mu)


class RDPAccountant(Accountant):
    """Renyi-DP accountant (Mironov 2017): RDP of each release summed over an order grid, converted
    with the improved conversion (Balle et al. 2020, Thm 21; Canonne, Kamath & Steinke 2020)."""

    name = "rdp"
    guarantee = "upper bound on epsilon (Renyi DP, improved conversion)"

    def __init__(self, orders=None, *, conversion: str = "improved"):
        super().__init__()
        self.orders = rdp._orders(rdp.DEFAULT_ORDERS if orders is None else orders)
        self.conversion = rdp._conversion(conversion)
        self._rdp = np.zeros_like(self.orders)

    def _supports_leaf(self, event):
        return isinstance(event, _GAUSSIAN_LEAVES) or _subsampled_gaussian(event)

    def _add(self, event, count):
        if isinstance(event, SubsampledEvent):
            step = _valid_subsampled_rdp(self.orders, event)
        else:
            step = rdp.rdp_gaussian(self.orders, event.noise_multiplier)
        self._rdp = self._rdp + count * step

    @property
    def rdp(self) -> np.ndarray:
        """Renyi divergence of the composition at each order of ``orders``."""
        return self._rdp.copy()

    def epsilon(self, delta) -> float:
        return self.epsilon_and_order(delta)[0]

    def epsilon_and_order(self, delta) -> tuple[float, float]:
        """Epsilon at ``delta`` and the order of the grid that attains it (nan when nothing is composed)."""
        delta = V.open_unit("delta", delta)
        if not np.any(self._rdp):
            return 0.0, math.nan
        eps, order = rdp.epsilon_from_rdp(self.orders, self._rdp, delta, conversion=self.conversion)
        return float(eps), float(order)

    def delta(self, epsilon) -> float:
        epsilon = V.nonnegative("epsilon", epsilon)
        if not np.any(self._rdp):
            return 0.0
        d, _ = rdp.delta_from_rdp(self.orders, self._rdp, epsilon, conversion=self.conversion)
        return float(d)


#: The accountants the front door and the CLI know by name.
ACCOUNTANTS: dict[str, type[Accountant]] = {
    cls.name: cls for cls in (ExactAccountant, PaperAccountant, KOVAccountant, RDPAccountant)
}
