"""privcal's accounting inside Opacus: an accountant for ``PrivacyEngine`` and ``get_noise_multiplier``.

What Opacus runs (DP-SGD, Abadi et al. 2016): at each optimizer step every example of the dataset
enters the batch independently with probability ``sample_rate`` (Poisson sampling: Opacus's
``DPDataLoader``, the default ``poisson_sampling=True`` of ``PrivacyEngine.make_private``), each
per-example gradient is clipped to L2 norm ``max_grad_norm`` = C, and the clipped sum gets Gaussian
noise N(0, (noise_multiplier C)^2 I). Adding or removing one example changes that sum by at most C:
one step is a Poisson-subsampled Gaussian mechanism with noise multiplier ``noise_multiplier`` under
*add/remove-one* neighbours, and the privacy unit is **one example** (one row of the dataset). A
training run is the adaptive composition of its steps.

:class:`PrivcalAccountant` records the steps as Opacus's own accountants do (``history``: a list of
``(noise_multiplier, sample_rate, steps)`` runs) and prices them with privcal: equal
``(noise_multiplier, sample_rate)`` pairs become one ``SelfComposedEvent(PoissonSampledEvent(q,
GaussianEvent(noise_multiplier)), steps)`` each, composed in one ``ComposedEvent``, and
``privcal.epsilon_of(history, delta)`` answers: with the default ``"best"``, the smallest certified
upper bound on epsilon among privcal's valid accountants (the PLD's certified upper end, or RDP's if
smaller). Composition commutes, so grouping equal pairs that are not adjacent prices the same history.

Shuffled batches (``make_private(..., poisson_sampling=False)``: the user's loader, a fresh permutation cut
into fixed-size batches each epoch) are **not** Poisson sampling, and Opacus's own accountants price them as
if they were (Chua et al., ICML 2024 and NeurIPS 2024, show that figure is not valid for them). This
accountant prices the sampler the run used: ``sampling="poisson"`` (default), ``"shuffle"`` or
``"balls_in_bins"``; inside ``make_private`` it reads ``poisson_sampling`` itself (and :func:`sampler_of`
reads a loader), so a shuffled run is priced as shuffled, with a warning naming the valid bound used
instead. A shuffled or balls-in-bins run is priced by the no-amplification bound: each example sits in one
batch per epoch, so conditioned on the batch assignment an epoch is one Gaussian release of sensitivity C,
and the whole run of E (started) epochs is the Gaussian mechanism with mu = sqrt(E) / noise_multiplier
(joint convexity over the assignment; docs/samplers.md). Shuffled batches are priced under zero-out
neighbours (one example replaced by a null one, sensitivity C: removing an example would shift every later
batch boundary, for which no proof is given here); balls-in-bins under add/remove. A sample rate above 1
(e.g. from ``accumulated_iterations`` with a wrong expected rate) is refused.

Plugging it in (Opacus >= 1.6 has an accountant registry; with older Opacus set the attribute)::

    from opacus import PrivacyEngine
    from privcal.integrations.opacus import PrivcalAccountant, get_noise_multiplier, register

    register()                                    # once: PrivacyEngine(accountant="privcal")
    engine = PrivacyEngine(accountant="privcal")  # or: engine = PrivacyEngine(); engine.accountant = PrivcalAccountant()
    nm = get_noise_multiplier(target_epsilon=3.0, target_delta=1e-5, sample_rate=q, epochs=10)
    model, optimizer, loader = engine.make_private(module=model, optimizer=optimizer, data_loader=loader,
                                                   noise_multiplier=nm, max_grad_norm=1.0)
    ...
    engine.get_epsilon(1e-5)                      # privcal's certified upper bound

The module imports without opacus or torch (the accountant is then a plain class with the same
methods, so its pricing is tested without them); when opacus is importable the accountant subclasses
``opacus.accountants.IAccountant`` and Opacus accepts it wherever it takes its own.
"""

from __future__ import annotations

import math
import sys
import warnings
from collections import OrderedDict
from copy import deepcopy
from typing import Any, Callable, Optional

from .. import _validate as V
from ..analysis import gaussian
from ..accounting import (
    ComposedEvent,
    Event,
    GaussianEvent,
    PoissonSampledEvent,
    SelfComposedEvent,
    calibrate,
    epsilon_of,
)

