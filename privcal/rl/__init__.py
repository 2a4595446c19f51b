"""Reinforcement-learning layer of privcal: environments, private agents and their experiments.

Submodules are imported on demand (``from privcal.rl import pucb``); this package imports nothing
heavy at import time.
DP Q-learning (Wang & Hegde 2019): ``envs``, ``mlp``, ``dpq_agent`` (Algorithm 1, certified updates),
``dpq_replay`` (the paper's experiment as its authors' code runs it; no valid guarantee), ``baselines``,
``experiments_dpq``.
PUCB (Vietri, Balle, Krishnamurthy & Wu 2020): ``tabular``, ``pucb`` (the agent),
``experiments_pucb``, ``plots_pucb``, ``checks_pucb`` (Monte Carlo checks).
GPOPE and its baselines: ``domains``, ``gpope_agent``, ``lstd``, ``mspbe``, ``experiments_gpope``.
All three: ``frontier`` (privacy-utility frontier, valid and paper calibrations side by side).
"""
