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
from privcal.cli.dpq_replay import compute_replay
from privcal.cli.dpq_report import check_memory, plot_spec, reference_lines, references

__all__ = ["add_parser", "run", "compute", "seed_view"]

_METHODS = {"dpq": "dpq", "non-private": "non_private", "input-perturbation": "input_perturbation",
            "dp-sgd": "dpsgd", "bgp16": "bgp16", "select": "select", "fqi-dpsgd": "fqi-dpsgd"}
#: the valid learners of privcal.rl.dpq.learners (their own loop, their own privacy units)
_LEARNERS = ("select", "fqi-dpsgd")
#: the interval environment's variants (``privcal frontier --environment``'s spelling)
_ENVIRONMENTS = ("random-peak", "fixed")
#: simulated episodes that estimate Algorithm 1's released greedy policy's return (seed [seed, 31]), as
#: ``privcal frontier dpq`` does: every one queries the released noise paths at new states
_EVAL_EPISODES = 500


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
                    "valid learners of privcal.rl.dpq.learners on the random-peak environment. Algorithm 1 runs "
                    "on App. E.1's fixed reward or, with --environment random-peak, on the random-peak one. Every "
                    "run reports policy_return (the released greedy policy's return per episode), names its "
                    "privacy unit and gives a verdict against the best data-independent (0-DP) policy of its "
                    "environment; --seeds 0-19 runs several seeds in parallel and adds the mean, a 95%% "
                    "Student-t interval and the verdict over seeds.")
    _add_loop_flags(p)
    _add_privacy_flags(p)
    _add_learner_flags(p)
    _add_replay_flags(p)
    _add_environment_flags(p)
    _cli_train.add_seed_flags(p, "seed of everything")
    _cli_train.add_output_flags(p)
    p.set_defaults(_run=run)
    return p



def _add_loop_flags(p: argparse.ArgumentParser) -> None:
    """The loop (the paper's Algorithm 1 or the authors' replay loop) and the run's length."""
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


def _add_privacy_flags(p: argparse.ArgumentParser) -> None:
    """The privacy target or the noise, and the update certificate's bounds."""
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


def _add_learner_flags(p: argparse.ArgumentParser) -> None:
    """The learner and its privacy unit (Algorithm 1's baselines and the valid learners)."""
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


def _add_replay_flags(p: argparse.ArgumentParser) -> None:
    """The replay loop's settings (the authors' code)."""
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


def _add_environment_flags(p: argparse.ArgumentParser) -> None:
    """The network's bound, the discount, the environment and DP-SGD's sampling."""
    p.add_argument("--lipschitz", type=float, default=None,
                   help="algorithm1: Lipschitz constant L enforced on Q(., a), per unit of state (default 4)")
    p.add_argument("--gamma", type=float, default=None,
                   help="discount factor, in [0, 1) (default 0.5; replay: 0.999, the authors' code)")
    p.add_argument("--environment", choices=_ENVIRONMENTS, default=None,
                   help="random-peak (the reward's peak theta drawn from the seed, the frontier's spelling; the "
                        "verdict's reference is the best data-independent policy in expectation over theta, "
                        "move-to-middle, 12.22) or fixed (App. E.1's reward, peak 0.5; reference move-to-middle, "
                        "20.71, optimal and 0-DP) (default: fixed for Algorithm 1 and its baselines, random-peak "
                        "for select and fqi-dpsgd)")
    p.add_argument("--expected-batch-size", type=float, default=None,
                   help="fqi-dpsgd: b, the expected records per DP-SGD step, a public number > 0; with the public size "
                        "N it sets the Poisson rate q = min(1, b / N) and the step's normaliser q N (default 256 "
                        "transitions or 16 episodes)")
    p.add_argument("--public-size", type=_cli_out.count, default=None,
                   help="fqi-dpsgd: N, the public size of the data set in records (transitions, or episodes for the "
                        "episode unit) from which q = min(1, b / N) is set; the data's own size is never read "
                        "(default: the data budget of --samples)")


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


