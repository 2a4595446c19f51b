"""The front door answers every delta, names who answered and why the PLD did not.

No timings here: the work is counted (calls of an accountant's kernels), never timed.
"""

import math

import pytest

import privcal
from privcal.analysis import kov
from privcal.accounting import api, history
from privcal.accounting.accountants import RDPAccountant
from privcal.accounting.basic import BasicAccountant
from privcal.accounting.events import Releases
from privcal.cli import main
from privcal.errors import InfeasibleError
from privcal.pld import MemoryLimitError, PLDAccountant

SUB = dict(steps=100, sample_rate=0.01)  # a subsampled setting the PLD prices at delta = 1e-5


def _fail_with(exc):
    def fail(self, delta, *args):
        raise exc

    return fail


# --------------------------------------------------------------------------------------------------
# best: PLD first, a valid fallback with a one-line reason


@pytest.mark.parametrize("exc", [
    ValueError("operands could not be broadcast together with shapes (3,) (2,)"),
    OverflowError("math range error"),
    ValueError("cannot convert float NaN to integer"),
])
def test_a_failing_pld_is_replaced_by_rdp_and_named_without_internal_message(monkeypatch, exc):
    monkeypatch.setattr(PLDAccountant, "epsilon_unchecked", _fail_with(exc))
    r = privcal.epsilon_report(1.0, 1e-5, **SUB)
    # the fallback's own answer (RDP prices the same setting validly)
    assert r.accountant == "rdp" and r.epsilon == privcal.epsilon(1.0, 1e-5, **SUB, accountant="rdp")
    (note,) = [n for n in r.notes if n.startswith("pld:")]
    assert note.endswith("; answered by rdp") and type(exc).__name__ in note
    assert str(exc) not in note  # never the internal numpy / Python message
    # asked for by name, the PLD's failure is one clean line (InfeasibleError), not the internal error
    with pytest.raises(InfeasibleError) as info:
        privcal.epsilon(1.0, 1e-5, **SUB, accountant="pld")
    assert str(exc) not in str(info.value) and "\n" not in str(info.value)


def test_an_infinite_pld_upper_end_is_replaced_and_named(monkeypatch):
    monkeypatch.setattr(PLDAccountant, "epsilon_unchecked", lambda self, delta: math.inf)
    r = privcal.epsilon_report(1.0, 1e-5, **SUB)
    assert r.accountant == "rdp" and math.isfinite(r.epsilon)
    assert any(n.startswith("pld: no finite certified upper end at delta = 1e-05") and n.endswith("answered by rdp")
               for n in r.notes)


def test_best_does_not_price_rdp_when_the_pld_answers(monkeypatch):
    calls = []
    real_eps, real_sigma = RDPAccountant.epsilon_unchecked, RDPAccountant.sigma_for_unchecked
    monkeypatch.setattr(RDPAccountant, "epsilon_unchecked", lambda self, d: calls.append("eps") or real_eps(self, d))
    monkeypatch.setattr(RDPAccountant, "sigma_for_unchecked",
                        lambda self, *a, **k: calls.append("sigma") or real_sigma(self, *a, **k))
    r = privcal.epsilon_report(1.0, 1e-5, **SUB)
    c = privcal.calibrate_report(1.0, 1e-5, **SUB)
    assert r.accountant == "pld" and c.accountant == "pld" and math.isfinite(r.epsilon)
    assert calls == []
    # ... and does price it when the PLD gives no finite answer
    monkeypatch.setattr(PLDAccountant, "epsilon_unchecked", lambda self, delta: math.inf)
    assert privcal.epsilon_report(1.0, 1e-5, **SUB).accountant == "rdp" and calls == ["eps"]


def test_rdp_is_priced_beside_a_pld_whose_bracket_missed_its_accuracy(monkeypatch):
    # the PLD says its bracket missed its accuracy (it could not refine its grid): RDP may then be tighter
    from privcal.pld import PLD

    calls = []
    real = RDPAccountant.epsilon_unchecked
    monkeypatch.setattr(RDPAccountant, "epsilon_unchecked", lambda self, d: calls.append("eps") or real(self, d))
    monkeypatch.setattr(PLD, "accuracy_by_delta", property(lambda self: {1e-5: False}))
    monkeypatch.setattr(PLDAccountant, "epsilon_unchecked", lambda self, delta: 1e3)  # a very loose upper end
    r = privcal.epsilon_report(1.0, 1e-5, **SUB)
    assert calls and r.accountant == "rdp" and r.epsilon < 1e3


