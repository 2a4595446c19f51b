"""Many distinct factors (docs/pld.md, Sec. 2.6 and 2.10): the batched FFT composition of ``convolve`` against
a one-factor-at-a-time reference, the coefficients it skips against the full computation, and the
vectorised log-MGF of the window and the tilt against per-factor values and mpmath.

Sources of the expected values: ``_reference_compose_fft`` below is the per-factor loop of
``convolve.compose_fft`` as it stood at commit fda9921 (one rfft per factor, running sums over the
factors), kept here as the reference the batched path must reproduce bit for bit; the exact log-MGFs are
computed with mpmath at 40 digits from the float masses taken as exact numbers.
"""

from __future__ import annotations

import math

import mpmath as mp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import fft as sfft

from privcal.privacy_loss import discretise as B
from privcal.privacy_loss import convolve as C

_U = B.U


def _factors(k: int, h: float, *, upper: bool = True, seed: int = 0):
    """k distinct subsampled Gaussians (sigma, q and counts varied), built on the grid h."""
    rng = np.random.default_rng(seed)
    out = []
    for i in range(k):
        s = 0.9 + 0.05 * i + 0.01 * rng.random()
        q = (0.01, 0.03, 0.1)[i % 3]
        d = B.SubsampledGaussianPair(s, q).directions()[0]
        out.append((B.pmfs(d, h, upper=upper, tail=1e-12), 1 + i % 4))
    return out


