"""Atoms of the Laplace and (eps0, delta0) pairs at a grid point that is not exact (docs/pld.md Sec. 2.2).

On a grid whose spacing h is not a power of two the computed grid point fl(j h) differs from j h by up to
u |j h|, and the tails of these pairs are step functions at +-eps0: the comparison decides in which cell the
atom falls. ``discretise.clear_of_grid`` moves an atom that lies within round-off of a grid point just past it
(outward for the dominating end, inward for the dominated one), and the PLD builds each end from the pair it
returns. Every expected value below is exact rational arithmetic (``fractions.Fraction`` of the doubles) or a
closed form named where it is used.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

from privcal.accounting.events import ApproxDPEvent, ComposedEvent, GaussianEvent, LaplaceEvent
from privcal.accounting.pld_events import from_event
from privcal.privacy_loss import discretise as B

U = Fraction(1, 2**53)


def _radius(e0: float, h: float) -> Fraction:
    # the bound of |fl(j h) - j h| for the j nearest e0 (one rounding to nearest), times the clearance factor
    return B.ATOM_CLEARANCE * U * (Fraction(e0) + Fraction(h))


@pytest.mark.parametrize("cls", ["laplace", "approx"])
@pytest.mark.parametrize("h, j", [(0.1, 3), (0.013, 4941)])
def test_an_atom_at_a_rounded_grid_point_is_moved_past_it(cls, h, j):
    """e0 = fl(j h) equals the computed grid point and differs from the exact one j h (h the double given):
    by 2.8e-17 (0.63 u (e0 + h)) at h = 0.1, j = 3, and at h = 0.013, j = 4941 by 0.987 u (e0 + h), the largest
    ratio over j < 5000 and h in {0.1, 0.3, 0.7, 0.01, 0.03, 0.013, 0.37} (an exhaustive search in exact
    rationals), so a clearance below 1 fails here. The comparison at that grid point may put the atom in the
    wrong cell; the moved pairs sit more than R beyond j h (R the round-off radius), on the side of their end,
    so the computed grid point compares with them as the exact one does."""
    e0 = j * h
    exact_point = j * Fraction(h)
    dist = abs(Fraction(e0) - exact_point)
    assert 0 < dist < _radius(e0, h)  # the configuration: within round-off
    make = (lambda e: B.LaplacePair(e)) if cls == "laplace" else (lambda e: B.ApproxDPPair(e, 1e-6))
    pair = make(e0)
    up, low = B.clear_of_grid(pair, h, True), B.clear_of_grid(pair, h, False)
    assert type(up) is type(pair) and type(low) is type(pair)
    assert Fraction(up.e0) - exact_point > _radius(e0, h) and up.e0 > e0
    assert exact_point - Fraction(low.e0) > _radius(e0, h) and low.e0 < e0
    assert j * h < up.e0 and j * h > low.e0  # the computed grid point now compares as the exact one does
    if cls == "approx":
        assert up.d0 == low.d0 == 1e-6  # only eps0 moves


def test_an_atom_clear_of_the_grid_or_on_an_exact_grid_is_kept():
    """Nothing moves where the comparison is exact (h a power of two: j h exact, here eps0 = 3 h exactly),
    where the atom is far from every grid point, for eps0 = 0 (the grid point 0 is exact) and for pairs
    without atoms."""
    for pair, h in [(B.LaplacePair(0.375), 0.125), (B.ApproxDPPair(0.375, 0.0), 0.125),
                    (B.LaplacePair(0.35), 0.1), (B.ApproxDPPair(0.0, 1e-3), 0.1), (B.GaussianPair(0.3), 0.1)]:
        for upper in (True, False):
            assert B.clear_of_grid(pair, h, upper) is pair


def test_the_unmoved_upper_pmf_held_the_atom_below_its_loss():
    """The violation the move removes: the atom at e0 = fl(3 * 0.1) lies above 3 h, so the dominating split of
    its true cell (3 h, 4 h] puts a part of it at 4 h; built from the unmoved pair the upper PMF has no P-mass at
    4 h at all, built from the moved pair it has."""
    h, e0 = 0.1, 3 * 0.1
    pair = B.ApproxDPPair(e0, 0.0)
    unmoved = B.pmfs(pair, h, upper=True)
    moved = B.pmfs(B.clear_of_grid(pair, h, True), h, upper=True)
    top = lambda pm: pm.mass[4 - pm.offset] if 0 <= 4 - pm.offset < len(pm.mass) else 0.0  # grid point 4 h
    assert top(unmoved) == 0.0
    assert top(moved) > 0.0


@pytest.mark.parametrize("many", [False, True])
@pytest.mark.parametrize("event", [ApproxDPEvent(3 * 0.1, 1e-7), LaplaceEvent(1.0, 3 * 0.1)])
def test_the_pld_builds_each_end_from_its_own_cleared_pair(event, many, monkeypatch):
    """The PLD asks ``clear_of_grid`` for each end and builds that end from the pair returned, alone (the two
    ends of a moved pair come from different pairs, never from one grid computation). Seen through a stand-in
    that returns eps0 = 0.58 for the upper end and 0.05 for the lower one, in a history with a Gaussian release
    (mu = 0.1; alone the atom pairs' upper end is capped by their own eps0, Sec. 2.9): the upper end rises by
    more than 0.2 and the lower end falls by more than 0.1 (the moved atom's loss changes by 0.28 and 0.25 nats,
    against a grid of 0.1; were both ends built from one pair, one of the two would not move). ``many``: eight more
    (eps0, delta0) releases, away from grid points, so that the PLD builds both ends of a direction from one
    computation of its cells wherever it may (more than ``discretise.CELLS_KEPT`` factors)."""
    others = [ApproxDPEvent(0.013 * k, 0.0) for k in range(1, 9)] if many else []
    history = ComposedEvent([event, GaussianEvent(10.0), *others])
    low0, up0 = from_event(history, value_discretization=0.1).bracket(1e-5)
    real = B.clear_of_grid
    calls = []

    def stand_in(direction, h, upper):
        calls.append((type(direction).__name__, h, upper))
        if isinstance(direction, B.LaplacePair):
            return B.LaplacePair(0.58 if upper else 0.05)
        if isinstance(direction, B.ApproxDPPair):
            return B.ApproxDPPair(0.58 if upper else 0.05, direction.d0)
        return real(direction, h, upper)

    monkeypatch.setattr(B, "clear_of_grid", stand_in)
    low, up = from_event(history, value_discretization=0.1).bracket(1e-5)
    assert {c[2] for c in calls} == {True, False} and all(c[1] == 0.1 for c in calls)
    assert up > up0 + 0.2
    assert low < low0 - 0.1


def test_the_atom_pairs_evaluate_their_tails_in_float64():
    # the tails' error terms are derived for float64 arithmetic: a float32 grid is converted first (bitwise the
    # float64 tails); evaluated in float32 the tails moved by ~1e-8
    l32 = np.array([-0.25, -0.1, 0.0, 0.1, 0.25], dtype=np.float32)
    for pair in (B.LaplacePair(0.3), B.ApproxDPPair(0.3, 1e-6)):
        for a, b in zip(pair.tails(l32), pair.tails(l32.astype(np.float64))):
            np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("eps0, delta0", [(0.7, 0.0), (1.3, 1e-3)])
def test_approx_dp_pair_tails_are_its_closed_form(eps0, delta0):
    """The (eps0, delta0) pair's four tails (Kairouz, Oh & Viswanath 2015, Thm 2.4; binary randomized response with a
    delta0 flag at +inf): P-masses (1 - delta0) e^{eps0} / (1 + e^{eps0}) at +eps0 and (1 - delta0) / (1 + e^{eps0})
    at -eps0, Q the mirror image. At losses below, between and above the atoms each tail is its closed form within
    1e-15 relative, and P(L > l) + P(L <= l) = Q(L > l) + Q(L <= l) = 1 - delta0 (red when a tail is another's)."""
    pair = B.ApproxDPPair(eps0, delta0)
    hi = (1 - delta0) * math.exp(eps0) / (1 + math.exp(eps0))
    lo = (1 - delta0) / (1 + math.exp(eps0))
    ls = np.array([-2 * eps0, -eps0, 0.0, eps0, 2 * eps0])
    p_gt, p_le, q_gt, q_le = (np.exp(t) for t in pair.tails(ls))
    for i, l in enumerate(ls):
        want = (hi * (l < eps0) + lo * (l < -eps0), hi * (l >= eps0) + lo * (l >= -eps0),
                lo * (l < eps0) + hi * (l < -eps0), lo * (l >= eps0) + hi * (l >= -eps0))
        for got, w in zip((p_gt[i], p_le[i], q_gt[i], q_le[i]), want):
            assert got == pytest.approx(w, rel=1e-15, abs=0.0)
        assert p_gt[i] + p_le[i] == pytest.approx(1 - delta0, rel=1e-15)
        assert q_gt[i] + q_le[i] == pytest.approx(1 - delta0, rel=1e-15)
