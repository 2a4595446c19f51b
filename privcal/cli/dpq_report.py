"""What every ``privcal train dpq`` path reports beside its run: the reference returns and their lines, the memory
check and the picture (Algorithm 1 and the replay loop share them)."""

from __future__ import annotations

from typing import Any, Optional

from privcal.cli import train as _cli_train

__all__ = ["references", "reference_lines", "check_memory", "plot_spec", "MEMORY_BUDGET", "BYTES_PER_SAMPLE_PER_ACTION"]


def references(non_private_last10: Optional[float]) -> dict:
    """The reference returns of the fixed interval environment, and the non-private baseline's (or None).

    Args:
        non_private_last10: the non-private baseline's mean return over its last 10 episodes, or None.

    Returns:
        the references (random policy and move-to-the-middle returns with their standard errors).
    """
    from privcal.rl.envs import reference_return_unchecked as reference_return  # its defaults: nothing to check

    random_mean, random_se = reference_return("random")
    middle_mean, middle_se = reference_return("middle")
    return {"random_policy_return": random_mean, "random_policy_return_se": random_se,
            "move_to_middle_return": middle_mean, "move_to_middle_return_se": middle_se,
            "non_private_last10": non_private_last10}


def reference_lines(refs: dict) -> list:
    """The text lines of the references a DP-Q run was compared with (the non-private learner or baseline, the
    random policy and move-to-the-middle, or the data-independent returns of the random-peak environment).

    Args:
        refs: the references (:func:`references` or the Algorithm-1 run's), or empty.

    Returns:
        the lines, in order.
    """
    lines = []
    if refs and refs.get("non_private_policy_return") is not None:
        lines.append(f"  non-private learner   {refs['non_private_policy_return']:.3f} released greedy policy, last 10 "
                     f"training episodes {refs['non_private_last10']:.3f} ({refs['non_private_learner']}, same seed)")
    elif refs and refs.get("non_private_last10") is not None:
        lines.append(f"  non-private baseline  last 10 {refs['non_private_last10']:.3f} (same seed)")
    if refs and "random_policy_return" in refs:
        lines.append(f"  random policy         {refs['random_policy_return']:.2f} +- {refs['random_policy_return_se']:.2f}; "
                     f"move to the middle {refs['move_to_middle_return']:.2f} (per episode, simulated)")
    elif refs:
        lines.append(f"  data-independent      {refs['data_independent_return_at_peak']:.3f} at this theta "
                     f"(move-to-middle); {refs['best_data_independent_return']:.3f} in expectation over theta ~ "
                     f"U[0, 1] (best data-independent policy)")
        lines.append(f"  threshold at theta    {refs['threshold_at_peak_return']:.3f} (near-optimal; knows theta)")
    return lines


#: bytes a run keeps per sample and action (buffers of the loop)
BYTES_PER_SAMPLE_PER_ACTION = 48
#: the memory a DP-Q run may use
MEMORY_BUDGET = 4 * 2**30


def check_memory(samples: int, actions: int = 2) -> None:
    """Refuse a run whose buffers would not fit :data:`MEMORY_BUDGET` (a ``ValueError`` naming ``--samples``).

    Args:
        samples: the run's T.
        actions: the number of actions; default 2.
    """
    need = samples * (BYTES_PER_SAMPLE_PER_ACTION * actions + 64)
    if need > MEMORY_BUDGET:
        most = MEMORY_BUDGET // (BYTES_PER_SAMPLE_PER_ACTION * actions + 64)
        raise ValueError(f"--samples {samples} needs about {need / 2**30:.3g} GiB, more than the memory budget of "
                         f"{MEMORY_BUDGET / 2**30:g} GiB (at most {most} samples)")


def plot_spec(episodes: Any, label: str, returns: Any, title: str, series: dict, refs: dict) -> Any:
    """The picture of a DP-Q run: its returns per episode against the non-private baseline, the random
    policy and move-to-the-middle (the references it was run with).

    Args:
        episodes: the episode numbers (x).
        label: the run's curve label.
        returns: its return per episode.
        title: the picture's title.
        series: the run's series (``non_private_return`` is drawn when present).
        refs: the references the run was compared with.

    Returns:
        the ``privcal.cli.train.PlotSpec`` of the picture.
    """
    return _cli_train.PlotSpec(
        episodes, label, returns, title=title, xlabel="episode", ylabel="return per episode (50 steps)",
        references={"non-private baseline": series.get("non_private_return"),
                    "random policy": refs.get("random_policy_return"),
                    "move to the middle": refs.get("move_to_middle_return"),
                    "best data-independent policy (expected over theta)":
                        None if "random_policy_return" in refs else refs.get("best_data_independent_return")})
