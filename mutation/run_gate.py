"""Mutation gate over privcal's privacy-relevant code: mutmut's mutants, a fixed sample per module, mapped tests.

Usage (from the repository root, with the ``dev`` extra installed: ``pip install -e '.[test,dev]'``)::

    python mutation/run_gate.py                     # every module of mutation/config.toml, 2 jobs
    python mutation/run_gate.py --module kov --jobs 1   # one module again; the others' results are kept

What it does:

1. **Mutants.** For each module of ``mutation/config.toml`` it parses the source files with mutmut 3.3.1's
   mutation engine (``mutmut.file_mutation.create_mutations``: mutmut's operators, inside top-level functions
   and methods, optionally only the named ones) and names each mutant as mutmut does
   (``privcal.analysis.kov.x__basic_epsilon__mutmut_3``). Mutants inside a raised exception's expression or a warning's
   message (``raise ValueError(...)``, ``warnings.warn(message, ...)``) are left out: they change what a
   message says, never whether it is raised nor a number.
2. **Sample.** It draws ``sample`` mutants per module with ``random.Random(f"{seed}:{module}")`` from the
   sorted names: the same mutants on every run while the sources are unchanged.
3. **Run.** It copies the checkout into a private workspace per job (the checkout's sources are never
   written), runs each module's mapped test files once unmutated (they must pass), then, per mutant, writes the
   mutated file into its workspace and runs only the module's test files with ``pytest -x`` (exit 0: survived;
   a failure, an error or a timeout: killed), and restores the file. mutmut's own runner is not used: it
   collects coverage over a whole test directory first and cannot sample, which takes far more than the
   minutes a 2-core machine has for this.
4. **Explain.** A survivor listed in ``mutation/equivalent.toml`` (its id, its diff as the gate prints it, and a
   non-empty reason) counts as equivalent; any other survivor is unexplained and fails the gate.
5. **Guards.** Each ``# guarded by tests/<file>.py::<test>`` comment in the learner files named in the config
   must name a test that exists.

It writes ``mutation/results.json`` (the record ``tests/test_mutation_gate.py`` reads) and
``mutation/results.md`` (the same, to read), and exits 1 if a clean run failed, a survivor is unexplained or a
guard names no test. No timing is written to either file; the wall time is printed.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import difflib
import json
import os
import queue
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
import tomllib
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parents[1]
HERE = ROOT / "mutation"
GUARD = re.compile(r"# guarded by (tests/[\w/]+\.py)::(\w+)")


# ------------------------------------------------------------------------------------------ mutants


@dataclass
class Mutant:
    id: str  # mutmut's name: <module path>.<mangled function>__mutmut_<n>
    file: str  # repository path of the mutated source
    line: int  # line of the first changed line in the original source
    diff: str  # "- <original line>\n+ <mutated line>" (the changed lines, stripped)
    build: Callable[[], str] = field(repr=False, default=lambda: "")  # the whole mutated file, made when run


def _message_spans(positions) -> list[tuple]:
    """(start, end) of every raised exception expression and every warning's message (``warn(message, ...)``),
    as ((line, column), (line, column)) from libcst's positions."""
    import libcst as cst

    spans = []
    for node, pos in positions.items():
        target = None
        if isinstance(node, cst.Raise) and node.exc is not None:
            target = node.exc
        elif isinstance(node, cst.Call) and node.args and (
                (isinstance(node.func, cst.Attribute) and node.func.attr.value == "warn")
                or (isinstance(node.func, cst.Name) and node.func.value == "warn")):
            target = node.args[0].value
        if target is not None:
            at = positions[target]
            spans.append(((at.start.line, at.start.column), (at.end.line, at.end.column)))
    return spans