def _train(args, hp, progress, env):
    """One Algorithm 1 run or baseline of App. E.2 from the flags (``hp`` checked): the agent's result."""
    from privcal import _validate as V
    from privcal.rl.dpq import agent as dpq_agent
    from privcal.rl.dpq.run import RunNoise, run_unchecked

    method = _METHODS[args.method]
    targeted = args.epsilon is not None or args.delta is not None
    _check_noise_flags(args, method, targeted)
    if method == "dpq":
        return dpq_agent.train_dpq(epsilon=args.epsilon, delta=args.delta, sigma=args.sigma, beta=args.beta,
                                   resets=args.resets, variant=args.variant, hp=hp, seed=args.seed,
                                   env=env, progress=progress)
    sigma, guarantee = _baseline_noise(args, hp, method, targeted)
    # checked once here (given or calibrated), as train would, then the run trusts them (run_unchecked)
    sigma = None if sigma is None else V.positive("sigma", sigma)
    resets = None
    if method == "bgp16":
        resets = hp.updates if args.resets is None else dpq_agent.check_resets(args.resets, hp.updates)
    return run_unchecked(RunNoise(method, sigma, None, resets), hp, args.seed, env, progress, epsilon=args.epsilon,
                         delta=args.delta, guarantee=guarantee)


def _check_noise_flags(args, method: str, targeted: bool) -> None:
    """Refuse noise flags that do not fit the method (one line naming them), in the order they are read."""
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
        return
    if args.beta is not None:
        raise ValueError("--beta applies only to --method dpq")
    if args.update_clip is not None or args.update_lipschitz is not None:
        raise ValueError("--update-clip and --update-lipschitz apply only to --method dpq")
    if args.resets is not None and method != "bgp16":
        raise ValueError("--resets applies only to --method dpq and bgp16")


def _baseline_noise(args, hp, method: str, targeted: bool) -> tuple:
    """(sigma, guarantee) of a baseline: given, none (non-private) or calibrated for the target."""
    from privcal.rl.dpq.experiments import unchecked_noise_for

    if method == "non_private":
        return None, "none (non-private)"
    if args.sigma is not None:
        return args.sigma, "sigma given directly: no privacy claim computed"
    if not targeted:
        raise ValueError("give --sigma or both --epsilon and --delta")
    ns = unchecked_noise_for(method, args.epsilon, args.delta, hp, args.variant)  # the calibrators check the target
    if ns.infeasible:
        from privcal.errors import InfeasibleError

        raise InfeasibleError(ns.infeasible)
    return ns.sigma, f"{'DP' if ns.dp else 'not DP w.r.t. reward functions'}: {ns.source}"

def _algorithm1_references(environment: str, peak: float, seed: int, baseline, baseline_label: str) -> dict:
    """The references of an Algorithm-1 run: the best data-independent (0-DP) policy of its environment (the
    verdict's), the policies beside it, and the baseline's released greedy policy."""
    import numpy as np

    from privcal.rl import envs

    # the evaluation's numbers are constants here (the flags --episodes and --peak belong to other loops)
    base = None if baseline is None else envs.policy_return_unchecked(baseline.greedy_actions, peak,
                                                                      episodes=_EVAL_EPISODES, seed=[seed, 31])
    last10 = None if baseline is None else float(np.mean(baseline.episode_returns[-10:]))
    if environment == "fixed":
        refs = references(last10)
        refs.update(best_data_independent_return=refs["move_to_middle_return"],
                    best_data_independent_return_se=refs["move_to_middle_return_se"],
                    best_data_independent_label="best data-independent (0-DP) policy of the fixed reward "
                                                "(move-to-middle, optimal there)")
    else:
        best, best_se = envs.trivial_return_unchecked()
        mid, mid_se = envs.policy_return_unchecked(envs.middle_policy, peak, episodes=_EVAL_EPISODES, seed=[seed, 31])
        opt, opt_se = envs.policy_return_unchecked(lambda s: (s < peak).astype(np.intp), peak,
                                                   episodes=_EVAL_EPISODES, seed=[seed, 31])
        refs = {"best_data_independent_return": best, "best_data_independent_return_se": best_se,
                "best_data_independent_label": "best data-independent policy in expectation over theta "
                                               "(move-to-middle)",
                "data_independent_return_at_peak": mid, "data_independent_return_at_peak_se": mid_se,
                "threshold_at_peak_return": opt, "threshold_at_peak_return_se": opt_se,
                "non_private_last10": last10}
    refs["non_private_policy_return"] = None if base is None else base[0]
    refs["non_private_policy_return_se"] = None if base is None else base[1]
    refs["non_private_learner"] = None if baseline is None else baseline_label
    return refs


def _policy_verdict(value: float, value_se: float, refs: dict, lines: list) -> dict:
    """The one-seed verdict of Algorithm 1's released greedy policy against the best 0-DP policy of its
    environment (both returns simulated, with their standard errors); appends its text line."""
    from privcal.rl.verdict import no_reference, verdict_one_run

    if not refs:
        return no_reference("--no-references")
    v = verdict_one_run(value, refs["best_data_independent_return"], higher_is_better=True,
                        reference_label=refs["best_data_independent_label"], value_se=value_se,
                        reference_se=refs["best_data_independent_return_se"])
    lines.append(f"  verdict               {v.line()} (released greedy policy, {_EVAL_EPISODES} simulated episodes)")
    return {"verdict": v.verdict, "verdict_test": v.to_dict()}


