"""Single-step PMFs kept between PLD objects (``privacy_loss.distribution.STEP_MEMO``): transparent, bounded, and
what lets a growing history (an Opacus noise schedule priced after every epoch) skip the steps already built.

Transparency rests on one invariant: ``discretise.pmfs_many`` builds each direction's PMF bitwise the same whatever
the other directions of the call (``discretise.row_sums``), so a PMF kept from one history is the PMF another
history would build. Every expected value here is the same computation without the memo (bitwise)."""

from __future__ import annotations

import numpy as np
import pytest

from privcal.accounting.events import ComposedEvent, GaussianEvent, PoissonSampledEvent, SelfComposedEvent
from privcal.accounting.pld_events import from_event
from privcal.privacy_loss import discretise as B
from privcal.privacy_loss import distribution as D


def _same(a, b) -> bool:
    arrays = all(np.array_equal(getattr(a, f), getattr(b, f)) for f in ("mass", "mono", "dip", "quad"))
    scalars = all(getattr(a, f) == getattr(b, f) for f in ("offset", "err_mass", "err_dipole", "err_quad",
                                                           "inf_mass", "moments"))
    return arrays and scalars


@pytest.mark.parametrize("coarse", [None, (8, 1e-6)])
def test_a_direction_built_among_others_is_bitwise_the_one_built_alone(coarse):
    """Rows of very different lengths padded together: each PMF (masses, error sums, error patterns, moments) is
    bitwise what a call with a subset of the directions, or with that direction alone, gives. Red when a row's
    sums run over its padding (``row_sums`` replaced by ``.sum(axis=1)``: the pairwise order changes)."""
    pairs = [B.SubsampledGaussianPair(1.0 + 0.01 * i, 0.01) for i in range(40)] + [
        B.SubsampledGaussianPair(0.7, 0.05), B.SubsampledGaussianPair(3.0, 0.2), B.SubsampledGaussianPair(6.0, 1e-3)]
    dirs = [d for p in pairs for d in p.directions()]
    h, tail = 2.0**-10, 1e-12
    full = B.pmfs_many(dirs, h, ends=(True, False), tail=tail, coarse=coarse, per_atom=False)
    part = B.pmfs_many(dirs[60:], h, ends=(True, False), tail=tail, coarse=coarse, per_atom=False)
    for e in (True, False):
        for a, b in zip(full[e][60:], part[e]):
            assert _same(a, b)
        for d, a in zip(dirs[60:], full[e][60:]):
            alone = B.pmfs(d, h, upper=e, tail=tail, coarse=coarse)
            assert _same(a, alone)


def _schedule(n: int):
    return ComposedEvent([SelfComposedEvent(PoissonSampledEvent(0.01, GaussianEvent(1.0 + 0.01 * i)), 3)
                          for i in range(n)])


def test_a_history_grown_by_a_step_reuses_the_kept_pmfs_and_gets_the_bracket_from_scratch(monkeypatch):
    """A 40-group schedule priced, then the same schedule with one more group: the second bracket reads the first
    one's PMFs back from the memo, builds only the new group's, and equals bitwise the bracket computed with the
    memo empty (delta 1e-5 and 1e-10: untilted and tilted compositions)."""
    built = []
    real = B.pmfs_many

    def counting(directions, *args, **kwargs):
        built.append(len(directions))
        return real(directions, *args, **kwargs)

    monkeypatch.setattr(B, "pmfs_many", counting)
    for delta in (1e-5, 1e-10):
        D.STEP_MEMO.clear()
        from_event(_schedule(40)).bracket(delta)
        first = sum(built)
        built.clear()
        hits = D.STEP_MEMO.hits
        warm = from_event(_schedule(41)).bracket(delta)
        assert D.STEP_MEMO.hits > hits
        assert sum(built) <= first / 4  # the new group's directions (and a grid the first did not need)
        D.STEP_MEMO.clear()
        cold = from_event(_schedule(41)).bracket(delta)
        assert warm == cold


