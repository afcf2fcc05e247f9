"""Figures for the report, as PNG bytes: throughput multipliers, acceptance rates and a timeline of the cells.

Every function here is pure: it takes the typed tables (the cell table and the summaries, see summaries.tables) and
returns the bytes of a PNG; nothing touches pyplot's global figure registry or the display. The figures are drawn
with the Agg canvas at a fixed size and dpi with matplotlib's constrained layout (legend and footnotes outside the
axes), so the same tables give the same bytes. Tasks and conditions appear in the config's order (passed in; names
it does not list follow, sorted). Conditions are styled by their position in that order, the baseline in black: an
Okabe-Ito colour *and* a marker shape (bars also a hatch), so they can be told apart in greyscale and by
colour-blind readers.

Edge cases never raise: an empty table (or one with nothing to draw) gives a small PNG that says "no data", NaN
values are skipped and counted in the figure's footnote, and so are cells whose task and temperature have no baseline.
"""

from __future__ import annotations

import base64
import io
import textwrap
from collections.abc import Iterable, Sequence
from typing import Any, NamedTuple

import matplotlib
import numpy as np
import pandas as pd
from matplotlib import dates as mdates
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch
from matplotlib.ticker import (
    FuncFormatter,
    LogFormatter,
    LogLocator,
    MultipleLocator,
    NullFormatter,
    PercentFormatter,
)

from .analysis.summaries import cell_multipliers

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
_COLOURS = [OKABE_ITO[c] for c in ("blue", "vermillion", "bluish green", "sky blue", "orange", "reddish purple",
                                   "yellow")]
_MARKERS = ["s", "^", "v", "D", "P", "X", "*", "h", "<", ">"]
_HATCHES = ["//", "\\\\", "..", "xx", "++", "oo", "--", "||", "//..", "xx--"]

_RC = {
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


def ordered(values: Iterable, order: Sequence = ()) -> list:
    """Distinct values: those in ``order`` in its order, then the others sorted."""
    unique = list(dict.fromkeys(values))
    return [v for v in order if v in unique] + sorted((v for v in unique if v not in order), key=str)


def condition_styles(conditions: Sequence[str], baseline: str) -> dict[str, Style]:
    """Styles by position in ``conditions`` (the config's order): the baseline black circles, the others the
    colour, marker and hatch cycles in turn, so one config gives every condition the same style in every figure."""
    others = [c for c in conditions if c != baseline]
    styles = {c: Style(_COLOURS[i % len(_COLOURS)], _MARKERS[i % len(_MARKERS)], _HATCHES[i % len(_HATCHES)])
              for i, c in enumerate(others)}
    return {baseline: BASELINE_STYLE, **styles}


def _t(temperature: float) -> str:
    """A temperature as written in the config: 0.0, 1.0, 0.7."""
    return f"{temperature:.1f}" if temperature == round(temperature, 1) else f"{temperature:g}"


def png_data_uri(png: bytes) -> str:
    """The PNG as a data: URI, to embed in HTML or Markdown."""
    return "data:image/png;base64," + base64.b64encode(png).decode("ascii")


def _render(fig: Figure) -> bytes:
    canvas = FigureCanvasAgg(fig)
    buffer = io.BytesIO()
    try:
        canvas.print_png(buffer, metadata={"Software": None})
    finally:
        fig.clear()
    return buffer.getvalue()


def _no_data(title: str, reason: str = "") -> bytes:
    with matplotlib.rc_context(_RC):
        fig = Figure(figsize=NO_DATA_SIZE, dpi=DPI)
        fig.text(0.5, 0.62, "no data", ha="center", va="center", fontsize=16, color="0.25")
        fig.text(0.5, 0.3, "\n".join(textwrap.wrap(f"{title}: {reason}" if reason else title, 70)),
                 ha="center", va="center", fontsize=8, color="0.35")
        return _render(fig)


def _empty(table: pd.DataFrame | None) -> bool:
    return table is None or table.empty


def _figure(size: tuple[float, float], title: str, panels: int, footnotes: list[str], handles: list,
            sharey: bool = True) -> tuple[Figure, Any]:
    """A constrained-layout figure: the title, ``panels`` axes side by side, the legend to their right and the
    footnotes (at most six lines) below them."""
    fig = Figure(figsize=size, dpi=DPI, layout="constrained")
    fig.suptitle(title, x=0.01, ha="left", fontsize=12, fontweight="bold")
    axes = fig.subplots(1, panels, sharey=sharey, squeeze=False)[0]
    lines = [line for note in footnotes for line in textwrap.wrap(note, int(size[0] * 15.5))]
    if len(lines) > 6:
        lines = [*lines[:5], f"... and {len(lines) - 5} more footnote lines"]
    if lines:
        fig.supxlabel("\n".join(lines), x=0.01, ha="left", fontsize=7.5, color="0.3")
    fig.legend(handles=handles, loc="outside right upper", frameon=False)
    return fig, axes


def _log_scale(drawn: pd.DataFrame, column: str, footnotes: list[str]) -> tuple[pd.DataFrame, bool]:
    """Log y when the positive values span more than 10x; then drop zeros (with a footnote saying so)."""
    values = drawn[column].to_numpy(dtype=float)
    positive = values[values > 0]
    log_y = bool(positive.size > 0 and positive.max() / positive.min() > 10)
    if log_y and (values <= 0).any():
        footnotes.append(f"{int((values <= 0).sum())} cell(s) at 0 tokens/s cannot be drawn on the log scale.")
        drawn = drawn[drawn[column] > 0]
    return drawn, log_y


def _log_axis(ax: Any, values: np.ndarray, pad: float, formatter: Any) -> None:
    """A log y axis over the values (and 1), padded by a factor, with 1-2-5 ticks."""
    ax.set_yscale("log")
    ax.set_ylim(values.min() / pad, values.max() * pad)
    ax.yaxis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0)))
    ax.yaxis.set_major_formatter(formatter)
    ax.yaxis.set_minor_formatter(NullFormatter())


