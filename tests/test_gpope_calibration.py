"""privcal.calibrators.gpope.calibrate: sigma of GPOPE Algorithm 1 under each bound, and the gpope table."""

import functools
import math
import warnings

import numpy as np
import pytest

from privcal.analysis import subsampling
from privcal.calibrators import gpope
from privcal.accounting.accountants import RDPAccountant
from privcal.accounting.events import Releases
from privcal.errors import InfeasibleError
from privcal.analysis.rdp import GridEdgeWarning
from privcal.calibrators.gpope_table import PRINTED_GRIDS, VERDICT_GRIDS, gpope_bracket, known_lower
from privcal.calibrators.table import gpope_table

# the paper's chain experiments: eps = 0.1, delta = 1e-5; m = 1000 trajectories, N = 1e4 iterations
SETTING = dict(iterations=10_000, trajectories=1000)


@pytest.fixture(scope="module")
def reports():
    out = {}
    for b in ("rdp", "thm9", "lemma1", "theorem1_paper"):
        out[b] = gpope.calibrate_report(0.5, 1e-5, bound=b, **SETTING)
    return out


def test_rdp_bound_is_valid_and_checked(reports):
    r = reports["rdp"]
    assert r.valid and r.bound == "rdp" and r.accountant == "rdp" and r.neighbouring == "replace_one"
    assert r.valid_epsilon <= 0.5
    # minimal: 0.1% less noise is no longer (0.5, 1e-5)-DP under the same accountant
    smaller = RDPAccountant().compose(gpope.gpope_event(r.sigma * 0.999, 1000, 10_000, "replace_one")).epsilon(1e-5)
    assert smaller > 0.5


def test_default_sigma_uses_sensitivity_2h():
    # replace-one: the noise multiplier relative to the sensitivity 2h is sigma/2, so sigma is exactly
    # twice the sigma calibrated with the paper's sensitivity h by the same (without-replacement) accountant
    two_h = gpope.calibrate(0.5, 1e-5, bound="rdp", **SETTING)
    rel = Releases(1.0, SETTING["iterations"], 1.0 / SETTING["trajectories"], "without_replacement", "replace_one")
    h = RDPAccountant().sigma_for(rel, 0.5, 1e-5)
    assert two_h == pytest.approx(2 * h, rel=1e-6)
    # zero-out does not rescue h: the null trajectory displaces another, so it is priced at 2h too
    # (docs/pld.md 1.3; the realisable counterexample is in tests/test_pld_realisable.py)
    for bound in ("rdp", "pld", "thm9"):
        zero = gpope.calibrate(0.5, 1e-5, bound=bound, neighbouring="zero_out", **SETTING)
        assert zero == pytest.approx(gpope.calibrate(0.5, 1e-5, bound=bound, **SETTING), rel=1e-9)
    # Theorem 1 (valid) prices at the same 2h; with one trajectory nothing is displaced and h is exact
    assert gpope.priced_per_clip("zero_out", 1000) == gpope.priced_per_clip("replace_one", 1000) == 2.0
    assert gpope.priced_per_clip("zero_out", 1) == 1.0


def test_default_is_the_tightest_valid_accountant_and_says_which():
    # "best" (the default) calibrates with RDP and PLD and keeps the smaller sigma; at the paper's
    # setting PLD's certified bound needs much less noise (sigma 1.95 against RDP's 3.39 at eps = 0.5)
    r = gpope.calibrate_report(0.5, 1e-5, **SETTING)
    each = {b: gpope.calibrate_report(0.5, 1e-5, bound=b, **SETTING) for b in ("rdp", "pld")}
    assert r.bound == "best" and r.valid and r.accountant == "pld"
    assert r.sigma == min(c.sigma for c in each.values()) == each["pld"].sigma < 0.7 * each["rdp"].sigma
    assert each["pld"].accountant == "pld" and each["rdp"].accountant == "rdp"
    # its valid epsilon is PLD's certified upper bound at that sigma, within the target
    assert r.valid_epsilon <= 0.5
    # calibrate is the shortcut for the report's sigma
    assert gpope.calibrate(0.5, 1e-5, **SETTING) == r.sigma


def test_closed_forms_name_no_accountant(reports):
    assert gpope.calibrate_report(0.5, 1e-5, bound="theorem1_paper", **SETTING).accountant is None
    assert reports["lemma1"].accountant == "paper" and reports["thm9"].accountant == "rdp-thm9"


