r"""Sup-norm tail of the Ornstein-Uhlenbeck noise path: Lemma 8 and the failure term of Theorem 5.

Wang & Hegde (NeurIPS 2019), "Privacy-preserving Q-learning with functional noise in continuous
spaces": Lemma 8 (Section 3.2, proof in Appendix A), Theorem 5 and Appendix E.3.

The noise path g ~ GP(0, sigma^2 exp(-beta |x - y|)) lives on S = [0, 1]. (On an interval of length
l, use beta * l: the process on [a, a + l] is the process on [0, 1] with beta replaced by beta * l.)

Lemma 8 has two parts, kept apart here:

* the *mean bound* E[max_[0,1] g] <= c sqrt(beta) sigma with c = LEMMA8_CONSTANT (the dyadic-chaining
  argument of Appendix A). privcal takes it as an assumption; tests/test_supremum.py checks it by
  Monte Carlo against a pathwise upper bound of the continuous maximum (it holds with a large margin:
  E[max] ~ 1.13 sqrt(beta) sigma for small beta);
* the *tail*. Printed: P(max g >= c sqrt(beta) sigma + u) <= exp(-u^2/2), which ignores sigma and is
  false for sigma > 1 (the value at one point is already N(0, sigma^2)). Valid form (Borell-TIS
  inequality, Adler & Taylor 2007, Thm 2.1.1, with sup_x Var g(x) = sigma^2):
  P(max g >= E[max g] + u) <= exp(-u^2 / (2 sigma^2)).

The printed constant "8.68" is also not an upper bound of the series it abbreviates (8.68385...):
``LEMMA8_CONSTANT`` is the series itself, computed with mpmath and rounded up to a float.
"""

from __future__ import annotations

import functools
import math
from typing import TYPE_CHECKING

from privcal import _validate as V
from privcal.errors import InfeasibleError

if TYPE_CHECKING:
    import mpmath

__all__ = [
    "LEMMA8_CONSTANT",
    "LEMMA8_CONSTANT_PAPER",
    "lemma8_constant",
    "lemma8_mean_bound",
    "lemma8_tail_paper",
    "lemma8_tail_borell_tis",
    "sup_abs_tail",
    "range_tail_borell_tis",
    "thm5_condition_paper",
    "thm5_condition",
    "thm5_failure_paper",
    "thm5_failure_e3_paper",
    "thm5_failure",
    "thm5_condition_paper_unchecked",
    "thm5_failure_e3_paper_unchecked",
]

#: The Lemma 8 series as a float rounded up (computed with mpmath on first access; see __getattr__).
LEMMA8_CONSTANT: float

#: The literal constant printed in Lemma 8 / Theorem 5 ("< 8.68"); it is *below* the series.
LEMMA8_CONSTANT_PAPER = 8.68


def lemma8_constant(dps: int = 30) -> mpmath.mpf:
    r"""The Lemma 8 constant as an ``mpmath.mpf`` with ``dps`` correct decimal digits.

    c = sqrt(1/pi) + sum_{i>=0} (sqrt(i) + 1 + exp(-(sqrt(i) + 1))) 2^(-i/2)  (= 8.683849796925759...)

    Source: Wang & Hegde 2019, proof of Lemma 8 (Appendix A): mu_n <= sqrt(beta/pi) sigma +
    sum_i (sqrt(i) + 1 + 1/exp(sqrt(i) + 1)) sqrt(beta/2^i) sigma, printed as "< 8.68 sqrt(beta) sigma",
    which is false (the series exceeds 8.68 by 0.0038).

    Print it with ``mpmath.nstr(value, dps)`` (mpf prints at the global mpmath precision).
    Summed term by term until a term drops below 10^-(dps+10); for i >= 8 successive terms shrink by a
    factor <= 0.75, so the neglected tail is below 3 times the last term.

    Args:
        dps: number of correct decimal digits, an integer >= 1; default 30.

    Returns:
        the constant c as an ``mpmath.mpf``.

    Raises:
        ValueError: ``dps`` is not a positive integer.
    """
    dps = V.positive_int("dps", dps)
    return _lemma8_constant(dps)


def _lemma8_constant(dps: int = 30) -> mpmath.mpf:
    """lemma8_constant for a validated ``dps``."""
    import mpmath

    with mpmath.workdps(dps + 15):
        eps = mpmath.mpf(10) ** (-(dps + 10))
        total = mpmath.sqrt(1 / mpmath.pi)
        i = 0
        while True:
            r = mpmath.sqrt(i) + 1
            term = (r + mpmath.exp(-r)) * mpmath.power(2, -mpmath.mpf(i) / 2)
            total += term
            if i >= 8 and term < eps:
                break
            i += 1
        return +total


