"""privcal's PLD accountant side by side with dp_accounting (PLD and RDP) and prv_accountant.

Run:  pip install -e '.[bench]' && python benchmarks/bench_pld.py [--quick] [--repeat R] [--peers] [--front-only]

Settings: Poisson-subsampled Gaussian (add/remove), q in {1e-3, 1e-2, 0.1} x steps in {1e3, 1e4, 1e5} x
sigma in {0.8, 1.1, 2} at delta = 1e-5; calibration at q = 0.01, 1e4 steps, eps in {0.5, 1, 8}; one
heterogeneous history (1,000 steps sigma 1 q 0.01; 2,000 steps sigma 2 q 0.02; 10 full-batch Gaussian
releases of sensitivity 0.5 at sigma 5). Per setting: privcal's certified [lower, upper], each peer's
epsilon, wall times and peak memory (tracemalloc, one extra run each). The libraries run interleaved in
one process (privcal, peer 1, peer 2, ..., privcal, peer 1, ...) and a speed ratio is the median over the
repeats of (peer time / privcal time) of the same round: on a shared machine block timing is unreliable.
privcal's time is that of ``PLDAccountant().compose(event).epsilon(delta)`` (the upper end, on a fresh
accountant: grid chosen from the default accuracy); its bracket is computed once, outside the timing.
Times are CPU times (``time.process_time``), so the ratios do not depend on what else the shared machine runs.
The RDP peers are timed in this process, as privcal is; dp_accounting's PLD and prv_accountant inside a forked
child under a memory cap (they can exhaust the machine), in the front door in rounds of their own after the
in-process ones (the parent's first writes after a fork cost it copy-on-write faults, ~3-4 ms on a privcal call).

The front-door section times ``privcal.epsilon`` / ``privcal.calibrate`` with
``accountant="best"`` -- what users call -- against RDP peers (Opacus's RDP accountant with ``--peers``
when ``opacus`` is importable, dp_accounting's RdpAccountant always) and dp_accounting's PLD on the
27-case grid and at 10^7 steps, and checks that best's epsilon is <= dp_accounting's pessimistic PLD x
1.001 at delta in {1e-5, 1e-9, 1e-12, 1e-15} wherever the latter is finite. It ends with a target table
(geometric means of CPU-time ratios).
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
    """(CPU seconds, value) of ``fn()``."""
    start = time.process_time()
    value = fn()
    return time.process_time() - start, value


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


# ---------------------------------------------------------------------------------------------- front door
TIGHT_DELTAS = (1e-5, 1e-9, 1e-12, 1e-15)
#: the small deltas of the long-run targets (the 27-case grid timed again at each)
SMALL_DELTAS = (1e-9, 1e-12, 1e-15)


def _geomean(xs):
    xs = [x for x in xs if x > 0 and math.isfinite(x)]
    return math.exp(statistics.fmean(math.log(x) for x in xs)) if xs else math.nan


def _opacus():
    """Opacus's RDP functions (compute_rdp, get_privacy_spent, get_noise_multiplier), or None."""
    try:
        from opacus.accountants.analysis import rdp as opacus_rdp
        from opacus.accountants.utils import get_noise_multiplier
    except ImportError:
        return None
    return opacus_rdp, get_noise_multiplier


def _rdp_peers(q, steps, sigma, delta, use_opacus):
    """{name: zero-argument callable returning epsilon} of the RDP peers."""
    import dp_accounting
    from dp_accounting.rdp import rdp_privacy_accountant

    def dp_rdp():
        acc = rdp_privacy_accountant.RdpAccountant()
        acc.compose(dp_accounting.SelfComposedDpEvent(
            dp_accounting.PoissonSampledDpEvent(q, dp_accounting.GaussianDpEvent(sigma)), steps))
        return acc.get_epsilon(delta)

    out = {"dp RDP": dp_rdp}
    found = _opacus() if use_opacus else None
    if found is not None:
        opacus_rdp, _ = found
        orders = [1 + x / 10.0 for x in range(1, 100)] + list(range(12, 64))  # Opacus's default orders

        def opacus_eps():
            rdp = opacus_rdp.compute_rdp(q=q, noise_multiplier=sigma, steps=steps, orders=orders)
            return opacus_rdp.get_privacy_spent(orders=orders, rdp=rdp, delta=delta)[0]

        out["opacus RDP"] = opacus_eps
    return out


