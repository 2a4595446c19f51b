"""Rendering of a comparison :class:`~privcal.calibrators.table.Table` (``privcal table``).

The default text output fits 100 columns and leads with what a user acts on: for each target epsilon,
the sigma to use (the tightest valid bound, named) and the paper's sigma with a computed verdict, then a
legend of a few lines. ``wide=True`` adds the full comparison (every bound, its ratio and its flags);
the machine formats (json, csv, markdown) always carry every column.
"""

from __future__ import annotations

import csv
import io
import json
import math
import textwrap

from .. import _validate as V
from ..records import clean
from .table_model import Lead, Table

__all__ = ["FORMATS", "WIDTH", "format_table"]

FORMATS = ("text", "markdown", "csv", "json")
WIDTH = 100  #: the default text output fits this many columns

_LEAD_HEADER = ("epsilon", "sigma to use", "from (valid bound)", "paper sigma", "verdict on the paper sigma")


def format_table(table: Table, fmt: str, *, wide: bool = False) -> str:
    """Render a comparison table as text, markdown, csv or json.

    Args:
        table: the table (from :func:`~privcal.calibrators.table.dpq_table`, ``gaussian_table`` or
            ``gpope_table``).
        fmt: "text", "markdown", "csv" or "json". Every format but the default text carries every
            column; json adds the lead rows under "lead" and non-finite numbers as null, csv writes
            them as inf.
        wide: text only: add the full comparison of every bound under the lead rows; default False
            (the output then fits :data:`WIDTH` = 100 columns).

    Returns:
        the rendered table, without a trailing newline.

    Raises:
        ValueError: ``fmt`` is not one of :data:`FORMATS`.
    """
    V.choice("fmt", fmt, FORMATS)
    if fmt == "json":
        return json.dumps(clean(table.as_dict()), indent=2, allow_nan=False)  # strict JSON: inf / nan -> null
    if fmt == "csv":
        return _csv(table)
    if fmt == "markdown":
        return _markdown(table)
    out = [*_wrap(_title(table)), "", *_aligned(_lead_header(table), _lead_cells(table)), ""]
    out += [_wrap_item(x) for x in (_legend(table)[:-1] if wide else _legend(table))]
    if wide:
        out += ["", *_wrap(f"Every bound, setting {table.setting} ({_params(table)})", WIDTH), ""]
        out += _aligned(_full_header(table), _full_cells(table))
        out += ["", *[_wrap_item(x) for x in _full_legend(table)]]
    return "\n".join(out)


# ---------------------------------------------------------------------------------------------------
# what the default shows


def _lead_header(table: Table) -> tuple[str, ...]:
    """The lead rows' header, naming the column the verdict is on (the paper's, or Poisson accounting's)."""
    label = table.paper_label
    return (*_LEAD_HEADER[:3], f"{label} sigma", f"verdict on the {label} sigma")


def _fmt(x: float) -> str:
    return "infeasible" if math.isinf(x) else f"{x:.4g}"


def _lead_cells(table: Table) -> list[list[str]]:
    rows = []
    for lead in table.lead():
        rows.append([f"{lead.epsilon:g}", _fmt(lead.sigma) if lead.source else "none", lead.source_name,
                     _fmt(lead.paper_sigma) if lead.paper_source else "-", lead.verdict or "-"])
    return rows


def _title(table: Table) -> str:
    p, delta = table.parameters, table.rows[0].delta
    if table.setting == "dpq":
        return (f"DP Q-learning, Wang & Hegde 2019: T={p['samples']}, B={p['batch_size']}, lr={p['lr']:g}, "
                f"L={p['lipschitz']:g} ({p['updates']} noisy updates), delta={delta:g}")
    if table.setting == "gpope":
        return (f"GPOPE Algorithm 1: {p['iterations']} iterations, each on one of {p['trajectories']} "
                f"trajectories, delta={delta:g}")
    if "sampling" in p:
        kind = {"shuffle": "shuffled", "balls_in_bins": "balls-in-bins", "full_batch": "full-batch"}[p["sampling"]]
        return (f"{p['epochs']} epoch{'s' if p['epochs'] > 1 else ''} of {kind}{' (persistent)' if p['persistent'] else ''}"
                f" batches: {p['dataset_size']} records in batches of {p['batch_size']} ({p['steps']} steps), "
                f"sensitivity {p['sensitivity']:g} under {p['neighbouring']} neighbours, delta={delta:g}")
    return f"{p['steps']} Gaussian releases of L2 sensitivity {p['sensitivity']:g}, delta={delta:g}"


