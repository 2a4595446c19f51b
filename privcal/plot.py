"""Pictures of what each accountant charges: epsilon against steps, the privacy profile, sigma against epsilon.

Each function draws one chart comparing the accountants that support the setting (labelled axes, a
legend naming each accountant and whether its numbers are valid upper bounds) and returns the matplotlib
``Figure``; :func:`save` writes it to a PNG or SVG file. matplotlib is the optional ``plot`` extra
(``pip install 'privcal[plot]'``); without it these functions raise ``ImportError`` saying so.

The setting is the front door's (:func:`privcal.epsilon`): ``steps`` releases of a Gaussian mechanism with
L2 sensitivity ``sensitivity`` and noise standard deviation ``sigma``, optionally subsampled.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any, Optional, Union

import numpy as np

from . import _validate as V
from .accounting.registry import ACCOUNTANTS
from .accounting.events import Neighbouring, Releases, Sampling
from .errors import InfeasibleError
from .analysis.rdp import GridEdgeWarning

__all__ = ["epsilon_vs_steps", "epsilon_vs_epochs", "profile", "sigma_vs_epsilon", "learning_curve", "check_path",
           "save", "pyplot", "PlotSetting", "ACCOUNTANT_ORDER", "CURVE_ENDS", "CURVE_POINTS"]

#: The accountants drawn, in legend order (those that do not support a setting are left out).
ACCOUNTANT_ORDER = ("exact", "pld", "rdp", "kov", "paper")
_STYLE = {"exact": "-", "pld": (0, (5, 1)), "rdp": "--", "kov": "-.", "paper": ":"}
# The exact curve is the truth every bound lies on or above, and the PLD's upper end hugs it: the PLD is drawn
# wide and pale, the exact curve thin, dark and on top, so that neither hides the other.
_LINE = {"exact": dict(color="black", linewidth=1.3, zorder=5),
         "pld": dict(linewidth=3.2, alpha=0.55, zorder=3)}
#: Human words for the codes of the settings (titles and legends carry no code token).
_WORDS = {"poisson": "Poisson", "without_replacement": "without-replacement", "add_remove": "add/remove",
          "replace_one": "replace-one", "zero_out": "zero-out"}


def pyplot() -> Any:
    """matplotlib.pyplot, or an ImportError that says how to install it (``pip install 'privcal[plot]'``).

    For callers that want that error before any work (``privcal train --plot``, ``privcal frontier``).

    Returns:
        the ``matplotlib.pyplot`` module.

    Raises:
        ImportError: matplotlib is not installed.
    """
    return _pyplot()


def _pyplot():
    """The import behind :func:`pyplot`."""
    try:
        import matplotlib.pyplot as plt  # headless machines fall back to Agg
    except ImportError:
        raise ImportError("privcal's plots need matplotlib: pip install 'privcal[plot]'") from None
    return plt


def _accountants(names: Sequence[str], releases: Releases) -> list[str]:
    for n in names:
        V.choice("accountants", n, ACCOUNTANT_ORDER)
    event = releases.event(1.0)
    return [n for n in names if ACCOUNTANTS[n]().supports(event)]


def _label(name: str, releases: Releases) -> str:
    acc = ACCOUNTANTS[name]()
    return name if acc.valid_for(releases.event(1.0)) else f"{name} (not a valid bound)"


def _draw(ax, name: str, xs, ys, releases: Releases, label: Optional[str] = None) -> None:
    ax.plot(xs, ys, linestyle=_STYLE[name], label=label or _label(name, releases), **_LINE.get(name, {}))


def _epsilon(name: str, releases: Releases, sigma: float, delta: float) -> float:
    return _epsilons(name, releases, sigma, [delta])[0]


def _epsilons(name: str, releases: Releases, sigma: float, deltas) -> list[float]:
    """Epsilon at each delta of one composition (composed once, priced at every delta)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", GridEdgeWarning)
        acc = ACCOUNTANTS[name]().compose_unchecked(releases.event(sigma))
        return [float(acc.epsilon_unchecked(float(d))) for d in deltas]


