"""``privcal train pucb``: run PUCB (or its non-private baseline) on a seeded tabular MDP.

``privcal.cli`` (``privcal/cli/__init__.py``) calls :func:`add_parser` on the subparsers of ``privcal train`` and
:func:`run` on the parsed arguments; bad input raises ``ValueError`` (turned into one stderr
line and exit code 2 there).
"""

from __future__ import annotations

import argparse

from privcal.cli import out as _cli_out
from privcal.cli import train as _cli_train
from privcal.cli.progress import ProgressBar

__all__ = ["add_parser", "run", "compute", "seed_view"]

#: Fields of the report repeated on every csv row (csv of a run has one row per episode).
_CSV_SETTINGS = ("counter_noise", "delta", "error_bound", "privacy_unit", "counter_error_within_bound")


def add_parser(subparsers: "argparse._SubParsersAction") -> argparse.ArgumentParser:
    """Add the ``pucb`` subparser to the subparsers object of ``privcal train``; returns it.

    Sets ``_run=run`` as the parser default, which ``privcal.cli`` calls.

    Args:
        subparsers: the object returned by ``add_subparsers`` of the ``train`` parser.

    Returns:
        The new ``pucb`` parser.
    """
    p = subparsers.add_parser(
        "pucb", help="PUCB (Vietri et al. 2020) with binary-mechanism counters",
        description="Train PUCB (epsilon-JDP with Laplace counters, (epsilon, delta)-JDP with Gaussian "
                    "counters) or its non-private UBEV-style baseline on a seeded tabular episodic MDP and "
                    "report the exact regret per episode. Privacy unit: one user = one episode's "
                    "trajectory, replaced (VBKW Def. 3).")
    _add_size_flags(p)
    _add_privacy_flags(p)
    _add_rule_flags(p)
    _cli_train.add_seed_flags(p, "seed of the agent and the episodes")
    _cli_train.add_output_flags(p)
    p.set_defaults(_run=run)  # privcal.cli dispatches ``privcal train AGENT`` to args._run(args)
    return p


def _add_size_flags(p: argparse.ArgumentParser) -> None:
    """The MDP's size and the run's length."""
    p.add_argument("--states", type=_cli_out.count, default=10, help="number of states S, an int >= 1 (default 10)")
    p.add_argument("--actions", type=_cli_out.count, default=3, help="number of actions A, an int >= 1 (default 3)")
    p.add_argument("--horizon", type=_cli_out.count, default=10, help="episode length H, steps per episode (default 10)")
    p.add_argument("--episodes", type=_cli_out.count, default=1000,
                   help="number of episodes T, an int >= 1 (default 1000; 1e4 accepted)")


def _add_privacy_flags(p: argparse.ArgumentParser) -> None:
    """The privacy budget, the counters' noise and the failure probability of their error bound."""
    p.add_argument("--epsilon", type=float, default=None,
                   help="JDP epsilon of the whole run, in (0, 1e6] (default: none; required unless --non-private)")
    p.add_argument("--counter-noise", choices=("laplace", "gaussian"), default=None,
                   help="noise of the binary-mechanism counters: laplace (the paper's, epsilon-JDP) or gaussian "
                        "(calibrated on the l2 sensitivity sqrt(6HL) with the exact Gaussian profile, "
                        "(epsilon, delta)-JDP, needs --delta) (default laplace)")
    p.add_argument("--delta", type=float, default=None,
                   help="JDP delta of the whole run, in (0, 1), with --counter-noise gaussian only "
                        "(default: none; required with gaussian)")
    p.add_argument("--non-private", action="store_true",
                   help="run the non-private baseline (exact counts, no privacy terms) (default: off)")
    p.add_argument("--failure-probability", type=float, default=None,
                   help="failure probability beta' of the counters' error bound and of the bonus, in (0, 1) "
                        "(default 0.1)")
    p.add_argument("--beta", type=float, default=None, help=argparse.SUPPRESS)  # deprecated spelling


