"""Every notebook in notebooks/ runs top to bottom (in its fast setting) without error.

The notebooks run on a kernel of the interpreter running the tests (``sys.executable``), not on
whatever kernelspec happens to be installed as ``python3``: the test writes its own kernelspec into
a temporary directory, puts it first on ``JUPYTER_PATH`` under a name no installed kernel uses, and
checks from inside the kernel that it runs this interpreter.
"""

import json
import os
import pathlib
import sys
import uuid

import pytest

NOTEBOOKS = sorted((pathlib.Path(__file__).resolve().parent.parent / "notebooks").glob("*.ipynb"))


def _this_interpreter_kernel(directory: pathlib.Path) -> str:
    """Write a kernelspec running ``sys.executable`` under ``directory/kernels``; return its name."""
    name = f"privcal-test-{uuid.uuid4().hex[:12]}"
    spec_dir = directory / "kernels" / name
    spec_dir.mkdir(parents=True)
    spec = {
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": f"privcal tests ({sys.executable})",
        "language": "python",
    }
    (spec_dir / "kernel.json").write_text(json.dumps(spec))
    return name


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebook_runs(path, tmp_path, monkeypatch):
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    pytest.importorskip("ipykernel")
    jupyter_dir = tmp_path / "jupyter"
    kernel_name = _this_interpreter_kernel(jupyter_dir)
    old = os.environ.get("JUPYTER_PATH")
    monkeypatch.setenv("JUPYTER_PATH", os.pathsep.join(filter(None, [str(jupyter_dir), old])))
    monkeypatch.setenv("MPLBACKEND", "Agg")
    nb = nbformat.read(path, as_version=4)
    # a last cell reports the kernel's interpreter, so the test fails if another Python ran it
    nb.cells.append(nbformat.v4.new_code_cell("import sys; print(sys.executable)"))
    client = nbclient.NotebookClient(
        nb, timeout=600, kernel_name=kernel_name, resources={"metadata": {"path": str(tmp_path)}}
    )
    client.execute()
    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", []) if o.output_type == "error"]
    assert not errors
    printed = "".join(o.get("text", "") for o in nb.cells[-1].outputs if o.output_type == "stream")
    assert pathlib.Path(printed.strip()) == pathlib.Path(sys.executable)
