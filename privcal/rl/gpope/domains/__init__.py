"""Domains for off-policy evaluation: the chain, Mountain Car (Gymnasium dynamics), the HIV simulator.

Submodules: :mod:`.data` (trajectories, importance ratios, validation), :mod:`.features` (one-hot,
Fourier basis, grid aggregation), :mod:`.policies` (linear-Q policies, Q-learning, batched data
collection), :mod:`.chain`, :mod:`.mountain_car`, :mod:`.hiv`. Nothing heavy is imported here:
gymnasium is imported only when the Mountain Car domain is built.
"""

from privcal.rl.gpope.domains.data import Dataset, Trajectory, importance_ratios

__all__ = ["Dataset", "Trajectory", "importance_ratios"]
