"""privcal.accounting.realisable's lower bound of composed pairs takes the grid it is given."""

from __future__ import annotations

import math

from privcal.analysis import gaussian
from privcal.accounting.realisable import MixturePair, epsilon_lower_of_pairs


def test_a_given_grid_gives_a_lower_bound_close_to_the_exact_gaussian():
    # N(1, 4) against N(0, 4), composed 10 times: a Gaussian with mu = sqrt(10) / 2 (closed form), whose exact
    # epsilon at delta = 1e-5 is Balle & Wang's (2018, Thm 8). The lower bound on a given grid of 1e-3 nats is
    # at most that and, the grid being fine, within 2 % of it; a coarser grid lowers it.
    pair = MixturePair((1.0,), (1.0,), (1.0,), (0.0,), 2.0, "one Gaussian shift by the sensitivity")
    exact = gaussian.epsilon_exact(1e-5, math.sqrt(10) / 2)
    fine = epsilon_lower_of_pairs({pair: 10}, 1e-5, value_discretization=1e-3)
    coarse = epsilon_lower_of_pairs({pair: 10}, 1e-5, value_discretization=0.1)
    assert 0.98 * exact <= fine <= exact
    assert coarse < fine


def test_the_fewest_bins_accepted_is_100():
    # the documented range of ``bins`` is an integer >= 100: 100 is accepted, 99 refused with the range named
    import pytest

    pair = MixturePair((1.0,), (1.0,), (1.0,), (0.0,), 2.0, "one Gaussian shift by the sensitivity")
    assert 0.0 <= epsilon_lower_of_pairs({pair: 10}, 1e-5, value_discretization=0.1, bins=100)
    with pytest.raises(ValueError, match="bins must be an integer >= 100, got 99"):
        epsilon_lower_of_pairs({pair: 10}, 1e-5, value_discretization=0.1, bins=99)
