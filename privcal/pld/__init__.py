"""Privacy loss distributions (PLDs) with certified brackets: every epsilon comes as [lower, upper].

The public home of the PLD feature (above the accounting layer; nothing in privcal below it imports it):

* :func:`from_event` — the PLD of any supported history (Gaussian and Gaussian-process releases, Laplace
  releases, (epsilon, delta)-DP events, subsampled Gaussians: Poisson / add-remove and without
  replacement / replace-one or zero-out, the latter priced as replace-one at twice its sensitivity), as a
  lazy :class:`PLD` (``epsilon``, ``delta``, ``bracket``, ``delta_bracket``, ``compose``, ``self_compose``);
* :class:`PLDAccountant` — the same behind the accountant protocol, with ``bracket(delta)`` and its own
  calibration (``privcal.accounting.pld_accountant``);
* :func:`pld_settings` — a block within which accountants built with default settings use a given
  accuracy and memory cap (what ``--pld-accuracy`` and ``--memory-limit`` set for whole commands);
* :mod:`realisable` — certified *lower* bounds of realisable worst-case pairs of neighbouring data sets
  (``privcal.accounting.realisable``), the basis of "not private" verdicts.

How the bracket is certified: ``privcal.privacy_loss`` (dominating and dominated discrete pairs, one FFT,
Chernoff-bounded truncation, a proven round-off bound); the proofs are in docs/pld.md.
"""

from ..accounting import realisable
from ..accounting.pld_accountant import PLDAccountant, pld_settings
from ..privacy_loss import (
    DEFAULT_ABSOLUTE_ACCURACY,
    DEFAULT_ACCURACY,
    DEFAULT_MEMORY_LIMIT,
    PLD,
    MemoryLimitError,
)
from ..accounting.pld_events import from_event, supports

__all__ = [
    "PLD",
    "PLDAccountant",
    "pld_settings",
    "MemoryLimitError",
    "from_event",
    "supports",
    "realisable",
    "DEFAULT_ACCURACY",
    "DEFAULT_ABSOLUTE_ACCURACY",
    "DEFAULT_MEMORY_LIMIT",
]
