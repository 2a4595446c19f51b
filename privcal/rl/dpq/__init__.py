"""DP Q-learning (Wang & Hegde 2019) on the interval environment, and the valid DP Q-learners beside it.

Modules (imported on demand; this package imports nothing at import time):

* ``agent``: Algorithm 1 with certified updates (:func:`~privcal.rl.dpq.agent.train_dpq`);
* ``certificate``: the update certificate of the valid analysis (:func:`~privcal.rl.dpq.certificate.certified_step`);
* ``replay``: the paper's experiment as its authors' code runs it (no valid guarantee; a package split by
  job: ``config``, ``optimizers``, ``sampler``, ``loop``, ``experiments``, ``privacy``);
* ``baselines``: input perturbation, DP-SGD and white-noise output perturbation;
* ``experiments``: the paper's figures and sweeps over seeds;
* ``select`` (private selection, the reward-function unit), ``fqi_dpsgd`` (fitted-Q iteration by DP-SGD,
  the transition or episode unit) and ``learners`` (one run of either with its references and verdict).

Shared with the other families: ``privcal.rl.envs`` (the interval environment), ``privcal.rl.mlp``.
The command line's glue is ``privcal.cli.dpq``.
"""
