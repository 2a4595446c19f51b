"""Reinforcement-learning layer of privcal: environments, private agents and their experiments.

Submodules are imported on demand (``from privcal.rl import pucb``); this package imports nothing
heavy at import time.
"""
