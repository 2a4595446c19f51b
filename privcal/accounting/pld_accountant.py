r"""The PLD accountant: privacy loss distributions behind the accountant protocol, with a bracket.

:class:`PLDAccountant` prices Gaussian and Gaussian-process releases, Laplace releases,
(epsilon, delta)-DP events and subsampled Gaussians (Poisson with add/remove neighbours; without
replacement with replace-one or zero-out neighbours, the sensitivity meant under that relation) by their
privacy loss distributions (``privcal.pld``). Every number it reports is a certified upper bound;
:meth:`PLDAccountant.bracket` also gives the certified lower bound of the same pairs. Where those pairs
are realisable worst cases (:attr:`PLDAccountant.realisable`: Gaussian, Laplace and (epsilon, delta)
events, Poisson add/remove and without-replacement replace-one subsampling, and without-replacement
zero-out in a replace-one history; not without-replacement zero-out under its own relation, whose pair
dominates but is not a zero-out pair) a lower end above a target proves the target is not met.
"""

from __future__ import annotations

import contextlib
import contextvars
import math
from typing import Callable, Iterator, Optional, Union

from .. import _validate as V
from ..analysis import gaussian
from .. import privacy_loss as D
from ..errors import InfeasibleError
from ..privacy_loss import MemoryLimitError
from . import _search, pld_events
from .events import Event, Neighbouring, Releases
from .protocol import Accountant, default_hint

__all__ = ["PLDAccountant", "pld_settings", "default_memory_limit", "clt_hint", "clt_slope", "secant_search"]

#: calibration resolves sigma to this relative precision at least (the upper epsilon it tests is itself
#: computed on a grid; finer resolution would only chase the grid)
SIGMA_RTOL_FLOOR = 1e-7


#: (accuracy, memory_limit) that a PLDAccountant built with default arguments uses (see pld_settings)
_DEFAULTS: contextvars.ContextVar = contextvars.ContextVar("privcal_pld_defaults", default=(None, None))


@contextlib.contextmanager
def pld_settings(accuracy: Optional[float] = None, memory_limit: Optional[float] = None) -> Iterator[None]:
    """Within the block, every :class:`PLDAccountant` built with its default ``accuracy`` or
    ``memory_limit`` uses these instead: the knobs of the PLD inside commands that build many
    accountants (the comparison tables, the plots, the GPOPE calibrations), as ``privcal table
    --pld-accuracy --memory-limit`` sets them. Nested blocks override; ``None`` keeps the outer value.

    Args:
        accuracy: requested relative width of the PLD's epsilon bracket, in (0, 1); default None (keep).
        memory_limit: cap of the memory of one PLD evaluation, in bytes, in (0, inf); default None (keep).
    """
    outer = _DEFAULTS.get()
    new = (outer[0] if accuracy is None else V.open_unit("accuracy", accuracy),
           outer[1] if memory_limit is None else V.positive("memory_limit", memory_limit))
    token = _DEFAULTS.set(new)
    try:
        yield
    finally:
        _DEFAULTS.reset(token)


def default_memory_limit() -> float:
    """The memory cap, in bytes, that PLD evaluations built with default settings use here: the
    innermost :func:`pld_settings` block's, else ``privcal.pld.DEFAULT_MEMORY_LIMIT`` (256 MiB)."""
    value = _DEFAULTS.get()[1]
    return D.DEFAULT_MEMORY_LIMIT if value is None else value


