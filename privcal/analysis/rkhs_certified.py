r"""Sensitivities in the Lemma 6 RKHS norm of the releases of an agent whose every update is certified.

* ``clipped_*``: every update is certified to move each action's Q by at most ``c`` in sup norm, and the
  parameters of two runs drift apart through every update (Q_j - Q'_j sums j updates of each run);
* ``restarted_*``: every update starts from the released function, so two runs differ by one update each.

Each is :func:`privcal.analysis.rkhs_norm_bound.sensitivity_squared_bound` applied to the difference of the two
runs' functions (Wang & Hegde 2019, Lemma 6 norm, as used in the proof of Thm 5), with premises the agent
certifies instead of the paper's. ``privcal.analysis.rkhs_sensitivity`` and ``privcal.analysis.rkhs``
re-export its names.
"""

from __future__ import annotations

import math

from privcal import _validate as V
from privcal.analysis.rkhs_norm_bound import sensitivity_squared_bound_unchecked

__all__ = [
    "clipped_release_sensitivity_squared",
    "clipped_run_sensitivity_squared",
    "clipped_run_minimizing_beta",
    "restarted_release_sensitivity_squared",
    "restarted_minimizing_beta",
    "restarted_release_sensitivity_squared_unchecked",
]


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
    return sensitivity_squared_bound_unchecked(2.0 * updates * update_clip, 2.0 * lipschitz, beta)


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
    return sensitivity_squared_bound_unchecked(2.0 * update_clip, 2.0 * update_lipschitz, beta)


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
