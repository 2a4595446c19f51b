"""privcal's PLD accountant side by side with dp_accounting (PLD and RDP) and prv_accountant (issue 13, item 5).

Run:  pip install -e '.[bench]' && python benchmarks/bench_pld.py [--quick] [--repeat R]

Settings: Poisson-subsampled Gaussian (add/remove), q in {1e-3, 1e-2, 0.1} x steps in {1e3, 1e4, 1e5} x
sigma in {0.8, 1.1, 2} at delta = 1e-5; calibration at q = 0.01, 1e4 steps, eps in {0.5, 1, 8}; one
heterogeneous history (1,000 steps sigma 1 q 0.01; 2,000 steps sigma 2 q 0.02; 10 full-batch Gaussian
releases of sensitivity 0.5 at sigma 5). Per setting: privcal's certified [lower, upper], each peer's
epsilon, wall times and peak memory (tracemalloc, one extra run each). The libraries run interleaved in
one process (privcal, peer 1, peer 2, ..., privcal, peer 1, ...) and a speed ratio is the median over the
repeats of (peer time / privcal time) of the same round: on a shared machine block timing is unreliable.
privcal's time is that of ``PLDAccountant().compose(event).epsilon(delta)`` (the upper end, on a fresh
accountant: grid chosen from the default accuracy); its bracket is computed once, outside the timing.
"""

from __future__ import annotations

import argparse
import itertools
import math
import os
import pickle
import resource
import statistics
import time
import tracemalloc

from privcal.accounting.events import (
    ComposedEvent,
    GaussianEvent,
    PoissonSampledEvent,
    Releases,
    SelfComposedEvent,
)
from privcal.pld import PLDAccountant

DELTA = 1e-5
QS, STEPS, SIGMAS = (1e-3, 1e-2, 0.1), (1_000, 10_000, 100_000), (0.8, 1.1, 2.0)
HISTORY = [(1_000, 1.0, 0.01), (2_000, 2.0, 0.02)]  # (steps, sigma, q); plus 10 x Gaussian(5 / 0.5)


def _timed(fn):
    start = time.perf_counter()
    value = fn()
    return time.perf_counter() - start, value


def _peak_mb(fn) -> float:
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1] / 2**20
    finally:
        tracemalloc.stop()


# ---------------------------------------------------------------------------------------------- events
def privcal_event(parts):
    """parts: list of (steps, sigma, q) (q = 1: a full-batch Gaussian with noise multiplier sigma)."""
    events = []
    for steps, sigma, q in parts:
        inner = GaussianEvent(sigma) if q >= 1 else PoissonSampledEvent(q, GaussianEvent(sigma))
        events.append(SelfComposedEvent(inner, steps))
    return events[0] if len(events) == 1 else ComposedEvent(events)


def peers(parts, delta):
    """{name: zero-argument callable returning epsilon} for the installed peers."""
    out = {}
    try:
        import dp_accounting
        from dp_accounting.pld import pld_privacy_accountant
        from dp_accounting.rdp import rdp_privacy_accountant

        def dp_event():
            evs = []
            for steps, sigma, q in parts:
                g = dp_accounting.GaussianDpEvent(sigma)
                evs.append(dp_accounting.SelfComposedDpEvent(g if q >= 1 else dp_accounting.PoissonSampledDpEvent(q, g), steps))
            return evs[0] if len(evs) == 1 else dp_accounting.ComposedDpEvent(evs)

        def dp_pld():
            acc = pld_privacy_accountant.PLDAccountant()  # pessimistic, default discretization 1e-4
            acc.compose(dp_event())
            return acc.get_epsilon(delta)

        def dp_rdp():
            acc = rdp_privacy_accountant.RdpAccountant()
            acc.compose(dp_event())
            return acc.get_epsilon(delta)

        out["dp PLD"] = dp_pld
        out["dp RDP"] = dp_rdp
    except ImportError:
        print("(dp_accounting not installed: pip install -e '.[bench]')")
    try:
        import prv_accountant as prv

        def prv_with(eps_error):
            def run():
                prvs = [prv.GaussianMechanism(noise_multiplier=s) if q >= 1 else
                        prv.PoissonSubsampledGaussianMechanism(sampling_probability=q, noise_multiplier=s)
                        for _, s, q in parts]
                counts = [n for n, _, _ in parts]
                acc = prv.PRVAccountant(prvs=prvs, max_self_compositions=counts, eps_error=eps_error,
                                        delta_error=delta * 1e-3)
                return acc.compute_epsilon(delta=delta, num_self_compositions=counts)[2]  # its upper
            return run

        out["prv 0.1"] = prv_with(0.1)
        out["prv 0.01"] = prv_with(0.01)
    except ImportError:
        print("(prv_accountant not installed: pip install -e '.[bench]')")
    return out