def _compute_learner(args: argparse.Namespace) -> tuple:
    """``privcal train dpq --method select|fqi-dpsgd`` (privcal.rl.dpq.learners): (record, text, None, None)."""
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
    else:
        wrong += [f for f, v in (("--expected-batch-size", args.expected_batch_size),
                                 ("--public-size", args.public_size)) if v is not None]
    if wrong:
        raise ValueError(f"{', '.join(wrong)} does not apply to --method {args.method}")
    if args.environment == "fixed":
        raise ValueError(f"--environment fixed does not apply to --method {args.method}: on App. E.1's fixed reward "
                         "the data-independent move-to-middle policy is optimal and 0-DP, so there is nothing to "
                         "learn (--peak 0.5 runs the learner on that reward)")
    if args.epsilon is None or (args.delta is None and args.method == "fqi-dpsgd"):
        raise ValueError(f"--method {args.method} needs --epsilon" + (" and --delta" if args.method == "fqi-dpsgd"
                                                                       else ""))
    extra = {}
    if args.method == "fqi-dpsgd":
        extra = {"expected_batch_size": args.expected_batch_size, "public_size": args.public_size}
    run = run_learner(args.method, epsilon=args.epsilon, delta=args.delta, privacy_unit=args.privacy_unit,
                      samples=args.samples, selector=args.selector or "randomized-response",
                      policies=40 if args.policies is None else args.policies, peak=args.peak,
                      references=not args.no_references, seed=args.seed, **extra)
    return run.record, run.text, None, None


def seed_view(record: dict) -> dict:
    """What ``--seeds`` aggregates of one run's record: its utility, the trivial reference and the baseline.

    Algorithm 1 and the valid learners: the released greedy policy's return per episode against the best
    data-independent (0-DP) policy of the environment; the replay loop: the mean return of the last 10
    training episodes against the random policy.

    Args:
        record: the json record of one run (``compute``).
    """
    refs = record.get("references") or {}
    view = {"agent": "dpq", "method": record.get("method"), "higher_is_better": True,
            "extra": {"peak": record.get("peak")} if record.get("peak") is not None else {}}
    if record.get("loop") == "replay":
        last = record.get("episode_returns") or []
        import numpy as np

        view.update(utility="mean_return_last_10", utility_label="mean return of the last 10 training episodes",
                    value=float(np.mean(last[-10:])), value_se=None, reference=refs.get("random_policy_return"),
                    reference_se=refs.get("random_policy_return_se") or 0.0,
                    reference_label="random policy (trivial reference of the fixed-reward environment)",
                    non_private=refs.get("non_private_last10"), non_private_label="the loop without noise")
        return view
    if "policy_return" not in record:
        raise ValueError("a dpq record without policy_return")
    learner = record.get("method") in _LEARNERS
    view.update(utility="policy_return", utility_label="return per episode of the released greedy policy",
                value=record["policy_return"], value_se=record.get("policy_return_se"),
                reference=refs.get("best_data_independent_return"),
                reference_se=refs.get("best_data_independent_return_se") or 0.0,
                reference_label=(refs.get("best_data_independent_label")
                                 or "best data-independent policy in expectation over theta"),
                non_private=refs.get("non_private_return" if learner else "non_private_policy_return"),
                non_private_label="the same learner without noise" if learner else refs.get("non_private_learner"))
    view["constant_references"] = {k: refs[k] for k in ("random_policy_return", "move_to_middle_return")
                                   if k in refs and record.get("environment") == "fixed"}
    return view


#: bytes a run holds per sample, roughly: each revealed state is stored on every action's noise path
#: (16 bytes in the path's store, 16 in its flat copy) plus the episode bookkeeping
def run(args: argparse.Namespace) -> int:
    """Execute ``privcal train dpq``; prints the result in the chosen format, returns 0.

    Args:
        args: the parsed arguments of ``privcal train dpq``.

    Raises:
        ValueError: bad input (the CLI prints it as one line, exit code 2).
        InfeasibleError: no valid sigma for the target.
    """
    fmt = _cli_train.check_output_flags(args)
    seeds = _cli_train.check_seed_flags(args)
    if seeds is not None:
        if args.loop == "replay":
            raise ValueError("--seeds applies to --loop algorithm1 and the valid learners; the replay loop's seeds "
                             "are run by privcal.rl.dpq.experiments.figure1")
        return _cli_train.run_seeds(args, __name__, fmt, seeds)
    _cli_train.emit(args, fmt, *compute(args, fmt))
    return 0


