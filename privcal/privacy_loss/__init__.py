"""Privacy loss distributions, the mathematics: discrete pairs, FFT composition, certified brackets.

Below the accounting layer (it knows pairs of distributions, not events): ``_build`` discretises a pair
into dominating and dominated discrete PLDs, ``_compose`` composes them by one FFT with a proven round-off
bound and a Chernoff-bounded window, and :class:`PLD` turns a list of (pair, count) factors into certified
brackets [lower, upper] on epsilon and delta. The derivations are in docs/pld.md, section 2.

Events become factors in the accounting layer (``privcal.accounting.pld_accountant``); the public home of
the whole PLD feature is ``privcal.pld``.
"""

from ._distribution import (
    DEFAULT_ABSOLUTE_ACCURACY,
    DEFAULT_ACCURACY,
    DEFAULT_MEMORY_LIMIT,
    PLD,
    MemoryLimitError,
)

__all__ = ["PLD", "MemoryLimitError", "DEFAULT_ACCURACY", "DEFAULT_ABSOLUTE_ACCURACY", "DEFAULT_MEMORY_LIMIT"]