def test_thm9_never_below_thm27(reports):
    assert reports["thm9"].sigma >= reports["rdp"].sigma * (1 - 1e-6)


def test_paper_bounds_need_less_noise_and_are_not_sufficient(reports):
    for b in ("lemma1", "theorem1_paper"):
        r = reports[b]
        assert not r.valid and r.sigma < reports["rdp"].sigma
        assert r.valid_epsilon > 0.5  # not (0.5, 1e-5)-DP under the valid accountant
        assert any("valid RDP accountant" in n for n in r.notes)


def test_theorem1_paper_closed_form():
    # closed form as printed: sigma = 2 sqrt(N ln(1/delta)) / (m eps)
    want = 2 * math.sqrt(10_000 * math.log(1e5)) / (1000 * 0.5)
    assert gpope.calibrate(0.5, 1e-5, bound="theorem1_paper", **SETTING) == pytest.approx(want, rel=1e-12)


def test_theorem1_valid_range():
    lo, hi = gpope.theorem1_epsilon_range(1e-5, iterations=10**6, trajectories=1000)
    eps = math.sqrt(lo * hi)
    sigma = gpope.calibrate(eps, 1e-5, bound="theorem1", iterations=10**6, trajectories=1000)
    # the closed form is sufficient under the valid accountant inside its range
    assert RDPAccountant().compose(gpope.gpope_event(sigma, 1000, 10**6, "replace_one")).epsilon(1e-5) <= eps
    with pytest.raises(InfeasibleError, match="epsilon"):
        gpope.calibrate(0.1, 1e-5, bound="theorem1", **SETTING)


def test_noise_std_scales_with_clip():
    r = gpope.calibrate_report(1.0, 1e-5, clip=3.0, **SETTING)
    assert r.noise_std == pytest.approx(3 * r.sigma) and r.sigma == gpope.calibrate(1.0, 1e-5, **SETTING)


@pytest.mark.parametrize(
    "kwargs,name",
    [
        (dict(bound="moments"), "bound"),
        (dict(neighbouring="swap"), "neighbouring"),
        (dict(clip=0.0), "clip"),
        (dict(iterations=0), "iterations"),
        (dict(trajectories=0), "trajectories"),
    ],
)
def test_bad_input(kwargs, name):
    args = dict(SETTING)
    args.update(kwargs)
    with pytest.raises(ValueError, match=name):
        gpope.calibrate(1.0, 1e-5, **args)


def test_gpope_table_flags_paper_bounds():
    import privcal
    from privcal.pld import PLDAccountant

    tab = gpope_table([0.1, 1.0], 1e-5, **SETTING)
    assert tab.reference == "pld"
    flagged = set()
    computed = {}  # sigma -> the lower end the table composed there (for the bounds it carries to smaller sigmas)
    for row in tab.rows:  # as the table decides them: rows by target, each row's columns from the largest sigma
        for key, eps_at in sorted(row.reference_epsilons.items(), key=lambda kv: -row.sigmas[kv[0]]):
            # independent re-check of the upper end: the valid RDP accountant (replace-one) at that sigma
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", GridEdgeWarning)
                ref = RDPAccountant().compose(gpope.gpope_event(row.sigmas[key], 1000, 10_000, "replace_one")).epsilon(1e-5)
            # and of the lower end: the realisable pair (every clipped gradient -h e, the replaced one +h e) is
            # the subsampled Gaussian at sensitivity 2h, one of m = 1000 per iteration, N = 1e4; it is also the
            # dominating pair priced under replace-one (docs/pld.md 1.2), so its upper end bounds epsilon too
            pair = privcal.SelfComposedEvent(privcal.PoissonSampledEvent(1e-3, privcal.GaussianEvent(row.sigmas[key] / 2)),
                                             10_000)
            lower, upper = PLDAccountant().compose(pair).bracket(1e-5)
            # the table's upper end: valid (never below the refined bracket's); the PLD's probe, below RDP's here
            # (2-400x: the RDP accountant is consulted only where the PLD leaves the target undecided)
            assert upper * (1 - 1e-9) <= eps_at <= ref * (1 + 1e-12)
            # its lower end: certified (the realisable pair's binned bound or the PLD's lower end, whichever
            # is larger), so never above a valid upper bound and never below the binned bound
            from privcal.pld import realisable

            if eps_at <= row.epsilon:  # certified by the PLD's upper end: no lower end is computed (0 stands)
                assert row.lower_epsilons[key] == 0.0 and key not in row.insufficient
                continue
            assert row.lower_epsilons[key] <= upper * (1 + 1e-9)
            factor, cells = (PRINTED_GRIDS if key == tab.paper_key else VERDICT_GRIDS)[0]
            first = realisable.unchecked_epsilon_lower(pair, 1e-5, realisable.unchecked_grid(pair) * factor,
                                                       max_cells=cells)
            carried = [v for s, v in computed.items() if s >= row.sigmas[key] and v > row.epsilon]
            if key != tab.paper_key and carried:  # decided by a bound composed at a larger sigma: the largest
                assert row.lower_epsilons[key] == max(carried)
            else:  # never below the binned bound on the first grid the table tries (the printed one's: its only)
                assert first * (1 - 1e-12) <= row.lower_epsilons[key]
                computed[row.sigmas[key]] = row.lower_epsilons[key]
            assert (key in row.insufficient) == (lower > row.epsilon)  # '!' only from the certified lower bound
            flagged |= {key} if key in row.insufficient else set()
    assert {"lemma1", "theorem1_paper", "rdp_h"} <= flagged  # the paper's bounds are proven short somewhere here
    # with m = 1000, N = 1e4 the valid Theorem 1 range is empty: reported as infeasible (inf)
    assert all(math.isinf(r.sigmas["theorem1"]) for r in tab.rows)


