r"""Sensitivities in the Lemma 6 RKHS norm: Wang & Hegde 2019's Thm 5 and Sec. 3.2 as printed and valid.

* the Q-update of the proof of Theorem 5: the paper's ``v``, sup bound, kernel beta and ``C = (v^2 + v) L^2``
  as printed (``*_paper``), beside the valid ``(v^2 + 5v/2) L^2`` (``Lip(Q - Q') <= 2L``);
* the output-perturbation alternative of Sec. 3.2, printed and valid.

Every bound rests on ``||f||_H^2 <= (1 + beta/2) D^2 + L'^2 / (2 beta)`` for ``|f| <= D``, ``Lip(f) <= L'``
(:func:`privcal.analysis.rkhs_norm_bound.sensitivity_squared_bound`). The sensitivities of an agent that
certifies each update (``clipped_*``, ``restarted_*``) are :mod:`privcal.analysis.rkhs_certified`; this
module re-exports them and the norm bound (``from privcal.analysis.rkhs_sensitivity import
clipped_run_sensitivity_squared`` works). The norm itself is
:mod:`privcal.analysis.rkhs_space`; the findings about the printed bounds are summarised in
:mod:`privcal.analysis.rkhs`, which re-exports all of them.
"""

from __future__ import annotations

from privcal import _validate as V
from privcal.analysis.rkhs_certified import (
    clipped_release_sensitivity_squared,
    clipped_run_minimizing_beta,
    clipped_run_sensitivity_squared,
    restarted_minimizing_beta,
    restarted_release_sensitivity_squared,
    restarted_release_sensitivity_squared_unchecked,
)
from privcal.analysis.rkhs_norm_bound import (
    sensitivity_minimizing_beta,
    sensitivity_squared_bound,
    sensitivity_squared_bound_unchecked,
)

__all__ = [
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
    "v_parameter_unchecked",
    "update_sensitivity_squared_paper_unchecked",
    "update_sensitivity_squared_unchecked",
    "restarted_release_sensitivity_squared_unchecked",
]


# ----------------------------------------------------------------------------------------------
# sensitivities (Theorem 5 and Section 3.2)


def _validate_update(lr, k, batch_size) -> tuple[float, float, int]:
    """Validate (lr, k, batch_size) of the Thm 5 update quantities."""
    lr = V.positive("lr", lr)
    k = V.nonnegative("k", k)
    batch_size = V.positive_int("batch_size", batch_size)
    return lr, k, batch_size


def update_sup_bound(lr: float, k: float, batch_size: int, lipschitz: float) -> float:
    """Sup-norm bound on the difference of two Q-updates under neighbouring rewards (as in the paper).

    Formula: ``||Q - Q'||_inf <= 4 alpha L (k + 1) / B`` (``alpha = lr``, ``L = lipschitz``,
    ``B = batch_size``), on the event that the noise paths stay in ``[-k, k]``.
    Source: Wang & Hegde 2019, proof of Thm 5.
    Fails: under ``||r - r'||_inf <= 1`` all B rewards of a batch change (not one), and ``L`` (a
    slope in the state) does not bound a parameter step: the output bias alone moves Q by ``alpha``
    (claim DPQ-update-sup of ``privcal verify``). The valid analysis certifies the update instead,
    see ``clipped_release_sensitivity_squared``.

    Args:
        lr: learning rate alpha of the Q-update, in (0, inf).
        k: the paper's bound on the noise path, sup |g| <= k, in [0, inf).
        batch_size: batch size B, an integer >= 1.
        lipschitz: Lipschitz constant L of the value function, in [0, inf).

    Returns:
        the sup-norm bound (units of Q), in [0, inf).

    Raises:
        ValueError: an argument is outside its range.
    """
    lr, k, batch_size = _validate_update(lr, k, batch_size)
    lipschitz = V.nonnegative("lipschitz", lipschitz)
    return _update_sup_bound(lr, k, batch_size, lipschitz)


def _update_sup_bound(lr: float, k: float, batch_size: int, lipschitz: float) -> float:
    """update_sup_bound for validated inputs."""
    return 4.0 * lr * lipschitz * (k + 1.0) / batch_size


