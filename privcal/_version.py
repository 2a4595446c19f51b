"""privcal's version, read from the installed distribution's metadata (pyproject.toml's ``version``).

One source of truth: the number is written only in pyproject.toml. A source tree used without being
installed (no distribution metadata) reports :data:`UNKNOWN` rather than a number that may be stale.
"""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

__all__ = ["UNKNOWN", "version_of", "__version__"]

#: the version reported when no installed distribution describes this package (PEP 440 local label)
UNKNOWN = "0+unknown"


def version_of(distribution: str = "privcal") -> str:
    """The installed version of ``distribution``, or :data:`UNKNOWN` if it is not installed.

    Args:
        distribution: the distribution's name; default "privcal".
    """
    try:
        return version(distribution)
    except PackageNotFoundError:
        return UNKNOWN


__version__ = version_of()
