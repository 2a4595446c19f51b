"""The Gaussian (and Gaussian-process) mechanism: classic calibration and the exact privacy profile.

Two families live here, side by side:

* the *classic* calibration sigma = sqrt(2 ln(c/delta)) * sensitivity / epsilon, with c = 1.25
  (Dwork & Roth 2014, Thm A.1; Wang & Hegde 2019, Prop. 3/4 and Claim 13) or c = 2 (Hall, Rinaldo &
  Wasserman 2013, Prop. 3). Both are proved only for 0 < epsilon < 1.
* the *exact* (analytic) profile of Balle & Wang 2018 (arXiv 1805.06530, Thm 8):

      delta(epsilon; mu) = Phi(mu/2 - epsilon/mu) - e^epsilon * Phi(-mu/2 - epsilon/mu),  mu = sensitivity/sigma,

  which is the smallest delta for which the mechanism is (epsilon, delta)-DP, and its inverses.

The Gaussian-process mechanism with RKHS-norm sensitivity Delta (Hall et al. 2013; Wang & Hegde 2019,
Prop. 4) has exactly this profile with mu = Delta/sigma, so every function here applies to it.

Numerics: in the tail (mu/2 < epsilon/mu) the Gaussian factor exp(-a^2/2) is taken out exactly and
the rest is a difference of two ``scipy.special.erfcx`` values; elsewhere ``log_ndtr`` in log space.
Where the float64 difference could carry a relative error above 1e-11 (strong cancellation, when
epsilon/mu is much larger than mu) it is recomputed with mpmath at a precision chosen from the
cancellation, so relative accuracy stays near 1e-11 or better for epsilon up to 100 and delta down
to 1e-300. Inverses are found by bracketing, aiming a hair below delta (beyond that evaluation
error): the epsilon returned never lies below the true one, the mu never above.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import special

from .. import _roots
from .. import _validate as V

__all__ = [
    "DWORK_ROTH_CONSTANT",
    "HALL_CONSTANT",
    "sigma_classic",
    "sigma_dwork_roth",
    "sigma_hall",
    "delta_exact",
    "log_delta_exact",
    "epsilon_exact",
    "mu_exact",
    "sigma_exact",
    "delta_exact_unchecked",
    "epsilon_exact_unchecked",
    "sigma_exact_unchecked",
    "mu_exact_unchecked",
]

#: c in sqrt(2 ln(c/delta)) of Dwork & Roth 2014, Thm A.1 (and Wang & Hegde 2019, Claim 13).
DWORK_ROTH_CONSTANT = 1.25
#: c in sqrt(2 ln(c/delta)) of Hall, Rinaldo & Wasserman 2013, Prop. 3.
HALL_CONSTANT = 2.0

# Largest relative error tolerated from float64 before the difference is redone with mpmath.
_FLOAT_ERROR_LIMIT = 1e-11
_EPS = float(np.finfo(float).eps)
_SQRT2 = math.sqrt(2.0)
# Root searches aim a hair below delta, so that evaluation error (kept below 1e-11) cannot make the
# answer infeasible; the bias is far below the 1e-9 accuracy promised. The calibration direction
# (mu_exact) aims lower than the accounting direction (epsilon_exact), so that a sigma calibrated here
# and then accounted here lands on the feasible side despite rounding of sigma <-> mu.
_LOG_MARGIN_EPSILON = -1e-10
_LOG_MARGIN_MU = -3e-10
# Below this a = mu/2 - epsilon/mu, log delta is log Phi(a) to far better than 1e-11 (see _log_delta_exact).
_FAR_TAIL = -1e100
# Precision (decimal digits) at which the mpmath re-evaluation gives up and returns log Phi(a) >= log delta.
_MAX_DPS = 20000
# Relative tolerance of the root searches. In the mu direction it lies inside _LOG_MARGIN_MU (the root
# brentq returns is feasible for the true profile; tests/test_gaussian.py checks this against an
# 80-digit mpmath profile); in the epsilon direction it may not at huge mu, see _feasible_up.
_RTOL = 4 * np.finfo(float).eps


def sigma_classic(
    epsilon: float, delta: float, *, sensitivity: float = 1.0, constant: float = DWORK_ROTH_CONSTANT
) -> float:
    """Classic Gaussian calibration sigma = sqrt(2 ln(c/delta)) * sensitivity / epsilon.

    Dwork & Roth 2014, Thm A.1 (c = 1.25); Hall et al. 2013, Prop. 3 (c = 2). The theorem is proved
    only for 0 < epsilon < 1, so larger epsilon raises ``ValueError`` (use :func:`sigma_exact`).

    Args:
        epsilon: target epsilon, in (0, 1).
        delta: target delta, in (0, 1) and below ``constant``.
        sensitivity: L2 sensitivity of the released function, in (0, inf); default 1.
        constant: c in sqrt(2 ln(c/delta)), in (delta, inf); default 1.25 (Dwork & Roth).

    Returns:
        sigma, the noise standard deviation (absolute, in the units of the released function).

    Raises:
        ValueError: an argument is outside its range (epsilon >= 1 included).
    """
    epsilon, delta, sensitivity, constant = _check_classic(epsilon, delta, sensitivity, constant)
    return _sigma_classic(epsilon, delta, sensitivity=sensitivity, constant=constant)


def _check_classic(epsilon, delta, sensitivity, constant) -> tuple[float, float, float, float]:
    """Validate the arguments of the classic calibration (epsilon < 1, constant > delta)."""
    epsilon = V.positive("epsilon", epsilon)
    delta = V.open_unit("delta", delta)
    sensitivity = V.positive("sensitivity", sensitivity)
    constant = V.positive("constant", constant)
    if epsilon >= 1:
        raise ValueError(
            f"epsilon must be in (0, 1) for the classic Gaussian calibration, got {epsilon!r}; "
            "for larger epsilon use the analytic method privcal.analysis.gaussian.sigma_exact"
        )
    if constant <= delta:
        raise ValueError(f"constant must exceed delta, got constant={constant!r}, delta={delta!r}")
    return epsilon, delta, sensitivity, constant


def _sigma_classic(epsilon: float, delta: float, *, sensitivity: float, constant: float) -> float:
    """sigma_classic for validated inputs."""
    return math.sqrt(2.0 * math.log(constant / delta)) * sensitivity / epsilon


def sigma_dwork_roth(epsilon: float, delta: float, *, sensitivity: float = 1.0) -> float:
    """sigma = sqrt(2 ln(1.25/delta)) * sensitivity / epsilon (Dwork & Roth 2014, Thm A.1; 0 < epsilon < 1).

    Args:
        epsilon: target epsilon, in (0, 1).
        delta: target delta, in (0, 1).
        sensitivity: L2 sensitivity of the released function, in (0, inf); default 1.

    Returns:
        sigma, the noise standard deviation (absolute).

    Raises:
        ValueError: an argument is outside its range (epsilon >= 1 included).
    """
    epsilon, delta, sensitivity, _ = _check_classic(epsilon, delta, sensitivity, DWORK_ROTH_CONSTANT)
    return _sigma_dwork_roth(epsilon, delta, sensitivity=sensitivity)


def _sigma_dwork_roth(epsilon: float, delta: float, *, sensitivity: float = 1.0) -> float:
    """sigma_dwork_roth for validated inputs."""
    return _sigma_classic(epsilon, delta, sensitivity=sensitivity, constant=DWORK_ROTH_CONSTANT)


def sigma_hall(epsilon: float, delta: float, *, sensitivity: float = 1.0) -> float:
    """sigma = sqrt(2 ln(2/delta)) * sensitivity / epsilon (Hall et al. 2013, Prop. 3; 0 < epsilon < 1).

    Args:
        epsilon: target epsilon, in (0, 1).
        delta: target delta, in (0, 1).
        sensitivity: L2 (or RKHS-norm) sensitivity, in (0, inf); default 1.

    Returns:
        sigma, the noise standard deviation (absolute).

    Raises:
        ValueError: an argument is outside its range (epsilon >= 1 included).
    """
    epsilon, delta, sensitivity, _ = _check_classic(epsilon, delta, sensitivity, HALL_CONSTANT)
    return _sigma_hall(epsilon, delta, sensitivity=sensitivity)


def _sigma_hall(epsilon: float, delta: float, *, sensitivity: float = 1.0) -> float:
    """sigma_hall for validated inputs."""
    return _sigma_classic(epsilon, delta, sensitivity=sensitivity, constant=HALL_CONSTANT)


# ---------------------------------------------------------------------------------------------------
# exact profile (Balle & Wang 2018)


def _log_delta_exact(epsilon: float, mu: float) -> float:
    """log delta(epsilon; mu) for validated epsilon >= 0, mu > 0 (may be -inf)."""
    if math.isinf(mu):
        return 0.0  # mu = inf: no noise, delta = 1 for every finite epsilon
    a = mu / 2.0 - epsilon / mu
    b = -mu / 2.0 - epsilon / mu
    if a < 0:
        # Tail: Phi(x) = erfcx(-x/sqrt2) exp(-x^2/2) / 2 and b^2 - a^2 = 2 epsilon, so
        # delta = exp(-a^2/2) (erfcx(-a/sqrt2) - erfcx(-b/sqrt2)) / 2: the factor exp(-a^2/2) is taken
        # out exactly and only the erfcx difference can cancel.
        eu = float(special.erfcx(-a / _SQRT2))
        ew = float(special.erfcx(-b / _SQRT2))
        diff = eu - ew
        if diff > 0 and 4 * _EPS * eu <= _FLOAT_ERROR_LIMIT * diff:
            return -0.5 * a * a + math.log(0.5 * diff)
        if a < _FAR_TAIL:
            # delta <= Phi(a) = exp(-a^2/2) erfcx(-a/sqrt2) / 2 < exp(-5e199): log Phi(a) is log delta to
            # far better than 1e-11 relative (the dropped log(1 - e^eps Phi(b)/Phi(a)) is a few hundred
            # nats at most), and mpmath's erfc overflows near |a| = 1e154
            return -0.5 * a * a + math.log(0.5 * eu)
        return _log_delta_mp(epsilon, mu, math.log(ew / eu) if ew > 0 else -math.inf)
    log_pa = float(special.log_ndtr(a))
    log_pb = epsilon + float(special.log_ndtr(b))
    if log_pb == -math.inf:
        return log_pa
    log_r = log_pb - log_pa  # log of e^eps Phi(b) / Phi(a), always < 0 in exact arithmetic
    # log_r carries an absolute error of a few ulps of |log_pa| + eps; 1 - r divides it.
    scale = 4 * _EPS * (abs(log_pa) + epsilon + 1.0)
    if log_r >= 0 or scale > _FLOAT_ERROR_LIMIT * -math.expm1(log_r):
        return _log_delta_mp(epsilon, mu, log_r)
    return log_pa + math.log1p(-math.exp(log_r))


def _log_delta_mp(epsilon: float, mu: float, log_r: float) -> float:
    """The same difference with mpmath, precise enough for the cancellation that log_r shows."""
    import mpmath  # here, not at the top: only this rare path needs it (``import privcal`` stays lighter)

    lost = 16 if log_r >= 0 else max(0.0, -math.log10(max(-math.expm1(log_r), 1e-300)))
    dps = int(30 + 2 * lost + math.log10(1.0 + epsilon + mu))
    while True:
        with mpmath.workdps(dps):
            eps = mpmath.mpf(epsilon)
            m = mpmath.mpf(mu)
            a = m / 2 - eps / m
            b = -m / 2 - eps / m
            d = mpmath.ncdf(a) - mpmath.exp(eps) * mpmath.ncdf(b)
            if d > 0:
                return float(mpmath.log(d))
        # delta > 0 for every finite epsilon and mu > 0: the cancellation was deeper than log_r showed
        # (e.g. epsilon = 0 and mu = 1e-100, where delta = 2 Phi(mu/2) - 1 ~ 4e-101); more digits
        dps *= 2
        if dps > _MAX_DPS:  # never reached in the tests; the upper bound delta <= Phi(a) is conservative
            return float(special.log_ndtr(mu / 2.0 - epsilon / mu))


def log_delta_exact(epsilon: float, mu: float) -> float:
    """log of the exact Gaussian profile delta(epsilon; mu) (Balle & Wang 2018, Thm 8).

    ``mu`` = sensitivity / sigma (for T composed releases, sqrt(T) * sensitivity / sigma).

    Args:
        epsilon: epsilon at which the profile is evaluated, in [0, inf).
        mu: sensitivity / sigma (dimensionless), in (0, inf]; inf means no noise.

    Returns:
        log delta(epsilon; mu), in [-inf, 0] (natural log).

    Raises:
        ValueError: an argument is outside its range.
    """
    epsilon = V.nonnegative("epsilon", epsilon)
    mu = V.positive("mu", mu, allow_inf=True)
    return _log_delta_exact(epsilon, mu)


def delta_exact(epsilon: float, mu: float) -> float:
    """Exact Gaussian privacy profile delta(epsilon; mu) = Phi(mu/2 - eps/mu) - e^eps Phi(-mu/2 - eps/mu).

    Balle & Wang 2018 (arXiv 1805.06530), Thm 8; mu = sensitivity / sigma. The smallest delta for
    which the Gaussian (or Gaussian-process, Prop. 4 of Wang & Hegde 2019) mechanism is
    (epsilon, delta)-DP.

    Args:
        epsilon: epsilon at which the profile is evaluated, in [0, inf).
        mu: sensitivity / sigma (dimensionless), in (0, inf]; inf means no noise.

    Returns:
        delta, in [0, 1].

    Raises:
        ValueError: an argument is outside its range.
    """
    epsilon = V.nonnegative("epsilon", epsilon)
    mu = V.positive("mu", mu, allow_inf=True)
    return delta_exact_unchecked(epsilon, mu)


def delta_exact_unchecked(epsilon: float, mu: float) -> float:
    """:func:`delta_exact` without validation, arguments already validated: the same value.

    Args:
        epsilon: a float in [0, inf) (not checked).
        mu: sensitivity / sigma, a float in (0, inf] (not checked).

    Returns:
        delta, in [0, 1].
    """
    return math.exp(_log_delta_exact(epsilon, mu))


def epsilon_exact(delta: float, mu: float) -> float:
    """Smallest epsilon >= 0 with delta_exact(epsilon, mu) <= delta (Balle & Wang 2018, inverse in epsilon).

    The root of log delta(epsilon; mu) = log(delta) - 1e-10 is returned (moved up until the float64
    profile is below that target), so the result is never below the true epsilon.

    Args:
        delta: target delta, in (0, 1).
        mu: sensitivity / sigma (dimensionless), in (0, inf).

    Returns:
        epsilon, in [0, inf): an upper bound on the smallest epsilon, within about 1e-9 relative.

    Raises:
        ValueError: an argument is outside its range.
    """
    delta = V.open_unit("delta", delta)
    mu = V.positive("mu", mu)
    return epsilon_exact_unchecked(delta, mu)


def epsilon_exact_unchecked(delta: float, mu: float) -> float:
    """:func:`epsilon_exact` without validation, arguments already validated: the same upper bound on
    epsilon.

    Args:
        delta: a float in (0, 1) (not checked).
        mu: sensitivity / sigma, a float in (0, inf) (not checked).

    Returns:
        epsilon, in [0, inf).
    """
    log_delta = math.log(delta) + _LOG_MARGIN_EPSILON
    if _log_delta_exact(0.0, mu) <= log_delta:
        return 0.0
    # Upper end: delta(eps) <= P(L > eps) for the privacy loss L ~ N(mu^2/2, mu^2).
    hi = mu * mu / 2.0 - mu * float(special.ndtri_exp(log_delta))
    while _log_delta_exact(hi, mu) > log_delta:  # guards rounding at the edge
        hi = hi * 1.01 + 1e-12
    lo = 0.0
    f = lambda e: _log_delta_exact(e, mu) - log_delta  # noqa: E731
    root = _roots.brentq(f, lo, hi, xtol=1e-300, rtol=_RTOL, maxiter=200)
    # At huge mu (about 1e6 and beyond) a = mu/2 - eps/mu cancels and one rounding of the root moves
    # log delta by more than the margin: step up until the float64 profile is below the target.
    return float(_feasible_up(float(root), f, hi))


def mu_exact(epsilon: float, delta: float) -> float:
    """Largest mu = sensitivity/sigma with delta_exact(epsilon, mu) <= delta (Balle & Wang 2018, Alg. 1).

    The root of log delta(epsilon; mu) = log(delta) - 3e-10 is returned, so the mu returned never
    exceeds the true one.

    Args:
        epsilon: target epsilon, in [0, inf).
        delta: target delta, in (0, 1).

    Returns:
        mu = sensitivity / sigma (dimensionless), in (0, inf).

    Raises:
        ValueError: an argument is outside its range.
    """
    epsilon = V.nonnegative("epsilon", epsilon)
    delta = V.open_unit("delta", delta)
    return mu_exact_unchecked(epsilon, delta)


def mu_exact_unchecked(epsilon: float, delta: float) -> float:
    """:func:`mu_exact` without validation, arguments already validated: the same mu.

    Args:
        epsilon: a float in (0, inf) (not checked).
        delta: a float in (0, 1) (not checked).
    """
    log_delta = math.log(delta) + _LOG_MARGIN_MU
    # Feasible start: delta(eps; mu) <= Phi(mu/2 - eps/mu) <= delta when mu/2 - eps/mu <= z.
    z = float(special.ndtri_exp(log_delta))
    lo = z + math.sqrt(z * z + 2.0 * epsilon)
    if not lo > 0:
        lo = 1e-300
    f = lambda m: _log_delta_exact(epsilon, m) - log_delta  # noqa: E731
    while f(lo) > 0:  # rounding at the edge
        lo /= 2.0
    hi = 2.0 * lo
    while f(hi) <= 0:
        lo, hi = hi, 2.0 * hi
    root = _roots.brentq(f, lo, hi, xtol=1e-300, rtol=_RTOL, maxiter=200)
    return float(root)


def sigma_exact(epsilon: float, delta: float, *, sensitivity: float = 1.0) -> float:
    """Smallest sigma making the Gaussian mechanism (epsilon, delta)-DP: sensitivity / mu_exact(epsilon, delta).

    Balle & Wang 2018 (arXiv 1805.06530), the analytic Gaussian mechanism; valid for every epsilon > 0.

    Args:
        epsilon: target epsilon, in (0, inf).
        delta: target delta, in (0, 1).
        sensitivity: L2 (or RKHS-norm) sensitivity of the released function, in (0, inf); default 1.

    Returns:
        sigma, the noise standard deviation (absolute, not a noise multiplier), rounded up.

    Raises:
        ValueError: an argument is outside its range.
    """
    epsilon = V.positive("epsilon", epsilon)
    delta = V.open_unit("delta", delta)
    sensitivity = V.positive("sensitivity", sensitivity)
    return sigma_exact_unchecked(epsilon, delta, sensitivity=sensitivity)


def sigma_exact_unchecked(epsilon: float, delta: float, *, sensitivity: float = 1.0) -> float:
    """:func:`sigma_exact` without validation, arguments already validated: the same sigma.

    Args:
        epsilon: a float in (0, inf) (not checked).
        delta: a float in (0, 1) (not checked).
        sensitivity: a float in (0, inf) (not checked); default 1.

    Returns:
        sigma, rounded up.
    """
    mu = mu_exact_unchecked(epsilon, delta)
    # Round sigma up so that sensitivity/sigma <= mu survives the division.
    return float(np.nextafter(sensitivity / mu, math.inf))


def _feasible_up(x: float, f, hi: float) -> float:
    """Smallest float >= x (up to hi) with f <= 0, for f decreasing through its root."""
    step = max(abs(x), 1e-300) * _RTOL
    while f(x) > 0 and x < hi:
        x = min(hi, x + step)
        step *= 2.0
    return x
