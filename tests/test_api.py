"""The front door: privcal.epsilon / privcal.calibrate and their reports."""

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

import privcal
from privcal.analysis import composition

NAMES = ("exact", "paper", "kov", "rdp")


def test_best_is_exact_for_plain_gaussian():
    # closed form: 100 releases at sigma = 10 compose to mu = 1
    assert privcal.epsilon(10.0, 1e-5, steps=100) == pytest.approx(
        privcal.analysis.gaussian.epsilon_exact(1e-5, 1.0), rel=1e-12
    )
    r = privcal.epsilon_report(10.0, 1e-5, steps=100)
    assert r.accountant == "exact" and r.valid and "exact" in r.guarantee


@pytest.mark.parametrize("name", NAMES)
@given(sigma=st.floats(0.5, 50.0), steps=st.integers(1, 100), sens=st.floats(0.1, 3.0))
def test_every_accountant_at_least_best(name, sigma, steps, sens):
    best = privcal.epsilon(sigma, 1e-5, sensitivity=sens, steps=steps)
    assert privcal.epsilon(sigma, 1e-5, sensitivity=sens, steps=steps, accountant=name) >= best * (1 - 1e-9)


@pytest.mark.parametrize("name", (*NAMES, "best"))
@given(eps=st.floats(0.1, 10.0), steps=st.integers(1, 100), delta=st.sampled_from([1e-3, 1e-5, 1e-8]))
def test_calibrate_epsilon_round_trip(name, eps, steps, delta):
    sigma = privcal.calibrate(eps, delta, steps=steps, accountant=name)
    achieved = privcal.epsilon(sigma, delta, steps=steps, accountant=name)
    assert achieved <= eps
    assert achieved >= eps * (1 - 1e-4)  # calibrate returns the smallest sigma, not just some sigma


def test_calibrate_scales_with_sensitivity():
    assert privcal.calibrate(1.0, 1e-5, sensitivity=3.0) == pytest.approx(3 * privcal.calibrate(1.0, 1e-5))


def test_report_fields():
    r = privcal.calibrate_report(1.0, 1e-5, steps=10, sensitivity=2.0, accountant="rdp")
    assert r.accountant == "rdp" and r.valid and r.achieved_epsilon <= 1.0
    assert r.noise_multiplier == pytest.approx(r.sigma / 2.0)


def test_paper_notes_say_when_the_closed_form_fails():
    # Thm 5 closed-form sigma is insufficient for large epsilon (tests/test_composition.py pins the
    # threshold, ~15 at delta = 1e-5); at eps = 50, delta = 1e-5 it does not give (50, 1e-5)-DP
    closed = composition.thm5_sigma_proof_paper(50.0, 1e-5, steps=1, sensitivity=1.0)
    assert composition.epsilon_composed_exact(closed, 1e-5, steps=1) > 50.0
    notes = privcal.calibrate_report(50.0, 1e-5, accountant="paper").notes
    assert any("not sufficient" in n for n in notes)
    notes = privcal.calibrate_report(0.5, 1e-5, accountant="paper").notes
    assert any("sufficient here" in n and "not" not in n for n in notes)


@pytest.mark.parametrize(
    "call,name",
    [
        (lambda: privcal.epsilon(0.0, 1e-5), "sigma"),
        (lambda: privcal.epsilon(1.0, 2.0), "delta"),
        (lambda: privcal.epsilon(1.0, 1e-5, steps=0), "steps"),
        (lambda: privcal.epsilon(1.0, 1e-5, steps=1.5), "steps"),
        (lambda: privcal.epsilon(1.0, 1e-5, sensitivity=0), "sensitivity"),
        (lambda: privcal.epsilon(1.0, 1e-5, accountant="moments"), "accountant"),
        (lambda: privcal.calibrate(-1.0, 1e-5), "epsilon"),
        (lambda: privcal.calibrate(1.0, 0.0), "delta"),
        (lambda: privcal.calibrate(1.0, float("nan")), "delta"),
    ],
)
def test_bad_input(call, name):
    with pytest.raises(ValueError, match=name):
        call()


def test_unknown_setting_is_a_type_error():
    # settings are explicit keyword arguments: an unknown one is Python's own TypeError
    with pytest.raises(TypeError, match="color"):
        privcal.epsilon(1.0, 1e-5, color="blue")


