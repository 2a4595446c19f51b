"""Rendering of verification results (text, markdown, JSON, CSV) and the docs/claims.md generator.

Regenerate the document with ``python -m privcal.verify.report --write docs/claims.md`` (or
``privcal verify --format markdown --write docs/claims.md``): it runs every claim at the quick
budget with seed 0. The markdown prints only what is the same on every machine and library version
(ids, verdicts, statements, checks, the bounds checked, pinned counterexamples, derived conditions,
corrected statements, closed-form values to a few significant digits): no timings and no
``Outcome.data`` (measured rounding errors, Monte Carlo estimates, audit bounds, hypothesis-found
examples), which only the JSON report carries.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Sequence
from typing import Any

from privcal import _validate as V
from privcal.verify.model import VERDICTS, ClaimResult
from privcal.verify.registry import run_claims

__all__ = ["FORMATS", "DOC_COMMAND", "render", "to_text", "to_markdown", "to_json", "to_csv", "as_dict", "exit_code",
           "main"]

FORMATS = ("text", "json", "csv", "markdown")
DOC_COMMAND = "python -m privcal.verify.report --write docs/claims.md"


def exit_code(results: Sequence[ClaimResult]) -> int:
    """0 when every check ran (failing claims are findings, not errors), 1 when some check could not run.

    Args:
        results: results of :func:`privcal.verify.run_claims`.

    Returns:
        the exit status.
    """
    return 1 if any(r.outcome.verdict == "not-run" for r in results) else 0


def _clean(value: Any) -> Any:
    """JSON-safe copy: non-finite floats become None, tuples become lists, numpy scalars plain numbers."""
    if isinstance(value, dict):
        return {str(k): _clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_clean(v) for v in value]
    if hasattr(value, "item") and not isinstance(value, (str, bytes)):
        try:
            value = value.item()
        except (TypeError, ValueError):
            return str(value)
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    return str(value)


def as_dict(result: ClaimResult, *, timing: bool = True) -> dict:
    """One claim result as the JSON object of ``privcal verify --format json``.

    Args:
        result: one claim result.
        timing: include the wall-clock ``seconds``; default True.

    Returns:
        a JSON-safe dict (the measured numbers under ``data``).
    """
    c, o = result.claim, result.outcome
    out = {
        "id": c.id,
        "paper": c.paper,
        "location": c.location,
        "statement": c.statement,
        "check": c.method,
        "function": c.function,
        "verdict": o.verdict,
        "evidence": o.evidence,
        "counterexample": o.counterexample,
        "condition": o.condition,
        "corrected": result.corrected,
        "corrected_function": c.corrected_function,
        "data": _clean(o.data),
    }
    if timing:
        out["seconds"] = round(result.seconds, 3)
    return out


def _counts(results: Sequence[ClaimResult]) -> str:
    counts = {v: sum(r.outcome.verdict == v for r in results) for v in VERDICTS}
    return ", ".join(f"{n} {v}" for v, n in counts.items() if n)


def to_json(results: Sequence[ClaimResult], *, budget: str, seed: int) -> str:
    """``{"budget", "seed", "summary", "claims": [...]}`` (see :func:`as_dict`).

    Args:
        results: results of :func:`privcal.verify.run_claims`.
        budget: the budget they ran at (printed).
        seed: the seed they ran with (printed).

    Returns:
        the JSON text (strict: no NaN or inf).
    """
    return json.dumps({
        "budget": budget,
        "seed": seed,
        "summary": _counts(results),
        "claims": [as_dict(r) for r in results],
    }, indent=2)


#: the columns of ``privcal verify --format csv`` (one row per claim; ``data`` is only in json)
CSV_COLUMNS = ("id", "paper", "location", "verdict", "statement", "check", "evidence", "counterexample", "condition",
               "corrected", "function", "corrected_function", "seconds")


def to_csv(results: Sequence[ClaimResult], *, budget: str, seed: int) -> str:
    """One row per claim with the columns :data:`CSV_COLUMNS` (the measured ``data`` is only in json).

    Args:
        results: results of :func:`privcal.verify.run_claims`.
        budget: the budget they ran at (not printed: csv has no place for it; use json).
        seed: the seed they ran with (idem).

    Returns:
        the CSV text, header first, without a trailing newline.
    """
    import csv
    import io

    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(CSV_COLUMNS)
    for r in results:
        d = as_dict(r)
        w.writerow(["" if d[k] is None else d[k] for k in CSV_COLUMNS])
    return buf.getvalue().rstrip("\n")


def to_text(results: Sequence[ClaimResult], *, budget: str, seed: int) -> str:
    """Plain-text report, one block per claim, with timings.

    Args:
        results: results of :func:`privcal.verify.run_claims`.
        budget: the budget they ran at (printed).
        seed: the seed they ran with (printed).

    Returns:
        the report.
    """
    lines = [f"privcal verify: {len(results)} claims, budget {budget}, seed {seed}: {_counts(results)}", ""]
    for r in results:
        c, o = r.claim, r.outcome
        lines.append(f"[{o.verdict.upper()}] {c.id}  ({c.paper}, {c.location}; {r.seconds:.2f} s)")
        lines.append(f"  statement: {c.statement}")
        lines.append(f"  check: {c.method}")
        lines.append(f"  evidence: {o.evidence}")
        if o.counterexample:
            lines.append(f"  counterexample: {o.counterexample}")
        if o.condition:
            lines.append(f"  holds under: {o.condition}")
        if r.corrected:
            lines.append(f"  corrected: {r.corrected}")
        corrected = f"; corrected: {c.corrected_function}" if c.corrected_function else ""
        lines.append(f"  function: {c.function}{corrected}")
        lines.append("")
    total = sum(r.seconds for r in results)
    lines.append(f"total {total:.1f} s")
    return "\n".join(lines)


def _md(text: str) -> str:
    return text.replace("|", "\\|")


def to_markdown(results: Sequence[ClaimResult], *, budget: str, seed: int) -> str:
    """Markdown report (reproducible: no timings, no measured data): summary table, one section per claim.

    Args:
        results: results of :func:`privcal.verify.run_claims`.
        budget: the budget they ran at (printed).
        seed: the seed they ran with (printed).

    Returns:
        the markdown of docs/claims.md.
    """
    out = [
        "# Privacy claims of the papers, machine-checked",
        "",
        f"Generated by `{DOC_COMMAND}` (= `privcal verify --budget {budget} --seed {seed} --format markdown`); "
        "do not edit by hand. Each claim is checked by the function named; `privcal verify --budget full` runs "
        "larger searches and Monte Carlo samples.",
        "",
        "Verdicts: **holds** (no counterexample on the stated domain), **fails** (counterexample found; when a "
        "condition under which the statement holds was derived and checked, it is given under *Holds under* and "
        "the corrected statement is that condition), **holds-under-condition** (a statement conditional as "
        "printed), **not-run** (the check could not run).",
        "",
        "This document holds only what is the same on every machine and library version: the bounds each check "
        "verified, pinned counterexamples and closed-form values. Measured numbers (Monte Carlo estimates, audit "
        "bounds, rounding errors, examples found by random search) are in `privcal verify --format json` "
        "(field `data`).",
        "",
        f"Summary: {_counts(results)}.",
        "",
        "| id | paper | location | verdict |",
        "|---|---|---|---|",
    ]
    for r in results:
        out.append(f"| [{r.claim.id}](#{r.claim.id.lower().replace('.', '')}) | {_md(r.claim.paper)} | "
                   f"{_md(r.claim.location)} | **{r.outcome.verdict}** |")
    for r in results:
        c, o = r.claim, r.outcome
        out += ["", f"## {c.id}", "", f"*{c.paper}, {c.location}* — **{o.verdict}**", "",
                f"- **Statement (as printed):** {c.statement}",
                f"- **Check:** {c.method}",
                f"- **Evidence:** {o.evidence}"]
        if o.counterexample:
            out.append(f"- **Counterexample:** {o.counterexample}")
        if o.condition:
            out.append(f"- **Holds under:** {o.condition}")
        if r.corrected:
            out.append(f"- **Corrected:** {r.corrected}")
        out.append(f"- **Function:** `{c.function}`" + (f"; corrected: `{c.corrected_function}`"
                                                         if c.corrected_function else ""))
    return "\n".join(out) + "\n"


def render(results: Sequence[ClaimResult], fmt: str, *, budget: str, seed: int) -> str:
    """The report in ``fmt``.

    Args:
        results: results of :func:`privcal.verify.run_claims`.
        fmt: one of ``FORMATS`` ("text", "json", "csv", "markdown").
        budget: the budget they ran at (printed).
        seed: the seed they ran with (printed).

    Returns:
        the report.

    Raises:
        ValueError: ``fmt`` is not one of ``FORMATS``.
    """
    fmt = V.choice("format", fmt, FORMATS)
    return {"text": to_text, "markdown": to_markdown, "json": to_json, "csv": to_csv}[fmt](results, budget=budget, seed=seed)


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m privcal.verify.report [--write PATH]``: the markdown report at the quick budget, seed 0.

    Args:
        argv: command-line arguments (default: ``sys.argv[1:]``).

    Returns:
        the exit status (see :func:`exit_code`).
    """
    parser = argparse.ArgumentParser(prog="python -m privcal.verify.report", description=__doc__.splitlines()[0])
    parser.add_argument("--write", metavar="PATH", help="write the markdown to PATH instead of stdout")
    args = parser.parse_args(argv)
    results = run_claims(budget="quick", seed=0)
    text = to_markdown(results, budget="quick", seed=0)
    if args.write:
        with open(args.write, "w", encoding="utf-8") as fh:
            fh.write(text)
    else:
        sys.stdout.write(text)
    return exit_code(results)


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