def test_stages_put_rdp_and_basic_after_the_pld():
    assert api.stages(["pld", "rdp"]) == [["pld"], ["rdp"]]
    assert api.stages(["kov", "pld", "basic"]) == [["kov", "pld"], ["basic"]]
    assert api.stages(["rdp", "kov"]) == [["rdp", "kov"]]  # without the PLD every valid one is priced


@pytest.mark.parametrize("delta", [1e-12, 1e-300])
def test_tiny_deltas_get_a_valid_answer_naming_who_answered(delta):
    # these raised a numpy broadcast error from inside the PLD
    r = privcal.calibrate_report(1.0, delta, steps=100, sample_rate=0.01)
    assert r.valid and r.achieved_epsilon <= 1.0 and r.sigma < 1e3
    # the answering accountant checks its own answer: its epsilon at sigma meets the target
    assert privcal.epsilon(r.sigma, delta, steps=100, sample_rate=0.01, accountant=r.accountant) <= 1.0
    if r.accountant != "pld":
        assert any(n.startswith("pld: ") and n.endswith(f"answered by {r.accountant}") for n in r.notes)


def test_a_tiny_target_epsilon_gets_an_answer():
    r = privcal.calibrate_report(1e-8, 1e-5, steps=100, sample_rate=0.01)
    assert r.achieved_epsilon <= 1e-8 and r.sigma <= 1e12


# --------------------------------------------------------------------------------------------------
# the PLD calibration: never an absurd sigma, a refused probe moves up


def test_the_secant_says_infeasible_instead_of_an_absurd_sigma(monkeypatch):
    # upper end inf below 1e13 and 0 above (what a PLD whose error terms reach delta looks like): the
    # answer would be beyond the search range, so the PLD calibration must refuse, not return 1e13
    from privcal.pld import PLD

    monkeypatch.setattr(PLDAccountant, "epsilon_unchecked",
                        lambda self, d: 0.0 if self._ledger[0][0].event.noise_multiplier > 1e13 else math.inf)
    # the calibration's probes read the rule grid's upper end (the pair's noise multiplier is its .s)
    monkeypatch.setattr(PLD, "unchecked_probe_epsilon",
                        lambda self, d, coarsen=1: 0.0 if self._factors[0][0].s > 1e13 else math.inf)
    rel = Releases(1.0, 3, 0.0035642, "poisson", None)
    with pytest.raises(InfeasibleError, match="no sigma up to 1e.12"):
        PLDAccountant().sigma_for(rel, 0.92778, 4.70e-11)
    # best answers with RDP and says why
    r = privcal.calibrate_report(0.92778, 4.70e-11, steps=3, sample_rate=0.0035642)
    assert r.accountant == "rdp" and r.sigma < 1e3
    assert any(n.startswith("pld: no sigma up to 1e+12") and "inf at every sigma probed" in n for n in r.notes)


def test_the_issue_18_secant_case_is_feasible_or_infeasible_never_absurd():
    # a search that overshoots would return an absurd sigma here (~1e154)
    try:
        sigma = privcal.calibrate(0.92778, 4.70e-11, steps=3, sample_rate=0.0035642, accountant="pld")
    except InfeasibleError as exc:
        assert "no sigma up to 1e+12" in str(exc)
    else:
        assert sigma <= 1e12
        assert privcal.epsilon(sigma, 4.70e-11, steps=3, sample_rate=0.0035642, accountant="pld") <= 0.92778


def test_a_probe_over_the_memory_cap_moves_up(monkeypatch):
    # eps = 4, q = 0.01, 10 steps, a 1 MiB cap: the PLD coarsens a grid up to 16x to fit its cap, so a first
    # probe at sigma = 0.001 is still refused while the answer (~0.52, a composed window of ~2 MB) fits once
    # coarsened: the search moves up to a sigma within the accuracy of the uncapped one, certified there
    from privcal.pld import PLD

    refused = []
    real = PLD.unchecked_probe_epsilon  # what the calibration's probes read

    def spy(self, delta, coarsen=1):
        try:
            return real(self, delta, coarsen)
        except MemoryLimitError:
            refused.append(self._factors[0][0].s)  # the pair's noise multiplier
            raise

    monkeypatch.setattr(PLD, "unchecked_probe_epsilon", spy)
    rel = Releases(1.0, 10, 0.01, "poisson", None)
    capped = PLDAccountant(memory_limit=2**20).sigma_for(rel, 4.0, 1e-5, sigma_hint=0.001)
    assert refused and min(refused) < capped
    monkeypatch.setattr(PLD, "unchecked_probe_epsilon", real)
    assert PLDAccountant(memory_limit=2**20).compose(rel.event(capped)).epsilon(1e-5) <= 4.0
    assert capped == pytest.approx(PLDAccountant().sigma_for(rel, 4.0, 1e-5, sigma_hint=0.034), rel=1e-3)
    r = privcal.calibrate_report(4.0, 1e-5, steps=10, sample_rate=0.01, memory_limit=2**20)
    assert r.accountant == "pld" and r.achieved_epsilon <= 4.0


