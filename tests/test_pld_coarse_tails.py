"""Coarse cells in the far tails of a subsampled step (docs/pld.md, Sec. 2.3, "Coarse tails"): the single-step
PMFs built on them against the exact pair (mpmath), their error bounds against PMFs built from exact tails
on the same points, and the PLD's brackets with them against the uniform grid's.

Exact references: the subsampled Gaussian's hockey-stick divergence at its loss preimage (mpmath, 40 digits);
tails at the grid points from mpmath; compositions by integer convolution (as in test_pld_certificate.py).
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import mpmath as mp
import numpy as np
import pytest

from privcal.privacy_loss import discretise as B
from privcal.privacy_loss import convolve as C
from privcal.privacy_loss import distribution as D

SCALE = 1100


@pytest.fixture
def short_grids_coarse(monkeypatch):
    """Coarse tails on grids of any length (the builder keeps grids under _COARSE_MIN_CELLS uniform, a speed
    choice; the small cases below, with exact tails from mpmath, are shorter)."""
    monkeypatch.setattr(B, "_COARSE_MIN_CELLS", 0)


def _exact_delta(s, q, remove, eps):
    """delta(eps) of one step of the subsampled Gaussian pair (sensitivity 1, noise s, rate q) in one
    direction, from the loss preimage: remove P = (1-q) N(0, s^2) + q N(1, s^2) vs Q = N(0, s^2), L
    increasing in x; add the reverse, L decreasing in x (mpmath, 40 digits)."""
    with mp.workdps(40):
        s, q, eps = mp.mpf(s), mp.mpf(q), mp.mpf(eps)
        if remove:
            t = (mp.e ** eps - (1 - q)) / q
            x = (2 * s * s * mp.log(t) + 1) / 2 if t > 0 else -mp.inf
            p_tail = (1 - q) * mp.ncdf(-x / s) + q * mp.ncdf(-(x - 1) / s)
            return p_tail - mp.e ** eps * mp.ncdf(-x / s)
        t = (mp.e ** (-eps) - (1 - q)) / q
        if t <= 0:  # the add direction's loss is at most -log(1 - q)
            return mp.mpf(0)
        x = (2 * s * s * mp.log(t) + 1) / 2  # L > eps iff x < x_eps
        return mp.ncdf(x / s) - mp.e ** eps * ((1 - q) * mp.ncdf(x / s) + q * mp.ncdf((x - 1) / s))


def _delta(pmf, eps):
    l = pmf.losses
    m = l > eps
    return float(np.sum(pmf.mass[m] * -np.expm1(eps - l[m]))) + pmf.inf_mass


@pytest.mark.parametrize("s, q, h, K", [(0.8, 1e-3, 2.0**-13, 16), (1.0, 0.05, 2.0**-9, 8)])
def test_coarse_tails_dominate_and_are_dominated_at_every_epsilon(s, q, h, K, short_grids_coarse):
    """Upper (split) PMF with coarse tails >= the exact pair's delta, lower (pairing) <= it, at 120 epsilons
    (negative ones included), both directions; and fewer points than the uniform grid. Catches the
    split of a wide cell with the fine cell's 1 - e^{-h} (its Q-mass is then not kept) and the pairing of a
    wide cell with e^h for its neighbour's ratio."""
    pair = B.SubsampledGaussianPair(s, q)
    for d, remove in zip(pair.directions(), (True, False)):
        cells: dict = {}
        up = B.pmfs(d, h, upper=True, tail=1e-11, cells=cells, coarse=(K, 1e-6))
        lo = B.pmfs(d, h, upper=False, tail=1e-11, cells=cells, coarse=(K, 1e-6))
        uniform = B.pmfs(d, h, upper=True, tail=1e-11)
        assert np.count_nonzero(up.mass) < np.count_nonzero(uniform.mass)
        for eps in itertools.chain(np.linspace(-2.0, -0.01, 40), np.linspace(-0.01, 0.3, 40), np.linspace(0.3, 2.0, 40)):
            exact = float(_exact_delta(s, q, remove, eps))
            assert _delta(lo, eps) <= exact * (1 + 1e-12) + 1e-300, (remove, eps)
            assert _delta(up, eps) + up.err_mass >= exact * (1 - 1e-12), (remove, eps)


