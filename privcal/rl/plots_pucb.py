"""Figures of the PUCB regret experiments (``privcal.rl.experiments_pucb``).

matplotlib (the ``plot`` extra) is imported inside the plotting function only, so importing this
module needs nothing beyond numpy.
"""

from __future__ import annotations

import os
from typing import Union

import numpy as np

from privcal.rl.experiments_pucb import RegretExperiment

__all__ = ["plot_regret"]


def plot_regret(experiment: RegretExperiment, path: Union[str, os.PathLike]) -> str:
    """Save a PNG: cumulative regret (mean and min-max band over seeds) and suboptimal episodes.

    Needs matplotlib (the ``plot`` extra), imported here only.

    Args:
        experiment: the result of :func:`privcal.rl.experiments_pucb.regret_experiment`.
        path: file to write (PNG).

    Returns:
        ``path`` as a string.

    Raises:
        ImportError: matplotlib is not installed.
    """
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError("plot_regret needs matplotlib: pip install 'privcal[plot]'") from exc
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4))
    labels = experiment.labels
    for label in labels:
        cum = experiment.cumulative(label)
        x = np.arange(1, cum.shape[1] + 1)
        line, = ax1.plot(x, cum.mean(axis=0), label=label)
        ax1.fill_between(x, cum.min(axis=0), cum.max(axis=0), color=line.get_color(), alpha=0.2)
    ax1.set_xlabel("episode t")
    ax1.set_ylabel("cumulative regret (exact)")
    conf = experiment.setting
    ax1.set_title(f"PUCB on {conf['mdp']}, E: {conf['error_bound']}, split: {conf['budget_split']}",
                  fontsize=9)
    ax1.legend(fontsize=8)
    subs = [experiment.suboptimal_episodes(label) for label in labels]
    ax2.bar(range(len(labels)), [s.mean() for s in subs],
            yerr=[[s.mean() - s.min() for s in subs], [s.max() - s.mean() for s in subs]])
    ax2.set_xticks(range(len(labels)))
    ax2.set_xticklabels(labels, fontsize=8)
    ax2.set_ylabel(f"episodes with regret > {experiment.accuracy:.3g}")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return str(path)
