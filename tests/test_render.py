"""Rendering of the comparison tables (privcal.calibrators.render, behind `privcal table`)."""

import csv
import io
import json
import math

import pytest

from privcal.calibrators import render
from privcal.calibrators.table import dpq_table, gaussian_table, gpope_table

# `privcal table` defaults: dpq at App. E.3 (Wang & Hegde 2019), gaussian with 100 steps, gpope m = 1000, N = 1e4
_SETTINGS = {
    "dpq": lambda: dpq_table(),
    "gaussian": lambda: gaussian_table(steps=100),
    "gpope": lambda: gpope_table(),
}
_LONG = [0.01, 0.02, 0.05, 0.1, 0.2, 0.3, 0.45, 0.5, 0.75, 0.9, 1.0, 1.5, 2.0, 3.0, 4.0, 5.0, 8.0, 10.0, 20.0, 50.0]


@pytest.fixture(scope="module", params=sorted(_SETTINGS))
def default(request):
    return _SETTINGS[request.param]()


def _widest(text):
    return max(len(line) for line in text.splitlines())


def test_default_text_fits_100_columns(default):
    assert _widest(render.format_table(default, "text")) <= render.WIDTH == 100


@pytest.mark.parametrize("build", [
    lambda: gaussian_table(_LONG, 1e-7, steps=1000, sensitivity=3.5),
    lambda: dpq_table(_LONG[2:18:2]),
    lambda: gpope_table(_LONG[::3], trajectories=100, iterations=1000),
])
def test_long_epsilon_lists_fit_100_columns(build):
    tab = build()
    text = render.format_table(tab, "text")
    assert _widest(text) <= 100
    assert sum(line.lstrip().startswith(f"{e:g} ") for e in (r.epsilon for r in tab.rows) for line in text.splitlines()) >= len(tab.rows)


def test_lead_rows_name_the_bound_and_give_a_computed_verdict(default):
    lines = render.format_table(default, "text").splitlines()
    for lead, row in zip(default.lead(), default.rows):
        line = next(x for x in lines if x.split() and x.split()[0] == f"{lead.epsilon:g}")
        assert lead.source_name in line and f"{lead.sigma:.4g}" in line
        headers = {c.key: c.header for c in default.columns}
        assert lead.source_name.startswith(headers[lead.source])
        assert lead.verdict and lead.verdict in line
        if lead.paper_private is False and default.reference_exact:  # the exact epsilon at the paper's sigma
            assert lead.verdict == f"not private: actual eps {lead.paper_epsilon:.3g}"
        elif lead.paper_private is False:  # proven only by a certified lower bound (a realisable pair)
            lower = row.lower_epsilons[lead.paper_source]
            assert lower > lead.epsilon and lead.verdict == f"not private: eps >= {lower:.3g}"


def test_default_text_hides_the_full_comparison_and_wide_shows_it(default):
    narrow = render.format_table(default, "text")
    wide = render.format_table(default, "text", wide=True)
    assert wide.startswith(narrow.rsplit("\n", 1)[0])  # the same lead rows and legend, then every bound
    for column in default.columns:
        assert f"{column.header}:" in wide
    assert "--wide" in narrow and len(narrow.splitlines()) <= 25


def test_json_keeps_every_column_and_the_lead(default):
    d = json.loads(render.format_table(default, "json"))
    keys = [c.key for c in default.columns]
    assert [c["key"] for c in d["columns"]] == keys
    for row, lead in zip(d["rows"], d["lead"]):
        assert list(row["sigma"]) == keys and list(row["ratio_to_exact"]) == keys
        assert lead["source"] in d["valid_keys"] and lead["paper_source"] == d["paper_key"]


def test_csv_keeps_every_column(default):
    rows = list(csv.DictReader(io.StringIO(render.format_table(default, "csv"))))
    assert len(rows) == len(default.rows)
    for got, row, lead in zip(rows, default.rows, default.lead()):
        for key, sigma in row.sigmas.items():
            assert float(got[f"sigma_{key}"]) == sigma or (math.isinf(sigma) and got[f"sigma_{key}"] == "inf")
        assert got["sigma_to_use_from"] == lead.source and got["paper_verdict"] == lead.verdict


def test_markdown_keeps_every_column(default):
    text = render.format_table(default, "markdown")
    header = next(line for line in text.splitlines() if line.startswith("| epsilon | ") and "sigma to use" not in line)
    assert header == "| " + " | ".join(["epsilon", *[c.header for c in default.columns]]) + " |"