@functools.cache
def _constant_float() -> float:
    """LEMMA8_CONSTANT: the series as the smallest float >= its exact value (conservative)."""
    import mpmath

    exact = _lemma8_constant(40)
    value = float(exact)
    if mpmath.mpf(value) < exact:
        value = math.nextafter(value, math.inf)
    return value


def __dir__():
    return sorted(set(globals()) | {"LEMMA8_CONSTANT"})


def __getattr__(name: str):
    # PEP 562: LEMMA8_CONSTANT is computed with mpmath on first access, not at import.
    if name == "LEMMA8_CONSTANT":
        return _constant_float()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def lemma8_mean_bound(beta: float, sigma: float) -> float:
    """Lemma 8's bound on the expected maximum of the noise path on [0, 1].

    E[max_[0,1] g] <= c sqrt(beta) sigma, c = LEMMA8_CONSTANT (not the paper's 8.68, which is below c).

    Source: Wang & Hegde 2019, Lemma 8 (proof in Appendix A). privcal treats this bound as the
    paper's assumption; it is checked by Monte Carlo in tests/test_supremum.py.

    Args:
        beta: kernel parameter beta of the path's covariance sigma^2 exp(-beta |x - y|), in (0, inf).
        sigma: the path's standard deviation sigma, in (0, inf).

    Returns:
        the bound c sqrt(beta) sigma (units of the path), in (0, inf).

    Raises:
        ValueError: an argument is outside its range.
    """
    beta = V.positive("beta", beta)
    sigma = V.positive("sigma", sigma)
    return _lemma8_mean_bound(beta, sigma)


def _lemma8_mean_bound(beta: float, sigma: float) -> float:
    """lemma8_mean_bound for validated inputs."""
    return _constant_float() * math.sqrt(beta) * sigma


def lemma8_tail_paper(u: float) -> float:
    """Lemma 8's tail as printed: P(max g >= 8.68 sqrt(beta) sigma + u) <= exp(-u^2/2), u > 0.

    Source: Wang & Hegde 2019, Lemma 8. Valid only for sigma <= 1 (and with c = LEMMA8_CONSTANT in
    place of 8.68), where it is implied by the Borell-TIS form. It does not scale with sigma, and for
    sigma > 1 and small beta it is false, e.g. beta = 0.01, sigma = 3, u = 4:
    P(max g >= 8.68*0.1*3 + 4) >= P(g(0) >= 6.604) = 0.0139 > exp(-8) = 3.4e-4.

    Args:
        u: the excess over the mean bound (units of the path), in (0, inf).

    Returns:
        the printed tail probability bound, in (0, 1).

    Raises:
        ValueError: ``u`` is outside its range.
    """
    u = V.positive("u", u)
    return _lemma8_tail_paper(u)


def _lemma8_tail_paper(u: float) -> float:
    """lemma8_tail_paper for a validated ``u``."""
    return math.exp(-0.5 * u * u)


def lemma8_tail_borell_tis(u: float, sigma: float) -> float:
    """Valid Lemma 8 tail: P(max g >= c sqrt(beta) sigma + u) <= exp(-u^2 / (2 sigma^2)), u > 0.

    Borell-TIS (Adler & Taylor 2007, Thm 2.1.1): P(max g - E[max g] > u) <= exp(-u^2/(2 s^2)) with
    s^2 = sup_x Var g(x) = sigma^2; combined with E[max g] <= c sqrt(beta) sigma (Lemma 8's mean bound,
    c = LEMMA8_CONSTANT). Valid for every beta, sigma > 0 given that mean bound.

    Args:
        u: the excess over the mean bound (units of the path), in (0, inf).
        sigma: the path's standard deviation sigma, in (0, inf).

    Returns:
        the tail probability bound, in (0, 1).

    Raises:
        ValueError: an argument is outside its range.
    """
    u = V.positive("u", u)
    sigma = V.positive("sigma", sigma)
    return _lemma8_tail_borell_tis(u, sigma)


def _lemma8_tail_borell_tis(u: float, sigma: float) -> float:
    """lemma8_tail_borell_tis for validated inputs."""
    return math.exp(-0.5 * (u / sigma) ** 2)


def _validate_level(k, beta, sigma) -> tuple[float, float, float]:
    """Validate (k, beta, sigma): the level, the kernel beta and the path's standard deviation."""
    k = V.positive("k", k)
    beta = V.positive("beta", beta)
    sigma = V.positive("sigma", sigma)
    return k, beta, sigma


