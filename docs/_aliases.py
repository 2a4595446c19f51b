"""Sphinx extension: each public object is documented once, under the name users type.

A top-level name (``privcal.calibrate``) is documented on its layer's page by ``autofunction`` /
``autoclass``; a module that re-exports an object documented elsewhere (``privcal.accounting.api.calibrate``,
``privcal.analysis.noise.OrnsteinUhlenbeckPath``) shows a one-line entry pointing there instead of its docstring a
second time. The entry keeps the module path's anchor (``id="privcal.accounting.api.calibrate"``), so links by
either name land on the object; the search box lists the documented name.

Where an object is documented: under ``privcal.<name>`` when ``privcal.__all__`` exports it, else at its
home module (``obj.__module__``) when that module is in the reference and lists it in ``__all__``. Only
functions and classes are aliased (constants are values, not identities).
"""

from __future__ import annotations

import importlib
import inspect
import pathlib
import re

_MODULES: set[str] = set()  # every module with an ``.. automodule::`` under docs/api/
_TOP: dict[int, str] = {}  # id(obj) -> "privcal.<name>" for the top-level functions and classes
_current: list[str] = []  # the module whose members autodoc is walking (set by its docstring event)
_STUBS: set[str] = set()  # the full names given a one-line entry (module path of a name documented elsewhere)


def _is_object(obj) -> bool:
    return inspect.isfunction(obj) or inspect.isclass(obj)


def documented_at(module: str, name: str, obj) -> str | None:
    """Where ``module.name`` is documented, when that is not ``module.name`` itself (else None)."""
    if not _is_object(obj):
        return None
    top = _TOP.get(id(obj))
    if top is not None:
        return top
    home = getattr(obj, "__module__", None)
    if home and home != module and home in _MODULES:
        home_mod = importlib.import_module(home)
        if name in getattr(home_mod, "__all__", ()) and getattr(home_mod, name, None) is obj:
            return f"{home}.{name}"
    return None


def _aliases(module: str) -> list[tuple[str, str, object]]:
    mod = importlib.import_module(module)
    out = []
    for name in getattr(mod, "__all__", ()):
        obj = getattr(mod, name, None)
        where = documented_at(module, name, obj)
        if where is not None:
            out.append((name, where, obj))
    return out


def _collect(app) -> None:
    import privcal

    _MODULES.clear()
    for page in sorted((pathlib.Path(app.srcdir) / "api").glob("*.rst")):
        for line in page.read_text(encoding="utf-8").splitlines():
            m = re.match(r"\.\. automodule:: (\S+)", line.strip())
            if m:
                _MODULES.add(m.group(1))
    _TOP.clear()
    for name in privcal.__all__:
        obj = getattr(privcal, name)
        if _is_object(obj):
            _TOP[id(obj)] = f"privcal.{name}"


def _module_docstring(app, what, name, obj, options, lines) -> None:
    """After a module's docstring: one entry per re-exported object, pointing where it is documented."""
    if what != "module":
        return
    _current[:] = [name]
    aliases = _aliases(name)
    if not aliases:
        return
    lines += ["", ".. rubric:: Also importable from here (documented under the name shown)", ""]
    for member, where, obj in aliases:
        _STUBS.add(f"{name}.{member}")
        kind = "class" if inspect.isclass(obj) else "function"
        lines += [f".. py:{kind}:: {member}(...)", "   :no-index-entry:", "",
                  f"   The same object as :py:obj:`{where}`.", ""]


def _skip(app, what, name, obj, skip, options):
    if what == "module" and _current and documented_at(_current[0], name, obj) is not None:
        return True
    return None


def _rank_below_the_documented_name(app, env) -> None:
    """A one-line entry is an alias in the Python domain (as autodoc's ``:canonical:`` ones are): its anchor and
    links stay, and the search box lists the name where the object is documented, not the alias, first."""
    domain = env.get_domain("py")
    for fullname in _STUBS:
        entry = domain.objects.get(fullname)
        if entry is not None and not entry.aliased:
            domain.objects[fullname] = entry._replace(aliased=True)


def setup(app):
    app.connect("builder-inited", _collect)
    app.connect("autodoc-process-docstring", _module_docstring, priority=700)  # after conf.py's escaping
    app.connect("autodoc-skip-member", _skip)
    app.connect("env-updated", _rank_below_the_documented_name)
    return {"parallel_read_safe": False, "parallel_write_safe": True}
