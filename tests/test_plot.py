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
    assert labels == {"pld", "rdp", "paper (paper, not a valid bound)"}
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