def _margin(k: float, beta: float, sigma: float) -> float:
    """k - c sqrt(beta) sigma (validated inputs)."""
    return k - _lemma8_mean_bound(beta, sigma)


def thm5_condition_paper(k: float, beta: float, sigma: float) -> bool:
    """Theorem 5's printed proviso 2k > 8.68 sqrt(beta) sigma (Wang & Hegde 2019, Thm 5).

    Args:
        k: the level k bounding the noise path, in (0, inf).
        beta: kernel parameter beta of the path's covariance sigma^2 exp(-beta |x - y|), in (0, inf).
        sigma: the path's standard deviation sigma, in (0, inf).

    Returns:
        whether 2k > 8.68 sqrt(beta) sigma.

    Raises:
        ValueError: an argument is outside its range.
    """
    k, beta, sigma = _validate_level(k, beta, sigma)
    return thm5_condition_paper_unchecked(k, beta, sigma)


def thm5_condition_paper_unchecked(k: float, beta: float, sigma: float) -> bool:
    """:func:`thm5_condition_paper` without validation, for callers that validated the arguments
    (``privcal.calibrators.dpq``): ``2k > 8.68 sqrt(beta) sigma`` as printed.

    Args:
        k: the noise bound k, a float in [0, inf) (not checked).
        beta: kernel parameter, a float in (0, inf) (not checked).
        sigma: noise scale, a float in (0, inf) (not checked).

    Returns:
        whether the printed condition holds.
    """
    return 2.0 * k > LEMMA8_CONSTANT_PAPER * math.sqrt(beta) * sigma


def thm5_condition(k: float, beta: float, sigma: float) -> bool:
    """Validity condition of ``thm5_failure`` and ``sup_abs_tail``: k > c sqrt(beta) sigma.

    c = LEMMA8_CONSTANT; the tail bound needs the level k above the mean bound of max g.

    Args:
        k: the level k bounding the noise path, in (0, inf).
        beta: kernel parameter beta of the path's covariance sigma^2 exp(-beta |x - y|), in (0, inf).
        sigma: the path's standard deviation sigma, in (0, inf).

    Returns:
        whether k > c sqrt(beta) sigma.

    Raises:
        ValueError: an argument is outside its range.
    """
    k, beta, sigma = _validate_level(k, beta, sigma)
    return _thm5_condition(k, beta, sigma)


def _thm5_condition(k: float, beta: float, sigma: float) -> bool:
    """thm5_condition for validated inputs."""
    return _margin(k, beta, sigma) > 0


def sup_abs_tail(k: float, beta: float, sigma: float) -> float:
    """Bound on P(sup_[0,1] |g| > k) for one noise path g ~ GP(0, sigma^2 exp(-beta|x-y|)).

    p = min(1, 2 exp(-(k - c sqrt(beta) sigma)^2 / (2 sigma^2))),  valid for k > c sqrt(beta) sigma,

    from P(sup|g| > k) <= P(max g > k) + P(min g < -k) = 2 P(max g > k) (g and -g have the same law)
    and the Borell-TIS tail ``lemma8_tail_borell_tis`` with u = k - c sqrt(beta) sigma. Source: Wang &
    Hegde 2019, Lemma 8 (mean bound), Borell-TIS.

    Args:
        k: the level k bounding the noise path, in (0, inf).
        beta: kernel parameter beta of the path's covariance sigma^2 exp(-beta |x - y|), in (0, inf).
        sigma: the path's standard deviation sigma, in (0, inf).

    Returns:
        the bound p on P(sup |g| > k), in (0, 1].

    Raises:
        ValueError: an argument is outside its range.
        InfeasibleError: k <= c sqrt(beta) sigma.
    """
    k, beta, sigma = _validate_level(k, beta, sigma)
    return _sup_abs_tail(k, beta, sigma)


def _sup_abs_tail(k: float, beta: float, sigma: float) -> float:
    """sup_abs_tail for validated inputs."""
    margin = _margin(k, beta, sigma)
    if not margin > 0:
        raise InfeasibleError(
            f"the sup-norm tail needs k > c*sqrt(beta)*sigma = {k - margin:.6g} "
            f"(c = LEMMA8_CONSTANT = {_constant_float():.6f}), got k = {k:g}"
        )
    return min(1.0, 2.0 * math.exp(-0.5 * (margin / sigma) ** 2))


