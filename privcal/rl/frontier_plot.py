r"""The picture of a privacy-utility frontier: one panel per privacy unit (:func:`panels`, :func:`plot_frontier`).

One colour and one marker per method, the amount of data by line style, filled markers where the point beats the
trivial reference after Holm's correction; every x axis names its unit. Needs matplotlib (the ``plot`` extra).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from privcal.rl.frontier_result import COVERS_USER, USER_UNITS, VARIANT_ORDER, Frontier

__all__ = ["panels", "plot_frontier", "method_label"]


def _pyplot():
    try:
        import matplotlib.pyplot as plt
    except ImportError:
        raise ImportError("privcal's plots need matplotlib: pip install 'privcal[plot]'") from None
    return plt

#: the panels' order: finest unit first
_PANEL_ORDER = ("transition", "episode", "trajectory", "reward-function")


def panels(result: Frontier) -> list:
    """The privacy units of :func:`plot_frontier`'s panels, one panel per unit, finest first.

    A unit finer than the user (dpq's transition) also shows its points at their user-level epsilon in the user's
    panel, so the user's panel exists whenever such points do.

    Args:
        result: what :func:`frontier` returned.

    Returns:
        the units, e.g. ["transition", "episode", "reward-function"] for dpq on the random-peak environment.
    """
    units = {p.privacy_unit for p in result.points}
    if any(p.user_epsilon is not None and p.privacy_unit not in COVERS_USER for p in result.points):
        units.add(USER_UNITS[result.agent])
    return [u for u in _PANEL_ORDER if u in units]


#: one colour and one marker per method (the same in every panel and agent)
_COLOURS = {"select": "tab:purple", "fqi-transition": "tab:blue", "fqi-episode": "tab:green", "valid": "tab:orange",
            "gaussian": "tab:cyan", "paper": "tab:red"}
_MARKERS = {"select": "D", "fqi-transition": "v", "fqi-episode": "P", "valid": "o", "gaussian": "^", "paper": "s"}
_USER_MARKER = "X"  # a finer unit's points drawn at their user-level epsilon
#: the amount of data by line style (first, second, ... amount of the sweep)
_AMOUNT_STYLES = ("-", "--", "-.", (0, (1, 1.5)))
#: the x axis of each unit's panel
_AXIS = {"transition": "ε per transition (one (s, a, r, s') of a user's 50-step episode)",
         "episode": "ε per episode (one user's whole episode)",
         "trajectory": "ε per trajectory (one user's trajectory, replaced)",
         "reward-function": "ε per reward function (any change of the data, so also per user)"}


def method_label(agent: str, variant: str) -> str:
    """A method's legend label; the paper's noise always says it has no valid guarantee.

    Args:
        agent: the frontier's agent.
        variant: the point's variant.
    """
    if variant == "paper":
        return {"pucb": "paper's budget split and E (no valid guarantee)"}.get(agent, "paper σ (no valid guarantee)")
    return {("dpq", "valid"): "Algorithm 1, valid σ", ("gpope", "valid"): "GPOPE, valid σ",
            ("pucb", "valid"): "PUCB, Laplace counters (valid)", ("pucb", "gaussian"): "PUCB, Gaussian counters (valid)",
            ("dpq", "select"): "select (randomized response, 40 policies)",
            ("dpq", "fqi-transition"): "fqi-dpsgd, transition unit", ("dpq", "fqi-episode"): "fqi-dpsgd, episode unit",
            ("frozenlake", "select"): "select (exponential mechanism over public policies)",
            ("frozenlake", "fqi-episode"): "fqi-dpsgd (DP-SGD fitted-Q), episode unit",
            }.get((agent, variant), variant)


def plot_frontier(result: Frontier, path: Any = None, ax: Any = None, figure: Any = None) -> Any:
    """Utility against epsilon (log x), one panel per privacy unit (:func:`panels`), each x axis naming its unit.

    One colour and one marker per method; the amount of data by line style; a marker is filled where the
    point beats the trivial reference after Holm's correction over its line's epsilon grid (``beats_holm``)
    and hollow where it does not. A unit finer than the user (dpq's transition) is drawn in its own panel and
    again, marker "X", at its user-level epsilon (upper bound) in the user's panel. The paper's noise is
    labelled "no valid guarantee". Error bars are one sample standard deviation over seeds. The trivial
    reference is a thick black line, each amount's non-private baseline a grey line in that amount's style, the
    optimum (dpq) an olive dotted line. Infeasible calibrations (no point, a gap in the line) are listed under
    the panel's x axis. The legend sits right of each panel, inside the figure. Needs matplotlib (the ``plot``
    extra).

    Args:
        result: what :func:`frontier` returned.
        path: PNG or SVG file to write (``privcal.plot.check_path`` rules); default None (no file).
        ax: matplotlib axes to draw on: one Axes when the result has one panel, or a sequence of Axes, one per
            panel; default None (new axes).
        figure: a matplotlib Figure or SubFigure to draw the panels in, stacked (e.g. one agent of a larger
            picture); default None (a new figure). Not with ``ax``.

    Returns:
        the Figure or SubFigure drawn on (the root figure is closed after saving when ``path`` is given).

    Raises:
        ValueError: ``ax`` does not match the panels, or both ``ax`` and ``figure`` are given.
    """
    from privcal import plot as P

    plt = _pyplot()
    if path is not None:
        P.check_path(path)
    units = panels(result)
    if ax is not None and figure is not None:
        raise ValueError("give ax or figure, not both")
    if ax is not None:
        axes = [ax] if hasattr(ax, "plot") else list(ax)
        if len(axes) != len(units):
            raise ValueError(f"ax: the {result.agent} frontier has {len(units)} panel(s), one per privacy unit "
                             f"({', '.join(units)}); got {len(axes)} axes")
        fig = axes[0].figure
    else:
        fig = figure if figure is not None else plt.figure(layout="constrained", figsize=(12.5, 4.6 * len(units)))
        axes = list(np.atleast_1d(fig.subplots(len(units), 1, squeeze=False)[:, 0]))
    for unit, panel in zip(units, axes):
        _draw_panel(result, unit, panel, explain=ax is not None)
    if ax is None:  # what the markers and bars mean, once per agent, across the figure's width
        fig.suptitle(_explanation(result), fontsize=9)
    if path is not None:
        root = fig.get_figure(root=True) if hasattr(fig, "get_figure") else fig
        P.save(root, path)
    return fig


def _explanation(result: Frontier) -> str:
    better = "higher" if result.higher_is_better else "lower"
    n = len(result.seeds)
    test = (f"paired one-sided t over the {n} seeds' maps,\nrun minus the reference policy on the same map"
            if result.agent == "frozenlake" else f"one-sided t over the {n} seeds")
    return (f"{result.agent}: privacy-utility frontier ({result.setting} setting; {better} is better). Filled marker: "
            f"beats the trivial reference ({test}, Holm over each line's ε "
            f"grid, family-wise error {1 - result.confidence:.2g});\nhollow: not shown to beat it. Error bars: mean "
            "+- 1 sample standard deviation over seeds. One panel per privacy unit; each x axis names its unit.")


def _delta_note(result: Frontier) -> str:
    if result.delta is None:
        return ""
    if result.agent == "pucb":  # Laplace counters are pure epsilon-JDP; the delta is the Gaussian counters'
        return f" [δ = {result.delta:g} for the Gaussian counters; Laplace: pure ε]"
    return f" [δ = {result.delta:g}]"


def _draw_panel(result: Frontier, unit: str, ax: Any, explain: bool) -> None:
    from matplotlib.lines import Line2D

    amounts = list(result.references)
    short = result.amount_name.split()[-1]
    user = USER_UNITS[result.agent]
    series = []  # (variant, drawn at the user-level epsilon, its points), in legend order
    for v in VARIANT_ORDER:
        pts_v = [p for p in result.points if p.variant == v and p.privacy_unit == unit]
        if pts_v:
            series.append((v, False, pts_v))
        if unit == user:  # a finer unit drawn again at its user-level epsilon, in the user's panel
            pts_u = [p for p in result.points if p.variant == v and p.privacy_unit not in COVERS_USER
                     and p.user_epsilon is not None]
            if pts_u:
                series.append((v, True, pts_u))
    missing = [p for _, user_level, pts in series if not user_level for p in pts if p.infeasible]
    handles = {}
    # the last series of the legend is drawn first, with the largest markers, so that coinciding points of
    # different methods show as nested markers instead of hiding each other
    sizes = np.linspace(30.0, 30.0 + 22.0 * (len(series) - 1), len(series))
    for (v, user_level, pts_v), size in reversed(list(zip(series, sizes))):
        colour = _COLOURS[v]
        marker = _USER_MARKER if user_level else _MARKERS[v]
        for ai, amount in enumerate(amounts):
            pts = [p for p in pts_v if p.amount == amount]
            if not pts or all(p.infeasible for p in pts):
                continue
            # an infeasible point is a gap in its line (nan), never bridged
            x = np.array([p.user_epsilon if user_level else p.epsilon for p in pts], dtype=float)
            y = np.array([math.nan if (p.infeasible or p.mean is None) else p.mean for p in pts], dtype=float)
            err = np.array([p.std or 0.0 for p in pts], dtype=float)
            beat = np.array([bool(p.beats_holm) for p in pts])
            style = _AMOUNT_STYLES[ai % len(_AMOUNT_STYLES)]
            ax.errorbar(x, y, yerr=err, linestyle=style, color=colour, capsize=2, linewidth=1.3, gid=f"method:{v}")
            ok = np.isfinite(y)
            ax.scatter(x[ok & beat], y[ok & beat], marker=marker, color=colour, s=size, zorder=3)
            ax.scatter(x[ok & ~beat], y[ok & ~beat], marker=marker, facecolors="white", edgecolors=colour, s=size,
                       linewidths=1.2, zorder=3)
            label = method_label(result.agent, v) + (", at its user-level ε (upper bound)" if user_level else "")
            handles[(v, user_level)] = Line2D([], [], color=colour, marker=marker, markersize=7, linewidth=1.3,
                                              label=label, gid=f"method:{v}")
    method_handles = [handles[(v, u)] for v, u, _ in series if (v, u) in handles]
    ref_handles = []
    for ai, amount in enumerate(amounts):
        style = _AMOUNT_STYLES[ai % len(_AMOUNT_STYLES)]
        np_mean = result.references[amount]["non_private"]["mean"]
        if np_mean is not None and math.isfinite(np_mean):
            ax.axhline(np_mean, linestyle=style, color="0.55", linewidth=1.1)
    amount_handles = [Line2D([], [], color="black", linestyle=_AMOUNT_STYLES[ai % len(_AMOUNT_STYLES)],
                             linewidth=1.3, label=f"{short} = {amount}") for ai, amount in enumerate(amounts)]
    learner = "fqi-dpsgd " if result.agent == "frozenlake" else ""  # frozenlake's two methods: name the baseline's
    ref_handles.append(Line2D([], [], color="0.55", linewidth=1.1, label=f"non-private {learner}(no noise; style: its "
                                                                          f"{short})"))
    triv = result.references[amounts[0]]["trivial"]
    ax.axhline(triv["mean"], color="black", linewidth=2.2, zorder=2)
    ref_handles.append(Line2D([], [], color="black", linewidth=2.2, label=f"trivial: {triv['label']}"))
    opt = result.references[amounts[0]].get("optimum")
    if opt is not None:
        ax.axhline(opt["mean"], linestyle=(0, (1, 1)), color="tab:olive", linewidth=1.4)
        ref_handles.append(Line2D([], [], linestyle=(0, (1, 1)), color="tab:olive", linewidth=1.4,
                                  label=opt["label"]))
    hollow = Line2D([], [], linestyle="none", marker="o", markerfacecolor="white", markeredgecolor="black",
                    label="hollow: not shown to beat trivial (Holm)")
    ax.set_xscale("log")
    if result.agent == "gpope":
        ax.set_yscale("log")
    title = f"{result.agent}: ε per {unit.replace('-', ' ')}"
    if explain:  # drawn on the caller's axes: the explanation goes with the panel
        import textwrap

        title = textwrap.fill(_explanation(result).replace("\n", " "), 110)
    ax.set_title(title, fontsize=8.5)
    ax.set_xlabel(_AXIS[unit] + (", user-level" if unit == user and unit != "reward-function" else "")
                  + _delta_note(result) + ", log scale", fontsize=8.5)
    ax.set_ylabel(result.utility_label, fontsize=8.5)
    ax.grid(True, which="both", alpha=0.3)
    handles = method_handles + amount_handles + [hollow] + ref_handles
    legend = ax.legend(handles=handles, fontsize=7.5, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0)
    for shown, handle in zip(legend.legend_handles, handles):  # the legend draws copies: keep the method's name
        shown.set_gid(handle.get_gid())
    if missing:  # under the x label: never over the data
        import textwrap

        groups: dict = {}
        for p in missing:
            groups.setdefault((p.variant, p.amount), []).append(f"{p.epsilon:g}")
        text = ("infeasible calibration (no point; a gap in its line): "
                + "; ".join(f"{v}, {short}={a}: eps = {', '.join(e)}" for (v, a), e in groups.items()))
        ax.annotate(textwrap.fill(text, 120), xy=(0.0, 0.0), xycoords=("axes fraction", ax.xaxis.label),
                    xytext=(0, -4), textcoords="offset points", va="top", ha="left", fontsize=7, color="darkred",
                    bbox={"facecolor": "white", "edgecolor": "darkred", "pad": 2}, gid="infeasible")