def v_parameter(lr: float, k: float, batch_size: int) -> float:
    """The paper's shorthand ``v`` (sup bound per unit Lipschitz constant).

    Formula: ``v = 4 alpha (k + 1) / B``. Source: Wang & Hegde 2019, proof of Thm 5.

    Args:
        lr: learning rate alpha of the Q-update, in (0, inf).
        k: the paper's bound on the noise path, sup |g| <= k, in [0, inf).
        batch_size: batch size B, an integer >= 1.

    Returns:
        v, in (0, inf).

    Raises:
        ValueError: an argument is outside its range.
    """
    lr, k, batch_size = _validate_update(lr, k, batch_size)
    return v_parameter_unchecked(lr, k, batch_size)


def v_parameter_unchecked(lr: float, k: float, batch_size: int) -> float:
    """:func:`v_parameter` without validation, for callers that validated the arguments (``privcal table``).

    Args:
        lr: alpha, a float in (0, inf) (not checked).
        k: the noise bound k, a float in [0, inf) (not checked).
        batch_size: B, an int >= 1 (not checked).

    Returns:
        v = 4 alpha (k + 1) / B.
    """
    return 4.0 * lr * (k + 1.0) / batch_size


def kernel_beta_thm5(lr: float, k: float, batch_size: int) -> float:
    """Kernel parameter chosen in Theorem 5.

    Formula: ``beta = 1/v = B / (4 alpha (k + 1))``; it minimises
    ``(1 + beta/2)(v L)^2 + L^2/(2 beta)`` (see ``sensitivity_minimizing_beta``).
    Source: Wang & Hegde 2019, Thm 5 (statement and proof).

    Args:
        lr: learning rate alpha of the Q-update, in (0, inf).
        k: the paper's bound on the noise path, sup |g| <= k, in [0, inf).
        batch_size: batch size B, an integer >= 1.

    Returns:
        the kernel beta of exp(-beta |x - y|), in (0, inf).

    Raises:
        ValueError: an argument is outside its range.
    """
    lr, k, batch_size = _validate_update(lr, k, batch_size)
    return _kernel_beta_thm5(lr, k, batch_size)


def _kernel_beta_thm5(lr: float, k: float, batch_size: int) -> float:
    """kernel_beta_thm5 for validated inputs."""
    return 1.0 / v_parameter_unchecked(lr, k, batch_size)


def kernel_beta_thm5_unchecked(lr: float, k: float, batch_size: int) -> float:
    """:func:`kernel_beta_thm5` without validation, for callers that validated the arguments or pass constants
    (``privcal.rl.dpq.agent``: App. E.3's beta = 2222 when sigma is given): the same beta.

    Args:
        lr: alpha, a float in (0, inf) (not checked).
        k: the noise bound k, a float in [0, inf) (not checked).
        batch_size: B, an int >= 1 (not checked).

    Returns:
        beta = 1/v, in (0, inf).
    """
    return _kernel_beta_thm5(lr, k, batch_size)


def kernel_beta_thm5_proof_paper(lr: float, k: float, batch_size: int, lipschitz: float) -> float:
    """Kernel parameter as printed in the kernel of the proof of Theorem 5.

    Formula: ``beta = 4 alpha L (k + 1) / B`` (from ``K(x, y) = exp(-4 alpha L (k+1)|x-y|/B)``).
    Source: Wang & Hegde 2019, proof of Thm 5. Fails: inconsistent with ``beta = 1/v`` of the
    statement and of the sensitivity algebra; kept only to reproduce the printed text.

    Args:
        lr: learning rate alpha of the Q-update, in (0, inf).
        k: the paper's bound on the noise path, sup |g| <= k, in [0, inf).
        batch_size: batch size B, an integer >= 1.
        lipschitz: Lipschitz constant L of the value function, in [0, inf).

    Returns:
        the printed kernel beta, in [0, inf).

    Raises:
        ValueError: an argument is outside its range.
    """
    lr, k, batch_size = _validate_update(lr, k, batch_size)
    lipschitz = V.nonnegative("lipschitz", lipschitz)
    return _kernel_beta_thm5_proof_paper(lr, k, batch_size, lipschitz)


def _kernel_beta_thm5_proof_paper(lr: float, k: float, batch_size: int, lipschitz: float) -> float:
    """kernel_beta_thm5_proof_paper for validated inputs."""
    return _update_sup_bound(lr, k, batch_size, lipschitz)


