"""Tests for privcal.verify: the claims registry, its verdicts, the report formats, docs/claims.md and the CLI.

The expected verdicts below are the findings of the checks (each check computes its verdict; the sources of
the underlying numbers are in the claims modules and in the tests of the analysis modules). One quick-budget
run of every claim (module fixture, ~15 s) serves the verdict, JSON and markdown tests. The checks whose
verdicts could not change each get a test that breaks the function or formula the verdict
rests on and sees the verdict flip. The timing of the quick budget is measured by benchmarks/bench_verify.py.
"""

import ast
import importlib
import json
import math
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import privcal.verify.registry as registry
from privcal import cli
from privcal.verify import VERDICTS, Claim, Outcome, claim_ids, get_claim, run_claim, run_claims
from privcal.verify.report import exit_code, render, to_json, to_markdown

DOC = Path(__file__).resolve().parents[1] / "docs" / "claims.md"

# id -> verdict at the quick budget, seed 0 (stable ids: docs and users refer to them). Seven statements false as
# printed hold under a condition the check derives and verifies: they fail, and the condition is the correction.
EXPECTED = {
    # Wang & Hegde 2019
    "WH-prop3-classic-gaussian": "holds",
    "WH-classic-gaussian-large-eps": "fails",  # holds under a derived condition
    "WH-claim13-mahalanobis": "fails",
    "WH-lemma6-reproducing": "holds",
    "WH-lemma6-norm-constant": "fails",  # holds under a derived condition
    "WH-lemma11-mgf": "holds",
    "WH-prop4-gp-mechanism": "holds",
    "WH-claim12-conditioning": "holds",
    "WH-sec32-output-perturbation": "fails",
    "WH-lemma8-constant": "fails",
    "WH-lemma8-tail": "fails",  # holds under a derived condition
    "WH-lemma8-mean": "holds",
    "WH-thm5-failure-term": "fails",
    "WH-eq2-mean": "fails",
    "WH-eq2-variance": "fails",
    "WH-alg1-noise-variance": "fails",
    "WH-eq2-boundary": "fails",
    "WH-thm5-sensitivity-algebra": "holds",
    "WH-thm5-sensitivity": "fails",
    "WH-thm5-kernel-beta": "fails",
    "WH-thm5-epsilon-expression": "holds",
    "WH-thm5-sigma-proof": "fails",  # holds under a derived condition
    "WH-thm5-sigma-derivation": "fails",  # holds under a derived condition
    "WH-thm5-sigma-statement": "fails",
    "WH-thm5-kov-quoted": "fails",  # holds under a derived condition
    "WH-thm5": "fails",
    "WH-appE3-v": "fails",
    "WH-appE3-k": "fails",
    "WH-appE3-condition": "fails",
    "WH-appE3-privacy": "fails",
    "WHw-lemma10-constant": "holds",
    # DP Q-learning as privcal runs it (Algorithm 1's premises on the agent)
    "DPQ-update-sup": "fails",
    "DPQ-noise-reuse": "fails",
    "DPQ-valid-clip": "holds",
    # theorems cited by Wang & Hegde
    "KOV-thm3.3-optimal-composition": "holds",
    "KOV-thm3.4-approximation": "holds",
    "DRV-advanced-composition": "holds",
    # Vietri, Balle, Krishnamurthy & Wu 2020
    "VBKW-counter-error-bound": "fails",  # holds under a derived condition
    "VBKW-E-eps": "fails",
    "VBKW-epsilon-split": "fails",
    "VBKW-footnote6": "fails",
    "VBKW-counter-monotone": "fails",
    "VBKW-privq-optimism": "fails",
    "VBKW-jdp-collusion": "holds",
    # GPOPE
    "GPOPE-lemma1": "fails",
    "GPOPE-eqB2": "fails",
    "GPOPE-lemma1-large-sigma": "holds",
    "GPOPE-sensitivity": "fails",
    "GPOPE-thm1": "fails",
    "GPOPE-thm1-appendix-c2": "fails",
}


@pytest.fixture(scope="module")
def quick():
    return run_claims(budget="quick", seed=0)


# ---------------------------------------------------------------------------------------------------
# registry


def test_registry_ids_are_stable_and_complete():
    assert list(claim_ids()) == list(EXPECTED)


