"""Shared pytest settings: reproducible, bounded hypothesis runs.

The ``ci`` profile (default) derandomises hypothesis so a run is repeatable and keeps the example
count small enough for the whole suite to stay well under 10 minutes on 2 cores; set
``HYPOTHESIS_PROFILE=thorough`` for a longer local search.
"""

import asyncio
import inspect
import json
import os
import pathlib
import sys
import threading
import uuid

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile(
    "ci",
    max_examples=60,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile("thorough", max_examples=2000, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


@pytest.fixture
def validations(monkeypatch):
    """Count calls of every rule of ``privcal._validate`` (``validations["n"]``).

    Callers go through the module's attributes (``V.positive(...)``), so wrapping them sees every
    validation; tests use it to check that a public call validates each argument once.
    """
    from privcal import _validate as V

    counts = {"n": 0}
    for name, fn in list(vars(V).items()):
        if inspect.isfunction(fn) and not name.startswith("_") and fn.__module__ == V.__name__:
            def wrapped(*args, _fn=fn, **kwargs):
                counts["n"] += 1
                return _fn(*args, **kwargs)

            monkeypatch.setattr(V, name, wrapped)
    return counts


# ------------------------------------------------------------------------------------------------------------
# The notebooks (tests/test_notebooks.py) run in the background from the session's first test on: each on its own
# kernel process of this interpreter, the three at once, while the rest of the suite runs in this process. A kernel
# is one busy core, this process another: on 2 cores the notebooks' minutes overlap the in-process tests instead of
# adding to them. Only the notebooks whose test is selected run (``-k dpq`` runs one); each test waits for its own.

NOTEBOOKS = sorted((pathlib.Path(__file__).resolve().parent.parent / "notebooks").glob("*.ipynb"))


def _this_interpreter_kernel(directory: pathlib.Path) -> str:
    """Write a kernelspec running ``sys.executable`` (matplotlib on Agg) under ``directory/kernels``; return its
    name, which no installed kernel uses."""
    name = f"privcal-test-{uuid.uuid4().hex[:12]}"
    spec_dir = directory / "kernels" / name
    spec_dir.mkdir(parents=True)
    spec = {
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": f"privcal tests ({sys.executable})",
        "language": "python",
        "env": {"MPLBACKEND": "Agg"},
    }
    (spec_dir / "kernel.json").write_text(json.dumps(spec))
    return name


class NotebookRuns:
    """The selected notebooks executing on an event loop of a background thread (one NotebookClient each)."""

    def __init__(self, paths, make_client):
        self.paths = list(paths)
        self.notebooks, self.clients = {}, []
        for path in self.paths:
            nb, client = make_client(path)
            self.notebooks[path] = nb
            self.clients.append(client)
        self._done = threading.Event()  # set once every client has finished, its kernel shut down
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="notebooks", daemon=True)
        self._thread.start()
        self._future = asyncio.run_coroutine_threadsafe(self._all(), self._loop)

    async def _all(self):
        try:
            return await asyncio.gather(*(c.async_execute() for c in self.clients), return_exceptions=True)
        finally:
            self._done.set()

    def result(self, path):
        """(the executed notebook, the exception its run raised or None), once the notebooks have run."""
        outcomes = dict(zip(self.paths, self._future.result()))
        out = outcomes[path]
        return self.notebooks[path], out if isinstance(out, BaseException) else None

    def close(self):
        if not self._future.done():
            self._future.cancel()  # a session that ended early (-x): the clients shut their kernels down on the way out
        self._done.wait(timeout=120)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=60)
        if not self._thread.is_alive():
            self._loop.close()


@pytest.fixture(scope="session", autouse=True)
def notebook_runs(request, tmp_path_factory):
    """The background run of the selected notebooks, or None when no notebook test is selected (or nbclient,
    nbformat or ipykernel is missing: the tests then skip)."""
    wanted = {item.callspec.params["path"] for item in request.session.items
              if getattr(item, "originalname", None) == "test_notebook_runs" and hasattr(item, "callspec")}
    chosen = [p for p in NOTEBOOKS if p in wanted]
    try:
        import ipykernel  # noqa: F401
        import nbclient
        import nbformat
    except ImportError:
        chosen = []
    if not chosen:
        yield None
        return
    jupyter_dir = tmp_path_factory.mktemp("jupyter")
    kernel_name = _this_interpreter_kernel(jupyter_dir)
    old = os.environ.get("JUPYTER_PATH")

    def make_client(path):
        nb = nbformat.read(path, as_version=4)
        # a last cell reports the kernel's interpreter, so the test fails if another Python ran it
        nb.cells.append(nbformat.v4.new_code_cell("import sys; print(sys.executable)"))
        workdir = tmp_path_factory.mktemp(path.stem)
        return nb, nbclient.NotebookClient(nb, timeout=1800, kernel_name=kernel_name,
                                           resources={"metadata": {"path": str(workdir)}})

    with pytest.MonkeyPatch.context() as mp:
        # the kernelspec first on JUPYTER_PATH for the session (no other test starts a kernel)
        mp.setenv("JUPYTER_PATH", os.pathsep.join(filter(None, [str(jupyter_dir), old])))
        runs = NotebookRuns(chosen, make_client)
        try:
            yield runs
        finally:
            runs.close()


@pytest.fixture(autouse=True)
def _fresh_step_memo():
    """Every test starts with no single-step PMF and no composed group kept between PLD objects
    (``privacy_loss.STEP_MEMO``, ``GROUP_MEMO``): a test that patches a part of the PMF build or of the composition
    then sees it run, whatever ran before it."""
    from privcal.privacy_loss.step_memo import GROUP_MEMO, STEP_MEMO

    STEP_MEMO.clear()
    GROUP_MEMO.clear()
    yield


@pytest.fixture
def pmf_grids(monkeypatch):
    """The grid spacings ``privacy_loss.discretise.pmfs`` is called on during the test, in order of first use (a spy
    on the single-step build: which grids a bracket or a probe visited)."""
    from privcal.privacy_loss import discretise

    grids = []
    real = discretise.pmfs

    def spy(direction, h, **kwargs):
        if h not in grids:
            grids.append(h)
        return real(direction, h, **kwargs)

    monkeypatch.setattr(discretise, "pmfs", spy)
    return grids
