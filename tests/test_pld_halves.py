"""The dominated (lower) end from halved cells (docs/pld.md Sec. 2.3, "Halves"): a post-processing of the cells,
a quarter of the variance the pairing of whole cells takes from a smooth loss, both grids from one evaluation, and a
bracket that pairs the halves on its grid before it refines."""

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from privcal.accounting.events import GaussianEvent, PoissonSampledEvent, SelfComposedEvent
from privcal.pld import from_event
from privcal.privacy_loss import PLD
from privcal.privacy_loss import convolve as C
from privcal.privacy_loss import discretise as B
from privcal.privacy_loss import step_memo


def _cells_delta(p, rt, g, below_p, below_rt, eps):
    """Exact (Fractions of the floats) hockey-stick divergence of the cells: sum (P - e^eps Q)_+, Q = rt e^{-g}."""
    E = Fraction(math.exp(eps))  # any fixed number: the same one on both sides of the comparison
    tot = max(Fraction(below_p) - E * Fraction(below_rt) / Fraction(math.exp(g[0])), Fraction(0))
    for pj, rj, gj in zip(p, rt, g):
        tot += max(Fraction(float(pj)) - E * Fraction(float(rj)) / Fraction(math.exp(gj)), Fraction(0))
    return tot


@settings(max_examples=80, deadline=None, derandomize=True)
@given(st.integers(2, 30), st.floats(0.01, 0.6), st.integers(0, 2**32 - 1), st.booleans(), st.booleans(),
       st.booleans())
