"""The thesis figure, as PNG bytes (``draw_thesis``): per temperature, every task's multiplier under each method (a
dot per method, one row per task), and beside it one panel per view of analysis.thesis (the main effects,
interaction apart; the spread within, interaction counted on both sides), each with its task side and method side as
factors with their intervals, this run's next to those computed from the study's published multipliers. Which bar is
longer says whether the task or the method decides; each interval holds its estimate (the analysis guarantees it)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import matplotlib
import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch
from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

from specbench.analysis.thesis_fit import CANNOT, MAIN_EFFECTS, SPREAD_WITHIN, VIEWS
from specbench.analysis.thesis_text import answer, by_temperature
from specbench.report.figures.style import (
    DPI,
    OKABE_ITO,
    RC_PARAMS,
    condition_styles,
    interval_whisker,
    is_empty,
    no_data,
    render,
    times_label,
)
from specbench.report.labels import ordered, temperature_label

THESIS_SIZE = (13.0, 3.8)  # inches: the width, and the height of one temperature's row


def thesis_size(temperatures: int) -> tuple[float, float]:
    """The figure's size with this many temperature rows (plus the title and footnotes)."""
    return THESIS_SIZE[0], THESIS_SIZE[1] * temperatures + 1.6


TASK_COLOUR, METHOD_COLOUR = OKABE_ITO["orange"], OKABE_ITO["blue"]
PANELS = {  # each view's panel: its title, and what its bars are a factor from
    MAIN_EFFECTS: ("main effects\n(interaction apart)", "factor from the average task / method"),
    SPREAD_WITHIN: ("spread within\n(interaction counted on both sides)", "factor from the method's / task's own mean"),
}
SIDES = {MAIN_EFFECTS: ("task effect", "method effect"), SPREAD_WITHIN: ("across tasks", "across methods")}


def _bars(row: Mapping[str, Any] | None, view: str, published: bool) -> list[tuple[str, float, float, float, str]]:
    """(label, factor, low, high, colour) for the task side and method side of a figure under ``view`` (NaN where
    it has none); a published figure is drawn at the middle of its span over the readings, the span as whiskers."""
    if row is None:
        return []
    out = []
    for name, side, colour in zip(("task", "method"), SIDES[view], (TASK_COLOUR, METHOD_COLOUR), strict=True):
        if published:
            low, high = row[f"{name}_effect"]
            point = (low + high) / 2
        else:
            point, low, high = row[f"{name}_effect"], row[f"{name}_low"], row[f"{name}_high"]
        out.append((side, *(float(np.exp(v)) for v in (point, low, high)), colour))
    return out


def draw_thesis(
    thesis: pd.DataFrame | None,
    baseline: str,
    published: Mapping[str, Any] | None = None,
    tasks: Sequence[str] = (),
    conditions: Sequence[str] = (),
) -> bytes:
    """Draw, per temperature of the ``thesis`` table (analysis.thesis, a row per temperature and view): the
    multipliers of its matrix, a row per task and a dot per method; per view, this run's task and method sides
    (95 % intervals) and those computed from the ``published`` multipliers (analysis.thesis_published: the
    span over every reading of its ranges, no interval) as bars."""
    title = "Does the task or the method decide the multiplier?"
    if is_empty(thesis):
        return no_data(title, "no runs")
    temperatures = by_temperature(thesis)
    methods = ordered([m for views in temperatures for r in views.values() for m in r["methods"]], conditions)
    if not methods:
        return no_data(title, f"only '{baseline}' cells, no method to compare")
    styles = condition_styles(ordered([baseline, *methods], conditions), baseline)
    handles = [
        *(
            Line2D([], [], ls="none", marker=styles[m].marker, color=styles[m].colour, markeredgecolor="0.15", label=m)
            for m in methods
        ),
        Patch(facecolor=TASK_COLOUR, label="task side"),
        Patch(facecolor=METHOD_COLOUR, label="method side"),
    ]
    footnotes = (
        f"Left: each task's multiplier (mean tokens/s over the '{baseline}' mean of the same task) under each method. "
        "Middle, main effects (interaction apart): the task effect, the typical factor between a task's multiplier "
        "and the average task's (root mean square of the task parts of an additive fit to the log multipliers), and "
        "the method effect, the same for the methods; what a method changes only on some tasks counts on neither "
        "side. Right, spread within (interaction counted on both sides): the typical factor between a task's "
        "multiplier and its method's mean over the tasks, and between a method's and its task's mean over the "
        "methods. All debiased for the runs' noise. Whiskers: 95 % interval over the repeats (this run); the span "
        "over every reading of the text's ranges (computed from the study's published multipliers, which have no "
        "per-run numbers). The longer bar decides where the interval of the difference of the squared sides lies "
        "wholly on one side of 0."
    )
    with matplotlib.rc_context(RC_PARAMS):
        fig = Figure(figsize=thesis_size(len(temperatures)), dpi=DPI, layout="constrained")
        fig.suptitle(title, x=0.01, ha="left", fontsize=12, fontweight="bold")
        axes = fig.subplots(
            len(temperatures), 1 + len(VIEWS), squeeze=False, gridspec_kw={"width_ratios": [1.3, 1.0, 1.0]}
        )
        fig.supxlabel(footnotes, x=0.01, ha="left", fontsize=7.5, color="0.3", wrap=True)
        fig.legend(handles=handles, loc="outside upper right", ncols=len(handles), frameon=False)
        for (dots, *panels), views in zip(axes, temperatures, strict=True):
            first = views.get(MAIN_EFFECTS) or next(iter(views.values()))
            _dots(dots, first, methods, styles, tasks)
            for panel, view in zip(panels, VIEWS, strict=True):
                _effects(panel, views.get(view), published["views"][view] if published else None, view)
            dots.set_title(f"temperature {temperature_label(first['temperature'])}", loc="left", fontsize=9.5)
        return render(fig)


