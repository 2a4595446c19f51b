r"""Exact, lazily extended sample paths of the Ornstein-Uhlenbeck process (Wang & Hegde, Prop. 9).

A path g ~ GP(0, sigma^2 exp(-beta |x - y|)) is revealed only where it is queried. Because the process
is Markov, a new point is drawn from its exact law given its two nearest sampled neighbours
(``privcal.analysis.noise.laws``); drawing points one after another this way, in any order, is the chain rule of
the joint Gaussian, so every set of queried values has exactly the law N(0, sigma^2 K).

The sampled values live in a :class:`privcal.analysis.noise.store.SortedStore` (sorted chunks, O(log n) lookup
and insertion, 16 bytes per point); this module decides what to draw.

Batches: the new points of a batch are sorted and merged with the stored ones; in each gap between
stored neighbours L < R the new points are drawn left to right by the AR(1) recursion started from
g(L) (or from the stationary law if there is no L), continued to a "ghost" copy Y_R at R, and then
conditioned on the stored g(R) by the exact bridge correction (Matheron's rule)

    g(x_i) = Y_i + c_i (g(R) - Y_R),  c_i = Cov(Y_i, Y_R) / Var(Y_R)
           = e^{-beta (R - x_i)} (1 - e^{-2 beta (x_i - L)}) / (1 - e^{-2 beta (R - L)})   (L present)
           = e^{-beta (R - x_i)}                                                         (no L),

which equals the sequential left-to-right conditional sampling in law. The AR(1) recursions of all
gaps are solved together by a vectorised prefix scan of affine maps. Small batches (few new points
compared with the stored ones) are inserted one by one instead, which costs O(log n) per point
rather than O(n) for the merge. After a batch, a flat copy of the store (16 bytes per point) is kept
for vectorised lookups until the next online insertion drops it.

Randomness comes from ``privcal._rng`` (one seeding helper for the package).
"""

from __future__ import annotations

import math
import numbers
from typing import Iterator

import numpy as np
from numpy.typing import ArrayLike

from privcal import _rng
from privcal import _validate as V
from privcal.analysis.noise.store import SortedStore

__all__ = ["OrnsteinUhlenbeckPath", "OrnsteinUhlenbeckPaths"]

_ZBUF = 1024  # standard normals drawn at a time for online insertions


def _validate_domain(domain) -> tuple[float, float]:
    try:
        lo, hi = (float(v) for v in domain)
    except (TypeError, ValueError):
        raise ValueError(f"domain must be a pair (low, high) of finite numbers, got {domain!r}") from None
    if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi):
        raise ValueError(f"domain must be finite with low < high, got {domain!r}")
    return lo, hi


