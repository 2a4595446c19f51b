"""``privcal train gpope``: GPOPE (gradient-perturbed off-policy evaluation) on the chain, Mountain Car or HIV.

``privcal.cli`` (``privcal/cli/__init__.py``) calls :func:`add_parser` on the subparsers of ``privcal train`` and
:func:`run` on the parsed arguments; bad input raises ``ValueError`` (one stderr line, exit code 2
there). Importing this module needs neither gymnasium nor matplotlib nor joblib.
"""

from __future__ import annotations

import argparse

from privcal.cli import out as _cli_out
from privcal.cli import train as _cli_train
from privcal.rl.gpope import train as _train_gpope

__all__ = ["add_parser", "run", "compute", "seed_view", "DEFAULT_EVAL", "BOUND_CHOICES"]

#: --bound values: the one vocabulary (valid, paper) and each bound by name
BOUND_CHOICES = ("valid", "paper", "pld", "rdp", "thm9", "theorem1", "lemma1", "theorem1_paper")

DOMAINS = ("chain", "mountain-car", "hiv")
#: Largest memory a run may ask for up front (bytes); larger requests are refused with this number.
_MEMORY_BUDGET = 4 * 2**30
DEFAULT_EVAL = _train_gpope.DEFAULT_EVAL  # evaluation sample per domain (trajectories)