@dataclass(frozen=True)
class PlotSetting:
    """The releases a chart prices and the accountants it draws (:func:`epsilon_vs_steps`, :func:`profile`,
    :func:`sigma_vs_epsilon`).

    Attributes:
        sensitivity: L2 sensitivity of one release under ``neighbouring``, in (0, inf); default 1.
        sample_rate: in (0, 1], or None (default) for no subsampling.
        sampling: "poisson" (default) or "without_replacement".
        neighbouring: the neighbouring relation (default None: the sampling's natural one).
        accountants: names among :data:`ACCOUNTANT_ORDER` ("exact", "pld", "rdp", "kov", "paper"); those that
            do not support the setting are left out. Default: all.

    The values are checked by the chart functions.
    """

    sensitivity: float = 1.0
    sample_rate: Optional[float] = None
    sampling: Sampling = "poisson"
    neighbouring: Optional[Union[Neighbouring, str]] = None
    accountants: Sequence[str] = ACCOUNTANT_ORDER


def _setting(setting: Optional[PlotSetting], overrides: dict) -> PlotSetting:
    """``setting`` (default: :class:`PlotSetting`'s defaults) with the keyword ``overrides`` replacing its fields."""
    if setting is not None and not isinstance(setting, PlotSetting):
        raise ValueError(f"setting must be a PlotSetting, got {setting!r}")
    return replace(setting if setting is not None else PlotSetting(), **overrides)


def _releases(setting: PlotSetting, steps) -> Releases:
    sample_rate = setting.sample_rate
    return Releases(setting.sensitivity, steps, 1.0 if sample_rate is None else sample_rate, setting.sampling,
                    setting.neighbouring)


def _finish(ax, title: str, xlabel: str, ylabel: str, ncol: int = 3):
    import textwrap

    ax.set_title("\n".join(textwrap.wrap(title, 70)), fontsize="medium")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.grid(True, which="both", alpha=0.3)
    # below the axes: a legend inside them covers a curve somewhere (a dpq picture's did)
    count = len(ax.get_legend_handles_labels()[1])
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=min(count, ncol) or 1, fontsize="small",
              frameon=False)
    ax.figure.tight_layout()
    return ax.figure


def _setting_text(releases: Releases) -> str:
    text = f"sensitivity {releases.sensitivity:g}"
    if releases.subsampled:
        text += (f", {_WORDS[releases.sampling]} subsampling q = {releases.sample_rate:g}, "
                 f"{_WORDS[releases.neighbouring.value]} neighbours")
    return text


def epsilon_vs_steps(
    sigma: float,
    delta: float,
    *,
    steps: int,
    points: int = 40,
    setting: Optional[PlotSetting] = None,
    **overrides: Any,
) -> Any:
    """Epsilon at ``delta`` after 1..``steps`` releases, one line per accountant.

    Args:
        sigma: noise standard deviation (absolute), in (0, inf).
        delta: in (0, 1).
        steps: the largest number of releases drawn, an int >= 1 (the x axis is log-spaced up to it).
        points: number of step counts drawn, an int >= 2; default 40.
        setting: the releases and the accountants drawn, a :class:`PlotSetting`; default None: its defaults.
        overrides: fields of :class:`PlotSetting` as keywords (``sensitivity``, ``sample_rate``, ``sampling``,
            ``neighbouring``, ``accountants``), replacing those of ``setting``.

    Returns:
        the matplotlib Figure.
    """
    sigma = V.positive("sigma", sigma)
    delta = V.open_unit("delta", delta)
    steps = V.positive_int("steps", steps)
    points = V.positive_int("points", points)
    setting = _setting(setting, overrides)
    releases = _releases(setting, 1)
    names = _accountants(setting.accountants, releases)
    xs = np.unique(np.geomspace(1, steps, max(points, 2)).round().astype(int))
    fig, ax = pyplot().subplots(figsize=(6.4, 4.2))
    for name in names:
        ys = [_epsilon(name, Releases.unchecked(releases.sensitivity, int(k), releases.sample_rate,
                                                 releases.sampling, releases.neighbouring), sigma, delta)
              for k in xs]
        _draw(ax, name, xs, ys, releases)
    ax.set_xscale("log")
    ax.set_yscale("log")
    return _finish(ax, f"epsilon at delta = {delta:g}, sigma = {sigma:g} ({_setting_text(releases)})",
                   "steps (releases composed)", "epsilon (upper bound; exact: true value)")


