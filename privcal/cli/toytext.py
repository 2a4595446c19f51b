"""``privcal train frozenlake``: a private offline learner (select or fqi-dpsgd) on Gymnasium's FrozenLake.

``privcal.cli`` (``privcal/cli/__init__.py``) calls :func:`add_parser` on the subparsers of ``privcal train`` and
:func:`run` on the parsed arguments; bad input raises ``ValueError`` (one stderr line and exit code 2 there).
The learners, the random-map prior and the references are in ``privcal.rl.toytext``. Privacy unit: one episode
(one user's whole trajectory), so the user-level epsilon is the run's own.
"""

from __future__ import annotations

import argparse
import time

from privcal.cli import out as _cli_out
from privcal.cli import train as _cli_train

__all__ = ["add_parser", "run", "compute", "seed_view"]

_METHODS = ("select", "fqi-dpsgd")
_ENVIRONMENTS = ("random-map", "fixed")


def add_parser(subparsers: "argparse._SubParsersAction") -> argparse.ArgumentParser:
    """Add the ``frozenlake`` subparser to the subparsers object of ``privcal train``; returns it.

    Args:
        subparsers: the object returned by ``add_subparsers`` of the ``train`` parser.

    Returns:
        The new ``frozenlake`` parser.
    """
    p = subparsers.add_parser(
        "frozenlake", help="private offline learning on Gymnasium's FrozenLake 4x4 (select, fqi-dpsgd; episode unit)",
        description="Run a private offline learner on users' FrozenLake episodes (uniform behaviour policy) and "
                    "report the released policy's exact goal probability within H = 20 against the trivial "
                    "reference: on random maps (the map is private, drawn from a stated prior) the best "
                    "data-independent policy of a stated class in expectation over the prior; on gymnasium's fixed "
                    "map (public, so its optimal policy is data-independent) the uniform policy. Privacy unit: one "
                    "episode = one user. Needs pip install 'privcal[rl]'.")
    p.add_argument("--method", choices=_METHODS, default=None,
                   help="select (exponential mechanism or report-noisy-max over public candidate policies, pure "
                        "epsilon-DP) or fqi-dpsgd (fitted-Q iteration by DP-SGD over episodes, (epsilon, delta)-DP) "
                        "(no default: required)")
    p.add_argument("--environment", choices=_ENVIRONMENTS, default="random-map",
                   help="random-map (the map drawn per seed from the prior: start and goal fixed, each other cell a "
                        "hole with probability 0.2, redrawn until a path exists) or fixed (gymnasium's 4x4 map) "
                        "(default random-map)")
    p.add_argument("--epsilon", type=float, default=None,
                   help="epsilon of the whole run per episode (user), in (0, 1e6] (no default: required)")
    p.add_argument("--delta", type=float, default=None,
                   help="delta, in (0, 1): required by fqi-dpsgd; select is pure epsilon-DP and refuses it "
                        "(default: none)")
    p.add_argument("--episodes", type=_cli_out.count, default=10000,
                   help="planned number of episodes (users), public; q and the scores' normaliser use it, an int "
                        ">= 1 (default 10000; 1e4 accepted)")
    p.add_argument("--selector", choices=("exponential", "noisy-max"), default=None,
                   help="select only: exponential (the exponential mechanism) or noisy-max (report-noisy-max with "
                        "Laplace noise) (default exponential)")
    _cli_train.add_seed_flags(p, "seed of the map (random-map), the episodes and the mechanism")
    _cli_train.add_output_flags(p)
    p.set_defaults(_run=run)
    return p


def run(args: argparse.Namespace) -> int:
    """Execute ``privcal train frozenlake``; prints the result in the chosen format, returns 0.

    Args:
        args: the parsed arguments of the ``frozenlake`` subparser.

    Returns:
        The exit code, 0.

    Raises:
        ValueError: an argument is outside its range (the message names the option).
    """
    fmt = _cli_train.check_output_flags(args)
    if args.plot is not None:
        raise ValueError("--plot draws a learning curve: privcal train frozenlake releases one policy and has none")
    seeds = _cli_train.check_seed_flags(args)
    _check(args)
    if seeds is not None:
        return _cli_train.run_seeds(args, __name__, fmt, seeds)
    _cli_train.emit(args, fmt, *compute(args, fmt))
    return 0


