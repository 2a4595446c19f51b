"""JSON-safe copies of results (what ``--format json`` prints, and what results' ``to_dict`` return).

JSON has no infinity: an infinite or undefined number (an epsilon without a finite bound, a sigma that does
not exist) becomes ``null``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

__all__ = ["clean"]


def clean(value: Any) -> Any:
    """A JSON-safe copy: non-finite floats become None, numpy scalars and arrays plain numbers and lists,
    tuples lists, other objects their ``str``.

    Args:
        value: any nesting of dicts, sequences, numbers and strings.
    """
    if isinstance(value, Mapping):
        return {str(k): clean(v) for k, v in value.items()}
    if hasattr(value, "tolist") and not isinstance(value, (str, bytes)):
        value = value.tolist()
    if isinstance(value, (list, tuple)):
        return [clean(v) for v in value]
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    return str(value)
