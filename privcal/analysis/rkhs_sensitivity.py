r"""Sensitivities in the Lemma 6 RKHS norm: Wang & Hegde 2019's Thm 5 and Sec. 3.2 as printed and valid, and the
sensitivities of an agent whose every update is certified.

* the Q-update of the proof of Theorem 5: the paper's ``v``, sup bound, kernel beta and ``C = (v^2 + v) L^2``
  as printed (``*_paper``), beside the valid ``(v^2 + 5v/2) L^2`` (``Lip(Q - Q') <= 2L``);
* the output-perturbation alternative of Sec. 3.2, printed and valid;
* the releases of an agent that certifies each update (``clipped_*``: parameters drift apart through every
  update; ``restarted_*``: every update starts from the released function).

Every bound rests on ``||f||_H^2 <= (1 + beta/2) D^2 + L'^2 / (2 beta)`` (:func:`sensitivity_squared_bound`)
for ``|f| <= D``, ``Lip(f) <= L'``. The norm itself is :mod:`privcal.analysis.rkhs_space`; the findings about
the printed bounds are summarised in :mod:`privcal.analysis.rkhs`, which re-exports both modules.
"""

from __future__ import annotations

import math

from privcal import _validate as V

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


def sensitivity_squared_bound(sup_norm: float, lipschitz: float, beta: float) -> float:
    """Upper bound on ``||f||_H^2`` from ``|f| <= D`` and ``|f'| <= L'`` on ``[0, 1]``.

    Formula: ``||f||^2 <= (1 + beta/2) D^2 + L'^2 / (2 beta)``, term by term:
    ``1/2 (f(0)^2 + f(1)^2) <= D^2``, ``(beta/2) int f^2 <= (beta/2) D^2``,
    ``1/(2 beta) int f'^2 <= L'^2/(2 beta)``. ``lipschitz`` is the Lipschitz constant of ``f``
    itself (for ``f = Q - Q'`` with ``Q, Q'`` both ``L``-Lipschitz, pass ``2L``).
    Source: Wang & Hegde 2019, Lemma 6 norm, as used in the proof of Thm 5.

    Args:
        sup_norm: D, a bound on sup |f|, in [0, inf).
        lipschitz: L', the Lipschitz constant of f, in [0, inf).
        beta: kernel parameter beta of exp(-beta |x - y|), in (0, inf).

    Returns:
        the bound on ||f||_H^2, in [0, inf).

    Raises:
        ValueError: an argument is outside its range.
    """
    sup_norm = V.nonnegative("sup_norm", sup_norm)
    lipschitz = V.nonnegative("lipschitz", lipschitz)
    beta = V.positive("beta", beta)
    return _sensitivity_squared_bound(sup_norm, lipschitz, beta)


def _sensitivity_squared_bound(sup_norm: float, lipschitz: float, beta: float) -> float:
    """sensitivity_squared_bound for validated inputs."""
    d, lip = sup_norm, lipschitz
    return (1.0 + beta / 2.0) * d * d + lip * lip / (2.0 * beta)


def sensitivity_minimizing_beta(sup_norm: float, lipschitz: float) -> float:
    """Kernel parameter minimising ``sensitivity_squared_bound`` for fixed ``D`` and ``L'``.

    Formula: ``beta* = L'/D``, where the bound equals ``D^2 + D L'``. With the paper's
    ``D = v L, L' = L`` this is Thm 5's ``beta = 1/v``; with ``L' = 2L`` it is ``2/v``.
    Note: ``beta`` is the noise kernel's, so changing it also changes Lemma 8's sup term.
    Source: calculus on the bound of Wang & Hegde 2019, proof of Thm 5.

    Args:
        sup_norm: D, a bound on sup |f|, in (0, inf).
        lipschitz: L', the Lipschitz constant of f, in (0, inf).

    Returns:
        the minimising kernel beta, in (0, inf).

    Raises:
        ValueError: an argument is outside its range.
    """
    sup_norm = V.positive("sup_norm", sup_norm)
    lipschitz = V.positive("lipschitz", lipschitz)
    return _sensitivity_minimizing_beta(sup_norm, lipschitz)


def _sensitivity_minimizing_beta(sup_norm: float, lipschitz: float) -> float:
    """sensitivity_minimizing_beta for validated inputs."""
    return lipschitz / sup_norm


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
    return _sensitivity_squared_bound(d, 2.0 * lipschitz, beta)


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
    return _sensitivity_squared_bound(2.0 * reward_bound / (1.0 - discount), 2.0 * lipschitz, beta)


# ----------------------------------------------------------------------------------------------
# sensitivities of an agent whose every update is certified (valid analysis of Algorithm 1)


def _sum_of_squares(n: int) -> float:
    """1^2 + 2^2 + ... + n^2."""
    return n * (n + 1.0) * (2.0 * n + 1.0) / 6.0


def _validate_clipped(update_clip, updates, lipschitz) -> tuple[float, int, float]:
    update_clip = V.positive("update_clip", update_clip)
    updates = V.positive_int("updates", updates)
    lipschitz = V.positive("lipschitz", lipschitz)
    return update_clip, updates, lipschitz


