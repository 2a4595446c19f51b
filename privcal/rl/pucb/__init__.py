"""PUCB (Vietri, Balle, Krishnamurthy & Wu, ICML 2020): the private agent, its MDPs, experiments and checks.

Modules: ``agent`` (PUCB and PrivQ, :func:`run_pucb`, the counters' budget and error bound), ``tabular``
(tabular episodic MDPs, backward induction, episode sampling), ``episodes`` (the episode loop shared with
Private-UCB-VI, re-exported by ``agent``), ``experiments`` (regret experiments),
``plots`` (their figures; matplotlib imported lazily), ``checks`` (Monte Carlo checks of the counter and
PrivQ bounds, the collusion attack). The command line's glue is ``privcal.cli.pucb``.

The package re-exports the agent's public names and, imported on first use (so that importing the agent
imports no experiment, plot or check), the public names of ``experiments``, ``plots`` and ``checks`` listed in
``_LAZY``.
"""

from __future__ import annotations

import importlib
from typing import Any

from privcal.rl.pucb import agent as _agent
from privcal.rl.pucb.agent import *  # noqa: F401,F403  (the agent's public names, its __all__)

#: Names of ``experiments``, ``plots`` and ``checks`` importable from the package (imported on first use).
_LAZY = {
    "SETTINGS": "privcal.rl.pucb.experiments",
    "EPSILONS": "privcal.rl.pucb.experiments",
    "make_mdp": "privcal.rl.pucb.experiments",
    "RegretExperiment": "privcal.rl.pucb.experiments",
    "RegretSettings": "privcal.rl.pucb.experiments",
    "regret_experiment": "privcal.rl.pucb.experiments",
    "plot_regret": "privcal.rl.pucb.plots",
    "regret_figure": "privcal.rl.pucb.plots",
    "counter_error_check": "privcal.rl.pucb.checks",
    "pucb_error_bound_check": "privcal.rl.pucb.checks",
    "ErrorBoundCheckSettings": "privcal.rl.pucb.checks",
    "collusion_attack": "privcal.rl.pucb.checks",
}

__all__ = list(_agent.__all__) + [n for n in _LAZY if n != "regret_figure"]


def __getattr__(name: str) -> Any:
    """The names of ``_LAZY``, imported from their module on first use (PEP 562)."""
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
