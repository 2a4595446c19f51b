"""GPOPE (privcal.rl.gpope.agent) clips every gradient above h, including those between h and 2h.

The noise is h N(0, sigma^2 I) for a sensitivity of 2h between trajectories; a gradient left unclipped
above h breaks that sensitivity at the same noise.
"""

from __future__ import annotations

import numpy as np
import pytest

from privcal.rl.gpope.agent import gpope
from privcal.rl.gpope.domains.chain import sample_chain
from privcal.rl.gpope.domains.data import Dataset


def _one_trajectory():
    """A single chain trajectory (seed 0): 12 steps, one-hot features, rho = 1, reward 1 on the last step only."""
    d = sample_chain(1, np.random.default_rng(0))
    phi, _, rho, rew = d.trajectory_features(0)
    assert d.m == 1 and rew.size == 12 and rew.sum() == rew[-1] == 1.0 and np.all(rho == 1.0)
    return d


def test_a_gradient_between_h_and_2h_is_clipped_to_h():
    # At theta = w = 0, B(0, 0) = [0; -b] with b = sum_t rho_t r_t phi_t / tau = phi_last / 12 (GPOPE Eq. 4.1):
    # ||B|| = 1/12 (closed form). With h = (1/12) / 1.5 the gradient is 1.5 h, between h and 2h; one step of size
    # s = 0.5 without noise moves [theta; w] by s h exactly.
    d = _one_trajectory()
    h = (1.0 / 12.0) / 1.5
    res = gpope(d, sigma=0.0, clip=h, step_size=0.5, iterations=1, seed=0)
    moved = np.linalg.norm(np.concatenate([res.theta, res.w]))
    assert res.clipped_fraction == 1.0
    assert moved == pytest.approx(0.5 * h, rel=1e-12)


def test_a_gradient_at_most_h_is_not_clipped():
    # the same step with h = 1/12 * 1.5: ||B|| = h / 1.5 < h, the step is s ||B|| = 0.5 / 12 (closed form)
    d = _one_trajectory()
    res = gpope(d, sigma=0.0, clip=1.5 / 12.0, step_size=0.5, iterations=1, seed=0)
    assert res.clipped_fraction == 0.0
    assert np.linalg.norm(np.concatenate([res.theta, res.w])) == pytest.approx(0.5 / 12.0, rel=1e-12)


def test_each_iteration_draws_one_trajectory_uniformly():
    # 4 chain trajectories, rewards kept on the last one only: at theta = w = 0 its gradient has norm 1/tau > h =
    # 1e-3 (clipped) and the others' are 0; a step size of 1e-12 keeps theta and w within 1e-12 * 1e-3 * 4000 of 0,
    # so a step is clipped exactly when the last trajectory is drawn. The sampling rate priced is 1/m: the clipped
    # count is Binomial(4000, 1/4), mean 1000, sd 27.4; the bound +-137 is 5 sd.
    d = sample_chain(4, np.random.default_rng(0))
    keep = np.zeros_like(d.rewards)
    keep[d.offsets[3]:d.offsets[4]] = d.rewards[d.offsets[3]:d.offsets[4]]
    assert keep.sum() == 1.0
    d = Dataset(d.observations, d.next_observations, keep, d.terminated, d.rho, d.offsets, features=d.features,
                gamma=d.gamma)
    res = gpope(d, sigma=0.0, clip=1e-3, step_size=1e-12, iterations=4000, seed=0)
    assert abs(res.clipped_fraction * 4000 - 1000) <= 137


def test_a_finite_run_reports_not_diverged_and_a_callable_schedule_by_name():
    d = _one_trajectory()
    res = gpope(d, sigma=0.0, clip=1.0, step_size=0.5, iterations=3, seed=0)
    assert res.diverged is False and res.schedule == "constant"
    res = gpope(d, sigma=0.0, clip=1.0, step_size=0.5, iterations=3, seed=0, schedule=lambda i: 0.5)
    assert res.schedule == "callable"
