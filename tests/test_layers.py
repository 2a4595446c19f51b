"""The layering rules of DESIGN.md, counted from the code's own imports: the PLD's pure
mathematics sits below the accounting layer, the accounting layer never imports the ``privcal.pld`` facade
above it, the command line (``privcal/cli/``) sits on top with nothing below importing it, and no privcal
module takes part in an import cycle. The RL layer is one subpackage per algorithm family
(``privcal.rl.dpq``, ``.gpope``, ``.pucb``): no family imports another, the shared pieces import no family,
the command line imports no private name of the RL layer, and the former flat paths are the same modules
with a DeprecationWarning."""

from __future__ import annotations

import ast
import pathlib
import re

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
    # every piece of command-line code lives in privcal/cli/, and nothing below it imports it
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
         "privcal.calibration", "privcal.api",
         # the flat paths of the RL layer before its families
         "privcal.rl.dpq_agent", "privcal.rl.dpq_replay", "privcal.rl.dpq_select", "privcal.rl.fqi_dpsgd",
         "privcal.rl.learners", "privcal.rl.baselines", "privcal.rl.experiments_dpq", "privcal.rl.gpope_agent",
         "privcal.rl.lstd", "privcal.rl.mspbe", "privcal.rl.domains", "privcal.rl.experiments_gpope",
         "privcal.rl.tabular", "privcal.rl.experiments_pucb", "privcal.rl.plots_pucb", "privcal.rl.checks_pucb",
         # the analysis layer's flat paths (privcal.analysis since 0.3.0)
         "privcal.gaussian", "privcal.rdp", "privcal.subsampling", "privcal.group_subsampling", "privcal.kov",
         "privcal.composition", "privcal.rkhs", "privcal.supremum", "privcal.counter", "privcal.noise")


def test_privcal_code_never_imports_a_deprecated_flat_path():
    # the former flat paths stay importable for users (privcal/__init__.py keeps them); privcal itself
    # imports the modules from their homes
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


# ---------------------------------------------------------------------------------------------------------
# the RL layer: one subpackage per algorithm family, and the pieces they share

RL = ROOT / "rl"
FAMILIES = ("privcal.rl.dpq", "privcal.rl.gpope", "privcal.rl.pucb", "privcal.rl.ucbvi")
SHARED = ("privcal.rl.envs", "privcal.rl.mlp", "privcal.rl.units", "privcal.rl.verdict", "privcal.rl.parallel")


def _family(name: str) -> str | None:
    return next((f for f in FAMILIES if name == f or name.startswith(f + ".")), None)


def _families_imported(path: pathlib.Path, source: str | None = None) -> set[str]:
    return {f for f in map(_family, _imports(path, source)) if f is not None}


def test_the_rl_layer_is_one_subpackage_per_family():
    # every module of privcal/rl/ is a family's, a shared piece, the frontier's (it spans the families: frontier,
    # frontier_stats, frontier_result, frontier_plot), the FrozenLake benchmark's (it runs select, FQI by DP-SGD
    # and UCB-VI's MDPs: the toytext package) or rl's __init__
    modules = {_module(p) for p in RL.rglob("*.py")}
    spanning = ("privcal.rl.frontier", "privcal.rl.frontier_plans", "privcal.rl.frontier_tasks", "privcal.rl.frontier_stats",
                "privcal.rl.frontier_result",
                "privcal.rl.frontier_plot", "privcal.rl.toytext")
    stray = {m for m in modules if _family(m) is None and m not in SHARED + ("privcal.rl",) + spanning
             and not m.startswith("privcal.rl.toytext.")}
    assert not stray, f"modules of privcal.rl outside a family or the shared pieces: {sorted(stray)}"
    assert all(any(_module(p).startswith(f + ".") for p in RL.rglob("*.py")) for f in FAMILIES)


#: family -> the other families it may import
_ALLOWED_FAMILY_IMPORTS = {"privcal.rl.ucbvi": {"privcal.rl.pucb"}}


def test_no_family_imports_another():
    for path in RL.rglob("*.py"):
        own = _family(_module(path))
        if own is None:
            continue
        # UCB-VI runs on PUCB's tabular MDPs and is compared with PUCB at the same epsilon: the one allowed edge
        other = _families_imported(path) - {own} - _ALLOWED_FAMILY_IMPORTS.get(own, set())
        assert not other, (path.relative_to(ROOT.parent), other)