#: extra address space a peer's call may take (its own process); beyond it the peer fails with MemoryError
PEER_MEMORY = 3 * 2**30


def _vm_size() -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmSize:"):
                return int(line.split()[1]) * 1024
    return 0


def _guarded(fn):
    """Run ``fn`` in a forked child under an address-space cap (a peer that would exhaust the machine's
    memory fails with MemoryError instead of being killed with the benchmark); returns what ``fn`` does."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # child
        os.close(r)
        try:
            limit = _vm_size() + PEER_MEMORY
            resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
            msg = pickle.dumps(("ok", fn()))
        except BaseException as exc:  # noqa: BLE001 - reported as the peer's result
            msg = pickle.dumps(("error", type(exc).__name__))
        os.write(w, msg)
        os._exit(0)
    os.close(w)
    chunks = []
    while True:
        chunk = os.read(r, 65536)
        if not chunk:
            break
        chunks.append(chunk)
    os.close(r)
    os.waitpid(pid, 0)
    if not chunks:
        return "error", "killed"
    return pickle.loads(b"".join(chunks))


def _safe(fn):
    """(seconds, epsilon) of a peer's call, timed inside its guarded child; (nan, reason) on failure."""
    status, value = _guarded(lambda: _timed(fn))
    return value if status == "ok" else (math.nan, value)


# ---------------------------------------------------------------------------------------------- runs
def run_setting(label, parts, repeat, memory):
    event = privcal_event(parts)
    ours = lambda: PLDAccountant().compose(event).epsilon(DELTA)  # noqa: E731
    others = peers(parts, DELTA)
    times = {"privcal": []}
    values = {}
    for name in others:
        times[name] = []
    for _ in range(repeat):  # interleaved: privcal, peer, peer, ..., privcal, ...
        t, values["privcal"] = _timed(ours)
        times["privcal"].append(t)
        for name, fn in others.items():
            t, values[name] = _safe(fn)
            times[name].append(t)
    lower, upper = PLDAccountant().compose(event).bracket(DELTA)
    row = {"setting": label, "upper": values["privcal"], "lower": lower, "bracket_upper": upper,
           "time": statistics.median(times["privcal"])}
    for name in others:
        row[name] = values[name]
        ratios = [b / a for a, b in zip(times["privcal"], times[name]) if not math.isnan(b)]
        row[f"{name} ratio"] = statistics.median(ratios) if ratios else math.nan
        row[f"{name} time"] = statistics.median(times[name])
    if memory:
        row["mem"] = _peak_mb(lambda: PLDAccountant().compose(event).bracket(DELTA))
        if "dp PLD" in others:
            status, value = _guarded(lambda: _peak_mb(others["dp PLD"]))
            row["dp PLD mem"] = value if status == "ok" else math.nan
    return row


def _fmt(x, spec=".4f"):
    if isinstance(x, str):
        return x
    return "nan" if x is None or (isinstance(x, float) and math.isnan(x)) else format(x, spec)


def print_rows(rows):
    print(f"{'setting':<28}{'lower':>9}{'upper':>9}{'dp PLD':>9}{'dp RDP':>9}{'prv .1':>9}{'prv .01':>9}"
          f"{'ms':>8}{'xdpPLD':>8}{'xprv.1':>8}{'xprv.01':>8}{'MB':>7}")
    for r in rows:
        print(f"{r['setting']:<28}{_fmt(r['lower']):>9}{_fmt(r['upper']):>9}{_fmt(r.get('dp PLD')):>9}"
              f"{_fmt(r.get('dp RDP')):>9}{_fmt(r.get('prv 0.1')):>9}{_fmt(r.get('prv 0.01')):>9}"
              f"{r['time'] * 1e3:>8.1f}{_fmt(r.get('dp PLD ratio'), '.1f'):>8}{_fmt(r.get('prv 0.1 ratio'), '.1f'):>8}"
              f"{_fmt(r.get('prv 0.01 ratio'), '.1f'):>8}{_fmt(r.get('mem'), '.0f'):>7}")


