"""``privcal train ucbvi``: run Private-UCB-VI (or its non-private reference) on a tabular MDP.

``privcal.cli`` (``privcal/cli/__init__.py``) calls :func:`add_parser` on the subparsers of ``privcal train`` and
:func:`run` on the parsed arguments; bad input raises ``ValueError`` (one stderr line and exit code 2 there).
The learner, its guarantee and the derivation of its bonus are in ``privcal.rl.ucbvi`` and docs/ucbvi.md.
"""

from __future__ import annotations

import argparse

from privcal.cli import out as _cli_out
from privcal.cli import train as _cli_train

__all__ = ["add_parser", "run", "compute", "seed_view"]

#: Fields of the report repeated on every csv row (csv of a run has one row per episode).
_CSV_SETTINGS = ("counter_noise", "delta", "error_bound", "privacy_unit", "environment")


def add_parser(subparsers: "argparse._SubParsersAction") -> argparse.ArgumentParser:
    """Add the ``ucbvi`` subparser to the subparsers object of ``privcal train``; returns it.

    Sets ``_run=run`` as the parser default, which ``privcal.cli`` calls.

    Args:
        subparsers: the object returned by ``add_subparsers`` of the ``train`` parser.

    Returns:
        The new ``ucbvi`` parser.
    """
    p = subparsers.add_parser(
        "ucbvi", help="Private-UCB-VI (Chowdhury & Zhou 2022) with binary-mechanism counters",
        description="Train Private-UCB-VI ((epsilon, delta)-JDP with Gaussian counters, epsilon-JDP with Laplace "
                    "counters; the bonus's counter-error width is the counters' valid union bound, "
                    "docs/ucbvi.md) or the same learner with exact counts, on PUCB's random MDP (S = 3, A = 2, "
                    "H = 3) or Gymnasium's FrozenLake 4x4, and report the exact regret per episode against the "
                    "uniform policy. Privacy unit: one user = one episode's trajectory, replaced.")
    p.add_argument("--environment", choices=("random", "frozenlake"), default="random",
                   help="the MDP: random (PUCB's frontier MDP, S = 3, A = 2, H = 3, MDP seed 0) or frozenlake "
                        "(Gymnasium's FrozenLake 4x4, slippery; needs pip install 'privcal[rl]') (default random)")
    p.add_argument("--horizon", type=_cli_out.count, default=None,
                   help="FrozenLake's episode length H, an int >= 1 (default 20; the random MDP's is fixed at 3)")
    p.add_argument("--episodes", type=_cli_out.count, default=1000,
                   help="number of episodes T (users), an int >= 1 (default 1000; 1e4 accepted)")
    _add_privacy_flags(p)
    _cli_train.add_seed_flags(p, "seed of the agent and the episodes")
    _cli_train.add_output_flags(p)
    p.set_defaults(_run=run)  # privcal.cli dispatches ``privcal train AGENT`` to args._run(args)
    return p


def _add_privacy_flags(p: argparse.ArgumentParser) -> None:
    """``--epsilon``, ``--counter-noise``, ``--delta``, ``--non-private`` and ``--failure-probability``."""
    p.add_argument("--epsilon", type=float, default=None,
                   help="JDP epsilon of the whole run, in (0, 1e6] (default: none; required unless --non-private)")
    p.add_argument("--counter-noise", choices=("gaussian", "laplace"), default=None,
                   help="noise of the counters: gaussian ((epsilon, delta)-JDP, needs --delta) or laplace "
                        "(epsilon-JDP) (default gaussian)")
    p.add_argument("--delta", type=float, default=None,
                   help="JDP delta of the whole run, in (0, 1), with gaussian counters only (default: none; "
                        "required with gaussian)")
    p.add_argument("--non-private", action="store_true",
                   help="run the same learner with exact counts and no privacy terms (default: off)")
    p.add_argument("--failure-probability", type=float, default=None,
                   help="failure probability beta of the counters' error bound and of the bonus, in (0, 1) "
                        "(default 0.1)")


def run(args: argparse.Namespace) -> int:
    """Execute ``privcal train ucbvi``; prints the result in the chosen format, returns 0.

    Args:
        args: the parsed arguments of the ``ucbvi`` subparser (see :func:`add_parser`).

    Returns:
        The exit code, 0.

    Raises:
        ValueError: an argument is outside its range (the message names the CLI option).
    """
    fmt = _cli_train.check_output_flags(args)
    seeds = _cli_train.check_seed_flags(args)
    if seeds is not None:
        _check(args)
        return _cli_train.run_seeds(args, __name__, fmt, seeds)
    # csv prints the per-episode rows only: the privacy settings go on every row
    _cli_train.emit(args, fmt, *compute(args, fmt), csv_settings=_CSV_SETTINGS)
    return 0


def seed_view(record: dict) -> dict:
    """What ``--seeds`` aggregates of one run: the realised regret per episode against the uniform policy's
    exact expected regret per episode (lower is better).

    Args:
        record: the json record of one run (:func:`compute`).
    """
    refs = record.get("references") or {}
    return {"agent": "ucbvi", "method": record.get("algorithm"), "utility": "regret_per_episode",
            "utility_label": "cumulative regret per episode (lower is better)", "higher_is_better": False,
            "value": record["regret_per_episode"], "value_se": record.get("regret_per_episode_se"),
            "reference": refs.get("uniform_policy_regret_per_episode"), "reference_se": 0.0,
            "reference_label": "uniform policy (trivial reference, exact expected regret)",
            "non_private": refs.get("non_private_regret_per_episode"),
            "non_private_label": "same learner with exact counts, same MDP and seed",
            "extra": {"counter_error_within_bound": record.get("counter_error_within_bound")}}


