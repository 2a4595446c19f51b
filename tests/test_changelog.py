"""CHANGELOG.md is a Keep a Changelog 1.1.0 file (https://keepachangelog.com/en/1.1.0/): releases newest first,
each dated but ``Unreleased``, the newest dated one the package's version; only the six standard sections, in
their order, none empty; one bullet line per change; every spelling docs/deprecation.md deprecates has a line
under *Deprecated* with its replacement and its removal release; every relative link reaches a file of the
repository (and, for a Markdown page, one of its headings).

Each check is a function of the text that returns the problems it finds; every check is also run on a small
broken changelog written here, so that a check that cannot fail is caught."""

from __future__ import annotations

import datetime
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: Keep a Changelog 1.1.0's section names, in the order it lists them
STANDARD = ("Added", "Changed", "Deprecated", "Removed", "Fixed", "Security")

_RELEASE = re.compile(r"## (?:Unreleased|(?P<version>\d+\.\d+\.\d+) - (?P<date>\d{4}-\d{2}-\d{2}))")
_DEFINITION = re.compile(r"^\[([^\]]+)\]:\s*(\S+)")
_CODE = re.compile(r"`[^`]*`")
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")


def _pyproject_version() -> str:
    text = (ROOT / "pyproject.toml").read_text()
    project = text.split("[project]", 1)[1].split("\n[", 1)[0]
    return re.search(r'^version\s*=\s*"([^"]+)"', project, re.MULTILINE).group(1)