def mutants_of(path: str, functions: list[str] | None) -> tuple[list[Mutant], int]:
    """(the mutants of ``path`` eligible for the gate, the number left out as message text)."""
    import libcst as cst
    from libcst.metadata import MetadataWrapper, PositionProvider
    from mutmut.file_mutation import create_mutations, deep_replace, group_by_top_level_node
    from mutmut.trampoline_templates import mangle_function_name

    code = (ROOT / path).read_text()
    module, mutations = create_mutations(code)
    positions = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    messages = _message_spans(positions)
    owners = {}  # function node -> (qualified name, class name or None)
    for stmt in module.body:
        if isinstance(stmt, cst.FunctionDef):
            owners[stmt] = (stmt.name.value, None)
        elif isinstance(stmt, cst.ClassDef) and isinstance(stmt.body, cst.IndentedBlock):
            for method in stmt.body.body:
                if isinstance(method, cst.FunctionDef):
                    owners[method] = (f"{stmt.name.value}.{method.name.value}", stmt.name.value)
    dotted = path[:-3].replace("/", ".").removesuffix(".__init__")
    out, left_out = [], 0
    for func, muts in group_by_top_level_node(mutations).items():
        if func not in owners:  # a class-level statement: mutmut makes no trampoline for it, nor does the gate
            continue
        qualified, cls = owners[func]
        if functions is not None and qualified not in functions:
            continue
        mangled = mangle_function_name(name=func.name.value, class_name=cls)
        before = module.code_for_node(func).splitlines()
        start = positions[func].start.line
        for i, mut in enumerate(muts, start=1):
            at = positions[mut.original_node]
            span = ((at.start.line, at.start.column), (at.end.line, at.end.column))
            if any(lo <= span[0] and span[1] <= hi for lo, hi in messages):  # only a message's text changes
                left_out += 1
                continue
            after = module.code_for_node(deep_replace(func, mut.original_node, mut.mutated_node)).splitlines()
            minus, plus, first = [], [], None
            for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(a=before, b=after, autojunk=False).get_opcodes():
                if tag != "equal":
                    first = i1 if first is None else first
                    minus += [l.strip() for l in before[i1:i2]]
                    plus += [l.strip() for l in after[j1:j2]]
            diff = "\n".join([f"- {l}" for l in minus] + [f"+ {l}" for l in plus])
            line = start + (first or 0) - _leading_blank(module.code_for_node(func))
            out.append(Mutant(f"{dotted}.{mangled}__mutmut_{i}", path, line, diff,
                              lambda mut=mut: deep_replace(module, mut.original_node, mut.mutated_node).code))
    return out, left_out


def _leading_blank(text: str) -> int:
    """Lines of ``text`` before the ``def`` (libcst counts a function's leading blank lines and decorators)."""
    lines = text.splitlines()
    for k, l in enumerate(lines):
        if l.strip() and not l.strip().startswith(("#", "@")):
            return k
    return 0


def sample(mutants: list[Mutant], k: int, seed: int, name: str) -> list[Mutant]:
    by_id = {m.id: m for m in mutants}
    ids = sorted(by_id)
    chosen = random.Random(f"{seed}:{name}").sample(ids, min(k, len(ids)))
    return [by_id[i] for i in sorted(chosen)]


# ------------------------------------------------------------------------------------------ running


