"""One GPOPE run as ``privcal train gpope`` reports it: calibration, the run, its references and its record.

:func:`train_gpope_unchecked` calibrates sigma for (epsilon, delta) with the chosen bound (before any simulation),
collects the seeded private data set and an independent evaluation sample for the domain, runs GPOPE (Algorithm 1
of Xie, Liu, Gu, Yuan, Li & Zhang, 'Privacy Preserving Off-Policy Evaluation', 2019: gradient-perturbed GTD2) and,
with references, non-private GTD2 on the same data and seed, the (WIS-)LSTD closed form and theta = 0 (the trivial
predictor), and builds the record every output format prints, with the verdict of
``privcal.rl.verdict.verdict_one_run`` against theta = 0 (lower MSPBE is better). The command line's glue, which
checks the flags and renders the record, is ``privcal.cli.gpope``.

Privacy unit: one trajectory of the data set, replaced by another (replace-one neighbours; one trajectory drawn
uniformly at each iteration, priced as sampling without replacement).
"""

from __future__ import annotations

import contextlib
import time
from dataclasses import dataclass
from typing import Any, Callable, ContextManager, Optional

import numpy as np

from privcal._rng import as_generator

__all__ = ["DEFAULT_EVAL", "TrainSettings", "TrainRun", "train_gpope_unchecked"]

#: Size of the independent sample that estimates A, b, C for the MSPBE, per domain (trajectories).
DEFAULT_EVAL = {"chain": 20000, "mountain-car": 1000, "hiv": 200}


@dataclass(frozen=True)
class TrainSettings:
    """The checked settings of one ``privcal train gpope`` run.

    Attributes:
        domain: "chain", "mountain-car" or "hiv".
        trajectories: m, the trajectories of the private data set, an int >= 1.
        iterations: N, one sampled trajectory each, an int >= 1.
        step_size: s_1 of the primal-dual updates, in (0, inf).
        schedule: "constant" (Thm 2) or "diminishing" (s_1 / i, Thm 3).
        clip: h, the largest L2 norm of one trajectory's gradient, in (0, inf) (unused when non-private).
        seed: seed of data, behaviour policy and noise.
        epsilon: target epsilon, in (0, 1e6], or None for non-private GTD2.
        delta: target delta, in (0, 1), or None for non-private GTD2.
        bound: the --bound choice ("valid", "paper" or one bound by name), or None for non-private GTD2.
        off_policy: mountain-car: evaluate the uniform policy from the learned policy's data.
        eval_trajectories: size of the evaluation sample, or None for :data:`DEFAULT_EVAL`.
        q_episodes: Q-learning episodes of the behaviour policy (mountain-car, hiv), or None for the default.
        horizon: hiv decisions per episode, or None for 50.
        references: compute the references (non-private GTD2, (WIS-)LSTD, theta = 0).
    """

    domain: str
    trajectories: int
    iterations: int
    step_size: float
    schedule: str
    clip: float
    seed: Any
    epsilon: Optional[float] = None
    delta: Optional[float] = None
    bound: Optional[str] = None
    off_policy: bool = False
    eval_trajectories: Optional[int] = None
    q_episodes: Optional[int] = None
    horizon: Optional[int] = None
    references: bool = True

    @property
    def non_private(self) -> bool:
        """Whether this is non-private GTD2 (no epsilon: sigma = 0, no clipping)."""
        return self.epsilon is None

    @property
    def runs(self) -> int:
        """Number of learner runs: 2 with references and a privacy budget (GPOPE, then GTD2), else 1."""
        return 2 if self.references and not self.non_private else 1


@dataclass(frozen=True)
class TrainRun:
    """What :func:`train_gpope_unchecked` returns.

    Attributes:
        record: the json record (key order as printed).
        result: GPOPE's (or GTD2's) run.
        baseline: non-private GTD2's run on the same data and seed, or None.
        verdict: the verdict against theta = 0.
        final: the score of the released parameters (MSPBE, or relative MSPBE on hiv).
        series: the curve columns (iteration, the score's curve, and the baseline's).
    """

    record: dict
    result: Any
    baseline: Any
    verdict: Any
    final: float
    series: dict


