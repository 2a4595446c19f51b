"""The documentation builds from the docstrings with warnings as errors: Sphinx with autodoc
and napoleon, one API page per layer (docs/api/), the CLI reference (docs/cli.rst, generated from the parser),
the user guide, the README's tour, docs/pld.md, docs/claims.md and the CHANGELOG (``docs`` extra; also in
``test``, so CI builds it)."""

from __future__ import annotations

import argparse
import pathlib
import re

import pytest

DOCS = pathlib.Path(__file__).resolve().parent.parent / "docs"


@pytest.fixture(scope="module")
def html(tmp_path_factory):
    """The built HTML (one build for the tests below)."""
    pytest.importorskip("myst_parser")
    build = pytest.importorskip("sphinx.cmd.build")
    # a run-time cache filled first (the forward differences' FD_CACHE, as other tests of the session may leave it):
    # the API pages document the cache, never its contents (``:meta hide-value:``), whatever ran before the build
    from privcal.analysis import wbk_quadrature

    for i in range(wbk_quadrature.FD_CACHE_SIZE):
        wbk_quadrature.log_forward_differences_gaussian(0.5 + 0.05 * i, 512)
    tmp_path = tmp_path_factory.mktemp("docs")
    code = build.build_main(["-W", "--keep-going", "-q", "-b", "html", "-d", str(tmp_path / "doctrees"),
                             str(DOCS), str(tmp_path / "html")])
    assert code == 0
    return tmp_path / "html"


def _ids(pages) -> set[str]:
    ids: set[str] = set()
    for page in pages:
        ids |= set(re.findall(r'id="([^"]+)"', page.read_text(encoding="utf-8")))
    return ids


def test_api_reference_builds_without_warnings(html):
    ids = _ids((html / "api").glob("*.html"))
    for name in ("privcal.accounting.api.calibrate", "privcal.accounting.pld_accountant.PLDAccountant",
                 "privcal.accounting.realisable.epsilon_lower", "privcal.integrations.opacus.PrivcalAccountant"):
        assert name in ids, name
    for page in ("pld", "claims", "guide", "cli", "samplers", "groups", "rdp", "ucbvi"):
        assert (html / f"{page}.html").exists(), page


def test_top_level_names_are_documented_as_users_type_them(html):
    # privcal.calibrate, privcal.epsilon, ... are anchors of their own (not only privcal.accounting.api.calibrate)
    import privcal

    ids = _ids((html / "api").glob("*.html"))
    assert {f"privcal.{name}" for name in privcal.__all__} <= ids
    front_door = (html / "api" / "front-door.html").read_text(encoding="utf-8")
    for name in ("calibrate", "epsilon", "epsilon_of", "calibrate_report"):
        assert f'id="privcal.{name}"' in front_door, name
    # and the search box finds them: the search index holds privcal.calibrate as a function of the front-door
    # page, and the CLI's flags as options of the CLI reference
    index = _search_index(html)
    found = [index["docnames"][doc] for doc, _, _, _, name in index["objects"]["privcal"] if name == "calibrate"]
    assert found == ["api/front-door"]
    options = [name for doc, _, _, _, name in index["objects"]["privcal-calibrate"]
               if index["docnames"][doc] == "cli"]
    assert "--epsilon" in options and "--history" in options


def _search_index(html) -> dict:
    import json

    text = (html / "searchindex.js").read_text(encoding="utf-8")  # Search.setIndex({...})
    return json.loads(text[text.index("(") + 1: text.rindex(")")])


def test_no_api_page_is_the_whole_reference(html):
    # one page per layer: the single 1.8 MB page of 0.2.0 is gone (the largest layer page is ~0.35 MB); a cache's
    # contents would add to it (the fixture fills FD_CACHE before the build)
    sizes = {p.name: p.stat().st_size for p in (html / "api").glob("*.html")}
    assert len(sizes) >= 10
    assert max(sizes.values()) < 600_000, sizes


def test_every_flag_has_an_anchor_in_the_cli_reference(html):
    # Sphinx's option directive: #cmdoption-privcal-table-setting, one per flag of every command
    from privcal.cli import build_parser

    ids = _ids([html / "cli.html"])

    def walk(parser, path):
        yield path, parser
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, sub in action.choices.items():
                    yield from walk(sub, f"{path} {name}")

    missing = []
    for path, parser in walk(build_parser(), "privcal"):
        for action in parser._actions:
            if (isinstance(action, (argparse._HelpAction, argparse._SubParsersAction))
                    or action.help == argparse.SUPPRESS):
                continue
            flag = max(action.option_strings, key=len) if action.option_strings else action.dest.upper()
            name = flag.lstrip("-") if action.option_strings else "arg-" + flag  # a positional: -arg-KIND
            anchor = "cmdoption-" + path.replace(" ", "-") + "-" + name
            if anchor not in ids:
                missing.append(anchor)
    assert missing == []


