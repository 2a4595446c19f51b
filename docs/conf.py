"""Sphinx configuration of privcal's documentation (``pip install -e '.[docs]'``;
``sphinx-build -W -b html docs docs/_build/html``; built by tests/test_docs.py with warnings as errors).

The API reference is one page per layer (docs/api/); docs/_aliases.py documents each object once, under the name
users type. The CLI reference (docs/cli.rst) is written by ``python docs/_cli_reference.py`` from the parser."""

from __future__ import annotations

import pathlib
import re
import sys

import privcal

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))  # docs/_aliases.py

project = "privcal"
author = "the privcal developers"
release = version = privcal.__version__
extensions = ["sphinx.ext.autodoc", "sphinx.ext.napoleon", "myst_parser", "_aliases"]
source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "frontier.py", "_*.py"]
html_theme = "alabaster"
html_theme_options = {"page_width": "1240px", "sidebar_width": "260px"}  # signatures and tables need the width
html_static_path = ["_static"]  # custom.css (alabaster loads it)
autodoc_default_options = {"members": True, "member-order": "bysource"}
autodoc_typehints = "none"  # signatures carry the hints; each docstring states types and ranges in words
autodoc_inherit_docstrings = False
napoleon_google_docstring = True
napoleon_numpy_docstring = False
myst_heading_anchors = 3
suppress_warnings = ["myst.xref_missing"]  # README's relative links to files of the repository

suppress_warnings += ["ref.python"]  # attribute names shared by several classes (epsilon, delta, sigma)

# spans reST must keep: ``literals``, :roles:`targets`, `interpreted text`, **strong**
_PROTECTED = re.compile(r"(``.+?``|:[\w:]+:`[^`]+`|`[^`]+`_{0,2}|\*\*[^*\s](?:[^*]*[^*\s])?\*\*)")
_SPECIAL = re.compile(r"(?<!\\)(\||\*|(?<=\w)_(?=\W|$))")
_FLAG = re.compile(r"(?<![\w`-])(--[A-Za-z][\w-]*)")  # a command-line flag: a literal (smartquotes would dash it)


def _escape(text: str) -> str:
    """Escape reST's inline markup outside the protected spans (privcal's docstrings are mostly plain
    text: |x| is an absolute value, 2**-53 a power, x_ a name), keeping a leading bullet."""
    stripped = text.lstrip()
    indent = text[: len(text) - len(stripped)]
    bullet = ""
    if stripped.startswith(("* ", "- ")):
        bullet, stripped = stripped[:2], stripped[2:]
    parts = _PROTECTED.split(stripped)
    out = [p if i % 2 else _FLAG.sub(r"``\1``", _SPECIAL.sub(r"\\\1", p)) for i, p in enumerate(parts)]
    return indent + bullet + "".join(out)


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _is_field(line: str) -> bool:
    return line.lstrip().startswith(":") and not line.lstrip().startswith("::")


def _blocks(lines: list[str]) -> list[str]:
    """A blank line wherever plain text changes indentation, or starts a bulleted list, without one (a
    formula indented under its sentence becomes a block quote, the text after it a new paragraph); field
    lists, bullets and literal blocks (after ``::``) keep their continuation lines."""
    out: list[str] = []
    field = in_list = False
    for line in lines:
        if not line.strip():
            out.append(line)
            in_list = False
            continue
        prev = next((l for l in reversed(out) if l.strip()), None)
        blank_before = bool(out) and not out[-1].strip()
        bullet = line.lstrip().startswith(("* ", "- "))
        if prev is not None and not blank_before:
            up, down = _indent(line) > _indent(prev), _indent(line) < _indent(prev)
            if up and not (field or in_list or prev.rstrip().endswith("::")):
                out.append("")
            elif down and not _is_field(line) and not (bullet and in_list):
                out.append("")
                in_list = False
            elif bullet and not in_list and not field:
                out.append("")
        if _is_field(line):
            field = True
        elif _indent(line) == 0 or (prev is not None and _indent(line) < _indent(prev)):
            field = False
        if bullet:
            in_list = True
        out.append(line)
    return out


def _process(app, what, name, obj, options, lines):
    escaped = []
    for line in lines:
        if _is_field(line):
            head, sep, tail = line.lstrip().partition(": ")
            escaped.append(line[: _indent(line)] + head + sep + _escape(tail) if sep else line)
        else:
            escaped.append(_escape(line))
    lines[:] = _blocks(escaped)


# napoleon reads the first line "X: text" of an attribute's, constant's or property's docstring as its type X;
# privcal states those types as annotations and writes prose there ("Wang & Hegde 2019, App. E.3: T samples"),
# so a split whose "type" is not a type expression is undone
_TYPE_LIKE = re.compile(r"[\w.]+(\[[^\]]*\])?(\s*\|\s*[\w.]+(\[[^\]]*\])?)*")
_BEFORE_NAPOLEON: dict = {}


def _save(app, what, name, obj, options, lines):
    if what in ("attribute", "data", "property"):
        _BEFORE_NAPOLEON[name] = list(lines)


def _undo_inline_type(app, what, name, obj, options, lines):
    original = _BEFORE_NAPOLEON.pop(name, None)
    if original is None:
        return
    if any(l.startswith(":type: ") and not _TYPE_LIKE.fullmatch(l[7:].strip()) for l in lines):
        lines[:] = original


def setup(app):
    app.connect("autodoc-process-docstring", _save, priority=400)  # before napoleon (500)
    app.connect("autodoc-process-docstring", _undo_inline_type, priority=550)
    app.connect("autodoc-process-docstring", _process, priority=600)  # after napoleon