def _domain(s: TrainSettings, rng_eval, rng_data):
    """(private data, MSPBE evaluator, relative?) for the domain (sizes checked: the samplers' unchecked kernels)."""
    from privcal.rl.gpope.mspbe import MSPBE
    n_eval = s.eval_trajectories or DEFAULT_EVAL[s.domain]
    m = s.trajectories
    if s.domain == "chain":
        from privcal.rl.gpope.domains.chain import sample_chain_unchecked as sample_chain
        return sample_chain(m, rng_data), MSPBE.from_dataset(sample_chain(n_eval, rng_eval)), False
    if s.domain == "mountain-car":
        from privcal.rl.gpope.domains import mountain_car as mc
        env = mc.MountainCarBatch.from_gymnasium()
        beh = mc.learn_behaviour(env, episodes=s.q_episodes or 200, seed=np.random.SeedSequence([s.seed, 31]))
        ev = MSPBE.from_dataset(mc.sample_mountain_car_unchecked(n_eval, rng_eval, behaviour=beh, env=env,
                                                                 off_policy=s.off_policy), ridge=1e-8)
        return (mc.sample_mountain_car_unchecked(m, rng_data, behaviour=beh, env=env, off_policy=s.off_policy),
                ev, False)
    from privcal.rl.gpope.domains import hiv
    env = hiv.HIVBatch(horizon=50 if s.horizon is None else s.horizon)
    target, beh = hiv.learn_hiv_policies(env, episodes=s.q_episodes or 64, seed=np.random.SeedSequence([s.seed, 37]))
    ev = MSPBE.from_dataset(hiv.sample_hiv_unchecked(n_eval, rng_eval, target=target, behaviour=beh, env=env),
                            ridge=1e-8)
    return hiv.sample_hiv_unchecked(m, rng_data, target=target, behaviour=beh, env=env), ev, True


def _calibrated(s: TrainSettings) -> tuple[float, Optional[str], Any]:
    """(sigma, the bound used, the calibration report) from checked settings; (0, None, None) non-private."""
    if s.non_private:
        return 0.0, None, None
    from privcal.calibrators.gpope import calibrate_report_unchecked

    bound = {"valid": "best", "paper": "theorem1_paper"}.get(s.bound, s.bound)
    cal = calibrate_report_unchecked(s.epsilon, s.delta, iterations=s.iterations, trajectories=s.trajectories,
                                     clip=s.clip, bound=bound)
    return cal.sigma, (cal.accountant or cal.bound) if cal.valid else cal.bound, cal


def _references(s: TrainSettings, data, score, off: bool, zero: float, baseline) -> dict:
    """The references' scores: (WIS-)LSTD, theta = 0, non-private GTD2 with its flags; {} without references."""
    if not s.references:
        return {}
    from privcal.rl.gpope.lstd import lstd, wis_lstd
    from privcal.rl.verdict import diverged, worse_than_trivial

    ref = wis_lstd(data, ridge=1e-10) if off else lstd(data, ridge=1e-10)
    refs = {"lstd": score(ref), "lstd_method": "wis-lstd" if off else "lstd", "zero_predictor": zero,
            "non_private_gtd2": None if baseline is None else score(baseline.theta)}
    if baseline is not None:  # the reference gets the same flags as the run
        refs["non_private_gtd2_diverged"] = diverged(refs["non_private_gtd2"], zero, not baseline.diverged)
        refs["non_private_gtd2_worse_than_trivial"] = worse_than_trivial(refs["non_private_gtd2"], zero)
    return refs