try:  # opacus (and torch) are optional: only plugging the accountant into Opacus needs them
    from opacus.accountants import IAccountant as _Base

    OPACUS_AVAILABLE = True
except ImportError:  # the same methods on a plain class
    _Base = object
    OPACUS_AVAILABLE = False

__all__ = [
    "ACCOUNTANTS",
    "MECHANISM",
    "OPACUS_AVAILABLE",
    "PrivcalAccountant",
    "SAMPLERS",
    "SamplerWarning",
    "get_noise_multiplier",
    "history_event",
    "register",
    "sampler_of",
]

#: batch samplers this adapter prices, with the neighbouring relation each is priced under
SAMPLERS = {"poisson": "add_remove", "shuffle": "zero_out", "balls_in_bins": "add_remove"}
#: keyword options of Opacus's own accountants' ``get_epsilon`` that Opacus's ``get_noise_multiplier`` passes on:
#: they tune those accountants' numerics, not what is priced, so they are accepted and ignored
_OPACUS_OPTIONS = frozenset({"alphas", "eps_error", "delta_error"})


class SamplerWarning(UserWarning):
    """A run's batch sampler is priced by another bound than the Poisson one Opacus would report."""


def _sampler(name: str) -> str:
    return V.choice("sampling", name, tuple(SAMPLERS))


def _no_options(kwargs: dict, where: str) -> None:
    """Refuse a keyword that is neither privcal's nor an option Opacus passes to its own accountants."""
    unknown = sorted(set(kwargs) - _OPACUS_OPTIONS)
    if unknown:
        raise ValueError(f"{where} got unknown keyword {unknown[0]!r} (privcal never ignores an option that could "
                         f"change what is priced; Opacus's accountant options accepted: "
                         f"{', '.join(sorted(_OPACUS_OPTIONS))}; the batch sampler is sampling=)")


def sampler_of(loader: Any) -> str:
    """The batch sampler a PyTorch / Opacus data loader runs: "poisson" for Opacus's ``DPDataLoader`` (its
    ``UniformWithReplacementSampler``), "shuffle" for a loader over a ``RandomSampler`` without replacement
    (``shuffle=True``) or a ``SequentialSampler`` (a fixed order: a persistent permutation that is not even
    random; the no-amplification bound covers it). Read by class names, so torch is not imported here.

    Args:
        loader: a data loader.

    Raises:
        ValueError: the sampler cannot be recognised (pass ``sampling=`` to :class:`PrivcalAccountant`).
    """
    names = {type(loader).__name__, type(getattr(loader, "batch_sampler", None)).__name__,
             type(getattr(loader, "sampler", None)).__name__}
    if names & {"DPDataLoader", "UniformWithReplacementSampler", "DistributedUniformWithReplacementSampler"}:
        return "poisson"
    inner = getattr(loader, "sampler", None)
    if type(inner).__name__ == "RandomSampler" and not getattr(inner, "replacement", False):
        return "shuffle"
    if type(inner).__name__ == "SequentialSampler":
        return "shuffle"
    raise ValueError(f"the batch sampler of {type(loader).__name__} cannot be recognised (sampler "
                     f"{type(inner).__name__}); pass sampling='poisson', 'shuffle' or 'balls_in_bins' explicitly")


def _make_private_sampler() -> Optional[str]:
    """The sampler of the ``make_private`` (or ``make_private_with_epsilon``) call the caller runs inside (its
    ``poisson_sampling`` argument), or None outside one."""
    frame = sys._getframe(2)
    while frame is not None:
        if frame.f_code.co_name in ("make_private", "make_private_with_epsilon") and \
                "poisson_sampling" in frame.f_locals:
            return "poisson" if frame.f_locals["poisson_sampling"] else "shuffle"
        frame = frame.f_back
    return None

#: the name Opacus knows this accountant by (``mechanism()``, ``state_dict()["mechanism"]``, registry)
MECHANISM = "privcal"
#: privcal accountants that price Poisson-subsampled Gaussians with a valid (upper-bound) guarantee
ACCOUNTANTS = ("best", "pld", "rdp")


def _accountant(name: str) -> str:
    return V.choice("accountant", name, ACCOUNTANTS)


