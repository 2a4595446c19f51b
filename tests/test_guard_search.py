"""The calibration search's final check (privcal.accounting.search) refuses any epsilon above the target.

The search returns the feasible end of its bracket only after evaluating the accountant there once more; an
accountant whose number moved between the probes and that evaluation (numerical noise) must make the
calibration fail, however small the excess.
"""

from __future__ import annotations

import math

import pytest

import privcal
from privcal import CalibrationError, ExactAccountant, GaussianEvent, SelfComposedEvent


class _Drifting:
    """The exact accountant, except that its ``drift_at``-th evaluation reports ``factor`` times its value."""

    def __init__(self, calls: list, drift_at: int, factor: float):
        self.calls, self.drift_at, self.factor = calls, drift_at, factor

    def compose(self, event):
        self.event = event
        return self

    def epsilon(self, delta):
        self.calls.append(None)
        value = ExactAccountant().compose(self.event).epsilon(delta)
        return value * self.factor if len(self.calls) == self.drift_at else value


def _search(drift_at: int = 0, factor: float = 1.0) -> tuple[float, int]:
    calls: list = []
    sigma = privcal.search_sigma(lambda s: SelfComposedEvent(GaussianEvent(s), 10), 1.0, 1e-5,
                                 lambda: _Drifting(calls, drift_at, factor), sigma_hint=10.0)
    return sigma, len(calls)


@pytest.mark.parametrize("factor", [1.0005, 1.0 + 1e-6])
def test_an_epsilon_above_the_target_at_the_final_check_fails_the_calibration(factor):
    # without drift the search ends with its check (the last evaluation); with the same probes and the last one
    # 0.05 % (or 1e-6, relative) higher, the answer's epsilon exceeds the target (the search stops within
    # rtol = 1e-9 of it): calibration fails
    sigma, calls = _search()
    assert sigma == privcal.search_sigma(lambda s: SelfComposedEvent(GaussianEvent(s), 10), 1.0, 1e-5,
                                         "exact", sigma_hint=10.0)
    with pytest.raises(CalibrationError, match="calibration check failed"):
        _search(drift_at=calls, factor=factor)


def test_an_answer_at_exactly_the_target_passes_the_check():
    from privcal.accounting import search as S

    assert S.checked(2.0, lambda s: 1.0, 1.0) == 2.0  # epsilon == target: accepted
    with pytest.raises(CalibrationError):
        S.checked(2.0, lambda s: math.nextafter(1.0, 2.0), 1.0)
    with pytest.raises(CalibrationError):
        S.checked(2.0, lambda s: math.nan, 1.0)  # a nan epsilon is never accepted
