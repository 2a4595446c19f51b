"""One version number: pyproject.toml's, which privcal.__version__ reads from the installed metadata."""

from __future__ import annotations

import json
import re
from importlib import metadata
from pathlib import Path

import pytest

import privcal
from privcal import _version

ROOT = Path(__file__).resolve().parents[1]


def _pyproject_version() -> str:
    text = (ROOT / "pyproject.toml").read_text()
    project = text.split("[project]", 1)[1].split("\n[", 1)[0]
    return re.search(r'^version\s*=\s*"([^"]+)"', project, re.MULTILINE).group(1)


def _installed_from_this_tree() -> bool:
    """Whether the installed privcal distribution was built from this source tree (an editable install
    of it, or its metadata beside the package), not from another checkout."""
    try:
        dist = metadata.distribution("privcal")
    except metadata.PackageNotFoundError:
        return False
    url = json.loads(dist.read_text("direct_url.json") or "{}").get("url", "")
    return url == ROOT.as_uri() or Path(str(dist.locate_file(""))).resolve() == ROOT


def test_version_is_pyprojects():
    if not _installed_from_this_tree():
        pytest.skip("the installed privcal metadata comes from another checkout (pip install -e . here)")
    assert privcal.__version__ == metadata.version("privcal") == _pyproject_version()


def test_version_is_pep440_and_the_changelog_names_it():
    version = _pyproject_version()
    assert re.fullmatch(r"\d+\.\d+\.\d+", version)
    changelog = (ROOT / "CHANGELOG.md").read_text()
    # the version is released: its section is dated (Keep a Changelog's "## X.Y.Z - YYYY-MM-DD"; the format
    # of the whole file is checked by tests/test_changelog.py)
    assert re.search(rf"^## {re.escape(version)} - \d{{4}}-\d{{2}}-\d{{2}}$", changelog, re.MULTILINE)


def test_version_without_metadata_is_unknown_not_a_stale_number():
    assert _version.version_of("privcal-no-such-distribution") == _version.UNKNOWN == "0+unknown"


def _deprecations() -> list[tuple[str, str]]:
    """(deprecated spelling, removed-in version) of each row of docs/deprecation.md's table."""
    rows = []
    for line in (ROOT / "docs" / "deprecation.md").read_text().splitlines():
        # cells split on unescaped pipes: a cell may hold "\|" (Markdown's escaped pipe, as in \|x - y\|)
        cells = [c.strip() for c in re.split(r"(?<!\\)\|", line.strip().strip("|"))]
        if len(cells) == 4 and re.fullmatch(r"\d+\.\d+\.\d+", cells[3]):
            rows.append((cells[0], cells[3]))
    return rows


def _key(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in version.split("."))


def test_no_deprecated_spelling_outlives_its_removal_version():
    # docs/deprecation.md, rule 5: bumping the version to a row's "removed in" fails here until the
    # spelling is removed from privcal and its row deleted
    rows = _deprecations()
    assert len(rows) >= 10  # the table was parsed (19 rows in 0.2.0)
    current = _key(_pyproject_version())
    overdue = [spelling for spelling, removed in rows if _key(removed) <= current]
    assert not overdue, f"remove these deprecated spellings (docs/deprecation.md): {overdue}"
