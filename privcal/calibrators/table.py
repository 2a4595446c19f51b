"""The comparison behind ``privcal table``: the sigma each bound demands, side by side.

For every target epsilon (at one delta) a row gives sigma under each bound and its ratio to the exact
sigma (the least noise any valid analysis can justify). Paper closed forms are *checked* on the exact
profile: a row is flagged where a closed form's sigma does not in fact give (epsilon, delta)-DP.

Settings:

* ``dpq`` — Wang & Hegde 2019, DP Q-learning (App. E.3 defaults: T = 5000 samples, B = 64, alpha = 3e-4,
  k = 23, L = 4). Each of the T/B updates releases a Gaussian-process mechanism with RKHS sensitivity
  D = sqrt(C), C = (v^2 + v) L^2, v = 4 alpha (k + 1)/B (Thm 5 proof). That D assumes Q - Q' is
  L-Lipschitz; it can be 2L-Lipschitz, so a column gives the exact sigma at the valid D
  (``privcal.analysis.rkhs.update_sensitivity_squared``) and rows mark every sigma below it. Valid accountants count the
  floor(T/B) full-batch updates that Algorithm 1 performs; the paper formulas use T/B literally as printed.
  delta here is the composition delta only; the Lemma 8 sup-bound failure term that Thm 5 adds on
  top is not included.
* ``gaussian`` — ``steps`` releases of a Gaussian mechanism with L2 sensitivity ``sensitivity``.
* ``gpope`` — GPOPE Algorithm 1 (:mod:`privcal.calibrators.gpope`), one column per bound of
  :func:`privcal.calibrators.gpope.calibrate`.

Every accountant column is calibrated by that accountant's own method (``Accountant.sigma_for_unchecked``: the
closed form for exact, the windowed order search for RDP, the generic root finder for KOV); the
end-to-end columns come from the paper calibrators (:mod:`~privcal.calibrators.dpq`,
:mod:`~privcal.calibrators.gpope`), which reach the accountants the same way.

One name for three modules, one job each: :mod:`~privcal.calibrators.table_model` (the result: columns,
rows, the lead rows and their verdicts), :mod:`~privcal.calibrators.composition_table` (the dpq and gaussian
settings) and :mod:`~privcal.calibrators.gpope_table` (the gpope setting); this module re-exports their public
names. :mod:`~privcal.calibrators.render` prints a table.
"""

from __future__ import annotations

from .composition_table import DEFAULT_EPSILONS, DPQ_DEFAULTS, DPQTableSettings, dpq_table, gaussian_table
from .gpope_table import (
    GPOPE_DEFAULTS,
    GPOPE_EPSILONS,
    PRINTED_GRIDS,
    VERDICT_GRIDS,
    gpope_bracket,
    gpope_table,
    known_lower,
)
from .table_model import MAX_EPSILON, TABLE_RTOL, Column, Lead, Row, Table, validated_epsilons

__all__ = [
    "Column", "Row", "Lead", "Table", "dpq_table", "gaussian_table", "gpope_table",
    "DPQ_DEFAULTS", "DEFAULT_EPSILONS", "GPOPE_DEFAULTS", "GPOPE_EPSILONS", "MAX_EPSILON", "DPQTableSettings",
    "TABLE_RTOL", "validated_epsilons", "gpope_bracket", "known_lower", "VERDICT_GRIDS", "PRINTED_GRIDS",
]
