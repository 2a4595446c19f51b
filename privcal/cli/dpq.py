"""``privcal train dpq``: DP Q-learning with functional noise (Wang & Hegde 2019, Alg. 1) or a baseline.

``privcal.cli`` (``privcal/cli/__init__.py``) calls :func:`add_parser` on the subparsers of ``privcal train`` and
``args._run(args)``; bad input raises ``ValueError`` (printed there as one line, exit code 2).
Importing this module needs neither gymnasium nor matplotlib (they are imported inside :func:`run`).
"""

from __future__ import annotations

import argparse
import time

from privcal.cli import out as _cli_out
from privcal.cli import train as _cli_train

__all__ = ["add_parser", "run"]

_METHODS = {"dpq": "dpq", "non-private": "non_private", "input-perturbation": "input_perturbation",
            "dp-sgd": "dpsgd", "bgp16": "bgp16", "select": "select", "fqi-dpsgd": "fqi-dpsgd"}
#: the valid learners of privcal.rl.dpq.learners (their own loop, their own privacy units)
_LEARNERS = ("select", "fqi-dpsgd")


def add_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Add the ``dpq`` subparser to the subparsers of ``privcal train``; sets ``_run=run``; returns it.

    Args:
        subparsers: the subparsers object of ``privcal train`` (``add_subparsers()``).
    """
    p = subparsers.add_parser(
        "dpq", help="DP Q-learning with functional noise (Wang & Hegde 2019, Alg. 1)",
        description="Train Algorithm 1 of Wang & Hegde 2019 (or a baseline of App. E.2) on the "
                    "interval environment of App. E.1 and report the per-episode returns. sigma comes "
                    "from privcal.calibrators.dpq.calibrate for --epsilon/--delta, or is given with --sigma. "
                    "--loop replay runs the paper's Figure 1 experiment as its authors' code runs it "
                    "(replay buffer, RMSprop, target network, beta = 1, sigma set by hand): no valid "
                    "privacy guarantee; --privacy-report says why. --method select and --method fqi-dpsgd run the "
                    "valid learners of privcal.rl.dpq.learners on the random-peak environment and report "
                    "policy_return. Every output names its privacy unit and gives a verdict against the "
                    "trivial reference.")
    p.add_argument("--loop", choices=("algorithm1", "replay"), default="algorithm1",
                   help="algorithm1 (default: Algorithm 1 as printed, with the valid calibration) or replay (the "
                        "paper's experiment as its authors' code runs it; no valid guarantee)")
    p.add_argument("--samples", type=_cli_out.count, default=None,
                   help="algorithm1: T, environment steps (samples) of the run, an int >= 1 (default 5000 = 100 "
                        "episodes of 50 steps; 1e4 accepted); select: steps of its rollouts (default 20000); "
                        "fqi-dpsgd: transitions of its data set, in 50-step episodes (default 5000, episode unit "
                        "50000)")
    p.add_argument("--episodes", type=_cli_out.count, default=None,
                   help="replay: episodes of 50 steps (default 100, the paper's Figure 1)")
    p.add_argument("--epsilon", type=float, default=None,
                   help="target epsilon of the whole run, in (0, 1e6] (no default)")
    p.add_argument("--delta", type=float, default=None, help="target delta of the whole run, in (0, 1) (no default)")
    p.add_argument("--sigma", type=float, default=None,
                   help="noise level given directly, no calibration and no privacy claim: dpq the functional-noise "
                        "standard deviation, input-perturbation the reward-noise std, dp-sgd the noise multiplier z "
                        "(no default)")
    p.add_argument("--beta", type=float, default=None,
                   help="kernel parameter beta of the noise covariance exp(-beta |x - y|), per unit of state "
                        "(default: the calibrator's; with --sigma App. E.3's 2222)")
    p.add_argument("--update-clip", type=float, default=None,
                   help="algorithm1, valid variant: certified bound on how far one update may move Q(s, a) over the "
                        "states [0, 1], in units of Q (= reward); a larger step is scaled back (default "
                        "privcal.calibrators.dpq.DEFAULT_UPDATE_CLIP = 0.01)")
    p.add_argument("--update-lipschitz", type=float, default=None,
                   help="algorithm1, valid variant: certified bound on the Lipschitz constant (in the state) of one "
                        "update's change of Q(., a), in units of Q per unit state; a steeper step is scaled back "
                        "(default privcal.calibrators.dpq.DEFAULT_UPDATE_LIPSCHITZ = 0.02)")
    p.add_argument("--sampler", choices=("privcal", "authors"), default=None,
                   help="replay: noise sampler: privcal (default: exact Ornstein-Uhlenbeck paths, the process the "
                        "paper states) or authors (the authors' lazy sampler, whose right extrapolation conditions "
                        "on the first buffered value: their experimental loop, not the paper)")
    p.add_argument("--resets", type=_cli_out.count, default=None,
                   help="J, times the noise paths are redrawn; must divide floor(T/B) (default floor(T/B), App. E.3)")
    p.add_argument("--variant", choices=("valid", "paper", "corrected"), default="valid",
                   help="calibration: valid (default: the corrected analysis) or paper (the paper's formulas, "
                        "no valid guarantee); corrected is the former name of valid")
    p.add_argument("--method", choices=tuple(_METHODS), default="dpq",
                   help="dpq (Algorithm 1, default), a baseline of App. E.2, or a valid learner: select (private "
                        "selection over 40 public threshold policies, pure epsilon-DP for any change of the data) or "
                        "fqi-dpsgd (fitted-Q iteration by DP-SGD, per-transition or per-episode clipping); these two "
                        "run on the random-peak environment and report policy_return and a verdict")
    p.add_argument("--privacy-unit", choices=("reward-function", "transition", "episode"), default=None,
                   help="what one neighbouring change is: reward-function (the paper's relation: any change of the "
                        "data here; Algorithm 1, its baselines and select), transition or episode (fqi-dpsgd; "
                        "select covers them too). A unit the method cannot protect is refused (default: "
                        "reward-function; fqi-dpsgd transition)")
    p.add_argument("--selector", choices=("randomized-response", "exponential", "noisy-max"), default=None,
                   help="select: the selection mechanism, all pure epsilon-DP (default randomized-response)")
    p.add_argument("--policies", type=_cli_out.count, default=None,
                   help="select: K, the number of public threshold policies, an int >= 2 (default 40)")
    p.add_argument("--peak", type=float, default=None,
                   help="select and fqi-dpsgd: the reward's peak theta in [0, 1] (default: drawn from --seed, the "
                        "random-peak environment; 0.5 is App. E.1's reward)")
    p.add_argument("--batch-size", type=_cli_out.count, default=None,
                   help="B, samples per update (default 64, App. E.3; replay: 128, the authors' code)")
    p.add_argument("--lr", type=float, default=None,
                   help="learning rate alpha (default App. E.3's 3e-4, with which 78 SGD updates learn nothing; "
                        "replay: 1e-2 for RMSprop, the authors' code)")
    p.add_argument("--optimizer", choices=("rmsprop", "adam", "sgd"), default=None,
                   help="replay: optimizer of the one update per environment step (default rmsprop, the authors')")
    p.add_argument("--buffer-size", type=_cli_out.count, default=None,
                   help="replay: transitions kept in the replay buffer (default 10000)")
    p.add_argument("--target-update", type=_cli_out.count, default=None,
                   help="replay: episodes between copies of the network to the target network (default 10)")
    p.add_argument("--noise-reset", choices=("episode", "update", "never"), default=None,
                   help="replay: when the noise paths are redrawn (default episode, the authors' code)")
    p.add_argument("--privacy-report", action="store_true",
                   help="replay: also report what a valid analysis of the loop would need (releases, reward and "
                        "noise reuse, failed premises; with --epsilon/--delta the sigma an idealised analysis "
                        "needs, from per-update sensitivities measured in the run); default off")
    p.add_argument("--lipschitz", type=float, default=None,
                   help="algorithm1: Lipschitz constant L enforced on Q(., a), per unit of state (default 4)")
    p.add_argument("--gamma", type=float, default=None,
                   help="discount factor, in [0, 1) (default 0.5; replay: 0.999, the authors' code)")
    p.add_argument("--seed", type=_cli_out.seed, default=0, help="seed of everything (default 0)")
    _cli_train.add_output_flags(p)
    p.set_defaults(_run=run)
    return p


def _hyperparameters(args):
    from privcal.rl.dpq.agent import Hyperparameters

    kw = {"samples": 5000 if args.samples is None else args.samples,
          "batch_size": 64 if args.batch_size is None else args.batch_size,
          "lipschitz": 4.0 if args.lipschitz is None else args.lipschitz}
    if args.update_clip is not None:
        kw["update_clip"] = args.update_clip
    if args.update_lipschitz is not None:
        kw["update_lipschitz"] = args.update_lipschitz
    if args.lr is not None:
        kw["lr"] = args.lr
    if args.gamma is not None:
        kw["gamma"] = args.gamma
    return Hyperparameters(**kw)


def _train(args, hp, progress):
    from privcal import _validate as V
    from privcal.rl.dpq import agent as dpq_agent
    from privcal.rl.dpq.experiments import unchecked_noise_for

    method = _METHODS[args.method]
    targeted = args.epsilon is not None or args.delta is not None
    if targeted and (args.epsilon is None or args.delta is None):
        raise ValueError("give both --epsilon and --delta (or --sigma)")
    if targeted and args.sigma is not None:
        raise ValueError("give either --sigma or the target --epsilon/--delta, not both")
    if method == "non_private" and (targeted or args.sigma is not None):
        raise ValueError("--method non-private takes no --sigma, --epsilon or --delta")
    if args.variant != "valid" and method != "dpq" and not targeted:  # ignored flags are refused
        raise ValueError(f"--variant {args.variant} chooses a calibration: --method {args.method} takes it only "
                         "with --epsilon/--delta" if method != "non_private" else
                         "--method non-private takes no --variant (there is no calibration)")
    if method == "dpq":
        if args.sigma is None and not targeted:
            raise ValueError("give --sigma or both --epsilon and --delta")
        if args.variant == "paper" and args.update_clip is not None:
            raise ValueError("--update-clip applies only to --variant valid (the paper variant runs plain SGD "
                             "steps, with no clip)")
        return dpq_agent.train_dpq(epsilon=args.epsilon, delta=args.delta, sigma=args.sigma, beta=args.beta,
                                   resets=args.resets, variant=args.variant, hp=hp, seed=args.seed,
                                   progress=progress)
    if args.beta is not None:
        raise ValueError("--beta applies only to --method dpq")
    if args.update_clip is not None or args.update_lipschitz is not None:
        raise ValueError("--update-clip and --update-lipschitz apply only to --method dpq")
    if args.resets is not None and method != "bgp16":
        raise ValueError("--resets applies only to --method dpq and bgp16")
    sigma, guarantee = args.sigma, "sigma given directly: no privacy claim computed"
    if method == "non_private":
        sigma, guarantee = None, "none (non-private)"
    elif sigma is None:
        if not targeted:
            raise ValueError("give --sigma or both --epsilon and --delta")
        ns = unchecked_noise_for(method, args.epsilon, args.delta, hp, args.variant)  # the calibrators check the target
        if ns.infeasible:
            from privcal.errors import InfeasibleError

            raise InfeasibleError(ns.infeasible)
        sigma, guarantee = ns.sigma, f"{'DP' if ns.dp else 'not DP w.r.t. reward functions'}: {ns.source}"
    # checked once here (given or calibrated), as train would, then the run trusts them (train_unchecked)
    sigma = None if sigma is None else V.positive("sigma", sigma)
    resets = None
    if method == "bgp16":
        resets = hp.updates if args.resets is None else dpq_agent.check_resets(args.resets, hp.updates)
    return dpq_agent.train_unchecked(method, hp=hp, sigma=sigma, beta=None, resets=resets, epsilon=args.epsilon,
                                     delta=args.delta, guarantee=guarantee, seed=args.seed, progress=progress)


def _references(non_private_last10) -> dict:
    """The reference returns of the interval environment, and the non-private baseline's (or None)."""
    from privcal.rl.envs import reference_return_unchecked as reference_return  # its defaults: nothing to check

    random_mean, random_se = reference_return("random")
    middle_mean, middle_se = reference_return("middle")
    return {"random_policy_return": random_mean, "random_policy_return_se": random_se,
            "move_to_middle_return": middle_mean, "move_to_middle_return_se": middle_se,
            "non_private_last10": non_private_last10}


