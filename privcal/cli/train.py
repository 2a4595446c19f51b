"""What every ``privcal train AGENT`` shares: output formats, ``--plot FILE`` and the reference runs.

Each agent reports its curve (returns per episode, cumulative regret, or MSPBE against iterations) beside
two references: the **non-private baseline** (the same learner, same seed, no noise) and the **trivial**
policy or predictor (the uniformly random policy; the zero predictor theta = 0). They are computed unless
``--no-references`` is given, printed in every format (json under ``references``), and drawn as
reference lines by ``--plot FILE``.

``--seeds 0-19`` (or ``0,1,5``, or ``0-4,9``) trains one run per seed, in parallel as ``privcal frontier`` does
(``--n-jobs``, ``--backend``, ``--scheduler``; ``privcal.rl.parallel.run_trials``), and reports the per-seed
results, their mean, the 95 % Student-t interval and the seed-level verdict against the trivial reference
(``privcal.rl.verdict.summarize_seeds``) in every format, with the privacy unit, the user-level epsilon where
the unit is finer than the user, and the references. Each agent module gives ``compute(args, fmt)`` (one
run: record, text, curve, plot) and ``seed_view(record)`` (the run's utility, its reference and what it is).
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping, Sequence
from dataclasses import KW_ONLY, dataclass
from typing import Any, Optional

from privcal.cli import out as _cli_out

__all__ = ["add_output_flags", "check_output_flags", "emit", "csv_constant_columns", "PlotSpec", "REFERENCES_NOTE",
           "seed_list", "add_seed_flags", "check_seed_flags", "run_seeds", "MAX_SEEDS"]

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

        plot.pyplot()  # a clear ImportError now, not after training
        plot.check_path(args.plot)
    return fmt


@dataclass(frozen=True)
class PlotSpec:
    """What ``--plot`` draws: x values, the run's curve, labels and the reference lines.

    Attributes:
        x: x values (episodes or iterations).
        label: legend label of the run.
        y: the run's curve.
        title: chart title (keyword only).
        xlabel: x-axis label with unit (keyword only).
        ylabel: y-axis label with unit (keyword only).
        references: label -> number or curve (None entries are skipped); default None (none), kept as a dict.
        log_y: logarithmic y axis; default False.
    """

    x: Sequence
    label: str
    y: Sequence
    _: KW_ONLY
    title: str
    xlabel: str
    ylabel: str
    references: Optional[Mapping[str, Any]] = None
    log_y: bool = False

    def __post_init__(self):
        object.__setattr__(self, "references", dict(self.references or {}))


def csv_constant_columns(record: Mapping[str, Any], series: Mapping[str, Sequence]) -> dict:
    """Columns a trainer's csv repeats on every row: its privacy unit, batch sampler, verdict and reference values.

    csv prints the curve's rows only, so the references (``reference_<name>``, scalars of
    ``record["references"]``, the note excepted), ``privacy_unit``, ``sampling``, ``neighbouring``,
    ``verdict`` and, where the record has them, the utility the verdict tested (``policy_return`` and its
    standard error), the ``environment`` and its ``peak``, ``user_epsilon`` and ``sample_rate_source`` go on every
    row.

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
    for key in ("privacy_unit", "sampling", "neighbouring", "verdict", "policy_return", "policy_return_se",
                "environment", "peak", "user_epsilon", "sample_rate_source"):
        if key in record and key not in series:
            extra[key] = [record[key]] * rows
    return {k: v for k, v in extra.items() if k not in series}


def emit(args: argparse.Namespace, fmt: str, record: Mapping[str, Any], text: str,
         series: Optional[Mapping[str, Sequence]], spec: Optional[PlotSpec], *, csv_settings: Sequence[str] = ()) -> None:
    """Print the result in ``fmt`` and, with ``--plot``, draw ``spec`` (the path goes to stderr).

    Args:
        args: parsed arguments.
        fmt: the output format.
        record: the result's fields.
        text: the text report.
        series: the curve's columns (csv rows; json arrays).
        spec: what to draw for ``--plot``.
        csv_settings: fields of ``record`` that csv repeats on every row, first (the agent's privacy settings);
            default none.
    """
    if fmt == "csv" and series and csv_settings:
        rows = len(next(iter(series.values())))
        series = {**series, **{k: [record[k]] * rows for k in csv_settings}}
        record = {k: v for k, v in record.items() if k not in csv_settings}
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


