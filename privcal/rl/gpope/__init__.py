"""GPOPE (private off-policy evaluation by GTD2 with Gaussian noise) and its baselines.

Modules (imported on demand; this package imports nothing at import time): ``agent`` (GPOPE, Alg. 1),
``lstd`` (LSTD, WIS-LSTD, DP-LSW and DP-LSL), ``mspbe`` (the metric), ``domains`` (40-state chain,
Mountain Car, HIV treatment; trajectories and features) and ``experiments`` (the paper's figures).
The command line's glue is ``privcal.cli.gpope``.
"""
