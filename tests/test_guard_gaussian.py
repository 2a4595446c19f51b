"""privcal.analysis.gaussian's exact profile keeps a conservative answer where its mpmath evaluation gives up."""

from __future__ import annotations

import math

import pytest
from scipy import special

from privcal.analysis import gaussian


def test_the_digit_cap_falls_back_to_the_upper_bound_phi_a(monkeypatch):
    # epsilon = 0, mu = 1e-100: delta = 2 Phi(mu/2) - 1 = mu / sqrt(2 pi) (first order; closed form), and the
    # float path cancels completely, so the mpmath path runs; with its digit cap at 31 it stops after one try and
    # returns log Phi(a), a = mu/2 (delta <= Phi(a): an upper bound, never below the truth)
    true = math.log(1e-100 / math.sqrt(2 * math.pi))
    assert gaussian.log_delta_exact(0.0, 1e-100) == pytest.approx(true, rel=1e-12)
    monkeypatch.setattr(gaussian, "_MAX_DPS", 31)
    capped = gaussian.log_delta_exact(0.0, 1e-100)
    assert capped == float(special.log_ndtr(5e-101)) == pytest.approx(math.log(0.5), rel=1e-15)
    assert capped >= true