def _legend(table: Table) -> list[str]:
    headers = {c.key: c for c in table.columns}
    unit = {
        "dpq": "sigma: scale of the Gaussian-process noise added to each Q-update (absolute, not a multiplier); "
               "clip: how far one update may move Q (units of Q), certified by the agent; the valid analysis "
               "rests on it (k, the paper's bound on the noise, is no longer needed).",
        "gaussian": "sigma: standard deviation of the noise added to each release (absolute, not a multiplier).",
        "gpope": "sigma: noise multiplier of Algorithm 1 (the noise is h N(0, sigma^2 I), h the clip).",
    }
    lines = [
        unit.get(table.setting, "sigma: noise standard deviation."),
        "sigma to use: the least noise that a valid analysis proves (epsilon, delta)-DP here, and which "
        "analysis proves it.",
    ]
    if table.paper_key in headers:
        source = headers[table.paper_key].source
        lines.append(f"{table.paper_label} sigma: {source[len('paper: '):] if source.startswith('paper: ') else source}.")
    verdicts = [lead.verdict for lead in table.lead()]
    if table.reference_exact and any(v.startswith("not private") for v in verdicts):
        lines.append("'not private: actual eps X': the exact privacy loss at that sigma is X, above the target "
                     "(computed, a true value, not a bound).")
    if not table.reference_exact and any(v.startswith("not private: eps >=") for v in verdicts):
        lines.append("'not private: eps >= X': a realisable worst-case pair of neighbouring data sets loses at "
                     "least X at that sigma (a certified lower bound, privcal.pld), above the target.")
    if any(v.startswith("not certified: eps in") for v in verdicts):
        lines.append("'not certified: eps in [L, U]': certified lower bound L (a realisable pair) and valid upper "
                     "bound U; the target lies between, so neither privacy nor its failure is proven.")
    if any(v.startswith("not certified: eps <=") for v in verdicts):
        lines.append("'not certified: eps <= X': the best valid bound at that sigma is X, above the target; "
                     "it is a bound, so the true loss may be lower, but nothing proves the target.")
    if not table.reference_valid:
        lines.append("The paper sigma is checked at the paper's own sensitivity; the valid one is larger, so "
                     "its real loss is higher still.")
    lines.append("Every bound side by side: --wide (wide=True); json, csv and markdown always include them.")
    return lines


def _wrap(text: str, width: int = WIDTH, indent: str = "") -> list[str]:
    return textwrap.wrap(text, width, initial_indent=indent, subsequent_indent=indent,
                         break_long_words=False, break_on_hyphens=False) or [""]


def _wrap_item(text: str) -> str:
    return "\n".join(textwrap.wrap(text, WIDTH, initial_indent="  ", subsequent_indent="    ",
                                   break_long_words=False, break_on_hyphens=False))


def _aligned(header, cells: list[list[str]]) -> list[str]:
    widths = [max(len(h), *(len(c[i]) for c in cells)) for i, h in enumerate(header)]

    def line(row):
        # numbers right-aligned, words (names, verdicts) left-aligned
        return "  ".join(c.ljust(w) if i in (2, 4) and len(header) == 5 else c.rjust(w)
                         for i, (c, w) in enumerate(zip(row, widths))).rstrip()

    return [line(header), line(["-" * w for w in widths]), *[line(c) for c in cells]]


# ---------------------------------------------------------------------------------------------------
# the full comparison (wide text, markdown)


def _params(table: Table) -> str:
    return ", ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}" for k, v in table.parameters.items())


def _full_header(table: Table) -> list[str]:
    return ["epsilon", *[c.header for c in table.columns]]


def _full_cells(table: Table) -> list[list[str]]:
    lines = []
    for r in table.rows:
        cells = [f"{r.epsilon:g}"]
        for c in table.columns:
            k = c.key
            plain = k == table.reference or math.isinf(r.sigmas[k])
            cell = _fmt(r.sigmas[k]) if plain else f"{_fmt(r.sigmas[k])} ({r.ratios[k]:.2f}x)"
            if r.details.get(k, {}).get("update_clip") is not None:
                cell += f" [clip {r.details[k]['update_clip']:g}]"
            elif "k" in r.details.get(k, {}):
                cell += f" [k={r.details[k]['k']:.4g}]"
            if k in r.insufficient:
                cell += " !"
            if k in r.below_valid_sensitivity:
                cell += " *"
            cells.append(cell)
        lines.append(cells)
    return lines


def _full_legend(table: Table) -> list[str]:
    ref = next(c for c in table.columns if c.key == table.reference)
    if any(r.lower_epsilons for r in table.rows):
        why = ("a certified lower bound on its epsilon (a realisable worst-case pair, privcal.pld) exceeds the "
               "target; an upper bound above the target alone never flags")
    else:
        bound = "" if table.reference_exact else " (an upper bound)"
        why = f"{ref.header}{bound} gives a larger epsilon at it"
    return [
        f"ratio = sigma / {ref.header} sigma at the setting the column solves; '!' = this sigma is NOT "
        f"(epsilon, delta)-DP: {why}",
        *[f"{c.header}: {c.source}" for c in table.columns],
        *table.notes,
    ]


def _markdown(table: Table) -> str:
    header = _lead_header(table)
    out = [f"**{_title(table)}**", "", "| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(cells) + " |" for cells in _lead_cells(table)]
    out += ["", *[f"- {x}" for x in _legend(table)[:-1]], ""]
    header = _full_header(table)
    out += [f"**Every bound, setting {table.setting} ({_params(table)})**", ""]
    out += ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(cells) + " |" for cells in _full_cells(table)]
    return "\n".join(out + [""] + [f"- {x}" for x in _full_legend(table)])


def _csv(table: Table) -> str:
    keys = [c.key for c in table.columns]
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["epsilon", "delta", *[f"sigma_{k}" for k in keys], *[f"ratio_{k}" for k in keys[1:]], "insufficient",
                "sigma_to_use", "sigma_to_use_from", "paper_sigma", "paper_epsilon", "paper_verdict"])
    for r, lead in zip(table.rows, table.lead()):
        w.writerow([r.epsilon, r.delta, *[repr(r.sigmas[k]) for k in keys], *[repr(r.ratios[k]) for k in keys[1:]],
                    ";".join(r.insufficient), *_lead_csv(lead)])
    return buf.getvalue().rstrip("\n")


def _lead_csv(lead: Lead) -> list[str]:
    return [repr(lead.sigma), lead.source, repr(lead.paper_sigma), repr(lead.paper_epsilon), lead.verdict]