def _task_axis(ax: Any, tasks: list[str], temperature: float) -> None:
    """One panel's task axis: separators between task groups, labels, limits, the temperature as title."""
    for boundary in range(1, len(tasks)):
        ax.axvline(boundary - 0.5, color="0.8", lw=0.8, zorder=1)
    ax.set_xticks(range(len(tasks)), tasks, rotation=20 if len(tasks) > 5 else 0,
                  ha="right" if len(tasks) > 5 else "center")
    pad = max(0.0, (3 - len(tasks)) / 2)  # one or two tasks: do not stretch the groups over the panel
    ax.set_xlim(-0.5 - pad, len(tasks) - 0.5 + pad)
    ax.grid(axis="x", visible=False)
    ax.set_xlabel("task")
    ax.set_title(f"temperature {_t(temperature)}")


def _markers(styles: dict[str, Style], conditions: list[str]) -> list:
    return [Line2D([], [], ls="none", marker=styles[c].marker, color=styles[c].colour, markeredgecolor="0.15",
                   markersize=7, label=c) for c in conditions]


# --------------------------------------------------------------------------------------------------------------------
# Throughput multiplier


def _times(value: float, _position: Any = None) -> str:
    if not np.isfinite(value) or value < 0:
        return ""
    return f"{value:g}×" if value >= 0.01 or value == 0 else f"{value:.0e}×"


