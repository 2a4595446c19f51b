"""The command-line reference (docs/cli.rst) is the parser's: every command, every flag with its help and default,
and an example per command that runs as written.

docs/cli.rst is written by docs/_cli_reference.py from ``privcal.cli.build_parser()``; after changing a flag,
run ``python docs/_cli_reference.py``. These tests read the committed file, so a flag added to the parser and not
to the reference fails here (the first test), and the second walks the parser on its own, without the generator,
so a generator that skipped a flag fails too.
"""

from __future__ import annotations

import argparse
import importlib.util
import pathlib
import re
import shlex

import pytest

from privcal.cli import build_parser, main

DOCS = pathlib.Path(__file__).resolve().parent.parent / "docs"
REFERENCE = DOCS / "cli.rst"


def _generator():
    spec = importlib.util.spec_from_file_location("_cli_reference", DOCS / "_cli_reference.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _walk(parser: argparse.ArgumentParser, path: str = "privcal"):
    """(command path, parser) of every command, found without the generator."""
    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _walk(sub, f"{path} {name}")


def _sections(text: str) -> dict[str, str]:
    """The reference's text per command: from its ``.. program::`` line to the next one."""
    parts = re.split(r"^\.\. program:: (.+)$", text, flags=re.MULTILINE)
    return {parts[i].strip(): parts[i + 1] for i in range(1, len(parts), 2)}


def missing_from_reference(parser: argparse.ArgumentParser, text: str) -> list[str]:
    """Every flag (and positional argument) of ``parser`` that the reference ``text`` does not document with its
    help and its default, as ``"privcal table --flag (what is missing)"``; flags hidden from ``--help``
    (deprecated spellings) are not listed there."""
    sections = _sections(text)
    missing = []
    for path, sub in _walk(parser):
        for action in sub._actions:
            if isinstance(action, (argparse._HelpAction, argparse._SubParsersAction)) or action.help == argparse.SUPPRESS:
                continue
            flag = max(action.option_strings, key=len) if action.option_strings else action.dest.upper()
            section = sections.get(path, "")
            entry = re.search(rf"^\.\. option:: (?:[^\n]*, )?{re.escape(flag)}\b[^\n]*\n(.*?)(?=^\.\. |\Z)", section,
                              flags=re.MULTILINE | re.DOTALL)
            if entry is None:
                missing.append(f"{path} {flag} (no entry)")
                continue
            body = " ".join(entry.group(1).replace("\\", "").split())  # reST escapes dropped
            words_of_help = re.sub(r"%\([a-z_]+\)[a-z]", "", action.help or "")
            if action.help and not isinstance(action, argparse._VersionAction):
                words = words_of_help.split()[:4]
                if not all(w.strip("()`,;:") in body for w in words if w.strip("()`,;:")):
                    missing.append(f"{path} {flag} (help text)")
            if isinstance(action, argparse._VersionAction):
                continue
            # the default (or "required") is stated once: by the help text in its own words, else by a line
            if action.required:
                said = re.search(r"\brequired\b", words_of_help, flags=re.IGNORECASE)
                if said and "Required." in body:
                    missing.append(f"{path} {flag} (required stated twice)")
                elif not said and "Required." not in body:
                    missing.append(f"{path} {flag} (required)")
                continue
            said = re.search(r"\bdefault\b", words_of_help, flags=re.IGNORECASE)
            default = action.default
            shown = ("off" if default in (False, None) else "on") if action.nargs == 0 else (
                "unset" if default in (None, []) else f"``{default}``")
            if said and "Default:" in body:
                missing.append(f"{path} {flag} (default stated twice)")
            elif not said and f"Default: {shown}." not in body:
                missing.append(f"{path} {flag} (default {default!r})")
    return missing


def test_reference_is_what_the_parser_gives():
    # red when a flag, a help text or a default changes in the parser and docs/cli.rst was not regenerated
    expected = _generator().render(build_parser())
    assert REFERENCE.read_text(encoding="utf-8") == expected, (
        "docs/cli.rst is not what privcal.cli.build_parser() gives: run python docs/_cli_reference.py")


def test_every_flag_of_every_command_is_in_the_reference_with_its_help_and_default():
    text = REFERENCE.read_text(encoding="utf-8")
    assert missing_from_reference(build_parser(), text) == []
    commands = [path for path, _ in _walk(build_parser())]
    assert {"privcal table", "privcal calibrate", "privcal epsilon", "privcal plot", "privcal verify",
            "privcal frontier", "privcal train dpq", "privcal train gpope", "privcal train pucb"} <= set(commands)
    for path in commands:
        assert re.search(rf"^``{re.escape(path)}``\n-+\n", text, flags=re.MULTILINE), path


def test_the_check_sees_a_flag_the_reference_lacks():
    # the check above can fail: a parser with one more flag (or a changed default) is not covered by the file
    text = REFERENCE.read_text(encoding="utf-8")
    parser = build_parser()
    table = next(sub for path, sub in _walk(parser) if path == "privcal table")
    table.add_argument("--new-flag", type=float, default=2.0, help="a flag added after the reference was written")
    calibrate = next(sub for path, sub in _walk(parser) if path == "privcal calibrate")
    next(a for a in calibrate._actions if "--persistent" in a.option_strings).default = True
    assert missing_from_reference(parser, text) == ["privcal table --new-flag (no entry)",
                                                    "privcal calibrate --persistent (default True)"]
    with pytest.raises(AssertionError):
        assert REFERENCE.read_text(encoding="utf-8") == _generator().render(parser)


def test_a_default_is_stated_once():
    # a help text that says its default ("target delta (default: 1e-05)") gets no Default line of its own; a flag
    # whose help says nothing of it gets one; the check above sees a default stated twice
    text = REFERENCE.read_text(encoding="utf-8")
    entry = "   target delta (default: 1e-05)\n"
    assert text.count(entry) == 1 and "Default: ``1e-05``" not in text
    assert "   Default: off.\n" in _sections(text)["privcal calibrate"].split(".. option:: --persistent")[1]
    twice = text.replace(entry, entry + "\n   Default: ``1e-05``.\n")
    assert missing_from_reference(build_parser(), twice) == ["privcal table --delta (default stated twice)"]


def test_every_command_has_an_example_that_parses_to_it():
    examples = _generator().EXAMPLES
    for path, sub in _walk(build_parser()):
        assert examples.get(path), f"no example for {path}"
        for example in examples[path]:
            argv = shlex.split(example)
            assert argv[0] == "privcal"
            if argv[1:] == ["--version"]:
                continue
            args = build_parser().parse_args(argv[1:])
            words = path.split()[1:]
            landed = [args.command] + ([args.agent] if getattr(args, "agent", None) else [])
            assert landed[: len(words)] == words, (example, path)


@pytest.mark.parametrize("path", ["privcal table", "privcal calibrate", "privcal epsilon", "privcal verify",
                                  "privcal train dpq", "privcal train pucb"])
def test_the_quick_examples_run(path, capsys):
    # each under ~1.5 s; plot needs matplotlib, frontier and train gpope take longer (they are parsed above)
    for example in _generator().EXAMPLES[path]:
        assert main(shlex.split(example)[1:]) == 0, example
    assert capsys.readouterr().out.strip()