def clipped_release_sensitivity_squared(update_clip: float, updates: int, lipschitz: float, beta: float) -> float:
    """Squared RKHS sensitivity of the function released after ``updates`` certified updates (one action).

    Formula: ``(1 + beta/2) (2 j c)^2 + (2L)^2 / (2 beta)`` with ``j = updates``, ``c = update_clip``:
    ``sensitivity_squared_bound`` of ``f = Q_j - Q'_j``, where ``Q_j``, ``Q'_j`` are the functions the
    agent holds after ``j`` updates on two reward functions (any two: the bound does not use the
    rewards). Every update is certified to move each action's Q by at most ``c`` in sup norm over
    [0, 1], so ``|Q_j - Q'_j| <= sum_i (|Q_i - Q_(i-1)| + |Q'_i - Q'_(i-1)|) <= 2 j c`` (the same
    initial network); both are ``L``-Lipschitz, so ``f`` is ``2L``-Lipschitz.
    Source: Wang & Hegde 2019, Lemma 6 norm (as used in the proof of Thm 5), with the per-update
    premise made true by the agent (``privcal.rl.dpq.agent``) instead of assumed.

    Args:
        update_clip: c, the certified bound on one update's change of Q in sup norm, in (0, inf)
            (units of Q, i.e. of reward).
        updates: j, the number of certified updates before the release, an int >= 1.
        lipschitz: L, the enforced Lipschitz bound of Q in the state, in (0, inf).
        beta: kernel parameter beta of exp(-beta |x - y|), in (0, inf).

    Returns:
        the squared RKHS sensitivity of the release (one action), in (0, inf).

    Raises:
        ValueError: an argument is outside its range.
    """
    update_clip, updates, lipschitz = _validate_clipped(update_clip, updates, lipschitz)
    beta = V.positive("beta", beta)
    return _clipped_release_sensitivity_squared(update_clip, updates, lipschitz, beta)


def _clipped_release_sensitivity_squared(update_clip, updates, lipschitz, beta) -> float:
    """clipped_release_sensitivity_squared for validated inputs."""
    return _sensitivity_squared_bound(2.0 * updates * update_clip, 2.0 * lipschitz, beta)


def clipped_run_sensitivity_squared(update_clip: float, updates: int, lipschitz: float, beta: float, *,
                                    actions: int = 1) -> float:
    """Sum of the squared RKHS sensitivities of every release of a certified run: U releases x m actions.

    Formula: ``m sum_(j=1..U) [(1 + beta/2)(2 j c)^2 + (2L)^2/(2 beta)]
    = m [(1 + beta/2) 4 c^2 U(U+1)(2U+1)/6 + U (2L)^2/(2 beta)]``. Composing Gaussian-process
    releases with independent noise paths of scale sigma is a Gaussian mechanism with
    ``mu^2 = (this sum) / sigma^2`` (Wang & Hegde 2019, Prop. 4; Gaussian composition is exact).
    The release before the first update (the initial network) does not depend on the rewards.
    Source: :func:`clipped_release_sensitivity_squared`, summed.

    Args:
        update_clip: c, the certified bound on one update's change of Q in sup norm, in (0, inf)
            (units of Q).
        updates: U, the number of certified updates (releases that depend on the rewards), an int >= 1.
        lipschitz: L, the enforced Lipschitz bound of Q in the state, in (0, inf).
        beta: kernel parameter beta of exp(-beta |x - y|), in (0, inf).
        actions: m, the number of actions (one noise path each per release), an int >= 1; default 1.

    Returns:
        the summed squared sensitivity, in (0, inf).

    Raises:
        ValueError: an argument is outside its range.
    """
    update_clip, updates, lipschitz = _validate_clipped(update_clip, updates, lipschitz)
    beta = V.positive("beta", beta)
    actions = V.positive_int("actions", actions)
    return _clipped_run_sensitivity_squared(update_clip, updates, lipschitz, beta, actions)


def _clipped_run_sensitivity_squared(update_clip, updates, lipschitz, beta, actions=1) -> float:
    """clipped_run_sensitivity_squared for validated inputs."""
    sup_part = 4.0 * update_clip**2 * _sum_of_squares(updates)
    lip_part = updates * (2.0 * lipschitz) ** 2
    return actions * ((1.0 + beta / 2.0) * sup_part + lip_part / (2.0 * beta))


def clipped_run_minimizing_beta(update_clip: float, updates: int, lipschitz: float) -> float:
    """Kernel beta minimising :func:`clipped_run_sensitivity_squared` (one beta for every release).

    Formula: with ``A = 4 c^2 U(U+1)(2U+1)/6`` and ``C = U (2L)^2/2`` the sum is
    ``m (A (1 + beta/2) + C/beta)``, minimal at ``beta = sqrt(2 C / A)`` where it equals
    ``m (A + sqrt(2 A C))``. Source: calculus on :func:`clipped_run_sensitivity_squared`.

    Args:
        update_clip: c, the certified bound on one update's change of Q in sup norm, in (0, inf).
        updates: U, the number of certified updates, an int >= 1.
        lipschitz: L, the enforced Lipschitz bound of Q in the state, in (0, inf).

    Returns:
        the minimising kernel beta, in (0, inf).

    Raises:
        ValueError: an argument is outside its range.
    """
    return _clipped_run_minimizing_beta(*_validate_clipped(update_clip, updates, lipschitz))


