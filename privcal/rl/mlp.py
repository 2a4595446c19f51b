r"""A small numpy MLP Q-function with hand-written backprop and an *enforced* Lipschitz constant.

Network: x -> h_1 = act(W_1 x + b_1) -> ... -> out = W_n h_{n-1} + b_n, one output per action.
The privacy analysis of Wang & Hegde 2019 (Thm 5, Lemma 6, Cor. 7) assumes each Q(., a) is
L-Lipschitz in the state. With a 1-Lipschitz activation (tanh, relu),

    |Q(x) - Q(y)|_2 <= (prod_i ||W_i||_2) |x - y|,                 ||W||_2 = largest singular value,

so :meth:`LipschitzMLP.project` rescales every weight matrix by the same factor
c = (L / prod_i ||W_i||_2)^(1/n) whenever the product exceeds L (biases are untouched; they do not
change the slope). It runs after initialisation and after every update (:meth:`step`), so the bound
``lipschitz_bound() <= lipschitz`` holds at every moment a Q-function is used. The bound is on the
L2 norm of the whole output vector, hence on each action's output.

Gradients: :meth:`backward` returns the gradient of sum_i <grad_out_i, out_i> over the batch (the
caller scales); :meth:`clipped_gradient_sum` returns the sum of per-example gradients each clipped to
L2 norm ``clip`` (for DP-SGD, Abadi et al. 2016, Alg. 1), with per-example norms computed exactly
from the layer-wise outer products (||d h^T||_F = ||d|| ||h||) without materialising them.

:func:`sup_difference_bound` certifies how far apart two networks of one input are over [0, 1]
(grid values plus the Lipschitz slack between grid points); the DP Q-learning agent uses it to bound
every update in function space (``privcal.rl.dpq.agent``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from numpy.typing import ArrayLike

from privcal import _rng
from privcal import _validate as V

__all__ = ["LipschitzMLP", "ACTIVATIONS", "Gradients", "TANH_CURVATURE", "sup_difference_bound",
           "slope_difference_bound"]

ACTIVATIONS = ("tanh", "relu")
#: Gradients (or any per-layer parameter update) as [(dW_1, db_1), (dW_2, db_2), ...].
Gradients = list[tuple[np.ndarray, np.ndarray]]
_SHRINK = 1.0 - 1e-12  # keeps the rescaled product a hair below L despite rounding
_ROUNDING = 1e-12  # relative margin for the rounding of forward passes in a certificate
#: max_z |tanh''(z)| = max_z 2 |tanh z| (1 - tanh^2 z) = 4 / (3 sqrt 3), attained at tanh^2 z = 1/3.
TANH_CURVATURE = 4.0 / (3.0 * math.sqrt(3.0))


class LipschitzMLP:
    """Fully connected network ``sizes[0] -> ... -> sizes[-1]`` whose Lipschitz bound is kept <= L.

    Initialisation: Glorot-uniform weights, zero biases, the last layer scaled by ``output_scale``,
    then projected to the Lipschitz ball.

    Args:
        sizes: layer widths, e.g. (1, 32, 32, 2): input dimension, hidden widths, outputs (one per
            action); at least 2 ints >= 1; default (1, 32, 32, 2).
        lipschitz: the enforced bound L on the network's Lipschitz constant, in (0, inf); default 4
            (Wang & Hegde 2019, App. E.3).
        activation: "tanh" or "relu" (both 1-Lipschitz); default "tanh".
        seed: seed of the initial weights (None, an int >= 0, a SeedSequence or a Generator, see
            ``privcal._rng``); default None.
        output_scale: factor on the last layer's initial weights, in (0, inf); default 1.

    Raises:
        ValueError: an argument is outside its range.
    """

    def __init__(self, sizes: Sequence[int] = (1, 32, 32, 2), lipschitz: float = 4.0,
                 activation: str = "tanh", seed: _rng.Seed = None, output_scale: float = 1.0):
        sizes = tuple(V.positive_int("sizes[i]", s) for s in sizes)
        if len(sizes) < 2:
            raise ValueError(f"sizes must have at least 2 entries (input, output), got {sizes!r}")
        V.choice("activation", activation, ACTIVATIONS)
        lipschitz = V.positive("lipschitz", lipschitz)
        self._setup(sizes, lipschitz, activation, seed, V.positive("output_scale", output_scale))

    @classmethod
    def unchecked(cls, sizes: tuple[int, ...], lipschitz: float, activation: str = "tanh", seed: _rng.Seed = None,
                  output_scale: float = 1.0) -> "LipschitzMLP":
        """The network of ``LipschitzMLP(sizes, lipschitz, activation, seed, output_scale)``, built without
        validation, for callers that validated the arguments (``privcal.rl.dpq.agent``: its Hyperparameters
        checked them): the same initial weights from the same seed.

        Args:
            sizes: layer widths, a tuple of at least 2 ints >= 1 (not checked).
            lipschitz: the enforced bound L, a float in (0, inf) (not checked).
            activation: "tanh" or "relu" (not checked); default "tanh".
            seed: seed of the initial weights (``privcal._rng``); default None.
            output_scale: factor on the last layer's initial weights, a float in (0, inf) (not checked);
                default 1.

        Returns:
            The network.
        """
        net = cls.__new__(cls)
        net._setup(tuple(sizes), lipschitz, activation, seed, output_scale)
        return net

    def _setup(self, sizes: tuple[int, ...], lipschitz: float, activation: str, seed: _rng.Seed,
               output_scale: float) -> None:
        self.sizes = sizes
        self.lipschitz = lipschitz
        self.activation = activation
        rng = _rng.as_generator(seed, "seed")
        self.weights = []
        self.biases = []
        for i, (fan_in, fan_out) in enumerate(zip(sizes[:-1], sizes[1:])):
            limit = math.sqrt(6.0 / (fan_in + fan_out))
            w = rng.uniform(-limit, limit, size=(fan_out, fan_in))
            if i == len(sizes) - 2:
                w *= output_scale
            self.weights.append(w)
            self.biases.append(np.zeros(fan_out))
        self.project()

    # ------------------------------------------------------------------ Lipschitz constraint
    @property
    def n_layers(self) -> int:
        """Number of weight layers."""
        return len(self.weights)

    def spectral_norms(self) -> np.ndarray:
        """||W_i||_2 of every layer (exact, by SVD)."""
        return np.array([np.linalg.norm(w, 2) for w in self.weights])

    def lipschitz_bound(self) -> float:
        """prod_i ||W_i||_2 (activations are 1-Lipschitz): an upper bound on the network's slope."""
        return float(np.prod(self.spectral_norms()))

    def project(self) -> float:
        """Rescale all weights by one factor so that :meth:`lipschitz_bound` <= L; returns the factor."""
        bound = self.lipschitz_bound()
        if bound <= self.lipschitz:
            return 1.0
        factor = (self.lipschitz / bound) ** (1.0 / self.n_layers) * _SHRINK  # guarded by tests/test_rl_dpq.py::test_lipschitz_bound_holds_after_every_update
        for w in self.weights:
            w *= factor
        return factor

    # ------------------------------------------------------------------ forward / backward
    def _act(self, z):
        return np.tanh(z) if self.activation == "tanh" else np.maximum(z, 0.0)

    def _act_grad(self, h):
        """Derivative of the activation, written in terms of its output h."""
        return 1.0 - h * h if self.activation == "tanh" else (h > 0.0).astype(float)

    def __call__(self, x: ArrayLike) -> np.ndarray:
        """Outputs for inputs ``x`` of shape (n, sizes[0]) (or (sizes[0],) for one input).

        Args:
            x: inputs, shape (n, sizes[0]) or (sizes[0],).

        Returns:
            outputs of shape (n, sizes[-1]) (or (sizes[-1],) for one input).
        """
        x = np.asarray(x, dtype=float)
        single = x.ndim == 1
        h = x[None, :] if single else x
        for w, b in zip(self.weights[:-1], self.biases[:-1]):
            h = self._act(h @ w.T + b)
        out = h @ self.weights[-1].T + self.biases[-1]
        return out[0] if single else out

    def input_derivative(self, x: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
        """(outputs, d outputs / d x) at scalar inputs ``x`` (networks of one input; forward mode).

        With h_0 = x, z_k = W_k h_(k-1) + b_k, h_k = act(z_k): dh_k/dx = act'(z_k) * W_k dh_(k-1)/dx, and
        d out / dx = W_n dh_(n-1)/dx (relu: the one-sided derivative with act'(0) = 0).

        Args:
            x: inputs, shape (n, 1).

        Returns:
            (outputs of shape (n, sizes[-1]), their derivatives in x, shape (n, sizes[-1])).

        Raises:
            ValueError: the network does not have one input or ``x`` has the wrong shape.
        """
        h = np.asarray(x, dtype=float)
        if self.sizes[0] != 1 or h.ndim != 2 or h.shape[1] != 1:
            raise ValueError(f"x must have shape (n, 1) for a network of one input, got {h.shape} for sizes {self.sizes}")
        return self._input_derivative(h)

    def _input_derivative(self, h):
        """Kernel of :meth:`input_derivative` (h of shape (n, 1), trusted)."""
        dh = np.ones_like(h)
        for w, b in zip(self.weights[:-1], self.biases[:-1]):
            h = self._act(h @ w.T + b)
            dh = self._act_grad(h) * (dh @ w.T)
        return h @ self.weights[-1].T + self.biases[-1], dh @ self.weights[-1].T

    def curvature_bound(self) -> float:
        r"""Upper bound on sup_x ||d^2 out / dx^2||_2 (one input, tanh); inf for relu (its slope jumps).

        With D_k = diag(act'(z_k)) (||D_k||_2 <= 1), d out/dx = W_n D_(n-1) W_(n-1) ... D_1 W_1 and

            d^2 out/dx^2 = sum_(k=1..n-1) W_n D_(n-1) ... W_(k+1) diag(act''(z_k) * dz_k/dx) W_k ... D_1 W_1,

        where ||dz_k/dx||_inf <= ||dz_k/dx||_2 <= P_k := prod_(i<=k) ||W_i||_2 and |act''| <= TANH_CURVATURE
        = 4/(3 sqrt 3), so the k-th term is at most TANH_CURVATURE (prod_(i>k) ||W_i||_2) P_k P_k and

            ||d^2 out/dx^2||_2 <= TANH_CURVATURE * P_n * sum_(k=1..n-1) P_k.

        Each output's second derivative is bounded by it. A network without hidden layer is affine
        (bound 0). Source: the chain rule; the constant is calculus on tanh.
        """
        if self.activation != "tanh":
            return math.inf
        norms = self.spectral_norms()
        partial = np.cumprod(norms)
        return float(TANH_CURVATURE * partial[-1] * partial[:-1].sum())

    def forward(self, x: ArrayLike) -> tuple[np.ndarray, list[np.ndarray]]:
        """(outputs (n, sizes[-1]), cache of the layer inputs) for a batch x of shape (n, sizes[0]).

        Args:
            x: a batch of inputs, shape (n, sizes[0]).

        Returns:
            (outputs of shape (n, sizes[-1]), the inputs of every layer, for :meth:`backward`).

        Raises:
            ValueError: ``x`` has the wrong shape.
        """
        h = np.asarray(x, dtype=float)
        if h.ndim != 2 or h.shape[1] != self.sizes[0]:
            raise ValueError(f"x must have shape (n, {self.sizes[0]}), got {h.shape}")
        inputs = [h]
        for w, b in zip(self.weights[:-1], self.biases[:-1]):
            h = self._act(h @ w.T + b)
            inputs.append(h)
        out = h @ self.weights[-1].T + self.biases[-1]
        return out, inputs

    def _deltas(self, inputs, grad_out):
        """Backpropagated errors d_i (n, fan_out) of every layer, last layer first reversed to order."""
        d = np.asarray(grad_out, dtype=float)
        deltas = [d]
        for i in range(self.n_layers - 1, 0, -1):
            d = (d @ self.weights[i]) * self._act_grad(inputs[i])
            deltas.append(d)
        return deltas[::-1]

    def backward(self, inputs: list[np.ndarray], grad_out: ArrayLike) -> Gradients:
        """Gradients [(dW_i, db_i)] of sum over the batch of <grad_out, out> (hand-written backprop).

        Args:
            inputs: the layer inputs cached by :meth:`forward`.
            grad_out: d loss / d output per example, shape (n, sizes[-1]).

        Returns:
            [(dW_i, db_i)] per layer, summed over the batch (the caller scales).
        """
        deltas = self._deltas(inputs, grad_out)
        return [(d.T @ h, d.sum(axis=0)) for d, h in zip(deltas, inputs)]

    def per_example_grad_norms(self, inputs: list[np.ndarray], grad_out: ArrayLike) -> np.ndarray:
        """L2 norm of each example's full parameter gradient: sqrt(sum_i |d_i|^2 (|h_i|^2 + 1)).

        Args:
            inputs: the layer inputs cached by :meth:`forward`.
            grad_out: d loss / d output per example, shape (n, sizes[-1]).

        Returns:
            the n per-example gradient norms (L2 over all parameters).
        """
        deltas = self._deltas(inputs, grad_out)
        sq = np.zeros(deltas[0].shape[0])
        for d, h in zip(deltas, inputs):
            sq += np.einsum("ij,ij->i", d, d) * (np.einsum("ij,ij->i", h, h) + 1.0)
        return np.sqrt(sq)

    def clipped_gradient_sum(self, inputs: list[np.ndarray], grad_out: ArrayLike,
                             clip: float) -> tuple[Gradients, np.ndarray]:
        """(sum of per-example gradients each clipped to norm ``clip``, per-example norms before).

        Each example's gradient g_j is scaled by min(1, clip/||g_j||) (Abadi et al. 2016, Alg. 1);
        since every layer's gradient is linear in that example's output error, scaling grad_out row j
        scales the whole g_j.

        Args:
            inputs: the layer inputs cached by :meth:`forward`.
            grad_out: d loss / d output per example, shape (n, sizes[-1]).
            clip: the clipping norm C, in (0, inf).

        Returns:
            ([(dW_i, db_i)] of the clipped sum, the n per-example norms before clipping).

        Raises:
            ValueError: ``clip`` is outside its range.
        """
        return self.clipped_gradient_sum_unchecked(inputs, grad_out, V.positive("clip", clip))

    def clipped_gradient_sum_unchecked(self, inputs: list[np.ndarray], grad_out: ArrayLike, clip: float) -> tuple:
        """:meth:`clipped_gradient_sum` for a clip already validated (the trusted kernel DP-SGD's update calls).

        Args:
            inputs: the layer inputs cached by :meth:`forward`.
            grad_out: d loss / d output per example, shape (n, sizes[-1]).
            clip: the clipping norm C, in (0, inf) (trusted).

        Returns:
            ([(dW_i, db_i)] of the clipped sum, the n per-example norms before clipping).
        """
        grad_out = np.asarray(grad_out, dtype=float)
        norms = self.per_example_grad_norms(inputs, grad_out)
        scale = np.minimum(1.0, clip / np.maximum(norms, 1e-300))  # guarded by tests/test_rl_dpq.py::test_per_example_norms_and_clipping
        return self.backward(inputs, grad_out * scale[:, None]), norms

    # ------------------------------------------------------------------ updates
    def step(self, grads: Gradients, lr: float) -> float:
        """theta <- theta - lr * grads, then :meth:`project`; returns the projection factor.

        Args:
            grads: [(dW_i, db_i)] per layer, as :meth:`backward` returns them.
            lr: the step size, in (0, inf).

        Returns:
            the factor :meth:`project` applied (1.0 when the bound already held).

        Raises:
            ValueError: ``lr`` is outside its range.
        """
        return self.step_unchecked(grads, V.positive("lr", lr))

    def step_unchecked(self, grads: Gradients, lr: float) -> float:
        """:meth:`step` for a step size already validated (the trusted kernel the training loops call).

        Args:
            grads: [(dW_i, db_i)] per layer, as :meth:`backward` returns them.
            lr: the step size, in (0, inf) (trusted).

        Returns:
            the factor :meth:`project` applied (1.0 when the bound already held).
        """
        for (dw, db), w, b in zip(grads, self.weights, self.biases):
            w -= lr * dw
            b -= lr * db
        return self.project()

    # ------------------------------------------------------------------ parameters
    @property
    def n_params(self) -> int:
        """Number of parameters (weights and biases)."""
        return sum(w.size + b.size for w, b in zip(self.weights, self.biases))

    def get_params(self) -> np.ndarray:
        """All parameters as one flat vector (W_1, b_1, W_2, b_2, ...)."""
        return np.concatenate([a.ravel() for w, b in zip(self.weights, self.biases) for a in (w, b)])

    def set_params(self, flat: ArrayLike) -> None:
        """Set all parameters from a flat vector (no projection: for checks such as gradient tests).

        Args:
            flat: all parameters in the order of :meth:`get_params`, shape (n_params,).

        Raises:
            ValueError: ``flat`` has the wrong shape.
        """
        flat = np.asarray(flat, dtype=float)
        if flat.shape != (self.n_params,):
            raise ValueError(f"flat must have shape ({self.n_params},), got {flat.shape}")
        pos = 0
        for w, b in zip(self.weights, self.biases):
            w[...] = flat[pos:pos + w.size].reshape(w.shape)
            pos += w.size
            b[...] = flat[pos:pos + b.size]
            pos += b.size

    @staticmethod
    def flatten(grads: Gradients) -> np.ndarray:
        """Gradients [(dW, db)] as one flat vector in the order of :meth:`get_params`.

        Args:
            grads: [(dW_i, db_i)] per layer.
        """
        return np.concatenate([a.ravel() for dw, db in grads for a in (dw, db)])

    def copy(self) -> "LipschitzMLP":
        """An independent copy (same sizes, bound, activation and parameters)."""
        other = object.__new__(LipschitzMLP)
        other.sizes, other.lipschitz, other.activation = self.sizes, self.lipschitz, self.activation
        other.weights = [w.copy() for w in self.weights]
        other.biases = [b.copy() for b in self.biases]
        return other

    def __repr__(self) -> str:
        return (f"LipschitzMLP(sizes={self.sizes}, lipschitz={self.lipschitz:g}, "
                f"activation={self.activation!r}, bound={self.lipschitz_bound():.4g})")


def sup_difference_bound(first: LipschitzMLP, second: LipschitzMLP, grid_size: int) -> float:
    """Certified upper bound on max_k sup_(s in [0, 1]) |first(s)_k - second(s)_k| (networks of one input).

    Both networks are evaluated on the grid s_i = i h, h = 1/(grid_size - 1). Their difference f is
    Lambda-Lipschitz with Lambda = first.lipschitz_bound() + second.lipschitz_bound() (each output of a
    network is at most as steep as its whole output vector), so on the cell [s_i, s_(i+1)]
    |f(s)| <= min(|f(s_i)| + Lambda (s - s_i), |f(s_(i+1))| + Lambda (s_(i+1) - s))
    <= (|f(s_i)| + |f(s_(i+1))| + Lambda h) / 2; the bound is the largest cell value, plus a relative
    margin of 1e-12 of the largest |output| for the rounding of the forward passes.

    Args:
        first: a network with one input (sizes[0] == 1).
        second: a network with one input and as many outputs as ``first``.
        grid_size: number of grid points, an int >= 2.

    Returns:
        the certified bound (units of the outputs), in [0, inf).

    Raises:
        ValueError: an argument is outside its range or the networks do not match.
    """
    grid = _pair_grid(first, second, grid_size)
    slope = first.lipschitz_bound() + second.lipschitz_bound()
    return unchecked_sup_difference_bound(first(grid), second(grid), slope, 1.0 / (grid.shape[0] - 1))[0]


def unchecked_sup_difference_bound(values_first: np.ndarray, values_second: np.ndarray, slope: float,
                                   spacing: float) -> tuple[float, float]:
    """(certified bound, largest grid value) of |first - second| from their values on a uniform grid.

    ``values_*`` have shape (n, outputs) on s_i = i * spacing; ``slope`` bounds the Lipschitz constant of
    the difference (see :func:`sup_difference_bound`)."""
    diff = np.abs(values_first - values_second)
    cells = 0.5 * (diff[:-1] + diff[1:]).max() + 0.5 * slope * spacing  # guarded by tests/test_rl_dpq.py::test_sup_certificate_slack_is_attained_by_a_network_pair
    scale = max(float(np.abs(values_first).max()), float(np.abs(values_second).max()), 1.0)
    return float(cells + _ROUNDING * scale), float(diff.max())  # guarded by tests/test_guard_mlp.py::test_the_sup_bound_covers_a_difference_that_float64_rounds_down


def slope_difference_bound(first: LipschitzMLP, second: LipschitzMLP, grid_size: int) -> float:
    """Certified upper bound on max_k sup_(s in [0, 1]) |first'(s)_k - second'(s)_k|: Lip of the difference.

    The derivative of the difference f = first - second (networks of one input) is evaluated exactly
    on the grid s_i = i h, h = 1/(grid_size - 1) (:meth:`LipschitzMLP.input_derivative`); f' is
    M-Lipschitz with M = first.curvature_bound() + second.curvature_bound(), so, as for
    :func:`sup_difference_bound`, on each cell ``|f'(s)| <= (|f'(s_i)| + |f'(s_(i+1))| + M h) / 2``, plus a
    relative margin of 1e-12 of the largest |derivative| for rounding. The result is also capped by
    first.lipschitz_bound() + second.lipschitz_bound(), always a bound. For relu M is inf and the cap
    is the answer.

    Args:
        first: a network with one input (sizes[0] == 1).
        second: a network with one input and as many outputs as ``first``.
        grid_size: number of grid points, an int >= 2.

    Returns:
        the certified bound on the Lipschitz constant of each output of first - second, in [0, inf).

    Raises:
        ValueError: an argument is outside its range or the networks do not match.
    """
    grid = _pair_grid(first, second, grid_size)
    curvature = first.curvature_bound() + second.curvature_bound()
    cap = first.lipschitz_bound() + second.lipschitz_bound()
    return unchecked_slope_difference_bound(first._input_derivative(grid)[1], second._input_derivative(grid)[1],
                                   curvature, 1.0 / (grid.shape[0] - 1), cap)[0]


def unchecked_slope_difference_bound(slopes_first: np.ndarray, slopes_second: np.ndarray,
                                     curvature: float, spacing: float, cap: float) -> tuple[float, float]:
    """(certified bound, largest grid value) of |first' - second'| from their derivatives on a uniform grid.

    ``curvature`` bounds the Lipschitz constant of first' - second'; ``cap`` is a bound that always holds
    (the sum of the two networks' Lipschitz bounds); see :func:`slope_difference_bound`."""
    if not math.isfinite(curvature):
        return float(cap), float(cap)
    bound, largest = unchecked_sup_difference_bound(slopes_first, slopes_second, curvature, spacing)
    return min(bound, float(cap)), largest


def _pair_grid(first, second, grid_size) -> np.ndarray:
    """The state grid of a certified bound on first - second, the arguments checked (each named)."""
    grid_size = V.positive_int("grid_size", grid_size)
    if grid_size < 2:
        raise ValueError(f"grid_size must be an int >= 2, got {grid_size!r}")
    for name, net in (("first", first), ("second", second)):
        if not isinstance(net, LipschitzMLP) or net.sizes[0] != 1:
            raise ValueError(f"{name} must be a LipschitzMLP with one input, got {net!r}")
    if first.sizes[-1] != second.sizes[-1]:
        raise ValueError(f"first and second must have as many outputs, got {first.sizes[-1]} and {second.sizes[-1]}")
    return np.linspace(0.0, 1.0, grid_size)[:, None]
