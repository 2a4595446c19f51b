"""The ``privcal`` command's entry point: Ctrl-C is handled from the first instruction, imports included.

Importing ``privcal`` (numpy, scipy, sympy, the accountants) takes most of a second of CPU, and seconds of
wall time on a loaded machine; an interrupt during it would print Python's traceback. This module imports
nothing heavy: it installs a SIGINT handler that ends the process with one line and exit status 130, then
imports the CLI and hands over to ``privcal.cli.main`` (which handles an interrupt the same way). It is a
top-level module because any ``privcal.*`` import runs ``privcal/__init__`` first.

``PRIVCAL_READY=1`` in the environment makes it write ``privcal: starting`` to stderr before the imports,
so that a test can interrupt it at a known point without sleeping.
"""

from __future__ import annotations

import os
import signal
import sys


def _interrupted(signum, frame) -> None:  # pragma: no cover - runs in a child process
    os.write(2, b"privcal: interrupted\n")
    os._exit(130)


def main() -> int:
    """Run the privcal CLI with Ctrl-C handled during its imports; returns the exit status."""
    signal.signal(signal.SIGINT, _interrupted)
    if os.environ.get("PRIVCAL_READY") == "1":
        os.write(2, b"privcal: starting\n")
    from privcal.cli import main as cli_main

    try:
        signal.signal(signal.SIGINT, signal.default_int_handler)  # from here on: KeyboardInterrupt
        return cli_main()  # which catches it itself while it runs
    except KeyboardInterrupt:  # between the two handlers
        os.write(2, b"privcal: interrupted\n")
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
