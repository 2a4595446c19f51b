"""privcal.analysis.composition's quoted KOV bound (Wang & Hegde 2019, proof of Thm 5) scales with the sensitivity and
names its arguments."""

from __future__ import annotations

import math

import pytest

from privcal.analysis import composition as C


def test_the_quoted_kov_sigma_is_linear_in_the_sensitivity():
    # sigma = sqrt(2 T' ln(1.25/delta) ln(e + eps/delta)) D / eps (closed form, the proof's formula)
    want = math.sqrt(2 * 10 * math.log(1.25 / 1e-5) * math.log(math.e + 1.0 / 1e-5)) * 2.0 / 1.0
    got = C.sigma_kov_quoted_paper(1.0, 1e-5, steps=10, sensitivity=2.0)
    assert got == pytest.approx(want, rel=1e-12)
    assert got == pytest.approx(2 * C.sigma_kov_quoted_paper(1.0, 1e-5, steps=10, sensitivity=1.0), rel=1e-14)


@pytest.mark.parametrize("kw, name", [(dict(epsilon=0.0), "epsilon"), (dict(delta=1.0), "delta"),
                                      (dict(sensitivity=-1.0), "sensitivity")])
def test_the_quoted_kov_sigma_names_the_argument_out_of_range(kw, name):
    args = dict(epsilon=1.0, delta=1e-5, steps=10, sensitivity=1.0) | kw
    with pytest.raises(ValueError, match=f"^{name} must be"):
        C.sigma_kov_quoted_paper(**args)