def compute(args: argparse.Namespace, fmt: str) -> tuple:
    """One run of ``privcal train dpq``: (record, text, curve columns or None, plot spec or None).

    Args:
        args: the parsed arguments (``args.seed`` set).
        fmt: the output format (text shows a progress bar on stderr).

    Raises:
        ValueError: bad input.
        InfeasibleError: no valid sigma for the target.
    """
    if args.method in _LEARNERS:
        return _compute_learner(args)
    given = [f for f, v in (("--selector", args.selector), ("--policies", args.policies), ("--peak", args.peak),
                            ("--expected-batch-size", args.expected_batch_size), ("--public-size", args.public_size))
             if v is not None]
    if given:
        raise ValueError(f"{', '.join(given)} applies only to --method select and fqi-dpsgd"
                         if "--peak" in given or "--selector" in given or "--policies" in given else
                         f"{', '.join(given)} applies only to --method fqi-dpsgd")
    from privcal.rl.units import check_unit

    unit = check_unit("reward-function" if args.privacy_unit is None else args.privacy_unit, ("reward-function",),
                      f"--method {args.method}" + (" --loop replay" if args.loop == "replay" else ""))
    if args.loop == "replay":
        if args.environment is not None:
            raise ValueError("--environment applies to --loop algorithm1 (the replay loop is the authors' experiment "
                             "on App. E.1's fixed reward)")
        return compute_replay(args, fmt)
    given = [f for f, v in (("--episodes", args.episodes), ("--optimizer", args.optimizer),
                            ("--buffer-size", args.buffer_size), ("--target-update", args.target_update),
                            ("--noise-reset", args.noise_reset), ("--sampler", args.sampler)) if v is not None]
    if args.privacy_report:
        given.append("--privacy-report")
    if given:
        raise ValueError(f"{', '.join(given)} applies only to --loop replay")
    return _compute_algorithm1(args, fmt, unit)


def _compute_algorithm1(args: argparse.Namespace, fmt: str, unit: str) -> tuple:
    """Algorithm 1 or a baseline of App. E.2 on the fixed or the random-peak environment."""
    import warnings

    from privcal.rl import envs

    if args.variant == "corrected":
        warnings.warn("--variant corrected is now spelled --variant valid", DeprecationWarning, stacklevel=2)
        args.variant = "valid"
    environment = args.environment or "fixed"
    hp = _hyperparameters(args)  # validates every learner setting once (Hyperparameters)
    check_memory(hp.samples)
    peak = envs.draw_peak(args.seed) if environment == "random-peak" else 0.5
    # the valid variant's baseline is the same learner (certified updates from the release) without noise; the
    # others' is the plain non-private learner
    same_learner = args.method == "dpq" and args.variant == "valid" and args.sigma is None
    start = time.perf_counter()
    result, baseline = _algorithm1_runs(args, hp, fmt, environment, peak, same_learner)
    out, series, lines_out = _algorithm1_record(args, result, baseline, environment, peak, unit, same_learner)
    out["seconds"] = time.perf_counter() - start
    return out, _algorithm1_text(args, hp, result, out, _where(environment, peak), unit, lines_out), series, \
        _algorithm1_spec(args, hp, result, environment, series, out["references"])


def _algorithm1_runs(args, hp, fmt: str, environment: str, peak: float, same_learner: bool) -> tuple:
    """(the run, its non-private baseline or None), both on one progress bar (text format only)."""
    from privcal.cli.progress import ProgressBar
    from privcal.rl import envs
    from privcal.rl.dpq import agent as dpq_agent
    from privcal.rl.dpq.run import RunNoise, run_unchecked

    references = not args.no_references and args.method != "non-private"
    runs = 2 if references else 1
    bar = None if fmt != "text" else ProgressBar(hp.samples * runs, label=args.method)

    def progress(offset):
        return None if bar is None else (lambda done, total=None: bar(offset + done, hp.samples * runs))

    def env():
        return envs.IntervalEnv.unchecked(peak=peak) if environment == "random-peak" else None  # theta in [0, 1)

    try:
        result = _train(args, hp, progress(0), env())
        baseline = None
        if references and same_learner:
            baseline = dpq_agent.train_dpq_without_noise(hp=hp, seed=args.seed, env=env(),
                                                         progress=progress(hp.samples))
        elif references:
            baseline = run_unchecked(RunNoise("non_private", None, None, None), hp, args.seed, env(),
                                     progress(hp.samples))
    finally:
        if bar is not None:
            bar.close()
    return result, baseline


