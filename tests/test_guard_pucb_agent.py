"""PUCB (privcal.rl.pucb.agent) builds its Laplace counters at the per-counter epsilon of its budget split.

tests/test_pucb.py checks the split functions and the Gaussian counters; here the agent's own Laplace counters.
"""

from __future__ import annotations

import pytest

from privcal.analysis.counter import laplace_scale
from privcal.rl.pucb.agent import PUCB


@pytest.mark.parametrize("split, share", [("valid", 6.0), ("paper", 3.0)])
def test_laplace_counters_use_the_split_budget(split, share):
    # epsilon' = epsilon / (6H) (valid, VBKW Def. 3) or epsilon / (3H) (the paper's Alg. 2); every counter is a
    # binary mechanism over T = 50 rounds at epsilon', whose Laplace scale is privcal.analysis.counter.laplace_scale(T, eps')
    agent = PUCB(3, 2, 4, 50, epsilon=2.0, seed=0, budget_split=split)
    eps_counter = 2.0 / (share * 4)
    assert agent.counter_epsilon == pytest.approx(eps_counter, rel=1e-15)
    assert agent.jdp_epsilon == pytest.approx(6 * 4 * eps_counter, rel=1e-15)  # 2 (valid) or 4 (paper)
    for counter in agent.counters.values():
        assert counter.laplace_scale == pytest.approx(laplace_scale(50, eps_counter), rel=1e-15)
    assert agent.noise_scale == agent.counters["counts"].laplace_scale


def test_a_laplace_agent_has_no_counter_sigma():
    # only Gaussian counters have a sigma; the Laplace agent's noise is its counters' Laplace scale
    agent = PUCB(3, 2, 4, 50, epsilon=2.0, seed=0)
    assert agent.counter_sigma is None and agent.jdp_delta == 0.0
