"""Single-step PMFs built many at a time (``_build.pmfs_many``: stacked subsampled directions, rows padded to a
common length) against the same PMFs built one at a time (``_build.pmfs``), docs/pld.md Sec. 2.3 "Rows".

The rows are the same constructions evaluated elementwise on a 2-D array; a padded point repeats its row's last
point, so its cell is empty and its tail error is zero. The masses must agree to a few ulps (the same operations on
the same numbers; a pile's mixture sums its partners in a padded row, another order) and the error bounds, sums
over a row whose order changes with the padding, to 1e-12 relative. (On this machine the masses agree bit for bit;
the tolerance keeps the test independent of how a numpy build vectorises.)"""

from __future__ import annotations

import numpy as np
import pytest

from privcal.privacy_loss import _build as B


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
    """PLD._pmfs builds more than _CELLS_KEPT factors as rows (both ends of a direction at once); the bracket
    of a mixed history (subsampled of several rates, a Gaussian, a Laplace) must be the one-at-a-time build's
    to rounding of the error sums. Red when the rows' results are matched to the wrong factor or count."""
    from privcal.privacy_loss import _distribution as D

    factors = [(B.SubsampledGaussianPair(0.8 + 0.1 * i, 0.01 * (1 + i % 3)), 20 + 5 * i) for i in range(10)]
    factors += [(B.GaussianPair(0.3), 4), (B.LaplacePair(0.05), 7)]
    rows = D.PLD(factors).bracket(1e-6)
    monkeypatch.setattr(B, "_CELLS_KEPT", 10**6)  # every factor built on its own
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
    from privcal.privacy_loss import _distribution as D

    factors = [(B.SubsampledGaussianPair(0.9 + 0.01 * i, 0.02), 30) for i in range(12)]
    calls = []
    real = B._lower_from
    monkeypatch.setattr(B, "_lower_from", lambda dm, h: calls.append(dm.n.size) or real(dm, h))
    lazy = D.PLD(factors).bracket(1e-6)
    assert sum(calls) == len(factors)  # one direction's rows only
    eager = D.PLD(factors)
    real_many = B.pmfs_many
    monkeypatch.setattr(B, "pmfs_many", lambda *a, **k: real_many(*a, **{**k, "lower_later": False}))
    calls.clear()
    assert eager.bracket(1e-6) == lazy
    assert sum(calls) == 2 * len(factors)