def _groups(history: Any) -> list[tuple[float, float, int]]:
    """Validated ``[(noise_multiplier, sample_rate, steps), ...]`` with equal (noise_multiplier,
    sample_rate) pairs merged (first-appearance order; composition commutes)."""
    if not isinstance(history, (list, tuple)):
        raise ValueError(f"history must be a list of (noise_multiplier, sample_rate, steps), got {history!r}")
    merged: dict[tuple[float, float], int] = {}
    for i, entry in enumerate(history):
        if not isinstance(entry, (list, tuple)) or len(entry) != 3:
            raise ValueError(f"history[{i}] must be (noise_multiplier, sample_rate, steps), got {entry!r}")
        nm = V.nonnegative(f"history[{i}] noise_multiplier", entry[0])
        q = V.rate(f"history[{i}] sample_rate", entry[1])
        n = V.positive_int(f"history[{i}] steps", entry[2])
        merged[(nm, q)] = merged.get((nm, q), 0) + n
    return [(nm, q, n) for (nm, q), n in merged.items()]


#: the events of the (noise_multiplier, sample_rate, steps) groups built so far (frozen, so shared): an accountant
#: asked after every step of a noise schedule builds its new groups' only
_PARTS: dict = {}
_PARTS_MAX = 2**17


def _part(nm: float, q: float, n: int) -> Event:
    """``SelfComposedEvent(PoissonSampledEvent(q, GaussianEvent(nm)), n)`` (q = 1: the plain Gaussian), kept."""
    key = (nm, q, n)
    part = _PARTS.get(key)
    if part is None:
        release: Event = GaussianEvent(nm)
        if q < 1.0:
            release = PoissonSampledEvent(q, release)
        part = SelfComposedEvent(release, n)
        if len(_PARTS) >= _PARTS_MAX:
            _PARTS.clear()
        _PARTS[key] = part
    return part


def _event(groups: list[tuple[float, float, int]]) -> Optional[Event]:
    """The composed event of validated groups (None: no step; a zero noise multiplier is not an event,
    the caller prices it as inf)."""
    parts = [_part(nm, q, n) for nm, q, n in groups]
    if not parts:
        return None
    return parts[0] if len(parts) == 1 else ComposedEvent(parts)


def history_event(history: list) -> Optional[Event]:
    """The privcal event of an Opacus history: ``SelfComposedEvent(PoissonSampledEvent(q,
    GaussianEvent(noise_multiplier)), steps)`` per distinct (noise_multiplier, sample_rate) pair, in one
    ``ComposedEvent`` (a single pair: its ``SelfComposedEvent``; ``sample_rate`` 1: the plain Gaussian).

    Args:
        history: Opacus's accountant history, ``[(noise_multiplier, sample_rate, steps), ...]``
            (tuples or lists; noise_multiplier in (0, inf), sample_rate in (0, 1], steps an int >= 1).

    Returns:
        the event, or None for an empty history.

    Raises:
        ValueError: a malformed entry, or a noise multiplier of 0 (no finite epsilon: no event describes it).
    """
    groups = _groups(history)
    for nm, _, _ in groups:
        if nm == 0.0:
            raise ValueError("history noise_multiplier must be in (0, inf) to form an event, got 0")
    return _event(groups)


