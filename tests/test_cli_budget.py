"""No hang on extreme input: over the whole valid range of the numeric flags of ``privcal calibrate``,
``privcal epsilon`` and ``privcal table --setting gaussian`` (epsilon up to the cap 1e6, delta down to 1e-300, steps
up to 1e12, sample rate down to 1e-15, sigma and sensitivity over 600 decades), each command answers (exit 0) or
refuses in one line (exit 2) within a budget of work stated from the code's own limits, counted in-process:

* the epsilon evaluations of every calibration search, against the search's own caps
  (:data:`SEARCH_EVALS` for ``privcal.accounting.search.search``, :data:`SECANT_EVALS` for the PLD's secant);
* the number of searches of one command (:data:`SEARCHES_PER_ACCOUNTANT` per accountant that may answer);
* the PLD's evaluations outside a search (its certified brackets), and every FFT it takes: no transform longer
  than the memory limit allows (``--memory-limit`` / bytes per grid cell), and at most
  :data:`FFTS_PER_EVALUATION` transforms per PLD evaluation.

A runaway loop or a grid beyond the memory cap exceeds these counts whatever the machine; no wall time is
measured. The PLD runs at ``--memory-limit 1`` (MiB): the budget scales with the limit, and at the default
(256 MiB) the same counts hold with grids 256 times longer (a few tens of seconds for the slowest inputs here).
"""

from __future__ import annotations

import collections
import math

import pytest
import scipy.fft
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from privcal import cli
from privcal.cli import out as cli_out
from privcal.analysis import rdp
from privcal.accounting import accountants, pld_accountant
from privcal.accounting import search as _search
from privcal.privacy_loss import distribution

# ------------------------------------------------------------------------------------------------------------
# The budget, from the code's limits

_DECADES = math.log(_search.SIGMA_MAX / _search.SIGMA_MIN)  # the search range of sigma, [1e-12, 1e12]
_RTOL_MIN = 1e-12  # below every rtol a calibration asks for (1e-9 API, 1e-7 table and PLD floor, 1e-3 coarse)

#: ``_search.search``: the first probe; the bracket widens by 4x at each step across [SIGMA_MIN, SIGMA_MAX]
#: (ceil(log_4(1e24)) + 1 = 41 probes); Brent's method (``privcal._roots.brentq``, maxiter = 100, plus its two
#: ends); the step-up from the root, whose step grows 4x from rtol / 2 until it leaves a bracket of at most 4^40
#: (log_4(4^40 * 2 / rtol) + 1 = 61 at rtol 1e-12); bisection to rtol over at most 55 nats
#: (log_2(55.3 / 1e-12) = 46); the final check.
SEARCH_EVALS = (1 + math.ceil(_DECADES / math.log(4)) + 1 + 100 + 2
                + math.ceil(math.log(4 ** 40 * 2 / _RTOL_MIN, 4)) + 1
                + math.ceil(math.log2(_DECADES / _RTOL_MIN)) + 1)
#: ``pld_accountant.secant_search``: its two first probes, 40 widening steps, 60 regula falsi steps, the final check.
SECANT_EVALS = 2 + 40 + 60 + 1
#: searches of one accountant's calibration: the PLD's rough secant, its rule-grid secant and the generic search
#: it falls back to (3); RDP's coarse search on every sixth order, three searches around the optimal order and the
#: plain search (5, ``RDPAccountant.sigma_for_unchecked``).
SEARCHES_PER_ACCOUNTANT = 5
#: PLD evaluations outside a search: a certified bracket per answer, re-gridded at most MAX_REFINE_BRACKET times
BRACKETS_PER_ANSWER = 1 + distribution.MAX_REFINE_BRACKET
#: transforms of one PLD evaluation: 2 neighbouring directions x 2 ends (upper, lower) x 2 (rfft, irfft), on up to
#: MAX_COARSEN + 1 grids (coarsened to fit the memory limit)
FFTS_PER_EVALUATION = 2 * 2 * 2 * (distribution.MAX_COARSEN + 1)

MEMORY_MIB = 1  # --memory-limit of every PLD here
#: the longest transform the memory limit allows: the PLD refuses a grid of more cells than this
MAX_FFT = MEMORY_MIB * 2**20 // distribution.BYTES_PER_CELL


