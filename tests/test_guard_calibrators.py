"""The calibrators' tables say what their reference is and carry the sensitivity they priced."""

from __future__ import annotations

import math

import pytest

from privcal.calibrators.sampler_table import sampler_table
from privcal.calibrators.table import dpq_table


def test_the_sampler_table_reference_is_an_upper_bound_not_the_exact_epsilon():
    # shuffled batches are priced by the no-amplification upper bound: the paper sigma's epsilon is read as
    # "eps <= ...", never as the actual epsilon (which only the exact profile gives)
    t = sampler_table([1.0], 1e-5, sampling="shuffle", epochs=2, batch_size=10, dataset_size=100)
    assert t.reference == "upper" and t.reference_exact is False


def test_the_dpq_table_parameters_carry_the_sensitivity_it_priced():
    # D = sqrt(C), C = (v^2 + v) L^2 (Wang & Hegde 2019, proof of Thm 5): both are in the parameters
    t = dpq_table([1.0], 1e-5)
    assert t.parameters["sensitivity"] == pytest.approx(math.sqrt(t.parameters["C"]), rel=1e-15)
    v, lip = t.parameters["v"], t.parameters["lipschitz"]
    assert t.parameters["C"] == pytest.approx((v * v + v) * lip * lip, rel=1e-12)


def test_the_sampler_table_takes_its_run_as_a_settings_object_or_as_keywords():
    from privcal.calibrators.sampler_table import SamplerTableSettings

    run = SamplerTableSettings("shuffle", epochs=2, batch_size=10, dataset_size=100)
    by_settings = sampler_table([1.0], 1e-5, settings=run)
    by_keywords = sampler_table([1.0], 1e-5, sampling="shuffle", epochs=2, batch_size=10, dataset_size=100)
    assert by_settings.as_dict() == by_keywords.as_dict()
    # a keyword replaces the settings' field: three epochs need more noise than two at the same target
    more = sampler_table([1.0], 1e-5, settings=run, epochs=3)
    assert more.parameters["epochs"] == 3 and more.rows[0].sigmas["upper"] > by_settings.rows[0].sigmas["upper"]
    with pytest.raises(ValueError, match="settings must be a SamplerTableSettings"):
        sampler_table([1.0], settings=dict(sampling="shuffle"))