def epsilon_vs_epochs(
    sigma: float,
    delta: float,
    *,
    epochs: int,
    batch_size: int,
    dataset_size: int,
    sensitivity: float = 1.0,
    points: int = 12,
) -> Any:
    """Epsilon at ``delta`` after 1..``epochs`` epochs of DP-SGD-style releases at one ``sigma``, for each batch
    sampler: what a practitioner should see before choosing a loader (``privcal plot samplers``).

    Lines: Poisson sampling at q = b/N (valid for a Poisson loader only: Opacus's ``DPDataLoader``), the valid
    upper bound of shuffled and balls-in-bins batches (no amplification, the same for both), their certified
    realisable lower bounds (reshuffled each epoch; one persistent permutation). Each sampler protects one
    record: add/remove neighbours for Poisson and balls-in-bins, zero-out for shuffled batches (``privcal.accounting.sampled_runs``); the sensitivity is the clip norm C under each.

    Args:
        sigma: noise standard deviation (absolute), in (0, inf).
        delta: in (0, 1).
        epochs: the largest number of epochs drawn, an int >= 1 (log-spaced x axis).
        batch_size: b, an int in [1, dataset_size].
        dataset_size: N, an int >= 1.
        sensitivity: C, in (0, inf); default 1.
        points: number of epoch counts drawn, an int >= 2; default 12.

    Returns:
        the matplotlib Figure.
    """
    from .accounting import sampled_runs

    sigma = V.positive("sigma", sigma)
    delta = V.open_unit("delta", delta)
    epochs = V.positive_int("epochs", epochs)
    points = V.positive_int("points", points)
    xs = np.unique(np.geomspace(1, epochs, max(points, 2)).round().astype(int))
    runs: dict = {"reshuffled": [], "persistent": []}
    for e in xs:
        common = dict(epochs=int(e), batch_size=batch_size, dataset_size=dataset_size, sensitivity=sensitivity)
        runs["reshuffled"].append(sampled_runs.sampled_run_epsilon(sigma, delta, sampling="shuffle", **common))
        runs["persistent"].append(sampled_runs.sampled_run_epsilon(sigma, delta, sampling="shuffle", persistent=True,
                                                                   **common))
    fig, ax = pyplot().subplots(figsize=(6.4, 5.2))
    ax.plot(xs, [r.poisson_epsilon for r in runs["reshuffled"]], "-", color="tab:blue",
            label="Poisson q = b/N (valid only for a Poisson loader)")
    ax.plot(xs, [r.epsilon for r in runs["reshuffled"]], "-", color="tab:red",
            label="shuffled / balls-in-bins: valid upper bound (no amplification)")
    ax.plot(xs, [r.lower for r in runs["reshuffled"]], "--", color="tab:red",
            label="reshuffled / balls-in-bins: certified lower bound (realisable)")
    ax.plot(xs, [r.lower for r in runs["persistent"]], ":", color="tab:red",
            label="one persistent permutation: certified lower bound")
    ax.set_xscale("log")
    ax.set_yscale("log")
    return _finish(ax, f"epsilon at delta = {delta:g} per batch sampler: sigma = {sigma:g}, N = {dataset_size}, "
                   f"b = {batch_size}, clip {sensitivity:g} (one record: add/remove; shuffled: zero-out)",
                   "epochs", "epsilon", ncol=1)