def _dp_pld(q, steps, sigma, delta):
    import dp_accounting
    from dp_accounting.pld import pld_privacy_accountant

    def run():
        acc = pld_privacy_accountant.PLDAccountant()  # pessimistic estimate, discretization 1e-4
        acc.compose(dp_accounting.SelfComposedDpEvent(
            dp_accounting.PoissonSampledDpEvent(q, dp_accounting.GaussianDpEvent(sigma)), steps))
        return acc.get_epsilon(delta)

    return run


#: peers timed in a guarded forked child (they can exhaust the machine's memory); the RDP peers are timed in this
#: process, as privcal is: after a fork the parent pays a copy-on-write fault on each page it writes first, ~3-4 ms on a
#: privcal call timed right after one (q = 1e-3, 1e5 steps: 12.7 ms alone, 16-17 ms after a fork), which timing the
#: peer in its child does not pay -- so those rounds run first, and the forked peers' rounds after them
_FORKED = frozenset({"dp PLD"})


def _in_process(fn):
    """(CPU seconds, epsilon) of a peer's call in this process; (nan, reason) on failure."""
    try:
        return _timed(fn)
    except Exception as exc:  # noqa: BLE001 - reported as the peer's result
        return math.nan, type(exc).__name__


def _interleaved(ours, theirs, repeat):
    """(our value, our median CPU s, {peer: (value, median CPU s, median ratio peer/ours)}), interleaved: the
    in-process peers' rounds (privcal, peer, peer, ...) first, then those of the forked peers (:data:`_FORKED`),
    each ratio against privcal's time of its own round."""
    mine, times = {False: [], True: []}, {name: [] for name in theirs}
    values = {}
    for forked in (False, True):
        names = [n for n in theirs if (n in _FORKED) == forked]
        if not names:
            continue
        for _ in range(repeat):
            t, value = _timed(ours)
            mine[forked].append(t)
            for name in names:
                t, values[name] = (_safe if forked else _in_process)(theirs[name])
                times[name].append(t)
    out = {}
    for name in theirs:
        own = mine[name in _FORKED]
        ratios = [b / max(a, 1e-6) for a, b in zip(own, times[name]) if not math.isnan(b)]
        out[name] = (values[name], statistics.median(times[name]),
                     statistics.median(ratios) if ratios else math.nan)
    return value, statistics.median(mine[False] or mine[True]), out


