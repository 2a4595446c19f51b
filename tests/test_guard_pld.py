"""The PLD accountant's cap for (epsilon, delta0)-DP histories (privcal.privacy_loss, ``_pure_cap``) keeps its
rounding margin on the mass at +inf.

k (eps0, delta0)-DP steps have P-mass 1 - (1 - delta0)^k at loss +inf; for every delta below it no finite
epsilon holds. float64 rounds that mass, here downwards: at delta one float step below the true mass, the
rounded mass is <= delta and a cap without margin answers k eps0.
"""

from __future__ import annotations

import math

import mpmath as mp

from privcal import ApproxDPEvent, PLDAccountant, SelfComposedEvent

K, EPS0, DELTA0 = 7, 1.0, 1e-3


def _true_inf_mass() -> mp.mpf:
    """1 - (1 - delta0)^k at 50 digits (delta0 = 1e-3 as the float64 the event holds)."""
    with mp.workdps(50):
        return 1 - (1 - mp.mpf(DELTA0)) ** K


def _epsilon(delta: float) -> float:
    return PLDAccountant().compose(SelfComposedEvent(ApproxDPEvent(EPS0, DELTA0), K)).epsilon(delta)


def test_delta_one_float_step_below_the_inf_mass_has_no_finite_epsilon():
    true = _true_inf_mass()
    below = float(true)
    if mp.mpf(below) >= true:
        below = math.nextafter(below, 0.0)
    assert mp.mpf(below) < true < mp.mpf(math.nextafter(below, 1.0))  # the largest float below the true mass
    # float64's own evaluation of the mass rounds to this very float: no margin, and it would pass for delta
    assert -math.expm1(K * math.log1p(-DELTA0)) <= below
    assert _epsilon(below) == math.inf


def test_delta_just_above_the_inf_mass_has_the_finite_epsilon_k_eps0():
    # delta = 1.000000001 x the mass: the true delta(E) at E = k eps0 = 7 is the +inf mass alone (no finite loss
    # exceeds 7), so the true epsilon is <= 7; the P-mass at loss 7 is ((1 - delta0) e / (1 + e))^7 = 0.111, so
    # delta(eps) >= mass + 0.111 (1 - e^(eps - 7)) and the true epsilon is above 7 - 7e-11 (closed form). The
    # certified answer is finite, at most 7 and at least the truth.
    delta = float(_true_inf_mass()) * (1 + 1e-9)
    assert 7.0 - 7e-11 < _epsilon(delta) <= 7.0


def test_span_dipoles_of_wide_cells_by_hand():
    # docs/pld.md Sec. 2.3 "Coarse tails": point j's error patterns make at most
    #   K1 (pe + te / (1 - e^-w1)) + K2 (te + split) / (1 - e^-w2)
    # unit dipoles, K1 = w1 / h and K2 = w2 / h the widths in lattice steps of the cells below and above it (K1 = 1
    # below the first point, K2 = 0 above the last), te = pe + qe, split = SPLIT_REL u (p + rt) of the cell above
    # (p, rt its P- and e^g Q-mass; none above the last point). Three points, cells 2 and 3 steps wide, h = 0.1:
    # evaluated here term by term.
    import numpy as np

    from privcal.privacy_loss import discretise as B

    h = 0.1
    pe, qe = np.array([[1e-3, 2e-3, 3e-3]]), np.array([[4e-3, 5e-3, 6e-3]])
    p, rt = np.array([[0.2, 0.3]]), np.array([[0.1, 0.2]])
    got = B.span_dipoles(pe, qe, p, rt, np.array([[2 * h, 3 * h]]), h)[0]
    k1, k2 = [1.0, 2.0, 3.0], [2.0, 3.0, 0.0]
    for j in range(3):
        te = pe[0, j] + qe[0, j]
        split = B.SPLIT_REL * B.U * (p[0, j] + rt[0, j]) if j < 2 else 0.0
        want = k1[j] * (pe[0, j] + te / -math.expm1(-k1[j] * h))
        if k2[j]:
            want += k2[j] * (te + split) / -math.expm1(-k2[j] * h)
        assert want <= got[j] <= want * (1 + 1e-12)  # the rounding allowances only raise it


def test_span_dipoles_are_never_below_their_formula_in_exact_arithmetic():
    # The formula of test_span_dipoles_of_wide_cells_by_hand evaluated in float64 rounds down about as often as
    # up; span_dipoles multiplies its float sum by (1 + 8u), which covers the count of its roundings along the
    # longest path (docs/pld.md Sec. 2.3 "Coarse tails": 1 - e^-w by expm1 within 1 ulp (2u), the division,
    # te + split, the product, the two sums: 7u). Here the formula is evaluated at 40 digits (mpmath) for
    # 400 random cells of 1..64 lattice steps and random errors and masses (seed fixed): span_dipoles is at
    # least the exact value at every point. Red when the (1 + 8u) factor is removed: float64 then lands below
    # the exact value at about half of the points.
    import numpy as np

    from privcal.privacy_loss import discretise as B

    rng = np.random.default_rng(20261128)
    n, h = 400, 2.0**-10
    pe = 10.0 ** rng.uniform(-18, -10, size=(n, 3))
    qe = 10.0 ** rng.uniform(-18, -10, size=(n, 3))
    p = 10.0 ** rng.uniform(-9, -2, size=(n, 2))
    rt = p * rng.uniform(0.1, 1.0, size=(n, 2))
    widths = rng.choice([1.0, 2.0, 4.0, 16.0, 64.0], size=(n, 2)) * h
    got = B.span_dipoles(pe, qe, p, rt, widths, h)
    with mp.workdps(40):
        u, rel = mp.mpf(B.U), mp.mpf(B.SPLIT_REL)
        for i in range(n):
            k = [mp.mpf(1)] + [mp.mpf(float(w)) / mp.mpf(h) for w in widths[i]] + [mp.mpf(0)]
            for j in range(3):
                te = mp.mpf(float(pe[i, j])) + mp.mpf(float(qe[i, j]))
                want = k[j] * (mp.mpf(float(pe[i, j])) + te / -mp.expm1(-k[j] * h))
                if k[j + 1]:
                    split = rel * u * (mp.mpf(float(p[i, j])) + mp.mpf(float(rt[i, j])))
                    want += k[j + 1] * (te + split) / -mp.expm1(-k[j + 1] * h)
                assert mp.mpf(float(got[i, j])) >= want, (i, j)