def add_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Add the ``gpope`` subparser to the subparsers object of ``privcal train``; returns it.

    Args:
        subparsers: the subparsers object of ``privcal train`` (``add_subparsers()``).
    """
    p = subparsers.add_parser(
        "gpope", help="GPOPE private off-policy evaluation (gradient-perturbed GTD2)",
        description="Collect a seeded data set of M trajectories, run GPOPE (Alg. 1 of 'Privacy "
                    "Preserving Off-Policy Evaluation') with sigma calibrated for (epsilon, delta), "
                    "and report the MSPBE on an independent evaluation sample.")
    p.add_argument("--domain", choices=DOMAINS, default="chain", help="evaluation domain (default chain)")
    p.add_argument("--trajectories", type=_cli_out.count, default=1000,
                   help="data size m, trajectories in the private data set (default 1000; 1e4 accepted)")
    p.add_argument("--epsilon", type=float, default=None,
                   help="target epsilon of the whole run, in (0, 1e6] (required unless --non-private)")
    p.add_argument("--delta", type=float, default=None, help="target delta of the whole run, in (0, 1) (default 1e-5)")
    p.add_argument("--bound", default="valid", choices=BOUND_CHOICES,
                   help="accounting for sigma: valid (default: the tightest valid bound, PLD or RDP, whichever "
                        "certifies the smaller sigma), paper (the paper's Theorem 1 as printed, no valid guarantee), "
                        "or one bound by name: pld, rdp, thm9, theorem1 (valid), lemma1, theorem1_paper (the paper's, "
                        "not valid)")
    p.add_argument("--non-private", action="store_true", help="run GTD2 (sigma = 0, no clipping)")
    _add_run_flags(p)
    _cli_train.add_seed_flags(p, "seed of data, behaviour policy and noise")
    _cli_train.add_output_flags(p)
    p.set_defaults(_run=run)  # privcal.cli dispatches ``privcal train AGENT`` to args._run(args)
    return p


def _add_run_flags(p: argparse.ArgumentParser) -> None:
    """Add the flags that size one run (iterations, step sizes, clip, evaluation sample, domain options)."""
    p.add_argument("--iterations", type=_cli_out.count, default=None,
                   help="iterations N, one sampled trajectory each (default m; 1e4 accepted)")
    p.add_argument("--step-size", type=float, default=None,
                   help="step size s_1 of the primal-dual updates (default per domain: chain 0.1, others 0.001)")
    p.add_argument("--schedule", choices=("constant", "diminishing"), default="constant",
                   help="step sizes: constant s_1 (Thm 2, default) or s_1 / i (Thm 3)")
    p.add_argument("--clip", type=float, default=None,
                   help="clip h, the largest L2 norm of one trajectory's gradient (default per domain)")
    p.add_argument("--off-policy", action="store_true",
                   help="mountain-car: evaluate the uniform policy from the learned policy's data")
    p.add_argument("--eval-trajectories", type=_cli_out.count, default=None,
                   help="size of the independent sample that estimates the MSPBE, in trajectories (default per "
                        "domain: chain 20000, mountain-car 1000, hiv 200)")
    p.add_argument("--q-episodes", type=_cli_out.count, default=None,
                   help="Q-learning episodes that learn the behaviour policy (default mountain-car 200, hiv 64)")
    p.add_argument("--horizon", type=_cli_out.count, default=None, help="hiv: decisions per episode (default 50)")




def run(args: argparse.Namespace) -> int:
    """Execute ``privcal train gpope``; prints the result (JSON with ``--json``), returns 0.

    Args:
        args: the parsed arguments of ``privcal train gpope``.

    Raises:
        ValueError: bad input (the CLI prints it as one line, exit code 2).
    """
    fmt = _cli_train.check_output_flags(args)
    seeds = _cli_train.check_seed_flags(args)
    if seeds is not None:
        _cli_out.check_epsilon(args.epsilon)
        return _cli_train.run_seeds(args, __name__, fmt, seeds)
    _cli_train.emit(args, fmt, *compute(args, fmt))
    return 0


def seed_view(record: dict) -> dict:
    """What ``--seeds`` aggregates of one run: the released parameters' MSPBE (relative MSPBE on hiv) against
    theta = 0's on the same seed's evaluation sample (lower is better; each seed has its own, so the verdict over
    seeds is paired).

    Args:
        record: the json record of one run (``compute``).
    """
    import math

    refs = record.get("references") or {}
    name = record["score"]
    value = record[name]
    zero = (record.get("verdict_test") or {}).get("reference") if refs else None
    return {"agent": "gpope", "method": record.get("algorithm"), "utility": name,
            "utility_label": f"{name.replace('_', ' ')} of the released parameters (lower is better), evaluated on "
                             f"{record['eval_trajectories']} simulated trajectories",
            "higher_is_better": False, "value": math.inf if value is None else value, "value_se": None,
            "reference": zero, "reference_se": 0.0,
            "reference_label": "theta = 0 (trivial predictor), on the same evaluation sample",
            "non_private": refs.get("non_private_gtd2"), "non_private_label": "non-private GTD2, same data and seed",
            "extra": {"diverged": record.get("diverged"), "worse_than_trivial": record.get("worse_than_trivial")}}


def compute(args: argparse.Namespace, fmt: str) -> tuple:
    """One run of ``privcal train gpope``: (record, text, curve columns, plot spec).

    Args:
        args: the parsed arguments (``args.seed`` set).
        fmt: the output format (text shows a progress bar on stderr).

    Raises:
        ValueError: bad input.
    """
    from privcal.cli.progress import ProgressBar, Working

    settings = _check(args)
    total = settings.iterations * settings.runs
    bars = []  # the bar starts with the first run, after calibration and data collection

    def progress(offset):  # both runs on one bar: iterations of run 1, then of run 2
        if fmt != "text":
            return None
        if not bars:
            bars.append(ProgressBar(total, label="gpope"))
        return lambda done, total_=None: bars[0](offset + done, total)

    def working(label):  # the bar ends before the references' spinner starts
        for bar in bars:
            bar.close()
        return Working(label)

    try:
        run_ = _train_gpope.train_gpope_unchecked(settings, progress, working if fmt == "text" else None)
    finally:
        for bar in bars:
            bar.close()
    return run_.record, _text(run_, settings), run_.series, _spec(run_, settings)


def _check(args: argparse.Namespace) -> "_train_gpope.TrainSettings":
    """The checked settings (``privcal.rl.gpope.train.TrainSettings``); refusals name the flag, in flag order."""
    _cli_out.check_epsilon(args.epsilon)
    from privcal import _validate as V
    from privcal.rl.gpope.experiments import CLIP, DEFAULT_STEP

    _check_conflicts(args)
    horizon = None if args.horizon is None else V.positive_int("horizon", args.horizon)
    q_episodes = None if args.q_episodes is None else V.positive_int("q_episodes", args.q_episodes)
    n_eval = None if args.eval_trajectories is None else V.positive_int("eval_trajectories", args.eval_trajectories)
    if args.non_private and args.clip is not None:
        raise ValueError("--clip must not be given together with --non-private (GTD2 does not clip)")
    m = V.positive_int("trajectories", args.trajectories)
    n_iter = m if args.iterations is None else V.positive_int("iterations", args.iterations)
    if 8 * n_iter > _MEMORY_BUDGET:  # the sampled trajectory indices alone (8 bytes per iteration)
        raise ValueError(f"iterations = {n_iter} needs more than the memory budget of "
                         f"{_MEMORY_BUDGET / 2**30:g} GiB (at most {_MEMORY_BUDGET // 8} iterations)")
    step = DEFAULT_STEP[args.domain] if args.step_size is None else V.positive("step_size", args.step_size)
    clip = CLIP[args.domain] if args.clip is None else V.positive("clip", args.clip)
    private = {} if args.non_private else {
        "epsilon": V.positive("epsilon", args.epsilon), "delta": V.open_unit("delta", args.delta), "bound": args.bound}
    return _train_gpope.TrainSettings(
        args.domain, m, n_iter, step, args.schedule, clip, args.seed, off_policy=args.off_policy,
        eval_trajectories=n_eval, q_episodes=q_episodes, horizon=horizon, references=not args.no_references,
        **private)


def _check_conflicts(args: argparse.Namespace) -> None:
    """Refuse flags that do not go together (one line naming them); ``--delta`` defaults to 1e-5."""
    if args.non_private and args.epsilon is not None:
        raise ValueError("--epsilon must not be given together with --non-private")
    if not args.non_private and args.epsilon is None:
        raise ValueError("--epsilon is required (or pass --non-private)")
    if args.non_private and (args.delta is not None or args.bound != "valid"):
        raise ValueError("--delta and --bound must not be given together with --non-private (GTD2 adds no noise)")
    if args.delta is None:
        args.delta = 1e-5
    if args.off_policy and args.domain != "mountain-car":
        raise ValueError("--off-policy applies to --domain mountain-car (chain is on-policy, hiv "
                         "is always off-policy)")
    if args.horizon is not None and args.domain != "hiv":
        raise ValueError("--horizon applies only to --domain hiv")
    if args.q_episodes is not None and args.domain == "chain":
        raise ValueError("--q-episodes applies only to --domain mountain-car and hiv")


def _text(run_: "_train_gpope.TrainRun", s: "_train_gpope.TrainSettings") -> str:
    """The text output of one run."""
    out, res, refs = run_.record, run_.result, run_.record["references"]
    name, bound_used, off = out["score"], out["bound_used"], out["off_policy"]
    what = "non-private GTD2" if s.non_private else \
        f"epsilon={s.epsilon:g}, delta={s.delta:g}, bound {s.bound}" + \
        (f" ({bound_used})" if bound_used not in (None, s.bound) else "")
    lines = [f"{out['algorithm']} ({what}) on {s.domain}{' (off-policy)' if off else ''}, m={s.trajectories}, "
             f"N={s.iterations}, seed {s.seed}",
             f"  noise multiplier      {out['noise_multiplier']:.4g} (noise std {out['noise_std']:.4g} = multiplier x "
             f"clip {out['clip']})",
             f"  privacy               {out['guarantee']}",
             f"  {name:21s} {run_.final:.4g}" + ("  (diverged: non-finite parameters)" if res.diverged else
                                                 "  (diverged: the iterates blew up)" if out["diverged"] else
                                                 "  (worse than theta = 0, the trivial predictor)"
                                                 if out["worse_than_trivial"] else "")]
    if refs:
        if run_.baseline is not None:
            flag = (" (diverged: the iterates blew up)" if refs["non_private_gtd2_diverged"] else
                    " (worse than theta = 0)" if refs["non_private_gtd2_worse_than_trivial"] else "")
            lines.append(f"  non-private GTD2      {refs['non_private_gtd2']:.4g} (same data, step size and seed){flag}")
        lines.append(f"  {refs['lstd_method']:21s} {refs['lstd']:.4g} (non-private closed form)")
        lines.append(f"  theta = 0             {refs['zero_predictor']:.4g} (trivial predictor)")
    lines.append(f"  verdict               {run_.verdict.line()}")
    if not s.non_private:
        lines.append("  privacy unit          trajectory: one trajectory of the data set replaced by another")
        lines.append("  batch sampler         without_replacement: one trajectory drawn uniformly each iteration "
                     "(priced as such, replace-one neighbours)")
    lines.append(f"  clipped fraction      {res.clipped_fraction:.3f}")
    lines.append(f"  time                  {out['seconds']:.2f} s")
    return "\n".join(lines)


def _spec(run_: "_train_gpope.TrainRun", s: "_train_gpope.TrainSettings") -> "_cli_train.PlotSpec":
    """The plot of one run: the score's curve, non-private GTD2's, and the references as lines."""
    out, refs, series = run_.record, run_.record["references"], run_.series
    name = out["score"]
    curve = f"{name}_curve"
    return _cli_train.PlotSpec(
        series["iteration"], out["algorithm"], series[curve], log_y=True,
        title=f"{out['algorithm']} on {s.domain}, m={s.trajectories}, seed {s.seed}", xlabel="iteration",
        ylabel=name.replace("_", " ").replace("mspbe", "MSPBE") + " (log scale)",
        references={"non-private GTD2": series.get(f"non_private_{curve}"), refs.get("lstd_method", "lstd"):
                    refs.get("lstd"), "theta = 0": refs.get("zero_predictor")})
