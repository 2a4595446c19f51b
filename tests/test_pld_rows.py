"""Single-step PMFs built many at a time (``discretise.pmfs_many``: stacked subsampled directions, rows padded to a
common length) against the same PMFs built one at a time (``discretise.pmfs``), docs/pld.md Sec. 2.3 "Rows".

The rows are the same constructions evaluated elementwise on a 2-D array; a padded point repeats its row's last
point, so its cell is empty and its tail error is zero. The masses must agree to a few ulps (the same operations on
the same numbers; a pile's mixture sums its partners in a padded row, another order) and the error bounds, sums
over a row whose order changes with the padding, to 1e-12 relative. (On this machine the masses agree bit for bit;
the tolerance keeps the test independent of how a numpy build vectorises.)"""

from __future__ import annotations

import numpy as np
import pytest

from privcal.privacy_loss import convolve as C
from privcal.privacy_loss import discretise as B


def _directions():
    out = []
    for s, q in [(0.7, 0.05), (1.0, 0.01), (1.37, 0.01), (2.5, 0.2), (6.0, 0.001), (0.9, 0.5), (1.0, 1e-3)]:
        out.extend(B.SubsampledGaussianPair(s, q).directions())
    out += [B.GaussianPair(0.4), B.LaplacePair(0.25), B.ApproxDPPair(0.3, 1e-7)]
    return out


@pytest.mark.parametrize("coarse", [None, (8, 1e-6)])
def test_rows_equal_one_direction_at_a_time(coarse, monkeypatch):
    """Masses to 1e-14, error bounds (sums and per-atom arrays) to 1e-12, for both ends, with rows of very
    different lengths padded together (one block). Red when a padded point's tail error is not zeroed (the last
    atom's err_atoms grows), when the pile absorption reads past a row's last cell, or when a stacked direction's
    parameters are not repeated per point (the masses change)."""
    monkeypatch.setattr(B, "_ROWS", 64)
    h, tail = 2.0**-9, 1e-12
    ds = _directions()
    many = B.pmfs_many(ds, h, ends=(True, False), tail=tail, coarse=coarse)
    for upper in (True, False):
        for d, got in zip(ds, many[upper]):
            ref = B.pmfs(d, h, upper=upper, tail=tail,
                         coarse=coarse if isinstance(d, B.SubsampledDirection) else None)
            assert got.offset == ref.offset and got.mass.size == ref.mass.size
            np.testing.assert_allclose(got.mass, ref.mass, rtol=1e-14, atol=0.0)
            assert got.inf_mass == pytest.approx(ref.inf_mass, rel=1e-14, abs=0.0)
            assert got.err_inf == pytest.approx(ref.err_inf, rel=1e-12, abs=0.0)
            for name in ("err_mass", "err_dipole", "err_quad"):
                assert getattr(got, name) == pytest.approx(getattr(ref, name), rel=1e-12, abs=0.0)
            for name in ("err_atoms", "mono", "dip", "quad"):
                np.testing.assert_allclose(getattr(got, name), getattr(ref, name), rtol=1e-12, atol=0.0)


def test_rows_in_several_blocks_keep_the_order_given(monkeypatch):
    """Directions are sorted by grid length into blocks of _ROWS; the result comes back in the order given."""
    monkeypatch.setattr(B, "_ROWS", 3)
    h, tail = 2.0**-8, 1e-12
    ds = [B.SubsampledDirection(s, 0.02, remove) for s in (3.0, 0.8, 1.5, 5.0, 1.1) for remove in (True, False)]
    many = B.pmfs_many(ds, h, ends=(False,), tail=tail)
    for d, got in zip(ds, many[False]):
        ref = B.pmfs(d, h, upper=False, tail=tail)
        assert got.offset == ref.offset
        np.testing.assert_allclose(got.mass, ref.mass, rtol=1e-14, atol=0.0)


def test_a_history_of_many_factors_gets_the_bracket_of_the_one_at_a_time_build(monkeypatch):
    """PLD._pmfs builds more than CELLS_KEPT factors as rows (both ends of a direction at once); the bracket
    of a mixed history (subsampled of several rates, a Gaussian, a Laplace) must be the one-at-a-time build's
    to rounding of the error sums. Red when the rows' results are matched to the wrong factor or count."""
    from privcal.privacy_loss import distribution as D

    factors = [(B.SubsampledGaussianPair(0.8 + 0.1 * i, 0.01 * (1 + i % 3)), 20 + 5 * i) for i in range(10)]
    factors += [(B.GaussianPair(0.3), 4), (B.LaplacePair(0.05), 7)]
    rows = D.PLD(factors).bracket(1e-6)
    monkeypatch.setattr(B, "CELLS_KEPT", 10**6)  # every factor built on its own
    single = D.PLD(factors).bracket(1e-6)
    assert rows == pytest.approx(single, rel=1e-9, abs=0.0)


