"""The command-line reference, ``docs/cli.rst``, generated from privcal's own parser.

    python docs/_cli_reference.py            # rewrite docs/cli.rst from privcal.cli.build_parser()
    python docs/_cli_reference.py --check    # exit 1 when docs/cli.rst is not what the parser gives

Every command (``privcal table``, ..., ``privcal train pucb``) gets a section with its description, an example,
a synopsis, and one Sphinx ``option`` entry per flag (its help text, and its default where the help text does not
state it); the ``option`` entries
give each flag an anchor (``#cmdoption-privcal-table-setting``), an index entry and a search result.
tests/test_cli_reference.py fails when the committed file differs from what this script writes (a flag added,
removed or re-worded in the parser), and checks every flag of the parser against the file on its own walk.
"""

from __future__ import annotations

import argparse
import pathlib
import re
import sys
import textwrap

OUTPUT = pathlib.Path(__file__).resolve().parent / "cli.rst"

# One example per command, each fast and runnable as written (the quick ones are run by
# tests/test_cli_reference.py; every one is parsed there and must land on its own command).
EXAMPLES = {
    "privcal": ["privcal --version"],
    "privcal table": [
        "privcal table --delta 1e-4 --epsilons 0.45,0.9,2,4",
        "privcal table --setting gaussian --steps 1000 --epsilons 1,2,4",
    ],
    "privcal calibrate": ["privcal calibrate --epsilon 1 --delta 1e-5 --steps 1e4 --sample-rate 0.01"],
    "privcal epsilon": ["privcal epsilon --sigma 3 --delta 1e-5 --steps 100 --accountant rdp"],
    "privcal plot": ["privcal plot epsilon-vs-steps --sigma 3 --delta 1e-5 --steps 1e4 --out eps.png"],
    "privcal verify": ["privcal verify --claim GPOPE-lemma1"],
    "privcal frontier": ["privcal frontier pucb --epsilons 1000 --amounts 200 --seeds 1",
                         "privcal frontier frozenlake --epsilons 0.1,1,10 --amounts 1000 --seeds 0-9"],
    "privcal train": ["privcal train dpq --method select --epsilon 7 --delta 1e-5 --seed 0"],
    "privcal train dpq": ["privcal train dpq --method select --epsilon 7 --delta 1e-5 --seed 0"],
    "privcal train gpope": [
        "privcal train gpope --domain chain --trajectories 1000 --epsilon 0.1 --delta 1e-5 --seed 0 --format json",
    ],
    "privcal train pucb": [
        "privcal train pucb --states 3 --actions 2 --horizon 3 --episodes 200 --epsilon 1 --seed 0",
    ],
    "privcal train frozenlake": [
        "privcal train frozenlake --method select --epsilon 1 --episodes 10000 --seeds 100-199",
        "privcal train frozenlake --method fqi-dpsgd --epsilon 1 --delta 1e-5 --episodes 10000 --seed 0",
    ],
    "privcal train ucbvi": [
        "privcal train ucbvi --epsilon 10 --delta 1e-5 --episodes 10000 --seeds 0-9",
        "privcal train ucbvi --environment frozenlake --epsilon 10 --delta 1e-5 --episodes 2000 --seed 0",
    ],
}

_FLAG = re.compile(r"(?<![\w`-])(--[A-Za-z][\w-]*)")
_SPECIAL = re.compile(r"([\\*`|_])")


def commands(parser: argparse.ArgumentParser, path: str = "privcal"):
    """(command path, parser) of ``parser`` and of every subcommand below it, in parser order."""
    yield path, parser
    for action in parser._actions:
        if isinstance(getattr(action, "choices", None), dict):  # a subparsers action
            for name, sub in action.choices.items():
                yield from commands(sub, f"{path} {name}")


def summaries(parser: argparse.ArgumentParser) -> dict[str, str]:
    """The ``help=`` line each subcommand was registered with, by command name."""
    out = {}
    for action in parser._actions:
        if isinstance(getattr(action, "choices", None), dict):
            for pseudo in getattr(action, "_choices_actions", ()):
                out[pseudo.dest] = pseudo.help or ""
    return out