def profile(
    sigma: float,
    *,
    steps: int = 1,
    deltas: Optional[Sequence[float]] = None,
    setting: Optional[PlotSetting] = None,
    **overrides: Any,
) -> Any:
    """The privacy profile epsilon(delta) of ``steps`` releases, one line per accountant.

    Args:
        sigma: noise standard deviation (absolute), in (0, inf).
        steps: number of releases, an int >= 1; default 1.
        deltas: the deltas drawn, each in (0, 1); default 40 log-spaced values from 1e-12 to 0.1.
        setting: the releases and the accountants drawn, a :class:`PlotSetting`; default None: its defaults.
        overrides: fields of :class:`PlotSetting` as keywords (``sensitivity``, ``sample_rate``, ``sampling``,
            ``neighbouring``, ``accountants``), replacing those of ``setting``.

    Returns:
        the matplotlib Figure.
    """
    sigma = V.positive("sigma", sigma)
    setting = _setting(setting, overrides)
    releases = _releases(setting, steps)
    ds = np.geomspace(1e-12, 0.1, 40) if deltas is None else np.array([V.open_unit("deltas", d) for d in deltas])
    names = _accountants(setting.accountants, releases)
    fig, ax = pyplot().subplots(figsize=(6.4, 4.2))
    for name in names:
        ys = np.array(_epsilons(name, releases, sigma, ds))
        label = None
        finite = np.isfinite(ys)
        if finite.any() and not finite.all():  # say where the curve stops, and why
            label = (f"{_label(name, releases)}: no finite certified bound below delta = "
                     f"{ds[finite].min():.0e}")
        _draw(ax, name, ds, ys, releases, label)
    ax.set_xscale("log")
    ax.set_yscale("log")
    return _finish(ax, f"privacy profile: {releases.steps} releases, sigma = {sigma:g} ({_setting_text(releases)})",
                   "delta", "epsilon (upper bound; exact: true value)")


def _sigmas(name: str, releases: Releases, targets, delta: float) -> list[float]:
    """The sigma accountant ``name`` certifies for each target epsilon (nan where none reaches it), each searched
    (rtol 1e-6); a target's sigma starts the next one's search, which still certifies its own answer."""
    ys: list[float] = []
    hint = None
    for e in targets:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", GridEdgeWarning)
                sigma = ACCOUNTANTS[name]().sigma_for_unchecked(releases, float(e), delta, sigma_hint=hint, rtol=1e-6)
            ys.append(sigma)
            hint = sigma
        except InfeasibleError:
            ys.append(math.nan)
    return ys


#: the default curve of :func:`sigma_vs_epsilon`: target epsilons from 0.1 to 10, and its number of points
CURVE_ENDS = (0.1, 10.0)
CURVE_POINTS = 25


def _sigma_curve(name: str, releases: Releases, delta: float) -> Optional[tuple[np.ndarray, np.ndarray]]:
    """(epsilons, sigmas): accountant ``name``'s sigma-for-epsilon curve from epsilon 0.1 to 10, drawn through
    points it certifies without a search per point. The sigmas of the two ends are searched (as for given
    targets); between them, CURVE_POINTS - 2 log-spaced sigmas are each priced once, and drawn at the epsilon
    the accountant reports for them. Each point (epsilon(sigma), sigma) lies on the accountant's curve: sigma
    reaches that epsilon, and (epsilon being non-increasing in sigma) no smaller sigma reaches a smaller one.
    One pricing per point instead of a search of ~9 (the KOV accountant's probes take ~40 ms at 1e4 steps).
    None where an end is not reached (the caller then searches each target, and marks the missing ones)."""
    lo_e, hi_e = CURVE_ENDS
    top, bottom = _sigmas(name, releases, [lo_e, hi_e], delta)
    if not (math.isfinite(top) and math.isfinite(bottom) and top > bottom):
        return None
    inner = np.geomspace(top, bottom, CURVE_POINTS)[1:-1]
    xs = [lo_e] + [_epsilon(name, releases, float(s), delta) for s in inner] + [hi_e]
    return np.array(xs), np.concatenate([[top], inner, [bottom]])


