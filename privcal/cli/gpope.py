"""``privcal train gpope``: GPOPE (gradient-perturbed off-policy evaluation) on the chain, Mountain Car or HIV.

``privcal.cli`` (``privcal/cli/__init__.py``) calls :func:`add_parser` on the subparsers of ``privcal train`` and
:func:`run` on the parsed arguments; bad input raises ``ValueError`` (one stderr line, exit code 2
there). Importing this module needs neither gymnasium nor matplotlib nor joblib.
"""

from __future__ import annotations

import argparse
import contextlib
import time

from privcal.cli import out as _cli_out
from privcal.cli import train as _cli_train

__all__ = ["add_parser", "run", "compute", "seed_view", "DEFAULT_EVAL", "BOUND_CHOICES"]

#: --bound values: the one vocabulary (valid, paper) and each bound by name
BOUND_CHOICES = ("valid", "paper", "pld", "rdp", "thm9", "theorem1", "lemma1", "theorem1_paper")

DOMAINS = ("chain", "mountain-car", "hiv")
#: Largest memory a run may ask for up front (bytes); larger requests are refused with this number.
_MEMORY_BUDGET = 4 * 2**30
#: Size of the independent sample that estimates A, b, C for the MSPBE.
DEFAULT_EVAL = {"chain": 20000, "mountain-car": 1000, "hiv": 200}


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
    _cli_train.add_seed_flags(p, "seed of data, behaviour policy and noise")
    _cli_train.add_output_flags(p)
    p.set_defaults(_run=run)  # privcal.cli dispatches ``privcal train AGENT`` to args._run(args)
    return p