def multiplier_figure(cells: pd.DataFrame | None, baseline: str, tasks: Sequence[str] = (),
                      conditions: Sequence[str] = (), summary: pd.DataFrame | None = None) -> bytes:
    """Per temperature a panel: for each task, one column of points per condition (every repeat a point, their
    mean a short bar, the multiplier's 95 % interval from ``summary`` an error bar), as a multiple of the mean
    baseline tokens/s of that task and temperature (summaries.cell_multipliers)."""
    title = f"Decode throughput as a multiple of the '{baseline}' baseline"
    if _empty(cells):
        return _no_data(title, "no runs")
    data = cell_multipliers(cells, baseline)
    if data.empty:
        return _no_data(title, f"only '{baseline}' cells, nothing to compare")
    footnotes: list[str] = []
    no_tps = data.tokens_per_s.isna()
    if no_tps.any():
        footnotes.append(f"{int(no_tps.sum())} cell(s) without a tokens/s value not drawn.")
    no_base = data.baseline_mean_tokens_per_s.isna() & ~no_tps
    unmatched = data[no_base]
    if no_base.any():
        where = ", ".join(f"{r.task} @ T={_t(r.temperature)}"
                          for r in unmatched.drop_duplicates(["task", "temperature"]).itertuples())
        footnotes.append(f"No '{baseline}' baseline for {where}: {int(no_base.sum())} cell(s) skipped.")
    drawn = data[np.isfinite(data.multiplier.to_numpy(dtype=float))]
    if drawn.empty:
        return _no_data(title, "no cell has both a tokens/s value and a baseline to compare with")
    drawn, log_y = _log_scale(drawn, "multiplier", footnotes)
    footnotes.insert(0, f"Multiplier = a cell's tokens/s / mean tokens/s of the '{baseline}' cells of the same task "
                        "and temperature. Points: every repeat; bar: their mean (the multiplier); whisker: its 95 % "
                        "interval. " + ("Log scale." if log_y else "Linear scale."))
    intervals = ({} if summary is None else
                 {(r.task, r.condition, r.temperature): (r.speedup_ci_low, r.speedup_ci_high)
                  for r in summary.itertuples()})
    temperatures = sorted(drawn.temperature.unique())
    task_names = ordered([*drawn.task, *unmatched.task], tasks)
    shown = ordered(drawn.condition, conditions)
    styles = condition_styles(ordered(cells.condition, conditions), baseline)
    handles = [*_markers(styles, shown), Line2D([], [], color="0.2", lw=2.4, label="mean of repeats"),
               Line2D([], [], color="0.35", lw=1.1, ls="--", label="1.0× (no gain)")]

    with matplotlib.rc_context(_RC):
        fig, axes = _figure(MULTIPLIER_SIZE, title, len(temperatures), footnotes, handles)
        slot = min(0.8 / len(shown), 0.24)
        left = -slot * len(shown) / 2
        for ax, temperature in zip(axes, temperatures, strict=True):
            panel = drawn[drawn.temperature == temperature]
            orphans = set(unmatched.task[unmatched.temperature == temperature])
            for ti, task in enumerate(task_names):
                if task in orphans and not (panel.task == task).any():
                    ax.text(ti, 0.5, f"no '{baseline}'\nbaseline", transform=ax.get_xaxis_transform(), ha="center",
                            va="center", fontsize=8, color="0.35", style="italic")
                for ci, condition in enumerate(shown):
                    cell = panel[(panel.task == task) & (panel.condition == condition)]
                    if cell.empty:
                        continue
                    centre = ti + left + slot * (ci + 0.5)
                    ys = cell.sort_values("repeat", kind="stable").multiplier.to_numpy(dtype=float)
                    xs = centre + np.linspace(-slot / 4, slot / 4, len(ys)) if len(ys) > 1 else np.full(1, centre)
                    mean = float(np.mean(ys))
                    ax.hlines(mean, centre - slot * 0.42, centre + slot * 0.42, colors="0.2", lw=2.4, zorder=3)
                    low, high = intervals.get((task, condition, temperature), (np.nan, np.nan))
                    if np.isfinite(low) and np.isfinite(high):
                        ax.errorbar(centre, mean, yerr=[[mean - low], [high - mean]], fmt="none", ecolor="0.2",
                                    elinewidth=1.0, capsize=3, zorder=3)
                    ax.scatter(xs, ys, s=30, marker=styles[condition].marker, c=styles[condition].colour,
                               edgecolors="0.15", linewidths=0.6, alpha=0.9, zorder=4)
            ax.axhline(1.0, color="0.35", lw=1.1, ls="--", zorder=2)
            ax.text(0.995, 1.0, "1.0× (no gain)", transform=ax.get_yaxis_transform(), ha="right", va="bottom",
                    fontsize=7.5, color="0.3")
            _task_axis(ax, task_names, temperature)
        values = np.append(drawn.multiplier.to_numpy(dtype=float), 1.0)
        if log_y:
            _log_axis(axes[0], values, 1.35, FuncFormatter(_times))
        else:
            axes[0].set_ylim(0, values.max() * 1.12)
            axes[0].yaxis.set_major_formatter(FuncFormatter(_times))
        axes[0].set_ylabel(f"throughput multiplier (× mean '{baseline}' tokens/s)")
        return _render(fig)


