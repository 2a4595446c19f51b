r"""The :class:`PLD` object: a lazy composition of single-event PLDs with a certified bracket.

Pure mathematics on (pair, count) factors; events become factors in the accounting layer
(``privcal.accounting.pld_events``)."""

from __future__ import annotations

import math

import numpy as np
from fractions import Fraction
from typing import Optional


from .. import _validate as V
from . import discretise, convolve, heap
from .step_memo import STEP_MEMO, STEP_MEMO_BYTES, StepMemo  # noqa: F401  (re-exported)

__all__ = ["PLD", "StepMemo", "STEP_MEMO", "MemoryLimitError", "DEFAULT_ACCURACY", "DEFAULT_ABSOLUTE_ACCURACY", "DEFAULT_MEMORY_LIMIT"]

#: default relative width of the bracket [lower, upper] of epsilon
DEFAULT_ACCURACY = 1e-3
#: default absolute width (the larger of the two is used)
DEFAULT_ABSOLUTE_ACCURACY = 1e-4
#: default cap of the memory the arrays of one evaluation may take, in bytes
DEFAULT_MEMORY_LIMIT = 256 * 2**20

class MemoryLimitError(ValueError):
    """The grid a requested accuracy needs exceeds the memory cap (a ValueError: relax the accuracy or
    raise ``memory_limit``; the message names both). The front door may fall back to another valid
    accountant on it."""


BYTES_PER_CELL = 8 * 16  # arrays alive per grid cell during one build or composition (generous)
_MAX_REFINE = 6  # refinements of the grid (upper: halvings)
MAX_REFINE_BRACKET = 3  # grid changes of the bracket (each up to a factor 4, finer or coarser)
#: smallest per-step grid tail (the grid then reaches ~37 standard deviations; deltas down to ~1e-300)
_MIN_STEP_TAIL = 1e-305
MAX_COARSEN = 4  # doublings of the grid tried to fit the memory cap (a 16x coarser grid at most)


#: a delta target at least this large is first composed without tilt (its round-off bound, ~1e-13, is
#: small against it, and a tilt fattens the heavy upper tail of a subsampled step, so the window and the
#: FFT grow up to 40x); the slack check below re-tilts where the bound is not small after all
_UNTILTED_DELTA = 1e-8
#: an untilted try is kept where its slack is at most this share of delta (and skipped where its input errors exceed it)
_UNTILTED_SHARE = 1e-3
_CACHE_ENTRIES = 32  # cached PMF lists, compositions and tilts per PLD (the oldest go first)
#: a subsampled step's tails beyond this P-mass are built on cells K h wide (PLD._coarse_tails)
_COARSE_TAIL_MASS = 1e-8
#: ... with K h at most this times the composed standard deviation
COARSE_TAIL_WIDTH = 0.02
#: a history whose largest count is below this is composed in one level (measured: two levels are slower
#: at 1e4 steps on the 27-case grid of benchmarks/bench_pld.py, 1.3-3x faster from 1e5, 5-30x at 1e7)
LEVEL_MIN_STEPS = 50_000
#: two levels where the composed standard deviation spans at least this times one step's grid (cells)
_LEVEL_SPREAD = 0.5
#: blocks of _LEVEL_B K^2 steps: the blocks' re-grid then adds about half the first level's discretisation error
_LEVEL_B = 4
#: two levels only where their additive error is at most this times delta (else one level, tilted)
_LEVEL_ERR = 1e-3
#: a composition is not re-tilted for a slack that moves its epsilon by at most this share of the bracket's
#: requested width (PLD._negligible)
_SLACK_SHARE = 0.1
#: a tilted composition's first window is kept where its outside charge moves its epsilon by at most this share of
#: the requested width (PLD._composed_for)
_WINDOW_SHARE = 0.025
#: the ratio of neighbouring rungs of the tilt ladder (convolve.tilt_ladder)
_RUNG = 2.0 ** 0.25
#: the window tail a tilted one-level composition tries first (PLD._composed_for, docs/pld.md Sec. 2.5): its outside
#: mass, a tilted one, is charged at the scale S(eps) = c(tau) e^{K - tau eps} of the delta weights, not in full
TILTED_WINDOW_TAIL = 1e-10
#: PLD._weak_lower: the predicted gap of the whole cells' lower end (in requested widths) from which the lower end is
#: built from halved cells at once, and the composed loss's largest skewness for which the prediction is read
_WEAK_GAP, _WEAK_SKEW = 0.87, 0.04

#: the largest factor by which PLD._heavy_tail_factor coarsens the rule grid
_MAX_HEAVY = 4.0
#: factors of the proxy history whose Chernoff estimate a history of many distinct factors is coarsened by
#: (PLD._proxy_chernoff)
_PROXY_FACTORS = 16
#: the smallest ratio g that PLD._heavy_tail_factor coarsens for (by 2; by 4 from 2 g / _HEAVY_MIN >= 4)
_HEAVY_MIN = 2.0
#: a bracket of many distinct factors screens the two directions on a grid this many times coarser (PLD._screened)
_SCREEN_COARSEN = 8
_MAX_INDEX = 2**52  # grid indices stay exact integers in float64 (and in numpy's int64 arange)


def _nbytes(value) -> int:
    """Bytes of a cached composition's arrays, the entries the memory cap evicts. The single-step PMF
    lists are not counted: every composition of their grid needs them again (a long history's list can
    exceed the cap by itself, and evicting it made each of its uses rebuild it)."""
    if isinstance(value, convolve.Composed):
        return value.mass.nbytes + (value.err_atoms.nbytes if value.err_atoms is not None else 0)
    return 0


def _step_sd(pair) -> float:
    """Rough standard deviation of one step's loss (picks the first grid spacing only)."""
    if isinstance(pair, discretise.GaussianPair):
        return pair.mu
    if isinstance(pair, discretise.SubsampledGaussianPair):
        return pair.q * math.sqrt(math.expm1(min(1.0 / (pair.s * pair.s), 700.0)))
    return max(pair.e0, 1e-6)




