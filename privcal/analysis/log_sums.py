"""Log-space sums over the integer orders of an RDP curve: one segment per order, summed by one reduction.

The binomial expansions of the subsampled Gaussian's RDP (Mironov, Talwar & Zhang 2019; Wang, Balle &
Kasiviswanathan 2018, Thm 9 and 27) sum, for each integer order alpha, terms over k = start..alpha. Laid end
to end, the terms of every order form one array; :func:`segments` gives its index arrays (cached, read-only) and
:func:`segment_logsumexp` the per-order log-sum-exp. :func:`exp_or_zero` is numpy's exp without evaluating it
where the result is 0.
"""

from __future__ import annotations

import functools

import numpy as np
from scipy.special import gammaln

__all__ = ["segments", "segment_logsumexp", "exp_or_zero", "EXP_ZERO"]




@functools.lru_cache(maxsize=16)
def segments(int_orders: tuple[int, ...], start: int):
    """Index arrays for sums over k = start..alpha, for each integer alpha in ``int_orders``.

    Args:
        int_orders: the integer orders alpha, each >= ``start``.
        start: the first k of every sum, an int >= 0.

    Returns:
        (k, alpha_of_k, log_binom(alpha, k), segment starts, segment lengths, k as int64), read-only arrays.
    """
    lengths = np.array([a - start + 1 for a in int_orders], dtype=np.int64)
    alphas = np.repeat(np.array(int_orders, dtype=float), lengths)
    offsets = np.concatenate([[0], np.cumsum(lengths)[:-1]])
    k = np.arange(lengths.sum(), dtype=np.int64) - np.repeat(offsets, lengths) + start
    k_int = k
    k = k.astype(float)
    log_binom = gammaln(alphas + 1.0) - gammaln(k + 1.0) - gammaln(alphas - k + 1.0)
    for arr in (k, alphas, log_binom, offsets, lengths, k_int):
        arr.setflags(write=False)
    return k, alphas, log_binom, offsets, lengths, k_int


def segment_logsumexp(values: np.ndarray, offsets: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """log sum exp of each segment of ``values`` (segment i starts at ``offsets[i]`` and has ``lengths[i]``
    entries, as :func:`segments` gives them): the peak of each segment taken out first, +inf where a segment
    holds +inf, -inf where it holds only -inf.

    Args:
        values: the terms of every segment, end to end (a float array).
        offsets: the start of each segment in ``values``.
        lengths: the number of terms of each segment.

    Returns:
        one log-sum-exp per segment.
    """
    peak = np.maximum.reduceat(values, offsets)
    safe = np.where(np.isfinite(peak), peak, 0.0)
    with np.errstate(invalid="ignore", over="ignore"):
        total = np.add.reduceat(exp_or_zero(values - np.repeat(safe, lengths)), offsets)
    out = np.log(total) + safe
    return np.where(np.isposinf(peak), np.inf, out)


#: below this, e^x is 0 in float64 (its smallest subnormal is 2^-1074 = e^-744.44; e^x < 2^-1075 rounds to 0)
EXP_ZERO = -746.0


def exp_or_zero(x: np.ndarray) -> np.ndarray:
    """e^x elementwise, in place in ``x``: the values of ``np.exp(x)`` bit for bit, without evaluating it where
    x <= EXP_ZERO (there it is 0; the exponential is ~10x slower on such arguments than on others, and most
    terms of a log-sum-exp over the default orders, or over a forward difference's two humps, are such).

    Args:
        x: a float array, overwritten with the result.

    Returns:
        ``x``.
    """
    dead = x <= EXP_ZERO  # nan is not: it stays nan
    np.exp(x, out=x, where=~dead)
    np.copyto(x, 0.0, where=dead)
    return x