def _add_rule_flags(p: argparse.ArgumentParser) -> None:
    """The MDP family and the rules that have a paper and a valid version."""
    p.add_argument("--mdp", choices=("random", "riverswim"), default="random",
                   help="MDP family (default random; riverswim needs --actions 2)")
    p.add_argument("--mdp-seed", type=_cli_out.seed, default=0, help="seed of the random MDP (default 0)")
    p.add_argument("--error-bound", choices=("valid", "paper", "union"), default="valid",
                   help="counter error bound E: valid (default: union bound over the counters' exact Laplace-"
                        "sum tails) or paper (E_epsilon of Alg. 3, which privcal verify shows failing); union "
                        "is the former name of valid")
    p.add_argument("--budget-split", choices=("valid", "paper"), default="valid",
                   help="per-counter epsilon: epsilon/(6H) (valid, default: epsilon-JDP) or epsilon/(3H) "
                        "(paper; only 2 epsilon-JDP)")
    p.add_argument("--unknown", choices=("optimistic", "paper"), default="optimistic",
                   help="Q for counts below 2E: H (optimistic, default) or min(H, Q + H) as printed (paper)")
    p.add_argument("--accuracy", type=float, default=None,
                   help="count episodes with regret > accuracy, in reward units per episode "
                        "(default: 10%% of the optimal return)")


def run(args: argparse.Namespace) -> int:
    """Execute ``privcal train pucb``; prints the result (JSON with ``--json``), returns 0.

    Args:
        args: the parsed arguments of the ``pucb`` subparser (see :func:`add_parser`).

    Returns:
        The exit code, 0.

    Raises:
        ValueError: an argument is outside its range (the message names the CLI option).
    """
    fmt = _cli_train.check_output_flags(args)
    seeds = _cli_train.check_seed_flags(args)
    if seeds is not None:
        _cli_out.check_epsilon(args.epsilon)
        return _cli_train.run_seeds(args, __name__, fmt, seeds)
    # csv prints the per-episode rows only: the privacy settings go on every row
    _cli_train.emit(args, fmt, *compute(args, fmt), csv_settings=_CSV_SETTINGS)
    return 0


def seed_view(record: dict) -> dict:
    """What ``--seeds`` aggregates of one run: the realised regret per episode against the uniform policy's
    exact expected regret per episode (lower is better).

    Args:
        record: the json record of one run (``compute``).
    """
    refs = record.get("references") or {}
    episodes = record["episodes"]
    np_final = refs.get("non_private_final_regret")
    return {"agent": "pucb", "method": record.get("algorithm"), "utility": "regret_per_episode",
            "utility_label": "cumulative regret per episode (lower is better)", "higher_is_better": False,
            "value": record["final_regret"] / episodes, "value_se": record.get("regret_per_episode_se"),
            "reference": refs.get("random_policy_regret_per_episode"), "reference_se": 0.0,
            "reference_label": "uniform policy (trivial reference, exact expected regret)",
            "non_private": None if np_final is None else np_final / episodes,
            "non_private_label": "non-private baseline (exact counts), same MDP and seed",
            "extra": {"counter_error_within_bound": record.get("counter_error_within_bound")}}


def compute(args: argparse.Namespace, fmt: str) -> tuple:
    """One run of ``privcal train pucb``: (record, text, curve columns, plot spec).

    Args:
        args: the parsed arguments (``args.seed`` set).
        fmt: the output format (text shows a progress bar on stderr).

    Raises:
        ValueError: an argument is outside its range.
    """
    from privcal.rl.pucb.train import train_pucb_unchecked

    settings, mdp = _check(args)
    steps = settings.episodes * settings.runs
    bar = None if fmt != "text" else ProgressBar(steps)

    def progress(offset):  # both runs on one bar: episodes of run 1, then of run 2
        return None if bar is None else (lambda done, total=None: bar(offset + done, steps))

    try:
        run_ = train_pucb_unchecked(mdp, settings, progress)
    finally:
        if bar is not None:
            bar.close()
    return run_.record, _text(run_, settings), *_curves(run_, mdp, settings)


