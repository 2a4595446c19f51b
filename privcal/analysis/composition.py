r"""Composition of Gaussian / Gaussian-process releases, and general composition theorems.

Three families, side by side (all pure functions of numbers):

* *exact*: T' releases of a Gaussian or Gaussian-process mechanism with (RKHS-norm) sensitivity D and
  noise std sigma compose to ONE Gaussian with mu = sqrt(T') * D / sigma (Dong, Roth & Su 2022,
  Cor. 3.3, with the Balle & Wang 2018 profile); this is the lower limit every other bound is
  compared with (``*_composed_exact``).
* *Wang & Hegde 2019, Thm 5* (NeurIPS, "Privacy-preserving Q-learning with functional noise"): the
  epsilon-expression of the proof, its inverse in delta, the closed-form sigma at the end of the proof,
  the form printed in the theorem statement and the "best known" bound quoted in the proof, each as
  printed (``thm5_*_paper``, ``sigma_kov_quoted_paper``).
* *Kairouz, Oh & Viswanath 2015* optimal composition, DRV advanced and basic composition, and KOV
  with the exact per-step Gaussian profile live in :mod:`privcal.analysis.kov`; their public names are
  re-exported here (``privcal.analysis.composition.kov_epsilon`` is ``privcal.analysis.kov.kov_epsilon``).
"""

from __future__ import annotations

import math

import numpy as np

from .. import _validate as V
from . import gaussian as G
from .kov import (
    log_e_plus,
    basic_epsilon,
    drv_epsilon,
    kov_delta,
    kov_epsilon,
    kov_epsilon_approx,
    kov_epsilon_grid_paper,
    kov_gaussian_delta,
    kov_gaussian_delta_with_step,
    kov_gaussian_epsilon,
    kov_gaussian_epsilon_with_step,
)

