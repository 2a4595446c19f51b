"""Values are validated once, at the public boundary (issue: "validate once").

Every rule lives in ``privcal._validate`` and is called as ``V.rule(...)``; this test wraps each rule
with a counter and checks that one front-door ``epsilon`` or ``calibrate`` call runs at most 10 of
them, whatever the accountant and setting (before the accounting layer was restructured, a KOV
calibration ran hundreds: every candidate sigma re-validated its events and every kernel its inputs).
"""

from __future__ import annotations

import math
import warnings

import pytest

import privcal
from privcal import _validate as V

LIMIT = 10

CALLS = {
    "epsilon exact": lambda: privcal.epsilon(3.0, 1e-5, steps=100),
    "epsilon paper": lambda: privcal.epsilon(3.0, 1e-5, steps=100, accountant="paper"),
    "epsilon kov": lambda: privcal.epsilon(3.0, 1e-5, steps=100, accountant="kov"),
    "epsilon rdp": lambda: privcal.epsilon(3.0, 1e-5, steps=100, accountant="rdp"),
    "epsilon poisson": lambda: privcal.epsilon(1.0, 1e-5, steps=1000, sample_rate=0.01),
    "epsilon without replacement": lambda: privcal.epsilon(
        1.0, 1e-5, steps=1000, sample_rate=0.01, sampling="without_replacement", neighbouring="replace_one"
    ),
    "epsilon paper subsampled": lambda: privcal.epsilon(1.0, 1e-5, steps=1000, sample_rate=0.01, accountant="paper"),
    "calibrate exact": lambda: privcal.calibrate(1.0, 1e-5, steps=100),
    "calibrate paper": lambda: privcal.calibrate(1.0, 1e-5, steps=100, accountant="paper"),
    "calibrate kov": lambda: privcal.calibrate(1.0, 1e-5, steps=100, accountant="kov"),
    "calibrate rdp": lambda: privcal.calibrate(1.0, 1e-5, steps=100, accountant="rdp"),
    "calibrate poisson": lambda: privcal.calibrate(1.0, 1e-5, steps=1000, sample_rate=0.01),
    "calibrate without replacement": lambda: privcal.calibrate(
        1.0, 1e-5, steps=1000, sample_rate=0.01, sampling="without_replacement", neighbouring="replace_one"
    ),
    "calibrate_report paper subsampled": lambda: privcal.calibrate_report(
        1.0, 1e-5, steps=1000, sample_rate=0.01, accountant="paper"
    ).sigma,
}


@pytest.mark.parametrize("label", list(CALLS))
def test_one_front_door_call_validates_at_most_ten_values(label, validations):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        value = CALLS[label]()
    assert value > 0
    assert 1 <= validations["n"] <= LIMIT, f"{label}: {validations['n']} validations"


def test_the_counter_sees_validation(validations):
    # the instrument itself: a call that validates must be counted (else the limit above is vacuous)
    V.positive("sigma", 1.0)
    assert validations["n"] == 1
    with pytest.raises(ValueError, match="sigma"):
        privcal.epsilon(-1.0, 1e-5)
    assert validations["n"] >= 2


@pytest.mark.parametrize(
    "call,argument",
    [
        (lambda: privcal.epsilon(math.inf, 1e-5, steps=10, accountant="kov"), "sigma"),
        (lambda: privcal.epsilon(1.0, 1e-5, steps=10, sample_rate=0.0), "sample_rate"),
        (lambda: privcal.calibrate(1.0, 1e-5, steps=0), "steps"),
        (lambda: privcal.calibrate(1.0, 1e-5, sensitivity=-2.0, accountant="rdp"), "sensitivity"),
        (lambda: privcal.calibrate(1.0, 1e-5, sample_rate=0.1, neighbouring="swap"), "neighbouring"),
        (lambda: privcal.calibrate(1.0, 1e-5, sample_rate=0.1, sampling="shuffle"), "sampling"),
        (lambda: privcal.calibrate(1.0, 1e-5, accountant="moments"), "accountant"),
    ],
)
def test_errors_name_the_users_own_argument(call, argument):
    with pytest.raises(ValueError, match=rf"^{argument} must "):
        call()