# --------------------------------------------------------------------------------------------------------------------
# Acceptance


def acceptance_figure(acceptance: pd.DataFrame | None, baseline: str, tasks: Sequence[str] = (),
                      conditions: Sequence[str] = ()) -> bytes:
    """Pooled acceptance rate (accepted / drafted tokens, as %) per task and condition, one panel per temperature.

    Bars grouped per task, one colour and hatch per condition, with the min..max of the single runs as a whisker.
    A condition that drafted nothing in a task is marked 'n/a' instead of a zero bar; a condition that drafted nothing
    anywhere (the baseline) is left out and named in the footnote."""
    title = "Draft acceptance (pooled over repeats)"
    if _empty(acceptance):
        return _no_data(title, "no acceptance table")
    footnotes = ["Pooled rate = accepted / drafted tokens over all repeats; whisker: lowest..highest single run. "
                 "'n/a': the condition drafted nothing there (no rate, not a zero)."]
    nothing = acceptance.drafted == 0
    never = [c for c in ordered(acceptance.condition, conditions) if nothing[acceptance.condition == c].all()]
    if never:
        footnotes.append(f"Not shown, drafted nothing anywhere: {', '.join(never)}.")
    shown = acceptance[~acceptance.condition.isin(never)]
    if shown.empty:
        return _no_data(title, "no condition drafted any tokens")
    temperatures = sorted(shown.temperature.unique())
    task_names = ordered(shown.task, tasks)
    names = ordered(shown.condition, conditions)
    styles = condition_styles(ordered(acceptance.condition, conditions), baseline)
    handles = [Patch(facecolor=styles[c].colour, hatch=styles[c].hatch, edgecolor="0.15", linewidth=0.6, label=c)
               for c in names]

    with matplotlib.rc_context(_RC):
        fig, axes = _figure(ACCEPTANCE_SIZE, title, len(temperatures), footnotes, handles)
        width = min(0.8 / len(names), 0.24)
        left = -width * len(names) / 2
        label_size = 7 if len(names) * len(task_names) * len(temperatures) <= 40 else 5.5
        for ax, temperature in zip(axes, temperatures, strict=True):
            panel = shown[shown.temperature == temperature]
            for ti, task in enumerate(task_names):
                for ci, condition in enumerate(names):
                    rows = panel[(panel.task == task) & (panel.condition == condition)]
                    if rows.empty:
                        continue
                    row, x, style = rows.iloc[0], ti + left + width * (ci + 0.5), styles[condition]
                    if row.drafted == 0 or pd.isna(row.pooled_rate):
                        ax.text(x, 1.5, "n/a", ha="center", va="bottom", fontsize=label_size, color="0.25",
                                style="italic")
                        continue
                    rate = 100 * float(row.pooled_rate)
                    ax.bar(x, rate, width * 0.92, color=style.colour, hatch=style.hatch, edgecolor="0.15",
                           linewidth=0.6, zorder=3)
                    if rate < 1:  # a true zero: a coloured stub on the axis, so it is not read as a missing bar
                        ax.hlines(0, x - width * 0.46, x + width * 0.46, colors=style.colour, lw=3, zorder=4,
                                  clip_on=False)
                    low, high = row.min_rate, row.max_rate
                    top = rate
                    if pd.notna(low) and pd.notna(high) and high > low:
                        ax.errorbar(x, rate, yerr=[[max(rate - 100 * low, 0)], [max(100 * high - rate, 0)]],
                                    fmt="none", ecolor="0.1", elinewidth=0.9, capsize=2, zorder=4)
                        top = max(rate, 100 * high)
                    ax.text(x, top + 1.5, f"{rate:.0f}%", ha="center", va="bottom", fontsize=label_size,
                            color="0.15", zorder=5)
            _task_axis(ax, task_names, temperature)
        axes[0].set_ylim(0, 112)
        axes[0].yaxis.set_major_locator(MultipleLocator(20))
        axes[0].yaxis.set_major_formatter(PercentFormatter(decimals=0))
        axes[0].set_ylabel("pooled acceptance rate (% of drafted tokens)")
        return _render(fig)