class PrivcalAccountant(_Base):
    """Opacus accountant (``opacus.accountants.IAccountant``) whose epsilon is privcal's tightest valid one.

    Steps are recorded as Opacus's ``RDPAccountant`` records them: ``history`` is a list of
    ``(noise_multiplier, sample_rate, steps)`` runs, a step equal to the last run extending it. Opacus
    writes ``history`` directly too (its ``get_noise_multiplier`` does), so :meth:`get_epsilon` prices
    whatever ``history`` holds, checking it first.

    Privacy unit: one example; add/remove-one neighbours for Poisson sampling (what Opacus's DPDataLoader
    runs) and balls-in-bins, zero-out for shuffled batches (:attr:`neighbouring`; the module docstring).

    Args:
        accountant: the privcal accountant that prices a Poisson history: "best" (default: the smallest
            certified upper bound among the valid ones, PLD or RDP), "pld" or "rdp".
        sampling: the batch sampler the run uses, "poisson", "shuffle" or "balls_in_bins"; default None:
            read from ``make_private``'s ``poisson_sampling`` when the accountant is attached there (or from
            a loader by :meth:`watch`), else Poisson is assumed (``sampling_source`` says which).
    """

    def __init__(self, accountant: str = "best", sampling: Optional[str] = None):
        super().__init__()
        self.accountant = _accountant(accountant)
        self.history: list = []
        #: the batch sampler priced, and how privcal knows it: "stated" (``sampling=``), "make_private" (read
        #: from its ``poisson_sampling``), "loader" (:meth:`watch`) or "assumed" (Poisson: nothing seen)
        self.sampling, self.sampling_source = ("poisson", "assumed") if sampling is None else (_sampler(sampling), "stated")
        self._warned = False

    @property
    def neighbouring(self) -> str:  # type: ignore[override]
        """The neighbouring relation the guarantee protects: add/remove (Poisson, balls-in-bins) or zero-out
        (shuffled batches: one example replaced by a null one)."""
        return SAMPLERS[self.sampling]

    def watch(self, loader: Any) -> "PrivcalAccountant":
        """Price the sampler ``loader`` runs (:func:`sampler_of`); returns ``self``.

        Args:
            loader: the data loader the training loop iterates (as ``make_private`` returned it).
        """
        self.sampling, self.sampling_source = sampler_of(loader), "loader"
        return self

    def step(self, *, noise_multiplier: float, sample_rate: float) -> None:
        """Record one optimizer step (Opacus calls this from the optimizer hook).

        Args:
            noise_multiplier: noise standard deviation / max_grad_norm of this step, in [0, inf)
                (0: no noise; the epsilon of the history is then inf).
            sample_rate: Poisson inclusion probability of each example in this step, in (0, 1].
        """
        nm = V.nonnegative("noise_multiplier", noise_multiplier)
        q = V.rate("sample_rate", sample_rate)
        if self.history:
            last_nm, last_q, count = self.history[-1]
            if last_nm == nm and last_q == q:
                self.history[-1] = (last_nm, last_q, count + 1)
                return
        self.history.append((nm, q, 1))

    def get_epsilon(self, delta: float, **kwargs: Any) -> float:
        """Epsilon spent so far at ``delta``: an upper bound on the true epsilon of the recorded
        history (add/remove-one neighbours, Poisson sampling), 0 before any step, inf if a step had
        no noise.

        Args:
            delta: in (0, 1).
            kwargs: options of Opacus's own accountants (``alphas``, ``eps_error``, ...; Opacus's
                ``get_noise_multiplier`` forwards whatever it was given); accepted and ignored: they
                tune those accountants' approximations, not privcal's certified answer.

        Returns:
            epsilon (a float; ``inf``: no finite bound).
        """
        delta = V.open_unit("delta", delta)
        _no_options(kwargs, "get_epsilon")
        if self.sampling_source == "assumed":  # e.g. a fresh accountant inside make_private_with_epsilon's search
            seen = _make_private_sampler()
            if seen is not None:
                self.sampling, self.sampling_source = seen, "make_private"
            elif not self._warned and self.history:  # it cannot see the sampler: it says what it assumed, once
                self._warned = True
                warnings.warn("privcal did not see which batch sampler this run used and priced it as Poisson "
                              "sampling (Opacus's DPDataLoader); for a shuffled loader call accountant.watch(loader) "
                              "or pass PrivcalAccountant(sampling='shuffle')", SamplerWarning, stacklevel=2)
        groups = _groups(self.history)
        if any(nm == 0.0 for nm, _, _ in groups):
            return math.inf
        if self.sampling != "poisson":
            value = _no_amplification_epsilon(groups, delta)
            if not self._warned:
                self._warned = True
                event = _event(groups)
                poisson = float(epsilon_of(event, delta, accountant=self.accountant)) if event is not None else 0.0
                warnings.warn(
                    f"{self.sampling} batches ({self.sampling_source}) are priced by the no-amplification bound "
                    f"(each example in one batch per epoch, {SAMPLERS[self.sampling]} neighbours): epsilon {value:.4g} "
                    f"at delta = {delta:g}; Poisson accounting would say {poisson:.4g}, not valid for this sampler",
                    SamplerWarning, stacklevel=2)
            return value
        event = _event(groups)
        if event is None:
            return 0.0
        return float(epsilon_of(event, delta, accountant=self.accountant))

    def __len__(self) -> int:
        """Number of optimizer steps recorded (Opacus's ``RDPAccountant`` returns the number of
        history runs instead; both are > 0 exactly when a step was taken, which is all Opacus asks)."""
        return sum(int(n) for _, _, n in self.history)

    @classmethod
    def mechanism(cls) -> str:
        """The accountant's name in Opacus (``"privcal"``)."""
        return MECHANISM

    def get_optimizer_hook_fn(self, sample_rate: float) -> Callable[[Any], None]:
        """The step hook Opacus attaches to its ``DPOptimizer`` (as ``IAccountant`` defines it): each
        optimizer step records ``optimizer.noise_multiplier`` at ``sample_rate *
        optimizer.accumulated_iterations``.

        Args:
            sample_rate: the expected Poisson sample rate of one batch, in (0, 1].

        Returns:
            the hook, a function of the optimizer.
        """
        sample_rate = V.rate("sample_rate", sample_rate)
        seen = _make_private_sampler()
        if seen is not None and self.sampling_source != "stated":
            self.sampling, self.sampling_source = seen, "make_private"

        def hook_fn(optim: Any) -> None:
            self.step(noise_multiplier=optim.noise_multiplier,
                      sample_rate=sample_rate * optim.accumulated_iterations)

        return hook_fn

    def state_dict(self, destination: Optional[dict] = None) -> dict:
        """The accountant's state, as Opacus checkpoints it: ``history`` (a copy), ``mechanism`` and
        privcal's ``accountant`` name.

        Args:
            destination: a mapping to fill; default a new ``OrderedDict``.

        Returns:
            ``destination``.
        """
        if destination is None:
            destination = OrderedDict()
        destination["history"] = deepcopy(self.history)
        destination["mechanism"] = self.mechanism()
        destination["accountant"] = self.accountant
        return destination

    def load_state_dict(self, state_dict: dict) -> None:
        """Restore a state saved by :meth:`state_dict` (Opacus's checks: ``history`` and ``mechanism``
        present, mechanism ``"privcal"``; the history's entries are checked too).

        Args:
            state_dict: the saved state.

        Raises:
            ValueError: the state is empty, lacks a key, belongs to another mechanism, or holds a
                malformed history.
        """
        if not state_dict:
            raise ValueError("state_dict is empty or None and cannot be loaded into PrivcalAccountant")
        for key in ("history", "mechanism"):
            if key not in state_dict:
                raise ValueError(f"state_dict has no key {key!r}; cannot load it into PrivcalAccountant")
        if state_dict["mechanism"] != MECHANISM:
            raise ValueError(
                f"state_dict mechanism must be {MECHANISM!r}, got {state_dict['mechanism']!r} (another "
                "accountant's state; its history can be assigned to .history directly)"
            )
        history = list(state_dict["history"])
        _groups(history)
        accountant = _accountant(state_dict.get("accountant", self.accountant))
        self.history = [tuple(entry) for entry in history]
        self.accountant = accountant


