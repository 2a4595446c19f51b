r"""The Lemma 6 RKHS norm of a function bounded by its sup norm and Lipschitz constant.

``||f||_H^2 <= (1 + beta/2) D^2 + L'^2 / (2 beta)`` for ``|f| <= D`` and ``Lip(f) <= L'`` on ``[0, 1]``
(:func:`sensitivity_squared_bound`), and the kernel beta that minimises it
(:func:`sensitivity_minimizing_beta`). Every sensitivity of :mod:`privcal.analysis.rkhs_sensitivity`
(Wang & Hegde 2019's Thm 5 and Sec. 3.2) and :mod:`privcal.analysis.rkhs_certified` (certified agents) is
this bound applied to a difference of two functions; ``privcal.analysis.rkhs_sensitivity`` and
``privcal.analysis.rkhs`` re-export its names.
"""

from __future__ import annotations

from privcal import _validate as V

__all__ = [
    "sensitivity_squared_bound",
    "sensitivity_minimizing_beta",
    "sensitivity_squared_bound_unchecked",
]


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


def sensitivity_squared_bound_unchecked(sup_norm: float, lipschitz: float, beta: float) -> float:
    """:func:`sensitivity_squared_bound` without validation, for callers that validated the arguments (the
    sensitivities of ``privcal.analysis.rkhs_sensitivity`` and ``privcal.analysis.rkhs_certified``).

    Args:
        sup_norm: D, a float in [0, inf) (not checked).
        lipschitz: L', a float in [0, inf) (not checked).
        beta: kernel parameter, a float in (0, inf) (not checked).

    Returns:
        ``(1 + beta/2) D^2 + L'^2 / (2 beta)``, in [0, inf).
    """
    return _sensitivity_squared_bound(sup_norm, lipschitz, beta)
