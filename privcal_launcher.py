"""The ``privcal`` command's entry point: Ctrl-C is handled from the first instruction, imports included.

Importing ``privcal`` (numpy, scipy, sympy, the accountants) takes most of a second of CPU, and seconds of
wall time on a loaded machine; an interrupt during it would print Python's traceback. This module imports
nothing heavy: it installs a SIGINT handler that ends the process with one line and exit status 130, then
imports the CLI and hands over to ``privcal.cli.main`` (which handles an interrupt the same way). It is a
top-level module because any ``privcal.*`` import runs ``privcal/__init__`` first.

``python -m privcal`` imports the package before its ``__main__``: ``privcal/__init__`` calls :func:`install`
first when it is being run that way (``sys.orig_argv`` names ``-m privcal``), and ``privcal/__main__`` calls
:func:`run`.

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


def install() -> None:
    """Handle SIGINT with one line and exit 130 until :func:`run` hands over to the CLI (before the imports)."""
    signal.signal(signal.SIGINT, _interrupted)
    if os.environ.get("PRIVCAL_READY") == "1":
        os.write(2, b"privcal: starting\n")


def main() -> int:
    """Run the privcal CLI with Ctrl-C handled during its imports; returns the exit status."""
    install()
    return run()


def run() -> int:
    """Import the CLI and run it, Ctrl-C raising KeyboardInterrupt again (the CLI catches it)."""
    from privcal.cli import main as cli_main

    try:
        signal.signal(signal.SIGINT, signal.default_int_handler)  # from here on: KeyboardInterrupt
        return cli_main()  # which catches it itself while it runs
    except KeyboardInterrupt:  # between the two handlers
        os.write(2, b"privcal: interrupted\n")
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