class _ExactDirection:
    """A subsampled direction whose tails come from mpmath (float64 of the exact logs)."""

    inf_mass = 0.0

    def __init__(self, s, q, remove):
        self.s, self.q, self.remove = s, q, remove
        self.inner = B.SubsampledDirection(s, q, remove)

    def key(self):
        return ("exact", self.s, self.q, self.remove)

    def support(self, z=B.Z_TAIL):
        return self.inner.support(z)

    def arg_rel_err(self, l):
        return self.inner.arg_rel_err(l)

    def tails(self, l):
        out = [[], [], [], []]
        with mp.workdps(40):
            s, q = mp.mpf(self.s), mp.mpf(self.q)
            for v in np.atleast_1d(l):
                v = mp.mpf(float(v))
                if self.remove:
                    t = (mp.e ** v - (1 - q)) / q
                    x = (2 * s * s * mp.log(t) + 1) / 2 if t > 0 else -mp.inf
                    pg = (1 - q) * mp.ncdf(-x / s) + q * mp.ncdf(-(x - 1) / s)
                    qg = mp.ncdf(-x / s)
                    pl, ql = 1 - pg, 1 - qg
                else:
                    t = (mp.e ** (-v) - (1 - q)) / q
                    x = (2 * s * s * mp.log(t) + 1) / 2 if t > 0 else -mp.inf  # t <= 0: the loss never exceeds v
                    pg, qg = mp.ncdf(x / s), (1 - q) * mp.ncdf(x / s) + q * mp.ncdf((x - 1) / s)
                    pl, ql = 1 - pg, 1 - qg
                for i, val in enumerate((pg, pl, qg, ql)):
                    out[i].append(float(mp.log(val)) if val > 0 else -math.inf)
        return tuple(np.array(o) for o in out)


def _ints(mass):
    return np.array([int(Fraction(float(m)) * 2**SCALE) for m in mass], dtype=object)


def _exact_delta_composed(mass, n, offset, h, eps):
    x = _ints(mass)
    y = x
    for _ in range(n - 1):
        y = np.convolve(y, x)
    with mp.workdps(50):
        den, e, tot = mp.mpf(2) ** (SCALE * n), mp.mpf(eps), mp.mpf(0)
        for i, v in enumerate(y):
            l = mp.mpf(offset * n + i) * mp.mpf(h)
            if v and l > e:
                tot += mp.mpf(v) / den * (1 - mp.exp(e - l))
        return tot


@pytest.mark.parametrize("remove", [True, False])
def test_coarse_tail_atoms_and_composed_deltas_within_their_error_bounds(remove, short_grids_coarse):
    """The same points, tails from log_ndtr against tails from mpmath: per atom within err_atoms, and, composed
    3 times exactly, the deltas within the local term of the slack. Next to a wide cell the tails' and
    splits' errors are declared as unit dipoles over the cells' spans (span_dipoles, pinned against exact
    arithmetic below)."""
    s, q, h, K = 1.0, 0.05, 2.0**-6, 8
    got = B.pmfs(B.SubsampledDirection(s, q, remove), h, upper=True, tail=1e-12, coarse=(K, 1e-3))
    ref = B.pmfs(_ExactDirection(s, q, remove), h, upper=True, tail=1e-12, coarse=(K, 1e-3))
    assert got.offset == ref.offset and got.mass.size == ref.mass.size
    assert np.any(np.diff(np.flatnonzero(got.mass)) > 1)  # there are wide cells
    assert np.all(np.abs(got.mass - ref.mass) <= got.err_atoms)
    n = 3
    c = C.compose([(got, n)], tail=1e-30)
    needed = False
    for eps in (0.0, 0.1, 0.3, 0.6):
        dg = _exact_delta_composed(got.mass, n, got.offset, h, eps)
        dr = _exact_delta_composed(ref.mass, n, ref.offset, h, eps)
        assert abs(dg - dr) <= C.local_err(c, eps)
        needed |= abs(dg - dr) > 0
    assert needed


