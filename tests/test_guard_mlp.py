"""The DP-Q update certificate (privcal.rl.mlp.unchecked_sup_difference_bound, used by
privcal.rl.dpq.agent.certified_step) keeps its rounding margin: the bound holds for the networks' exact values,
not only for their float64 evaluations.

Two constant networks (all weights 0, so the Lipschitz slack is 0) whose output biases differ by
c + 1e-17 in exact arithmetic: float64 rounds the difference to c, so without the margin the certificate
would accept a change larger than c.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from privcal.rl import mlp as M
from privcal.rl.dpq.agent import certified_step

C = 0.5
OLD = -1e-17  # the output bias before the step (a float64: its exact value is Fraction(OLD))


def _constant(bias: float) -> M.LipschitzMLP:
    net = M.LipschitzMLP((1, 2, 1), lipschitz=1.0, activation="relu", seed=0)
    for w, b in zip(net.weights, net.biases):
        w[...] = 0.0
        b[...] = 0.0
    net.biases[-1][...] = bias
    assert net.lipschitz_bound() == 0.0
    return net


def test_the_sup_bound_covers_a_difference_that_float64_rounds_down():
    first, second = _constant(C), _constant(OLD)
    grid = np.linspace(0.0, 1.0, 3)[:, None]
    np.testing.assert_array_equal(first(grid), C)  # 0 * relu(...) + bias: the biases, exactly
    exact = Fraction(C) - Fraction(OLD)
    assert float(np.abs(first(grid) - second(grid)).max()) == C < exact  # float64 rounds c + 1e-17 to c
    assert Fraction(M.sup_difference_bound(first, second, 3)) >= exact


def test_a_step_whose_exact_change_exceeds_the_clip_is_scaled_back():
    # the step moves the output bias from -1e-17 by +c: new bias fl(c - 1e-17) = c, an exact change of
    # c + 1e-17 > c. The certificate must not accept it whole; whatever factor it takes, the exact change of the
    # parameters it leaves is at most c.
    net = _constant(OLD)
    grads = [(np.zeros_like(w), np.zeros_like(b)) for w, b in zip(net.weights, net.biases)]
    grads[-1] = (grads[-1][0], np.array([-C]))
    factor, bound, _ = certified_step(net, grads, 1.0, C)
    assert factor < 1.0 and bound <= C
    assert abs(Fraction(float(net.biases[-1][0])) - Fraction(OLD)) <= Fraction(C)


def test_the_slope_bound_charges_both_networks_curvature():
    # f' of first - second is M-Lipschitz with M = curvature(first) + curvature(second): the bound is symmetric in
    # the two networks, and equals the grid kernel's with that sum (the cap 2 L does not bind on this fine grid)
    first = M.LipschitzMLP((1, 8, 2), lipschitz=1.0, activation="tanh", seed=1)
    second = M.LipschitzMLP((1, 8, 2), lipschitz=3.0, activation="tanh", seed=2)
    assert first.curvature_bound() != second.curvature_bound()
    grid = np.linspace(0.0, 1.0, 201)[:, None]
    want, _ = M.unchecked_slope_difference_bound(first.input_derivative(grid)[1], second.input_derivative(grid)[1],
                                                 first.curvature_bound() + second.curvature_bound(), 1 / 200, 4.0)
    assert M.slope_difference_bound(first, second, 201) == want < 4.0
    assert M.slope_difference_bound(second, first, 201) == pytest.approx(want, rel=1e-12)