def test_every_claim_is_documented():
    for cid in claim_ids():
        c = get_claim(cid)
        assert c.paper and c.location and c.statement and c.method and c.function, cid
        if EXPECTED[cid] != "holds":
            # a finding comes with the corrected statement (or the function that gives it)
            assert c.corrected or c.corrected_function, cid


def test_quick_budget_verdicts(quick):
    got = {r.claim.id: r.outcome.verdict for r in quick}
    assert got == EXPECTED
    for r in quick:
        o = r.outcome
        assert o.evidence, r.claim.id
        if o.verdict in ("fails", "holds-under-condition"):
            assert o.counterexample, r.claim.id  # the counterexample is stated
        if o.verdict == "holds-under-condition":
            assert o.condition, r.claim.id
    assert exit_code(quick) == 0


def test_derived_conditions_are_the_corrected_statements(quick):
    # the seven statements that hold only under a derived condition: verdict fails, the condition is checked and
    # the corrected statement states it (with the same computed numbers as the evidence)
    conditional = [r for r in quick if r.outcome.condition]
    assert len(conditional) == 7
    number = re.compile(r"\d+(?:\.\d+)?(?:e[-+]?\d+)? at delta = [\d.e+-]+")
    for r in conditional:
        assert r.outcome.verdict == "fails", r.claim.id
        assert r.corrected and r.outcome.counterexample, r.claim.id
        for value in number.findall(r.outcome.evidence):
            assert value in r.outcome.condition and value in r.corrected, (r.claim.id, value)


def test_kov_quoted_corrected_text_agrees_with_its_evidence(quick):
    # the thresholds eps_q(delta) printed in the corrected statement are those the check computed
    r = next(r for r in quick if r.claim.id == "WH-thm5-kov-quoted")
    for value in ("671.8 at delta = 1e-05", "1576 at delta = 1e-08", "275.9 at delta = 0.001"):
        assert value in r.outcome.evidence and value in r.corrected
    assert "674" not in r.corrected and "1582" not in r.corrected


def test_checks_are_reproducible():
    for cid in ("WH-lemma8-tail", "GPOPE-lemma1", "WH-thm5-sigma-statement"):
        a, b = run_claim(get_claim(cid), seed=3), run_claim(get_claim(cid), seed=3)
        assert a.outcome == b.outcome


def test_full_budget_runs_more_examples():
    ctx_quick = registry.Context("quick", 0, "x")
    ctx_full = registry.Context("full", 0, "x")
    assert ctx_full.examples(10) == registry.FULL_FACTOR * ctx_quick.examples(10) > 10
    r = run_claim(get_claim("WH-appE3-v"), budget="full")
    assert r.outcome.verdict == "fails" and r.budget == "full"


def test_unknown_ids_budgets_and_seeds_raise():
    with pytest.raises(ValueError, match="unknown claim id 'NOPE'"):
        run_claims(["WH-appE3-v", "NOPE"])
    with pytest.raises(ValueError, match="unknown claim id"):
        get_claim("NOPE")
    with pytest.raises(ValueError, match="budget must be one of"):
        run_claims(budget="huge")
    with pytest.raises(ValueError, match="seed must be"):
        run_claims(["WH-appE3-v"], seed=-1)


def test_outcome_validation():
    with pytest.raises(ValueError, match="verdict must be one of"):
        Outcome("maybe", "x")
    with pytest.raises(ValueError, match="condition"):
        Outcome("holds-under-condition", "x")


def _broken(ctx):
    raise RuntimeError("boom")


# ---------------------------------------------------------------------------------------------------
# the model has its own module; no import cycle