def test_the_achieved_epsilon_reuses_the_last_probe(monkeypatch):
    seen = []
    real = PLDAccountant.epsilon_unchecked
    monkeypatch.setattr(PLDAccountant, "epsilon_unchecked",
                        lambda self, d: seen.append(self._ledger[0][0].event.noise_multiplier) or real(self, d))
    r = privcal.calibrate_report(1.0, 1e-5, **SUB)
    assert r.accountant == "pld"
    # the probes read the rule grid's upper end (PLD.probe_epsilon); the report evaluates the answer once,
    # on the accountant the search built (its bracket's upper end: the number privcal.epsilon reports)
    assert seen == [r.sigma]
    monkeypatch.undo()
    assert r.achieved_epsilon == privcal.epsilon(r.sigma, 1e-5, **SUB) <= 1.0


def test_a_bracket_wider_than_the_accuracy_is_reported(monkeypatch):
    monkeypatch.setattr(PLDAccountant, "bracket", lambda self, delta: (0.5 * self.epsilon_unchecked(delta), self.epsilon_unchecked(delta)))
    r = privcal.epsilon_report(1.0, 1e-5, **SUB)
    assert r.accountant == "pld"
    assert any(n.startswith("pld bracket [") and "wider than the requested accuracy" in n for n in r.notes)
    monkeypatch.undo()
    r = privcal.epsilon_report(1.0, 1e-5, **SUB)  # the default grid meets its width here: no note
    assert not any("wider than the requested accuracy" in n for n in r.notes)


# --------------------------------------------------------------------------------------------------
# pure and approximate DP: the basic accountant


def test_a_zero_epsilon_approx_dp_event_at_a_larger_delta():
    # (0, 0.1)-DP is (0, 0.2)-DP by definition (the PLD must not fail on it)
    r = api.epsilon_of_report(privcal.ApproxDPEvent(0.0, 0.1), 0.2)
    assert r.epsilon == 0.0 and r.valid


def test_laplace_at_a_tiny_delta_is_at_most_its_pure_epsilon():
    # Laplace with sensitivity 1 and scale 2 is pure 0.5-DP (Dwork & Roth 2014, Thm 3.6); ten compose to 5
    assert privcal.epsilon_of(privcal.LaplaceEvent(2.0), 1e-30) <= 0.5
    assert privcal.epsilon_of(privcal.SelfComposedEvent(privcal.LaplaceEvent(2.0), 10), 1e-30) <= 5.0


def test_laplace_next_to_subsampled_gaussians_is_finite_at_a_tiny_delta():
    # inf at delta = 8.3e-12; basic composition: 5 x 0.1 (Laplace) + the RDP of the Gaussians
    gauss = privcal.SelfComposedEvent(privcal.PoissonSampledEvent(0.01, privcal.GaussianEvent(1.0)), 1000)
    hist = privcal.ComposedEvent([privcal.SelfComposedEvent(privcal.LaplaceEvent(10.0), 5), gauss])
    value = privcal.epsilon_of(hist, 8.3e-12)
    rdp = privcal.epsilon_of(gauss, 8.3e-12 * (1 - 1e-12), accountant="rdp")
    assert math.isfinite(value) and value <= 0.5 + rdp * (1 + 1e-12)


def test_basic_composition_sums_epsilons_and_deltas():
    acc = BasicAccountant().compose(privcal.ApproxDPEvent(1.0, 1e-6)).compose(privcal.ApproxDPEvent(0.5, 1e-7))
    assert acc.epsilon(2e-6) == 1.5  # delta >= 1e-6 + 1e-7: (1 + 0.5, 1.1e-6)-DP (basic composition)
    assert acc.epsilon(1e-6) == math.inf  # delta below the sum of the deltas: no bound from basic composition
    assert acc.delta(1.5) == pytest.approx(1.1e-6, rel=1e-9) and acc.delta(1.4) == 1.0


def test_basic_uses_kov_for_one_kind_of_release():
    # ten pure 0.1-DP steps: KOV's optimal composition (Thm 3.3) beats the sum 1.0 at delta = 1e-5
    acc = BasicAccountant().compose(privcal.ApproxDPEvent(0.1, 0.0), 10)
    assert acc.epsilon(1e-5) == kov.kov_epsilon(0.1, 0.0, steps=10, delta=1e-5) < 1.0