def _reference_lines(refs: dict) -> list:
    lines = []
    if refs and refs["non_private_last10"] is not None:
        lines.append(f"  non-private baseline  last 10 {refs['non_private_last10']:.3f} (same seed)")
    if refs:
        lines.append(f"  random policy         {refs['random_policy_return']:.2f} +- {refs['random_policy_return_se']:.2f}; "
                     f"move to the middle {refs['move_to_middle_return']:.2f} (per episode, simulated)")
    return lines


def _verdict(returns, refs, lines) -> dict:
    """The one-seed verdict of a training curve against the random policy (last 10 episodes, their
    standard error); appends its text line to ``lines``; {} without references."""
    import numpy as np

    from privcal.rl.verdict import verdict_one_run

    from privcal.rl.verdict import no_reference

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


def _run_learner(args: argparse.Namespace, fmt: str) -> int:
    """``privcal train dpq --method select|fqi-dpsgd`` (privcal.rl.dpq.learners)."""
    from privcal.rl.dpq.learners import run_learner

    wrong = [f for f, v in (("--sigma", args.sigma), ("--beta", args.beta), ("--update-clip", args.update_clip),
                            ("--resets", args.resets), ("--batch-size", args.batch_size), ("--lr", args.lr),
                            ("--optimizer", args.optimizer), ("--buffer-size", args.buffer_size),
                            ("--target-update", args.target_update), ("--noise-reset", args.noise_reset),
                            ("--lipschitz", args.lipschitz), ("--gamma", args.gamma), ("--episodes", args.episodes),
                            ("--plot", args.plot), ("--update-lipschitz", args.update_lipschitz),
                            ("--sampler", args.sampler)) if v is not None]
    if args.privacy_report:
        wrong.append("--privacy-report")
    if args.loop != "algorithm1" or args.variant != "valid":
        wrong.append("--loop" if args.loop != "algorithm1" else "--variant")
    if args.method == "fqi-dpsgd":
        wrong += [f for f, v in (("--selector", args.selector), ("--policies", args.policies)) if v is not None]
    if wrong:
        raise ValueError(f"{', '.join(wrong)} does not apply to --method {args.method}")
    if args.epsilon is None or (args.delta is None and args.method == "fqi-dpsgd"):
        raise ValueError(f"--method {args.method} needs --epsilon" + (" and --delta" if args.method == "fqi-dpsgd"
                                                                       else ""))
    run = run_learner(args.method, epsilon=args.epsilon, delta=args.delta, privacy_unit=args.privacy_unit,
                      samples=args.samples, selector=args.selector or "randomized-response",
                      policies=40 if args.policies is None else args.policies, peak=args.peak,
                      references=not args.no_references, seed=args.seed)
    _cli_train.emit(args, fmt, run.record, run.text, None, None)
    return 0


