"""Privacy loss distributions (PLDs) with certified brackets: every epsilon comes as [lower, upper].

* :func:`from_event` — the PLD of any supported history (Gaussian and Gaussian-process releases, Laplace
  releases, (epsilon, delta)-DP events, subsampled Gaussians: Poisson / add-remove and without
  replacement / replace-one or zero-out), as a lazy :class:`PLD` (``epsilon``, ``delta``, ``bracket``,
  ``delta_bracket``, ``compose``, ``self_compose``);
* :class:`PLDAccountant` — the same behind the accountant protocol of ``privcal.accounting``, with
  ``bracket(delta)`` and its own calibration.

How the bracket is certified: ``privcal.pld._build`` (dominating and dominated discrete pairs),
``privcal.pld._compose`` (one FFT, Chernoff-bounded truncation, a proven round-off bound).
"""

from ._distribution import (
    DEFAULT_ABSOLUTE_ACCURACY,
    DEFAULT_ACCURACY,
    DEFAULT_MEMORY_LIMIT,
    PLD,
    MemoryLimitError,
    from_event,
    supports,
)
from .accountant import PLDAccountant

__all__ = [
    "PLD",
    "PLDAccountant",
    "MemoryLimitError",
    "from_event",
    "supports",
    "DEFAULT_ACCURACY",
    "DEFAULT_ABSOLUTE_ACCURACY",
    "DEFAULT_MEMORY_LIMIT",
]
