"""Gymnasium's toy-text FrozenLake as exact finite-horizon MDPs, offline data and private offline learners.

* :mod:`privcal.rl.toytext.frozenlake`: gymnasium's fixed 4x4 map as an exact MDP, seeded offline episodes
  under a stated behaviour policy, and private selection over public candidate policies (``offline_select``);
* :mod:`privcal.rl.toytext.random_map`: the random-map environment (the map is the private part, drawn from a
  stated public prior) and its reference, the best data-independent policy of a stated class in expectation
  over the prior;
* :mod:`privcal.rl.toytext.fqi`: fitted-Q iteration by DP-SGD over users' episodes (episode unit);
* :mod:`privcal.rl.toytext.experiment`: one run of ``select`` or ``fqi-dpsgd`` on either environment, with
  its guarantee, references and verdict (what ``privcal train frozenlake`` and ``privcal frontier frozenlake``
  run).

Every public name of the submodules is importable from ``privcal.rl.toytext``.
"""

from privcal.rl.toytext.frozenlake import *  # noqa: F401,F403
from privcal.rl.toytext.frozenlake import __all__ as _frozenlake_all
from privcal.rl.toytext.random_map import *  # noqa: F401,F403
from privcal.rl.toytext.random_map import __all__ as _random_map_all
from privcal.rl.toytext.fqi import *  # noqa: F401,F403
from privcal.rl.toytext.fqi import __all__ as _fqi_all
from privcal.rl.toytext.experiment import *  # noqa: F401,F403
from privcal.rl.toytext.experiment import __all__ as _experiment_all

__all__ = list(_frozenlake_all) + list(_random_map_all) + list(_fqi_all) + list(_experiment_all)
