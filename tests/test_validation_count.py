"""Values are validated once, at the public boundary (issue: "validate once").

Every rule lives in ``privcal._validate`` and is called as ``V.rule(...)``; this test wraps each rule
with a counter and checks that one front-door ``epsilon`` or ``calibrate`` call runs at most 10 of
them, whatever the accountant and setting (before the accounting layer was restructured, a KOV
calibration ran hundreds: every candidate sigma re-validated its events and every kernel its inputs).
"""

from __future__ import annotations

import math
import warnings

import pytest

import privcal
from privcal import _validate as V

LIMIT = 10

CALLS = {
    "epsilon exact": lambda: privcal.epsilon(3.0, 1e-5, steps=100),
    "epsilon paper": lambda: privcal.epsilon(3.0, 1e-5, steps=100, accountant="paper"),
    "epsilon kov": lambda: privcal.epsilon(3.0, 1e-5, steps=100, accountant="kov"),
    "epsilon rdp": lambda: privcal.epsilon(3.0, 1e-5, steps=100, accountant="rdp"),
    "epsilon poisson": lambda: privcal.epsilon(1.0, 1e-5, steps=1000, sample_rate=0.01),
    "epsilon without replacement": lambda: privcal.epsilon(
        1.0, 1e-5, steps=1000, sample_rate=0.01, sampling="without_replacement", neighbouring="replace_one"
    ),
    "epsilon paper subsampled": lambda: privcal.epsilon(1.0, 1e-5, steps=1000, sample_rate=0.01, accountant="paper"),
    "calibrate exact": lambda: privcal.calibrate(1.0, 1e-5, steps=100),
    "calibrate paper": lambda: privcal.calibrate(1.0, 1e-5, steps=100, accountant="paper"),
    "calibrate kov": lambda: privcal.calibrate(1.0, 1e-5, steps=100, accountant="kov"),
    "calibrate rdp": lambda: privcal.calibrate(1.0, 1e-5, steps=100, accountant="rdp"),
    "calibrate poisson": lambda: privcal.calibrate(1.0, 1e-5, steps=1000, sample_rate=0.01),
    "calibrate without replacement": lambda: privcal.calibrate(
        1.0, 1e-5, steps=1000, sample_rate=0.01, sampling="without_replacement", neighbouring="replace_one"
    ),
    "calibrate_report paper subsampled": lambda: privcal.calibrate_report(
        1.0, 1e-5, steps=1000, sample_rate=0.01, accountant="paper"
    ).sigma,
}


@pytest.mark.parametrize("label", list(CALLS))
def test_one_front_door_call_validates_at_most_ten_values(label, validations):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        value = CALLS[label]()
    assert value > 0
    assert 1 <= validations["n"] <= LIMIT, f"{label}: {validations['n']} validations"


def test_the_counter_sees_validation(validations):
    # the instrument itself: a call that validates must be counted (else the limit above is vacuous)
    V.positive("sigma", 1.0)
    assert validations["n"] == 1
    with pytest.raises(ValueError, match="sigma"):
        privcal.epsilon(-1.0, 1e-5)
    assert validations["n"] >= 2


@pytest.mark.parametrize(
    "call,argument",
    [
        (lambda: privcal.epsilon(math.inf, 1e-5, steps=10, accountant="kov"), "sigma"),
        (lambda: privcal.epsilon(1.0, 1e-5, steps=10, sample_rate=0.0), "sample_rate"),
        (lambda: privcal.calibrate(1.0, 1e-5, steps=0), "steps"),
        (lambda: privcal.calibrate(1.0, 1e-5, sensitivity=-2.0, accountant="rdp"), "sensitivity"),
        (lambda: privcal.calibrate(1.0, 1e-5, sample_rate=0.1, neighbouring="swap"), "neighbouring"),
        (lambda: privcal.calibrate(1.0, 1e-5, sample_rate=0.1, sampling="shuffle"), "sampling"),
        (lambda: privcal.calibrate(1.0, 1e-5, accountant="moments"), "accountant"),
    ],
)
def test_errors_name_the_users_own_argument(call, argument):
    with pytest.raises(ValueError, match=rf"^{argument} must "):
        call()


# ---------------------------------------------------------------------------------------------------------
# `privcal train AGENT`: validations per call, counted by argument (item 9: "one validation per
# train call"). The instrument records the name each rule of privcal._validate is given; an argument of the
# command (a dest of its parser) must be validated once. The arguments still validated more than once are
# listed in REPEATED with their count and where the extra validations happen: the test fails when a count
# changes either way, so the table stays the true list of what remains.

from privcal import cli  # noqa: E402