__all__ = [
    "composed_mu",
    "epsilon_composed_exact",
    "delta_composed_exact",
    "sigma_composed_exact",
    "thm5_epsilon_paper",
    "thm5_delta_paper",
    "thm5_sigma_proof_paper",
    "thm5_sigma_statement_paper",
    "sigma_kov_quoted_paper",
    # re-exported from privcal.analysis.kov
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


# ---------------------------------------------------------------------------------------------------
# exact composition of Gaussian releases


def _validate_paper_target(epsilon, delta, steps, sensitivity) -> tuple[float, float, float, float]:
    """Validate (epsilon, delta, steps, sensitivity) of a paper formula solved for sigma (steps T' real)."""
    epsilon = V.positive("epsilon", epsilon)
    delta = V.open_unit("delta", delta)
    steps = _steps_real(steps)
    sensitivity = V.positive("sensitivity", sensitivity)
    return epsilon, delta, steps, sensitivity


def _validate_composed(sigma, steps, sensitivity) -> tuple[float, int, float]:
    """Validate (sigma, steps, sensitivity) of T' composed Gaussian releases."""
    sigma = V.positive("sigma", sigma)
    steps = V.positive_int("steps", steps)
    sensitivity = V.positive("sensitivity", sensitivity)
    return sigma, steps, sensitivity


def _finite_mu(mu: float, sigma: float, steps: int, sensitivity: float) -> float:
    """``mu`` if it is in (0, inf) in float64, else ValueError naming the user's arguments."""
    if not 0.0 < mu < math.inf:
        raise ValueError(
            f"sqrt(steps) * sensitivity / sigma must be in (0, inf) in float64, got sigma={sigma!r}, "
            f"steps={steps!r}, sensitivity={sensitivity!r} (mu = {mu!r})"
        )
    return mu


def composed_mu(sigma: float, *, steps: int, sensitivity: float = 1.0) -> float:
    """mu of T' composed Gaussian releases: mu = sqrt(steps) * sensitivity / sigma.

    Dong, Roth & Su 2022 (Gaussian differential privacy), Cor. 3.3: the composition of ``steps``
    mu0-GDP mechanisms (mu0 = sensitivity/sigma, Gaussian or Gaussian-process mechanism with RKHS-norm
    sensitivity) is exactly sqrt(steps) * mu0-GDP, also under adaptive composition.

    Args:
        sigma: noise standard deviation of each release (absolute), in (0, inf).
        steps: number of composed releases T', an integer >= 1.
        sensitivity: L2 (or RKHS-norm) sensitivity of each release, in (0, inf); default 1.

    Returns:
        mu (dimensionless), in [0, inf].

    Raises:
        ValueError: an argument is outside its range.
    """
    sigma, steps, sensitivity = _validate_composed(sigma, steps, sensitivity)
    return _composed_mu(sigma, steps=steps, sensitivity=sensitivity)


def _composed_mu(sigma: float, *, steps: int, sensitivity: float = 1.0) -> float:
    """composed_mu for validated inputs."""
    return math.sqrt(steps) * sensitivity / sigma


def epsilon_composed_exact(sigma: float, delta: float, *, steps: int, sensitivity: float = 1.0) -> float:
    """Smallest epsilon of T' composed Gaussian releases at delta: epsilon_exact(delta, sqrt(T') D / sigma).

    Exact privacy profile of the composition (Balle & Wang 2018, Thm 8, with Dong, Roth & Su 2022,
    Cor. 3.3); never below the true value (see ``privcal.analysis.gaussian.epsilon_exact``).

    Args:
        sigma: noise standard deviation of each release (absolute), in (0, inf).
        delta: target delta, in (0, 1).
        steps: number of composed releases T', an integer >= 1.
        sensitivity: L2 (or RKHS-norm) sensitivity of each release, in (0, inf); default 1.

    Returns:
        epsilon, in [0, inf): an upper bound on the smallest epsilon, within about 1e-9 relative.

    Raises:
        ValueError: an argument is outside its range, or mu = sqrt(steps) D / sigma is 0 or inf in float64.
    """
    delta = V.open_unit("delta", delta)
    sigma, steps, sensitivity = _validate_composed(sigma, steps, sensitivity)
    _finite_mu(_composed_mu(sigma, steps=steps, sensitivity=sensitivity), sigma, steps, sensitivity)
    return epsilon_composed_exact_unchecked(sigma, delta, steps=steps, sensitivity=sensitivity)


def epsilon_composed_exact_unchecked(sigma: float, delta: float, *, steps: int, sensitivity: float = 1.0) -> float:
    """epsilon_composed_exact for validated inputs (mu finite and positive)."""
    return G.epsilon_exact_unchecked(delta, _composed_mu(sigma, steps=steps, sensitivity=sensitivity))


def delta_composed_exact(epsilon: float, sigma: float, *, steps: int, sensitivity: float = 1.0) -> float:
    """Exact delta(epsilon) of T' composed Gaussian releases: delta_exact(epsilon, sqrt(T') D / sigma).

    Balle & Wang 2018, Thm 8, with mu = sqrt(steps) * sensitivity / sigma (Dong, Roth & Su 2022, Cor. 3.3).

    Args:
        epsilon: epsilon at which the profile is evaluated, in [0, inf).
        sigma: noise standard deviation of each release (absolute), in (0, inf).
        steps: number of composed releases T', an integer >= 1.
        sensitivity: L2 (or RKHS-norm) sensitivity of each release, in (0, inf); default 1.

    Returns:
        delta, in [0, 1].

    Raises:
        ValueError: an argument is outside its range, or mu = sqrt(steps) D / sigma underflows to 0.
    """
    epsilon = V.nonnegative("epsilon", epsilon)
    sigma, steps, sensitivity = _validate_composed(sigma, steps, sensitivity)
    mu = _composed_mu(sigma, steps=steps, sensitivity=sensitivity)
    if mu < math.inf:
        _finite_mu(mu, sigma, steps, sensitivity)
    return _delta_composed_exact(epsilon, sigma, steps=steps, sensitivity=sensitivity)


def _delta_composed_exact(epsilon: float, sigma: float, *, steps: int, sensitivity: float = 1.0) -> float:
    """delta_composed_exact for validated inputs (mu in (0, inf])."""
    return G.delta_exact_unchecked(epsilon, _composed_mu(sigma, steps=steps, sensitivity=sensitivity))


def sigma_composed_exact(epsilon: float, delta: float, *, steps: int, sensitivity: float = 1.0) -> float:
    """Smallest sigma making T' composed Gaussian releases (epsilon, delta)-DP: sqrt(T') D / mu_exact.

    Balle & Wang 2018 (analytic Gaussian mechanism) applied to the composed mu = sqrt(steps) * D / sigma
    (Dong, Roth & Su 2022, Cor. 3.3). Rounded up so that the returned sigma is always sufficient.

    Args:
        epsilon: target epsilon, in (0, inf).
        delta: target delta, in (0, 1).
        steps: number of composed releases T', an integer >= 1.
        sensitivity: L2 (or RKHS-norm) sensitivity of each release, in (0, inf); default 1.

    Returns:
        sigma, the noise standard deviation of each release (absolute), rounded up.

    Raises:
        ValueError: an argument is outside its range.
    """
    epsilon = V.positive("epsilon", epsilon)
    delta = V.open_unit("delta", delta)
    steps = V.positive_int("steps", steps)
    sensitivity = V.positive("sensitivity", sensitivity)
    return sigma_composed_exact_unchecked(epsilon, delta, steps=steps, sensitivity=sensitivity)


def sigma_composed_exact_unchecked(epsilon: float, delta: float, *, steps: int, sensitivity: float = 1.0) -> float:
    """sigma_composed_exact for validated inputs."""
    sigma = math.sqrt(steps) * sensitivity / G.mu_exact_unchecked(epsilon, delta)
    # three roundings (sqrt, product, quotient) of at most half an ulp each
    return float(np.nextafter(np.nextafter(sigma, math.inf), math.inf))


# ---------------------------------------------------------------------------------------------------
# Wang & Hegde 2019, Theorem 5 (as printed)


def _steps_real(steps) -> float:
    """T' = T/B as a positive real (the paper uses T/B = 78.125 literally)."""
    return V.positive("steps", steps)


def thm5_epsilon_paper(sigma: float, delta: float, *, steps: float, sensitivity: float) -> float:
    """epsilon of T' composed GP releases as chosen in the proof of Wang & Hegde 2019, Thm 5.

    eps = T' D^2 / (2 sigma^2) + sqrt(2 T' D^2 w / sigma^2),  w = ln(e + sqrt(T' D^2 / sigma^2) / delta),
    D = ``sensitivity`` (RKHS norm ||f||_H), T' = ``steps`` = T/B (a positive real: the paper uses
    T/B = 5000/64 = 78.125 literally). Wang & Hegde 2019 (NeurIPS), proof of Thm 5 (page 5, the display
    after "We choose"). With mu = sqrt(T') D / sigma this is mu^2/2 + mu sqrt(2w), the moment (Chernoff)
    bound on the Gaussian privacy loss N(mu^2/2, mu^2). It is sound: no counterexample against the
    exact composed profile was found (hypothesis, 2000 examples, mu in [1e-6, 300], delta in
    [1e-300, 0.5]; in a grid scan the exact delta at this epsilon stayed below 5% of delta), only loose.

    Args:
        sigma: noise standard deviation of each release (absolute), in (0, inf).
        delta: target delta, in (0, 1).
        steps: T' = T/B, the number of composed releases, a positive real, in (0, inf).
        sensitivity: RKHS-norm sensitivity D = ||f||_H of each release, in (0, inf).

    Returns:
        epsilon, in (0, inf).

    Raises:
        ValueError: an argument is outside its range.
    """
    sigma = V.positive("sigma", sigma)
    delta = V.open_unit("delta", delta)
    steps = _steps_real(steps)
    sensitivity = V.positive("sensitivity", sensitivity)
    return thm5_epsilon_paper_unchecked(sigma, delta, steps=steps, sensitivity=sensitivity)


def thm5_epsilon_paper_unchecked(sigma: float, delta: float, *, steps: float, sensitivity: float) -> float:
    """thm5_epsilon_paper for validated inputs."""
    mu = math.sqrt(steps) * sensitivity / sigma
    w = log_e_plus(math.log(mu) - math.log(delta))
    return mu * mu / 2.0 + mu * math.sqrt(2.0 * w)


def thm5_delta_paper(epsilon: float, sigma: float, *, steps: float, sensitivity: float) -> float:
    """delta at which the epsilon-expression of Wang & Hegde 2019, Thm 5's proof equals ``epsilon``.

    Inverse of :func:`thm5_epsilon_paper` in delta: with mu^2 = T' D^2 / sigma^2,
    w = (eps - mu^2/2)^2 / (2 mu^2) and delta = mu / (e^w - e) (computed in log space). The expression
    only reaches delta < 1 when eps > mu^2/2 and w > 1 + ln(1 + mu/e); elsewhere 1.0 is returned (the
    trivial bound). Not printed as such in the paper; it is the same formula solved for delta.

    Args:
        epsilon: epsilon of the composition, in [0, inf).
        sigma: noise standard deviation of each release (absolute), in (0, inf).
        steps: T' = T/B, the number of composed releases, a positive real, in (0, inf).
        sensitivity: RKHS-norm sensitivity D = ||f||_H of each release, in (0, inf).

    Returns:
        delta, in (0, 1].

    Raises:
        ValueError: an argument is outside its range.
    """
    epsilon = V.nonnegative("epsilon", epsilon)
    sigma = V.positive("sigma", sigma)
    steps = _steps_real(steps)
    sensitivity = V.positive("sensitivity", sensitivity)
    return thm5_delta_paper_unchecked(epsilon, sigma, steps=steps, sensitivity=sensitivity)


def thm5_delta_paper_unchecked(epsilon: float, sigma: float, *, steps: float, sensitivity: float) -> float:
    """thm5_delta_paper for validated inputs."""
    mu = math.sqrt(steps) * sensitivity / sigma
    excess = epsilon - mu * mu / 2.0
    if not excess > 0:
        return 1.0
    w = (excess / mu) ** 2 / 2.0
    if not w > 1.0:
        return 1.0
    log_delta = math.log(mu) - w - math.log1p(-math.exp(1.0 - w))
    if log_delta >= 0:
        return 1.0
    return math.exp(log_delta)


def thm5_sigma_proof_paper(epsilon: float, delta: float, *, steps: float, sensitivity: float) -> float:
    """Closed-form sigma at the end of the proof of Wang & Hegde 2019, Thm 5 (dimensionally consistent).

    sigma = sqrt(2 T' D^2 ln(e + eps/delta)) / eps, D = ``sensitivity`` = ||f||_H, T' = ``steps`` = T/B
    (positive real). Printed as the first line of the final display of the proof (page 5). It is
    obtained by dropping the mu^2/2 term of :func:`thm5_epsilon_paper` and replacing mu by eps inside
    the logarithm, a step the proof does not justify: this sigma does NOT satisfy the proof's own
    epsilon-expression for eps above about 2.9 (delta = 1e-3), 3.3 (1e-5), 3.8 (1e-8). Against the
    exact composed profile it is still sufficient up to a delta-dependent threshold, eps about 12.97
    (delta = 1e-3), 13.59 (1e-5), 14.37 (1e-8); above it the exact composed delta exceeds delta (eps =
    20, delta = 1e-5 gives delta about 1.0e-4). For eps in [0.1, 5] it is 1.11-1.75x the exact sigma
    (:func:`sigma_composed_exact`), i.e. the exact profile needs 10-43% less noise.

    Args:
        epsilon: target epsilon, in (0, inf).
        delta: target delta, in (0, 1).
        steps: T' = T/B, the number of composed releases, a positive real, in (0, inf).
        sensitivity: RKHS-norm sensitivity D = ||f||_H of each release, in (0, inf).

    Returns:
        sigma as printed (absolute noise standard deviation).

    Raises:
        ValueError: an argument is outside its range.
    """
    epsilon, delta, steps, sensitivity = _validate_paper_target(epsilon, delta, steps, sensitivity)
    return thm5_sigma_proof_paper_unchecked(epsilon, delta, steps=steps, sensitivity=sensitivity)


def thm5_sigma_proof_paper_unchecked(epsilon: float, delta: float, *, steps: float, sensitivity: float) -> float:
    """thm5_sigma_proof_paper for validated inputs."""
    return _thm5_root_over_epsilon(epsilon, delta, steps) * sensitivity


def _thm5_root_over_epsilon(epsilon: float, delta: float, steps: float) -> float:
    """sqrt(2 T' ln(e + eps/delta)) / eps, the factor both Thm 5 closed forms share (validated inputs)."""
    log_term = log_e_plus(math.log(epsilon) - math.log(delta))
    return math.sqrt(2.0 * steps * log_term) / epsilon


def thm5_sigma_statement_paper(epsilon: float, delta: float, *, steps: float, c: float) -> float:
    """sigma as printed in the statement of Wang & Hegde 2019, Thm 5: sqrt(2 T' ln(e + eps/delta)) * C / eps.

    C = C(alpha, k, L, B) = ((4 alpha (k+1)/B)^2 + 4 alpha (k+1)/B) L^2 is the squared RKHS sensitivity
    D^2, here OUTSIDE the square root, T' = ``steps`` = T/B (positive real). This is the form that
    reproduces the paper's sigma ~= 0.313 of App. E.3 (T = 5000, B = 64, alpha = 3e-4, k = 23, L = 4,
    eps = 0.9, delta = 5e-5). It is not dimensionally consistent (sigma scales as D^2, not D), so it is
    NOT a valid calibration: at App. E.3 (D^2 = C = 0.0072) it gives 0.313, 1/11.8 of
    :func:`thm5_sigma_proof_paper` (3.69) and 1/8.8 of the exact sigma (2.77); with sigma = 0.313 the
    composed mechanism is only (0.9, 0.65)-DP, or (11.6, 5e-5)-DP.

    Args:
        epsilon: target epsilon, in (0, inf).
        delta: target delta, in (0, 1).
        steps: T' = T/B, the number of composed releases, a positive real, in (0, inf).
        c: the paper's C(alpha, k, L, B), a squared RKHS sensitivity, in (0, inf).

    Returns:
        sigma as printed (not a valid calibration).

    Raises:
        ValueError: an argument is outside its range.
    """
    epsilon = V.positive("epsilon", epsilon)
    delta = V.open_unit("delta", delta)
    steps = _steps_real(steps)
    c = V.positive("c", c)
    return thm5_sigma_statement_paper_unchecked(epsilon, delta, steps=steps, c=c)


def thm5_sigma_statement_paper_unchecked(epsilon: float, delta: float, *, steps: float, c: float) -> float:
    """thm5_sigma_statement_paper for validated inputs."""
    return _thm5_root_over_epsilon(epsilon, delta, steps) * c  # C outside the root, as printed


def sigma_kov_quoted_paper(epsilon: float, delta: float, *, steps: float, sensitivity: float) -> float:
    """The "best known" bound quoted in the proof of Wang & Hegde 2019, Thm 5 (attributed to [KOV13, Mir17]).

    sigma = sqrt(2 T' ln(1.25/delta) ln(e + eps/delta)) * D / eps, D = ``sensitivity``, T' = ``steps``
    (positive real). Printed in the proof of Thm 5 (page 5). It is the per-step classic calibration
    (Dwork & Roth Thm A.1) fed into a KOV-style sqrt(T' ln(e + eps/delta)) growth; neither cited paper
    states it in this form. It is conservative wherever we checked (1.8-6.5x the exact sigma for eps
    in [0.01, 50], delta in [1e-8, 1e-3]), but the per-step 1.25-calibration it rests on is proved only
    for per-step epsilon < 1.

    Args:
        epsilon: target epsilon, in (0, inf).
        delta: target delta, in (0, 1).
        steps: T' = T/B, the number of composed releases, a positive real, in (0, inf).
        sensitivity: RKHS-norm sensitivity D = ||f||_H of each release, in (0, inf).

    Returns:
        sigma as printed (absolute noise standard deviation).

    Raises:
        ValueError: an argument is outside its range.
    """
    epsilon, delta, steps, sensitivity = _validate_paper_target(epsilon, delta, steps, sensitivity)
    return sigma_kov_quoted_paper_unchecked(epsilon, delta, steps=steps, sensitivity=sensitivity)


def sigma_kov_quoted_paper_unchecked(epsilon: float, delta: float, *, steps: float, sensitivity: float) -> float:
    """sigma_kov_quoted_paper for validated inputs."""
    log_term = log_e_plus(math.log(epsilon) - math.log(delta))
    return math.sqrt(2.0 * steps * math.log(1.25 / delta) * log_term) * sensitivity / epsilon
