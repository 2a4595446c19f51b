"""The achieved epsilon of ``privcal.calibrate_report`` is the epsilon at the sigma it reports.

Tests elsewhere check ``achieved_epsilon <= target``: a report priced at a larger sigma than the one it
prints passes them while its number is optimistic. Here it is compared with an independent recomputation,
both ways (equal within the recomputation's own tolerance, not only below the target).
"""

from __future__ import annotations

import math

import pytest

import privcal
from privcal.analysis import gaussian

SUB = dict(steps=100, sample_rate=0.01)


@pytest.mark.parametrize("sensitivity", [1.0, 2.0])
@pytest.mark.parametrize("accountant", ["best", "exact", "kov", "paper"])
def test_plain_gaussian_achieved_epsilon_is_the_closed_form_at_sigma(accountant, sensitivity):
    # T Gaussian releases of sensitivity s at noise sigma are one Gaussian with mu = sqrt(T) s / sigma (Dong, Roth
    # & Su 2019, Cor. 3.3); its exact epsilon is the Balle & Wang (2018, Thm 8) profile, privcal.analysis.gaussian.epsilon_exact
    # (upper bound within about 1e-9 relative). Every valid accountant reports at least that; exact equals it.
    steps, delta = 10, 1e-5
    r = privcal.calibrate_report(1.0, delta, steps=steps, sensitivity=sensitivity, accountant=accountant)
    exact = gaussian.epsilon_exact(delta, math.sqrt(steps) * sensitivity / r.sigma)
    again = privcal.epsilon(r.sigma, delta, steps=steps, sensitivity=sensitivity, accountant=r.accountant)
    assert r.achieved_epsilon == pytest.approx(again, rel=1e-12)  # the same accountant at the printed sigma
    assert r.achieved_epsilon >= exact * (1 - 1e-9)  # never below the truth at the printed sigma
    if r.accountant == "exact":
        assert r.achieved_epsilon == pytest.approx(exact, rel=1e-9)


@pytest.mark.parametrize("accountant", ["best", "rdp", "pld"])
def test_subsampled_achieved_epsilon_is_the_epsilon_at_sigma(accountant):
    # the front door's epsilon at the printed sigma (a fresh accountant, not the search's) is the achieved one
    r = privcal.calibrate_report(1.0, 1e-5, accountant=accountant, **SUB)
    again = privcal.epsilon(r.sigma, 1e-5, accountant=r.accountant, **SUB)
    assert r.achieved_epsilon == pytest.approx(again, rel=1e-12)
    # and 1 % more noise lowers epsilon by more than the tolerance above: the comparison sees a shifted sigma
    assert privcal.epsilon(r.sigma * 1.01, 1e-5, accountant=r.accountant, **SUB) < again * (1 - 1e-3)