def test_basic_answers_beyond_kovs_range():
    # 1e9 pure 0.5-DP releases: KOV takes at most 1e8 steps; basic composition still answers 1e9 x 0.5
    acc = BasicAccountant().compose(privcal.LaplaceEvent(2.0), 10**9)
    assert acc.epsilon(1e-5) == 5e8 and acc.delta(5e8) == 0.0


def test_basic_adds_the_rdp_of_the_gaussians_at_the_delta_left():
    acc = BasicAccountant().compose(privcal.LaplaceEvent(2.0)).compose(privcal.ApproxDPEvent(0.0, 1e-6))
    acc.compose(privcal.GaussianEvent(3.0), 4)
    rdp = RDPAccountant().compose(privcal.GaussianEvent(3.0), 4)
    assert acc.epsilon(1e-5) == pytest.approx(0.5 + rdp.epsilon(1e-5 - 1e-6), rel=1e-9)
    assert acc.epsilon(1e-6) == math.inf  # nothing left for the Gaussians


def test_basic_does_not_repeat_rdp_in_best():
    sub = privcal.PoissonSampledEvent(0.01, privcal.GaussianEvent(1.0))
    assert "basic" not in api.resolve_accountants("best", sub)
    assert "basic" in api.resolve_accountants("best", privcal.LaplaceEvent(1.0))


# --------------------------------------------------------------------------------------------------
# grouping, histories, CLI


def test_equal_releases_are_priced_once(monkeypatch):
    a = privcal.PoissonSampledEvent(0.01, privcal.GaussianEvent(1.0))
    b = privcal.PoissonSampledEvent(0.01, privcal.GaussianEvent(2.0))
    used = []  # the accountants the front door composed into: their ledgers list what was priced
    real = RDPAccountant.compose_unchecked
    monkeypatch.setattr(RDPAccountant, "compose_unchecked",
                        lambda self, e, n=1: used.append(self) or real(self, e, n))
    value = privcal.epsilon_of(privcal.ComposedEvent([a, b, privcal.SelfComposedEvent(a, 3)]), 1e-5, accountant="rdp")
    assert used and all(acc is used[0] for acc in used)  # one ledger, composed group by group
    assert used[0].ledger == ((a, 4), (b, 1))
    assert value == privcal.epsilon_of(privcal.ComposedEvent([privcal.SelfComposedEvent(a, 4), b]), 1e-5,
                                       accountant="rdp")


def test_history_calibration_names_the_fallback(monkeypatch, tmp_path):
    monkeypatch.setattr(PLDAccountant, "epsilon_unchecked", lambda self, delta: math.inf)
    groups = [history.ReleaseGroup(1.0, Releases(1.0, 100, 0.01, "poisson", None))]
    r = history.calibrate_history_report(groups, 1.0, 1e-5)
    assert r.accountant == "rdp" and any(n.startswith("pld: ") and n.endswith("answered by rdp") for n in r.notes)


def test_cli_names_the_fallback_and_refuses_bad_pld_flags_in_one_line(monkeypatch, capsys):
    from privcal.pld import PLD

    monkeypatch.setattr(PLDAccountant, "epsilon_unchecked", _fail_with(ValueError("operands could not be broadcast")))
    monkeypatch.setattr(PLD, "unchecked_probe_epsilon", _fail_with(ValueError("operands could not be broadcast")))
    assert main(["calibrate", "--epsilon", "1", "--delta", "1e-5", "--steps", "100", "--sample-rate", "0.01"]) == 0
    out, err = capsys.readouterr()
    assert "accountant  rdp:" in out and "note        pld: " in out and "answered by rdp" in out and "broadcast" not in out + err
    for flag, value in (("--pld-accuracy", "2"), ("--pld-accuracy", "0"), ("--memory-limit", "-1")):
        code = main(["epsilon", "--sigma", "1", "--delta", "1e-5", "--steps", "100", "--sample-rate", "0.01", flag, value])
        out, err = capsys.readouterr()
        assert code == 2 and err.count("\n") == 1 and flag in err


def test_cli_passes_the_pld_flags_to_the_pld_accountant(monkeypatch, capsys):
    made = []
    real = PLDAccountant.__init__

    def spy(self, *args, **kwargs):
        made.append(kwargs)
        real(self, *args, **kwargs)

    monkeypatch.setattr(PLDAccountant, "__init__", spy)
    assert main(["epsilon", "--sigma", "1", "--delta", "1e-5", "--steps", "100", "--sample-rate", "0.01",
                 "--pld-accuracy", "0.01", "--memory-limit", "64"]) == 0
    # the history's relation travels with them (Poisson sampling: add/remove)
    assert {"accuracy": 0.01, "memory_limit": 64 * 2**20, "neighbouring": "add_remove"} in made


