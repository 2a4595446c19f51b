"""``privcal train dpq --loop replay``: the authors' experimental loop as their code and appendix run it
(``privcal.rl.dpq.replay``), labelled as carrying no valid guarantee: its configuration from the flags, the runs,
the one-seed verdict against the random policy and the text."""

from __future__ import annotations

import argparse
import time

from privcal.cli.dpq_report import check_memory, plot_spec, reference_lines, references

__all__ = ["compute_replay"]


def compute_replay(args: argparse.Namespace, fmt: str) -> tuple:
    """``privcal train dpq --loop replay``: the authors' loop (privcal.rl.dpq.replay), no valid guarantee.

    Args:
        args: the parsed command line.
        fmt: the output format.

    Returns:
        (record, text, series, picture spec).
    """
    import numpy as np

    from privcal.rl.dpq import replay as dpq_replay

    config, targeted = _replay_config(args)
    start = time.perf_counter()
    result, baseline = _replay_runs(args, config, fmt, targeted)
    seconds = time.perf_counter() - start
    out = result.to_dict()
    out.pop("episode_returns", None)
    refs = {} if args.no_references else references(None if baseline is None else baseline.mean_return(10))
    out["references"] = refs
    out["privacy_unit"] = "reward-function"
    verdict_lines = []
    out.update(_verdict(np.asarray(result.episode_returns, dtype=float), refs, verdict_lines))
    report = None
    if args.privacy_report:
        report = dpq_replay.replay_privacy_report(config, epsilon=args.epsilon, delta=args.delta,
                                                  update_sensitivities=result.update_sensitivities)
        out["privacy_report"] = report.to_dict()
    out["seconds"] = seconds
    r = np.asarray(result.episode_returns, dtype=float)
    series = {"episode": np.arange(1, len(r) + 1).tolist(), "episode_returns": [float(x) for x in r]}
    if baseline is not None:
        series["non_private_return"] = [float(x) for x in baseline.episode_returns]
    spec = plot_spec(np.arange(1, len(r) + 1), f"replay loop, sigma {config.sigma:g}", r,
                      f"The paper's experiment as run (replay loop), seed {args.seed}; no valid guarantee", series, refs)
    return out, _replay_text(args, config, result, refs, verdict_lines, report, seconds), series, spec


def _replay_config(args: argparse.Namespace) -> tuple:
    """(the replay loop's ``ReplayConfig``, whether a privacy target was given); flags of the other loop refused."""
    from dataclasses import replace

    from privcal import _validate as V
    from privcal.rl.dpq import replay as dpq_replay

    wrong = [f for f, v in (("--samples", args.samples), ("--resets", args.resets), ("--lipschitz", args.lipschitz),
                            ("--update-clip", args.update_clip), ("--update-lipschitz", args.update_lipschitz))
             if v is not None]
    if args.variant != "valid":
        wrong.append("--variant")
    if args.method != "dpq":
        wrong.append("--method")
    if wrong:
        raise ValueError(f"{', '.join(wrong)} applies only to --loop algorithm1 (replay: --episodes, --sigma set by hand)")
    targeted = args.epsilon is not None or args.delta is not None
    if targeted and not args.privacy_report:
        raise ValueError("--loop replay sets sigma by hand (--sigma): --epsilon/--delta apply only with --privacy-report")
    if targeted and (args.epsilon is None or args.delta is None):
        raise ValueError("--privacy-report needs both --epsilon and --delta (or neither)")
    fields = {"sigma": args.sigma, "episodes": args.episodes, "batch_size": args.batch_size, "lr": args.lr,
              "gamma": args.gamma, "beta": args.beta, "optimizer": args.optimizer, "buffer_size": args.buffer_size,
              "target_update": args.target_update, "noise_reset": args.noise_reset, "sampler": args.sampler}
    config = replace(dpq_replay.ReplayConfig(), **{k: v for k, v in fields.items() if v is not None})
    if args.sigma is not None:
        V.nonnegative("sigma", args.sigma)
    check_memory(config.episodes * config.episode_steps)
    return config, targeted


def _replay_runs(args: argparse.Namespace, config, fmt: str, targeted: bool) -> tuple:
    """(the replay run, its noiseless baseline or None), both on one progress bar (text format only)."""
    from dataclasses import replace

    from privcal.cli.progress import ProgressBar
    from privcal.rl.dpq import replay as dpq_replay

    steps = config.episodes * config.episode_steps
    references = not args.no_references and config.sigma > 0
    runs = 2 if references else 1
    bar = None if fmt != "text" else ProgressBar(steps * runs, label="replay")

    def progress(offset):
        return None if bar is None else (lambda done, total=None: bar(offset + done, steps * runs))

    try:
        result = dpq_replay.train_replay(config, seed=args.seed, measure_sensitivity=targeted, progress=progress(0))
        baseline = None
        if references:
            baseline = dpq_replay.train_replay(replace(config, sigma=0.0), seed=args.seed, progress=progress(steps))
    finally:
        if bar is not None:
            bar.close()
    return result, baseline


def _replay_text(args, config, result, refs: dict, verdict_lines: list, report, seconds: float) -> str:
    """The text output of a replay-loop run."""
    import numpy as np

    r = np.asarray(result.episode_returns, dtype=float)
    lines = [f"replay loop (the paper's experiment as its authors' code runs it) on privcal/Interval-v0, "
             f"{config.episodes} episodes, {config.optimizer} lr={config.lr:g}, B={config.batch_size}, "
             f"gamma={config.gamma:g}, seed {args.seed}",
             f"  sigma                 {config.sigma:.5g} (set by hand), beta={config.beta:g}, noise reset every "
             f"{config.noise_reset}, sampler {config.sampler}"
             + (" (the authors' experimental loop, not the paper)" if config.sampler == "authors" else ""),
             f"  privacy               {result.guarantee}",
             f"  episodes              {len(r)}; mean return first 10 {r[:10].mean():.3f}, last 10 {r[-10:].mean():.3f}"]
    lines += reference_lines(refs)
    lines.append("  privacy unit          reward-function (the paper's relation; no valid guarantee here)")
    lines += verdict_lines
    if report is not None:
        lines += ["  " + line for line in report.describe().splitlines()]
    lines.append(f"  time                  {seconds:.2f} s")
    return "\n".join(lines)


def _verdict(returns, refs, lines) -> dict:
    """The one-seed verdict of the replay loop's training curve against the random policy (last 10 episodes,
    their standard error); appends its text line to ``lines``."""
    import numpy as np

    from privcal.rl.verdict import no_reference, verdict_one_run

    if not refs:
        return no_reference("--no-references")
    if len(returns) < 2:
        return no_reference("fewer than 2 complete episodes")
    last = np.asarray(returns[-10:], dtype=float)
    v = verdict_one_run(float(last.mean()), refs["random_policy_return"], higher_is_better=True,
                        reference_label="random policy (trivial reference of the fixed-reward environment)",
                        value_se=float(last.std(ddof=1) / np.sqrt(last.size)),
                        reference_se=refs["random_policy_return_se"])
    lines.append(f"  verdict               {v.line()} (last {last.size} training episodes)")
    return {"verdict": v.verdict, "verdict_test": v.to_dict()}