#: bytes a run holds per sample, roughly: each revealed state is stored on every action's noise path
#: (16 bytes in the path's store, 16 in its flat copy) plus the episode bookkeeping
_BYTES_PER_SAMPLE_PER_ACTION = 48
_MEMORY_BUDGET = 4 * 2**30


def _check_memory(samples: int, actions: int = 2) -> None:
    need = samples * (_BYTES_PER_SAMPLE_PER_ACTION * actions + 64)
    if need > _MEMORY_BUDGET:
        most = _MEMORY_BUDGET // (_BYTES_PER_SAMPLE_PER_ACTION * actions + 64)
        raise ValueError(f"--samples {samples} needs about {need / 2**30:.3g} GiB, more than the memory budget of "
                         f"{_MEMORY_BUDGET / 2**30:g} GiB (at most {most} samples)")


def run(args: argparse.Namespace) -> int:
    """Execute ``privcal train dpq``; prints the result in the chosen format, returns 0.

    Args:
        args: the parsed arguments of ``privcal train dpq``.

    Raises:
        ValueError: bad input (the CLI prints it as one line, exit code 2).
        InfeasibleError: no valid sigma for the target.
    """
    import warnings

    import numpy as np

    from privcal.rl.dpq import agent as dpq_agent
    from privcal.cli.progress import ProgressBar
    fmt = _cli_train.check_output_flags(args)
    if args.method in _LEARNERS:
        return _run_learner(args, fmt)
    given = [f for f, v in (("--selector", args.selector), ("--policies", args.policies), ("--peak", args.peak))
             if v is not None]
    if given:
        raise ValueError(f"{', '.join(given)} applies only to --method select and fqi-dpsgd")
    from privcal.rl.units import check_unit

    unit = check_unit("reward-function" if args.privacy_unit is None else args.privacy_unit, ("reward-function",),
                      f"--method {args.method}" + (" --loop replay" if args.loop == "replay" else ""))
    if args.loop == "replay":
        return _run_replay(args, fmt)
    given = [f for f, v in (("--episodes", args.episodes), ("--optimizer", args.optimizer),
                            ("--buffer-size", args.buffer_size), ("--target-update", args.target_update),
                            ("--noise-reset", args.noise_reset), ("--sampler", args.sampler)) if v is not None]
    if args.privacy_report:
        given.append("--privacy-report")
    if given:
        raise ValueError(f"{', '.join(given)} applies only to --loop replay")
    if args.variant == "corrected":
        warnings.warn("--variant corrected is now spelled --variant valid", DeprecationWarning, stacklevel=2)
        args.variant = "valid"
    hp = _hyperparameters(args)  # validates every learner setting once (Hyperparameters)
    _check_memory(hp.samples)
    references = not args.no_references and args.method != "non-private"
    runs = 2 if references else 1
    bar = None if fmt != "text" else ProgressBar(hp.samples * runs, label=args.method)

    def progress(offset):
        return None if bar is None else (lambda done, total=None: bar(offset + done, hp.samples * runs))

    start = time.perf_counter()
    try:
        result = _train(args, hp, progress(0))
        baseline = None
        if references:
            baseline = dpq_agent.train_unchecked("non_private", hp=hp, sigma=None, beta=None, resets=None,
                                                 seed=args.seed, progress=progress(hp.samples))
    finally:
        if bar is not None:
            bar.close()
    seconds = time.perf_counter() - start
    out = result.to_dict()
    out["method"] = args.method  # the flag's spelling
    out["variant"] = args.variant if args.method != "non-private" else None
    r = np.asarray(result.episode_returns, dtype=float)
    out.pop("episode_returns", None)  # in the series (csv rows; json keeps the key)
    refs = {} if args.no_references else _references(
        None if baseline is None else float(np.mean(baseline.episode_returns[-10:])))
    out["references"] = refs
    out["privacy_unit"] = None if args.method == "non-private" else unit
    # every update uses its whole batch of the latest samples (no subsampling, no amplification claimed)
    out["sampling"] = None if args.method == "non-private" else "full_batch"
    lines_out = []
    out.update(_verdict(r, refs, lines_out))
    out["seconds"] = seconds
    episodes = np.arange(1, len(r) + 1)
    series = {"episode": episodes.tolist(), "episode_returns": [float(x) for x in r]}
    if baseline is not None:
        series["non_private_return"] = [float(x) for x in baseline.episode_returns]
    lines = [f"{args.method} on privcal/Interval-v0, T={hp.samples}, B={hp.batch_size}, "
             f"lr={hp.lr:g}, L={hp.lipschitz:g}, gamma={hp.gamma:g}, seed {args.seed}"]
    if result.sigma is not None:
        extra = f", beta={result.beta:.5g}, J={result.resets}" if result.beta is not None else ""
        lines.append(f"  sigma                 {result.sigma:.5g}{extra}")
    lines.append(f"  privacy               {result.guarantee}")
    for premise in out.get("premises", ()):
        if not premise["held"]:
            lines.append(f"  premise failed        {premise['name']}: {premise['evidence']}")
    if len(r):
        lines.append(f"  episodes              {len(r)}; mean return first 10 {r[:10].mean():.3f}, "
                     f"last 10 {r[-10:].mean():.3f}")
    lines += _reference_lines(refs)
    lines.append(f"  privacy unit          {unit}")
    if args.method != "non-private":
        lines.append("  batch sampler         full_batch: every update uses its whole batch (no subsampling)")
    lines += lines_out
    lines.append(f"  time                  {seconds:.2f} s")
    noise = "no noise" if result.sigma is None else f"σ = {result.sigma:.4g}"
    target = (f"ε = {args.epsilon:g}, δ = {args.delta:g}, " if args.epsilon is not None
              else "no privacy target, " if result.sigma is None else "σ given (no privacy claim), ")
    spec = _plot_spec(episodes, args.method, r,
                      f"{args.method} on the interval environment: {target}{noise}; T = {hp.samples}, seed {args.seed}",
                      series, refs)
    _cli_train.emit(args, fmt, out, "\n".join(lines), series, spec)
    return 0