def test_gpope_verdicts_come_from_certified_lower_bounds():
    """GPOPE's reference is an upper bound (PLD / RDP); 'not private' and '!' may only come from
    the certified lower end of a realisable pair, and an upper bound above target alone gives 'not certified'."""
    import dataclasses

    tab = gpope_table([0.1, 0.5, 2.0], trajectories=100, iterations=1000)
    verdicts = set()
    for lead, row in zip(tab.lead(), tab.rows):
        paper = lead.paper_source
        upper = row.reference_epsilons[paper]
        if upper <= lead.epsilon:  # a valid upper bound certifies the target: no lower bound is needed
            verdicts.add("private")
            assert lead.paper_private is True and lead.verdict.startswith("private: eps <=")
            continue
        lower = row.lower_epsilons[paper]
        assert lower <= upper * (1 + 1e-9)  # the realisable pair's lower end never exceeds the valid upper bound
        if lower > lead.epsilon:
            verdicts.add("proven")
            assert lead.paper_private is False and lead.verdict.startswith("not private: eps >=")
        else:
            verdicts.add("open")
            assert lead.paper_private is None and lead.verdict.startswith("not certified: eps in")
        for key in row.insufficient:  # every '!' rests on a lower bound above the target
            assert row.lower_epsilons[key] > lead.epsilon
    assert "proven" in verdicts  # the paper's Theorem 1 is proven short somewhere here (checked, not assumed)
    # an upper bound above the target with a lower end below it is 'not certified', never 'not private'
    row = tab.rows[-1]
    paper = tab.lead()[-1].paper_source
    straddle = dataclasses.replace(row, lower_epsilons={**row.lower_epsilons, paper: row.epsilon * 0.5},
                                   reference_epsilons={**row.reference_epsilons, paper: row.epsilon * 2.0},
                                   insufficient=())
    lead = dataclasses.replace(tab, rows=(straddle,)).lead()[0]
    assert lead.paper_private is None and lead.verdict.startswith("not certified: eps in")


def test_unknown_format_names_the_argument():
    with pytest.raises(ValueError, match=r"fmt must be one of \('text', 'markdown', 'csv', 'json'\), got 'html'"):
        render.format_table(gaussian_table([1.0]), "html")


@pytest.mark.parametrize("setting", [dict(), dict(trajectories=100, iterations=1000), dict(trajectories=10, iterations=50)])
def test_gpope_lead_only_prints_the_full_tables_text(setting):
    """`privcal table --setting gpope` without --wide builds the lead only (``lead_only=True``: the RDP columns are
    evaluated once at the PLD's sigma and calibrated only where they could be the least; the sensitivity-h and
    Lemma 1 columns and the other verdicts are skipped): its text is the full table's, character for character,
    at the README's setting and two others; the columns it skipped are nan and named in its notes. Red when a
    skip drops a column that can be the least (e.g. the RDP columns skipped unconditionally where the PLD has no
    answer), or when the lead reads a skipped column."""
    eps = [0.1, 0.5, 1.0, 2.0, 5.0] if not setting else [0.3, 1.0, 3.0]
    full = gpope_table(eps, **setting)
    lead = gpope_table(eps, **setting, lead_only=True)
    assert render.format_table(lead, "text") == render.format_table(full, "text")
    assert lead.lead() == full.lead()
    skipped = {k for r in lead.rows for k, v in r.sigmas.items() if math.isnan(v)}
    assert {"rdp_h", "lemma1"} <= skipped
    assert any(n.startswith("lead only:") for n in lead.notes)
    assert not any(math.isnan(v) for r in full.rows for v in r.sigmas.values())


def test_gpope_lead_only_calibrates_rdp_where_the_pld_has_no_answer(monkeypatch):
    """Where the PLD column has no sigma (here: its calibration refused, as over the memory cap), the lead-only
    table calibrates the RDP columns, and its lead is the full table's (RDP named, the same sigma). Red when the
    RDP columns are skipped unconditionally in lead-only mode."""
    from privcal.accounting.pld_accountant import PLDAccountant
    from privcal.privacy_loss import MemoryLimitError

    def refuse(self, *args, **kwargs):
        raise MemoryLimitError("test: the PLD grid exceeds memory_limit")

    monkeypatch.setattr(PLDAccountant, "sigma_for_unchecked", refuse)
    setting = dict(trajectories=100, iterations=1000)
    full = gpope_table([0.5, 2.0], **setting)
    lead = gpope_table([0.5, 2.0], **setting, lead_only=True)
    assert lead.lead() == full.lead()
    assert all(math.isinf(r.sigmas["pld"]) and math.isfinite(r.sigmas["rdp"]) for r in lead.rows)
    assert {l.source for l in lead.lead()} == {"rdp"}
    assert render.format_table(lead, "text") == render.format_table(full, "text")


def test_json_is_strict_where_a_column_is_infinite():
    # the README promises null for an infinite value; Python's json writes Infinity, which strict parsers reject
    import json

    from privcal.calibrators import render, table

    text = render.format_table(table.dpq_table((0.45,), 1e-4), "json")

    def refuse(constant):
        raise ValueError(f"non-JSON constant {constant}")

    data = json.loads(text, parse_constant=refuse)
    assert any(v is None for row in data["rows"] for d in row.get("details", {}).values() for v in d.values())