def update_sensitivity_squared_paper(lr: float, k: float, batch_size: int, lipschitz: float) -> float:
    """Squared RKHS sensitivity of one Q-update as printed in Theorem 5 (the ``C(alpha,k,L,B)``).

    Formula: ``C = (v^2 + v) L^2`` with ``v = 4 alpha (k + 1)/B``; equals
    ``sensitivity_squared_bound(v L, L, 1/v)``.
    Source: Wang & Hegde 2019, Thm 5 (statement and proof).
    Fails: it uses ``L`` as the Lipschitz constant of ``Q - Q'``; for two ``L``-Lipschitz value
    functions the difference is only ``2L``-Lipschitz and ``||Q - Q'||_H^2`` can exceed
    ``C`` (by a factor close to 2 for small ``v``); see ``update_sensitivity_squared``.

    Args:
        lr: learning rate alpha of the Q-update, in (0, inf).
        k: the paper's bound on the noise path, sup |g| <= k, in [0, inf).
        batch_size: batch size B, an integer >= 1.
        lipschitz: Lipschitz constant L of the value function, in [0, inf).

    Returns:
        C as printed (squared RKHS norm), in [0, inf).

    Raises:
        ValueError: an argument is outside its range.
    """
    lr, k, batch_size = _validate_update(lr, k, batch_size)
    lipschitz = V.nonnegative("lipschitz", lipschitz)
    return update_sensitivity_squared_paper_unchecked(lr, k, batch_size, lipschitz)


def update_sensitivity_squared_paper_unchecked(lr: float, k: float, batch_size: int, lipschitz: float) -> float:
    """:func:`update_sensitivity_squared_paper` without validation, for callers that validated the arguments
    (``privcal table``, ``privcal.calibrators.dpq``): the printed ``C = (v^2 + v) L^2``.

    Args:
        lr: alpha, a float in (0, inf) (not checked).
        k: the noise bound k, a float in [0, inf) (not checked).
        batch_size: B, an int >= 1 (not checked).
        lipschitz: L, a float in [0, inf) (not checked).

    Returns:
        C as printed (squared RKHS norm), in [0, inf).
    """
    v = v_parameter_unchecked(lr, k, batch_size)
    return (v * v + v) * lipschitz * lipschitz


def update_sensitivity_squared(
    lr: float, k: float, batch_size: int, lipschitz: float, *, beta: float | None = None
) -> float:
    """Valid squared RKHS sensitivity of one Q-update (``Q, Q'`` both ``L``-Lipschitz).

    Formula: ``(1 + beta/2)(v L)^2 + (2L)^2/(2 beta)``; at the paper's ``beta = 1/v`` (default)
    this is ``(v^2 + 5v/2) L^2``, at ``beta = 2/v`` the minimum ``(v^2 + 2v) L^2``.
    Source: Wang & Hegde 2019, proof of Thm 5, with ``Lip(Q - Q') <= 2L`` (triangle inequality).

    Args:
        lr: learning rate alpha of the Q-update, in (0, inf).
        k: the paper's bound on the noise path, sup |g| <= k, in [0, inf).
        batch_size: batch size B, an integer >= 1.
        lipschitz: Lipschitz constant L of the value function, in [0, inf).
        beta: kernel parameter beta of exp(-beta |x - y|), in (0, inf); default None, the paper's
            1/v (``kernel_beta_thm5``).

    Returns:
        the squared RKHS sensitivity, in [0, inf).

    Raises:
        ValueError: an argument is outside its range.
    """
    lr, k, batch_size = _validate_update(lr, k, batch_size)
    lipschitz = V.nonnegative("lipschitz", lipschitz)
    if beta is not None:
        beta = V.positive("beta", beta)
    return update_sensitivity_squared_unchecked(lr, k, batch_size, lipschitz, beta=beta)


def update_sensitivity_squared_unchecked(
    lr: float, k: float, batch_size: int, lipschitz: float, *, beta: float | None = None
) -> float:
    """:func:`update_sensitivity_squared` without validation, for callers that validated the arguments
    (``privcal table``): the valid ``(1 + beta/2)(v L)^2 + (2L)^2/(2 beta)``.

    Args:
        lr: alpha, a float in (0, inf) (not checked).
        k: the noise bound k, a float in [0, inf) (not checked).
        batch_size: B, an int >= 1 (not checked).
        lipschitz: L, a float in [0, inf) (not checked).
        beta: kernel parameter, a float in (0, inf) (not checked), or None for the paper's 1/v; default None.

    Returns:
        the squared RKHS sensitivity, in [0, inf).
    """
    d = _update_sup_bound(lr, k, batch_size, lipschitz)
    if beta is None:
        beta = _kernel_beta_thm5(lr, k, batch_size)
    return sensitivity_squared_bound_unchecked(d, 2.0 * lipschitz, beta)


