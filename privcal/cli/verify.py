"""``privcal verify``: run the claims registry from the command line.

Hooked into ``privcal.cli`` by ``verify_cli.add_parser(sub)``; ``run(args)`` prints the report and returns
the exit code: 0 when every check ran (failing claims are findings), 1 when a check could not run.
Unknown claim ids raise ``ValueError`` (the main CLI prints one line on stderr and exits 2); unknown
budgets and formats are argparse usage errors (also exit 2).
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from privcal.cli import out as _cli_out
from privcal.verify.registry import BUDGETS, all_claims, get_claim, run_claims
from privcal.verify.model import VERDICTS
from privcal.verify.report import FORMATS, exit_code, render

__all__ = ["add_parser", "run", "compact"]


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Create the ``verify`` subcommand on the top-level subparsers object.

    Args:
        subparsers: the object returned by ``ArgumentParser.add_subparsers()``.

    Returns:
        the ``verify`` parser.
    """
    p = subparsers.add_parser(
        "verify",
        help="machine-check the papers' privacy claims",
        description=(
            "Run the claims registry: every quantitative privacy statement of Wang & Hegde 2019, Vietri et al. "
            "2020 and the GPOPE paper, each with its check (sympy, hypothesis, Monte Carlo with confidence "
            "bounds, exact privacy profiles) and the verdict it computes. Exit status 0 when every check ran "
            "(failing claims are findings), 1 when a check could not run, 2 on bad input. Progress (one "
            "line, claims done and the last claim's id) is drawn on stderr unless the format is json."
        ),
    )
    p.add_argument("--budget", choices=BUDGETS, default="quick",
                   help="quick: all claims in under a minute; full: larger searches, under 15 minutes "
                        "(default: quick)")
    p.add_argument("--claim", action="append", default=[], metavar="ID",
                   help="run only this claim (repeatable; see --list; default: every claim)")
    _cli_out.add_format(p, FORMATS)
    p.add_argument("--seed", type=_cli_out.seed, default=0, help="seed of every random search and sample (default: 0)")
    p.add_argument("--write", metavar="PATH", help="write the report to PATH (default: standard output)")
    p.add_argument("--list", action="store_true", help="list the claim ids and exit")
    p.add_argument("--verbose", action="store_true",
                   help="text: each claim's statement, check, evidence, counterexample and functions (default: one "
                        "line per claim, and the counterexample of each failing claim)")
    p.set_defaults(_run=run)
    return p


class _Progress:
    """Claims done so far, on one stderr line (``verify [####....] 12/47 wh-thm5 ...``)."""

    def __init__(self, total: int):
        from privcal.cli.progress import ProgressBar

        self.bar = ProgressBar(total, label="verify", min_interval=0.0)
        self.done = 0
        self.bar(0)

    def __call__(self, result) -> None:
        self.done += 1
        self.bar.label = f"verify {result.claim.id}"
        self.bar(self.done)

    def close(self) -> None:
        self.bar.close()


def _clip(line: str, width: int = _cli_out.WIDTH) -> str:
    """``line`` cut to ``width`` columns (an ellipsis says where)."""
    return line if len(line) <= width else line[: width - 3].rstrip() + "..."


def compact(results: list, *, budget: str, seed: int) -> str:
    """The default text view: a summary, one line per claim (verdict, id, where it is printed), the
    counterexample of each failing claim, all within 100 columns (``--verbose``: every field).

    Args:
        results: results of :func:`privcal.verify.run_claims`.
        budget: the budget they ran at.
        seed: the seed they ran with.
    """
    counts = {v: sum(r.outcome.verdict == v for r in results) for v in VERDICTS}
    summary = ", ".join(f"{n} {v}" for v, n in counts.items() if n)
    lines = [_cli_out.fit(f"privcal verify: {len(results)} claims, budget {budget}, seed {seed}: {summary}"), ""]
    width = max((len(r.claim.id) for r in results), default=0)
    for r in results:
        c, o = r.claim, r.outcome
        lines.append(_clip(f"[{o.verdict.upper()}] {c.id:<{width}}  {c.paper}, {c.location}"))
        if o.counterexample:
            lines.append(_clip(f"    counterexample: {o.counterexample}"))
    lines += ["", f"total {sum(r.seconds for r in results):.1f} s; --verbose for each claim's statement, check "
              "and evidence"]
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    """Run the selected claims and print (or write) the report.

    Args:
        args: the parsed ``privcal verify`` arguments.

    Returns:
        the exit code: 0 when every check ran, 1 when one could not run.
    """
    if getattr(args, "list", False):
        return _list(args)
    _check_write(args)
    fmt = _cli_out.chosen(args)
    if args.verbose and fmt != "text":  # refused before the run, not after it
        raise ValueError(f"--verbose applies to the text format only ({fmt} always carries every field)")
    for claim_id in args.claim:  # unknown ids fail before the progress line starts
        get_claim(claim_id)
    bar = None if fmt == "json" else _Progress(len(args.claim) if args.claim else len(all_claims()))
    try:
        results = run_claims(args.claim or None, budget=args.budget, seed=args.seed, progress=bar)
    finally:
        if bar is not None:
            bar.close()
    _emit(args, results, fmt)
    return exit_code(results)


def _list(args: argparse.Namespace) -> int:
    """``--list``: one line per claim id, with its paper and place."""
    if (getattr(args, "write", None) or args.claim or args.seed != 0 or args.budget != "quick" or args.format
            or args.json):
        raise ValueError("--list takes no --write, --claim, --seed, --budget or --format (it only lists the "
                         "claim ids)")
    claims = all_claims()
    width = max(len(c.id) for c in claims)
    for c in claims:
        print(_clip(f"{c.id:<{width}}  {c.paper}, {c.location}"))
    return 0


def _check_write(args: argparse.Namespace) -> None:
    """Refuse a ``--write`` path that cannot be written, before the run rather than after it."""
    if getattr(args, "write", None):
        folder = os.path.dirname(os.path.abspath(args.write))
        if not os.path.isdir(folder):
            raise ValueError(f"cannot write {args.write}: directory {folder} does not exist")
        if os.path.isdir(args.write):
            raise ValueError(f"cannot write {args.write}: it is a directory")
        if not os.access(folder, os.W_OK):
            raise ValueError(f"cannot write {args.write}: directory {folder} is not writable")


def _emit(args: argparse.Namespace, results, fmt: str) -> None:
    """Print the report, or write it to ``--write`` (a line on stderr says where)."""
    if fmt != "text":
        text = render(results, fmt, budget=args.budget, seed=args.seed)
    elif args.verbose:
        text = _cli_out.fit(render(results, fmt, budget=args.budget, seed=args.seed))
    else:
        text = compact(results, budget=args.budget, seed=args.seed)
    if getattr(args, "write", None):
        with open(args.write, "w", encoding="utf-8") as fh:
            fh.write(text if text.endswith("\n") else text + "\n")
        print(f"wrote {args.write} ({len(results)} claims)", file=sys.stderr)
    else:
        print(text)
