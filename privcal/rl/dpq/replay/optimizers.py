"""The authors' loss and optimisers: the Huber loss (PyTorch ``smooth_l1_loss``) and PyTorch's update rules
of SGD, RMSprop and Adam, in numpy."""

from __future__ import annotations


import numpy as np
from numpy.typing import ArrayLike

from privcal import _validate as V
from privcal.rl.dpq.replay.config import ReplayConfig, check_decay, checked_config

__all__ = ["Optimizer", "SGD", "RMSprop", "Adam", "make_optimizer", "huber_loss", "huber_grad"]


def huber_loss(residual: ArrayLike, threshold: float = 1.0) -> np.ndarray:
    r"""Huber loss of a residual x: x^2 / 2 for |x| <= c, c (|x| - c / 2) beyond (Huber 1964).

    With c = 1 this is PyTorch's ``smooth_l1_loss`` (its ``beta`` = 1), which the authors' code uses.

    Args:
        residual: the residual(s) x = prediction - target (any shape).
        threshold: c, where the loss turns linear, in (0, inf); default 1.

    Returns:
        the elementwise loss, same shape as ``residual``.

    Raises:
        ValueError: ``threshold`` is outside its range.
    """
    return _huber_loss(np.asarray(residual, dtype=float), V.positive("threshold", threshold))


def _huber_loss(x, c):
    ax = np.abs(x)
    return np.where(ax <= c, 0.5 * x * x, c * (ax - 0.5 * c))


def huber_grad(residual: ArrayLike, threshold: float = 1.0) -> np.ndarray:
    """Derivative of :func:`huber_loss` in the residual: x clipped to [-c, c].

    Args:
        residual: the residual(s) x = prediction - target (any shape).
        threshold: c, in (0, inf); default 1.

    Returns:
        the elementwise derivative, same shape as ``residual``.

    Raises:
        ValueError: ``threshold`` is outside its range.
    """
    c = V.positive("threshold", threshold)
    return np.clip(np.asarray(residual, dtype=float), -c, c)


class Optimizer:
    """Base of the numpy optimisers on a flat parameter vector: ``step`` checks shapes, advances the state.

    Subclasses (:class:`SGD`, :class:`RMSprop`, :class:`Adam`) define the update rule.
    """

    name = ""

    def step(self, params: ArrayLike, grads: ArrayLike) -> np.ndarray:
        """The parameters after one step on ``grads`` (the optimiser's state advances).

        Args:
            params: the current parameters, a flat float array.
            grads: the gradient at ``params``, same shape.

        Returns:
            the new parameters (a new array).

        Raises:
            ValueError: ``params`` and ``grads`` differ in shape.
        """
        params = np.asarray(params, dtype=float)
        grads = np.asarray(grads, dtype=float)
        if params.shape != grads.shape:
            raise ValueError(f"grads must have the shape of params {params.shape}, got {grads.shape}")
        return self._step(params, grads)

    def _step(self, params, grads):
        new, self._state = self._propose(params, grads, self._state)
        return new

    def _peek(self, params, grads):
        """The step ``_step`` would take, without advancing the state."""
        return self._propose(params, grads, self._state)[0]


class SGD(Optimizer):
    """Plain gradient descent: theta <- theta - lr g (PyTorch ``optim.SGD`` without momentum).

    Args:
        lr: the step size, in (0, inf).

    Raises:
        ValueError: ``lr`` is outside its range.
    """

    name = "sgd"

    def __init__(self, lr: float):
        self.lr = V.positive("lr", lr)
        self._state = None

    def _propose(self, params, grads, state):
        return params - self.lr * grads, state


class RMSprop(Optimizer):
    r"""RMSprop as PyTorch runs it (no momentum, not centred), from v_0 = 0.

        v_t = d v_{t-1} + (1 - d) g_t^2,    theta_t = theta_{t-1} - lr g_t / (sqrt(v_t) + offset).

    Tieleman & Hinton 2012 (lecture 6.5); PyTorch ``optim.RMSprop`` (d = alpha = 0.99, offset = eps =
    1e-8 by default). Since v_t >= (1 - d) g_t^2, no coordinate moves by more than lr / sqrt(1 - d)
    in one step (0.1 at the defaults), whatever the gradient.

    Args:
        lr: the step size, in (0, inf).
        decay: d, the smoothing constant, in [0, 1); default 0.99.
        offset: added to sqrt(v_t), in (0, inf); default 1e-8.

    Raises:
        ValueError: an argument is outside its range.
    """

    name = "rmsprop"

    def __init__(self, lr: float, decay: float = 0.99, offset: float = 1e-8):
        self.lr = V.positive("lr", lr)
        self.decay = check_decay("decay", decay)
        self.offset = V.positive("offset", offset)
        self._state = None

    def _propose(self, params, grads, state):
        v = (1.0 - self.decay) * grads * grads
        if state is not None:
            v += self.decay * state
        return params - self.lr * grads / (np.sqrt(v) + self.offset), v


class Adam(Optimizer):
    r"""Adam as PyTorch runs it (bias-corrected moments), from m_0 = v_0 = 0.

        m_t = d1 m_{t-1} + (1 - d1) g_t,    v_t = d2 v_{t-1} + (1 - d2) g_t^2,
        theta_t = theta_{t-1} - lr (m_t / (1 - d1^t)) / (sqrt(v_t / (1 - d2^t)) + offset).

    Kingma & Ba 2015, Alg. 1 (offset added outside the square root, as PyTorch ``optim.Adam``).

    Args:
        lr: the step size, in (0, inf).
        decays: (d1, d2), each in [0, 1); default (0.9, 0.999).
        offset: added to the bias-corrected sqrt(v_t), in (0, inf); default 1e-8.

    Raises:
        ValueError: an argument is outside its range.
    """

    name = "adam"

    def __init__(self, lr: float, decays: tuple = (0.9, 0.999), offset: float = 1e-8):
        self.lr = V.positive("lr", lr)
        if not isinstance(decays, (tuple, list)) or len(decays) != 2:
            raise ValueError(f"decays must be a pair of numbers in [0, 1), got {decays!r}")
        self.decays = tuple(check_decay("decays[i]", d) for d in decays)
        self.offset = V.positive("offset", offset)
        self._state = None

    def _propose(self, params, grads, state):
        d1, d2 = self.decays
        m, v, t = (np.zeros_like(grads), np.zeros_like(grads), 0) if state is None else state
        t += 1
        m = d1 * m + (1.0 - d1) * grads
        v = d2 * v + (1.0 - d2) * grads * grads
        m_hat = m / (1.0 - d1 ** t)
        v_hat = v / (1.0 - d2 ** t)
        return params - self.lr * m_hat / (np.sqrt(v_hat) + self.offset), (m, v, t)


def make_optimizer(config: ReplayConfig) -> Optimizer:
    """The optimiser named by ``config.optimizer`` with the config's lr and constants.

    Args:
        config: the loop's settings (a :class:`ReplayConfig`).

    Returns:
        a fresh :class:`SGD`, :class:`RMSprop` or :class:`Adam` (state at zero).

    Raises:
        ValueError: ``config`` is not a ReplayConfig.
    """
    return unchecked_make_optimizer(checked_config(config))


def unchecked_make_optimizer(config):
    if config.optimizer == "sgd":
        return SGD(config.lr)
    if config.optimizer == "rmsprop":
        return RMSprop(config.lr, config.rmsprop_decay, config.optimizer_offset)
    return Adam(config.lr, config.adam_decays, config.optimizer_offset)