class Workspaces:
    """One private copy of the checkout per job; tests run there with PYTHONPATH pointing at it."""

    def __init__(self, jobs: int, copy: list[str]):
        self.root = Path(tempfile.mkdtemp(prefix="privcal-mutation-"))
        self.free: queue.Queue = queue.Queue()
        ignore = shutil.ignore_patterns("__pycache__", "*.pyc", ".hypothesis", "*.egg-info", ".pytest_cache")
        for j in range(jobs):
            ws = self.root / f"ws{j}"
            ws.mkdir()
            for item in copy:
                src = ROOT / item
                if src.is_dir():
                    shutil.copytree(src, ws / item, ignore=ignore)
                elif src.exists():
                    shutil.copy2(src, ws / item)
            self.free.put(ws)
            self._check(ws)

    def env(self, ws: Path) -> dict:
        env = dict(os.environ, PYTHONPATH=str(ws), PYTHONPYCACHEPREFIX=str(ws / ".pycache"), PYTHONHASHSEED="0",
                   MPLBACKEND="Agg", OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
        env.pop("PYTEST_ADDOPTS", None)
        return env

    def _check(self, ws: Path) -> None:
        where = subprocess.run([sys.executable, "-c", "import privcal; print(privcal.__file__)"], cwd=ws,
                               env=self.env(ws), capture_output=True, text=True, check=True).stdout.strip()
        if not Path(where).resolve().is_relative_to(ws.resolve()):
            raise SystemExit(f"the workspace's privcal is not the one imported ({where}): cannot run the gate")

    def close(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)


def _pytest(ws: Path, env: dict, tests: list[str], timeout: float) -> tuple[str, str | None]:
    """('passed' | 'failed' | 'timeout', the first failing test id or None)."""
    cmd = [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", "--hypothesis-seed=0",
           "-W", "ignore", *tests]
    try:
        r = subprocess.run(cmd, cwd=ws, env=env, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return "timeout", None
    if r.returncode == 0:
        return "passed", None
    hit = re.search(r"^(?:FAILED|ERROR) (\S+)", r.stdout, re.M)
    return "failed", hit.group(1) if hit else f"pytest exit {r.returncode}"


def _drop_cached(ws: Path, rel: str) -> None:
    cache = ws / ".pycache" / Path(ws.resolve().relative_to("/")) / Path(rel).parent
    for pyc in cache.glob(Path(rel).stem + ".*.pyc") if cache.is_dir() else ():
        pyc.unlink()


def run_mutant(spaces: Workspaces, m: Mutant, tests: list[str], timeout: float) -> tuple[str, str | None, float]:
    ws = spaces.free.get()
    start = time.monotonic()
    target = ws / m.file
    original = target.read_text()
    try:
        target.write_text(m.build())
        _drop_cached(ws, m.file)
        outcome, by = _pytest(ws, spaces.env(ws), tests, timeout)
    finally:
        target.write_text(original)
        _drop_cached(ws, m.file)
        spaces.free.put(ws)
    return ("survived" if outcome == "passed" else "killed"), (by if outcome != "timeout" else "timeout"), \
        time.monotonic() - start


def clean_run(spaces: Workspaces, tests: list[str]) -> tuple[bool, float, str | None]:
    ws = spaces.free.get()
    try:
        start = time.monotonic()
        outcome, by = _pytest(ws, spaces.env(ws), tests, timeout=1800)
        return outcome == "passed", time.monotonic() - start, by
    finally:
        spaces.free.put(ws)


# ------------------------------------------------------------------------------------------ explaining


def load_equivalent(path: Path = HERE / "equivalent.toml") -> dict[str, dict]:
    if not path.exists():
        return {}
    return {e["id"]: e for e in tomllib.loads(path.read_text()).get("mutant", [])}


def explained(entry: dict | None, m: Mutant) -> bool:
    return bool(entry and str(entry.get("reason", "")).strip() and entry.get("diff", m.diff) == m.diff)


def guards(files: list[str]) -> list[dict]:
    """Every ``# guarded by tests/<file>.py::<test>`` comment of ``files``, with whether the test exists."""
    out = []
    for rel in files:
        for n, text in enumerate((ROOT / rel).read_text().splitlines(), start=1):
            for test_file, test in GUARD.findall(text):
                path = ROOT / test_file
                exists = path.exists() and re.search(rf"^def {test}\(", path.read_text(), re.M) is not None
                out.append({"file": rel, "line": n, "test": f"{test_file}::{test}", "exists": exists})
    return out


# ------------------------------------------------------------------------------------------ reporting


def write_results(results: dict) -> None:
    (HERE / "results.json").write_text(json.dumps(results, indent=2, sort_keys=True) + "\n")
    lines = ["# Mutation gate results", "",
             f"Written by `python mutation/run_gate.py` ({results['tool']}); seed {results['seed']}, "
             f"{results['sample']} mutants sampled per module. Score = killed / (sampled - equivalent).", "",
             "| module | mutants | sampled | killed | survived | equivalent | score |",
             "|---|---:|---:|---:|---:|---:|---:|"]
    for name, mod in results["modules"].items():
        score = "n/a" if mod["score"] is None else f"{mod['score']:.2f}"
        lines.append(f"| {name} | {mod['mutants']} | {mod['sampled']} | {mod['killed']} | {mod['survived']} | "
                     f"{mod['equivalent']} | {score} |")
    lines += ["", f"Unexplained survivors: {len(results['unexplained']) or 'none'}.", ""]
    for name, mod in results["modules"].items():
        lines += [f"## {name}", "", f"Tests: {', '.join(mod['tests'])}", ""]
        for m in mod["results"]:
            how = (f"killed by `{m['by']}`" if m["status"] == "killed" else
                   f"equivalent: {m['reason']}" if m["status"] == "equivalent" else "**survived (unexplained)**")
            lines.append(f"- `{m['id']}` ({m['file']}:{m['line']}): {how}")
            lines += [f"      {d}" for d in m["diff"].splitlines()]
        lines.append("")
    bad = [g for g in results["guards"] if not g["exists"]]
    lines += ["## Guarded lines", "",
              f"{len(results['guards'])} `# guarded by` comments in the learners; "
              f"{'all name a test that exists' if not bad else f'{len(bad)} name no existing test'}.", ""]
    lines += [f"- {g['file']}:{g['line']} -> `{g['test']}`{'' if g['exists'] else ' (MISSING)'}"
              for g in results["guards"]]
    (HERE / "results.md").write_text("\n".join(lines) + "\n")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--jobs", type=int, default=2, help="workspaces run in parallel (default 2)")
    p.add_argument("--module", action="append", help="run only this module (repeatable); keep the others' results")
    p.add_argument("--sample", type=int, default=None, help="override the config's mutants per module")
    args = p.parse_args(argv)
    import mutmut

    config = tomllib.loads((HERE / "config.toml").read_text())
    gate = config["gate"]
    k = args.sample or gate["sample"]
    modules = {m["name"]: m for m in config["module"]}
    chosen = args.module or list(modules)
    unknown = [n for n in chosen if n not in modules]
    if unknown:
        p.error(f"unknown module(s) {unknown}; known: {list(modules)}")
    started = time.monotonic()
    previous = json.loads((HERE / "results.json").read_text()) if (HERE / "results.json").exists() else {}
    kept = {n: v for n, v in previous.get("modules", {}).items() if n in modules and n not in chosen}
    equivalent = load_equivalent()

    plan = {}
    for name in chosen:
        mod = modules[name]
        everything, messages = [], 0
        for src in mod["sources"]:
            found, left = mutants_of(src, mod.get("functions"))
            everything += found
            messages += left
        plan[name] = (everything, messages, sample(everything, k, gate["seed"], name))
        print(f"{name}: {len(everything)} mutants ({messages} message-only left out), {len(plan[name][2])} sampled",
              flush=True)

    spaces = Workspaces(max(1, args.jobs), gate["copy"])
    failed_clean = {}
    try:
        with concurrent.futures.ThreadPoolExecutor(max(1, args.jobs)) as pool:
            clean = {n: pool.submit(clean_run, spaces, modules[n]["tests"]) for n in chosen}
            clean = {n: f.result() for n, f in clean.items()}
            for n, (ok, seconds, by) in clean.items():
                print(f"clean run {n}: {'passed' if ok else 'FAILED at ' + str(by)} ({seconds:.0f} s)", flush=True)
                if not ok:
                    failed_clean[n] = by
            jobs = {}
            for n in chosen:
                if n in failed_clean:
                    continue
                timeout = gate["timeout_factor"] * clean[n][1] + gate["timeout_floor"]
                for m in plan[n][2]:
                    jobs[m.id] = (n, m, pool.submit(run_mutant, spaces, m, modules[n]["tests"], timeout))
            outcome = {}
            for mid, (n, m, fut) in jobs.items():
                outcome[mid] = fut.result()
                print(f"  {outcome[mid][0]:8s} {mid}  ({outcome[mid][2]:.0f} s)", flush=True)
    finally:
        spaces.close()

    results = {"tool": f"mutmut {mutmut.__version__} mutation operators, mutation/run_gate.py runner",
               "seed": gate["seed"], "sample": k, "modules": {}, "unexplained": [], "clean_run_failed": failed_clean}
    for name in modules:
        if name in kept:
            results["modules"][name] = kept[name]
            continue
        if name not in plan:
            continue
        everything, messages, picked = plan[name]
        rows = []
        for m in picked:
            status, by, _ = outcome.get(m.id, ("not run", None, 0.0))
            row = {"id": m.id, "file": m.file, "line": m.line, "diff": m.diff, "status": status}
            if status == "killed":
                row["by"] = by
            elif status == "survived" and explained(equivalent.get(m.id), m):
                row["status"], row["reason"] = "equivalent", equivalent[m.id]["reason"].strip()
            rows.append(row)
        count = {s: sum(r["status"] == s for r in rows) for s in ("killed", "survived", "equivalent")}
        scored = len(rows) - count["equivalent"]
        results["modules"][name] = {
            "sources": modules[name]["sources"], "functions": modules[name].get("functions"),
            "tests": modules[name]["tests"], "mutants": len(everything), "message_only_left_out": messages,
            "sampled": len(rows), **count, "score": round(count["killed"] / scored, 4) if scored else None,
            "results": rows}
    results["unexplained"] = sorted(r["id"] for mod in results["modules"].values() for r in mod["results"]
                                    if r["status"] not in ("killed", "equivalent"))
    results["guards"] = guards(gate["guarded"])
    write_results(results)
    missing = [g for g in results["guards"] if not g["exists"]]
    print(f"\nwall time {time.monotonic() - started:.0f} s; unexplained survivors: {len(results['unexplained'])}; "
          f"guards naming no test: {len(missing)}; clean runs failed: {len(failed_clean)}")
    for mid in results["unexplained"]:
        print("  unexplained:", mid)
    return 1 if results["unexplained"] or missing or failed_clean else 0


if __name__ == "__main__":
    sys.exit(main())