@pytest.mark.parametrize("coarse", [None, (8, 1e-6)])
def test_lower_end_built_later_equals_the_lower_end_built_at_once(coarse):
    """``pmfs_many(..., lower_later=True)`` keeps each block's dominated cells and runs the pairing when built:
    the same PMFs bit for bit as the lower end built with the upper one (the same operations on the same arrays;
    the lattice offsets kept as int32 are the same integers). Red when the kept cells or offsets are not those of
    the block (a row's mass moves) or a block's PMFs go to the wrong directions."""
    h, tail = 2.0**-9, 1e-12
    ds = _directions()
    now = B.pmfs_many(ds, h, ends=(True, False), tail=tail, coarse=coarse)
    later = B.pmfs_many(ds, h, ends=(True, False), tail=tail, coarse=coarse, lower_later=True)
    assert isinstance(later[False], B.LowerLater) and later[False].nbytes > 0
    built = later[False].build()
    for got, ref in zip(built, now[False]):
        assert got.offset == ref.offset
        np.testing.assert_array_equal(got.mass, ref.mass)
        assert got.inf_mass == ref.inf_mass == 0.0
    for got, ref in zip(later[True], now[True]):
        np.testing.assert_array_equal(got.mass, ref.mass)


def test_a_bracket_of_many_factors_pairs_only_the_direction_it_needs(monkeypatch):
    """PLD._bracket_at composes the lower end of the direction with the larger upper end only (docs/pld.md Sec.
    2.3 "Rows"): with many factors the other direction's pairing is never run, and the bracket is the one built
    with both lower ends at once, bit for bit. Red when _pmfs builds every lower end eagerly again (the pairing
    runs for both directions) or when a kept lower end is built for the wrong direction (the bracket moves)."""
    from privcal.privacy_loss import distribution as D

    factors = [(B.SubsampledGaussianPair(0.9 + 0.01 * i, 0.02), 30) for i in range(12)]
    calls = []
    real = B.lower_from
    monkeypatch.setattr(B, "lower_from", lambda dm, h: calls.append(dm.n.size) or real(dm, h))
    lazy = D.PLD(factors).bracket(1e-6)
    assert sum(calls) == len(factors)  # one direction's rows only
    D.STEP_MEMO.clear()  # the second PLD builds its PMFs again (not from the first one's, kept between PLDs)
    eager = D.PLD(factors)
    real_many = B.pmfs_many
    monkeypatch.setattr(B, "pmfs_many", lambda *a, **k: real_many(*a, **{**k, "lower_later": False}))
    calls.clear()
    assert eager.bracket(1e-6) == lazy
    assert sum(calls) == 2 * len(factors)


_CELL_FIELDS = ("p", "llr", "rt", "rt_raw", "ap", "aq", "p_err", "q_err", "te", "below", "above", "below_rt")