def test_shared_pieces_import_no_family_and_not_the_frontier():
    for name in SHARED:
        path = ROOT.parent / (name.replace(".", "/") + ".py")
        used = _families_imported(path) | ({"privcal.rl.frontier"} & _imports(path))
        assert not used, (name, used)


def _private_rl_names(path: pathlib.Path, source: str | None = None) -> set[str]:
    """``privcal.rl...`` names imported as ``from privcal.rl.x import _y``, or read as ``alias._y`` of an
    imported ``privcal.rl`` module (item 7: the CLI calls public names only)."""
    text = path.read_text(encoding="utf-8") if source is None else source
    tree = ast.parse(text)
    found, aliases = set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("privcal.rl"):
            for a in node.names:
                if a.name.startswith("_") and not a.name.startswith("__"):
                    found.add(f"{node.module}.{a.name}")
                elif not a.name[:1].isupper():  # a module (or a function) imported from privcal.rl...
                    aliases.add(a.asname or a.name)
        elif isinstance(node, ast.Import):
            aliases |= {a.asname for a in node.names if a.name.startswith("privcal.rl") and a.asname}
    for node in ast.walk(tree):
        if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in aliases
                and node.attr.startswith("_") and not node.attr.startswith("__")):
            found.add(f"{node.value.id}.{node.attr}")
    return found


def test_the_cli_imports_no_private_name_of_the_rl_layer():
    for path in (ROOT / "cli").glob("*.py"):
        used = _private_rl_names(path)
        assert not used, (path.name, used)


def test_the_rl_rules_can_fail():
    # a pucb module importing the DP-Q agent, a shared piece importing a family, the CLI importing a private name
    assert _families_imported(RL / "pucb" / "probe.py", "from privcal.rl.dpq import agent\n") == {"privcal.rl.dpq"}
    assert _families_imported(RL / "pucb" / "probe.py", "from ..gpope.lstd import lstd\n") == {"privcal.rl.gpope"}
    assert _families_imported(RL / "envs.py", "def f():\n    from privcal.rl.pucb.tabular import TabularMDP\n")
    assert _private_rl_names(ROOT / "cli" / "probe.py", "from privcal.rl.pucb.agent import _run, check\n") == {
        "privcal.rl.pucb.agent._run"}
    assert _private_rl_names(ROOT / "cli" / "probe.py", "from privcal.rl import frontier as F\nF._CHOICES\n") == {
        "F._CHOICES"}
    assert _family("privcal.rl.dpqx") is None and _family("privcal.rl.dpq") == "privcal.rl.dpq"


def _rl_moves() -> dict[str, str]:
    import privcal

    return {f"privcal.{old}": new for old, new in privcal._MOVED.items() if old.startswith("rl.")}


