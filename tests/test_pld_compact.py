"""What a history of many distinct factors keeps of its single-step PMFs (``discretise.pmfs_many(compact=True)``,
docs/pld.md Sec. 2.10 "Memory and reuse"): the upper PMFs' error patterns as bfloat16 bounds rounded up, a lower PMF
sharing its upper twin's grid points, and row blocks capped by their cells.

The bfloat16 patterns are bounds in their own right (each >= the float64 bound it stands for), so every
derivation that reads them holds as it is; every other number of the PMFs is bitwise the float64 build's. Expected
values are the same build without ``compact`` (bitwise) or the float64 patterns (the bound direction)."""

from __future__ import annotations

import numpy as np
import pytest

from privcal.privacy_loss import convolve as C
from privcal.privacy_loss import discretise as B

H, TAIL, COARSE = 2.0**-12, 1e-13, (64, 1e-8)
#: bfloat16's relative spacing (2^-7: 8 significant bits) and its smallest subnormal (float32's exponent range): a
#: bfloat16 rounded up lies within one spacing above the float64 value, or at most that subnormal where it is below
BF16_REL, BF16_TINY = 2.0**-7, 2.0**-133


def _directions(count: int) -> list:
    return [B.SubsampledDirection(0.9 + 0.013 * i, 0.01, i % 2 == 0) for i in range(count)]


def _bf16_below(codes: np.ndarray) -> np.ndarray:
    """The bfloat16 one step below each (positive, finite) code, in float64: the code minus one, decoded."""
    return B.pattern_values(codes - np.uint16(1))


def test_round_up_bf16_is_the_least_bfloat16_at_or_above_each_entry():
    """Each entry becomes the least bfloat16 >= it: never below (a bound stays a bound), and one bfloat16 step down
    is below it (no looser than needed); exact where the value is a bfloat16; beyond the range inf, nan kept, 0 kept.
    Red when the float32 cast's rounding to nearest is not undone first, when the lower 16 bits are truncated
    instead of rounded up (about all random entries come out below), or when it rounds up one step too many."""
    rng = np.random.default_rng(7)
    a = np.concatenate([rng.random(2000) * 10.0 ** rng.integers(-60, 30, 2000),
                        [0.0, 2.0**-1072, 1e-50, 3.39e38, 1e300, np.inf, 1.0, 0.1, 1.0 + 2.0**-7, 1.0 + 2.0**-30]])
    out = B.round_up_bf16(a)
    assert out.dtype == np.uint16 and out.shape == a.shape
    back = B.pattern_values(out)
    assert back.dtype == np.float64
    assert np.all(back >= a)
    pos = np.isfinite(back) & (a > 0)
    assert np.all(_bf16_below(out[pos]) < a[pos])
    assert back[-10] == 0.0 and back[-9] == 2.0**-133 and back[-8] == 2.0**-133  # below the range: its subnormal
    assert back[-7] == np.inf and back[-6] == np.inf and back[-5] == np.inf  # above the largest finite (3.39e38)
    assert back[-4] == 1.0 and back[-2] == 1.0 + 2.0**-7  # exact where representable
    assert back[-1] == 1.0 + 2.0**-7  # one float32 step above 1 goes up to the next bfloat16
    big = pos & (a >= 2.0**-126)
    assert np.all(back[big] <= a[big] * (1.0 + BF16_REL))
    assert np.isnan(B.pattern_values(B.round_up_bf16(np.array([np.nan])))[0])


def test_a_compact_build_keeps_every_number_and_rounds_the_error_patterns_up():
    """A compact build of 120 directions (both ends, coarse tails): masses, offsets, sizes, error sums, moments and
    the mass at +inf bitwise those of the float64 build; the upper patterns ``mono``, ``dip``, ``quad`` bfloat16, each
    entry >= the float64 one and within one bfloat16 step of it; each sparse lower PMF shares its upper twin's point
    offsets, equal to those it has when built alone. Red when a pattern is rounded down or dropped (zeros), when
    any other number moves, or when a lower PMF points at other grid points."""
    ds = _directions(120)
    ref = B.pmfs_many(ds, H, ends=(True, False), tail=TAIL, coarse=COARSE, per_atom=False)
    got = B.pmfs_many(ds, H, ends=(True, False), tail=TAIL, coarse=COARSE, per_atom=False, compact=True)
    shared = 0
    for e in (True, False):
        for a, b in zip(ref[e], got[e]):
            assert type(a) is type(b) and a.offset == b.offset and a.size == b.size
            assert np.array_equal(a.mass, b.mass) and a.moments == b.moments
            assert (a.err_mass, a.err_dipole, a.err_quad, a.inf_mass, a.err_inf) == \
                (b.err_mass, b.err_dipole, b.err_quad, b.inf_mass, b.err_inf)
            if isinstance(a, B.SparsePmf):
                assert np.array_equal(a.at, b.at)
                assert b.at.dtype == (np.uint16 if b.size <= 2**16 else np.int32)  # 2 bytes per point where they fit
            if not e:
                continue
            for name in ("mono", "dip", "quad"):
                x, y = getattr(a, name), getattr(b, name)
                assert y.dtype == np.uint16 and y.shape == x.shape
                wide = B.pattern_values(y)
                assert np.all(wide >= x)
                assert np.all(wide <= x * (1.0 + BF16_REL) + BF16_TINY)
                assert np.any(x > 0)
    for pu, pl in zip(got[True], got[False]):
        if isinstance(pl, B.SparsePmf):
            assert pl.at is pu.at
            shared += 1
    assert shared >= 20


