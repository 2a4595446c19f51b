"""privcal.analysis.counter's Gaussian helpers: named arguments and the documented default of one counter."""

from __future__ import annotations

import pytest

from privcal.analysis import counter


def test_gaussian_sigma_names_changes_per_stream():
    with pytest.raises(ValueError, match="^changes_per_stream must be"):
        counter.gaussian_sigma(100, 1.0, 1e-5, changes_per_stream=0)


def test_the_failure_lower_bound_defaults_to_one_counter():
    # P(no failure) <= (1 - 2 Phi(-bound / sigma))^(L counters): more counters, a larger failure bound
    one = counter.gaussian_sup_error_failure_lower_bound(3.0, 1000, 1.0)
    assert one == counter.gaussian_sup_error_failure_lower_bound(3.0, 1000, 1.0, counters=1)
    assert one < counter.gaussian_sup_error_failure_lower_bound(3.0, 1000, 1.0, counters=2)