# ------------------------------------------------------------------------------------------- --seeds

#: The most seeds one ``--seeds`` may name (each is a training run).
MAX_SEEDS = _cli_out.MAX_SEEDS


#: ``--seeds``' parser, shared with ``privcal frontier`` (:func:`privcal.cli.out.seeds`: ranges and lists).
seed_list = _cli_out.seeds


def add_seed_flags(p: argparse.ArgumentParser, what: str = "seed of the run") -> None:
    """``--seed``, ``--seeds`` and the engine flags (``--n-jobs``, ``--backend``, ``--scheduler``) of an agent.

    Args:
        p: the agent's parser.
        what: what ``--seed`` seeds, for its help; default "seed of the run".
    """
    p.add_argument("--seed", type=_cli_out.seed, default=None,
                   help=f"{what}, a whole number >= 0 (default 0); --seeds runs several")
    p.add_argument("--seeds", type=seed_list, default=None,
                   help="several seeds, one training run each, in parallel: ranges and lists, e.g. 0-19 or 0,1,5 "
                        "(at least 2); reports every seed, the mean, a 95%% Student-t interval and the verdict over "
                        "seeds (default: one run, --seed)")
    p.add_argument("--n-jobs", type=int, default=None,
                   help="with --seeds: parallel runs, an int >= 1, or -1 for all local cores or all cluster workers "
                        "(default -1); the results do not depend on it")
    p.add_argument("--backend", choices=("local", "dask"), default=None,
                   help="with --seeds: where the runs go: local (joblib's loky processes on this machine) or dask "
                        "(the Dask cluster at --scheduler; pip install 'privcal[dask]') (default local)")
    p.add_argument("--scheduler", metavar="ADDRESS", default=None,
                   help="with --backend dask: the Dask scheduler address, e.g. tcp://10.0.0.5:8786 (default: none)")


def check_seed_flags(args: argparse.Namespace) -> Optional[list]:
    """Check ``--seed``/``--seeds`` and the engine flags; returns the seeds of ``--seeds`` or None (one run).

    With one run, ``args.seed`` is set to 0 when ``--seed`` was left out.

    Args:
        args: parsed arguments of an agent's parser given :func:`add_seed_flags`.

    Raises:
        ValueError: ``--seed`` with ``--seeds``, fewer than 2 seeds, ``--plot`` with ``--seeds``, or an engine
            flag without ``--seeds`` or outside its range.
    """
    engine = [f for f, v in (("--n-jobs", args.n_jobs), ("--backend", args.backend), ("--scheduler", args.scheduler))
              if v is not None]
    if args.seeds is None:
        if engine:
            raise ValueError(f"{', '.join(engine)} applies only with --seeds (one run uses this process)")
        if args.seed is None:
            args.seed = 0
        return None
    if args.seed is not None:
        raise ValueError("give --seed (one run) or --seeds (several), not both")
    if len(args.seeds) < 2:
        raise ValueError(f"--seeds needs at least 2 seeds for a mean, an interval and a verdict over seeds, got "
                         f"{len(args.seeds)} (one run: --seed {args.seeds[0]})")
    if args.plot is not None:
        raise ValueError("--plot draws one run's learning curve: it does not apply with --seeds")
    if args.n_jobs is not None and (args.n_jobs == 0 or args.n_jobs < -1):
        raise ValueError(f"--n-jobs must be an integer >= 1 or -1, got {args.n_jobs}")
    if args.backend == "dask" and not args.scheduler:
        raise ValueError("--backend dask needs --scheduler ADDRESS (e.g. tcp://host:8786)")
    if args.backend != "dask" and args.scheduler is not None:
        raise ValueError("--scheduler is used only with --backend dask")
    return list(args.seeds)


#: flags that choose how the seeds run or how the result prints, not what one run computes
_NOT_RUN_OPTIONS = ("seeds", "seed", "n_jobs", "backend", "scheduler", "format", "json", "plot")


