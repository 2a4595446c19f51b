"""One output vocabulary for every command that prints results: ``--format text|json|csv|markdown``.

``--json`` is kept as an alias of ``--format json`` (a contradiction, e.g. ``--json --format csv``, is
refused). Conventions, the same for every command:

* **json**: one object; an infinite or undefined number (an epsilon that has no finite bound, a sigma
  that does not exist) is ``null``, since JSON has no infinity;
* **csv**: a header line, then rows; an infinite number is written ``inf`` (what Python, numpy and
  pandas read back as infinity), a missing value is an empty cell. A result with a curve (training)
  has one row per point of the curve; a single result has one row;
* **markdown**: a table of the result's fields (curves are summarised by their length; their points
  are in json and csv);
* **text** (the default): for people; numbers rounded for reading.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import math
import re
import textwrap
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Optional, Union

from privcal.records import clean

__all__ = ["FORMATS", "MAX_EPSILON", "check_epsilon", "add_format", "add_pld_options", "pld_options", "pld_block", "chosen", "clean", "count", "seed", "numbers", "counts",
           "seeds", "emit", "fit", "markdown", "markdown_cell", "WIDTH"]

FORMATS = ("text", "json", "csv", "markdown")

_NULL_NOTE = "json writes null for an infinite value, csv writes inf"


#: The largest count or seed a flag takes: every whole number up to it is exact in float notation (2^53 ~ 9e15
#: is where float64 stops counting by ones), and no privcal computation wants more (1e300 steps met a TypeError).
MAX_COUNT = 10**15


def _whole(text: str, low: int) -> int:
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (value.is_integer() and low <= value <= MAX_COUNT):
        raise argparse.ArgumentTypeError(f"must be a whole number in [{low}, 1e15] (1e4 notation accepted), "
                                         f"got {text!r}")
    return int(value)


def count(text: str) -> int:
    """argparse type of a count, the one rule of every count flag: a whole number in [1, :data:`MAX_COUNT`],
    in integer or float notation with an integral value ("1e4").

    Args:
        text: the flag's text.

    Raises:
        argparse.ArgumentTypeError: not a whole number in [1, 1e15] (argparse names the flag).
    """
    return _whole(text, 1)


#: the one cap on a target epsilon, for every subcommand (``privcal.calibrators.dpq.MAX_EPSILON``; ``table`` uses it
#: too): above it no guarantee means anything, and the searches would chase float64's range
MAX_EPSILON = 1e6


def check_epsilon(value: Optional[float], flag: str = "--epsilon") -> Optional[float]:
    """A target epsilon from the command line, in (0, :data:`MAX_EPSILON` = 1e6]: the same cap for every subcommand
    (``privcal table`` and ``train dpq`` apply it too); None passes (a flag left out).

    Args:
        value: the flag's value, or None.
        flag: the flag's name, for the message.

    Raises:
        ValueError: outside (0, 1e6], naming the flag.
    """
    if value is not None and not 0 < value <= MAX_EPSILON:
        raise ValueError(f"{flag} must be in (0, {MAX_EPSILON:g}], got {value:g} (one cap for every subcommand)")
    return value


def seed(text: str) -> int:
    """argparse type of a seed or an index: a whole number in [0, :data:`MAX_COUNT`] (float notation with an
    integral value accepted, as for :func:`count`).

    Args:
        text: the flag's text.

    Raises:
        argparse.ArgumentTypeError: not a whole number in [0, 1e15] (argparse names the flag).
    """
    return _whole(text, 0)


def _items(text: str) -> list[str]:
    parts = text.replace(" ", "").split(",")
    items = [x for x in parts if x]
    if not items:
        raise argparse.ArgumentTypeError(f"expected one or more comma-separated values, got {text!r}")
    if len(items) != len(parts):  # "1,,2" or "1,2,": an empty item is refused, never dropped
        raise argparse.ArgumentTypeError(f"expected comma-separated values without an empty item, got {text!r}")
    return items


def numbers(text: str) -> list[float]:
    """argparse type of a comma-separated list of numbers (at least one; each range is the command's).

    Args:
        text: the flag's text, e.g. ``"0.5,1,2"``.

    Raises:
        argparse.ArgumentTypeError: empty, or an item that is not a number.
    """
    out = []
    for x in _items(text):
        try:
            out.append(float(x))
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected comma-separated numbers, got {x!r} in {text!r}") from None
    return out


def counts(text: str) -> list[int]:
    """argparse type of a comma-separated list of counts (at least one; each as :func:`count`).

    Args:
        text: the flag's text, e.g. ``"1e3,1e4"``.

    Raises:
        argparse.ArgumentTypeError: empty, or an item that is not a whole number in [1, 1e15].
    """
    return [count(x) for x in _items(text)]


#: the most seeds one --seeds takes
MAX_SEEDS = 10000


def seeds(text: str) -> list[int]:
    """argparse type of ``--seeds`` (``train`` and ``frontier``): seeds and ranges, ``0-19``, ``0,1,5``, ``0-4,9``.

    A range ``a-b`` is every whole number from a to b, both included (a <= b); each seed is a whole number in
    [0, 1e15] (as ``--seed``); a seed named twice is refused (its run would count twice in the mean).

    Args:
        text: the flag's text.

    Raises:
        argparse.ArgumentTypeError: an empty item, a reversed range, a repeated seed, or more than
            :data:`MAX_SEEDS` seeds.
    """
    out = []
    for item in _items(text):  # one parser of comma lists for every command
        low, sep, high = item.partition("-")
        if sep:
            a, b = seed(low), seed(high)
            if a > b:
                raise argparse.ArgumentTypeError(f"a range of seeds goes up (a-b with a <= b), got {item!r}")
            if b - a + 1 + len(out) > MAX_SEEDS:
                raise argparse.ArgumentTypeError(f"at most {MAX_SEEDS} seeds, got more in {text!r}")
            out.extend(range(a, b + 1))
        else:
            out.append(seed(item))
    if len(out) > MAX_SEEDS:
        raise argparse.ArgumentTypeError(f"at most {MAX_SEEDS} seeds, got {len(out)}")
    if len(set(out)) != len(out):
        twice = sorted({s for s in out if out.count(s) > 1})
        raise argparse.ArgumentTypeError(f"each seed at most once, got {', '.join(map(str, twice[:5]))} twice in "
                                         f"{text!r}")
    return out


def add_pld_options(parser: argparse.ArgumentParser) -> None:
    """Add ``--pld-accuracy`` and ``--memory-limit`` (the PLD accountant's accuracy and memory cap).

    Args:
        parser: the subcommand's parser.
    """
    parser.add_argument("--pld-accuracy", type=float, default=None, metavar="REL",
                        help="requested relative width of the PLD's epsilon bracket, in (0, 1) (default: 1e-3)")
    parser.add_argument("--memory-limit", type=float, default=None, metavar="MiB",
                        help="cap of the memory of one PLD evaluation, in MiB, >= 1 (default: 256); above it the "
                        "PLD coarsens its grid or refuses, and 'best' answers with another valid accountant")


def pld_options(args: argparse.Namespace) -> dict:
    """Keyword arguments ``pld_accuracy`` / ``memory_limit`` (bytes) of the front door from the flags
    of :func:`add_pld_options` that were given, validated (a ValueError naming the flag otherwise).

    Args:
        args: the parsed command line.
    """
    out = {}
    given = [f for f, d in (("--pld-accuracy", "pld_accuracy"), ("--memory-limit", "memory_limit"))
             if getattr(args, d, None) is not None]
    if given and getattr(args, "accountant", "best") not in ("best", "pld"):
        raise ValueError(f"{' and '.join(given)} appl{'ies' if len(given) == 1 else 'y'} only to --accountant pld "
                         f"and best (the PLD's grid), not --accountant {args.accountant}")
    accuracy = getattr(args, "pld_accuracy", None)
    if accuracy is not None:
        if not 0 < accuracy < 1:
            raise ValueError(f"--pld-accuracy must be in (0, 1), got {accuracy!r}")
        out["pld_accuracy"] = accuracy
    limit = getattr(args, "memory_limit", None)
    if limit is not None:
        if not 1 <= limit < math.inf:  # below 1 MiB no PLD grid fits: refused, never a silent fallback
            raise ValueError(f"--memory-limit must be a number of MiB in [1, inf), got {limit!r}")
        out["memory_limit"] = limit * 2**20
    return out


def pld_block(args: argparse.Namespace):
    """A ``privcal.pld.pld_settings`` block set by the ``--pld-accuracy`` / ``--memory-limit`` flags that
    were given (validated as :func:`pld_options`), for commands that build many accountants (``table``,
    ``plot``); a no-op block when neither was given.

    Args:
        args: the parsed command line.
    """
    from privcal.pld import pld_settings

    opts = pld_options(args)
    return pld_settings(accuracy=opts.get("pld_accuracy"), memory_limit=opts.get("memory_limit"))


def add_format(parser: argparse.ArgumentParser, formats: Sequence[str] = FORMATS) -> None:
    """Add ``--format`` (default text) and its alias ``--json`` to a subcommand's parser.

    Args:
        parser: the subcommand's parser.
        formats: the formats it offers; default all of :data:`FORMATS`.
    """
    parser.add_argument("--format", choices=tuple(formats), default=None,
                        help=f"output format: {', '.join(formats)} (default: text; {_NULL_NOTE})")
    parser.add_argument("--json", action="store_true", help="same as --format json")


def chosen(args: argparse.Namespace) -> str:
    """The format asked for by ``--format`` / ``--json`` ("text" when neither is given).

    Args:
        args: parsed arguments of a parser given :func:`add_format`.

    Raises:
        ValueError: ``--json`` next to a ``--format`` other than json.
    """
    fmt = getattr(args, "format", None)
    if getattr(args, "json", False):
        if fmt not in (None, "json"):
            raise ValueError(f"--json contradicts --format {fmt}")
        return "json"
    return fmt or "text"


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, float):
        return "inf" if value == math.inf else "-inf" if value == -math.inf else repr(value)
    if hasattr(value, "item") and not isinstance(value, (str, bytes)):
        return _cell(value.item())
    if isinstance(value, (list, tuple)):
        return "; ".join(_cell(v) for v in value)
    return str(value)


def _scalars(record: Mapping[str, Any]) -> dict:
    out = {}
    for k, v in record.items():
        if hasattr(v, "tolist") and not isinstance(v, (str, bytes)):
            v = v.tolist()
        if isinstance(v, Mapping):
            for kk, vv in v.items():
                out[f"{k}.{kk}"] = vv
        else:
            out[k] = v
    return out


def _csv(record: Mapping[str, Any], series: Optional[Mapping[str, Sequence]]) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    if series:
        cols = list(series)
        w.writerow(cols)
        for row in zip(*(series[c] for c in cols)):
            w.writerow([_cell(x) for x in row])
    else:
        flat = _scalars(record)
        w.writerow(list(flat))
        w.writerow([_cell(v) for v in flat.values()])
    return buf.getvalue().rstrip("\n")


def markdown_cell(value: Any) -> str:
    """One value as a markdown table cell: long lists summarised, ``|`` escaped, an empty value as a dash.

    Args:
        value: a record's value (number, string, list, None...).

    Returns:
        the cell's text.
    """
    if isinstance(value, (list, tuple)) and len(value) > 6:
        return f"{len(value)} values (see --format json or csv)"
    text = _cell(value)
    return text.replace("|", "\\|") if text else "—"


def markdown(record: Mapping[str, Any]) -> str:
    """A record's scalar fields as a two-column markdown table (field, value).

    Args:
        record: the command's output record.

    Returns:
        the table, lines joined by newlines.
    """
    lines = ["| field | value |", "|---|---|"]
    lines += [f"| {k} | {markdown_cell(v)} |" for k, v in _scalars(record).items()]
    return "\n".join(lines)


#: Columns of every command's text output (text fits a terminal of 100 columns).
WIDTH = 100

# "  privacy               (0.9, 1e-4)-DP ...": a label, two or more spaces, the value (continuations align
# under the value); "note: ..." and other "word: " openings continue two columns in
_LABEL = re.compile(r"^(\s*\S.*?\s{2,})\S")
_OPENING = re.compile(r"^(\s*)[\w\[\]-]+(?: [\w-]+)?: \S")


def fit(text: str, width: int = WIDTH) -> str:
    """``text`` with every line longer than ``width`` columns wrapped at spaces, continuations indented
    under the value of a ``label   value`` line (or two columns in); table rows and lines that fit are left
    alone. A word longer than the width (a path) stays whole.

    Args:
        text: the text report.
        width: the columns; default :data:`WIDTH`.
    """
    out = []
    for line in text.split("\n"):
        if len(line) <= width:
            out.append(line)
            continue
        label = _LABEL.match(line)
        if label and len(label.group(1)) <= width // 2:
            indent = " " * len(label.group(1))
        else:
            lead = _OPENING.match(line)
            indent = (lead.group(1) if lead else re.match(r"\s*", line).group(0)) + "  "
        out.append(textwrap.fill(line, width=width, subsequent_indent=indent, break_long_words=False,
                                 break_on_hyphens=False, drop_whitespace=True))
    return "\n".join(out)


def emit(fmt: str, record: Mapping[str, Any], text: Union[str, Callable[[], str]],
         series: Optional[Mapping[str, Sequence]] = None) -> None:
    """Print one result in format ``fmt``.

    Args:
        fmt: one of :data:`FORMATS`.
        record: the result's fields (json carries them all; markdown and csv, without ``series``, their
            scalars; a nested mapping becomes ``key.subkey`` columns).
        text: the text report, or a function producing it.
        series: columns of equal length (a curve); csv prints these rows instead of the record; json
            adds them to the record. Default None.
    """
    clash = set(record) & set(series or {})
    if clash:
        raise AssertionError(f"series columns {sorted(clash)} would overwrite fields of the record")
    if fmt == "json":
        print(json.dumps(clean({**record, **(series or {})})))
    elif fmt == "csv":
        print(_csv(record, series))
    elif fmt == "markdown":
        print(markdown(record))
    else:
        print(fit(text() if callable(text) else text))
