"""One runner for the experiments' independent, seeded tasks: joblib on local cores or on a Dask cluster.

:func:`run_trials` (and its kernel :func:`run_trials_unchecked`, engine already checked) is the only place the
experiments (``dpq.experiments``, ``gpope.experiments``, ``pucb.experiments``, ``dpq.replay``, ``frontier``)
hand work to an engine. Three engines:

* ``backend=None`` (the default): whatever ``joblib.parallel_config(backend=...)`` selects around the call
  (loky processes when nothing is configured; Dask, Ray, threading or a registered custom backend
  otherwise), with ``n_jobs`` workers (default -1: all local cores, or all the configured backend's
  workers);
* ``backend="local"``: joblib's loky process pool on this machine, whatever is configured;
* ``backend="dask"``: a Dask distributed cluster at ``scheduler`` (``"tcp://host:8786"``), through
  ``dask.distributed.Client(scheduler)`` and ``joblib.parallel_config(backend="dask")`` (the ``dask``
  extra: ``pip install 'privcal[dask]'``). Every worker needs privcal installed (the same version).

One BLAS thread per worker: each task runs under ``threadpoolctl.threadpool_limits(1)`` when threadpoolctl
is installed (it comes with the ``dask`` and ``test`` extras); without it, loky workers get
``inner_max_num_threads=1`` (joblib sets OMP/OPENBLAS/MKL_NUM_THREADS=1 when it starts them) and Dask
nannies set the same variables before starting a worker (``distributed.nanny.pre-spawn-environ``).
:func:`blas_threads` reports what a worker actually has (``tests/test_parallel.py`` checks it is 1).

Results do not depend on the engine or on ``n_jobs``: every task is seeded by its own arguments, and
the results come back in the order of the tasks. ``n_jobs=1`` with no backend runs the tasks in this
process, one after the other (no pickling, no thread limit); so does any call when joblib is missing.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterable
from typing import Any, Optional

from privcal import _validate as V

__all__ = ["BACKENDS", "run_trials", "check_engine", "blas_threads"]

#: Values of ``backend``: None (joblib's configured backend), "local" (loky) or "dask" (a scheduler address).
BACKENDS = ("local", "dask")


def check_engine(n_jobs: Optional[int], backend: Optional[str], scheduler: Optional[str]) -> tuple:
    """Validate an engine choice once, at a public boundary; returns (n_jobs, backend, scheduler).

    Args:
        n_jobs: a positive int, -1 (all cores or workers) or None (joblib's configured default).
        backend: None (joblib's configured backend), "local" (loky processes) or "dask".
        scheduler: the Dask scheduler address (``"tcp://host:8786"``), required with backend "dask" and
            refused with any other backend.

    Returns:
        the normalised (n_jobs, backend, scheduler).

    Raises:
        ValueError: an argument is outside its range, or scheduler and backend disagree.
    """
    if n_jobs is not None and n_jobs != -1:
        n_jobs = V.positive_int("n_jobs", n_jobs)
    if backend is not None:
        V.choice("backend", backend, BACKENDS)
    if backend == "dask":
        if not scheduler or not isinstance(scheduler, str):
            raise ValueError(f"scheduler must be a Dask scheduler address (e.g. 'tcp://host:8786') with "
                             f"backend 'dask', got {scheduler!r}")
    elif scheduler is not None:
        raise ValueError(f"scheduler is used only with backend 'dask', got scheduler={scheduler!r} with "
                         f"backend {backend!r}")
    return n_jobs, backend, scheduler


class _OneThread:
    """``fn(*task)`` under one BLAS/OpenMP thread (threadpoolctl when installed); picklable."""

    def __init__(self, fn: Callable[..., Any]):
        self.fn = fn

    def __call__(self, *task: Any) -> Any:
        try:
            from threadpoolctl import threadpool_limits
        except ImportError:  # loky and Dask nannies set the thread variables at worker start
            return self.fn(*task)
        with threadpool_limits(limits=1):
            return self.fn(*task)


def run_trials(fn: Callable[..., Any], tasks: Iterable[tuple], n_jobs: Optional[int] = -1, *,
               backend: Optional[str] = None, scheduler: Optional[str] = None,
               progress: Optional[Callable[[int, int], None]] = None) -> list:
    """[fn(*task) for task in tasks] on the chosen engine (see the module docstring), in task order.

    Args:
        fn: a picklable (top-level) function.
        tasks: argument tuples, one per call.
        n_jobs: workers: a positive int, -1 (all local cores, or all workers of the configured backend)
            or None (joblib's configured default); default -1. ``n_jobs=1`` without a backend runs in
            this process.
        backend: None (default: joblib's configured backend, loky when none is), "local" (loky
            processes on this machine) or "dask" (the cluster at ``scheduler``).
        scheduler: Dask scheduler address, required with backend "dask"; default None.
        progress: called as ``progress(done, total)`` (tasks) as results arrive, in this process;
            default None.

    Returns:
        the results in the order of ``tasks``.

    Raises:
        ValueError: an argument is outside its range.
        ImportError: backend "dask" without the ``dask`` extra.
    """
    n_jobs, backend, scheduler = check_engine(n_jobs, backend, scheduler)
    return run_trials_unchecked(fn, tasks, n_jobs, backend, scheduler, progress)


def run_trials_unchecked(fn, tasks, n_jobs, backend, scheduler, progress) -> list:
    """Kernel of :func:`run_trials` (engine already checked)."""
    tasks = list(tasks)
    total = len(tasks)
    try:
        import joblib
    except ImportError:  # pragma: no cover - joblib is in the 'rl' extra
        joblib = None
    if joblib is None or (backend is None and n_jobs == 1) or (backend == "local" and total <= 1):
        out = []
        for t in tasks:
            out.append(fn(*t))
            if progress is not None:
                progress(len(out), total)
        return out
    calls = [joblib.delayed(_OneThread(fn))(*t) for t in tasks]
    with _engine(joblib, backend, scheduler):
        if progress is None:
            return list(joblib.Parallel(n_jobs=n_jobs)(calls))
        try:  # results as they arrive, in order
            gen = joblib.Parallel(n_jobs=n_jobs, return_as="generator")(calls)
        except ValueError:  # a backend without generators (Dask before joblib 1.4): progress at the end
            out = list(joblib.Parallel(n_jobs=n_jobs)(calls))
            progress(total, total)
            return out
        out = []
        for res in gen:
            out.append(res)
            progress(len(out), total)
    return out


@contextlib.contextmanager
def _engine(joblib, backend, scheduler):
    """The joblib configuration of ``backend`` (nothing for None: the caller's configuration stands)."""
    if backend is None:
        yield
    elif backend == "local":
        with joblib.parallel_config(backend="loky", inner_max_num_threads=1):
            yield
    else:
        try:
            from dask.distributed import Client
        except ImportError as exc:
            raise ImportError("backend 'dask' needs dask.distributed: pip install 'privcal[dask]'") from exc
        with Client(scheduler, set_as_default=True) as client, \
                joblib.parallel_config(backend="dask", wait_for_workers_timeout=60):
            del client
            yield


def _thread_report() -> dict:
    """BLAS/OpenMP threads seen by the process running this task (a top-level function for the workers)."""
    env = {k: os.environ.get(k) for k in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")}
    try:
        from threadpoolctl import threadpool_info
    except ImportError:
        return {"pid": os.getpid(), "env": env, "libraries": None}
    import numpy as np

    np.dot(np.ones((2, 2)), np.ones((2, 2)))  # make sure the BLAS is loaded
    return {"pid": os.getpid(), "env": env,
            "libraries": {i["internal_api"]: i["num_threads"] for i in threadpool_info()}}


def _thread_task(_index: int) -> dict:
    return _thread_report()


def blas_threads(tasks: int = 4, n_jobs: Optional[int] = -1, *, backend: Optional[str] = None,
                 scheduler: Optional[str] = None) -> list:
    """What each task's worker sees: its pid, the thread variables and the threads per BLAS/OpenMP library.

    A measurement of the one-thread-per-worker rule on a given engine (``libraries`` is None without
    threadpoolctl).

    Args:
        tasks: number of probe tasks, an int >= 1; default 4.
        n_jobs: as in :func:`run_trials`; default -1.
        backend: as in :func:`run_trials`; default None.
        scheduler: as in :func:`run_trials`; default None.

    Returns:
        one dict per task: ``pid``, ``env`` (OMP/OPENBLAS/MKL_NUM_THREADS) and ``libraries``
        (threadpoolctl's internal_api -> num_threads, e.g. {"openblas": 1}).

    Raises:
        ValueError: an argument is outside its range.
    """
    tasks = V.positive_int("tasks", tasks)
    return run_trials(_thread_task, [(i,) for i in range(tasks)], n_jobs, backend=backend, scheduler=scheduler)
