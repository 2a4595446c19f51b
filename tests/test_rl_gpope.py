"""Tests for the GPOPE training layer: privcal.rl.gpope.agent, lstd, mspbe, experiments, privcal.cli.gpope.

Known values carry their source; Monte Carlo checks have a fixed seed and a bound of >= 5 standard errors.
"""

import json
import math
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import privcal.calibrators.gpope as accounting
from privcal.rl.gpope.domains.chain import sample_chain
from privcal.rl.gpope.domains.data import Dataset
from privcal.rl.gpope.domains.features import OneHot
from privcal.rl.gpope.agent import gpope, gtd2, step_sizes, trajectory_gradient
from privcal.rl.gpope.lstd import (MonteCarloReturns, dp_lsl, dp_lsw, first_visit_returns, lsl,
                             lsl_local_bound, lsw, lsw_local_bound, lstd,
                             smooth_gaussian_parameters, smooth_sensitivity, wis_lstd)
from privcal.rl.gpope.mspbe import MSPBE, estimate_abc, mspbe, relative_mspbe


def _calibrate():
    """privcal.calibrators.gpope.calibrate, or skip while the accounting layer does not provide it."""
    fn = getattr(accounting, "calibrate", None)
    if fn is None:
        pytest.skip("privcal.calibrators.gpope.calibrate not available")
    return fn


@pytest.fixture(scope="module")
def chain_small():
    return sample_chain(300, np.random.default_rng(0))


@pytest.fixture(scope="module")
def chain_eval():
    return MSPBE.from_dataset(sample_chain(5000, np.random.default_rng(99)))


# ------------------------------------------------------------------------------------------ GPOPE

def _explicit_abc(phi, nxt, rho, rew, gamma):
    """A_i, b_i, C_i of GPOPE Eq. (2.2) written as explicit sums (independent of trajectory_gradient)."""
    tau = len(rew)
    a = sum(rho[t] * np.outer(phi[t], phi[t] - gamma * nxt[t]) for t in range(tau)) / tau
    b = sum(rho[t] * rew[t] * phi[t] for t in range(tau)) / tau
    c = sum(np.outer(phi[t], phi[t]) for t in range(tau)) / tau
    return a, b, c


def test_gradient_matches_eq_4_1(chain_small):
    rng = np.random.default_rng(1)
    theta, w = rng.standard_normal(39), rng.standard_normal(39)
    for i in (0, 5, 17):
        phi, nxt, rho, rew = chain_small.trajectory_features(i)
        rho = rng.uniform(0.5, 2.0, size=rho.size)  # exercise the ratios too
        a, b, c = _explicit_abc(phi, nxt, rho, rew, 0.99)
        expect = accounting.primal_dual_gradient(a, b, c, theta, w)
        np.testing.assert_allclose(trajectory_gradient((phi, nxt, rho, rew), theta, w, 0.99), expect,
                                   rtol=1e-10, atol=1e-13)


def test_gtd2_is_gpope_without_noise_or_clip(chain_small):
    a = gtd2(chain_small, step_size=0.5, seed=3, iterations=500)
    b = gpope(chain_small, sigma=0.0, clip=None, step_size=0.5, seed=3, iterations=500)
    np.testing.assert_array_equal(a.theta, b.theta)
    assert a.sigma == 0.0 and a.clip is None and a.clipped_fraction == 0.0


def test_gtd2_converges_on_chain(chain_eval):
    # non-private GTD2 with 20 passes: MSPBE far below the zero predictor's (0.037 on this chain)
    d = sample_chain(1000, np.random.default_rng(2))
    res = gtd2(d, step_size=1.0, iterations=20000, seed=0)
    assert chain_eval(res.theta) < 0.05 * chain_eval(np.zeros(39))


def test_clipping_bounds_every_step(chain_small):
    # sigma = 0 and clip h: each update has norm <= s h (step size s), so ||[theta; w]|| <= N s h
    res = gpope(chain_small, sigma=0.0, clip=1e-3, step_size=0.7, iterations=200, seed=0)
    assert np.linalg.norm(np.concatenate([res.theta, res.w])) <= 200 * 0.7 * 1e-3 * (1 + 1e-12)
    assert res.clipped_fraction > 0.5