def test_lemma1_below_valid_rdp_at_paper_noise():
    # the paper's own noise multiplier scale: Lemma 1 undershoots the valid RDP at moderate orders
    import numpy as np

    orders = np.array([4.0, 16.0, 64.0])
    lemma1 = subsampling.rdp_gpope_lemma1_paper(orders, 1.0, 0.01)
    valid = subsampling.rdp_without_replacement_gaussian(orders, 1.0, 0.01)
    assert lemma1[-1] < valid[-1]


# ---------------------------------------------------------------------------------------------------
# one validation per argument, calibration owned by the accountants


@pytest.mark.parametrize("bound", ["best", "rdp", "lemma1", "theorem1_paper"])
def test_calibrate_validates_each_argument_once(validations, bound):
    # 7 arguments, 7 checks, and 1 for the keywords gathered into the settings object (V.settings_with: their
    # names); before the kernels: 97 for "rdp", every candidate sigma re-validated
    gpope.calibrate(0.5, 1e-5, bound=bound, **SETTING)
    assert 1 <= validations["n"] <= 8


def test_gpope_table_validates_once(validations):
    gpope_table([0.5], 1e-5, **SETTING)
    assert 1 <= validations["n"] <= 4  # one epsilon, delta, trajectories, iterations


@pytest.mark.parametrize("bound,cls", [("rdp", "RDPAccountant"), ("thm9", "Thm9Accountant"), ("lemma1", "PaperAccountant")])
def test_accountant_bounds_calibrate_through_sigma_for(monkeypatch, bound, cls):
    # each accountant-priced bound takes its sigma from that accountant's one calibration method
    from privcal.accounting import accountants

    owner = getattr(gpope, cls) if cls == "Thm9Accountant" else getattr(accountants, cls)
    seen = []
    original = owner.sigma_for_unchecked

    def spy(self, releases, epsilon, delta, **kw):
        seen.append((type(self), original(self, releases, epsilon, delta, **kw)))
        return seen[-1][1]

    monkeypatch.setattr(owner, "sigma_for_unchecked", spy)
    sigma = gpope.calibrate(0.5, 1e-5, bound=bound, **SETTING)
    assert seen == [(owner, sigma)]


def test_thm9_accountant_prices_no_release_as_zero():
    # GaussianEvent(inf) releases nothing: epsilon 0, priced without numerics (the Thm 9 kernel at
    # s = inf takes log(0) on the way to its cap, the Gaussian's own RDP 0, and warns)
    from privcal.accounting.events import GaussianEvent, SelfComposedEvent, SubsampledEvent

    event = SelfComposedEvent(SubsampledEvent(GaussianEvent(math.inf), 0.01, "without_replacement", "replace_one"), 100)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert gpope.Thm9Accountant().compose(event).epsilon(1e-5) == 0.0