def front_door(repeat, quick, use_opacus):
    """best epsilon / sigma against the RDP peers and dp_accounting's PLD, tightness at small deltas."""
    import warnings

    import privcal

    warnings.simplefilter("ignore")
    try:
        import dp_accounting  # noqa: F401
    except ImportError:
        print("\n(front door: dp_accounting not installed: pip install -e '.[bench]'; section skipped)")
        return
    if use_opacus and _opacus() is None:
        print("\n(front door: opacus is not importable; its RDP accountant is skipped)")
    grid = list(itertools.product(QS, STEPS, SIGMAS))
    if quick:
        grid = [(1e-3, 1_000, 0.8), (1e-2, 10_000, 1.1), (0.1, 1_000, 2.0)]
    ratios: dict = {}
    print(f"\nfront door: privcal.epsilon(accountant='best') at delta = {DELTA} (CPU ms; ratio = peer / privcal)")
    print(f"{'setting':<26}{'best':>9}{'by':>5}{'ms':>8}   peers (epsilon, ms, ratio)")
    for q, steps, sigma in grid:
        theirs = {**_rdp_peers(q, steps, sigma, DELTA, use_opacus), "dp PLD": _dp_pld(q, steps, sigma, DELTA)}
        by = privcal.epsilon_report(sigma, DELTA, steps=steps, sample_rate=q).accountant
        value, t, out = _interleaved(lambda: privcal.epsilon(sigma, DELTA, steps=steps, sample_rate=q), theirs, repeat)
        for name, (_, _, r) in out.items():
            ratios.setdefault(("epsilon", name), []).append(r)
        peers_text = "  ".join(f"{n}: {_fmt(v)}, {tp * 1e3:.0f}, {_fmt(r, '.1f')}x" for n, (v, tp, r) in out.items())
        print(f"{f'q={q:g} T={steps:g} s={sigma:g}':<26}{_fmt(value):>9}{by:>5}{t * 1e3:>8.1f}   {peers_text}")

    small_deltas = () if quick else SMALL_DELTAS
    for delta in small_deltas:
        print(f"\nfront door at delta = {delta:g}: privcal.epsilon(accountant='best') (CPU ms; ratio = peer / privcal)")
        for q, steps, sigma in grid:
            theirs = _rdp_peers(q, steps, sigma, delta, use_opacus)
            value, t, out = _interleaved(lambda: privcal.epsilon(sigma, delta, steps=steps, sample_rate=q), theirs,
                                         repeat)
            for name, (_, _, r) in out.items():
                ratios.setdefault((f"epsilon {delta:g}", name), []).append(r)
            peers_text = "  ".join(f"{n}: {_fmt(v)}, {tp * 1e3:.0f}, {_fmt(r, '.1f')}x" for n, (v, tp, r) in out.items())
            print(f"{f'q={q:g} T={steps:g} s={sigma:g}':<26}{_fmt(value):>9}{t * 1e3:>8.1f}   {peers_text}")

    print(f"\nfront door: privcal.calibrate(accountant='best'), eps = 1, delta = {DELTA} (CPU ms; RDP peers: "
          "dp_accounting's calibrate_dp_mechanism with its RdpAccountant; Opacus's get_noise_multiplier)")
    cal_grid = [(q, steps) for q, steps in itertools.product(QS, STEPS)]
    if quick:
        cal_grid = [(1e-2, 10_000)]
    for q, steps in cal_grid:
        theirs = {"dp RDP": _dp_rdp_sigma(q, steps, 1.0, DELTA)}
        found = _opacus() if use_opacus else None
        if found is not None:
            _, get_noise_multiplier = found
            theirs["opacus RDP"] = lambda: get_noise_multiplier(target_epsilon=1.0, target_delta=DELTA,
                                                                sample_rate=q, steps=steps, accountant="rdp")
        by = privcal.calibrate_report(1.0, DELTA, steps=steps, sample_rate=q).accountant
        value, t, out = _interleaved(lambda: privcal.calibrate(1.0, DELTA, steps=steps, sample_rate=q), theirs, repeat)
        for name, (_, _, r) in out.items():
            ratios.setdefault(("sigma", name), []).append(r)
        peers_text = "  ".join(f"{n}: {_fmt(v)}, {tp * 1e3:.0f}, {_fmt(r, '.1f')}x" for n, (v, tp, r) in out.items())
        print(f"{f'q={q:g} T={steps:g}':<26}{_fmt(value):>9}{by:>5}{t * 1e3:>8.1f}   {peers_text}")

    q, steps, sigma = 1e-3, 10**7, 1.0
    theirs = _rdp_peers(q, steps, sigma, DELTA, use_opacus)
    value, t, long_run = _interleaved(lambda: privcal.epsilon(sigma, DELTA, steps=steps, sample_rate=q), theirs, repeat)
    print(f"\nat T = 1e7 (q = {q:g}, sigma = {sigma:g}): best {_fmt(value)} in {t * 1e3:.0f} ms; " + "  ".join(
        f"{n}: {_fmt(v)}, {tp * 1e3:.0f} ms, {_fmt(r, '.2f')}x" for n, (v, tp, r) in long_run.items()))
    longer = {}
    if not quick:
        q8, steps8 = 1e-2, 10**8
        value8, t8, longer = _interleaved(lambda: privcal.epsilon(sigma, DELTA, steps=steps8, sample_rate=q8),
                                          _rdp_peers(q8, steps8, sigma, DELTA, use_opacus), repeat)
        print(f"at T = 1e8 (q = {q8:g}, sigma = {sigma:g}): best {_fmt(value8)} in {t8 * 1e3:.0f} ms; " + "  ".join(
            f"{n}: {_fmt(v)}, {tp * 1e3:.0f} ms, {_fmt(r, '.2f')}x" for n, (v, tp, r) in longer.items()))
    theirs = {"dp RDP": _dp_rdp_sigma(q, steps, 1.0, DELTA)}
    found = _opacus() if use_opacus else None
    if found is not None:
        theirs["opacus RDP"] = lambda: found[1](target_epsilon=1.0, target_delta=DELTA, sample_rate=q, steps=steps,
                                                accountant="rdp")
    value, t, long_cal = _interleaved(lambda: privcal.calibrate(1.0, DELTA, steps=steps, sample_rate=q), theirs, repeat)
    print(f"at T = 1e7 (q = {q:g}), calibrate to eps = 1: best sigma {_fmt(value)} in {t * 1e3:.0f} ms; " + "  ".join(
        f"{n}: {_fmt(v)}, {tp * 1e3:.0f} ms, {_fmt(r, '.2f')}x" for n, (v, tp, r) in long_cal.items()))

    print("\nfront door tightness: best epsilon / dp_accounting pessimistic PLD, where the latter is finite")
    worst, count, below = 0.0, 0, []
    tight_grid = grid if not quick else grid[:2]
    for delta in TIGHT_DELTAS:
        for q, steps, sigma in tight_grid:
            status, peer = _guarded(_dp_pld(q, steps, sigma, delta))
            if status != "ok" or not math.isfinite(peer) or peer <= 0:
                continue
            r = privcal.epsilon_report(sigma, delta, steps=steps, sample_rate=q)
            lower = r.bracket[0] if r.bracket is not None else 0.0
            if peer < lower:  # the peer is below a certified lower bound of the true epsilon: optimistic
                below.append((delta, q, steps, sigma, peer, lower, r.epsilon))
                continue
            count += 1
            worst = max(worst, r.epsilon / peer)
            if r.epsilon > peer * 1.001:
                print(f"  delta={delta:g} q={q:g} T={steps:g} s={sigma:g}: best {r.epsilon:.5g} ({r.accountant}) > "
                      f"dp PLD {peer:.5g} x 1.001")
    print(f"  {count} finite cases where dp PLD is at or above privcal's certified lower end, worst ratio {worst:.5f}")
    for delta, q, steps, sigma, peer, lower, eps in below:
        print(f"  excluded: delta={delta:g} q={q:g} T={steps:g} s={sigma:g}: dp PLD {peer:.5g} is below privcal's "
              f"certified lower end {lower:.5g} (best {eps:.5g}): dp_accounting is optimistic there")

    print("\n== front-door targets (geometric mean of CPU-time ratios peer / privcal) ==")
    rows = [("best epsilon vs opacus RDP, 27-case grid", ("epsilon", "opacus RDP"), 1.0),
            ("best sigma vs opacus RDP", ("sigma", "opacus RDP"), 1.0),
            ("best epsilon vs dp RDP (stand-in for Opacus)", ("epsilon", "dp RDP"), 1.0),
            ("best sigma vs dp RDP (calibrate_dp_mechanism)", ("sigma", "dp RDP"), 1.0),
            ("best epsilon vs dp PLD", ("epsilon", "dp PLD"), 10.0)]
    for label, key, goal in rows:
        if key not in ratios:
            print(f"{label:<50} skipped (peer not available)")
            continue
        g = _geomean(ratios[key])
        print(f"{label:<50} {g:>7.2f}x  (target >= {goal:g}x: {'met' if g >= goal else 'NOT met'})")
    for what, run in (("epsilon", long_run), ("sigma", long_cal)):
        for name, (_, _, r) in run.items():
            print(f"{f'T = 1e7, best {what} vs ' + name:<50} {r:>7.2f}x  (target >= 1/3: {'met' if r >= 1 / 3 else 'NOT met'})")
    print("\n== long runs and small deltas: best vs Opacus's RDP (CPU-time ratios; targets: geometric mean >= 1x, "
          "every case >= 0.5x; T = 1e7 and 1e8 >= 1x) ==")
    for delta in (DELTA, *small_deltas):
        key = ("epsilon", "opacus RDP") if delta == DELTA else (f"epsilon {delta:g}", "opacus RDP")
        if key not in ratios:
            print(f"delta = {delta:g}: skipped (opacus not importable)")
            continue
        g, low = _geomean(ratios[key]), min(ratios[key])
        ok = g >= 1.0 and low >= 0.5
        print(f"{f'delta = {delta:g}, 27-case grid':<50} {g:>7.2f}x, slowest case {low:.2f}x  ({'met' if ok else 'NOT met'})")
    for label, run in (("T = 1e7 (q = 0.001), epsilon", long_run), ("T = 1e8 (q = 0.01), epsilon", longer)):
        if "opacus RDP" in run:
            r = run["opacus RDP"][2]
            print(f"{label:<50} {r:>7.2f}x  (target >= 1x: {'met' if r >= 1 else 'NOT met'})")
    print(f"{'best <= dp PLD x 1.001 at deltas 1e-5..1e-15':<50} worst {worst:.5f} over {count} cases "
          f"({'met' if worst <= 1.001 else 'NOT met'}; {len(below)} excluded where dp PLD is below a certified "
          "lower bound)")


