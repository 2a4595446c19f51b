"""The committed result of the mutation gate (mutation/run_gate.py) covers every privacy-relevant module of
mutation/config.toml with a score, and leaves no survivor unexplained; the learners' "guarded by" comments name
tests that exist. Reads files only (the gate itself runs outside the suite: it needs the dev extra and minutes)."""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
GATE = ROOT / "mutation"
CONFIG = tomllib.loads((GATE / "config.toml").read_text())
RESULTS = json.loads((GATE / "results.json").read_text())
EQUIVALENT = {e["id"]: e for e in tomllib.loads((GATE / "equivalent.toml").read_text()).get("mutant", [])}
MODULES = [m["name"] for m in CONFIG["module"]]
GUARD = re.compile(r"# guarded by (tests/[\w/]+\.py)::(\w+)")
# the list of privacy-relevant code: each must be a module of the gate
REQUIRED = {"accounting", "privacy_loss", "rdp", "subsampling", "kov", "composition", "gaussian", "counter",
            "calibrators", "learners.fqi_dpsgd", "learners.gpope", "learners.dpq", "learners.pucb", "learners.mlp",
            "cli"}


def test_the_gate_configures_every_privacy_relevant_module():
    assert REQUIRED <= set(MODULES)
    for m in CONFIG["module"]:
        assert m["tests"] and all((ROOT / t).is_file() for t in m["tests"]), m["name"]
        assert all((ROOT / s).is_file() for s in m["sources"]), m["name"]


@pytest.mark.parametrize("name", MODULES)
def test_every_module_has_its_score(name):
    mod = RESULTS["modules"][name]
    assert mod["sampled"] == min(RESULTS["sample"], mod["mutants"]) > 0
    assert mod["killed"] + mod["survived"] + mod["equivalent"] == mod["sampled"] == len(mod["results"])
    assert mod["score"] == round(mod["killed"] / (mod["sampled"] - mod["equivalent"]), 4)
    assert mod["tests"] == next(m["tests"] for m in CONFIG["module"] if m["name"] == name)


def test_no_survivor_is_unexplained():
    assert RESULTS["unexplained"] == [] and RESULTS["clean_run_failed"] == {}
    for name in MODULES:
        for row in RESULTS["modules"][name]["results"]:
            assert row["status"] in ("killed", "equivalent"), row["id"]
            if row["status"] == "killed":
                assert row["by"], row["id"]  # the test that failed, or "timeout"
            else:  # listed, with the same diff and a reason
                entry = EQUIVALENT.get(row["id"])
                assert entry is not None and entry.get("reason", "").strip(), row["id"]
                assert entry.get("diff", row["diff"]) == row["diff"], row["id"]


def test_every_equivalent_entry_has_a_reason():
    for mid, entry in EQUIVALENT.items():
        assert entry.get("reason", "").strip(), mid


def _guards():
    for rel in CONFIG["gate"]["guarded"]:
        for n, line in enumerate((ROOT / rel).read_text().splitlines(), start=1):
            for test_file, test in GUARD.findall(line):
                yield rel, n, test_file, test


def test_every_guarded_line_names_a_test_that_exists():
    found = list(_guards())
    files = {rel for rel, *_ in found}
    assert files == set(CONFIG["gate"]["guarded"])  # every learner file names its guards
    for rel, n, test_file, test in found:
        path = ROOT / test_file
        assert path.is_file() and re.search(rf"^def {test}\(", path.read_text(), re.M), f"{rel}:{n} {test_file}::{test}"