def _affine_scan(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """y with y[j] = a[j] y[j-1] + b[j], y[-1] = 0, by Hillis-Steele doubling (log2 n passes).

    Each pass composes every map with the one d places to its left; a[j] = 0 restarts the recursion.
    All multipliers are in [0, 1], so the scan is numerically stable. Stops once no multiplier
    reaches further back (typical when restarts are frequent).
    """
    a = a.copy()
    y = b.copy()
    n = y.size
    d = 1
    while d < n:
        ad = a[d:]
        if not ad.any():
            break
        y[d:] += ad * y[:-d]
        a[d:] = ad * a[:-d]
        d *= 2
    return y


def _draw_gaps(X, F, new, gap, beta, sigma, rng) -> np.ndarray:
    """Values at the sorted new points ``new`` given stored sorted (X, F); gap = searchsorted(X, new).

    Exact joint law: forward AR(1) per gap plus the bridge correction to the right neighbour.
    """
    n, m = X.size, new.size
    change = np.empty(m, dtype=bool)
    change[0] = True
    np.not_equal(gap[1:], gap[:-1], out=change[1:])
    starts = np.flatnonzero(change)
    seg_len = np.diff(starts, append=m)
    seg_gap = gap[starts]
    has_left = seg_gap > 0
    has_right = seg_gap < n
    ghosts_before = np.cumsum(has_right) - has_right
    slot_new = np.arange(m) + np.repeat(ghosts_before, seg_len)
    slot_ghost = (starts + seg_len + ghosts_before)[has_right]
    total = m + slot_ghost.size

    pos = np.empty(total)
    pos[slot_new] = new
    pos[slot_ghost] = X[seg_gap[has_right]]
    first = slot_new[starts]  # first slot of each gap

    step = np.empty(total)
    step[1:] = np.diff(pos)
    if n:
        left_x = X[np.maximum(seg_gap - 1, 0)]
        left_f = F[np.maximum(seg_gap - 1, 0)]
    else:
        left_x = left_f = np.zeros(seg_gap.size)
    step[first] = np.where(has_left, pos[first] - left_x, np.inf)

    z = rng.standard_normal(total)
    mult = np.exp(-beta * step)
    b = sigma * np.sqrt(-np.expm1(-2.0 * beta * step)) * z
    b[first] += np.where(has_left, mult[first] * left_f, 0.0)
    mult[first] = 0.0  # restart: the left neighbour's value is already in b
    y = _affine_scan(mult, b)

    vals = y[slot_new]
    seg_of_new = np.repeat(np.arange(starts.size), seg_len)
    corr = has_right[seg_of_new]
    if corr.any():
        seg_r = seg_of_new[corr]
        xr_seg = np.where(has_right, X[np.minimum(seg_gap, n - 1)], np.nan)
        fr_seg = np.where(has_right, F[np.minimum(seg_gap, n - 1)], np.nan)
        resid = np.full(starts.size, np.nan)
        resid[has_right] = fr_seg[has_right] - y[slot_ghost]
        xi = new[corr]
        xr = xr_seg[seg_r]
        c = np.exp(-beta * (xr - xi))
        hl = has_left[seg_r]
        if hl.any():
            xl = left_x[seg_r][hl]
            c[hl] *= np.expm1(-2.0 * beta * (xi[hl] - xl)) / np.expm1(-2.0 * beta * (xr[hl] - xl))
        vals[corr] += c * resid[seg_r]
    return vals


class OrnsteinUhlenbeckPath:
    r"""One sample path of GP(0, sigma^2 exp(-beta |x - y|)) on ``domain``, revealed lazily and exactly.

    ``sample(points)`` returns the path's values at ``points`` (drawing the new ones from their exact
    conditional law, returning stored values for points seen before); ``reset()`` starts a new,
    independent path. The covariance is sigma^2 exp(-beta |x - y|) in the coordinates of ``domain``
    (no rescaling); queries outside ``domain`` are rejected.

    Randomness comes only from ``seed`` (None, an int, a SeedSequence, or a numpy Generator, which is
    used - and advanced - as is). Values depend on the seed and on the order and grouping of queries,
    never on anything else; their joint law never depends on either.

    Source: Wang & Hegde 2019, Prop. 9 and Appendix A (the Markov/tridiagonal structure); the
    conditional laws are derived in ``privcal.analysis.noise.laws`` (the printed Eq. (2) is wrong).

    Args:
        beta: kernel parameter beta of exp(-beta |x - y|), in (0, inf) (unit: 1 / unit of x).
        sigma: standard deviation of the path at every point, in (0, inf).
        seed: None, a non-negative int, a SeedSequence or a Generator; default None.
        domain: (low, high), finite with low < high; default (0, 1).

    Raises:
        ValueError: an argument is outside its range.
    """

    #: New points are inserted one by one when new * _FLAT_RATIO < stored or new <= _SMALL_BATCH
    #: (else drawn jointly and merged in one O(n) pass); both ways are exact.
    _FLAT_RATIO = 32
    _SMALL_BATCH = 8

    def __init__(self, beta: float, sigma: float, seed: _rng.Seed = None,
                 domain: tuple[float, float] = (0.0, 1.0)):
        self._setup(V.positive("beta", beta), V.positive("sigma", sigma), _rng.as_generator(seed),
                    _validate_domain(domain))

    def _setup(self, beta: float, sigma: float, rng: np.random.Generator,
               domain: tuple[float, float]) -> None:
        """Initialise from validated arguments (``rng`` a Generator)."""
        self._beta = beta
        self._sigma = sigma
        self._domain = domain
        self._rng = rng
        self._zbuf: list[float] = []
        self._zpos = 0
        self._store = SortedStore()

    # ------------------------------------------------------------------ properties
    @property
    def beta(self) -> float:
        """Kernel parameter beta of exp(-beta |x - y|)."""
        return self._beta

    @property
    def sigma(self) -> float:
        """Standard deviation of the path at every point."""
        return self._sigma

    @property
    def domain(self) -> tuple[float, float]:
        """(low, high): the points the path may be queried at."""
        return self._domain

    def __len__(self) -> int:
        return len(self._store)

    @property
    def nbytes(self) -> int:
        """Bytes held by the stored points and values (16 per point, plus chunk bookkeeping)."""
        return self._store.nbytes

    def __repr__(self) -> str:
        return (f"OrnsteinUhlenbeckPath(beta={self._beta!r}, sigma={self._sigma!r}, "
                f"domain={self._domain!r}, sampled={len(self._store)})")

    # ------------------------------------------------------------------ public API
    def sample(self, points: ArrayLike) -> np.ndarray:
        """Values of the path at ``points`` (any shape; same shape returned), drawing new ones.

        Args:
            points: query points (any shape), each finite and in ``domain``.

        Returns:
            The path's values, an array shaped like ``points``.

        Raises:
            ValueError: a point is not a finite number in ``domain``.
        """
        pts = self._check_points(points)
        if pts.ndim == 0:
            return np.asarray(self._sample_one(float(pts)))
        flat = pts.reshape(-1)
        if flat.size == 0:
            return np.empty(pts.shape)
        uniq, inverse = np.unique(flat, return_inverse=True)
        n = len(self._store)
        if n and (uniq.size * self._FLAT_RATIO < n or uniq.size <= self._SMALL_BATCH):
            vals = np.array([self._sample_one(x) for x in uniq.tolist()])
        else:
            vals = self._sample_flat(uniq)
        return vals[inverse].reshape(pts.shape)

    def sample_point(self, x: float) -> float:
        """Value of the path at the single point ``x`` (fast online path, O(log n)).

        Args:
            x: the query point, a finite number in ``domain``.

        Returns:
            The path's value at ``x``.

        Raises:
            ValueError: ``x`` is not a finite number in ``domain``.
        """
        if isinstance(x, bool) or not isinstance(x, numbers.Real):
            raise ValueError(f"x must be a real number, got {x!r}")
        x = float(x)
        lo, hi = self._domain
        if not lo <= x <= hi:  # also rejects nan
            raise ValueError(f"points must be finite and in [{lo:g}, {hi:g}], got {x!r}")
        return self._sample_one(x)

    def reset(self, seed: _rng.Seed = None) -> None:
        """Forget all values: later queries come from a new path, independent of the old one.

        Args:
            seed: if given, replaces the generator (None, an int, a SeedSequence or a Generator);
                default None (the current generator continues).
        """
        if seed is not None:
            self._rng = _rng.as_generator(seed)
            self._zbuf, self._zpos = [], 0
        self._store.clear()

    def sampled(self) -> tuple[np.ndarray, np.ndarray]:
        """(points, values) sampled so far, sorted by point (copies).

        Returns:
            (points, values), two float64 arrays of length ``len(self)``.
        """
        X, F = self._store.flat()
        return X.copy(), F.copy()

    @classmethod
    def from_values(cls, beta: float, sigma: float, points: ArrayLike, values: ArrayLike,
                    seed: _rng.Seed = None,
                    domain: tuple[float, float] = (0.0, 1.0)) -> "OrnsteinUhlenbeckPath":
        """A path already pinned to ``values`` at ``points`` (distinct); later queries are conditioned.

        The values are taken as given (e.g. a saved path); they are not checked against the law.

        Args:
            beta: kernel parameter beta, in (0, inf).
            sigma: standard deviation of the path, in (0, inf).
            points: distinct points in ``domain`` (any shape, flattened).
            values: finite values, one per point.
            seed: randomness of later queries; default None.
            domain: (low, high), finite with low < high; default (0, 1).

        Returns:
            The pinned path.

        Raises:
            ValueError: an argument is outside its range or the points repeat.
        """
        path = cls(beta, sigma, seed=seed, domain=domain)
        pts = path._check_points(points).reshape(-1)
        vals = np.asarray(values, dtype=float).reshape(-1)
        if vals.shape != pts.shape or not np.all(np.isfinite(vals)):
            raise ValueError(f"values must be finite, one per point ({pts.size}), got shape {vals.shape}")
        order = np.argsort(pts, kind="stable")
        X, F = pts[order], vals[order]
        if np.any(X[1:] == X[:-1]):
            raise ValueError("points must be distinct in from_values")
        path._store.rebuild(X, F)
        return path

    # ------------------------------------------------------------------ internals
    def _check_points(self, points) -> np.ndarray:
        try:
            pts = np.asarray(points, dtype=float)
        except (TypeError, ValueError):
            raise ValueError(f"points must be real numbers, got {points!r}") from None
        lo, hi = self._domain
        ok = (pts >= lo) & (pts <= hi)  # False for nan
        if not np.all(ok):
            bad = np.flatnonzero(~ok.reshape(-1))[0]
            where = f" at index {bad}" if pts.ndim else ""
            raise ValueError(
                f"points must be finite and in [{lo:g}, {hi:g}], got {float(pts.reshape(-1)[bad])!r}{where}"
            )
        return pts

    def _normal(self) -> float:
        if self._zpos >= len(self._zbuf):
            # buffer grows 16, 32, ... _ZBUF so that short-lived paths do not draw 1024 normals
            size = min(_ZBUF, max(16, 2 * len(self._zbuf)))
            self._zbuf = self._rng.standard_normal(size).tolist()
            self._zpos = 0
        z = self._zbuf[self._zpos]
        self._zpos += 1
        return z

    def _sample_one(self, x: float) -> float:
        """Value at one validated float x; inserts it if new (O(log n) + O(chunk) memmove)."""
        store = self._store
        where, value, left, right = store.locate(x)
        if value is not None:
            return value
        beta, sigma = self._beta, self._sigma
        z = self._normal()
        if left is None and right is None:  # empty store: the stationary law
            v = sigma * z
        elif left is not None and right is not None:
            (xl, fl), (xr, fr) = left, right
            a, b = x - xl, xr - x
            ea = math.expm1(-2.0 * beta * a)
            eb = math.expm1(-2.0 * beta * b)
            ed = math.expm1(-2.0 * beta * (a + b))
            if ed == 0.0:  # neighbours closer than beta can resolve: the path is continuous
                v = 0.5 * (fl + fr)
            else:
                mean = (math.exp(-beta * a) * eb * fl + math.exp(-beta * b) * ea * fr) / ed
                v = mean + sigma * math.sqrt(-ea * eb / ed) * z
        else:
            if left is not None:
                a, f0 = x - left[0], left[1]
            else:
                a, f0 = right[0] - x, right[1]
            v = math.exp(-beta * a) * f0 + sigma * math.sqrt(-math.expm1(-2.0 * beta * a)) * z
        store.insert(where, x, v)
        return v

    def _sample_flat(self, uniq: np.ndarray) -> np.ndarray:
        """Values at sorted distinct points: stored ones looked up, new ones drawn jointly."""
        X, F = self._store.flat()
        gap = np.searchsorted(X, uniq)
        if X.size:
            found = X[np.minimum(gap, X.size - 1)] == uniq
        else:
            found = np.zeros(uniq.size, dtype=bool)
        vals = np.empty(uniq.size)
        vals[found] = F[gap[found]]
        new_mask = ~found
        n_new = int(new_mask.sum())
        if n_new == 0:
            return vals
        new = uniq[new_mask]
        if X.size and (n_new * self._FLAT_RATIO < X.size or n_new <= self._SMALL_BATCH):
            vals[new_mask] = [self._sample_one(x) for x in new.tolist()]
            return vals
        gnew = gap[new_mask]
        drawn = _draw_gaps(X, F, new, gnew, self._beta, self._sigma, self._rng)
        vals[new_mask] = drawn
        # merge and rebuild the chunk store
        total = X.size + n_new
        idx_new = gnew + np.arange(n_new)
        keep = np.ones(total, dtype=bool)
        keep[idx_new] = False
        Xm = np.empty(total)
        Fm = np.empty(total)
        Xm[idx_new] = new
        Fm[idx_new] = drawn
        Xm[keep] = X
        Fm[keep] = F
        self._store.rebuild(Xm, Fm)
        return vals


class OrnsteinUhlenbeckPaths:
    """Independent OU noise paths, one per action (Algorithm 1 draws one path per action).

    ``paths[a]`` is the ``OrnsteinUhlenbeckPath`` of action a; ``sample(a, points)`` queries it;
    ``sample_all(points)`` queries every path (shape (n_paths, *points.shape)); ``reset()`` starts new
    independent paths for all actions (Algorithm 1's reset every T/(JB) iterations). The paths get
    independent generators spawned from ``seed`` (``privcal._rng.spawn``).

    Args:
        n_paths: number of paths (actions), an integer >= 1.
        beta: kernel parameter beta of exp(-beta |x - y|), in (0, inf).
        sigma: standard deviation of every path, in (0, inf).
        seed: None, a non-negative int, a SeedSequence or a Generator; default None.
        domain: (low, high), finite with low < high; default (0, 1).

    Raises:
        ValueError: an argument is outside its range.
    """

    def __init__(self, n_paths: int, beta: float, sigma: float, seed: _rng.Seed = None,
                 domain: tuple[float, float] = (0.0, 1.0)):
        n_paths = V.positive_int("n_paths", n_paths)
        beta = V.positive("beta", beta)
        sigma = V.positive("sigma", sigma)
        self._setup(n_paths, beta, sigma, seed, _validate_domain(domain))

    @classmethod
    def unchecked(cls, n_paths: int, beta: float, sigma: float, seed: _rng.Seed = None,
                  domain: tuple[float, float] = (0.0, 1.0)) -> "OrnsteinUhlenbeckPaths":
        """The paths of ``OrnsteinUhlenbeckPaths(n_paths, beta, sigma, seed, domain)``, built without validation.

        For callers that validated the arguments (the DP-Q loop of ``privcal.rl.dpq.agent`` draws a layer of
        paths per release with its checked beta and sigma): same paths, same draws.

        Args:
            n_paths: number of paths (actions), an int >= 1 (not checked).
            beta: kernel parameter beta of exp(-beta |x - y|), a float in (0, inf) (not checked).
            sigma: standard deviation of every path, a float in (0, inf) (not checked).
            seed: None, a non-negative int, a SeedSequence or a Generator; default None.
            domain: (low, high) floats, finite with low < high (not checked); default (0, 1).

        Returns:
            The paths.
        """
        paths = cls.__new__(cls)
        paths._setup(n_paths, beta, sigma, seed, domain)
        return paths

    def _setup(self, n_paths: int, beta: float, sigma: float, seed: _rng.Seed, domain: tuple[float, float]) -> None:
        self._paths = []
        for child in _rng.spawn(seed, n_paths):
            path = OrnsteinUhlenbeckPath.__new__(OrnsteinUhlenbeckPath)
            path._setup(beta, sigma, child, domain)
            self._paths.append(path)

    def __len__(self) -> int:
        return len(self._paths)

    def __getitem__(self, action: int) -> OrnsteinUhlenbeckPath:
        return self._paths[action]

    def __iter__(self) -> Iterator[OrnsteinUhlenbeckPath]:
        return iter(self._paths)

    def __repr__(self) -> str:
        p = self._paths[0]
        return (f"OrnsteinUhlenbeckPaths(n_paths={len(self)}, beta={p.beta!r}, sigma={p.sigma!r}, "
                f"domain={p.domain!r})")

    def sample(self, action: int, points: ArrayLike) -> np.ndarray:
        """Values of action ``action``'s path at ``points``.

        Args:
            action: the path's index, an int in [0, n_paths).
            points: query points (any shape), each finite and in ``domain``.

        Returns:
            The path's values, an array shaped like ``points``.

        Raises:
            ValueError: ``action`` or a point is out of range.
        """
        if isinstance(action, bool) or not isinstance(action, numbers.Integral) or not (
            0 <= action < len(self._paths)
        ):
            raise ValueError(f"action must be an int in [0, {len(self._paths) - 1}], got {action!r}")
        return self._paths[action].sample(points)

    def sample_all(self, points: ArrayLike) -> np.ndarray:
        """Values of every path at ``points``: array of shape (n_paths, *shape of points).

        Args:
            points: query points (any shape), each finite and in ``domain``.

        Returns:
            The values, shape (n_paths, *points.shape).

        Raises:
            ValueError: a point is not a finite number in ``domain``.
        """
        return np.stack([p.sample(points) for p in self._paths])

    def reset(self) -> None:
        """New independent paths for every action."""
        for p in self._paths:
            p.reset()

    @property
    def nbytes(self) -> int:
        """Bytes held by all paths' stored points and values."""
        return sum(p.nbytes for p in self._paths)
