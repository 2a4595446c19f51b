r"""The RKHS of Wang & Hegde's functional mechanism and the sensitivities measured in it.

Kernel ``K(x, y) = exp(-beta |x - y|)`` on ``[0, 1]`` (or ``[a, b]``), whose RKHS is the Sobolev
space H^1 with the inner product of Lemma 6 (Wang & Hegde, NeurIPS 2019, App. C):

    <f, g> = 1/2 (f(0) g(0) + f(1) g(1)) + 1/(2 beta) * int_0^1 (f' g' + beta^2 f g) dx.

Norms of callables (quadrature), of sampled functions (exact for the piecewise-linear
interpolant) and of kernel expansions (closed form ``a^T K a``) are in :mod:`privcal.analysis.rkhs_space`;
the RKHS sensitivity of the Q-update used in the proof of Theorem 5 and of the output-perturbation
alternative of Sec. 3.2 in :mod:`privcal.analysis.rkhs_sensitivity`, the Lemma 6 norm bound from a sup and a
Lipschitz constant in :mod:`privcal.analysis.rkhs_norm_bound`, and the sensitivities of a certified agent's
releases in :mod:`privcal.analysis.rkhs_certified`. This module re-exports every public name of them (``privcal.analysis.rkhs.norm`` is
``privcal.analysis.rkhs_space.norm``).

On an interval ``[a, b]`` the same formula is used with ``a, b`` in place of ``0, 1``; it is the
pull-back of the ``[0, 1]`` space under ``x = a + (b - a) t`` with ``beta_01 = beta * (b - a)``:
``<f, g>_{[a,b], beta} = <F, G>_{[0,1], beta (b-a)}`` where ``F(t) = f(a + (b - a) t)``, and the
kernel ``exp(-beta |x - y|) = exp(-beta (b - a) |s - t|)`` transforms the same way.

Findings (tests in ``tests/test_rkhs.py`` hold the evidence):

* Reproducing property ``<f, K(., y)> = f(y)`` of Lemma 6: holds.
* The inequality ``f(x)^2 <= c <f, f>`` with the paper's ``c = 2 beta``: its proof uses
  ``int_0^x f' = f(x)``, i.e. ``f(0) = 0``. The sharp constant is ``c = sup_x K(x, x) = 1``
  (Cauchy-Schwarz, equality for ``f = K(., y)``), so ``c = 2 beta`` holds iff ``beta >= 1/2``.
  The lemma's conclusion (an RKHS) is unaffected: any finite ``c`` suffices.
* Thm 5's bound ``(1 + beta/2) (v L)^2 + L^2/(2 beta)`` puts the Lipschitz constant ``L`` of one
  value function on ``f = Q - Q'``; a difference of two ``L``-Lipschitz functions is only
  ``2L``-Lipschitz and the paper's ``(v^2 + v) L^2`` is then exceeded (explicit triangle wave).
* The proof of Thm 5 names the kernel ``exp(-4 alpha L (k+1) |x - y|/B)`` (``beta = v L``) while
  the statement sets ``beta = 1/v``.
* The proof of Thm 5 bounds one update by ``||Q - Q'||_inf <= 4 alpha L (k+1)/B``
  (``update_sup_bound``): the 1/B treats a batch as if one reward changed, but under the paper's
  adjacency ``||r - r'||_inf <= 1`` all B rewards change, and the input-Lipschitz constant ``L``
  does not bound how far a parameter step moves the function: a network whose only moving parameter
  is the output bias (0-Lipschitz in the state) shifts by ``alpha`` under ``r`` versus ``r + 1``
  (``privcal verify``, claim DPQ-update-sup). The valid analysis certifies the update in the agent
  instead (``privcal.rl.dpq.agent``: ``sup |Q_new - Q_old| <= c``) and prices release ``j`` with
  ``clipped_release_sensitivity_squared``: ``sup |Q_j - Q'_j| <= 2 j c`` (the neighbours' parameters
  drift apart through every earlier update), ``Lip(Q_j - Q'_j) <= 2L``.
* Sec. 3.2's output-perturbation bound ``2 r0^2 (1 + beta/2)/(1-gamma)^2 + L^2/beta`` is half of
  what the Lemma 6 norm gives for ``sup|Q - Q'| <= 2 r0/(1-gamma)`` and ``Lip(Q - Q') <= 2L``;
  ``Q = r0/(1-gamma)``, ``Q' = -Q`` exceeds it.
"""

from __future__ import annotations

from .rkhs_sensitivity import (
    clipped_release_sensitivity_squared,
    clipped_run_minimizing_beta,
    clipped_run_sensitivity_squared,
    kernel_beta_thm5,
    kernel_beta_thm5_proof_paper,
    kernel_beta_thm5_unchecked,
    output_perturbation_sensitivity_squared,
    output_perturbation_sensitivity_squared_paper,
    restarted_minimizing_beta,
    restarted_release_sensitivity_squared,
    restarted_release_sensitivity_squared_unchecked,
    sensitivity_minimizing_beta,
    sensitivity_squared_bound,
    update_sensitivity_squared,
    update_sensitivity_squared_paper,
    update_sensitivity_squared_paper_unchecked,
    update_sensitivity_squared_unchecked,
    update_sup_bound,
    v_parameter,
    v_parameter_unchecked,
)
from .rkhs_space import (
    KernelExpansion,
    expansion,
    expansion_inner_product,
    expansion_norm_squared,
    gram,
    inner_product,
    kernel,
    norm,
    norm_squared,
    norm_squared_sampled,
)


__all__ = [
    "kernel",
    "gram",
    "inner_product",
    "norm_squared",
    "norm",
    "norm_squared_sampled",
    "KernelExpansion",
    "expansion",
    "expansion_norm_squared",
    "expansion_inner_product",
    "update_sup_bound",
    "v_parameter",
    "kernel_beta_thm5",
    "kernel_beta_thm5_unchecked",
    "kernel_beta_thm5_proof_paper",
    "sensitivity_squared_bound",
    "sensitivity_minimizing_beta",
    "update_sensitivity_squared_paper",
    "update_sensitivity_squared",
    "clipped_release_sensitivity_squared",
    "clipped_run_sensitivity_squared",
    "clipped_run_minimizing_beta",
    "restarted_release_sensitivity_squared",
    "restarted_minimizing_beta",
    "output_perturbation_sensitivity_squared_paper",
    "output_perturbation_sensitivity_squared",
]