@pytest.mark.parametrize("remove", [True, False])
@pytest.mark.parametrize("h,coarse", [(2.0**-9, None), (2.0**-9, (8, 1e-6)), (0.25, None), (2.0, None)])
def test_rows_evaluate_the_larger_tail_only_where_a_cell_reads_it(remove, h, coarse, monkeypatch):
    """The row build evaluates a point's larger tail only where a cell can read it (_tails_rows, docs/pld.md Sec.
    2.3 "Rows"): every cell mass, log Q-mass, tail error and the masses beyond the grid must be those of the full
    evaluation of all four tails (_tails_at), bit for bit, on fine grids, coarse tails, and grids so coarse that
    one cell holds most of the mass (h = 2: the comparison of the tails at the median decides). Red when the
    needed sets are not shifted to the neighbouring point (a cell at the median reads a placeholder), when a
    row's first or last point misses a tail (the mass below / above the grid is taken as 1); the shifts are
    pinned by the test below, which builds such cells directly."""
    ds = [B.SubsampledDirection(s, q, remove) for s, q in [(0.6, 0.3), (1.0, 0.01), (2.5, 0.2), (0.9, 0.5),
                                                           (4.0, 0.001)]]
    tail = 1e-12
    rows = B.grid_cells_rows(ds, h, tail, coarse, stack=True)
    one = B.grid_cells_rows(ds[1:2], h, tail, coarse)
    full_eval = B.SubsampledDirection.tails_and_arg_err
    monkeypatch.setattr(B.SubsampledDirection, "tails_and_arg_err", lambda self, l, rows=None: full_eval(self, l))
    ref = B.grid_cells_rows(ds, h, tail, coarse, stack=True)
    ref_one = B.grid_cells_rows(ds[1:2], h, tail, coarse)
    for got, exp in ((rows, ref), (one, ref_one)):
        for name in _CELL_FIELDS:
            np.testing.assert_array_equal(getattr(got, name), getattr(exp, name), err_msg=name)
        np.testing.assert_array_equal(np.minimum(got.p_gt, got.p_le), np.minimum(exp.p_gt, exp.p_le))
        np.testing.assert_array_equal(got.p_le[:, 0], exp.p_le[:, 0])
        np.testing.assert_array_equal(got.q_le[:, 0], exp.q_le[:, 0])
        np.testing.assert_array_equal(got.p_gt[:, -1], exp.p_gt[:, -1])
    assert not np.array_equal(rows.p_gt, ref.p_gt)  # the placeholders are there: the test sees the fast path


_ACROSS = [(0.5, [[-6.0, -0.8, 3.0, 7.0], [-6.0, -1.2, 1.7, 7.0]]), (0.99, [[-6.0, 0.7, 0.75, 7.0, 8.0]])]


@pytest.mark.parametrize("remove", [True, False])
@pytest.mark.parametrize("q,x", _ACROSS)
def test_larger_tail_is_evaluated_at_both_points_of_a_cell_across_the_median(remove, q, x):
    """_tails_rows on preimage rows built so that one cell jumps across the median with one end's tail certainly
    small (s = 1, q = 1/2; on a grid this needs a cell holding more than half the mass): the cell reads the tails
    of the *other* side, at both its points, so the needed sets must be those of the neighbouring point. The
    cell masses and Q-masses equal the full evaluation's bit for bit. Red when either needed set is taken at
    its own point instead of the neighbour's, or when the mixture's sets are taken by the other component's z
    (q = 0.99: at z0 = 0.7 the mixture's P(L > l) ~ 0.61 is the larger tail)."""
    d = B.SubsampledDirection(1.0, q, remove)
    # remove: x increases with l. Row 0: the point at x = -0.8 has le certainly small (z0 <= -0.7) and the
    # next one P(L <= l) ~ 0.988 > P(L > l_1) ~ 0.876: the cell takes gt, which the point must have. Row 1:
    # the point at x = 1.7 has gt certainly small (z1 >= 0.7), P(L <= l_2) ~ 0.857 < P(L > l_1) ~ 0.935: the
    # cell takes le at both points (q = 1/2). Row 2 (q = 0.99): at x = 0.7 the mixture's P(L > l) ~ 0.61 exceeds the
    # next point's P(L <= l) ~ 0.41 although z0 >= 0.7. add: the rows mirrored and reversed (x(-l) decreases with l).
    x = np.array(x)
    if not remove:
        x = np.concatenate([1.0 - x, x[:, ::-1]])  # mirrored (z0 -> -z1, z1 -> -z0) and reversed: decreasing
    fast = [t.reshape(x.shape) for t in d._tails_rows(x.ravel(), x.shape)]
    full = [np.reshape(t, x.shape) for t in d._tails_at(x.ravel())]
    for got, exp in ((B.cell_masses(fast[0], fast[1]), B.cell_masses(full[0], full[1])),):
        for a, b in zip(got, exp):
            np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(B.log_cell_masses(fast[2], fast[3]), B.log_cell_masses(full[2], full[3]))
    for i, j in ((0, 1), (2, 3)):
        np.testing.assert_array_equal(np.minimum(fast[i], fast[j]), np.minimum(full[i], full[j]))
    assert not all(np.array_equal(a, b) for a, b in zip(fast, full))  # placeholders: the fast path is seen