class PLDAccountant(Accountant):
    """Privacy-loss-distribution accountant with certified brackets (``privcal.pld``).

    The PLD of the ledger is built when a number is asked (all of it at once: one FFT per neighbouring
    direction and side of the bracket), on a grid chosen from ``accuracy``.

    Args:
        accuracy: requested relative width of the epsilon bracket, in (0, 1); default 1e-3.
        absolute_accuracy: requested absolute width, in (0, inf); default 1e-4 (the larger width is the
            target).
        memory_limit: cap of the memory of one evaluation, in bytes, in (0, inf); default 256 MiB; a grid
            above it raises ``ValueError`` naming the cap and the accuracy to relax.
        value_discretization: fixed grid spacing of the loss in nats, in (0, inf); default None (chosen
            from ``accuracy``).
        neighbouring: the one neighbouring relation of everything this accountant composes ("add_remove",
            "replace_one", "zero_out" or a :class:`~privcal.accounting.events.Neighbouring`); default None
            (the relation the releases state; ``privcal.accounting.relations``).
    """

    name = "pld"
    valid = True
    guarantee = "upper bound on epsilon (privacy loss distribution, certified bracket)"

    def __init__(
        self,
        accuracy: float = D.DEFAULT_ACCURACY,
        absolute_accuracy: float = D.DEFAULT_ABSOLUTE_ACCURACY,
        memory_limit: float = D.DEFAULT_MEMORY_LIMIT,
        value_discretization: Optional[float] = None,
        *,
        neighbouring: Optional[Union[Neighbouring, str]] = None,
    ):
        super().__init__(neighbouring)
        ctx_accuracy, ctx_memory = _DEFAULTS.get()
        if accuracy == D.DEFAULT_ACCURACY and ctx_accuracy is not None:
            accuracy = ctx_accuracy  # validated by pld_settings
        if memory_limit == D.DEFAULT_MEMORY_LIMIT and ctx_memory is not None:
            memory_limit = ctx_memory
        self._setup(
            V.open_unit("accuracy", accuracy) if accuracy != D.DEFAULT_ACCURACY else accuracy,
            V.positive("absolute_accuracy", absolute_accuracy)
            if absolute_accuracy != D.DEFAULT_ABSOLUTE_ACCURACY else absolute_accuracy,
            V.positive("memory_limit", memory_limit) if memory_limit != D.DEFAULT_MEMORY_LIMIT else memory_limit,
            None if value_discretization is None else V.positive("value_discretization", value_discretization),
        )

    def _setup(self, accuracy, absolute_accuracy, memory_limit, value_discretization) -> None:
        self.accuracy = accuracy
        self.absolute_accuracy = absolute_accuracy
        self.memory_limit = memory_limit
        self.value_discretization = value_discretization
        self._pld: Optional[D.PLD] = None

    def _fresh(self, value_discretization: Optional[float] = None) -> "PLDAccountant":
        new = type(self).__new__(type(self))
        Accountant.__init__(new, self._requested)
        new._setup(self.accuracy, self.absolute_accuracy, self.memory_limit,
                   self.value_discretization if value_discretization is None else value_discretization)
        return new

    # ------------------------------------------------------------------ protocol
    def _supports_leaf(self, event: Event) -> bool:
        return pld_events.leaf_supported(event)

    def _add(self, event: Event, count: int) -> None:
        self._pld = None  # rebuilt (lazily) from the whole ledger

    @property
    def pld(self) -> D.PLD:
        """The (lazy) :class:`~privcal.pld.PLD` of everything composed so far."""
        if self._pld is None:
            self._pld = D.PLD(
                pld_events.factors(self._ledger, self._relation), value_discretization=self.value_discretization,
                accuracy=self.accuracy, absolute_accuracy=self.absolute_accuracy, memory_limit=self.memory_limit,
                realisable=pld_events.realisable(self._ledger, self._relation),
            )
        return self._pld

    @property
    def realisable(self) -> bool:
        """Whether the lower end of :meth:`bracket` bounds the epsilon of the composed mechanisms
        themselves from below: True unless the ledger holds sampling without replacement under zero-out
        neighbours at q < 1 (priced by the dominating replace-one pair at twice the sensitivity), or sampling
        without replacement in an add/remove history (its pair is realised in the removal order only); only
        then may a lower end above a target prove that the target is not met."""
        return pld_events.realisable(self._ledger, self._relation)

    def epsilon_unchecked(self, delta: float) -> float:
        """The certified upper epsilon at ``delta``, for ``delta`` already validated.

        Args:
            delta: target delta, in (0, 1) (trusted).
        """
        return self.pld.epsilon_unchecked(delta)

    def delta_unchecked(self, epsilon: float) -> float:
        """The certified upper delta at ``epsilon``, for ``epsilon`` already validated.

        Args:
            epsilon: in [0, inf) (trusted).
        """
        return self.pld.delta_bracket_unchecked(epsilon)[1]

    def bracket(self, delta: float) -> tuple[float, float]:
        """Certified (lower, upper) bounds on epsilon at ``delta`` for everything composed so far.

        Args:
            delta: target delta, in (0, 1).

        Returns:
            (lower, upper) with 0 <= lower <= upper <= inf; ``epsilon(delta)`` is the upper end (an
            ``inf`` upper end: not certifiable here, use another valid accountant).
        """
        return self.bracket_unchecked(V.open_unit("delta", delta))

    def bracket_unchecked(self, delta: float) -> tuple[float, float]:
        """:meth:`bracket` for a delta already checked (in (0, 1)): the same certified bounds.

        Args:
            delta: target delta, in (0, 1) (not checked).

        Returns:
            (lower, upper) with 0 <= lower <= upper <= inf.
        """
        return self.pld.bracket_unchecked(delta)

    def delta_bracket(self, epsilon: float) -> tuple[float, float]:
        """Certified (lower, upper) bounds on delta at ``epsilon``.

        Args:
            epsilon: in [0, inf).

        Returns:
            (lower, upper) with 0 <= lower <= upper <= 1.
        """
        return self.pld.delta_bracket_unchecked(V.nonnegative("epsilon", epsilon))

    # ------------------------------------------------------------------ calibration
    #: after :meth:`sigma_for`: (sigma, its upper epsilon, a PLDAccountant holding the releases at that
    #: sigma) of the answer, so that a caller reporting the achieved epsilon or the bracket reuses the
    #: last evaluation instead of recomputing it; None before
    calibrated: Optional[tuple] = None

    def sigma_for_unchecked(self, releases: Releases, epsilon: float, delta: float, *,
                            sigma_hint: Optional[float] = None, rtol: float = 1e-9) -> float:
        """Smallest sigma whose *upper* epsilon (as :meth:`epsilon` reports it) is <= the target, to within
        what the grid resolves. Without a hint, a first phase on a 4x coarser grid (``_COARSE``: probes ~4x
        cheaper) finds a start within 1e-3; then a safeguarded secant on (log sigma, log epsilon) over the
        rule grid brackets the answer until the bracket is within relative max(rtol, 1e-7) or its feasible
        end's upper epsilon is within ``_EPS_RTOL`` (1e-4) below the target (the rule grid's epsilon moves
        by ~3e-5 between neighbouring sigmas), and returns that feasible end, checked; the generic root
        finder takes over if the secant stalls. Each probe is one FFT per neighbouring direction.

        A probe whose grid exceeds the memory cap, or whose numerics fail, counts as infeasible (upper
        end inf): the search moves up, since a larger sigma needs a smaller grid. When no sigma up to
        ``SIGMA_MAX`` (1e12) has a finite upper end at or below the target, ``InfeasibleError`` says so,
        with the last refusal; the search never returns a sigma beyond that range.

        Args:
            releases: the run to calibrate (trusted: supported, validated).
            epsilon: target epsilon, in (0, inf) (trusted).
            delta: target delta, in (0, 1) (trusted).
            sigma_hint: a starting sigma, or None (default) for the coarse first phase.
            rtol: relative tolerance of the search's bracket; default 1e-9 (at least 1e-7 is used).
        """
        self._check_supported(releases)
        hint = clt_hint(releases, epsilon, delta) if sigma_hint is None else sigma_hint
        memo: dict = {}
        refusals: list = []
        feasible: dict = {}  # the smallest feasible sigma probed -> its accountant (for ``calibrated``)

        def upper(sigma: float, coarsen: int = 1) -> float:
            key = sigma if coarsen == 1 else (sigma, coarsen)
            if key not in memo:
                acc = self._fresh()._compose(releases.event(sigma))
                try:  # the upper end on the rule grid: never below epsilon() (the bracket's upper end)
                    value = float(acc.pld.unchecked_probe_epsilon(delta, coarsen))
                except _PROBE_FAILURES as exc:  # too fine a grid (or failed numerics): infeasible here
                    refusals.append(f"{type(exc).__name__} at sigma = {sigma:.4g}: {' '.join(str(exc).split())}"
                                    if isinstance(exc, MemoryLimitError) else
                                    f"the PLD numerics failed at sigma = {sigma:.4g} ({type(exc).__name__})")
                    value = math.inf
                if math.isnan(value):
                    value = math.inf
                memo[key] = value
                if coarsen == 1 and value <= epsilon and (not feasible or sigma < next(iter(feasible))):
                    feasible.clear()
                    feasible[sigma] = acc
            return memo[key]

        tol = max(rtol, SIGMA_RTOL_FLOOR)
        if sigma_hint is None and self.value_discretization is None:
            # a rough first phase on a grid COARSE times coarser (each probe ~COARSE times cheaper) gives the
            # rule grid's search a start within ~1e-3 of its root: it then brackets and converges in about
            # half the probes. Only a start: the answer is found and checked on the rule grid below.
            coarse: list = []
            try:
                hint = secant_search(lambda s: upper(s, _COARSE), epsilon, hint, _COARSE_RTOL, trace=coarse,
                               accept=_COARSE_RTOL, slope=clt_slope(releases, delta, hint))
                slope = _slope(coarse)
            except (_Stalled, InfeasibleError):
                slope = None
            refusals.clear()
        else:
            slope = None
        try:
            try:
                sigma = secant_search(upper, epsilon, hint, tol, slope=slope)
            except _Stalled:
                sigma = _search.search(upper, epsilon, delta, sigma_hint=hint, rtol=tol)
        except InfeasibleError:
            finite = any(math.isfinite(v) for v in memo.values())
            raise InfeasibleError(_infeasible(epsilon, delta, refusals, finite)) from None
        if sigma in feasible:
            self.calibrated = (sigma, memo[sigma], feasible[sigma])
        return sigma