# --------------------------------------------------------------------------------------------------
# properties of the basic accountant

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402


@settings(max_examples=25, deadline=None)
@given(scale=st.floats(0.5, 50.0), count=st.integers(1, 20), log_delta=st.floats(-12, -2))
def test_basic_is_sound_against_the_pld_lower_end_and_at_most_the_sum(scale, count, log_delta):
    # the PLD's lower end is a certified lower bound on the true epsilon of Laplace releases (their pair is
    # realisable); basic composition (sum of pure epsilons) and KOV are upper bounds: lower <= basic <= sum
    delta = 10.0 ** log_delta
    event = privcal.SelfComposedEvent(privcal.LaplaceEvent(scale), count)
    basic = BasicAccountant().compose(event).epsilon(delta)
    lower, _ = PLDAccountant().compose(event).bracket(delta)
    assert lower <= basic * (1 + 1e-9) and basic <= count / scale * (1 + 1e-12)


@settings(max_examples=25, deadline=None)
@given(eps=st.floats(0.01, 2.0), d0=st.floats(0.0, 1e-4), count=st.integers(1, 50), log_delta=st.floats(-8, -1))
def test_basic_is_monotone_in_delta(eps, d0, count, log_delta):
    acc = BasicAccountant().compose(privcal.ApproxDPEvent(eps, d0), count)
    delta = 10.0 ** log_delta
    assert acc.epsilon(min(2 * delta, 0.99)) <= acc.epsilon(delta)


@pytest.mark.parametrize("q, steps, target", [(1e-3, 1000, 1.0), (0.01, 100_000, 8.0), (0.1, 1000, 0.5)])
def test_a_pld_calibration_stops_within_eps_rtol_below_the_target(q, steps, target):
    # the rule grid's upper epsilon moves by ~3e-5 between neighbouring sigmas, so the secant stops once its
    # feasible end is within _EPS_RTOL (1e-4) below the target instead of chasing the grid to a 1e-7
    # bracket (it took 10-13 probes): the answer is feasible and at most 1e-4 conservative in epsilon

    rel = Releases(1.0, steps, q, "poisson", None)
    sigma = PLDAccountant().sigma_for(rel, target, 1e-5)
    upper = PLDAccountant().compose(rel.event(sigma)).pld.unchecked_probe_epsilon(1e-5)
    assert target * (1 - 1e-4) <= upper <= target  # the promise, not the constant (which may not loosen)


def test_the_coarse_phase_of_a_pld_calibration_is_only_a_start(monkeypatch):
    # the first phase runs on a 4x coarser grid; if its numbers were wrong (here: 3x too small, so its
    # root is far too small a sigma) the answer must still be the rule grid's, checked there
    from privcal.pld import PLD

    rel = Releases(1.0, 1000, 0.01, "poisson", None)
    reference = PLDAccountant().sigma_for(rel, 1.0, 1e-5, sigma_hint=1.4)  # a hint skips the coarse phase
    real = PLD.unchecked_probe_epsilon
    coarse = []

    def wrong_when_coarse(self, delta, coarsen=1):
        value = real(self, delta, coarsen)
        if coarsen > 1:
            coarse.append(value)
            return value / 3.0
        return value

    monkeypatch.setattr(PLD, "unchecked_probe_epsilon", wrong_when_coarse)
    sigma = PLDAccountant().sigma_for(rel, 1.0, 1e-5)
    assert coarse  # the coarse phase ran
    monkeypatch.setattr(PLD, "unchecked_probe_epsilon", real)
    assert PLDAccountant().compose(rel.event(sigma)).epsilon(1e-5) <= 1.0
    assert sigma == pytest.approx(reference, rel=2e-4)


def test_memory_limit_in_bytes_refuses_a_count_of_mib(capsys):
    # privcal.epsilon(memory_limit=256) meant 256 MiB but read 256 bytes: the PLD never fit and "best" silently
    # answered with RDP (1.7117 for the PLD's 1.5156); it is refused, naming both units
    with pytest.raises(ValueError, match=r"memory_limit is in bytes.*268435456"):
        privcal.epsilon(1.0, 1e-5, steps=100, sample_rate=0.01, memory_limit=256)
    assert main(["epsilon", "--sigma", "1", "--delta", "1e-5", "--steps", "100", "--sample-rate", "0.01",
                 "--memory-limit", "0.001"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--memory-limit must be a number of MiB in [1, inf)" in err
