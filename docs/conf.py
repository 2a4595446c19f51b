"""Sphinx configuration of privcal's API reference (``pip install -e '.[docs]'``;
``sphinx-build -W -b html docs docs/_build/html``; built by tests/test_docs.py with warnings as errors)."""

from __future__ import annotations

import re

import privcal

project = "privcal"
author = "the privcal developers"
release = version = privcal.__version__
extensions = ["sphinx.ext.autodoc", "sphinx.ext.napoleon", "myst_parser"]
source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "frontier.py", "deprecation.md"]
html_theme = "alabaster"
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


def _escape(text: str) -> str:
    """Escape reST's inline markup outside the protected spans (privcal's docstrings are mostly plain
    text: |x| is an absolute value, 2**-53 a power, x_ a name), keeping a leading bullet."""
    stripped = text.lstrip()
    indent = text[: len(text) - len(stripped)]
    bullet = ""
    if stripped.startswith(("* ", "- ")):
        bullet, stripped = stripped[:2], stripped[2:]
    parts = _PROTECTED.split(stripped)
    out = [p if i % 2 else _SPECIAL.sub(r"\\\1", p) for i, p in enumerate(parts)]
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


def setup(app):
    app.connect("autodoc-process-docstring", _process, priority=600)  # after napoleon (500)
