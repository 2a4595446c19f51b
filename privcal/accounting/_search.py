"""Private spelling of :mod:`privcal.accounting.search` (the same module object), kept for importers inside
privcal.accounting."""

import sys

from . import search as _module

sys.modules[__name__] = _module