def _changelog() -> str:
    return (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")


def _key(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in version.split("."))


def _releases(text: str) -> list[dict]:
    """Each ``## `` release: its heading, version and date (None for Unreleased) and its ``### `` sections as
    (name, entry lines); text before the first release is the introduction."""
    releases: list[dict] = []
    for line in text.splitlines():
        if line.startswith("## "):
            m = _RELEASE.fullmatch(line.rstrip())
            releases.append({"heading": line, "version": m and m["version"], "date": m and m["date"],
                             "valid": m is not None, "sections": []})
        elif line.startswith("### ") and releases:
            releases[-1]["sections"].append((line[4:].strip(), []))
        elif line.strip() and releases and releases[-1]["sections"] and not _DEFINITION.match(line):
            releases[-1]["sections"][-1][1].append(line)
    return releases


def check_releases(text: str, version: str) -> list[str]:
    """Headings ``## Unreleased`` (first, at most once) or ``## X.Y.Z - YYYY-MM-DD`` with a real ISO date,
    versions decreasing and dates not increasing down the file, the newest dated release being ``version``."""
    problems = []
    releases = _releases(text)
    dated = []
    for i, rel in enumerate(releases):
        if not rel["valid"]:
            problems.append(f"not a release heading (## Unreleased or ## X.Y.Z - YYYY-MM-DD): {rel['heading']!r}")
        elif rel["version"] is None:
            if i != 0:
                problems.append("## Unreleased must be the first release")
        else:
            try:
                dated.append((rel["version"], datetime.date.fromisoformat(rel["date"])))
            except ValueError:
                problems.append(f"not an ISO date: {rel['heading']!r}")
    for (newer, newer_date), (older, older_date) in zip(dated, dated[1:]):
        if not (_key(newer) > _key(older) and newer_date >= older_date):
            problems.append(f"releases out of order: {newer} ({newer_date}) above {older} ({older_date})")
    if not dated:
        problems.append("no dated release")
    elif dated[0][0] != version:
        problems.append(f"the newest dated release is {dated[0][0]}, the package version {version}")
    for line in text.splitlines():
        if line.startswith("#") and not line.startswith(("# ", "## ", "### ")):
            problems.append(f"only #, ## and ### headings: {line!r}")
    return problems


def check_sections(text: str) -> list[str]:
    """Only the standard section names, each at most once per release, in the standard order, none empty."""
    problems = []
    for rel in _releases(text):
        names = [name for name, _ in rel["sections"]]
        for name, entries in rel["sections"]:
            if name not in STANDARD:
                problems.append(f"{rel['heading']}: non-standard section {name!r}")
            elif not entries:
                problems.append(f"{rel['heading']}: empty section {name!r}")
        known = [STANDARD.index(n) for n in names if n in STANDARD]
        if known != sorted(set(known)):
            problems.append(f"{rel['heading']}: sections repeated or out of order: {names}")
    return problems


def check_one_line(text: str) -> list[str]:
    """Inside a section every non-blank line is one bullet ``- ...``: a wrapped entry (an indented or lazy
    continuation line) is a problem."""
    problems = []
    for rel in _releases(text):
        for name, entries in rel["sections"]:
            for line in entries:
                if not line.startswith("- "):
                    problems.append(f"{rel['heading']} / {name}: not a one-line entry: {line!r}")
    return problems


def _parens_removed(text: str) -> str:
    """``text`` without its parenthesised parts (nested ones included)."""
    out, depth = [], 0
    for ch in text:
        if ch == "(":
            depth += 1
        elif ch == ")" and depth:
            depth -= 1
        elif not depth:
            out.append(ch)
    return "".join(out)


def deprecations(table: str) -> list[tuple[list[str], str, str]]:
    """Per row of docs/deprecation.md's table: the deprecated spellings (code spans of the first cell outside
    its parentheses), the first code span of the replacement, the removal release."""
    rows = []
    for line in table.splitlines():
        cells = [c.strip().replace("\\|", "|") for c in re.split(r"(?<!\\)\|", line.strip().strip("|"))]
        if len(cells) != 4 or not re.fullmatch(r"\d+\.\d+\.\d+", cells[3]):
            continue
        spans = _CODE.findall(cells[0])
        masked = _CODE.sub(lambda m: f"\0{spans.index(m.group())}\0", cells[0])
        old = [spans[int(i)][1:-1] for i in re.findall(r"\0(\d+)\0", _parens_removed(masked))]
        new = _CODE.findall(cells[1])[0][1:-1]
        rows.append((old, new, cells[3]))
    return rows


def check_deprecations(text: str, rows: list[tuple[list[str], str, str]]) -> list[str]:
    """Each deprecated spelling is named, in code, on a line of a Deprecated section (that of the release that
    first warns) that also names its removal release; each row's replacement is named under Deprecated."""
    releases = [rel for rel in _releases(text) if any(n == "Deprecated" for n, _ in rel["sections"])]
    if not releases:
        return ["no Deprecated section"] if rows else []
    lines = [line for rel in releases for name, entries in rel["sections"] if name == "Deprecated"
             for line in entries]
    problems = []
    for old, new, removed in rows:
        for spelling in old:
            if not any(f"`{spelling}`" in line and removed in line for line in lines):
                problems.append(f"no Deprecated line names `{spelling}` and its removal in {removed}")
        if not any(f"`{new}" in line for line in lines):
            problems.append(f"the replacement `{new}` of {old} is not named under Deprecated")
    return problems


def _slug(title: str) -> str:
    """The heading anchor MyST (``myst_heading_anchors``, its default GitHub-style slug: lower case, spaces to
    hyphens, other non-word characters dropped) and GitHub give a heading; code spans count by their text."""
    return re.sub(r"[^\w\- ]", "", title.replace("`", "").lower()).replace(" ", "-")


def _anchors(page: Path, depth: int = 3) -> set[str]:
    """The anchors of a Markdown page's headings down to ``depth`` (docs/conf.py: myst_heading_anchors = 3),
    outside fenced code, duplicates suffixed -1, -2, ... as MyST and GitHub do."""
    found: set[str] = set()
    fenced = False
    for line in page.read_text(encoding="utf-8").splitlines():
        if line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
            continue
        m = re.match(r"(#{1,6}) (.*)", line)
        if m and not fenced and len(m.group(1)) <= depth:
            slug, n = _slug(m.group(2).strip()), 1
            unique = slug
            while unique in found:
                unique, n = f"{slug}-{n}", n + 1
            found.add(unique)
    return found


def check_links(text: str, root: Path) -> list[str]:
    """Every reference-style link is defined; every relative link target (inline or defined) is a file of
    the repository, relative to CHANGELOG.md's folder; an anchor into a Markdown page is one of its headings."""
    problems = []
    definitions = {}
    prose = []
    for line in text.splitlines():
        m = _DEFINITION.match(line)
        if m:
            definitions[m.group(1).lower()] = m.group(2)
        else:
            prose.append(_CODE.sub("", line))
    prose_text = "\n".join(prose)
    for label in re.findall(r"\]\[([^\]]+)\]", prose_text):
        if label.lower() not in definitions:
            problems.append(f"link reference [{label}] is not defined")
    targets = re.findall(r"\]\(([^)\s]+)\)", prose_text) + list(definitions.values())
    for target in targets:
        if _SCHEME.match(target) or target.startswith("#"):
            continue
        path, _, anchor = target.partition("#")
        file = root / path
        if not file.is_file():
            problems.append(f"link target {target!r}: no file {path}")
        elif anchor and file.suffix == ".md" and anchor not in _anchors(file):
            problems.append(f"link target {target!r}: no heading #{anchor} in {path}")
    return problems


# --- the repository's changelog ------------------------------------------------------------------------------

def test_releases_are_dated_newest_first_and_the_newest_is_the_package_version():
    assert check_releases(_changelog(), _pyproject_version()) == []


def test_only_the_standard_sections_in_order():
    assert check_sections(_changelog()) == []


def test_every_entry_is_one_line():
    assert check_one_line(_changelog()) == []


def test_every_deprecated_spelling_has_a_deprecated_line():
    rows = deprecations((ROOT / "docs" / "deprecation.md").read_text(encoding="utf-8"))
    assert len(rows) >= 10  # the table was parsed (19 rows in 0.2.0)
    assert check_deprecations(_changelog(), rows) == []


def test_every_relative_link_reaches_a_file():
    text = _changelog()
    assert re.search(r"\]\[[^\]]+\]|\]\([^)]+\)", text)  # the changelog has links to check
    assert check_links(text, ROOT) == []


# --- each check fails on a broken changelog ------------------------------------------------------------------

BROKEN = """# Changelog

## 0.1.0 - 2026-01-01

### Fixed

- a fix

## Unreleased

## 0.3.0 - 2026-02-30

### Changed (breaking)

- a change

### Fixed

- a fix listed before Added

### Added

- an entry that wraps
  onto a second line
- [a page](docs/no-such-page.md) and [a heading](docs/pld.md#no-such-heading) and [undefined][nowhere]

### Deprecated

- `old_name` → `new_name`, going some day

### Removed

### Moved

- `a.b` → `c.d`
"""

TABLE = """| deprecated spelling | use instead | warns since | removed in |
|---|---|---|---|
| `old_name` (`mod.f`, `mod.g`) | `new_name` | 0.2.0 | 0.3.0 |
| `other(x \\| y)` | `brand_new` | 0.2.0 | 0.3.0 |
"""


def test_release_check_fails_on_a_broken_file():
    problems = check_releases(BROKEN, "0.2.0")
    assert any("Unreleased must be the first" in p for p in problems)
    assert any("not an ISO date" in p for p in problems)  # 2026-02-30
    assert any("newest dated release is 0.1.0" in p for p in problems)
    assert check_releases("## [0.2.0] - 2026-11-28\n", "0.2.0")  # another heading form
    assert check_releases("## 0.2.0\n", "0.2.0")  # no date
    assert check_releases("## 0.1.0 - 2026-01-01\n## 0.2.0 - 2026-02-01\n", "0.1.0")  # oldest first
    assert check_releases("## 0.2.0 - 2026-11-28\n#### Details\n", "0.2.0")
    assert check_releases("## 0.2.0 - 2026-11-28\n", "0.2.0") == []


def test_section_check_fails_on_a_broken_file():
    problems = check_sections(BROKEN)
    assert any("'Changed (breaking)'" in p for p in problems)
    assert any("'Moved'" in p for p in problems)
    assert any("empty section 'Removed'" in p for p in problems)
    assert any("out of order" in p for p in problems)  # Added after Fixed
    assert check_sections("## 0.2.0 - 2026-11-28\n### Fixed\n- a\n### Fixed\n- b\n")  # repeated
    assert check_sections("## 0.2.0 - 2026-11-28\n### Added\n- a\n### Fixed\n- b\n") == []


def test_one_line_check_fails_on_a_broken_file():
    problems = check_one_line(BROKEN)
    assert problems == ["## 0.3.0 - 2026-02-30 / Added: not a one-line entry: '  onto a second line'"]
    assert check_one_line("## 0.2.0 - 2026-11-28\n### Added\n- one\nlazy continuation\n")
    assert check_one_line("## 0.2.0 - 2026-11-28\n### Added\nA paragraph.\n")


def test_deprecation_check_fails_on_a_broken_file():
    rows = deprecations(TABLE)
    # the escaped pipe stays inside its cell; parenthesised qualifiers are not spellings
    assert rows == [(["old_name"], "new_name", "0.3.0"), (["other(x | y)"], "brand_new", "0.3.0")]
    problems = check_deprecations(BROKEN, rows)
    assert any("`old_name` and its removal in 0.3.0" in p for p in problems)  # named, but no release
    assert any("`other(x | y)`" in p for p in problems)  # not named
    assert any("`brand_new`" in p for p in problems)
    good = "## 0.2.0 - 2026-11-28\n### Deprecated\n- `old_name` → `new_name`; `other(x | y)` → `brand_new`; 0.3.0\n"
    assert check_deprecations(good, rows) == []
    assert check_deprecations("## 0.2.0 - 2026-11-28\n### Added\n- a\n", rows) == ["no Deprecated section"]


def test_link_check_fails_on_a_broken_file():
    problems = check_links(BROKEN, ROOT)
    assert any("no file docs/no-such-page.md" in p for p in problems)
    assert any("no heading #no-such-heading" in p for p in problems)
    assert any("[nowhere] is not defined" in p for p in problems)
    assert check_links("- [x][d]\n\n[d]: docs/missing.md\n", ROOT)  # a defined target that is missing
    good = "- [x][d], [y](docs/pld.md#15-one-history-one-neighbouring-relation), `[code](no)`\n\n[d]: docs/guide.md\n"
    assert check_links(good, ROOT) == []