def test_a_history_grown_by_a_step_composes_its_kept_groups_no_more_and_gets_the_bracket_from_scratch(monkeypatch):
    """An 80-group schedule (more than GROUP_MIN: grouped, docs/pld.md 2.10) priced at delta 1e-5, 5e-6 and 1e-10
    (untilted compositions with two window tails, and tilted ones), then the same schedule with one more group: its compositions read the first
    one's composed groups back (``GROUP_MEMO``: the group size, 9, and the number of groups do not change, so every
    group but the last is the same) and compose far fewer groups, and both brackets equal bitwise those computed
    with neither memo. Red when a kept group is keyed without its tilt or tail (the second delta's compositions
    would read the first's groups), or when its terms of K are not added again (K, the composed masses' scale,
    would miss them)."""
    from privcal.privacy_loss import convolve as C
    from privcal.privacy_loss.step_memo import GROUP_MEMO

    composed = []
    real = C.compose_fft

    def counting(factors, *args, **kwargs):
        composed.append(len(factors))
        return real(factors, *args, **kwargs)

    monkeypatch.setattr(C, "compose_fft", counting)
    deltas = (1e-5, 5e-6, 1e-10)  # 5e-6: the PMFs and tilt of 1e-5, a window tail 10x smaller
    D.STEP_MEMO.clear()
    GROUP_MEMO.clear()
    for delta in deltas:
        from_event(_schedule(80)).bracket(delta)
    first = len(composed)
    composed.clear()
    hits = GROUP_MEMO.hits
    grown = from_event(_schedule(81))
    warm = [grown.bracket(delta) for delta in deltas]
    assert GROUP_MEMO.hits >= hits + 8  # at least one composition's first eight groups
    assert len(composed) < first / 2
    monkeypatch.setattr(GROUP_MEMO, "get", lambda key: None)  # neither memo: from scratch
    D.STEP_MEMO.clear()
    cold = from_event(_schedule(81))
    assert [cold.bracket(delta) for delta in deltas] == warm
    GROUP_MEMO.clear()


def test_the_memo_keeps_at_most_its_bytes_and_forgets_the_oldest_first():
    """Entries past ``max_bytes`` push out the least recently used; one above a quarter of the cap is not kept."""
    memo = D.StepMemo(max_bytes=4 * 4 * 8 * 100)  # four PMFs of 100 atoms (masses and three error patterns)
    pm = lambda: B.Pmf(0, np.zeros(100), 0.0, 0.1, 0.0, 0.0, 0.0, None, mono=np.zeros(100), dip=np.zeros(100),
                       quad=np.zeros(100))
    for k in range(4):
        memo.put(("k", k), pm())
    assert memo.get(("k", 0)) is not None  # now the most recent
    memo.put(("k", 4), pm())
    assert memo.get(("k", 1)) is None and memo.get(("k", 0)) is not None and memo.get(("k", 4)) is not None
    big = B.Pmf(0, np.zeros(1601), 0.0, 0.1, 0.0, 0.0, 0.0, None)  # 12,808 bytes > a quarter of the cap
    memo.put(("big",), big)
    assert memo.get(("big",)) is None


def test_row_sums_are_bitwise_each_rows_own_sum():
    """``row_sums`` sums the rows of one length together: each entry must be bitwise the sum of that row's own
    first n[f] entries summed alone (numpy's pairwise order depends on the length, so padding or a neighbour's
    length would change bits). Rows of 1-700 entries (several lengths shared, a length 0, one beyond the padding's
    width clipped as a slice is), values over 12 decades; red for ``.sum(axis=1)`` over the padded rows, or for
    each length's rows summed up to the longest length of the block."""
    rng = np.random.default_rng(7)
    F, L = 300, 700
    a = np.exp(rng.uniform(-28.0, 0.0, size=(F, L)))
    n = rng.choice([0, 1, 7, 8, 9, 127, 128, 129, 300, 511, 512, 513, 699, 700], size=F)
    n[-1] = L + 5
    got = B.row_sums(a, n)
    want = np.array([a[f, :int(n[f])].sum() for f in range(F)])
    assert got.dtype == want.dtype
    assert np.array_equal(got, want)
    assert not np.array_equal(np.where(n[:, None] > np.arange(L)[None, :], a, 0.0).sum(axis=1), want)