@pytest.mark.parametrize("q, sigma, steps, delta", [(1e-3, 0.8, 1000, 1e-5), (1e-3, 1.1, 10_000, 1e-10),
                                                    (0.01, 0.8, 100_000, 1e-5)])
def test_pld_with_coarse_tails_overlaps_the_uniform_grid(q, sigma, steps, delta, monkeypatch):
    """The PLD's bracket with coarse tails (the default for subsampled steps) overlaps the uniform grid's, both
    being certified, and meets the accuracy; the coarse tails are used."""
    pair = B.SubsampledGaussianPair(sigma, q)
    calls = []
    real = B.pmfs

    def spy(*a, **k):
        calls.append(k.get("coarse"))
        return real(*a, **k)

    monkeypatch.setattr(B, "pmfs", spy)
    coarse = D.PLD([(pair, steps)])
    lo2, hi2 = coarse.bracket(delta)
    assert any(c is not None for c in calls)
    assert coarse.accuracy_met(delta)
    monkeypatch.setattr(D, "COARSE_TAIL_WIDTH", 0.0)  # K < 4: uniform
    lo1, hi1 = D.PLD([(pair, steps)]).bracket(delta)
    assert max(lo1, lo2) <= min(hi1, hi2)


def _cells_delta(p, rt, g, eps):
    """Exact (Fractions of the floats) hockey-stick divergence of the merged cells: sum (P - e^eps Q)_+, with
    Q = rt / e^{g_j} (the float e^{g_j}: the same number on both sides of the comparison)."""
    E = Fraction(math.exp(eps))
    tot = Fraction(0)
    for pj, rj, gj in zip(p, rt, g):
        tot += max(Fraction(float(pj)) - E * Fraction(float(rj)) / Fraction(math.exp(gj)), Fraction(0))
    return tot


@pytest.mark.parametrize("seed", range(12))
def test_pairing_of_cells_of_different_widths_is_dominated_by_the_cells(seed):
    """The pairing on cells 1 or K lattice steps wide (``_sweep`` with ``idx``) emits atoms whose one-step
    delta never exceeds that of the merged cells, at every epsilon (exact rationals on the float inputs).
    Smooth cells, so that most of them are mixed: red when a wide cell's neighbour is mixed with e^h instead
    of e^{w} (a mixture is then emitted at g_j with a ratio below e^{g_j}), or when the piles' partners are
    priced by index distance times h instead of their loss distance."""
    rng = np.random.default_rng(seed)
    h, K = 2.0**-6, 8
    steps = rng.choice([1, K], size=30, p=[0.5, 0.5])
    idx = np.concatenate([[0], np.cumsum(steps)])
    g = idx * h
    w = np.diff(g)
    theta = rng.uniform(0.01, 0.99, w.size)  # each cell's ratio e^{g_j + theta_j w_j}
    p = np.exp(-0.5 * ((np.arange(w.size) - 15) / 6.0) ** 2) * rng.uniform(0.5, 1.0, w.size)
    p[int(rng.integers(0, w.size))] *= 50.0  # one pile for the absorption step
    rt = p * np.exp(-theta * w)
    out = B.dominated_masses(p, rt, h, 0.0, 0.0, idx=idx)
    assert np.all(out >= 0) and out.sum() <= p.sum()
    assert out.sum() > 0.5 * p.sum()  # most of the mass is mixed, not dropped
    for eps in sorted(set([0.0, float(g[-1]) / 2, float(g[-1])] + [float(x) for x in g[::3]] + [float(x) + 0.3 * h for x in g[::4]])):
        emitted = sum(max(Fraction(float(o)) - Fraction(math.exp(eps)) * Fraction(float(o)) / Fraction(math.exp(gj)),
                          Fraction(0)) for o, gj in zip(out, g[:-1]))
        assert emitted <= _cells_delta(p, rt, g[:-1], eps), eps