def test_noise_is_clip_times_sigma():
    # zero rewards and theta = w = 0: B_i = 0, so one step gives -s h sigma zeta (step size s).
    # 400 runs x 78 coordinates = 31200 normals; the sample std has se ~ 0.4% of its value, bound 3% (> 7 se)
    d = sample_chain(20, np.random.default_rng(0))
    d = Dataset(d.observations, d.next_observations, np.zeros_like(d.rewards), d.terminated, d.rho,
                d.offsets, features=d.features, gamma=d.gamma)
    draws = [np.concatenate([(r := gpope(d, sigma=2.0, clip=0.1, step_size=0.5, iterations=1,
                                         seed=k)).theta, r.w]) for k in range(400)]
    std = np.std(np.concatenate(draws))
    assert abs(std / (0.5 * 0.1 * 2.0) - 1) < 0.03


def test_seeded_reproducibility(chain_small):
    a = gpope(chain_small, sigma=1.0, clip=0.05, step_size=0.01, seed=7)
    b = gpope(chain_small, sigma=1.0, clip=0.05, step_size=0.01, seed=7)
    c = gpope(chain_small, sigma=1.0, clip=0.05, step_size=0.01, seed=8)
    np.testing.assert_array_equal(a.theta, b.theta)
    assert not np.array_equal(a.theta, c.theta)


def test_calibrated_sigma_is_the_accounting_layers(chain_small):
    calibrate = _calibrate()
    res = gpope(chain_small, epsilon=1.0, delta=1e-5, clip=0.05, step_size=0.01, seed=0)
    assert res.sigma == pytest.approx(calibrate(1.0, 1e-5, iterations=300, trajectories=300, clip=0.05))
    assert res.bound == "best" and res.epsilon == 1.0
    paper = gpope(chain_small, epsilon=1.0, delta=1e-5, bound="lemma1", step_size=0.01, seed=0)
    # the paper's Lemma 1 (sensitivity h, j = 2 term only) gives a smaller sigma than the valid bound
    assert paper.sigma < res.sigma


def test_gpope_input_errors(chain_small):
    with pytest.raises(ValueError, match="either sigma or"):
        gpope(chain_small, sigma=1.0, epsilon=1.0, delta=1e-5)
    with pytest.raises(ValueError, match="needs a clip"):
        gpope(chain_small, sigma=1.0, clip=None)
    with pytest.raises(ValueError, match="give sigma, or both"):
        gpope(chain_small, epsilon=1.0)
    with pytest.raises(ValueError, match="schedule"):
        gpope(chain_small, sigma=0.0, schedule="cosine")
    with pytest.raises(ValueError, match="theta0"):
        gpope(chain_small, sigma=0.0, theta0=np.zeros(3))


def test_step_size_schedules():
    np.testing.assert_allclose(step_sizes("constant", 0.3, 4), [0.3] * 4)
    np.testing.assert_allclose(step_sizes("diminishing", 2.0, 4), [2.0, 1.0, 2 / 3, 0.5])  # Thm 3: eta/(lam i)
    np.testing.assert_allclose(step_sizes(lambda i: 1.0 / i**2, 1.0, 3), [1.0, 0.25, 1 / 9])


def test_metric_history(chain_small, chain_eval):
    res = gtd2(chain_small, step_size=0.5, iterations=300, seed=0, metric=chain_eval, record_every=100)
    assert res.history["iteration"] == [100, 200, 300]
    assert res.history["metric"][-1] == pytest.approx(chain_eval(res.theta))


# ------------------------------------------------------------------------------------------ MSPBE, LSTD

def test_mspbe_minimiser_and_formula(chain_eval):
    theta = chain_eval.minimiser()
    assert chain_eval(theta) < 1e-20  # A is invertible (tabular): the minimiser zeroes A theta - b
    x = np.random.default_rng(0).standard_normal(39)
    r = chain_eval.a @ x - chain_eval.b
    assert chain_eval(x) == pytest.approx(r @ np.linalg.inv(chain_eval.c) @ r, rel=1e-9)
    assert mspbe(x, chain_eval.a, chain_eval.b, chain_eval.c) == pytest.approx(chain_eval(x), rel=1e-9)


