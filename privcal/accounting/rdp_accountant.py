"""The Renyi-DP accountant (Mironov 2017) and the valid RDP of a subsampled Gaussian release it composes.

:class:`RDPAccountant` ("rdp") sums the RDP of each release over an order grid and converts it to (epsilon, delta)
with the improved conversion (Balle et al. 2020, Thm 21); subsampled Gaussians by Mironov-Talwar-Zhang 2019
(Poisson) and Wang-Balle-Kasiviswanathan 2018 Thm 27 (without replacement): :func:`valid_subsampled_rdp`, which
the paper accountant (``privcal.accounting.accountants.PaperAccountant``) also reads to say whether GPOPE's
Lemma 1 is an upper bound. Its calibration searches on the orders that decide the optimum
(:meth:`RDPAccountant.sigma_for_unchecked`, :class:`CappedOrders`). ``privcal.accounting.accountants`` re-exports
both classes.
"""

from __future__ import annotations

import math
import warnings
from typing import Callable, Optional, Union

import numpy as np
from numpy.typing import ArrayLike

from .. import _validate as V
from ..analysis import rdp, subsampling
from ..errors import InfeasibleError
from . import search as _search, pairs
from .protocol import SUPPORT, Accountant, default_hint
from .events import EpochsEvent, Neighbouring, Releases, SubsampledEvent, unwrap_unchecked

__all__ = ["RDPAccountant", "CappedOrders", "valid_subsampled_rdp", "NM_FLOOR", "DEFAULT_ORDERS"]

_DEFAULT_RTOL = 1e-9
#: Below this noise multiplier a subsampled Gaussian's RDP is taken as inf, and a KOV epsilon as inf (upper
#: bounds): the series of MTZ / WBK and the one-step profile overflow there and their evaluation can take
#: minutes or fail, for epsilons beyond 1e190.
NM_FLOOR = 1e-100
#: the default Renyi orders of the RDP and paper accountants (``privcal.analysis.rdp.DEFAULT_ORDERS``), checked
DEFAULT_ORDERS = rdp.check_orders(rdp.DEFAULT_ORDERS)


def valid_subsampled_rdp(orders: np.ndarray, event: SubsampledEvent,
                          relation: Optional[Neighbouring] = None) -> np.ndarray:
    """Valid RDP of one subsampled Gaussian release in a history of ``relation`` (None: its own): MTZ 2019
    (Poisson, and without replacement in an add/remove history, dominated by the Poisson pair) or WBK 2018
    Thm 27 (without replacement, replace-one; zero-out is priced as replace-one at twice the sensitivity,
    ``pairs.priced_event``).

    Args:
        orders: Renyi orders, finite and > 1 (trusted).
        event: one subsampled Gaussian release (trusted).
        relation: the history's neighbouring relation; default None (the release's own).
    """
    event = pairs.priced_event(event, relation)
    nm = unwrap_unchecked(event.event)[0].noise_multiplier
    if math.isinf(nm):  # no information released
        return np.zeros_like(orders)
    if nm < NM_FLOOR:  # epsilon would exceed 1e190 anyway; inf is an upper bound, and fast
        return np.full_like(orders, math.inf)
    if event.sampling == "poisson":
        return subsampling.rdp_poisson_gaussian_unchecked(orders, nm, event.sample_rate)
    return subsampling.rdp_without_replacement_gaussian_unchecked(orders, nm, event.sample_rate)



