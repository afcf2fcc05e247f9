"""How the report's figures look and are drawn: sizes, the Okabe-Ito colours, markers and hatches per condition,
matplotlib settings, axes helpers, and rendering a figure to PNG bytes (``render``) or a small "no data" one."""

from __future__ import annotations

import io
import textwrap
from collections.abc import Sequence
from typing import Any, NamedTuple

import matplotlib
import numpy as np
import pandas as pd
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.ticker import (
    LogLocator,
    NullFormatter,
)

from specbench.report.labels import temperature_label

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


DPI = 110


MULTIPLIER_SIZE = (11.0, 5.6)  # inches; every figure has a fixed size so its pixel size is figsize * DPI


ACCEPTANCE_SIZE = (11.0, 5.6)


TIMELINE_SIZE = (11.0, 5.0)


NO_DATA_SIZE = (5.0, 1.6)


# Okabe & Ito (2008), "Color Universal Design"; yellow is kept last, it is faint on white.
OKABE_ITO = {
    "black": "#000000",
    "orange": "#E69F00",
    "sky blue": "#56B4E9",
    "bluish green": "#009E73",
    "yellow": "#F0E442",
    "blue": "#0072B2",
    "vermillion": "#D55E00",
    "reddish purple": "#CC79A7",
}


class Style(NamedTuple):
    """How one condition is drawn: an Okabe-Ito colour, a marker shape and a hatch for bars."""

    colour: str
    marker: str
    hatch: str


BASELINE_STYLE = Style(OKABE_ITO["black"], "o", "")


# The other conditions take these by their position in the condition order (markers and hatches outlast colours).
_COLOURS = [
    OKABE_ITO[c] for c in ("blue", "vermillion", "bluish green", "sky blue", "orange", "reddish purple", "yellow")
]


_MARKERS = ["s", "^", "v", "D", "P", "X", "*", "h", "<", ">"]


_HATCHES = ["//", "\\\\", "..", "xx", "++", "oo", "--", "||", "//..", "xx--"]


RC_PARAMS = {
    "svg.hashsalt": "specbench",
    "figure.dpi": DPI,
    "savefig.dpi": DPI,
    "font.size": 9,
    "axes.titlesize": 10,
    "axes.labelsize": 9,
    "xtick.labelsize": 8.5,
    "ytick.labelsize": 8.5,
    "legend.fontsize": 8.5,
    "axes.grid": True,
    "grid.color": "0.88",
    "grid.linewidth": 0.6,
    "axes.axisbelow": True,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "hatch.linewidth": 0.7,
    "path.simplify": False,
}


def condition_styles(conditions: Sequence[str], baseline: str) -> dict[str, Style]:
    """Styles by position in ``conditions`` (the config's order): the baseline black circles, the others the
    colour, marker and hatch cycles in turn, so one config gives every condition the same style in every figure."""
    others = [c for c in conditions if c != baseline]
    styles = {
        c: Style(_COLOURS[i % len(_COLOURS)], _MARKERS[i % len(_MARKERS)], _HATCHES[i % len(_HATCHES)])
        for i, c in enumerate(others)
    }
    return {baseline: BASELINE_STYLE, **styles}


def render(fig: Figure) -> bytes:
    canvas = FigureCanvasAgg(fig)
    buffer = io.BytesIO()
    try:
        canvas.print_png(buffer, metadata={"Software": None})
    finally:
        fig.clear()
    return buffer.getvalue()


def no_data(title: str, reason: str = "") -> bytes:
    with matplotlib.rc_context(RC_PARAMS):
        fig = Figure(figsize=NO_DATA_SIZE, dpi=DPI)
        fig.text(0.5, 0.62, "no data", ha="center", va="center", fontsize=16, color="0.25")
        fig.text(
            0.5,
            0.3,
            "\n".join(textwrap.wrap(f"{title}: {reason}" if reason else title, 70)),
            ha="center",
            va="center",
            fontsize=8,
            color="0.35",
        )
        return render(fig)


def is_empty(table: pd.DataFrame | None) -> bool:
    return table is None or table.empty


