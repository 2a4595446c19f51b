r"""The result of a privacy-utility frontier: its points (:class:`FrontierPoint`) and :class:`Frontier` (tables,
json, csv rows), with the tables that name each (agent, variant)'s privacy unit and the user's unit.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Optional

from privcal import _validate as V
from privcal.rl.frontier_stats import CORRECTION

__all__ = ["VARIANT_ORDER", "UNITS", "USER_UNITS", "COVERS_USER", "PAIRED_NOTE", "FrontierPoint", "Frontier"]

#: every variant, in table and legend order
VARIANT_ORDER = ("select", "fqi-transition", "fqi-episode", "valid", "gaussian", "paper")
#: the privacy unit of each (agent, variant)
UNITS = {"dpq": {"select": "reward-function", "fqi-transition": "transition", "fqi-episode": "episode",
                  "valid": "reward-function", "paper": "reward-function"},
          "gpope": {"valid": "trajectory", "paper": "trajectory"},
          "pucb": {"valid": "episode", "gaussian": "episode", "paper": "episode"},
          "frozenlake": {"select": "episode", "fqi-episode": "episode"}}
#: the unit of one user, per agent: a user contributes one 50-step episode (dpq, pucb) or one trajectory (gpope).
#: A point whose unit is finer than the user (dpq's "transition") reports the user-level epsilon beside its own.
USER_UNITS = {"dpq": "episode", "gpope": "trajectory", "pucb": "episode", "frozenlake": "episode"}
#: units that cover one user's whole contribution: the user-level epsilon is the point's own (upper bound)
COVERS_USER = ("episode", "trajectory", "reward-function")
#: how frozenlake's points are tested (random maps vary far more than the learners' effect, so the seeds are paired)
PAIRED_NOTE = ("frozenlake: paired over seeds: each seed's value minus the reference policy's exact value on the same "
               "map, one-sided Student t against 0; the bound is that of the mean difference plus the seeds' mean "
               "reference value")


@dataclass(frozen=True)
class FrontierPoint:
    """One (variant, epsilon, amount) point: per-seed utilities, their mean and std, and the verdict.

    ``privacy_unit`` says what one neighbouring change is (``privcal.rl.units``). ``verdict`` is
    ``privcal.rl.verdict.verdict_over_seeds`` against the trivial reference ("beats", "does not beat" or
    "cannot tell": a one-sided Welch t bound, the reference's standard error added; "" with fewer than two
    seeds or no values) and ``sign_test_p`` its exact one-sided sign-test p-value.

    ``values`` is empty and ``infeasible`` holds the calibrator's reason when no noise exists for the
    target. ``noise`` is the noise level used (dpq: functional-noise sigma; gpope: noise multiplier
    sigma; pucb: the counters' error bound E). ``bound`` is the one-sided confidence bound of
    :func:`beats_reference` and ``beats_trivial`` its verdict (None with fewer than two seeds or no
    values), for this point alone. ``p_value`` is the one-sided Student-t p-value of the same test
    (:func:`one_sided_p_value`); ``p_holm`` and ``beats_holm`` the Holm-adjusted p-value and verdict over the
    epsilon grid of the point's (variant, amount) line (:func:`holm_over_grid`, :data:`CORRECTION`): the
    "first epsilon that beats" of :meth:`Frontier.first_beating` reads ``beats_holm``. ``guarantee`` states the
    privacy claim in words.

    ``user_epsilon`` is the epsilon of the same run for one *user* (``user_unit``: one user's whole episode or
    trajectory), an upper bound at the frontier's delta: for a unit that covers the user (episode, trajectory,
    reward-function) the point's own epsilon; for the transition unit (dpq's "fqi-transition": one transition
    of a 50-step episode) the group bound of ``privcal.accounting.groups.group_epsilon`` over the run's
    sigma, sample rate and steps, with its certified lower bound in ``user_epsilon_lower``. None where the
    point has no valid guarantee (the paper's noise, a failed premise, an infeasible calibration).
    """

    variant: str
    epsilon: float
    amount: int
    values: tuple = ()
    mean: Optional[float] = None
    std: Optional[float] = None
    bound: Optional[float] = None
    beats_trivial: Optional[bool] = None
    noise: Optional[float] = None
    guarantee: str = ""
    infeasible: str = ""
    privacy_unit: str = ""
    verdict: str = ""
    sign_test_p: Optional[float] = None
    p_value: Optional[float] = None
    p_holm: Optional[float] = None
    beats_holm: Optional[bool] = None
    user_unit: str = ""
    user_epsilon: Optional[float] = None
    user_epsilon_lower: Optional[float] = None


@dataclass(frozen=True)
class Frontier:
    """What :func:`frontier` measured: the points and, per amount of data, the references.

    ``references`` maps each amount to {"trivial": {"mean", "se", "label"}, "non_private": {"mean",
    "std", "values"}} plus agent-specific extras (dpq: "optimum", the move-to-the-middle policy;
    gpope: "lstd", the non-private closed form). ``settings`` records the sizes, delta, seeds and the
    learner's fixed parameters.
    """

    agent: str
    setting: str
    utility: str
    utility_label: str
    higher_is_better: bool
    amount_name: str
    delta: Optional[float]
    confidence: float
    seeds: tuple
    points: tuple
    references: dict
    settings: dict = field(default_factory=dict)

    def rows(self) -> list[dict]:
        """One flat dict per point, with its amount's references (the table and csv form).

        Returns:
            dicts with keys agent, variant, privacy_unit, epsilon, amount, mean, std, seeds, bound, beats_trivial,
            p_value, p_holm, beats_holm, correction ("holm": :data:`CORRECTION`), user_unit, user_epsilon,
            user_epsilon_lower, verdict, sign_test_p, trivial, non_private, noise, guarantee, infeasible, in the
            order of ``points``.
        """
        out = []
        for p in self.points:
            ref = self.references.get(p.amount, {})
            out.append({"agent": self.agent, "variant": p.variant, "privacy_unit": p.privacy_unit,
                        "epsilon": p.epsilon, "amount": p.amount,
                        "mean": p.mean, "std": p.std, "seeds": len(p.values), "bound": p.bound,
                        "beats_trivial": p.beats_trivial, "p_value": p.p_value, "p_holm": p.p_holm,
                        "beats_holm": p.beats_holm, "correction": "holm",
                        "user_unit": p.user_unit, "user_epsilon": p.user_epsilon,
                        "user_epsilon_lower": p.user_epsilon_lower,
                        "verdict": p.verdict, "sign_test_p": p.sign_test_p,
                        "trivial": ref.get("trivial", {}).get("mean"),
                        "non_private": ref.get("non_private", {}).get("mean"),
                        "noise": p.noise, "guarantee": p.guarantee, "infeasible": p.infeasible})
        return out

    def first_beating(self, variant: str = "valid", corrected: bool = True) -> dict:
        """Per amount, the smallest epsilon whose point beats the trivial reference (None if none does).

        Args:
            variant: "valid" (default), "gaussian" (pucb), "paper", or a dpq learner ("select",
                "fqi-transition", "fqi-episode").
            corrected: True (default): the Holm-corrected verdict over the line's epsilon grid
                (``beats_holm``, :data:`CORRECTION`); False: each point's own verdict (``beats_trivial``),
                with no control of the error across the grid.

        Returns:
            amount -> epsilon (in the variant's own privacy unit) or None.
        """
        V.choice("variant", variant, VARIANT_ORDER)
        out = {}
        for p in self.points:
            if p.variant != variant:
                continue
            out.setdefault(p.amount, None)
            if (p.beats_holm if corrected else p.beats_trivial) and (out[p.amount] is None
                                                                    or p.epsilon < out[p.amount]):
                out[p.amount] = p.epsilon
        return out

    def _variants(self) -> list:
        return [v for v in VARIANT_ORDER if any(p.variant == v for p in self.points)]

    def to_dict(self) -> dict:
        """JSON-ready copy (infinite numbers as None, via ``privcal.records.clean``).

        Returns:
            a dict with the fields, ``points`` as dicts, ``correction`` (:data:`CORRECTION`), per variant
            ``first_beating_<variant>`` (Holm-corrected) and ``first_beating_<variant>_uncorrected``, and the
            user unit.
        """
        from privcal.records import clean

        d = {k: v for k, v in asdict(self).items() if k != "points"}
        d["references"] = {str(k): v for k, v in self.references.items()}
        d["points"] = [asdict(p) for p in self.points]
        d["correction"] = CORRECTION
        d["user_unit"] = USER_UNITS[self.agent]
        for v in dict.fromkeys(["valid"] + self._variants()):
            key = f"first_beating_{v.replace('-', '_')}"
            d[key] = {str(k): e for k, e in self.first_beating(v).items()}
            d[key + "_uncorrected"] = {str(k): e for k, e in self.first_beating(v, corrected=False).items()}
        return clean(d)

    @classmethod
    def from_dict(cls, data: dict) -> "Frontier":
        """The :class:`Frontier` back from :meth:`to_dict`'s output (e.g. a saved JSON file), to redraw or
        re-tabulate it without training. Numbers that were not finite come back as None (nan in ``values``).

        Args:
            data: a dict as :meth:`to_dict` returns it.

        Returns:
            the Frontier.

        Raises:
            ValueError: a field is missing.
        """
        from dataclasses import fields

        names = [f.name for f in fields(cls) if f.name != "points"]
        missing = [n for n in names + ["points"] if n not in data and n != "settings"]
        if missing:
            raise ValueError(f"data is not a saved frontier: missing {', '.join(missing)}")
        kw = {n: data[n] for n in names if n in data}
        kw["seeds"] = tuple(kw["seeds"])
        kw["references"] = {int(k): v for k, v in data["references"].items()}
        point_fields = {f.name for f in fields(FrontierPoint)}
        points = []
        for p in data["points"]:
            p = {k: v for k, v in p.items() if k in point_fields}
            p["values"] = tuple(math.nan if x is None else x for x in p.get("values", ()))
            points.append(FrontierPoint(**p))
        return cls(points=tuple(points), **kw)

    def text(self) -> str:
        """A table for people: one line per point, then the references per amount.

        Returns:
            the text, lines of at most about 130 columns plus the guarantees.
        """
        better = "higher" if self.higher_is_better else "lower"
        alpha = 1.0 - self.confidence
        user = USER_UNITS[self.agent]
        lines = [f"privacy-utility frontier: {self.agent} ({self.setting}), utility {self.utility} ({better} is "
                 f"better), {len(self.seeds)} seeds per point"
                 + (f", delta = {self.delta:g}" if self.delta is not None else ""),
                 (f"beats: beats the trivial reference alone, {PAIRED_NOTE}, confidence {self.confidence:g} "
                  f"(p < {alpha:.2g})" if self.agent == "frozenlake" else
                  f"beats: beats the trivial reference alone, one-sided Student-t test over seeds at confidence "
                  f"{self.confidence:g} (p < {alpha:.2g}; reference std. error added in quadrature)"),
                 f"Holm: {CORRECTION}",
                 f"epsilon: in the point's own unit; user eps: one user's whole {user} (upper bound at the same "
                 f"delta; [lower, upper] for a finer unit)",
                 f"{'variant':14s} {'unit':15s} {'epsilon':>8s} {'user eps':>19s} "
                 f"{self.amount_name.split()[-1]:>6s} {'mean':>9s} {'std':>8s} {'bound':>9s} {'p':>8s} "
                 f"{'beats':>5s} {'Holm':>5s} {'noise':>9s}"]
        for p in self.points:
            head = f"{p.variant:14s} {p.privacy_unit:15s} {p.epsilon:8.4g} {_user(p):>19s} {p.amount:6d}"
            if p.infeasible:
                lines.append(f"{head}  infeasible: {p.infeasible[:60]}")
                continue
            yes = {True: "yes", False: "no", None: "-"}
            lines.append(f"{head} {_num(p.mean):>9s} {_num(p.std):>8s} {_num(p.bound):>9s} {_num(p.p_value):>8s} "
                         f"{yes[p.beats_trivial]:>5s} {yes[p.beats_holm]:>5s} {_num(p.noise):>9s}")
        lines.append("references (same amount of data):")
        for amount, ref in self.references.items():
            parts = [f"{ref['trivial']['label']} {_num(ref['trivial']['mean'])}"]
            if ref["trivial"].get("se"):
                parts[-1] += f" (se {_num(ref['trivial']['se'])})"
            parts.append(f"non-private {_num(ref['non_private']['mean'])} (std {_num(ref['non_private']['std'])})")
            for extra in ("optimum", "lstd"):
                if extra in ref:
                    parts.append(f"{ref[extra]['label']} {_num(ref[extra]['mean'])}")
            lines.append(f"  {self.amount_name} = {amount}: " + "; ".join(parts))
        short = self.amount_name.split()[-1]
        for v in self._variants():
            if v == "paper":
                continue
            first, raw = self.first_beating(v), self.first_beating(v, corrected=False)
            unit = UNITS[self.agent].get(v, "")
            name = "valid (Algorithm 1)" if (v == "valid" and self.agent == "dpq") else v
            lines.append(f"smallest {name} epsilon (per {unit}) that beats the trivial reference, Holm over the "
                         "grid: " + ", ".join(
                f"{short}={a}: {'none' if e is None else f'{e:g}'} (uncorrected: "
                f"{'none' if raw[a] is None else f'{raw[a]:g}'})" for a, e in first.items()))
        guarantees = dict.fromkeys(f"  {p.variant} (unit {p.privacy_unit}): {p.guarantee}" for p in self.points
                                   if p.guarantee)
        lines.append("guarantees:")
        lines.extend(guarantees)
        return "\n".join(lines)

    def markdown(self) -> str:
        """The points as a markdown table (references as columns).

        Returns:
            the table, then one line naming the correction.
        """
        user = USER_UNITS[self.agent]
        head = ["variant", "privacy unit", "epsilon", f"user epsilon (one {user})", self.amount_name, "mean", "std",
                "bound", "p", "beats trivial", "beats (Holm)", "trivial", "non-private", "noise"]
        lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        yes = {True: "yes", False: "no", None: "—"}
        for p, r in zip(self.points, self.rows()):
            first = [r["variant"], r["privacy_unit"], f"{r['epsilon']:g}", _user(p), str(r["amount"])]
            if r["infeasible"]:
                cells = first + ["infeasible: " + r["infeasible"].replace("|", "\\|")[:80]] + [""] * 8
            else:
                cells = first + [_num(r["mean"]), _num(r["std"]), _num(r["bound"]), _num(r["p_value"]),
                                 yes[r["beats_trivial"]], yes[r["beats_holm"]], _num(r["trivial"]),
                                 _num(r["non_private"]), _num(r["noise"])]
            lines.append("| " + " | ".join(cells) + " |")
        lines.append("")
        lines.append(f"beats (Holm): {CORRECTION}; p: one-sided Student-t p-value over seeds.")
        return "\n".join(lines)


def _user(p) -> str:
    """The user-level epsilon in words: '-' (no valid guarantee), 'same' bound, or [lower, upper]."""
    if p.user_epsilon is None:
        return "-"
    if p.user_epsilon_lower is None:
        return f"{p.user_epsilon:.4g}"
    return f"[{p.user_epsilon_lower:.4g}, {p.user_epsilon:.4g}]"


def _num(x) -> str:
    if x is None:
        return "-"
    if isinstance(x, float) and math.isnan(x):
        return "nan"
    return f"{x:.4g}"