def test_the_former_rl_paths_are_the_moved_modules_with_a_warning():
    # docs/deprecation.md: each former flat path imports the module at its new home (the same object, so
    # monkeypatching keeps working), warns at the user's line naming that home, and a moved package's
    # submodule is that package's (no second module object); in a fresh interpreter
    import subprocess
    import sys

    moves = _rl_moves()
    assert len(moves) == 16 and all(n.startswith(("privcal.rl.dpq.", "privcal.rl.gpope.", "privcal.rl.pucb."))
                                    for n in moves.values())
    code = ("import importlib, sys, warnings\n"
            f"moves = {moves!r}\n"
            "for old, new in moves.items():\n"
            "    with warnings.catch_warnings(record=True) as caught:\n"
            "        warnings.simplefilter('always')\n"
            "        exec(f'import {old} as m')\n"
            "    assert m is importlib.import_module(new) and m.__name__ == m.__spec__.name == new, old\n"
            "    dep = [w for w in caught if issubclass(w.category, DeprecationWarning)]\n"
            "    assert dep and all(new in str(w.message) and w.filename == '<string>' for w in dep), old\n"
            "with warnings.catch_warnings(record=True):\n"
            "    warnings.simplefilter('always')\n"
            "    from privcal.rl import experiments_pucb\n"
            "    import privcal.rl.domains.chain\n"
            "    from privcal.rl.domains import hiv\n"
            "import privcal.rl.pucb.experiments, privcal.rl.gpope.domains.chain, privcal.rl.gpope.domains.hiv\n"
            "assert experiments_pucb is privcal.rl.pucb.experiments\n"
            "assert sys.modules['privcal.rl.domains.chain'] is privcal.rl.gpope.domains.chain\n"
            "assert hiv is privcal.rl.gpope.domains.hiv\n"
            "print('ok')\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0 and proc.stdout.strip() == "ok", proc.stderr[-2000:]


def _private_imports_across_packages(path: pathlib.Path, source: str | None = None) -> set[str]:
    """``_name``s (not modules) that ``path`` imports from a privcal.rl module of another package than its own."""
    mod = _module(path)
    own = mod if path.name == "__init__.py" else mod.rsplit(".", 1)[0]
    text = path.read_text(encoding="utf-8") if source is None else source
    found = set()
    for node in ast.walk(ast.parse(text)):
        if not (isinstance(node, ast.ImportFrom) and not node.level and (node.module or "").startswith("privcal.rl")):
            continue
        home = node.module
        package = home if (ROOT.parent / home.replace(".", "/") / "__init__.py").exists() else home.rsplit(".", 1)[0]
        for a in node.names:
            is_module = (ROOT.parent / home.replace(".", "/") / f"{a.name}.py").exists()
            if a.name.startswith("_") and not a.name.startswith("__") and not is_module and package != own:
                found.add(f"{home}.{a.name}")
    return found


def test_no_private_name_of_the_rl_layer_crosses_a_package():
    # STYLE.md: `_name` is private to its module; what another package needs has a public name in its own
    # (the trusted kernels are the unchecked_* / *_unchecked functions)
    for path in list(RL.rglob("*.py")) + list((ROOT / "cli").glob("*.py")):
        used = _private_imports_across_packages(path)
        assert not used, (path.relative_to(ROOT.parent), used)


def test_the_private_name_rule_can_fail():
    assert _private_imports_across_packages(RL / "frontier.py", "from privcal.rl.dpq.experiments import _x\n") == {
        "privcal.rl.dpq.experiments._x"}
    assert _private_imports_across_packages(RL / "dpq" / "agent.py", "from privcal.rl.mlp import _bound\n") == {
        "privcal.rl.mlp._bound"}
    # within one package, and a private module, are not counted
    assert not _private_imports_across_packages(RL / "dpq" / "experiments.py", "from privcal.rl.dpq.agent import _g\n")
    assert not _private_imports_across_packages(RL / "frontier.py", "from privcal.rl import _parallel\n")


def test_no_issue_numbers_in_the_code():
    # history belongs in the changelog: a comment or docstring citing an issue number is stale once the issue
    # closes (the reader cannot see the issue)
    pattern = re.compile(r"\bissues? ?-?\d+\b|\(issue\b", re.IGNORECASE)
    found = [f"{p.relative_to(ROOT.parent)}:{i}" for p in ROOT.rglob("*.py")
             for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1) if pattern.search(line)]
    assert not found, found


# --- private names stay in their module ------------------------------------------------------------------------

#: ground-floor helpers every module may import (their public names are the shared validation, seeding, root
#: finding, statistics and version helpers)
GROUND = {"_validate", "_rng", "_roots", "_stats", "_version"}


def _is_module(name: str) -> bool:
    path = ROOT.parent / name.replace(".", "/")
    return path.with_suffix(".py").exists() or (path / "__init__.py").exists()


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__") and name != "_"


