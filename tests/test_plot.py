"""privcal.plot: one chart per question, every accountant that supports the setting on it."""

import math

import numpy as np
import pytest

pytest.importorskip("matplotlib")

import privcal  # noqa: E402
from privcal import plot  # noqa: E402


def _lines(fig):
    return {line.get_label(): line for line in fig.axes[0].get_lines()}


def test_epsilon_vs_steps_draws_each_accountant_and_its_own_numbers(tmp_path):
    fig = plot.epsilon_vs_steps(10.0, 1e-5, steps=100, points=8)
    lines = _lines(fig)
    assert set(lines) == {"exact", "pld", "rdp", "kov", "paper"}
    # the drawn values are the front door's own (independently recomputed here)
    xs, ys = lines["exact"].get_data()
    for k, y in zip(xs, ys):
        assert y == pytest.approx(privcal.epsilon(10.0, 1e-5, steps=int(k), accountant="exact"), rel=1e-12)
    # every valid bound lies above the exact value (soundness, read off the chart's data)
    for name in ("pld", "rdp", "kov"):
        assert np.all(lines[name].get_data()[1] >= ys * (1 - 1e-9))
    ax = fig.axes[0]
    assert ax.get_xlabel() and ax.get_ylabel() and ax.get_legend() is not None
    out = plot.save(fig, str(tmp_path / "eps.png"))
    assert (tmp_path / "eps.png").stat().st_size > 1000 and out.endswith("eps.png")


def test_subsampled_setting_leaves_out_unsupporting_accountants_and_labels_paper(tmp_path):
    fig = plot.profile(1.0, steps=100, sample_rate=0.01, deltas=[1e-8, 1e-5, 1e-2])
    labels = set(_lines(fig))
    # the exact profile and KOV do not price subsampling; the paper's Lemma 1 is not a valid bound
    assert labels == {"pld", "rdp", "paper (not a valid bound)"}  # said once (it read "paper (paper, ...)")
    plot.save(fig, str(tmp_path / "profile.svg"))
    assert (tmp_path / "profile.svg").read_text().lstrip().startswith("<?xml")


def test_sigma_vs_epsilon_matches_calibrate_and_marks_infeasible_as_missing():
    fig = plot.sigma_vs_epsilon(1e-5, steps=50, epsilons=[0.5, 2.0], accountants=("exact", "rdp"))
    lines = _lines(fig)
    for name, line in lines.items():
        for e, s in zip(*line.get_data()):
            # rtol 1e-6 in the chart against the front door's 1e-9
            assert s == pytest.approx(privcal.calibrate(e, 1e-5, steps=50, accountant=name), rel=2e-6)
    # a target no sigma up to 1e12 reaches under RDP (the exact sigma here is ~4e13: sqrt(1e6) * 1e6 /
    # mu, mu ~ delta sqrt(2 pi) as epsilon -> 0) is a gap in the line, not a number
    fig = plot.sigma_vs_epsilon(1e-5, steps=10**6, sensitivity=1e6, epsilons=[1e-10, 1.0], accountants=("rdp",))
    ys = _lines(fig)["rdp"].get_data()[1]
    assert math.isnan(ys[0]) and math.isfinite(ys[1])


def test_default_sigma_curve_points_are_the_accountants_own_answers():
    # the default curve searches the two ends and prices the sigmas between them once each; every point drawn
    # must be one the accountant certifies (epsilon(sigma) <= x) and the smallest such sigma (the front door's
    # calibration at x, rtol 1e-9, within the chart's 1e-6 search precision at the ends)
    fig = plot.sigma_vs_epsilon(1e-5, steps=50, accountants=("exact", "rdp"))
    for name, line in _lines(fig).items():
        xs, ys = line.get_data()
        assert len(xs) == plot.CURVE_POINTS and (xs[0], xs[-1]) == plot.CURVE_ENDS
        assert np.all(np.diff(xs) > 0) and np.all(np.diff(ys) < 0)  # more epsilon, less sigma
        for e, s in zip(xs, ys):
            assert privcal.epsilon(s, 1e-5, steps=50, accountant=name) <= e * (1 + 1e-12)
            assert s == pytest.approx(privcal.calibrate(e, 1e-5, steps=50, accountant=name), rel=2e-6)


def test_default_sigma_curve_falls_back_to_searched_targets_when_an_end_is_not_reached():
    # sigma scales with the sensitivity: epsilon 0.1 over 1e6 steps needs ~5e4 per unit of sensitivity (RDP,
    # delta 1e-5: ~sqrt(T) sqrt(2 ln(1/delta)) / epsilon), so ~5e12 at sensitivity 1e8, beyond the search's 1e12;
    # epsilon 10 needs ~100 times less. The curve's first end is missing and every target is searched instead,
    # the unreachable ones nan
    fig = plot.sigma_vs_epsilon(1e-5, steps=10**6, sensitivity=1e8, accountants=("rdp",))
    xs, ys = _lines(fig)["rdp"].get_data()
    assert np.allclose(xs, np.geomspace(*plot.CURVE_ENDS, plot.CURVE_POINTS))
    assert math.isnan(ys[0]) and math.isfinite(ys[-1])


