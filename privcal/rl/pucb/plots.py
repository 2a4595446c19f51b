"""Figures of the PUCB regret experiments (``privcal.rl.pucb.experiments``).

matplotlib (the ``plot`` extra) is imported inside the plotting functions only, so importing this
module needs nothing beyond numpy. The figures are built without pyplot (``matplotlib.figure.Figure``),
so drawing them never changes the session's matplotlib backend: a notebook can save the figure and
show it inline (``IPython.display.display(fig)``).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any, Union

import numpy as np

from privcal import _validate as V
from privcal.rl.pucb.experiments import RegretExperiment

__all__ = ["regret_figure", "plot_regret"]

#: Distinct colours (tab10 without its grey), line styles and markers of the private curves.
_COLOURS = ("tab:blue", "tab:orange", "tab:green", "tab:red", "tab:purple", "tab:brown")
_STYLES = ("-", "--", "-.", ":", (0, (5, 1)), (0, (3, 1, 1, 1, 1, 1)))
_MARKERS = ("o", "s", "^", "D", "v", "P")
#: How each error bound E is named in titles (``experiment.setting["error_bound"]``).
_BOUND_TITLES = {"valid": "E: valid union bound (privcal.analysis.counter.error_bound)",
                 "paper": "E: the paper's E_ε (Alg. 3) – fails, privcal verify VBKW-E-eps"}


def _matplotlib():
    try:
        from matplotlib.figure import Figure
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError("the PUCB figures need matplotlib: pip install 'privcal[plot]'") from exc
    return Figure


def _style(label: str, k: int) -> dict:
    """Line style of the k-th private level (non-private: black, no marker)."""
    if label == "non-private":
        return {"color": "black", "linestyle": "-", "linewidth": 1.6}
    return {"color": _COLOURS[k % len(_COLOURS)], "linestyle": _STYLES[k % len(_STYLES)],
            "marker": _MARKERS[k % len(_MARKERS)], "markerfacecolor": "none", "markersize": 6,
            "linewidth": 1.5}


def _title(experiment: RegretExperiment) -> str:
    conf = experiment.setting
    seeds = len(conf.get("seeds", ()))
    sizes = f"PUCB on {conf['mdp']}, T = {conf['episodes']} episodes, {seeds} seed{'s' if seeds != 1 else ''}"
    bound = _BOUND_TITLES.get(conf.get("error_bound"), f"E: {conf.get('error_bound')}")
    return f"{sizes}\n{bound}; per-counter ε split: {conf.get('budget_split')}"


def _draw(experiment: RegretExperiment, ax_regret: Any, ax_bars: Any, yscale: str) -> None:
    labels = experiment.labels
    cums = {label: experiment.cumulative(label) for label in labels}
    finals = np.array([c.mean(axis=0)[-1] for c in cums.values()])
    if yscale == "auto":
        pos = finals[finals > 0]
        yscale = "log" if pos.size == finals.size and pos.size and pos.max() >= 10 * pos.min() else "linear"
    k = 0
    drawn = []
    colours = []
    for label in labels:
        cum = cums[label]
        mean = cum.mean(axis=0)
        x = np.arange(1, cum.shape[1] + 1)
        style = _style(label, k)
        text = label.replace("epsilon=", "ε = ")
        if label != "non-private":
            text += f", E = {experiment.error_bounds[label]:.3g}"
        same = next((d for d in drawn if np.array_equal(cums[d], cum)), None)
        if same is not None:
            text += f" [= {same.replace('epsilon=', 'ε = ')}]"
        drawn.append(label)
        every = max(1, x.size // 8)  # markers of coinciding curves at staggered episodes
        (line,) = ax_regret.plot(x, mean, label=text, markevery=(k * every // 4 % every, every),
                                 **style)
        colours.append(line.get_color())
        k += label != "non-private"
        ax_regret.fill_between(x, cum.min(axis=0), cum.max(axis=0), color=line.get_color(),
                               alpha=0.12, linewidth=0)
    ax_regret.set_yscale(yscale)
    ax_regret.set_xlabel("episode t")
    ax_regret.set_ylabel("cumulative regret (exact, value units)\nmean and min–max over seeds")
    ax_regret.set_title(_title(experiment), fontsize=8)
    ax_regret.grid(True, alpha=0.3)
    ax_regret.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0,
                     frameon=False)
    subs = [experiment.suboptimal_episodes(label) for label in labels]
    means = np.array([s.mean() for s in subs])
    hatches = ["" if label == "non-private" else h for label, h in
               zip(labels, ("//", "\\\\", "xx", "..", "++", "oo") * len(labels))]
    ax_bars.bar(range(len(labels)), means, color=colours, alpha=0.6, hatch=hatches, edgecolor="black",
                yerr=[means - [s.min() for s in subs], [s.max() for s in subs] - means])
    ax_bars.set_xticks(range(len(labels)))
    ax_bars.set_xticklabels([label.replace("epsilon=", "ε = ") for label in labels], fontsize=8)
    episodes = experiment.episode_regret[labels[0]].shape[1]
    ax_bars.set_ylabel(f"episodes with regret > {experiment.accuracy:.3g}\n"
                       f"(of {episodes}; mean, min–max over seeds)")
    ax_bars.set_title("accuracy-suboptimal episodes (VBKW Def. 1)", fontsize=8)


def regret_figure(experiment: RegretExperiment, *, compare: Sequence[RegretExperiment] = (),
                  yscale: str = "auto") -> Any:
    """Figure of cumulative regret (mean, min-max band over seeds) and suboptimal episodes.

    One row per experiment (``experiment``, then each of ``compare``, e.g. the same run with the
    paper's error bound), each titled with its sizes and which error bound E its private agents use.
    Every privacy level has its own colour, line style and marker; a curve equal to an earlier one
    says so in the legend (at small T every private agent explores uniformly, whatever epsilon).
    Built without pyplot; needs matplotlib (the ``plot`` extra).

    Args:
        experiment: the result of :func:`privcal.rl.pucb.experiments.regret_experiment`.
        compare: further experiments drawn below it, in order; default none.
        yscale: the regret axis, "auto" (default: log when the final regrets span a decade or
            more), "log" or "linear".

    Returns:
        the ``matplotlib.figure.Figure``.

    Raises:
        ImportError: matplotlib is not installed.
        ValueError: ``yscale`` is not one of the choices.
    """
    V.choice("yscale", yscale, ("auto", "log", "linear"))
    experiments = [experiment, *compare]
    fig = _matplotlib()(figsize=(13, 4.2 * len(experiments)), layout="constrained")
    axes = fig.subplots(len(experiments), 2, squeeze=False, width_ratios=(2.2, 1))
    for exp, (ax_regret, ax_bars) in zip(experiments, axes):
        _draw(exp, ax_regret, ax_bars, yscale)
    return fig


def plot_regret(experiment: RegretExperiment, path: Union[str, os.PathLike], *,
                compare: Sequence[RegretExperiment] = (), yscale: str = "auto") -> str:
    """Save a PNG of :func:`regret_figure`: cumulative regret and suboptimal episodes.

    Needs matplotlib (the ``plot`` extra), imported here only.

    Args:
        experiment: the result of :func:`privcal.rl.pucb.experiments.regret_experiment`.
        path: file to write (PNG).
        compare: further experiments drawn below it (e.g. the paper's error bound); default none.
        yscale: "auto" (default), "log" or "linear", see :func:`regret_figure`.

    Returns:
        ``path`` as a string.

    Raises:
        ImportError: matplotlib is not installed.
    """
    fig = regret_figure(experiment, compare=compare, yscale=yscale)
    fig.savefig(path, dpi=100)
    return str(path)