def test_relative_mspbe_is_scale_free():
    d = sample_chain(200, np.random.default_rng(4))
    scaled = Dataset(d.observations, d.next_observations, 1000.0 * d.rewards, d.terminated, d.rho,
                     d.offsets, features=d.features, gamma=d.gamma)
    e1, e2 = MSPBE.from_dataset(d), MSPBE.from_dataset(scaled)
    x = np.random.default_rng(1).standard_normal(39) * 0.1
    assert e2.relative(1000.0 * x) == pytest.approx(e1.relative(x), rel=1e-9)
    with pytest.raises(ValueError, match="mean_reward"):
        relative_mspbe(1.0, 0.0)


def test_lstd_is_the_pooled_mspbe_minimiser(chain_small):
    a, b, c = estimate_abc(chain_small, "transition")
    np.testing.assert_allclose(lstd(chain_small), np.linalg.solve(a, b), rtol=1e-9)
    np.testing.assert_allclose(wis_lstd(chain_small), lstd(chain_small), rtol=1e-12)  # rho = 1


def _bandit(n):
    """One state, two actions, one step: action 0 pays 1, action 1 pays 0; behaviour uniform."""
    rng = np.random.default_rng(0)
    actions = rng.integers(2, size=n)
    return Dataset(np.zeros(n, dtype=int), np.zeros(n, dtype=int), (actions == 0).astype(float),
                   np.ones(n, dtype=bool), np.where(actions == 0, 2.0, 0.0), np.arange(n + 1),
                   features=OneHot(1), gamma=0.9, actions=actions)


def test_wis_lstd_is_weighted_importance_sampling():
    # target always plays action 0: V = 1. WIS-LSTD = sum rho R / sum rho = 1 exactly (Mahmood et al.
    # 2014 at lambda = 0); on-policy LSTD ignores rho and returns the behaviour's value, the mean reward
    d = _bandit(101)
    assert wis_lstd(d)[0] == pytest.approx(1.0, rel=1e-12)
    assert lstd(d)[0] == pytest.approx(d.rewards.mean(), rel=1e-12)


# ------------------------------------------------------------------------------------------ DP-LSW / DP-LSL

def _neighbour(d, rng):
    """Replace trajectory 0 of a chain data set by a fresh one (replace-one adjacency)."""
    fresh = sample_chain(1, rng)
    keep = d.subset(np.arange(1, d.m))
    obs = np.concatenate([fresh.observations, keep.observations])
    nxt = np.concatenate([fresh.next_observations, keep.next_observations])
    rew = np.concatenate([fresh.rewards, keep.rewards])
    term = np.concatenate([fresh.terminated, keep.terminated])
    off = np.concatenate([[0], fresh.lengths, keep.lengths]).cumsum()
    return Dataset(obs, nxt, rew, term, np.ones(rew.size), off, features=d.features, gamma=d.gamma)


@given(st.integers(0, 10_000), st.integers(3, 25))
def test_local_sensitivity_bounds_hold(seed, m):
    # ||theta_X - theta_X'|| <= A_0(X) for LSW and LSL on neighbouring chain data sets
    rng = np.random.default_rng(seed)
    x = sample_chain(m, rng)
    y = _neighbour(x, rng)
    phi, rho = np.eye(39), np.full(39, 1 / 39)
    mx = first_visit_returns(x, lambda s: s, 39, return_range=(0, 1))
    my = first_visit_returns(y, lambda s: s, 39, return_range=(0, 1))
    assert np.linalg.norm(lsw(mx, phi, rho) - lsw(my, phi, rho)) <= lsw_local_bound(mx, phi, rho, 0) + 1e-12
    lam = 0.5 * m
    assert np.linalg.norm(lsl(mx, phi, rho, lam) - lsl(my, phi, rho, lam)) \
        <= lsl_local_bound(mx, phi, rho, lam, 0) + 1e-12


