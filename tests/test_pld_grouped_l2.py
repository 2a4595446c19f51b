"""The l2 form of the input-error charge for a composition of many distinct factors (``convolve.grouped_l2``,
docs/pld.md Sec. 2.10): every telescoping term P_m of the groups' composition has ||P_m||_2 at most the second least
||x^_g||_2 + l1_g over the groups times the growth (Young's inequality), so ``local_err`` can charge each input-error
pattern by Cauchy-Schwarz against the weight's l2 norms where that is smaller than the S-proportional form.

Expected values: exact convolutions of small PMFs (numpy on floats, far inside the margins asserted), and the
S-proportional form of the same composition."""

from __future__ import annotations

import math

import numpy as np

from privcal.privacy_loss import convolve as C
from privcal.privacy_loss import discretise as B


def _l2(v: np.ndarray) -> float:
    return float(np.sqrt(np.sum(v * v)))


def _peaked(mass: np.ndarray, l1: float) -> np.ndarray:
    """The PMF within l1 of ``mass`` with the largest l2 norm that moves l1 / 2 of its mass onto its largest atom."""
    x = mass * (1.0 - l1 / 2)
    x[int(np.argmax(mass))] += l1 / 2
    assert np.abs(x - mass).sum() <= l1 * (1 + 1e-12)
    return x


def test_grouped_l2_bounds_every_telescoping_term():
    """Four factors: A spread over 5000 atoms (least l2), Z over 2000 atoms (second least, declared l1 = 0.1) and two
    single atoms (l2 = 1). Every P_m (the computed PMFs before m, the exact ones after it, in both orders of the
    factors) has ||P_m||_2 <= grouped_l2, the exact Z being the most peaked within its l1 (the single atoms only shift
    it, so Young's inequality is attained for m = A). Red when the bound takes the least norm instead of the second
    (P_A holds Z, not A), or leaves l1 out (the exact Z is more peaked than the computed one)."""
    a = np.full(5000, 1 / 5000)
    z = np.full(2000, 1 / 2000)
    d = np.array([1.0])
    pa = B.Pmf(0, a, 0.0, 0.25)
    pz = B.Pmf(3, z, 0.0, 0.25, err_mass=0.1)
    p1, p2 = B.Pmf(-2, d, 0.0, 0.25), B.Pmf(7, d.copy(), 0.0, 0.25)
    level2 = [(pa, 1), (pz, 1), (p1, 1), (p2, 1)]
    growth = C.local_terms(level2)[3]
    bound = C.grouped_l2(level2, growth)
    computed = [a, z, d, d]
    exact = [a, _peaked(z, 0.1), d, d]
    worst = 0.0
    for order in (list(range(4)), list(range(4))[::-1]):
        for i, m in enumerate(order):
            P = np.array([1.0])
            for g in order[:i]:
                P = np.convolve(P, computed[g])
            for g in order[i + 1:]:
                P = np.convolve(P, exact[g])
            worst = max(worst, _l2(P))
    assert worst <= bound * (1 - 1e-3)
    assert worst >= _l2(_peaked(z, 0.1)) * (1 - 1e-12)  # m = A attains ||exact Z||_2
    assert bound <= 3 * worst  # and not far above (l1 added in full: 0.022 + 0.1 against 0.055 attained)


def test_grouped_l2_carries_the_other_factors_growth():
    """The same four factors, Z now exact (l1 = 0) and the second single atom's exact PMF 1.3 times its computed one
    (declared l1 = 0.3: mass added): P_A = Z * 1.3 delta has ||P_A||_2 = 1.3 ||Z||_2, within grouped_l2 = ||Z||_2
    e^{0.3}. Red when the growth factor is left out of the bound."""
    a = np.full(5000, 1 / 5000)
    z = np.full(2000, 1 / 2000)
    d = np.array([1.0])
    level2 = [(B.Pmf(0, a, 0.0, 0.25), 1), (B.Pmf(3, z, 0.0, 0.25), 1), (B.Pmf(-2, d, 0.0, 0.25), 1),
              (B.Pmf(7, d.copy(), 0.0, 0.25, err_mass=0.3), 1)]
    bound = C.grouped_l2(level2, C.local_terms(level2)[3])
    P = np.convolve(np.convolve(z, d), 1.3 * d)  # m = A: every other factor exact
    assert _l2(P) <= bound * (1 - 1e-3)
    assert bound <= 1.1 * _l2(P)


