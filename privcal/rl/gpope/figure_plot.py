"""Drawing the GPOPE paper's figures (:func:`plot`) from an :class:`~privcal.rl.gpope.experiments.ExperimentResult`.

One panel per figure: each method's mean curve with a band of one standard deviation over the trials, the
references (LSTD, WIS-LSTD, theta = 0) as dashed lines, the sigma each curve used in its label, and a title that
says the domain, the sizes and the privacy target. ``privcal.rl.gpope.experiments`` runs the figures and
re-exports :func:`plot`.
"""

from __future__ import annotations

import textwrap
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Optional

import numpy as np

from privcal import _validate as V
from privcal.rl.gpope.agent import PAPER_BOUND, VALID_BOUND

# ``ExperimentResult`` in the annotations below is privcal.rl.gpope.experiments.ExperimentResult (not imported:
# that module imports this one)
__all__ = ["PlotStyle", "plot"]


#: Curves drawn as references (grey or black, no marker): non-private estimators and theta = 0.
_REFERENCES = {"LSTD": ("0.15", "--"), "WIS-LSTD": ("0.15", "--"), "theta=0": ("0.45", ":")}
#: Distinct colours (tab10 without its grey) and markers for the private curves of one result.
_COLOURS = ("tab:blue", "tab:orange", "tab:green", "tab:red", "tab:purple", "tab:brown",
            "tab:pink", "tab:olive", "tab:cyan")
_MARKERS = ("o", "s", "^", "D", "v", "P", "X", "<", ">")
#: Panel titles of the figure functions (domain, policy and what is swept).
_TITLES = {"figure1a": "GPOPE Fig. 1(a): chain, on-policy, MSPBE vs m",
           "figure1b": "GPOPE Fig. 1(b): chain, on-policy, MSPBE vs step size",
           "figure2a": "GPOPE Fig. 2(a): Mountain Car, on-policy, MSPBE vs m",
           "figure2b": "GPOPE Fig. 2(b): Mountain Car, on-policy, MSPBE vs step size",
           "figure3a": "GPOPE Fig. 3(a): Mountain Car, on-policy, several epsilons",
           "figure3b": "GPOPE Fig. 3(b): Mountain Car, off-policy (uniform target), several epsilons",
           "figure4": "GPOPE Fig. 4: HIV simulator, off-policy, several epsilons"}
#: Axis labels with units, keyed by the labels the figure functions record.
_AXIS_LABELS = {"MSPBE": "MSPBE (squared value units)",
                "relative MSPBE": "relative MSPBE (MSPBE / mean reward², unitless)",
                "step size": "constant step size s (per iteration, unitless)"}


def _is_reference(name: str) -> bool:
    return name in _REFERENCES or "non-private" in name


def _curve_style(name: str, k: int) -> dict:
    """Line style of curve ``name``, the k-th private curve of its result (references by name).

    Colour and marker are unique per private curve; the line style says the guarantee: solid for a
    valid sigma, dashed for the paper's sigma (no valid guarantee), dash-dot for DP-LSW / DP-LSL.
    """
    if name in _REFERENCES:
        colour, style = _REFERENCES[name]
        return {"color": colour, "linestyle": style, "marker": None, "linewidth": 1.4}
    if "non-private" in name:
        return {"color": "black", "linestyle": "-", "marker": None, "linewidth": 1.6}
    style = "--" if "paper" in name else "-." if name.startswith("DP-LS") else "-"
    return {"color": _COLOURS[k % len(_COLOURS)], "linestyle": style,
            "marker": _MARKERS[k % len(_MARKERS)], "markersize": 6, "markerfacecolor": "none",
            "markeredgewidth": 1.3, "linewidth": 1.4}


def _sigma_note(result: ExperimentResult, name: str) -> str:
    """", sigma = ..." for a GPOPE curve, from the result's metadata ("" when unknown)."""
    sig = result.meta.get("sigma") or {}
    values = sig.get(name)
    if values is None and "valid" in name:
        values = sig.get(VALID_BOUND)
    if values is None and "paper" in name:
        values = sig.get(PAPER_BOUND)
    if values is None:
        return ""
    values = np.atleast_1d(np.asarray(values, dtype=float))
    if values.size > 1 and values[0] != values[-1]:
        return f", σ {values[0]:.3g}→{values[-1]:.3g}"
    return f", σ = {values[0]:.3g}"


def _title(result: ExperimentResult) -> str:
    """Two-line title: the figure and domain, then the setting and which sigma each curve uses."""
    meta = result.meta
    head = _TITLES.get(result.name, result.name)
    parts = []
    swept = any("eps=" in name for name in result.curves)
    if "epsilon" in meta and not swept:
        parts.append(f"ε = {meta['epsilon']:g}")
    if "delta" in meta:
        parts.append(f"δ = {meta['delta']:g}")
    if "m" in meta:
        parts.append(f"m = {meta['m']}")
    if "iterations" in meta:
        parts.append(str(meta["iterations"]).replace(" ", ""))
    if "clip" in meta:
        parts.append(f"h = {meta['clip']:g}")
    if "trials" in meta:
        parts.append(f"mean ± 1 sd over {meta['trials']} trials")
    names = " ".join(result.curves)
    if "valid" in names or swept:
        parts.append("valid σ: RDP/PLD (upper bound)")
    if "paper" in names:
        parts.append("paper σ: Lemma 1 (no valid guarantee)")
    return "\n".join([head, *textwrap.wrap(", ".join(parts), 75)])