def new_figure(
    size: tuple[float, float],
    title: str,
    panels: int,
    footnotes: list[str],
    handles: list,
    sharey: bool = True,
    rows: int = 1,
) -> tuple[Figure, Any]:
    """A constrained-layout figure: the title, ``panels`` axes side by side (in each of ``rows`` rows: the axes row
    by row), the legend to their right and the footnotes (at most six lines) below them."""
    fig = Figure(figsize=size, dpi=DPI, layout="constrained")
    fig.suptitle(title, x=0.01, ha="left", fontsize=12, fontweight="bold")
    axes = fig.subplots(rows, panels, sharey=sharey, squeeze=False).flatten()
    lines = [line for note in footnotes for line in textwrap.wrap(note, int(size[0] * 15.5))]
    if len(lines) > 6:
        lines = [*lines[:5], f"... and {len(lines) - 5} more footnote lines"]
    if lines:
        fig.supxlabel("\n".join(lines), x=0.01, ha="left", fontsize=7.5, color="0.3")
    fig.legend(handles=handles, loc="outside right upper", frameon=False)
    return fig, axes


def log_scale(drawn: pd.DataFrame, column: str, footnotes: list[str]) -> tuple[pd.DataFrame, bool]:
    """Log y when the positive values span more than 10x; then drop zeros (with a footnote saying so)."""
    values = drawn[column].to_numpy(dtype=float)
    positive = values[values > 0]
    log_y = bool(positive.size > 0 and positive.max() / positive.min() > 10)
    if log_y and (values <= 0).any():
        footnotes.append(f"{int((values <= 0).sum())} cell(s) at 0 tokens/s cannot be drawn on the log scale.")
        drawn = drawn[drawn[column] > 0]
    return drawn, log_y


def log_axis(ax: Any, values: np.ndarray, pad: float, formatter: Any) -> None:
    """A log y axis over the values (and 1), padded by a factor, with 1-2-5 ticks."""
    ax.set_yscale("log")
    ax.set_ylim(values.min() / pad, values.max() * pad)
    ax.yaxis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0)))
    ax.yaxis.set_major_formatter(formatter)
    ax.yaxis.set_minor_formatter(NullFormatter())


def interval_whisker(
    ax: Any, at: float, point: float, low: float, high: float, horizontal: bool = False, zorder: float = 3
) -> None:
    """A 95 % interval [low, high] about ``point`` as a capped whisker at ``at`` on the other axis (vertical unless
    ``horizontal``); nothing where either end is not finite."""
    if not (np.isfinite(low) and np.isfinite(high)):
        return
    span = [[point - low], [high - point]]
    where, bars = ((point, at), {"xerr": span}) if horizontal else ((at, point), {"yerr": span})
    ax.errorbar(*where, **bars, fmt="none", ecolor="0.2", elinewidth=1.0, capsize=3, zorder=zorder)


def task_axis(ax: Any, tasks: list[str], temperature: float) -> None:
    """One panel's task axis: separators between task groups, labels, limits, the temperature as title."""
    for boundary in range(1, len(tasks)):
        ax.axvline(boundary - 0.5, color="0.8", lw=0.8, zorder=1)
    ax.set_xticks(
        range(len(tasks)), tasks, rotation=20 if len(tasks) > 5 else 0, ha="right" if len(tasks) > 5 else "center"
    )
    pad = max(0.0, (3 - len(tasks)) / 2)  # one or two tasks: do not stretch the groups over the panel
    ax.set_xlim(-0.5 - pad, len(tasks) - 0.5 + pad)
    ax.grid(axis="x", visible=False)
    ax.set_xlabel("task")
    ax.set_title(f"temperature {temperature_label(temperature)}")


def marker_handles(styles: dict[str, Style], conditions: list[str]) -> list:
    return [
        Line2D(
            [],
            [],
            ls="none",
            marker=styles[c].marker,
            color=styles[c].colour,
            markeredgecolor="0.15",
            markersize=7,
            label=c,
        )
        for c in conditions
    ]


def times_label(value: float, _position: Any = None) -> str:
    if not np.isfinite(value) or value < 0:
        return ""
    return f"{value:g}×" if value >= 0.01 or value == 0 else f"{value:.0e}×"