def range_tail_borell_tis(k: float, beta: float, sigma: float) -> float:
    """Bound on P(max g - min g > 2k) for one path: the range of a single path, directly.

    p = exp(-(k - c sqrt(beta) sigma)^2 / (sigma^2 (1 - exp(-beta)))),  valid for k > c sqrt(beta) sigma.

    The range is the supremum over [0,1]^2 of h(x, y) = g(x) - g(y), a centred Gaussian process with
    E[sup h] = 2 E[max g] <= 2 c sqrt(beta) sigma and sup Var h = 2 sigma^2 (1 - exp(-beta)); Borell-TIS
    with u = 2k - 2 c sqrt(beta) sigma gives the formula. Tighter than ``sup_abs_tail`` but it only
    controls differences g(x) - g(y) of the *same* path; Theorem 5's proof also compares paths of
    different actions (see ``thm5_failure``), so the calibrator does not use it.
    Source: Wang & Hegde 2019, Lemma 8 (mean bound); Adler & Taylor 2007, Thm 2.1.1.

    Args:
        k: the level k bounding the noise path, in (0, inf).
        beta: kernel parameter beta of the path's covariance sigma^2 exp(-beta |x - y|), in (0, inf).
        sigma: the path's standard deviation sigma, in (0, inf).

    Returns:
        the bound on P(max g - min g > 2k), in (0, 1).

    Raises:
        ValueError: an argument is outside its range.
        InfeasibleError: k <= c sqrt(beta) sigma.
    """
    k, beta, sigma = _validate_level(k, beta, sigma)
    return _range_tail_borell_tis(k, beta, sigma)


def _range_tail_borell_tis(k: float, beta: float, sigma: float) -> float:
    """range_tail_borell_tis for validated inputs."""
    margin = _margin(k, beta, sigma)
    if not margin > 0:
        raise InfeasibleError(
            f"the range tail needs k > c*sqrt(beta)*sigma = {k - margin:.6g}, got k = {k:g}"
        )
    return math.exp(-(margin / sigma) ** 2 / (-math.expm1(-beta)))


def _paper_exponent(k: float, beta: float, sigma: float) -> float:
    """(2k - 8.68 sqrt(beta) sigma)^2 / 2 (validated inputs); InfeasibleError if 2k <= 8.68 sqrt(beta) sigma."""
    gap = 2.0 * k - LEMMA8_CONSTANT_PAPER * math.sqrt(beta) * sigma
    if not gap > 0:
        raise InfeasibleError(
            "Theorem 5 requires 2k > 8.68*sqrt(beta)*sigma, got "
            f"2k = {2.0 * k:g} <= {LEMMA8_CONSTANT_PAPER * math.sqrt(beta) * sigma:.6g}"
        )
    return 0.5 * gap * gap


def thm5_failure_paper(k: float, beta: float, sigma: float, resets: int) -> float:
    """Theorem 5's failure term as printed: J exp(-(2k - 8.68 sqrt(beta) sigma)^2 / 2), J = resets.

    Source: Wang & Hegde 2019, Theorem 5 (the amount added to delta). Literal paper version: requires
    2k > 8.68 sqrt(beta) sigma (InfeasibleError otherwise; App. E.3's k = 23, sigma = 0.313,
    beta = 1/6.19e-5 violates it). It is not a bound on what the proof needs: it ignores sigma in the
    exponent, counts the mean of the range once instead of twice, counts one path per reset although
    there is one per action, and can exceed 1. See ``thm5_failure``.

    Args:
        k: the level k bounding the noise path, in (0, inf).
        beta: kernel parameter beta of the path's covariance sigma^2 exp(-beta |x - y|), in (0, inf).
        sigma: the path's standard deviation sigma, in (0, inf).
        resets: J, the number of reset periods (noise paths drawn per action), an integer >= 1.

    Returns:
        the printed failure term, in (0, inf) (it can exceed 1).

    Raises:
        ValueError: an argument is outside its range.
        InfeasibleError: 2k <= 8.68 sqrt(beta) sigma.
    """
    k, beta, sigma = _validate_level(k, beta, sigma)
    resets = V.positive_int("resets", resets)
    return _thm5_failure_paper(k, beta, sigma, resets)


def _thm5_failure_paper(k: float, beta: float, sigma: float, resets: int) -> float:
    """thm5_failure_paper for validated inputs."""
    return resets * math.exp(-_paper_exponent(k, beta, sigma))