def test_public_api_is_exported():
    for name in privcal.__all__:
        assert hasattr(privcal, name)
    assert math.isfinite(privcal.analysis.composition.kov_epsilon(0.1, 1e-6, steps=10, delta=1e-5))


def test_docstring_examples():
    import doctest

    import privcal.accounting.api

    result = doctest.testmod(privcal.accounting.api, extraglobs={"privcal": privcal})
    assert result.attempted >= 2 and result.failed == 0


def test_subsampled_best_is_the_smallest_valid_sigma():
    # "best" calibrates with every valid accountant that supports the setting (RDP and PLD here) and
    # keeps the smallest sigma; PLD's certified upper bound is the tighter one at q = 0.01, 1000 steps
    r = privcal.calibrate_report(1.0, 1e-5, steps=1000, sample_rate=0.01)
    rdp = privcal.calibrate(1.0, 1e-5, steps=1000, sample_rate=0.01, accountant="rdp")
    pld = privcal.calibrate(1.0, 1e-5, steps=1000, sample_rate=0.01, accountant="pld")
    assert r.sigma == min(rdp, pld) and r.accountant == "pld" and pld < rdp
    assert r.valid and r.sampling == "poisson" and r.achieved_epsilon <= 1.0
    lower, upper = r.bracket
    assert lower <= upper == r.achieved_epsilon


def test_best_is_pld_where_rdp_is_four_times_looser():
    # Poisson q = 1e-3, sigma = 0.8, 1000 steps, delta = 1e-5: RDP gives 1.16, while
    # dp_accounting 0.6.0's PLD gives 0.3036; best must be the certified PLD bound (bracket within 0.1%)
    r = privcal.epsilon_report(0.8, 1e-5, steps=1000, sample_rate=1e-3)
    assert r.accountant == "pld" and r.valid
    assert r.epsilon == pytest.approx(0.3036, rel=2e-3)
    lower, upper = r.bracket
    assert upper == r.epsilon and upper - 1e-3 * upper <= lower <= upper
    rdp = privcal.epsilon(0.8, 1e-5, steps=1000, sample_rate=1e-3, accountant="rdp")
    assert rdp > 3 * r.epsilon and privcal.epsilon(0.8, 1e-5, steps=1000, sample_rate=1e-3) == r.epsilon


@pytest.mark.parametrize("q,sigma,steps", [(0.1, 1.1, 1000), (1e-2, 0.8, 300), (1e-3, 2.0, 1000)])
def test_best_is_the_minimum_of_the_valid_upper_bounds(q, sigma, steps):
    kw = dict(steps=steps, sample_rate=q)
    best = privcal.epsilon(sigma, 1e-5, **kw)
    assert best == min(privcal.epsilon(sigma, 1e-5, accountant=n, **kw) for n in ("rdp", "pld"))


def test_reports_carry_the_bracket_of_the_winner():
    exact = privcal.epsilon_report(10.0, 1e-5, steps=100)
    assert exact.bracket == (exact.epsilon, exact.epsilon)  # the exact profile: no gap
    assert privcal.epsilon_report(10.0, 1e-5, steps=100, accountant="rdp").bracket is None
    c = privcal.calibrate_report(1.0, 1e-5, steps=100)
    assert c.accountant == "exact" and c.bracket == (c.achieved_epsilon, c.achieved_epsilon)


def test_best_is_resolved_without_building_every_accountant(monkeypatch):
    # which accountants support an event (and are valid for it) is decided once per kind of event: a
    # second full-batch call builds the exact accountant alone (it built every accountant twice before)
    from privcal.accounting import accountants

    built = []

    def counting(name, cls):
        def __init__(self, *args, **kwargs):
            built.append(name)
            cls.__init__(self, *args, **kwargs)

        return type(cls.__name__, (cls,), {"__init__": __init__})

    for name, cls in list(accountants.ACCOUNTANTS.items()):
        monkeypatch.setitem(accountants.ACCOUNTANTS, name, counting(name, cls))
    privcal.epsilon(10.0, 1e-5, steps=100)
    assert sorted(set(built)) == sorted(accountants.ACCOUNTANTS)  # first call of this kind: all asked once
    built.clear()
    assert privcal.epsilon(3.0, 1e-5, steps=7, sensitivity=2.0) == pytest.approx(
        privcal.analysis.gaussian.epsilon_exact(1e-5, 2.0 * math.sqrt(7) / 3.0), rel=1e-12
    )
    assert built == ["exact"]