class Work:
    """Counters of the work of one command, on the functions that do it (installed by :func:`work`)."""

    def __init__(self):
        self.searches: list = []  # (kind, evaluations) per search
        self.counts = collections.Counter()
        self.longest_fft = 0

    def evaluations(self) -> int:
        return sum(n for _, n in self.searches)

    def check(self, accountants_answering: int, answers: int, budget_scale: float = 1.0) -> None:
        """Assert the counts are within the budget (``budget_scale`` < 1 shows the check can fail)."""
        for kind, n in self.searches:
            cap = SEARCH_EVALS if kind == "search" else SECANT_EVALS
            assert n <= cap * budget_scale, f"a {kind} took {n} evaluations, its cap is {cap}"
        searches = SEARCHES_PER_ACCOUNTANT * accountants_answering * answers
        assert len(self.searches) <= searches * budget_scale, f"{len(self.searches)} searches, budget {searches}"
        brackets = BRACKETS_PER_ANSWER * accountants_answering * answers
        assert self.counts["pld_brackets"] <= brackets * budget_scale, self.counts
        assert self.longest_fft <= MAX_FFT * budget_scale, f"an FFT of {self.longest_fft} points (cap {MAX_FFT})"
        pld_evaluations = self.counts["pld_probes"] + self.counts["pld_brackets"]
        assert self.counts["ffts"] <= FFTS_PER_EVALUATION * pld_evaluations * budget_scale, self.counts


@pytest.fixture
def work(monkeypatch):
    """A :class:`Work` counting the searches, PLD evaluations and FFTs of what runs in the test."""
    w = Work()

    def counted(kind, fn):
        def call(f, *args, **kwargs):
            entry = [kind, 0]
            w.searches.append(entry)

            def probe(*a, **k):
                entry[1] += 1
                return f(*a, **k)

            return fn(probe, *args, **kwargs)
        return call

    monkeypatch.setattr(_search, "search", counted("search", _search.search))
    monkeypatch.setattr(pld_accountant, "secant_search", counted("secant", pld_accountant.secant_search))

    def tally(owner, name, key):
        fn = getattr(owner, name)

        def call(*a, **k):
            w.counts[key] += 1
            return fn(*a, **k)
        monkeypatch.setattr(owner, name, call)

    tally(distribution.PLD, "unchecked_probe_epsilon", "pld_probes")
    tally(distribution.PLD, "_bracket_uncached", "pld_brackets")
    tally(rdp, "_epsilon_from_rdp", "rdp")
    for name in ("rfft", "irfft"):
        fn = getattr(scipy.fft, name)

        def transform(x, n=None, *a, _fn=fn, **k):
            w.counts["ffts"] += 1
            w.longest_fft = max(w.longest_fft, n if n is not None else x.shape[-1])
            return _fn(x, n, *a, **k)
        monkeypatch.setattr(scipy.fft, name, transform)
    return w


def _run(argv: list, capsys) -> tuple[int, str, str]:
    capsys.readouterr()
    code = cli.main(argv)
    out, err = capsys.readouterr()
    assert code in (0, 2), (argv, code, err)
    if code == 2:
        lines = err.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("privcal: error:"), (argv, err)
    return code, out, err


# ------------------------------------------------------------------------------------------------------------
# The flags' ranges


def _decades(low: float, high: float):
    """10^u for u uniform in [low, high], printed as the user would type it."""
    return st.floats(low, high).map(lambda u: f"{10.0 ** u:.3g}")


#: up to the cap; a target below ~1e-6 needs a sigma beyond SIGMA_MAX (the search's whole range)
EPSILON = st.one_of(_decades(-6, math.log10(cli_out.MAX_EPSILON)), _decades(-300, -6), st.just("1e6"))
DELTA = st.one_of(_decades(-300, -0.01), st.just("1e-300"))
STEPS = st.one_of(st.integers(0, 12).map(lambda u: f"1e{u}"), st.integers(1, 10**12).map(str))
SAMPLE_RATE = st.one_of(st.none(), _decades(-15, 0), st.just("1"), st.just("1e-15"))
SIGMA = _decades(-300, 300)
SENSITIVITY = st.one_of(st.none(), _decades(-300, 300))
ACCOUNTANT = st.sampled_from(("best", "pld", "rdp"))


def _setting(draw_steps, sample_rate, sensitivity, accountant) -> list:
    argv = ["--steps", draw_steps, "--accountant", accountant]
    if sample_rate is not None:
        argv += ["--sample-rate", sample_rate]
    if sensitivity is not None:
        argv += ["--sensitivity", sensitivity]
    if accountant != "rdp":
        argv += ["--memory-limit", str(MEMORY_MIB)]
    return argv


