"""The layering rules of DESIGN.md, counted from the code's own imports (issue 18, item 5): the PLD's pure
mathematics sits below the accounting layer, the accounting layer never imports the ``privcal.pld`` facade
above it, the command line (``privcal/cli/``) sits on top with nothing below importing it, and no privcal
module takes part in an import cycle."""

from __future__ import annotations

import ast
import pathlib

ROOT = pathlib.Path(__file__).resolve().parent.parent / "privcal"


def _module(path: pathlib.Path) -> str:
    rel = path.relative_to(ROOT.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _imports(path: pathlib.Path, source: str | None = None) -> set[str]:
    """Absolute names of the privcal modules ``path`` imports (at any depth of its code)."""
    mod = _module(path)
    package = mod if path.name == "__init__.py" else mod.rsplit(".", 1)[0]
    out = set()
    text = path.read_text(encoding="utf-8") if source is None else source
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names if a.name.startswith("privcal")}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                name = ".".join(base + ([node.module] if node.module else []))
            else:
                name = node.module or ""
            if name.startswith("privcal"):
                out.add(name)
                out |= {f"{name}.{a.name}" for a in node.names}
    return out


def _graph() -> dict[str, set[str]]:
    files = {_module(p): p for p in ROOT.rglob("*.py")}
    return {m: {i for i in _imports(p) if i in files and i != m} for m, p in files.items()}


def test_privacy_loss_imports_nothing_above_it():
    for path in (ROOT / "privacy_loss").glob("*.py"):
        above = {i for i in _imports(path) if i.startswith(("privcal.accounting", "privcal.pld", "privcal.calibrators"))}
        assert not above, (path.name, above)


def test_accounting_never_imports_the_pld_facade():
    for path in (ROOT / "accounting").glob("*.py"):
        facade = {i for i in _imports(path) if i == "privcal.pld" or i.startswith("privcal.pld.")}
        assert not facade, (path.name, facade)


def test_no_import_cycle_between_modules():
    graph = _graph()
    # modules that are packages' __init__ re-export their children: an edge into a package's own children
    # from its __init__ is not a cycle of the code, so cycles are searched among non-__init__ modules
    init = {m for m in graph if (ROOT.parent / m.replace(".", "/") / "__init__.py").exists()}
    nodes = [m for m in graph if m not in init]
    edges = {m: {i for i in graph[m] if i not in init} for m in nodes}
    state: dict[str, int] = {}

    def visit(m, stack):
        state[m] = 1
        for n in edges[m]:
            if state.get(n) == 1:
                raise AssertionError("import cycle: " + " -> ".join(stack[stack.index(n):] + [n]))
            if n not in state:
                visit(n, stack + [n])
        state[m] = 2

    for m in nodes:
        if m not in state:
            visit(m, [m])


def _imports_the_cli(path: pathlib.Path, source: str | None = None) -> set[str]:
    return {i for i in _imports(path, source) if i == "privcal.cli" or i.startswith("privcal.cli.")}


def test_the_cli_sits_on_top():
    # issue 20, item 7: every piece of command-line code lives in privcal/cli/, and nothing below it imports it
    # (the launcher privcal_launcher.py, outside the package, is its one caller)
    for path in ROOT.rglob("*.py"):
        if path.parent == ROOT / "cli":
            continue
        assert not _imports_the_cli(path), (path.relative_to(ROOT.parent), _imports_the_cli(path))
    stray = [p.relative_to(ROOT.parent) for p in ROOT.rglob("*cli*.py") if p.parent != ROOT / "cli"]
    assert not stray, f"command-line code outside privcal/cli/: {stray}"


def test_the_rules_can_fail():
    # a module of rl/ that imports the CLI's output helpers (the edit the cli rule guards against)
    assert _imports_the_cli(ROOT / "rl" / "probe.py", "def f():\n    from privcal.cli.out import emit\n")
    assert _imports_the_cli(ROOT / "rl" / "probe.py", "from ..cli import out\n")
    # the checker sees a relative import of the facade (the edit it guards against)
    probe = ROOT / "accounting" / "probe.py"  # not written: its source is given
    assert "privcal.pld" in _imports(probe, "def f():\n    from ..pld import PLD\n")
    assert "privcal.accounting.events" in _imports(ROOT / "privacy_loss" / "probe.py", "from ..accounting import events\n")


_FLAT = ("privcal.dpq", "privcal.gpope", "privcal.table", "privcal.events", "privcal.accountants",
         "privcal.calibration", "privcal.api")


def test_privcal_code_never_imports_a_deprecated_flat_path():
    # the former flat paths stay importable for users (privcal/__init__.py keeps them); privcal itself
    # imports the modules from their homes (issue 20, item 3)
    for path in ROOT.rglob("*.py"):
        if path == ROOT / "__init__.py":
            continue
        used = {i for i in _imports(path) if i in _FLAT or i.startswith(tuple(f + "." for f in _FLAT))}
        text = path.read_text(encoding="utf-8")
        used |= {f for f in ("dpq", "gpope", "table") if f"from privcal import {f}" in text or f"from .. import {f}\n" in text}
        assert not used, (path.relative_to(ROOT.parent), used)


def test_every_module_imports_without_a_privcal_deprecation_warning():
    import importlib
    import subprocess
    import sys

    names = sorted(_module(p) for p in ROOT.rglob("*.py") if "__main__" not in p.name)
    code = ("import warnings, importlib\n"
            "warnings.filterwarnings('error', category=DeprecationWarning, module='privcal')\n"
            f"for n in {names!r}:\n    importlib.import_module(n)\nprint('ok')\n")
    proc = subprocess.run([sys.executable, "-W", "error::DeprecationWarning:privcal", "-c", code],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0 and proc.stdout.strip().endswith("ok"), proc.stderr[-2000:]
    assert importlib.import_module("privcal")