@given(st.lists(st.integers(0, 30), min_size=4, max_size=4), st.lists(st.sampled_from([-1, 0, 1]),
                                                                    min_size=4, max_size=4))
def test_smooth_sensitivity_is_smooth(counts, change):
    # NRS07 Def. 2.1 (a "beta-smooth" bound, smoothness s = their beta): S(X) <= e^s S(X') for
    # neighbours (counts move by at most 1 per state)
    phi = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [0.5, -1.0]])
    rho = np.full(4, 0.25)
    m = 40
    cx = np.array(counts)
    cy = np.clip(cx + np.array(change), 0, m)
    smoothness = 0.05
    for bound, kmax in ((lambda mc: (lambda ks: lsw_local_bound(mc, phi, rho, ks)), lambda mc: int(mc.counts.max())),
                        (lambda mc: (lambda ks: lsl_local_bound(mc, phi, rho, 3.0, ks)), lambda mc: m)):
        sx, sy = (smooth_sensitivity(bound(mc), smoothness, kmax(mc))
                  for mc in (MonteCarloReturns(c, c * 0.5, m, 0.0, 1.0) for c in (cx, cy)))
        assert sx <= math.exp(smoothness) * sy * (1 + 1e-12) and sy <= math.exp(smoothness) * sx * (1 + 1e-12)


def test_dp_lsw_noise_scale():
    d = sample_chain(200, np.random.default_rng(3))
    mc = first_visit_returns(d, lambda s: s, 39, return_range=(0, 1))
    phi, rho = np.eye(39), np.full(39, 1 / 39)
    r = dp_lsw(mc, phi, rho, epsilon=0.5, delta=1e-5, rng=0)
    # NRS07 Lemma 2.10: alpha = eps / (5 sqrt(2 ln(2/delta))), smoothness (their beta) = eps / (4 (d + ln(2/delta)))
    assert r.alpha == pytest.approx(0.5 / (5 * math.sqrt(2 * math.log(2e5))))
    assert r.smoothness == pytest.approx(0.5 / (4 * (39 + math.log(2e5))))
    assert r.sigma == pytest.approx(r.smooth_sensitivity / r.alpha)
    assert r.smooth_sensitivity >= lsw_local_bound(mc, phi, rho, 0)
    np.testing.assert_allclose(r.theta_nonprivate, lsw(mc, phi, rho))
    r2 = dp_lsl(mc, phi, rho, ridge=100.0, epsilon=0.5, delta=1e-5, rng=0)
    assert r2.sigma == pytest.approx(r2.smooth_sensitivity / r2.alpha)
    assert smooth_gaussian_parameters(0.5, 1e-5, 39) == (r.alpha, r.smoothness)


def test_monte_carlo_baselines_reject_off_policy_and_bad_range():
    with pytest.raises(ValueError, match="on-policy"):
        first_visit_returns(_bandit(10), lambda s: s, 1, return_range=(0, 1))
    d = sample_chain(5, np.random.default_rng(0))
    with pytest.raises(ValueError, match="return_range"):
        first_visit_returns(d, lambda s: s, 39, return_range=(0, 0.5))


# ------------------------------------------------------------------------------------------ experiments

TINY = dict(trials=2, chain_m=(40, 80), chain_fixed_m=40, chain_eval=1000,
            step_grid=(1e-3, 1e-1), tune_trials=1, dplsl_ridge_grid=(0.1, 1.0))