def thm5_failure_e3_paper(k: float, beta: float, sigma: float, resets: int) -> float:
    """App. E.3's rewrite of the failure term: 1 - (1 - exp(-(2k - 8.68 sqrt(beta) sigma)^2 / 2))^J.

    Source: Wang & Hegde 2019, Appendix E.3 ("the probability that all J sample paths are bounded").
    Same validity as ``thm5_failure_paper`` (requires 2k > 8.68 sqrt(beta) sigma) and the same defects.

    Args:
        k: the level k bounding the noise path, in (0, inf).
        beta: kernel parameter beta of the path's covariance sigma^2 exp(-beta |x - y|), in (0, inf).
        sigma: the path's standard deviation sigma, in (0, inf).
        resets: J, the number of reset periods (noise paths drawn per action), an integer >= 1.

    Returns:
        the App. E.3 failure term, in (0, 1].

    Raises:
        ValueError: an argument is outside its range.
        InfeasibleError: 2k <= 8.68 sqrt(beta) sigma.
    """
    k, beta, sigma = _validate_level(k, beta, sigma)
    resets = V.positive_int("resets", resets)
    return thm5_failure_e3_paper_unchecked(k, beta, sigma, resets)


def thm5_failure_e3_paper_unchecked(k: float, beta: float, sigma: float, resets: int) -> float:
    """:func:`thm5_failure_e3_paper` without validation, for callers that validated the arguments
    (``privcal.calibrators.dpq``): the same value.

    Args:
        k: the noise bound k, a float in [0, inf) (not checked).
        beta: kernel parameter, a float in (0, inf) (not checked).
        sigma: noise scale, a float in (0, inf) (not checked).
        resets: J, the number of noise-path redraws, an int >= 1 (not checked).

    Returns:
        the failure probability, in [0, 1].
    """
    p = math.exp(-_paper_exponent(k, beta, sigma))
    return -math.expm1(resets * math.log1p(-p)) if p < 1 else 1.0


def thm5_failure(k: float, beta: float, sigma: float, resets: int, *, actions: int) -> float:
    r"""Failure probability Theorem 5 must add to delta, as its proof needs it.

    delta_tail = 1 - (1 - p)^(J m),   p = min(1, 2 exp(-(k - c sqrt(beta) sigma)^2 / (2 sigma^2))),
    J = resets, m = actions, c = LEMMA8_CONSTANT; valid for k > c sqrt(beta) sigma (InfeasibleError
    otherwise; ``thm5_condition`` tests it).

    Derivation. The proof of Thm 5 bounds one update by alpha L (2 + |g(s') - g(s)|) / B and needs
    |g(s') - g(s)| <= 2k for every pair of noise values entering one TD error: g_{a_t}(s_t) and
    g_{a*}(s_{t+1}) (Alg. 1, lines 19-20), where a* may differ from a_t, so the pair may come from two
    different paths. The event E = {sup_x |g_a(x)| <= k for every action a in every reset period}
    implies every such difference is <= 2k (bounding each path's range would not cover the
    cross-action pairs). Per path, P(sup |g| > k) <= 2 P(max g > k) <= p (``sup_abs_tail``: symmetry,
    Borell-TIS with sup Var = sigma^2, Lemma 8's mean bound). Algorithm 1 draws m independent paths
    (one per action) in each of the J reset periods, so P(not E) <= 1 - (1 - p)^(J m) <= J m p.
    Conservative choices: J m paths (not J), both tails, c = the series (not 8.68).

    Source: Wang & Hegde 2019, Theorem 5 and its proof, Lemma 8, Appendix E.3; Borell-TIS inequality
    (Adler & Taylor 2007, Thm 2.1.1). Assumes S = [0, 1].

    Args:
        k: the level k bounding the noise path, in (0, inf).
        beta: kernel parameter beta of the path's covariance sigma^2 exp(-beta |x - y|), in (0, inf).
        sigma: the path's standard deviation sigma, in (0, inf).
        resets: J, the number of reset periods (noise paths drawn per action), an integer >= 1.
        actions: m, the number of actions (one noise path each per reset period), an integer >= 1.

    Returns:
        the failure probability to add to delta, in (0, 1].

    Raises:
        ValueError: an argument is outside its range.
        InfeasibleError: k <= c sqrt(beta) sigma.
    """
    k, beta, sigma = _validate_level(k, beta, sigma)
    resets = V.positive_int("resets", resets)
    actions = V.positive_int("actions", actions)
    return _thm5_failure(k, beta, sigma, resets, actions=actions)


def _thm5_failure(k: float, beta: float, sigma: float, resets: int, *, actions: int) -> float:
    """thm5_failure for validated inputs."""
    p = _sup_abs_tail(k, beta, sigma)
    if p >= 1.0:
        return 1.0
    return min(1.0, -math.expm1(resets * actions * math.log1p(-p)))