def test_former_adjacency_spelling_still_works_with_a_warning():
    # one name per concept: the neighbouring relation is `neighbouring` (privcal.Neighbouring
    # values) everywhere; the former keyword and its "replace" spelling give the same sigma, and warn
    import privcal

    new = gpope.calibrate(0.5, 1e-5, neighbouring=privcal.Neighbouring.REPLACE_ONE, **SETTING)
    with pytest.warns(DeprecationWarning, match="adjacency"):
        old = gpope.calibrate(0.5, 1e-5, adjacency="zero_out", **SETTING)
    assert old == gpope.calibrate(0.5, 1e-5, neighbouring="zero_out", **SETTING)
    with pytest.warns(DeprecationWarning, match="replace_one"):
        assert gpope.calibrate(0.5, 1e-5, neighbouring="replace", **SETTING) == new
    with pytest.warns(DeprecationWarning, match="neighbouring"):
        assert gpope.calibrate_report(0.5, 1e-5, **SETTING).adjacency == "replace_one"


def test_gpope_table_paper_sensitivity_column_is_the_rdp_column_halved():
    # the "rdp_h" column (RDP at the paper's sensitivity h, replace-one pair, not valid) equals the "rdp"
    # column (sensitivity 2h) halved: RDP depends on sigma / sensitivity only. The table uses that identity
    # instead of a second search; an independent search at sensitivity h agrees within its tolerance.
    from privcal.accounting.events import Neighbouring, Releases

    tab = gpope_table([1.0], 1e-5, **SETTING)
    (row,) = tab.rows
    assert row.sigmas["rdp_h"] == row.sigmas["rdp"] / 2
    direct = RDPAccountant().sigma_for_unchecked(Releases(1.0, SETTING["iterations"], 1.0 / SETTING["trajectories"],
                                                 "without_replacement", Neighbouring.REPLACE_ONE), 1.0, 1e-5)
    assert direct == pytest.approx(row.sigmas["rdp_h"], rel=1e-6)


@pytest.mark.parametrize("bound", gpope.BOUNDS)
def test_calibrate_sigma_unchecked_is_the_reports_sigma(bound):
    """The table's sigma-only kernel runs the report's calibration: the same sigma for every bound."""
    setting = dict(iterations=300, trajectories=30)
    try:
        want = gpope.calibrate_report_unchecked(2.0, 1e-5, bound=bound, **setting).sigma
    except InfeasibleError:
        with pytest.raises(InfeasibleError):
            gpope.calibrate_sigma_unchecked(2.0, 1e-5, bound=bound, **setting)
        return
    assert gpope.calibrate_sigma_unchecked(2.0, 1e-5, bound=bound, **setting) == want


def test_gpope_verdicts_refine_a_lower_bound_only_where_the_coarse_one_leaves_them_undecided(monkeypatch):
    """The verdicts' lower bounds: a non-paper column's is composed on 8x the pair's rule grid, on 2x only where
    the 8x bound does not exceed the target, on the rule grid only where neither does; the paper column's
    (printed) from 2x on. The flags are those of the rule grid's bounds (a coarse bound that decides is a
    certified lower bound: it cannot flip a verdict to 'not private' wrongly; an undecided one is refined)."""
    from privcal.accounting import realisable

    calls = []
    real = realisable.unchecked_epsilon_lower

    def recording(event, delta, h=None, bins=20_000, *, max_cells=None):
        out = real(event, delta, h, bins, max_cells=max_cells)
        calls.append((event.event.event.noise_multiplier, h / realisable.unchecked_grid(event), out))
        return out

    monkeypatch.setattr(realisable, "unchecked_epsilon_lower", recording)
    tab = gpope_table([0.5, 1.0, 2.0], 1e-5, trajectories=100, iterations=1000)
    monkeypatch.setattr(realisable, "unchecked_epsilon_lower", real)
    assert calls
    for row in tab.rows:
        for key, lower in row.lower_epsilons.items():
            if lower == 0.0 and key not in row.insufficient and row.reference_epsilons[key] <= row.epsilon:
                continue  # certified private by the PLD's upper end: no lower bound composed
            nm = row.sigmas[key] / 2  # the pair's noise multiplier (sensitivity 2h)
            mine = [(f, out) for s, f, out in calls if s == nm]
            if not mine:  # decided by a bound composed at a larger sigma (known_lower): never the printed one
                assert key != tab.paper_key and key in row.insufficient
                assert lower > row.epsilon and lower in {out for s, _, out in calls if s > nm}
                continue
            ladder = [f for f, _ in (PRINTED_GRIDS if key == tab.paper_key else VERDICT_GRIDS)]
            # the ladder up to the first bound above the target (all of it where none is)
            decided = next((i for i, (_, out) in enumerate(mine) if out > row.epsilon), len(ladder) - 1)
            assert [f for f, _ in mine] == ladder[:decided + 1]
            # the verdict is the one the rule grid's bound gives (the bound this table printed before)
            rule = real(privcal_pair(nm), 1e-5)
            assert (key in row.insufficient) == (rule > row.epsilon)
            if key == tab.paper_key:  # the printed bound: within 0.1% of the rule grid's here (0.568 vs 0.5684,
                assert rule * (1 - 1e-3) <= lower <= row.reference_epsilons[key]  # 1.586 vs 1.587, 10.62 vs 10.63)


