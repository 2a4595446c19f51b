"""Reinforcement-learning layer of privcal: environments, private agents and their experiments.

One subpackage per algorithm family, each with its agent and experiments (its command-line glue is the
module of the same name in ``privcal.cli``), and the pieces they share. Submodules are imported on demand
(``from privcal.rl.dpq import agent``); this package imports nothing heavy at import time.

* ``dpq``: DP Q-learning (Wang & Hegde 2019) on the interval environment: ``dpq.agent`` (Algorithm 1,
  certified updates), ``dpq.replay`` (the paper's experiment as its authors' code runs it; no valid
  guarantee), ``dpq.baselines``, ``dpq.experiments``; and the valid DP Q-learners: ``dpq.select``
  (private selection, the reward-function unit), ``dpq.fqi_dpsgd`` (fitted-Q iteration by DP-SGD, the
  transition or episode unit), ``dpq.learners`` (one run with its references and verdict).
* ``gpope``: GPOPE and its baselines: ``gpope.agent``, ``gpope.lstd``, ``gpope.mspbe``, ``gpope.domains``,
  ``gpope.experiments``.
* ``pucb``: PUCB (Vietri, Balle, Krishnamurthy & Wu 2020): ``pucb.agent`` (whose public names the package
  re-exports), ``pucb.tabular``, ``pucb.experiments``, ``pucb.plots``, ``pucb.checks`` (Monte Carlo checks).
* ``ucbvi``: Private-UCB-VI (Chowdhury & Zhou 2022), a tabular joint-DP learner on privcal's counters:
  ``ucbvi.agent``, ``ucbvi.experiments`` (regret over seeds beside PUCB; it runs on PUCB's tabular MDPs).
* ``toytext``: Gymnasium's FrozenLake as an exact finite-horizon MDP, seeded offline data and an offline
  private selection learner (the episode unit); it uses ``pucb.tabular`` and ``dpq.select``.
* shared (they import no family): ``envs`` (the interval environment, also its random-peak variant),
  ``mlp`` (the Lipschitz MLP), ``units`` (privacy units: what one neighbouring change is), ``verdict``
  (beats / does not beat / cannot tell the trivial reference), ``parallel`` (the parallel runner of
  every sweep); the progress bar is the command line's (``privcal.cli.progress``).
* all three families: ``frontier`` (privacy-utility frontier, valid and paper calibrations side by side).

The flat module paths of 0.1 (``privcal.rl.dpq_agent``, ``privcal.rl.experiments_pucb``, ...) still
import, with a DeprecationWarning, until 0.3.0: they are the same module objects as their new homes
(``privcal/__init__.py`` keeps the one table of moved modules).
"""
