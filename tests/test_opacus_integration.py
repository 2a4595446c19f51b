"""privcal.integrations.opacus: the accountant Opacus's PrivacyEngine can use, and get_noise_multiplier.

The pricing tests need neither torch nor opacus (the accountant is then a plain class with the same
methods). The test marked ``opacus`` trains a tiny model with Opacus on CPU torch and is skipped when
they are absent (CI installs neither; see README "Using privcal inside Opacus" for how to run it).
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
import warnings
from types import SimpleNamespace

import pytest
from hypothesis import given
from hypothesis import strategies as st

import privcal
from privcal.integrations import opacus as po
from privcal.integrations.opacus import (
    PrivcalAccountant,
    SamplerWarning,
    get_noise_multiplier,
    history_event,
    sampler_of,
)


def _run(nm, q, n):
    """The privcal event of n steps of Opacus's DP-SGD step (written independently of the module)."""
    release = privcal.GaussianEvent(nm) if q == 1 else privcal.PoissonSampledEvent(q, privcal.GaussianEvent(nm))
    return privcal.SelfComposedEvent(release, n)


def _steps(acc, runs):
    for nm, q, n in runs:
        for _ in range(n):
            acc.step(noise_multiplier=nm, sample_rate=q)


# --- recording -------------------------------------------------------------------------------------


def test_history_records_runs_as_opacus_rdp_accountant_does():
    # Opacus's RDPAccountant.step (opacus/accountants/rdp.py, 1.5 and 1.6): a step equal to the last
    # run extends it, any other step starts a new run (an earlier equal run is not reopened).
    acc = PrivcalAccountant()
    _steps(acc, [(1.1, 0.01, 3), (1.3, 0.01, 2), (1.1, 0.01, 1), (1.1, 0.02, 2)])
    assert acc.history == [(1.1, 0.01, 3), (1.3, 0.01, 2), (1.1, 0.01, 1), (1.1, 0.02, 2)]
    assert len(acc) == 8  # optimizer steps (IAccountant.__len__'s documented meaning)
    assert PrivcalAccountant.mechanism() == acc.mechanism() == "privcal"


def test_hook_records_the_optimizers_noise_at_the_accumulated_rate():
    # IAccountant.get_optimizer_hook_fn (Opacus 1.5/1.6): sample_rate * optim.accumulated_iterations
    acc = PrivcalAccountant()
    hook = acc.get_optimizer_hook_fn(sample_rate=0.125)
    hook(SimpleNamespace(noise_multiplier=1.5, accumulated_iterations=1))
    hook(SimpleNamespace(noise_multiplier=1.5, accumulated_iterations=1))
    hook(SimpleNamespace(noise_multiplier=1.5, accumulated_iterations=2))
    assert acc.history == [(1.5, 0.125, 2), (1.5, 0.25, 1)]
    with pytest.raises(ValueError, match="sample_rate must be in \\(0, 1\\], got 1.25"):
        hook(SimpleNamespace(noise_multiplier=1.5, accumulated_iterations=10))


@given(st.lists(st.sampled_from([(1.1, 0.01), (1.3, 0.01), (1.1, 0.02), (0.7, 1.0)]), max_size=40))
def test_history_expands_to_the_steps_taken_and_groups_count_them(steps):
    acc = PrivcalAccountant()
    for nm, q in steps:
        acc.step(noise_multiplier=nm, sample_rate=q)
    assert [(nm, q) for nm, q, n in acc.history for _ in range(n)] == steps  # runs, in order
    assert all(a[:2] != b[:2] for a, b in zip(acc.history, acc.history[1:]))  # maximal runs
    assert len(acc) == len(steps)
    event = history_event(acc.history)
    expected = {}
    for pair in steps:
        expected[pair] = expected.get(pair, 0) + 1
    if event is None:
        assert not steps
    else:  # one repetition per distinct pair, counting its steps, in first-appearance order
        leaves = privcal.accounting.events.flatten(event)
        assert [(leaf, n) for leaf, n in leaves] == [(_run(nm, q, 1).event, n) for (nm, q), n in expected.items()]


# --- pricing ---------------------------------------------------------------------------------------