class PLD:
    r"""Privacy loss distribution of a composition, with a certified bracket on every epsilon and delta.

    Built lazily: the object records which single-event PLDs are composed how often; the discrete PLDs are
    built and composed (one FFT per direction and side; a long history in two levels, blocks re-gridded,
    docs/pld.md Sec. 2.11) only when a number is asked, and kept for further questions. Both neighbouring directions (remove: P vs Q, add: Q vs P) are kept; delta is the larger.

    For every epsilon, ``delta_bracket`` returns (lower, upper) with lower <= delta(epsilon) <= upper for
    the true composition: the upper end composes dominating discrete pairs (``discretise``, "connect the
    dots"), the lower end dominated ones, and both are widened by the round-off bound of the FFT and the
    Chernoff bound of the truncated mass (``convolve``). ``bracket(delta)`` inverts both. An epsilon that
    cannot be certified (the bounds on round-off and truncation, or the mass at +inf, reach delta) is
    ``inf``.

    Use :func:`from_event` to build one (the constructor trusts its arguments).

    Args:
        factors: (pair, count) pairs of the private ``privcal.privacy_loss.discretise`` pair classes (internal; build
            with :func:`from_event`).
        value_discretization: the grid spacing h of the loss in nats, in (0, inf), or None (default:
            chosen automatically from ``accuracy`` when a number is asked).
        accuracy: requested relative width of the epsilon bracket, in (0, 1); default 1e-3.
        absolute_accuracy: requested absolute width of the epsilon bracket, in (0, inf); default 1e-4
            (the larger width is used).
        memory_limit: cap, in bytes, of the arrays of one evaluation, in (0, inf); default 256 MiB.
        realisable: whether the composed pairs are realisable worst cases (see :attr:`realisable`);
            default True.
    """

    @property
    def realisable(self) -> bool:
        """Whether the lower end of a bracket is a lower bound on the epsilon of the mechanisms
        themselves (their pairs are realisable worst cases, in both orders: Gaussian, Laplace, (epsilon,
        delta) events, Poisson add/remove and without-replacement replace-one subsampling, and
        without-replacement zero-out in a replace-one history), not only of the dominating pairs priced
        (without-replacement zero-out under its own relation, priced as replace-one at twice the sensitivity;
        without replacement in an add/remove history, realised in the removal order only). Set by the
        accounting layer (``privcal.accounting.pairs.realisable``, the table in docs/pld.md section 1.5)."""
        return self._realisable

    def __init__(
        self,
        factors: list,
        *,
        value_discretization: Optional[float] = None,
        accuracy: float = DEFAULT_ACCURACY,
        absolute_accuracy: float = DEFAULT_ABSOLUTE_ACCURACY,
        memory_limit: float = DEFAULT_MEMORY_LIMIT,
        realisable: bool = True,
    ):
        heap.tune_heap()  # once per process: glibc's heap thresholds for the large temporary arrays (privacy_loss.heap)
        self._factors = list(factors)
        self._realisable = bool(realisable)
        self.value_discretization = value_discretization
        self.accuracy = accuracy
        self.absolute_accuracy = absolute_accuracy
        self.memory_limit = memory_limit
        self._cache: dict = {}
        self._cache_bytes: dict = {}
        self._brackets: dict = {}
        self._chosen_h: Optional[float] = None
        self._notes: list = []
        self._met: dict = {}
        self._last_parts = (0.0, 0.0)
        self._seen: dict = {}  # (upper, direction) -> compositions computed so far (all certified)
        self._dirs: dict = {}  # pair key -> its direction objects
        self._plans: dict = {}  # small per-grid choices (coarse tails, level block sizes)
        self._grid_cache: dict = {}  # grid cells of the last few (direction, h, tail), shared by both ends
        # (direction, delta) whose untilted try was rejected, and whose upper end was tilted (_composed)
        self._untilted_rejected: set = set()
        self._upper_tilted: set = set()
        # grids on which the lower end is built from halved cells (discretise.lower_from_halves): where a bracket's
        # lower end from whole cells was too weak (PLD._bracket_uncached)
        self._halves: set = set()
        self._tilted_tail: dict = {}  # delta -> the window tail its tilted compositions start on (_composed_for)
        self._dir_upper: dict = {}  # (delta, direction) -> the smallest certified upper end of its epsilon so far
        self._strong = 0  # the direction a screen composes on the fine grid first (PLD._screened)

    # ------------------------------------------------------------------ composition
    def compose(self, other: "PLD") -> "PLD":
        """The composition of this PLD with ``other`` (adaptive composition of the two histories).

        Args:
            other: another PLD; its settings are ignored, this one's are kept.

        Returns:
            A new PLD.
        """
        if not isinstance(other, PLD):
            raise ValueError(f"other must be a PLD, got {other!r}")
        return self._with(_factors_merge(self._factors, other._factors), self._realisable and other._realisable)

    def self_compose(self, count: int) -> "PLD":
        """``count`` adaptive repetitions of this PLD.

        Args:
            count: number of repetitions, an int >= 1.

        Returns:
            A new PLD.
        """
        count = V.positive_int("count", count)
        return self._with([(p, n * count) for p, n in self._factors], self._realisable)

    def _with(self, factors, realisable: bool) -> "PLD":
        return PLD(_factors_merge(factors, []), value_discretization=self.value_discretization,
                   accuracy=self.accuracy, absolute_accuracy=self.absolute_accuracy,
                   memory_limit=self.memory_limit, realisable=realisable)

    # ------------------------------------------------------------------ numbers
    def epsilon(self, delta: float) -> float:
        """Upper bound on epsilon at ``delta``: the upper end of :meth:`bracket` (``inf`` if none can be
        certified; :meth:`accuracy_met` and :attr:`notes` say whether the bracket met the accuracy).

        Args:
            delta: target delta, in (0, 1).

        Returns:
            epsilon, in [0, inf].
        """
        return self.epsilon_unchecked(V.open_unit("delta", delta))

    def delta(self, epsilon: float) -> float:
        """Upper bound on delta at ``epsilon``.

        Args:
            epsilon: in [0, inf).

        Returns:
            delta, in [0, 1].
        """
        return self.delta_bracket_unchecked(V.nonnegative("epsilon", epsilon))[1]

    def bracket(self, delta: float) -> tuple[float, float]:
        """Certified (lower, upper) bounds on the epsilon of the composition at ``delta``.

        Args:
            delta: target delta, in (0, 1).

        Returns:
            (lower, upper), 0 <= lower <= upper <= inf.
        """
        return self.bracket_unchecked(V.open_unit("delta", delta))

    def delta_bracket(self, epsilon: float) -> tuple[float, float]:
        """Certified (lower, upper) bounds on the delta of the composition at ``epsilon``.

        Args:
            epsilon: in [0, inf).

        Returns:
            (lower, upper), 0 <= lower <= upper <= 1.
        """
        return self.delta_bracket_unchecked(V.nonnegative("epsilon", epsilon))

    # ------------------------------------------------------------------ kernels
    def bracket_unchecked(self, delta: float) -> tuple[float, float]:
        """:meth:`bracket` for a delta already checked. Certified bracket, the grid adapted (docs/pld.md Sec. 2.8):
        from :meth:`_auto_h`, refined where the discretisation dominates the width (it shrinks like h^2) and
        coarsened where the round-off bound does (it grows like 1/h); every grid's bracket is certified, so the
        answer is their intersection. Records whether the requested width was met (:meth:`accuracy_met`).

        Args:
            delta: target delta, in (0, 1) (not checked).

        Returns:
            (lower, upper), 0 <= lower <= upper <= inf.
        """
        if not self._factors:
            self._met[delta] = True
            return 0.0, 0.0
        key = ("bracket", delta, self.value_discretization, self.accuracy, self.absolute_accuracy, self.memory_limit)
        if key not in self._brackets:  # epsilon, bracket and accuracy_met ask for the same number
            self._brackets[key] = self._bracket_uncached(delta)
        return self._brackets[key]

    def _bracket_uncached(self, delta: float) -> tuple[float, float]:
        if self.value_discretization is not None:
            lo, hi = self._bracket_at(delta, self.value_discretization)
            if hi - lo > self._width(hi) and self.value_discretization not in self._halves:
                lo = max(lo, self._lower_from_halves(delta, self.value_discretization, lo))
            self._met[delta] = hi - lo <= self._width(hi)
            if not self._met[delta]:
                self._note(f"delta={delta:g}: bracket [{lo:.6g}, {hi:.6g}] is wider than the requested "
                           f"accuracy on the fixed grid value_discretization={self.value_discretization:g}")
            return lo, hi
        h = self._start_h(delta)
        h0 = h
        for k in range(MAX_COARSEN + 1):  # the composed window may not fit where one step does
            try:
                lo, hi = self._bracket_at(delta, h)
                break
            except MemoryLimitError:
                if k == MAX_COARSEN:
                    raise
                h *= 2.0
        if h != h0:
            self._note(f"the grid was coarsened from spacing {h0:.3g} to {h:.3g} to fit memory_limit "
                       f"= {self.memory_limit / 2**20:.0f} MB")
        tried = {h}
        strict_tried = False
        for _ in range(MAX_REFINE_BRACKET):
            if hi - lo <= self._width(hi) or self._inf_mass_blocks(delta):
                break
            disc, roff = self._last_parts
            if not strict_tried and delta >= _UNTILTED_DELTA and disc <= 0.98 * self._width(hi) < disc + roff:
                # the discretisation alone fits: the round-off of an untilted composition tipped it over. The
                # same grid, every composition tilted and held to 1e-6 delta, costs less than a finer grid
                strict_tried = True
                lo_s, hi_s = self._bracket_at(delta, h, strict=True)
                lo, hi = max(lo, lo_s), min(hi, hi_s)  # both brackets are certified
                continue
            disc, roff = self._last_parts
            if disc >= roff and h not in self._halves:
                # the lower end from halved cells on the same grid before a finer one (docs/pld.md Sec. 2.3
                # "Halves"): it takes about half the variance the pairing of whole cells takes from each step's
                # loss, at the price of the grid's midpoints and one dominated composition (a finer grid costs both
                # ends on twice the cells); where it is still too wide, a finer grid builds its lower end so too
                lo_h = self._lower_from_halves(delta, h, lo)
                disc = max(disc - max(lo_h - lo, 0.0), 0.0)
                lo = max(lo, lo_h)
                if hi - lo <= self._width(hi):
                    break
            gap = (hi - lo) / self._width(hi) if math.isfinite(hi) else math.inf
            # the grid is a power of two (the rule grid, its doublings for memory and for a heavy tail; a user's grid
            # returned above) and moves by 2 or 4: the next grid is one too, so a subsampled step keeps its coarse
            # tails there (_coarse_tails); at q = 1e-3 the lower end on h / 2 costs less than on h / 1.5 (fewer
            # cells) and is tighter. 2 where it is expected to fit with 10 % to spare (the width shrinks like h^2)
            factor = 2.0 if math.sqrt(gap) <= 1.9 else 4.0
            h_next = h * factor if roff > disc else h / factor
            if h_next in tried:
                break
            tried.add(h_next)
            if h in self._halves and h_next < h:
                self._halves.add(h_next)
            if h_next < h:  # a finer grid: the lower end first, the weaker side (docs/pld.md Sec. 2.8); only of the
                # directions that can raise it (:meth:`_raising`)
                try:
                    lo = max(lo, max((epsilon_side(c, delta, upper=False)
                                      for c in self._composed(h_next, False, delta, both=False,
                                                              dirs=self._raising(delta, lo))), default=lo))
                except MemoryLimitError:
                    self._note(f"delta={delta:g}: a finer grid (spacing {h_next:.3g}) exceeds memory_limit; "
                               "the bracket is wider than the requested accuracy")
                    break
                if hi - lo <= self._width(hi):
                    h = h_next
                    break
            try:
                lo_next, hi_next = self._bracket_at(delta, h_next)
            except MemoryLimitError:  # the accuracy is out of reach under the cap: keep the last bracket
                self._note(f"delta={delta:g}: a finer grid (spacing {h_next:.3g}) exceeds memory_limit; "
                           "the bracket is wider than the requested accuracy")
                break
            h = h_next
            lo, hi = max(lo, lo_next), min(hi, hi_next)  # both brackets are certified
        self._chosen_h = h
        met = hi - lo <= self._width(hi)
        self._met[delta] = met
        if not met:
            self._note(f"delta={delta:g}: bracket [{lo:.6g}, {hi:.6g}] is wider than the requested accuracy "
                       f"(relative {self.accuracy:g}, absolute {self.absolute_accuracy:g})")
        return lo, hi

    def _weak_lower(self, delta: float, h: float, d: int, up: float) -> bool:
        """Whether the lower end of direction ``d`` from whole cells on the grid h is predicted to leave the bracket
        too wide, so that it is built from halved cells at once (PLD._bracket_uncached would build them only after
        composing it). A heuristic read from the PMFs' moments (either choice gives a certified bracket): the
        composed ends differ by dM in mean and dV in variance (count-weighted per-step differences), and for a loss
        near Gaussian epsilon ~ M + z sqrt(V) moves by gap = dM + (epsilon - M) dV / (2 V). Predicted weak where
        gap >= _WEAK_GAP of the requested width and the composed loss's skewness is at most _WEAK_SKEW (a heavier
        tail, e.g. q = 1e-3 over 1,000 steps, makes the Gaussian reading overstate the gap 3-40x). Measured on the
        27-case grid at delta = 1e-5, 1e-9, 1e-12 (the whole cells' gap against this prediction): every bracket
        the whole cells left too wide is predicted (gap >= 0.88, skewness <= 0.039), and two of the 81 that fit are
        predicted too (1e-12 and 1e-9, q = 1e-3, sigma = 0.8, 1e5 steps). Builds the whole cells' lower PMFs
        (from the cells the upper end left cached); the skewness only where the gap is large."""
        tails = self._tails(delta)
        ups = self._pmfs(h, True, tails, dirs=(d,))[0]
        lows = self._pmfs(h, False, tails, dirs=(d,))[0]
        M = V = dM = dV = 0.0
        for (pu, n), (pl, _) in zip(ups, lows):
            _, mu, vu = convolve.pmf_moments(pu)
            _, ml, vl = convolve.pmf_moments(pl)
            M += n * mu * h
            V += n * vu * h * h
            dM += n * (mu - ml) * h
            dV += n * (vu - vl) * h * h
        if not (V > 0 and math.isfinite(up)):
            return False
        if dM + (up - M) * dV / (2.0 * V) < _WEAK_GAP * self._width(up):
            return False
        k3 = 0.0
        for pu, n in ups:
            _, mu, _ = convolve.pmf_moments(pu)
            at, v = pu.points()
            x = (np.arange(v.size, dtype=float) if at is None else np.asarray(at, dtype=float)) + (pu.offset - mu)
            k3 += n * float(np.sum(v * (x * x * x))) * h ** 3  # (not np.dot: BLAS threads spin on the CPU after it)
        return k3 <= _WEAK_SKEW * V ** 1.5

    def _lower_from_halves(self, delta: float, h: float, lo: float) -> float:
        """The certified lower end at ``delta`` on the grid h with the lower ends built from halved cells
        (:func:`discretise.lower_from_halves`; h is added to ``_halves``), of the directions that can raise ``lo``;
        ``lo`` where the grid's midpoints exceed the memory cap."""
        self._halves.add(h)
        try:
            return max((epsilon_side(c, delta, upper=False)
                        for c in self._composed(h, False, delta, both=False, dirs=self._raising(delta, lo))),
                       default=lo)
        except MemoryLimitError:
            return lo

    def _pure_cap(self, upper: float, delta: float) -> float:
        """min(upper, E) when every factor is pure or approximate DP with losses bounded by its eps0
        (Laplace, (eps0, delta0) events): no finite composed loss exceeds E = sum_i n_i eps0_i, so the
        true delta(E) is the mass at +inf, 1 - prod_i (1 - delta0_i)^{n_i}; where that is <= delta the true
        epsilon is <= E (docs/pld.md Sec. 2.9). The +inf mass is bounded above here with its round-off."""
        if not all(isinstance(p, (discretise.LaplacePair, discretise.ApproxDPPair)) for p, _ in self._factors):
            return upper
        exact = sum(Fraction(n) * Fraction(p.e0) for p, n in self._factors)
        E = float(exact)
        if Fraction(E) < exact:
            E = math.nextafter(E, math.inf)
        log_keep = math.fsum(n * math.log1p(-p.inf_mass) for p, n in self._factors if p.inf_mass > 0)
        inf_mass = -math.expm1(log_keep) if log_keep > -math.inf else 1.0
        inf_mass = inf_mass * (1.0 + 8 * discretise.U * (len(self._factors) + 4)) + 4 * discretise.U * inf_mass
        return min(upper, E) if inf_mass <= delta else upper

    def _width(self, hi: float) -> float:
        return max(self.accuracy * hi, self.absolute_accuracy) * (1.0 + 1e-9)

    def _inf_mass_blocks(self, delta: float) -> bool:
        """Whether the exact mass at +inf (of the (epsilon, delta) events) alone reaches delta."""
        log_keep = sum(n * math.log1p(-p.inf_mass) if p.inf_mass < 1 else -math.inf
                       for p, n in self._factors if getattr(p, "inf_mass", 0.0) > 0)
        return -math.expm1(log_keep) >= delta if log_keep > -math.inf else True

    def _note(self, text: str) -> None:
        if text not in self._notes:
            self._notes.append(text)

    @property
    def notes(self) -> tuple:
        """What the numbers given so far did not meet or had to adapt (a requested accuracy not reached,
        a grid coarsened to fit ``memory_limit``), one sentence each, for a front door to report."""
        return tuple(self._notes)

    @property
    def accuracy_by_delta(self) -> dict:
        """delta -> whether the bracket computed at that delta met the requested accuracy, for the deltas
        asked so far (no computation; a front door reads it after ``epsilon`` or ``bracket``)."""
        return dict(self._met)

    def accuracy_met(self, delta: float) -> bool:
        """Whether the bracket at ``delta`` is within the requested accuracy (computes it if needed).

        Args:
            delta: target delta, in (0, 1).

        Returns:
            True when upper - lower <= max(accuracy * upper, absolute_accuracy).
        """
        delta = V.open_unit("delta", delta)
        if delta not in self._met:
            self.bracket_unchecked(delta)
        return self._met[delta]

    def _fitting_h(self, h: float, delta: Optional[float]) -> float:
        """``h``, or the finest coarser grid (by factors of 2) whose arrays fit ``memory_limit``, with a
        note; MemoryLimitError when none up to ``MAX_COARSEN`` doublings fits."""
        tails = self._tails(delta)
        for k in range(MAX_COARSEN + 1):
            hk = h * 2.0**k
            if self._cells(hk, tails[0]) * BYTES_PER_CELL <= self.memory_limit:
                if k:
                    self._note(f"the grid was coarsened from spacing {h:.3g} to {hk:.3g} to fit memory_limit "
                               f"= {self.memory_limit / 2**20:.0f} MB")
                return hk
        return h  # the check in _composed raises MemoryLimitError, naming the cap

    def epsilon_unchecked(self, delta: float) -> float:
        """The upper end of :meth:`bracket_unchecked` (one definition: ``epsilon``, ``bracket()[1]`` and the
        accountant's epsilon are the same number).

        Args:
            delta: target delta, in (0, 1) (not checked).

        Returns:
            the certified upper bound on epsilon, in [0, inf].
        """
        return self.bracket_unchecked(delta)[1]

    def probe_epsilon(self, delta: float) -> float:
        """Certified upper bound on epsilon on the fixed rule grid only (no lower end, no refinement),
        for calibration probes: a smooth function of the noise, about 10x cheaper than :meth:`epsilon`,
        and never below it (the bracket starts on this grid and only intersects further certified
        brackets), so a sigma accepted by a probe is accepted by what the user later reads.

        Args:
            delta: target delta, in (0, 1).

        Returns:
            epsilon, in [0, inf].
        """
        return self.unchecked_probe_epsilon(V.open_unit("delta", delta))

    def unchecked_probe_epsilon(self, delta: float, coarsen: int = 1) -> float:
        """:meth:`probe_epsilon` for a delta already validated (a calibration's probes: no validation each).

        Args:
            delta: target delta, in (0, 1) (trusted).
            coarsen: the grid spacing times this power of two (a calibration's first, rough phase: still
                a certified upper bound, about ``coarsen`` times cheaper, but not the grid of
                :meth:`epsilon`); default 1.
        """
        if not self._factors:
            return 0.0
        if self.value_discretization is not None:
            return self._pure_cap(self._upper_at(delta, self.value_discretization * coarsen), delta)
        h = self._start_h(delta, coarsen)
        for k in range(MAX_COARSEN + 1):  # as bracket_unchecked: the composed window may not fit where one step does
            try:  # (the same grid the bracket starts on, so the probe is never below epsilon())
                return self._pure_cap(self._upper_at(delta, h), delta)
            except MemoryLimitError:
                if k == MAX_COARSEN:
                    raise
                h *= 2.0

    def _auto_h(self) -> float:
        """The grid of :meth:`epsilon`: the starting spacing of :meth:`_initial_h` (the upper end's
        excess over the converged value measured at most ~3e-4 relative on the 27-case grid of benchmarks/bench_pld.py)."""
        return self._initial_h()

    def delta_bracket_unchecked(self, epsilon: float) -> tuple[float, float]:
        """:meth:`delta_bracket` for an epsilon already checked.

        Args:
            epsilon: in [0, inf) (not checked).

        Returns:
            (lower, upper), 0 <= lower <= upper <= 1.
        """
        if not self._factors:
            return 0.0, 0.0
        h = self.value_discretization or self._auto_h()
        return self._delta_bracket_at(epsilon, h)

    def _initial_h(self) -> float:
        """2 sqrt(accuracy) times the steps' rough root-mean-square standard deviation (the discretisation width,
        which grows like T h^2, is then about half the requested width for a Gaussian-like epsilon; docs/pld.md Sec.
        2.8), at least 1e-6 sd_T (a window of +-20 sd_T of 4e7 cells at most, before the memory cap coarsens it; a
        long history is composed in levels, whose first window follows the block, not T), at most 0.05 and sd_T / 4,
        rounded down to a power of two."""
        var, n_total = 0.0, 0
        for pair, n in self._factors:
            var += n * _step_sd(pair) ** 2
            n_total += n
        sd = math.sqrt(var)
        h = 2.0 * math.sqrt(self.accuracy * var / n_total) if var > 0 else 1e-3
        h = float(min(max(h, sd * 1e-6, 1e-7), 0.05, max(sd, 1e-6) / 4))
        return 2.0 ** math.floor(math.log2(h))  # a power of two: the same grid for nearby settings

    def _cells(self, h: float, tail: float = discretise.TAIL_MASS) -> int:
        """The most grid cells of one step's direction on the grid ``h`` (cached: each PMF build and refinement
        checks it; 20,000 directions' supports took ~0.25 s per check); raises where the loss is beyond the
        grid's index range."""
        key = ("cells", h, tail)
        if key not in self._plans:
            self._plans[key] = self._cells_uncached(h, tail)
        return self._plans[key]

    def _cells_uncached(self, h: float, tail: float) -> int:
        cells = 0
        ds = [d for pair, _ in self._factors for d in self._directions(pair)]
        sub = {side: [d for d in ds if type(d) is discretise.SubsampledDirection and d.remove == side]
               for side in (True, False)}
        rest = [d for d in ds if type(d) is not discretise.SubsampledDirection]
        # the ranges of discretise.grid_range, (a - 1, max(b, a)), as float arrays (subsampled directions of one side
        # in one pass, discretise.grid_bounds): exact integers below the check's 2^52, the same cells as one at a time
        for group in (sub[True], sub[False], rest):
            if not group:
                continue
            a, b = discretise.grid_bounds(group, h, tail)
            lo, hi = a - 1.0, np.maximum(b, a)
            reach = np.maximum(np.abs(lo), np.abs(hi))
            if (reach > _MAX_INDEX).any():  # e.g. a Gaussian of sensitivity / sigma 1e20: mean loss 5e39
                raise MemoryLimitError(
                    f"the privacy loss reaches {float(reach[np.argmax(reach > _MAX_INDEX)]) * h:.3g} nats, beyond "
                    f"what a grid of spacing {h:.3g} can index (2^52 cells from 0): no PLD answer here; the noise is "
                    "far too small for any useful epsilon")
            cells = max(cells, int(np.max(hi - lo)) + 1)
        return cells

    def _check_memory(self, h: float, cells: int) -> None:
        need = cells * BYTES_PER_CELL
        if need > self.memory_limit:
            raise MemoryLimitError(
                f"the PLD grid (spacing {h:.3g}, {cells} cells) needs about {need / 2**20:.0f} MB, above "
                f"memory_limit = {self.memory_limit / 2**20:.0f} MB; relax accuracy (now {self.accuracy:g}) "
                "or value_discretization, or raise memory_limit"
            )

    def _tails(self, delta: Optional[float]) -> tuple[float, float]:
        """(single-step grid tail, composed window tail): small against delta (1e-3 delta in all over
        the steps, 1e-4 delta outside the window), rounded down to a power of ten so nearby deltas share
        a cache entry; the conservative defaults when no delta is given."""
        if delta is None:
            return discretise.TAIL_MASS, convolve.WINDOW_TAIL
        n_total = sum(n for _, n in self._factors)
        step = min(max(1e-3 * delta / n_total, _MIN_STEP_TAIL), 1e-12)
        win = min(max(1e-4 * delta, convolve.WINDOW_TAIL), 1e-9)
        return 10.0 ** math.floor(math.log10(step)), 10.0 ** math.floor(math.log10(win))

    def _pmfs(self, h: float, upper: bool, tails: tuple[float, float], both: bool = False,
              dirs: Optional[tuple] = None) -> list:
        """The discrete single-event PLDs of each direction (of ``dirs``, default all; cached per direction).
        ``both``: build the other end's too where it is not cached yet, each direction's two ends from one
        computation of its grid cells (a bracket needs both; a history of many distinct factors would otherwise
        compute every grid twice). With many factors the lower end that comes with an upper one is kept as its
        dominated cells (:class:`discretise.LowerLater`) and built when it is asked for: a bracket composes the lower
        end of one direction only (:meth:`_bracket_at`), the pairing of the other is never run."""
        dirs = tuple(range(self._n_dirs())) if dirs is None else dirs
        halves = h in self._halves
        end = self._end(h, upper)
        for d in dirs:
            key, later = ("pmf", h, end, tails[0], d), ("pmf later", h, tails[0], d)
            if not upper and not halves and key not in self._cache and later in self._cache:
                keys, lower = self._cache.pop(later)
                lower = lower.build()
                del self._cache_bytes[later]
                for k, pm in zip(keys, lower):
                    STEP_MEMO.put(k, pm)
                self._remember(key, [(pm, n) for pm, (_, n) in zip(lower, self._factors)])
        need = [d for d in dirs if ("pmf", h, end, tails[0], d) not in self._cache]
        # what this call returns, held here: under a tight memory_limit remembering one direction's PMFs can
        # evict another's from the cache before they are read back
        got = {d: self._cache[("pmf", h, end, tails[0], d)] for d in dirs if d not in need}
        if need:
            self._check_memory(h, self._cells(h, tails[0]))
            ds = [self._directions(p) for p, _ in self._factors]
            for d in need:
                other = ("pmf", h, self._end(h, not upper), tails[0], d)
                later = ("pmf later", h, tails[0], d)
                ends = (upper, not upper) if both and other not in self._cache and later not in self._cache else (upper,)
                own = [dd[min(d, len(dd) - 1)] for dd in ds]
                directions = [self._clear(x, h, upper) for x in own]
                if any(x is not y for x, y in zip(directions, own)):  # an atom moved off a grid point: this end only
                    ends = (upper,)
                built: dict = {e: [] for e in ends}
                if len(directions) > discretise.CELLS_KEPT:  # many: stacked, by rows (the grid cells are not kept)
                    built = self._pmfs_many(directions, h, upper, ends, tails[0], later, halves)
                else:
                    for direction, (_, n) in zip(directions, self._factors):
                        cells = self._grid_cache if len(ends) == 1 else {}
                        coarse = self._coarse_tails(h) if isinstance(direction, discretise.SubsampledDirection) else None
                        for e in ends:
                            built[e].append((discretise.pmfs(direction, h, upper=e, tail=tails[0], cells=cells,
                                                         coarse=coarse, halves=halves), n))
                for e in ends[::-1]:
                    if e in built:  # (many factors: a lower end may be kept for later, or not asked)
                        self._remember(("pmf", h, self._end(h, e), tails[0], d), built[e])
                got[d] = built[upper]
        return [got[d] for d in dirs]

    def _end(self, h: float, upper: bool):
        """The cache's name of an end on the grid h: True (upper), False (lower from whole cells) or "halves" (lower
        from halved cells, on the grids in ``_halves``)."""
        return upper or ("halves" if h in self._halves else False)

    def _pmfs_many(self, directions: list, h: float, upper: bool, ends: tuple, tail: float, later,
                   halves: bool = False) -> dict:
        """{end: [(Pmf, count)]} of many directions, from :data:`STEP_MEMO` where kept, the rest built together
        (:func:`discretise.pmfs_many`, without per-atom errors) and kept. Built from nothing, the lower end that
        comes with an upper one is kept as its dominated cells under ``later`` (built if asked for). ``halves``: the
        lower end from halved cells (memo keys end "halves")."""
        coarse = self._coarse_tails(h)
        keys = {e: [StepMemo.key(x, h, tail, coarse, e or ("halves" if halves else False)) for x in directions]
                for e in (True, False)}
        got = {e: [STEP_MEMO.get(k) for k in keys[e]] for e in ends}
        missing = [i for i, pm in enumerate(got[upper]) if pm is None]
        if len(missing) == len(directions):  # nothing kept: one build, the lower end possibly later
            # the lower end later (its dominated cells kept) where a bracket may skip it: two directions not screened.
            # A screened history builds both ends of the direction composed on the fine grid, whose lower end every
            # bracket composes: built at once, the cells (~1.7x the PMFs' bytes) are not held beside them
            later_ok = upper and len(self._factors) <= convolve.GROUP_MIN
            rows = discretise.pmfs_many(directions, h, ends=ends, tail=tail, coarse=coarse, lower_later=later_ok,
                                        per_atom=False, compact=True, halves=halves)
            if isinstance(rows.get(False), discretise.LowerLater):
                self._remember(later, (keys[False], rows.pop(False)))
            got = {e: rows[e] for e in rows}
        else:  # the ends asked for the directions whose first end is not kept (bitwise what one build gives)
            if missing:
                rows = discretise.pmfs_many([directions[i] for i in missing], h, ends=ends, tail=tail,
                                            coarse=coarse, per_atom=False, compact=True, halves=halves)
                for e in ends:
                    for i, pm in zip(missing, rows[e]):
                        got[e][i] = pm
            # the other end only where every direction's is at hand (else it is built when asked for)
            got = {e: got[e] for e in ends if all(pm is not None for pm in got[e])}
        for e in got:
            for k, pm in zip(keys[e], got[e]):
                STEP_MEMO.put(k, pm)
        return {e: [(pm, n) for pm, (_, n) in zip(got[e], self._factors)] for e in got}

    def _n_dirs(self) -> int:
        """1 when every factor's pair is symmetric (one direction), else 2."""
        return 1 if all(p.symmetric for p, _ in self._factors) else 2

    def _coarse_tails(self, h: float):
        """(K, thr) for :func:`discretise.pmfs`: a subsampled step's cells are K h wide where the P-mass beyond
        is below thr = _COARSE_TAIL_MASS, with K the largest power of two <= 64 such that K h is at most
        COARSE_TAIL_WIDTH times the composed standard deviation (the tails' discretisation then stays
        second order against the spread every step's loss is smoothed by); None on a grid that is not a
        power of two (a user's value_discretization: the cell widths would not be exact) or where K < 4."""
        if h != 2.0 ** math.floor(math.log2(h)):
            return None
        key = ("coarse tails", h)
        if key not in self._plans:
            sd = math.sqrt(sum(n * _step_sd(p) ** 2 for p, n in self._factors))
            k = int(min(64, 2 ** math.floor(math.log2(max(COARSE_TAIL_WIDTH * sd / h, 1.0)))))
            self._plans[key] = (k, _COARSE_TAIL_MASS) if k >= 4 else None
        return self._plans[key]

    def _directions(self, pair) -> tuple:
        """``pair.directions()``, the same objects each time (the grid cells are kept per direction)."""
        key = pair.key()
        if key not in self._dirs:
            self._dirs[key] = pair.directions()
        return self._dirs[key]

    def _clear(self, direction, h: float, upper: bool):
        """:func:`discretise.clear_of_grid` of ``direction``, the same object each time (the grid cells are kept
        per direction object)."""
        if not isinstance(direction, (discretise.LaplacePair, discretise.ApproxDPPair)):
            return direction
        key = ("clear", direction.key(), h, upper)
        if key not in self._dirs:
            self._dirs[key] = discretise.clear_of_grid(direction, h, upper)
        return self._dirs[key]

    def _remember(self, key, value) -> None:
        """Cache ``value``; the oldest entries go first once there are more than _CACHE_ENTRIES or their
        arrays exceed ``memory_limit`` (never the new one). A calibration's probes and a bracket's two
        sides and refinements all reuse what is kept; clearing everything at once made some brackets
        compute their compositions twice."""
        self._cache[key] = value
        self._cache_bytes[key] = _nbytes(value)
        while len(self._cache) > 1 and (len(self._cache) > _CACHE_ENTRIES
                                        or sum(self._cache_bytes.values()) > self.memory_limit):
            oldest = next(iter(self._cache))
            del self._cache[oldest]
            del self._cache_bytes[oldest]

    def _tilt(self, pm, h: float, upper: bool, tails, d: int, delta, epsilon) -> float:
        """:func:`convolve.choose_tilt` for this target, cached (it evaluates every factor's MGF). Shared by the two
        ends of a direction (the first end asked chooses it): the dominating and dominated PMFs differ by the
        discretisation only, so their Chernoff-optimal rungs of the ladder are the same or neighbours, and any
        tilt gives a certified answer (docs/pld.md Sec. 2.5)."""
        key = ("tilt", h, tails, d, delta, epsilon)
        if key not in self._cache:
            search = self._search(pm, h, tails, d, delta) if epsilon is None else None
            self._remember(key, convolve.choose_tilt(pm, delta=delta, epsilon=epsilon, search=search))
            # the search is read here last: let its MGF rows go (their padded blocks reach 128 MB at 10,000 groups)
            self._cache.pop(("search", h, tails, d, delta), None)
            self._cache_bytes.pop(("search", h, tails, d, delta), None)
        return self._cache[key]

    def _search(self, pm, h: float, tails, d: int, delta: float):
        """:func:`convolve.chernoff_search` of direction ``d`` for a delta target, cached until :meth:`_tilt` has read it
        (the start grid's choice reads it first)."""
        key = ("search", h, tails, d, delta)
        if key not in self._cache:
            self._remember(key, convolve.chernoff_search(pm, delta=delta))
        return self._cache[key]

    def _start_h(self, delta: float, coarsen: int = 1) -> float:
        """The first grid of a bracket at ``delta`` (and of the probe, the same grid): :meth:`_auto_h` times
        ``coarsen``, coarsened to fit the memory cap, then by :meth:`_heavy_tail_factor` below _UNTILTED_DELTA.
        A heuristic: every grid gives a certified bracket, and the refinement takes over where it is too wide."""
        h = self._fitting_h(self._auto_h() * coarsen, delta)
        if delta < _UNTILTED_DELTA:
            h *= self._heavy_tail_factor(h, delta)
        return h

    def _heavy_tail_factor(self, h: float, delta: float) -> float:
        """A power of two by which the rule grid of :meth:`_initial_h` may be coarsened at ``delta``: 2^floor(log2 g)
        for g = the Chernoff estimate of epsilon over that of a Gaussian loss with the same variance, capped at
        _MAX_HEAVY (1 where g < 2). The rule sets h from the composed standard deviation, so that the
        discretisation width (which grows like T h^2) is about half the requested width when epsilon is about a
        Gaussian's. A heavy upper tail (a subsampled step at small q and small delta) puts epsilon g times further
        out: the requested width is g times larger, and a grid about sqrt(g) to g times coarser still meets it
        (measured on benchmarks/bench_pld.py's grid: the width on the coarsened grid is 0.2-0.8 of the
        requested one where g >= 2). Applied only below _UNTILTED_DELTA: at larger deltas the Chernoff estimate of
        such a step can be 3x its epsilon (q = 1e-3, 1e3 steps, sigma 0.8, delta 1e-5), which this ratio would
        mistake for a heavy tail. For a history of more than GROUP_MIN distinct factors the estimate is a proxy's
        (:meth:`_proxy_chernoff`: every factor's PMFs on the rule grid would cost seconds, wasted where the grid is
        coarsened)."""
        sd = math.sqrt(sum(n * _step_sd(p) ** 2 for p, n in self._factors))
        if not sd > 0:
            return 1.0
        tails = self._tails(delta)
        g = 0.0
        try:
            if len(self._factors) > convolve.GROUP_MIN:
                g = self._proxy_chernoff(h, tails, delta)
            else:  # direction by direction: once the factor is capped, the others cannot change it (the add
                # direction of a subsampled step, light-tailed, is then not built on a grid it will not be composed on)
                cap = _MAX_HEAVY * _HEAVY_MIN / 2.0 * gaussian_chernoff_epsilon(sd, delta)
                for d in range(self._n_dirs()):
                    pm = self._pmfs(h, True, tails, dirs=(d,))[0]
                    g = max(g, convolve.chernoff_epsilon(self._search(pm, h, tails, d, delta)))
                    if g >= cap:
                        break
        except MemoryLimitError:  # the bracket's own grid loop coarsens it, or names the cap
            return 1.0
        g /= gaussian_chernoff_epsilon(sd, delta)
        if not (math.isfinite(g) and g >= _HEAVY_MIN):
            return 1.0
        return float(2.0 ** math.floor(math.log2(min(g * 2.0 / _HEAVY_MIN, _MAX_HEAVY))))

    def _proxy_chernoff(self, h: float, tails, delta: float) -> float:
        """The Chernoff estimate of epsilon (the largest over the directions) of a proxy of a history of more than
        GROUP_MIN distinct factors: every k-th factor, k = ceil(factors / _PROXY_FACTORS), its count times k (about
        the same number of steps), built for this estimate alone on ``h`` times _MAX_HEAVY (the estimate hardly
        depends on the grid; every factor's build on the rule grid costs seconds at 10,000 groups). A grid
        heuristic (:meth:`_heavy_tail_factor`), not a bound."""
        k = -(-len(self._factors) // _PROXY_FACTORS)
        picked = [(pair, n * k) for pair, n in self._factors[::k]]
        h = h * _MAX_HEAVY
        ds = [self._directions(p) for p, _ in picked]
        best = 0.0
        for d in range(self._n_dirs()):
            pm = []
            for dd, (pair, n) in zip(ds, picked):
                direction = self._clear(dd[min(d, len(dd) - 1)], h, True)
                coarse = self._coarse_tails(h) if isinstance(direction, discretise.SubsampledDirection) else None
                pm.append((discretise.pmfs(direction, h, upper=True, tail=tails[0], coarse=coarse), n))
            best = max(best, convolve.chernoff_epsilon(convolve.chernoff_search(pm, delta=delta)))
        return best

    def _composed(self, h: float, upper: bool, delta: Optional[float] = None,
                  epsilon: Optional[float] = None, both: bool = True, strict: bool = False,
                  dirs: Optional[tuple] = None) -> list:
        """The composed PLD of each direction, tilted for the target (``delta``, or ``epsilon``, or
        neither: no tilt), cached by grid, side, tails and tilt. For a delta target the first tilt
        comes from the Chernoff estimate of epsilon; where its round-off bound at the epsilon found is
        not small against delta, the composition is redone with the tilt that minimises the bound there
        (docs/pld.md Sec. 2.5). A long history is composed in two levels where that is certified tightly
        enough (:meth:`_composed_levels`, docs/pld.md Sec. 2.11). ``dirs``: only these directions (default all),
        in that order."""
        tails = self._tails(delta)
        K = self._level_k(h, tails) if (delta is not None or epsilon is not None) else 0
        out = []
        dirs = tuple(range(self._n_dirs())) if dirs is None else dirs
        for d, pm in zip(dirs, self._pmfs(h, upper, tails, both, dirs)):
            if K:
                c = self._composed_levels(h, upper, tails, d, pm, self._tilt(pm, h, upper, tails, d, delta, epsilon), K)
                if c is not None and (delta is None or level_ok(c, delta)):
                    out.append(c)
                    continue
            tilt = 0.0
            # delta >= _UNTILTED_DELTA: an untilted first try -- unless its input-error term alone, known before
            # composing, would exceed the 1e-3 delta that try allows: then tilted at once, held to the same
            # 1e-3 delta (its slack is then far smaller; a stricter re-tilt would compose twice)
            relaxed = delta is not None and epsilon is None and delta >= _UNTILTED_DELTA and not strict
            # ... or where an untilted try of this direction at this delta was rejected already (on any grid, either
            # end), or, for a history of many distinct factors (whose untilted round-off grows with them), where this
            # direction's upper end was tilted: its other compositions would be rejected alike (at 30,000 groups
            # every lower end was composed twice, ~40 % of the bracket)
            known = (d, delta) in self._untilted_rejected or (
                not upper and len(self._factors) > convolve.GROUP_MIN and (d, delta) in self._upper_tilted)
            if not relaxed or known or untilted_local(pm, h) > _UNTILTED_SHARE * delta:
                tilt = self._tilt(pm, h, upper, tails, d, delta, epsilon) if (delta is not None or epsilon is not None) else 0.0
            c = self._composed_for(pm, h, upper, tails, tilt, d, delta if epsilon is None else None)
            if delta is not None and epsilon is None:
                e0 = convolve.epsilon_for(c, delta)
                # a tilted first try re-tilts above 1e-6 delta; an untilted one (delta >= _UNTILTED_DELTA) only
                # where its slack exceeds 1e-3 delta (the bracket includes the slack, and its width check
                # refines the grid if the slack ever decides it)
                allowed = _UNTILTED_SHARE * delta if relaxed else 1e-6 * delta
                if math.isfinite(e0) and convolve.slack(c, e0) > allowed and (strict or not self._negligible(c, e0, delta)):
                    if tilt == 0.0:
                        self._untilted_rejected.add((d, delta))
                    tilt2 = self._tilt(pm, h, upper, tails, d, None, e0)
                    if tilt > 0.0 and not strict and tilt * _RUNG < tilt2:
                        # first the saddlepoint rung itself (choose_tilt's is SP_BELOW under it): its window is
                        # shorter than the epsilon-optimal tilt's, and its slack is often negligible already
                        c1 = self._composed_for(pm, h, upper, tails, tilt * _RUNG ** convolve.SP_BELOW, d, delta)
                        if convolve.slack(c1, e0) < convolve.slack(c, e0):
                            c = c1
                        if self._negligible(c, e0, delta):
                            tilt2 = c.tilt
                    if tilt2 != c.tilt:
                        c2 = self._composed_for(pm, h, upper, tails, tilt2, d, delta)
                        if convolve.slack(c2, e0) < convolve.slack(c, e0):
                            c = c2
                if upper and c.tilt > 0:
                    self._upper_tilted.add((d, delta))
            out.append(c)
        return out

    def _negligible(self, c: convolve.Composed, e0: float, delta: float) -> bool:
        """Whether the slack of ``c`` at its epsilon ``e0`` moves that epsilon by at most _SLACK_SHARE of the
        bracket's requested width there (a heuristic: the bracket is certified whatever the tilt, docs/pld.md
        Sec. 2.5). A composition re-tilted only for a slack below that gains no accuracy that counts, and its
        window can be several times longer (the tilted law's tail moves out with the tilt)."""
        return convolve.slack(c, e0) <= _SLACK_SHARE * self._allowance(c, e0, delta)

    def _allowance(self, c: convolve.Composed, e0: float, delta: float) -> float:
        """The part of delta that moves the epsilon ``e0`` of ``c`` by the bracket's requested width there: delta(eps)
        falls with slope P(L > eps) - delta(eps) (the derivative of sum_l y_l (1 - e^{eps - l})_+ is -sum_{l > eps}
        y_l e^{eps - l}), so a slack s moves eps by about s / (P(L > e0) - delta); -inf where that slope is not
        positive."""
        j = c.above(e0)
        slope = float(np.sum(c.mass[j:])) + c.inf_mass - delta
        return self._width(e0) * slope if slope > 0 else -math.inf

    def _level_k(self, h: float, tails) -> int:
        """K of a two-level composition (0: one level), docs/pld.md Sec. 2.11: the history's largest count n
        is composed in blocks of B = _LEVEL_B K^2 steps on the grid h, and the blocks on the grid K h.
        K ~ n^(1/4) balances the two FFT lengths (the first grows like K, the second like n^(1/2) / K).
        Only where the composed spread, not one step's grid, sets the one-level FFT length: n >=
        LEVEL_MIN_STEPS and sd_T / h >= _LEVEL_SPREAD times one step's grid cells (a step whose grid is
        long -- the heavy upper tail of a subsampled step at small q -- is in every block again)."""
        n = max(n for _, n in self._factors)
        if n < LEVEL_MIN_STEPS:
            return 0
        sd = math.sqrt(sum(k * _step_sd(p) ** 2 for p, k in self._factors))
        if sd / h < _LEVEL_SPREAD * self._cells(h, tails[0]):
            return 0
        return int(2 ** round(math.log2(n ** 0.25)))

    def _level_block(self, K: int) -> int:
        """The block size B of a two-level composition: a divisor of the largest count n in
        [_LEVEL_B K^2 / 2, 2 _LEVEL_B K^2], the nearest to _LEVEL_B K^2 (then n is m whole blocks, and no
        remainder block is composed: T = 1e5 or 1e7 steps have such divisors), else _LEVEL_B K^2."""
        n = max(n for _, n in self._factors)
        key = ("level block", n, K)
        if key not in self._plans:
            b0 = _LEVEL_B * K * K
            best = b0
            for step in range(0, b0 + 1):
                if b0 + step <= 2 * b0 and n % (b0 + step) == 0:
                    best = b0 + step
                    break
                if b0 - step >= b0 // 2 and n % (b0 - step) == 0:
                    best = b0 - step
                    break
            self._plans[key] = best
        return self._plans[key]

    def _composed_levels(self, h: float, upper: bool, tails, d: int, pm, tilt: float, K: int):
        """:func:`convolve.compose_levels` of direction ``d`` (cached; None where a block exceeds the memory
        cap), blocks of :meth:`_level_block` steps."""
        key = ("levels", h, self._end(h, upper), tails, d, tilt, K)
        if key not in self._cache:
            try:
                c = convolve.compose_levels(pm, K, self._level_block(K), upper, tails[1], tilt,
                                            check=lambda N: self._check_memory(h, N))
            except MemoryLimitError:
                c = None
            if c is not None:
                seen = self._seen.setdefault((upper, d), [])
                seen.append(c)
                if len(seen) > 12:
                    del seen[0]
            self._remember(key, c)
        return self._cache[key]

    def _composed_for(self, pm, h: float, upper: bool, tails, tilt: float, d: int, delta: Optional[float]):
        """:meth:`_composed_one` at ``tilt``; for a delta target and a tilted one-level composition first on the
        window of the tail this delta's compositions use (TILTED_WINDOW_TAIL at first), kept where its outside charge
        at its own epsilon moves that epsilon by at most _WINDOW_SHARE of the requested width
        (:meth:`_allowance`). Otherwise composed again on the window of that tail times a tenth of the allowed
        charge over the charge found (the Chernoff charge is about proportional to the tail), rounded down to a power
        of ten and at least ``tails[1]``; every later composition at this delta starts there. Where the Chernoff
        bound at the tilt is loose by ~1e7, S(eps) >> delta (q = 1e-3, sigma = 1.1, 1e3-1e4 steps), that is ~1e-14
        to 1e-16 (docs/pld.md Sec. 2.5). A heuristic: every window's bracket is certified."""
        tail = self._tilted_tail.get(delta, TILTED_WINDOW_TAIL)
        if delta is None or not tilt > 0.0 or len(pm) > convolve.GROUP_MIN or tails[1] >= tail:
            return self._composed_one(pm, h, upper, tails, tilt, d)
        c = self._composed_one(pm, h, upper, tails, tilt, d, tail)
        e0 = convolve.epsilon_for(c, delta)
        if not math.isfinite(e0):
            return c
        charge = c.outside * convolve.scale_at(c, e0)
        allowed = _WINDOW_SHARE * self._allowance(c, e0, delta)
        if charge > allowed:
            ratio = 0.1 * allowed / charge if allowed > 0 else 0.0
            tail = tails[1] if not ratio > 0 else max(tails[1], 10.0 ** math.floor(math.log10(tail * ratio)))
            self._tilted_tail[delta] = tail
            c = self._composed_one(pm, h, upper, tails, tilt, d, tail)
        return c

    def _composed_one(self, pm, h: float, upper: bool, tails, tilt: float, d: int = 0, tail: float = 0.0):
        """The composition of ``pm`` at ``tilt`` on the window of tail ``tail`` (default: ``tails[1]``), cached."""
        # the key names the PMFs by id: the composition holds them (``_factors``), so while the entry lives
        # their id cannot be reused by other PMFs (another direction's, or a rebuild after an eviction)
        tail = tail or tails[1]
        key = ("composed", h, upper, tails, d, id(pm[0][0]), tilt, tail)
        if key not in self._cache:
            c = convolve.compose(pm, tail, tilt, check=lambda N: self._check_memory(h, N))
            c.__dict__["_factors"] = pm
            self._remember(key, c)
            seen = self._seen.setdefault((upper, d), [])
            seen.append(self._cache[key])
            if len(seen) > 12:
                del seen[0]
        return self._cache[key]

    def _upper_at(self, delta: float, h: float) -> float:
        return max(epsilon_side(c, delta, upper=True) for c in self._composed(h, True, delta, both=False))

    def _bracket_at(self, delta: float, h: float, strict: bool = False) -> tuple[float, float]:
        """Certified bracket on one grid; records (discretisation gap, round-off widening) of it. ``strict``:
        no untilted first try (every composition tilted, its slack held to 1e-6 delta)."""
        # few factors: the upper ends alone (their grid cells stay cached for a lower end that is needed); many:
        # both ends of each direction from one computation of its cells (the cache would not hold them)
        few = len(self._factors) * self._n_dirs() <= discretise.CELLS_KEPT
        dirs = self._screened(delta, h, strict)
        ups = self._composed(h, True, delta, strict=strict, both=not few, dirs=dirs)
        up_d = [epsilon_side(c, delta, upper=True) for c in ups]
        for d, e in zip(dirs if dirs is not None else range(len(ups)), up_d):
            self._upper_seen(delta, d, e)
        up = max(up_d)
        if dirs is not None and len(dirs) > 1 and math.isfinite(up):  # the direction to screen against next time
            self._strong = dirs[up_d.index(up)]
        # the lower end: epsilon = max over the directions, so any direction's certified lower end bounds it from
        # below; a direction whose certified upper end is <= the lower end found cannot raise it (its own lower
        # end is below its upper end): its dominated composition is skipped (the same bracket, bit for bit)
        lo, los = 0.0, []
        names = list(dirs) if dirs is not None else list(range(len(ups)))
        for i in sorted(range(len(ups)), key=lambda i: -up_d[i]):
            if los and not up_d[i] > lo:
                continue
            if not los and few and not strict and h not in self._halves and self._weak_lower(delta, h, names[i], up):
                self._halves.add(h)
            c = self._composed(h, False, delta, strict=strict, both=False, dirs=(names[i],))[0]
            los.append(c)
            lo = max(lo, epsilon_side(c, delta, upper=False))
        raw_up = max(convolve.epsilon_for(c, delta) for c in ups)
        raw_lo = max(convolve.epsilon_for(c, delta) for c in los)
        disc = max(raw_up - raw_lo, 0.0)
        roff = (up - raw_up) + max(raw_lo - lo, 0.0) if math.isfinite(up) else math.inf
        self._last_parts = (disc, roff)
        up = self._pure_cap(up, delta)
        return min(lo, up), up

    def _screened(self, delta: float, h: float, strict: bool) -> Optional[tuple]:
        """The directions whose upper end on the grid ``h`` the bracket needs (None: all), docs/pld.md Sec. 2.8.
        epsilon is the larger of the two directions' (add, remove), and any grid's upper end is certified. For a
        history of many distinct factors (where one direction's build and composition cost seconds) the direction
        that set epsilon last (:attr:`_strong`; the removal, direction 0, at first) is composed on h, and each other
        direction first on the grid _SCREEN_COARSEN h (~that many times cheaper, a looser upper end), and on h only
        where its coarse upper end exceeds that fine one. Where it does not, its epsilon <= its coarse upper end <=
        the fine upper end of the first, so the maximum, and the bracket, are those of the first direction alone. A
        coarse grid over the memory cap: that direction on h too. A history of few factors (at most CELLS_KEPT
        directions: one or a few subsampled steps) is screened alike at delta >= _UNTILTED_DELTA (q = 1e-3, sigma =
        0.8, 1e5 steps, delta = 1e-5: the add direction's fine build and composition, ~2 of 14 ms, against ~0.8 ms on
        the coarse grid); below it a heavy tail's tilted compositions on the coarse grid cost more than they save
        (measured: 18 -> 34 ms at q = 1e-3, 1e3 steps, delta = 1e-15), and so does a history composed in levels,
        whose two directions' epsilons are close (1e7 steps: the coarse upper end did not rule the add direction
        out, 15 -> 17 ms)."""
        few = len(self._factors) * self._n_dirs() <= discretise.CELLS_KEPT
        if self._n_dirs() < 2 or (len(self._factors) <= convolve.GROUP_MIN and not (
                few and delta >= _UNTILTED_DELTA and not self._level_k(h, self._tails(delta)))):
            return None
        strong = self._strong
        fine = epsilon_side(self._composed(h, True, delta, strict=strict, both=True, dirs=(strong,))[0], delta,
                            upper=True)
        self._upper_seen(delta, strong, fine)
        out = [strong]
        for d in range(self._n_dirs()):
            if d == strong:
                continue
            try:
                coarse = epsilon_side(self._composed(h * _SCREEN_COARSEN, True, delta, both=False, dirs=(d,))[0],
                                      delta, upper=True)
            except MemoryLimitError:
                coarse = math.inf
            self._upper_seen(delta, d, coarse)
            if not coarse <= fine:
                out.append(d)
        return tuple(sorted(out))

    def _upper_seen(self, delta: float, d: int, e: float) -> None:
        """Record a certified upper end ``e`` of direction ``d``'s epsilon at ``delta`` (any grid's)."""
        key = (delta, d)
        self._dir_upper[key] = min(self._dir_upper.get(key, math.inf), e)

    def _raising(self, delta: float, lo: float) -> tuple:
        """The directions whose lower end can raise the lower end ``lo`` of the bracket at ``delta``: those without a
        certified upper end <= lo recorded (any grid's, :meth:`_upper_seen`). epsilon is the larger of the
        directions' epsilons, so any direction's certified lower end is a lower end of the bracket; a direction whose
        epsilon is certified <= lo has a certified lower end <= its epsilon <= lo, which cannot raise it: its
        dominated composition is skipped, and the maximum, the bracket, is bit for bit the same (docs/pld.md
        Sec. 2.8). A history of many distinct factors refined to a finer grid then composes the lower end of the
        direction that sets epsilon only (at 30,000 factors the other one's build and composition took ~40 % of the
        bracket)."""
        return tuple(d for d in range(self._n_dirs()) if not self._dir_upper.get((delta, d), math.inf) <= lo)

    def _delta_bracket_at(self, epsilon: float, h: float) -> tuple[float, float]:
        """Certified delta bracket: on grid ``h`` (tilted for ``epsilon``), intersected with every
        composition computed so far (each certified), so that delta(epsilon(d)) <= d holds for the
        epsilon reported at any d (which may come from a refined grid)."""
        self._composed(h, True, epsilon=epsilon)
        self._composed(h, False, epsilon=epsilon)
        n_dirs = 1 + max((d for _, d in self._seen), default=0)
        up = max(min(min(1.0, convolve.delta_at(c, epsilon) + convolve.slack(c, epsilon))
                     for c in self._seen[(True, d)]) for d in range(n_dirs))
        lo = max(max(max(0.0, convolve.delta_at(c, epsilon) - convolve.slack(c, epsilon))
                     for c in self._seen[(False, d)]) for d in range(n_dirs))
        return min(lo, up), up

    def __repr__(self) -> str:
        inner = ", ".join(f"{type(p).__name__}{p.key()[1:]} x {n}" for p, n in self._factors)
        return f"PLD([{inner}])"


def level_ok(c: convolve.Composed, delta: float) -> bool:
    """Whether a two-level composition's own error terms (its blocks', ``err_add`` and ``err_rel``) are at most
    _LEVEL_ERR delta where its epsilon lies (else the history is composed in one level)."""
    e0 = convolve.epsilon_for(c, delta)
    if not math.isfinite(e0):
        return False
    part = c.err_add
    if c.err_rel > 0:
        e = c.log_scale - c.tilt / c.h * e0
        part += c.err_rel * math.exp(e) if e < 700 else math.inf
    return part <= _LEVEL_ERR * delta


def untilted_local(factors, h: float) -> float:
    """:func:`convolve.local_err` of the untilted composition of ``factors`` (it does not depend on the
    composed masses: S = 1, no tilt), so that a delta target can skip an untilted try it would reject."""
    mono, dip, quad, growth = convolve.local_terms(factors)
    if not math.isfinite(growth):
        return math.inf
    return growth * convolve.local_coeff(mono, dip, quad, h, 0.0)


def gaussian_chernoff_epsilon(sd: float, delta: float) -> float:
    """The Chernoff estimate of epsilon at ``delta`` for a Gaussian loss N(sd^2 / 2, sd^2) (a Gaussian mechanism's
    PLD), min over tau > 0 of (K(tau) + log c(tau) - log delta) / tau with K(tau) = tau sd^2 / 2 + tau^2 sd^2 / 2,
    c of :func:`convolve.chernoff_search`; on 2001 tilts from e^-8 / sd to e^8 / sd (the optimum is near
    sqrt(-2 log delta) / sd), the reference of :meth:`PLD._heavy_tail_factor`."""
    taus = np.exp(np.linspace(-8.0, 8.0, 2001)) / sd
    v = sd * sd
    return float(np.min((taus * v / 2.0 + taus * taus * v / 2.0 + convolve.log_c(taus) - math.log(delta)) / taus))


def epsilon_side(c: convolve.Composed, delta: float, *, upper: bool) -> float:
    """Certified epsilon of one composed direction (docs/pld.md Sec. 2.7).

    Upper: an epsilon e with delta_at(e) + slack(e) <= delta, checked at e itself (delta is
    decreasing, so the true epsilon is <= e); inf if none is found. Lower: an e with
    delta_at(e') - slack(e') > delta at e' just below e, checked (then the true delta at e' exceeds delta,
    and the true epsilon is > e'); 0 if none is found. ``epsilon_for`` only proposes candidates."""
    if upper:
        e = convolve.epsilon_for(c, delta)
        if math.isinf(e):
            return math.inf
        for _ in range(16):
            s = convolve.slack(c, e)
            if convolve.delta_at(c, e) + s <= delta:
                return e
            t = delta - 2.0 * s if _ > 0 else delta - s
            nxt = convolve.epsilon_for(c, t) if t > c.inf_mass else math.inf
            if not nxt > e:  # rounding of the proposal: step up by a relative 1e-9 and one ulp
                nxt = e + 1e-9 * abs(e) + 1e-12
            if math.isinf(nxt):  # the slack here is too large: look further up (it decreases with e)
                nxt = e + max(c.h, 0.25 * abs(e))
            e = nxt
        return math.inf
    e = convolve.epsilon_for(c, min(2.0 * delta, 1.0))
    extra = 0.0  # twice the slack at a candidate that failed: the next proposal clears it (the slack need not
    # fall with epsilon where it switches between its forms, convolve.slack)
    for _ in range(16):
        t = min(delta + max(convolve.slack(c, e), extra), 1.0)
        cand = convolve.epsilon_for(c, t)
        if not math.isfinite(cand) or cand <= 0:
            return 0.0
        below = cand * (1.0 - 1e-12) - 1e-15
        if below > 0:
            s_below = convolve.slack(c, below)
            if convolve.delta_at(c, below) - s_below > delta:
                return below
            extra = max(extra, 2.0 * s_below)
        e = min(cand, e) * 0.999 if e > 0 else 0.0
        if e <= 0:
            return 0.0
    return 0.0


def _factors_merge(a, b) -> list:
    groups: dict = {}
    for pair, n in list(a) + list(b):
        key = pair.key()
        old = groups.get(key)
        groups[key] = (pair, n + (old[1] if old else 0))
    gauss = [(p, n) for p, n in groups.values() if isinstance(p, discretise.GaussianPair)]
    rest = [(p, n) for p, n in groups.values() if not isinstance(p, discretise.GaussianPair)]
    if gauss:
        mu2 = sum(n * p.mu * p.mu for p, n in gauss)
        rest.insert(0, (discretise.GaussianPair(math.sqrt(mu2)), 1))
    return rest