def _clipped_run_minimizing_beta(update_clip, updates, lipschitz) -> float:
    """clipped_run_minimizing_beta for validated inputs."""
    a = 4.0 * update_clip**2 * _sum_of_squares(updates)
    c = updates * (2.0 * lipschitz) ** 2 / 2.0
    return math.sqrt(2.0 * c / a)


# ----------------------------------------------------------------------------------------------
# every update starts from the released function (valid analysis of Algorithm 1: privcal.calibrators.dpq)


def _validate_restarted(update_clip, update_lipschitz) -> tuple[float, float]:
    return V.positive("update_clip", update_clip), V.positive("update_lipschitz", update_lipschitz)


def restarted_release_sensitivity_squared(update_clip: float, update_lipschitz: float, beta: float) -> float:
    """Squared RKHS sensitivity of one release when every update starts from the released function.

    Formula: ``(1 + beta/2) (2c)^2 + (2l)^2 / (2 beta)`` with ``c = update_clip``, ``l = update_lipschitz``:
    ``sensitivity_squared_bound`` of ``f = Delta - Delta'``. Release j + 1 is R_j + Delta_j + g_(j+1),
    where R_j is the earlier release and Delta_j = Q_new - Q_old is the j-th update's change, certified
    to satisfy sup_s |Delta_j(s)| <= c and Lip_s(Delta_j) <= l. Under adaptive composition R_j is given
    (the same for both reward functions), so the two means differ by Delta_j - Delta'_j: sup <= 2c,
    Lipschitz <= 2l, whatever the rewards and however far the parameters drifted. Lemma 6's norm
    ``||f||_H^2 = (f(0)^2 + f(1)^2)/2 + (1/(2 beta)) int_0^1 (f'^2 + beta^2 f^2)
    <= sup^2 (1 + beta/2) + Lip^2 / (2 beta)`` gives the formula.
    Source: Wang & Hegde 2019, Lemma 6 norm (as used in the proof of Thm 5), with both premises certified
    by the agent (``privcal.rl.dpq.agent.certified_step``).

    Args:
        update_clip: c, the certified bound on one update's change of Q in sup norm, in (0, inf) (units of Q).
        update_lipschitz: l, the certified bound on the Lipschitz constant of one update's change, in
            (0, inf) (units of Q per unit state).
        beta: kernel parameter beta of exp(-beta |x - y|), in (0, inf).

    Returns:
        the squared RKHS sensitivity of one release (one action), in (0, inf).

    Raises:
        ValueError: an argument is outside its range.
    """
    update_clip, update_lipschitz = _validate_restarted(update_clip, update_lipschitz)
    beta = V.positive("beta", beta)
    return restarted_release_sensitivity_squared_unchecked(update_clip, update_lipschitz, beta)


def restarted_release_sensitivity_squared_unchecked(update_clip: float, update_lipschitz: float, beta: float) -> float:
    """:func:`restarted_release_sensitivity_squared` without validation, for callers that validated the
    arguments (``privcal.calibrators.dpq``): ``(1 + beta/2) (2c)^2 + (2l)^2 / (2 beta)``.

    Args:
        update_clip: c, a float in (0, inf) (not checked).
        update_lipschitz: l, a float in (0, inf) (not checked).
        beta: kernel parameter, a float in (0, inf) (not checked).

    Returns:
        the squared RKHS sensitivity of one release (one action), in (0, inf).
    """
    return _sensitivity_squared_bound(2.0 * update_clip, 2.0 * update_lipschitz, beta)


def restarted_minimizing_beta(update_clip: float, update_lipschitz: float) -> float:
    """Kernel beta minimising :func:`restarted_release_sensitivity_squared`: ``beta = l / c``.

    Formula: ``(1 + beta/2) 4 c^2 + 2 l^2 / beta`` is minimal at ``beta = sqrt(2 * 2 l^2 / (4 c^2)) = l / c``,
    where it equals ``4 c^2 + 4 c l`` (``sensitivity_minimizing_beta`` with D = 2c, L' = 2l).
    Source: calculus on :func:`restarted_release_sensitivity_squared`.

    Args:
        update_clip: c, the certified bound on one update's change of Q in sup norm, in (0, inf).
        update_lipschitz: l, the certified bound on the Lipschitz constant of one update's change, in (0, inf).

    Returns:
        the minimising kernel beta, in (0, inf).

    Raises:
        ValueError: an argument is outside its range.
    """
    update_clip, update_lipschitz = _validate_restarted(update_clip, update_lipschitz)
    return update_lipschitz / update_clip