def _verify_imports(path: Path) -> set:
    """privcal.verify modules imported anywhere in ``path`` (module level or inside functions)."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            if node.module == "privcal.verify":
                names |= {f"privcal.verify.{a.name}" for a in node.names}
            elif node.module.startswith("privcal.verify."):
                names.add(node.module)
        elif isinstance(node, ast.Import):
            names |= {a.name for a in node.names if a.name.startswith("privcal.verify.")}
    return names


def test_verify_import_graph_has_no_cycle():
    package = Path(registry.__file__).parent
    modules = {f"privcal.verify.{p.stem}": p for p in package.glob("*.py") if p.stem != "__init__"}
    graph = {name: _verify_imports(path) & set(modules) for name, path in modules.items()}
    claims = {m for m in modules if m.startswith("privcal.verify.claims_")}
    assert not graph["privcal.verify.model"] & claims and "privcal.verify.registry" not in graph["privcal.verify.model"]
    for m in claims:
        assert "privcal.verify.registry" not in graph[m], m
    # every claims module is reached from the registry (directly, or through the module that lists its claims
    # first, as claims_wh lists claims_wh_rkhs's), and every claim it registers is in the registry
    reached, todo = set(), ["privcal.verify.registry"]
    while todo:
        for nxt in graph[todo.pop()] - reached:
            reached.add(nxt)
            todo.append(nxt)
    assert claims <= reached
    ids = set(claim_ids())
    for m in claims:
        assert {c.id for c in importlib.import_module(m).CLAIMS} <= ids, m
    state = {}

    def visit(node, stack):
        state[node] = "open"
        for nxt in graph[node]:
            assert state.get(nxt) != "open", f"import cycle: {' -> '.join(stack + [node, nxt])}"
            if nxt not in state:
                visit(nxt, stack + [node])
        state[node] = "done"

    for node in graph:
        if node not in state:
            visit(node, [])


def test_model_imports_alone_and_old_names_stay():
    code = ("import sys, privcal.verify.model as m; "
            "assert not [k for k in sys.modules if k.startswith('privcal.verify.claims_')]; "
            "import privcal.verify.registry as r; "
            "assert r.Outcome is m.Outcome and r.Claim is m.Claim and r.Context is m.Context; "
            "assert r.BUDGETS == m.BUDGETS and r.VERDICTS == m.VERDICTS and r.FULL_FACTOR == m.FULL_FACTOR; "
            "import privcal.verify.claims_vbkw")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_pinned_examples_are_tried_first():
    from hypothesis import strategies as st

    ctx = registry.Context("quick", 0, "x")
    assert ctx.find(st.integers(0, 10), lambda x: x > 5, examples=5, pinned=(3, 8, 9)) == 8
    assert ctx.find(st.integers(0, 10), lambda x: x > 100, examples=5, pinned=(3,)) is None


def test_a_check_that_cannot_run_is_reported_not_hidden(monkeypatch):
    broken = Claim(id="X-broken", paper="p", location="l", statement="s", method="m", function="f", check=_broken)
    e3 = get_claim("WH-appE3-v")
    monkeypatch.setattr(registry, "all_claims", lambda: (broken, e3))
    results = run_claims()
    assert [r.outcome.verdict for r in results] == ["not-run", "fails"]
    assert "RuntimeError: boom" in results[0].outcome.evidence
    assert exit_code(results) == 1


def test_missing_gpope_function_makes_only_its_claim_not_run(monkeypatch):
    import privcal.analysis.subsampling

    monkeypatch.delattr(privcal.analysis.subsampling, "rdp_gpope_lemma1_paper")
    r = run_claim(get_claim("GPOPE-lemma1"))
    assert r.outcome.verdict == "not-run" and "ImportError" in r.outcome.evidence
    assert run_claim(get_claim("GPOPE-sensitivity")).outcome.verdict == "fails"


# ---------------------------------------------------------------------------------------------------
# report formats and docs/claims.md


def test_json_schema(quick):
    data = json.loads(to_json(quick, budget="quick", seed=0))
    assert data["budget"] == "quick" and data["seed"] == 0
    assert len(data["claims"]) == len(EXPECTED)
    required = {"id", "paper", "statement", "verdict", "evidence", "corrected"}
    for c in data["claims"]:
        assert required <= set(c)
        assert {"location", "check", "function", "counterexample", "condition", "seconds"} <= set(c)
        assert c["verdict"] in VERDICTS
        assert isinstance(c["evidence"], str) and c["evidence"]
        assert c["corrected"] is None or isinstance(c["corrected"], str)
    json.dumps(data, allow_nan=False)  # strictly valid JSON (no NaN/inf)


_NUMBER = re.compile(r"(?<![\w.])[-+]?(?:\d+\.?\d*|\.\d+)(?:e[-+]?\d+)?(?![\w.])")


def _stable_differences(doc: str, generated: str) -> list:
    """Lines that differ beyond the rounding of their numbers (text exact; numbers to 1 unit in the 4th digit).

    The document prints closed-form values to 4 significant digits; the last digit may round differently
    with another libm or scipy, which is not a change of the document.
    """
    a, b = doc.splitlines(), generated.splitlines()
    if len(a) != len(b):
        return [f"{len(a)} lines vs {len(b)} lines"]
    out = []
    for x, y in zip(a, b):
        if x == y:
            continue
        nx, ny = _NUMBER.findall(x), _NUMBER.findall(y)
        same = (_NUMBER.split(x) == _NUMBER.split(y) and len(nx) == len(ny)
                and all(u == v or math.isclose(float(u), float(v), rel_tol=2e-3) for u, v in zip(nx, ny)))
        if not same:
            out.append(f"docs: {x}\nnow:  {y}")
    return out


def test_docs_claims_md_is_current(quick):
    # regenerated in memory from the same quick run: ids, verdicts, statements, checks, checked bounds, pinned
    # counterexamples, conditions and corrected statements compare exactly, closed-form values up to rounding
    diffs = _stable_differences(DOC.read_text(encoding="utf-8"), to_markdown(quick, budget="quick", seed=0))
    assert not diffs, "docs/claims.md is stale: run python -m privcal.verify.report --write docs/claims.md\n" + (
        "\n".join(diffs[:5]))


def test_docs_hold_no_measured_numbers(quick):
    # the markdown ignores Outcome.data and timings, and does not depend on the seed: another seed changes every
    # Monte Carlo sample and hypothesis search, not the document
    other = run_claims(budget="quick", seed=1)
    assert [r.outcome.verdict for r in other] == [r.outcome.verdict for r in quick]
    body = to_markdown(quick, budget="quick", seed=0).split("Summary:")[1]
    assert to_markdown(other, budget="quick", seed=0).split("Summary:")[1] == body
    for word in ("e-16", "e-15", "e-14", "hypothesis's smallest", "runs fail", "decreases (", "seen "):
        assert word not in body, word


def test_stable_comparison_catches_changes():
    line = "- **Evidence:** exact delta(0.9) = 0.6523 > 5e-5; relative error <= 1e-7 (checked)"
    assert not _stable_differences(line, line.replace("0.6523", "0.6524"))  # last-digit rounding
    assert _stable_differences(line, line.replace("0.6523", "0.66"))
    assert _stable_differences(line, line.replace("1e-7", "2.7e-16"))
    assert _stable_differences(line, line.replace("checked", "measured"))


def test_text_and_markdown_contain_every_claim(quick):
    text = render(quick, "text", budget="quick", seed=0)
    md = render(quick, "markdown", budget="quick", seed=0)
    for cid in EXPECTED:
        assert cid in text and f"## {cid}" in md
    with pytest.raises(ValueError, match="format"):
        render(quick, "xml", budget="quick", seed=0)


# ---------------------------------------------------------------------------------------------------
# CLI (through the lead's privcal.cli.main)


def test_cli_json_single_claim(capsys):
    assert cli.main(["verify", "--claim", "WH-appE3-v", "--claim", "WH-lemma8-constant", "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [c["id"] for c in data["claims"]] == ["WH-lemma8-constant", "WH-appE3-v"]  # registry order
    assert all(c["verdict"] == "fails" for c in data["claims"])


def test_cli_text_and_list(capsys):
    assert cli.main(["verify", "--claim", "WHw-lemma10-constant", "--seed", "7"]) == 0
    out = capsys.readouterr().out
    assert "[HOLDS] WHw-lemma10-constant" in out and "seed 7" in out
    assert cli.main(["verify", "--list"]) == 0
    assert len(capsys.readouterr().out.strip().splitlines()) == len(EXPECTED)


def test_cli_write(tmp_path, capsys):
    path = tmp_path / "out.md"
    assert cli.main(["verify", "--claim", "WH-appE3-v", "--format", "markdown", "--write", str(path)]) == 0
    assert "## WH-appE3-v" in path.read_text()


@pytest.mark.parametrize(
    "argv, message",
    [
        (["verify", "--claim", "NOPE"], "unknown claim id 'NOPE'"),
        (["verify", "--budget", "huge"], "invalid choice"),
        (["verify", "--format", "xml"], "invalid choice"),
        (["verify", "--seed", "-3"], "--seed: must be a whole number in [0, 1e15]"),
    ],
)
def test_cli_bad_input_one_line_exit_2(argv, message, capsys):
    assert cli.main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and len(err.splitlines()) == 1


def test_cli_exit_1_when_a_check_cannot_run(monkeypatch, capsys):
    broken = Claim(id="X-broken", paper="p", location="l", statement="s", method="m", function="f", check=_broken)
    monkeypatch.setattr(registry, "all_claims", lambda: (broken,))
    assert cli.main(["verify"]) == 1
    assert "[NOT-RUN] X-broken" in capsys.readouterr().out


def test_clopper_pearson_array_forms_match_scalar():
    # the auditor's vectorised bounds are the same Beta quantiles as the scalar ones (Clopper & Pearson 1934)
    import numpy as np

    from privcal._stats import (
        clopper_pearson_lower,
        clopper_pearson_lower_array,
        clopper_pearson_upper,
        clopper_pearson_upper_array,
    )

    k = np.array([0, 1, 37, 199, 200])
    np.testing.assert_allclose(clopper_pearson_lower_array(k, 200, 0.01), [clopper_pearson_lower(x, 200, 0.01) for x in k], rtol=1e-12)
    np.testing.assert_allclose(clopper_pearson_upper_array(k, 200, 0.01), [clopper_pearson_upper(x, 200, 0.01) for x in k], rtol=1e-12)


# ---------------------------------------------------------------------------------------------------
# each verdict comes from a computation that could go the other way: break the function or
# formula it rests on and the verdict flips


def _verdict(cid):
    return run_claim(get_claim(cid)).outcome.verdict


def _unpatched(quick, cid):
    """The claim's result before any patch: the module's run of every claim (quick budget, seed 0, what
    run_claim(get_claim(cid)) returns), not a second run of the same check."""
    return next(r for r in quick if r.claim.id == cid)


def test_epsilon_split_uses_the_l1_change_it_measures(quick, monkeypatch):
    import privcal.rl.pucb.agent as P

    assert _unpatched(quick, "VBKW-epsilon-split").outcome.verdict == "fails"  # L1 change 6H: eps/(3H) gives 2 eps
    real = P.episode_counter_inputs
    # an episode encoding with only the visit counts changes 2 entries per step (L1 2H): eps/(3H) is then enough
    monkeypatch.setattr(P, "episode_counter_inputs", lambda *a: {"counts": real(*a)["counts"]})
    assert _verdict("VBKW-epsilon-split") == "holds"


def test_epsilon_split_uses_the_printed_split(monkeypatch):
    import privcal.rl.pucb.agent as P

    monkeypatch.setattr(P, "counter_epsilon_paper", P.counter_epsilon)  # eps/(6H) in place of eps/(3H)
    assert _verdict("VBKW-epsilon-split") == "holds"


def test_eq2_boundary_compares_the_conventions_law_with_the_true_one(monkeypatch):
    import privcal.verify.claims_wh as W

    # a convention that put the phantom neighbours far away would leave a first query stationary: holds
    monkeypatch.setattr(W, "_paper_boundary", lambda x, beta: ((-1e3, 0.0), (1e3, 0.0)))
    assert _verdict("WH-eq2-boundary") == "holds"


def test_eq2_boundary_is_not_run_if_eq2_paper_changes_its_convention(monkeypatch):
    import privcal.verify.claims_wh as W

    real = W.eq2_paper
    monkeypatch.setattr(W, "eq2_paper", lambda s, beta, left=None, right=None: real(
        s, beta, left=left or (0.0, 1.0), right=right or (1.0, 0.0)))
    assert _verdict("WH-eq2-boundary") == "not-run"


def test_gpope_sensitivity_verdict_comes_from_the_audit_of_the_measured_shift(monkeypatch):
    import privcal.calibrators.gpope as gp

    real = gp.clip_gradient

    def clip_to_half(gradient, h):  # a clipping at h/2: two clipped gradients are at most h apart
        return real(gradient, h / 2)

    monkeypatch.setattr(gp, "clip_gradient", clip_to_half)
    r = run_claim(get_claim("GPOPE-sensitivity"))
    assert r.outcome.verdict == "holds", r.outcome.evidence
    assert r.outcome.data["distance"] == pytest.approx(1.0)


def test_kov34_checks_each_term_against_the_optimal_composition(monkeypatch):
    import privcal.verify.claims_cited as K

    real = K.kov34_terms

    def without_sqrt(eps0, delta0, k, delta):  # a broken formula: the sqrt(2k ln ...) terms dropped
        first, _, _ = real(eps0, delta0, k, delta)
        head = math.expm1(eps0) * eps0 * k / (math.exp(eps0) + 1.0)
        return first, head, head

    monkeypatch.setattr(K, "kov34_terms", without_sqrt)
    r = run_claim(get_claim("KOV-thm3.4-approximation"))
    assert r.outcome.verdict == "fails" and "below the optimal" in r.outcome.evidence


def test_kov34_checks_privcals_function_against_the_printed_formula(monkeypatch):
    import privcal.analysis.composition as C

    real = C.kov_epsilon_approx
    monkeypatch.setattr(C, "kov_epsilon_approx", lambda *a, **k: 1.01 * real(*a, **k))
    r = run_claim(get_claim("KOV-thm3.4-approximation"))
    assert r.outcome.verdict == "fails" and "differs from the printed formula" in r.outcome.evidence


def test_alg1_variance_holds_if_the_printed_variance_were_the_law(monkeypatch):
    import privcal.verify.claims_wh as W

    monkeypatch.setattr(W, "_alg1_variance_paper", lambda sigma, d: sigma**2 * d)
    assert _verdict("WH-alg1-noise-variance") == "holds"


def test_alg1_variance_is_not_run_when_the_monte_carlo_rejects_the_true_law(monkeypatch):
    import privcal.verify.claims_wh as W

    real = W.sample_ou_grid

    def noisy(beta, sigma, grid, size, seed=None):  # a broken sampler: extra noise on the middle point
        vals = real(beta, sigma, grid, size, seed=seed)
        vals[:, 1] += 0.5 * sigma * np.random.default_rng(1).standard_normal(len(vals))
        return vals

    monkeypatch.setattr(W, "sample_ou_grid", noisy)
    r = run_claim(get_claim("WH-alg1-noise-variance"))
    assert r.outcome.verdict == "not-run" and "rejects the true conditional variance" in r.outcome.evidence


def test_kov_quoted_fails_on_its_pinned_point_and_holds_with_more_noise(quick, monkeypatch):
    import privcal.analysis.composition as C

    r = _unpatched(quick, "WH-thm5-kov-quoted")
    assert r.outcome.counterexample.startswith("eps = 1000, delta = 1e-05")  # pinned: same on every machine
    real = C.sigma_kov_quoted_paper
    monkeypatch.setattr(C, "sigma_kov_quoted_paper", lambda *a, **k: 100 * real(*a, **k))
    assert _verdict("WH-thm5-kov-quoted") == "holds"


def test_counter_bound_fails_on_its_pinned_points_and_holds_with_a_valid_bound(monkeypatch):
    import privcal.analysis.counter as counter

    real = counter.error_bound
    monkeypatch.setattr(counter, "error_bound_paper", lambda t, eps, b, log_base=2.0: 2 * real(t, eps, b))
    assert _verdict("VBKW-counter-error-bound") == "holds"


def _times(factor, real):
    return lambda *a, **k: factor * real(*a, **k)


@pytest.mark.parametrize("cid, module, name, broken", [
    # more noise than the classic sigma: sufficient for every eps
    ("WH-classic-gaussian-large-eps", "privcal.verify.claims_wh_rkhs", "_classic_mu",
     lambda real: _times(0.1, real)),
    # a norm 10^6 times too large: c = 2 beta would be enough
    ("WH-lemma6-norm-constant", "privcal.analysis.rkhs", "norm_squared", lambda real: _times(1e6, real)),
    # a tail bound of 1 is trivially true
    ("WH-lemma8-tail", "privcal.analysis.supremum", "lemma8_tail_paper", lambda real: (lambda u: 1.0)),
    # ten times the proof's sigma: sufficient for every eps
    ("WH-thm5-sigma-proof", "privcal.analysis.composition", "thm5_sigma_proof_paper", lambda real: _times(10.0, real)),
    # an expression that never exceeds eps
    ("WH-thm5-sigma-derivation", "privcal.analysis.composition", "thm5_epsilon_paper", lambda real: _times(0.0, real)),
])
def test_statements_failing_as_printed_hold_when_the_printed_formula_is_replaced(cid, module, name, broken,
                                                                                quick, monkeypatch):
    import importlib

    mod = importlib.import_module(module)
    assert _unpatched(quick, cid).outcome.verdict == "fails"
    monkeypatch.setattr(mod, name, broken(getattr(mod, name)))
    assert _verdict(cid) == "holds"


def test_run_claims_validates_the_budget_once(monkeypatch):
    from privcal import _validate as V

    names = []
    real = V.choice
    monkeypatch.setattr(V, "choice", lambda name, *a: names.append(name) or real(name, *a))
    run_claims(["WH-appE3-v", "WH-lemma8-constant", "VBKW-footnote6"])
    assert names.count("budget") == 1  # at the boundary, not once per claim


# ---------------------------------------------------------------------------------------------------
# DP Q-learning claims: verdicts computed from the agent's update


def test_dpq_update_sup_holds_if_the_assumed_bound_covered_the_update(monkeypatch):
    from privcal.verify import claims_dpq

    assert run_claim(get_claim("DPQ-update-sup")).outcome.verdict == "fails"
    # alpha (the true shift, plus rounding room): the claim then holds
    monkeypatch.setattr(claims_dpq.rkhs, "update_sup_bound", lambda lr, k, b, lip: 1.001 * lr)
    assert run_claim(get_claim("DPQ-update-sup")).outcome.verdict == "holds"


def test_dpq_noise_reuse_holds_if_the_update_ignored_the_rewards(monkeypatch):
    from privcal.verify import claims_dpq

    orig = claims_dpq.one_update
    monkeypatch.setattr(claims_dpq, "one_update", lambda net, batch, shift, lr, **kw: orig(net, batch, 0.0, lr, **kw))
    assert run_claim(get_claim("DPQ-noise-reuse")).outcome.verdict == "holds"


def test_dpq_valid_clip_fails_if_updates_were_not_certified(monkeypatch):
    from privcal.rl.dpq import updates as dpq_updates

    def plain(net, grads, lr, clip, grid, old_values, lip_clip=None, old_slopes=None):  # uncertified, reported
        projected = int(net.step_unchecked(grads, lr) != 1.0)                                   # as certified
        values, slopes = net.input_derivative(grid)
        return 1.0, 0.0, 0.0, values, slopes if lip_clip is not None else None, projected

    monkeypatch.setattr(dpq_updates, "certified_step_unchecked", plain)
    out = run_claim(get_claim("DPQ-valid-clip")).outcome
    assert out.verdict == "fails" and out.counterexample


# ---------------------------------------------------------------------------------------------------
# "not private" only from lower bounds of realisable pairs: each privacy verdict flips when the
# lower bound (or true value) it rests on is patched below the target, and never rests on an upper bound


def test_appendix_c2_fails_on_the_algebra_not_on_the_moments_tail(quick, monkeypatch):
    import privcal.analysis.rdp as rdp

    r = _unpatched(quick, "GPOPE-thm1-appendix-c2").outcome
    assert r.verdict == "fails" and "c2 = 4" in r.evidence and "rests on the algebra" in r.evidence
    assert r.data["pld_delta_lower"] <= 1e-5 < r.data["moments_tail_delta"]  # upper bound above, lower bound below
    # the proof's chain (an upper bound) reaching delta does not change the verdict: the algebra still fails
    monkeypatch.setattr(rdp, "moments_tail_delta", lambda orders, curve, eps: (0.0, float(orders[0])))
    assert _verdict("GPOPE-thm1-appendix-c2") == "fails"


def test_appendix_c2_is_not_private_only_if_the_lower_end_exceeds_delta(monkeypatch):
    from privcal.verify import common, claims_gpope

    monkeypatch.setattr(claims_gpope, "c2_from_display", lambda coefficient: 2)  # algebra as printed
    out = run_claim(get_claim("GPOPE-thm1-appendix-c2")).outcome
    assert out.verdict == "holds" and "no lower bound shows" in out.evidence  # moments tail 0.0033 > 1e-5 is no proof
    monkeypatch.setattr(common, "poisson_pair_delta_lower", lambda *a: 2e-5)  # a lower end above delta
    out = run_claim(get_claim("GPOPE-thm1-appendix-c2")).outcome
    assert out.verdict == "fails" and "is not (0.05, 1e-5)-DP" in out.evidence


def test_appendix_c2_display_algebra():
    from privcal.verify.claims_gpope import c2_from_display

    # min_lambda exp(a N lambda^2/(m^2 sigma^2) - lambda eps) = exp(-m^2 sigma^2 eps^2/(4 a N)) = delta gives
    # sigma = 2 sqrt(a) sqrt(N ln(1/delta))/(m eps): c2 = 2 for a = 1 (the display's second line), 4 for a = 4
    assert c2_from_display(1) == 2 and c2_from_display(4) == 4


def test_gpope_sensitivity_rests_on_either_lower_bound(quick, monkeypatch):
    import dataclasses

    from privcal.verify import common, claims_gpope

    out = _unpatched(quick, "GPOPE-sensitivity").outcome
    assert out.verdict == "fails" and out.data["pld_delta_lower"] > 1e-3
    real = claims_gpope.A.audit
    monkeypatch.setattr(claims_gpope.A, "audit", lambda *a, **k: dataclasses.replace(real(*a, **k), refuted=False))
    out = run_claim(get_claim("GPOPE-sensitivity")).outcome
    assert out.verdict == "fails" and "the PLD lower end above" in out.evidence  # the certified lower end alone
    monkeypatch.setattr(common, "poisson_pair_delta_lower", lambda *a: 0.0)
    assert _verdict("GPOPE-sensitivity") == "holds"  # no lower bound above the claimed delta


def test_epsilon_split_fails_from_the_attained_loss_of_the_counters(quick, monkeypatch):
    import privcal.analysis.counter as counter
    from privcal.verify.claims_vbkw import billboard_epsilon

    # T = 1024 = 2^10: round 1 lies in the 11 p-sums [1, 2^j], each Laplace(11/eps'): the loss per unit is eps'
    # (CSS11 binary mechanism); T = 1000: the 10 p-sums [1, 2^j], j <= 9, each Laplace(10/eps')
    assert billboard_epsilon(24, 1 / 12) == pytest.approx(2.0, rel=1e-12)
    assert billboard_epsilon(1, 1.0, steps=1000) == pytest.approx(1.0, rel=1e-12)
    r = _unpatched(quick, "VBKW-epsilon-split").outcome
    assert r.verdict == "fails" and "a true value" in r.evidence and "no lower bound on their JDP" in r.evidence
    real = counter.laplace_scale
    monkeypatch.setattr(counter, "laplace_scale", lambda t, eps: 3 * real(t, eps))  # attained loss 2/3 eps
    assert _verdict("VBKW-epsilon-split") == "holds"


@pytest.mark.parametrize("cid, module, name, patched", [
    # the exact log moment / RDP of the paper's realisable pair (a true value) below the paper's bound
    ("GPOPE-lemma1", "privcal.analysis.subsampling", "rdp_poisson_gaussian", lambda real: _times(0.0, real)),
    ("GPOPE-eqB2", "privcal.analysis.subsampling", "rdp_poisson_gaussian", lambda real: _times(0.0, real)),
    # the counting lower bound below delta
    ("GPOPE-thm1", "privcal.verify.claims_gpope", "_count_delta_lower", lambda real: _times(0.0, real)),
    # the exact Gaussian profile below the target
    ("WH-claim13-mahalanobis", "privcal.analysis.gaussian", "log_delta_exact", lambda real: (lambda *a: -1e3)),
    ("WH-thm5", "privcal.analysis.gaussian", "delta_exact", lambda real: _times(0.0, real)),
    ("WH-thm5-sigma-statement", "privcal.analysis.gaussian", "delta_exact", lambda real: _times(0.0, real)),
    ("WH-appE3-privacy", "privcal.analysis.gaussian", "delta_exact", lambda real: _times(0.0, real)),
])
def test_privacy_verdicts_hold_when_their_lower_bound_is_below_the_target(cid, module, name, patched, quick,
                                                                          monkeypatch):
    import importlib

    mod = importlib.import_module(module)
    assert _unpatched(quick, cid).outcome.verdict == "fails"
    monkeypatch.setattr(mod, name, patched(getattr(mod, name)))
    assert _verdict(cid) == "holds"
