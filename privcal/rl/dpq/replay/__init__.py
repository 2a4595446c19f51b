r"""The DP-Q-learning experiment of Wang & Hegde as its authors' code runs it (Figure 1), no valid guarantee.

The workshop version of *Private Q-Learning with Functional Noise in Continuous Spaces* links the
authors' code (public repository ``wangbx66/differentially-private-q-learning``, ``dpql.py`` run over
sigma in {0, 0.2, ..., 1.0} and seeds 0..9 by ``loop.py``). That code is a DQN-style loop, not
Algorithm 1 as written. This module runs that loop on privcal's interval environment
(``privcal.rl.envs.IntervalEnv``, App. E.1: the same dynamics, with the actions' directions swapped,
which is a relabelling of a symmetric task), in numpy, deterministic under a seed; and
:func:`replay_privacy_report` computes what a valid privacy analysis of the loop would have to
account for, and which of its premises fail.

**There is no valid privacy guarantee for this loop** (``ReplayResult.guarantee`` says so; the
reasons are computed by :func:`replay_privacy_report`). Use ``privcal.rl.dpq.agent`` for Algorithm 1.

Where the authors' code departs from Algorithm 1's text (pseudo-code says X; code does Y; we do Y):

* Data: pseudo-code trains on each batch of B fresh samples once (floor(T/B) updates); code keeps
  every transition in a replay buffer (capacity 10,000 > T = 5,000, so nothing is evicted) and, from
  the step the buffer holds B = 128 transitions on, takes one optimiser step per environment step on
  B transitions drawn uniformly without replacement from the whole buffer (T - B + 1 = 4,873
  updates for 100 episodes of 50 steps); so does :func:`train_replay` (``buffer_size``, ``batch_size``).
* Optimiser: pseudo-code takes a plain gradient step with alpha = 3e-4; code uses PyTorch's RMSprop
  with its defaults (lr = 1e-2, smoothing 0.99, offset 1e-8, no momentum) after clamping every
  gradient coordinate to [-1, 1]; we do the same (``optimizer``: "rmsprop", "adam" or "sgd", with
  PyTorch's update rules; ``grad_clamp``).
* Loss: pseudo-code's squared error; code's Huber loss (PyTorch ``smooth_l1_loss``, threshold 1),
  averaged over the batch; we do the same (``huber_threshold``).
* Target: pseudo-code bootstraps from the current Q; code from a target network copied from the
  policy network after episodes 0, 10, 20, ...; we do the same (``target_update``, in episodes).
  gamma = 0.999 (code); the 50th step of an episode is treated as terminal (its target is the reward
  alone, code), ``bootstrap_last=False``.
* Network: pseudo-code's Q is L-Lipschitz in the state (the analysis needs it); code's is an
  unconstrained 1-16-16-2 ReLU network with PyTorch's default initialisation (weights and biases
  U(-1/sqrt(fan_in), 1/sqrt(fan_in))); we do the same (``privcal.rl.mlp.LipschitzMLP`` for the forward
  and backward passes, its bound set to the largest float so it never projects).
* Exploration: code acts epsilon-greedily with a rate decaying from 0.9 to 0.05 as
  0.05 + 0.85 exp(-t/200) over environment steps t; we do the same (``exploration_*``).
* Noise: pseudo-code calibrates sigma, k and beta = 1/v from Theorem 5 (beta in the thousands) and
  redraws the path J times; code sets sigma by hand (0.2 .. 1.0), uses the kernel exp(-|x - y|)
  (beta = 1) and draws a new path, lazily at the queried states, for every episode. We do the same
  with privcal's exact Ornstein-Uhlenbeck paths (``privcal.analysis.noise.OrnsteinUhlenbeckPaths``, one
  path per action; ``beta``, ``sigma``, ``noise_reset``), revealed at every buffered state when a
  path is drawn rather than at the queried ones only: the values used have the same joint law.
* Where the noise enters: code adds the policy network's path g_a(s) to its output *everywhere* the
  network is called: in the action choice (argmax_a Q(s, a) + g_a(s)), in the prediction inside the
  loss (Q(s_i, a_i) + g_{a_i}(s_i)), and the target network adds its *own, independent* path
  h_a to the target (r_i + gamma max_a [Q'(s'_i, a) + h_a(s'_i)]); both paths are redrawn after every
  episode. The noise never touches the parameters: it only shifts the residual inside the Huber loss.
  We do the same.
* Code's lazy sampler extrapolates to the right of the largest sampled state from the *smallest*
  one's value (``buffer[0]`` for ``buffer[-1]``), so its values are not exactly the stated Gaussian
  process; by default (``sampler="privcal"``) we sample the process exactly (privcal's paths), which is
  what the paper states. ``sampler="authors"`` reproduces the authors' experimental loop instead of the
  paper: :class:`AuthorsNoiseSampler`, queried lazily in the code's order (the action's state, then the
  batch's states for the policy network, then the live next states for the target network), whose law
  depends on that order.
* sigma = 0 is the non-private run (code skips the noise when sigma = 0).

Randomness: ``privcal._rng.spawn(seed, 5)`` gives independent streams for the environment, the
initial weights, the replay sampling, the exploration and the noise paths; same seed, same returns.
The references (:func:`reference_returns`): the move-to-the-middle policy and the uniformly random
policy, by Monte Carlo on the same dynamics.

The package is split by job (its names are importable from here): ``config`` (:class:`ReplayConfig`, the
labels and Figure 1's sizes), ``optimizers`` (the Huber loss and PyTorch's update rules), ``sampler`` (the
two networks' noise: exact OU paths, or :class:`AuthorsNoiseSampler`), ``loop`` (:func:`train_replay`),
``experiments`` (:func:`replay_curves`, :func:`reference_returns`) and ``privacy``
(:func:`replay_privacy_report`).
"""

from __future__ import annotations

from __future__ import annotations

from privcal.rl.dpq.replay.config import (GUARANTEE, NOISE_RESETS, OPTIMIZERS, PAPER_SIGMAS, REPORTED_RETURNS,
                                          SAMPLERS, SETTINGS, ReplayConfig)
from privcal.rl.dpq.replay.experiments import reference_returns, replay_curves
from privcal.rl.dpq.replay.loop import ReplayResult, train_replay
from privcal.rl.dpq.replay.optimizers import SGD, Adam, Optimizer, RMSprop, huber_grad, huber_loss, make_optimizer
from privcal.rl.dpq.replay.privacy import Premise, ReplayPrivacyReport, replay_privacy_report
from privcal.rl.dpq.replay.sampler import AuthorsNoiseSampler

__all__ = [
    "GUARANTEE",
    "OPTIMIZERS",
    "SAMPLERS",
    "AuthorsNoiseSampler",
    "NOISE_RESETS",
    "PAPER_SIGMAS",
    "REPORTED_RETURNS",
    "SETTINGS",
    "ReplayConfig",
    "ReplayResult",
    "Premise",
    "ReplayPrivacyReport",
    "Optimizer",
    "SGD",
    "RMSprop",
    "Adam",
    "make_optimizer",
    "huber_loss",
    "huber_grad",
    "train_replay",
    "replay_curves",
    "replay_privacy_report",
    "reference_returns",
]