def sigma_vs_epsilon(
    delta: float,
    *,
    steps: int = 1,
    epsilons: Optional[Sequence[float]] = None,
    setting: Optional[PlotSetting] = None,
    **overrides: Any,
) -> Any:
    """The sigma each accountant demands for (epsilon, delta), against epsilon.

    Args:
        delta: target delta, in (0, 1).
        steps: number of releases, an int >= 1; default 1.
        epsilons: target epsilons, each in (0, inf), each searched; default None: a curve of 25 points from
            epsilon 0.1 to 10 (:func:`_sigma_curve`: the two ends searched, 23 sigmas between them drawn at the
            epsilon the accountant certifies for each).
        setting: the releases and the accountants drawn, a :class:`PlotSetting`; default None: its defaults.
        overrides: fields of :class:`PlotSetting` as keywords (``sensitivity``, ``sample_rate``, ``sampling``,
            ``neighbouring``, ``accountants``), replacing those of ``setting``.

    Returns:
        the matplotlib Figure (a missing point: that accountant reaches no sigma for that target).
    """
    delta = V.open_unit("delta", delta)
    setting = _setting(setting, overrides)
    releases = _releases(setting, steps)
    targets = None if epsilons is None else np.array([V.positive("epsilons", e) for e in epsilons])
    names = _accountants(setting.accountants, releases)
    fig, ax = pyplot().subplots(figsize=(6.4, 4.2))
    for name in names:
        curve = _sigma_curve(name, releases, delta) if targets is None else None
        if curve is None:  # given targets, or an end of the default curve out of reach: search each target
            xs = np.geomspace(*CURVE_ENDS, CURVE_POINTS) if targets is None else targets
            curve = xs, _sigmas(name, releases, xs, delta)
        _draw(ax, name, *curve, releases)
    ax.set_xscale("log")
    ax.set_yscale("log")
    return _finish(ax, f"sigma for (epsilon, {delta:g})-DP: {releases.steps} releases ({_setting_text(releases)})",
                   "target epsilon", "sigma (noise standard deviation)")


def learning_curve(
    x: Any,
    curves: dict,
    references: Optional[dict] = None,
    *,
    title: str,
    xlabel: str,
    ylabel: str,
    log_y: bool = False,
) -> Any:
    """A training curve with its reference lines: the run, the non-private baseline, the trivial policy.

    Used by ``privcal train ... --plot FILE``. Curves are drawn as lines against ``x``; a reference that is
    a number is drawn as a horizontal dashed line, one that is a sequence (same length as ``x``) as a
    dashed curve.

    Args:
        x: the x values (episodes, iterations), a 1-D sequence.
        curves: label -> y values of the same length as ``x`` (the run itself, first).
        references: label -> a number or a sequence like ``x``; default None (no references).
        title: the chart title.
        xlabel: x-axis label, with its unit.
        ylabel: y-axis label, with its unit.
        log_y: a logarithmic y axis (for values that span decades, e.g. MSPBE); default False.

    Returns:
        the matplotlib Figure.
    """
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(7, 4.2))
    xs = np.asarray(x, dtype=float)
    for label, y in curves.items():
        ax.plot(xs, np.asarray(y, dtype=float), label=label, linewidth=1.6)
    styles = iter(("--", ":", "-.", (0, (5, 1))))
    for label, ref in (references or {}).items():
        if ref is None:
            continue
        style = next(styles, "--")
        if np.ndim(ref) == 0:
            ax.axhline(float(ref), linestyle=style, color="0.35", linewidth=1.2, label=label)
        else:
            ax.plot(xs, np.asarray(ref, dtype=float), linestyle=style, color="0.35", linewidth=1.2, label=label)
    if log_y:
        ax.set_yscale("log")
    return _finish(ax, title, xlabel, ylabel)


def check_path(path: str) -> str:
    """Refuse an output path before any work: a .png or .svg suffix in an existing, writable directory.

    Args:
        path: the output file.

    Returns:
        ``path``.

    Raises:
        ValueError: wrong suffix, missing or unwritable directory, or ``path`` is a directory.
    """
    import os

    suffix = str(path).rsplit(".", 1)[-1].lower() if "." in os.path.basename(str(path)) else ""
    V.choice("plot file suffix", suffix, ("png", "svg"))
    folder = os.path.dirname(os.path.abspath(path))
    if os.path.isdir(path):
        raise ValueError(f"cannot write {path}: it is a directory")
    if not os.path.isdir(folder):
        raise ValueError(f"cannot write {path}: directory {folder} does not exist")
    if not os.access(folder, os.W_OK):
        raise ValueError(f"cannot write {path}: directory {folder} is not writable")
    return path


def save(fig: Any, path: str) -> str:
    """Write ``fig`` to ``path`` (format from the suffix: .png or .svg) and close it.

    Args:
        fig: a matplotlib Figure from this module.
        path: the output file, ending in .png or .svg.

    Returns:
        ``path``.
    """
    V.choice("path suffix", str(path).rsplit(".", 1)[-1].lower() if "." in str(path) else "", ("png", "svg"))
    fig.savefig(path, dpi=120, bbox_inches="tight")  # the legend below the axes stays in the picture
    pyplot().close(fig)
    return path
