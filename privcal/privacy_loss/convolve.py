r"""Composition of discrete PLDs by one FFT, with the truncated mass and the round-off accounted for
(private; inputs are trusted); a long history in two levels (:func:`compose_levels`: blocks composed on
the grid h, moved onto a coarser grid by dominating / dominated re-grids, composed there; Sec. 2.11). The derivation of every error term, and the test that pins it, is in
docs/pld.md, Sec. 2; the compositions are exponentially tilted (:func:`tilted`) so that the bounds below
are relative to the tail that delta measures.

The composed PLD of ``n_i`` repetitions of each factor ``x_i`` is ``x_1^{*n_1} * ... * x_k^{*n_k}``. It is
computed on a window [A, A + N) of the composed loss: every factor is folded modulo N (each centred on
its own mean, so phases stay small), transformed once (``scipy.fft.rfft``), the spectra are raised to
their counts in log-polar form and multiplied, and one inverse transform gives the composed PLD folded
modulo N. The window is chosen by a Chernoff bound: the composed (discretised) mass above the window is
at most ``exp(min_t K(t) - t B)`` and the mass below at most ``exp(min_t K(-t) + t A)``, with
K(t) = sum_i n_i log sum_j x_i[j] e^{t l_j} the cumulant generating function of the discretised factors.
Folding puts that outside mass inside the window (it only ever adds mass), so

    upper:  delta(eps) <= delta_window(eps) + E + mass above + mass below,
    lower:  delta(eps) >= delta_window(eps) - E - mass above - mass below,

where E bounds the l1 norm of the round-off of the computed window. **Round-off bound** (a proof
sketch). Let X_i[k] be the exact and X^_i[k] the computed coefficients. (a) The transform length is
5-smooth (:func:`fft_length`), so pocketfft runs its real radix-4/2/3/5 passes (radf*/radb*), and each
computed coefficient satisfies |X^ - X| <= c(N) u ||x||_1 with c(N) the sum over the passes of the
per-pass growth :func:`fft_stage_err` (a componentwise argument per butterfly radix, docs/pld.md
Sec. 2.6: every output of an FFT is reached from every input along exactly one path of unit-modulus
coefficients, so per-pass relative errors eta_r give prod(1 + eta_r) - 1 in every coefficient, relative
to ||x||_1; checked against an exact DFT in tests/test_pld_certificate.py for each radix). The
factors' own input errors are not put in the spectrum: they are propagated in time (:func:`local_err`).
So |X^_i[k] - X_i[k]| <= e_i[k]. (b) For complex numbers, |prod z_m - prod w_m| <= prod(|w_m| + d_m) -
prod |w_m| when |z_m - w_m| <= d_m; with n_i copies of each factor this bounds the error of the exact
product of the computed coefficients by prod_i (|X^_i| + e_i)^{n_i} - prod_i |X^_i|^{n_i}. Computing the
product as exp(sum n_i log|X^_i|) e^{i sum n_i arg X^_i} adds at most c_p u |Y^| (1 + sum_i n_i (|log|X^_i||
+ |arg X^_i|)) (c_p = 8). (c) The inverse transform maps an error D in the spectrum to an l1 error at most
sqrt(sum over the full spectrum |D_k|^2) (Parseval and Cauchy-Schwarz), and its own round-off is at most
(c(N) + 2.01) u sum_k |Y^_k| in l1 (as (a), plus the rounded 1/N and its product). E is the sum; a delta is a sum of
the composed masses with weights in [0, 1], so its error is at most E.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Optional

import numpy as np
from scipy import fft as sfft
from scipy import special

from . import discretise
from .discretise import U, Pmf
from .step_memo import GROUP_MEMO

#: |w^ - w| <= TWIDDLE_ERR u for pocketfft's twiddle factors (``sincos_2pibyn``): each of the two table
#: entries multiplied is cos/sin of a first-octant argument x * fl(pi / 4N) (rounded in at most 4 steps:
#: pi, the division, the conversion, the product: 4.01 u * pi/4 <= 3.15 u, and cos, sin are 1-Lipschitz)
#: with libm's error <= 1 ulp <= 2u per component: 5.15 u each; their complex product adds
#: sqrt(2) gamma_2 <= 2.83 u: 2 * 5.15 + 2.83 = 13.13 u (docs/pld.md Sec. 2.6)
TWIDDLE_ERR = 13.2
#: (kappa_r, d_r) of pocketfft's real radix-r butterflies (radf2..5 / radb2..5): every real output is a
#: sum of +-c * (input component) through at most d_r roundings (counting the rounding of the constant
#: c = cos/sin(2 pi k / r)); kappa_r = sqrt(2) turns the componentwise bound into a complex one where a
#: constant has both a real and an imaginary part (1 for radix 2 and 4: entries +-1, +-i)
_BUTTERFLY = {2: (1.0, 1), 4: (1.0, 2), 3: (math.sqrt(2.0), 4), 5: (math.sqrt(2.0), 6)}
C_POW = 8.0
#: the Chernoff bound of the composed mass outside the window is at most this (each side)
WINDOW_TAIL = 1e-18
#: per factor, the round-off of a computed log M(t) is at most u (KERR_CONST + 4 |t| max|idx|) (docs/pld.md Sec. 2.5:
#: ~2000 u for the table path's exp, products and sums of up to 1152 terms, the exponential path's 2 x 745 for the
#: atoms' log masses plus its sums; twice that)
KERR_CONST = 8192.0


@dataclass
class Composed:
    """A composed PLD of one direction on the window [offset, offset + mass.size) (in units of h), with
    ``inf_mass`` at +inf, ``err`` the l1 bound of its round-off and ``outside`` the bound of the composed
    mass outside the window (both sides together)."""

    offset: int
    mass: np.ndarray
    inf_mass: float
    h: float
    err: float
    outside: float
    err_atoms: Optional[np.ndarray] = None  # per-atom error bound (single factor: local, replaces err)
    tilt: float = 0.0  # tau (1/grid units): err and outside are l1 bounds of the tilted composition
    log_scale: float = 0.0  # K = sum_i n_i log M_i(tau): mass_j = tilted_j exp(K - tau (offset + j))
    top: Optional[int] = None  # last grid index of the window (None: offset + mass.size - 1)
    err_inf: float = 0.0  # bound of the error of inf_mass
    # (mono, dipole, quadrupole, growth): sum_i n_i of the factors' (tilted) input error patterns and the
    # factor prod_i (1 + l1_i)^{n_i} bounding the masses they are convolved with (see :func:`local_err`)
    local: Optional[tuple] = None
    # additive bound, the same at every epsilon, of what lies between the factors composed here and exact
    # dominating (upper) / dominated (lower) factors: the re-gridded blocks of a long history (:func:`regrid`)
    err_add: float = 0.0
    # the same blocks' error that scales like the tail: err_rel exp(log_scale - tau eps) at eps (Sec. 2.11)
    err_rel: float = 0.0
    # an upper bound of log sum_j mass_j e^{tilt (offset + j)} (the MGF of the computed masses at the tilt),
    # known without a pass over the masses for a tilted composition (:func:`compose`); None: not known
    log_mgf: Optional[float] = None
    # the FFT's part of ``err`` split for a weighted charge (docs/pld.md Sec. 2.6 (d)): an l2 bound of the window's
    # error from the spectrum's errors (Parseval), a bound of each entry's error from the inverse transform's own
    # rounding, and the l1 bound of the tilted rescaling (:func:`compose`); None: the l1 ``err`` alone
    err_l2: Optional[float] = None
    err_each: Optional[float] = None
    err_back: float = 0.0
    # a bound of ||prefix * suffix||_2 over every term of the telescoping of :func:`local_err` (tilted self-composition
    # of one factor; docs/pld.md Sec. 2.4, the l2 form); None: the S-proportional form alone
    local_l2: Optional[float] = None

    @property
    def losses(self) -> np.ndarray:
        """The atoms' losses (offset + i) h (cached: the epsilon searches ask for them many times)."""
        key = (self.offset, self.mass.size, self.h)
        cached = self.__dict__.get("_losses")
        if cached is None or cached[0] != key:
            cached = self.__dict__["_losses"] = (key, (self.offset + np.arange(self.mass.size)) * self.h)
        return cached[1]

    def above(self, epsilon: float) -> int:
        """Index of the first atom with loss > ``epsilon`` (the losses increase)."""
        return int(np.searchsorted(self.losses, epsilon, side="right"))


def _inf_mass(factors) -> float:
    s = sum(n * math.log1p(-min(p.inf_mass, 1.0)) if p.inf_mass < 1 else -math.inf for p, n in factors)
    return -math.expm1(s) if s > -math.inf else 1.0


_INDICES = np.arange(0, dtype=float)


def _indices(n: int) -> np.ndarray:
    """0.0, 1.0, ..., n - 1 (a read-only view of one array, grown as needed)."""
    global _INDICES
    if _INDICES.size < n:
        _INDICES = np.arange(max(n, 2 * _INDICES.size), dtype=float)
        _INDICES.flags.writeable = False
    return _INDICES[:n]


def pmf_moments(p: Pmf) -> tuple[float, float, float]:
    """(total mass, mean, variance) of the finite part, in units of h (cached on the Pmf)."""
    cached = getattr(p, "moments", None)
    if cached is not None:
        return cached
    mass = p.mass  # (a sparse Pmf's lattice: made once here)
    tot = float(mass.sum())
    if tot <= 0:
        out = (0.0, float(p.offset), 0.0)
    else:
        idx = _indices(mass.size)
        mean = float(np.einsum("i,i->", idx, mass)) / tot  # np.einsum, not np.dot: no BLAS threads
        d = idx - mean
        var = float(np.einsum("i,i,i->", d, d, mass)) / tot
        out = (tot, p.offset + mean, var)
    p.moments = out
    return out


#: atoms per pass of :func:`_moments_all` (its temporaries: a few arrays of this many floats)
_MOMENTS_BLOCK = 2**18


def _moments_all(pmfs) -> None:
    """:func:`pmf_moments` of every Pmf of ``pmfs`` not cached yet, from passes over their concatenated masses
    (``np.add.reduceat`` per Pmf, blocks of about _MOMENTS_BLOCK atoms): the same formulas, the mean and variance
    summed in another order (they only place the factors and scale the tilt and window searches; no bound reads
    them), the total mass as :func:`pmf_moments` computes it."""
    todo = [p for p in pmfs if getattr(p, "moments", None) is None and p.size > 0]
    if len(todo) < 2:
        return
    block, size = [], 0
    for p in todo:
        block.append(p)
        size += p.size
        if size >= _MOMENTS_BLOCK:
            _moments_block(block)
            block, size = [], 0
    if block:
        _moments_block(block)


def _moments_block(todo: list) -> None:
    """:func:`_moments_all` of one block of Pmfs (each with atoms, none cached): one concatenation and three
    ``np.add.reduceat`` sums."""
    masses = [p.mass for p in todo]  # (a sparse Pmf's lattice, made here)
    sizes = np.array([m.size for m in masses], dtype=np.int64)
    starts = np.cumsum(sizes) - sizes
    m = np.concatenate(masses)
    j = np.arange(m.size, dtype=float) - np.repeat(starts.astype(float), sizes)  # 0, 1, .. within each Pmf
    tot = np.add.reduceat(m, starts)
    with np.errstate(divide="ignore", invalid="ignore"):
        mean = np.add.reduceat(j * m, starts) / tot
        d = j - np.repeat(np.where(tot > 0, mean, 0.0), sizes)
        var = np.add.reduceat(d * d * m, starts) / tot
    for p, pm, t, mu, v in zip(todo, masses, tot.tolist(), mean.tolist(), var.tolist()):
        # the total as :func:`pmf_moments` has it, float(p.mass.sum()) (the FFT's round-off bound caps |X| by it)
        p.moments = (float(pm.sum()), p.offset + mu, v) if t > 0 else (0.0, float(p.offset), 0.0)


