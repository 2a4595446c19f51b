"""``python -m privcal``: the command-line interface (Ctrl-C handled from the package's first import on:
``privcal/__init__`` installed the handler of ``privcal_launcher``)."""

import sys

from privcal_launcher import run

sys.exit(run())