def train_gpope_unchecked(settings: TrainSettings,
                          progress: Optional[Callable[[int], Optional[Callable[..., Any]]]] = None,
                          working: Optional[Callable[[str], ContextManager]] = None) -> TrainRun:
    """One run of ``privcal train gpope`` from checked settings (trusted: nothing is validated here).

    Args:
        settings: the checked settings.
        progress: ``progress(offset)`` gives the callback of the run that starts after ``offset`` iterations (the
            baseline's offset is ``settings.iterations``), or None; default None.
        working: ``working(label)`` gives a context manager shown while the references and evaluations run (a
            spinner on a terminal), or None; default None.

    Returns:
        The :class:`TrainRun`: the record, both runs, the verdict and the curves.
    """
    from privcal.rl.gpope.agent import GPOPESettings, gpope_unchecked
    from privcal.rl.verdict import DIVERGENCE_RULE, diverged, verdict_one_run, worse_than_trivial

    s, n_iter = settings, settings.iterations
    start = time.perf_counter()
    sigma, bound_used, cal = _calibrated(s)  # calibrate first: bad input fails before any simulation
    data, ev, relative = _domain(s, as_generator(np.random.SeedSequence([s.seed, 1])),
                                 as_generator(np.random.SeedSequence([s.seed, 2])))
    off = relative or s.off_policy
    score = ev.relative if relative else ev
    every = max(1, n_iter // 50)  # 50 points of the curve (each costs one MSPBE evaluation)

    def one(noise: float, clip: Optional[float], offset: int):
        run = GPOPESettings(sigma=noise, clip=clip, iterations=n_iter, step_size=s.step_size, schedule=s.schedule,
                            seed=np.random.SeedSequence([s.seed, 3]))
        return gpope_unchecked(data, run, metric=score, record_every=every,
                               progress=None if progress is None else progress(offset))

    res = one(sigma, None if s.non_private else s.clip, 0)
    baseline = one(0.0, None, n_iter) if s.runs == 2 else None
    # the reference fit and the evaluations on the independent sample (up to a minute)
    with (working("gpope: references and evaluation") if working is not None else contextlib.nullcontext()):
        name = "relative_mspbe" if relative else "mspbe"
        final, zero = score(res.theta), score(np.zeros(data.n_features))  # theta = 0: the start and the trivial predictor
        verdict = verdict_one_run(final, zero, higher_is_better=False, reference_label="theta = 0 (trivial predictor)",
                                  basis=f"both MSPBEs evaluated on the same {ev.trajectories} simulated trajectories "
                                        "(an estimate: no standard error computed)")
        refs = _references(s, data, score, off, zero, baseline)
    np_ = s.non_private
    out = {
        "algorithm": "gtd2" if np_ else "gpope",
        "domain": s.domain, "off_policy": bool(off),
        "trajectories": s.trajectories, "transitions": data.n_transitions, "iterations": n_iter,
        "epsilon": s.epsilon, "delta": None if np_ else s.delta,
        "bound": None if np_ else s.bound, "bound_used": bound_used,
        # GPOPE's sigma is a noise multiplier (the noise is h N(0, sigma^2 I)): named as such, beside the absolute std
        "noise_multiplier": sigma, "clip": None if np_ else s.clip,
        "noise_std": sigma * s.clip if not np_ else 0.0,
        "step_size": s.step_size, "schedule": s.schedule, "seed": s.seed,
        "mspbe": ev(res.theta),
        "relative_mspbe": ev.relative(res.theta) if relative else None,
        "score": name,
        "guarantee": ("none (non-private)" if np_ else
                      f"no valid guarantee: sigma from the paper's {bound_used}, which privcal verify shows failing"
                      if not cal.valid else
                      f"(epsilon, delta)-DP w.r.t. one trajectory replaced, valid bound {bound_used}"),
        "references": refs,
        "privacy_unit": None if np_ else "trajectory",
        # one trajectory drawn uniformly at each iteration: a fixed-size batch (of 1) drawn afresh each step
        "sampling": None if np_ else "without_replacement",
        "neighbouring": None if np_ else "replace_one",
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
    return TrainRun(out, res, baseline, verdict, final, series)
