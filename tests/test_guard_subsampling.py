"""privcal.analysis.subsampling's GPOPE Lemma 1 (as printed) where the per-step loss is below float64's range."""

from __future__ import annotations

import numpy as np

from privcal.analysis import subsampling as S


def test_lemma1_at_a_noise_multiplier_of_1e200_is_0():
    # GPOPE Lemma 1: rdp(alpha) = alpha q^2 / 2 min{4 (e^{1/s^2} - 1), 2 e^{1/s^2}}; at s = 1e200, 1/s^2 = 1e-400
    # and the min is 4 (e^1e-400 - 1) = 4e-400 (closed form), so rdp(alpha) = 2 alpha q^2 1e-400: 0 in float64
    # (not alpha q^2, the other branch of the min)
    np.testing.assert_array_equal(S.rdp_gpope_lemma1_paper([2, 3, 10], 1e200, 0.1), 0.0)
    np.testing.assert_array_equal(S.rdp_gpope_lemma1_paper([2, 3, 10], 1e200, 1.0), 0.0)