def _run_replay(args: argparse.Namespace, fmt: str) -> int:
    """``privcal train dpq --loop replay``: the authors' loop (privcal.rl.dpq.replay), no valid guarantee."""
    from dataclasses import replace

    import numpy as np

    from privcal import _validate as V
    from privcal.rl.dpq import replay as dpq_replay
    from privcal.cli.progress import ProgressBar

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
    steps = config.episodes * config.episode_steps
    _check_memory(steps)
    references = not args.no_references and config.sigma > 0
    runs = 2 if references else 1
    bar = None if fmt != "text" else ProgressBar(steps * runs, label="replay")

    def progress(offset):
        return None if bar is None else (lambda done, total=None: bar(offset + done, steps * runs))

    start = time.perf_counter()
    try:
        result = dpq_replay.train_replay(config, seed=args.seed, measure_sensitivity=targeted, progress=progress(0))
        baseline = None
        if references:
            baseline = dpq_replay.train_replay(replace(config, sigma=0.0), seed=args.seed, progress=progress(steps))
    finally:
        if bar is not None:
            bar.close()
    seconds = time.perf_counter() - start
    out = result.to_dict()
    out.pop("episode_returns", None)
    refs = {} if args.no_references else _references(None if baseline is None else baseline.mean_return(10))
    out["references"] = refs
    out["privacy_unit"] = "reward-function"
    r_all = np.asarray(result.episode_returns, dtype=float)
    verdict_lines = []
    out.update(_verdict(r_all, refs, verdict_lines))
    report = None
    if args.privacy_report:
        report = dpq_replay.replay_privacy_report(config, epsilon=args.epsilon, delta=args.delta,
                                                  update_sensitivities=result.update_sensitivities)
        out["privacy_report"] = report.to_dict()
    out["seconds"] = seconds
    r = np.asarray(result.episode_returns, dtype=float)
    episodes = np.arange(1, len(r) + 1)
    series = {"episode": episodes.tolist(), "episode_returns": [float(x) for x in r]}
    if baseline is not None:
        series["non_private_return"] = [float(x) for x in baseline.episode_returns]
    lines = [f"replay loop (the paper's experiment as its authors' code runs it) on privcal/Interval-v0, "
             f"{config.episodes} episodes, {config.optimizer} lr={config.lr:g}, B={config.batch_size}, "
             f"gamma={config.gamma:g}, seed {args.seed}",
             f"  sigma                 {config.sigma:.5g} (set by hand), beta={config.beta:g}, noise reset every "
             f"{config.noise_reset}, sampler {config.sampler}"
             + (" (the authors' experimental loop, not the paper)" if config.sampler == "authors" else ""),
             f"  privacy               {result.guarantee}",
             f"  episodes              {len(r)}; mean return first 10 {r[:10].mean():.3f}, last 10 {r[-10:].mean():.3f}"]
    lines += _reference_lines(refs)
    lines.append("  privacy unit          reward-function (the paper's relation; no valid guarantee here)")
    lines += verdict_lines
    if report is not None:
        lines += ["  " + line for line in report.describe().splitlines()]
    lines.append(f"  time                  {seconds:.2f} s")
    spec = _plot_spec(episodes, f"replay loop, sigma {config.sigma:g}", r,
                      f"The paper's experiment as run (replay loop), seed {args.seed}; no valid guarantee", series, refs)
    _cli_train.emit(args, fmt, out, "\n".join(lines), series, spec)
    return 0


def _plot_spec(episodes, label: str, returns, title: str, series: dict, refs: dict):
    """The picture of a DP-Q run: its returns per episode against the non-private baseline, the random
    policy and move-to-the-middle (the references it was run with)."""
    return _cli_train.PlotSpec(
        episodes, label, returns, title=title, xlabel="episode", ylabel="return per episode (50 steps)",
        references={"non-private baseline": series.get("non_private_return"),
                    "random policy": refs.get("random_policy_return"),
                    "move to the middle": refs.get("move_to_middle_return")})
