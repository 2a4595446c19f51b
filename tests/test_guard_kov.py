"""Basic composition (privcal.analysis.kov.basic_epsilon, Dwork & Roth 2014, Thm 3.16) refuses k delta0 > delta.

tests/test_kov.py refuses k delta0 = 10 delta; a check that let k delta0 through up to twice delta would pass
it. Here delta0 lies between delta / k and 2 delta / k, and at the boundary k delta0 = delta.
"""

from __future__ import annotations

import pytest

from privcal import InfeasibleError
from privcal.analysis import kov as K


@pytest.mark.parametrize("delta0", [1.5e-3, 1.01e-3, 1.99e-3])
def test_per_step_delta_between_delta_over_k_and_twice_that_is_refused(delta0):
    # k = 10, delta = 1e-2: k delta0 in (delta, 2 delta); (k eps0, k delta0) is the theorem's guarantee, whose
    # delta exceeds the target: no epsilon can be claimed at delta = 1e-2
    with pytest.raises(InfeasibleError, match="basic composition needs k\\*delta0 <= delta"):
        K.basic_epsilon(0.1, delta0, steps=10, delta=1e-2)


def test_per_step_delta_at_delta_over_k_is_accepted():
    # k delta0 = delta exactly (10 * 0.001 == 0.01 in float64): Thm 3.16 gives (k eps0, delta), eps = 10 * 0.1
    assert 10 * 1e-3 == 1e-2
    assert K.basic_epsilon(0.1, 1e-3, steps=10, delta=1e-2) == pytest.approx(1.0, rel=1e-15)
