"""privcal._rng: the one seeding helper."""

import numpy as np
import pytest

from privcal import _rng


def test_int_sequence_and_seedsequence_seeds_match_numpy():
    # the same seed material gives numpy's own stream (default_rng), whatever form it arrives in
    assert _rng.as_generator(7).random() == np.random.default_rng(7).random()
    assert _rng.as_generator([7, 2]).random() == np.random.default_rng([7, 2]).random()
    ss = np.random.SeedSequence(7)
    assert _rng.as_generator(ss).random() == np.random.default_rng(np.random.SeedSequence(7)).random()


def test_generator_is_used_as_is():
    g = np.random.default_rng(0)
    assert _rng.as_generator(g) is g


@pytest.mark.parametrize("bad", [-1, True, 1.5, "3", [], [1, -2], [1.0]])
def test_bad_seed_names_the_argument(bad):
    with pytest.raises(ValueError, match="^rng must be None"):
        _rng.as_generator(bad, "rng")


def test_spawn_is_reproducible_and_independent():
    a = [g.random() for g in _rng.spawn(3, 4)]
    b = [g.random() for g in _rng.spawn(3, 4)]
    assert a == b
    assert len(set(a)) == 4
