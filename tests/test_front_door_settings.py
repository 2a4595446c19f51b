"""The front door's settings objects (privcal.accounting.front_door_settings): ``Run`` and ``PricingOptions``
give the same answers, refusals and warnings as the keyword calls users write, and each keyword is documented
once, in its class."""

from __future__ import annotations

import dataclasses
import inspect
import math
import re
import warnings

import pytest

import privcal
from privcal.accounting import api
from privcal.accounting.front_door_settings import PricingOptions, Run

FRONT = (api.epsilon, api.epsilon_report, api.calibrate, api.calibrate_report)
FIELDS = [f.name for f in dataclasses.fields(Run)] + [f.name for f in dataclasses.fields(PricingOptions)]


def test_at_most_seven_parameters_and_no_defaults_outside_the_classes():
    for fn in FRONT + (api.epsilon_of, api.epsilon_of_report):
        params = inspect.signature(fn).parameters
        assert len(params) <= 7, fn.__name__
        assert not set(FIELDS) & set(params), fn.__name__  # the fields' defaults live in Run / PricingOptions


def test_keyword_call_is_the_settings_objects_call():
    # mu = sqrt(100) * 1 / 10 = 1: one Gaussian of mu 1, epsilon(1e-5) = 4.3772 (closed form, Balle & Wang 2018
    # Thm 8; the same value as privcal.epsilon's own docstring example)
    assert round(privcal.epsilon(10.0, 1e-5, steps=100), 4) == 4.3772
    assert privcal.epsilon(10.0, 1e-5, Run(steps=100)) == privcal.epsilon(10.0, 1e-5, steps=100)
    kw = dict(steps=20, sample_rate=0.05, accountant="rdp")
    by_objects = privcal.epsilon(2.0, 1e-5, Run(steps=20, sample_rate=0.05), options=PricingOptions(accountant="rdp"))
    assert by_objects == privcal.epsilon(2.0, 1e-5, **kw)
    assert privcal.epsilon_report(2.0, 1e-5, Run(steps=20, sample_rate=0.05), accountant="rdp") == \
        privcal.epsilon_report(2.0, 1e-5, **kw)
    # the rdp answer differs from the default's: the options are read, not ignored
    assert by_objects != privcal.epsilon(2.0, 1e-5, steps=20, sample_rate=0.05, accountant="pld")


def test_keywords_replace_the_fields_of_run_and_options():
    run = Run(steps=1, sensitivity=1.0)
    # steps=100 replaces steps=1: mu = 1 again (closed form above)
    assert round(privcal.epsilon(10.0, 1e-5, run, steps=100), 4) == 4.3772
    assert run.steps == 1  # frozen: the caller's object is left alone
    sigma = privcal.calibrate(1.0, 1e-5, Run(steps=10), options=PricingOptions(accountant="kov"), accountant="exact")
    assert sigma == privcal.calibrate(1.0, 1e-5, steps=10, accountant="exact")
    with pytest.raises(dataclasses.FrozenInstanceError):
        run.steps = 2  # type: ignore[misc]


def test_epsilon_of_takes_the_options_too():
    history = privcal.SelfComposedEvent(privcal.GaussianEvent(10.0), 100)
    assert privcal.epsilon_of(history, 1e-5, options=PricingOptions(accountant="rdp")) == \
        privcal.epsilon_of(history, 1e-5, accountant="rdp")
    report = api.epsilon_of_report(history, 1e-5, options=PricingOptions(accountant="kov"), with_bracket=False)
    assert report.accountant == "kov"


@pytest.mark.parametrize("fn", FRONT, ids=lambda f: f.__name__)
def test_an_unknown_keyword_is_refused_as_python_refuses_it(fn):
    def reference(sigma, delta, *, steps=1):  # a plain function of the same name
        pass

    reference.__name__ = reference.__qualname__ = fn.__name__
    with pytest.raises(TypeError) as python:
        reference(1.0, 1e-5, stepz=3)
    with pytest.raises(TypeError) as ours:
        fn(1.0, 1e-5, stepz=3)
    assert str(ours.value) == str(python.value) == f"{fn.__name__}() got an unexpected keyword argument 'stepz'"
    with pytest.raises(TypeError, match=r"run must be a Run, got 3"):
        fn(1.0, 1e-5, 3)
    with pytest.raises(TypeError, match=r"options must be a PricingOptions, got 'rdp'"):
        fn(1.0, 1e-5, options="rdp")


@pytest.mark.parametrize("call, named", [
    (dict(sigma=0.0, steps=0, pld_accuracy=2.0), "sigma"),  # the first argument is checked first
    (dict(sigma=1.0, steps=0, pld_accuracy=2.0), "steps"),  # then the run's fields
    (dict(sigma=1.0, steps=2, pld_accuracy=2.0, accountant="nope"), "pld_accuracy"),  # then the PLD's knobs
    (dict(sigma=1.0, accountant="nope"), "accountant"),  # the accountant's name last
    (dict(sigma=1.0, sensitivity=-1.0, steps=0), "sensitivity"),
    (dict(sigma=1.0, memory_limit=4.0), "memory_limit"),
])
def test_the_first_bad_argument_is_named_whichever_way_it_is_given(call, named):
    call = dict(call)
    sigma = call.pop("sigma")
    run_fields = {k: v for k, v in call.items() if k in {f.name for f in dataclasses.fields(Run)}}
    option_fields = {k: v for k, v in call.items() if k not in run_fields}
    for args, kwargs in (((sigma, 1e-5), call),
                         ((sigma, 1e-5, Run(**run_fields)), dict(options=PricingOptions(**option_fields)))):
        with pytest.raises(ValueError, match=rf"^{named}\b"):
            privcal.epsilon(*args, **kwargs)


def test_the_implied_relation_still_warns_at_the_callers_line():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        privcal.epsilon(2.0, 1e-5, Run(steps=5, sample_rate=0.1, sampling="without_replacement"), accountant="rdp")
    assert [w.category for w in caught] == [privcal.NeighbouringWarning]
    assert caught[0].filename == __file__  # the warning points at the user's call, not into privcal


@pytest.mark.parametrize("fn", FRONT + (api.epsilon_of,), ids=lambda f: f.__name__)
def test_every_keyword_is_documented_with_its_default(fn):
    doc = inspect.getdoc(fn)
    fields = FIELDS if fn in FRONT else [f.name for f in dataclasses.fields(PricingOptions)]
    for name in fields:
        entry = re.search(rf"^    {name}: (.*(?:\n        .*)*)", doc, re.MULTILINE)
        assert entry is not None, name
        assert "default" in entry.group(1).lower(), name


def test_the_classes_defaults_are_the_documented_ones():
    assert Run() == Run(sensitivity=1.0, steps=1, sample_rate=None, sampling="poisson", neighbouring=None)
    assert PricingOptions() == PricingOptions(accountant="best", pld_accuracy=None, memory_limit=None)
    # one plain release at sensitivity 1 and sigma 1: the exact profile, 4.3772 (docstring example of epsilon)
    assert math.isclose(privcal.epsilon(1.0, 1e-5, Run(), options=PricingOptions()), privcal.epsilon(1.0, 1e-5))