def _discount(discount) -> float:
    """``discount`` as a float in [0, 1)."""
    g = V.probability("discount", discount)
    if g >= 1.0:
        raise ValueError(f"discount must be in [0, 1), got {discount!r}")
    return g


def output_perturbation_sensitivity_squared_paper(
    reward_bound: float, discount: float, lipschitz: float, beta: float
) -> float:
    """Squared RKHS sensitivity of releasing ``Q`` once, as printed in Section 3.2.

    Formula: ``||Q - Q'||_H^2 <= 2 r0^2 (1 + beta/2) / (1 - gamma)^2 + L^2 / beta``.
    Source: Wang & Hegde 2019, paragraph after Corollary 7.
    Fails: exactly half of the Lemma 6 bound for ``|Q|, |Q'| <= r0/(1-gamma)``,
    ``Lip(Q), Lip(Q') <= L``; ``Q = r0/(1-gamma)``, ``Q' = -Q`` has
    ``||Q - Q'||^2 = 4 r0^2 (1 + beta/2)/(1-gamma)^2`` (see
    ``output_perturbation_sensitivity_squared``).

    Args:
        reward_bound: r0, a bound on |reward|, in [0, inf).
        discount: gamma, in [0, 1).
        lipschitz: Lipschitz constant L of the value function, in [0, inf).
        beta: kernel parameter beta of exp(-beta |x - y|), in (0, inf).

    Returns:
        the printed bound (squared RKHS norm), in [0, inf).

    Raises:
        ValueError: an argument is outside its range.
    """
    reward_bound, discount, lipschitz, beta = _validate_output(reward_bound, discount, lipschitz, beta)
    return _output_perturbation_sensitivity_squared_paper(reward_bound, discount, lipschitz, beta)


def _validate_output(reward_bound, discount, lipschitz, beta) -> tuple[float, float, float, float]:
    """Validate the arguments of the output-perturbation sensitivities."""
    reward_bound = V.nonnegative("reward_bound", reward_bound)
    discount = _discount(discount)
    lipschitz = V.nonnegative("lipschitz", lipschitz)
    beta = V.positive("beta", beta)
    return reward_bound, discount, lipschitz, beta


def _output_perturbation_sensitivity_squared_paper(
    reward_bound: float, discount: float, lipschitz: float, beta: float
) -> float:
    """output_perturbation_sensitivity_squared_paper for validated inputs."""
    r0, gamma, lip = reward_bound, discount, lipschitz
    return 2.0 * r0 * r0 * (1.0 + beta / 2.0) / (1.0 - gamma) ** 2 + lip * lip / beta


def output_perturbation_sensitivity_squared(
    reward_bound: float, discount: float, lipschitz: float, beta: float
) -> float:
    """Valid squared RKHS sensitivity of releasing ``Q`` once (Section 3.2 setting).

    Formula: ``sensitivity_squared_bound(2 r0/(1-gamma), 2L, beta)
    = 4 r0^2 (1 + beta/2)/(1 - gamma)^2 + 2 L^2/beta`` (twice the printed bound), from
    ``|Q| <= r0/(1-gamma)`` and ``Lip(Q) <= L`` for both value functions.
    Source: Wang & Hegde 2019, Sec. 3.2 and Lemma 6; the workshop version (Thm 4 proof) prints
    the same ``4 r0^2`` factor.

    Args:
        reward_bound: r0, a bound on |reward|, in [0, inf).
        discount: gamma, in [0, 1).
        lipschitz: Lipschitz constant L of the value function, in [0, inf).
        beta: kernel parameter beta of exp(-beta |x - y|), in (0, inf).

    Returns:
        the squared RKHS sensitivity, in [0, inf).

    Raises:
        ValueError: an argument is outside its range.
    """
    reward_bound, discount, lipschitz, beta = _validate_output(reward_bound, discount, lipschitz, beta)
    return _output_perturbation_sensitivity_squared(reward_bound, discount, lipschitz, beta)


def _output_perturbation_sensitivity_squared(
    reward_bound: float, discount: float, lipschitz: float, beta: float
) -> float:
    """output_perturbation_sensitivity_squared for validated inputs."""
    return sensitivity_squared_bound_unchecked(2.0 * reward_bound / (1.0 - discount), 2.0 * lipschitz, beta)