def _domain(args, rng_eval, rng_data, m, progress_label):
    """(private data, MSPBE evaluator, relative?) for the chosen domain (``args``, ``m`` and the evaluation size
    checked by :func:`run`: the samplers' unchecked kernels)."""
    import numpy as np

    from privcal.rl.gpope.mspbe import MSPBE
    n_eval = args.eval_trajectories or DEFAULT_EVAL[args.domain]
    if args.domain == "chain":
        from privcal.rl.gpope.domains.chain import sample_chain_unchecked as sample_chain  # m, n_eval checked by run
        return sample_chain(m, rng_data), MSPBE.from_dataset(sample_chain(n_eval, rng_eval)), False
    if args.domain == "mountain-car":
        from privcal.rl.gpope.domains import mountain_car as mc
        env = mc.MountainCarBatch.from_gymnasium()
        beh = mc.learn_behaviour(env, episodes=args.q_episodes or 200,
                                 seed=np.random.SeedSequence([args.seed, 31]))
        ev = MSPBE.from_dataset(mc.sample_mountain_car_unchecked(n_eval, rng_eval, behaviour=beh, env=env,
                                                                 off_policy=args.off_policy), ridge=1e-8)
        return (mc.sample_mountain_car_unchecked(m, rng_data, behaviour=beh, env=env,
                                                 off_policy=args.off_policy), ev, False)
    from privcal.rl.gpope.domains import hiv
    env = hiv.HIVBatch(horizon=50 if args.horizon is None else args.horizon)
    target, beh = hiv.learn_hiv_policies(env, episodes=args.q_episodes or 64,
                                         seed=np.random.SeedSequence([args.seed, 37]))
    ev = MSPBE.from_dataset(hiv.sample_hiv_unchecked(n_eval, rng_eval, target=target, behaviour=beh, env=env),
                            ridge=1e-8)
    return hiv.sample_hiv_unchecked(m, rng_data, target=target, behaviour=beh, env=env), ev, True


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
    _cli_out.check_epsilon(args.epsilon)
    import numpy as np

    from privcal import _validate as V
    from privcal._rng import as_generator
    from privcal.cli.progress import ProgressBar, Working
    from privcal.rl.gpope.experiments import CLIP, DEFAULT_STEP
    from privcal.calibrators.gpope import calibrate_report_unchecked
    from privcal.rl.gpope.agent import gpope_unchecked
    from privcal.rl.gpope.lstd import lstd, wis_lstd

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
    if args.horizon is not None:
        if args.domain != "hiv":
            raise ValueError("--horizon applies only to --domain hiv")
        args.horizon = V.positive_int("horizon", args.horizon)
    if args.q_episodes is not None:
        if args.domain == "chain":
            raise ValueError("--q-episodes applies only to --domain mountain-car and hiv")
        args.q_episodes = V.positive_int("q_episodes", args.q_episodes)
    if args.eval_trajectories is not None:
        args.eval_trajectories = V.positive_int("eval_trajectories", args.eval_trajectories)
    if args.non_private and args.clip is not None:
        raise ValueError("--clip must not be given together with --non-private (GTD2 does not clip)")
    m = V.positive_int("trajectories", args.trajectories)
    n_iter = m if args.iterations is None else V.positive_int("iterations", args.iterations)
    if 8 * n_iter > _MEMORY_BUDGET:  # the sampled trajectory indices alone (8 bytes per iteration)
        raise ValueError(f"iterations = {n_iter} needs more than the memory budget of "
                         f"{_MEMORY_BUDGET / 2**30:g} GiB (at most {_MEMORY_BUDGET // 8} iterations)")
    step = DEFAULT_STEP[args.domain] if args.step_size is None else V.positive("step_size", args.step_size)
    clip = CLIP[args.domain] if args.clip is None else V.positive("clip", args.clip)
    start = time.perf_counter()
    sigma, bound_used = 0.0, None
    if not args.non_private:  # calibrate first: bad input fails before any simulation
        epsilon, delta = V.positive("epsilon", args.epsilon), V.open_unit("delta", args.delta)
        bound = {"valid": "best", "paper": "theorem1_paper"}.get(args.bound, args.bound)  # --bound: argparse choices
        cal = calibrate_report_unchecked(epsilon, delta, iterations=n_iter, trajectories=m, clip=clip, bound=bound)
        sigma = cal.sigma
        bound_used = (cal.accountant or cal.bound) if cal.valid else cal.bound
    data, ev, relative = _domain(args, as_generator(np.random.SeedSequence([args.seed, 1])),
                                 as_generator(np.random.SeedSequence([args.seed, 2])), m, "gpope")
    references = not args.no_references
    runs = 2 if references and not args.non_private else 1
    bar = None if fmt != "text" else ProgressBar(n_iter * runs, label="gpope")

    def progress(offset):
        return None if bar is None else (lambda done, total=None: bar(offset + done, n_iter * runs))

    off = relative or args.off_policy
    score = ev.relative if relative else ev
    every = max(1, n_iter // 50)  # 50 points of the curve (each costs one MSPBE evaluation)
    baseline = None
    try:
        # every argument checked above (the schedule by argparse's choices): the runs trust them
        res = gpope_unchecked(data, sigma=sigma, clip=None if args.non_private else clip, iterations=n_iter,
                              step_size=step, schedule=args.schedule, metric=score, record_every=every,
                              seed=np.random.SeedSequence([args.seed, 3]), progress=progress(0))
        if runs == 2:
            baseline = gpope_unchecked(data, sigma=0.0, clip=None, iterations=n_iter, step_size=step,
                                       schedule=args.schedule, metric=score, record_every=every,
                                       seed=np.random.SeedSequence([args.seed, 3]), progress=progress(n_iter))
    finally:
        if bar is not None:
            bar.close()
    from privcal.rl.verdict import DIVERGENCE_RULE, diverged, verdict_one_run, worse_than_trivial

    # after the bar: the reference fit and the evaluations on the independent sample (up to a minute)
    with (Working("gpope: references and evaluation") if fmt == "text" else contextlib.nullcontext()):
        ref = wis_lstd(data, ridge=1e-10) if off else lstd(data, ridge=1e-10)
        name = "relative_mspbe" if relative else "mspbe"
        final, zero = score(res.theta), score(np.zeros(data.n_features))  # theta = 0: the start and the trivial predictor
        verdict = verdict_one_run(final, zero, higher_is_better=False, reference_label="theta = 0 (trivial predictor)",
                                  basis=f"both MSPBEs evaluated on the same {ev.trajectories} simulated trajectories "
                                        "(an estimate: no standard error computed)")
        refs = {}
        if references:
            refs = {"lstd": score(ref), "lstd_method": "wis-lstd" if off else "lstd",
                    "zero_predictor": zero,
                    "non_private_gtd2": None if baseline is None else score(baseline.theta)}
            if baseline is not None:  # the reference gets the same flags as the run
                refs["non_private_gtd2_diverged"] = diverged(refs["non_private_gtd2"], zero, not baseline.diverged)
                refs["non_private_gtd2_worse_than_trivial"] = worse_than_trivial(refs["non_private_gtd2"], zero)
    out = {
        "algorithm": "gtd2" if args.non_private else "gpope",
        "domain": args.domain, "off_policy": bool(off),
        "trajectories": m, "transitions": data.n_transitions, "iterations": n_iter,
        "epsilon": args.epsilon, "delta": None if args.non_private else args.delta,
        "bound": None if args.non_private else args.bound, "bound_used": bound_used,
        # GPOPE's sigma is a noise multiplier (the noise is h N(0, sigma^2 I)): named as such, beside the absolute std
        "noise_multiplier": sigma, "clip": None if args.non_private else clip,
        "noise_std": sigma * clip if not args.non_private else 0.0,
        "step_size": step, "schedule": args.schedule, "seed": args.seed,
        "mspbe": ev(res.theta),
        "relative_mspbe": ev.relative(res.theta) if relative else None,
        "score": name,
        "guarantee": ("none (non-private)" if args.non_private else
                      f"no valid guarantee: sigma from the paper's {bound_used}, which privcal verify shows failing"
                      if not cal.valid else
                      f"(epsilon, delta)-DP w.r.t. one trajectory replaced, valid bound {bound_used}"),
        "references": refs,
        "privacy_unit": None if args.non_private else "trajectory",
        # one trajectory drawn uniformly at each iteration: a fixed-size batch (of 1) drawn afresh each step
        "sampling": None if args.non_private else "without_replacement",
        "neighbouring": None if args.non_private else "replace_one",
        "verdict": verdict.verdict, "verdict_test": verdict.to_dict(),
        "clipped_fraction": res.clipped_fraction,
        "diverged": diverged(final, zero, not res.diverged), "diverged_rule": DIVERGENCE_RULE,
        "worse_than_trivial": worse_than_trivial(final, zero),
        "parameters_non_finite": res.diverged,
        "eval_trajectories": ev.trajectories,
        "seconds": time.perf_counter() - start,
    }
    curve = f"{name}_curve"
    series = {"iteration": list(res.history["iteration"]), curve: list(res.history["metric"])}
    if baseline is not None:
        series[f"non_private_{curve}"] = list(baseline.history["metric"])
    what = "non-private GTD2" if args.non_private else \
        f"epsilon={args.epsilon:g}, delta={args.delta:g}, bound {args.bound}" + \
        (f" ({bound_used})" if bound_used not in (None, args.bound) else "")
    lines = [f"{out['algorithm']} ({what}) on {args.domain}{' (off-policy)' if off else ''}, m={m}, N={n_iter}, "
             f"seed {args.seed}",
             f"  noise multiplier      {sigma:.4g} (noise std {out['noise_std']:.4g} = multiplier x clip {out['clip']})",
             f"  privacy               {out['guarantee']}",
             f"  {name:21s} {final:.4g}" + ("  (diverged: non-finite parameters)" if res.diverged else
                                            "  (diverged: the iterates blew up)" if out["diverged"] else
                                            "  (worse than theta = 0, the trivial predictor)"
                                            if out["worse_than_trivial"] else "")]
    if refs:
        if baseline is not None:
            flag = (" (diverged: the iterates blew up)" if refs["non_private_gtd2_diverged"] else
                    " (worse than theta = 0)" if refs["non_private_gtd2_worse_than_trivial"] else "")
            lines.append(f"  non-private GTD2      {refs['non_private_gtd2']:.4g} (same data, step size and seed){flag}")
        lines.append(f"  {refs['lstd_method']:21s} {refs['lstd']:.4g} (non-private closed form)")
        lines.append(f"  theta = 0             {refs['zero_predictor']:.4g} (trivial predictor)")
    lines.append(f"  verdict               {verdict.line()}")
    if not args.non_private:
        lines.append("  privacy unit          trajectory: one trajectory of the data set replaced by another")
        lines.append("  batch sampler         without_replacement: one trajectory drawn uniformly each iteration "
                     "(priced as such, replace-one neighbours)")
    lines.append(f"  clipped fraction      {res.clipped_fraction:.3f}")
    lines.append(f"  time                  {out['seconds']:.2f} s")
    spec = _cli_train.PlotSpec(
        series["iteration"], out["algorithm"], series[curve], log_y=True,
        title=f"{out['algorithm']} on {args.domain}, m={m}, seed {args.seed}", xlabel="iteration",
        ylabel=name.replace("_", " ").replace("mspbe", "MSPBE") + " (log scale)",
        references={"non-private GTD2": series.get(f"non_private_{curve}"), refs.get("lstd_method", "lstd"):
                    refs.get("lstd"), "theta = 0": refs.get("zero_predictor")})
    return out, "\n".join(lines), series, spec