def test_epsilon_is_epsilon_of_the_same_history():
    acc = PrivcalAccountant()
    _steps(acc, [(1.1, 0.01, 40), (0.9, 0.02, 10), (1.1, 0.01, 20)])
    # the two (1.1, 0.01) runs are one repetition of 60 steps: composition commutes
    history = privcal.ComposedEvent([_run(1.1, 0.01, 60), _run(0.9, 0.02, 10)])
    for delta in (1e-5, 1e-3):
        assert acc.get_epsilon(delta) == privcal.epsilon_of(history, delta)
    rdp = PrivcalAccountant("rdp")
    rdp.history = list(acc.history)
    assert rdp.get_epsilon(1e-5) == privcal.epsilon_of(history, 1e-5, accountant="rdp")
    assert acc.get_epsilon(1e-5) <= rdp.get_epsilon(1e-5)  # best: the smallest certified upper bound


def test_one_run_is_the_front_door_setting():
    # privcal.epsilon builds its event through Releases, not through this module
    acc = PrivcalAccountant()
    acc.history = [(1.1, 0.01, 1000)]
    assert acc.get_epsilon(1e-5) == privcal.epsilon(1.1, 1e-5, steps=1000, sample_rate=0.01)
    full = PrivcalAccountant()
    full.history = [(10.0, 1.0, 100)]  # sample rate 1: plain Gaussians, mu = sqrt(100) / 10 = 1
    assert full.get_epsilon(1e-5) == pytest.approx(4.3772, abs=1e-4)  # exact profile (privcal.epsilon docstring)


def test_grouping_merges_equal_pairs_in_first_appearance_order():
    event = history_event([(1.1, 0.01, 3), (1.3, 0.01, 2), (1.1, 0.01, 4), [1.3, 0.01, 1]])
    assert privcal.accounting.events.flatten(event) == [
        (privcal.PoissonSampledEvent(0.01, privcal.GaussianEvent(1.1)), 7),
        (privcal.PoissonSampledEvent(0.01, privcal.GaussianEvent(1.3)), 3),
    ]
    assert history_event([(2.0, 0.1, 5)]) == _run(2.0, 0.1, 5)  # one pair: its repetition itself
    assert history_event([]) is None


def test_no_step_costs_nothing_and_a_step_without_noise_costs_everything():
    acc = PrivcalAccountant()
    assert acc.get_epsilon(1e-5) == 0.0 and len(acc) == 0  # no release: epsilon 0 is the truth
    _steps(acc, [(1.0, 0.01, 5), (0.0, 0.01, 1)])
    assert acc.get_epsilon(1e-5) == math.inf  # the noiseless sum is released: no finite upper bound
    with pytest.raises(ValueError, match="noise_multiplier must be in \\(0, inf\\)"):
        history_event(acc.history)


def test_opacus_keyword_options_do_not_change_the_answer():
    acc = PrivcalAccountant()
    acc.history = [(1.0, 0.05, 100)]
    assert acc.get_epsilon(1e-5, alphas=[2, 3], eps_error=0.5) == acc.get_epsilon(1e-5)


# --- state_dict ------------------------------------------------------------------------------------


def test_state_dict_round_trip_including_json():
    acc = PrivcalAccountant("rdp")
    _steps(acc, [(1.1, 0.01, 3), (1.2, 0.02, 2)])
    state = acc.state_dict()
    assert set(state) == {"history", "mechanism", "accountant"} and state["mechanism"] == "privcal"
    acc.step(noise_multiplier=1.2, sample_rate=0.02)  # the saved state is a copy
    assert state["history"] == [(1.1, 0.01, 3), (1.2, 0.02, 2)]
    for saved in (state, json.loads(json.dumps(state))):  # JSON turns the tuples into lists
        back = PrivcalAccountant()
        back.load_state_dict(saved)
        assert back.history == [(1.1, 0.01, 3), (1.2, 0.02, 2)] and back.accountant == "rdp"
        assert back.get_epsilon(1e-5) == privcal.epsilon_of(
            privcal.ComposedEvent([_run(1.1, 0.01, 3), _run(1.2, 0.02, 2)]), 1e-5, accountant="rdp")
    target = {}
    assert acc.state_dict(target) is target and target["history"][-1] == (1.2, 0.02, 3)


