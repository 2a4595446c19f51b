"""Exact Gaussian-process noise with kernel sigma^2 exp(-beta |x - y|): Ornstein-Uhlenbeck paths.

``OrnsteinUhlenbeckPath`` reveals one path lazily at arbitrary query points (Wang & Hegde 2019,
Prop. 9, with the conditional laws derived in ``laws``); ``OrnsteinUhlenbeckPaths`` holds one
independent path per action (``ou``, the sampler, keeps each path's values in the sorted chunked
store of ``store``); ``sample_ou_grid`` / ``max_bracket`` (``grid``) are Monte Carlo helpers.
"""

from privcal.analysis.noise.grid import max_bracket, sample_ou_grid
from privcal.analysis.noise.laws import bridge_law, conditional_law, eq2_paper, ou_covariance, step_law
from privcal.analysis.noise.ou import OrnsteinUhlenbeckPath, OrnsteinUhlenbeckPaths

__all__ = [
    "OrnsteinUhlenbeckPath",
    "OrnsteinUhlenbeckPaths",
    "ou_covariance",
    "bridge_law",
    "step_law",
    "conditional_law",
    "eq2_paper",
    "sample_ou_grid",
    "max_bracket",
]