def _seed_task(module: str, options: dict, seed: int) -> dict:
    """One seed's run (in a worker): ``module.compute`` on the options with ``seed``; returns its record."""
    import importlib

    mod = importlib.import_module(module)
    ns = argparse.Namespace(**options, seed=seed, format="json", json=False, plot=None)
    record = mod.compute(ns, "json")[0]
    return record


def run_seeds(args: argparse.Namespace, module: str, fmt: str, seeds: Sequence[int]) -> int:
    """``privcal train AGENT --seeds ...``: one run per seed in parallel, summarised and printed in ``fmt``.

    Args:
        args: the parsed arguments (checked by :func:`check_seed_flags`).
        module: the agent module's name (it provides ``compute`` and ``seed_view``).
        fmt: the output format.
        seeds: the seeds.

    Returns:
        0.

    Raises:
        ValueError: bad input (raised by the first failing run).
    """
    import importlib
    import time

    mod = importlib.import_module(module)
    start = time.perf_counter()
    records = _train_seeds(args, module, fmt, seeds)
    views = [mod.seed_view(r) for r in records]
    summary = _seeds_summary(views, seeds)
    record, text, series = _seeds_output(args, seeds, records, views, summary, time.perf_counter() - start)
    if fmt == "markdown":
        print(_seeds_markdown(record, series))
    else:
        _cli_out.emit(fmt, record if fmt != "csv" else {}, text, series if fmt == "csv" else None)
    return 0


def _train_seeds(args, module: str, fmt: str, seeds: Sequence[int]) -> list:
    """The records of one run per seed (``privcal.rl.parallel.run_trials`` on the engine flags), with a progress
    bar in text format."""
    from privcal.rl.parallel import run_trials

    options = {k: v for k, v in vars(args).items() if not k.startswith("_") and k not in _NOT_RUN_OPTIONS}
    bar = None
    if fmt == "text":
        from privcal.cli.progress import ProgressBar

        bar = ProgressBar(len(seeds), label=f"{module.rsplit('.', 1)[-1]} seeds")
    try:
        return run_trials(_seed_task, [(module, options, s) for s in seeds],
                          -1 if args.n_jobs is None else args.n_jobs, backend=args.backend or "local",
                          scheduler=args.scheduler, progress=bar)
    finally:
        if bar is not None:
            bar.close()


def _seeds_summary(views, seeds):
    """The verdict over seeds against the trivial reference (paired where each seed has its own), or None with
    --no-references (nothing to test against)."""
    from privcal.rl.verdict import summarize_seeds

    first = views[0]
    if any(v["reference"] is None for v in views):
        return None
    return summarize_seeds([v["value"] for v in views], first["reference"],
                           higher_is_better=first["higher_is_better"], reference_label=first["reference_label"],
                           seeds=seeds, reference_se=first["reference_se"],
                           reference_values=[v["reference"] for v in views])


def _common(records: Sequence[Mapping], key: str):
    """The value of ``key`` when every record has the same one, else None."""
    values = [r.get(key) for r in records]
    return values[0] if all(v == values[0] for v in values) else None


def _seeds_output(args, seeds, records, views, summary, seconds) -> tuple:
    """(json record, text report, csv rows) of a run over seeds."""
    runs = _seed_rows(seeds, records, views)
    refs = _seeds_references(views, summary)
    out = _seeds_record(seeds, records, views, summary, refs)
    out["references"] = {**refs, "note": REFERENCES_NOTE} if summary is not None else {}
    out["runs"] = runs
    out["seconds"] = seconds
    return out, _seeds_text(out, summary, records), _seeds_series(out, runs, refs, views[0])


def _seed_rows(seeds, records, views) -> list:
    """One row per seed: its utility, the one-seed verdict, the references and whether its premises held."""
    name = views[0]["utility"]
    runs = []
    for s, r, v in zip(seeds, records, views):
        premises = r.get("premises") or []
        runs.append({"seed": s, name: v["value"], f"{name}_se": v.get("value_se"),
                     "seed_verdict": r.get("verdict"), "non_private": v.get("non_private"),
                     "reference": v["reference"], "premises_held": all(p["held"] for p in premises) if premises
                     else None, "guarantee": r.get("guarantee"), **v.get("extra", {})})
    return runs


