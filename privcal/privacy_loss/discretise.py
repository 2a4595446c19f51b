r"""Single-event privacy loss distributions on a regular loss grid (private; inputs are trusted).

A mechanism is described by a *pair* (P, Q) of output distributions on neighbouring datasets and, for
each neighbouring direction, the privacy loss L = log(dP/dQ) under P. Every pair here has a loss that is
monotone in the output, so the P- and Q-mass of a loss interval is a difference of CDFs at its preimages;
the pairs give the four tails log P(L > l), log P(L <= l), log Q(L > l), log Q(L <= l) in log space
(privcal's ``log_phi.log_ndtr``, with a proven error bound: docs/pld.md Sec. 2.2), accurate far into the tails.

From the cell masses on the grid g_j = j h two discrete PLDs are built:

* **upper** (a dominating pair): each cell (g_j, g_{j+1}] with P-mass p and Q-mass r is split into atoms
  at its two ends so that both p and r are kept ("connect the dots", Doroshenko, Ghazi, Kamath, Kumar &
  Manurangsi 2022, arXiv 2207.04380): the true pair is a post-processing of the split one (merge the two
  atoms back), so by data processing and Blackwell's theorem every composition of split pairs is at least
  as lossy as the true composition. The mass below the grid is moved up to its first point, the mass above
  it goes to +inf (both only increase every delta).
* **lower** (a dominated pair): the computed cells are first made dominated by the true ones (P-mass
  lowered, Q-mass raised by their error bounds), each cell's mass is merged into one atom (a
  post-processing of the true pair) and the atom is mixed with part of the atom of the cell below until
  its likelihood ratio is about e^{g_j} (a further post-processing), each emission checked to lie in
  [e^{g_j} Q, P] whatever the rounding; the heaviest rests (the piles at a bounded end of the loss) are
  mixed with emitted mixtures further away, and what is left is emitted at its own grid point with its
  P-mass (a loss rounded down, its P-mass kept: the composed delta is non-decreasing in both). The mass
  below the grid is dropped. It needs no error bound.

Both keep the error of the discretisation second order in h: the split and the merge only move mass
within one cell. The upper PLD carries a bound on its own round-off (see :class:`Pmf`). Derivations and
the test of each term: docs/pld.md, Sec. 2.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Optional

import numpy as np
from scipy.special import ndtri

from .log_phi import LOG_PHI_ERR, log_ndtr

#: unit round-off of float64 (2^-53), the unit of every rounding term of the certificate (docs/pld.md)
U = 2.0**-53
#: |computed log_ndtr(z) - log Phi(z)| <= LOG_NDTR_ERR u (2 + |log Phi(z)|) for every float z: privcal's log_ndtr
#: (privcal.privacy_loss.log_phi), proven there and in docs/pld.md Sec. 2.2 (LOG_PHI_ERR = 4; the proof gives 3.27)
LOG_NDTR_ERR = LOG_PHI_ERR
#: relative error of a cell mass exp(a) * -expm1(b - a) from two log tails, beyond the tails' own error
_CELL_REL = 4.0
#: relative error of the split of a cell ((p - rt) / (1 - e^{-h}), then p - up): a few roundings
SPLIT_REL = 4.0
#: the smallest normal float64: below it a float's rounding is absolute (half of 2^-1074 per operation), not relative
TINY = 2.0**-1022
#: absolute error charged to a tail, a cell mass or a cell's rt computed below TINY (exp within 1 ulp, 2^-1074 there,
#: and a product and expm1's factor at most half an ulp each: 2^-1073 at most), with room: the relative bounds
#: (tail_rel_err, _CELL_REL u, rt_rel_err) hold only for normal numbers (docs/pld.md Sec. 2.2)
SUBNORMAL_ERR = 2.0**-1072
#: red-black passes that raise the pairing fractions of the lower PMF (converged after one on the 27-case
#: grid of benchmarks/bench_pld.py; docs/pld.md Sec. 2.3)
_PAIR_ROUNDS = 2
#: each tail of a single-step PLD beyond its grid holds at most this much P-mass
TAIL_MASS = 1e-25
Z_TAIL = float(-ndtri(TAIL_MASS))  # ~10.4 standard deviations
#: a tail <= Phi(-_SIDE_Z) ~ 0.242 at a grid point is certainly the smaller of its two (the other >= 0.758, far
#: beyond any rounding): the larger need not be evaluated there (:meth:`SubsampledDirection._tails_rows`)
_SIDE_Z = 0.7
#: the dominated PMF drops cells whose lowered P-mass is below this: a normal cell mass >= 1e-290 was
#: computed from normal numbers only (exp of a log tail >= the mass, times a factor <= 1), so the relative
#: error model holds for it
_P_FLOOR = 1e-290


@dataclass
class Pmf:
    """A discrete PLD of one direction: P-mass ``mass[i]`` at loss (offset + i) * h, P-mass ``inf_mass``
    at +inf, and bounds on its round-off, split by how local the error is (an error pattern costs less
    in the low Fourier coefficients that a composition amplifies the more local it is):

    * ``err_mass``: l1 norm of the errors that are not local;
    * ``err_dipole``: total size of errors +e, -e at adjacent atoms (at most e h max|g'| in a delta,
      docs/pld.md Sec. 2.4);
    * ``err_quad``: total size of errors e, -2e, e at three adjacent atoms (at most e (h + h^2 ...) in a
      delta).

    ``mono``, ``dip``, ``quad`` give the same per anchoring atom (for the tilt). The tails are taken to be
    accurate to a relative :func:`tail_rel_err`; an error in a tail moves mass between the two cells it
    separates (a dipole), which the split into atoms turns into a quadrupole of size error / (1 - e^{-h})
    plus a dipole.
    """

    offset: int
    mass: np.ndarray
    inf_mass: float
    h: float
    err_mass: float = 0.0
    err_dipole: float = 0.0
    err_quad: float = 0.0
    err_atoms: Optional[np.ndarray] = None  # per-atom bound of the same errors (local use, no FFT)
    # where the errors sit (anchored at atom j; None: unknown, every error is taken where it costs most)
    mono: Optional[np.ndarray] = None  # non-local error at atom j (l1)
    dip: Optional[np.ndarray] = None  # dipole sizes anchored at atom j (within atoms j-1 .. j+1)
    quad: Optional[np.ndarray] = None  # quadrupole sizes centred at atom j
    err_inf: float = 0.0  # bound of the error of ``inf_mass``
    # the atoms (lattice offsets) that mono, dip, quad refer to, increasing; None: one entry per atom. A PMF built on
    # coarse cells keeps them at its grid points only (the lattice's other atoms carry no error anchor)
    err_at: Optional[np.ndarray] = None
    # (total mass, mean, variance) of the finite part in grid units (mean as an absolute index), when known; else
    # computed and kept by convolve (the total always float(mass.sum()))
    moments: Optional[tuple] = None

    @property
    def losses(self) -> np.ndarray:
        return (self.offset + np.arange(self.size)) * self.h

    @property
    def size(self) -> int:
        """The number of lattice points (atoms) from ``offset`` on, empty ones included."""
        return self.mass.size

    def points(self) -> tuple[Optional[np.ndarray], np.ndarray]:
        """(lattice offsets, masses) of the stored atoms: (None, ``mass``) for a dense PMF."""
        return None, self.mass


class SparsePmf(Pmf):
    """A :class:`Pmf` stored at its grid points only: ``values[i]`` at the lattice offset ``at[i]`` (increasing),
    the other ``size - at.size`` atoms of the lattice empty. A single-step PMF with coarse tails has most of its
    lattice empty (cells up to 64 h wide far out), and a history of many distinct factors keeps one per factor
    and end. The same PMF as the dense one: :attr:`mass` is the lattice (zeros filled in, made when read), and the
    code that composes many factors reads :meth:`points` (the FFT's scatter, the MGFs, the moments) and gets
    bitwise the values the dense lattice gives (tests/test_pld_sparse.py)."""

    def __init__(self, offset: int, values: np.ndarray, at: np.ndarray, size: int, inf_mass: float, h: float,
                 err_mass: float = 0.0, err_dipole: float = 0.0, err_quad: float = 0.0,
                 err_atoms: Optional[np.ndarray] = None, mono: Optional[np.ndarray] = None,
                 dip: Optional[np.ndarray] = None, quad: Optional[np.ndarray] = None, err_inf: float = 0.0,
                 err_at: Optional[np.ndarray] = None, moments: Optional[tuple] = None):
        self.offset, self.values, self.at, self._size = offset, values, at, int(size)
        self.inf_mass, self.h = inf_mass, h
        self.err_mass, self.err_dipole, self.err_quad, self.err_atoms = err_mass, err_dipole, err_quad, err_atoms
        self.mono, self.dip, self.quad, self.err_inf, self.err_at, self.moments = mono, dip, quad, err_inf, err_at, moments

    @property
    def mass(self) -> np.ndarray:
        """The dense lattice of masses (a new array each time it is read)."""
        out = np.zeros(self._size)
        out[self.at] = self.values
        return out

    @property
    def size(self) -> int:
        return self._size

    def points(self) -> tuple[Optional[np.ndarray], np.ndarray]:
        return self.at, self.values


# --------------------------------------------------------------------------------------------------
# Pairs. Each direction gives (inf_mass, support(tau) -> (lo, hi), tails(l) -> four log tails).
# --------------------------------------------------------------------------------------------------


def _fix(x: np.ndarray, nan: float = 0.0, posinf: Optional[float] = None, neginf: Optional[float] = None) -> np.ndarray:
    """``np.nan_to_num(x, nan=nan, posinf=posinf, neginf=neginf)`` of a float array (a new array, the same values),
    the replacements made on its non-finite entries only (those are few: twice as fast)."""
    bad = ~np.isfinite(x)
    out = np.array(x, dtype=float)
    if bad.any():
        out[bad] = np.nan_to_num(out[bad], nan=nan, posinf=posinf, neginf=neginf)
    return out


def _lsf(z):
    """log P(N(0,1) > z)."""
    return log_ndtr(-z)


def mills_rel_err(z, dz):
    """Bound of the relative error of Phi(z) and of Phi(-z) when z is replaced by a point within dz of it
    (docs/pld.md Sec. 2.2): by the mean value theorem the change of either tail is phi(zeta) dz for some
    zeta in [z - dz, z + dz], and phi(zeta) <= (|zeta| + 1) Phi(-|zeta|) (Mills ratio: Phi(-t) >= 2 phi(t) /
    (t + sqrt(t^2 + 4)) for t >= 0, Birnbaum 1942, Sampford 1953; so phi(t) / Phi(-t) <= (t + sqrt(t^2 +
    4)) / 2 <= t + 1), and Phi(-|zeta|) <= Phi(-|z|) e^{lam dz} <= min(Phi(z), Phi(-z)) e^{lam dz} with
    lam = |z| + dz + 1 (log Phi(-t) has slope at most t + 1 there). So both tails move by a relative
    r e^r <= r (1 + 2 r), r = lam dz, for r <= 0.1; beyond that the bound is inf (never met on a grid)."""
    z = np.abs(np.asarray(z, dtype=float))
    dz = np.asarray(dz, dtype=float)
    with np.errstate(invalid="ignore", over="ignore"):
        r = (z + dz + 1.0) * dz
        out = np.where(r <= 0.1, r * (1.0 + 2.0 * r), np.inf)
    return np.where(dz == 0.0, 0.0, out)


def _mills(z_abs: np.ndarray, dz: np.ndarray) -> np.ndarray:
    """:func:`mills_rel_err` of finite |z| (the same operations; its dz = 0 case is the formula's own 0 there)."""
    with np.errstate(over="ignore"):
        r = (z_abs + dz + 1.0) * dz
        return np.where(r <= 0.1, r * (1.0 + 2.0 * r), np.inf)


class GaussianPair:
    r"""P = N(mu, 1), Q = N(0, 1): L ~ N(mu^2/2, mu^2) under P, N(-mu^2/2, mu^2) under Q; the same PLD in
    both directions (Balle & Wang 2018, Lemma 7 / Thm 8)."""

    symmetric = True

    def __init__(self, mu: float):
        self.mu = mu

    def key(self):
        return ("gaussian", self.mu)

    def directions(self):
        return (self,)

    inf_mass = 0.0

    def support(self, z: float = Z_TAIL) -> tuple[float, float]:
        m = self.mu
        return m * m / 2 - m * z, m * m / 2 + m * z

    def tails(self, l):
        m = self.mu
        zp = (l - m * m / 2) / m
        zq = (l + m * m / 2) / m
        return _lsf(zp), log_ndtr(zp), _lsf(zq), log_ndtr(zq)

    def arg_rel_err(self, l):
        """Relative errors of the P- and Q-tails at the computed grid points l = fl(j h) caused by the
        rounding of their arguments (docs/pld.md Sec. 2.2): z^ = fl(fl(l - fl(m m) / 2) / m) against
        z = (j h -+ m^2 / 2) / m: |l - j h| <= u |l|, fl(m m) / 2 within u m^2 / 2, then the subtraction and
        the division, relative u each, so |z^ - z| <= 1.01 u ((|l| + m^2 / 2) / m + 2 |z^|)."""
        m = self.mu
        l = np.asarray(l, dtype=float)
        zp = (l - m * m / 2) / m
        zq = (l + m * m / 2) / m
        base = (np.abs(l) + m * m / 2) / m
        dzp = 1.01 * U * (base + 2.0 * np.abs(zp))
        dzq = 1.01 * U * (base + 2.0 * np.abs(zq))
        return mills_rel_err(zp, dzp), mills_rel_err(zq, dzq)


def _log_mix(lq1: float, lq: float, a, b):
    """log((1 - q) e^a + q e^b) with lq1 = log(1 - q), lq = log q."""
    return np.logaddexp(lq1 + a, lq + b)


def _at(v, mask):
    """``v`` at the points selected by ``mask``: a scalar parameter as it is, a per-point one (the parameters of
    stacked directions, :func:`stacked`) at the selected points."""
    return v[mask] if np.ndim(v) else v


class SubsampledDirection:
    """One direction of the subsampled Gaussian pair (sensitivity 1, noise multiplier s):
    remove: P = (1-q) N(0, s^2) + q N(1, s^2) vs Q = N(0, s^2); add: the same two swapped."""

    inf_mass = 0.0

    def __init__(self, s: float, q: float, remove: bool):
        self.s, self.q, self.remove = s, q, remove
        self.lq, self.lq1 = math.log(q), math.log1p(-q)

    def _loss(self, x):
        """L(x) = log((1 - q) + q exp((x - 1/2) / s^2)) of the remove direction (increasing in x)."""
        return np.logaddexp(self.lq1, self.lq + (x - 0.5) / (self.s * self.s))

    def _preimage(self, l):
        """x(l) with L(x) = l, for l > log(1 - q) (elsewhere -inf): x = s^2 y + 1/2 with y = log(e^l - 1 + q)
        - log q computed without cancelling the two logs (log1p(expm1(l) / q) for |l| < 0.5, (l - log q)
        + log1p(-(1 - q) e^{-l}) beyond), so that its rounding is relative to y (docs/pld.md Sec. 2.2)."""
        return self._preimage_parts(l, False)[0]

    def _preimage_err(self, l):
        """(x^, bound of |x^ - x(j h)|) for the computed grid points l = fl(j h) (docs/pld.md Sec. 2.2), by
        counting the roundings of :meth:`_preimage` (u per +, -, *, /; 2u for exp, expm1, log, log1p,
        within 1 ulp), each relative to the computed value it rounds (the 1.01 covers the difference
        between computed and exact magnitudes):
        |l| < 0.5: e1 = expm1(l) within 2u |e1| + 1.65 u |l| (its own rounding and that of l, e^l <= 1.65),
        t = e1 / q within (3u |e1| + 1.65 u |l|) / q, y = log1p(t) within that / (1 + t) + 2u |y|.
        |l| >= 0.5: b = (1 - q) e^{-l} relative (4 + |l|) u; C = log1p(-b) within b (4 + |l|) u / (1 - b)
        + 2u |C|; d = l - log q within u |l| + 2u |log q| + u |d|; y = d + C plus u |y|.
        x = s^2 y + 1/2: s^2 (dy + 2u |y|) + u |x|."""
        return self._preimage_parts(l, True)

    def _preimage_parts(self, l, with_err: bool):
        """x^ (and its error bound if ``with_err``), each branch evaluated only where it is used."""
        l = np.asarray(l, dtype=float)
        q, lq, s2 = self.q, self.lq, self.s * self.s
        u = U
        y = np.empty(l.shape)
        dy = np.empty(l.shape) if with_err else None
        small = np.abs(l) < 0.5
        q_s, q_l, lq_l = _at(q, small), _at(q, ~small), _at(lq, ~small)  # per-point parameters (stacked directions)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            ls = l[small]
            e1 = np.expm1(ls)
            t = e1 / q_s
            ys = np.log1p(t)
            y[small] = ys
            ll = l[~small]
            b = (1.0 - q_l) * np.exp(-ll)
            Cl = np.log1p(-b)
            d = ll - lq_l
            yl = d + Cl
            y[~small] = yl
            x = s2 * y + 0.5
            if with_err:
                dy[small] = (3 * u * np.abs(e1) + 1.65 * u * np.abs(ls)) / (q_s * (1.0 + t)) + 2 * u * np.abs(ys)
                dy[~small] = (b * (4.0 + np.abs(ll)) * u / (1.0 - b) + 2 * u * np.abs(Cl) + u * np.abs(ll)
                              + 2 * u * np.abs(lq_l) + u * np.abs(d) + u * np.abs(yl))
                dx = 1.01 * (s2 * (dy + 2 * u * np.abs(y)) + u * np.abs(x))
        x = np.where(l > self.lq1, _fix(x, nan=-np.inf), -np.inf)
        if not with_err:
            return x, None
        dx = np.where(np.isfinite(x), _fix(dx, nan=np.inf), 0.0)  # x = -inf: the tails are exact
        return x, dx

    def arg_rel_err(self, l):
        """Relative errors of the P- and Q-tails at the computed grid points caused by the rounding of
        their arguments z0 = x / s, z1 = (x - 1) / s (x the preimage of l, or of -l for the add
        direction; docs/pld.md Sec. 2.2): each of the mixture's terms moves by at most
        :func:`mills_rel_err` of its own argument, so the mixture by the larger of the two; N(0, s^2)
        alone by that of z0."""
        l = np.asarray(l, dtype=float)
        return self._arg_err_at(*self._preimage_err(l if self.remove else -l))

    def _arg_err_at(self, x, dx):
        """:meth:`arg_rel_err` from the preimage x and its error bound dx."""
        s = self.s
        with np.errstate(invalid="ignore"):
            z0, z1 = x / s, (x - 1.0) / s
            fin = np.isfinite(x)
            dz0 = np.where(fin, 1.01 * (dx / s + U * np.abs(z0)), 0.0)
            dz1 = np.where(fin, 1.01 * ((dx + U * np.abs(x - 1.0)) / s + U * np.abs(z1)), 0.0)
            # mills_rel_err at the finite points, 0 elsewhere (there dz = 0 at z = 0: r = 0, the same 0)
            r0 = _mills(np.where(fin, np.abs(z0), 0.0), dz0)
            r1 = _mills(np.where(fin, np.abs(z1), 0.0), dz1)
        mix = np.maximum(r0, r1)
        return (mix, r0) if self.remove else (r0, mix)

    def support(self, z: float = Z_TAIL) -> tuple[float, float]:
        s = self.s
        lo_x, hi_x = float(self._loss(-s * z)), float(self._loss(1.0 + s * z))
        if self.remove:
            return lo_x, hi_x
        return -float(self._loss(s * z)), -float(self._loss(-s * z))

    def tails(self, l):
        l = np.asarray(l, dtype=float)
        return self._tails_at(self._preimage(l if self.remove else -l))

    def tails_and_arg_err(self, l, rows: Optional[tuple] = None, coarser: Optional[np.ndarray] = None):
        """(:meth:`tails`, :meth:`arg_rel_err`) at ``l`` from one evaluation of the preimage (the same numbers as
        the two calls, which each compute it). ``rows`` = (F, L): ``l`` holds F rows of L increasing grid points
        (flattened), and each point's larger tail is evaluated only where the cells may use it
        (:meth:`_tails_rows`; elsewhere it is a placeholder 0); ``coarser``: also where the cells of the grid of
        the points at these positions of each row may."""
        l = np.asarray(l, dtype=float)
        x, dx = self._preimage_err(l if self.remove else -l)
        four = self._tails_at(x) if rows is None else self._tails_rows(x, rows, coarser)
        return four, self._arg_err_at(x, dx)

    def _tails_at(self, x):
        """The four log tails at the preimage x of l (remove: L > l <=> X > x; add: L' = -L > l <=> X < x(-l))."""
        s, lq, lq1 = self.s, self.lq, self.lq1
        if self.remove:
            z0, z1 = x / s, (x - 1.0) / s
            a_gt, a_le = _lsf(z0), log_ndtr(z0)  # N(0, s^2)
            b_gt, b_le = _lsf(z1), log_ndtr(z1)  # N(1, s^2)
            return _log_mix(lq1, lq, a_gt, b_gt), _log_mix(lq1, lq, a_le, b_le), a_gt, a_le
        z0, z1 = x / s, (x - 1.0) / s
        a_lt, a_ge = log_ndtr(z0), _lsf(z0)
        b_lt, b_ge = log_ndtr(z1), _lsf(z1)
        return a_lt, a_ge, _log_mix(lq1, lq, a_lt, b_lt), _log_mix(lq1, lq, a_ge, b_ge)

    def _tails_rows(self, x, rows: tuple, coarser: Optional[np.ndarray] = None):
        """:meth:`_tails_at` of F rows of L increasing grid points (x flattened), each tail evaluated only where
        the cells can use it (docs/pld.md Sec. 2.3 "Rows"), the same numbers there; 0 (log 1) elsewhere.

        The cells (:func:`cell_masses`, :func:`log_cell_masses`) and the tail errors read each point's tails
        only through the smaller one: cell j compares gt_j with le_{j+1} and takes both its tails from that
        side. A tail is *certainly small* at a point where it is <= Phi(-_SIDE_Z) ~ 0.242 (then the other is
        >= 0.758): remove, P(L > l) <= Phi(-z1) and P(L <= l) <= Phi(z0) for the mixture, Phi(-z0) and Phi(z0)
        for N(0, s^2); add, the mirror (P(L > l) = Phi(z0), Q(L <= l) <= Phi(-z1)). The le-sets are a prefix
        of each row, the gt-sets a suffix (x(l) is monotone), so a cell whose left point has gt certainly small
        has both points so, compares gt_j (<= 0.242) with le_{j+1} (>= 0.758, or the placeholder 0) and reads
        gt only: True either way; a cell whose right point has le certainly small reads le only, and the
        placeholder 0 of gt_j makes its comparison False, as the true value >= 0.758 does. Every other cell has
        both tails at both points. So gt is needed at i unless le is certainly small at i + 1, le unless gt is
        at i - 1 (for P and Q: the union of the two pairs' sets), and both at a row's first and last point
        (the mass below and above the grid). The min of a point's two tails is then the computed small one.
        ``coarser`` (F, L') positions: the points of a coarser grid among these (the halved grid's even points,
        :func:`grid_cells_both`); its cells' needs, by the same rule between its own neighbours, are added, so that
        its cells read what they would read on their own (the true value where they would have a placeholder)."""
        F, L = rows
        s, lq, lq1 = self.s, self.lq, self.lq1
        z0, z1 = x / s, (x - 1.0) / s
        Z0, Z1 = z0.reshape(F, L), z1.reshape(F, L)
        if self.remove:  # gt needed unless le is certainly small at the next point (le of the mixture by z0)
            le_small, gt_small = Z0 <= -_SIDE_Z, Z1 >= _SIDE_Z  # the mixture's gt by z1 (covers N(0)'s by z0)
        else:
            le_small, gt_small = Z1 >= _SIDE_Z, Z0 <= -_SIDE_Z  # Q(L <= l) <= Phi(-z1) (covers P's by z0)
        need_gt = np.ones((F, L), dtype=bool)
        need_gt[:, :-1] = ~le_small[:, 1:]
        need_le = np.ones((F, L), dtype=bool)
        need_le[:, 1:] = ~gt_small[:, :-1]
        if coarser is not None:
            r = np.arange(F)[:, None]
            ng = np.ones(coarser.shape, dtype=bool)
            ng[:, :-1] = ~le_small[r, coarser[:, 1:]]
            nl = np.ones(coarser.shape, dtype=bool)
            nl[:, 1:] = ~gt_small[r, coarser[:, :-1]]
            rr = np.broadcast_to(r, coarser.shape)
            np.logical_or.at(need_gt, (rr, coarser), ng)
            np.logical_or.at(need_le, (rr, coarser), nl)
        g, e = need_gt.reshape(-1), need_le.reshape(-1)
        lq_g, lq1_g, lq_e, lq1_e = _at(lq, g), _at(lq1, g), _at(lq, e), _at(lq1, e)
        n = x.size
        if self.remove:
            a_gt, a_le, p_gt, p_le = np.zeros(n), np.zeros(n), np.zeros(n), np.zeros(n)
            ag, ae = _lsf(z0[g]), log_ndtr(z0[e])  # N(0, s^2)
            a_gt[g], a_le[e] = ag, ae
            p_gt[g] = _log_mix(lq1_g, lq_g, ag, _lsf(z1[g]))
            p_le[e] = _log_mix(lq1_e, lq_e, ae, log_ndtr(z1[e]))
            return p_gt, p_le, a_gt, a_le
        a_lt, a_ge, q_gt, q_le = np.zeros(n), np.zeros(n), np.zeros(n), np.zeros(n)
        al, ag = log_ndtr(z0[g]), _lsf(z0[e])
        a_lt[g], a_ge[e] = al, ag
        q_gt[g] = _log_mix(lq1_g, lq_g, al, log_ndtr(z1[g]))
        q_le[e] = _log_mix(lq1_e, lq_e, ag, _lsf(z1[e]))
        return a_lt, a_ge, q_gt, q_le


class SubsampledGaussianPair:
    r"""The subsampled Gaussian mechanism's worst-case pair, both directions (sensitivity 1 in units of the
    event's sensitivity, noise multiplier s, sampling rate q):

    * Poisson sampling, add/remove neighbours: remove (1-q) N(0, s^2) + q N(1, s^2) vs N(0, s^2), add the
      reverse: tight dominating pairs of the two directions (Zhu, Dong & Wang 2022, arXiv 2106.08567,
      Sec. 5 on subsampling; the pairs dp_accounting and prv_accountant use), realised by a dataset whose
      other examples contribute nothing.
    * Sampling without replacement, replace-one neighbours: the same pairs dominate (Balle, Barthe &
      Gaboardi 2018, arXiv 1807.01647, Thm 10: delta'(log(1 + q(e^eps - 1))) <= q delta(eps) for every eps,
      the profile of this pair; Zhu, Dong & Wang 2022, Sec. 5), and are realised (D = (a, c, ..., c) against
      D' = (c, ..., c)). Under zero-out the accounting layer prices this pair at twice the sensitivity: it
      dominates but is not realised by a zero-out pair (the null example displaces another from the batch),
      so a *lower* end there bounds the pair, not the mechanism (``PLD.realisable``;
      ``privcal.accounting.pairs``, docs/pld.md section 1.3).
    """

    symmetric = False

    def __init__(self, noise_multiplier: float, sample_rate: float):
        self.s, self.q = noise_multiplier, sample_rate

    def key(self):
        return ("subsampled", self.s, self.q)

    def directions(self):
        return (SubsampledDirection(self.s, self.q, True), SubsampledDirection(self.s, self.q, False))


class LaplacePair:
    r"""P = Lap(0, b), Q = Lap(Delta, b), eps0 = Delta / b: L = (|x - Delta| - |x|) / b, with atoms of P-mass 1/2
    at eps0 and e^{-eps0}/2 at -eps0 (dp_accounting's ``from_laplace_mechanism``; Koskela et al. 2021,
    arXiv 2102.12412, Sec. 6). The same PLD in both directions."""

    symmetric = True
    inf_mass = 0.0

    def __init__(self, eps0: float):
        self.e0 = eps0

    def key(self):
        return ("laplace", self.e0)

    def directions(self):
        return (self,)

    def support(self, z: float = Z_TAIL) -> tuple[float, float]:
        return -self.e0, self.e0

    def arg_rel_err(self, l):
        """Relative errors of the tails from the rounding of x_l = (e0 - l) / 2 at l = fl(j h) (docs/pld.md
        Sec. 2.2): |x_l^ - x_l| <= 1.01 u (|l| + |x_l|) (l, the subtraction; the halving is exact), and each
        log tail has slope at most 1 in x_l (log(1 - e^{-x}/2) has slope e^{-x} / (2 - e^{-x}) <= 1), so the
        tails move by a relative e^d - 1 <= d (1 + d). (Where a grid point is within round-off of an atom at
        +-e0 the comparison, not a slope, decides: :func:`clear_of_grid` moves the atom clear first.)"""
        l = np.asarray(l, dtype=float)
        xl = np.clip((self.e0 - l) / 2.0, 0.0, self.e0)
        d = 1.01 * U * (np.abs(l) + xl)
        inside = (l >= -self.e0) & (l < self.e0)
        r = np.where(inside, d * (1.0 + d), 0.0)
        return r, r

    def tails(self, l):
        # L > l  <=>  x < x_l = (Delta - b l)/2, in units b = 1: x_l = (e0 - l)/2 in [0, e0] for l in [-e0, e0)
        e0 = self.e0
        l = np.asarray(l, dtype=float)
        xl = np.clip((e0 - l) / 2.0, 0.0, e0)
        with np.errstate(divide="ignore"):
            p_le = math.log(0.5) - xl  # P(X >= x_l) for x_l >= 0
            p_gt = np.log(-np.expm1(p_le))  # 1 - e^{-x}/2
            q_gt = math.log(0.5) + (xl - e0)  # Q(X < x_l) = e^{x_l - Delta}/2
            q_le = np.log(-np.expm1(q_gt))
        above, below = l >= e0, l < -e0
        ninf, zero = -np.inf, 0.0
        p_gt = np.where(above, ninf, np.where(below, zero, p_gt))
        p_le = np.where(above, zero, np.where(below, ninf, p_le))
        q_gt = np.where(above, ninf, np.where(below, zero, q_gt))
        q_le = np.where(above, zero, np.where(below, ninf, q_le))
        return p_gt, p_le, q_gt, q_le


class ApproxDPPair:
    r"""The dominating pair of every (eps0, delta0)-DP mechanism (Kairouz, Oh & Viswanath 2015, Thm 2.4;
    Murtagh & Vadhan 2016): loss +inf with P-mass delta0, eps0 with (1 - delta0) e^{eps0} / (1 + e^{eps0}),
    -eps0 with (1 - delta0) / (1 + e^{eps0}) — binary randomized response with a delta0 flag. Symmetric."""

    symmetric = True

    def __init__(self, eps0: float, delta0: float):
        self.e0, self.d0 = eps0, delta0
        self.inf_mass = delta0

    def key(self):
        return ("approx", self.e0, self.d0)

    def directions(self):
        return (self,)

    def support(self, z: float = Z_TAIL) -> tuple[float, float]:
        return -self.e0, self.e0

    def arg_rel_err(self, l):
        """No argument is rounded: the tails are step functions of l (docs/pld.md Sec. 2.2; a grid point
        within round-off of +-e0: :func:`clear_of_grid` moves the atom clear first)."""
        z = np.zeros(np.shape(l))
        return z, z

    def tails(self, l):
        e0, d0 = self.e0, self.d0
        l = np.asarray(l, dtype=float)
        with np.errstate(divide="ignore"):
            lw = math.log1p(-d0) if d0 < 1 else -math.inf
            la = lw - math.log1p(math.exp(-e0))  # log P-mass at +e0 (= Q-mass at -e0)
            lb = lw - math.log1p(math.exp(e0))  # log P-mass at -e0 (= Q-mass at +e0)

            def tail(at_hi, at_lo, gt):
                hi_in = (l < e0) if gt else (l >= e0)
                lo_in = (l < -e0) if gt else (l >= -e0)
                return np.logaddexp(np.where(hi_in, at_hi, -np.inf), np.where(lo_in, at_lo, -np.inf))

            return tail(la, lb, True), tail(la, lb, False), tail(lb, la, True), tail(lb, la, False)


#: the rounding of a grid point: |fl(j h) - j h| <= u |j h| <= u (|eps0| + h) for the j nearest eps0 (one rounding,
#: round to nearest); an atom closer than twice that to some j h is moved (:func:`clear_of_grid`)
ATOM_CLEARANCE = 2.0


def clear_of_grid(direction, h: float, upper: bool):
    r"""``direction``, or where it is a Laplace or (eps0, delta0) pair whose atoms +-eps0 lie within round-off of a
    grid point j h, the same pair with eps0 moved just past that grid point: outward for the upper (dominating)
    end, inward for the lower (dominated) one (docs/pld.md Sec. 2.2, "Atoms at a grid point").

    The tails of these pairs are step functions of the loss at +-eps0, evaluated at the computed grid point
    fl(j h), which differs from j h by at most u |j h| unless h is a power of two (then it is exact). Where
    |eps0 - j h| <= R = ATOM_CLEARANCE u (eps0 + h) the comparison may put the atom in the cell below its true
    one, and the upper PMF would then hold its mass below its loss. The moved pair has eps0' = fl(j h + 2R)
    (upper) or fl(j h - 2R) (lower), more than R from j h, so every comparison of fl(j h) with +-eps0' is
    decided correctly. Domination: the (eps0', delta0) pair with eps0' >= eps0 dominates every (eps0', delta0)-DP
    mechanism (Kairouz, Oh & Viswanath 2015, Thm 2.4), among them the (eps0, delta0) pair, and the pair at
    eps0'' <= eps0 is dominated by it; the Laplace pair's privacy profile delta(eps) = max(0, 1 -
    e^{(eps - eps0) / 2}) (eps >= 0; a symmetric pair, so this fixes every hockey-stick divergence) increases
    with eps0 at every eps, so Laplace pairs are ordered by eps0 too (Zhu, Dong & Wang 2022, Lemma 1 /
    Blackwell).

    Args:
        direction: one direction of a pair (any; only Laplace and (eps0, delta0) pairs can move).
        h: the grid spacing, > 0.
        upper: True for the dominating end, False for the dominated one.

    Returns:
        ``direction`` itself where nothing moves, else a new pair of the same class.
    """
    if type(direction) not in (LaplacePair, ApproxDPPair) or direction.e0 == 0.0 or not math.isfinite(direction.e0):
        return direction
    if h == 2.0 ** math.floor(math.log2(h)):  # j h is exact: the comparison is exact
        return direction
    from fractions import Fraction
    e0, fh = Fraction(direction.e0), Fraction(h)
    j = round(e0 / fh)
    radius = Fraction(ATOM_CLEARANCE * U) * (e0 + fh)
    if abs(e0 - j * fh) > radius:
        return direction
    # 2 R past j h; float() moves it by at most u (e0 + h + 2 R) <= R / 2 (as ATOM_CLEARANCE = 2), so the moved atom
    # stays more than R from j h, beyond the reach of fl(j h)
    moved = float(j * fh + (2 * radius if upper else -2 * radius))
    if type(direction) is LaplacePair:
        return LaplacePair(moved)
    return ApproxDPPair(moved, direction.d0)


# --------------------------------------------------------------------------------------------------
# Discretisation.


def tail_rel_err(log_tail):
    """Bound of the relative error of a tail value exp(v) computed from log tails v (docs/pld.md
    Sec. 2.2): ``log_ndtr`` (LOG_NDTR_ERR u (2 + |v|)), then the subsampled mixture's ``logaddexp`` (its
    terms' errors average, plus a few u (1 + |v|)) and ``exp`` (u). The tails are those at the computed
    argument z (or preimage x); the rounding of the argument itself is :func:`arg_rel_err`, added by the
    caller."""
    v = np.abs(log_tail)
    return (LOG_NDTR_ERR + 6.0) * U * (3.0 + v)


def arg_rel_err(direction, l) -> tuple[np.ndarray, np.ndarray]:
    """(P, Q) bounds of the relative error of the tails at the grid points ``l`` that comes from the
    rounding of the tails' arguments (and of l = j h itself): the pair's own ``arg_rel_err`` (every pair
    must say; docs/pld.md Sec. 2.2)."""
    ap, aq = direction.arg_rel_err(l)
    shape = np.shape(l)
    return np.broadcast_to(np.asarray(ap, dtype=float), shape), np.broadcast_to(np.asarray(aq, dtype=float), shape)
# --------------------------------------------------------------------------------------------------


def tail_z(tail: float) -> float:
    """Standard-normal quantile of a tail mass (the reach of the grid in standard deviations); kept per tail (a
    history of many factors asks for the same few tails once per direction)."""
    z = _TAIL_Z.get(tail)
    if z is None:
        if len(_TAIL_Z) > 64:
            _TAIL_Z.clear()
        z = _TAIL_Z[tail] = float(-ndtri(tail))
    return z


_TAIL_Z: dict = {}


def grid_range(direction, h: float, tail: float = TAIL_MASS) -> tuple[int, int]:
    """First and last grid index (lo < hi) covering the direction's support up to P-mass ``tail`` on each
    side (about), one cell of margin below."""
    lo, hi = direction.support(tail_z(tail))
    return int(math.floor(lo / h)) - 1, max(int(math.ceil(hi / h)), int(math.floor(lo / h)))


def grid_ranges(directions: list, h: float, tail: float) -> list:
    """:func:`grid_range` of each direction; subsampled directions of one side (``stack``-able) in one pass over
    arrays of their parameters: the same operations on the same numbers as one at a time (the support's
    losses are elementwise, floor and ceil exact)."""
    if len(directions) < 2 or not all(type(d) is SubsampledDirection for d in directions) \
            or len({d.remove for d in directions}) > 1:
        return [grid_range(d, h, tail) for d in directions]
    a, b = grid_bounds(directions, h, tail)
    return [(int(x) - 1, max(int(y), int(x))) for x, y in zip(a.tolist(), b.tolist())]


def grid_bounds(directions: list, h: float, tail: float) -> tuple[np.ndarray, np.ndarray]:
    """(floor(lo / h), ceil(hi / h)) of each direction's support, as float arrays: :func:`grid_range` is
    (a - 1, max(b, a)) of them (exact integers as long as they are below 2^53), without a Python int per direction.
    Subsampled directions of one side (``stack``-able) in one pass, as :func:`grid_ranges`; any other direction on
    its own."""
    if len(directions) >= 2 and all(type(d) is SubsampledDirection for d in directions) \
            and len({d.remove for d in directions}) == 1:
        p = stacked(directions, np.ones(len(directions), dtype=int))
        z = tail_z(tail)
        s = p.s
        if p.remove:
            lo, hi = p._loss(-s * z), p._loss(1.0 + s * z)
        else:
            lo, hi = -p._loss(s * z), -p._loss(-s * z)
        return np.floor(lo / h), np.ceil(hi / h)
    sup = [d.support(tail_z(tail)) for d in directions]
    return (np.array([math.floor(lo / h) for lo, _ in sup], dtype=float),
            np.array([math.ceil(hi / h) for _, hi in sup], dtype=float))


def cell_masses(lgt: np.ndarray, lle: np.ndarray):
    """Masses of the cells between consecutive grid points from log tails at the points, each from the
    side with the smaller tails; and the size of the tail values, which bounds the local (dipole) error."""
    with np.errstate(invalid="ignore", over="ignore"):
        gt = -np.expm1(lgt[..., 1:] - lgt[..., :-1])  # (T_j - T_{j+1}) / T_j
        le = -np.expm1(lle[..., :-1] - lle[..., 1:])
        use_gt = lgt[..., :-1] <= lle[..., 1:]
        mass = np.where(use_gt, np.exp(lgt[..., :-1]) * gt, np.exp(lle[..., 1:]) * le)
    mass = _fix(mass, nan=0.0, posinf=0.0)
    small = np.minimum(np.exp(lgt), np.exp(lle))
    return np.maximum(mass, 0.0), small


def log_cell_masses(lgt: np.ndarray, lle: np.ndarray) -> np.ndarray:
    """The logs of :func:`cell_masses` (-inf for an empty or negative cell), kept in log space: a cell's
    Q-mass underflows far before e^{g_j} times it does (losses beyond ~700 nats)."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        gt = -np.expm1(lgt[..., 1:] - lgt[..., :-1])
        le = -np.expm1(lle[..., :-1] - lle[..., 1:])
        use_gt = lgt[..., :-1] <= lle[..., 1:]
        out = np.where(use_gt, lgt[..., :-1] + np.log(gt), lle[..., 1:] + np.log(le))
    return _fix(out, nan=-np.inf, posinf=-np.inf)


#: directions whose grid cells are kept per cache (:func:`pmfs`'s ``cells``: two entries each, the grid and the halved
#: grid)
CELLS_KEPT = 8


#: a grid shorter than this many cells is kept uniform (the coarse tails' extra tail evaluations would cost more)
_COARSE_MIN_CELLS = 256


def grid_points(direction, h: float, tail: float, coarse: Optional[tuple]) -> np.ndarray:
    """Lattice indices of the grid points (losses idx h): every index from grid_range's lo to hi, or, with
    ``coarse`` = (K, thr), graded coarse tails (:func:`point_rows`). The tails of a subsampled step far out
    hold little mass over a long range of losses (~20,000 cells at q = 1e-3, sigma = 0.8): coarse cells there
    keep the same construction (a dominating split, a dominated pairing, each cell whatever its width) at a
    fraction of the evaluations (docs/pld.md Sec. 2.3)."""
    idx, n = point_rows([direction], h, tail, coarse)
    return idx[0, :n[0]]


def _coarse_levels(K: int, thr: float) -> list:
    """(k, log threshold) for k = 1, 2, 4, ..., K / 2: cells at most k h wide where the P-mass beyond the point
    (on the side of the smaller tail) exceeds thr (K / 2k)^2, K h wide beyond thr. The extra spread a cell
    of width w adds to a split is ~ w^2 times its mass (docs/pld.md Sec. 2.3), so each band adds about the
    same, thr K^2 h^2 per step, and the points thin out geometrically away from the bulk."""
    out = []
    k = 1
    while k < K:
        out.append((k, math.log(thr * (K / (2 * k)) ** 2)))
        k *= 2
    return out


def point_rows(directions: list, h: float, tail: float, coarse: Optional[tuple],
                stack: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """(idx, n): the grid points of each direction as rows of lattice indices, row f holding its n[f] points
    increasing and padded with copies of its last one. Without ``coarse``, or on a grid shorter than
    _COARSE_MIN_CELLS: every index from grid_range's lo to hi. With ``coarse`` = (K, thr) the tails are taken at
    the multiples of K (one pass over all directions with ``stack``: subsampled directions of one side,
    :func:`stacked`), and the points are graded by the P-mass beyond (:func:`_coarse_levels`): every index
    where it exceeds the first level's threshold on both sides, every k-th in each next band, every K-th beyond
    the last, plus lo and a last point >= hi. The bands' ends are multiples of K (where the tails were taken),
    so each band's points are multiples of its k and every cell width is an integer times h. The tails are
    monotone in l, so the bands are nested; each is clipped into the next wider one all the same."""
    ranges = grid_ranges(directions, h, tail) if stack else [grid_range(d, h, tail) for d in directions]
    r = np.array(ranges, dtype=np.int64).reshape(-1, 2)
    lo, hi = r[:, 0], r[:, 1]
    F = lo.size
    todo = np.flatnonzero(hi - lo >= _COARSE_MIN_CELLS) if coarse is not None else np.empty(0, dtype=np.int64)
    if todo.size == 0:
        n = hi - lo + 1
        L = int(n.max())
        idx = lo[:, None] + np.minimum(np.arange(L)[None, :], (n - 1)[:, None])
        return idx, n
    K, thr = coarse
    levels = _coarse_levels(K, thr)
    first = -(-lo[todo] // K) * K
    counts = (hi[todo] + K - first + K - 1) // K  # multiples of K in [first, hi + K)
    cps = [np.arange(int(a), int(a) + int(c) * K, K) for a, c in zip(first.tolist(), counts.tolist())]
    if not stack or todo.size == 1:
        lgts, lles = [], []
        for f, cp in zip(todo.tolist(), cps):
            lgt, lle, _, _ = directions[f].tails(cp * h)
            lgts.append(lgt)
            lles.append(lle)
        lgt, lle = np.concatenate(lgts), np.concatenate(lles)
    else:
        params = stacked([directions[f] for f in todo.tolist()], counts)
        lgt, lle, _, _ = params.tails(np.concatenate(cps) * h)
    T, C = todo.size, int(counts.max())
    inside = np.arange(C)[None, :] < counts[:, None]
    G = np.full((T, C), -np.inf)  # padding: beyond the row (a first gt below any threshold is past its end)
    E = np.full((T, C), np.inf)  # padding: never below a threshold
    G[inside], E[inside] = lgt, lle
    lo_t, hi_t = lo[todo], hi[todo]
    a_k, b_k = [], []
    for _, lthr in levels:
        jb = np.argmax(G <= lthr, axis=1)  # the first coarse point whose gt is below the threshold
        b_k.append(np.where(jb < counts, first + jb * K, hi_t))
        below = E <= lthr
        ja = C - 1 - np.argmax(below[:, ::-1], axis=1)  # the last one whose le is below it
        a_k.append(np.where(below.any(axis=1), first + ja * K, lo_t))
    graded = a_k[-1] < b_k[-1]
    for i in range(len(levels) - 2, -1, -1):  # nested: each band inside the next wider one
        a_k[i] = np.minimum(np.maximum(a_k[i], a_k[i + 1]), b_k[i + 1])
        b_k[i] = np.minimum(np.maximum(b_k[i], a_k[i]), b_k[i + 1])
    top = np.where(b_k[-1] < hi_t, first + (counts - 1) * K, hi_t)
    # segments (start, stop, step) of each row, in increasing order
    segs = [(lo_t, lo_t + 1, 1), (first + K * (first == lo_t), a_k[-1], K)]
    for i in range(len(levels) - 1, 0, -1):
        k = levels[i][0]
        segs.append((np.where(a_k[i] > lo_t, a_k[i], lo_t + k), a_k[i - 1], k))
    segs.append((np.maximum(a_k[0], lo_t + 1), b_k[0] + 1, 1))
    for i in range(1, len(levels)):
        k = levels[i][0]
        segs.append((b_k[i - 1] + k, b_k[i] + 1, k))
    segs.append((b_k[-1] + K, top + 1, K))
    # (T, segments) arrays of the segments' starts, stops and steps (each a scalar or one value per row), filled by
    # column: the values np.stack of their broadcasts gives, without a broadcast view per entry
    start, stop, step = (np.empty((T, len(segs)), dtype=np.result_type(*[np.asarray(s[c]) for s in segs]))
                         for c in range(3))
    for i, (a, b, k) in enumerate(segs):
        start[:, i], stop[:, i], step[:, i] = a, b, k
    # a row not graded (no band below the thresholds): every index
    start[~graded], stop[~graded], step[~graded] = 0, 0, 1
    start[~graded, 0], stop[~graded, 0] = lo_t[~graded], hi_t[~graded] + 1
    cnt = np.maximum((stop - start + step - 1) // step, 0)
    last = np.max(np.where(cnt > 0, start + (cnt - 1) * step, lo_t[:, None]), axis=1)
    tail_seg = last < hi_t  # a last point >= hi
    start = np.concatenate([start, hi_t[:, None]], axis=1)
    step = np.concatenate([step, np.ones((T, 1), dtype=step.dtype)], axis=1)
    cnt = np.concatenate([cnt, tail_seg[:, None].astype(cnt.dtype)], axis=1)
    # every row: the graded ones from their segments, the others every index
    n = hi - lo + 1
    n[todo] = cnt.sum(axis=1)
    L = int(n.max())
    idx = lo[:, None] + np.minimum(np.arange(L)[None, :], (n - 1)[:, None])
    c = cnt.ravel()
    seg = np.repeat(np.arange(c.size), c)
    within = np.arange(seg.size) - np.repeat(np.cumsum(c) - c, c)
    values = start.ravel()[seg] + step.ravel()[seg] * within
    rows_t = seg // cnt.shape[1]
    n_t = n[todo]
    pos = np.arange(seg.size) - np.repeat(np.cumsum(n_t) - n_t, n_t)
    sub = np.empty((T, L), dtype=idx.dtype)
    sub[rows_t, pos] = values
    sub = np.where(np.arange(L)[None, :] < n_t[:, None], sub, sub[np.arange(T), n_t - 1][:, None])
    idx[todo] = sub
    return idx, n


def stacked(directions: list, counts) -> "SubsampledDirection":
    """One :class:`SubsampledDirection` object for many (the same side, add or remove), each direction's
    parameters repeated ``counts[f]`` times (one per grid point it is evaluated at): the elementwise formulas
    of the class then evaluate every direction's points in one pass."""
    out = SubsampledDirection.__new__(SubsampledDirection)
    out.remove = directions[0].remove
    for name in ("s", "q", "lq", "lq1"):  # lq, lq1: math.log per direction, the same numbers as one at a time
        setattr(out, name, np.repeat(np.array([getattr(d, name) for d in directions]), counts))
    return out


@dataclass
class GridCells:
    """The grid cells of F directions as rows (docs/pld.md Sec. 2.3): row f holds direction f's n[f] points
    (lattice indices ``idx``, losses ``g``) and n[f] - 1 cells; shorter rows are padded with copies of their last
    point, whose cells are empty (the tails at equal points give zero mass) and whose tail errors are zero, so
    that every construction below treats a padded cell as absent. One direction is one row."""

    n: np.ndarray  # points per row
    lo: np.ndarray  # first lattice index per row
    idx: np.ndarray
    g: np.ndarray
    p_gt: np.ndarray
    p_le: np.ndarray
    q_le: np.ndarray
    p: np.ndarray  # P-mass of each cell
    llr: np.ndarray  # log Q-mass of each cell
    rt: np.ndarray  # e^{g_j} Q of each cell, capped at p
    rt_raw: np.ndarray
    ap: np.ndarray
    aq: np.ndarray
    p_err: np.ndarray  # error of the P-tails at each point (kp * p_small)
    q_err: np.ndarray  # error of the e^g Q-tails at each point (kq * r_small)
    te: np.ndarray  # error of the tails at each point (zero at padded points)
    below: np.ndarray
    above: np.ndarray
    below_rt: np.ndarray
    inf_mass: np.ndarray  # the directions' own mass at +inf

    @property
    def wide(self) -> bool:
        """Whether some cell is wider than h (coarse tails)."""
        return bool(np.any(np.diff(self.idx, axis=-1) > 1))


def grid_cells_rows(directions: list, h: float, tail: float, coarse: Optional[tuple] = None,
                     stack: bool = False, halves: bool = False) -> GridCells:
    """The tails at the grid points and the cell masses of each direction, one row each (:class:`GridCells`).
    ``stack``: the directions (subsampled ones of one side) stacked (:func:`stacked`) and evaluated in one pass;
    else the single direction is evaluated on its own points. ``halves``: every cell one lattice step wide is cut
    at its midpoint (:func:`with_midpoints`), and the cells are returned on the lattice of h / 2 (what the
    dominated end pairs, :func:`lower_from_halves`)."""
    if halves:
        return grid_cells_both(directions, h, tail, coarse, stack)[1]
    idx, n = point_rows(directions, h, tail, coarse, stack)
    return _cells_from(directions, idx, n, h, *_evaluate(directions, idx, h, stack))


def grid_cells_both(directions: list, h: float, tail: float, coarse: Optional[tuple] = None,
                    stack: bool = False) -> tuple[GridCells, GridCells]:
    """(cells on the lattice of h, cells on h / 2 with every cell one step wide halved) from one evaluation of the
    tails at the halved grid's points: the grid's own points are among them (even lattice indices of h / 2, the
    same losses), and the larger tail is evaluated where either grid's cells may read it
    (:meth:`SubsampledDirection._tails_rows`), so the cells on h are bit for bit those of
    :func:`grid_cells_rows` (docs/pld.md Sec. 2.3, "Halves")."""
    idx, n = point_rows(directions, h, tail, coarse, stack)
    idx2, n2, pos = with_midpoints(idx, n, positions=True)
    four, ap, aq = _evaluate(directions, idx2, h / 2, stack, coarser=pos)
    half = _cells_from(directions, idx2, n2, h / 2, four, ap, aq)

    def take(a):
        return np.take_along_axis(a, pos, axis=1)

    whole = _cells_from(directions, idx, n, h, tuple(take(t) for t in four), take(ap), take(aq))
    return whole, half


def _evaluate(directions: list, idx: np.ndarray, h: float, stack: bool, coarser: Optional[np.ndarray] = None):
    """(the four log tails, ap, aq) at the points ``idx`` h of each row, as (F, L) arrays (:func:`grid_cells_rows`).
    ``coarser``: the positions of a coarser grid's points in each row, whose cells may read tails too."""
    F, L = idx.shape
    g = idx * h
    if not stack:
        flat, shape, evaluate = g[0], (1, L), directions[0]
    else:
        flat, shape, evaluate = g.ravel(), (F, L), stacked(directions, np.full(F, L))
    if type(evaluate) is SubsampledDirection:  # the preimage once for the tails and their argument errors
        four, (ap, aq) = (evaluate.tails_and_arg_err(flat, shape) if coarser is None
                          else evaluate.tails_and_arg_err(flat, shape, coarser=coarser))
    else:  # (a subclass may redefine either)
        four = evaluate.tails(flat)
        ap, aq = arg_rel_err(evaluate, flat)
    four = tuple(np.reshape(t, shape) for t in four)
    ap, aq = (np.reshape(np.broadcast_to(np.asarray(a, dtype=float), flat.shape), shape)
              for a in (ap, aq))  # the tails are those at rounded arguments (Sec. 2.2)
    return four, ap, aq


def _cells_from(directions: list, idx: np.ndarray, n: np.ndarray, h: float, four: tuple, ap: np.ndarray,
                aq: np.ndarray) -> GridCells:
    """:class:`GridCells` of rows of points ``idx`` (n[f] per row) on the lattice h from their tails (:func:`_evaluate`)."""
    F, L = idx.shape
    g = idx * h  # grid points g_0 .. g_m (exact where h is a power of two; else within u |j h|: clear_of_grid)
    p_gt, p_le, q_gt, q_le = four
    p, p_small = cell_masses(p_gt, p_le)  # P-mass of cell j = (g_j, g_{j+1}]
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        llr = log_cell_masses(q_gt, q_le)  # log Q-mass of cell j (in log space: it underflows first)
        lq_small = np.minimum(q_gt, q_le)
        r_small = np.exp(lq_small + g)  # size of e^g * Q-tails (what the split sees)
        rt = np.exp(llr + g[:, :-1])  # e^{g_j} * Q-mass of cell j (<= p_j), no 0 * inf
        kp = tail_rel_err(np.minimum(p_gt, p_le)) + ap
        kq = tail_rel_err(lq_small) + aq
    rt_raw = _fix(rt, nan=0.0)
    rt = np.minimum(rt_raw, p)
    below, above = np.exp(p_le[:, 0]), np.exp(p_gt[:, -1])  # a padded row's last point is its last point
    with np.errstate(over="ignore"):  # e^{g_0} Q below the grid may be inf (losses > 700 nats): no mixing there
        below_rt = np.exp(q_le[:, 0] + g[:, 0])
    with np.errstate(invalid="ignore"):
        point_exists = np.arange(L)[None, :] < n[:, None]  # a padded point has no tails
        p_err = _fix(kp * p_small) + np.where((p_small < TINY) & point_exists, SUBNORMAL_ERR, 0.0)
        q_err = _fix(kq * r_small) + np.where((r_small < TINY) & point_exists, SUBNORMAL_ERR, 0.0)
    te = p_err + q_err  # error of the tails at g_j
    if F > 1:
        te = np.where(np.arange(L)[None, :] < n[:, None], te, 0.0)
    inf_mass = np.array([float(d.inf_mass) for d in directions])
    return GridCells(n, idx[:, 0].copy(), idx, g, p_gt, p_le, q_le, p, llr, rt, rt_raw, ap, aq, p_err, q_err, te,
                  below, above, below_rt, inf_mass)


def with_midpoints(idx: np.ndarray, n: np.ndarray, positions: bool = False) -> tuple:
    """(idx, n) of :func:`point_rows` on the lattice of h / 2: every point doubled, and the midpoint 2 i + 1 inserted
    in every cell one step wide (i, i + 1); coarse cells (wider) are kept whole. Rows padded as before (copies of
    their last point). ``positions``: also where each of the given points went (padding: where the last one did)."""
    F, L = idx.shape
    valid = np.arange(L - 1)[None, :] < (n - 1)[:, None]
    mid = (np.diff(idx, axis=1) == 1) & valid
    step = np.ones((F, L), dtype=np.int64)
    step[:, :-1] += mid
    pos = np.cumsum(step, axis=1) - step  # where point j goes
    n2 = n + mid.sum(axis=1)
    L2 = int(n2.max())
    out = np.empty((F, L2), dtype=idx.dtype)
    rr, jj = np.nonzero(np.arange(L)[None, :] < n[:, None])
    out[rr, pos[rr, jj]] = 2 * idx[rr, jj]
    rm, jm = np.nonzero(mid)
    out[rm, pos[rm, jm] + 1] = 2 * idx[rm, jm] + 1
    last = out[np.arange(F), n2 - 1]
    out = np.where(np.arange(L2)[None, :] < n2[:, None], out, last[:, None])
    if positions:
        return out, n2, np.where(np.arange(L)[None, :] < n[:, None], pos, (n2 - 1)[:, None])
    return out, n2


def _grid_cells(direction, h: float, tail: float, cells: Optional[dict] = None,
                coarse: Optional[tuple] = None, halves: bool = False) -> GridCells:
    """:func:`grid_cells_rows` of one direction (``halves``: on the halved grid), kept in ``cells`` (read-only arrays)
    when given, so that the other end of the same bracket reuses them; the halved grid's cells come with the cells on
    h from one evaluation (:func:`grid_cells_both`), both kept."""
    key = (id(direction), h, tail, coarse, halves)
    if cells is not None and key in cells:
        return cells[key][1]
    if cells is None or not halves:
        out = grid_cells_rows([direction], h, tail, coarse, halves=halves)
        if cells is not None:
            _keep(cells, key, direction, out)
        return out
    both = grid_cells_both([direction], h, tail, coarse)  # and the cells on h, for an upper end still to build
    for half, out in zip((False, True), both):
        if key[:-1] + (half,) not in cells:
            _keep(cells, key[:-1] + (half,), direction, out)
    return both[1]


def _keep(cells: dict, key: tuple, direction, out: GridCells) -> None:
    """Keep ``out`` in ``cells`` under ``key`` (read-only arrays), the oldest entries beyond 2 CELLS_KEPT dropped."""
    for a in vars(out).values():
        if isinstance(a, np.ndarray):
            a.setflags(write=False)
    cells[key] = (direction, out)  # the direction is kept alive with its entry: its id stays its own
    while len(cells) > 2 * CELLS_KEPT:
        del cells[next(iter(cells))]


def pmfs(direction, h: float, *, upper: bool, tail: float = TAIL_MASS, cells: Optional[dict] = None,
         coarse: Optional[tuple] = None, halves: bool = True) -> Pmf:
    """The upper (dominating, split) or lower (dominated, swept) discrete PLD of one direction; the grid
    reaches about ``tail`` P-mass into each tail (the exact mass beyond goes to +inf, resp. is dropped).
    ``cells``: a dict in which the grid's tails and cell masses are kept for the other end (the caller's
    cache; the same direction object, h and tail give the same cells). ``coarse`` = (K, thr): cells K h wide
    where the P-mass beyond is below thr (:func:`grid_points`; h must be a power of two, so that every width
    is exact). ``halves`` (lower end): the pairing of halved cells first (:func:`lower_from_halves`, about half the
    variance taken from each step's loss, the grid evaluated again with its midpoints); False: the pairing of the
    whole cells (:func:`lower_rows`, from the cells the upper end reads)."""
    if not upper and halves:
        return lower_from_halves(_dominated(_grid_cells(direction, h, tail, cells, coarse, halves=True)), h)[0]
    c = _grid_cells(direction, h, tail, cells, coarse)
    return (_upper_rows(c, h) if upper else lower_rows(c, h))[0]


#: directions built together by :func:`pmfs_many` (rows of similar length: the padding stays small); short rows
#: (a step of large noise, a few hundred points) pay the per-call overhead once per 256 of them (10,000-step
#: schedule: the builds 1.85 -> 1.67 s of CPU against 64, the same PMFs)
_ROWS = 256


#: at most about this many lattice cells (rows x the longest grid range) per row block of :func:`pmfs_many`: the
#: arrays of a block of long rows (a step of small noise, ~30,000 cells) stay ~30 MB
_BLOCK_CELLS = 2**18


def _row_blocks(items: list, cells: list) -> list:
    """``items`` (ordered by their grid ranges' lengths ``cells``, increasing) cut into consecutive blocks of at most
    _ROWS rows and, beyond one row, at most _BLOCK_CELLS rows x the block's longest range."""
    blocks, cur = [], []
    for item, n in zip(items, cells):
        if cur and (len(cur) == _ROWS or (len(cur) + 1) * n > _BLOCK_CELLS):
            blocks.append(cur)
            cur = []
        cur.append(item)
    if cur:
        blocks.append(cur)
    return blocks


def pmfs_many(directions: list, h: float, *, ends: tuple, tail: float = TAIL_MASS,
              coarse: Optional[tuple] = None, lower_later: bool = False, per_atom: bool = True,
              compact: bool = False, halves: bool = True) -> dict:
    """:func:`pmfs` of many directions, both ``ends`` (True: upper, False: lower) from one computation of each
    grid, as {end: [Pmf per direction]} in the order given. Subsampled directions of one side are stacked
    (:func:`stacked`) and built by rows of about equal length, _ROWS at a time (fewer where the rows are long,
    :func:`_row_blocks`): the same constructions, the
    per-call overhead paid once per row block; any other direction is built on its own (``coarse`` applies to
    the subsampled ones only, as in :meth:`PLD._pmfs`). ``lower_later`` (with False in ``ends``): the lower end
    is returned as a :class:`LowerLater`, its dominated cells kept and the pairing run only when it is built
    (the same PMFs; a bracket of many factors needs the lower end of one direction only). ``per_atom`` False:
    the upper PMFs carry no ``err_atoms`` (a lattice-sized array each, read only where one PMF is composed once
    on its own, :func:`convolve.compose`, which composes a PMF without it through the FFT path instead).
    ``compact`` (with ``per_atom`` False; what a history of many factors keeps): the upper PMFs' error patterns
    ``mono``, ``dip``, ``quad`` are stored as bfloat16 rounded up (:func:`round_up_bf16`: each stored bound >= the
    float64 one, so it is a bound in its turn; docs/pld.md Sec. 2.10 "Memory and reuse"), and a sparse lower PMF
    built with its upper one shares its point offsets (``at``, the same grid points). ``halves`` (default, as
    :func:`pmfs`): the lower end from the halved cells (:func:`lower_from_halves`, both grids from one evaluation);
    False: from the whole cells (:func:`lower_rows`, the pairing alone: cheaper to build, about twice the
    variance taken from each step's loss)."""
    out = {e: [None] * len(directions) for e in ends}
    errors16 = compact and not per_atom
    later = LowerLater(len(directions), h, halves) if lower_later and False in ends else None
    sub = [i for i, d in enumerate(directions) if type(d) is SubsampledDirection]

    def cells_of(ds, co, stack=False):
        """(cells on h for the upper end, cells the lower end reads)"""
        if not halves or False not in ends:
            c = grid_cells_rows(ds, h, tail, co, stack=stack)
            return c, c
        if True in ends:
            return grid_cells_both(ds, h, tail, co, stack=stack)
        return None, grid_cells_rows(ds, h, tail, co, stack=stack, halves=True)

    def lower(c):
        return lower_from_halves(_dominated(c), h) if halves else lower_rows(c, h)

    for i in range(len(directions)):
        if type(directions[i]) is not SubsampledDirection:
            c, cl = cells_of([directions[i]], None)
            for e in ends:
                if e or later is None:
                    out[e][i] = (_upper_rows(c, h, per_atom, errors16) if e else lower(cl))[0]
                else:
                    later.blocks.append(([i], _dominated(cl)))
    for remove in (True, False):
        group = [i for i in sub if directions[i].remove == remove]
        if not group:
            continue
        sizes = grid_ranges([directions[i] for i in group], h, tail)
        order = sorted(range(len(group)), key=lambda k: sizes[k][1] - sizes[k][0])
        for block in _row_blocks([group[k] for k in order], [sizes[k][1] - sizes[k][0] + 1 for k in order]):
            ds = [directions[i] for i in block]
            c, cl = cells_of(ds, coarse, stack=len(ds) > 1)
            for e in ends:
                if not e and later is not None:
                    later.blocks.append((block, _dominated(cl)))
                    continue
                built = _upper_rows(c, h, per_atom, errors16) if e else lower(cl)
                for i, pm in zip(block, built):
                    out[e][i] = pm
            if compact and True in ends and False in ends and later is None:
                _share_points([out[True][i] for i in block], [out[False][i] for i in block])
    if later is not None:
        out[False] = later
    return out


def _share_points(uppers: list, lowers: list) -> None:
    """Each sparse lower PMF takes its upper twin's point offsets: both ends of a row are built on the same grid
    points (offsets idx - lo of the same :class:`GridCells`, of the same type), so the arrays are equal and one is
    kept."""
    for pu, pl in zip(uppers, lowers):
        if isinstance(pu, SparsePmf) and isinstance(pl, SparsePmf) and pu.at.dtype == pl.at.dtype \
                and pu.at.size == pl.at.size and pu.size == pl.size:
            pl.at = pu.at


def round_up_bf16(a: np.ndarray) -> np.ndarray:
    """``a`` (float64, nonnegative bounds) as bfloat16 rounded up, stored as uint16 (the upper half of a float32's
    bits): each entry decodes (:func:`pattern_values`) to the least bfloat16 >= it -- 8 significant bits, float32's
    exponent range: within a factor 1 + 2^-7 above it where it is at least 2^-126, at most 2^-133 where it is below;
    inf above the range, nan kept. The float32 cast rounds to nearest, so an entry it lowered is first moved up one
    float32 step (the least float32 >= it); then every float32 whose lower 16 bits are not all zero goes up to the
    next bfloat16 (one more in the upper half: a carry into the exponent is that number, and past the largest finite
    one it is inf). Half the bytes of float32 (docs/pld.md Sec. 2.10 "Memory and reuse")."""
    with np.errstate(over="ignore"):
        f = a.astype(np.float32)
    low = f.astype(float) < a
    if low.any():
        f[low] = np.nextafter(f[low], np.float32(np.inf))
    bits = f.view(np.uint32)
    out = (bits >> 16).astype(np.uint16)
    out += ((bits & 0xFFFF) != 0) & ~np.isnan(f)
    return out


def pattern_values(e: np.ndarray) -> np.ndarray:
    """An error pattern in float64 (exactly its values): a compact history's bfloat16 codes (:func:`round_up_bf16`,
    uint16) decoded, any other pattern converted. Every reader of ``mono``, ``dip``, ``quad`` goes through it."""
    if e.dtype == np.uint16:
        return (e.astype(np.uint32) << 16).view(np.float32).astype(float)
    return np.asarray(e, dtype=float)


class LowerLater:
    """The lower ends of :func:`pmfs_many` not built yet: each row block's dominated cells (:class:`_Dominated`,
    ~20 bytes per grid point, against 8 per lattice point of the built PMF); :meth:`build` runs the pairing
    (:func:`lower_from_halves` or, without ``halves``, :func:`lower_from`), the same PMFs as built at once from the same
    cells."""

    def __init__(self, count: int, h: float, halves: bool = True):
        self.count, self.h, self.halves = count, h, halves
        self.blocks: list = []  # (direction indices, _Dominated: on the halved grid where ``halves``)

    @property
    def nbytes(self) -> int:
        return sum(dm.nbytes for _, dm in self.blocks)

    def build(self) -> list:
        """The lower PMF of each direction, in the order given to :func:`pmfs_many`. Built once: each block's cells
        are let go as soon as its PMFs are built (the cells and the PMFs are not held in full at the same time)."""
        out: list = [None] * self.count
        blocks, self.blocks = self.blocks, []
        blocks.reverse()
        while blocks:
            block, dm = blocks.pop()
            for i, pm in zip(block, (lower_from_halves if self.halves else lower_from)(dm, self.h)):
                out[i] = pm
            del dm
        return out


def _offsets(c: GridCells) -> Optional[np.ndarray]:
    """Each point's lattice index relative to its row's first point (idx - lo), or None where no cell is wider
    than h (then the offsets are 0 .. n - 1 on every row)."""
    return c.idx - c.lo[:, None] if c.wide else None


def _lattice(n: np.ndarray, off: Optional[np.ndarray], arrays: list) -> list:
    """The arrays (one value per grid point, one row per direction, rows of n[f] points with lattice offsets
    ``off``, None: 0 .. n[f] - 1) placed on each row's lattice (coarse cells leave gaps): for each array, the list
    of its rows (1-D, of the lattice's size). A row without gaps is a view of its own points; the rows with gaps
    are scattered together, every array by one flat index: the same values at the same places."""
    F = n.size
    sizes = n if off is None else off[np.arange(F), n - 1] + 1
    out = [[a[f, :sizes[f]] for f in range(F)] for a in arrays]
    gaps = np.flatnonzero(sizes != n)  # rows with coarse cells
    if gaps.size:
        L = arrays[0].shape[1]
        W = int(sizes[gaps].max())
        rr, cc = np.nonzero(np.arange(L)[None, :] < n[gaps][:, None])
        src = gaps[rr] * L + cc  # flat positions in the arrays
        dst = rr * W + off[gaps[rr], cc]  # flat positions on the lattice rows
        for k, a in enumerate(arrays):
            full = np.zeros((gaps.size, W))
            full.reshape(-1)[dst] = a.reshape(-1).take(src)
            for r, f in enumerate(gaps.tolist()):
                out[k][f] = full[r, :sizes[f]]
    return out


def _sparse_rows(n: np.ndarray, off: Optional[np.ndarray], atoms: np.ndarray) -> list:
    """Each row of ``atoms`` (one value per grid point, rows of n[f] points at lattice offsets ``off``, None: 0 ..
    n[f] - 1) as (at, values, size, total): ``at`` None and ``values`` a view of the row's lattice where it has no
    gaps, else its points' offsets (uint16 on a lattice of at most 2^16 points, else int32) and values (views of
    ``atoms``, kept for a :class:`SparsePmf`); ``size`` the lattice's length and ``total`` = float(lattice.sum()),
    the sum of the dense lattice (a pairwise sum, whose rounding depends on where the zeros sit: taken on the lattice
    :func:`_lattice` builds, a temporary here, so that the moments are bitwise those of the dense PMF)."""
    F = n.size
    sizes = n if off is None else off[np.arange(F), n - 1] + 1
    out: list = [None] * F
    gaps = np.flatnonzero(sizes != n)
    for f in np.flatnonzero(sizes == n).tolist():
        row = atoms[f, :sizes[f]]
        out[f] = (None, row, int(sizes[f]), float(row.sum()))
    if gaps.size:
        (full,) = _lattice(n[gaps], off[gaps], [atoms[gaps]])
        at = off[gaps]
        top = int(sizes[gaps].max())  # the offsets are < top
        want = np.uint16 if top <= 2**16 else np.int32 if top <= 2**31 else at.dtype
        if at.dtype != want:
            at = at.astype(want)  # the same offsets in 2 or 4 bytes (every reader indexes with them or widens them)
        for r, f in enumerate(gaps.tolist()):
            out[f] = (at[r, :n[f]], atoms[f, :n[f]], int(sizes[f]), float(full[r].sum()))
    return out


def _pmf_of(row: tuple, offset: int, inf_mass: float, h: float, **kw) -> Pmf:
    """The :class:`Pmf` (dense row) or :class:`SparsePmf` (a row with gaps) of one :func:`_sparse_rows` entry."""
    at, values, size, _ = row
    if at is None:
        return Pmf(offset, values, inf_mass, h, **kw)
    return SparsePmf(offset, values, at, size, inf_mass, h, **kw)


def _moments_row(row: tuple, lo: int, mean: float, var: float) -> Optional[tuple]:
    """The ``moments`` of a built Pmf from one :func:`_sparse_rows` entry: the total float(lattice.sum()) of its
    dense lattice (what the FFT's round-off bound caps by); None (computed when asked) where they are not finite."""
    tot = row[3]
    if not tot > 0 or not math.isfinite(mean) or not math.isfinite(var):
        return None
    return tot, lo + float(mean), float(var)


def cell_mass_err(p: np.ndarray) -> np.ndarray:
    """Bound of the rounding of each cell's P-mass p = exp(a) * -expm1(b - a) from its two log tails, beyond the
    tails' own errors: ``_CELL_REL`` u p where p is normal, and :data:`SUBNORMAL_ERR` more where it is not (a
    normal p was computed from normal numbers only: exp(a) >= p and the factor is <= 1; docs/pld.md Sec. 2.3)."""
    return _CELL_REL * U * p + np.where(p < TINY, SUBNORMAL_ERR, 0.0)


def rt_rel_err(c: "GridCells") -> np.ndarray:
    """Bound of the relative rounding of each cell's e^{g_j} Q-mass rt = exp(llr + g_j) beyond the tails' own
    errors and the cell's ``_CELL_REL`` u (docs/pld.md Sec. 2.3): llr = :func:`log_cell_masses` of the two log
    tails is lt_j + log(-expm1(d)) with d the tails' difference; the subtraction (u |d|, through expm1 at most
    u), expm1 (2u, through log 2u absolute), the log (2u |log(-expm1 d)| <= 2u |llr|: every log here is <= 0)
    and the final sum (u |llr|) put llr within 3u |llr| + 3u; llr + g_j rounds by u (|llr| + |g_j|), and exp
    adds 2u. So 4u |llr| + u |g_j| + 5u at most, and 4u (2 + |llr| + |g_j|) is charged (|llr| read as 0 where
    the cell is empty). Both ends use it: the dominated cells raise rt by it, the split moves it as a dipole."""
    with np.errstate(invalid="ignore"):
        return 4 * U * (2.0 + _fix(np.abs(c.llr), posinf=0.0) + np.abs(c.g[:, :-1]))


def rt_rounding(c: "GridCells") -> np.ndarray:
    """Bound of the rounding of each cell's rt in the dominating split: (:func:`rt_rel_err` + ``_CELL_REL`` u) rt.
    Through the split an error e of rt moves e / (1 - e^{-w}) between the cell's two atoms: a dipole, charged
    with the split's own round-off (docs/pld.md Sec. 2.3)."""
    return (rt_rel_err(c) + _CELL_REL * U) * c.rt + np.where((c.rt > 0) & (c.rt < TINY), SUBNORMAL_ERR, 0.0)


def span_dipoles(p_err: np.ndarray, q_err: np.ndarray, p: np.ndarray, rt: np.ndarray, widths: np.ndarray,
                  h: float, rt_err: Optional[np.ndarray] = None) -> np.ndarray:
    """Per grid point j, the total weight of the unit dipoles (1, -1) on neighbouring lattice points that the
    error patterns of point j make in the dominating split where its cells are wide (docs/pld.md Sec. 2.3,
    "Coarse tails"): a P-tail error a (|a| <= p_err_j) and an e^{g}-scaled Q-tail error (<= q_err_j) move mass
    between cell j-1 (K1 = w1 / h lattice steps wide) and cell j (K2 steps), and the split of a cell of width w
    turns a change (dp, dr) of its P- and e^{g} Q-mass into dp - du at its lower atom and du = (dp - dr) /
    (1 - e^{-w}) at its upper one. The pattern over atoms A = g_j - w1, B = g_j, C = g_j + w2 is (a - du1,
    du1 - a - du2, du2); its partial sums are a - du1 on the K1 links from A to B and -du2 on the K2 links from B
    to C, so it is the sum of K1 |a - du1| + K2 |du2| unit dipoles: at most K1 (pe + te / (1 - e^{-w1})) +
    K2 te / (1 - e^{-w2}) with te = pe + qe. The split's own round-off in cell j (du within 4u (p + rt) /
    (1 - e^{-w2})) adds K2 times that. Each unit dipole costs e h max|g'| (Sec. 2.4); anchored at C, the
    pattern's top atom, every one of them is charged at a tilt weight at least its own (tau >= 0). Row ends:
    no cell below the first point (its left part is the mass below the grid, charged as for a cell one step
    wide), none above the last (K2 = 0). ``widths``: the F x (L - 1) cell widths (0 for a padded cell);
    ``rt_err``: the F x (L - 1) rounding bounds of the cells' rt (:func:`rt_rounding`), moved like the split's."""
    F, L = p_err.shape
    u = U
    k = np.zeros((F, L + 1))  # k[:, j] = width of cell j - 1 in lattice steps (1 below the first point)
    k[:, 0] = 1.0
    k[:, 1:-1] = widths / h
    with np.errstate(divide="ignore", invalid="ignore"):
        om = -np.expm1(-k * h)  # 1 - e^{-w} within 2u (expm1 within 1 ulp; w = K h exact), covered by the 8u below
        inv = np.where(k > 0, k / om, 0.0)  # K / (1 - e^{-w}); 0 where there is no cell (K = 0)
    te = p_err + q_err
    split = np.zeros((F, L))
    split[:, :-1] = SPLIT_REL * u * (p + rt)  # the split's round-off in cell j, before its / (1 - e^{-w})
    if rt_err is not None:  # the rounding of the cell's rt itself (:func:`rt_rounding`), moved by the split alike
        split[:, :-1] += rt_err
    # rounding, counted along the longest path (the third term): om 2u, K / om u, te + split u, the product u,
    # the two sums 2u: 7u below the exact value at most, so the float sum times (1 + 8u) is at least it
    # (tests/test_guard_pld.py::test_span_dipoles_are_never_below_their_formula_in_exact_arithmetic)
    return (k[:, :-1] * p_err + inv[:, :-1] * te + inv[:, 1:] * (te + split)) * (1.0 + 8 * u)


def row_sums(a: np.ndarray, n: np.ndarray) -> np.ndarray:
    """Each row's sum over its own first ``n[f]`` entries, so that the padding of a row stacked with longer ones
    changes no bit: the same sum, in the same pairwise order, as the row built alone (:func:`pmfs_many` then
    gives bitwise the PMFs of :func:`pmfs`, whatever the other directions of the call).

    Args:
        a: a 2-D array, one row per direction.
        n: the number of entries of each row that are its own (the rest is padding).
    """
    if a.shape[0] == 1 and a.shape[1] == int(n[0]):
        return a.sum(axis=1)
    # the rows of one length at once: numpy sums along the contiguous last axis pairwise, row by row, as it sums
    # one contiguous row alone (the same blocks, the same order), so each entry is bitwise its row's own sum
    # (tests/test_pld_memo.py::test_row_sums_are_bitwise_each_rows_own_sum); a block of 256 rows has ~5 lengths
    n = np.asarray(n, dtype=np.int64)
    out = np.empty(a.shape[0], dtype=a[:0].sum(axis=1).dtype)  # the dtype each row's own sum has
    for m in np.unique(n).tolist():
        rows = np.flatnonzero(n == m)
        out[rows] = np.ascontiguousarray(a[rows, :m]).sum(axis=1)
    return out


def _point_moments(atoms: np.ndarray, off: Optional[np.ndarray], n: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Mean (relative to each row's first lattice point) and variance, in grid units, of each row's atoms at
    their lattice offsets ``off`` (None: 0 .. L - 1), from its first ``n[f]`` points alone (a padded point
    holds no mass; :func:`row_sums`). The same moments as those of the lattice masses, summed in another
    order; they only place the factors and scale the tilt and window searches (no bound reads them)."""
    pos = np.arange(atoms.shape[1], dtype=float)[None, :] if off is None else off.astype(float)
    tot = row_sums(atoms, n)
    with np.errstate(divide="ignore", invalid="ignore"):
        mean = row_sums(pos * atoms, n) / tot
        d = pos - mean[:, None]
        var = row_sums(d * d * atoms, n) / tot
    return mean, var


def _upper_rows(c: GridCells, h: float, per_atom: bool = True, errors16: bool = False) -> list:
    """The dominating (split) PMF of each row (docs/pld.md Sec. 2.3); ``per_atom`` False: without ``err_atoms``;
    ``errors16``: ``mono``, ``dip``, ``quad`` stored as bfloat16 rounded up (:func:`round_up_bf16`; the sums
    ``err_mass``, ``err_dipole``, ``err_quad`` are those of the float64 patterns)."""
    p, rt, te, ap = c.p, c.rt, c.te, c.ap
    F, L = te.shape
    wide_cells = np.diff(c.idx, axis=-1) > 1  # cells wider than h
    wide = bool(wide_cells.any())
    one_minus = -math.expm1(-h)  # 1 - e^{-h}: the error bounds below use the narrowest cell (the largest 1 / (1 - e^{-w}))
    split = np.zeros((F, L))
    rt_err = rt_rounding(c)
    # round-off of the split of cell j (atoms j, j+1), and the rounding of its rt, moved by the split alike
    split[:, :-1] = (SPLIT_REL * U * (p + rt) + rt_err) / one_minus
    # local patterns anchored at atom j (docs/pld.md, Sec. 2.3): a tail error at g_j is a dipole of the
    # cells j-1, j, which the split turns into a quadrupole te / (1 - e^{-h}) plus a dipole te
    dip = te + split
    quad = te / one_minus
    mono = np.zeros((F, L))
    cell_exists = np.arange(L - 1)[None, :] < (c.n - 1)[:, None]  # a padded cell holds nothing, computed or not
    mono[:, 1:] = np.where(cell_exists, cell_mass_err(p), 0.0)  # error of a cell mass (two exp, one expm1, products)
    if wide:
        # next to a wide cell the atoms are not neighbours on the lattice: the patterns there are written as sums
        # of unit dipoles (:func:`span_dipoles`), anchored at the pattern's top atom
        near = np.zeros((F, L), dtype=bool)
        near[:, :-1] |= wide_cells
        near[:, 1:] |= wide_cells
        span = np.where(near, span_dipoles(c.p_err, c.q_err, p, rt, np.diff(c.idx, axis=-1) * h, h, rt_err), 0.0)
        dip = np.where(near, 0.0, dip)
        quad = np.where(near, 0.0, quad)
        last = np.arange(L)[None, :] == (c.n - 1)[:, None]  # a row's last point: no cell above, the top is itself
        dip = dip + np.where(last, span, 0.0)
        dip[:, 1:] += np.where(last[:, :-1], 0.0, span[:, :-1])
    with np.errstate(invalid="ignore"):
        below_err = np.where(c.below > 0, (tail_rel_err(c.p_le[:, 0]) + ap[:, 0]) * c.below, 0.0)
        # error of the mass moved to +inf (upper end)
        err_inf = np.where(c.above > 0, (tail_rel_err(c.p_gt[:, -1]) + ap[:, -1]) * c.above, 0.0)
    mono[:, 0] += below_err
    err_mass = row_sums(mono, c.n)
    # per atom: a tail error at g_j reaches atoms j-1, j, j+1 (through cells j-1 and j)
    padded = np.zeros((F, L + 2))
    padded[:, 1:-1] = te
    spread = (padded[:, :-2] + padded[:, 1:-1] + padded[:, 2:]) * (2.0 / one_minus)
    shifted = np.zeros((F, L))
    shifted[:, 1:] = split[:, :-1]
    err_atoms = spread + te + split + shifted
    err_atoms[:, 0] += err_mass
    atoms = np.zeros((F, L))
    # each cell's split keeps its P- and Q-mass: (p - up) e^{-g_j} + up e^{-g_{j+1}} = e^{-g_j} rt at its width w
    cell_minus = -np.expm1(-np.diff(c.g, axis=-1)) if wide else one_minus
    with np.errstate(invalid="ignore", divide="ignore"):  # a padded cell: 0 / 0, clipped to its mass 0
        up = np.clip(_fix((p - rt) / cell_minus), 0.0, p)  # to g_{j+1}
    atoms[:, 1:] += up
    atoms[:, :-1] += p - up
    atoms[:, 0] += c.below
    inf_mass = np.minimum(c.inf_mass + c.above, 1.0)
    dip_sum, quad_sum = row_sums(dip, c.n), row_sums(quad, c.n)
    off = _offsets(c)
    mean, var = _point_moments(atoms, off, c.n)
    rows = _sparse_rows(c.n, off, atoms)
    if per_atom:
        (err_atoms,) = _lattice(c.n, off, [err_atoms])
    else:
        err_atoms = [None] * F
    if errors16:
        mono, dip, quad = round_up_bf16(mono), round_up_bf16(dip), round_up_bf16(quad)
    # the error anchors stay at the grid points (err_at: their lattice offsets, where a row has gaps: the same
    # array as the sparse PMF's)
    return [_pmf_of(rows[f], int(c.lo[f]), float(inf_mass[f]), h, err_mass=float(err_mass[f]),
                    err_dipole=float(dip_sum[f]), err_quad=float(quad_sum[f]), err_atoms=err_atoms[f],
                    mono=mono[f, :c.n[f]], dip=dip[f, :c.n[f]], quad=quad[f, :c.n[f]], err_inf=float(err_inf[f]),
                    err_at=rows[f][0], moments=_moments_row(rows[f], int(c.lo[f]), mean[f], var[f]))
            for f in range(F)]


def lower_rows(c: GridCells, h: float) -> list:
    """The dominated (lower) PMF of each row, built so that it needs no error bound (docs/pld.md Sec. 2.3).

    The computed cells are first made *dominated* by the true ones: P-masses lowered and e^{g_j} Q-masses
    raised by their error bounds (a tail error at g_j moves mass between the two cells it separates,
    so a cell's error is at most the errors of its two tails plus its own rounding). Lowering P and
    raising Q cellwise can only lower every delta of every composition (P^n(S) - e^eps Q^n(S) decreases
    for every S). A cell whose bounds no longer show a ratio >= e^{g_j} loses its P-mass (sound, and
    only possible for cells within round-off of a ratio e^{g_j}). The pairing (:func:`sweep_rows`) is then a
    post-processing of this dominated pair; its own round-off is absorbed by emitting an upper bound of
    e^{g_j} Q of each mixture only where it is below a lower bound of P."""
    return lower_from(_dominated(c), h)


@dataclass
class _Dominated:
    """The dominated cells of F rows (:func:`_dominated`), all the lower end needs of :class:`GridCells`: kept by
    :class:`LowerLater` until the lower end is asked for. ``off``: lattice offsets of the points (idx - lo, int32
    where they fit), None where no cell is wider than h."""

    n: np.ndarray
    lo: np.ndarray
    off: Optional[np.ndarray]
    p_lo: np.ndarray
    rt_hi: np.ndarray
    below_lo: np.ndarray
    below_rt_hi: np.ndarray

    @property
    def nbytes(self) -> int:
        return sum(a.nbytes for a in (self.n, self.lo, self.p_lo, self.rt_hi, self.below_lo, self.below_rt_hi)
                   + ((self.off,) if self.off is not None else ()))


def _dominated(c: GridCells) -> _Dominated:
    """The cells of each row made dominated by the true ones (:func:`lower_rows`): P-masses lowered, e^{g_j}
    Q-masses raised by their error bounds, the mass below the grid likewise."""
    u = U
    p, rt, g = c.p, c.rt_raw, c.g
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        p_err = _fix(c.p_err, nan=np.inf)
        q_err = _fix(c.q_err, nan=np.inf)
        rel_rt = rt_rel_err(c)
    p_lo = np.maximum(p - (p_err[:, :-1] + p_err[:, 1:] + _CELL_REL * u * p), 0.0)
    rt_hi = rt + q_err[:, :-1] + q_err[:, 1:] + rel_rt * rt + _CELL_REL * u * rt
    rt_hi = rt_hi + np.where((rt > 0) & (rt < TINY), SUBNORMAL_ERR, 0.0)  # a subnormal rt: its rounding is absolute
    # a cell below _P_FLOOR may have been computed through subnormal numbers, whose rounding is absolute
    # (2^-1074), not relative: it is dropped (dropping P-mass is sound; it costs < m 1e-290 of delta)
    p_lo = np.where((p_lo > rt_hi) & (p_lo > _P_FLOOR), p_lo, 0.0)
    rt_hi = np.minimum(rt_hi, p_lo)  # where P was dropped the cell is empty
    with np.errstate(invalid="ignore", over="ignore"):
        below_lo = np.where(c.below > 0, c.below * (1.0 - tail_rel_err(c.p_le[:, 0]) - c.ap[:, 0]), 0.0)
        below_rt_hi = np.where(c.below_rt > 0, c.below_rt * (1.0 + tail_rel_err(c.q_le[:, 0]) + c.aq[:, 0]
                                                             + 4 * u * (2.0 + np.abs(g[:, 0]))), 0.0)
    off = _offsets(c)
    if off is not None and int(off.max()) < 2**31:
        off = off.astype(np.int32)  # the same integers (the sweep and the lattice use differences and offsets)
    return _Dominated(c.n, c.lo, off, p_lo, rt_hi, np.maximum(below_lo, 0.0), below_rt_hi)


#: the one zero the dominated PMFs' error arrays are views of (a read-only broadcast, no memory per atom)
_ZERO = np.zeros(1)
_ZERO.setflags(write=False)


def lower_from(dm: _Dominated, h: float, emitted: Optional[tuple] = None) -> list:
    """The dominated PMF of each row from its dominated cells (the pairing, :func:`sweep_rows`; ``emitted``: mixtures
    made before, :func:`lower_from_halves`)."""
    F, M = dm.p_lo.shape
    atoms = np.zeros((F, M + 1))
    atoms[:, :-1] = sweep_rows(dm.p_lo, dm.rt_hi, h, dm.below_lo, dm.below_rt_hi, idx=dm.off, cells=dm.n - 1,
                               emitted=emitted)[0]
    mean, var = _point_moments(atoms, dm.off, dm.n)
    rows = _sparse_rows(dm.n, dm.off, atoms)
    out = []
    for f in range(F):
        zero = np.broadcast_to(_ZERO, rows[f][2])  # no error anywhere: one read-only view of a single 0.0
        out.append(_pmf_of(rows[f], int(dm.lo[f]), 0.0, h, err_atoms=zero, mono=zero, dip=zero, quad=zero,
                           moments=_moments_row(rows[f], int(dm.lo[f]), mean[f], var[f])))
    return out


def lower_from_halves(dm: _Dominated, h: float) -> list:
    """The dominated PMF of each row (on the lattice of h) from its dominated cells on the lattice of h / 2
    (:func:`grid_cells_rows` with ``halves``): the halves of the cells are paired first (:func:`pair_halves`), what
    is left of them is paired as whole cells (:func:`sweep_rows`) with the halves' mixtures among the emitted
    ones (docs/pld.md Sec. 2.3, "Halves")."""
    res, out0, r_out0 = pair_halves(dm, h)
    return lower_from(res, h, emitted=(out0, r_out0))


#: room left in a halves' mixture for the check's roundings (relative to its P-mass), as in the pairing
_HALF_ROOM = 64


def pair_halves(dm: _Dominated, h: float, parts: Optional[dict] = None) -> tuple:
    """The first stage of the dominated end on halved cells (docs/pld.md Sec. 2.3, "Halves").

    ``dm``: dominated cells on the lattice of h / 2 whose points are the grid's points on the lattice of h (even
    offsets) and the midpoints of its cells one step wide (odd offsets). At each grid point g_j between two such
    cells, the upper half U of the cell below ((g_j - h/2, g_j], ratio below e^{g_j}: a deficit e^{g_j} Q - P) and
    the lower half L of the cell above ((g_j, g_j + h/2], an excess P - e^{g_j} Q) are mixed so that the mixture's
    ratio is e^{g_j}: all of the one whose imbalance is smaller, the fraction of the other that balances it. The
    mixture spans h instead of the whole cells' 2h, so it takes a quarter of the variance from the loss (~h^2 / 12
    per unit mass against h^2 / 3, measured at q = 1e-3, sigma = 0.8). Cutting and mixing are post-processings
    where the fractions used sum to at most 1 in exact arithmetic: the unused fraction is fl(fl(1 - f) - 2u) <= 1 -
    f. A mixture is kept only where an upper bound of its e^{g_j} Q (U's taken times e^{h/2} rounded up, sums times
    1 + 8u) is below a lower bound of its P (times 1 - 8u), after 64u of its P-mass of room was left in the
    balance; otherwise both halves stay whole.

    Returns (residual, out, r_out): the unused parts as cells on the lattice of h (a :class:`_Dominated`: the
    unused fractions of cell j's two halves together, P times 1 - 4u, e^{g_j} Q times 1 + 4u, U's e^{g_j} Q from
    its own e^{g_j + h/2} Q times e^{-h/2} rounded up; a cell without halves as it is), and the mixtures' P lower
    bounds and e^{g_j} Q upper bounds at each g_j (one per cell of the residual, rows like its cells). ``parts``: a
    dict that receives the halves, fractions and factors used (for the tests' exact arithmetic)."""
    u = U
    F, M2 = dm.p_lo.shape
    n2 = dm.n
    L2 = M2 + 1
    off2 = np.broadcast_to(np.arange(L2), (F, L2)) if dm.off is None else np.asarray(dm.off, dtype=np.int64)
    inside = np.arange(L2)[None, :] < n2[:, None]
    even = inside & (off2 % 2 == 0)
    n = even.sum(axis=1)
    L = int(n.max())
    rank = np.cumsum(even, axis=1) - 1
    pos = np.zeros((F, L), dtype=np.int64)  # position of the grid's j-th point among the halved points
    rr, kk = np.nonzero(even)
    pos[rr, rank[rr, kk]] = kk
    pos = np.where(np.arange(L)[None, :] < n[:, None], pos, pos[np.arange(F), n - 1][:, None])
    M = L - 1
    first = pos[:, :-1]  # the cell (of h / 2) at the bottom of grid cell j: its lower half, or the whole cell
    halved = (pos[:, 1:] - first) == 2
    second = np.minimum(first + 1, M2 - 1) if M2 > 0 else first
    pA = np.take_along_axis(dm.p_lo, np.minimum(first, M2 - 1), axis=1) if M2 else np.zeros((F, M))
    rA = np.take_along_axis(dm.rt_hi, np.minimum(first, M2 - 1), axis=1) if M2 else np.zeros((F, M))
    pB = np.where(halved, np.take_along_axis(dm.p_lo, second, axis=1), 0.0) if M2 else np.zeros((F, M))
    rB = np.where(halved, np.take_along_axis(dm.rt_hi, second, axis=1), 0.0) if M2 else np.zeros((F, M))
    rem_a = np.ones((F, M))  # unused fraction of each cell's lower half (of the whole cell where not halved)
    rem_b = np.ones((F, M))
    out = np.zeros((F, M))
    r_out = np.zeros((F, M))
    if M >= 2 and h / 2 < 709.0:
        up = math.exp(h / 2) * (1.0 + 2 * u)  # e^{h/2} rounded up
        pU, rU = pB[:, :-1], rB[:, :-1] * up  # U: the upper half of cell j - 1, its e^{g_j} Q bound
        pL, rL = pA[:, 1:], rA[:, 1:]  # L: the lower half of cell j
        both = halved[:, :-1] & halved[:, 1:]
        deficit = rU - pU
        excess = pL - rL
        room = _HALF_ROOM * u * (pU + pL)
        with np.errstate(divide="ignore", invalid="ignore"):
            take_l = excess >= deficit + room  # all of U, a fraction of L
            f_l = np.where(take_l, np.minimum((deficit + room) / excess, 1.0), 1.0)
            f_u = np.where(take_l, 1.0, np.clip((excess - room) / deficit, 0.0, 1.0))
        f_l = np.where(np.isfinite(f_l) & (f_l >= 0.0), f_l, 0.0)
        f_u = np.where(np.isfinite(f_u), f_u, 0.0)
        p_e = (f_u * pU + f_l * pL) * (1.0 - 8 * u)
        r_e = (f_u * rU + f_l * rL) * (1.0 + 8 * u)
        fit = both & (p_e > 0.0) & (r_e <= p_e)
        out[:, 1:] = np.where(fit, p_e, 0.0)
        r_out[:, 1:] = np.where(fit, r_e, 0.0)
        # the unused fractions, <= 1 - f in exact arithmetic (fl(1 - f) <= 1 - f + u; minus 2u, rounded)
        rem_b[:, :-1] = np.where(fit, np.maximum((1.0 - f_u) - 2 * u, 0.0), 1.0)
        rem_a[:, 1:] = np.where(fit, np.maximum((1.0 - f_l) - 2 * u, 0.0), 1.0)
    down = math.exp(-h / 2) * (1.0 + 2 * u)  # e^{-h/2} rounded up: U's e^{g_j} Q from its e^{g_j + h/2} Q
    p_res = np.where(halved, (rem_a * pA + rem_b * pB) * (1.0 - 4 * u), pA)
    rt_res = np.where(halved, (rem_a * rA + rem_b * rB * down) * (1.0 + 4 * u), rA)
    if parts is not None:
        parts.update(pA=pA, rA=rA, pB=pB, rB=rB, halved=halved, rem_a=rem_a, rem_b=rem_b, out=out, r_out=r_out,
                     p_res=p_res, rt_res=rt_res)
        if M >= 2 and h / 2 < 709.0:
            parts.update(f_u=np.where(fit, f_u, 0.0), f_l=np.where(fit, f_l, 0.0), up=up)
    p_res = np.where((p_res > rt_res) & (p_res > _P_FLOOR), p_res, 0.0)
    rt_res = np.minimum(rt_res, p_res)
    grid = np.take_along_axis(off2, pos, axis=1) // 2
    off = None
    if np.any((np.diff(grid, axis=1) > 1) & (np.arange(M)[None, :] < (n - 1)[:, None])):
        off = grid.astype(np.int32) if int(grid.max()) < 2**31 else grid
    res = _Dominated(n, dm.lo // 2, off, p_res, rt_res, dm.below_lo, dm.below_rt_hi)
    return res, out, r_out


def halved_masses(p: np.ndarray, rt: np.ndarray, h: float, below_p: float, below_rt: float,
                  idx: np.ndarray, parts: Optional[dict] = None) -> tuple[np.ndarray, np.ndarray]:
    """(lattice indices of the grid's points on h, P-mass emitted at each) by the dominated construction on halved
    cells (:func:`pair_halves`, then :func:`sweep_rows`) of one row of cells on the lattice of h / 2: cell k between
    the points ``idx[k]`` and ``idx[k + 1]`` (lattice indices of h / 2; the grid's points even, the midpoints of its
    cells one step wide odd), P-mass ``p[k]`` and e^{g_k} Q-mass ``rt[k]`` (g_k = idx[k] h / 2) taken as certified
    bounds. What :func:`lower_from_halves` builds, for the tests (a post-processing of the cells); ``parts`` receives
    :func:`pair_halves`' halves, fractions and factors."""
    idx = np.asarray(idx, dtype=np.int64)[None, :]
    lo = idx[:, :1].copy()
    off = idx - lo
    dm = _Dominated(np.array([idx.shape[1]]), lo[:, 0], off if np.any(np.diff(off) > 1) else None,
                    np.asarray(p, dtype=float)[None, :], np.asarray(rt, dtype=float)[None, :],
                    np.array([below_p], dtype=float), np.array([below_rt], dtype=float))
    res, out0, r_out0 = pair_halves(dm, h, parts)
    out = sweep_rows(res.p_lo, res.rt_hi, h, res.below_lo, res.below_rt_hi, idx=res.off, cells=res.n - 1,
                     emitted=(out0, r_out0))[0]
    grid = res.lo[0] + (np.arange(res.n[0]) if res.off is None else res.off[0].astype(np.int64))
    return grid[:-1], out[0]


def dominated_masses(p: np.ndarray, rt: np.ndarray, h: float, below_p: float, below_rt: float, *,
                     fractions: bool = False, idx: Optional[np.ndarray] = None):
    """P-mass emitted at each g_j (j = 0..m-1) by the dominated construction of one PMF (:func:`sweep_rows`,
    one row). With ``fractions`` it also returns the pairing's (x, z, rest) per cell (for the tests: a
    post-processing needs a sum <= 1)."""
    out, x, z, left = sweep_rows(np.asarray(p, dtype=float)[None, :], np.asarray(rt, dtype=float)[None, :], h,
                                  np.array([below_p], dtype=float), np.array([below_rt], dtype=float),
                                  idx=None if idx is None else np.asarray(idx)[None, :])
    if fractions:
        return out[0], x[0], z[0], left[0]
    return out[0]


def sweep_rows(p: np.ndarray, rt: np.ndarray, h: float, below_p: np.ndarray, below_rt: np.ndarray, *,
                idx: Optional[np.ndarray] = None, cells: Optional[np.ndarray] = None,
                emitted: Optional[tuple] = None):
    """P-mass emitted at each g_j (j = 0..m-1) of each row by the dominated construction (docs/pld.md Sec. 2.3);
    with the pairing's fractions (x, z, rest). ``cells``: the number of cells of each row (padded cells beyond
    are empty). ``emitted``: (P lower bounds, e^{g_j} Q upper bounds) of mixtures already made at each g_j
    (:func:`pair_halves`), emitted with the pairing's and offered to the piles as partners.

    The pairing (:func:`_pair_level`) mixes a fraction of each cell's atom with a fraction of the atom
    below so that the mixture's ratio is e^{g_j}. A cell much heavier than its neighbours -- the mass piled
    at the infimum of a bounded-below loss or at the supremum of a bounded-above one -- keeps most of its
    atom; :func:`_absorb_piles` mixes the heaviest such rests with emitted mixtures further away (an
    atom at g_i taken up to a higher point, or down to a lower one, with the rest), and what is still left
    is emitted at its own g_j with its P-mass (its loss rounded down).

    Validity: cutting an atom, merging atoms and mixing are post-processings; a mixture is emitted only
    where a lower bound of its P-mass is at least an upper bound of e^{g} times its Q-mass (its loss is
    >= g), and every emission puts a lower bound of a P-mass at a loss at most its true loss. The composed
    delta_T(eps) = E_{P^T}[(1 - e^{eps - sum_i L_i})_+] is non-decreasing in every L_i and in every P-mass,
    so every delta of every composition of the emitted PMFs is at most the true one."""
    u = U
    # e^h rounded up: e^{g_j} Q of the cell below is not underestimated; beyond float range no cell can be
    # mixed (deficits are inf or nan, so nothing is paired) and each cell is emitted alone. Cells of
    # different widths (``idx``: the points' lattice indices, widths (idx_{j+1} - idx_j) h, exact for h a
    # power of two): the mixture at g_j takes e^{w_{j-1}} of the cell below, each rounded up alike
    if idx is None:
        eh = math.exp(h) * (1.0 + 2 * u) if h < 709.0 else math.inf
    else:
        w = np.diff(idx, axis=-1) * h
        w_prev = np.concatenate([w[:, :1], w[:, :-1]], axis=1)[:, :p.shape[1]]
        with np.errstate(over="ignore"):
            eh = np.where(w_prev < 709.0, np.exp(w_prev) * (1.0 + 2 * u), np.inf)
    out, r_out, left, x, z = _pair_level(p, rt, eh, below_p, below_rt)
    if emitted is not None:  # mixtures made before (:func:`pair_halves`): emitted with these, partners alike
        o0, r0 = emitted
        out = np.where(o0 > 0.0, (out + o0) * (1.0 - 2 * u), out)
        r_out = np.where(o0 > 0.0, (r_out + r0) * (1.0 + 2 * u), r_out)
    lp = left * p * (1.0 - 2 * u)  # the rest: P from below, e^{g_j} Q from above
    lrt = left * rt * (1.0 + 2 * u)
    out, lp = _absorb_piles(out, r_out, lp, lrt, h, idx, cells)
    out = out + lp * (1.0 - 4 * u)
    return out, x, z, left


#: rests absorbed by :func:`_absorb_piles` per PMF (the heaviest), and how far their partners may be (cells):
#: the near partners are tried first (a pile needs ~5 cells of them), the far ones where those fall short
PILES, _PILE_NEAR, _PILE_REACH = 8, 16, 512


def _absorb_piles(out, r_out, lp, lrt, h, idx=None, cells=None):
    """Mix the heaviest rests of the pairing with emitted mixtures (docs/pld.md Sec. 2.3), every row at once.

    A rest at cell j (P-mass >= lp_j, e^{g_j} Q <= lrt_j, ratio in (e^{g_j}, e^{g_j + h}]) rounded down to g_j
    loses its excess lp_j - lrt_j to first order. Mixed with fractions y_i of the mixtures emitted at g_i <
    g_j (P >= out_i, e^{g_i} Q <= r_out_i, each with a deficit r_out_i e^{(j - i) h} - out_i relative to
    g_j) until the deficits cover the excess, the mixture has ratio >= e^{g_j} and goes to g_j whole: the
    rest moves down and the partners up, a second-order change. Where no mixture lies below (the infimum
    of a bounded-below loss) the rest is mixed up to g_{j+1} with mixtures above it, which have an excess
    relative to g_{j+1}. Each mixture is checked as in the pairing (lower bound of P against an upper
    bound of e^{g} Q, the sums of k terms rounded by at most gamma_k (Higham 2002, (4.4), any order), with
    64u + 4ku of room); a partner's used fraction is removed from its own emission. The rows are
    independent: each row's piles are taken in the same order (heaviest first) as on its own.
    Returns the emissions and the rests left."""
    u = U
    F, M = out.shape
    if F == 1:
        o, l = _absorb_piles_row(out[0], r_out[0], lp[0], lrt[0], h, None if idx is None else idx[0])
        return o[None, :], l[None, :]
    m = np.full(F, M) if cells is None else np.asarray(cells)  # cells of each row (beyond: padding)
    at = np.broadcast_to(np.arange(M + 1), (F, M + 1)) if idx is None else np.asarray(idx)  # lattice index of each point
    steps = np.diff(at, axis=-1)
    ok = h * np.max(steps, axis=1) < 709.0  # beyond float range nothing was paired: no partner
    if not ok.any():
        return out, lp
    out, r_out, lp = out.copy(), r_out.copy(), lp.copy()
    excess = lp - lrt
    floor = 1e-9 * h * out.sum(axis=1)  # a rest whose excess is below this is not worth a loop
    order = heaviest_rests(excess, floor)
    every = np.arange(F)
    for r in range(order.shape[1]):
        j = order[:, r]
        todo = ok & (excess[every, j] > floor) & (lp[every, j] > 0.0) & (j < m)
        for direction, reach in ((-1, _PILE_NEAR), (-1, _PILE_REACH), (1, _PILE_NEAR), (1, _PILE_REACH)):
            rows = np.flatnonzero(todo)
            if rows.size == 0:
                break
            jr, mr = j[rows], m[rows]
            # the partners each row has (below: j of them; above: the cells from j + 2 to its last), and the need,
            # first: a row with no partner, no room for the target or nothing to cover is done with this attempt
            if direction < 0:  # land at g_j with partners below: their deficits relative to g_j
                target, count = jr, np.minimum(jr, reach)
                need, rest_rt = lp[rows, jr] - lrt[rows, jr], lrt[rows, jr]
            else:  # land at g_{j+1} with partners above it: their excesses relative to g_{j+1}
                target, count = jr + 1, np.clip(mr - jr - 2, 0, reach)
                with np.errstate(over="ignore", invalid="ignore"):
                    rest_rt = lrt[rows, jr] * np.exp((at[rows, jr + 1] - at[rows, jr]) * h) * (1.0 + 4 * u)
                need = rest_rt - lp[rows, jr]
            keep = np.flatnonzero((count > 0) & (target < mr) & (need > 0.0))
            if keep.size == 0:
                continue
            rows, jr, mr, target, count, need, rest_rt = (a[keep] for a in (rows, jr, mr, target, count, need, rest_rt))
            width = int(count.max())
            valid = np.arange(width)[None, :] < count[:, None]
            if direction < 0:
                selc = np.where(valid, jr[:, None] - 1 - np.arange(width)[None, :], 0)
                with np.errstate(over="ignore"):
                    scale = np.exp((at[rows, jr][:, None] - at[rows[:, None], selc]) * h) * (1.0 + 4 * u)
                with np.errstate(invalid="ignore"):
                    gain = r_out[rows[:, None], selc] * scale - out[rows[:, None], selc]
            else:
                selc = np.where(valid, jr[:, None] + 2 + np.arange(width)[None, :], 0)
                scale = np.exp(-(at[rows[:, None], selc] - at[rows, target][:, None]) * h) * (1.0 + 4 * u)
                gain = out[rows[:, None], selc] - r_out[rows[:, None], selc] * scale
            gain = np.where(valid, np.maximum(np.nan_to_num(gain, nan=0.0), 0.0), 0.0)
            total = np.cumsum(gain, axis=1)
            last = total[:, -1]
            go = last > 0.0
            if direction < 0 or reach < _PILE_REACH:
                go &= ~(last < need)  # below, or near only: where the partners cover it all (else rounded down)
            if not go.any():
                continue
            g_rows = np.flatnonzero(go)
            rows, jr, target = rows[g_rows], jr[g_rows], target[g_rows]
            selc, valid, gain, total, last = (a[g_rows] for a in (selc, valid, gain, total, last))
            scale, need, rest_rt, count = scale[g_rows], need[g_rows], rest_rt[g_rows], count[g_rows]
            k = np.minimum(np.sum(total < need[:, None], axis=1), count - 1)  # partners 0..k (the k-th partly)
            lin = np.arange(k.size)
            before = np.where(k > 0, total[lin, np.maximum(k - 1, 0)], 0.0)
            gk = gain[lin, k]
            upto = np.arange(width)[None, :] <= k[:, None]
            o_sel = np.where(upto, out[rows[:, None], selc], 0.0)
            ro_sel = np.where(upto, r_out[rows[:, None], selc], 0.0)
            lpj = lp[rows, jr]
            room = (64 + 4 * (k + 1)) * u * (lpj + o_sel.sum(axis=1))  # room for the check's roundings
            with np.errstate(divide="ignore", invalid="ignore"):
                if direction < 0:  # the rest's excess pays for the partners' deficits: they are rounded down
                    phi = np.ones(k.size)
                    yk = np.where(gk > 0.0, np.clip((need - before - room) / gk, 0.0, 1.0), 0.0)
                else:  # the partners' excesses pay for the rest's deficit: the rest is rounded down
                    phi = np.clip((np.minimum(last, need + room) - room) / need, 0.0, 1.0)
                    yk = np.where(gk > 0.0, np.clip((phi * need + room - before) / gk, 0.0, 1.0), 0.0)
            y = np.where(upto, 1.0, 0.0)
            y[lin, k] = yk  # fraction of each partner's mixture taken
            # k + 2 terms, each with at most two roundings: gamma_{k+3} per sum, 1.01 for the second order
            p_lo = (phi * lpj + np.sum(y * o_sel, axis=1)) * (1.0 - 1.01 * (k + 6) * u)
            r_hi = (phi * rest_rt + np.sum(y * ro_sel * scale, axis=1)) * (1.0 + 1.01 * (k + 10) * u)
            fit = r_hi <= p_lo
            if not fit.any():
                continue
            w = np.flatnonzero(fit)
            rows, jr, target, selc, upto, y = rows[w], jr[w], target[w], selc[w], upto[w], y[w]
            rr, cc = np.nonzero(upto)  # what is left of each partner's mixture
            R, Cc = rows[rr], selc[rr, cc]
            out[R, Cc] = out[R, Cc] * (1.0 - y[rr, cc]) * (1.0 - 2 * u)
            r_out[R, Cc] = r_out[R, Cc] * (1.0 - y[rr, cc]) * (1.0 + 2 * u)
            out[rows, target] += p_lo[w]
            r_out[rows, target] += r_hi[w]  # the new mixture may be a later rest's partner
            lp[rows, jr] *= (1.0 - phi[w]) * (1.0 - 2 * u)
            todo[rows] = False
    return out, lp


def heaviest_rests(excess: np.ndarray, floor: np.ndarray) -> np.ndarray:
    """``np.argsort(-excess, axis=1)[:, :PILES]`` (the piles' order, heaviest first) wherever the piles' loop can
    tell: only the rests with excess > floor are absorbed, so only their ranks matter. The PILES + 1 largest of
    each row are found by a partition and sorted; where two of them that are above the floor are equal (ties,
    whose order the full sort decides) or one is nan, the row takes the full sort's order. The same ranks as
    the full sort for every rest above the floor, at a fraction of its cost."""
    K = PILES
    F, M = excess.shape
    neg = -excess
    if M <= K + 1:
        return np.argsort(neg, axis=1)[:, :K]
    cand = np.argpartition(neg, K, axis=1)[:, :K + 1]  # the K + 1 largest excesses, in any order
    vals = np.take_along_axis(neg, cand, axis=1)
    srt = np.argsort(vals, axis=1, kind="stable")
    cand, vals = np.take_along_axis(cand, srt, axis=1), np.take_along_axis(vals, srt, axis=1)
    with np.errstate(invalid="ignore"):
        active = -vals > np.reshape(floor, (F, 1))
    tie = np.any((vals[:, 1:] == vals[:, :-1]) & active[:, :-1], axis=1) | np.any(np.isnan(vals), axis=1)
    order = cand[:, :K]
    if tie.any():
        order[tie] = np.argsort(neg[tie], axis=1)[:, :K]
    return order


def _absorb_piles_row(out, r_out, lp, lrt, h, idx=None):
    """:func:`_absorb_piles` of one PMF (1-D arrays): the same piles in the same order, the same mixtures and
    checks (see there), pile by pile with scalars -- several times faster for one PMF than a 2-D row of one
    (``tests/test_pld_rows.py`` holds the two to each other). Returns the emissions and the rests left."""
    u = U
    at = np.arange(out.size + 1) if idx is None else np.asarray(idx)  # lattice index of each point
    if not h * float(np.max(np.diff(at))) < 709.0:  # beyond float range nothing was paired: no partner
        return out, lp
    out, r_out, lp = out.copy(), r_out.copy(), lp.copy()
    excess = lp - lrt
    floor = 1e-9 * h * float(out.sum())  # a rest whose excess is below this is not worth a loop
    for j in heaviest_rests(excess[None, :], np.array([floor]))[0]:
        j = int(j)
        if not (excess[j] > floor and lp[j] > 0.0):
            continue
        for direction, reach in ((-1, _PILE_NEAR), (-1, _PILE_REACH), (1, _PILE_NEAR), (1, _PILE_REACH)):
            if direction < 0:  # land at g_j with partners below: their deficits relative to g_j
                target = j
                sel = np.arange(j - 1, max(j - 1 - reach, -1), -1)
                scale = np.exp((at[j] - at[sel]) * h) * (1.0 + 4 * u)  # e^{g_j - g_i}, rounded up
                need, rest_rt = lp[j] - lrt[j], lrt[j]
                gain = r_out[sel] * scale - out[sel]
            else:  # land at g_{j+1} with partners above it: their excesses relative to g_{j+1}
                target = j + 1
                sel = np.arange(j + 2, min(j + 2 + reach, out.size))
                scale = np.exp(-(at[sel] - at[target]) * h) * (1.0 + 4 * u)  # e^{g_{j+1} - g_i}, rounded up
                rest_rt = lrt[j] * math.exp((at[j + 1] - at[j]) * h) * (1.0 + 4 * u)
                need = rest_rt - lp[j]
                gain = out[sel] - r_out[sel] * scale
            if sel.size == 0 or target >= out.size or not need > 0.0:
                continue
            gain = np.maximum(gain, 0.0)
            total = np.cumsum(gain)
            if not total[-1] > 0.0 or ((direction < 0 or reach < _PILE_REACH) and total[-1] < need):
                continue  # below, or near only: where the partners cover it all (else the rest is rounded down)
            k = min(int(np.searchsorted(total, need)), sel.size - 1)  # partners 0..k (the k-th partly)
            before = float(total[k - 1]) if k > 0 else 0.0
            y = np.ones(k + 1)  # fraction of each partner's mixture taken
            room = (64 + 4 * (k + 1)) * u * (lp[j] + float(np.sum(out[sel[:k + 1]])))  # room for the check's roundings
            if direction < 0:  # the rest's excess pays for the partners' deficits: they are rounded down
                phi = 1.0
                y[k] = min(max((need - before - room) / gain[k], 0.0), 1.0) if gain[k] > 0.0 else 0.0
            else:  # the partners' excesses pay for the rest's deficit: the rest is rounded down
                phi = min(max(float(min(total[-1], need + room) - room) / need, 0.0), 1.0)
                y[k] = min(max((phi * need + room - before) / gain[k], 0.0), 1.0) if gain[k] > 0.0 else 0.0
            sel, scale = sel[:k + 1], scale[:k + 1]
            # k + 2 terms, each with at most two roundings: gamma_{k+3} per sum, 1.01 for the second order
            p_lo = (phi * lp[j] + float(np.sum(y * out[sel]))) * (1.0 - 1.01 * (k + 6) * u)
            r_hi = (phi * rest_rt + float(np.sum(y * r_out[sel] * scale))) * (1.0 + 1.01 * (k + 10) * u)
            if not r_hi <= p_lo:
                continue
            out[sel] = out[sel] * (1.0 - y) * (1.0 - 2 * u)  # what is left of each partner's mixture
            r_out[sel] = r_out[sel] * (1.0 - y) * (1.0 + 2 * u)
            out[target] += p_lo
            r_out[target] += r_hi  # the new mixture may be a later rest's partner
            lp[j] *= (1.0 - phi) * (1.0 - 2 * u)
            break
    return out, lp


def _pair_level(p: np.ndarray, rt: np.ndarray, eh, below_p, below_rt):
    """One level of the pairing on cells (G_i, G_i + H] with P-masses ``p`` and e^{G_i} Q-masses ``rt``
    (certified bounds: P from below, e^{G_i} Q from above), ``eh`` = e^H rounded up (a scalar, or one per cell).
    Rows (2-D arrays, ``below_p`` and ``below_rt`` one per row) are independent PMFs. Returns the P-mass
    emitted at each G_i by the mixtures, and the fraction of each cell left unused.

    Each cell's atom (ratio in [e^{G_i}, e^{G_i + H}]) is cut into three parts fixed in advance: a fraction
    x_i mixed with a fraction z_{i-1} of the atom below so that the mixture's ratio is e^{G_i}
    (z_{i-1} deficit_i = x_i excess_i), a fraction z_i given to the mixture at G_{i+1}, and the rest.
    Any fractions with x_i + z_i <= 1 are a post-processing. With a_i = excess_i / deficit_i,
    x_i = 1 / (1 + max(a_i, a_{i+1})) and z_i = x_{i+1} a_{i+1} give x_i + z_i <= 1 / (1 + a_{i+1}) +
    a_{i+1} / (1 + a_{i+1}) = 1, with equality where a is locally constant (every cell used in full); two
    red-black passes raise each x_i to the room its two constraints leave. The computed fractions before the
    shrink satisfy x_i + a_{i+1} x_{i+1} <= 1 + 3.01u (the roundings of the room bounds); x is shrunk by 8u,
    which z = a x inherits, so x_i + z_i <= (1 - 8u)(1 + u)^2 (1 + 3.01u) <= 1 - 2.9u, and the rest by 4u
    absolutely, which covers its own 3u (1 - x_i) of rounding: every cell's parts sum to at most 1 - u in
    exact arithmetic (docs/pld.md Sec. 2.3). A mixture is emitted
    (its P-mass lower bound P- = (x_i p_i + z_{i-1} p_{i-1}) (1 - 4u)) only where the upper bound
    R+ = (x_i rt_i + z_{i-1} e^H rt_{i-1}) (1 + 4u) of e^{G_i} Q is <= P-, after z_{i-1} is lowered by
    64u P / deficit_i to make room; where the check fails the cell mixes nothing and both parts stay in
    the rest."""
    u = U
    lo_f, hi_f = 1.0 - 4 * u, 1.0 + 4 * u
    F = p.shape[0]
    prev_p = np.concatenate([np.reshape(below_p, (F, 1)), p[:, :-1]], axis=1)
    eh0 = eh if np.isscalar(eh) else eh[:, 0]
    with np.errstate(invalid="ignore"):  # inf / inf where e^h overflows: nan, never mixed
        prev_rt = np.concatenate([np.reshape(below_rt / eh0, (F, 1)), rt[:, :-1]], axis=1)
    excess = p - rt
    with np.errstate(invalid="ignore"):  # inf * 0 where e^h overflows: nan, never mixed
        deficit = eh * prev_rt - prev_p
    mix = (excess > 0.0) & (deficit > 0.0)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        a = np.where(mix, excess / np.where(mix, deficit, 1.0), 0.0)
    a = np.where(np.isfinite(a), a, 0.0)
    mix &= a > 0.0
    zero = np.zeros((F, 1))
    a_next = np.concatenate([a[:, 1:], zero], axis=1)
    x = np.where(excess > 0.0, 1.0 / (1.0 + np.maximum(a, a_next)), 0.0)
    # raise the fractions where their neighbours leave room (red-black passes keep x_j + a_{j+1} x_{j+1} <= 1)
    can = excess > 0.0
    with np.errstate(divide="ignore", invalid="ignore"):
        inv_a = np.where(a > 0.0, 1.0 / np.where(a > 0.0, a, 1.0), 0.0)
    # each pass raises the cells of one colour (odd, then even columns) against their neighbours of the other
    # colour: computed on the strided columns of that colour only, the same operations on the same numbers
    L = x.shape[1]
    xp = np.zeros((F, L + 2))  # x with a zero on either side: x_{j-1} = xp[j], x_{j+1} = xp[j + 2]
    xp[:, 1:-1] = x
    colours = []
    for start in (1, 0):  # the former parity 0 pass raised the odd columns, parity 1 the even ones
        cols = slice(start, None, 2)
        has_a = a[:, cols] > 0.0
        colours.append((start, cols, can[:, cols], a_next[:, cols], inv_a[:, cols], has_a))
    for _ in range(_PAIR_ROUNDS):
        for start, cols, can_c, an_c, inv_c, has_c in colours:
            mine = xp[:, 1 + start:L + 1:2]
            x_next = xp[:, 2 + start:L + 2:2]
            x_prev = xp[:, start:L:2]
            room = np.minimum(1.0 - an_c * x_next, np.where(has_c, (1.0 - x_prev) * inv_c, 1.0))
            np.clip(room, 0.0, 1.0, out=room)
            mine[...] = np.where(can_c, np.maximum(mine, room), mine)
    x = xp[:, 1:-1]
    x = x * (1.0 - 8 * u)  # z = a x below inherits this shrink (docstring): the parts of a cell sum to <= 1
    z_prev = np.where(mix, x * a, 0.0)  # fraction of the atom below mixed at G_i
    P_mix = x * p + z_prev * prev_p
    with np.errstate(divide="ignore", invalid="ignore"):
        z_prev = np.where(mix, np.maximum(z_prev - 64 * u * P_mix / np.where(mix, deficit, 1.0), 0.0), 0.0)
    P_lo = (x * p + z_prev * prev_p) * lo_f
    with np.errstate(invalid="ignore"):  # inf * 0 where e^h overflows: nan fails the check below
        R_hi = (x * rt + (z_prev * eh) * prev_rt) * hi_f
    ok = (R_hi <= P_lo) & mix
    out = np.where(ok, P_lo, 0.0)
    r_out = np.where(ok, R_hi, 0.0)
    z = np.concatenate([np.where(ok, z_prev, 0.0)[:, 1:], zero], axis=1)  # fraction of cell i used at G_{i+1}
    x_used = np.where(ok, x, 0.0)
    left = np.maximum(1.0 - x_used - z - 4 * u, 0.0)
    return out, r_out, left, x_used, z