def test_halved_cells_lower_end_is_dominated_by_the_cells(m, h, seed, below, wide, smooth):
    """The P-masses emitted at the grid points by the halves' pairing and the whole-cell pairing of what is left
    (``halved_masses``) have a one-step delta never above the cells' own, at every epsilon tried: exact rational
    arithmetic on the float inputs. Cells one step wide are halved (two cells on h / 2), wide ones (2-4 steps,
    ``wide``) are not; ratios random in each cell (or, ``smooth``, those of a locally constant density, where the
    halves pair in full). Red when a half's unused fraction is taken as all of it (1 instead of 1 - f: a half used
    twice) and when U's e^{g_j} Q is not raised by e^{h/2} (a mixture below ratio e^{g_j} emitted at g_j). The masses
    are emitted at the grid's own points (the even lattice indices of h / 2, halved; all but the last): red when the
    lattice's gaps (wide cells) are dropped and the points read as consecutive (every wide cell's mass emitted lower
    than its own loss, which domination alone does not see)."""
    rng = np.random.default_rng(seed)
    widths = rng.choice([2, 3, 4], m) if wide else np.ones(m, dtype=int)
    widths[rng.random(m) < 0.5] = 1
    idx = [0]
    for w in widths:
        if w == 1:
            idx += [idx[-1] + 1, idx[-1] + 2]
        else:
            idx.append(idx[-1] + 2 * int(w))
    idx = np.array(idx)
    g = idx[:-1] * (h / 2)
    span = np.diff(idx) * (h / 2)
    theta = np.full(span.size, 0.5) if smooth else rng.uniform(1e-6, 1.0, span.size)
    p = np.exp(-0.5 * ((np.arange(span.size) - span.size / 2) / 4.0) ** 2) if smooth else rng.uniform(0, 1, span.size) ** 3
    rt = p * np.exp(-theta * span)  # e^{g_k} Q_k: ratio e^{g_k + theta span_k}, inside the cell
    below_p = float(rng.uniform(0, 0.2)) if below else 0.0
    below_rt = below_p * math.exp(float(rng.uniform(1e-6, 1.0)) * h)  # ratio below e^{g_0}
    grid, out = B.halved_masses(p, rt, h, below_p, below_rt, idx)
    assert np.array_equal(grid, (idx[idx % 2 == 0] // 2)[:-1])
    assert np.all(out >= 0) and out.sum() <= p.sum() + below_p
    gj = grid * h
    for eps in (0.0, 0.25 * h, 0.5 * h, h, 2.5 * h, idx[-1] * h / 4, idx[-1] * h / 2):
        emitted = sum(max(Fraction(float(o)) - Fraction(math.exp(eps)) * Fraction(float(o)) / Fraction(math.exp(x)),
                          Fraction(0)) for o, x in zip(out, gj))
        assert emitted <= _cells_delta(p, rt, g, below_p, below_rt, eps)


def _moments(pmf):
    at, v = pmf.points()
    x = ((np.arange(v.size) if at is None else np.asarray(at, dtype=float)) + pmf.offset) * pmf.h
    mass = v.sum()
    mean = float((v * x).sum() / mass)
    return mean, float((v * x * x).sum() / mass - mean * mean)


@pytest.mark.parametrize("mu, h", [(0.5, 0.01), (2.0, 0.05)])
def test_halved_cells_take_a_quarter_of_the_variance_from_a_gaussian_loss(mu, h):
    """The Gaussian pair's loss is N(mu^2 / 2, mu^2) under P (closed form). The upper end adds h^2 / 12 to its mean and
    h^2 / 6 to its variance (connect the dots: the spread of a cell's mass over its two atoms); the pairing of whole
    cells mixes two cells, 2h of loss, into each atom: -h^2 / 6 and -h^2 / 3 (measured: -0.1667, -0.3333); the halves
    mix the two halves next to each atom, h of loss: -h^2 / 24 and -h^2 / 12 (measured -0.042, -0.084..-0.086).
    Asserted: the halves within 0.06 h^2 (mean) and 0.11 h^2 (variance), the whole cells beyond 0.15 and 0.3 (the
    test tells them apart). Red when the halves' pairing is switched off (every half left unused: the whole cells'
    error) or mixes only where one half covers the other (half of the atoms)."""
    d = B.GaussianPair(mu)
    hm, hv = _moments(B.pmfs(d, h, upper=False, tail=1e-14))
    wm, wv = _moments(B.pmfs(d, h, upper=False, tail=1e-14, halves=False))
    um, uv = _moments(B.pmfs(d, h, upper=True, tail=1e-14))
    m0, v0 = mu * mu / 2, mu * mu
    assert -0.06 * h * h <= hm - m0 <= 0 and -0.11 * h * h <= hv - v0 <= 0
    assert wm - m0 <= -0.15 * h * h and wv - v0 <= -0.3 * h * h
    assert um - m0 >= 0.08 * h * h and uv - v0 >= 0.16 * h * h


_CELL_FIELDS = ("p", "llr", "rt", "rt_raw", "ap", "aq", "p_err", "q_err", "te", "below", "above", "below_rt")


@pytest.mark.parametrize("remove", [True, False])
@pytest.mark.parametrize("h,coarse", [(2.0**-9, None), (2.0**-9, (8, 1e-6)), (0.25, None), (2.0, None)])
def test_both_grids_from_one_evaluation_equal_their_full_evaluations(remove, h, coarse, monkeypatch):
    """``grid_cells_both`` evaluates the tails once, at the halved grid's points, each larger tail only where a cell
    of either grid may read it: the cells on h must be bit for bit those ``grid_cells_rows`` computes on its own,
    and both grids' cells those of the full evaluation of all four tails at every point (rows of five directions
    stacked, and one direction alone; fine grids, coarse tails, and grids so coarse that one cell holds most of
    the mass). Red when the coarser grid's needs are not added (a cell on h at the median reads a placeholder)."""
    ds = [B.SubsampledDirection(s, q, remove) for s, q in [(0.6, 0.3), (1.0, 0.01), (2.5, 0.2), (0.9, 0.5),
                                                           (4.0, 0.001)]]
    tail = 1e-12
    got = [B.grid_cells_both(ds, h, tail, coarse, stack=True), B.grid_cells_both(ds[1:2], h, tail, coarse)]
    alone = [B.grid_cells_rows(ds, h, tail, coarse, stack=True), B.grid_cells_rows(ds[1:2], h, tail, coarse)]
    full_eval = B.SubsampledDirection.tails_and_arg_err
    monkeypatch.setattr(B.SubsampledDirection, "tails_and_arg_err",
                        lambda self, l, rows=None, coarser=None: full_eval(self, l))
    ref = [B.grid_cells_both(ds, h, tail, coarse, stack=True), B.grid_cells_both(ds[1:2], h, tail, coarse)]
    for (whole, half), own, (r_whole, r_half) in zip(got, alone, ref):
        for name in _CELL_FIELDS:
            np.testing.assert_array_equal(getattr(whole, name), getattr(own, name), err_msg=name)
            np.testing.assert_array_equal(getattr(whole, name), getattr(r_whole, name), err_msg=name)
            np.testing.assert_array_equal(getattr(half, name), getattr(r_half, name), err_msg=name)
        assert half.idx.shape[1] > whole.idx.shape[1]  # the midpoints are there


def test_a_weak_lower_end_of_one_step_is_paired_from_halves_on_its_grid(pmf_grids, monkeypatch):
    """q = 1e-3, sigma = 0.8, 1e5 steps, delta = 1e-5: on the rule grid (2^-13) the whole cells' lower end leaves the
    bracket 1.12x the requested width (the dominated end was then composed again on 2^-14); the halves' lower end
    meets it on the same grid: one grid, the halves paired (PLD._weak_lower predicts the gap from the PMFs' moments:
    1.14 widths, skewness 0.039), and the dominated end composed once, from the halves at once. Red when the lower end
    is built from whole cells only (a second grid), or when the prediction is not read before the first lower end
    (the whole cells' lower end composed first, then the halves': two dominated compositions)."""
    calls = []
    real = B.pair_halves
    monkeypatch.setattr(B, "pair_halves", lambda dm, h: calls.append(h) or real(dm, h))
    dominated = []
    compose = C.compose

    def counting(factors, *args, **kwargs):  # a dominated PMF carries no input error patterns
        if all(p.err_mass == 0.0 and p.err_dipole == 0.0 and p.err_quad == 0.0 for p, _ in factors):
            dominated.append(factors[0][0].h)
        return compose(factors, *args, **kwargs)

    monkeypatch.setattr(C, "compose", counting)
    step_memo.STEP_MEMO.clear()
    pld = from_event(SelfComposedEvent(PoissonSampledEvent(1e-3, GaussianEvent(0.8)), 100_000))
    pld.bracket(1e-5)
    assert pld.accuracy_met(1e-5)
    assert pmf_grids == [2.0**-13, 2.0**-10] and calls == [2.0**-13]  # (2^-10: the add direction's screen)
    assert dominated == [2.0**-13]


def test_a_weak_lower_end_of_a_history_is_paired_from_halves_before_a_finer_grid(pmf_grids, monkeypatch):
    """Five factors of 20,000 steps (q = 0.01, sigma 0.80 .. 0.84): too many directions for the prediction, so the
    whole cells' lower end is composed first; it leaves the bracket too wide on the rule grid (2^-10), and the halves'
    lower end meets the accuracy on that grid (before: the lower end composed again on 2^-11). Red when the bracket
    refines without trying the halves."""
    calls = []
    real = B.pair_halves
    monkeypatch.setattr(B, "pair_halves", lambda dm, h: calls.append(h) or real(dm, h))
    step_memo.STEP_MEMO.clear()
    pld = PLD([(B.SubsampledGaussianPair(0.8 + 0.01 * i, 0.01), 20_000) for i in range(5)])
    lo, hi = pld.bracket(1e-5)
    assert pld.accuracy_met(1e-5)
    assert pmf_grids == [2.0**-10] and set(calls) == {2.0**-10}


@pytest.mark.parametrize("remove", [True, False])
@pytest.mark.parametrize("row", [[-6.0, -0.8, -0.75, 2.5, 7.0], [-6.0, -1.0, 1.75, 1.8, 7.0]])
def test_the_coarser_grids_cells_read_their_tails_where_a_midpoint_hides_the_need(remove, row):
    """_tails_rows with ``coarser``: a point's larger tail is evaluated where either grid's cells may read it. Built
    directly (s = 1, q = 1/2; a cell holding more than half the mass): the midpoint (x = -0.75) has le certainly
    small, the grid's next point (x = 2.5) does not; the halved grid's cell from x = -0.8 reads le there, so gt at
    x = -0.8 is not needed on the halved grid, but the cell on h from x = -0.8 to 2.5 compares P(L > l) ~ 0.876 with
    P(L <= l) ~ 0.964 and reads gt at both its points. Its cell masses must be those of the full evaluation bit for
    bit; red without the coarser grid's needs (a placeholder log 1 at x = -0.8 turns the comparison). add: mirrored
    and reversed. Second row, the mirror case: the midpoint (x = 1.75) has gt certainly small, the point before it
    (x = -1) does not, and the cell on h from x = -1 to 1.8 reads le at x = 1.8, which the halved grid leaves a
    placeholder."""
    d = B.SubsampledDirection(1.0, 0.5, remove)
    x = np.array([row])
    if not remove:
        x = 1.0 - x  # mirrored (z0 -> -z1, z1 -> -z0): x(-l) decreases with l
    even = np.array([[0, 1, 3, 4]])  # the grid's points among the halved grid's
    fast = [t.reshape(x.shape) for t in d._tails_rows(x.ravel(), x.shape, coarser=even)]
    full = [np.reshape(t, x.shape) for t in d._tails_at(x.ravel())]
    pick = [np.take_along_axis(t, even, axis=1) for t in fast]
    ref = [np.take_along_axis(t, even, axis=1) for t in full]
    for a, b in zip(B.cell_masses(pick[0], pick[1]), B.cell_masses(ref[0], ref[1])):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(B.log_cell_masses(pick[2], pick[3]), B.log_cell_masses(ref[2], ref[3]))
    for a, b in zip(B.cell_masses(fast[0], fast[1]), B.cell_masses(full[0], full[1])):  # the halved grid's too
        np.testing.assert_array_equal(a, b)
    # each cell on h reads the side of its smaller tails at both its points (P: tails 0, 1; Q: 2, 3): those tails
    # must be the true ones; and the halved grid's needs alone leave one of them a placeholder (log 1), the case the
    # test is about
    plain = [np.take_along_axis(t.reshape(x.shape), even, axis=1) for t in d._tails_rows(x.ravel(), x.shape)]
    hidden = []
    for g_, l_ in ((0, 1), (2, 3)):
        reads_gt = ref[g_][:, :-1] <= ref[l_][:, 1:]
        for j in range(reads_gt.shape[1]):
            side = g_ if reads_gt[0, j] else l_
            np.testing.assert_array_equal(pick[side][0, j:j + 2], ref[side][0, j:j + 2])
            hidden += [(side, k) for k in (j, j + 1) if plain[side][0, k] == 0.0 != ref[side][0, k]]
    assert hidden


@settings(max_examples=60, deadline=None, derandomize=True)
@given(st.integers(3, 40), st.floats(0.01, 0.6), st.integers(0, 2**32 - 1), st.booleans())
def test_halves_fractions_and_bounds_hold_in_exact_arithmetic(m, h, seed, smooth):
    """Every rounding margin of ``pair_halves`` against exact arithmetic (Fractions of the floats; e^{h/2} and
    e^{-h/2} by mpmath at 60 digits), on random halved cells (and smooth ones, where most mixtures are fractional):
    - each half's used and unused fractions sum to at most 1 (red without the unused fraction's -2u);
    - a mixture's emitted P is at most f_U P_U + f_L P_L (red without its 1 - 8u) and its e^{g_j} Q bound at least
      f_U e^{h/2} (e^{g_j - h/2} Q_U) + f_L e^{g_j} Q_L (red without its 1 + 8u, or with e^{h/2} not rounded up);
    - a residual cell's P is at most what is left of its halves' P and its e^{g_j} Q at least theirs, U's taken
      from e^{g_j + h/2} Q times e^{-h/2} (red without the residual's 1 -/+ 4u, or e^{-h/2} not rounded up)."""
    import mpmath as mp

    rng = np.random.default_rng(seed)
    idx = np.arange(2 * m + 1)  # every cell halved
    if smooth:
        p = np.exp(-0.5 * ((np.arange(2 * m) - m) / 5.0) ** 2)
        theta = np.full(2 * m, 0.5)
    else:
        p = rng.uniform(0.0, 1.0, 2 * m) ** 3
        theta = rng.uniform(1e-6, 1.0, 2 * m)
    rt = p * np.exp(-theta * h / 2)
    parts = {}
    B.halved_masses(p, rt, h, 0.0, 0.0, idx, parts=parts)
    F = lambda x: Fraction(float(x))  # noqa: E731
    M = lambda fr: mp.mpf(fr.numerator) / mp.mpf(fr.denominator)  # noqa: E731  (exact at 60 digits for these)
    with mp.workdps(60):
        up_exact, down_exact = mp.exp(mp.mpf(h) / 2), mp.exp(-mp.mpf(h) / 2)
        fu, fl = parts["f_u"][0], parts["f_l"][0]
        pA, rA, pB, rB = (parts[k][0] for k in ("pA", "rA", "pB", "rB"))
        rem_a, rem_b = parts["rem_a"][0], parts["rem_b"][0]
        for k in range(fu.size):  # the mixture at grid point k + 1: U of cell k, L of cell k + 1
            assert F(fu[k]) + F(rem_b[k]) <= 1 and F(fl[k]) + F(rem_a[k + 1]) <= 1
            p_e, r_e = parts["out"][0, k + 1], parts["r_out"][0, k + 1]
            if p_e > 0:
                assert F(p_e) <= F(fu[k]) * F(pB[k]) + F(fl[k]) * F(pA[k + 1])
                exact_r = M(F(fu[k]) * F(rB[k])) * up_exact + M(F(fl[k]) * F(rA[k + 1]))
                assert mp.mpf(float(r_e)) >= exact_r
        for k in range(pA.size):
            assert F(parts["p_res"][0, k]) <= F(rem_a[k]) * F(pA[k]) + F(rem_b[k]) * F(pB[k])
            exact_rt = M(F(rem_a[k]) * F(rA[k])) + M(F(rem_b[k]) * F(rB[k])) * down_exact
            assert mp.mpf(float(parts["rt_res"][0, k])) >= exact_rt
    assert np.count_nonzero(parts["out"]) > 0  # mixtures were made
