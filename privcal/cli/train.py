"""What every ``privcal train AGENT`` shares: output formats, ``--plot FILE`` and the reference runs.

Each agent reports its curve (returns per episode, cumulative regret, or MSPBE against iterations) beside
two references: the **non-private baseline** (the same learner, same seed, no noise) and the **trivial**
policy or predictor (the uniformly random policy; the zero predictor theta = 0). They are computed unless
``--no-references`` is given, printed in every format (json under ``references``), and drawn as
reference lines by ``--plot FILE``.
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping, Sequence
from typing import Any, Optional

from privcal.cli import out as _cli_out

__all__ = ["add_output_flags", "check_output_flags", "emit", "csv_constant_columns", "PlotSpec", "REFERENCES_NOTE"]

#: What the references are, said in every format: they are computed without privacy (the non-private run
#: reads the same data, or the same simulated users), so printing them is not covered by the run's guarantee.
REFERENCES_NOTE = ("references are computed without privacy (the non-private baseline from the same data or "
                   "simulated users): for comparison only, not covered by the privacy guarantee")


def add_output_flags(p: argparse.ArgumentParser) -> None:
    """``--format``/``--json``, ``--plot FILE`` and ``--no-references`` on a ``privcal train`` parser.

    Args:
        p: the agent's parser.
    """
    _cli_out.add_format(p)
    p.add_argument("--plot", metavar="FILE", default=None,
                   help="also draw the learning curve with its reference lines to FILE (.png or .svg; needs "
                        "matplotlib: pip install 'privcal[plot]'; default: no picture)")
    p.add_argument("--no-references", action="store_true",
                   help="skip the reference runs (non-private baseline, trivial policy or predictor); by "
                        "default they are computed and reported beside the run")


def check_output_flags(args: argparse.Namespace) -> str:
    """Check the output flags before any work; returns the format.

    Args:
        args: parsed arguments of an agent's parser.

    Raises:
        ValueError: a contradiction, or a plot file that cannot be written (wrong suffix, no directory).
    """
    fmt = _cli_out.chosen(args)
    if args.plot is not None:
        from privcal import plot

        plot._pyplot()  # a clear ImportError now, not after training
        plot.check_path(args.plot)
    return fmt


class PlotSpec:
    """What ``--plot`` draws: x values, the run's curve, labels and the reference lines.

    Args:
        x: x values (episodes or iterations).
        label: legend label of the run.
        y: the run's curve.
        title: chart title.
        xlabel: x-axis label with unit.
        ylabel: y-axis label with unit.
        references: label -> number or curve (None entries are skipped).
        log_y: logarithmic y axis; default False.
    """

    def __init__(self, x: Sequence, label: str, y: Sequence, *, title: str, xlabel: str, ylabel: str,
                 references: Optional[Mapping[str, Any]] = None, log_y: bool = False):
        self.x, self.label, self.y = x, label, y
        self.title, self.xlabel, self.ylabel = title, xlabel, ylabel
        self.references = dict(references or {})
        self.log_y = log_y


def csv_constant_columns(record: Mapping[str, Any], series: Mapping[str, Sequence]) -> dict:
    """Columns a trainer's csv repeats on every row: its privacy unit, batch sampler, verdict and reference values.

    csv prints the curve's rows only, so the references (``reference_<name>``, scalars of
    ``record["references"]``, the note excepted), ``privacy_unit``, ``sampling``, ``neighbouring`` and
    ``verdict`` go on every row.

    Args:
        record: the result's fields.
        series: the curve's columns (the number of rows; existing columns are kept as they are).

    Returns:
        the extra columns, each a list as long as the series.
    """
    rows = len(next(iter(series.values()))) if series else 0
    extra = {}
    for key, value in (record.get("references") or {}).items():
        if key != "note" and (value is None or isinstance(value, (int, float, str))):
            extra[f"reference_{key}"] = [value] * rows
    for key in ("privacy_unit", "sampling", "neighbouring", "verdict"):
        if key in record and key not in series:
            extra[key] = [record[key]] * rows
    return {k: v for k, v in extra.items() if k not in series}


def emit(args: argparse.Namespace, fmt: str, record: Mapping[str, Any], text: str,
         series: Optional[Mapping[str, Sequence]], spec: Optional[PlotSpec]) -> None:
    """Print the result in ``fmt`` and, with ``--plot``, draw ``spec`` (the path goes to stderr).

    Args:
        args: parsed arguments.
        fmt: the output format.
        record: the result's fields.
        text: the text report.
        series: the curve's columns (csv rows; json arrays).
        spec: what to draw for ``--plot``.
    """
    if record.get("references"):
        record = {**record, "references": {**record["references"], "note": REFERENCES_NOTE}}
        text = f"{text}\n  note                  {REFERENCES_NOTE}"
    if fmt == "csv" and series:  # csv prints the rows only: the constant columns replace those fields
        extra = csv_constant_columns(record, series)
        series = {**series, **extra}
        record = {k: v for k, v in record.items() if k not in extra}
    _cli_out.emit(fmt, record, text, series)
    if args.plot is not None and spec is not None:
        import sys

        from privcal import plot

        fig = plot.learning_curve(spec.x, {spec.label: spec.y}, spec.references, title=spec.title,
                                  xlabel=spec.xlabel, ylabel=spec.ylabel, log_y=spec.log_y)
        try:
            plot.save(fig, args.plot)
        except OSError as exc:
            raise ValueError(f"cannot write {args.plot!r}: {exc.strerror or exc}") from None
        print(f"privcal: wrote {args.plot}", file=sys.stderr)
