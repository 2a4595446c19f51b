"""Privacy units: what one neighbouring change is, for every trainer, frontier point and report.

A differential-privacy guarantee is a statement about two runs on neighbouring data; what "neighbouring"
means is part of the guarantee. privcal's RL layer names it with one of :data:`PRIVACY_UNITS` and puts
the name (``privacy_unit``) and its description in every JSON output.

* ``"reward-function"``: the reward function is replaced by another with |r - r'|_inf <= 1 (Wang & Hegde
  2019, Sec. 3). The interval environment's rewards lie in [0, 0.5], so *every* two reward functions are
  neighbours: the guarantee covers any change of the data, and no amount of data lowers the sensitivity.
  Packing lower bound: take K reward functions r_1..r_K whose near-optimal policy sets S_1..S_K are
  pairwise disjoint (K peaks far enough apart), and a learner that outputs a policy in S_j with
  probability >= p when the reward is r_j. (epsilon, delta)-DP gives P_1(S_j) >= e^-epsilon (P_j(S_j) -
  delta) >= e^-epsilon (p - delta), and the S_j are disjoint, so 1 >= sum_j P_1(S_j) >= K e^-epsilon
  (p - delta): p <= e^epsilon / K + delta, i.e. success needs epsilon >= ln(K (p - delta)), which grows
  like ln K. ``privcal.rl.dpq.select`` meets this scale.
* ``"transition"``: one transition (s, a, r, s') added to or removed from the data set (add/remove
  neighbours, the relation of Poisson sampling).
* ``"episode"``: one episode (one user's whole trajectory of transitions) added or removed, or, for PUCB,
  replaced (joint DP under continual observation: one user = one episode).
* ``"trajectory"``: one trajectory of the off-policy data set replaced by another (GPOPE).
"""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["PRIVACY_UNITS", "describe", "check_unit"]

#: unit -> what one neighbouring change touches (every report prints it; the guarantee says whether the record
#: is added/removed or replaced).
PRIVACY_UNITS = {
    "reward-function": ("the reward function, replaced by any other with |r - r'|_inf <= 1 (Wang & Hegde 2019); "
                        "rewards here lie in [0, 0.5], so every two reward functions are neighbours: any change "
                        "of the data"),
    "transition": "one transition (s, a, r, s')",
    "episode": "one episode (one user's trajectory of transitions)",
    "trajectory": "one trajectory of the data set",
}


def describe(unit: str) -> str:
    """The sentence that says what one neighbouring change is under ``unit``.

    Args:
        unit: one of :data:`PRIVACY_UNITS`.

    Raises:
        ValueError: an unknown unit.
    """
    if unit not in PRIVACY_UNITS:
        raise ValueError(f"privacy_unit must be one of {tuple(PRIVACY_UNITS)}, got {unit!r}")
    return PRIVACY_UNITS[unit]


def check_unit(unit: str, protected: Iterable[str], method: str) -> str:
    """``unit`` if ``method`` protects it; a one-line ``ValueError`` naming what it does protect otherwise.

    Args:
        unit: the requested privacy unit.
        protected: the units the method's guarantee covers.
        method: the method's name, for the message.

    Raises:
        ValueError: ``unit`` is unknown or not protected by ``method``.
    """
    describe(unit)
    allowed = tuple(protected)
    if unit not in allowed:
        raise ValueError(f"privacy_unit {unit!r} is not protected by {method} (it protects: {', '.join(allowed)})")
    return unit