class RDPAccountant(Accountant):
    """Renyi-DP accountant (Mironov 2017): RDP of each release summed over an order grid, converted
    with the improved conversion (Balle et al. 2020, Thm 21; Canonne, Kamath & Steinke 2020).

    On the default grid the optimal order is refined inside its grid cell: the RDP of the whole
    ledger is evaluated at 12 extra orders around the grid optimum (two rounds of six, see
    ``privcal.analysis.rdp._refine``), so epsilon does not depend on the grid spacing near the optimum (without
    it, the half-order steps between 8 and 16 cost up to 0.5% in epsilon at q = 1e-3). Every
    extra order is one at which the RDP used is valid: the exact Poisson-subsampled Gaussian at any
    order (Mironov-Talwar-Zhang 2019), the Gaussian's alpha/(2 s^2), and without replacement WBK 2018
    Cor. 10 (the chord of the cumulant between integer orders, an upper bound by convexity).
    Calibration searches on the orders that decide the optimum (see :meth:`sigma_for`).

    Args:
        orders: Renyi orders, finite and > 1; default ``privcal.analysis.rdp.DEFAULT_ORDERS`` (158 orders from
            1.01 to 1e4).
        conversion: RDP to (epsilon, delta) conversion, "improved" (default) or "mironov".
        refine: refine the optimal order between grid orders; default None: True on the default grid,
            False when ``orders`` are given (the grid alone, e.g. to match another library's grid).
        neighbouring: the one neighbouring relation of everything this accountant composes ("add_remove",
            "replace_one", "zero_out" or a :class:`~privcal.accounting.events.Neighbouring`); default None
            (the relation the releases state; ``privcal.accounting.relations``).
    """

    name = "rdp"
    guarantee = "upper bound on epsilon (Renyi DP, improved conversion)"
    #: the calibration searches on the refinement-lattice orders within this many steps of the optimum
    _RADIUS = 8

    def __init__(
        self, orders: Optional[ArrayLike] = None, *, conversion: str = "improved", refine: Optional[bool] = None,
        neighbouring: Optional[Union[Neighbouring, str]] = None,
    ):
        super().__init__(neighbouring)
        # the defaults are trusted (validated once, below); only what the user passes is checked
        self._setup(
            DEFAULT_ORDERS if orders is None else rdp.check_orders(orders),
            conversion if conversion == "improved" else rdp.check_conversion(conversion),
            (orders is None) if refine is None else _flag("refine", refine),
        )

    def _setup(self, orders: np.ndarray, conversion: str, refine: bool = True) -> None:
        self.orders = orders
        self.conversion = conversion
        self.refine = refine
        self._rdp = np.zeros_like(self.orders)
        self._mu2 = 0.0  # sum of count / s^2 over plain Gaussian releases: their RDP is alpha * mu2 / 2
        self._sampled: dict[SubsampledEvent, int] = {}  # subsampled releases and their counts

    def _fresh(self, orders: Optional[np.ndarray] = None, refine: Optional[bool] = None):
        new = type(self).__new__(type(self))
        Accountant.__init__(new, self._requested)
        new._setup(self.orders if orders is None else orders, self.conversion, self.refine if refine is None else refine)
        return new

    def _supports_leaf(self, event):
        return SUPPORT["rdp"](event)

    def _add(self, event, count):
        if isinstance(event, SubsampledEvent):
            step = self._subsampled_rdp(event, self.orders)
            self._sampled[event] = self._sampled.get(event, 0) + count
        elif isinstance(event, EpochsEvent):  # the no-amplification Gaussian: RDP alpha mu^2 / 2
            mu2 = pairs.epochs_mu2(event, self._relation)
            with np.errstate(invalid="ignore"):
                step = self.orders * (0.5 * mu2)
            self._mu2 += count * mu2
        elif math.isinf(event.noise_multiplier):
            step = np.zeros_like(self.orders)
        else:
            step = rdp.rdp_gaussian_unchecked(self.orders, event.noise_multiplier)
            self._mu2 += count * (event.mu * event.mu)
        self._rdp = self._rdp + count * step

    def _subsampled_rdp(self, event: SubsampledEvent, orders: np.ndarray) -> np.ndarray:
        """Valid RDP of one subsampled release at ``orders`` (subclasses may use another bound)."""
        return valid_subsampled_rdp(orders, event, self._relation)

    def _rdp_at(self, orders: np.ndarray) -> np.ndarray:
        """RDP of everything composed so far at any ``orders`` (the refinement's extra orders)."""
        with np.errstate(invalid="ignore"):
            total = orders * (0.5 * self._mu2) if self._mu2 else np.zeros_like(orders)
        for event, count in self._sampled.items():
            total = total + count * self._subsampled_rdp(event, orders)
        return total

    @property
    def rdp(self) -> np.ndarray:
        """Renyi divergence of the composition at each order of ``orders``."""
        return self._rdp.copy()

    def epsilon_unchecked(self, delta: float) -> float:
        """Upper bound on epsilon of the ledger at ``delta`` (already validated; :meth:`Accountant.epsilon`).

        Args:
            delta: in (0, 1) (trusted).
        """
        return self._epsilon_refined(delta)[0]

    def epsilon_and_order(self, delta: float) -> tuple[float, float]:
        """Epsilon at ``delta`` and the order that attains it (a grid order, or with ``refine`` one
        between grid orders; nan when nothing is composed or epsilon is inf).

        Args:
            delta: in (0, 1).

        Returns:
            (epsilon, order): the upper bound on epsilon, in [0, inf], and its Renyi order.
        """
        return self._epsilon_and_order(V.open_unit("delta", delta))

    def _epsilon_and_order(self, delta: float) -> tuple[float, float]:
        eps, order, _ = self._epsilon_refined(delta)
        return eps, order

    def _epsilon_refined(self, delta: float) -> tuple[float, float]:
        """(epsilon, order, the order's position on the refinement lattice, -1 without refinement)."""
        if not np.any(self._rdp):
            return 0.0, math.nan, -1
        eps, order, position = rdp.epsilon_refined_unchecked(
            self.orders, self._rdp, delta, conversion=self.conversion, rdp_at=self._rdp_at if self.refine else None
        )
        return float(eps), float(order), position

    def delta_unchecked(self, epsilon: float) -> float:
        """Upper bound on delta of the ledger at ``epsilon`` (already validated; :meth:`Accountant.delta`).

        Args:
            epsilon: in [0, inf) (trusted).
        """
        if not np.any(self._rdp):
            return 0.0
        d, _ = rdp.delta_from_rdp_unchecked(
            self.orders, self._rdp, epsilon, conversion=self.conversion, rdp_at=self._rdp_at if self.refine else None
        )
        return float(d)

    def sigma_for_unchecked(self, releases: Releases, epsilon: float, delta: float, *,
                            sigma_hint: Optional[float] = None, rtol: float = _DEFAULT_RTOL) -> float:
        """Smallest checked sigma for ``releases`` at (epsilon, delta), arguments already validated
        (:meth:`Accountant.sigma_for`), by a search on the orders around the optimum. Most of an RDP calibration's
        time goes into RDP values at orders far from the optimum. A coarse search on every sixth order finds sigma to 0.1% (each probe on those orders
        up to a cap that doubles while the optimum sits at it, ``CappedOrders``: the same epsilon where it is
        unimodal in the order, without the forward differences of Thm 27 up to order 256 at small sigmas; only a
        start either way); the search then runs on the orders around the optimal one at that sigma -- the grid
        orders within a factor 2 of it, and with refinement the 17 refinement-lattice orders within 8 steps of
        it (see ``privcal.analysis.rdp._refine``) -- and the answer is re-checked by the full evaluation. When the
        optimum of the full evaluation and its lattice neighbours are among those orders, the two agree (the
        refined minimum is the minimum over grid and lattice where epsilon is unimodal in the order), and the
        answer is the full evaluation's own smallest sigma. Otherwise the orders around the new optimum are
        tried (three times at most), then the plain search on the full evaluation decides.

        Args:
            releases: what ran, as a function of sigma (trusted).
            epsilon: target epsilon, in (0, inf) (trusted).
            delta: target delta, in (0, 1) (trusted).
            sigma_hint: where a search starts (trusted); default None.
            rtol: relative precision of the answer (trusted); default 1e-9.
        """
        self._check_supported(releases)
        sigma = default_hint(releases, epsilon, delta) if sigma_hint is None else sigma_hint
        orders = self.orders

        def at(sub: Optional[np.ndarray]):
            refine = self.refine if sub is None else False
            return lambda s: self._fresh(sub, refine)._compose(releases.event(s))._epsilon_refined(delta)

        def search(sub: Optional[np.ndarray], hint: float, tol: float, step: float = 4.0) -> float:
            seen: dict[float, float] = {}  # the root finder asks for some sigmas twice (bracket ends)

            def epsilon_at(s: float) -> float:
                key = round(math.log(s), 12)  # exp(log(s)) may differ from s in the last bit
                if key not in seen:
                    seen[key] = at(sub)(s)[0]
                return seen[key]

            with warnings.catch_warnings():
                if sub is not None:  # a sub-grid's own edges are no concern: the full check warns
                    warnings.simplefilter("ignore", rdp.GridEdgeWarning)
                return _search.search(epsilon_at, epsilon, delta, sigma_hint=hint, rtol=tol, step=step)

        sparse = np.unique(np.append(orders[::6], orders[-1]))
        if sparse.size < orders.size:
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", rdp.GridEdgeWarning)
                    sigma = _search.search(CappedOrders(sparse, at), epsilon, delta, sigma_hint=sigma, rtol=1e-3)
            except InfeasibleError:
                pass
        value, order, position = _search.quiet(at(None))(sigma)
        for attempt in range(3):
            if not math.isfinite(order):
                break
            sub = self._around(order, position, wide=attempt == 0)
            # start a little below the answer (epsilon is roughly proportional to 1/sigma^p, p in [1, 2]),
            # so that the root finder brackets upwards: small sigmas are the expensive ones; the first step
            # goes just above the coarse sigma (near the root: a bracket of a few % instead of 4x)
            hint = sigma * min(0.98, value / epsilon if value > 0 else 0.5)  # epsilon 0 there: any start below
            try:
                sigma = search(sub, hint, rtol, step=1.002 * sigma / hint)
            except InfeasibleError:
                break
            value, new_order, new_position = at(None)(sigma)  # the final check (warnings allowed)
            if new_position >= 0:  # the optimum and its lattice neighbours were all searched on
                inside = bool(np.isin(rdp.lattice_window(orders, new_position, 1), sub).all())
            else:
                inside = sub[0] < new_order < sub[-1] or new_order in (orders.min(), orders.max())
            if value <= epsilon and inside:
                return sigma
            order, position = new_order, new_position
        return search(None, sigma, rtol)


    def _around(self, order: float, position: int, *, wide: bool = True) -> np.ndarray:
        """The orders a calibration searches on near ``order``: the grid orders within a factor 2
        (without refinement, or ``wide``: the first attempt, when the coarse sigma may still move the
        optimum by several grid cells), and with refinement (``position`` >= 0) the lattice orders within
        ``_RADIUS`` steps of it."""
        orders = self.orders
        window = orders[(orders >= order / 2.0) & (orders <= order * 2.0)]
        if position < 0:
            return window
        lattice = rdp.lattice_window(orders, position, self._RADIUS)
        return np.union1d(window, lattice) if wide else lattice


