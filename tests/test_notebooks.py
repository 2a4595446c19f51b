"""Every notebook in notebooks/ runs top to bottom (in its fast setting) without error.

The notebooks run on a kernel of the interpreter running the tests (``sys.executable``), not on
whatever kernelspec happens to be installed as ``python3``: the test writes its own kernelspec into
a temporary directory, puts it first on ``JUPYTER_PATH`` under a name no installed kernel uses, and
checks from inside the kernel that it runs this interpreter.

The notebooks run at the same time, each on its own kernel (one module fixture awaits their clients
together): a kernel spends most of its time on one core, so on a 2-core machine the three finish in
about the time of the longest rather than of their sum. Each notebook still runs alone in its kernel,
top to bottom, in its own directory; each test reports its own notebook's failure.
"""

import asyncio
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


@pytest.fixture(scope="module")
def executed(request, tmp_path_factory):
    """path -> (the executed notebook and the exception its run raised, or None), for the notebooks whose
    test was selected (``-k dpq`` runs one)."""
    wanted = {item.callspec.params["path"] for item in request.session.items
              if getattr(item, "originalname", None) == "test_notebook_runs" and hasattr(item, "callspec")}
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    pytest.importorskip("ipykernel")
    jupyter_dir = tmp_path_factory.mktemp("jupyter")
    kernel_name = _this_interpreter_kernel(jupyter_dir)
    old = os.environ.get("JUPYTER_PATH")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("JUPYTER_PATH", os.pathsep.join(filter(None, [str(jupyter_dir), old])))
        mp.setenv("MPLBACKEND", "Agg")
        notebooks, clients = [], []
        chosen = [p for p in NOTEBOOKS if p in wanted]
        for path in chosen:
            nb = nbformat.read(path, as_version=4)
            # a last cell reports the kernel's interpreter, so the test fails if another Python ran it
            nb.cells.append(nbformat.v4.new_code_cell("import sys; print(sys.executable)"))
            workdir = tmp_path_factory.mktemp(path.stem)
            notebooks.append(nb)
            clients.append(nbclient.NotebookClient(
                nb, timeout=600, kernel_name=kernel_name, resources={"metadata": {"path": str(workdir)}}))

        async def run_all():
            return await asyncio.gather(*(c.async_execute() for c in clients), return_exceptions=True)

        outcomes = asyncio.run(run_all())
    return {path: (nb, out if isinstance(out, BaseException) else None)
            for path, nb, out in zip(chosen, notebooks, outcomes)}


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebook_runs(path, executed):
    nb, raised = executed[path]
    if raised is not None:
        raise raised
    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", []) if o.output_type == "error"]
    assert not errors
    printed = "".join(o.get("text", "") for o in nb.cells[-1].outputs if o.output_type == "stream")
    assert pathlib.Path(printed.strip()) == pathlib.Path(sys.executable)
