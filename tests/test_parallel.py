"""privcal.rl.parallel: the engine (local cores, a configured joblib backend, a Dask cluster) changes
where seeded tasks run, never what they return; one BLAS thread per worker."""

from __future__ import annotations

import numpy as np
import pytest

from privcal.rl import parallel as P


def _draw(seed, n):
    """A seeded task with BLAS work in it (a top-level function, so workers can import it)."""
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((n, n))
    return float(np.linalg.norm(a @ a.T)), seed


TASKS = [(s, 20) for s in range(6)]


def test_default_engine_uses_all_cores_and_equals_sequential():
    seq = P.run_trials(_draw, TASKS, 1)
    assert P.run_trials(_draw, TASKS) == seq  # default n_jobs=-1: loky processes
    assert P.run_trials(_draw, TASKS, 2, backend="local") == seq
    assert [s for _, s in seq] == list(range(6))  # task order kept


def test_configured_backend_is_used_by_default():
    joblib = pytest.importorskip("joblib")
    seq = P.run_trials(_draw, TASKS, 1)
    with joblib.parallel_config(backend="threading"):
        assert P.run_trials(_draw, TASKS) == seq


def test_progress_counts_tasks():
    seen = []
    P.run_trials(_draw, TASKS[:3], 2, progress=lambda d, t: seen.append((d, t)))
    assert seen == [(1, 3), (2, 3), (3, 3)]
    seen.clear()
    P.run_trials(_draw, TASKS[:2], 1, progress=lambda d, t: seen.append((d, t)))
    assert seen == [(1, 2), (2, 2)]


@pytest.mark.parametrize("kwargs, match", [
    ({"n_jobs": 0}, "n_jobs"),
    ({"n_jobs": -2}, "n_jobs"),
    ({"backend": "spark"}, "backend"),
    ({"backend": "dask"}, "scheduler"),
    ({"backend": "local", "scheduler": "tcp://localhost:8786"}, "scheduler"),
    ({"scheduler": "tcp://localhost:8786"}, "scheduler"),
])
def test_bad_engine_is_refused(kwargs, match):
    with pytest.raises(ValueError, match=match):
        P.run_trials(_draw, TASKS, **kwargs)


def test_one_blas_thread_per_local_worker():
    pytest.importorskip("threadpoolctl")
    reports = P.blas_threads(4, 2, backend="local")
    assert all(r["libraries"] and set(r["libraries"].values()) == {1} for r in reports), reports
    # loky also sets the variables when it starts a worker (the fallback without threadpoolctl)
    assert all(r["env"]["OMP_NUM_THREADS"] == "1" for r in reports), reports


def test_pucb_experiment_does_not_depend_on_n_jobs():
    from privcal.rl.pucb.experiments import regret_experiment

    seen = []
    one = regret_experiment("fast", episodes=40, seeds=(0, 1), epsilons=(1.0, None), n_jobs=1)
    two = regret_experiment("fast", episodes=40, seeds=(0, 1), epsilons=(1.0, None), n_jobs=2,
                            progress=lambda d, t: seen.append((d, t)))
    for label in one.labels:
        np.testing.assert_array_equal(one.episode_regret[label], two.episode_regret[label])
    assert one.error_bounds == two.error_bounds
    assert seen[-1] == (160, 160)  # 2 epsilons x 2 seeds x 40 episodes, reported per run


# ------------------------------------------------------------------------------ Dask distributed


@pytest.fixture(scope="module")
def cluster():
    distributed = pytest.importorskip("distributed")  # a guard only: distributed is in the test extra
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as c:
        yield c.scheduler_address


def test_dask_cluster_equals_local_run(cluster):
    from privcal.rl.frontier import frontier

    kwargs = dict(epsilons=(1.0, 10.0), amounts=(40,), seeds=(0, 1))
    local = frontier("pucb", n_jobs=1, **kwargs)
    remote = frontier("pucb", backend="dask", scheduler=cluster, **kwargs)
    assert remote.to_dict() == local.to_dict()
    assert P.run_trials(_draw, TASKS, backend="dask", scheduler=cluster) == P.run_trials(_draw, TASKS, 1)


def test_one_blas_thread_per_dask_worker(cluster):
    reports = P.blas_threads(4, backend="dask", scheduler=cluster)
    assert len({r["pid"] for r in reports}) >= 1
    assert all(r["env"]["OPENBLAS_NUM_THREADS"] == "1" for r in reports), reports  # the nanny's variables
    if reports[0]["libraries"] is not None:
        assert all(set(r["libraries"].values()) == {1} for r in reports), reports
