"""Reinforcement-learning layer of privcal: environments, private agents and their experiments.

Submodules are imported on demand (``from privcal.rl import pucb``); this package imports nothing
heavy at import time.
DP Q-learning (Wang & Hegde 2019): ``envs``, ``mlp``, ``dpq_agent`` (Algorithm 1, certified updates),
``dpq_replay`` (the paper's experiment as its authors' code runs it; no valid guarantee), ``baselines``,
``experiments_dpq``.
PUCB (Vietri, Balle, Krishnamurthy & Wu 2020): ``tabular``, ``pucb`` (the agent),
``experiments_pucb``, ``plots_pucb``, ``checks_pucb`` (Monte Carlo checks).
GPOPE and its baselines: ``domains``, ``gpope_agent``, ``lstd``, ``mspbe``, ``experiments_gpope``.
Valid DP Q-learners on the interval environment (``envs``, also its random-peak variant): ``dpq_select``
(private selection, the reward-function unit), ``fqi_dpsgd`` (fitted-Q iteration by DP-SGD, the transition
or episode unit), ``learners`` (one run with its references and verdict).
Shared: ``units`` (privacy units: what one neighbouring change is), ``verdict`` (beats / does not beat /
cannot tell the trivial reference).
All three: ``frontier`` (privacy-utility frontier, valid and paper calibrations side by side).
"""