def _dp_rdp_sigma(q, steps, epsilon, delta):
    import dp_accounting
    from dp_accounting import mechanism_calibration as mc
    from dp_accounting.rdp import rdp_privacy_accountant

    def run():
        return mc.calibrate_dp_mechanism(
            rdp_privacy_accountant.RdpAccountant,
            lambda s: dp_accounting.SelfComposedDpEvent(
                dp_accounting.PoissonSampledDpEvent(q, dp_accounting.GaussianDpEvent(s)), steps),
            epsilon, delta, mc.ExplicitBracketInterval(0.1, 100.0), tol=1e-4)

    return run


def groups(n_groups: int) -> None:
    """A noise schedule of ``n_groups`` distinct subsampled Gaussians (sigma = 1.000, 1.001,
    ..., 10 steps each, q = 0.01) priced by ``epsilon_of`` with the default accountant (CPU seconds)."""
    import warnings

    import privcal
    from privcal.accounting.events import ComposedEvent, GaussianEvent, PoissonSampledEvent, SelfComposedEvent

    warnings.simplefilter("ignore")
    ev = ComposedEvent([SelfComposedEvent(PoissonSampledEvent(0.01, GaussianEvent(1.0 + 0.001 * i)), 10)
                        for i in range(n_groups)])
    base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 / 1e6  # ru_maxrss is in KiB on Linux: MB
    t, value = _timed(lambda: privcal.epsilon_of(ev, DELTA))
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 / 1e6
    print(f"\n{n_groups}-group noise schedule (sigma = 1.000, 1.001, ..., 10 steps each, q = 0.01): "
          f"epsilon {value:.5f} in {t:.1f} s of CPU, peak resident memory {peak:.0f} MB ({base:.0f} MB before the "
          "call: the interpreter, numpy, scipy and the event) (targets for 10,000 groups: <= 1 s, <= 300 MB)")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="three settings, one repeat, calibration at eps = 1")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--no-memory", action="store_true", help="skip the tracemalloc runs")
    ap.add_argument("--peers", action="store_true",
                    help="front door: add Opacus's RDP accountant (when opacus is importable)")
    ap.add_argument("--front-only", action="store_true", help="only the front-door section")
    ap.add_argument("--groups", type=int, default=0, metavar="N",
                    help="only the N-group noise-schedule history (the target for 10,000: <= 1 s of CPU)")
    args = ap.parse_args(argv)
    repeat = 1 if args.quick else max(1, args.repeat)
    if args.groups:
        groups(args.groups)
        return
    if args.front_only:
        front_door(repeat, args.quick, args.peers)
        return
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
    front_door(repeat, args.quick, args.peers)


if __name__ == "__main__":
    main()
