"""Runs over epochs priced for the sampler they ran (privcal.accounting.sampled_runs) and their CLI."""

import json

import pytest

import privcal
from privcal.accounting import samplers
from privcal.accounting.sampled_runs import sampled_run_calibrate, sampled_run_epsilon
from privcal.cli import main
from privcal.errors import UnsupportedEventError

#: the running example of docs/samplers.md: N = 1000 records, batches of 10 (T = 100 steps per epoch), noise multiplier 1, delta 1e-5
EXAMPLE = dict(batch_size=10, dataset_size=1000)


def test_the_running_example_both_ends_and_poissons_figure():
    r = sampled_run_epsilon(1.0, 1e-5, sampling="shuffle", epochs=1, **EXAMPLE)
    # upper: the Gaussian with mu = 1 (Balle & Wang 2018, exact profile): privcal.epsilon(1, 1e-5) = 4.3772
    assert r.epsilon == pytest.approx(privcal.epsilon(1.0, 1e-5), rel=1e-12)
    assert r.epsilon == pytest.approx(4.3772, abs=1e-4)
    # Poisson at q = 0.01 over the same 100 steps (dp_accounting 0.6.0's PLD, an independent implementation:
    # 0.71804), labelled not valid
    assert r.poisson_epsilon == pytest.approx(privcal.epsilon(1.0, 1e-5, steps=100, sample_rate=0.01), rel=1e-12)
    assert r.poisson_epsilon == pytest.approx(0.718, abs=1e-3)
    assert any("not valid for this sampler" in n or "provably optimistic" in n for n in r.notes)
    # lower: the certified realisable bound of the samplers module, below the valid upper end
    assert r.lower == samplers.epsilon_lower(1.0, 100, 1, 1e-5, sampler="shuffle", relation="zero_out")
    assert 0 < r.lower <= r.epsilon
    assert (r.neighbouring, r.steps_per_epoch, r.steps) == ("zero_out", 100, 100)
    assert "null record" in r.privacy_unit


def test_calibration_meets_the_target_with_the_valid_bound_and_names_poissons_sigma():
    sigma, r, poisson = sampled_run_calibrate(4.3772, 1e-5, sampling="shuffle", epochs=1, **EXAMPLE)
    assert sigma == pytest.approx(1.0, abs=1e-4)  # the exact Gaussian calibration: epsilon(1, 1e-5) = 4.3772 (Balle & Wang 2018)
    assert r.epsilon <= 4.3772 * (1 + 1e-9)
    assert poisson == pytest.approx(0.5727, abs=1e-3)  # Poisson's sigma: dp_accounting 0.6.0's PLD gives epsilon 4.3757 <= 4.3772 at 0.5727
    more = sampled_run_epsilon(sigma, 1e-5, sampling="shuffle", epochs=4, **EXAMPLE)
    assert more.epsilon > r.epsilon and more.lower >= r.lower  # more epochs cost more at both ends


def test_full_batch_is_the_exact_gaussian_of_every_step():
    r = sampled_run_epsilon(10.0, 1e-5, sampling="full_batch", epochs=2, batch_size=1000, dataset_size=1000)
    # one step per epoch over the whole data set: mu = sqrt(2) / 10 (closed form)
    assert r.epsilon == pytest.approx(privcal.epsilon(10.0, 1e-5, steps=2), rel=1e-12)
    assert r.lower <= r.epsilon


def test_refusals_and_bad_input():
    with pytest.raises(UnsupportedEventError, match="zero_out"):
        sampled_run_epsilon(1.0, 1e-5, sampling="shuffle", epochs=1, neighbouring="add_remove", **EXAMPLE)
    with pytest.raises(ValueError, match="batch_size"):
        sampled_run_epsilon(1.0, 1e-5, sampling="shuffle", epochs=1, batch_size=2000, dataset_size=1000)
    with pytest.raises(ValueError, match="sampling"):
        sampled_run_epsilon(1.0, 1e-5, sampling="poisson", epochs=1, **EXAMPLE)
    with pytest.raises(ValueError, match="persistent"):
        sampled_run_epsilon(1.0, 1e-5, sampling="full_batch", epochs=1, persistent=True, **EXAMPLE)


RUN = ["--sampling", "shuffle", "--epochs", "1", "--batch-size", "10", "--dataset-size", "1000"]


@pytest.mark.parametrize("fmt", ["json", "csv", "markdown", "text"])
def test_cli_gives_both_ends_and_poissons_figure_in_every_format(fmt, capsys):
    assert main(["epsilon", *RUN, "--sigma", "1", "--delta", "1e-5", "--format", fmt]) == 0
    out = capsys.readouterr().out
    if fmt == "json":
        data = json.loads(out)
        assert data["epsilon"] == pytest.approx(4.3772, abs=1e-4)
        assert 0 < data["lower"] <= data["epsilon"] and data["poisson_epsilon"] == pytest.approx(0.718, abs=1e-3)
        assert data["neighbouring"] == "zero_out" and data["sampling"] == "shuffle"
    elif fmt == "text":
        assert "NOT valid for this sampler" in out and "zero-out" in out and "certified" in out
        assert max(len(line) for line in out.splitlines()) <= 100
    else:
        for key in ("lower", "poisson_epsilon", "neighbouring"):
            assert key in out


