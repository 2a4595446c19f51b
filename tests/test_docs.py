"""The API reference builds from the docstrings with warnings as errors (issue 20, item 2): Sphinx with
autodoc and napoleon, the README's tour, docs/pld.md, docs/claims.md and the CHANGELOG (``docs`` extra;
also in ``test``, so CI builds it)."""

from __future__ import annotations

import pathlib

import pytest

DOCS = pathlib.Path(__file__).resolve().parent.parent / "docs"


def test_api_reference_builds_without_warnings(tmp_path):
    pytest.importorskip("myst_parser")
    build = pytest.importorskip("sphinx.cmd.build")
    code = build.build_main(["-W", "--keep-going", "-q", "-b", "html", "-d", str(tmp_path / "doctrees"),
                             str(DOCS), str(tmp_path / "html")])
    assert code == 0
    page = (tmp_path / "html" / "api" / "index.html").read_text(encoding="utf-8")
    for name in ("privcal.accounting.api.calibrate", "privcal.accounting.pld_accountant.PLDAccountant",
                 "privcal.accounting.realisable.epsilon_lower", "privcal.integrations.opacus.PrivcalAccountant"):
        assert f'id="{name}"' in page, name
    assert (tmp_path / "html" / "pld.html").exists() and (tmp_path / "html" / "claims.html").exists()


def test_every_public_module_is_in_the_reference():
    # the modules held to the docstring rule (tests/test_api_surface.py) are the ones the reference shows
    import importlib.util

    spec = importlib.util.spec_from_file_location("_surface", DOCS.parent / "tests" / "test_api_surface.py")
    surface = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(surface)
    page = (DOCS / "api" / "index.rst").read_text(encoding="utf-8")
    shown = {line.split("::", 1)[1].strip() for line in page.splitlines() if line.startswith(".. automodule::")}
    assert set(surface.MODULES) <= shown