# --------------------------------------------------------------------------------------------------------------------
# Timeline

_FILLS = ["full", "none", "left", "top", "right", "bottom"]


def timeline_figure(cells: pd.DataFrame | None, baseline: str, conditions: Sequence[str] = ()) -> bytes:
    """Tokens/s of every cell against the time it started, marked by condition (filled/open by temperature), so
    that contention or thermal drift over the session would show as a trend or a cluster in time."""
    title = "Throughput of every cell over the session"
    if _empty(cells):
        return _no_data(title, "no runs with a start time")
    temperatures = sorted(cells.temperature.unique())
    footnotes = ["Each point is one cell (one request on its own server), placed at its start time (UTC); "
                 "marker shape and colour: condition" + ("; fill: temperature." if len(temperatures) > 1 else ".")]
    unusable = cells.started_at.isna() | ~np.isfinite(cells.tokens_per_s.to_numpy(dtype=float))
    if unusable.any():
        footnotes.append(f"{int(unusable.sum())} cell(s) without a start time or tokens/s value not drawn.")
    drawn, log_y = _log_scale(cells[~unusable], "tokens_per_s", footnotes)
    if drawn.empty:
        return _no_data(title, "no cell has both a start time and a tokens/s value")
    shown = ordered(drawn.condition, conditions)
    fills = {t: _FILLS[i % len(_FILLS)] for i, t in enumerate(temperatures)}
    styles = condition_styles(ordered(cells.condition, conditions), baseline)
    handles = _markers(styles, shown)
    if len(temperatures) > 1:
        handles += [Line2D([], [], ls="none", marker="o", color="0.4", markeredgecolor="0.15", markersize=7,
                           fillstyle=fills[t], label=f"T={_t(t)}") for t in temperatures]

    with matplotlib.rc_context(_RC):
        fig, axes = _figure(TIMELINE_SIZE, title, 1, footnotes, handles, sharey=False)
        ax = axes[0]
        start = drawn.started_at.dt.tz_convert("UTC").dt.tz_localize(None)
        for condition in shown:
            for temperature in temperatures:
                rows = (drawn.condition == condition) & (drawn.temperature == temperature)
                if not rows.any():
                    continue
                ax.plot(start[rows].to_numpy(), drawn.tokens_per_s[rows].to_numpy(dtype=float), ls="none",
                        marker=styles[condition].marker, color=styles[condition].colour, markeredgecolor="0.15",
                        markeredgewidth=0.7, markersize=6.5, fillstyle=fills[temperature], alpha=0.9, zorder=3)
        first, last = start.min(), start.max()
        pad = max((last - first) * 0.03, pd.Timedelta(seconds=5))
        ax.set_xlim(first - pad, last + pad)
        locator = mdates.AutoDateLocator(minticks=4, maxticks=10)
        ax.xaxis.set_major_locator(locator)
        ax.xaxis.set_major_formatter(mdates.ConciseDateFormatter(locator))
        ax.set_xlabel("cell start time (UTC)")
        values = drawn.tokens_per_s.to_numpy(dtype=float)
        if log_y:
            _log_axis(ax, values, 1.3, LogFormatter(labelOnlyBase=False, minor_thresholds=(np.inf, np.inf)))
        else:
            ax.set_ylim(0, max(values.max(), 1.0) * 1.1)
        ax.set_ylabel("decode throughput (tokens/s, server-reported)")
        return _render(fig)


def report_figures(tables: dict[str, pd.DataFrame], baseline: str, tasks: Sequence[str],
                   conditions: Sequence[str]) -> list[tuple[str, bytes]]:
    """The report's figures with their captions."""
    cells = tables["cells"]
    return [
        (f"Multiplier vs {baseline} per task and condition (every repeat a point, the bar their mean, the whisker "
         "its 95 % interval)", multiplier_figure(cells, baseline, tasks, conditions, tables["summary"])),
        ("Pooled acceptance rate per task and condition",
         acceptance_figure(tables["acceptance"], baseline, tasks, conditions)),
        ("Tokens/s of every cell over time (contention would show as a dip)",
         timeline_figure(cells, baseline, conditions)),
    ]
