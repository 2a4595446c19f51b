"""Subsampled-Gaussian RDP: calibration and epsilon latency, side by side with dp_accounting and prv_accountant.

Run:  pip install -e '.[bench]' && python benchmarks/bench_rdp.py

Setting (issue target): Poisson sampling q = 0.01, 10,000 steps, target (epsilon, delta) = (1, 1e-5).
* calibration: privcal.calibrate(..., accountant="rdp") against dp_accounting's
  mechanism_calibration.calibrate_dp_mechanism with its RdpAccountant (its default bracket and
  tolerance); reported: median wall time, ratio (theirs / ours, target >= 10x) and both sigmas
  (target: ours <= theirs + 1e-3);
* epsilon evaluation at the calibrated sigma: privcal RDP, dp_accounting RDP and PLD, and
  prv_accountant (which gives an error bracket; its upper end is reported);
* the issue-13 grid (``--grid``, on by default; ``--no-grid`` skips it): q in {1e-3, 1e-2, 0.1} x
  steps in {1e3, 1e4, 1e5} x epsilon in {0.5, 1, 8}, delta = 1e-5: privcal's RDP sigma against
  dp_accounting's RDP calibration (its default orders, tolerance 1e-7 so that its own bracket does not
  favour us); target: ours <= theirs * (1 + 1e-3) in every case. Interleaved per case (ours, theirs).
"""

from __future__ import annotations

import argparse
import itertools
import time
import warnings

import privcal
from _timing import median_of


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sample-rate", type=float, default=0.01)
    ap.add_argument("--steps", type=int, default=10_000)
    ap.add_argument("--epsilon", type=float, default=1.0)
    ap.add_argument("--delta", type=float, default=1e-5)
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--grid", action=argparse.BooleanOptionalAction, default=True,
                    help="also run the 27-case issue-13 grid against dp_accounting's RDP (default: on)")
    args = ap.parse_args(argv)
    q, n, eps, delta, rep = args.sample_rate, args.steps, args.epsilon, args.delta, args.repeat
    warnings.simplefilter("ignore")

    print(f"calibrate sigma: Poisson q = {q}, {n} steps, target ({eps}, {delta}), RDP")
    t_ours, s_ours = median_of(lambda: privcal.calibrate(eps, delta, steps=n, sample_rate=q, accountant="rdp"), rep)
    print(f"  privcal                 {t_ours * 1e3:9.2f} ms   sigma = {s_ours:.6f}")
    try:
        import dp_accounting
        from dp_accounting import mechanism_calibration as mc
        from dp_accounting.pld import pld_privacy_accountant
        from dp_accounting.rdp import rdp_privacy_accountant
    except ImportError:
        print("  (dp_accounting not installed: pip install -e '.[bench]')")
        return

    def event(s):
        return dp_accounting.SelfComposedDpEvent(
            dp_accounting.PoissonSampledDpEvent(q, dp_accounting.GaussianDpEvent(s)), n
        )

    t_dpa, s_dpa = median_of(
        lambda: mc.calibrate_dp_mechanism(rdp_privacy_accountant.RdpAccountant, event, eps, delta), max(3, rep // 2)
    )
    print(f"  dp_accounting (RDP)     {t_dpa * 1e3:9.2f} ms   sigma = {s_dpa:.6f}")
    print(f"  ratio dp_accounting / privcal = {t_dpa / t_ours:.1f}x (target >= 10x); "
          f"sigma difference ours - theirs = {s_ours - s_dpa:+.2e} (target <= 1e-3)")

    print(f"\nepsilon at sigma = {s_ours:.4f} (delta = {delta})")
    rows = [("privcal RDP", lambda: privcal.epsilon(s_ours, delta, steps=n, sample_rate=q, accountant="rdp"))]
    rows.append(("dp_accounting RDP", lambda: rdp_privacy_accountant.RdpAccountant().compose(event(s_ours)).get_epsilon(delta)))
    rows.append(("dp_accounting PLD", lambda: pld_privacy_accountant.PLDAccountant().compose(event(s_ours)).get_epsilon(delta)))
    try:
        from prv_accountant import PoissonSubsampledGaussianMechanism, PRVAccountant

        def prv():
            mech = PoissonSubsampledGaussianMechanism(noise_multiplier=s_ours, sampling_probability=q)
            acc = PRVAccountant(prvs=[mech], max_self_compositions=[n], eps_error=0.01, delta_error=delta / 1000)
            return acc.compute_epsilon(delta=delta, num_self_compositions=[n])[2]

        rows.append(("prv_accountant (upper)", prv))
    except ImportError:
        print("  (prv_accountant not installed)")
    base = None
    for name, fn in rows:
        t, e = median_of(fn, 3)
        base = base or t
        print(f"  {name:<24}{t * 1e3:9.2f} ms   epsilon = {e:.6f}   time ratio to privcal = {t / base:.1f}x")
    if args.grid:
        grid(delta)


def grid(delta: float) -> None:
    """privcal's RDP calibration against dp_accounting's RDP on the issue-13 grid (sigma and time)."""
    import dp_accounting
    from dp_accounting import mechanism_calibration as mc
    from dp_accounting.rdp import rdp_privacy_accountant

    print(f"\nissue-13 grid, delta = {delta}: RDP sigma, privcal vs dp_accounting (target: ours <= theirs (1 + 1e-3))")
    print(f"  {'q':>6} {'steps':>7} {'eps':>4} {'privcal sigma':>14} {'dp_acc sigma':>14} {'rel. diff':>10} "
          f"{'privcal ms':>10} {'dp_acc ms':>10}")
    worst, misses = -1.0, 0
    for q, n, eps in itertools.product([1e-3, 1e-2, 0.1], [1_000, 10_000, 100_000], [0.5, 1.0, 8.0]):
        def event(s, q=q, n=n):
            return dp_accounting.SelfComposedDpEvent(
                dp_accounting.PoissonSampledDpEvent(q, dp_accounting.GaussianDpEvent(s)), n
            )

        start = time.perf_counter()
        ours = privcal.calibrate(eps, delta, steps=n, sample_rate=q, accountant="rdp")
        t_ours = time.perf_counter() - start
        start = time.perf_counter()
        theirs = mc.calibrate_dp_mechanism(rdp_privacy_accountant.RdpAccountant, event, eps, delta, tol=1e-7)
        t_theirs = time.perf_counter() - start
        rel = ours / theirs - 1.0
        worst, misses = max(worst, rel), misses + (rel > 1e-3)
        print(f"  {q:>6g} {n:>7d} {eps:>4g} {ours:>14.6f} {theirs:>14.6f} {rel:>+10.2e} "
              f"{t_ours * 1e3:>10.1f} {t_theirs * 1e3:>10.1f}")
    print(f"  worst relative difference {worst:+.2e}; cases above +1e-3: {misses} of 27")


if __name__ == "__main__":
    main()
