"""Shared pytest settings: reproducible, bounded hypothesis runs.

The ``ci`` profile (default) derandomises hypothesis so a run is repeatable and keeps the example
count small enough for the whole suite to stay well under 10 minutes on 2 cores; set
``HYPOTHESIS_PROFILE=thorough`` for a longer local search.
"""

import inspect
import os

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile(
    "ci",
    max_examples=60,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile("thorough", max_examples=2000, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


@pytest.fixture
def validations(monkeypatch):
    """Count calls of every rule of ``privcal._validate`` (``validations["n"]``).

    Callers go through the module's attributes (``V.positive(...)``), so wrapping them sees every
    validation; tests use it to check that a public call validates each argument once.
    """
    from privcal import _validate as V

    counts = {"n": 0}
    for name, fn in list(vars(V).items()):
        if inspect.isfunction(fn) and not name.startswith("_") and fn.__module__ == V.__name__:
            def wrapped(*args, _fn=fn, **kwargs):
                counts["n"] += 1
                return _fn(*args, **kwargs)

            monkeypatch.setattr(V, name, wrapped)
    return counts