TRAIN = {
    "dpq": ["train", "dpq", "--epsilon", "1", "--delta", "1e-5", "--samples", "200", "--json"],
    "gpope": ["train", "gpope", "--epsilon", "1", "--delta", "1e-5", "--trajectories", "30", "--iterations", "60",
              "--eval-trajectories", "30", "--json"],
    "dpq sigma": ["train", "dpq", "--sigma", "0.5", "--samples", "200", "--json"],
    "dpq bgp16": ["train", "dpq", "--method", "bgp16", "--epsilon", "1", "--delta", "1e-5", "--samples", "200", "--json"],
    "dpq bgp16 sigma": ["train", "dpq", "--method", "bgp16", "--sigma", "0.3", "--resets", "1", "--samples", "200",
                        "--json"],
    "dpq dp-sgd": ["train", "dpq", "--method", "dp-sgd", "--epsilon", "1", "--delta", "1e-5", "--samples", "200",
                   "--json"],
    "dpq input-perturbation": ["train", "dpq", "--method", "input-perturbation", "--epsilon", "1", "--delta", "1e-5",
                               "--samples", "200", "--json"],
    "dpq non-private": ["train", "dpq", "--method", "non-private", "--samples", "200", "--json"],
    "gpope hiv": ["train", "gpope", "--domain", "hiv", "--epsilon", "1", "--delta", "1e-5", "--trajectories", "10",
                  "--iterations", "20", "--eval-trajectories", "10", "--horizon", "5", "--q-episodes", "2", "--json"],
    "pucb": ["train", "pucb", "--epsilon", "1", "--episodes", "50", "--states", "3", "--actions", "2",
             "--horizon", "3", "--json"],
    "pucb gaussian": ["train", "pucb", "--epsilon", "1", "--episodes", "50", "--states", "3", "--actions", "2",
                      "--horizon", "3", "--counter-noise", "gaussian", "--delta", "1e-5", "--json"],
}

REPEATED = {
    # the agent's counters are built with BinaryCounter.unchecked (their epsilon/(6H) derives from the checked epsilon)
    "pucb": {},
    # the Gaussian counters: gaussian_sigma_unchecked, gaussian_psum_sensitivity_unchecked,
    # gaussian_error_bound_unchecked and gaussian.epsilon_exact_unchecked after the CLI's checks
    "pucb gaussian": {},
    # the CLI validates each value once and calls calibrate_report_unchecked, sample_chain_unchecked, gpope_unchecked
    "gpope": {},
    # mountain-car and hiv: sample_mountain_car_unchecked / sample_hiv_unchecked (policies.collect_unchecked)
    "gpope hiv": {},
    # train_dpq validates its target once (calibrators.dpq.check_target) and calls
    # calibrators.dpq_noise.functional_noise_unchecked; the runs
    # build their network, environment and noise layers with the unchecked constructors (LipschitzMLP.unchecked,
    # IntervalEnv.unchecked, OrnsteinUhlenbeckPaths.unchecked); the references use reference_return_unchecked
    "dpq": {},
    # --sigma: App. E.3's beta without re-validating its constants (rkhs.kernel_beta_thm5_unchecked); the runs
    # (and the non-private reference) through privcal.rl.dpq.run.run_unchecked, the BGP16 noise through
    # WhiteNoisePaths.unchecked
    "dpq sigma": {}, "dpq bgp16 sigma": {}, "dpq non-private": {},
    # the baselines' calibrations: the CLI calls experiments.unchecked_noise_for, whose calibrators check the
    # target once (bgp16: calibrators.dpq_noise.noise_for_unchecked -> check_target + functional_noise_unchecked;
    # dp-sgd / input-perturbation: baselines.*_unchecked -> privcal.calibrate) and trust the Hyperparameters
    "dpq bgp16": {}, "dpq dp-sgd": {}, "dpq input-perturbation": {},
}


@pytest.fixture
def validated_names(monkeypatch):
    """Count the validations of each argument name (every rule of ``privcal._validate`` wrapped; callers go
    through the module's attributes, as the ``validations`` fixture of conftest.py relies on)."""
    import collections
    import inspect

    counts = collections.Counter()
    for name, fn in list(vars(V).items()):
        if inspect.isfunction(fn) and not name.startswith("_") and fn.__module__ == V.__name__:
            def wrapped(*args, _fn=fn, _rule=name, **kwargs):
                if _rule != "samples_and_batch":  # it calls positive_int for each of its two (counted there)
                    counts[args[0] if args else kwargs["name"]] += 1
                return _fn(*args, **kwargs)

            monkeypatch.setattr(V, name, wrapped)
    return counts


def _dests(agent: str) -> set[str]:
    """The argument names (dests) of ``privcal train AGENT``."""
    import argparse

    parser = cli.build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices["train"]
    agents = next(a for a in sub._actions if isinstance(a, argparse._SubParsersAction)).choices
    return {a.dest for a in agents[agent]._actions} - {"help"}


@pytest.mark.parametrize("agent", sorted(TRAIN))
def test_train_validates_each_argument_once(agent, validated_names, capsys):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert cli.main(TRAIN[agent]) == 0
    capsys.readouterr()
    arguments = {n: c for n, c in validated_names.items() if n in _dests(TRAIN[agent][1])}
    # the instrument saw the command's own arguments: the target (or the given sigma) and the data size
    seen = {"epsilon" if "--epsilon" in TRAIN[agent] else "sigma" if "--sigma" in TRAIN[agent] else "samples"}
    assert seen <= set(arguments)
    repeated = {n: c for n, c in arguments.items() if c != 1}
    assert repeated == REPEATED[agent], f"{agent}: validated more than once: {repeated}"


def test_the_train_counter_sees_each_name(validated_names):
    V.positive("sigma", 1.0)
    V.samples_and_batch(10, 2)
    V.positive("sigma", 2.0)
    assert validated_names == {"sigma": 2, "samples": 1, "batch_size": 1}
    assert "samples" in _dests("dpq") and "failure_probability" in _dests("pucb") and "help" not in _dests("gpope")