def privcal_pair(noise_multiplier: float):
    """The realisable pair of the GPOPE verdicts at 100 trajectories, 1000 iterations."""
    import privcal

    return privcal.SelfComposedEvent(privcal.PoissonSampledEvent(1e-2, privcal.GaussianEvent(noise_multiplier)), 1000)


@pytest.mark.parametrize("sigma, target, printed, ladder, decided", [
    # bounds of the pair (m = 100, N = 1000) on 8x, 2x and 1x its rule grid, computed once:
    (2.7076, 1.0, False, [8.0], True),  # 1.0291, 1.0664, 1.0680: decided on 8x
    (2.7076, 1.05, False, [8.0, 2.0], True),  # decided on 2x
    (2.7076, 1.0672, False, [8.0, 2.0, 1.0], True),  # only the rule grid decides it
    (4.292, 0.568, True, [2.0, 1.0], True),  # 0.5678, 0.5684: the printed bound, decided on the rule grid
    (4.292, 0.5, True, [2.0], True),
    (2.7076, 1.0685, False, [8.0, 2.0, 1.0], False),  # below the upper end 1.0692, above every lower bound
])
def test_gpope_bracket_walks_the_grids_coarse_to_fine_until_decided(monkeypatch, sigma, target, printed, ladder,
                                                                     decided):
    from privcal.accounting import realisable

    calls = []
    real = realisable.unchecked_epsilon_lower

    def recording(event, delta, h=None, bins=20_000, *, max_cells=None):
        out = real(event, delta, h, bins, max_cells=max_cells)
        calls.append((h / realisable.unchecked_grid(event), out))
        return out

    monkeypatch.setattr(realisable, "unchecked_epsilon_lower", recording)
    lower, upper = gpope_bracket(sigma, 1e-5, 100, 1000, target=target, printed=printed)
    assert [f for f, _ in calls] == ladder
    best = max(out for _, out in calls)
    if decided:  # the first bound above the target is the lower end
        assert lower == best > target and lower <= upper
    else:  # then the PLD's refined bracket: its lower end can only raise it
        assert best <= target and best <= lower <= upper


@pytest.mark.parametrize("target, known, calls, expect", [
    # the pair at m = 100, N = 1000, sigma = 2.7076: lower bounds 1.0291 / 1.0664 / 1.0680 on 8x / 2x / 1x its rule
    # grid, PLD probe 1.0692 (test_gpope_bracket_walks_the_grids_coarse_to_fine_until_decided)
    (2.0, 0.0, 0, "certified"),  # the PLD's probe certifies: no other upper end asked
    (1.0, 0.0, 0, "decided"),  # the 8x lower bound exceeds the target: no upper end can certify it
    (1.0685, 0.0, 1, "certified"),  # undecided by the PLD: the other upper end (here 1.0684) certifies it
    (1.0, 1.05, 0, "carried"),  # a lower bound carried from a larger sigma decides it: nothing composed here
])
def test_gpope_bracket_asks_the_other_upper_end_only_where_the_pld_leaves_the_target_undecided(
        monkeypatch, target, known, calls, expect):
    from privcal.accounting import realisable

    asked, composed = [], []
    real = realisable.unchecked_epsilon_lower
    monkeypatch.setattr(realisable, "unchecked_epsilon_lower",
                        lambda *a, **k: composed.append(a) or real(*a, **k))
    lower, upper = gpope_bracket(2.7076, 1e-5, 100, 1000, target=target, printed=False, known=known,
                                        valid_upper=lambda: asked.append(1) or 1.0684)
    assert len(asked) == calls
    if expect == "certified":
        assert lower == 0.0 and upper <= target
    elif expect == "decided":
        assert lower > target and 1.029 <= lower <= upper and composed
    else:  # carried: the PLD's probe alone is the upper end, the carried bound the lower one
        assert lower == known and not composed and upper >= known