def test_grouped_l2_counts_a_repeated_factor_twice_and_refuses_what_it_cannot_bound():
    """A factor with count n >= 2 is its own other factor (its norm can be the second least); one factor alone, a
    negative mass or an infinite growth: None (the S-proportional form is charged)."""
    a = np.full(100, 1 / 100)
    pa = B.Pmf(0, a, 0.0, 0.25)
    pd = B.Pmf(0, np.array([1.0]), 0.0, 0.25)
    assert C.grouped_l2([(pa, 2), (pd, 1)], 1.0) <= _l2(a) * (1 + 1e-9)
    assert C.grouped_l2([(pa, 1)], 1.0) is None
    assert C.grouped_l2([(pa, 1), (B.Pmf(0, np.array([0.5, -1e-3, 0.5]), 0.0, 0.25), 1)], 1.0) is None
    assert C.grouped_l2([(pa, 1), (pd, 1)], math.inf) is None


def _history(k: int, q: float, h: float):
    """k distinct subsampled Gaussian steps (sigma 1.0 .. 1.0 + 0.001 (k - 1)), 10 steps each, upper PMFs on h."""
    ds = [B.SubsampledGaussianPair(1.0 + 0.001 * i, q).directions()[0] for i in range(k)]
    return [(p, 10) for p in B.pmfs_many(ds, h, ends=(True,), tail=1e-18, per_atom=False)[True]]


def test_grouped_l2_form_decides_for_a_heavy_history_at_small_delta():
    """q = 1e-3, 100 distinct factors of 10 steps (grouped), tilted for delta = 1e-12: at the epsilon found the input-
    error charge in the l2 form is at least 3x below the S-proportional form (4x here: the groups' results spread
    over ~100 cells, ||x^_g||_2 ~ 0.07 against their l1 norm ~1), and the slack charges it. Red when the tilted composition
    drops the grouped local_l2 (the S-proportional form alone, as before)."""
    factors = _history(100, 1e-3, 2.0**-12)
    c = C.compose(factors, tilt=C.choose_tilt(factors, delta=1e-12))
    assert c.local_l2 is not None and c.tilt > 0
    eps = C.epsilon_for(c, 1e-12)
    assert C.local_err(c, eps) * 3 <= C.local_err(c, eps, weighted=False)


def test_a_tilted_grouped_composition_with_the_l2_form_covers_the_exact_delta(monkeypatch):
    """12 distinct factors grouped (GROUP_MIN lowered to 4: 4 groups of 3), each computed PMF declaring err_mass = 2e-4
    and the exact one moving 1e-4 of its mass from its lowest atom to its highest (the non-local error that raises
    delta most), composed tilted: at every epsilon tried the exact delta (exact convolutions) lies within the slack of
    the computed one, while the l2 form decides the input-error charge at some of them (Sec. 2.4, 2.10)."""
    monkeypatch.setattr(C, "GROUP_MIN", 4)
    rng = np.random.default_rng(2)
    factors, exact = [], []
    for i in range(12):
        mass = rng.random(30) ** 2
        mass /= mass.sum()
        factors.append((B.Pmf(-10 + i % 3, mass, 0.0, 0.05, err_mass=2e-4), 1))
        x = mass.copy()
        x[0] -= 1e-4
        x[-1] += 1e-4
        exact.append(x)
    y = np.array([1.0])
    for x in exact:
        y = np.convolve(y, x)
    offset = sum(p.offset for p, _ in factors)
    losses = (offset + np.arange(y.size)) * 0.05
    c = C.compose(factors, tail=1e-30, tilt=0.05)
    assert c.local_l2 is not None
    used = False
    for eps in (0.5, 1.0, 2.0, 3.0, 4.0):
        exact_delta = float(np.sum(y[losses > eps] * -np.expm1(eps - losses[losses > eps])))
        assert abs(C.delta_at(c, eps) - exact_delta) <= C.slack(c, eps), eps
        used |= C.local_err(c, eps) < C.local_err(c, eps, weighted=False)
    assert used