class _PerturbedDirection:
    """A subsampled direction whose tails are off by a relative +-rel (alternating) at the points where the
    P-mass beyond is below ``thr`` -- the coarse tails -- and which declares that error (arg_rel_err)."""

    inf_mass = 0.0

    def __init__(self, s, q, remove, rel, thr):
        self.inner = B.SubsampledDirection(s, q, remove)
        self.rel, self.thr = rel, thr

    def key(self):
        return ("perturbed", self.inner.key(), self.rel)

    def support(self, z=B.Z_TAIL):
        return self.inner.support(z)

    def _far(self, l):
        lgt, lle, _, _ = self.inner.tails(np.atleast_1d(l))
        return np.minimum(lgt, lle) < math.log(self.thr)

    def arg_rel_err(self, l):
        ap, aq = self.inner.arg_rel_err(l)
        far = self._far(l)
        return ap + np.where(far, 2 * self.rel, 0.0), aq + np.where(far, 2 * self.rel, 0.0)

    def tails(self, l):
        l = np.atleast_1d(l)
        out = self.inner.tails(l)
        sign = np.where(np.arange(l.size) % 2 == 0, 1.0, -1.0)
        shift = np.where(self._far(l), np.log1p(self.rel * sign), 0.0)
        return tuple(t + shift for t in out)


def test_declared_tail_errors_in_the_coarse_tails_cover_the_composed_deltas(short_grids_coarse):
    """Tails off by a relative 1e-7 (alternating, declared) in the coarse tails only: the 3-fold composed
    deltas of that PMF and of the unperturbed one differ by at most the local term of the slack. (The
    difference is far below the bound -- a tail error moves mass between neighbouring cells, which mostly
    cancels; the premise the cost model needs is pinned by the test below.)"""
    s, q, h, K, thr = 1.0, 0.05, 2.0**-6, 8, 1e-3
    got = B.pmfs(_PerturbedDirection(s, q, True, 1e-7, thr), h, upper=True, tail=1e-12, coarse=(K, thr))
    ref = B.pmfs(B.SubsampledDirection(s, q, True), h, upper=True, tail=1e-12, coarse=(K, thr))
    assert got.offset == ref.offset and got.mass.size == ref.mass.size
    n = 3
    c = C.compose([(got, n)], tail=1e-30)
    worst = 0.0
    for eps in (0.0, 0.05, 0.1, 0.2, 0.4):
        dg = _exact_delta_composed(got.mass, n, got.offset, h, eps)
        dr = _exact_delta_composed(ref.mass, n, ref.offset, h, eps)
        assert abs(dg - dr) <= C.local_err(c, eps), eps
        worst = max(worst, float(abs(dg - dr)) / C.local_err(c, eps))
    assert worst > 0.0


