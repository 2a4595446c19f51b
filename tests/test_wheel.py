"""The built wheel is what users get: it holds every subpackage, every module and every data
file of the source tree, the launcher and the console script; installed without -e in a fresh environment it
runs the main job and imports every module.

The wheel is built once per run with pip from the local tree (the build backend comes from pip's configured
index or cache; no network beyond that). Where no wheel can be built here the tests skip, saying why.
"""

from __future__ import annotations

import configparser
import os
import pathlib
import re
import subprocess
import sys
import venv
import zipfile

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
_CAP = 900  # seconds: a hang cap, not a performance target


def _pip_wheel(out: pathlib.Path, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "-w", str(out), *extra,
                           str(ROOT)], capture_output=True, text=True, timeout=_CAP)


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> pathlib.Path:
    out = tmp_path_factory.mktemp("wheel")
    why = []
    for extra in ((), ("--no-build-isolation",)):  # pip's own build environment first, else the installed backend
        proc = _pip_wheel(out, *extra)
        built = sorted(out.glob("privcal-*.whl"))
        if proc.returncode == 0 and built:
            return built[0]
        tail = (proc.stderr or proc.stdout).strip().splitlines()
        why.append(f"pip wheel {' '.join(extra) or '(isolated)'}: {tail[-1] if tail else proc.returncode}")
    pytest.skip("no wheel can be built on this machine: " + "; ".join(why))


def _source_files() -> set[str]:
    """Every file of the package tree a user needs: modules and data files (no caches)."""
    out = set()
    for path in (ROOT / "privcal").rglob("*"):
        if path.is_file() and "__pycache__" not in path.parts and path.suffix not in (".pyc", ".pyo"):
            out.add(path.relative_to(ROOT).as_posix())
    return out


def _version() -> str:
    project = (ROOT / "pyproject.toml").read_text().split("[project]", 1)[1]
    return re.search(r'^version\s*=\s*"([^"]+)"', project, re.MULTILINE).group(1)


def test_the_wheel_holds_every_subpackage_module_and_data_file(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    missing = sorted(_source_files() - names)
    assert not missing, f"files of privcal/ missing from the wheel: {missing}"
    packages = {p.parent.relative_to(ROOT).as_posix() for p in (ROOT / "privcal").rglob("*.py")}
    assert {"privcal/cli", "privcal/rl/gpope/domains", "privcal/privacy_loss"} <= packages  # the check sees subpackages
    assert "privcal_launcher.py" in names  # the console script's module, outside the package


def test_the_wheel_declares_the_console_script_and_the_version(wheel):
    with zipfile.ZipFile(wheel) as z:
        info = next(n.split("/")[0] for n in z.namelist() if n.endswith(".dist-info/METADATA"))
        entry = configparser.ConfigParser()
        entry.read_string(z.read(f"{info}/entry_points.txt").decode())
        metadata = z.read(f"{info}/METADATA").decode()
    assert entry["console_scripts"]["privcal"] == "privcal_launcher:main"
    assert re.search(rf"^Version: {re.escape(_version())}$", metadata, re.MULTILINE)


def test_the_wheel_carries_the_license_the_type_marker_and_its_classifiers(wheel):
    # PEP 639 (License-Expression, License-File under .dist-info/licenses/), PEP 561 (py.typed)
    with zipfile.ZipFile(wheel) as z:
        info = next(n.split("/")[0] for n in z.namelist() if n.endswith(".dist-info/METADATA"))
        metadata = z.read(f"{info}/METADATA").decode()
        license_text = z.read(f"{info}/licenses/LICENSE").decode()
        assert "privcal/py.typed" in z.namelist()
    assert license_text == (ROOT / "LICENSE").read_text()
    # the Apache License 2.0 as published (its first lines and its last section's heading)
    assert "Apache License\n                           Version 2.0, January 2004" in license_text
    assert "END OF TERMS AND CONDITIONS" in license_text
    assert re.search(r"^License-Expression: Apache-2.0$", metadata, re.MULTILINE)
    assert re.search(r"^License-File: LICENSE$", metadata, re.MULTILINE)
    classifiers = set(re.findall(r"^Classifier: (.+)$", metadata, re.MULTILINE))
    assert {"Typing :: Typed", "Intended Audience :: Science/Research", "Programming Language :: Python :: 3.11",
            "Topic :: Security"} <= classifiers


def test_the_installed_wheel_runs_the_main_job_and_imports_every_module(wheel, tmp_path):
    # a fresh environment (the dependencies from this interpreter's site-packages), privcal from the wheel only
    env_dir = tmp_path / "env"
    venv.create(env_dir, system_site_packages=True, with_pip=False)
    python = env_dir / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    clean = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps", "--no-index",
                    "--quiet", str(wheel)], check=True, timeout=_CAP, env=clean, capture_output=True)
    where = subprocess.run([str(python), "-c", "import privcal, privcal_launcher; print(privcal.__file__); "
                            "print(privcal_launcher.__file__)"], cwd=tmp_path, env=clean, capture_output=True,
                           text=True, timeout=_CAP, check=True).stdout.split()
    assert all(pathlib.Path(w).resolve().is_relative_to(env_dir.resolve()) for w in where), where
    script = env_dir / ("Scripts/privcal.exe" if os.name == "nt" else "bin/privcal")
    job = subprocess.run([str(script), "table", "--setting", "gaussian", "--epsilons", "1"], cwd=tmp_path, env=clean,
                         capture_output=True, text=True, timeout=_CAP)
    assert job.returncode == 0 and "100 Gaussian releases" in job.stdout, job.stderr
    modules = sorted(p.relative_to(ROOT).with_suffix("").as_posix().replace("/", ".").removesuffix(".__init__")
                     for p in (ROOT / "privcal").rglob("*.py") if p.name != "__main__.py")
    code = f"import importlib\nfor m in {modules!r}:\n    importlib.import_module(m)\nprint(len({modules!r}))\n"
    imported = subprocess.run([str(python), "-W", "error::DeprecationWarning:privcal", "-c", code], cwd=tmp_path,
                              env=clean, capture_output=True, text=True, timeout=_CAP)
    assert imported.returncode == 0 and imported.stdout.strip() == str(len(modules)), imported.stderr[-2000:]
