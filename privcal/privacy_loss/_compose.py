r"""Composition of discrete PLDs by one FFT, with the truncated mass and the round-off accounted for
(private; inputs are trusted).

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
sketch). Let X_i[k] be the exact and X^_i[k] the computed coefficients. (a) A radix-r FFT computes each
coefficient with |X^ - X| <= c_f log2(N) u ||x||_1 (Higham 2002, *Accuracy and Stability of Numerical
Algorithms*, 2nd ed., Sec. 24.1, Thm 24.2, read componentwise: every coefficient is a sum of the x_j
times unit twiddles formed through log2 N butterfly stages, each adding a relative error of at most
eta = mu + gamma_4 (sqrt 2 + mu)); c_f = 12 covers the twiddle error mu of pocketfft. To that we add the
error the factor itself carries (``Pmf.err_mass`` + ``Pmf.err_dipole`` |1 - w^k| + ``Pmf.err_quad``
|1 - w^k|^2, see ``_build``).
So |X^_i[k] - X_i[k]| <= e_i[k]. (b) For complex numbers, |prod z_m - prod w_m| <= prod(|w_m| + d_m) -
prod |w_m| when |z_m - w_m| <= d_m; with n_i copies of each factor this bounds the error of the exact
product of the computed coefficients by prod_i (|X^_i| + e_i)^{n_i} - prod_i |X^_i|^{n_i}. Computing the
product as exp(sum n_i log|X^_i|) e^{i sum n_i arg X^_i} adds at most c_p u |Y^| (1 + sum_i n_i (|log|X^_i||
+ |arg X^_i|)) (c_p = 8). (c) The inverse transform maps an error D in the spectrum to an l1 error at most
sqrt(sum over the full spectrum |D_k|^2) (Parseval and Cauchy-Schwarz), and its own round-off is at most
c_f log2(N) u sum_k |Y^_k| in l1 (as (a), with the 1/N of the inverse). E is the sum; a delta is a sum of
the composed masses with weights in [0, 1], so its error is at most E.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Optional

import numpy as np
from scipy import fft as sfft

from ._build import _U, Pmf

C_FFT = 12.0
C_POW = 8.0
#: the Chernoff bound of the composed mass outside the window is at most this (each side)
WINDOW_TAIL = 1e-18


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

    @property
    def losses(self) -> np.ndarray:
        return (self.offset + np.arange(self.mass.size)) * self.h


def _inf_mass(factors) -> float:
    s = sum(n * math.log1p(-min(p.inf_mass, 1.0)) if p.inf_mass < 1 else -math.inf for p, n in factors)
    return -math.expm1(s) if s > -math.inf else 1.0


def _moments(p: Pmf) -> tuple[float, float, float]:
    """(total mass, mean, variance) of the finite part, in units of h (cached on the Pmf)."""
    cached = getattr(p, "_moments", None)
    if cached is not None:
        return cached
    idx = np.arange(p.mass.size, dtype=float)
    tot = float(p.mass.sum())
    if tot <= 0:
        out = (0.0, float(p.offset), 0.0)
    else:
        mean = float(np.sum(idx * p.mass) / tot)  # np.sum, not np.dot: no BLAS threads
        var = float(np.sum((idx - mean) ** 2 * p.mass) / tot)
        out = (tot, p.offset + mean, var)
    p._moments = out
    return out


def _log_mgf(p: Pmf, tilts: np.ndarray) -> np.ndarray:
    """log sum_j mass_j e^{t (offset + j)} for each tilt t (in 1/grid units)."""
    nz = np.flatnonzero(p.mass > 0)
    if nz.size == 0:
        return np.full(tilts.size, -np.inf)
    lm = np.log(p.mass[nz])
    idx = (nz + p.offset).astype(float)
    out = np.empty(tilts.size)
    for i, t in enumerate(tilts):
        e = lm + t * idx
        top = float(e.max())
        out[i] = top + math.log(float(np.sum(np.exp(e - top))))
    return out


def window(factors, tail: float = WINDOW_TAIL) -> tuple[int, int, float]:
    """(A, B, outside): the composed window [A, B] in grid units and the Chernoff bound of the mass
    outside it (both sides)."""
    full_lo = sum(n * p.offset for p, n in factors)
    full_hi = sum(n * (p.offset + p.mass.size - 1) for p, n in factors)
    mean = var = 0.0
    for p, n in factors:
        _, m, v = _moments(p)
        mean, var = mean + n * m, var + n * v
    sd = max(math.sqrt(var), 1.0)
    ts = np.geomspace(0.1, 100.0, 16) / sd  # tilts, in 1/grid units
    log_tail = math.log(tail)
    pos = np.zeros(ts.size)
    neg = np.zeros(ts.size)
    for p, n in factors:
        pos += n * _log_mgf(p, ts)
        neg += n * _log_mgf(p, -ts)
    pos = pos + 1e-9 * np.abs(pos) + 1e-12  # slack for the round-off of K
    neg = neg + 1e-9 * np.abs(neg) + 1e-12
    hi = float(np.min((pos - log_tail) / ts))  # exp(K(t) - t B) <= tail
    lo = float(np.max(-(neg - log_tail) / ts))  # exp(K(-t) + t A) <= tail
    A = max(full_lo, int(math.floor(lo)))
    B = min(full_hi, int(math.ceil(hi)))
    B = max(B, A)
    out = 0.0
    if B < full_hi:
        out += float(np.exp(np.min(pos - ts * B)))
    if A > full_lo:
        out += float(np.exp(np.min(neg + ts * A)))
    return A, B, out


def window_size(factors, tail: float = WINDOW_TAIL) -> int:
    """FFT length for these factors (the window rounded up to a fast length)."""
    A, B, _ = window(factors, tail)
    return int(sfft.next_fast_len(B - A + 1, real=True))


_DIP_CACHE: dict = {}


def _dipole_factor(N: int) -> np.ndarray:
    """|1 - exp(-2 pi i k / N)| = 2 |sin(pi k / N)| for k = 0..N/2 (cached by N)."""
    out = _DIP_CACHE.get(N)
    if out is None:
        if len(_DIP_CACHE) > 16:
            _DIP_CACHE.clear()
        out = _DIP_CACHE[N] = 2.0 * np.abs(np.sin(np.pi * np.arange(N // 2 + 1) / N))
    return out


def compose(factors: list[tuple[Pmf, int]], tail: float = WINDOW_TAIL) -> Composed:
    """The composition of ``count`` repetitions of each Pmf, with its error bounds (see module doc)."""
    h = factors[0][0].h
    inf_mass = _inf_mass(factors)
    if len(factors) == 1 and factors[0][1] == 1:
        p = factors[0][0]
        return Composed(p.offset, p.mass, inf_mass, h, 0.0, 0.0, p.err_atoms)
    A, B, outside = window(factors, tail)
    N = int(sfft.next_fast_len(B - A + 1, real=True))
    k = np.arange(N // 2 + 1)
    dip = _dipole_factor(N)
    logmod = np.zeros(k.size)
    phase = np.zeros(k.size)
    log_hi = np.zeros(k.size)
    spread = np.zeros(k.size)  # sum n_i (|log|X_i|| + |arg X_i|)
    shift = 0
    c_fft = C_FFT * math.log2(max(N, 2)) * _U
    for p, n in factors:
        _, mean, _ = _moments(p)
        centre = int(round(mean))
        shift += n * centre
        pos = (p.offset - centre + np.arange(p.mass.size)) % N
        x = np.bincount(pos, weights=p.mass, minlength=N)
        X = sfft.rfft(x)
        mod = np.abs(X)
        tot = float(p.mass.sum())
        e = p.err_mass + c_fft * tot + dip * (p.err_dipole + p.err_quad * dip)
        with np.errstate(divide="ignore"):
            lm = np.log(mod)
        ang = np.arctan2(X.imag, X.real)
        logmod += n * lm
        phase += np.mod(n * ang, 2 * np.pi)
        log_hi += n * np.log(np.minimum(mod + e, tot + p.err_mass + c_fft * tot))
        spread += n * (np.abs(np.nan_to_num(lm, neginf=0.0)) + np.abs(ang))
    with np.errstate(under="ignore"):
        ymod = np.exp(logmod)
        hi = np.exp(log_hi)
    Y = np.empty(k.size, dtype=complex)
    Y.real = ymod * np.cos(phase)
    Y.imag = ymod * np.sin(phase)
    y = sfft.irfft(Y, N)
    w = np.full(k.size, 2.0)
    w[0] = 1.0
    if N % 2 == 0:
        w[-1] = 1.0
    dY = (hi - ymod) + 4 * _U * hi + C_POW * _U * ymod * (1.0 + spread)
    err = math.sqrt(float(np.sum(w * dY * dY))) + c_fft * float(np.sum(w * ymod))
    start = (A - shift) % N
    y = np.roll(y, -start)
    np.maximum(y, 0.0, out=y)
    return Composed(A, y, inf_mass, h, err, outside)


def delta_at(c: Composed, epsilon: float) -> float:
    """sum over losses l > epsilon of (1 - e^{epsilon - l}) * mass, plus the mass at +inf (no bounds)."""
    l = c.losses
    m = l > epsilon
    return float(np.sum(c.mass[m] * -np.expm1(epsilon - l[m]))) + c.inf_mass


def _eval_err(c: Composed) -> float:
    """Bound of the round-off of a delta evaluated by pairwise summation (4 log2(N) u times the mass)."""
    return 4.0 * math.log2(max(c.mass.size, 2)) * _U * float(c.mass.sum()) + 4 * _U


def slack(c: Composed, epsilon: float) -> float:
    """Bound of |computed delta - delta of the discretised composition| at ``epsilon``: round-off,
    mass outside the window, evaluation. With per-atom errors (no FFT) only atoms above epsilon count,
    each weighted by min(1, l - epsilon) >= 1 - e^{epsilon - l}."""
    s = c.err + c.outside + _eval_err(c)
    if c.err_atoms is not None:
        l = c.losses
        m = l > epsilon
        s += float(np.sum(c.err_atoms[m] * np.minimum(1.0, l[m] - epsilon)))
    return s


def epsilon_for(c: Composed, target: float) -> float:
    """Smallest epsilon >= 0 with delta_at(c, epsilon) <= target (inf if none: target below the +inf mass)."""
    if not target > c.inf_mass:
        return math.inf
    t = target - c.inf_mass
    y, h, offset = c.mass, c.h, c.offset
    if offset < 0:  # epsilon >= 0: only losses above 0 can matter
        y, offset = y[-offset:], 0
    n = y.size
    if n == 0:
        return 0.0
    # suffix sums S1_j = sum_{i >= j} y_i and T_j = sum_{i >= j} y_i e^{-(l_i - l_j)} (all terms <= y_i)
    s1 = np.cumsum(y[::-1])[::-1]
    if n * h < 600.0:  # e^{(n - i) h} stays finite: plain suffix sums of y_i e^{(n - i) h}
        scale = np.exp((n - np.arange(n)) * h)
        T = np.cumsum((y * np.exp(-np.arange(n) * h + n * h))[::-1])[::-1] / scale
    else:
        with np.errstate(divide="ignore"):
            lw = np.log(y) - np.arange(n) * h  # log(y_i e^{-i h})
        T = np.exp(np.logaddexp.accumulate(lw[::-1])[::-1] + np.arange(n) * h)
    d = s1 - math.exp(-h) * T
    idx = np.flatnonzero(d > t)
    j = int(idx[-1]) if idx.size else 0  # last j with d_j > t: eps in [l_{j-1}, l_j]
    if not idx.size and d[0] <= t:
        j = 0
    l0 = (offset + j) * h
    S1 = float(np.sum(y[j:]))
    Tj = float(np.sum(y[j:] * np.exp(-(np.arange(n - j) * h))))
    if Tj <= 0 or S1 <= t:
        eps = -math.inf if j == 0 else l0 - h
    else:
        eps = l0 + math.log((S1 - t) / Tj)
    if idx.size:
        eps = min(max(eps, l0 - h), l0)
    return max(eps, 0.0)
