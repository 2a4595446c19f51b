"""Every notebook in notebooks/ runs top to bottom (in its fast setting) without error.

The notebooks run on a kernel of the interpreter running the tests (``sys.executable``), not on
whatever kernelspec happens to be installed as ``python3``: the run writes its own kernelspec into
a temporary directory, puts it first on ``JUPYTER_PATH`` under a name no installed kernel uses, and
checks from inside the kernel that it runs this interpreter.

They run in the background from the session's first test on, the three at once, each alone on its own
kernel in its own directory (``notebook_runs`` in tests/conftest.py); each test waits for its notebook
and reports that notebook's error.
"""

import pathlib
import sys

import pytest

NOTEBOOKS = sorted((pathlib.Path(__file__).resolve().parent.parent / "notebooks").glob("*.ipynb"))  # as conftest's


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebook_runs(path, notebook_runs):
    pytest.importorskip("nbformat")
    pytest.importorskip("nbclient")
    pytest.importorskip("ipykernel")
    nb, raised = notebook_runs.result(path)
    if raised is not None:
        raise raised
    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", []) if o.output_type == "error"]
    assert not errors
    printed = "".join(o.get("text", "") for o in nb.cells[-1].outputs if o.output_type == "stream")
    assert pathlib.Path(printed.strip()) == pathlib.Path(sys.executable)