def _check(args: argparse.Namespace) -> tuple:
    """The checked settings and the MDP: (``privcal.rl.pucb.train.TrainSettings``, MDP); refusals name the flag."""
    _cli_out.check_epsilon(args.epsilon)
    from privcal import _validate as V
    from privcal.rl.pucb.experiments import MDP_KINDS, unchecked_make_mdp
    from privcal.rl.pucb.agent import check_counter_noise, check_memory
    from privcal.rl.pucb.train import TrainSettings

    counter_noise = _check_conflicts(args)
    failure_probability, error_bound = _deprecated_spellings(args)
    episodes = V.positive_int("episodes", args.episodes)
    epsilon = None if args.epsilon is None else V.positive("epsilon", args.epsilon)
    delta = None
    if not args.non_private:
        delta = check_counter_noise(counter_noise, epsilon, args.delta, args.budget_split, error_bound)
    states, actions, horizon = (V.positive_int(name, getattr(args, name)) for name in ("states", "actions", "horizon"))
    if args.mdp == "riverswim" and actions != 2:
        raise ValueError(f"--mdp riverswim needs --actions 2 (move left or right), got --actions {actions}")
    check_memory(states, actions, horizon, episodes)  # before the MDP is built
    mdp = unchecked_make_mdp(V.choice("mdp", args.mdp, MDP_KINDS), states, actions, horizon, seed=args.mdp_seed)
    if args.accuracy is not None:
        V.nonnegative("accuracy", args.accuracy)
    settings = TrainSettings(episodes, epsilon, failure_probability, args.seed, budget_split=args.budget_split,
                             error_bound=error_bound, unknown=args.unknown, counter_noise=counter_noise, delta=delta,
                             accuracy=args.accuracy, references=not args.no_references)
    return settings, mdp


def _check_conflicts(args: argparse.Namespace) -> str:
    """Refuse flags that do not go together (one line naming them); returns the counters' noise."""
    if args.non_private and args.epsilon is not None:
        raise ValueError("--epsilon must not be given together with --non-private")
    if args.non_private and (args.counter_noise is not None or args.delta is not None):
        raise ValueError("--counter-noise and --delta must not be given together with --non-private "
                         "(the baseline has exact counters)")
    if args.non_private and (args.error_bound != "valid" or args.budget_split != "valid"):
        raise ValueError("--error-bound and --budget-split must not be given together with --non-private "
                         "(the baseline has exact counters: no error bound, no privacy budget)")
    counter_noise = "laplace" if args.counter_noise is None else args.counter_noise
    if counter_noise == "laplace" and args.delta is not None:
        raise ValueError(f"--delta is used only with --counter-noise gaussian (Laplace counters are pure "
                         f"epsilon-JDP), got --delta {args.delta:g}")
    if counter_noise == "gaussian" and args.delta is None:
        raise ValueError("--counter-noise gaussian needs --delta in (0, 1)")
    if not args.non_private and args.epsilon is None:
        raise ValueError("--epsilon is required (or pass --non-private)")
    return counter_noise


def _deprecated_spellings(args: argparse.Namespace) -> tuple:
    """(failure probability, error-bound rule), each checked; the former spellings --beta and --error-bound union
    warn (DeprecationWarning at the caller of ``compute``) and are read as their new names."""
    import warnings

    from privcal import _validate as V
    from privcal.rl.pucb.agent import check_error_bound

    if args.beta is not None:
        if args.failure_probability is not None:
            raise ValueError("--beta is the former name of --failure-probability; give only one")
        warnings.warn("--beta is deprecated for train pucb (it is a failure probability here, not a kernel "
                      "beta): use --failure-probability", DeprecationWarning, stacklevel=4)
        args.failure_probability = args.beta
    failure_probability = V.open_unit("failure_probability",
                                      0.1 if args.failure_probability is None else args.failure_probability)
    if args.error_bound == "union":
        warnings.warn("--error-bound union is now spelled --error-bound valid", DeprecationWarning, stacklevel=4)
    error_bound = check_error_bound("valid" if args.error_bound == "union" else args.error_bound)
    return failure_probability, error_bound