@pytest.mark.parametrize("state, message", [
    (None, "state_dict is empty"),
    ({}, "state_dict is empty"),
    ({"mechanism": "privcal"}, "no key 'history'"),
    ({"history": []}, "no key 'mechanism'"),
    ({"history": [], "mechanism": "rdp"}, "mechanism must be 'privcal', got 'rdp'"),
    ({"history": [(1.0, 0.1)], "mechanism": "privcal"}, "history\\[0\\] must be"),
    ({"history": [(1.0, 1.5, 3)], "mechanism": "privcal"}, "history\\[0\\] sample_rate must be in \\(0, 1\\]"),
    ({"history": [(1.0, 0.1, 3), (-1.0, 0.1, 3)], "mechanism": "privcal"}, "history\\[1\\] noise_multiplier"),
    ({"history": [(1.0, 0.1, 0)], "mechanism": "privcal"}, "history\\[0\\] steps must be an integer >= 1"),
    ({"history": [], "mechanism": "privcal", "accountant": "paper"}, "accountant must be one of"),
])
def test_load_state_dict_refuses_bad_states(state, message):
    acc = PrivcalAccountant()
    acc.history = [(1.0, 0.1, 1)]
    with pytest.raises(ValueError, match=message):
        acc.load_state_dict(state)
    assert acc.history == [(1.0, 0.1, 1)]  # a refused state leaves the accountant as it was


# --- get_noise_multiplier --------------------------------------------------------------------------


def _opacus_bisection(target_epsilon, target_delta, sample_rate, steps, tolerance=0.01):
    """Opacus's get_noise_multiplier loop (opacus/accountants/utils.py, 1.5/1.6) on privcal's accountant."""
    acc = PrivcalAccountant()
    eps_high, sigma_low, sigma_high = math.inf, 0.0, 10.0
    while eps_high > target_epsilon:
        sigma_high *= 2
        acc.history = [(sigma_high, sample_rate, steps)]
        eps_high = acc.get_epsilon(target_delta)
    while target_epsilon - eps_high > tolerance:
        sigma = (sigma_low + sigma_high) / 2
        acc.history = [(sigma, sample_rate, steps)]
        eps = acc.get_epsilon(target_delta)
        if eps < target_epsilon:
            sigma_high, eps_high = sigma, eps
        else:
            sigma_low = sigma
    return sigma_high


@pytest.mark.parametrize("target_epsilon, sample_rate, steps", [
    (1.0, 0.01, 1000), (3.0, 0.004, 2500), (8.0, 0.1, 50), (2.0, 1.0, 10),
])
def test_get_noise_multiplier_round_trip(target_epsilon, sample_rate, steps):
    nm = get_noise_multiplier(target_epsilon=target_epsilon, target_delta=1e-5, sample_rate=sample_rate,
                              steps=steps)
    acc = PrivcalAccountant()
    acc.history = [(nm, sample_rate, steps)]
    achieved = acc.get_epsilon(1e-5)
    assert achieved <= target_epsilon and target_epsilon - achieved <= 0.01  # Opacus's tolerance
    # minimal within the PLD's accuracy (its calibration probes the rule grid's upper end, which is never
    # below the refined bracket's, default relative accuracy 1e-3): 0.2 % less noise misses the target
    acc.history = [(nm * (1 - 2e-3), sample_rate, steps)]
    assert acc.get_epsilon(1e-5) > target_epsilon
    assert nm == privcal.calibrate(target_epsilon, 1e-5, steps=steps, sample_rate=sample_rate)


def test_get_noise_multiplier_at_or_below_opacus_bisection_on_the_same_accountant():
    nm = get_noise_multiplier(target_epsilon=2.0, target_delta=1e-5, sample_rate=0.02, epochs=2)
    assert nm == get_noise_multiplier(target_epsilon=2.0, target_delta=1e-5, sample_rate=0.02, steps=100)
    assert nm <= _opacus_bisection(2.0, 1e-5, 0.02, 100)


def test_get_noise_multiplier_epochs_as_opacus_counts_them():
    # Opacus: steps = int(epochs / sample_rate); 1.5 / 0.03 = 50.000000000000004 -> 50
    a = get_noise_multiplier(target_epsilon=4.0, target_delta=1e-5, sample_rate=0.03, epochs=1.5)
    assert a == get_noise_multiplier(target_epsilon=4.0, target_delta=1e-5, sample_rate=0.03, steps=50)