def test_heaviest_piles_are_ranked_as_by_the_full_sort():
    """heaviest_rests (a partition of the PILES + 1 largest excesses, sorted) ranks every rest above the floor as
    np.argsort(-excess) does, with ties among the heaviest and across the cut after the PILES-th. Its tie
    fallback (the full sort decides there) is not pinned on this machine: np.argsort orders ties by index here,
    as the partition path does too."""
    rng = np.random.default_rng(5)
    K = B.PILES
    ex = rng.exponential(size=(300, 40)) * (rng.random((300, 40)) < 0.6)  # zeros below the floor
    ex[::7, 3] = ex[::7, 11] = 9.0  # exact ties among the heaviest
    ex[1::7, :K + 2] = 5.0  # a tie across the cut after the K-th
    ex[2::7, :] = 0.0
    floor = np.full(300, 1e-3)
    got = B.heaviest_rests(ex, floor)
    ref = np.argsort(-ex, axis=1)[:, :K]
    for f in range(300):
        act = ex[f, ref[f]] > floor[f]
        np.testing.assert_array_equal(got[f][act], ref[f][act])
        assert not np.any(ex[f, got[f]][~act] > floor[f])


def test_grid_ranges_of_stacked_directions_equal_one_at_a_time():
    """grid_ranges evaluates the supports of many subsampled directions of one side over arrays of their
    parameters: the same (lo, hi) as grid_range one at a time, at fine and coarse grids and extreme tails. Red when
    a stacked parameter is misaligned or the floor / ceiling of the ends is taken otherwise."""
    for remove in (True, False):
        ds = [B.SubsampledDirection(float(s), q, remove) for s in np.linspace(0.3, 20.0, 60) for q in (1e-4, 0.01, 0.3, 0.99)]
        for h in (2.0**-13, 0.1, 3.0):
            for tail in (1e-12, 1e-300):
                assert B.grid_ranges(ds, h, tail) == [B.grid_range(d, h, tail) for d in ds]


def test_built_pmfs_carry_the_moments_of_their_lattice_masses():
    """The builder records each PMF's (total, mean, variance) from its grid points (``Pmf.moments``, read by the
    window, the tilt ladder and the FFT's placement): the total is float(mass.sum()), the mean and variance those
    of the lattice masses (recomputed here from the lattice, the offsets as absolute grid indices), for upper and
    lower ends on coarse and uniform grids. Red when the offsets of a row with gaps are taken as 0 .. n - 1."""
    h = 2.0**-13
    ds = [B.SubsampledDirection(0.9 + 0.4 * i, 0.01, i % 2 == 0) for i in range(12)]
    built = B.pmfs_many(ds, h, ends=(True, False), tail=1e-13, coarse=(64, 1e-8))
    assert any(p.err_at is not None for p in built[True])  # rows with gaps
    for p in built[True] + built[False]:
        tot, mean, var = p.moments
        assert tot == float(p.mass.sum())
        j = np.arange(p.mass.size, dtype=float)
        m = float(np.sum(j * p.mass)) / tot
        assert mean == pytest.approx(p.offset + m, rel=0.0, abs=1e-9 * max(1.0, p.mass.size))
        assert var == pytest.approx(float(np.sum((j - m) ** 2 * p.mass)) / tot, rel=1e-9)


def test_rows_without_per_atom_errors_have_the_same_masses_and_a_lone_one_is_charged_through_the_fft_path():
    """``pmfs_many(per_atom=False)`` (what a history of many factors builds: no lattice-sized ``err_atoms`` per
    PMF) gives bitwise the masses and error sums of the default build. Such a PMF composed once on its own cannot
    take the per-atom path (it has no per-atom bounds): ``convolve.compose`` composes it through the FFT path,
    whose input-error term charges its error patterns. Red when the per-atom path is taken without per-atom
    bounds (the composition would then carry no input error at all: local_err = 0)."""
    h, tail = 2.0**-9, 1e-12
    ds = _directions()
    full = B.pmfs_many(ds, h, ends=(True,), tail=tail)[True]
    lean = B.pmfs_many(ds, h, ends=(True,), tail=tail, per_atom=False)[True]
    for a, b in zip(full, lean):
        assert b.err_atoms is None and a.err_atoms is not None
        assert a.offset == b.offset and np.array_equal(a.mass, b.mass)
        assert (a.err_mass, a.err_dipole, a.err_quad) == (b.err_mass, b.err_dipole, b.err_quad)
    c = C.compose([(lean[0], 1)])
    assert c.err_atoms is None and c.local is not None
    assert C.local_err(c, 0.1) > 0.0