def _seeds_references(views, summary) -> dict:
    """The references over seeds: the trivial one (from the summary) and the non-private mean with its interval."""
    import math

    import numpy as np

    first = views[0]
    non_private = [v.get("non_private") for v in views]
    np_summary = None
    if all(x is not None and math.isfinite(x) for x in non_private):
        from privcal.rl.verdict import student_t_interval

        lo, hi = student_t_interval(non_private)
        np_summary = {"mean": float(np.mean(non_private)), "ci_low": lo, "ci_high": hi}
    return {"trivial": None if summary is None else summary.reference,
            "trivial_se": None if summary is None else summary.reference_se,
            "trivial_label": first["reference_label"], "non_private": np_summary,
            "non_private_label": first.get("non_private_label"), **first.get("constant_references", {})}


def _seeds_record(seeds, records, views, summary, refs) -> dict:
    """The json record over seeds, up to its references and rows: the setting, the guarantee, the mean and verdict."""
    import numpy as np

    first, r0 = views[0], records[0]
    unit = _common(records, "privacy_unit")
    guarantees = [r.get("guarantee") for r in records]
    user = [r.get("user_epsilon") for r in records]
    user_low = [r.get("user_epsilon_lower") for r in records]
    same = all(g == guarantees[0] for g in guarantees)
    out = {"agent": first["agent"], "method": first.get("method"), "seeds": list(seeds), "runs_count": len(seeds),
           "utility": first["utility"], "utility_label": first["utility_label"],
           "higher_is_better": first["higher_is_better"],
           "privacy_unit": unit, "privacy_unit_description": _unit_description(unit, records),
           "epsilon": _common(records, "epsilon"), "delta": _common(records, "delta"),
           "guarantee": guarantees[0] if same else None, "guarantee_per_seed": None if same else guarantees}
    for key in ("sigma", "sample_rate", "sample_rate_source"):
        if key in r0:
            out[key] = _common(records, key)
    if any(u is not None for u in user):
        # the largest upper bound and the smallest certified lower end over the seeds: valid for every seed's run
        out.update(user_unit=r0.get("user_unit", "episode"),
                   user_epsilon=None if any(u is None for u in user) else max(user),
                   user_epsilon_lower=None if any(u is None for u in user_low) else min(user_low))
    if summary is not None:
        s = summary.to_dict()
        out.update(mean=s["mean"], std=s["std"], ci_low=s["ci_low"], ci_high=s["ci_high"], ci_level=s["ci_level"],
                   ci_method=s["ci_method"], verdict=s["verdict"], verdict_test=s["verdict_test"],
                   paired=s["paired"])
    else:
        from privcal.rl.verdict import no_reference, student_t_interval

        vals = [v["value"] for v in views]
        lo, hi = student_t_interval(vals)
        out.update(mean=float(np.mean(vals)), std=float(np.std(vals, ddof=1)), ci_low=lo, ci_high=hi, ci_level=0.95,
                   **no_reference("--no-references"))
    return out


def _seeds_series(out: dict, runs: list, refs: dict, first: dict) -> dict:
    """The csv columns over seeds: one row per seed, the summary repeated on every row."""
    name, seeds = out["utility"], out["seeds"]
    cols = [name, f"{name}_se", "seed_verdict", "non_private", "reference", "premises_held"]
    series = {"seed": list(seeds), **{c: [r[c] for r in runs] for c in cols}}
    for extra in first.get("extra", {}):
        series[extra] = [r.get(extra) for r in runs]
    constant = {"mean": out["mean"], "ci_low": out["ci_low"], "ci_high": out["ci_high"], "verdict": out["verdict"],
                "verdict_test": out["verdict_test"]["test"], "privacy_unit": out["privacy_unit"],
                "epsilon": out["epsilon"], "delta": out["delta"], "reference_trivial": refs["trivial"],
                "reference_label": refs["trivial_label"]}
    if "user_epsilon" in out:
        constant.update(user_epsilon=out["user_epsilon"], user_epsilon_lower=out["user_epsilon_lower"])
    if "sample_rate_source" in out:
        constant["sample_rate_source"] = out["sample_rate_source"]
    series.update({k: [v] * len(seeds) for k, v in constant.items()})
    return series


