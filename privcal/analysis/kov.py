r"""Kairouz, Oh & Viswanath 2015: optimal homogeneous composition, and the composition theorems it refines.

One name for three modules, one job each:

* :mod:`privcal.analysis.kov_profile` -- the exact profile of k-fold adaptive composition of
  (epsilon0, delta0)-DP mechanisms at every epsilon (:func:`kov_delta`) and its inverse
  (:func:`kov_epsilon`), Kairouz, Oh & Viswanath 2015 (ICML; arXiv 1311.0776), Thm 3.3;
* :mod:`privcal.analysis.kov_closed_forms` -- Thm 3.3's grid as printed (:func:`kov_epsilon_grid_paper`),
  the closed form of Thm 3.4 (:func:`kov_epsilon_approx`), Dwork, Rothblum & Vadhan 2010 advanced
  composition (:func:`drv_epsilon`) and basic composition (:func:`basic_epsilon`), the bounds KOV
  improves on;
* :mod:`privcal.analysis.kov_gaussian` -- KOV for the Gaussian: the per-step (epsilon0, delta0) taken from
  the exact single-step Gaussian profile and optimised over epsilon0 (:func:`kov_gaussian_epsilon`,
  :func:`kov_gaussian_delta`).

This module re-exports every public name of the three (``privcal.analysis.kov.kov_epsilon`` is
``privcal.analysis.kov_profile.kov_epsilon``); :data:`__all__` lists the user-facing functions, and the trusted
kernels (``*_unchecked``, arguments already validated), the thresholds they use and the pieces of the exact
profile keep their home modules' ``__all__``. The number of composed mechanisms is ``steps`` (k in the
papers). Every function takes the per-step mechanism's parameters positionally, then keyword-only ``steps``
and the query (``delta`` for an epsilon, ``epsilon`` for a delta), e.g.
``kov_epsilon(0.1, 1e-8, steps=100, delta=1e-5)``, so that a positional call in another order fails loudly
instead of swapping numbers. ``privcal.analysis.composition`` re-exports the public names of
:data:`__all__` too.
"""

from __future__ import annotations

from .kov_closed_forms import (
    basic_epsilon,
    drv_epsilon,
    kov_epsilon_approx,
    kov_epsilon_approx_unchecked,
    kov_epsilon_grid_paper,
    log_e_plus,
)
from .kov_gaussian import (
    K_CLOSED_FORM,
    kov_gaussian_delta,
    kov_gaussian_delta_unchecked,
    kov_gaussian_delta_with_step,
    kov_gaussian_epsilon,
    kov_gaussian_epsilon_unchecked,
    kov_gaussian_epsilon_with_step,
    uses_closed_form,
)
from .kov_profile import (
    MP_REL_ERROR,
    STEPS_MAX,
    RandomizedResponse,
    exact_gap,
    fail_probability_unchecked,
    kov_delta,
    kov_delta_unchecked,
    kov_epsilon,
    kov_epsilon_unchecked,
    validated_kov_arguments,
)

__all__ = [
    "kov_delta",
    "kov_epsilon",
    "kov_epsilon_grid_paper",
    "kov_epsilon_approx",
    "drv_epsilon",
    "basic_epsilon",
    "kov_gaussian_epsilon",
    "kov_gaussian_epsilon_with_step",
    "kov_gaussian_delta",
    "kov_gaussian_delta_with_step",
]