def clt_hint(releases: Releases, epsilon: float, delta: float) -> float:
    """Start of the PLD calibration: the sigma at which the central-limit approximation of the composed
    subsampled Gaussian (Dong, Roth & Su 2019, Cor. 5.4: T releases at sample rate q are close to
    mu-GDP with mu = q sqrt(T (e^{1/s^2} - 1)), s the noise multiplier) has the exact Gaussian's
    (epsilon, delta), i.e. s = 1 / sqrt(log(1 + mu*^2 / (q^2 T))) with mu* = 1 / sigma_exact(epsilon,
    delta). Only a start (the approximation is not a bound): every answer is found and checked on the
    PLD itself. Falls back to the exact unsubsampled sigma times q where the formula does not apply.

    Args:
        releases: the releases (validated).
        epsilon: the target epsilon, in (0, inf).
        delta: the target delta, in (0, 1).
    """
    start = default_hint(releases, epsilon, delta)  # sigma_exact(T releases) x q = q sqrt(T) sensitivity / mu*
    try:
        mu_star = releases.sample_rate * math.sqrt(releases.steps) * releases.sensitivity / start
        ratio = mu_star * mu_star / (releases.sample_rate ** 2 * releases.steps)
        hint = releases.sensitivity / math.sqrt(math.log1p(ratio))
    except (ArithmeticError, ValueError):
        hint = math.nan
    return hint if math.isfinite(hint) and hint > 0 else start