@pytest.mark.parametrize("remove", [True, False])
def test_local_error_patterns_sit_on_neighbouring_grid_points(remove):
    """The quadrupole cost of the slack (h [g'] + h^2 max |g''|: docs/pld.md Sec. 2.4) holds for patterns on three
    neighbouring lattice points: every declared quadrupole must sit where its anchor's lattice neighbours are
    grid points. Next to a wide cell the tails' and splits' errors move mass K steps apart; they are declared
    as unit dipoles (:func:`discretise.span_dipoles`) anchored at the pattern's top atom, so the graded tails do
    declare dipoles at points whose lower lattice neighbour is not a grid point (red when the wide patterns are
    left as quadrupoles, or dropped)."""
    s, q, h, K, thr = 0.8, 1e-3, 2.0**-13, 16, 1e-6
    d = B.SubsampledDirection(s, q, remove)
    pm = B.pmfs(d, h, upper=True, tail=1e-11, coarse=(K, thr))
    points = set((B.grid_points(d, h, 1e-11, (K, thr)) - pm.offset).tolist())
    assert len(points) < pm.mass.size  # there are wide cells
    at = pm.err_at  # the lattice offsets of the error anchors (the grid points)
    assert at is not None and set(at.tolist()) == points
    for a in at[pm.quad > 0].tolist():
        for nb in (a - 1, a + 1):
            assert nb < 0 or nb >= pm.mass.size or nb in points, a
    span_anchors = [a for a in at[pm.dip > 0].tolist() if a - 1 >= 0 and a - 1 not in points]
    assert span_anchors  # the wide patterns are declared, at their top atoms


def _exact_span_weight(K1, K2, p1, r1, p2, r2, a, b, w1, w2):
    """The unit-dipole weight (sum over lattice links of |partial sum|) of the change of the split atoms of
    cells (p1, r1) K1 steps wide and (p2, r2) K2 steps wide when a tail error a (P) and b (e^{g} Q at the point)
    moves mass between them: exact, mpmath at 60 digits, e^{-w} at that precision."""
    with mp.workdps(60):
        def split(p, r, w):
            up = (p - r) / (1 - mp.exp(-w))
            return p - up, up
        e1 = mp.exp(-mp.mpf(w1))
        lo1, up1 = split(mp.mpf(p1), mp.mpf(r1), w1)
        lo2, up2 = split(mp.mpf(p2), mp.mpf(r2), w2)
        lo1b, up1b = split(mp.mpf(p1) + a, mp.mpf(r1) + e1 * b, w1)
        lo2b, up2b = split(mp.mpf(p2) - a, mp.mpf(r2) - b, w2)
        pattern = [mp.mpf(0)] * (K1 + K2 + 1)
        pattern[0] += lo1b - lo1
        pattern[K1] += (up1b - up1) + (lo2b - lo2)
        pattern[K1 + K2] += up2b - up2
        tot, acc = mp.mpf(0), mp.mpf(0)
        for v in pattern[:-1]:
            acc += v
            tot += abs(acc)
        assert abs(acc + pattern[-1]) < mp.mpf(10) ** -50  # the pattern keeps the P-mass
        return tot


def test_span_dipoles_cover_the_exact_pattern_of_a_tail_error_between_wide_cells():
    """span_dipoles against the exact unit-dipole decomposition of the split's change (mpmath): for random
    cells (ratios e^{g} Q / P inside (e^{-w}, 1), so that no split is clipped) of widths 1..64 lattice steps
    and tail errors at their bounds with every sign, the declared weight covers the exact one, and is attained
    within a factor 2 by the worst signs (red when a width factor K1 or K2 is dropped: the exact weight then
    exceeds it about K times). The split's own round-off term (zero masses passed) is left out here: it is the
    split error of 2.3 times the same K2 / (1 - e^{-w2}) as the tail errors' upper part."""
    rng = np.random.default_rng(20261126)
    h = 2.0**-13
    worst = 0.0
    for _ in range(60):
        K1, K2 = (int(x) for x in rng.choice([1, 2, 4, 16, 64], size=2))
        w1, w2 = K1 * h, K2 * h
        p1, p2 = (float(x) for x in 10.0 ** rng.uniform(-9, -3, size=2))
        r1 = p1 * (math.exp(-w1) + (1 - math.exp(-w1)) * float(rng.uniform(0.1, 0.9)))
        r2 = p2 * (math.exp(-w2) + (1 - math.exp(-w2)) * float(rng.uniform(0.1, 0.9)))
        pe, qe = (float(x) for x in 10.0 ** rng.uniform(-16, -12, size=2) * min(p1, p2))
        declared = B.span_dipoles(np.array([[0.0, pe, 0.0]]), np.array([[0.0, qe, 0.0]]),
                                   np.zeros((1, 2)), np.zeros((1, 2)), np.array([[w1, w2]]), h)[0, 1]
        best = 0.0
        for sa, sb in itertools.product((-1, 1), repeat=2):
            exact = _exact_span_weight(K1, K2, p1, r1, p2, r2, sa * mp.mpf(pe), sb * mp.mpf(qe), w1, w2)
            assert exact <= declared, (K1, K2)
            best = max(best, float(exact))
        worst = max(worst, declared / best)
    assert worst <= 2.0  # the bound is not vacuous: the worst signs reach half of it