def test_every_public_module_is_in_the_reference():
    # the modules held to the docstring rule (tests/test_api_surface.py) are the ones the reference shows
    import importlib.util

    spec = importlib.util.spec_from_file_location("_surface", DOCS.parent / "tests" / "test_api_surface.py")
    surface = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(surface)
    shown = set()
    for page in (DOCS / "api").glob("*.rst"):
        shown |= {line.split("::", 1)[1].strip() for line in page.read_text(encoding="utf-8").splitlines()
                  if line.startswith(".. automodule::")}
    assert set(surface.MODULES) <= shown


def _blocks(text: str) -> list[tuple[str, str]]:
    """The fenced blocks of a Markdown page, in order: (language, body)."""
    return [(m.group(1), m.group(2)) for m in re.finditer(r"^```(\w*)\n(.*?)^```$", text, flags=re.MULTILINE | re.DOTALL)]


def test_the_guides_commands_print_what_it_quotes(monkeypatch):
    # every `privcal ...` block of docs/guide.md runs (in-process) and prints each line of the output quoted after it
    import contextlib
    import io
    import shlex

    from privcal.cli import main

    monkeypatch.chdir(DOCS.parent)  # the guide's paths (examples/runs.json) are relative to the repository
    blocks = _blocks((DOCS / "guide.md").read_text(encoding="utf-8"))
    ran = 0
    for (lang, body), (next_lang, quoted) in zip(blocks, blocks[1:] + [("", "")]):
        if lang != "shell":
            continue
        assert body.startswith("privcal ") and body.count("\n") == 1, body
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(shlex.split(body)[1:])
        printed = out.getvalue() + err.getvalue()
        assert code in (0, 2), (body, printed)
        assert next_lang == "text", f"no quoted output after {body}"
        lines = printed.splitlines()
        for line in quoted.splitlines():
            assert line in lines, f"{body.strip()}: quoted line not printed:\n{line}\n--- printed:\n{printed}"
        assert (code == 2) == quoted.startswith("privcal: error:"), body
        ran += 1
    assert ran >= 15


def test_the_guides_python_prints_what_its_comments_say(capsys):
    blocks = _blocks((DOCS / "guide.md").read_text(encoding="utf-8"))
    python = [body for lang, body in blocks if lang == "python"]
    assert len(python) >= 3
    for body in python:
        exec(compile(body, "docs/guide.md", "exec"), {})
        printed = capsys.readouterr().out.splitlines()
        expected = [m.group(1).rstrip(":") for m in re.finditer(r"print\(.*\)\s+# (\S+)", body)]
        assert [line for line in printed if line in expected] == expected, (expected, printed)


def test_the_guides_history_files_are_the_examples():
    import json
    import sys

    blocks = dict(
        (lang, body) for lang, body in _blocks((DOCS / "guide.md").read_text(encoding="utf-8"))
        if lang in ("json", "toml"))
    assert json.loads(blocks["json"]) == json.loads((DOCS.parent / "examples" / "runs.json").read_text())
    if sys.version_info >= (3, 11):
        import tomllib

        toml = tomllib.loads((DOCS.parent / "examples" / "runs.toml").read_text())
        assert tomllib.loads(blocks["toml"]) == toml
        assert toml["release"] == json.loads(blocks["json"])


def test_pld_md_runs_in_order_and_its_map_names_tests_that_exist():
    # docs/pld.md: sections numbered 1, 1.1, 1.2, ..., 2, 2.1, ... in order, without gaps or lettered inserts,
    # and every test the opening map names is defined in tests/
    text = (DOCS / "pld.md").read_text(encoding="utf-8")
    numbers = re.findall(r"^#{2,3} (\d+(?:\.\d+)?\w*)[. ]", text, flags=re.MULTILINE)
    expected, part, sub = [], 0, 0
    for n in numbers:
        if "." in n:
            sub += 1
            expected.append(f"{part}.{sub}")
        else:
            part, sub = part + 1, 0
            expected.append(str(part))
    assert numbers == expected, numbers
    assert text.index("## Map") < text.index("## 1. Dominating pairs")
    table = text[text.index("## Map"): text.index("## 1. Dominating pairs")]
    named = set(re.findall(r"`(test_\w+)`", table))
    assert len(named) >= 30
    defined = set()
    for path in (DOCS.parent / "tests").glob("test_*.py"):
        defined |= set(re.findall(r"^def (test_\w+)", path.read_text(encoding="utf-8"), flags=re.MULTILINE))
    assert named <= defined, named - defined