def _auto_scale(values: np.ndarray, scale: str, name: str) -> str:
    """"log" when the finite positive values span a decade or more (scale "auto"), else as given."""
    V.choice(name, scale, ("auto", "log", "linear"))
    if scale != "auto":
        return scale
    v = values[np.isfinite(values) & (values > 0)]
    return "log" if v.size and v.size == values[np.isfinite(values)].size and v.max() >= 10 * v.min() \
        else "linear"


@dataclass(frozen=True)
class PlotStyle:
    """What :func:`plot` draws and how (defaults in one place).

    Fields:
        curves: names of the curves to draw, in this order; default None (all, in the result's order).
        xscale: "auto" (default: log when the x values span a decade or more), "log" or "linear".
        yscale: "auto" (default: log when the drawn means span a decade or more), "log" or "linear".
        title: axes title; default None (the figure, its setting and which sigma the curves use).
        legend: "outside" (default: right of the axes, never over the data), "inside" or "none".
    """

    curves: Optional[Sequence[str]] = None
    xscale: str = "auto"
    yscale: str = "auto"
    title: Optional[str] = None
    legend: str = "outside"


def plot(result: ExperimentResult, path: Any = None, ax: Any = None, style: Optional[PlotStyle] = None,
         **keywords: Any) -> Any:
    """Plot the mean of each curve with a +-1 std band, save a PNG if ``path``; returns the axes.

    Every private curve has its own colour and marker (hollow, so coinciding curves stay visible),
    fixed by its place in the result (the same in every panel drawn from it);
    the line style says its guarantee (solid: valid sigma, dashed: the paper's sigma, dash-dot:
    DP-LSW / DP-LSL); references (LSTD, WIS-LSTD, theta = 0, non-private runs) are grey or black.
    A curve equal to an earlier one says so in the legend. Needs matplotlib (the ``plot`` extra);
    draws through pyplot only when it makes its own figure.

    Args:
        result: what a figure function returned (or any :class:`ExperimentResult`).
        path: PNG file to write (str or path-like); default None (no file).
        ax: matplotlib axes to draw on; default None (a new figure).
        style: a :class:`PlotStyle` (None: its defaults), its fields replaced by the keywords below.
        **keywords: the :class:`PlotStyle` fields ``curves`` (default None: all, in the result's order),
            ``xscale`` ("auto": log when the x values span a decade or more; "log" or "linear"), ``yscale``
            ("auto": log when the drawn means span a decade or more), ``title`` (None: the figure, its setting
            and which sigma the curves use) and ``legend`` ("outside", "inside" or "none").

    Returns:
        the axes.

    Raises:
        ValueError: an unknown curve name or scale.
    """
    st = V.settings_with("plot", PlotStyle, style, keywords)
    curves, xscale, yscale, title, legend = st.curves, st.xscale, st.yscale, st.title, st.legend
    V.choice("legend", legend, ("outside", "inside", "none"))
    names = list(result.curves) if curves is None else list(curves)
    for name in names:
        if name not in result.curves:
            raise ValueError(f"curves must name curves of the result {sorted(result.curves)}, got {name!r}")
    x = np.asarray(result.x, dtype=float)
    means = {n: np.asarray(result.curves[n]["mean"], dtype=float) for n in names}
    xscale = _auto_scale(x, xscale, "xscale")
    yscale = _auto_scale(np.concatenate([means[n] for n in names]) if names else np.zeros(0),
                         yscale, "yscale")
    import matplotlib
    if ax is None and path is not None:
        matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt
    own = ax is None
    if own:
        fig, ax = plt.subplots(figsize=(8.5, 4.2))
    positive = np.concatenate([m[np.isfinite(m) & (m > 0)] for m in means.values()] or [np.zeros(0)])
    floor = positive.min() * 1e-3 if positive.size else 1e-12
    private = [n for n in result.curves if not _is_reference(n)]  # colours fixed by the result
    drawn = []
    for name in names:
        c = result.curves[name]
        mean = means[name]
        std = np.asarray(c["std"], dtype=float)
        div = int(np.sum(c["diverged"]))
        label = name + ("" if _is_reference(name) else _sigma_note(result, name))
        label += f" ({div} diverged)" if div else ""
        same = next((d for d in drawn if np.array_equal(means[d], mean, equal_nan=True)), None)
        if same is not None:
            label += f" [= {same}]"
        drawn.append(name)
        line_style = _curve_style(name, private.index(name) if name in private else 0)
        (line,) = ax.plot(x, mean, label=label, **line_style)
        lo = mean - std
        if yscale == "log":
            lo = np.maximum(lo, floor)
        ax.fill_between(x, lo, mean + std, color=line.get_color(), alpha=0.12, linewidth=0)
    ax.set_xscale(xscale)
    ax.set_yscale(yscale)
    ax.set_xlabel(_AXIS_LABELS.get(result.xlabel, result.xlabel))
    ax.set_ylabel(_AXIS_LABELS.get(result.ylabel, result.ylabel))
    ax.set_title(_title(result) if title is None else title, fontsize=9)
    ax.grid(True, which="major", alpha=0.3)
    if legend == "outside":
        ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0,
                  frameon=False)
    elif legend == "inside":
        ax.legend(fontsize=7)
    if own:
        fig.tight_layout()
        if path is not None:
            fig.savefig(path, dpi=120, bbox_inches="tight")
            plt.close(fig)
    return ax
