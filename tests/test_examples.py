"""The scripts of examples/ run as a user runs them (a subprocess each, well under a second) and print the numbers
their docstrings promise. Each number is checked against its source: a closed form computed here with scipy (the
exact Gaussian profile, Balle & Wang 2018, Thm 8), or a figure the README and docs/pld.md quote from peers."""

from __future__ import annotations

import math
import pathlib
import re
import subprocess
import sys

import pytest
from scipy.stats import norm

ROOT = pathlib.Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"


def _run(name: str) -> str:
    done = subprocess.run([sys.executable, str(EXAMPLES / name)], cwd=ROOT, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr, done.stderr
    return done.stdout


def _number(pattern: str, text: str) -> float:
    match = re.search(pattern, text)
    assert match, (pattern, text)
    return float(match.group(1))


def _gaussian_delta(epsilon: float, mu: float) -> float:
    # exact privacy profile of the Gaussian mechanism with mu = sensitivity / sigma (Balle & Wang 2018, Thm 8)
    return norm.cdf(-epsilon / mu + mu / 2) - math.exp(epsilon) * norm.cdf(-epsilon / mu - mu / 2)


def test_every_script_is_tested():
    assert sorted(p.name for p in EXAMPLES.glob("*.py")) == sorted(
        ["compare_accountants.py", "dpsgd_samplers.py", "mixed_relations.py", "opacus_accountant.py"])


def test_dpsgd_samplers():
    out = _run("dpsgd_samplers.py")
    # Poisson: 0.8136, the noise multiplier the README quotes for (3, 1e-5), q = 0.01, 10 epochs (Opacus 1.6's own
    # get_noise_multiplier: 0.8655 with its RDP accountant, 0.8154 with its PRV one)
    poisson = _number(r"poisson sampling:\s+sigma ([\d.]+)", out)
    assert poisson == pytest.approx(0.8136, abs=1e-4)
    # shuffled: 10 epochs, each record in one batch per epoch: the Gaussian with mu = sqrt(10) / sigma meets
    # delta = 1e-5 at epsilon 3 exactly (closed form, 4 printed digits)
    shuffled = _number(r"shuffled batches:\s+sigma ([\d.]+)", out)
    assert _gaussian_delta(3.0, math.sqrt(10) / (shuffled + 5e-5)) <= 1e-5 <= _gaussian_delta(
        3.0, math.sqrt(10) / (shuffled - 5e-5))
    assert _number(r"epsilon_of\(EpochsEvent\(\.\.\.\)\) = ([\d.]+)", out) == pytest.approx(3.0, abs=1e-4)
    # Poisson's sigma on shuffled batches: the valid upper end is the Gaussian with mu = sqrt(10) / 0.8136 at
    # delta = 1e-5 (closed form), and the target 3 lies inside [certified lower, upper]
    lower = _number(r"epsilon in \[([\d.]+),", out)
    upper = _number(r"epsilon in \[[\d.]+, ([\d.]+)\]", out)
    mu = math.sqrt(10) / poisson
    assert _gaussian_delta(upper + 1e-3, mu) <= 1e-5 <= _gaussian_delta(upper - 1e-3, mu)
    assert lower < 3.0 < upper


def test_mixed_relations():
    out = _run("mixed_relations.py")
    # docs/pld.md, section 1.5: sigma = 1, q = 0.01, 100 + 100 steps, delta = 1e-5: the add/remove number 0.9125
    # (a certified lower bound of the replace-one reading is 1.0546, which is why replace-one is refused)
    assert _number(r"epsilon ([\d.]+) at delta 1e-5", out) == pytest.approx(0.9125, abs=1e-4)
    assert "priced under add_remove" in out
    assert "note: without_replacement releases stated under replace_one" in out
    assert "under replace_one: refused" in out


def test_compare_accountants():
    out = _run("compare_accountants.py")
    assert re.search(r"exact: refused", out) and re.search(r"kov: refused", out)
    # README, "Coming from dp_accounting or Opacus": q = 0.01, noise multiplier 1.1, 1,000 steps, delta = 1e-5:
    # privcal's RDP 1.71172 (dp_accounting's RDP 1.71177: privcal refines the optimal order between grid orders)
    rdp = _number(r"rdp: epsilon ([\d.]+)", out)
    assert rdp == pytest.approx(1.71172, abs=1e-5) and rdp <= 1.71177
    # the PLD's certified bracket [1.5145, 1.5156] contains dp_accounting's pessimistic PLD 1.5154, and "best"
    # is the PLD's upper end
    lower = _number(r"pld: epsilon [\d.]+, certified bracket \[([\d.]+),", out)
    upper = _number(r"pld: epsilon ([\d.]+)", out)
    assert lower <= 1.5154 <= upper == pytest.approx(1.5156, abs=1e-4)
    assert _number(r"best: epsilon ([\d.]+)", out) == upper


def test_opacus_accountant():
    out = _run("opacus_accountant.py")
    # README, "Using privcal inside Opacus": noise multiplier 0.8136, and the accountant's epsilon at most the target
    poisson = _number(r"poisson:\s+noise multiplier ([\d.]+)", out)
    assert poisson == pytest.approx(0.8136, abs=1e-4)
    assert _number(r"poisson:.*epsilon ([\d.]+)", out) <= 3.0
    assert "(sampler stated)" in out and "(sampler assumed)" not in out  # both samplers stated explicitly
    # shuffled: the no-amplification calibration, the closed form of test_dpsgd_samplers
    nm = _number(r"shuffle:\s+noise multiplier ([\d.]+)", out)
    assert _gaussian_delta(3.0, math.sqrt(10) / (nm + 5e-5)) <= 1e-5 <= _gaussian_delta(3.0, math.sqrt(10) / (nm - 5e-5))
    assert "SamplerWarning" in out and "not valid for this sampler" in out
    # the Poisson multiplier on shuffled batches: the Gaussian with mu = sqrt(10) / 0.8136 at delta = 1e-5 (closed form)
    wrong = _number(r"poisson's multiplier on shuffled batches: epsilon ([\d.]+)", out)
    mu = math.sqrt(10) / poisson
    assert _gaussian_delta(wrong + 1e-3, mu) <= 1e-5 <= _gaussian_delta(wrong - 1e-3, mu)
