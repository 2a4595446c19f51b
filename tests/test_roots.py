"""privcal._roots.brentq: Brent's method without scipy.optimize, step for step the one SciPy implements."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import optimize

from privcal._roots import brentq

# functions with a sign change in [a, b] for a < 0 < c < b: smooth, flat, kinked, a step, an odd power
_FUNCTIONS = {
    "cubic": lambda x, c: x ** 3 - c ** 3,
    "exp": lambda x, c: math.expm1(x - c),
    "atan": lambda x, c: math.atan(x - c),
    "power": lambda x, c: math.copysign(abs(x - c) ** 1.3, x - c),
    "tanh": lambda x, c: math.tanh(5 * (x - c)) + 1e-3 * (x - c),
    "step": lambda x, c: 1.0 if x > c else -1.0,
    "flat": lambda x, c: (x - c) ** 9,
}


def _traced(fn):
    calls = []

    def f(x):
        calls.append(x)
        return fn(x)

    return f, calls


@settings(max_examples=200, deadline=None)
@given(
    c=st.floats(0.1, 3.0), a=st.floats(-5.0, -0.01), b=st.floats(3.5, 9.0),
    name=st.sampled_from(sorted(_FUNCTIONS)),
    tols=st.sampled_from([(2e-12, 8.9e-16), (1e-300, 1e-12), (2.5e-10, 8.9e-16), (1e-3, 1e-6)]),
)
def test_brentq_takes_scipys_steps(c, a, b, name, tols):
    # the independent implementation is SciPy's own brentq: the same calls in the same order, the same root
    xtol, rtol = tols
    f1, calls1 = _traced(lambda x: _FUNCTIONS[name](x, c))
    f2, calls2 = _traced(lambda x: _FUNCTIONS[name](x, c))
    ours = brentq(f1, a, b, xtol=xtol, rtol=rtol, maxiter=200)
    theirs = optimize.brentq(f2, a, b, xtol=xtol, rtol=rtol, maxiter=200)
    assert ours == theirs
    assert calls1 == calls2
    assert abs(ours - c) <= 2 * (xtol + rtol * abs(c)) or name in ("step", "flat")  # the bracket's width


def test_brentq_ends_and_errors():
    assert brentq(lambda x: x, 0.0, 1.0) == 0.0  # a root at an end is returned at once
    assert brentq(lambda x: x - 1.0, 0.0, 1.0) == 1.0
    with pytest.raises(ValueError, match="different signs"):
        brentq(lambda x: x * x + 1.0, -1.0, 1.0)
    with pytest.raises(ValueError, match="xtol"):
        brentq(lambda x: x, -1.0, 1.0, xtol=0.0)
    with pytest.raises(ValueError, match="rtol"):
        brentq(lambda x: x, -1.0, 1.0, rtol=1e-17)
    with pytest.raises(RuntimeError, match="converge"):
        brentq(lambda x: x - 0.3, -1.0, 1.0, xtol=1e-300, rtol=1e-15, maxiter=2)
