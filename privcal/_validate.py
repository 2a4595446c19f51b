"""Boundary validation: every public function checks its inputs here, once.

Each helper raises ``ValueError`` naming the argument, its value and the valid range, and returns
the value converted to the type the caller needs. One helper per rule: a rule ("a sample rate is in
(0, 1]", "a choice is one of ...") is written here and nowhere else.

Convention: call these as ``V.positive(...)`` after ``from privcal import _validate as V`` (never
import the helpers by name), so that ``tests/test_validation_count.py`` can count them. Public
functions validate and then call private kernels (a leading ``_``) that trust their input.
"""

from __future__ import annotations

import dataclasses
import math
import numbers

__all__ = [
    "positive",
    "nonnegative",
    "probability",
    "open_unit",
    "positive_int",
    "in_closed",
    "samples_and_batch",
    "rate",
    "choice",
    "settings_with",
]


def _real(name: str, value) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(f"{name} must be a real number, got {value!r}")
    value = float(value)
    if math.isnan(value):
        raise ValueError(f"{name} must be a number, got nan")
    return value


def positive(name: str, value, *, allow_inf: bool = False) -> float:
    """``value`` as a float in (0, inf) (or (0, inf] with ``allow_inf``)."""
    x = _real(name, value)
    if not (x > 0) or (math.isinf(x) and not allow_inf):
        rng = "(0, inf]" if allow_inf else "(0, inf)"
        raise ValueError(f"{name} must be in {rng}, got {value!r}")
    return x


def nonnegative(name: str, value) -> float:
    """``value`` as a finite float in [0, inf)."""
    x = _real(name, value)
    if not (0 <= x < math.inf):
        raise ValueError(f"{name} must be in [0, inf), got {value!r}")
    return x


def open_unit(name: str, value) -> float:
    """``value`` as a float in the open interval (0, 1), e.g. a target delta."""
    x = _real(name, value)
    if not (0 < x < 1):
        raise ValueError(f"{name} must be in (0, 1), got {value!r}")
    return x


def probability(name: str, value) -> float:
    """``value`` as a float in the closed interval [0, 1]."""
    x = _real(name, value)
    if not (0 <= x <= 1):
        raise ValueError(f"{name} must be in [0, 1], got {value!r}")
    return x


def in_closed(name: str, value, low: float, high: float) -> float:
    """``value`` as a float in [low, high]."""
    x = _real(name, value)
    if not (low <= x <= high):
        raise ValueError(f"{name} must be in [{low:g}, {high:g}], got {value!r}")
    return x


def positive_int(name: str, value) -> int:
    """``value`` as an int >= 1 (integral floats such as 5.0 are accepted)."""
    if isinstance(value, bool):
        raise ValueError(f"{name} must be an integer >= 1, got {value!r}")
    if isinstance(value, numbers.Integral):
        n = int(value)
    elif isinstance(value, numbers.Real) and float(value).is_integer():
        n = int(value)
    else:
        raise ValueError(f"{name} must be an integer >= 1, got {value!r}")
    if n < 1:
        raise ValueError(f"{name} must be an integer >= 1, got {value!r}")
    return n


def samples_and_batch(samples, batch_size) -> tuple[int, int]:
    """(samples, batch_size) as positive ints with batch_size <= samples (T samples in batches of B)."""
    samples = positive_int("samples", samples)
    batch_size = positive_int("batch_size", batch_size)
    if batch_size > samples:
        raise ValueError(f"batch_size must be in [1, samples={samples}], got {batch_size!r}")
    return samples, batch_size


def rate(name: str, value) -> float:
    """``value`` as a float in the half-open interval (0, 1], e.g. a sample rate."""
    x = _real(name, value)
    if not (0 < x <= 1):
        raise ValueError(f"{name} must be in (0, 1], got {value!r}")
    return x


def choice(name: str, value, choices):
    """``value`` if it is one of ``choices`` (compared with ==), else ``ValueError`` listing them."""
    options = tuple(choices)
    if value not in options:
        raise ValueError(f"{name} must be one of {options}, got {value!r}")
    return value


def settings_with(where: str, cls: type, settings, keywords: dict, allowed=None):
    """``settings`` (an instance of the frozen dataclass ``cls``, or None for its defaults) with ``keywords``
    replacing its fields. A keyword that is no field of ``cls`` (or not in ``allowed``) raises ``TypeError`` as
    Python would for the function ``where``; ``settings`` of another type raises ``TypeError`` naming ``cls``.
    The values themselves are checked by the caller."""
    names = tuple(f.name for f in dataclasses.fields(cls)) if allowed is None else tuple(allowed)
    for key in keywords:
        if key not in names:
            raise TypeError(f"{where}() got an unexpected keyword argument {key!r}")
    if settings is not None and not isinstance(settings, cls):
        raise TypeError(f"{where}() settings must be a {cls.__name__}, got {settings!r}")
    return cls(**keywords) if settings is None else dataclasses.replace(settings, **keywords)


def keyword_docs(*classes: type) -> str:
    """The ``Attributes:`` entries of ``classes``' docstrings, in order: the per-keyword lines of a function that
    takes their fields as keywords (each field documented once, in its class; the function's docstring holds
    ``{keywords}`` where they go).

    Args:
        classes: dataclasses whose docstrings have an ``Attributes:`` section indented by 4 spaces.
    """
    out = []
    for cls in classes:
        lines = cls.__doc__.splitlines()
        start = lines.index("    Attributes:") + 1
        out += [line for line in lines[start:] if line.startswith("        ")]
    return "\n".join(out)