def private_uses(path: pathlib.Path, source: str | None = None) -> list[str]:
    """Each read of a ``_name`` defined in another privcal module: ``from x import _y``, ``alias._y`` of an
    imported privcal module, ``Name._y`` of a name imported from one (a class's private member), or a private module (``privacy_loss._hidden``) imported from outside its package.
    A file outside ``privcal/`` (a test) is outside every package. The ground-floor helpers are allowed."""
    inside_privcal = ROOT in path.parents
    mod = _module(path) if inside_privcal else "tests.probe"
    package = mod if path.name == "__init__.py" else mod.rsplit(".", 1)[0]
    text = path.read_text(encoding="utf-8") if source is None else source
    tree = ast.parse(text)
    found, aliases, imported = [], {}, {}

    def within(owner: str) -> bool:
        return package == owner or package.startswith(owner + ".")

    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                home = ".".join(base[: len(base) - node.level + 1] + ([node.module] if node.module else []))
            else:
                home = node.module or ""
            if not home.startswith("privcal"):
                continue
            parts = home.split(".")
            for i, part in enumerate(parts):  # a private module on the path: from privcal.x._y import z
                if _private(part) and part not in GROUND:
                    if not within(".".join(parts[:i])):
                        found.append(home)
                    break
            for a in node.names:
                full = f"{home}.{a.name}"
                if _is_module(full):
                    aliases[a.asname or a.name] = full
                    if _private(a.name) and a.name not in GROUND and not within(home):
                        found.append(full)
                elif _private(a.name):
                    found.append(full)
                else:
                    imported[a.asname or a.name] = full
        elif isinstance(node, ast.Import):
            aliases.update({a.asname: a.name for a in node.names if a.name.startswith("privcal") and a.asname})
    for node in ast.walk(tree):
        if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in aliases
                and _private(node.attr) and aliases[node.value.id].rsplit(".", 1)[-1] not in GROUND):
            target = f"{aliases[node.value.id]}.{node.attr}"
            if not (_is_module(target) and within(aliases[node.value.id])):
                found.append(target)
        elif (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in imported
              and _private(node.attr)):  # a class's private member: Releases._x read outside its module
            found.append(f"{imported[node.value.id]}.{node.attr}")
    return found


def test_the_private_use_count_can_fail():
    accounting = ROOT / "accounting" / "probe.py"
    assert private_uses(accounting, "from .protocol import _search_helper\n") == [
        "privcal.accounting.protocol._search_helper"]
    assert private_uses(accounting, "from ..analysis import kov\nkov._gap(1)\nkov.kov_epsilon\n") == [
        "privcal.analysis.kov._gap"]
    assert private_uses(accounting, "from privcal.privacy_loss._hidden import x\n") == ["privcal.privacy_loss._hidden"]
    assert private_uses(accounting, "from .events import Releases\nReleases._trusted(1)\nReleases.unchecked(1)\n") == [
        "privcal.accounting.events.Releases._trusted"]
    assert private_uses(ROOT.parent / "tests" / "test_probe.py", "import privcal.rl.dpq.agent as A\nA._loop\n") == [
        "privcal.rl.dpq.agent._loop"]
    # allowed: the ground floor, a package's own private module, a public name
    assert not private_uses(accounting, "from .. import _validate as V\nV._x\nfrom privcal import _rng\n")
    assert not private_uses(ROOT / "accounting" / "probe.py", "from . import _search\nfrom ._search import x\n")
    assert private_uses(ROOT / "calibrators" / "probe.py", "from ..accounting import _search\n") == [
        "privcal.accounting._search"]


#: Private names that may be read across modules: none (the ground-floor helpers aside). A new cross-module
#: private read fails the test below; an entry here must be taken out once it is no longer read.
ALLOWED_PRIVATE_USES: dict[str, set[str]] = {}


def test_no_private_name_is_read_outside_its_module():
    # STYLE.md: `_name` is private to its module; what another module needs is public (documented) in its own.
    # The ground-floor helpers (_validate, _rng, _roots, _stats, _version) are shared by every module.
    found = {}
    for path in sorted(ROOT.rglob("*.py")):
        rel = str(path.relative_to(ROOT.parent))
        new = set(private_uses(path)) - ALLOWED_PRIVATE_USES.get(rel, set())
        if new:
            found[rel] = sorted(new)
    assert not found, found


def test_the_allowed_private_uses_are_still_used():
    # an entry that is no longer needed leaves the list, so that the list only shrinks
    stale = {rel: sorted(names - set(private_uses(ROOT.parent / rel))) for rel, names in ALLOWED_PRIVATE_USES.items()}
    assert not {rel: names for rel, names in stale.items() if names}, stale


def test_no_test_reads_a_private_name():
    # a test reads the documented public names of a module (where it
    # needs an internal step, that step is public in its own module), so a refactoring that keeps every public
    # name keeps every test. The same counter as above, over tests/*.py.
    found = {}
    for path in sorted((ROOT.parent / "tests").glob("*.py")):
        uses = private_uses(path)
        if uses:
            found[path.name] = sorted(set(uses))
    assert not found, found