def _no_amplification_epsilon(groups: list, delta: float) -> float:
    """Epsilon at ``delta`` of a shuffled or balls-in-bins run by the no-amplification bound: an example sits
    in one batch of each epoch, and the run has E = ceil(sum of steps x sample_rate) epochs (a started one
    counts), so its mu^2 is at most the sum of the E largest 1 / noise_multiplier^2 over the steps (the exact
    Gaussian profile, Balle & Wang 2018, at that mu)."""
    epochs = math.ceil(math.fsum(n * q for _, q, n in groups) * (1.0 - 1e-12))
    mu2, left = 0.0, epochs
    for nm, _, n in sorted(groups):
        take = min(n, left)
        mu2, left = mu2 + take / (nm * nm), left - take
        if left == 0:
            break
    if mu2 == 0.0:
        return 0.0
    return float(epsilon_of(GaussianEvent(1.0 / math.sqrt(mu2)), delta, accountant="best"))


def get_noise_multiplier(
    *,
    target_epsilon: float,
    target_delta: float,
    sample_rate: float,
    epochs: Optional[float] = None,
    steps: Optional[int] = None,
    accountant: str = "best",
    epsilon_tolerance: float = 0.01,
    sampling: str = "poisson",
    **kwargs: Any,
) -> float:
    """Noise multiplier for ``steps`` (or ``epochs``) DP-SGD steps at Poisson rate ``sample_rate`` to be
    (target_epsilon, target_delta)-DP, with Opacus's signature (``opacus.accountants.utils``), from
    ``privcal.calibrate``.

    The answer is the smallest noise multiplier (to relative 1e-9) whose certified upper epsilon under
    ``accountant`` is <= ``target_epsilon``, checked before it is returned. Opacus's bisection stops
    once the epsilon is within ``epsilon_tolerance`` below the target; privcal's search is finer, so its
    answer is at or below Opacus's for the same accountant. Privacy unit: one example, add/remove-one
    neighbours.

    The keyword-only signature is Opacus's own (plus ``sampling``), so that this function replaces Opacus's
    where it is called; it therefore takes its keywords directly rather than a settings object.

    Args:
        target_epsilon: in (0, inf).
        target_delta: in (0, 1).
        sample_rate: Poisson inclusion probability of each example per step, in (0, 1] (Opacus:
            1 / len(data_loader), i.e. batch size / dataset size).
        epochs: number of epochs, > 0; steps = int(epochs / sample_rate) as in Opacus. Give exactly one
            of ``epochs`` and ``steps``.
        steps: number of steps, an int >= 1.
        accountant: "best" (default: the tightest valid accountant, PLD or RDP), "pld" or "rdp".
        epsilon_tolerance: Opacus's stopping width of its bisection, in (0, inf); accepted for
            compatibility (privcal's search stops far below it).
        sampling: the batch sampler the run uses: "poisson" (default, Opacus's ``DPDataLoader``), "shuffle"
            (``poisson_sampling=False``: fixed-size batches of a fresh permutation each epoch; zero-out
            neighbours) or "balls_in_bins" (add/remove); the last two by the no-amplification bound, the
            Gaussian mechanism with mu = sqrt(ceil(epochs)) / noise_multiplier.
        kwargs: options of Opacus's own accountants (``alphas``, ``eps_error``, ``delta_error``); accepted and
            ignored. Any other keyword is refused (it could change what is priced).

    Returns:
        the noise multiplier (noise standard deviation / max_grad_norm).

    Raises:
        ValueError: bad input, naming the argument.
        InfeasibleError: no noise multiplier up to 1e12 reaches the target (a ValueError, as Opacus's
            "privacy budget is too low").
    """
    target_epsilon = V.positive("target_epsilon", target_epsilon)
    target_delta = V.open_unit("target_delta", target_delta)
    sample_rate = V.rate("sample_rate", sample_rate)
    V.positive("epsilon_tolerance", epsilon_tolerance)
    accountant = _accountant(accountant)
    if (steps is None) == (epochs is None):
        raise ValueError(f"give exactly one of steps and epochs, got steps={steps!r} and epochs={epochs!r}")
    if steps is None:
        epochs = V.positive("epochs", epochs)
        steps = int(epochs / sample_rate)
        if steps < 1:
            raise ValueError(
                f"epochs must make at least one step (epochs / sample_rate >= 1), got epochs={epochs!r} "
                f"at sample_rate={sample_rate!r}"
            )
    steps = V.positive_int("steps", steps)
    _no_options(kwargs, "get_noise_multiplier")
    if _sampler(sampling) != "poisson":  # E started epochs, each one Gaussian release of sensitivity 1
        started = math.ceil(steps * sample_rate * (1.0 - 1e-12))
        return float(calibrate(target_epsilon, target_delta, steps=max(started, 1)))
    return float(calibrate(target_epsilon, target_delta, steps=steps, sample_rate=sample_rate,
                           accountant=accountant))


def register(force: bool = False) -> None:
    """Register :class:`PrivcalAccountant` in Opacus's accountant registry as ``"privcal"``, so
    ``PrivacyEngine(accountant="privcal")`` uses it (also in ``make_private_with_epsilon``, which then
    runs Opacus's bisection on privcal's epsilon). Calling it again is harmless.

    Args:
        force: replace another accountant registered under ``"privcal"``.

    Raises:
        ImportError: opacus is not installed, or predates its registry (Opacus < 1.6: set
            ``engine.accountant = PrivcalAccountant()`` instead).
    """
    if not OPACUS_AVAILABLE:
        raise ImportError("register() needs opacus: pip install 'privcal[opacus]' (install torch CPU-only first)")
    try:
        from opacus.accountants import create_accountant, register_accountant
    except ImportError as exc:
        raise ImportError(
            "this opacus has no accountant registry (Opacus < 1.6): set engine.accountant = PrivcalAccountant()"
        ) from exc
    if not force:
        try:
            if type(create_accountant(MECHANISM)) is PrivcalAccountant:
                return
        except ValueError:  # not registered yet
            pass
    register_accountant(MECHANISM, PrivcalAccountant, force=force)