def test_figure1a_tiny_runs_and_is_deterministic():
    _calibrate()
    from privcal.rl.gpope.experiments import figure1a
    r1 = figure1a("fast", seed=3, **TINY)
    r2 = figure1a("fast", seed=3, **TINY)
    assert list(r1.x) == [40, 80]
    for name in ("GPOPE valid sigma (tuned step)", "GPOPE paper sigma (tuned step)", "DP-LSW",
                 "DP-LSL", "LSTD", "theta=0"):
        assert np.all(np.isfinite(r1.curves[name]["mean"])), name
        np.testing.assert_array_equal(r1.curves[name]["mean"], r2.curves[name]["mean"])
    # each curve's sigma is its calibrator's at (0.1, 1e-5) with N = m: the valid one the tightest valid bound
    # ("best": with PLD it is below the paper's Lemma 1 sigma here, although Lemma 1 takes half the sensitivity)
    from privcal.calibrators.gpope import calibrate
    from privcal.rl.gpope.agent import PAPER_BOUND, VALID_BOUND

    for label, bound in (("GPOPE valid sigma (tuned step)", VALID_BOUND), ("GPOPE paper sigma (tuned step)", PAPER_BOUND)):
        assert r1.meta["sigma"][label] == pytest.approx(
            [calibrate(0.1, 1e-5, iterations=m, trajectories=m, bound=bound) for m in (40, 80)], rel=1e-12)


def test_joblib_backend_is_configurable_without_code_changes():
    joblib = pytest.importorskip("joblib")
    _calibrate()
    from joblib._parallel_backends import ThreadingBackend

    from privcal.rl.gpope.experiments import figure1b

    class RecordingBackend(ThreadingBackend):
        """A stand-in for a cluster backend (Dask/Ray register themselves the same way)."""
        calls = 0

        def apply_async(self, func, callback=None):
            RecordingBackend.calls += 1
            return super().apply_async(func, callback)

        def submit(self, func, callback=None):
            RecordingBackend.calls += 1
            return super().submit(func, callback)

    joblib.register_parallel_backend("privcal-test-recording", RecordingBackend)
    base = figure1b("fast", seed=1, n_jobs=1, **TINY)
    with joblib.parallel_config(backend="privcal-test-recording"):
        rec = figure1b("fast", seed=1, n_jobs=2, **TINY)
    assert RecordingBackend.calls > 0
    with joblib.parallel_backend("threading", n_jobs=2):
        thr = figure1b("fast", seed=1, n_jobs=2, **TINY)
    with joblib.parallel_config(backend="loky"):
        lok = figure1b("fast", seed=1, n_jobs=2, **TINY)
    for other in (rec, thr, lok):
        for name, curve in base.curves.items():
            np.testing.assert_array_equal(curve["mean"], other.curves[name]["mean"])


def test_plot_writes_png(tmp_path):
    pytest.importorskip("matplotlib")
    from privcal.rl.gpope.experiments import ExperimentResult, plot
    res = ExperimentResult("t", "m", "MSPBE", np.array([1, 10]),
                           {"a": {"mean": np.array([1.0, 0.1]), "std": np.array([0.1, 0.01]),
                                  "diverged": np.array([0, 1])}})
    path = tmp_path / "fig.png"
    plot(res, path)
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert json.loads(json.dumps(res.to_dict()))["curves"]["a"]["diverged"] == [0, 1]


