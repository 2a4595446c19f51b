"""Shared pytest settings: reproducible, bounded hypothesis runs.

The ``ci`` profile (default) derandomises hypothesis so a run is repeatable and keeps the example
count small enough for the whole suite to stay well under 10 minutes on 2 cores; set
``HYPOTHESIS_PROFILE=thorough`` for a longer local search.
"""

import os

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