def _check(args: argparse.Namespace) -> None:
    from privcal import _validate as V

    if args.method is None:
        raise ValueError("--method is required: select or fqi-dpsgd")
    if args.epsilon is None:
        raise ValueError("--epsilon is required, in (0, 1e6]")
    _cli_out.check_epsilon(args.epsilon)
    if args.method == "select":
        if args.delta is not None:
            raise ValueError(f"--delta applies only to --method fqi-dpsgd (select is pure epsilon-DP), got --delta "
                             f"{args.delta:g}")
    else:
        if args.delta is None:
            raise ValueError("--method fqi-dpsgd needs --delta in (0, 1)")
        V.open_unit("delta", args.delta)
        if args.selector is not None:
            raise ValueError(f"--selector applies only to --method select, got --selector {args.selector}")
    V.positive_int("episodes", args.episodes)


def seed_view(record: dict) -> dict:
    """What ``--seeds`` aggregates of one run: the released policy's exact return against the trivial reference's
    exact return on the same map (paired over seeds on random maps).

    Args:
        record: the json record of one run (:func:`compute`).
    """
    refs = record.get("references") or {}
    return {"agent": "frozenlake", "method": record["method"], "utility": "value",
            "utility_label": "goal probability within H = 20 of the released policy (exact)",
            "higher_is_better": True, "value": record["value"], "value_se": 0.0,
            "reference": refs.get("trivial"), "reference_se": refs.get("trivial_se", 0.0),
            "reference_label": record["reference_label"], "non_private": refs.get("non_private"),
            "non_private_label": "same learner without noise, same data",
            "constant_references": {"reference_expectation": refs.get("trivial_expectation"),
                                    "reference_expectation_se": refs.get("trivial_expectation_se")},
            "extra": {"map": "/".join(record["map"]), "optimum": record["optimum"]}}


def compute(args: argparse.Namespace, fmt: str) -> tuple:
    """One run of ``privcal train frozenlake``: (record, text, no csv series, no plot).

    Args:
        args: the parsed arguments (``args.seed`` set).
        fmt: the output format.

    Raises:
        ValueError: an argument is outside its range.
    """
    from privcal.rl.toytext.experiment import run_frozenlake
    from privcal.rl.verdict import no_reference, verdict_one_run

    _check(args)
    start = time.perf_counter()
    res = run_frozenlake(args.method, epsilon=args.epsilon, delta=args.delta, environment=args.environment,
                         episodes=args.episodes, seed=args.seed,
                         selector="exponential" if args.selector is None else args.selector,
                         non_private=not args.no_references)
    out = res.to_dict()
    out["seconds"] = time.perf_counter() - start
    verdict = None
    if args.no_references:
        out["references"] = {}
        out.update(no_reference("--no-references"))
    else:
        out["references"] = {"trivial": res.reference, "trivial_se": 0.0,
                             "trivial_expectation": res.reference_expectation,
                             "trivial_expectation_se": res.reference_se, "non_private": res.non_private,
                             "optimum": res.optimum}
        verdict = verdict_one_run(res.value, res.reference, higher_is_better=True, reference_label=res.reference_label)
        out["verdict"], out["verdict_test"] = verdict.verdict, verdict.to_dict()
    return out, _text(res, out, verdict), None, None


def _text(res, out: dict, verdict) -> str:
    """The text output of one run (``verdict`` None: no references)."""
    lines = [f"{res.method} on FrozenLake ({res.environment}, map {'/'.join(res.desc)}), {res.episodes} episodes, "
             f"seed {res.seed}",
             f"  privacy unit          episode: one user's whole trajectory (user-level epsilon = {res.epsilon:g})",
             f"  guarantee             {res.guarantee}",
             f"  value                 {res.value:.4f} (goal probability within H = 20 of the released policy, exact)"]
    if "sample_rate_source" in out:
        lines.append(f"  sampling              {out['sample_rate_source']}")
    for name, held, evidence in res.premises:
        lines.append(f"  premise               {name}: {'held' if held else 'FAILED'} ({evidence})")
    if verdict is not None:
        lines.append(f"  trivial reference     {res.reference:.4f} on this map (exact): {res.reference_label}")
        if res.environment == "random-map":
            lines.append(f"  its expectation       {res.reference_expectation:.4f} +- {res.reference_se:.2g} over the "
                         f"prior ({out['reference_policy']}; {out['reference_expectation_basis']})")
            lines.append(f"  reference class       {out['reference_class']}")
        else:
            lines.append(f"  fixed map             {out['fixed_map_note']}")
        if res.non_private is not None:
            lines.append(f"  non-private           {res.non_private:.4f} (same learner without noise, same data)")
        lines.append(f"  optimum of this map   {res.optimum:.4f} (knows the map)")
        lines.append(f"  verdict               {verdict.line()}")
    lines.append(f"  time                  {out['seconds']:.2f} s")
    return "\n".join(lines)