def test_plot_styles_scales_and_legend():
    # private curves differ in colour and marker, the paper's sigma is dashed, references are grey or
    # black; y is log only when the drawn means span a decade; the legend sits right of the axes
    pytest.importorskip("matplotlib")
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from privcal.rl.gpope.experiments import ExperimentResult, plot
    flat = {"mean": np.array([0.037, 0.037]), "std": np.zeros(2), "diverged": np.zeros(2, int)}
    curves = {"GPOPE valid sigma (tuned step)": dict(flat, mean=np.array([0.036, 0.037])),
              "GPOPE valid sigma (10x step)": dict(flat, mean=np.array([0.038, 0.036])),
              "GPOPE paper sigma (tuned step)": dict(flat),
              "LSTD": dict(flat, mean=np.array([1e-6, 1e-7])), "theta=0": dict(flat)}
    res = ExperimentResult("figure1a", "data size m (trajectories)", "MSPBE", np.array([100, 1000]),
                           curves, {"sigma": {n: [6.6, 2.47] for n in curves if "GPOPE" in n},
                                    "epsilon": 0.1, "delta": 1e-5, "trials": 3, "clip": 0.05})
    fig, (ax, zoom) = plt.subplots(1, 2)
    plot(res, ax=ax)
    plot(res, ax=zoom, curves=["GPOPE paper sigma (tuned step)", "theta=0"])
    assert ax.get_yscale() == "log" and ax.get_xscale() == "log"  # 1e-7 .. 0.04; m over a decade
    assert zoom.get_yscale() == "linear"                          # 0.036 .. 0.038
    private = [line for line in ax.get_lines() if line.get_label().startswith("GPOPE")]
    assert len({line.get_color() for line in private}) == 3
    assert len({line.get_marker() for line in private}) == 3
    styles = {line.get_label().split(",")[0]: line.get_linestyle() for line in private}
    assert styles["GPOPE paper sigma (tuned step)"] == "--"
    assert styles["GPOPE valid sigma (tuned step)"] == "-"
    # a curve identical to an earlier one says so; sigma over m is in the label
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert "theta=0 [= GPOPE paper sigma (tuned step)]" in labels
    assert "GPOPE valid sigma (tuned step), σ 6.6→2.47" in labels
    # the same curve keeps its colour in a panel that draws a subset
    paper = [line for line in zoom.get_lines() if line.get_label().startswith("GPOPE paper")][0]
    assert paper.get_color() == [line for line in private if "paper" in line.get_label()][0].get_color()
    fig.canvas.draw()
    legend_box = ax.get_legend().get_window_extent()
    assert legend_box.x0 >= ax.get_window_extent().x1        # outside the axes, not over the data
    assert "ε = 0.1" in ax.get_title() and "paper σ: Lemma 1 (no valid guarantee)" in ax.get_title()
    assert ax.get_ylabel() == "MSPBE (squared value units)"
    with pytest.raises(ValueError, match="curves"):
        plot(res, ax=zoom, curves=["nope"])
    with pytest.raises(ValueError, match="yscale"):
        plot(res, ax=zoom, yscale="symlog")
    # a PlotStyle draws what its fields say as keywords (independent: the keyword calls above)
    from privcal.rl.gpope.figure_plot import PlotStyle
    fresh_fig, fresh = plt.subplots()
    styled = plot(res, ax=fresh, style=PlotStyle(curves=["theta=0"], yscale="linear", legend="none"), title="T")
    assert styled.get_title() == "T" and styled.get_legend() is None and styled.get_yscale() == "linear"
    assert [line.get_label() for line in styled.get_lines()] == ["theta=0"]
    plt.close(fresh_fig)
    with pytest.raises(TypeError, match="unexpected keyword argument 'colour'"):
        plot(res, ax=zoom, colour="red")
    plt.close(fig)


def test_figure_keywords_split_between_the_run_and_the_setting():
    # FigureRun fields configure the run, any other keyword replaces a Setting field (dataclasses.replace raises
    # TypeError on an unknown one, before any domain is built); figures 3 and 4 take no epsilon
    from privcal.rl.gpope.experiments import FigureRun, figure1b, figure3, figure4

    with pytest.raises(TypeError, match="epsilon"):
        figure3("fast", epsilon=0.5)
    with pytest.raises(TypeError, match="epsilon"):
        figure4("fast", run=FigureRun(), epsilon=0.5)
    with pytest.raises(TypeError, match="nonsense"):
        figure1b("fast", nonsense=1)
    with pytest.raises(TypeError, match="FigureRun"):
        figure1b("fast", run={"seed": 1})
    with pytest.raises(ValueError, match="setting"):
        figure1b("fastest", n_jobs=1)


# ------------------------------------------------------------------------------------------ CLI