def _unit_description(unit, records) -> Optional[str]:
    """What one neighbouring change is: the runs' own sentence, else privcal.rl.units'."""
    own = _common(records, "privacy_unit_description")
    if own is not None or unit is None:
        return own
    from privcal.rl.units import describe

    return describe(unit)


def _seed_span(seeds) -> str:
    s = list(seeds)
    return f"{s[0]}-{s[-1]}" if s == list(range(s[0], s[-1] + 1)) else ",".join(map(str, s))


def _seeds_text(out: dict, summary, records) -> str:
    def num(x, fmt=".4g"):
        return "n/a" if x is None else format(x, fmt)

    name = out["utility"]
    method = out["method"] if out["method"] not in (None, out["agent"]) else ""
    lines = [f"{out['agent']}{' ' + method if method else ''} over {len(out['seeds'])} seeds "
             f"({_seed_span(out['seeds'])}): {out['utility_label']}"]
    if out["privacy_unit"]:
        lines.append(f"  privacy unit          {out['privacy_unit']}: {out['privacy_unit_description']}")
    lines.append(f"  privacy               {out['guarantee'] or 'differs between seeds (guarantee_per_seed)'}")
    if "sample_rate_source" in out and out["sample_rate_source"]:
        lines.append(f"  sampling rate         {out['sample_rate_source']}")
    if out.get("user_epsilon") is not None:
        lines.append(f"  user-level            one user's whole episode removed: epsilon <= {out['user_epsilon']:.4g}, "
                     f"certified >= {num(out['user_epsilon_lower'])} at delta {num(out['delta'], 'g')} "
                     f"(the largest upper bound over the seeds)")
    lines.append(f"  {'seed':>6}  {name:>14}  {'+- se':>8}  {'non-private':>11}  {'reference':>9}  one-seed verdict")
    for r in out["runs"]:
        se = r.get(f"{name}_se")
        lines.append(f"  {r['seed']:>6}  {num(r[name]):>14}  {num(se, '.3g'):>8}  {num(r['non_private']):>11}  "
                     f"{num(r['reference']):>9}  {r['seed_verdict'] or ''}")
    lines.append(f"  mean                  {num(out['mean'])}, 95% CI [{num(out['ci_low'])}, {num(out['ci_high'])}] "
                 f"(Student-t over {len(out['seeds'])} seeds), std {num(out['std'])}")
    refs = out["references"]
    if refs:
        lines += _seeds_reference_lines(refs, num)
    lines.append(f"  verdict               {summary.line() if summary is not None else out['verdict_test']['test']}")
    if refs:
        lines.append(f"  note                  {REFERENCES_NOTE}")
    lines.append(f"  time                  {out['seconds']:.2f} s")
    return "\n".join(lines)


def _seeds_reference_lines(refs: Mapping, num) -> list:
    """The text report's reference lines over seeds: the trivial reference, the non-private mean and interval,
    then the agent's constant references (``num`` formats a number or None)."""
    se = refs.get("trivial_se")
    lines = [f"  trivial reference     {num(refs['trivial'])}" + (f" +- {se:.2g}" if se else "")
             + f" ({refs['trivial_label']})"]
    npm = refs.get("non_private")
    if npm is not None:
        lines.append(f"  non-private           mean {npm['mean']:.4g}, 95% CI [{num(npm['ci_low'])}, "
                     f"{num(npm['ci_high'])}] ({refs.get('non_private_label') or 'same learner, no noise'})")
    for key, value in refs.items():
        if key not in ("trivial", "trivial_se", "trivial_label", "non_private", "non_private_label", "note"):
            lines.append(f"  {key.replace('_', ' '):21s} {num(value) if isinstance(value, float) else value}")
    return lines


def _seeds_markdown(record: Mapping, series: Mapping) -> str:
    """Two tables: the summary's fields, then one row per seed."""
    summary = {k: v for k, v in record.items() if k not in ("runs", "seeds")}
    head = _cli_out.markdown(summary)
    cols = ["seed", record["utility"], f"{record['utility']}_se", "seed_verdict", "non_private", "reference"]
    rows = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for i in range(len(series["seed"])):
        rows.append("| " + " | ".join(_cli_out.markdown_cell(series[c][i]) for c in cols) + " |")
    return head + "\n\n" + "\n".join(rows)