def clt_slope(releases: Releases, delta: float, sigma: float) -> Optional[float]:
    """d log epsilon / d log sigma at ``sigma`` of the central-limit approximation of :func:`clt_hint` (epsilon of
    mu-GDP, mu = q sqrt(T (e^{1/s^2} - 1)), s = sigma / sensitivity), by a central difference in log sigma; None
    where it is not a negative finite number (e.g. epsilon = 0 there). Only the first step of the calibration's
    rough phase, which would otherwise assume epsilon ~ 1/sigma: at the GPOPE table's settings (m = 1000,
    N = 1e4, epsilon 0.1 to 5) the slope at the start is -1.2 to -5.7 and within a factor 1.6 of the PLD's own
    (-1.2 to -4.3, tests/test_pld.py), and the table's rough phases take 18 probes instead of 21.

    Args:
        releases: the releases (validated).
        delta: the target delta, in (0, 1).
        sigma: where the slope is taken, in (0, inf).
    """
    q, steps, sensitivity = releases.sample_rate, releases.steps, releases.sensitivity

    def log_epsilon(log_sigma: float) -> float:
        s = math.exp(log_sigma) / sensitivity
        mu = q * math.sqrt(steps * math.expm1(1.0 / (s * s)))
        return math.log(gaussian.epsilon_exact_unchecked(delta, mu))

    try:
        x, h = math.log(sigma), 1e-3
        slope = (log_epsilon(x + h) - log_epsilon(x - h)) / (2.0 * h)
    except (ArithmeticError, ValueError):
        return None
    return slope if math.isfinite(slope) and slope < 0 else None