class CappedOrders:
    """epsilon at sigma on the orders of ``sparse`` up to a cap: the cap starts at order 17 and doubles while the
    optimum sits at it, so it is the same epsilon as on all of ``sparse`` wherever epsilon is unimodal in the
    order, and probes skip the forward differences of orders far above the optimum (their cost grows with the
    largest order, up to 256). Used by :meth:`RDPAccountant.sigma_for_unchecked` (trusted inputs).

    Args:
        sparse: the order grid to search, sorted increasing.
        at: ``at(sub)(sigma)`` gives (epsilon, order, position) on the orders ``sub``.
    """

    def __init__(self, sparse: np.ndarray, at: Callable):
        self.sparse, self.at = sparse, at
        self.top = max(17.0, float(sparse[0]))
        self.seen: dict[float, float] = {}

    def __call__(self, sigma: float) -> float:
        key = round(math.log(sigma), 12)  # the root finder asks for its bracket's ends twice
        if key not in self.seen:
            self.seen[key] = self._epsilon(sigma)
        return self.seen[key]

    def _epsilon(self, sigma: float) -> float:
        while True:
            sub = self.sparse[self.sparse <= self.top]
            value, order, _ = self.at(sub)(sigma)
            if sub.size == self.sparse.size or not math.isfinite(order) or order < sub[-1]:
                return value
            self.top = 2.0 * float(sub[-1])


def _flag(name: str, value) -> bool:
    """``value`` if it is a bool (ValueError naming ``name`` otherwise)."""
    if not isinstance(value, bool):
        raise ValueError(f"{name} must be True or False, got {value!r}")
    return value
