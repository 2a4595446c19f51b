r"""A group of records under Poisson sampling: the user-level guarantee of a record-level run (docs/groups.md).

A run that protects one record (one transition of an episode) also protects the *user* who contributed g
records, at a price. Under Poisson sampling at rate q with each record's contribution clipped to C, removing the
user removes K ~ Binomial(g, q) of its records from each batch, so in the aligned worst case (every record of the
user contributes C in one direction e, the other records 0) one step's outputs are

    P = sum_k Bin(k; g, q) N(k C e, sigma^2 I)   against   Q = N(0, sigma^2 I).

This pair dominates every group of g records clipped to C, in both orders (docs/groups.md: the likelihood ratio
of any group is at most, in convex order, its comonotonic version, which is the aligned one with the largest
shifts -- Kaas, Dhaene & Goovaerts 2000, IME 27, Sec. 2 -- and both hockey-stick divergences are expectations of
convex functions of that ratio), and it is realised (the data set above). So:

* **Upper end** (:func:`group_epsilon`): its Renyi divergence, bounded from above at every order by
  ``privcal.analysis.group_subsampling.rdp_poisson_group_gaussian`` (a certified upper sum of the one-dimensional
  integral), composed over the steps by addition and converted (Balle et al. 2020, Thm 21).
* **Lower end**: the same pair, realised, bounded from below by ``privcal.accounting.realisable`` over the
  composed steps.
"""

from __future__ import annotations

import functools

import math
import warnings
from typing import Optional

import numpy as np

from .. import _validate as V
from ..analysis.group_subsampling import GROUP_ORDERS, rdp_poisson_group_gaussian
from ..analysis.rdp import GridEdgeWarning, epsilon_from_rdp
from .realisable import MixturePair, epsilon_lower_of_pairs

__all__ = ["group_rate", "group_pair", "group_epsilon"]


def group_rate(sample_rate: float, group_size: int) -> float:
    """q_g = 1 - (1 - q)^g: the probability that at least one of g records enters a Poisson batch.

    Args:
        sample_rate: q, in (0, 1].
        group_size: g, an int >= 1.
    """
    q = V.rate("sample_rate", sample_rate)
    g = V.positive_int("group_size", group_size)
    return 1.0 if q >= 1.0 else -math.expm1(g * math.log1p(-q))


def group_pair(noise_multiplier: float, sample_rate: float, group_size: int) -> MixturePair:
    """The realisable worst case of one step for a group of g records: sum_k Bin(k; g, q) N(k, s^2) against
    N(0, s^2), in units of the clip C (the user's g records contribute C each, aligned; the others 0).

    Args:
        noise_multiplier: s = sigma / C, in (0, inf).
        sample_rate: q, in (0, 1].
        group_size: g, an int >= 1.
    """
    s = V.positive("noise_multiplier", noise_multiplier)
    q = V.rate("sample_rate", sample_rate)
    g = V.positive_int("group_size", group_size)
    log_w = [math.lgamma(g + 1) - math.lgamma(k + 1) - math.lgamma(g - k + 1)
             + (k * math.log(q) if k else 0.0) + ((g - k) * math.log1p(-q) if g > k else 0.0)
             for k in range(g + 1)] if q < 1.0 else [-math.inf] * g + [0.0]
    keep = [k for k in range(g + 1) if log_w[k] > -745.0]  # weights below float64's least: dropped (post-processing)
    return MixturePair(tuple(math.exp(log_w[k]) for k in keep), tuple(float(k) for k in keep), (1.0,), (0.0,), s,
                       f"the user's {g} records contribute C each, aligned; the others 0")


def group_epsilon(noise_multiplier: float, sample_rate: float, steps: int, group_size: int, delta: float, *,
                  lower: bool = True) -> tuple[float, Optional[float]]:
    """(valid upper bound, certified lower bound) on the epsilon at ``delta`` of ``steps`` Poisson-subsampled
    Gaussian steps for a group of g records (one user's), each record clipped to C (module docstring).

    Args:
        noise_multiplier: s = sigma / C, in (0, inf).
        sample_rate: q, in (0, 1].
        steps: T, an int >= 1.
        group_size: g, an int in [1, 10000].
        delta: in (0, 1).
        lower: also compute the certified lower bound; default True (None when False).

    Returns:
        (upper, lower): upper from the Renyi divergence of the dominating pair (orders
        ``privcal.analysis.group_subsampling.GROUP_ORDERS``, improved conversion), lower from the realised pair
        (``privcal.accounting.realisable``), never above the upper.
    """
    s = V.positive("noise_multiplier", noise_multiplier, allow_inf=True)
    q = V.rate("sample_rate", sample_rate)
    g = V.positive_int("group_size", group_size)
    steps = V.positive_int("steps", steps)
    delta = V.open_unit("delta", delta)
    return group_epsilon_unchecked(s, q, steps, g, delta, bool(lower))


@functools.lru_cache(maxsize=256)
def group_epsilon_unchecked(noise_multiplier: float, sample_rate: float, steps: int, group_size: int, delta: float,
                            lower: bool) -> tuple[float, Optional[float]]:
    """:func:`group_epsilon` on checked arguments, remembered: the seeds of one setting share sigma, q and T,
    and the user-level epsilon at g = 50 costs seconds (22 orders, both directions, and the lower end's pair)."""
    orders = np.array(GROUP_ORDERS)
    per_step = rdp_poisson_group_gaussian(orders, noise_multiplier, sample_rate, group_size)
    with warnings.catch_warnings():  # an optimum at the grid's edge is still a valid (looser) upper bound
        warnings.simplefilter("ignore", GridEdgeWarning)
        upper, _ = epsilon_from_rdp(orders, steps * per_step, delta)
    low = (min(upper, epsilon_lower_of_pairs({group_pair(noise_multiplier, sample_rate, group_size): steps}, delta))
           if lower else None)
    return float(upper), low