def _text(run_, settings) -> str:
    """The text report of one run (:func:`compute`)."""
    from privcal.rl.pucb.agent import PRIVACY_UNIT

    out, refs = run_.record, run_.record["references"]
    accuracy, counter_noise, error_bound = out["accuracy"], settings.counter_noise, settings.error_bound
    eps = "non-private" if out["epsilon"] is None else f"epsilon={out['epsilon']:g}"
    lines = [f"{out['algorithm']} ({eps}) on {out['mdp']}, {out['episodes']} episodes, seed {out['seed']}",
             f"  cumulative regret     {out['final_regret']:.3f}  (optimal return "
             f"{out['optimal_return']:.3f} per episode)"]
    if refs:
        if refs["non_private_final_regret"] is not None:
            lines.append(f"  non-private baseline  {refs['non_private_final_regret']:.3f}  (same MDP and seed)")
        lines.append(f"  random policy         {refs['random_policy_final_regret']:.3f}  "
                     f"({refs['random_policy_regret_per_episode']:.3f} per episode, exact)")
    lines.append(f"  suboptimal episodes   {out['suboptimal_episodes']} (regret > {accuracy:.3g})")
    if out["epsilon"] is not None and counter_noise == "gaussian":
        lines.append(f"  counter noise         gaussian, sigma {out['noise_scale']:.4g} per p-sum "
                     f"(({out['jdp_epsilon']:.6g}, {out['delta']:g})-JDP)")
    elif out["epsilon"] is not None:
        lines.append(f"  counter noise         laplace, counter epsilon {out['counter_epsilon']:.4g} "
                     f"(JDP epsilon <= {out['jdp_epsilon']:g}, split {settings.budget_split})")
    if out["epsilon"] is not None:
        lines.append(f"  counter error bound E {out['error_bound']:.4g} ({error_bound}); "
                     f"largest error seen {out['max_counter_error']:.4g}")
        if not out["counter_error_within_bound"]:
            lines.append(f"  BOUND EXCEEDED        a counter's error {out['max_counter_error']:.4g} exceeded its "
                         f"(1 - {settings.failure_probability:g}) bound E = {out['error_bound']:.4g}: the regret "
                         f"analysis does not cover this run")
    if run_.verdict is not None:
        lines.append(f"  verdict               {run_.verdict.line()}")
    lines.append(f"  privacy unit          episode: {PRIVACY_UNIT}")
    lines.append(f"  time                  {out['seconds']:.2f} s")
    return "\n".join(lines)


def _curves(run_, mdp, settings) -> tuple:
    """(curve columns, plot spec) of one run (:func:`compute`)."""
    import numpy as np

    out, refs, cumulative = run_.record, run_.record["references"], run_.result.cumulative_regret
    episode_index = np.arange(1, settings.episodes + 1)
    series = {"episode": episode_index.tolist(), "regret": [float(x) for x in cumulative]}
    if run_.baseline is not None:
        series["non_private_regret"] = [float(x) for x in run_.baseline.cumulative_regret]
    eps = "non-private" if out["epsilon"] is None else f"epsilon={out['epsilon']:g}"
    spec = _cli_train.PlotSpec(
        episode_index, f"{out['algorithm']} ({eps})", cumulative,
        title=f"PUCB on {mdp.name}, seed {settings.seed}", xlabel="episode", ylabel="cumulative regret",
        references={"non-private baseline": series.get("non_private_regret"),
                    "random policy": None if not refs else refs["random_policy_regret_per_episode"] * episode_index})
    return series, spec
