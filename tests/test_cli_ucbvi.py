"""``privcal train ucbvi``: one run and several seeds, in the user's words (privcal.cli.ucbvi)."""

import json

from privcal import cli
from privcal.rl.ucbvi.agent import run_ucbvi
from privcal.rl.ucbvi.experiments import make_environment


def _json(argv, capsys):
    assert cli.main(argv) == 0
    return json.loads(capsys.readouterr().out, parse_constant=lambda c: (_ for _ in ()).throw(ValueError(c)))


def test_one_run_reports_the_unit_the_guarantee_the_references_and_its_verdict(capsys):
    out = _json(["train", "ucbvi", "--epsilon", "10", "--delta", "1e-5", "--episodes", "40", "--seed", "3",
                 "--format", "json"], capsys)
    # the library call the CLI makes
    direct = run_ucbvi(make_environment("random"), 40, 10.0, 1e-5, failure_probability=0.1, seed=3)
    assert out["regret_per_episode"] == direct.regret_per_episode
    assert out["privacy_unit"] == "episode" and out["guarantee"].startswith("(10, 1e-05)-JDP")
    refs = out["references"]
    # the uniform policy's regret per episode is exact (backward induction): the library's own value
    assert refs["uniform_policy_regret_per_episode"] == direct.uniform_regret
    assert refs["non_private_regret_per_episode"] == run_ucbvi(make_environment("random"), 40, None, None,
                                                               failure_probability=0.1, seed=3).regret_per_episode
    assert out["verdict"] in ("beats", "does not beat", "cannot tell") and "one seed" in out["verdict_test"]["test"]


def test_seeds_give_the_mean_an_interval_and_a_verdict_over_seeds(capsys):
    out = _json(["train", "ucbvi", "--epsilon", "10", "--delta", "1e-5", "--episodes", "30", "--seeds", "0-2",
                 "--n-jobs", "1", "--format", "json"], capsys)
    import math

    from scipy import stats

    values = [r["regret_per_episode"] for r in out["runs"]]
    # each seed is the one-seed run of the same command (library call), and the interval is Student-t's
    assert values == [run_ucbvi(make_environment("random"), 30, 10.0, 1e-5, failure_probability=0.1,
                                seed=s).regret_per_episode
                      for s in (0, 1, 2)]
    mean = sum(values) / 3
    sd = math.sqrt(sum((v - mean) ** 2 for v in values) / 2)
    half = stats.t.ppf(0.975, 2) * sd / math.sqrt(3)  # closed form: t_{0.975, 2} s / sqrt(n)
    assert math.isclose(out["mean"], mean, rel_tol=1e-12)
    assert math.isclose(out["ci_high"] - out["ci_low"], 2 * half, rel_tol=1e-9)
    assert out["privacy_unit"] == "episode" and out["seeds"] == [0, 1, 2]


def test_non_private_refuses_privacy_flags(capsys):
    assert cli.main(["train", "ucbvi", "--non-private", "--epsilon", "1"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("privcal: error: --epsilon must not be given together with --non-private")