def test_bf16_patterns_are_read_as_their_float64_values_by_both_tilt_paths():
    """The tilted error terms of a compact upper PMF equal those of the same PMF with its bfloat16 patterns decoded to
    float64 (the same values), bit for bit, on the table path and on the log-weight path (a tilt strong enough to
    leave the table), and the terms are >= the float64 build's. Red when either path reads the stored uint16 codes
    as numbers instead of decoding them (the integer codes are ~1e4, the patterns ~1e-20)."""
    ds = _directions(12)
    ref = B.pmfs_many(ds, H, ends=(True,), tail=TAIL, coarse=COARSE, per_atom=False)[True]
    got = B.pmfs_many(ds, H, ends=(True,), tail=TAIL, coarse=COARSE, per_atom=False, compact=True)[True]
    for a, p in zip(ref, got):
        wide = B.Pmf(p.offset, p.mass, p.inf_mass, p.h, p.err_mass, p.err_dipole, p.err_quad, None,
                     mono=B.pattern_values(p.mono), dip=B.pattern_values(p.dip), quad=B.pattern_values(p.quad),
                     err_inf=p.err_inf, err_at=p.err_at)
        for tau in (1e-3, 0.9):  # 0.9 per grid unit: beyond the table (tau * size / 2 > 700) on every PMF here
            assert tau < 0.5 or tau * (p.size // 2) > 700
            x, lx = C.tilted(p, tau)
            y, ly = C.tilted(wide, tau)
            z, _ = C.tilted(a, tau)
            assert lx == ly and np.array_equal(x.mass, y.mass)
            assert (x.err_mass, x.err_dipole, x.err_quad) == (y.err_mass, y.err_dipole, y.err_quad)
            assert x.err_mass >= z.err_mass and x.err_dipole >= z.err_dipole and x.err_quad >= z.err_quad


def test_row_blocks_capped_by_their_cells_build_the_same_pmfs(monkeypatch):
    """Long rows (small noise) go in smaller blocks, at most _BLOCK_CELLS cells per block beyond one row: with a cap
    so small that every long row is a block of its own, each PMF is bitwise the one of the default blocks. Red when
    a block's rows change each other's numbers (a sum over the padding)."""
    ds = [B.SubsampledDirection(0.6 + 0.05 * i, 0.02, True) for i in range(40)]
    ref = B.pmfs_many(ds, H, ends=(True, False), tail=TAIL, coarse=COARSE, per_atom=False, compact=True)
    monkeypatch.setattr(B, "_BLOCK_CELLS", 2**10)
    got = B.pmfs_many(ds, H, ends=(True, False), tail=TAIL, coarse=COARSE, per_atom=False, compact=True)
    for e in (True, False):
        for a, b in zip(ref[e], got[e]):
            assert a.offset == b.offset and np.array_equal(a.mass, b.mass) and a.moments == b.moments
            assert (a.err_mass, a.err_dipole, a.err_quad) == (b.err_mass, b.err_dipole, b.err_quad)
            if e:
                assert all(np.array_equal(getattr(a, f), getattr(b, f)) for f in ("mono", "dip", "quad"))


@pytest.mark.parametrize("upper", [True, False])
def test_a_grouped_history_of_compact_pmfs_composes_as_the_float64_one_with_bounds_at_least_its(upper):
    """200 distinct factors (grouped), tilted for delta = 1e-9: the composed masses, window and FFT error of the compact
    PMFs are bitwise those of the float64 build (only the input-error patterns differ), and the input-error terms
    carried (``local``) are >= the float64 build's, within bfloat16's relative spacing 2^-7 (each entry is). Red when
    the compact patterns lower a term."""
    ds = _directions(200)
    ref = [(p, 1 + i % 3) for i, p in enumerate(B.pmfs_many(ds, H, ends=(upper,), tail=TAIL, coarse=COARSE,
                                                           per_atom=False)[upper])]
    got = [(p, 1 + i % 3) for i, p in enumerate(B.pmfs_many(ds, H, ends=(upper,), tail=TAIL, coarse=COARSE,
                                                           per_atom=False, compact=True)[upper])]
    tilt = C.choose_tilt(ref, delta=1e-9)
    assert tilt > 0 and tilt == C.choose_tilt(got, delta=1e-9)
    a, b = C.compose(ref, 1e-12, tilt), C.compose(got, 1e-12, tilt)
    assert a.offset == b.offset and np.array_equal(a.mass, b.mass)
    assert (a.err, a.outside, a.log_scale) == (b.err, b.outside, b.log_scale)
    for x, y in zip(a.local, b.local):
        assert y >= x and y <= x * (1.0 + BF16_REL) + 1e-300
    if upper:
        assert a.local[0] > 0 and a.local[1] > 0


def test_the_most_cells_of_a_mixed_history_are_those_of_its_grid_ranges_one_at_a_time():
    """The most grid cells of one step over a history (the memory check before any build), computed on arrays of the
    directions' support bounds (``discretise.grid_bounds``), equals the largest hi - lo + 1 of ``grid_range`` taken one
    direction at a time: both sides of 30 subsampled Gaussians, a Gaussian, a Laplace and an (eps, delta) event, on
    two grids and two tails. Red when a bound is rounded otherwise (floor / ceil swapped, the margin below dropped)."""
    from privcal.accounting.events import (ApproxDPEvent, ComposedEvent, GaussianEvent, LaplaceEvent,
                                           PoissonSampledEvent, SelfComposedEvent)
    from privcal.accounting.pld_events import from_event

    ev = ComposedEvent([SelfComposedEvent(PoissonSampledEvent(0.02, GaussianEvent(0.7 + 0.09 * i)), 2) for i in range(30)]
                       + [GaussianEvent(3.0), LaplaceEvent(1.0, 2.5), ApproxDPEvent(0.3, 1e-9)])
    pld = from_event(ev)
    dirs = [d for pair, _ in pld._factors for d in pair.directions()]
    assert len(dirs) > 60
    for h in (2.0**-9, 0.0013):
        for tail in (1e-12, 1e-20):
            want = max(hi - lo + 1 for lo, hi in (B.grid_range(d, h, tail) for d in dirs))
            assert pld._cells(h, tail) == want


def test_log_mgfs_of_many_factors_make_their_blocks_one_at_a_time_with_the_same_values(monkeypatch):
    """The log-MGFs of 300 factors (sparse PMFs on the exponential path, dense ones on the table path) at several
    tilts: with the padded blocks kept on an ``MgfRows`` (at most ``_MGF_KEEP`` atoms), made one at a time (above it),
    and for a plain list, bitwise the same; the one-at-a-time call holds less than half the memory of the kept one
    at its peak (a history of many factors: one block's copy of the masses, not all of them). Red when the blocks
    made one at a time differ from the kept ones (another order or padding), or when they are all made at once."""
    import tracemalloc

    ds = _directions(150)
    pmfs = (B.pmfs_many(ds, H, ends=(True,), tail=TAIL, coarse=COARSE, per_atom=False, compact=True)[True]
            + B.pmfs_many(ds, H, ends=(False,), tail=TAIL, coarse=None, per_atom=False)[False])
    assert any(isinstance(p, B.SparsePmf) for p in pmfs) and any(not isinstance(p, B.SparsePmf) for p in pmfs)
    taus = np.array([1e-4, 3e-3, -2e-3, 0.05])
    tracemalloc.start()
    kept = C.log_mgfs(C.MgfRows(pmfs), taus)
    peak_kept = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    monkeypatch.setattr(C, "_MGF_KEEP", 0)
    tracemalloc.start()
    lazy = C.log_mgfs(C.MgfRows(pmfs), taus)
    peak_lazy = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    plain = C.log_mgfs(list(pmfs), taus)
    assert np.array_equal(kept, lazy) and np.array_equal(kept, plain)
    assert np.all(np.isfinite(kept[:, :2]))
    assert peak_lazy < 0.5 * peak_kept