@pytest.mark.parametrize("kwargs, message", [
    ({"target_epsilon": 0.0}, "target_epsilon must be in \\(0, inf\\), got 0.0"),
    ({"target_epsilon": float("nan")}, "target_epsilon must be a number"),
    ({"target_delta": 1.5}, "target_delta must be in \\(0, 1\\), got 1.5"),
    ({"sample_rate": 0.0}, "sample_rate must be in \\(0, 1\\], got 0.0"),
    ({"sample_rate": 2}, "sample_rate must be in \\(0, 1\\], got 2"),
    ({"steps": None}, "exactly one of steps and epochs"),
    ({"epochs": 1}, "exactly one of steps and epochs"),
    ({"steps": 0}, "steps must be an integer >= 1, got 0"),
    ({"steps": 2.5}, "steps must be an integer >= 1, got 2.5"),
    ({"steps": None, "epochs": -1.0}, "epochs must be in \\(0, inf\\), got -1.0"),
    ({"steps": None, "epochs": 0.001}, "epochs must make at least one step"),
    ({"accountant": "prv"}, "accountant must be one of \\('best', 'pld', 'rdp'\\), got 'prv'"),
    ({"accountant": "paper"}, "accountant must be one of"),
    ({"epsilon_tolerance": 0.0}, "epsilon_tolerance must be in \\(0, inf\\)"),
])
def test_get_noise_multiplier_refuses_bad_input(kwargs, message):
    args = dict(target_epsilon=1.0, target_delta=1e-5, sample_rate=0.01, steps=100)
    args.update(kwargs)
    with pytest.raises(ValueError, match=message):
        get_noise_multiplier(**args)


def test_accountant_refuses_bad_input():
    with pytest.raises(ValueError, match="accountant must be one of"):
        PrivcalAccountant("exact")
    acc = PrivcalAccountant()
    with pytest.raises(ValueError, match="noise_multiplier must be in \\[0, inf\\), got -1"):
        acc.step(noise_multiplier=-1, sample_rate=0.1)
    with pytest.raises(ValueError, match="sample_rate must be in \\(0, 1\\], got 0"):
        acc.step(noise_multiplier=1.0, sample_rate=0)
    with pytest.raises(ValueError, match="delta must be in \\(0, 1\\), got 0"):
        acc.get_epsilon(0)
    with pytest.raises(ValueError, match="sample_rate must be in \\(0, 1\\]"):
        acc.get_optimizer_hook_fn(0.0)
    acc.history = [(1.0, 0.1)]  # Opacus code may write history directly: checked when priced
    with pytest.raises(ValueError, match="history\\[0\\] must be"):
        acc.get_epsilon(1e-5)
    assert len(acc.history) == 1


# --- import without opacus -------------------------------------------------------------------------


