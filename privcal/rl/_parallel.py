"""One runner for the experiments' independent, seeded tasks (joblib when installed, else a loop)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, Optional

from privcal import _validate as V

__all__ = ["run_trials"]


def run_trials(fn: Callable[..., Any], tasks: Iterable[tuple], n_jobs: Optional[int] = 1) -> list:
    """[fn(*task) for task in tasks] through ``joblib.Parallel(n_jobs)`` with the *configured* backend.

    No backend is named here, so ``joblib.parallel_config(backend=...)`` (Dask, Ray, loky, threading,
    or a registered custom backend) decides where the tasks run. Every task is seeded by its
    arguments, so the results do not depend on n_jobs or the backend; without joblib (the ``rl``
    extra) the tasks run sequentially in this process.

    Args:
        fn: a picklable (top-level) function.
        tasks: argument tuples, one per call.
        n_jobs: a positive int, -1 (all cores) or None (joblib's configured default); default 1
            (sequential, in this process).

    Returns:
        the results in the order of ``tasks``.

    Raises:
        ValueError: ``n_jobs`` is none of the above.
    """
    if n_jobs is not None and n_jobs != -1:
        n_jobs = V.positive_int("n_jobs", n_jobs)
    tasks = list(tasks)
    if n_jobs == 1:
        return [fn(*t) for t in tasks]
    try:
        from joblib import Parallel, delayed
    except ImportError:  # pragma: no cover - joblib is in the 'rl' extra
        return [fn(*t) for t in tasks]
    return Parallel(n_jobs=n_jobs)(delayed(fn)(*t) for t in tasks)
