"""Privacy loss distributions, the mathematics: discrete pairs, FFT composition, certified brackets.

Below the accounting layer (it knows pairs of distributions, not events): ``discretise`` discretises a pair
into dominating and dominated discrete PLDs, ``convolve`` composes them by one FFT with a proven round-off
bound and a Chernoff-bounded window, and :class:`PLD` turns a list of (pair, count) factors into certified
brackets [lower, upper] on epsilon and delta. The derivations are in docs/pld.md, section 2.

Events become factors in the accounting layer (``privcal.accounting.pld_events``); the public home of the
whole PLD feature is ``privcal.pld``. The names below are this package's interface to the layers above
(the pair classes, and the discrete-PMF primitives ``privcal.accounting.realisable`` builds on); inputs are
trusted.
"""

from .discretise import LOG_NDTR_ERR, ApproxDPPair, GaussianPair, LaplacePair, Pmf, SubsampledGaussianPair
from .discretise import dominated_masses
from .convolve import WINDOW_TAIL, Composed
from .convolve import compose as compose_pmfs
from .convolve import delta_at, epsilon_for, slack
from .distribution import (
    DEFAULT_ABSOLUTE_ACCURACY,
    DEFAULT_ACCURACY,
    DEFAULT_MEMORY_LIMIT,
    PLD,
    MemoryLimitError,
)
from .distribution import epsilon_side
from .heap import heap_policy

__all__ = [
    "PLD",
    "MemoryLimitError",
    "DEFAULT_ACCURACY",
    "DEFAULT_ABSOLUTE_ACCURACY",
    "DEFAULT_MEMORY_LIMIT",
    "GaussianPair",
    "SubsampledGaussianPair",
    "LaplacePair",
    "ApproxDPPair",
    "Pmf",
    "Composed",
    "WINDOW_TAIL",
    "compose_pmfs",
    "delta_at",
    "epsilon_for",
    "slack",
    "epsilon_side",
    "dominated_masses",
    "LOG_NDTR_ERR",
    "heap_policy",
]