def test_privcal_does_not_import_the_integration_and_it_imports_without_opacus():
    code = ("import sys, privcal; assert 'privcal.integrations.opacus' not in sys.modules; "
            "import privcal.integrations.opacus as m; print(m.OPACUS_AVAILABLE, 'torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    if out[0] == "False":  # opacus absent (as in CI): nothing of torch was loaded either
        assert out[1] == "False" and PrivcalAccountant.__mro__[1:] == (object,)


def test_register_without_opacus_says_what_to_install():
    if po.OPACUS_AVAILABLE:
        pytest.skip("opacus is installed: register() is exercised by the opacus-marked test")
    with pytest.raises(ImportError, match="pip install 'privcal\\[opacus\\]'"):
        po.register()


# --- inside Opacus (CPU torch) ---------------------------------------------------------------------


@pytest.mark.opacus
def test_privacy_engine_trains_with_privcals_accountant(tmp_path):
    """A tiny model trained by Opacus's PrivacyEngine with PrivcalAccountant: the recorded history is
    the steps taken, privcal's epsilon is epsilon_of of that history, and it is at or below Opacus's
    own RDP accountant on the same history (opacus.accountants.RDPAccountant: Mironov et al. 2019
    subsampled-Gaussian RDP on Opacus's default orders; both are upper bounds, privcal's the tightest
    certified one). A checkpoint saved and loaded by Opacus restores the accountant."""
    torch = pytest.importorskip("torch")
    pytest.importorskip("opacus")
    from opacus import PrivacyEngine
    from opacus.accountants import RDPAccountant

    torch.manual_seed(0)
    data = torch.utils.data.TensorDataset(torch.randn(64, 4), torch.randint(0, 2, (64,)))
    loader = torch.utils.data.DataLoader(data, batch_size=8)
    model = torch.nn.Linear(4, 2)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    engine = PrivacyEngine()
    engine.accountant = PrivcalAccountant()  # works on every Opacus; register() below for >= 1.6
    model, optimizer, loader = engine.make_private(
        module=model, optimizer=optimizer, data_loader=loader, noise_multiplier=1.1, max_grad_norm=1.0,
        poisson_sampling=True,
    )
    sample_rate = 1 / len(loader)  # what make_private hands the accountant's hook (64 / 8 batches)
    taken = []

    def train(batches):
        for i, (x, y) in enumerate(loader):
            if i == batches:
                break
            optimizer.zero_grad()
            torch.nn.functional.cross_entropy(model(x), y).backward()
            optimizer.step()
            taken.append(optimizer.noise_multiplier)

    train(5)
    optimizer.noise_multiplier = 1.5  # a noise schedule: a second run in the history
    train(3)
    history = engine.accountant.history
    assert sum(n for _, _, n in history) == len(taken) == len(engine.accountant) > 0
    assert history == [(1.1, sample_rate, 5), (1.5, sample_rate, 3)] and taken == [1.1] * 5 + [1.5] * 3

    event = privcal.ComposedEvent([_run(nm, q, n) for nm, q, n in history])
    ours = engine.get_epsilon(1e-5)
    assert ours == privcal.epsilon_of(event, 1e-5) and 0 < ours < math.inf
    rdp = RDPAccountant()
    rdp.history = list(history)
    assert ours <= rdp.get_epsilon(1e-5)

    path = tmp_path / "checkpoint.pt"
    engine.save_checkpoint(path=path, module=model, optimizer=optimizer)
    restored = PrivacyEngine()
    restored.accountant = PrivcalAccountant()
    restored.load_checkpoint(path=path, module=model, optimizer=optimizer)
    assert restored.accountant.history == history and restored.get_epsilon(1e-5) == ours


@pytest.mark.opacus
def test_opacus_registry_and_make_private_with_epsilon():
    """Opacus >= 1.6: register() makes PrivacyEngine(accountant="privcal") work, and
    make_private_with_epsilon (Opacus's bisection with tolerance 0.01 on privcal's epsilon) picks a
    noise multiplier at or above privcal's get_noise_multiplier for the same setting."""
    torch = pytest.importorskip("torch")
    opacus = pytest.importorskip("opacus")
    from opacus import PrivacyEngine

    try:
        from opacus.accountants import register_accountant  # noqa: F401 (Opacus >= 1.6)
    except ImportError:
        with pytest.raises(ImportError, match="no accountant registry"):
            po.register()
        pytest.skip(f"opacus {opacus.__version__} has no accountant registry")
    po.register()
    po.register()  # again: harmless
    torch.manual_seed(0)
    data = torch.utils.data.TensorDataset(torch.randn(64, 4), torch.randint(0, 2, (64,)))
    engine = PrivacyEngine(accountant="privcal")
    assert isinstance(engine.accountant, PrivcalAccountant)
    model = torch.nn.Linear(4, 2)
    model, optimizer, loader = engine.make_private_with_epsilon(
        module=model, optimizer=torch.optim.SGD(model.parameters(), lr=0.1),
        data_loader=torch.utils.data.DataLoader(data, batch_size=8), target_epsilon=2.0, target_delta=1e-5,
        epochs=1, max_grad_norm=1.0,
    )
    ours = get_noise_multiplier(target_epsilon=2.0, target_delta=1e-5, sample_rate=1 / len(loader), epochs=1)
    assert ours <= optimizer.noise_multiplier


# --- the sampler a run used (shuffled loaders are not Poisson) -----------------------------------------


class RandomSampler:  # stand-ins named as torch's samplers (sampler_of reads class names; no torch here)
    replacement = False


class SequentialSampler:
    pass


class UniformWithReplacementSampler:
    pass


class _Loader:
    def __init__(self, sampler=None, batch_sampler=None):
        self.sampler, self.batch_sampler = sampler, batch_sampler


def test_sampler_of_reads_the_loader():
    assert sampler_of(_Loader(RandomSampler())) == "shuffle"
    assert sampler_of(_Loader(SequentialSampler())) == "shuffle"
    assert sampler_of(_Loader(None, UniformWithReplacementSampler())) == "poisson"
    with pytest.raises(ValueError, match="sampling="):
        sampler_of(_Loader(object()))


def test_a_shuffled_run_is_priced_as_shuffled_and_warns_once_with_the_poisson_figure():
    # the running example of docs/samplers.md: N = 1000, b = 10 (q = 0.01, 100 steps = 1 epoch), noise multiplier 1, delta 1e-5;
    # the no-amplification bound is the Gaussian with mu = sqrt(1) / 1: 4.3772 (Balle & Wang 2018, exact profile)
    acc = PrivcalAccountant().watch(_Loader(RandomSampler()))
    assert acc.sampling == "shuffle" and acc.sampling_source == "loader" and acc.neighbouring == "zero_out"
    acc.history = [(1.0, 0.01, 100)]
    with pytest.warns(SamplerWarning, match=r"4\.377.*Poisson accounting would say 0\.718.*not valid"):
        value = acc.get_epsilon(1e-5)
    assert value == pytest.approx(privcal.epsilon(1.0, 1e-5), rel=1e-12)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert acc.get_epsilon(1e-5) == value  # once
    poisson = PrivcalAccountant()
    poisson.history = list(acc.history)
    assert poisson.get_epsilon(1e-5) < 0.72 < value  # Poisson's figure is the optimistic one
    acc.history = [(1.0, 0.01, 101)]  # a started second epoch: mu = sqrt(2)
    assert acc.get_epsilon(1e-5) == pytest.approx(privcal.epsilon(1.0, 1e-5, steps=2), rel=1e-12)
    acc.history = [(2.0, 0.01, 150), (1.0, 0.01, 60)]  # 2.1 -> 3 epochs: the 3 least noisy steps
    assert acc.get_epsilon(1e-5) == pytest.approx(privcal.epsilon(1.0, 1e-5, sensitivity=math.sqrt(3)), rel=1e-12)


def test_make_private_s_poisson_sampling_is_read_by_the_hook_factory():
    def make_private(poisson_sampling):  # what Opacus's make_private does: ask the accountant for its hook
        return acc.get_optimizer_hook_fn(sample_rate=0.1)

    acc = PrivcalAccountant()
    make_private(poisson_sampling=False)
    assert (acc.sampling, acc.sampling_source) == ("shuffle", "make_private")
    acc = PrivcalAccountant()
    make_private(poisson_sampling=True)
    assert (acc.sampling, acc.sampling_source) == ("poisson", "make_private")
    acc = PrivcalAccountant(sampling="balls_in_bins")
    make_private(poisson_sampling=False)  # stated by the user: kept
    assert (acc.sampling, acc.sampling_source, acc.neighbouring) == ("balls_in_bins", "stated", "add_remove")
    assert PrivcalAccountant().sampling_source == "assumed"


def test_get_noise_multiplier_calibrates_for_the_sampler_and_never_swallows_a_keyword():
    poisson = get_noise_multiplier(target_epsilon=4.3772, target_delta=1e-5, sample_rate=0.01, epochs=1)
    shuffled = get_noise_multiplier(target_epsilon=4.3772, target_delta=1e-5, sample_rate=0.01, epochs=1,
                                    sampling="shuffle")
    assert poisson == pytest.approx(0.5727, abs=1e-3)  # Poisson's sigma: dp_accounting 0.6.0's PLD gives epsilon 4.3757 <= 4.3772 at 0.5727
    assert shuffled == pytest.approx(1.0, abs=1e-4)  # exact Gaussian: epsilon(1.0, 1e-5) = 4.3772
    with pytest.raises(ValueError, match="'samplign'"):
        get_noise_multiplier(target_epsilon=1.0, target_delta=1e-5, sample_rate=0.01, epochs=1, samplign="shuffle")
    with pytest.raises(ValueError, match="sampling"):
        get_noise_multiplier(target_epsilon=1.0, target_delta=1e-5, sample_rate=0.01, epochs=1, sampling="bogus")
    with pytest.raises(ValueError, match="'sampler'"):
        PrivcalAccountant().get_epsilon(1e-5, sampler="shuffle")


@pytest.mark.opacus
@pytest.mark.parametrize("poisson_sampling", [True, False])
def test_privacy_engine_prices_the_loader_it_ran(poisson_sampling):
    """Inside Opacus: make_private with Opacus's DPDataLoader (poisson_sampling=True) is priced as Poisson, and
    with the user's shuffled loader (poisson_sampling=False) as shuffled -- read by the accountant itself, with a
    one-time SamplerWarning naming the Poisson figure it did not use."""
    torch = pytest.importorskip("torch")
    pytest.importorskip("opacus")
    from opacus import PrivacyEngine

    torch.manual_seed(0)
    data = torch.utils.data.TensorDataset(torch.randn(64, 4), torch.randint(0, 2, (64,)))
    loader = torch.utils.data.DataLoader(data, batch_size=8, shuffle=True)
    model = torch.nn.Linear(4, 2)
    engine = PrivacyEngine()
    engine.accountant = PrivcalAccountant()
    model, optimizer, loader = engine.make_private(
        module=model, optimizer=torch.optim.SGD(model.parameters(), lr=0.1), data_loader=loader,
        noise_multiplier=1.0, max_grad_norm=1.0, poisson_sampling=poisson_sampling)
    acc = engine.accountant
    assert (acc.sampling, acc.sampling_source) == ("poisson" if poisson_sampling else "shuffle", "make_private")
    assert sampler_of(loader) == acc.sampling  # the loader agrees with make_private's argument
    for x, y in loader:  # one epoch: 8 steps at sample rate 1/8
        optimizer.zero_grad()
        torch.nn.functional.cross_entropy(model(x), y).backward()
        optimizer.step()
    if poisson_sampling:
        assert engine.get_epsilon(1e-5) < privcal.epsilon(1.0, 1e-5)
    else:
        with pytest.warns(SamplerWarning, match="not valid for this sampler"):
            value = engine.get_epsilon(1e-5)
        assert value == pytest.approx(privcal.epsilon(1.0, 1e-5), rel=1e-12)  # one epoch: mu = 1


@pytest.mark.opacus
def test_make_private_with_epsilon_calibrates_a_shuffled_loader_as_shuffled():
    """Opacus >= 1.6: make_private_with_epsilon(poisson_sampling=False) searches on privcal's epsilon of the
    shuffled run (its fresh accountants read the argument too), so its noise multiplier is at or above privcal's
    shuffle calibration -- not Poisson's, which is far smaller."""
    torch = pytest.importorskip("torch")
    opacus = pytest.importorskip("opacus")
    from opacus import PrivacyEngine

    try:
        from opacus.accountants import register_accountant  # noqa: F401 (Opacus >= 1.6)
    except ImportError:
        pytest.skip(f"opacus {opacus.__version__} has no accountant registry")
    po.register()
    torch.manual_seed(0)
    data = torch.utils.data.TensorDataset(torch.randn(64, 4), torch.randint(0, 2, (64,)))
    engine = PrivacyEngine(accountant="privcal")
    model = torch.nn.Linear(4, 2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SamplerWarning)
        model, optimizer, loader = engine.make_private_with_epsilon(
            module=model, optimizer=torch.optim.SGD(model.parameters(), lr=0.1),
            data_loader=torch.utils.data.DataLoader(data, batch_size=8, shuffle=True), target_epsilon=2.0,
            target_delta=1e-5, epochs=2, max_grad_norm=1.0, poisson_sampling=False)
    q = 1 / len(loader)
    shuffled = get_noise_multiplier(target_epsilon=2.0, target_delta=1e-5, sample_rate=q, epochs=2, sampling="shuffle")
    poisson = get_noise_multiplier(target_epsilon=2.0, target_delta=1e-5, sample_rate=q, epochs=2)
    assert optimizer.noise_multiplier >= shuffled * (1 - 1e-6) > poisson
    assert engine.accountant.sampling == "shuffle"


def test_an_accountant_that_cannot_see_the_sampler_says_what_it_assumed():
    acc = PrivcalAccountant()
    acc.history = [(1.0, 0.01, 100)]
    with pytest.warns(SamplerWarning, match="did not see which batch sampler.*priced it as Poisson"):
        acc.get_epsilon(1e-5)
    stated = PrivcalAccountant(sampling="poisson")
    stated.history = list(acc.history)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert stated.get_epsilon(1e-5) == acc.get_epsilon(1e-5)