@pytest.mark.parametrize(
    "call,argument",
    [
        (lambda: plot.epsilon_vs_steps(0.0, 1e-5, steps=10), "sigma"),
        (lambda: plot.profile(1.0, deltas=[2.0]), "deltas"),
        (lambda: plot.sigma_vs_epsilon(1e-5, accountants=("moments",)), "accountants"),
        (lambda: plot.save(None, "out.jpg"), "path suffix"),
    ],
)
def test_bad_input_names_the_argument(call, argument):
    with pytest.raises(ValueError, match=argument):
        call()


# --- each picture's flaw ---------------------------------------------------------------------------------


def test_the_exact_curve_is_drawn_on_top_of_the_pld_curve_in_its_own_style():
    fig = plot.epsilon_vs_steps(3.0, 1e-5, steps=10, points=3, accountants=("exact", "pld"))
    lines = _lines(fig)
    exact, pld = lines["exact"], lines["pld"]
    # the PLD's upper end hugs the exact value: it is drawn wide and pale, the exact curve thin and above it
    assert exact.get_zorder() > pld.get_zorder()
    assert exact.get_linewidth() < pld.get_linewidth() and pld.get_alpha() < 1


@pytest.mark.parametrize("sampling, neighbouring", [("poisson", None), ("without_replacement", "replace_one"),
                                                    ("without_replacement", "zero_out")])
def test_titles_and_legends_carry_no_code_token(sampling, neighbouring):
    fig = plot.profile(1.0, steps=10, sample_rate=0.1, sampling=sampling, neighbouring=neighbouring,
                       deltas=[1e-5, 1e-3], accountants=("rdp", "paper"))
    ax = fig.axes[0]
    words = [ax.get_title(), *(t.get_text() for t in ax.get_legend().get_texts())]
    assert not any("_" in w for w in words), words  # "(add_remove)" read as code
    assert "paper (not a valid bound)" in words  # said once, not "paper (paper, not a valid bound)"


def test_the_legend_sits_below_the_axes_and_covers_no_curve():
    fig = plot.learning_curve([1, 2, 3], {"run": [1.0, 2.0, 3.0]}, {"random policy": 1.5}, title="t",
                              xlabel="episode", ylabel="return")
    fig.canvas.draw()
    ax = fig.axes[0]
    assert ax.get_legend().get_window_extent().y1 <= ax.get_window_extent().y0


def test_where_a_profile_stops_is_said_in_the_legend(monkeypatch):
    # an accountant with no finite bound at the smallest deltas: the curve stops, and the legend says where
    def epsilons(name, releases, sigma, deltas):
        return [math.inf if d < 1e-10 else 1.0 / d ** 0.1 for d in deltas]

    monkeypatch.setattr(plot, "_epsilons", epsilons)
    fig = plot.profile(1.0, steps=10, sample_rate=0.1, deltas=[1e-12, 1e-11, 1e-10, 1e-5], accountants=("pld",))
    assert set(_lines(fig)) == {"pld: no finite certified bound below delta = 1e-10"}


def test_the_dpq_picture_names_epsilon_delta_and_sigma(tmp_path, monkeypatch, capsys):
    from privcal import cli

    titles = []
    real = plot.learning_curve
    monkeypatch.setattr(plot, "learning_curve", lambda *a, **k: titles.append(k["title"]) or real(*a, **k))
    path = tmp_path / "dpq.png"
    assert cli.main(["train", "dpq", "--samples", "640", "--epsilon", "0.9", "--delta", "1e-4", "--plot",
                     str(path), "--no-references"]) == 0
    assert path.stat().st_size > 1000
    assert titles and "ε = 0.9" in titles[0] and "δ = 0.0001" in titles[0] and "σ = " in titles[0], titles


def test_a_plot_setting_object_draws_what_its_keywords_draw():
    # PlotSetting holds the releases and the accountants; keywords replace its fields
    setting = plot.PlotSetting(sample_rate=0.1, accountants=("rdp",))
    a = plot.profile(1.0, steps=10, deltas=[1e-8, 1e-5], setting=setting)
    b = plot.profile(1.0, steps=10, deltas=[1e-8, 1e-5], sample_rate=0.1, accountants=("rdp",))
    c = plot.profile(1.0, steps=10, deltas=[1e-8, 1e-5], setting=plot.PlotSetting(sample_rate=0.5), sample_rate=0.1,
                     accountants=("rdp",))
    ys = [[list(line.get_ydata()) for line in fig.axes[0].get_lines()] for fig in (a, b, c)]
    assert ys[0] == ys[1] == ys[2] and len(ys[0]) == 1
    with pytest.raises(ValueError, match="setting must be a PlotSetting"):
        plot.profile(1.0, setting={"sample_rate": 0.1})


def test_pyplot_is_the_public_seam_of_the_matplotlib_import():
    import matplotlib.pyplot

    assert plot.pyplot() is matplotlib.pyplot