@pytest.mark.parametrize("tau", [0.0, 3e-4, 0.05])
def test_tilt_of_error_anchors_at_the_grid_points_equals_the_dense_anchors(tau):
    """A PMF built on coarse cells keeps its error anchors (mono, dip, quad) at its grid points only (``err_at``,
    their lattice offsets); the tilt's error bounds read the weights there. The same arrays scattered onto
    every lattice atom (zeros between; err_at None) give the same bounds, by both tilt paths (table and log
    weights): red when the anchors are read at the wrong atoms (e.g. the first n of the lattice)."""
    h = 2.0**-13
    pm = B.pmfs(B.SubsampledDirection(0.8, 1e-3, True), h, upper=True, tail=1e-11, coarse=(16, 1e-6))
    assert pm.err_at is not None and pm.err_at.size < pm.mass.size
    dense = {}
    for name in ("mono", "dip", "quad"):
        full = np.zeros(pm.mass.size)
        full[pm.err_at] = getattr(pm, name)
        dense[name] = full
    twin = B.Pmf(pm.offset, pm.mass, pm.inf_mass, h, pm.err_mass, pm.err_dipole, pm.err_quad, pm.err_atoms,
                 **dense, err_inf=pm.err_inf)
    for fn in (C.tilted, C.tilted_log):
        a, la = fn(pm, tau)
        b, lb = fn(twin, tau)
        assert la == lb
        for name in ("err_mass", "err_dipole", "err_quad"):
            assert getattr(a, name) == pytest.approx(getattr(b, name), rel=1e-12, abs=0.0), (fn, name)
        assert a.err_dipole > 0


def test_the_split_charges_its_span_dipoles_at_the_cells_widths_in_nats(monkeypatch):
    """The dominating split of a subsampled step with coarse tails (cells up to 64 lattice steps wide) declares its
    span dipoles (docs/pld.md 2.3) with ``span_dipoles`` given each cell's width in nats, K h for a cell of K lattice
    steps: ``span_dipoles`` reads K = width / h, the form its derivation and
    ``test_span_dipoles_cover_the_exact_pattern_of_a_tail_error_between_wide_cells`` take. Red when the lattice
    steps K are passed as widths (K / h read as the step count: the K1 pe term 1/h times the derived bound -- valid,
    but the upper ends of a 300-group schedule at delta 1e-9 ~8e-7 relative higher)."""
    h = 2.0**-13
    seen = []
    real = B.span_dipoles

    def spy(p_err, q_err, p, rt, widths, hh, rt_err=None):
        seen.append((np.asarray(widths).copy(), hh))
        return real(p_err, q_err, p, rt, widths, hh, rt_err)

    monkeypatch.setattr(B, "span_dipoles", spy)
    for remove in (True, False):
        seen.clear()
        B.pmfs(B.SubsampledDirection(1.0, 0.01, remove), h, upper=True, tail=1e-13, coarse=(64, 1e-8))
        assert seen
        widths, hh = seen[0]
        assert hh == h
        steps = widths / h
        assert np.array_equal(steps, np.round(steps)) and steps.max() == 64  # K h, K whole lattice steps up to 64
