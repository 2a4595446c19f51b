"""Single-step PMFs stored at their grid points only (``discretise.SparsePmf``, docs/pld.md Sec. 2.10 "Memory and
reuse") against the same PMFs stored on their dense lattice (zeros between the points).

A sparse PMF is a change of data layout only: its lattice (``mass``) is the dense PMF's, and every reader that
composes it (the FFT's scatter, the MGFs of the window and the tilt, the moments, the tilted copies) must give bit
for bit what the dense lattice gives. The compositions below are compared with ``np.array_equal`` and ``==``, not
to a tolerance: a reader that misplaces a point (an offset off by one, the row's first index taken as 0), drops
one, or sums the points in another order than the lattice's makes them differ."""

from __future__ import annotations

import numpy as np
import pytest

from privcal.privacy_loss import convolve as C
from privcal.privacy_loss import discretise as B

H, TAIL, COARSE = 2.0**-13, 1e-13, (64, 1e-8)


def _dense(p: B.Pmf) -> B.Pmf:
    """The same PMF on its dense lattice (a plain Pmf with the same fields)."""
    return B.Pmf(p.offset, p.mass, p.inf_mass, p.h, p.err_mass, p.err_dipole, p.err_quad, p.err_atoms,
                 mono=p.mono, dip=p.dip, quad=p.quad, err_inf=p.err_inf, err_at=p.err_at, moments=p.moments)


def _built(count: int, upper: bool) -> list:
    ds = [B.SubsampledDirection(0.9 + 0.011 * i, 0.01, i % 2 == 0) for i in range(count)]
    return B.pmfs_many(ds, H, ends=(upper,), tail=TAIL, coarse=COARSE, per_atom=False)[upper]


def _same(a: C.Composed, b: C.Composed) -> None:
    assert a.offset == b.offset and np.array_equal(a.mass, b.mass)
    assert (a.err, a.outside, a.inf_mass, a.err_inf, a.tilt, a.log_scale, a.log_mgf) == \
        (b.err, b.outside, b.inf_mass, b.err_inf, b.tilt, b.log_scale, b.log_mgf)
    assert a.local == b.local


def test_built_pmfs_with_coarse_cells_are_sparse_and_their_lattice_is_the_dense_one():
    """A row with gaps is stored at its points (offsets increasing, within the lattice, the error anchors the same
    offsets); the lattice read back holds the points' masses there and zeros elsewhere, and ``size`` is its
    length. Red when a sparse PMF keeps its whole lattice or puts a point elsewhere."""
    for upper in (True, False):
        built = _built(24, upper)
        sparse = [p for p in built if isinstance(p, B.SparsePmf)]
        assert len(sparse) >= len(built) // 2
        for p in sparse:
            at, values = p.points()
            assert at.size == values.size < p.size and np.all(np.diff(at) > 0) and at[-1] == p.size - 1
            lattice = p.mass
            assert lattice.size == p.size and np.array_equal(lattice[at], values)
            assert np.count_nonzero(np.delete(lattice, at)) == 0
            if upper:
                assert p.err_at is at
            assert p.moments[0] == float(lattice.sum())  # the dense lattice's own total (pairwise order)


@pytest.mark.parametrize("upper", [True, False])
def test_a_history_of_sparse_pmfs_composes_bitwise_as_its_dense_twin(upper):
    """200 distinct factors (grouped, docs/pld.md Sec. 2.10), untilted and tilted at the tilt chosen for delta =
    1e-9: the window, the composed masses and every error term of the sparse PMFs equal those of the same PMFs on
    their dense lattices, bit for bit; so do the tilt chosen and the log-MGFs. Red when the FFT's scatter, the
    table or exponential MGF path, or a tilted copy reads a sparse PMF otherwise than its lattice."""
    sparse = [(p, 1 + i % 3) for i, p in enumerate(_built(200, upper))]
    assert any(isinstance(p, B.SparsePmf) for p, _ in sparse)
    dense = [(_dense(p), n) for p, n in sparse]
    assert C.window(sparse, 1e-12) == C.window(dense, 1e-12)
    taus = np.array([1e-4, 3e-3, -2e-3, 0.05])
    assert np.array_equal(C.log_mgfs([p for p, _ in sparse], taus), C.log_mgfs([p for p, _ in dense], taus))
    tilt = C.choose_tilt(sparse, delta=1e-9)
    assert tilt > 0 and tilt == C.choose_tilt(dense, delta=1e-9)
    for t in (0.0, tilt):
        _same(C.compose(sparse, 1e-12, t), C.compose(dense, 1e-12, t))


def test_a_lone_sparse_factor_composes_as_its_dense_twin():
    """One factor composed many times (the FFT path of a single PMF, whose lattice may be longer than the window:
    the folded scatter) and one composed once: bitwise the dense twin's."""
    p = next(p for p in _built(6, True) if isinstance(p, B.SparsePmf))
    for n in (1, 7, 400):
        _same(C.compose([(p, n)], 1e-12), C.compose([(_dense(p), n)], 1e-12))