def _reference_compose_fft(factors, tail):
    """The composition of ``factors`` one factor at a time (the loop of commit fda9921, general path: every
    coefficient computed), on the window of :func:`convolve.window`."""
    A, B_, outside = C.window(factors, tail)
    N = C.fft_length(B_ - A + 1)
    k = np.arange(N // 2 + 1)
    c_fft = C.fft_err(N)
    c_inv = c_fft + 2.01 * _U
    spectra, shift = [], 0
    for p, n in factors:
        centre = int(round(C.pmf_moments(p)[1]))
        shift += n * centre
        pos = (p.offset - centre + np.arange(p.mass.size)) % N
        X = sfft.rfft(np.bincount(pos, weights=p.mass, minlength=N))
        mod = np.abs(X)
        tot = float(p.mass.sum())
        e = c_fft * tot
        spectra.append((n, X, mod, np.minimum(mod + e, tot + c_fft * tot)))
    logmod, phase, log_hi, spread = (np.zeros(k.size) for _ in range(4))
    for n, X, mod, capped in spectra:
        with np.errstate(divide="ignore"):
            lm = np.log(mod)
        ang = np.arctan2(X.imag, X.real)
        logmod += n * lm
        phase += np.mod(n * ang, 2 * np.pi)
        log_hi += n * np.log(capped)
        spread += n * (np.abs(np.nan_to_num(lm, neginf=0.0)) + np.abs(ang))
    with np.errstate(under="ignore"):
        ymod = np.exp(logmod)
        hi = np.exp(log_hi)
    Y = ymod * np.cos(phase) + 1j * ymod * np.sin(phase)
    y = sfft.irfft(Y, N)
    w = np.full(k.size, 2.0)
    w[0] = 1.0
    if N % 2 == 0:
        w[-1] = 1.0
    dY = (hi - ymod) + 4 * _U * hi + C.C_POW * _U * ymod * (1.0 + spread)
    err = math.sqrt(float(np.sum(w * dY * dY))) + c_inv * float(np.sum(w * ymod))
    y = np.maximum(np.roll(y, -((A - shift) % N)), 0.0)
    return A, y, err, outside


@pytest.fixture(scope="module")
def history():
    """Smooth factors (Gaussians, subsampled Gaussians at q = 0.01 taken 10 times): most coefficients of
    their composition underflow, so the cut is exercised."""
    h = 2.0**-6
    out = [(B.pmfs(B.GaussianPair(2.0 + 0.1 * i).directions()[0], h, upper=True, tail=1e-12), 1 + i % 5)
           for i in range(12)]
    return out + [(B.pmfs(B.SubsampledGaussianPair(1.0 + 0.1 * i, 0.01).directions()[0], h, upper=True,
                          tail=1e-12), 10) for i in range(12)]


@pytest.fixture(scope="module")
def sharp():
    """Factors with piles (q up to 0.1, few steps): no coefficient is cut."""
    return _factors(24, 2.0**-6)


@pytest.mark.parametrize("tilt", [0.0, 0.01])
@pytest.mark.parametrize("batch, keep", [(2**16, 2**22), (700, 2**22), (700, 1)])
def test_batched_fft_composition_is_bitwise_the_one_factor_loop(history, sharp, monkeypatch, tilt, batch, keep):
    """The batched composition (rows of spectra, running sums down the rows, only the coefficients whose
    bound can be nonzero) gives bitwise the masses and the round-off bound of one rfft and one update per
    factor, also when the factors span several batches (``_FFT_BATCH``) and when the spectra are computed
    again for the second pass instead of kept (``_KEEP_SPECTRA``). Red when a skipped coefficient still counts.
    (Bit for bit on this machine, which also pins the factors' summation order; the assertion allows 1e-12, since
    pocketfft's several-rows transform may round differently from its one-row one where a compiler contracts
    products into fused multiply-adds in one path only, e.g. on aarch64: the bound covers any order.)"""
    monkeypatch.setattr(C, "_FFT_BATCH", batch)
    monkeypatch.setattr(C, "_KEEP_SPECTRA", keep)
    for hist in (history, sharp):
        factors = [(C.tilted(p, tilt)[0], n) for p, n in hist] if tilt else hist
        for group in (factors, factors[:7], factors[5:6] + factors[15:16]):
            A, y, err, outside = _reference_compose_fft(group, 1e-12)
            c = C.compose_fft(group, 1e-12)
            assert c.offset == A and c.outside == outside
            np.testing.assert_allclose(c.mass, y, rtol=1e-12, atol=1e-12 * float(np.max(np.abs(y))))
            assert c.err == pytest.approx(err, rel=1e-12, abs=0.0)


def test_a_factor_longer_than_the_window_wraps_as_its_masses_sum():
    """A factor with a long, light tail is placed on a window shorter than itself: its atoms wrap modulo N and
    add up (the np.bincount path of the row placement; the others take one or two slices). The composition
    equals the one-factor-at-a-time reference, and the long factor is indeed longer than N (its wrapped tail,
    3e-11 per atom, is far above the comparison's tolerance: dropping it would be red)."""
    h = 2.0**-3
    long_tail = np.concatenate([[0.25, 0.5, 0.25 - 9e-8], np.full(3000, 3e-11)])  # 3,003 atoms, tail 9e-8
    factors = [(B.Pmf(-1, long_tail, 0.0, h), 2),
               (B.pmfs(B.GaussianPair(2.0).directions()[0], h, upper=True, tail=1e-12), 3)]
    A, y, err, outside = _reference_compose_fft(factors, 1e-6)
    assert C.fft_length(C.window(factors, 1e-6)[1] - C.window(factors, 1e-6)[0] + 1) < long_tail.size
    c = C.compose_fft(factors, 1e-6)
    assert c.offset == A and c.outside == outside
    np.testing.assert_allclose(c.mass, y, rtol=1e-12, atol=1e-12 * float(np.max(np.abs(y))))
    assert c.err == pytest.approx(err, rel=1e-12, abs=0.0)


def test_skipped_coefficients_are_those_whose_bound_underflows(history):
    """A composition of several factors computes log|X|, arg X and the spread only where exp(sum n_i log
    min(|X_i| + e_i, cap_i)) can be nonzero; ``power=False`` computes every coefficient: bitwise the same
    masses and bound; and most coefficients are skipped here (else the comparison would not test the cut)."""
    for group in (history, history[:6]):
        fast = C.compose_fft(group, 1e-12)
        full = C.compose_fft(group, 1e-12, power=False)
        assert fast.offset == full.offset and np.array_equal(fast.mass, full.mass)
        assert fast.err == full.err
    A, Bw, _ = C.window(history, 1e-12)
    N = C.fft_length(Bw - A + 1)
    log_hi = np.zeros(N // 2 + 1)
    for p, n in history:
        X = sfft.rfft(np.bincount((p.offset + np.arange(p.mass.size)) % N, weights=p.mass, minlength=N))
        tot = float(p.mass.sum())
        log_hi += n * np.log(np.minimum(np.abs(X) + C.fft_err(N) * tot, tot + C.fft_err(N) * tot))
    assert np.mean(log_hi > -750.0) < 0.1


@given(st.lists(st.floats(-math.pi, math.pi), min_size=1, max_size=40),
       st.lists(st.integers(1, 50), min_size=1, max_size=4))
@settings(max_examples=60, deadline=None)
def test_mod_2pi_is_numpys_remainder_bitwise(angles, counts):
    """mod_2pi (a shortcut for rows with n = 1) equals np.mod(x, 2 pi) bit for bit, signed zeros included."""
    ang = np.array(angles + [0.0, -0.0, math.pi, -math.pi, -1e-300, 5e-324, -5e-324])
    n = np.array(counts, dtype=float)[:, None]
    x = n * ang[None, :]
    got, want = C.mod_2pi(x, n), np.mod(x, 2 * np.pi)
    assert np.array_equal(got.view(np.int64), want.view(np.int64))


def test_vectorised_log_mgf_is_within_rounding_of_exact_and_of_one_factor_at_a_time(history):
    """log_mgfs (a table e^{t (j - j0)} shared by a block of factors, sums by segments: moderate tilts) and
    log_mgfs_exp (factors padded into blocks, pairwise row sums: the tilts beyond the table's range, here
    5 and -3 per grid step) against mpmath at 40 digits and against log_mgf_of one factor at a time: within
    the documented round-off (2000 u in log M for the table, a few units for the exponential path); a
    factor without atoms gives -inf. The window's slack for the round-off of K, 1e-9 |K| + 1e-12, is far
    above the difference in K."""
    pmfs = [p for p, _ in history[:9]] + [B.Pmf(3, np.zeros(4), 0.0, history[0][0].h)]
    tilts = np.array([-3.0, -0.05, 0.002, 0.03, 0.2, 5.0])
    got = C.log_mgfs(pmfs, tilts)
    exp_path = C.log_mgfs_exp(pmfs, tilts)
    assert np.all(got[-1] == -np.inf) and np.all(exp_path[-1] == -np.inf)
    tol_table = 2000 * _U
    for i, p in enumerate(pmfs[:-1]):
        one = C.log_mgf_of(p, tilts)
        scale = np.maximum(1.0, np.abs(one))
        assert np.all(np.abs(exp_path[i] - one) <= 64 * _U * scale)
        assert np.all(np.abs(got[i] - one) <= tol_table * scale)
    with mp.workdps(40):
        for i in (0, 4, 8, 15):
            p = pmfs[i] if i < 9 else history[i][0]
            row = C.log_mgfs([p], tilts)[0]
            for j, t in enumerate(tilts):
                exact = float(mp.log(mp.fsum(mp.mpf(float(m)) * mp.exp(mp.mpf(float(t)) * (p.offset + a))
                                             for a, m in enumerate(p.mass) if m > 0)))
                assert abs(row[j] - exact) <= tol_table * max(1.0, abs(exact))
    counts = np.array([float(n) for _, n in history[:9]])
    K = C.weighted_sum(counts, got[:-1])
    K_one = np.zeros(tilts.size)
    for p, n in history[:9]:
        K_one += n * C.log_mgf_of(p, tilts)
    assert np.all(np.abs(K - K_one) <= 1e-3 * (1e-9 * np.abs(K_one) + 1e-12))


def test_weighted_sum_adds_in_the_factors_order():
    """sum_i n_i v_i is added from 0 in the rows' order (as a loop over the factors): values whose sum
    depends on the order."""
    v = np.array([[1.0, 1e16], [1e16, 1.0], [-1e16, -1e16], [1.0, 1.0]])
    n = np.ones(4)
    loop = np.zeros(2)
    for row in v:
        loop += row
    assert np.array_equal(C.weighted_sum(n, v), loop)
    assert not np.array_equal(np.sum(v[::-1], axis=0), loop)  # the order matters for these values


def test_window_and_tilt_agree_with_one_factor_at_a_time(history, monkeypatch):
    """window() and choose_tilt() with the vectorised log-MGF give the window and the tilt of the
    per-factor loop (the values of K differ in the last bits only). Equal here; the assertion allows what a
    last-bit difference can move on another platform: a window end by one grid step (a ceiling at an integer),
    a tilt by one rung of its ladder (a near-tie of the objective) -- a wrong K moves them far more."""
    def per_factor(pmfs, tilts):
        return np.array([C.log_mgf_of(p, tilts) for p in pmfs])

    fast_w = C.window(history, 1e-12)
    fast_t = (C.choose_tilt(history, delta=1e-5), C.choose_tilt(history, delta=1e-12),
              C.choose_tilt(history, epsilon=1.5))
    monkeypatch.setattr(C, "log_mgfs", per_factor)
    slow_w = C.window(history, 1e-12)
    slow_t = (C.choose_tilt(history, delta=1e-5), C.choose_tilt(history, delta=1e-12),
              C.choose_tilt(history, epsilon=1.5))
    assert abs(fast_w[0] - slow_w[0]) <= 1 and abs(fast_w[1] - slow_w[1]) <= 1
    if fast_w[:2] == slow_w[:2]:
        assert fast_w[2] == pytest.approx(slow_w[2], rel=1e-12)
    for f, s_ in zip(fast_t, slow_t):
        assert s_ / 2**0.25 * (1 - 1e-12) <= f <= s_ * 2**0.25 * (1 + 1e-12)


def test_log_mgf_tables_do_not_change_the_values(history, monkeypatch):
    """The table path's tables bound the memory (tilts per table): one tilt per table gives bitwise the
    values of all tilts in one table (each value is its own row's and tilt's segment sums; bit for bit here, to
    1e-13 allowed: np.einsum may order its inner sums by the operands' shapes in another numpy)."""
    pmfs = [p for p, _ in history]
    tilts = np.array([-0.05, 0.002, 0.03, 0.2, 1e-6])
    want = C.log_mgfs(pmfs, tilts)
    monkeypatch.setattr(C, "_MGF_TABLE", 1)
    np.testing.assert_allclose(C.log_mgfs(pmfs, tilts), want, rtol=1e-13, atol=1e-13)


def test_log_mgf_table_hands_an_underflowing_sum_to_the_exponential_path():
    """A factor whose mass sits where the shared table is tiny: one atom of mass 1e-80 at the left end of
    a row 7040 wide, t = 0.19 (|t| W / 2 = 669 <= 700: the table's range), so mass T_0 = 1e-80 e^{-668.8}
    underflows to 0. Its value must come from the exponential path, log M(t) = log(1e-80) + 0.19 * 0
    (closed form), not log 0 = -inf (an MGF bound far too small: a window too narrow). At t = -0.19 the
    table holds it (1e-80 e^{668.8})."""
    mass = np.zeros(7040)
    mass[0] = 1e-80
    p = B.Pmf(0, mass, 0.0, 0.01)
    got = C.log_mgfs([p], np.array([0.19, -0.19]))[0]
    assert got == pytest.approx([math.log(1e-80)] * 2, rel=1e-12)


def test_mgf_rows_keep_their_blocks_and_the_same_values(history, monkeypatch):
    """A MgfRows list gives bit for bit the log-MGFs of a plain list at every call (its padded blocks built at
    the first call and reused), and keeps them only up to _MGF_KEEP atoms (memory)."""
    pmfs = [p for p, _ in history]
    t1, t2 = np.array([0.01, -0.02, 0.3]), np.array([0.05, -0.5])
    rows = C.MgfRows(pmfs)
    assert np.array_equal(C.log_mgfs(rows, t1), C.log_mgfs(pmfs, t1))
    assert rows._prep is not None
    assert np.array_equal(C.log_mgfs(rows, t2), C.log_mgfs(pmfs, t2))
    monkeypatch.setattr(C, "_MGF_KEEP", 10)
    small = C.MgfRows(pmfs)
    assert np.array_equal(C.log_mgfs(small, t2), C.log_mgfs(pmfs, t2))
    assert small._prep is None


def _schedule(k: int):
    from privcal.accounting.events import ComposedEvent, GaussianEvent, PoissonSampledEvent, SelfComposedEvent

    return ComposedEvent([SelfComposedEvent(PoissonSampledEvent(0.01, GaussianEvent(1.0 + 0.01 * i)), 10)
                          for i in range(k)])


def _screen_spy(monkeypatch):
    """(list of what each ``PLD._screened`` call returned, the spy installed): which directions a bracket composed on
    the fine grid (None: all)."""
    from privcal.privacy_loss import distribution as D

    seen = []
    screened = D.PLD._screened

    def spy(self, *args):
        out = screened(self, *args)
        seen.append(out)
        return out

    monkeypatch.setattr(D.PLD, "_screened", spy)
    return seen, spy


def test_a_bracket_of_many_factors_composes_the_weaker_direction_only_where_screening_cannot_rule_it_out(monkeypatch):
    """A noise schedule of 70 distinct subsampled Gaussians (more than GROUP_MIN): the bracket composes the remove
    direction on the fine grid and the add direction on a grid _SCREEN_COARSEN times coarser, and the add direction
    (whose coarse upper end is below the remove direction's fine upper end) no further: the same bracket, bit for
    bit, as composing both directions on the fine grid (docs/pld.md 2.8). On a screening grid so coarse that the
    add direction's upper end there exceeds the remove direction's, both are composed. Red when the screen drops
    the direction composed on the fine grid, or when it skips a direction its coarse upper end does not rule out."""
    from privcal.pld import PLDAccountant
    from privcal.privacy_loss import distribution as D

    delta = 1e-5
    seen, spy = _screen_spy(monkeypatch)
    acc = PLDAccountant()
    acc.compose(_schedule(70))
    got = acc.bracket(delta)
    assert seen and seen[0] == (0,)  # the remove direction alone
    monkeypatch.setattr(D.PLD, "_screened", lambda self, *args: None)  # both directions on the fine grid
    ref = PLDAccountant()
    ref.compose(_schedule(70))
    assert got == ref.bracket(delta)
    monkeypatch.setattr(D.PLD, "_screened", spy)
    monkeypatch.setattr(D, "_SCREEN_COARSEN", 4096)  # a screening grid too coarse to rule anything out
    seen.clear()
    wide = PLDAccountant()
    wide.compose(_schedule(70))
    assert wide.bracket(delta) == got
    assert seen and seen[0] == (0, 1)  # both: the add direction's coarse upper end exceeds the fine one
    monkeypatch.setattr(D, "_SCREEN_COARSEN", 8)
    seen.clear()
    wrong = PLDAccountant()  # a first guess that is the smaller direction: both on the fine grid, the same bracket
    wrong.compose(_schedule(70))
    wrong.pld._strong = 1
    assert wrong.bracket(delta) == got
    assert seen and seen[0] == (0, 1) and wrong.pld._strong == 0  # and the larger one is screened against next


def test_a_finer_grid_composes_the_lower_end_only_of_directions_that_can_raise_it(monkeypatch):
    """A noise schedule of 70 distinct subsampled Gaussians started on a grid 8 times coarser than the rule grid, so
    that the bracket refines (docs/pld.md 2.8): each finer grid first composes the lower end of the directions whose
    certified upper end, on any grid so far (the screens' included), exceeds the lower end found -- the remove
    direction alone here -- and the bracket is bit for bit the one that composes both directions' lower ends there.
    Red when a direction is skipped without a certified upper end at or below the lower end (the bracket's lower end
    could then miss the direction that sets epsilon), or when the skip is lost (both directions composed), or when a
    finer grid is not a power of two (its single-step builds then lose their graded tails, docs/pld.md 2.3)."""
    from privcal.pld import PLDAccountant
    from privcal.privacy_loss import distribution as D

    delta = 1e-5
    lower = []
    composed = D.PLD._composed

    def spy(self, h, upper, *args, **kw):
        if not upper:
            lower.append((h, kw.get("dirs")))
        return composed(self, h, upper, *args, **kw)

    monkeypatch.setattr(D.PLD, "_composed", spy)
    monkeypatch.setattr(D.PLD, "_auto_h", lambda self: 8 * self._initial_h())
    acc = PLDAccountant()
    acc.compose(_schedule(70))
    got = acc.bracket(delta)
    pld = acc.pld
    assert 0 < got[0] < got[1]
    start = pld._fitting_h(8 * pld._initial_h(), delta)
    finer = [dirs for h, dirs in lower if h < start]
    assert finer and all(dirs == (0,) for dirs in finer)  # the remove direction's lower end alone
    # the finer grids of many distinct factors are powers of two (asked: start / 1.5 .. start / 4), where the
    # single-step PMFs keep their graded tails (sparse)
    assert all(math.log2(h) == math.floor(math.log2(h)) for h, _ in lower if h < start)
    h_fine = min(h for h, _ in lower)
    assert any(isinstance(p, B.SparsePmf) for p, _ in pld._pmfs(h_fine, False, pld._tails(delta), dirs=(0,))[0])
    assert pld._dir_upper[(delta, 1)] <= got[0]  # the add direction's recorded upper end rules it out
    ups = dict(pld._dir_upper)
    pld._dir_upper = {(delta, 0): 2.0, (delta, 1): 1.0}  # the rule itself: skipped only at or below the lower end
    assert (pld._raising(delta, 0.5), pld._raising(delta, 1.0), pld._raising(delta, 1.5)) == ((0, 1), (0,), (0,))
    assert pld._raising(delta / 2, 1.5) == (0, 1)  # nothing recorded at that delta: every direction
    pld._dir_upper = ups
    monkeypatch.setattr(D.PLD, "_raising", lambda self, delta, lo: tuple(range(self._n_dirs())))
    lower.clear()
    ref = PLDAccountant()
    ref.compose(_schedule(70))
    assert ref.bracket(delta) == got
    assert any(dirs == (0, 1) for h, dirs in lower if h < start)


def test_a_many_factor_lower_end_follows_its_upper_ends_tilt():
    """300 distinct subsampled Gaussians (10 steps each) at delta = 2e-8: the upper end is tilted (its untilted
    round-off would not fit 1e-3 delta), so the lower end of the same direction is composed tilted at once instead
    of untilted first and again tilted (docs/pld.md Sec. 2.5; at 30,000 groups this was ~40 % of the bracket):
    every end of every direction on every grid is composed once."""
    from privcal import epsilon_of
    from privcal.accounting.events import ComposedEvent, GaussianEvent, PoissonSampledEvent, SelfComposedEvent
    from privcal.privacy_loss import convolve

    seen = []
    real = convolve.compose

    def spy(factors, *args, **kwargs):
        seen.append((factors[0][0].h, kwargs.get("tilt", args[1] if len(args) > 1 else 0.0) > 0))
        return real(factors, *args, **kwargs)

    ev = ComposedEvent([SelfComposedEvent(PoissonSampledEvent(0.01, GaussianEvent(1.0 + 0.001 * i)), 10)
                        for i in range(300)])
    with pytest.MonkeyPatch.context() as mp_:
        mp_.setattr(convolve, "compose", spy)
        epsilon_of(ev, 2e-8)
    assert len(seen) >= 3 and all(tilted for _, tilted in seen), seen  # no untilted try, so none composed twice


@pytest.mark.parametrize("q, sigma, steps", [(1e-3, 0.8, 100_000), (1e-2, 1.1, 10_000), (0.1, 2.0, 1_000)])
def test_one_factor_screens_its_add_direction_at_delta_above_1e_minus_8(q, sigma, steps, monkeypatch):
    """One subsampled factor at delta = 1e-5 (docs/pld.md 2.8): the add direction is composed on the grid
    _SCREEN_COARSEN times coarser, and no further where its coarse upper end is below the remove direction's fine one;
    the bracket is bit for bit the one composing both directions on the fine grid. At delta = 1e-9 (below 1e-8, where
    a heavy tail's tilted compositions make the coarse screen cost more than it saves) both directions are composed
    on the fine grid. Red when a few-factor history is not screened, or screened below 1e-8."""
    from privcal.privacy_loss import distribution as D

    seen, _ = _screen_spy(monkeypatch)
    pair = B.SubsampledGaussianPair(sigma, q)
    got = D.PLD([(pair, steps)]).bracket(1e-5)
    assert seen and seen[0] == (0,)  # the remove direction alone on the fine grid
    seen.clear()
    D.PLD([(pair, steps)]).bracket(1e-9)
    assert seen and seen[0] is None
    monkeypatch.setattr(D.PLD, "_screened", lambda self, *args: None)  # both directions on the fine grid
    assert D.PLD([(pair, steps)]).bracket(1e-5) == got


def test_one_factor_composed_in_levels_is_not_screened(monkeypatch):
    """1e7 steps (q = 1e-3, sigma = 1, delta = 1e-5) are composed in two levels (docs/pld.md 2.11), where the two
    directions' epsilons are close: the screen of the add direction on a coarse grid never rules it out and costs
    ~2 ms more (2.8), so both directions are composed on the fine grid. Red when such a history is screened."""
    from privcal.privacy_loss import distribution as D

    seen, _ = _screen_spy(monkeypatch)
    D.PLD([(B.SubsampledGaussianPair(1.0, 1e-3), 10**7)]).bracket(1e-5)
    assert seen and seen[0] is None