def _accountants(accountant: str, sample_rate) -> int:
    """How many accountants may answer: best tries the PLD, then RDP, on subsampled releases (the exact
    profile alone without subsampling)."""
    return 2 if accountant == "best" and sample_rate is not None else 1


@settings(max_examples=20, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(epsilon=EPSILON, delta=DELTA, steps=STEPS, sample_rate=SAMPLE_RATE, sensitivity=SENSITIVITY,
       accountant=ACCOUNTANT)
def test_calibrate_within_budget(work, capsys, epsilon, delta, steps, sample_rate, sensitivity, accountant):
    work.__init__()
    _run(["calibrate", "--epsilon", epsilon, "--delta", delta,
          *_setting(steps, sample_rate, sensitivity, accountant)], capsys)
    work.check(_accountants(accountant, sample_rate), answers=1)


@settings(max_examples=40, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(sigma=SIGMA, delta=DELTA, steps=STEPS, sample_rate=SAMPLE_RATE, sensitivity=SENSITIVITY,
       accountant=ACCOUNTANT)
def test_epsilon_within_budget(work, capsys, sigma, delta, steps, sample_rate, sensitivity, accountant):
    work.__init__()
    _run(["epsilon", "--sigma", sigma, "--delta", delta, *_setting(steps, sample_rate, sensitivity, accountant)],
         capsys)
    assert not work.searches  # pricing a sigma searches nothing
    work.check(_accountants(accountant, sample_rate), answers=1)


#: the columns of the gaussian table that calibrate by a search: exact, KOV, RDP and the PLD
_TABLE_ACCOUNTANTS = 4


@settings(max_examples=6, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(epsilon=EPSILON, delta=DELTA, steps=st.integers(0, 12).map(lambda u: f"1e{u}"),
       sensitivity=st.one_of(st.none(), _decades(-100, 100)))
def test_table_within_budget(work, capsys, epsilon, delta, steps, sensitivity):
    work.__init__()
    argv = ["table", "--setting", "gaussian", "--epsilons", epsilon, "--delta", delta, "--steps", steps,
            "--memory-limit", str(MEMORY_MIB)]
    _run(argv + ([] if sensitivity is None else ["--sensitivity", sensitivity]), capsys)
    work.check(_TABLE_ACCOUNTANTS, answers=1)


@settings(max_examples=15, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rate=st.floats(-15, -1), epsilon=EPSILON, data=st.data())
def test_a_run_that_rarely_touches_a_record_is_answered_without_search(work, capsys, rate, epsilon, data):
    """Where the differing record is in some batch with probability 1 - (1 - q)^T <= delta, every sigma gives
    (0, delta)-DP: ``best`` answers without a search, a PLD or RDP (sigma 0 for a calibration, epsilon 0 for a
    price). Drawn: q in [1e-15, 0.1], T in [1, 1e12] with 2 q T < 1, and delta in [2 q T, 1) (q T bounds the
    inclusion probability from above)."""
    q = 10.0 ** rate
    steps = data.draw(st.integers(1, min(10**12, math.floor(0.4 / q))))
    delta = 2 * q * steps * 10.0 ** data.draw(st.floats(0, math.log10(0.99 / (2 * q * steps))))
    work.__init__()
    setting = ["--delta", f"{delta:.17g}", "--steps", str(steps), "--sample-rate", f"{q:.17g}"]
    code, out, _ = _run(["calibrate", "--epsilon", epsilon, *setting], capsys)
    assert code == 0 and out.startswith("sigma = 0,"), out
    code, out, _ = _run(["epsilon", "--sigma", "1", *setting], capsys)
    assert code == 0 and out.startswith("epsilon = 0"), out
    assert not work.searches and work.counts["ffts"] == 0 and work.counts["rdp"] == 0, (work.searches, work.counts)


def test_the_budget_can_fail(work, capsys):
    """The budget check fires on work it does not allow: a PLD calibration run against a budget 100 times smaller."""
    _run(["calibrate", "--epsilon", "1", "--delta", "1e-5", "--sample-rate", "0.1", "--steps", "100",
          "--accountant", "pld", "--memory-limit", "1"], capsys)
    work.check(1, answers=1)
    assert work.counts["pld_probes"] > 0 and work.counts["ffts"] > 0
    with pytest.raises(AssertionError):
        work.check(1, answers=1, budget_scale=0.01)
