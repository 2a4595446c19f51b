"""Benchmark of privcal.analysis.noise (exact Ornstein-Uhlenbeck paths): run ``python benchmarks/bench_noise.py``.

Prints (one core; BLAS threads pinned to 1 before numpy is imported):
  1. batch throughput: new points per second for one batch of m uniform points (target >= 1e6/s);
  2. ratio to dense Cholesky sampling of the same n = 4096 points (target >= 100x);
  3. online insertion cost per point (``sample_point``) into a path holding n = 1e3 .. 1e6 points
     (target: near-flat, consistent with O(log n));
  4. memory of a path with n = 1e6 points (tracemalloc and the stored bytes).
Timings are the best of a few repeats (wall clock, time.perf_counter); no assertions.
"""

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import time  # noqa: E402
import tracemalloc  # noqa: E402

import numpy as np  # noqa: E402

from _timing import best_of  # noqa: E402

from privcal.analysis.noise import OrnsteinUhlenbeckPath  # noqa: E402

BETA, SIGMA = 5.0, 1.0


def batch_throughput(rng):
    print("1. batch sampling (new points per second, one batch into a fresh path / into n = m points)")
    print(f"   {'m':>9} {'fresh path':>14} {'into existing':>14}")
    for m in (10**4, 10**5, 10**6):
        pts = rng.random(m)
        t_fresh = best_of(lambda: OrnsteinUhlenbeckPath(BETA, SIGMA, seed=1).sample(pts), 3)[0]
        base = rng.random(m)

        def into_existing():
            path = OrnsteinUhlenbeckPath(BETA, SIGMA, seed=1)
            path.sample(base)
            t = time.perf_counter()
            path.sample(pts)
            return time.perf_counter() - t

        t_into = min(into_existing() for _ in range(3))
        print(f"   {m:>9} {m / t_fresh:>12.3g}/s {m / t_into:>12.3g}/s")


def cholesky_ratio(rng, n=4096):
    pts = np.sort(rng.random(n))
    z = rng.standard_normal(n)

    def dense():
        cov = SIGMA**2 * np.exp(-BETA * np.abs(pts[:, None] - pts[None, :]))
        return np.linalg.cholesky(cov) @ z

    cov = SIGMA**2 * np.exp(-BETA * np.abs(pts[:, None] - pts[None, :]))
    t_chol_only = best_of(lambda: np.linalg.cholesky(cov) @ z, 3)[0]
    t_dense = best_of(dense, 3)[0]
    t_ou = best_of(lambda: OrnsteinUhlenbeckPath(BETA, SIGMA, seed=1).sample(pts), 20)[0]
    print(f"2. n = {n}: privcal batch {t_ou * 1e3:.3f} ms; dense Cholesky {t_dense * 1e3:.1f} ms "
          f"(kernel + factor + matvec; factor + matvec alone {t_chol_only * 1e3:.1f} ms)")
    print(f"   speed-up {t_dense / t_ou:.0f}x (factor + matvec alone: {t_chol_only / t_ou:.0f}x)")


def online_cost(rng, queries=20000):
    print(f"3. online insertion, {queries} new uniform points one at a time into a path of n points")
    print(f"   {'n':>9} {'sample_point':>14} {'sample(x)':>12}")
    for n in (10**3, 10**4, 10**5, 10**6):
        path = OrnsteinUhlenbeckPath(BETA, SIGMA, seed=2)
        path.sample(rng.random(n))
        q = rng.random(queries).tolist()
        t = time.perf_counter()
        for x in q:
            path.sample_point(x)
        per_point = (time.perf_counter() - t) / queries
        q2 = rng.random(queries // 4)
        t = time.perf_counter()
        for x in q2:
            path.sample(x)
        per_sample = (time.perf_counter() - t) / q2.size
        print(f"   {n:>9} {per_point * 1e6:>11.2f} us {per_sample * 1e6:>9.2f} us")


def memory(rng, n=10**6):
    pts = rng.random(n)
    tracemalloc.start()
    path = OrnsteinUhlenbeckPath(BETA, SIGMA, seed=3)
    path.sample(pts)
    with_cache, peak = tracemalloc.get_traced_memory()
    path.sample_point(0.5 + 1e-9)  # an online insertion drops the flat lookup cache of the last batch
    chunks_only, _ = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    print(f"4. memory at n = {n:.0e} (tracemalloc): {chunks_only / n:.1f} bytes/point in the chunk store "
          f"({chunks_only / 2**20:.1f} MiB); {with_cache / n:.1f} bytes/point right after a batch "
          f"(+ flat lookup cache); peak during the batch {peak / 2**20:.0f} MiB; "
          f"stored data {path.nbytes / n:.1f} bytes/point")


def main():
    rng = np.random.default_rng(0)
    batch_throughput(rng)
    cholesky_ratio(rng)
    online_cost(rng)
    memory(rng)


if __name__ == "__main__":
    main()