def test_cli_json(capsys):
    calibrate = _calibrate()
    from privcal.cli import main
    rc = main(["train", "gpope", "--domain", "chain", "--trajectories", "60", "--epsilon", "1",
               "--delta", "1e-5", "--seed", "2", "--eval-trajectories", "500", "--json"])
    out = capsys.readouterr()
    assert rc == 0 and out.err == ""  # --json: no progress bar
    res = json.loads(out.out)
    # GPOPE's calibrated sigma is a noise multiplier: named so, beside the absolute noise std (multiplier x clip)
    assert "sigma" not in res
    assert res["noise_multiplier"] == pytest.approx(calibrate(1.0, 1e-5, iterations=60, trajectories=60))
    assert res["noise_std"] == pytest.approx(res["noise_multiplier"] * res["clip"])
    # --bound valid (the default) is the calibrator's default ("best": PLD or RDP), named in bound_used
    from privcal.calibrators.gpope import calibrate_report

    priced_by = calibrate_report(1.0, 1e-5, iterations=60, trajectories=60).accountant
    assert priced_by in ("pld", "rdp")
    assert math.isfinite(res["mspbe"]) and res["bound"] == "valid" and res["bound_used"] == priced_by
    rc = main(["train", "gpope", "--domain", "chain", "--trajectories", "60", "--non-private",
               "--eval-trajectories", "500"])
    out = capsys.readouterr()
    assert rc == 0 and "gpope" in out.err and "mspbe" in out.out  # progress bar on stderr


def test_cli_errors(capsys):
    from privcal.cli import main
    assert main(["train", "gpope", "--trajectories", "10"]) == 2
    assert "epsilon is required" in capsys.readouterr().err
    assert main(["train", "gpope", "--trajectories", "10", "--epsilon", "1", "--off-policy"]) == 2
    assert "--off-policy" in capsys.readouterr().err


def test_cli_module_imports_without_optional_dependencies():
    code = ("import sys\n"
            "for name in ('gymnasium', 'matplotlib', 'joblib'): sys.modules[name] = None\n"
            "import privcal.cli.gpope, privcal.cli\n"
            "p = privcal.cli.build_parser()\n"
            "a = p.parse_args(['train', 'gpope', '--trajectories', '5', '--epsilon', '1'])\n"
            "assert a._run is privcal.cli.gpope.run\n")
    subprocess.run([sys.executable, "-c", code], check=True)


# ---------------------------------------------------------------------------------------------------------
# the unchecked kernels `privcal train gpope` calls after validating: the same numbers as the
# checked functions (independent: the checked public function itself, same seeds)

def test_sample_chain_unchecked_is_sample_chain():
    from privcal.rl.gpope.domains.chain import sample_chain_unchecked

    a, b = sample_chain(25, 11, n_states=7, p_stay=0.3), sample_chain_unchecked(25, 11, n_states=7, p_stay=0.3)
    for field in ("observations", "next_observations", "rewards", "terminated", "offsets"):
        np.testing.assert_array_equal(getattr(a, field), getattr(b, field))


@pytest.mark.parametrize("schedule,sigma,clip", [("constant", 0.8, 0.5), ("diminishing", 0.0, None)])
def test_gpope_unchecked_is_gpope(schedule, sigma, clip):
    from privcal.rl.gpope.agent import gpope_unchecked

    data = sample_chain(20, 3, n_states=6)
    metric = lambda theta: float(theta @ theta)  # noqa: E731
    from privcal.rl.gpope.agent import GPOPESettings

    run = GPOPESettings(sigma=sigma, clip=clip, iterations=40, step_size=0.3, schedule=schedule,
                        seed=np.random.SeedSequence([5, 3]))
    a, b = gpope(data, run, metric=metric, record_every=7), gpope_unchecked(data, run, metric=metric, record_every=7)
    np.testing.assert_array_equal(a.theta, b.theta)
    np.testing.assert_array_equal(a.w, b.w)
    assert a.history == b.history and a.clipped_fraction == b.clipped_fraction
    assert (a.sigma, a.clip, a.step_size, a.schedule, a.epsilon, a.bound) == (
        b.sigma, b.clip, b.step_size, b.schedule, b.epsilon, b.bound)


@pytest.mark.parametrize("bound", ["best", "theorem1_paper"])
def test_calibrate_report_unchecked_is_calibrate_report(bound):
    a = accounting.calibrate_report(1.0, 1e-5, iterations=60, trajectories=30, clip=0.5, bound=bound)
    b = accounting.calibrate_report_unchecked(1.0, 1e-5, iterations=60, trajectories=30, clip=0.5, bound=bound)
    assert a == b