def _algorithm1_record(args, result, baseline, environment: str, peak: float, unit: str, same_learner: bool):
    """(json record up to its time, csv series, the verdict's text lines) of an Algorithm 1 run."""
    import numpy as np

    from privcal.rl import envs

    baseline_label = ("the same learner (certified updates restarted from the release) without noise" if same_learner
                      else "the plain non-private learner (SGD steps, no noise)")
    value, value_se = envs.policy_return_unchecked(result.greedy_actions, peak, episodes=_EVAL_EPISODES,
                                                   seed=[args.seed, 31])
    out = result.to_dict()
    out["method"] = args.method  # the flag's spelling
    out["variant"] = args.variant if args.method != "non-private" else None
    out["environment"] = environment
    out["peak"] = peak
    out["policy_return"], out["policy_return_se"] = value, value_se
    out["evaluation_episodes"] = _EVAL_EPISODES
    r = np.asarray(result.episode_returns, dtype=float)
    out.pop("episode_returns", None)  # in the series (csv rows; json keeps the key)
    refs = {} if args.no_references else _algorithm1_references(environment, peak, args.seed, baseline,
                                                                baseline_label)
    out["references"] = refs
    out["privacy_unit"] = None if args.method == "non-private" else unit
    # every update uses its whole batch of the latest samples (no subsampling, no amplification claimed)
    out["sampling"] = None if args.method == "non-private" else "full_batch"
    lines_out = []
    out.update(_policy_verdict(value, value_se, refs, lines_out))
    series = {"episode": np.arange(1, len(r) + 1).tolist(), "episode_returns": [float(x) for x in r]}
    if baseline is not None:
        series["non_private_return"] = [float(x) for x in baseline.episode_returns]
    return out, series, lines_out


def _where(environment: str, peak: float) -> str:
    """The environment of an Algorithm 1 run, in words."""
    return ("privcal/Interval-v0 (App. E.1's fixed reward, peak 0.5)" if environment == "fixed" else
            f"privcal/IntervalPeak-v0 (random-peak: theta = {peak:.4f} drawn from the seed)")


def _algorithm1_text(args, hp, result, out: dict, where: str, unit: str, lines_out: list) -> str:
    """The text output of an Algorithm 1 run on the environment ``where`` (:func:`_where`)."""
    import numpy as np

    r = np.asarray(result.episode_returns, dtype=float)
    value, value_se = out["policy_return"], out["policy_return_se"]
    lines = [f"{args.method} on {where}, T={hp.samples}, B={hp.batch_size}, "
             f"lr={hp.lr:g}, L={hp.lipschitz:g}, gamma={hp.gamma:g}, seed {args.seed}"]
    if result.sigma is not None:
        extra = f", beta={result.beta:.5g}, J={result.resets}" if result.beta is not None else ""
        lines.append(f"  sigma                 {result.sigma:.5g}{extra}")
    lines.append(f"  privacy               {result.guarantee}")
    for premise in out.get("premises", ()):
        if not premise["held"]:
            lines.append(f"  premise failed        {premise['name']}: {premise['evidence']}")
    lines.append(f"  policy return         {value:.3f} +- {value_se:.3f} per episode (released greedy policy, "
                 f"{_EVAL_EPISODES} simulated episodes)")
    if len(r):
        lines.append(f"  episodes              {len(r)}; mean return first 10 {r[:10].mean():.3f}, "
                     f"last 10 {r[-10:].mean():.3f} (training, with exploration)")
    lines += reference_lines(out["references"])
    lines.append(f"  privacy unit          {unit}")
    if args.method != "non-private":
        lines.append("  batch sampler         full_batch: every update uses its whole batch (no subsampling)")
    lines += lines_out
    lines.append(f"  time                  {out['seconds']:.2f} s")
    return "\n".join(lines)


def _algorithm1_spec(args, hp, result, environment: str, series: dict, refs: dict):
    """The plot of an Algorithm 1 run: training returns per episode, the references as lines."""
    import numpy as np

    r = np.asarray(result.episode_returns, dtype=float)
    noise = "no noise" if result.sigma is None else f"σ = {result.sigma:.4g}"
    target = (f"ε = {args.epsilon:g}, δ = {args.delta:g}, " if args.epsilon is not None
              else "no privacy target, " if result.sigma is None else "σ given (no privacy claim), ")
    return plot_spec(np.arange(1, len(r) + 1), args.method, r,
                      f"{args.method} on the {environment} interval environment: {target}{noise}; T = {hp.samples}, "
                      f"seed {args.seed}", series, refs)