#: a calibration stops once its feasible end's upper epsilon is within this relative distance below the
#: target (the rule grid's epsilon moves by ~3e-5 between neighbouring sigmas: closer is chasing the grid)
_EPS_RTOL = 1e-4
#: the rough first phase of a PLD calibration: grid spacing x _COARSE, sigma to relative _COARSE_RTOL
_COARSE, _COARSE_RTOL = 4, 1e-3
#: what a calibration probe may raise that means "no certified epsilon at this sigma"
_PROBE_FAILURES = (MemoryLimitError, MemoryError, ValueError, ArithmeticError, IndexError)
_LOG_SIGMA_MAX = math.log(_search.SIGMA_MAX)
_LOG_SIGMA_MIN = math.log(_search.SIGMA_MIN)


def _infeasible(epsilon: float, delta: float, refusals: list, finite: bool) -> str:
    """One line: the PLD certifies the target at no sigma up to SIGMA_MAX, and why."""
    if refusals:
        why = f" (last refusal: {refusals[-1]})"
    elif not finite:
        why = " (its upper end is inf at every sigma probed: its error terms reach delta)"
    else:
        why = ""
    return (f"no sigma up to {_search.SIGMA_MAX:g} has a certified PLD upper epsilon <= {epsilon:g} at "
            f"delta = {delta:g}{why}")


class _Stalled(Exception):
    pass


#: where the secant aims, in log epsilon / target: the middle of the accepted window [-_EPS_RTOL, 0]
_AIM = -_EPS_RTOL / 2


def _slope(trace: list) -> Optional[float]:
    """d log epsilon / d log sigma from the two last probes of a secant's ``trace`` that straddle the
    target (None if there are none, or the slope is not negative and finite)."""
    pts = [(x, y) for x, y in trace if abs(y) < 700.0]
    for i in range(len(pts) - 1, 0, -1):
        for j in range(i - 1, -1, -1):
            (x1, y1), (x2, y2) = pts[i], pts[j]
            if (y1 > 0) != (y2 > 0) and x1 != x2:
                s = (y1 - y2) / (x1 - x2)
                return s if math.isfinite(s) and s < 0 else None
    return None