def _check(args: argparse.Namespace) -> tuple:
    """The checked settings: (counter noise, delta, failure probability); refusals name the flag."""
    from privcal import _validate as V

    _cli_out.check_epsilon(args.epsilon)
    if args.non_private:
        given = [f for f, v in (("--epsilon", args.epsilon), ("--counter-noise", args.counter_noise),
                                ("--delta", args.delta)) if v is not None]
        if given:
            raise ValueError(f"{' and '.join(given)} must not be given together with --non-private (exact counts: "
                             "no privacy budget, no counter noise)")
    elif args.epsilon is None:
        raise ValueError("--epsilon is required (or pass --non-private)")
    noise = "gaussian" if args.counter_noise is None else args.counter_noise
    if not args.non_private:
        if noise == "laplace" and args.delta is not None:
            raise ValueError(f"--delta is used only with --counter-noise gaussian (Laplace counters are pure "
                             f"epsilon-JDP), got --delta {args.delta:g}")
        if noise == "gaussian" and args.delta is None:
            raise ValueError("--counter-noise gaussian (the default) needs --delta in (0, 1), or use "
                             "--counter-noise laplace")
        if args.delta is not None:
            V.open_unit("delta", args.delta)
    if args.environment == "random" and args.horizon is not None:
        raise ValueError(f"--horizon applies only to --environment frozenlake (the random MDP's H is 3), got "
                         f"--horizon {args.horizon}")
    beta = V.open_unit("failure_probability", 0.1 if args.failure_probability is None else args.failure_probability)
    V.positive_int("episodes", args.episodes)
    return noise, (None if args.non_private else args.delta), beta


def compute(args: argparse.Namespace, fmt: str) -> tuple:
    """One run of ``privcal train ucbvi``: (record, text, curve columns, plot spec).

    Args:
        args: the parsed arguments (``args.seed`` set).
        fmt: the output format (text shows a progress bar on stderr).

    Raises:
        ValueError: an argument is outside its range.
    """
    from privcal.cli.progress import ProgressBar
    from privcal.rl.ucbvi.train import TrainSettings, train_ucbvi_unchecked

    noise, delta, beta = _check(args)
    settings = TrainSettings(args.environment, int(args.episodes), None if args.non_private else float(args.epsilon),
                             delta, beta, args.seed, noise, horizon=args.horizon, references=not args.no_references)
    steps = settings.episodes * settings.runs
    bar = None if fmt != "text" else ProgressBar(steps, label="ucbvi")

    def progress(offset):  # both runs on one bar: episodes of run 1, then of run 2
        return None if bar is None else (lambda done, total=None: bar(offset + done, steps))

    try:
        run_ = train_ucbvi_unchecked(settings, progress)
    finally:
        if bar is not None:
            bar.close()
    return run_.record, _text(run_, settings), *_curves(run_, settings, args.seed)


def _text(run_, settings) -> str:
    """The text report of one run (:func:`compute`)."""
    out, result, se, beta = run_.record, run_.result, run_.se, settings.failure_probability
    epsilon, refs = settings.epsilon, out["references"]
    eps = "non-private" if epsilon is None else f"epsilon={epsilon:g}"
    lines = [f"{out['algorithm']} ({eps}) on {run_.mdp.name}, {settings.episodes} episodes, seed {settings.seed}",
             f"  regret per episode    {out['regret_per_episode']:.4f} +- {se:.2g} (standard error over "
             f"episodes; optimal return {result.optimal_return:.4f})"]
    if refs:
        if refs["non_private_regret_per_episode"] is not None:
            lines.append(f"  non-private           {refs['non_private_regret_per_episode']:.4f}  (exact counts, same "
                         "MDP and seed)")
        lines.append(f"  uniform policy        {refs['uniform_policy_regret_per_episode']:.4f}  (exact)")
    if epsilon is not None:
        lines.append(f"  guarantee             {result.guarantee}")
        lines.append(f"  counter error bound E {result.error_bound:.4g}; largest error seen "
                     f"{result.max_counter_error:.4g}")
        if not out["counter_error_within_bound"]:
            lines.append(f"  BOUND EXCEEDED        a counter's error exceeded its (1 - {beta:g}) bound: the regret "
                         "analysis does not cover this run (the privacy guarantee stands)")
    if run_.verdict is not None:
        lines.append(f"  verdict               {run_.verdict.line()}")
    if epsilon is not None:
        lines.append("  privacy unit          episode: one user's trajectory (joint DP: every output but the "
                     "actions recommended to that user)")
    lines.append(f"  time                  {out['seconds']:.2f} s")
    return "\n".join(lines)


def _curves(run_, settings, seed) -> tuple:
    """(curve columns, plot spec) of one run (:func:`compute`)."""
    import numpy as np

    out, cumulative, refs = run_.record, run_.cumulative, run_.record["references"]
    eps = "non-private" if settings.epsilon is None else f"epsilon={settings.epsilon:g}"
    index = np.arange(1, settings.episodes + 1)
    series = {"episode": index.tolist(), "regret": [float(x) for x in cumulative]}
    if run_.baseline is not None:
        series["non_private_regret"] = [float(x) for x in np.cumsum(run_.baseline.episode_regret)]
    spec = _cli_train.PlotSpec(
        index, f"{out['algorithm']} ({eps})", cumulative,
        title=f"Private-UCB-VI on {run_.mdp.name}, seed {seed}", xlabel="episode", ylabel="cumulative regret",
        references={"non-private": series.get("non_private_regret"),
                    "uniform policy": None if not refs else refs["uniform_policy_regret_per_episode"] * index})
    return series, spec