def test_cli_calibrate_for_a_sampler(capsys):
    assert main(["calibrate", *RUN, "--epsilon", "4.3772", "--delta", "1e-5", "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["sigma"] == pytest.approx(1.0, abs=1e-4) and data["poisson_sigma"] == pytest.approx(0.5727, abs=1e-3)


@pytest.mark.parametrize("argv, words", [
    (["epsilon", *RUN, "--sigma", "1", "--delta", "1e-5", "--neighbouring", "add_remove"], "zero_out"),
    (["epsilon", "--sampling", "shuffle", "--sigma", "1", "--delta", "1e-5"], "--epochs"),
    (["epsilon", "--epochs", "3", "--sigma", "1", "--delta", "1e-5"], "--sampling"),
    (["epsilon", *RUN, "--sigma", "1", "--delta", "1e-5", "--steps", "10"], "--steps"),
    (["epsilon", *RUN, "--sigma", "1", "--delta", "1e-5", "--accountant", "rdp"], "--accountant rdp"),
])
def test_cli_refuses_in_one_line(argv, words, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and words in err and "Traceback" not in err


# ------------------------------------------------------------------------- EpochsEvent: the sampler in a history


def test_an_epochs_event_is_priced_by_the_no_amplification_gaussian_and_never_below_the_realisable_bound():
    run = privcal.EpochsEvent(privcal.GaussianEvent(1.0), 10, 100)  # shuffled, zero-out by default
    assert run.neighbouring == "zero_out" and run.releases == 10
    from privcal.accounting.api import epsilon_of_report

    report = epsilon_of_report(run, 1e-5)
    exact = samplers.epsilon_upper(1.0, 10, 1e-5, sampler="shuffle")  # mu = sqrt(10): closed form
    assert exact <= report.epsilon <= exact * (1 + 1e-3)
    assert report.neighbouring == "zero_out" and report.realisable is False  # the Gaussian pair is not realised
    assert samplers.epsilon_lower(1.0, 100, 10, 1e-5) <= report.epsilon
    rdp = privcal.RDPAccountant().compose(run).epsilon(1e-5)
    assert rdp >= exact


def test_an_epochs_event_in_a_history_takes_the_history_relation_or_is_refused():
    shuffled = privcal.EpochsEvent(privcal.GaussianEvent(1.0), 2, 100)
    wor = privcal.SelfComposedEvent(
        privcal.SubsampledEvent(privcal.GaussianEvent(4.0), 0.01, "without_replacement", "replace_one"), 100)
    history = privcal.ComposedEvent([shuffled, wor])
    assert history.relation == "replace_one"  # zero-out converts to replace-one at twice the sensitivity
    alone_at_twice = privcal.epsilon_of(privcal.EpochsEvent(privcal.GaussianEvent(0.5), 2, 100,
                                                            neighbouring="replace_one"), 1e-5)
    assert privcal.epsilon_of(history, 1e-5) >= alone_at_twice
    poisson = privcal.SelfComposedEvent(privcal.PoissonSampledEvent(0.01, privcal.GaussianEvent(1.0)), 100)
    with pytest.raises(UnsupportedEventError, match="no single neighbouring relation"):
        privcal.ComposedEvent([shuffled, poisson])
    with pytest.raises(UnsupportedEventError, match="zero_out"):
        privcal.epsilon_of(privcal.EpochsEvent(privcal.GaussianEvent(1.0), 2, 100, neighbouring="add_remove"), 1e-5)
    bins = privcal.EpochsEvent(privcal.GaussianEvent(1.0), 2, 100, "balls_in_bins")
    assert privcal.ComposedEvent([bins, poisson]).relation == "add_remove"


def test_a_full_batch_run_is_the_exact_gaussian_and_realisable():
    run = privcal.EpochsEvent(privcal.GaussianEvent(10.0), 2, 3, "full_batch")
    from privcal.accounting import realisable
    from privcal.accounting.api import epsilon_of_report

    report = epsilon_of_report(run, 1e-5)
    exact = privcal.epsilon(10.0, 1e-5, steps=6)  # mu = sqrt(6) / 10
    assert exact <= report.epsilon <= exact * (1 + 1e-3) and report.realisable is True
    assert realisable.epsilon_lower(run, 1e-5) <= exact
    with pytest.raises(ValueError, match="persistent"):
        privcal.EpochsEvent(privcal.GaussianEvent(1.0), 2, 3, "full_batch", persistent=True)
    with pytest.raises(ValueError, match="sampling"):
        privcal.EpochsEvent(privcal.GaussianEvent(1.0), 2, 3, "poisson")


# ------------------------------------------------------------------------------ the table and the plot


def test_table_gives_the_valid_sigma_the_not_private_sigma_and_poissons(capsys):
    assert main(["table", "--setting", "gaussian", *RUN, "--epsilons", "1,4.3772", "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [c["key"] for c in data["columns"]] == ["upper", "lower", "poisson"]
    row = data["rows"][1]
    assert row["sigma"]["upper"] == pytest.approx(1.0, abs=1e-4)  # exact Gaussian calibration at mu = 1
    assert row["sigma"]["poisson"] == pytest.approx(0.5727, abs=1e-3)
    # below the 'not private' sigma the realisable pair certifiably loses more than the target
    lo = row["sigma"]["lower"]
    assert samplers.epsilon_lower(lo, 100, 1, 1e-5) > 4.3772 >= samplers.epsilon_lower(lo * 1.001, 100, 1, 1e-5)
    assert lo < row["sigma"]["upper"]
    assert data["parameters"]["neighbouring"] == "zero_out" and data["parameters"]["sampling"] == "shuffle"
    assert main(["table", "--setting", "gaussian", *RUN, "--epsilons", "1"]) == 0
    text = capsys.readouterr().out
    assert "Poisson sigma" in text and "verdict on the Poisson sigma" in text
    assert max(len(line) for line in text.splitlines()) <= 100


@pytest.mark.parametrize("argv, words", [
    (["table", "--setting", "gaussian", "--sampling", "shuffle", "--epochs", "1", "--dataset-size", "10"],
     "--batch-size"),
    (["table", "--setting", "gaussian", "--epochs", "2"], "--sampling"),
    (["table", "--setting", "gaussian", "--batch-size", "10"], "--setting dpq"),
])
def test_table_refuses_run_flags_it_would_ignore(argv, words, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and words in err


def test_plot_samplers_draws_every_sampler(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    out = tmp_path / "samplers.png"
    assert main(["plot", "samplers", "--sigma", "1", "--epochs", "4", "--batch-size", "10", "--dataset-size", "100",
                 "--out", str(out)]) == 0
    assert out.stat().st_size > 1000
    from privcal import plot

    fig = plot.epsilon_vs_epochs(1.0, 1e-5, epochs=4, batch_size=10, dataset_size=100, points=3)
    labels = fig.axes[0].get_legend_handles_labels()[1]
    assert any("Poisson" in x and "valid only" in x for x in labels)
    assert any("valid upper bound" in x for x in labels) and any("certified lower" in x for x in labels)
    assert main(["plot", "samplers", "--sigma", "1", "--out", str(out)]) == 2
    assert "--batch-size" in capsys.readouterr().err


def test_an_epochs_event_of_another_release_is_refused_even_after_a_gaussian_one():
    # support is decided once per kind of release: the kind of a run names its inner release (a Laplace run
    # has no no-amplification Gaussian here)
    privcal.epsilon_of(privcal.EpochsEvent(privcal.GaussianEvent(1.0), 2, 10), 1e-5)
    with pytest.raises(UnsupportedEventError):
        privcal.epsilon_of(privcal.EpochsEvent(privcal.LaplaceEvent(1.0), 2, 10), 1e-5)


def test_full_batch_text_does_not_call_an_equal_figure_invalid(capsys):
    # at rate 1 (a full batch) Poisson accounting prices the same mechanism: no "NOT valid" label there
    assert main(["epsilon", "--sampling", "full_batch", "--epochs", "2", "--batch-size", "100", "--dataset-size",
                 "100", "--sigma", "10", "--delta", "1e-5"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "NOT valid" not in out and "Poisson at rate 1: the same mechanism" in out


def test_a_settings_object_prices_the_run_its_keywords_describe():
    from privcal.accounting.sampled_runs import SampledRunSettings

    run = SampledRunSettings("shuffle", 1, **EXAMPLE)
    # the same run given as keywords or as settings: the same report, field for field
    assert sampled_run_epsilon(1.0, 1e-5, run) == sampled_run_epsilon(1.0, 1e-5, sampling="shuffle", epochs=1,
                                                                       **EXAMPLE)
    # a keyword replaces the settings' field: two epochs, mu = sqrt(2) (the exact Gaussian profile)
    assert sampled_run_epsilon(1.0, 1e-5, run, epochs=2).epsilon == pytest.approx(
        privcal.epsilon(1.0, 1e-5, steps=2), rel=1e-12)
    with pytest.raises(TypeError, match=r"missing 2 required keyword-only arguments: 'epochs' and 'dataset_size'"):
        sampled_run_epsilon(1.0, 1e-5, sampling="shuffle", batch_size=10)
    with pytest.raises(TypeError, match="unexpected keyword argument 'sample_rate'"):
        sampled_run_calibrate(1.0, 1e-5, run, sample_rate=0.01)