def calibration(repeat, eps_list):
    releases = Releases(steps=10_000, sample_rate=0.01)
    out = []
    for eps in eps_list:
        ours = lambda: PLDAccountant().sigma_for(releases, eps, DELTA)  # noqa: E731
        peer = None
        try:
            import dp_accounting
            from dp_accounting import mechanism_calibration as mc
            from dp_accounting.pld import pld_privacy_accountant

            from privcal.accounting.accountants import RDPAccountant

            guess = RDPAccountant().sigma_for(releases, eps, DELTA)  # an upper end near the answer

            def peer():
                return mc.calibrate_dp_mechanism(
                    pld_privacy_accountant.PLDAccountant,
                    lambda s: dp_accounting.SelfComposedDpEvent(
                        dp_accounting.PoissonSampledDpEvent(0.01, dp_accounting.GaussianDpEvent(s)), 10_000),
                    eps, DELTA, mc.LowerEndpointAndGuess(guess / 2, guess), tol=1e-4)
        except ImportError:
            pass
        ts, tp = [], []
        sigma = sigma_peer = math.nan
        for _ in range(repeat):
            t, sigma = _timed(ours)
            ts.append(t)
            if peer is not None:
                t, sigma_peer = _safe(peer)
                tp.append(t)
        ratio = statistics.median([b / a for a, b in zip(ts, tp)]) if tp else math.nan
        out.append((eps, sigma, statistics.median(ts), sigma_peer, statistics.median(tp) if tp else math.nan, ratio))
    print(f"\ncalibration, q = 0.01, 10^4 steps, delta = {DELTA}: sigma whose upper epsilon meets the target")
    print(f"{'eps':>6}{'privcal sigma':>15}{'ms':>9}{'dp PLD sigma':>15}{'ms':>9}{'ratio':>8}")
    for eps, s, t, sp, tp_, r in out:
        print(f"{eps:>6g}{s:>15.5f}{t * 1e3:>9.1f}{_fmt(sp, '.5f'):>15}{tp_ * 1e3:>9.1f}{_fmt(r, '.1f'):>8}")
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="three settings, one repeat, calibration at eps = 1")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--no-memory", action="store_true", help="skip the tracemalloc runs")
    args = ap.parse_args(argv)
    repeat = 1 if args.quick else max(1, args.repeat)
    grid = list(itertools.product(QS, STEPS, SIGMAS))
    if args.quick:
        grid = [(1e-3, 1_000, 0.8), (1e-2, 10_000, 1.1), (0.1, 1_000, 2.0)]
    rows = []
    for q, steps, sigma in grid:
        rows.append(run_setting(f"q={q:g} T={steps:g} s={sigma:g}", [(steps, sigma, q)], repeat, not args.no_memory))
        print_rows(rows[-1:])
    rows.append(run_setting("history", HISTORY + [(10, 5.0 / 0.5, 1.0)], repeat, not args.no_memory))
    print("\n== all settings (delta = 1e-5; ratio = median over rounds of peer time / privcal time) ==")
    print_rows(rows)
    cal = calibration(repeat, [1.0] if args.quick else [0.5, 1.0, 8.0])

    print("\n== targets ==")
    worst = max((r["upper"] / r["dp PLD"] - 1 for r in rows if isinstance(r.get("dp PLD"), float)
                 and r["dp PLD"] > 0), default=math.nan)
    print(f"upper <= dp PLD x (1 + 1e-3) on every setting: worst excess {worst:+.2e} "
          f"({'met' if worst <= 1e-3 else 'NOT met'})")
    for name, goal in (("dp PLD", 10.0), ("prv 0.1", 5.0)):
        ratios = [r[f"{name} ratio"] for r in rows if not math.isnan(r.get(f"{name} ratio", math.nan))]
        if ratios:
            med = statistics.median(ratios)
            print(f"median speed-up over {name}: {med:.1f}x (target >= {goal:g}x: {'met' if med >= goal else 'NOT met'})")
    head = [c for c in cal if c[0] == 1.0]
    if head:
        _, s, t, *_ = head[0]
        print(f"headline calibration: sigma = {s:.5f} (<= 3.815: {'met' if s <= 3.815 else 'NOT met'}), "
              f"{t * 1e3:.0f} ms (<= 100 ms: {'met' if t <= 0.1 else 'NOT met'})")
    mems = [r["mem"] for r in rows if "mem" in r]
    if mems:
        print(f"peak memory (privcal bracket, tracemalloc): {max(mems):.0f} MB (<= 500 MB: "
              f"{'met' if max(mems) <= 500 else 'NOT met'})")


if __name__ == "__main__":
    main()