def documented_actions(parser: argparse.ArgumentParser):
    """The flags and positional arguments of one command (not -h/--help, not the subcommand choice, not a flag
    hidden from ``--help``: a deprecated spelling)."""
    for action in parser._actions:
        if isinstance(action, argparse._HelpAction) or isinstance(getattr(action, "choices", None), dict):
            continue
        if action.help is argparse.SUPPRESS:
            continue
        yield action


def name_of(action: argparse.Action) -> str:
    """The flag as users type it (its longest option string), or the positional argument's name."""
    if action.option_strings:
        return max(action.option_strings, key=len)
    return action.metavar or action.dest.upper()


def _metavar(action: argparse.Action) -> str:
    if action.metavar is not None:
        return action.metavar
    if action.choices is not None:
        return "{" + ",".join(map(str, action.choices)) + "}"
    return action.dest.upper()


def invocation(action: argparse.Action) -> str:
    """What follows ``.. option::``: the option strings with their argument (``--setting {dpq,...}``)."""
    if not action.option_strings:
        return name_of(action) + ("" if action.choices is None else " " + _metavar(action))
    if action.nargs == 0:
        return ", ".join(action.option_strings)
    return ", ".join(f"{opt} {_metavar(action)}" for opt in action.option_strings)


def help_text(action: argparse.Action, prog: str) -> str:
    """The flag's help with argparse's %(default)s-style fields filled in, as ``--help`` prints it."""
    if not action.help or action.help is argparse.SUPPRESS:
        return ""
    params = dict(vars(action), prog=prog)
    params = {k: v for k, v in params.items() if v is not argparse.SUPPRESS}
    if params.get("choices") is not None:
        params["choices"] = ", ".join(map(str, params["choices"]))
    for key, value in list(params.items()):
        if hasattr(value, "__name__"):
            params[key] = value.__name__
    return action.help % params


def default_of(action: argparse.Action) -> str:
    """The default in words: the value argparse fills in, or what an absent flag means."""
    if isinstance(action, argparse._VersionAction):
        return ""
    if action.required:
        return "required"
    if action.nargs == 0:
        return "off" if action.default in (False, None) else "on"
    if action.default is None or action.default == []:
        return "unset"
    return f"``{action.default}``"


#: a help text that states the flag's default (or that it has none, or that it is required) in its own words
_STATES_DEFAULT = re.compile(r"\bdefault\b", re.IGNORECASE)
_STATES_REQUIRED = re.compile(r"\brequired\b", re.IGNORECASE)


def default_line(action: argparse.Action, body: str) -> str:
    """The ``Default: ...`` (or ``Required.``) line of a flag's entry, or "" where its help text ``body`` already
    says it (``--help`` states many defaults in words the parser cannot give, "default: floor(T/B)"): a default is
    stated once."""
    default = default_of(action)
    if not default:
        return ""
    if default == "required":
        return "" if _STATES_REQUIRED.search(body) else "Required."
    return "" if _STATES_DEFAULT.search(body) else f"Default: {default}."


def _rst(text: str) -> str:
    """Plain text as reST: flags become literals, markup characters are escaped."""
    parts = _FLAG.split(text)
    return "".join(f"``{p}``" if i % 2 else _SPECIAL.sub(r"\\\1", p) for i, p in enumerate(parts))


def _fill(text: str, indent: str = "") -> str:
    return textwrap.fill(text, width=110, initial_indent=indent, subsequent_indent=indent,
                         break_long_words=False, break_on_hyphens=False)


def _synopsis(path: str, parser: argparse.ArgumentParser) -> str:
    """``path [--flag ARG] ...``, wrapped at 84 columns between flags (never inside one)."""
    words = []
    for action in documented_actions(parser):
        word = invocation(action).split(", ")[-1] if action.option_strings else _metavar(action)
        words.append(word if action.required or not action.option_strings else f"[{word}]")
    for action in parser._actions:
        if isinstance(getattr(action, "choices", None), dict):
            words.append((action.metavar or "COMMAND") + " ...")
    lines, line = [], "   " + path
    for word in words:
        if len(line) + 1 + len(word) > 84:
            lines.append(line)
            line = "   " + " " * len(path)
        line += " " + word
    return "\n".join(lines + [line])