@given(q=st.floats(1e-3, 0.5), sigma=st.floats(0.6, 10.0), steps=st.integers(1, 500))
def test_subsampled_never_costs_more_than_full(q, sigma, steps):
    sub = privcal.epsilon(sigma, 1e-5, steps=steps, sample_rate=q, accountant="rdp")
    full = privcal.epsilon(sigma, 1e-5, steps=steps, accountant="rdp")
    assert sub <= full * (1 + 1e-9)


def test_subsampled_paper_report_flags_lemma1():
    r = privcal.epsilon_report(0.5, 1e-5, steps=1000, sample_rate=1e-3, sampling="without_replacement",
                               neighbouring="replace_one", accountant="paper")
    assert not r.valid and "NOT" in r.guarantee
    assert any("NOT an upper bound here" in n for n in r.notes)


def test_exact_refuses_subsampled_setting():
    with pytest.raises(privcal.UnsupportedEventError, match="exact"):
        privcal.epsilon(1.0, 1e-5, sample_rate=0.1, accountant="exact")


@pytest.mark.parametrize(
    "kwargs,name",
    [(dict(sample_rate=0.0), "sample_rate"), (dict(sample_rate=1.5), "sample_rate"), (dict(sampling="shuffle"), "sampling")],
)
def test_bad_settings(kwargs, name):
    with pytest.raises(ValueError, match=name):
        privcal.epsilon(1.0, 1e-5, **kwargs)


@pytest.mark.parametrize("name", NAMES)
def test_reports_carry_a_guarantee_string(name):
    r = privcal.epsilon_report(3.0, 1e-5, steps=4, accountant=name)
    assert isinstance(r.guarantee, str) and r.guarantee and isinstance(r.valid, bool)
    c = privcal.calibrate_report(1.0, 1e-5, steps=4, accountant=name)
    assert isinstance(c.guarantee, str) and c.guarantee