def secant_search(upper: Callable[[float], float], target: float, hint: float, tol: float, slope: Optional[float] = None,
            trace: Optional[list] = None, accept: Optional[float] = None) -> float:
    """Regula falsi (Illinois) on log epsilon - log target against log sigma, aimed at the middle of the
    accepted window (``_AIM``), from a bracket found by steps of epsilon ~ 1/sigma (or, with ``slope``
    = d log epsilon / d log sigma known from a coarser phase, a first step aimed at ``_AIM``); returns the
    feasible end once the bracket is within ``tol`` or that end's epsilon is within ``_EPS_RTOL`` below
    the target. Probes stay in [SIGMA_MIN, SIGMA_MAX]: a bracket that would need a sigma above SIGMA_MAX
    raises InfeasibleError (the upper end is inf, or above the target, everywhere up there); one below
    SIGMA_MIN stalls (the generic search then decides). ``trace``, if given, receives every (log sigma,
    log epsilon / target) probed. ``accept`` (a rough phase): any probe within this relative distance of the
    target, on either side, is returned unchecked (it is only a start for the rule grid's search).

    Args:
        upper: sigma -> the certified upper epsilon at sigma.
        target: the target epsilon, in (0, inf).
        hint: the first sigma probed, in (0, inf).
        tol: relative width of the final bracket in sigma.
        slope: d log epsilon / d log sigma known from a coarser phase, or None.
        trace: a list that receives every probe, or None.
        accept: a rough phase's relative acceptance distance, or None.
    """
    done: list = []

    def g(log_s: float) -> float:
        e = upper(math.exp(log_s))
        out = -700.0 if e == 0 else (math.log(e / target) if math.isfinite(e) else 700.0)
        if trace is not None:
            trace.append((log_s, out))
        if (-accept <= out <= accept) if accept is not None else (-_EPS_RTOL <= out <= 0.0):
            done.append(log_s)
        return out

    def found() -> float:
        sigma = math.exp(done[0])
        return sigma if accept is not None else _search.checked(sigma, upper, target)

    a = min(max(math.log(hint), _LOG_SIGMA_MIN), _LOG_SIGMA_MAX)
    ga = g(a)
    if done:
        return found()
    if slope is not None and abs(ga) < 1.0:
        b = a + (_AIM - ga) / slope
    else:
        b = a + ga * 1.05 if abs(ga) < 50 else a + math.copysign(2.0, ga)
    b = min(max(b, _LOG_SIGMA_MIN), _LOG_SIGMA_MAX)
    gb = g(b)
    for _ in range(40):  # widen until the signs differ
        if done:
            return found()
        if (ga > 0) != (gb > 0) or gb == 0:
            break
        if gb > 0 and b >= _LOG_SIGMA_MAX:
            raise InfeasibleError("no sigma up to SIGMA_MAX meets the target")
        if gb <= 0 and b <= _LOG_SIGMA_MIN:
            raise _Stalled
        step = (b - a) * 2.0 if b != a else math.copysign(0.1, ga)
        a, ga = b, gb
        b = min(max(b + step, _LOG_SIGMA_MIN), _LOG_SIGMA_MAX)
        gb = g(b)
    else:
        raise _Stalled
    lo, glo, hi, ghi = (a, ga, b, gb) if ga > 0 else (b, gb, a, ga)  # g(lo) > 0 >= g(hi)
    side = 0
    clamped_lo, clamped_hi = glo >= 700.0, ghi <= -700.0
    for _ in range(60):
        if abs(hi - lo) <= tol / 2 or -_EPS_RTOL <= ghi <= 0.0:
            break
        clamped = clamped_lo or clamped_hi
        if ghi != glo and not clamped:
            x = hi - (ghi - _AIM) * (hi - lo) / (ghi - glo)
        else:  # an end at epsilon = 0 or inf (clamped to -+700) says nothing of the slope: bisect
            x = (lo + hi) / 2
        margin = abs(hi - lo) * 1e-3
        x = min(max(x, min(lo, hi) + margin), max(lo, hi) - margin)
        gx = g(x)
        if done:
            return found()
        if gx > 0:
            lo, glo = x, gx
            clamped_lo = gx >= 700.0
            if side == -1:
                ghi /= 2
            side = -1
        else:
            hi, ghi = x, gx
            clamped_hi = gx <= -700.0
            if side == 1:
                glo /= 2
            side = 1
    else:
        raise _Stalled
    sigma = math.exp(hi)
    return _search.checked(sigma, upper, target)