def _anchor(path: str) -> str:
    return "cli-" + path.replace(" ", "-")


_INTRO = """\
Command-line reference
======================

.. This page is generated by docs/_cli_reference.py from privcal.cli.build_parser(): do not edit it by hand;
   run ``python docs/_cli_reference.py`` after changing a flag (tests/test_cli_reference.py checks it).

``privcal COMMAND [options]`` (or ``python -m privcal``). Every command takes ``-h`` / ``--help``. Bad input
prints one line starting ``privcal: error:`` to stderr and exits with status 2; Ctrl-C prints one line and
exits 130. Every command that prints results takes ``--format text|json|csv|markdown`` (``--json`` is short
for ``--format json``; json writes ``null`` for an infinite value, csv ``inf``). ``sigma`` is always an
absolute noise standard deviation; a noise multiplier is called ``noise_multiplier``. What the numbers mean
and which sampler, relation and privacy unit to state: :doc:`guide`. The Python functions behind the
commands: :doc:`api/front-door`.

Each flag below shows its help text (as ``--help`` prints it) and its default, once: in the help text where it
states it, else on a ``Default:`` line (the value the parser fills in, ``off`` for a switch, or ``unset`` where
the command decides without the flag). Flags hidden from ``--help`` (deprecated spellings, which still work and
warn) are not listed.

.. list-table::
   :header-rows: 1
   :widths: 25 75

   * - command
     - what it does
"""


def render(parser: argparse.ArgumentParser | None = None) -> str:
    """The whole reference page (reST) for ``parser`` (default: ``privcal.cli.build_parser()``)."""
    if parser is None:
        from privcal.cli import build_parser

        parser = build_parser()
    cmds = list(commands(parser))
    helps = {}
    for path, sub in cmds:
        for name, line in summaries(sub).items():
            helps[f"{path} {name}"] = line
    out = [_INTRO]
    for path, sub in cmds[1:]:
        out.append(f"   * - :ref:`{path} <{_anchor(path)}>`\n     - {_rst(helps.get(path, ''))}\n")
    for path, sub in cmds:
        title = f"``{path}``"
        out.append(f"\n.. _{_anchor(path)}:\n\n{title}\n{'-' * len(title)}\n")
        if sub.description:
            out.append(_fill(_rst(sub.description)) + "\n")
        examples = EXAMPLES.get(path, [])
        if examples:
            out.append(("Example:" if len(examples) == 1 else "Examples:") + "\n\n.. code-block:: shell\n")
            out.append("".join(f"   {ex}\n" for ex in examples))
        out.append("Synopsis:\n\n.. code-block:: text\n\n" + _synopsis(path, sub) + "\n")
        children = [p for p, _ in cmds if p.startswith(path + " ") and p.count(" ") == path.count(" ") + 1]
        if children:
            out.append("Commands: " + ", ".join(f":ref:`{c.split()[-1]} <{_anchor(c)}>`" for c in children) + ".\n")
        actions = list(documented_actions(sub))
        if actions:
            out.append(f".. program:: {path}\n")
        for action in actions:
            body = help_text(action, sub.prog)
            if isinstance(action, argparse._VersionAction):
                body = "print the version (privcal X.Y.Z) and exit"
            lines = [f".. option:: {invocation(action)}", ""]
            if body:
                lines += [_fill(_rst(body), "   "), ""]
            stated = default_line(action, body)
            if stated:
                lines += [f"   {stated}", ""]
            out.append("\n".join(lines))
    return "\n".join(out).rstrip() + "\n"


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    text = render()
    if args == ["--check"]:
        if OUTPUT.read_text(encoding="utf-8") != text:
            print(f"{OUTPUT} is not what the parser gives: run python docs/_cli_reference.py", file=sys.stderr)
            return 1
        return 0
    if args:
        print("usage: python docs/_cli_reference.py [--check]", file=sys.stderr)
        return 2
    OUTPUT.write_text(text, encoding="utf-8")
    print(OUTPUT)
    return 0


if __name__ == "__main__":
    sys.exit(main())