def test_former_import_paths_name_the_moved_modules():
    # events/accountants/calibration/api live in privcal.accounting and dpq/gpope/table in
    # privcal.calibrators; their former paths (docs/deprecation.md) must keep importing, as the same module objects (so
    # monkeypatching and isinstance checks see one module), also in a fresh interpreter
    import subprocess
    import sys

    code = (
        "import warnings\n"
        "warnings.simplefilter('ignore', DeprecationWarning)  # each warns (test_former_import_paths_warn)\n"
        "import privcal.events, privcal.accountants, privcal.calibration, privcal.api, privcal.dpq, "
        "privcal.gpope, privcal.table, privcal\n"
        "from privcal.events import GaussianEvent\n"
        "from privcal.accounting.events import GaussianEvent as G2\n"
        "assert GaussianEvent is G2\n"
        "assert privcal.dpq is privcal.calibrators.dpq and privcal.table is privcal.calibrators.table\n"
        "assert privcal.api is privcal.accounting.api and privcal.calibration is privcal.accounting.calibration\n"
        "from privcal.analysis.composition import kov_epsilon\n"
        "from privcal.analysis.kov import kov_epsilon as k2\n"
        "assert kov_epsilon is k2\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


_FLAT = {"events": "accounting.events", "accountants": "accounting.accountants", "calibration": "accounting.calibration",
         "api": "accounting.api", "dpq": "calibrators.dpq", "gpope": "calibrators.gpope", "table": "calibrators.table"}


_HOWS = ("import privcal.{old} as m", "from privcal import {old} as m")


def _former_path_code(old: str, how: str) -> str:
    return ("import warnings, privcal, importlib\n"
            "with warnings.catch_warnings(record=True) as caught:\n"
            "    warnings.simplefilter('always')\n"
            f"    {how.format(old=old)}\n"
            f"assert m is importlib.import_module('privcal.{_FLAT[old]}')\n"
            f"assert m.__spec__.name == 'privcal.{_FLAT[old]}'  # its own spec, not the alias's\n"
            "dep = [w for w in caught if issubclass(w.category, DeprecationWarning)]\n"
            f"assert dep and all('privcal.{_FLAT[old]}' in str(w.message) for w in dep), [str(w.message) for w in dep]\n"
            "assert all(w.filename == '<string>' for w in dep), [w.filename for w in dep]\n")


# One interpreter imports privcal (as each case's first line does) and forks a child per case: each child starts
# from the state of a fresh `python -c "import warnings, privcal, importlib"`, where no former path was imported
# yet, so each sees its alias's first import, at its own line of '<string>'. One interpreter start (~1 s each on
# 2 cores) instead of 14; where os.fork is missing each case gets its own interpreter.
_FORK_DRIVER = """
import json, os, sys, traceback, warnings, privcal, importlib
cases = json.loads(sys.stdin.read())
out = {}
for key, code in cases.items():
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        try:
            exec(compile(code, '<string>', 'exec'), {'__name__': '__main__'})
            msg = ''
        except BaseException:
            msg = traceback.format_exc() or 'failed'
        os.write(w, msg.encode())
        os._exit(0)
    os.close(w)
    with os.fdopen(r, 'rb') as f:
        data = f.read()
    _, status = os.waitpid(pid, 0)
    out[key] = data.decode() if status == 0 else f'child ended with status {status}: {data.decode()}'
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def former_path_failures():
    """(old, how) -> '' when the case's code ran to the end in a fresh privcal, else its traceback (and a
    control case that fails)."""
    import json
    import os
    import subprocess
    import sys

    cases = {f"{old}|{how}": _former_path_code(old, how) for old in sorted(_FLAT) for how in _HOWS}
    cases["control|fails"] = "import privcal\nassert 1 == 2, 'the runner sees this'\n"
    if hasattr(os, "fork"):
        env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")  # fork-safe
        proc = subprocess.run([sys.executable, "-c", _FORK_DRIVER], input=json.dumps(cases), capture_output=True,
                              text=True, env=env, check=True)
        out = json.loads(proc.stdout)
    else:
        out = {}
        for key, code in cases.items():
            proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
            out[key] = "" if proc.returncode == 0 else proc.stderr or f"exit {proc.returncode}"
    return {tuple(k.split("|")): v for k, v in out.items()}


@pytest.mark.parametrize("old", sorted(_FLAT))
@pytest.mark.parametrize("how", _HOWS)
def test_former_import_paths_warn_naming_the_new_home(old, how, former_path_failures):
    # docs/deprecation.md: they were silent aliases; they warn from 0.2.0 (removed in 0.3.0), at the user's line
    assert former_path_failures[old, how] == "", former_path_failures[old, how]


def test_former_import_path_runner_reports_a_failing_case(former_path_failures):
    # the runner also ran a control case whose assertion fails: a runner that swallowed failures would pass all
    assert "AssertionError: the runner sees this" in former_path_failures["control", "fails"]


@pytest.mark.parametrize("use, replacement", [
    ("privcal.calibrate_sigma(lambda s: privcal.GaussianEvent(s), 1.0, 1e-5)", "search_sigma"),
    ("privcal.accounting.calibration.calibrate_sigma_rdp(lambda s: privcal.GaussianEvent(s), 1.0, 1e-5)",
     "search_sigma"),
    ("privcal.calibrators.gpope.ADJACENCIES", "SENSITIVITY_PER_CLIP"),
    ("privcal.cli.format_table", "privcal.calibrators.render.format_table"),
    ("privcal.rl.gpope.agent.calibrate_sigma(1.0, 1e-5, iterations=10, trajectories=10)",
     "privcal.calibrators.gpope.calibrate"),
])
def test_former_silent_names_warn_naming_the_replacement(use, replacement):
    import privcal.calibrators.gpope  # noqa: F401
    import privcal.cli
    import privcal.rl.gpope.agent  # noqa: F401

    with pytest.warns(DeprecationWarning, match=replacement.replace(".", r"\.")):
        eval(use, {"privcal": privcal})


def test_implied_replace_one_relation_warns_at_the_users_call():
    # sampling without replacement at an unchanged sensitivity changes what sensitivity means
    # (replace-one: 2C for a sum clipped to C); unless the relation is stated, the front door warns,
    # pointing at the caller's line, and prices replace-one
    import warnings

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        implied = privcal.calibrate(1.0, 1e-5, steps=100, sample_rate=0.01, sampling="without_replacement")
    assert [w.category for w in caught] == [privcal.NeighbouringWarning]
    assert caught[0].filename == __file__
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        stated = privcal.calibrate(1.0, 1e-5, steps=100, sample_rate=0.01, sampling="without_replacement",
                                   neighbouring="replace_one")
        privcal.calibrate(1.0, 1e-5, steps=100, sample_rate=0.01)  # Poisson: add/remove, no warning
    assert implied == stated


def test_resolution_cache_tells_kinds_and_homogeneity_apart():
    # support is cached per kind of event; KOV composes only identical releases, so equal and unequal
    # Gaussian pairs (same kinds) must resolve differently, in either order
    from privcal.accounting.api import resolve_accountants

    same = privcal.ComposedEvent([privcal.GaussianEvent(2.0), privcal.GaussianEvent(2.0)])
    mixed = privcal.ComposedEvent([privcal.GaussianEvent(2.0), privcal.GaussianEvent(3.0)])
    for _ in range(2):
        assert resolve_accountants("kov", same) == ["kov"]
        with pytest.raises(privcal.UnsupportedEventError, match="kov"):
            resolve_accountants("kov", mixed)
    subsampled = privcal.SubsampledEvent(privcal.GaussianEvent(1.0), 0.1)
    assert resolve_accountants("best", subsampled) == ["rdp", "pld"]
    assert resolve_accountants("best", privcal.GaussianEvent(1.0)) == ["exact"]
    # a relation without a valid subsampled bound here: nothing valid prices it
    paper_only = privcal.SubsampledEvent(privcal.GaussianEvent(1.0), 0.1, "poisson", "replace_one")
    with pytest.raises(privcal.UnsupportedEventError):
        resolve_accountants("best", paper_only)


def test_best_falls_back_when_the_pld_grid_exceeds_its_memory_cap(monkeypatch):
    # a PLD grid beyond the memory cap (privcal.pld.MemoryLimitError) is skipped by "best" with a note,
    # never an error while another valid accountant answers; asked for by name, it is the user's error
    from privcal.pld import MemoryLimitError, PLDAccountant

    def refuse(self, delta):
        raise MemoryLimitError("the grid needs 9 GB, above memory_limit = 256 MiB: relax accuracy")

    monkeypatch.setattr(PLDAccountant, "epsilon_unchecked", refuse)
    r = privcal.epsilon_report(1.0, 1e-5, steps=100, sample_rate=0.01)
    assert r.accountant == "rdp" and r.epsilon == privcal.epsilon(1.0, 1e-5, steps=100, sample_rate=0.01, accountant="rdp")
    assert any(n.startswith("pld: the grid needs 9 GB") and n.endswith("; answered by rdp") for n in r.notes)
    with pytest.raises(MemoryLimitError, match="memory_limit"):
        privcal.epsilon(1.0, 1e-5, steps=100, sample_rate=0.01, accountant="pld")


def test_sampling_or_relation_without_a_sample_rate_is_refused_as_on_the_command_line():
    # the CLI refuses --neighbouring without --sample-rate; the API answered silently
    with pytest.raises(ValueError, match="neighbouring applies only with sample_rate"):
        privcal.calibrate(1.0, 1e-5, neighbouring="replace_one")
    with pytest.raises(ValueError, match="sampling applies only with sample_rate"):
        privcal.epsilon(1.0, 1e-5, sampling="without_replacement")


@pytest.mark.parametrize("names", [["kov", "rdp"], ["rdp", "kov"]])
def test_best_keeps_the_smallest_sigma_of_one_stage(names, monkeypatch):
    # with no PLD among the names, "best" prices every valid accountant in one stage and keeps the smallest
    # sigma; the registry gives no such stage for Releases today (plain releases: the exact profile alone), so
    # the stage is forced: the answer must be the smaller of the two accountants' own calibrations, whatever
    # their order
    from privcal.accounting import api

    own = {n: privcal.calibrate_report(1.0, 1e-5, steps=20, accountant=n).sigma for n in names}
    assert own["kov"] != own["rdp"]
    monkeypatch.setattr(api, "_resolve", lambda accountant, releases, event: list(names))
    r = privcal.calibrate_report(1.0, 1e-5, steps=20)
    winner = min(own, key=own.get)
    assert (r.sigma, r.accountant) == (own[winner], winner)
