"""Command-line interface: ``privcal table | calibrate | epsilon | plot | verify | frontier | train``.

Bad input prints one line to stderr and exits with status 2 (no traceback). This module runs a command line:
it parses (``privcal.cli.parser``), dispatches (the pricing commands in ``privcal.cli.pricing``, the others in
their own modules) and turns a refusal into its one line (``privcal.cli.words``).
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import warnings
from collections.abc import Sequence
from typing import Any, Optional

from ..analysis import rdp
from ..calibrators import render
from ..errors import PrivcalError
from .parser import UsageError, build_parser
from .pricing import answered, bracket_line, check_table_flags, cmd_calibrate, cmd_epsilon, cmd_table
from .words import error_words, user_words

__all__ = ["main", "build_parser", "answered", "bracket_line", "show_warning", "glue_negative_values"]

def __getattr__(name: str):
    # the former home of the table renderer: deprecated since 0.2.0, removed in 0.3.0
    if name == "format_table":
        warnings.warn("privcal.cli.format_table is deprecated: use privcal.calibrators.render.format_table (same "
                      "signature, plus wide); removed in 0.3.0", DeprecationWarning, stacklevel=2)
        return render.format_table
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def show_warning(message: Any, category: type, filename: str, lineno: int, file: Any = None,
                 line: Optional[str] = None) -> None:
    """warnings.showwarning for the CLI: one ``privcal: warning: ...`` line on stderr.

    Args:
        message: the warning (its text is shown in user words).
        category: its class (not shown).
        filename: where it was raised (not shown).
        lineno: its line (not shown).
        file: ignored (stderr is used).
        line: ignored.
    """
    print(f"privcal: warning: {user_words(message)}", file=sys.stderr)


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Run the CLI; returns the exit status (0 ok, 1 a verify check could not run, 2 bad input or a
    refused request, 130 interrupted). Errors and warnings are one line each on stderr.

    Args:
        argv: the arguments after ``privcal`` (default: ``sys.argv[1:]``).
    """
    with warnings.catch_warnings():
        # only when warnings are shown (not recorded, e.g. by pytest.warns or a caller's catch_warnings)
        if getattr(warnings._showwarnmsg_impl, "__module__", None) == "warnings":
            warnings.simplefilter("default")
            # a file left open by an import that Ctrl-C cut short is no news to a user of the command
            warnings.filterwarnings("ignore", category=ResourceWarning)
            # numpy's floating-point messages ("overflow encountered in exp") are internals: a result is
            # certified or refused whatever they say
            warnings.filterwarnings("ignore", category=RuntimeWarning)
            # RDP's grid-edge advice concerns RDP only: shown by answered when RDP gave the answer
            warnings.filterwarnings("ignore", category=rdp.GridEdgeWarning)
            warnings.showwarning = show_warning
        try:
            return _main(argv)
        except KeyboardInterrupt:
            print("privcal: interrupted", file=sys.stderr)
            return 130


#: a value that starts with '-' and a digit (or '.', inf, nan): argparse would take "-1e-5" for a flag
_NEGATIVE_VALUE = re.compile(r"^-(\d|\.\d|inf|nan)", re.IGNORECASE)


def glue_negative_values(argv: Sequence[str]) -> list[str]:
    """``--flag -1e-5`` as ``--flag=-1e-5``, so that a negative value reaches the flag's range check (argparse
    reads "-1e-5" as an unknown option and says "expected one argument"); what ``main`` parses.

    Args:
        argv: the command line's arguments, without the program name.

    Returns:
        The same arguments, each negative number after a ``--flag`` joined to it with ``=``.
    """
    out: list[str] = []
    for token in argv:
        if out and _NEGATIVE_VALUE.match(token) and out[-1].startswith("--") and "=" not in out[-1]:
            out[-1] = f"{out[-1]}={token}"
        else:
            out.append(token)
    return out


def _main(argv) -> int:
    parser = build_parser()
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        if argv[:1] == ["--version"] and len(argv) > 1:  # argparse prints the version and ignores the rest
            raise UsageError(f"privcal: error: --version takes no other argument, got {' '.join(argv[1:])!r}")
        args = parser.parse_args(glue_negative_values(argv))
        if os.environ.get("PRIVCAL_READY") == "1":  # a readiness line for tests that interrupt a run
            print("privcal: ready", file=sys.stderr, flush=True)
        return _dispatch(parser, args)
    except BrokenPipeError:  # e.g. `privcal table | head`: stop quietly
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0
    except (UsageError, ValueError, PrivcalError, OSError, MemoryError, ImportError, ArithmeticError) as exc:
        print(_refusal_line(exc), file=sys.stderr)
        return 2


def _dispatch(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    """Run the parsed command; its exit code."""
    if args.command is None:  # usage is an error's company: stderr, exit 2
        parser.print_help(sys.stderr)
        return 2
    if args.command == "table":
        check_table_flags(args, parser.parse_args(["table"]))
        return cmd_table(args)
    if args.command == "calibrate":
        return cmd_calibrate(args)
    if args.command == "epsilon":
        return cmd_epsilon(args)
    if args.command == "train" and getattr(args, "agent", None) is None:
        raise UsageError("privcal: error: privcal train needs an agent (see privcal train --help)")
    if args.command in ("plot", "frontier", "verify", "train"):
        return args._run(args)
    return 2


def _refusal_line(exc: BaseException) -> str:
    """The one stderr line of a refused request (the order of the checks: the most specific kind first)."""
    if isinstance(exc, UsageError):
        return user_words(exc)
    if isinstance(exc, (ValueError, PrivcalError)):
        return f"privcal: error: {error_words(exc)}"
    if isinstance(exc, OSError):  # file errors: the path and the reason, one line
        where = f"{exc.filename}: " if getattr(exc, "filename", None) else ""
        return f"privcal: error: {where}{user_words(exc.strerror or exc)}"
    if isinstance(exc, MemoryError):
        return "privcal: error: not enough memory for this request (reduce its size)"
    if isinstance(exc, ImportError):  # an optional extra not installed: privcal's message names it
        why = " ".join(str(exc).split())
        if "pip install" not in why:
            why += " (an optional dependency: pip install 'privcal[rl,plot]' installs the extras the commands use)"
        return f"privcal: error: {why}"
    # ArithmeticError: overflow / division by zero at extreme inputs
    return ("privcal: error: these inputs are outside the range privcal can compute (a number overflows "
            f"float64, e.g. sensitivity / sigma too large; {type(exc).__name__})")
    return 2