def _dots(ax: Any, row: Mapping[str, Any], methods: list[str], styles: Mapping[str, Any], order: Sequence[str]) -> None:
    """One temperature's matrix: a row per task, a dot per method, on a log axis."""
    matrix = row["matrix"]
    names = ordered(list(matrix), order)
    values = [v for t in names for v in matrix[t].values()]
    for ti, task in enumerate(names):
        for mi, method in enumerate(methods):
            if method in matrix[task]:
                offset = (mi - (len(methods) - 1) / 2) * 0.12
                ax.scatter(
                    matrix[task][method],
                    ti + offset,
                    s=42,
                    marker=styles[method].marker,
                    c=styles[method].colour,
                    edgecolors="0.15",
                    linewidths=0.6,
                    zorder=3,
                )
    ax.axvline(1.0, color="0.35", lw=1.0, ls="--", zorder=2)
    ax.set_xscale("log")
    if values:
        ax.set_xlim(min(min(values), 1.0) / 1.3, max(max(values), 1.0) * 1.3)
    ax.xaxis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0)))
    ax.xaxis.set_major_formatter(FuncFormatter(times_label))
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_yticks(range(len(names)), names)
    ax.set_ylim(len(names) - 0.5, -0.5)
    ax.set_xlabel("multiplier (log scale)")


def _effects(ax: Any, row: Mapping[str, Any] | None, published: Mapping[str, Any] | None, view: str) -> None:
    """One view's task and method sides, of this run and computed from the published multipliers, as horizontal
    bars with whiskers."""
    groups = [("this run", _bars(row, view, False))] + (
        [("published", _bars(published, view, True))] if published else []
    )
    labels, y = [], 0
    for group, bars in groups:
        for name, point, low, high, colour in bars:
            if np.isfinite(point):
                ax.barh(y, point - 1, left=1, color=colour, height=0.7, edgecolor="0.15", linewidth=0.6, zorder=3)
                interval_whisker(ax, y, point, low, high, horizontal=True, zorder=4)
                ax.annotate(
                    f"{point:.2f}×",
                    (high if np.isfinite(high) else point, y),
                    xytext=(4, 0),
                    textcoords="offset points",
                    va="center",
                    fontsize=8,
                )
            labels.append(f"{group}: {name}")
            y += 1
        y += 0.4
    ax.set_yticks([i + 0.4 * (i // 2) for i in range(len(labels))], labels)
    ax.set_ylim(y - 0.4, -0.7)
    ax.set_xlim(1.0, ax.get_xlim()[1] * 1.15)
    ax.xaxis.set_major_formatter(FuncFormatter(times_label))
    title, unit = PANELS[view]
    ax.set_xlabel(unit)
    if row is not None and row["decides"] == CANNOT:
        ax.text(0.02, 0.95, f"this run: {row['reason']}", transform=ax.transAxes, va="top", fontsize=8, color="0.3")
    ax.set_title(f"{title}\n{_answer_lines(row, published)}", loc="left", fontsize=8.5)


def _answer_lines(row: Mapping[str, Any] | None, published: Mapping[str, Any] | None) -> str:
    """One view's answer, this run's and the one computed from the published multipliers, as its panel's title."""
    lines = []
    if row is not None:
        lines.append(f"this run: {answer(row)}" + _ratio(row["ratio"], row["ratio_low"], row["ratio_high"], "\n"))
    if published:
        lines.append("from the study's published multipliers:")
        lines.append(f"{answer(published)} (ratio {_span(published['ratio'])})")
    return "\n".join(lines)


def _span(pair: Sequence[float]) -> str:
    low, high = pair
    return f"{low:.2f}" if f"{low:.2f}" == f"{high:.2f}" else f"{low:.2f}-{high:.2f}"


def _ratio(ratio: float, low: float, high: float, before: str = " ") -> str:
    """'(ratio 0.09 [0.07-0.22])' after ``before``, without the interval where there is none; '' without a ratio."""
    if ratio != ratio:
        return ""
    return f"{before}(ratio {ratio:.2f}" + ("" if low != low or high != high else f" [{low:.2f}-{high:.2f}]") + ")"