def log_mgf_of(p: Pmf, tilts: np.ndarray) -> np.ndarray:
    """log sum_j mass_j e^{t (offset + j)} for each tilt t (in 1/grid units), vectorised over the tilts
    (matrices of the nonzero atoms by blocks of tilts)."""
    tilts = np.asarray(tilts, dtype=float)
    idx, lm = _log_atoms(p)
    if idx.size == 0:
        return np.full(tilts.size, -np.inf)
    out = np.empty(tilts.size)
    block = max(1, int(2**16 // max(idx.size, 1)))  # small blocks stay in cache (measured fastest)
    for s in range(0, tilts.size, block):
        t = tilts[s:s + block]
        e = lm[None, :] + t[:, None] * idx[None, :]
        top = e.max(axis=1)
        out[s:s + block] = top + np.log(np.sum(np.exp(e - top[:, None]), axis=1))
    return out


#: elements per padded block of :func:`log_mgfs` (factors x tilts x atoms): small blocks stay in cache
_MGF_BLOCK = 2**16
#: padded atoms per block of factors in :func:`log_mgfs_exp` (then as many tilts at once as fit
#: _MGF_BLOCK) and of :func:`log_mgfs` (masses, zero-padded)
_MGF_ROWS = 2**13
_MGF_TABLE_ROWS = 2**17
#: entries per table e^{t (j - j0)} of :func:`log_mgfs` (tilts x W)
_MGF_TABLE = 2**17
#: at most this many atoms in all: the padded blocks of a :class:`MgfRows` are kept between calls (128 MB: one
#: more copy of the masses, whose Pmfs already hold them with three error-pattern arrays of the same length, bfloat16
#: in a many-factor history; the 10,000-factor schedule's tilt choice, 14M atoms, halves with it, 0.5 -> 0.25 s, its
#: peak memory unchanged); above it each block is made when it is read
_MGF_KEEP = 2**24
#: atoms per segment of the table path's sums (:func:`log_mgfs`)
_MGF_SEG = 128


class MgfRows(list):
    """A list of Pmfs whose log-MGFs are asked for at several sets of tilts (:func:`window`,
    :func:`choose_tilt`): :func:`log_mgfs` keeps its padded blocks (the factors' atoms or masses, sorted and
    zero-padded: built once) on it. The values are those of a plain list, bit for bit."""

    _prep = None


def _exp_blocks(pmfs: list, lazy: bool = False):
    """The padded blocks of :func:`log_mgfs_exp`: (rows, idx, lm) per block of factors ordered by their number
    of nonzero atoms (log mass -inf past a factor's atoms). ``lazy``: a generator of the same blocks, each factor's
    atoms taken when its block is made (a history of many sparse factors: one block's copy at a time, not a copy of
    every factor's atoms at once)."""
    gen = _exp_blocks_gen(pmfs)
    return gen if lazy else list(gen)


def _exp_blocks_gen(pmfs: list):
    sizes = np.array([np.count_nonzero(p.points()[1] > 0) for p in pmfs], dtype=np.int64)  # :func:`_log_atoms`' atoms
    order = np.argsort(sizes, kind="stable")
    order = order[sizes[order] > 0]  # a factor without atoms: -inf (as :func:`log_mgf_of`)
    i, n = 0, order.size
    while i < n:
        j = i + 1  # rows i .. j - 1 (ascending sizes: the last is the widest)
        while j < n and (j + 1 - i) * int(sizes[order[j]]) <= _MGF_ROWS:  # (not the tilts: each row's
            # padding, so its value, is the same whatever the tilts asked with it)
            j += 1
        rows = order[i:j]
        width = int(sizes[order[j - 1]])
        idx = np.zeros((rows.size, width))
        lm = np.full((rows.size, width), -np.inf)
        for r, f in enumerate(rows):
            a_idx, a_lm = _log_atoms(pmfs[f])
            idx[r, :a_idx.size] = a_idx
            lm[r, :a_lm.size] = a_lm
        yield rows, idx, lm
        i = j


def log_mgfs_exp(pmfs: list, tilts: np.ndarray, blocks: Optional[list] = None) -> np.ndarray:
    """:func:`log_mgf_of` of many Pmfs at once (the general path of :func:`log_mgfs`): row i is
    log sum_j mass_j e^{t (offset + j)} of ``pmfs[i]`` at each tilt t. The factors, ordered by their number of nonzero atoms, are padded into 2-D blocks (log mass
    -inf, so e^{...} = 0, past a factor's atoms); each row's terms are those of :func:`log_mgf_of` (the same
    products, sums, maximum and exponentials), and its sum is numpy's pairwise sum over the padded row: the
    added zeros are exact, so it is a pairwise sum of the same terms in another tree, with the same kind of
    rounding bound (relative gamma of the tree's depth, a level or two more at most than the unpadded
    row's), far inside the slack that :func:`window` adds for the round-off of K. ``blocks``: those of
    :func:`_exp_blocks` for ``pmfs``, if built already."""
    tilts = np.asarray(tilts, dtype=float)
    out = np.full((len(pmfs), tilts.size), -np.inf)
    for rows, idx, lm in (_exp_blocks(pmfs, lazy=True) if blocks is None else blocks):
        width = idx.shape[1]
        block = max(1, _MGF_BLOCK // (rows.size * width))
        e = np.empty((rows.size, min(block, tilts.size), width))
        for s in range(0, tilts.size, block):
            t = tilts[s:s + block]
            v = e[:, :t.size, :]
            np.multiply(t[None, :, None], idx[:, None, :], out=v)  # in place: the same operations
            v += lm[:, None, :]
            top = v.max(axis=2)
            v -= top[:, :, None]
            np.exp(v, out=v)
            out[rows, s:s + block] = top + np.log(np.sum(v, axis=2))
    return out


def _table_blocks(pmfs: list, lazy: bool = False):
    """What :func:`log_mgfs` builds before any tilt: the sparse factors (with their :func:`_exp_blocks`) and
    the dense ones' blocks (rows, W, j0, M, base), M their masses (negative ones 0) zero-padded to W. ``lazy``: the
    blocks as generators, each made when it is read (the same blocks; for a call that reads them once)."""
    sizes = np.array([p.size for p in pmfs], dtype=np.int64)
    sparse = np.array([4 * np.count_nonzero(p.points()[1] > 0) < p.size for p in pmfs], dtype=bool)
    sparse_blocks = _exp_blocks([p for p, sp in zip(pmfs, sparse) if sp], lazy) if sparse.any() else []
    order = np.argsort(sizes, kind="stable")
    order = order[~sparse[order]]
    gen = _dense_blocks(pmfs, sizes, order)
    return sparse, sparse_blocks, gen if lazy else list(gen)


def _dense_blocks(pmfs: list, sizes: np.ndarray, order: np.ndarray):
    """The dense factors' blocks of :func:`_table_blocks`, one at a time."""
    i, n = 0, order.size
    while i < n:
        j = i + 1  # rows i .. j - 1 (ascending sizes: the last is the widest)
        while j < n and (j + 1 - i) * (-(-int(sizes[order[j]]) // _MGF_SEG) * _MGF_SEG) <= _MGF_TABLE_ROWS:
            j += 1
        rows = order[i:j]
        W = max(1, -(-int(sizes[order[j - 1]]) // _MGF_SEG)) * _MGF_SEG
        j0 = W // 2
        M = np.zeros((rows.size, W))
        for r, f in enumerate(rows):
            at, values = pmfs[f].points()
            if at is None:
                np.maximum(values, 0.0, out=M[r, :values.size])
            else:  # the same matrix: the lattice's other atoms are 0
                M[r, at] = np.maximum(values, 0.0)
        base = np.array([float(pmfs[f].offset + j0) for f in rows])
        yield rows, W, j0, M, base
        i = j


def log_mgfs(pmfs: list, tilts: np.ndarray) -> np.ndarray:
    """log sum_j mass_j e^{t (offset + j)} of each of ``pmfs`` (rows) at each tilt t (columns), without an
    exponential per atom where the tilt allows: with a table T_j = e^{t (j - j0)} shared by a block of
    factors (their masses in the rows of a matrix, zero-padded to a width W, j0 = W // 2),
    M(t) = e^{t (offset + j0)} sum_j mass_j T_j, the sums by segments of ``_MGF_SEG`` atoms (np.einsum,
    no BLAS) then across the segments (np.sum).

    Used where |t| (W - j0) <= 700 (T finite, >= e^{-700}) and the sum S is finite and >= 1e-250; the
    other (factor, tilt) pairs take :func:`log_mgfs_exp`. Round-off of S relative to the exact sum of
    the (nonnegative) masses' terms: T_j's argument t (j - j0) (j - j0 exact) rounded, <= 700 u, exp within
    1 ulp (2u), the product u, the sum in any order over a segment then across at most W / _MGF_SEG
    segments (gamma of _MGF_SEG + W / _MGF_SEG <= 1152 for W <= _MGF_TABLE_ROWS), and the products that
    underflow, <= W 2^-1074 in all (relative to S >= 1e-250: nothing); in log M about 2000 u = 4.5e-13
    at most, of the order of the exponential path's own rounding of t (offset + j) and of the pairwise
    sum, and like it far inside the slack (1e-9 |K| + 1e-12) that :func:`window` adds for the round-off
    of K. A negative mass counts as 0 (as in :func:`_log_atoms`).

    A sparse factor (fewer than a quarter of its lattice points with mass: the coarse tails of a subsampled
    step leave most of a long lattice empty) takes the exponential path on its atoms alone: the table would
    cost its whole lattice width per tilt (at T = 1e7 the window and tilt MGFs ~2.5x slower).

    For a :class:`MgfRows` of at most ``_MGF_KEEP`` atoms the padded blocks are built at the first call and kept
    (the same values); otherwise each block is made when it is read and let go after (the same blocks: a history
    of many factors holds one block's copy of its masses at a time, not a copy of all of them)."""
    tilts = np.asarray(tilts, dtype=float)
    prep = pmfs._prep if isinstance(pmfs, MgfRows) else None
    if prep is None:
        keep = isinstance(pmfs, MgfRows) and sum(p.size for p in pmfs) <= _MGF_KEEP
        prep = _table_blocks(pmfs, lazy=not keep)
        if keep:
            pmfs._prep = prep
    sparse, sparse_blocks, blocks = prep
    out = np.empty((len(pmfs), tilts.size))
    if sparse.any():
        out[sparse] = log_mgfs_exp([p for p, sp in zip(pmfs, sparse) if sp], tilts, sparse_blocks)
    for rows, W, j0, M, base in blocks:
        vals = np.full((rows.size, tilts.size), np.nan)
        fast = np.flatnonzero(np.abs(tilts) * (W - j0) <= 700.0)
        if fast.size:
            tf = tilts[fast]
            S = np.empty((rows.size, tf.size))
            steps = np.arange(W, dtype=float) - j0
            tb = max(1, _MGF_TABLE // W)  # tilts per table (a wide factor: one at a time)
            for s in range(0, tf.size, tb):
                T = np.exp(tf[s:s + tb, None] * steps[None, :])
                S[:, s:s + tb] = np.einsum("cbk,tbk->ctb", M.reshape(rows.size, -1, _MGF_SEG),
                                           T.reshape(T.shape[0], -1, _MGF_SEG)).sum(axis=2)
            ok = np.isfinite(S) & (S >= 1e-250)
            with np.errstate(divide="ignore", invalid="ignore"):
                v = np.log(S) + tf[None, :] * base[:, None]
            vals[:, fast] = np.where(ok, v, np.nan)
        need = np.isnan(vals)
        if need.any():
            nr, nt = np.flatnonzero(need.any(axis=1)), np.flatnonzero(need.any(axis=0))
            exact = log_mgfs_exp([pmfs[f] for f in rows[nr]], tilts[nt])
            sub = vals[np.ix_(nr, nt)]
            vals[np.ix_(nr, nt)] = np.where(need[np.ix_(nr, nt)], exact, sub)
        out[rows] = vals
    return out


def weighted_sum(counts: np.ndarray, values: np.ndarray) -> np.ndarray:
    """sum_i counts[i] values[i] over the rows, added in the rows' order from 0 (a running sum, as a loop
    over the factors would add them; np.add.accumulate is sequential by definition)."""
    terms = counts[:, None] * values
    if terms.shape[0] == 0:
        return np.zeros(values.shape[1])
    return np.add.accumulate(np.concatenate([np.zeros((1, values.shape[1])), terms]), axis=0)[-1]


def window(factors, tail: float = WINDOW_TAIL) -> tuple[int, int, float]:
    """(A, B, outside): the composed window [A, B] in grid units and the Chernoff bound of the mass
    outside it (both sides)."""
    full_lo = sum(n * p.offset for p, n in factors)
    full_hi = sum(n * (p.offset + p.size - 1) for p, n in factors)
    mean = var = 0.0
    _moments_all([p for p, _ in factors])
    for p, n in factors:
        _, m, v = pmf_moments(p)
        mean, var = mean + n * m, var + n * v
    sd = max(math.sqrt(var), 1.0)
    # tilts, in 1/grid units, on the ladder (0.1 .. 100) / sd in 15 steps of 10^(1/5) (the bound (K(t) - log tail) / t
    # is unimodal in t for these laws; any tilt gives a valid bound, a better one only a narrower window)
    ladder = np.geomspace(0.1, 100.0, 16) / sd
    log_tail = math.log(tail)

    pmfs = MgfRows(p for p, _ in factors)
    counts = np.array([float(n) for _, n in factors])
    # the round-off of K, an upper bound of sum_i n_i e_i(t) + the weighted sum's own (docs/pld.md Sec. 2.5): per factor
    # e_i(t) <= u (KERR_CONST + 4 |t| I_i), I_i its largest |grid index| (the argument t idx, and the table's or the
    # atoms' exponentials, products and sums); the running sum over k factors within 1.01 (k + 2) u sum_i n_i |K_i|
    c0 = U * KERR_CONST * float(np.sum(counts))
    c1 = 4.0 * U * float(np.sum(counts * np.array([max(abs(p.offset), abs(p.offset + p.size - 1))
                                                    for p in pmfs], dtype=float)))
    c2 = 1.01 * (len(pmfs) + 2) * U

    def log_mgf(tt: np.ndarray) -> np.ndarray:
        per = log_mgfs(pmfs, tt)
        out = weighted_sum(counts, per)
        with np.errstate(invalid="ignore"):
            slack = 1e-9 * np.abs(out) + 1e-12 + c0 + c1 * np.abs(tt) + c2 * weighted_sum(counts, np.abs(per))
        return np.where(np.isneginf(out), out, out + slack)

    # the five rungs around the Gaussian optimum t sd = sqrt(-2 log tail); from there each side walks downhill two
    # rungs at a time until its best has both neighbours tried (both sides' rungs in one call each time; where
    # the best is inside the first five, one call in all)
    mid = int(min(max(round(math.log10(math.sqrt(-2.0 * log_tail) / 0.1) / 0.2), 2), ladder.size - 3))
    seen: tuple = ({}, {})  # rung -> K(t) + slack for t = +ladder[rung] (upper side) and -ladder[rung]

    def run(want: tuple) -> None:
        want = tuple([i for i in dict.fromkeys(w) if 0 <= i < ladder.size and i not in sd_] for w, sd_ in
                     zip(want, seen))
        if want[0] or want[1]:
            vals = log_mgf(np.concatenate([ladder[want[0]], -ladder[want[1]]]))
            seen[0].update(zip(want[0], vals[:len(want[0])].tolist()))
            seen[1].update(zip(want[1], vals[len(want[0]):].tolist()))

    def best(side: int) -> int:
        return min(seen[side], key=lambda i: ((seen[side][i] - log_tail) / ladder[i], i))

    run((list(range(mid - 2, mid + 3)), list(range(mid - 2, mid + 3))))
    while True:  # a best rung at the edge of those tried: the next two beyond it (both sides in one call)
        want: tuple = ([], [])
        for k in (0, 1):
            b = best(k)
            if b - 1 >= 0 and b - 1 not in seen[k]:
                want[k].extend([b - 1, b - 2])
            if b + 1 < ladder.size and b + 1 not in seen[k]:
                want[k].extend([b + 1, b + 2])
        if not (want[0] or want[1]):
            break
        run(want)
    ts = ladder[np.array(list(seen[0]))]
    pos = np.array(list(seen[0].values()))
    tn = ladder[np.array(list(seen[1]))]
    neg = np.array(list(seen[1].values()))
    hi = float(np.min((pos - log_tail) / ts))  # exp(K(t) - t B) <= tail
    lo = float(np.max(-(neg - log_tail) / tn))  # exp(K(-t) + t A) <= tail
    A = max(full_lo, int(math.floor(lo)))
    B = min(full_hi, int(math.ceil(hi)))
    B = max(B, A)
    out_hi = float(np.exp(np.min(pos - ts * B))) if B < full_hi else 0.0
    out_lo = float(np.exp(np.min(neg + tn * A))) if A > full_lo else 0.0
    return A, B, out_hi + out_lo


def _log_atoms(p: Pmf) -> tuple[np.ndarray, np.ndarray]:
    """(grid indices, log masses) of the nonzero atoms of ``p`` (cached on a dense one; a sparse one, a single step
    of a history of many factors kept for the whole history, computes them when asked: twice its points' bytes)."""
    cached = getattr(p, "_log_atoms", None)
    if cached is None:
        at, values = p.points()
        nz = np.flatnonzero(values > 0)
        lattice = nz if at is None else at[nz].astype(np.int64)
        cached = ((lattice + p.offset).astype(float), np.log(values[nz]))
        if at is None:
            p._log_atoms = cached
    return cached


def fft_stages(n: int) -> list[int]:
    """The radices of pocketfft's real passes for length ``n``, in its order (``rfftp::factorize``: fours,
    then one two moved to the front, then threes and fives). Only 5-smooth lengths have a proven
    round-off bound here: any other factor raises ValueError."""
    out, m = [], n
    while m % 4 == 0:
        out.append(4)
        m //= 4
    if m % 2 == 0:
        out.insert(0, 2)
        m //= 2
    for r in (3, 5):
        while m % r == 0:
            out.append(r)
            m //= r
    if m != 1:
        raise ValueError(f"FFT length must be 5-smooth (2^a 3^b 5^c), got {n}")
    return out


def fft_length(n: int) -> int:
    """The FFT length used for a window of ``n`` points: scipy's ``next_fast_len(n, real=True)``, which is
    5-smooth (pocketfft's ``good_size_real``), checked to be so (else the next 5-smooth length)."""
    N = int(sfft.next_fast_len(n, real=True))
    while True:  # scipy documents it as 5-smooth; should a version differ, the next 5-smooth length is used
        try:
            fft_stages(N)
            return N
        except ValueError:
            N += 1


def fft_stage_err(radix: int) -> float:
    """Relative growth eta_r / u of one real radix-r pass of pocketfft (docs/pld.md Sec. 2.6): the twiddle
    multiplication (|fl(w^ v) - w v| <= (TWIDDLE_ERR + 2 sqrt(2)) u |v|: MULPM's two roundings per
    component, sqrt(2) gamma_2) then the butterfly (kappa_r gamma_{d_r} times the sum of its inputs'
    moduli); second-order terms are covered by the factor 1.001 of :func:`fft_err`."""
    kappa, depth = _BUTTERFLY[radix]
    return kappa * depth + TWIDDLE_ERR + 2.0 * math.sqrt(2.0)


def fft_err(n: int) -> float:
    """c(N) u: bound of |X^_k - X_k| / ||x||_1 for every coefficient of pocketfft's rfft (and, per output
    and before the 1/N scaling, of its irfft) of length ``n``: the per-pass growths summed over the passes
    (prod (1 + eta_r) - 1 <= 1.001 sum eta_r while sum eta_r < 1e-3)."""
    return 1.001 * U * sum(fft_stage_err(r) for r in fft_stages(n))


def inf_err(factors, inf_mass: float) -> float:
    """Bound of the error of :func:`_inf_mass`: the factors' own (n err_inf each, to first order, with a
    factor 2 for the second), log1p / product / sum / expm1 roundings ((k + 3) u |s|, s its exponent)."""
    own = sum(n * p.err_inf for p, n in factors)
    s = -math.log1p(-inf_mass) if inf_mass < 1 else 0.0
    return 2.0 * own + (len(factors) + 3) * U * s + U * inf_mass


#: |tau| times the largest |j - j0| up to which :func:`tilted` takes the table e^{tau (j - j0)} (no log, one
#: exponential per atom or none with a shared table); beyond it, log weights
_TILT_TABLE_ARG = 700.0


def tilt_table(pmfs: list, tau: float) -> Optional[np.ndarray]:
    """e^{tau k} for k = -W .. W, W the largest half-width n // 2 of ``pmfs`` (shared by their :func:`tilted`:
    the same values as each factor's own np.exp(tau k)), or None where tau W exceeds _TILT_TABLE_ARG."""
    W = max((p.size // 2 for p in pmfs), default=0)
    if W == 0 or abs(tau) * W > _TILT_TABLE_ARG:
        return None
    return np.exp(tau * np.arange(-W, W + 1, dtype=np.int64))


def tilted(p: Pmf, tau: float, table: Optional[np.ndarray] = None) -> tuple[Pmf, float]:
    """The exponentially tilted, normalised copy of ``p``: mass_j e^{tau (offset + j)} / M(tau), and
    log M(tau). Composition commutes with tilting (e^{tau (a + b)} = e^{tau a} e^{tau b}), so the tilted
    composition, multiplied back by exp(K - tau l), is the composition; its absolute round-off becomes
    relative to exp(K - tau l), the Chernoff bound of the tail that delta measures (docs/pld.md Sec. 2.5).

    Error patterns move with their atoms (tau >= 0; w_j = e^{tau (offset + j)} / M): a non-local error e
    at atom j becomes e w_j; a dipole e (1, -1) anchored at j (atoms j-1, j or j, j+1) becomes
    e w_j (1, -1) plus at most e w_j (e^tau - 1) non-local; a quadrupole e (1, -2, 1) centred at j becomes
    e w_j (1, -2, 1) + e w_j sinh(tau) (-1, 0, 1) + e w_j (cosh(tau) - 1) (1, 0, 1): a quadrupole, a
    dipole two atoms wide (Fourier cost |1 - w^{2k}| <= 2 |1 - w^k|) and 2 e w_j (cosh tau - 1) non-local.
    Without positions (a Pmf built elsewhere) every error is taken at the largest weight.

    Computed (docs/pld.md Sec. 2.5) as x_j = mass_j T_k / S with T_k = e^{tau k}, k = j - j0, j0 = n // 2
    (``table``: :func:`tilt_table`, shared by many factors), S = sum_j mass_j T_k and log M = tau (offset +
    j0) + log S, where |tau| max|k| <= _TILT_TABLE_ARG and S is in [1e-250, inf); else through log weights
    (:func:`tilted_log`)."""
    n = p.size
    j0 = n // 2
    kmax = max(j0, n - 1 - j0)
    if n == 0 or abs(tau) * kmax > _TILT_TABLE_ARG:
        return tilted_log(p, tau)
    if table is not None:
        W = (table.size - 1) // 2
        T = table[W - j0:W - j0 + n]
    else:
        T = np.exp(tau * np.arange(-j0, n - j0, dtype=np.int64))
    mass = p.mass  # (a sparse Pmf's lattice: made once here)
    y = mass * T
    S = float(np.sum(y))
    if not (1e-250 <= S < math.inf) or (mass < 0).any():
        return tilted_log(p, tau)
    x = y / S
    base = tau * (p.offset + j0)
    lS = math.log(S)
    lM = base + lS
    # x_j against mass_j e^{tau (offset + j) - lM} (lM as computed; S's own rounding cancels between x and lM):
    # T_k's argument (|tau k| u) and exponential (2u), the product and the division (u each), and lM's
    # rounding through e^{-lM}: the product tau (offset + j0), log S (2u |log S|), their sum (u |lM|); 1.01 for
    # the second-order terms; an underflowed product (< 2^-1022) is off by at most 2^-1074 absolute, n of them
    # relative to sum x = 1
    rel = (1.01 * U * (abs(tau) * kmax + 4.0 + abs(base) + 2.0 * abs(lS) + abs(lM))
           + n * 5e-324 / S)
    rho, sh, ch = math.expm1(tau), math.sinh(tau), 2.0 * math.sinh(tau / 2) ** 2  # ch = cosh - 1
    if p.err_mass == 0.0 and p.err_dipole == 0.0 and p.err_quad == 0.0:  # no input error (a dominated PMF)
        mono = dip = quad = 0.0
    elif p.mono is not None and p.dip is not None and p.quad is not None:
        # sum_j w_j e_j with w_j = T_k / S = e^{tau (offset + j)} / M within the relative rel; each sum of n
        # nonnegative products within gamma_n (any order), the combinations and the division 4u more
        g = (1.0 + 2.0 * rel + 1.01 * (n + 8) * U) / S
        with np.errstate(invalid="ignore", over="ignore"):
            Te = T if p.err_at is None else T[p.err_at]  # the weights at the error anchors
            s_mono, s_dip, s_quad = (float(np.einsum("i,i->", discretise.pattern_values(e), Te))
                                     for e in (p.mono, p.dip, p.quad))
            mono = (s_mono + rho * s_dip + 2.0 * ch * s_quad) * g
            dip = (s_dip + 2.0 * sh * s_quad) * g
            quad = s_quad * g
    else:
        wmax = float(np.max(T)) / S * math.exp(tau) * (1.0 + 2.0 * rel + 4 * U)
        mono = wmax * (p.err_mass + rho * p.err_dipole + 2.0 * ch * p.err_quad)
        dip, quad = wmax * (p.err_dipole + 2.0 * sh * p.err_quad), wmax * p.err_quad
    mono = mono * (1.0 + 2 * rel) + rel
    out = Pmf(p.offset, x, p.inf_mass, p.h, mono if math.isfinite(mono) else math.inf,
              dip if math.isfinite(dip) else math.inf, quad if math.isfinite(quad) else math.inf)
    # the tilted masses' moments, which the composition's window and FFT placement read next: E[j] and E[j^2] of
    # y / S in two passes over y (the variance as E[j^2] - E[j]^2: its cancellation, ~u j_max^2 ~ 1e-7 grid
    # units^2, is far inside what the moments are used for; no bound reads them)
    idx = _indices(n)
    jy = idx * y
    m1 = float(np.einsum("i->", jy)) / S
    m2 = float(np.einsum("i,i->", jy, idx)) / S
    tot = float(x.sum())
    if tot > 0 and math.isfinite(m1) and math.isfinite(m2):
        out.moments = (tot, p.offset + m1, max(m2 - m1 * m1, 0.0))
    return out, lM


def tilted_log(p: Pmf, tau: float) -> tuple[Pmf, float]:
    """:func:`tilted` through log weights lw_j = log mass_j + tau (offset + j): x_j = e^{lw_j - log M}
    (a tilt too strong for the table of :func:`tilted`)."""
    mass = p.mass
    idx = p.offset + np.arange(mass.size)
    ti = tau * idx
    with np.errstate(divide="ignore"):
        lw = np.log(mass) + ti
    top = float(np.max(lw))
    if not math.isfinite(top):
        return Pmf(p.offset, mass.copy(), p.inf_mass, p.h, p.err_mass, p.err_dipole, p.err_quad), 0.0
    lM = top + math.log(float(np.sum(np.exp(lw - top))))
    x = np.exp(lw - lM)
    rho, sh, ch = math.expm1(tau), math.sinh(tau), 2.0 * math.sinh(tau / 2) ** 2  # ch = cosh - 1
    if p.err_mass == 0.0 and p.err_dipole == 0.0 and p.err_quad == 0.0:  # no input error (a dominated PMF)
        mono = dip = quad = 0.0
    elif p.mono is not None and p.dip is not None and p.quad is not None:
        with np.errstate(over="ignore"):
            w = np.exp((ti if p.err_at is None else ti[p.err_at]) - lM)  # the weights at the error anchors
        # in float64 (a many-factor history stores its patterns as bfloat16 codes, :func:`discretise.pattern_values`)
        e_mono, e_dip, e_quad = (discretise.pattern_values(e) for e in (p.mono, p.dip, p.quad))
        with np.errstate(invalid="ignore", over="ignore"):
            mono = float(np.sum(w * (e_mono + rho * e_dip + 2.0 * ch * e_quad)))
            dip = float(np.sum(w * (e_dip + 2.0 * sh * e_quad)))
            quad = float(np.sum(w * e_quad))
    else:
        with np.errstate(over="ignore"):
            wmax = float(np.exp(np.max(tau * idx) - lM)) * math.exp(tau)
        mono = wmax * (p.err_mass + rho * p.err_dipole + 2.0 * ch * p.err_quad)
        dip, quad = wmax * (p.err_dipole + 2.0 * sh * p.err_quad), wmax * p.err_quad
    # x_j = exp(lw_j - lM) carries a relative error <= 2u (|lw_j| + |lM|) + 2u beyond the mass's own
    # (log, product, sum, exp): an l1 error <= that times sum x = 1; w is computed alike (a factor on
    # bounds only)
    # max |lw| over the finite lw (top is finite; lw has no +inf, and no nan once top is finite): at an end
    low = float(np.min(lw, where=lw > -np.inf, initial=np.inf))
    rel = 2 * U * (2.0 + max(abs(top), abs(low)) + abs(lM))
    mono = mono * (1.0 + 2 * rel) + rel
    out = Pmf(p.offset, x, p.inf_mass, p.h, mono if math.isfinite(mono) else math.inf,
              dip if math.isfinite(dip) else math.inf, quad if math.isfinite(quad) else math.inf)
    return out, lM


def compose(factors: list[tuple[Pmf, int]], tail: float = WINDOW_TAIL, tilt: float = 0.0,
            check=None) -> Composed:
    """The composition of ``count`` repetitions of each Pmf, with its error bounds (see module doc).

    ``tilt`` (tau >= 0, in 1/grid units) composes the exponentially tilted factors (:func:`tilted`): the
    round-off bound is then relative to the Chernoff bound exp(K - tau l) of the tail above each loss l,
    which certifies deltas far below the float64 round-off of the untilted masses. ``check``, if given,
    is called with the FFT length once the window is known (before any array of that length exists),
    e.g. to enforce a memory cap; the window is computed once per composition."""
    h = factors[0][0].h
    inf_mass = _inf_mass(factors)
    err_inf = inf_err(factors, inf_mass)
    if len(factors) == 1 and factors[0][1] == 1 and factors[0][0].err_atoms is not None:
        p = factors[0][0]  # one PMF composed once: its per-atom errors (a PMF built without them takes the FFT path)
        return Composed(p.offset, p.mass, inf_mass, h, 0.0, 0.0, p.err_atoms, err_inf=err_inf)
    if tilt > 0:
        table = tilt_table([p for p, _ in factors], tilt) if len(factors) > 1 else None
        tilter = _Tilter(tilt, table)
        # many distinct factors: the tilted factors in two levels (composition commutes with the tilt; the
        # grouped result's error bounds are then tilted l1 bounds, its input errors its `local`), each group
        # tilted just before its composition (only one group's tilted copies exist at a time)
        grouped = len(factors) > GROUP_MIN
        if grouped:
            c = compose_grouped(factors, tail, check, prepare=tilter)
        else:
            tf = tilter(factors, 0)
            c = compose_fft(tf, tail, check)
        K = tilter.K
        # lm = log(mass) + (K - tilt idx), in place (the grid indices are exact in float64: the same operations on
        # the same numbers as with an integer index array)
        lm = np.arange(c.offset, c.offset + c.mass.size, dtype=float)
        lm *= tilt
        np.subtract(K, lm, out=lm)
        with np.errstate(divide="ignore", over="ignore"):
            lm += np.log(c.mass)
        mass = np.minimum(lm, 0.0)  # a mass is <= 1: capping only moves it towards the truth
        np.exp(mass, out=mass)
        top = c.offset + c.mass.size - 1
        # the rescaling (log, sum, product, exp) has relative error <= 2u (2 + |lm|) per mass: in tilted l1,
        # that times the tilted masses' sum; max |lm| over the finite lm (-inf where a mass is 0)
        fin = np.isfinite(lm)
        big = max(float(np.max(lm, where=fin, initial=-np.inf)), -float(np.min(lm, where=fin, initial=np.inf)))
        rel = 2 * U * (2.0 + (big if math.isfinite(big) else 0.0))
        s = float(np.sum(c.mass))
        back = rel * s
        # sum_j mass_j e^{tilt idx_j} <= (1 + rel) e^K sum_j tilted_j (each mass within rel of exp(lm_j), the cap only
        # lowers it), the computed sum within gamma_n of the exact one: log M <= K + log s + rel + 1.01 (n + 2) u,
        # plus the roundings of the log and the sum (4u |K| + 4u |log s|)
        log_mgf = (K + math.log(s) + 1.01 * (rel + (c.mass.size + 2) * U) + 4 * U * (abs(K) + abs(math.log(s)))
                   if s > 0 else None)
        return Composed(c.offset, mass, inf_mass, h, c.err + back, c.outside, None, tilt, K, top, err_inf,
                        c.local if grouped else local_terms(tf), log_mgf=log_mgf, err_l2=c.err_l2,
                        err_each=c.err_each, err_back=back, local_l2=c.local_l2)
    if len(factors) > GROUP_MIN:
        return compose_grouped(factors, tail, check)
    c = compose_fft(factors, tail, check)
    c.err_inf = err_inf
    c.local = local_terms(factors)
    return c


#: histories with more distinct factors than this are composed in two levels (untilted compositions)
GROUP_MIN = 64
#: above this many distinct factors, groups of about k^0.4 (their results are then grouped again)
_GROUP_THREE = 4096


def _group_size(k: int) -> int:
    """Factors per group of :func:`compose_grouped`: about sqrt(k), or k^0.4 above _GROUP_THREE (then the
    groups are grouped again: measured on the 10,000-factor schedule, k^0.4 composed it ~10 % faster than
    k^(1/3) and ~20 % faster than two levels of sqrt(k); the exponents 0.37-0.46 were within the noise)."""
    return max(int(math.ceil(k ** 0.4 if k > _GROUP_THREE else math.sqrt(k))), 2)


class _Tilter:
    """The tilted copies of factors (:func:`tilted`), made group by group, and K = sum_i n_i log M_i(tau) summed
    over the factors in their order, each factor once (a group tilted again, e.g. all factors after a grouping
    that cannot carry its errors, adds only the factors not yet summed)."""

    def __init__(self, tilt: float, table: Optional[np.ndarray]):
        self.tilt, self.table, self.K, self.done = tilt, table, 0.0, 0
        self.terms: list = []  # the terms n_i log M_i(tau) of the last group tilted

    def __call__(self, group: list, start: int) -> list:
        out = []
        self.terms = []
        for i, (p, n) in enumerate(group):
            t, lM = tilted(p, self.tilt, self.table)
            out.append((t, n))
            self.terms.append(n * lM)
        self.replay(self.terms, start)
        return out

    def replay(self, terms: list, start: int) -> None:
        """Add the terms of the factors from index ``start`` on to K, each factor once, in their order."""
        for i, term in enumerate(terms):
            if start + i == self.done:
                self.K += term
                self.done += 1


def compose_grouped(factors: list[tuple[Pmf, int]], tail: float = WINDOW_TAIL, check=None,
                    prepare=None) -> Composed:
    """The composition of many distinct factors in two levels (docs/pld.md Sec. 2.10; tilted factors too, from
    :func:`compose`): groups of
    about sqrt(k) factors are composed on their own, much shorter, windows; each result becomes a
    :class:`Pmf` whose error bounds carry everything between it and the exact composition of its group's
    exact factors, and those are composed on the full window.

    A group's computed window y differs from the exact composition x_g of its factors' computed masses by
    at most E_g (the FFT round-off, l1) plus 2 * outside_g (the folded-in mass and the mass left outside),
    an error without structure (``err_mass``); x_g differs from the composition of the exact factors by the
    factors' input error patterns, each convolved with a positive measure of l1 norm <= growth_g (the
    telescoping of :func:`local_err`), which keeps its shape: ``err_mass`` += growth_g mono_g, ``err_dipole``
    = growth_g dip_g, ``err_quad`` = growth_g quad_g. The second level treats these as the input errors of
    its factors, so :func:`slack` and :func:`local_err` charge them as for any factor. Each group's window
    holds all but tail / (4 groups) of its mass on each side (charged above), so the truncation costs at
    most tail / 2 in all.

    Above ``_GROUP_THREE`` factors the groups hold about k^0.4 factors and their results (still more than
    ``GROUP_MIN``) are grouped again by this same function: three levels, each carrying the errors of the one
    below as input errors (the per-factor transforms then run on much shorter windows). ``prepare(group, start)``
    (a :class:`_Tilter`), if given, turns each group of factors (the first at index ``start``) into the factors
    composed, just before its composition.

    A group of single-step PMFs named by :class:`~privcal.privacy_loss.step_memo.StepMemo` keys is kept in
    :data:`~privcal.privacy_loss.step_memo.GROUP_MEMO` (its composed PMF, its factors' terms of K, its window
    length) and read back by the next composition of the same group at the same tilt and tail -- the same PMF, bit
    for bit: a history grown by a step composes its last group again, not every group."""
    k = len(factors)
    size = _group_size(k)
    starts = range(0, k, size)
    tail_g = tail / (4 * len(starts))
    tilt = prepare.tilt if prepare is not None else 0.0
    level2 = []
    for start in starts:
        g = factors[start:start + size]
        key = GROUP_MEMO.key(g, tilt, tail_g)
        kept = GROUP_MEMO.get(key) if key is not None else None
        if kept is not None:
            pm, terms, n_fft = kept
            if check is not None:
                check(n_fft)
            if prepare is not None:
                prepare.replay(terms, start)
            level2.append((pm, 1))
            continue
        if prepare is not None:
            g = prepare(g, start)
        if len(g) == 1 and g[0][1] == 1:
            level2.append(g[0])
            continue
        c = compose_fft(g, tail_g, check)
        mono, dip, quad, growth = local_terms(g)
        if not math.isfinite(growth):  # input errors too large to carry: one level, charged there (inf)
            factors = prepare(factors, 0) if prepare is not None else factors
            c = compose_fft(factors, tail, check)
            c.err_inf = inf_err(factors, c.inf_mass)
            c.local = local_terms(factors)
            return c
        c.err_inf = inf_err(g, c.inf_mass)
        pm = Pmf(c.offset, c.mass, c.inf_mass, c.h, growth * mono + c.err + 2.0 * c.outside, growth * dip,
                 growth * quad, err_inf=c.err_inf)
        level2.append((pm, 1))
        if key is not None:
            GROUP_MEMO.put(key, (pm, list(prepare.terms) if prepare is not None else [], c.mass.size))
    if len(level2) > GROUP_MIN:  # the groups' results are many distinct factors in their turn
        return compose_grouped(level2, tail, check)
    out = compose_fft(level2, tail, check)
    out.err_inf = inf_err(level2, out.inf_mass)
    out.local = local_terms(level2)
    out.local_l2 = grouped_l2(level2, out.local[3])
    return out


def grouped_l2(level2: list, growth: float) -> Optional[float]:
    """A bound of ||P_m||_2 for every telescoping term P_m of the composition of ``level2`` (the groups' results, or
    factors, with their counts; docs/pld.md Sec. 2.10): P_m convolves, for every factor but the m-th, its computed
    PMF x^ or its exact one x, both within l1 = err_mass + 2 err_dipole + 4 err_quad of x^ (so of l2 norm <= ||x^||_2
    + l1, and l1 norm <= 1 + l1). By Young's inequality ||P_m||_2 <= ||z||_2 prod_{others} ||.||_1 for any one
    factor z of P_m: the factor of least ||x^||_2 + l1 other than the m-th -- at most the second least over all
    (counting a factor with a count n >= 2 twice) -- times ``growth`` (= exp(sum n l1) >= prod (1 + l1)^n). Each
    ||x^||_2 = m ||x^ / m||_2 raised by 1.01 (k + 4) u (the k squares' sum, the square root and the division; ratios
    <= 1, no overflow; an underflowed square loses at most 2^-1074, k of them 2^-1070 under the root). None with fewer
    than two factors, a negative mass, or an infinite growth."""
    if not math.isfinite(growth):
        return None
    norms = []
    for p, n in level2:
        _, v = p.points()
        if v.size and (v < 0).any():
            return None
        top = float(np.max(v)) if v.size else 0.0
        k = v.size
        l2 = top * math.sqrt(float(np.sum((v / top) ** 2)) + k * 2.0**-1070) * (1.0 + 1.01 * (k + 4) * U) if top > 0 \
            else 0.0
        l1 = p.err_mass + 2.0 * p.err_dipole + 4.0 * p.err_quad
        norms += [(l2 + l1) * (1.0 + 2 * U)] * min(n, 2)
    if len(norms) < 2:
        return None
    norms.sort()
    return norms[1] * growth * (1.0 + 2 * U)


def block_err(c: Composed) -> tuple[float, float]:
    """(A, R): for every real eps' (negative ones included), |delta(eps') of the computed masses of ``c`` -
    delta(eps') of the exact composition of its exact factors| <= A + R e^{-tau eps'} (tau per nat; for an
    untilted ``c``, tau = 0 and R is an l1 bound), docs/pld.md Sec. 2.11. The terms of R: the tilted l1
    bounds of the FFT round-off, of twice the mass outside the window (folded in where it does not belong,
    missing where it does; a folded mass is rescaled at its landing point, so its tilted weight is kept),
    and of the factors' input errors (:func:`local_err`, whose bound at eps' is S(eps') times a constant),
    all times e^K: a tilted l1 bound b gives sum_{l > eps'} |e_l| <= e^{K - tau eps'} b, the weights
    (1 - e^{eps' - l})_+ being in [0, 1] and zero below eps'. A: the error of the +inf mass, and the
    per-atom errors of a single factor composed once (no FFT, untilted)."""
    loc = local_err(c, c.log_scale * c.h / c.tilt if c.tilt > 0 else 0.0, weighted=False)  # at S = 1: its constant
    R = (c.err + 2.0 * c.outside + loc) * (1.0 + 8 * U)
    e = c.log_scale
    R = R * math.exp(e) if e < 700 else math.inf
    A = c.err_inf + (float(np.sum(c.err_atoms)) if c.err_atoms is not None else 0.0)  # no FFT: per-atom errors
    return A, R


def regrid(c: Composed, K: int, upper: bool) -> tuple[Pmf, float, float]:
    """The composed masses of ``c`` (grid h) moved onto the grid H = K h (docs/pld.md Sec. 2.11), as a
    :class:`Pmf` to compose further; with R, the bound of the move's rounding in the form of
    :func:`block_err` (its e^{-tau eps} coefficient, tau = c.tilt / h; 0 for the lower end), and the log of
    M(tau) = sum_l y_l e^{tau l} of the masses moved.

    Upper (dominating): each atom (P-mass y at loss l in [G_j, G_{j+1})) is split into atoms at G_j and
    G_{j+1} that keep its P- and Q-mass -- the fraction (1 - e^{-(l - G_j)}) / (1 - e^{-H}) of y goes up --
    "connect the dots" on the composed PLD: by convexity of (.)_+, (p_1 - e^eps q_1)_+ + (p_2 - e^eps q_2)_+
    >= (p - e^eps q)_+ at every real eps, so every delta of every further composition can only grow.
    Lower (dominated): the atoms of a coarse cell are merged (a post-processing: its ratio lies in
    [e^{G_j}, e^{G_j + H})) and the cells go through the PLD's pairing (:func:`discretise.dominated_masses`), with P-mass
    bounded from below and e^{G_j} Q-mass from above through the sums' roundings. Both are second order in H:
    mass moves only within one coarse cell. The masses of ``c`` are taken as the measure to move; how far
    they are from the exact composition is :func:`block_err`, charged by the caller."""
    u = U
    h, y = c.h, np.maximum(c.mass, 0.0)
    H = K * h
    tau = c.tilt / h
    j0 = c.offset // K
    pad = c.offset - j0 * K
    cells = -(-(pad + y.size) // K)
    Y = np.zeros(cells * K)
    Y[pad:pad + y.size] = y
    Y = Y.reshape(cells, K)
    r = np.arange(K, dtype=float)
    tot = Y.sum(axis=1)
    atoms = np.zeros(cells + 1)
    if c.log_mgf is not None and c.tilt > 0:  # a tilted composition knows it (an upper bound, :func:`compose`)
        log_m = c.log_mgf
    else:
        with np.errstate(divide="ignore"):
            lw = np.log(y) + tau * c.losses
        top = float(np.max(lw)) if y.size else -math.inf
        log_m = top + math.log(float(np.sum(np.exp(lw - top)))) if math.isfinite(top) else -math.inf
    if upper:
        w = np.expm1(-r * h) / math.expm1(-H)  # fraction sent up to G_{j+1}, in [0, 1)
        up = np.sum(Y * w, axis=1)
        atoms[1:] += up
        atoms[:-1] += np.maximum(tot - up, 0.0)
        # w: two expm1 (1 ulp each) and a division (u): 5u; products u; each sum of K terms gamma_{K-1};
        # the difference u |tot - up| plus the errors of tot and up: (2K + 10) u times the mass of the cell
        # (1.01 for the second-order terms), landing at G_j or G_{j+1} <= l + H: in the form A + R e^{-tau eps},
        # R <= (2K + 10) u e^{tau H} M(tau), twice (each atom feeds two)
        e = log_m + tau * H
        R = 2.02 * (2 * K + 10) * u * math.exp(e) if e < 700 else math.inf
        return Pmf(j0, atoms, c.inf_mass, H), R, log_m
    g = 1.01 * (K + 4) * u
    e = np.exp(-r * h)  # e^{-(l - G_j)}, 1 ulp
    rt = np.sum(Y * e, axis=1) * (1.0 + g)  # e^{G_j} Q from above
    p_lo = tot * (1.0 - g)  # P from below
    rt = np.minimum(rt, tot * (1.0 + g))  # e^{G_j} Q <= P exactly (every atom's loss is >= G_j)
    atoms[:-1] = discretise.dominated_masses(p_lo, rt, H, 0.0, 0.0)
    return Pmf(j0, atoms, c.inf_mass, H), 0.0, log_m



def compose_levels(factors: list[tuple[Pmf, int]], K: int, B: int, upper: bool, tail: float = WINDOW_TAIL,
                   tilt: float = 0.0, check=None) -> Composed:
    """The composition of ``factors`` (grid h) in two levels (docs/pld.md Sec. 2.11), tilted by ``tilt``
    (per grid step h; the same tau = tilt / h per nat at both levels), on the grid H = K h.

    Each factor with a count n >= B is split into m = n // B blocks of B copies, composed on the grid h
    (:func:`compose`) and moved onto H (:func:`regrid`: dominating for the upper end, dominated for the
    lower); the n - m B left of each, and every factor with a count below B, are composed into one more
    block the same way (not built on H directly: a step far narrower than H would lose a first-order part
    of its loss in the dominated construction, every coarse cell holding a single pile). The blocks are
    composed on H (:func:`compose`, tilt K ``tilt``).

    A block's distance to an exact one is at most A + R e^{-tau eps'} at every real eps' (:func:`block_err`,
    plus the move's rounding). Replacing the m exact blocks by the moved ones one at a time (telescoping:
    delta_{X (x) C}(eps) = sum_c P_C(c) delta_X(eps - L_c)), each replacement costs at most A P_others +
    R e^{-tau eps} M_others(tau), the other factors' P-mass and P-MGF at tau: in all
    m A max(1, P_z)^m + m (R / M_z) rho^(m - 1) e^{K2 - tau eps}, K2 the second level's log MGF (its
    ``log_scale``) and rho = max(1, M_exact / M_z) with M_exact <= M_moved + R. These are ``err_add`` and
    ``err_rel`` of the result; :func:`slack` charges them. ``check`` is called with every FFT length."""
    h = factors[0][0].h
    H = K * h
    blocks = [([(x, B)], n // B) for x, n in factors if n >= B]
    rest = [(x, n % B if n >= B else n) for x, n in factors if (n % B if n >= B else n)]
    if rest:
        blocks.append((rest, 1))
    tail1 = tail / (4.0 * sum(m for _, m in blocks))
    tau = tilt / h
    level2, add, rel, log_rho, k2 = [], 0.0, 0.0, 0.0, 0.0
    for group, m in blocks:
        block = compose(group, tail1, tilt, check)
        z, r_move, log_my = regrid(block, K, upper)
        a, r = block_err(block)
        r += r_move
        log_mz = float(log_mgf_of(z, np.array([tau * H]))[0])
        p_z = float(np.sum(z.mass)) + z.inf_mass
        add += m * a * max(1.0, p_z) ** m
        rel += m * r * math.exp(-log_mz) if log_mz > -700 else math.inf
        m_exact = math.exp(log_my) + r if log_my < 700 else math.inf
        if m > 1 and m_exact > 0:
            log_rho += (m - 1) * max(0.0, math.log(m_exact) - log_mz)
        k2 += m * log_mz
        level2.append((z, m))
    c = compose(level2, tail, tilt * K, check)
    c.err_add += add
    if c.tilt > 0.0:
        c.err_rel += rel * math.exp(log_rho) if log_rho < 700 else math.inf
    else:  # composed untilted (tau = 0, or a single block composed once): at eps >= 0, e^{K2 - tau eps} <= e^{K2}
        e = log_rho + k2
        c.err_add += rel * math.exp(e) if e < 700 else math.inf
    return c

def local_terms(factors: list) -> tuple:
    """(sum n_i mono_i, sum n_i dip_i, sum n_i quad_i, growth) of the factors' input errors: the input-error
    term of the evaluated slack (docs/pld.md), for ``(pmf, count)`` factors."""
    mono = sum(n * p.err_mass for p, n in factors)
    dip = sum(n * p.err_dipole for p, n in factors)
    quad = sum(n * p.err_quad for p, n in factors)
    l1 = sum(n * (p.err_mass + 2.0 * p.err_dipole + 4.0 * p.err_quad) for p, n in factors)
    growth = math.exp(l1) if l1 < 1.0 else math.inf
    return mono, dip, quad, growth


def peak_weight(tau: float) -> float:
    """An upper bound of c(tau) = max_{x >= 0} e^{-tau x} (1 - e^{-x}) = (tau / (1 + tau))^tau / (1 + tau) (tau
    per nat; c(0) = 1, the supremum at x -> inf): the largest delta-weight g(l) / S of a loss l above epsilon
    (docs/pld.md Sec. 2.4). log c = -log1p(tau) - tau log1p(1 / tau), |tau log1p(1 / tau)| <= 1: the computed
    exponent is within 4u (2 + log1p(tau)) of the exact one and exp adds u, so the factor 1 + 16u (2 +
    log1p(tau)) puts the value above c(tau)."""
    if tau <= 0:
        return 1.0
    lp = math.log1p(tau)
    return math.exp(-lp - tau * math.log1p(1.0 / tau)) * (1.0 + 16 * U * (2.0 + lp))


def local_coeff(mono: float, dip: float, quad: float, h: float, tau: float) -> float:
    """mono max g + dip max|Delta g| + quad max|Delta^2 g| over S, for the delta-weight g(l) = S e^{-tau x}
    (1 - e^{-x}), x = l - eps > 0 (0 below eps), tau per nat (docs/pld.md Sec. 2.4): max g = S c(tau)
    (:func:`peak_weight`); |g'| <= S (g' / S = (1 + tau) e^{-(1 + tau) x} - tau e^{-tau x} falls from 1 at 0+
    to its minimum -(tau / (1 + tau))^{2 tau + 1} > -1 at e^{-x} = (tau / (1 + tau))^2, then rises to 0);
    |g''| <= S (1 + 2 tau) (g'' / S = tau^2 e^{-tau x} - (1 + tau)^2 e^{-(1 + tau) x} rises from -(1 + 2 tau)
    at 0+ to its maximum (tau / (1 + tau))^{3 tau} tau^2 / (1 + tau) < tau, then falls to 0); g' jumps by S at
    eps; a difference of two values of g in [0, S c] is at most S c. So a dipole costs min(h, c), a quadrupole
    min(h + h^2 (1 + 2 tau), 2 c)."""
    c, d1, d2 = pattern_costs(h, tau)
    return mono * c + dip * d1 + quad * d2


def pattern_costs(h: float, tau: float) -> tuple[float, float, float]:
    """(max g, max|Delta g|, max|Delta^2 g|) over S (:func:`local_coeff`)."""
    c = peak_weight(tau)
    return c, min(h, c), min(h + h * h * (1.0 + 2.0 * tau), 2.0 * c)


#: a floor above the absolute rounding of a result that may underflow (2^-1074, a subnormal's spacing)
_TINY = 2.0**-1070
#: the relative error of :func:`_weight_sq`'s three geometric terms, in units of u (docs/pld.md Sec. 2.4): T1 20, T2
#: 23, T3 26 (each plus its share of r's error), the two additions 2 more
_GEO_TERMS_U = 28.0


def _geo(lam: float, m: Optional[int]) -> float:
    """sum_{i=0}^{m-1} e^{lam i} for lam < 0: -expm1(lam m) / -expm1(lam) (m None: to infinity, 1 / -expm1(lam)).
    Within 8u relative for an argument lam within u (the product lam m 1u, expm1 2u each: an argument's relative error
    e moves expm1(x), x < 0, by at most e relative, since |x| e^x <= 1 - e^x; the division 1u)."""
    d = -math.expm1(lam)
    return 1.0 / d if m is None else -math.expm1(lam * m) / d


def _weight_sq(t: float, h: float, r: float, rho_r: float, k: int, m: Optional[int]) -> float:
    """An upper bound of sum_{i=0}^{m-1} (a x^i - r b y^i)^2 with x = e^{-t}, y = e^{-(t + h)}, a = (1 - x)^k and
    b = (1 - y)^k (k = 0, 1, 2; m None: to infinity), ``r`` within the relative ``rho_r`` of the exact r: the squared
    l2 norm of the k-th difference of the weights s (x^i - r y^i) past their first lattice point (docs/pld.md Sec.
    2.4). Expanded, it is T1 - T2 + T3 = a^2 G(x^2) - 2 r a b G(x y) + r^2 b^2 G(y^2), each G a geometric sum
    (:func:`_geo`), exact in closed form; the terms cancel (the weights vanish at epsilon), so the rounding is bounded
    against T1 + T2 + T3: 1.01 (_GEO_TERMS_U u + 2 rho_r) (T1 + T2 + T3), added."""
    one_x, one_y = -math.expm1(-t), -math.expm1(-(t + h))
    a, b = one_x**k, one_y**k
    t1 = a * a * _geo(-2.0 * t, m)
    t2 = 2.0 * r * a * b * _geo(-(2.0 * t + h), m)
    t3 = r * r * b * b * _geo(-2.0 * (t + h), m)
    return t1 - t2 + t3 + 1.01 * (_GEO_TERMS_U * U + 2.0 * rho_r) * (t1 + t2 + t3)


def _first_above(epsilon: float, h: float) -> int:
    """The first lattice index i with i h > epsilon as computed (floor(epsilon / h) + 1, moved by one where the
    division rounded across an integer)."""
    j = int(math.floor(epsilon / h)) + 1
    while (j - 1) * h > epsilon:
        j -= 1
    while not j * h > epsilon:
        j += 1
    return j


def _scale_and_ratio(c: "Composed", epsilon: float, i0: int) -> Optional[tuple]:
    """(s, r, rho_r, x0) for the weights from lattice index i0 on: s >= exp(K - tau i0) (the argument's two roundings
    u (|K| + 2 |tau i0|), exp 2u, 1.01 for the second order; plus _TINY where exp underflows), r = e^{x0} with x0 =
    epsilon - i0 h as computed and rho_r = 1.01 u (|i0 h| + |x0| + 2) its relative error (the product, the difference,
    exp). None where exp(K - tau i0) may exceed e^700 (the caller's bound is then inf)."""
    t, K = c.tilt, c.log_scale
    ti = t * i0
    e0 = K - ti
    if not e0 < 700:
        return None
    s = math.exp(e0) * (1.0 + 1.01 * U * (abs(K) + 2.0 * abs(ti) + 2.0)) + _TINY
    ih = i0 * c.h
    x0 = epsilon - ih  # < 0 where i0 is the first point above epsilon (r is read only there)
    return s, math.exp(min(x0, 0.0)), 1.01 * U * (abs(ih) + abs(x0) + 2.0), x0


def difference_norms(c: Composed, epsilon: float) -> tuple[float, float, float]:
    """Upper bounds of (||w||_2, ||Delta w||_2, ||Delta^2 w||_2) over the whole lattice, w_i = exp(K - tau i)
    (1 - e^{epsilon - i h})_+ (docs/pld.md Sec. 2.4, the l2 form), in closed form. From the first index j0 above
    epsilon, w_{j0 + m} = s (x^m - r y^m) (s = exp(K - tau j0), x = e^{-tau}, y = e^{-(tau + h)}, r = e^{epsilon - j0 h}
    <= 1), 0 below; so Delta^k w_{j0 + m} = s (a x^m - r b y^m) with a = (1 - x)^k, b = (1 - y)^k (:func:`_weight_sq`),
    and the differences that straddle j0 add s (1 - r) (k = 1: Delta w_{j0 - 1} = -w_{j0}; k = 2: Delta^2 w_{j0 - 2}
    = w_{j0}) and, for k = 2, s (r (1 - y) - (1 - x) - (1 - r)) (Delta^2 w_{j0 - 1} = w_{j0 + 1} - 2 w_{j0}), each
    raised by its rounding. x0 = epsilon - j0 h is within far = 2.02 u (|j0 h| + |x0| + 2) of its exact value; where it
    is off, 1 - r, r and a lattice point the computed comparison put at or below epsilon (whose weight is then at most
    s e^tau far) move, each in at most three differences of weight 1, 2, 1: 4 s e^tau far is added to each norm.
    Tilted compositions only ((inf, inf, inf) else)."""
    if c.tilt <= 0:
        return math.inf, math.inf, math.inf
    key = ("differences", epsilon, c.h, c.tilt, c.log_scale)
    cached = c.__dict__.get("_differences")
    if cached is not None and cached[0] == key:
        return cached[1]
    t, h = c.tilt, c.h
    j0 = _first_above(epsilon, h)
    got = _scale_and_ratio(c, epsilon, j0)
    if got is None:
        out = (math.inf, math.inf, math.inf)
    else:
        s, r, rho_r, x0 = got
        one_x, one_y = -math.expm1(-t), -math.expm1(-(t + h))
        # x0 = epsilon - j0 h is within far = 2.02 u (|j0 h| + |x0| + 2) of the exact one (the product and the
        # difference; 2.02 also covers exp's and expm1's 2u below). Where it is off, the weights' formula moves:
        # 1 - r = -expm1(x0) by at most that (x0 <= 0), r by at most r far, and a lattice point the computed comparison
        # put at or below epsilon may be above it, with a weight of at most s e^tau far. Each of these changes at most
        # three differences, by at most 1, 2, 1 times s e^tau far: 4 s e^tau far is added to each norm (``near``).
        # What is left of 1 - r's and of the k = 2 boundary difference's rounding is relative: expm1's 2u, and for
        # r (1 - y) - (1 - x) - (1 - r) the parts' 2u (1 - x), 3u (1 - y) and the product and differences' 1u each
        # of the parts' magnitudes
        one_r = -math.expm1(x0)
        one_r_hi = one_r * (1.0 + 2.02 * U)
        mid = r * one_y - one_x - one_r
        mid_hi = abs(mid) + 8.0 * U * (r * one_y + one_x + one_r)
        near = 4.0 * s * math.exp(t) * 2.02 * U * (abs(j0 * h) + abs(x0) + 2.0)
        extra = (0.0, one_r_hi * one_r_hi, one_r_hi * one_r_hi + mid_hi * mid_hi)
        out = tuple(s * math.sqrt(_weight_sq(t, h, r, rho_r, k, None) + extra[k]) * (1.0 + 4.0 * U) + near + _TINY
                    for k in range(3))
    c.__dict__["_differences"] = (key, out)
    return out


def local_err(c: Composed, epsilon: float, weighted: bool = True) -> float:
    r"""Bound of the change of delta(epsilon) caused by the factors' input errors (docs/pld.md Sec. 2.4).

    delta = sum_l y_l g(l), g(l) = exp(K - tau l) (1 - e^{epsilon - l})_+ (tau per nat here), y the exact
    composition of the tilted factors. Telescoping, prod x^_i - prod x_i = sum_m (x^_1 .. x^_{m-1}) * E_m *
    (x_{m+1} .. x_N), and each term changes delta by at most ||prefix||_1 ||suffix||_1 (<= growth) times
    max_s |sum_e E_m[e] g(s + e)|: a non-local error e costs e max g, a dipole e max|Delta g|, a quadrupole
    e max|Delta^2 g|, each S = exp(K - tau epsilon) times :func:`local_coeff`'s constant.

    The l2 form (``weighted``, a tilted composition whose ``local_l2`` bounds every ||prefix * suffix||_2): by
    Cauchy-Schwarz a pattern costs at most that norm times ||g||_2, ||Delta g||_2 or ||Delta^2 g||_2 over the
    lattice (:func:`difference_norms`); each pattern is charged the smaller of the two. ``weighted=False``: the
    S-proportional form alone (:func:`block_err` needs a bound of that shape)."""
    if c.local is None:
        return 0.0
    mono, dip, quad, growth = c.local
    if not math.isfinite(growth):
        return math.inf
    tp = c.tilt / c.h  # per nat
    S = 1.0
    if c.tilt > 0:
        e = c.log_scale - tp * epsilon
        S = math.exp(e) if e < 700 else math.inf
    costs = pattern_costs(c.h, tp)
    pats = [(e, S * growth * k) for e, k in zip((mono, dip, quad), costs)]
    if weighted and c.local_l2 is not None and c.tilt > 0:
        norms = difference_norms(c, epsilon)
        return sum(e * min(S * growth * k, c.local_l2 * n) for e, k, n in zip((mono, dip, quad), costs, norms)
                   if e > 0)
    return sum(e * a for e, a in pats)


#: coefficients per batch of factors' spectra in :func:`compose_fft` (rows x (N // 2 + 1)): bounds the
#: memory of the arrays of one batch whatever the number of factors
_FFT_BATCH = 2**16
#: up to this many coefficients (factors x (N // 2 + 1)), the spectra of the first pass are kept for the
#: second (64 MB); beyond it they are computed again (the same transform: bitwise the same spectra)
_KEEP_SPECTRA = 2**22
_TWO_PI = 2 * np.pi


def _running_sum(acc: np.ndarray, terms: np.ndarray) -> np.ndarray:
    """acc + terms[0] + terms[1] + ..., added in this order, in place (np.sum down the rows may sum
    pairwise, a different rounding)."""
    for row in terms:
        acc += row
    return acc


def mod_2pi(x: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """np.mod(x, 2 pi) for rows n_i arg X (arg in [-pi, pi]), bitwise: numpy's float remainder is fmod (exact)
    then, for a negative result, + 2 pi (rounded), and +0.0 for a zero; on a row with n_i = 1, |x| <= pi <
    2 pi, so fmod(x, 2 pi) = x and that is x + 2 pi where x < 0, else x + 0.0 (turning -0.0 into +0.0)
    -- without numpy's slow division (rows with n_i > 1 take np.mod)."""
    out = np.empty_like(x)
    one = counts[:, 0] == 1.0
    if one.any():
        r = x[one]
        out[one] = np.where(r < 0, r + _TWO_PI, r + 0.0)
    if not one.all():
        out[~one] = np.mod(x[~one], _TWO_PI)
    return out


def _scatter(values: np.ndarray, sel: np.ndarray, size: int) -> np.ndarray:
    out = np.zeros(size)
    out[sel] = values
    return out


def compose_fft(factors: list[tuple[Pmf, int]], tail: float = WINDOW_TAIL, check=None,
                 power: bool = True) -> Composed:
    """The FFT composition (module doc); the factors' masses are taken as given.

    The product's modulus, phase and spread are computed only at the coefficients where the bound's power
    prod_i min(|X_i| + e_i, cap_i)^{n_i} can exceed e^{-750}: elsewhere both the power and its error bound
    underflow to 0 in any case (exp of less than -745.13), so they are left 0 without being computed -- the
    same numbers, bit for bit (``power=False`` computes every coefficient). For one factor taken n > 1 times
    (a self-composition) the cut is min(|X| + e, cap) > e^{-750 / n}; otherwise a first pass over the
    factors' spectra sums the logs of the capped moduli. A long self-composition keeps only its few low
    frequencies (e.g. ~2 % at 1e4 steps), a group of many smooth factors a few per cent."""
    h = factors[0][0].h
    inf_mass = _inf_mass(factors)
    A, B, outside = window(factors, tail)
    N = fft_length(B - A + 1)
    if check is not None:
        check(N)
    k = np.arange(N // 2 + 1)
    c_fft = fft_err(N)  # forward: per coefficient, relative to ||x||_1
    c_inv = c_fft + 2.01 * U  # inverse: plus the rounded 1/N and the product by it (pocketfft's fct)
    # the factors in batches of rows: one 2-D scatter and one rfft along the rows per batch (pocketfft runs
    # the same passes on each row: bitwise the spectrum of one rfft per factor); every sum over the factors
    # is a running sum in the factors' order (:func:`_running_sum`), the same additions as one factor at a
    # time
    shift = 0
    centres, totals = [], []
    for p, n in factors:
        tot, mean, _ = pmf_moments(p)  # tot = float(p.mass.sum())
        centre = int(round(mean))
        centres.append(centre)
        totals.append(tot)
        shift += n * centre
    rows = max(1, _FFT_BATCH // k.size)
    starts = range(0, len(factors), rows)
    counts = np.array([float(n) for _, n in factors])[:, None]

    def spectra(s: int) -> np.ndarray:
        # atom j of row r at (offset_r - centre_r + j) mod N, in row r: one or two slices where the factor fits in N
        # (each cell receives one mass: the values np.bincount would sum there, 0.0 + x = x), else summed
        batch = factors[s:s + rows]
        grid = np.zeros((len(batch), N))
        for r, (p, _) in enumerate(batch):
            at, m = p.points()
            if at is not None:  # a sparse Pmf: its points, each at its lattice offset (the same cells, the same
                # masses: bincount adds the zeros of the lattice nowhere, and x + 0.0 = x for x >= 0)
                pos = (p.offset - centres[s + r] + at.astype(np.int64)) % N
                if p.size > N:
                    grid[r] = np.bincount(pos, weights=m, minlength=N)
                else:
                    grid[r, pos] = m
                continue
            if m.size > N:
                pos = (p.offset - centres[s + r] + np.arange(m.size, dtype=np.int64)) % N
                grid[r] = np.bincount(pos, weights=m, minlength=N)
                continue
            a = (p.offset - centres[s + r]) % N
            cut = min(m.size, N - a)
            grid[r, a:a + cut] = m[:cut]
            grid[r, :m.size - cut] = m[cut:]
        return sfft.rfft(grid, axis=-1)

    # pass 1: log_hi = sum n_i log min(|X_i| + e_i, cap_i) at every coefficient
    keep = len(factors) * k.size <= _KEEP_SPECTRA
    kept, capped0 = [], None
    log_hi = np.zeros(k.size)
    for s in starts:
        X = spectra(s)
        tot = np.array(totals[s:s + rows])
        e = c_fft * tot  # the transform's round-off only: the input errors are propagated in time (local)
        capped = np.abs(X)  # then, in place, min(|X| + e, cap), its log and n times it
        capped += e[:, None]
        np.minimum(capped, (tot + c_fft * tot)[:, None], out=capped)
        if s == 0:
            capped0 = capped[0].copy()
        np.log(capped, out=capped)
        capped *= counts[s:s + rows]
        log_hi = _running_sum(log_hi, capped)
        if keep:
            kept.append(X)
        del X, capped
    # the coefficients computed: where the bound's power exp(log_hi) can be nonzero. Elsewhere (log_hi <=
    # -750) hi = exp(log_hi) underflows to 0, and so does ymod = exp(sum n_i log|X_i|) (|X_i| <= capped_i,
    # so the computed sum exceeds log_hi by rounding only, far less than the margin 4.87 below -745.13):
    # the transform's input and dY are exactly 0 there in the full computation too. nan stays selected.
    single = power and len(factors) == 1 and factors[0][1] > 1
    if single:
        # a relative margin e^{-4.87 / n} below e^{-745.13 / n}
        sel = np.flatnonzero(capped0 > math.exp(-750.0 / factors[0][1]))
    elif power:
        sel = np.flatnonzero(~(log_hi <= -750.0))
    else:
        sel = np.arange(k.size)
    p_l2 = _power_l2(factors, capped0, N) if single else None
    del capped0
    log_hi = log_hi[sel]
    # pass 2, on the selected coefficients: sum n_i log|X_i|, sum n_i arg X_i (mod 2 pi) and
    # spread = sum n_i (|log|X_i|| + |arg X_i|)
    logmod, phase, spread = np.zeros(sel.size), np.zeros(sel.size), np.zeros(sel.size)
    for b, s in enumerate(starts):
        Xs = (kept[b] if keep else spectra(s))[:, sel]
        if keep:
            kept[b] = None
        nn = counts[s:s + rows]
        with np.errstate(divide="ignore"):
            lm = np.log(np.abs(Xs))
        ang = np.arctan2(Xs.imag, Xs.real)
        del Xs
        logmod = _running_sum(logmod, nn * lm)
        phase = _running_sum(phase, mod_2pi(nn * ang, nn))
        alm = np.abs(lm)  # |log|X||, 0 where X = 0 (and at a nan, as np.nan_to_num had it)
        alm[np.isneginf(lm) | np.isnan(lm)] = 0.0
        spread = _running_sum(spread, nn * (alm + np.abs(ang)))
    with np.errstate(under="ignore"):
        ymod = np.exp(logmod)
        hi = np.exp(log_hi)
    Y = np.zeros(k.size, dtype=complex)
    Y.real[sel] = ymod * np.cos(phase)
    Y.imag[sel] = ymod * np.sin(phase)
    y = sfft.irfft(Y, N)
    w = np.full(k.size, 2.0)
    w[0] = 1.0
    if N % 2 == 0:
        w[-1] = 1.0
    dY = (hi - ymod) + 4 * U * hi + C_POW * U * ymod * (1.0 + spread)
    if single:  # the sums over the selected coefficients
        w = w[sel]
    else:  # the sums over every coefficient, 0 where not selected (as the full computation has them)
        dY, ymod = _scatter(dY, sel, k.size), _scatter(ymod, sel, k.size)
    spec2 = float(np.sum(w * dY * dY))
    inv1 = float(np.sum(w * ymod))
    err = math.sqrt(spec2) + c_inv * inv1
    # the same two parts for a weighted charge (docs/pld.md Sec. 2.6 (d)): the spectrum's errors D map to a window
    # error of l2 norm sqrt(sum_k |D_k|^2 / N) (Parseval), and the inverse's rounding is at most c_inv sum_k |Y_k| / N
    # in each entry; the factor covers the sums' gamma_{k.size + 2}, the division and the square root
    m = 1.0 + 1.01 * (k.size + 6) * U
    err_l2 = math.sqrt(spec2 / N) * m
    err_each = c_inv * inv1 / N * m
    start = (A - shift) % N
    y = np.roll(y, -start)
    np.maximum(y, 0.0, out=y)
    return Composed(A, y, inf_mass, h, err, outside, err_l2=err_l2, err_each=err_each, local_l2=p_l2)


def _power_l2(factors, capped: np.ndarray, N: int) -> Optional[float]:
    """A bound of ||P||_2 for every P = x^_1 * .. * x^_{m-1} * x_{m+1} * .. * x_n of one factor composed n times
    (docs/pld.md Sec. 2.4, the l2 form): one side holds k >= k0 = n // 2 copies, so ||P||_2 <= ||v^{*k0}||_2
    (1 + l1)^{n - 1 - k0} (Young's inequality, ||x||_1 and ||x^||_1 <= 1 + l1, l1 the factor's input-error l1
    norm). A nonnegative sequence folded modulo N has an l2 norm at least its own, and by Parseval the folded
    v^{*k0} has ||.||_2^2 = (1/N) sum_f |V_f|^{2 k0}, |V_f| <= B_f = ``capped`` + l1 (the computed spectrum within
    the transform's error of x^'s, x within l1 of x^). exp(2 k0 log B) within 4u (|2 k0 log B| + 2) relative; the
    coefficients where it is below e^{-745} add at most 2^-1074 each. None for a factor with a negative mass."""
    p, n = factors[0]
    if n < 2 or np.any(p.mass < 0):
        return None
    l1 = p.err_mass + 2.0 * p.err_dipole + 4.0 * p.err_quad
    k0 = n // 2
    with np.errstate(divide="ignore"):
        E = 2.0 * k0 * np.log(capped + l1)
    keep = E > -745.0
    wk = np.where(np.arange(capped.size) == 0, 1.0, 2.0)
    if N % 2 == 0:
        wk[-1] = 1.0
    terms = np.exp(E[keep]) * (1.0 + 4 * U * (np.abs(E[keep]) + 2.0))
    total = float(np.sum(wk[keep] * terms)) * (1.0 + 1.01 * (capped.size + 4) * U) + 2.0 * capped.size * 2.0**-1074
    rest = (n - 1 - k0) * math.log1p(l1)
    return math.sqrt(total / N) * math.exp(rest) * (1.0 + 8 * U * (rest + 4.0))


def delta_at(c: Composed, epsilon: float) -> float:
    """sum over losses l > epsilon of (1 - e^{epsilon - l}) * mass, plus the mass at +inf (no bounds)."""
    j = c.above(epsilon)
    return float(np.sum(c.mass[j:] * -np.expm1(epsilon - c.losses[j:]))) + c.inf_mass


def log_c(tau: np.ndarray) -> np.ndarray:
    """log c(tau), c(tau) = max_{x >= 0} (1 - e^{-x}) e^{-tau x} = (1 / (1 + tau)) (tau / (1 + tau))^tau:
    delta(epsilon) = E[(1 - e^{epsilon - L})_+] <= c(tau) E[e^{tau (L - epsilon)}] for every tau > 0."""
    return -np.log1p(tau) + tau * (np.log(tau) - np.log1p(tau))


#: largest tilt per grid step (e^30 between neighbouring atoms: beyond it nothing is gained)
_MAX_GRID_TILT = 30.0


def tilt_ladder(factors) -> np.ndarray:
    """The tilts tried, in 1/nats: powers 2^(k/4) (so nearby targets share a cached composition) from
    0.02 to 2e4 over the composed standard deviation (the Chernoff-optimal tilt of a tail z standard
    deviations out is about z / sd for a Gaussian-like tail, far larger near the end of a bounded one)."""
    _moments_all([p for p, _ in factors])
    var = sum(n * pmf_moments(p)[2] for p, n in factors)
    sd = max(math.sqrt(var), 0.5) * factors[0][0].h  # nats
    lo, hi = math.floor(4 * math.log2(0.02 / sd)), math.ceil(4 * math.log2(2e4 / sd))
    return 2.0 ** (np.arange(lo, hi + 1) / 4.0)


def choose_tilt(factors: list[tuple[Pmf, int]], *, delta: Optional[float] = None,
                epsilon: Optional[float] = None, search: Optional[tuple] = None) -> float:
    """A tilt tau (in 1/grid units) for a delta target (minimising the Chernoff estimate of epsilon,
    (K(tau) + log c(tau) - log delta) / tau) or an epsilon (minimising the factor exp(K(tau) - tau
    epsilon) of the round-off bound at epsilon), from :func:`tilt_ladder`. Any tau >= 0 gives a certified answer;
    this one makes the round-off bound about relative to delta (docs/pld.md Sec. 2.5); for a delta target SP_BELOW
    rungs below the saddlepoint rung (:func:`_saddlepoint_rung`). ``search``: the
    :func:`chernoff_search` of the same arguments, where the caller has it."""
    s = chernoff_search(factors, delta=delta, epsilon=epsilon) if search is None else search
    if s is None:
        return 0.0
    ladder, best, _, h, pmfs, counts, fin = s
    if epsilon is None:
        best = max(_saddlepoint_rung(ladder, best, h, pmfs, counts, math.log(fin)) - SP_BELOW, 0)
    return float(ladder[best] * h)


def chernoff_epsilon(search: Optional[tuple]) -> float:
    """The Chernoff estimate of epsilon at a delta target, min over the ladder's tilts of (K(tau) + log c(tau) -
    log delta) / tau, in nats, from the :func:`chernoff_search` of that target (inf where it found no finite one).
    An estimate for choosing a grid (it bounds the epsilon of the discretised composition from above, up to the
    round-off of K), not a certified number."""
    return math.inf if search is None else search[2]


def chernoff_search(factors: list[tuple[Pmf, int]], *, delta: Optional[float] = None,
                    epsilon: Optional[float] = None) -> Optional[tuple]:
    """The Chernoff-optimal rung of :func:`tilt_ladder` for a delta or an epsilon target (the objectives of
    :func:`choose_tilt`): (ladder, best rung, its objective, h, the PMFs' MGF rows, counts, delta less the mass at
    +inf), or None where no rung has a finite objective or that delta is not positive (then the tilt is 0)."""
    h = factors[0][0].h
    ladder = tilt_ladder(factors)
    fin = None
    if epsilon is None:
        fin = delta - _inf_mass(factors)
        if not fin > 0:
            return None

    pmfs = MgfRows(p for p, _ in factors)
    counts = np.array([float(n) for _, n in factors])

    def objective(taus: np.ndarray) -> np.ndarray:
        ok = taus * h <= _MAX_GRID_TILT  # the others are not taken: not computed
        K = np.full(taus.size, np.inf)
        if ok.any():
            K[ok] = weighted_sum(counts, log_mgfs(pmfs, taus[ok] * h))
        with np.errstate(invalid="ignore", over="ignore"):
            obj = K - taus * epsilon if epsilon is not None else (K + log_c(taus) - math.log(fin)) / taus
        return np.where(np.isfinite(obj) & (taus * h <= _MAX_GRID_TILT), obj, np.inf)

    # the objectives are unimodal in log tau: from the rung of a Gaussian with the composition's mean and variance
    # (its optimum: sqrt(-2 log delta) / sd, or (eps - mean) / var), rungs 4 apart, walking downhill, then 2 and 1
    # apart around the best (every 8th rung where none of the first three is finite)
    var = sum(n * pmf_moments(p)[2] for p, n in factors) * h * h
    mean = sum(n * pmf_moments(p)[1] for p, n in factors) * h
    if epsilon is None:
        guess = math.sqrt(-2.0 * math.log(min(fin, 0.5))) / math.sqrt(max(var, 1e-300))
    else:
        guess = max(epsilon - mean, 1e-3 * math.sqrt(max(var, 1e-300))) / max(var, 1e-300)
    p = int(np.clip(np.searchsorted(ladder, guess), 0, ladder.size - 1))
    seen: dict = {}

    def try_rungs(rungs) -> None:
        new = [i for i in dict.fromkeys(rungs) if 0 <= i < ladder.size and i not in seen]
        if new:
            seen.update(zip(new, objective(ladder[np.array(new)]).tolist()))

    def best_rung() -> int:
        return min(seen, key=lambda i: (seen[i], i))

    try_rungs([p - 4, p, p + 4])
    if not any(math.isfinite(v) for v in seen.values()):
        try_rungs(range(0, ladder.size, 8))
        if not any(math.isfinite(v) for v in seen.values()):
            return None
    best = best_rung()
    while True:  # downhill by 4 while it improves (at most the ladder's length)
        nxt = [i for i in (best - 4, best + 4) if 0 <= i < ladder.size and i not in seen]
        if not nxt:
            break
        try_rungs(nxt)
        b = best_rung()
        if b == best:
            break
        best = b
    for step in (2, 1):
        try_rungs([best - step, best + step])
        best = best_rung()
    return ladder, best, seen[best], h, pmfs, counts, fin


#: a delta target's tilt is this many rungs below the saddlepoint rung (:func:`choose_tilt`): the window of a heavy-tailed
#: composition is 1.4-2x shorter one rung down, and its slack still negligible (docs/pld.md Sec. 2.5)
SP_BELOW = 1
#: ratio of the points of the central differences that give K'(tau) and K''(tau) (:func:`_saddlepoint_rung`)
_SP_STEP = 2.0 ** (1.0 / 8.0)
#: rungs walked down from the Chernoff rung at most
_SP_WALK = 8


def _gauss_weight(a: np.ndarray) -> np.ndarray:
    """e^{a^2 / 2} Phi(-a) (scaled complementary error function), finite for every real a."""
    return special.erfcx(a / math.sqrt(2.0)) / 2.0


def _saddlepoint_rung(ladder: np.ndarray, start: int, h: float, pmfs, counts: np.ndarray, log_delta: float) -> int:
    """The largest rung at or below ``start`` (the Chernoff rung) whose saddlepoint estimate of delta reaches the
    target: a heuristic (any tilt is certified, docs/pld.md Sec. 2.5) that predicts where the composition's
    epsilon will lie better than the Chernoff bound, which for a heavy-tailed step (a subsampled Gaussian at small
    q) is loose by orders of magnitude. A tilt above the one that epsilon calls for widens the composed window
    fast (the tilted law's tail moves out with the tilt); one at or below it keeps the window short.

    At tau (per nat) the tilted law has mean K'(tau) and variance K''(tau) (central differences of K on tau / r,
    tau, tau r); with that law taken Gaussian, delta(K'(tau)) = e^{K - tau K'} E[e^{-tau X} (1 - e^{-X}); X > 0]
    = e^{K - tau K'} (w(tau s) - w((1 + tau) s)), s^2 = K'', w(a) = e^{a^2/2} Phi(-a) (Lugannani-Rice in its
    simplest form). Walks down from ``start`` while that estimate is below delta; keeps ``start`` where the
    estimate is not finite or never reaches delta within _SP_WALK rungs."""
    rungs = np.arange(start, max(start - _SP_WALK, 0) - 1, -1)
    taus = ladder[rungs]
    pts = np.concatenate([taus / _SP_STEP, taus, taus * _SP_STEP])
    ok = pts * h <= _MAX_GRID_TILT
    if not ok.all():
        return start
    K = weighted_sum(counts, log_mgfs(pmfs, pts * h)).reshape(3, -1)
    lo, mid, hi = taus / _SP_STEP, taus, taus * _SP_STEP
    k1 = (K[2] - K[0]) / (hi - lo)
    k2 = 2.0 * ((K[2] - K[1]) / (hi - mid) - (K[1] - K[0]) / (mid - lo)) / (hi - lo)
    with np.errstate(all="ignore"):
        sd = np.sqrt(k2)
        est = K[1] - taus * k1 + np.log(_gauss_weight(taus * sd) - _gauss_weight((1.0 + taus) * sd))
    for i, r in enumerate(rungs.tolist()):
        if not math.isfinite(float(est[i])) or not k2[i] > 0:
            return start
        if est[i] >= log_delta:
            return r
    return start


def _eval_err(value: float, n: int) -> float:
    """Bound of the round-off of a delta evaluated as a sum of n terms mass_i (1 - e^{epsilon - l_i}):
    each term has relative error <= 4u (expm1, subtraction, product), and any order of pairwise
    additions has error <= gamma_{n-1} times the sum of the terms (Higham 2002, Sec. 4.2, bound (4.4),
    valid for every ordering); so at most (n + 4) u (1 + 2 (n + 4) u) times the computed value plus its
    own error, i.e. at most 1.01 (n + 4) u value / (1 - 1.01 (n + 4) u)."""
    g = 1.01 * (n + 4) * U
    return g * value / (1.0 - g) if g < 0.5 else math.inf


def scale_at(c: Composed, epsilon: float) -> float:
    """max over the window's atoms with loss > epsilon of exp(K - tau l) (1 without tilt): the factor that
    turns the tilted l1 bounds into bounds of a delta at ``epsilon``; at the window's top at most (the
    mass folded in from above the window, and the mass above it, are charged at the top)."""
    if c.tilt <= 0:
        return 1.0
    top = c.top if c.top is not None else c.offset + c.mass.size - 1
    i = min(int(math.floor(epsilon / c.h)) + 1, top)
    i = max(i, c.offset)
    e = c.log_scale - c.tilt * i
    return math.exp(e) if e < 700 else math.inf


def weight_norms(c: Composed, epsilon: float) -> tuple[float, float]:
    """Upper bounds of (||w||_2, ||w||_1) over the window's atoms, w_j = exp(K - tau idx_j) (1 - e^{epsilon - l_j})_+
    the weight that turns the tilted masses into delta(epsilon) (docs/pld.md Sec. 2.6 (d)); (inf, inf) for an
    untilted composition (its weights do not decay: the l1 charge is the one to use). In closed form over the n atoms
    from the first above epsilon, index i0: w_{i0 + m} = s (x^m - r y^m), s = exp(K - tau i0), x = e^{-tau}, y =
    e^{-(tau + h)}, r = e^{epsilon - i0 h} < 1 (:func:`_scale_and_ratio`); ||w||_2^2 by :func:`_weight_sq` (k = 0) and
    ||w||_1 = s (G(x) - r G(y)) (:func:`_geo`, n terms), its rounding 1.01 (10u + rho_r) (G(x) + r G(y)) added (each G
    8u, r rho_r and its product 1u, the difference 1u) -- which also covers a first atom whose exact loss is within
    rounding of epsilon (its formula term 1 - r is then at most rho_r below the weight 0). The atom below i0, whose
    computed loss is at or below epsilon, may be above it by rounding (where that loss is within 2.02 u (|i0 h| + 2)
    of epsilon): its weight, at most s e^tau 2.02 u (|i0 h| + 2), is then added to both norms -- also where no atom of
    the window is above epsilon as computed (n = 0: the norms are then that alone, else 0 as before)."""
    if c.tilt <= 0:
        return math.inf, math.inf
    key = ("weights", epsilon, c.offset, c.mass.size, c.h, c.tilt, c.log_scale)
    cached = c.__dict__.get("_weights")
    if cached is not None and cached[0] == key:
        return cached[1]
    j = c.above(epsilon)
    n = c.mass.size - j
    t, h, i0 = c.tilt, c.h, c.offset + j
    # the atom below i0 (the window's last where none is above epsilon as computed): its exact loss is above epsilon
    # only where its computed one is within rounding (u |(i0 - 1) h|, and the difference's) of epsilon
    below = j > 0 and epsilon - (i0 - 1) * h <= 2.02 * U * (abs(i0 * h) + 2.0)
    got = _scale_and_ratio(c, epsilon, i0) if n > 0 or below else (0.0, 1.0, 0.0, 0.0)
    if got is None:
        out = (math.inf, math.inf)
    else:
        s, r, rho_r, _ = got
        near = s * math.exp(t) * 2.02 * U * (abs(i0 * h) + 2.0) if below else 0.0
        if n <= 0:
            out = (near, near)
        else:
            gx, gy = _geo(-t, n), r * _geo(-(t + h), n)
            w1 = s * (gx - gy + 1.01 * (10.0 * U + rho_r) * (gx + gy)) * (1.0 + 2.0 * U) + near + _TINY
            w2 = s * math.sqrt(_weight_sq(t, h, r, rho_r, 0, n)) * (1.0 + 2.0 * U) + near + _TINY
            out = (w2, w1)
    c.__dict__["_weights"] = (key, out)
    return out


def fft_charge(c: Composed, epsilon: float, scale: float) -> float:
    """The FFT round-off's share of the slack at ``epsilon`` (docs/pld.md Sec. 2.6 (d)): the l1 bound ``err`` times the
    largest weight above epsilon (``scale``), or, where smaller, the weighted form err_l2 ||w||_2 + err_each ||w||_1
    + err_back scale (Cauchy-Schwarz for the spectrum's part, each entry's bound for the inverse's rounding, the
    rescaling's l1 bound as before)."""
    l1 = c.err * scale
    if c.err_l2 is None or c.tilt <= 0:
        return l1
    w2, w1 = weight_norms(c, epsilon)
    return min(l1, c.err_l2 * w2 + c.err_each * w1 + c.err_back * scale)


#: the S-proportional charges stand where they are at most this share of the mass above epsilon (:func:`slack`)
_REFINE_SLACK = 1e-6


def slack(c: Composed, epsilon: float) -> float:
    """Bound of |computed delta - delta of the discretised composition| at ``epsilon``: round-off,
    mass outside the window (scaled by :func:`scale_at` when tilted), the error of the mass at +inf, and
    the evaluation. With per-atom errors (no FFT) only atoms above epsilon count, each weighted by
    min(1, l - epsilon) >= 1 - e^{epsilon - l}.

    The FFT's and the input errors' terms are first charged in their S-proportional forms (O(1)); only where that
    slack exceeds _REFINE_SLACK times the mass above epsilon (an upper bound of delta there) are the weighted and
    l2 forms computed (O(points above epsilon)), each at most its S-form (docs/pld.md Sec. 2.4, 2.6 (d))."""
    scale = scale_at(c, epsilon)
    s = c.outside * scale + c.err_inf + c.err_add
    if c.err_rel > 0:
        e = c.log_scale - c.tilt / c.h * epsilon
        s += c.err_rel * math.exp(e) if e < 700 else math.inf
    j = c.above(epsilon)
    value = float(np.sum(c.mass[j:])) + c.inf_mass
    plain = c.err * scale + local_err(c, epsilon, weighted=False)
    if plain <= _REFINE_SLACK * value:
        s += plain
    else:
        s += fft_charge(c, epsilon, scale) + local_err(c, epsilon)
    if c.err_atoms is not None:
        s += float(np.sum(c.err_atoms[j:] * np.minimum(1.0, c.losses[j:] - epsilon)))
    return s + _eval_err(value + s, c.mass.size - j + 1)


#: atoms per block of :func:`_suffix_blocks` (fewer on a grid coarser than 500 / 256 nats: :func:`_suffix_block`)
_SUFFIX_BLOCK = 256


def _suffix_block(h: float) -> int:
    """The block length of :func:`_suffix_blocks` on the grid h: _SUFFIX_BLOCK, or fewer so that a block spans at most
    500 nats (e^{(hi - i) h} inside a block stays finite)."""
    return max(1, min(_SUFFIX_BLOCK, int(500.0 / h)))


def _suffix_blocks(c: Composed, y: np.ndarray) -> tuple:
    """(S1, T, d) at the first atom of each block of _SUFFIX_BLOCK atoms of the masses ``y`` (the part of ``c`` at
    losses >= 0), each with one more entry 0 for the end: S1_j = sum_{i >= j} y_i, T_j = sum_{i >= j} y_i
    e^{-(l_i - l_j)} and d_j = S1_j - e^{-h} T_j, the delta at the loss below atom j. Cached on ``c`` (a search
    proposes many candidates on the same composition; only :func:`epsilon_for` uses it, and its answers are only
    proposals, each checked by :func:`delta_at` and :func:`slack`). Per block: its sum and its sum weighted by
    e^{-(l_i - l_j)} (two passes over the masses, no running sum over all of them); across the blocks (a few hundred)
    running sums, T's in logs (finite whatever the window's length)."""
    key = (c.offset, c.mass.size, c.h, id(c.mass))
    cached = c.__dict__.get("_suffix")
    if cached is not None and cached[0] == key:
        return cached[1]
    n, h, m = y.size, c.h, _suffix_block(c.h)
    nb = -(-n // m)
    Y = np.zeros(nb * m)
    Y[:n] = y
    Y = Y.reshape(nb, m)
    ys = Y.sum(axis=1)
    yw = (Y * _decay(c, m)[:m]).sum(axis=1)  # sum_k y_{b m + k} e^{-k h}
    S1 = np.zeros(nb + 1)
    S1[:nb] = np.cumsum(ys[::-1])[::-1]
    with np.errstate(divide="ignore"):
        lw = np.log(yw) - np.arange(nb) * (m * h)  # log(yw_b e^{-b m h})
        T = np.zeros(nb + 1)
        T[:nb] = np.exp(np.logaddexp.accumulate(lw[::-1])[::-1] + np.arange(nb) * (m * h))
    out = (S1, T, S1[:nb] - math.exp(-h) * T[:nb])
    c.__dict__["_suffix"] = (key, out)
    return out


def _last_above(c: Composed, y: np.ndarray, t: float) -> int:
    """1 + the last atom j of ``y`` whose d_j (:func:`_suffix_blocks`) exceeds t, 0 if none. d is nonincreasing in j (an
    atom's P-mass adds to every d below it, its (1 - e^{-(l_i - l_j + h)}) weight falls with j): the last block whose
    first atom's d exceeds t holds that atom, whose d is then computed atom by atom inside the block (the computed d
    need not be monotone where it is within rounding of t: proposals only)."""
    S1, T, d = _suffix_blocks(c, y)
    over = np.flatnonzero(d > t)  # (a nan is not above t)
    if not over.size:
        return 0
    b = int(over[-1])
    m, h = _suffix_block(c.h), c.h
    lo, hi = b * m, min((b + 1) * m, y.size)
    seg = y[lo:hi]
    if hi - lo == 1:  # a block of one atom (a grid coarser than 2 nats): its d is the block's
        return lo + 1
    # reversed, entry k at atom j = hi - 1 - k: T_j = sum_{j <= i < hi} y_i e^{-(i - j) h} + e^{-(hi - j) h} T_hi,
    # from the running sum of y_i e^{(hi - i) h} (and T_hi) over e^{(hi - j) h}
    scale = 1.0 / _decay(c, hi - lo + 1)[1:hi - lo + 1]
    ts = (np.cumsum(seg[::-1] * scale) + T[b + 1]) / scale
    dj = (np.cumsum(seg[::-1]) + S1[b + 1]) - math.exp(-h) * ts
    above = np.flatnonzero(dj > t)
    return hi - int(above[0]) if above.size else lo + 1


def _decay(c: Composed, n: int) -> np.ndarray:
    """np.exp(-(np.arange(n) * c.h)), cached on ``c`` (a search reads it at every candidate): the same numbers
    element by element as computing it each time, since element k is exp(-(k h)) whatever the length."""
    cached = c.__dict__.get("_decay")
    if cached is not None and cached[0] == c.h and cached[1].size >= n:
        return cached[1]
    table = np.exp(-(np.arange(n) * c.h))
    c.__dict__["_decay"] = (c.h, table)
    return table


def epsilon_for(c: Composed, target: float) -> float:
    """Smallest epsilon >= 0 with delta_at(c, epsilon) <= target (inf if none: target below the +inf mass). Cached on
    ``c`` by target (a bracket asks for the same one up to twice per composition: its search, its check, its record of
    the discretisation gap), keyed like :func:`_suffix_blocks` by what is read: the same number as computing it again."""
    key = (c.offset, c.mass.size, c.h, id(c.mass), c.inf_mass, target)
    memo = c.__dict__.setdefault("_eps_for", {})
    if key not in memo:
        if len(memo) > 64:
            memo.clear()
        memo[key] = _epsilon_for(c, target)
    return memo[key]


def _epsilon_for(c: Composed, target: float) -> float:
    if not target > c.inf_mass:
        return math.inf
    t = target - c.inf_mass
    y, h, offset = c.mass, c.h, c.offset
    if offset < 0:  # epsilon >= 0: only losses above 0 can matter
        y, offset = y[-offset:], 0
    n = y.size
    if n == 0:
        return 0.0
    above = _last_above(c, y, t)  # 1 + the last j with d_j > t
    j = above - 1 if above else 0  # last j with d_j > t: eps in [l_{j-1}, l_j]
    l0 = (offset + j) * h
    S1 = float(np.sum(y[j:]))
    Tj = float(np.sum(y[j:] * _decay(c, n - j)[:n - j]))
    if Tj <= 0 or S1 <= t:
        eps = -math.inf if j == 0 else l0 - h
    else:
        eps = l0 + math.log((S1 - t) / Tj)
    if above:
        eps = min(max(eps, l0 - h), l0)
    return max(eps, 0.0)
