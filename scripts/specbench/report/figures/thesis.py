"""The thesis figure, as PNG bytes: per temperature, every task's multiplier under each method (a dot per method, one
row per task), and beside it the task and method effects as factors with their intervals, this run's next to the
published multipliers' (analysis.thesis). Which bar is longer says whether the task or the method decides; each
interval holds its estimate (the analysis guarantees it)."""

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

from specbench.analysis.thesis import CANNOT, METHOD, TASK, TOO_FEW
from specbench.report.figures.style import (
    DPI,
    OKABE_ITO,
    RC_PARAMS,
    condition_styles,
    is_empty,
    no_data,
    ordered,
    render,
    temperature_label,
    times_label,
)

THESIS_SIZE = (11.0, 3.4)  # inches: the width, and the height of one temperature's row


def thesis_size(temperatures: int) -> tuple[float, float]:
    """The figure's size with this many temperature rows (plus the title and footnotes)."""
    return THESIS_SIZE[0], THESIS_SIZE[1] * temperatures + 1.4


TASK_COLOUR, METHOD_COLOUR = OKABE_ITO["orange"], OKABE_ITO["blue"]
ANSWERS = {
    TASK: "the task decides",
    METHOD: "the method decides",
    CANNOT: "cannot be judged",
    TOO_FEW: "too few runs",
}


def answer(row: Mapping[str, Any]) -> str:
    """A figure's answer in words ('the task decides', 'not separated', ...)."""
    return ANSWERS.get(str(row["decides"]), str(row["decides"]))


def _bars(row: Mapping[str, Any] | None, published: bool) -> list[tuple[str, float, float, float, str]]:
    """(label, factor, low, high, colour) for the task and method effects of a figure (NaN where it has none)."""
    if row is None:
        return []
    out = []
    for name, colour in (("task", TASK_COLOUR), ("method", METHOD_COLOUR)):
        if published:
            low, high = row[f"{name}_effect"]
            point = (low + high) / 2
        else:
            point, low, high = row[f"{name}_effect"], row[f"{name}_low"], row[f"{name}_high"]
        out.append((name, *(float(np.exp(v)) for v in (point, low, high)), colour))
    return out


def thesis_figure(
    thesis: pd.DataFrame | None,
    baseline: str,
    published: Mapping[str, Any] | None = None,
    tasks: Sequence[str] = (),
    conditions: Sequence[str] = (),
) -> bytes:
    """Per temperature of the ``thesis`` table (analysis.thesis): the multipliers of its matrix, a row per task and a
    dot per method; the effects of this run (95 % intervals) and of the ``published`` figure (the span
    over every reading of its ranges, no interval) as bars."""
    title = "Does the task or the method decide the multiplier?"
    if is_empty(thesis):
        return no_data(title, "no runs")
    rows = thesis.sort_values("temperature").to_dict("records")
    methods = ordered([m for r in rows for m in r["methods"]], conditions)
    if not methods:
        return no_data(title, f"only '{baseline}' cells, no method to compare")
    styles = condition_styles(ordered([baseline, *methods], conditions), baseline)
    handles = [
        *(
            Line2D([], [], ls="none", marker=styles[m].marker, color=styles[m].colour, markeredgecolor="0.15", label=m)
            for m in methods
        ),
        Patch(facecolor=TASK_COLOUR, label="task effect"),
        Patch(facecolor=METHOD_COLOUR, label="method effect"),
    ]
    footnotes = (
        f"Left: each task's multiplier (mean tokens/s over the '{baseline}' mean of the same task) under each method. "
        "Right: the task effect, the typical factor between a task's multiplier and the average task's (root mean "
        "square of the task parts of an additive fit to the log multipliers), and the method effect, the same for "
        "the methods; both debiased for the runs' noise. Whiskers: 95 % interval over the repeats (this run), the "
        "span over every reading of the text's ranges (published: no per-run numbers). The longer bar decides where "
        "the interval of the difference of the squared effects lies wholly on one side of 0."
    )
    with matplotlib.rc_context(RC_PARAMS):
        fig = Figure(figsize=thesis_size(len(rows)), dpi=DPI, layout="constrained")
        fig.suptitle(title, x=0.01, ha="left", fontsize=12, fontweight="bold")
        axes = fig.subplots(len(rows), 2, squeeze=False, gridspec_kw={"width_ratios": [1.4, 1.0]})
        fig.supxlabel(footnotes, x=0.01, ha="left", fontsize=7.5, color="0.3", wrap=True)
        fig.legend(handles=handles, loc="outside right upper", frameon=False)
        for (dots, effects), row in zip(axes, rows, strict=True):
            _dots(dots, row, methods, styles, tasks)
            _effects(effects, row, published)
            dots.set_title(_answers(row, published), loc="left", fontsize=9.5)
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


def _effects(ax: Any, row: Mapping[str, Any], published: Mapping[str, Any] | None) -> None:
    """The two effects of this run and of the published figure, as horizontal bars with whiskers."""
    groups = [("this run", _bars(row, False))] + ([("published", _bars(published, True))] if published else [])
    labels, y = [], 0
    for group, bars in groups:
        for name, point, low, high, colour in bars:
            if np.isfinite(point):
                ax.barh(y, point - 1, left=1, color=colour, height=0.7, edgecolor="0.15", linewidth=0.6, zorder=3)
                if np.isfinite(low) and np.isfinite(high):
                    ax.errorbar(
                        point,
                        y,
                        xerr=[[point - low], [high - point]],
                        fmt="none",
                        ecolor="0.1",
                        capsize=3,
                        zorder=4,
                    )
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
    ax.set_xlabel("factor from the average task / method")
    if row["decides"] == CANNOT:
        ax.text(0.02, 0.95, f"this run: {row['reason']}", transform=ax.transAxes, va="top", fontsize=8, color="0.3")
    ax.set_title("task and method effects", loc="left", fontsize=9.5)


def _answers(row: Mapping[str, Any], published: Mapping[str, Any] | None) -> str:
    """The temperature's answer, this run's and the published figure's, as the row's title."""
    lines = [
        f"temperature {temperature_label(row['temperature'])}, this run: {answer(row)}"
        + _ratio(row["ratio"], row["ratio_low"], row["ratio_high"])
    ]
    if published:
        low, high = published["ratio"]
        lines.append(f"published multipliers: {answer(published)} (ratio {low:.2f}-{high:.2f})")
    return "\n".join(lines)


def _ratio(ratio: float, low: float, high: float) -> str:
    """' (ratio 0.09 [0.07-0.22])', without the interval where there is none; '' without a ratio."""
    if ratio != ratio:
        return ""
    return f" (ratio {ratio:.2f}" + ("" if low != low or high != high else f" [{low:.2f}-{high:.2f}]") + ")"