def test_known_lower_carries_only_from_larger_sigmas():
    # the pair's epsilon is non-increasing in sigma: a bound at sigma' >= sigma bounds sigma's, never the reverse
    found = [(2.0, 1.5), (1.0, 30.0), (1.5, 4.0)]
    assert known_lower(found, 1.2) == 4.0  # from 1.5 and 2.0, not from 1.0
    assert known_lower(found, 2.0) == 1.5
    assert known_lower(found, 2.5) == 0.0


@pytest.mark.parametrize("eps", [0.1, 1.0])
def test_rdp_sigmas_do_not_depend_on_the_forward_difference_cache(monkeypatch, eps):
    """WBK Thm 27's forward differences are kept per noise multiplier across a calibration's probes (extended or cut
    to each probe's largest order): the README table's RDP sigma must be the one computed with every probe's rows
    fresh, bit for bit, from a cold cache and from one warmed by the other rows' calibrations."""
    calibrate = functools.partial(gpope.calibrate_sigma_unchecked, eps, 1e-5, bound="rdp", **SETTING)
    subsampling.FD_CACHE.clear()
    cold = calibrate()
    for other in (0.5, 2.0):
        gpope.calibrate_sigma_unchecked(other, 1e-5, bound="rdp", **SETTING)
    warm = calibrate()

    def fresh(s, lmax):
        out = np.full(lmax + 1, np.nan)
        out[0] = 0.0
        out[2::2] = subsampling.forward_difference_rows(s, np.arange(2, lmax + 1, 2, dtype=float))
        return out

    monkeypatch.setattr(subsampling, "log_forward_differences_gaussian", fresh)
    assert cold == warm == calibrate()


def test_settings_object_gives_the_keyword_call():
    # reference: the keyword call with the same fields (the settings object only carries them)
    small = dict(iterations=200, trajectories=50)
    settings = gpope.GPOPECalibrationSettings(clip=2.0, bound="rdp", neighbouring="add_remove")
    a = gpope.calibrate_report(1.0, 1e-5, clip=2.0, bound="rdp", neighbouring="add_remove", **small)
    assert gpope.calibrate_report(1.0, 1e-5, settings=settings, **small) == a
    assert gpope.calibrate(1.0, 1e-5, settings=settings, **small) == a.sigma
    # a keyword beside the settings replaces that field
    b = gpope.calibrate_report(1.0, 1e-5, settings=settings, bound="theorem1_paper", **small)
    assert b == gpope.calibrate_report(1.0, 1e-5, clip=2.0, bound="theorem1_paper", neighbouring="add_remove",
                                       **small)
    assert gpope.GPOPECalibrationSettings() == gpope.GPOPECalibrationSettings(1.0, "best", "replace_one")
    with pytest.raises(TypeError, match="calibrate\\(\\) got an unexpected keyword argument 'clipping'"):
        gpope.calibrate(1.0, 1e-5, clipping=1.0, **small)
    with pytest.raises(TypeError, match="calibrate_report\\(\\) got an unexpected keyword argument 'sigma'"):
        gpope.calibrate_report(1.0, 1e-5, sigma=1.0, **small)
    with pytest.raises(ValueError, match="clip"):
        gpope.calibrate(1.0, 1e-5, settings=gpope.GPOPECalibrationSettings(clip=0.0), **small)
    with pytest.warns(DeprecationWarning, match="adjacency"):
        assert gpope.calibrate_report(1.0, 1e-5, settings=settings, adjacency="add_remove", **small) == a
