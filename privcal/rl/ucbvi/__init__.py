"""Private-UCB-VI (Chowdhury & Zhou 2021): a joint-DP tabular learner on privcal's counters, and its experiments.

Modules: ``agent`` (the agent and :func:`run_ucbvi`; it re-exports the public names of ``bounds``), ``bounds``
(the confidence log, the counters' noise scale and error bound, the valid bonus, the optimistic Q), ``experiments``
(regret over seeds with a 95 % Student-t interval, against the uniform policy and PUCB at the same epsilon). The
tabular MDPs are ``privcal.rl.pucb.tabular``'s; FrozenLake is ``privcal.rl.toytext``.
"""

from __future__ import annotations

from privcal.rl.ucbvi import agent as _agent
from privcal.rl.ucbvi.agent import *  # noqa: F401,F403  (the agent's public names, its __all__)

__all__ = list(_agent.__all__)
