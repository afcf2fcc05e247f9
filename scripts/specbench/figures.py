"""Figures for the report, as PNG bytes: throughput multipliers, acceptance rates and a timeline of the cells.

Every function here is pure: it takes the aggregate tables (runs.csv, acceptance.csv) as DataFrames and returns the
bytes of a PNG; nothing touches pyplot's global figure registry or the display. The figures are drawn with the Agg
canvas at a fixed size and dpi, so the same tables give the same bytes, and they are meant to read in print and for
colour-blind readers: conditions get Okabe-Ito colours *and* distinct marker shapes (bars also a hatch), so they can
be told apart in greyscale too.

Edge cases never raise: an empty table (or one with nothing to draw) gives a small PNG that says "no data", NaN
values are skipped and counted in the figure's footnote, and so are cells whose task and temperature have no baseline.
"""

from __future__ import annotations

import base64
import io
import math
import textwrap
import zlib
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
from matplotlib.ticker import FixedLocator, FuncFormatter, NullLocator

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


CONDITION_STYLE: dict[str, Style] = {
    "off": Style(OKABE_ITO["black"], "o", ""),
    "ngram-mod": Style(OKABE_ITO["blue"], "s", "//"),
    "ngram-mod-warm": Style(OKABE_ITO["sky blue"], "D", "xx"),
    "mtp": Style(OKABE_ITO["vermillion"], "^", "\\\\"),
    "dflash": Style(OKABE_ITO["bluish green"], "v", ".."),
}
# Unknown conditions take (colour, marker, hatch) from these cycles, which avoid the shapes used above.
_EXTRA_COLOURS = [OKABE_ITO[c] for c in ("orange", "reddish purple", "blue", "vermillion", "bluish green",
                                         "sky blue", "yellow")]
_EXTRA_MARKERS = ["P", "X", "*", "h", "<", ">", "p", "8", "d", "H"]
_EXTRA_HATCHES = ["++", "oo", "--", "||", "OO", "**", "//..", "xx--"]

TASK_ORDER = ("file-rewrite", "todo-app", "gsm8k", "essay")
CONDITION_ORDER = tuple(CONDITION_STYLE)

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


def _extra_style(index: int) -> Style:
    return Style(_EXTRA_COLOURS[index % len(_EXTRA_COLOURS)], _EXTRA_MARKERS[index % len(_EXTRA_MARKERS)],
                 _EXTRA_HATCHES[index % len(_EXTRA_HATCHES)])


def condition_style(name: str) -> Style:
    """The style of one condition: fixed for the study's conditions, and for any other name one picked from the
    extra cycles by a stable hash of the name (the same name gets the same style in every figure and every run)."""
    if name in CONDITION_STYLE:
        return CONDITION_STYLE[name]
    return _extra_style(zlib.crc32(str(name).encode()))


def condition_styles(names: Iterable[str]) -> dict[str, Style]:
    """Styles for the conditions drawn together in one figure: the study's conditions keep theirs, other names take
    the extra cycles in sorted order, so no two conditions of one figure share a colour and marker."""
    unique = list(dict.fromkeys(str(n) for n in names))
    unknown = sorted(n for n in unique if n not in CONDITION_STYLE)
    styles = {n: CONDITION_STYLE[n] for n in unique if n in CONDITION_STYLE}
    styles.update({n: _extra_style(i) for i, n in enumerate(unknown)})
    return styles


def _ordered(values: Iterable, preferred: Sequence[str]) -> list:
    """Distinct values: those in `preferred` in its order, then the others sorted."""
    unique = list(dict.fromkeys(values))
    known = [v for v in preferred if v in unique]
    return known + sorted((v for v in unique if v not in preferred), key=str)


def _temperatures(values: Iterable) -> list:
    unique = list(dict.fromkeys(values))
    numbers = sorted(v for v in unique if not (isinstance(v, float) and math.isnan(v)))
    return numbers + [v for v in unique if isinstance(v, float) and math.isnan(v)][:1]


def _at(temperatures: pd.Series, temperature) -> np.ndarray:
    """Which rows are at this temperature (NaN matching NaN)."""
    values = temperatures.to_numpy(dtype=float)
    if isinstance(temperature, float) and math.isnan(temperature):
        return np.isnan(values)
    return values == temperature


def _t(temperature) -> str:
    """A temperature as written in the config: 0.0, 1.0, 0.7."""
    try:
        value = float(temperature)
    except (TypeError, ValueError):
        return str(temperature)
    return f"{value:.1f}" if value == round(value, 1) else f"{value:g}"


def _t_label(temperature) -> str:
    return f"temperature {_t(temperature)}"


def _log_ticks(low: float, high: float) -> list[float]:
    """1-2-5 ticks (1-2-3-5 over less than two decades) between low and high."""
    subs = (1, 2, 5) if high / low > 100 else (1, 2, 3, 5)
    ticks = [m * 10.0 ** e for e in range(math.floor(math.log10(low)), math.ceil(math.log10(high)) + 1) for m in subs]
    return [t for t in ticks if low <= t <= high]


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


def _frame(table: pd.DataFrame | None, columns: Sequence[str]) -> pd.DataFrame | None:
    """The table if it has the columns and rows a figure needs, else None."""
    if table is None or not isinstance(table, pd.DataFrame) or table.empty:
        return None
    if any(c not in table.columns for c in columns):
        return None
    return table


def _layout(fig: Figure, panels: int, *, legend_rows: int, footnotes: list[str], width_in: float,
            height_in: float, title: str, sharey: bool = True, xlabel_space_in: float = 0.62):
    """Panels side by side, a title on top and, below them, the legend and the wrapped footnotes."""
    wrapped: list[str] = []
    for note in footnotes:
        wrapped.extend(textwrap.wrap(note, int(width_in * 15.5)) or [""])
    if len(wrapped) > 6:
        wrapped = [*wrapped[:5], f"... and {len(wrapped) - 5} more footnote lines"]
    line_in = 0.16
    foot_in = 0.08 + line_in * len(wrapped)
    legend_in = 0.12 + 0.24 * legend_rows
    bottom_in = foot_in + legend_in + xlabel_space_in
    top_in = 0.72
    fig.suptitle(title, x=0.01, y=1 - 0.22 / height_in, ha="left", va="center", fontsize=12, fontweight="bold")
    axes = fig.subplots(1, panels, sharey=sharey, squeeze=False)[0]
    fig.subplots_adjust(left=0.07, right=0.985, top=1 - top_in / height_in, bottom=bottom_in / height_in,
                        wspace=0.06 if sharey else 0.2)
    legend_y = (foot_in + legend_in / 2) / height_in
    for i, line in enumerate(wrapped):
        fig.text(0.01, (foot_in - 0.06 - line_in * (i + 0.5)) / height_in, line, ha="left", va="center",
                 fontsize=7.5, color="0.3")
    return axes, legend_y


def _legend(fig: Figure, handles: list, y: float, max_columns: int = 8) -> None:
    if not handles:
        return
    columns = min(len(handles), max_columns)
    fig.legend(handles=handles, loc="center", bbox_to_anchor=(0.5, y), ncol=columns, frameon=False,
               handlelength=2.0, columnspacing=1.6)


def _legend_rows(count: int, max_columns: int = 8) -> int:
    return max(1, math.ceil(count / max_columns))


# --------------------------------------------------------------------------------------------------------------------
# Throughput multiplier


def multipliers(runs: pd.DataFrame, baseline: str = "off") -> pd.DataFrame:
    """Every non-baseline cell's tokens/s as a multiple of the median baseline tokens/s of the same task and
    temperature.

    One row per non-baseline row of `runs`, in its order, with columns task, condition, temperature, repeat,
    tokens_per_s, baseline_median_tokens_per_s and multiplier. The multiplier is NaN where the cell's tokens/s is
    missing or where its task and temperature have no usable baseline (no baseline row, only NaN, or a median <= 0).
    """
    columns = ["task", "condition", "temperature", "repeat", "tokens_per_s", "baseline_median_tokens_per_s",
               "multiplier"]
    if runs is None or runs.empty or any(c not in runs.columns for c in ("task", "condition", "tokens_per_s")):
        return pd.DataFrame({c: pd.Series(dtype=float if c not in ("task", "condition") else object)
                             for c in columns})
    table = runs.copy()
    if "temperature" not in table.columns:
        table["temperature"] = np.nan
    if "repeat" not in table.columns:
        table["repeat"] = np.arange(1, len(table) + 1)
    table["tokens_per_s"] = pd.to_numeric(table["tokens_per_s"], errors="coerce")
    table["temperature"] = pd.to_numeric(table["temperature"], errors="coerce")
    is_base = table["condition"].astype(str) == str(baseline)
    base = (table[is_base].groupby(["task", "temperature"], dropna=False)["tokens_per_s"].median()
            .rename("baseline_median_tokens_per_s").reset_index())
    base.loc[~(base["baseline_median_tokens_per_s"] > 0), "baseline_median_tokens_per_s"] = np.nan
    cells = table.loc[~is_base, ["task", "condition", "temperature", "repeat", "tokens_per_s"]]
    out = cells.merge(base, on=["task", "temperature"], how="left")
    out["multiplier"] = out["tokens_per_s"] / out["baseline_median_tokens_per_s"]
    return out[columns].reset_index(drop=True)


def _multiple_formatter(value: float, _position=None) -> str:
    if not np.isfinite(value) or value < 0:
        return ""
    if value == 0:
        return "0×"
    return f"{value:g}×" if value >= 0.01 else f"{value:.0e}×"


def _log_scale(drawn: pd.DataFrame, column: str, footnotes: list[str]) -> tuple[pd.DataFrame, bool]:
    """Log y when the positive values span more than 10x; then drop zeros (with a footnote saying so)."""
    values = drawn[column].to_numpy(dtype=float)
    positive = values[values > 0]
    log_y = bool(positive.size > 0 and positive.max() / positive.min() > 10)
    if log_y and (values <= 0).any():
        footnotes.append(f"{int((values <= 0).sum())} cell(s) at 0 tokens/s cannot be drawn on the log scale.")
        drawn = drawn[drawn[column] > 0]
    return drawn, log_y


def _task_axis(ax: Any, tasks: list[str], temperature: float) -> None:
    """One panel's task axis: separators between task groups, labels, limits, the temperature as title."""
    for boundary in range(1, len(tasks)):
        ax.axvline(boundary - 0.5, color="0.8", lw=0.8, zorder=1)
    ax.set_xticks(range(len(tasks)))
    ax.set_xticklabels(tasks, rotation=20 if len(tasks) > 5 else 0, ha="right" if len(tasks) > 5 else "center")
    pad = max(0.0, (3 - len(tasks)) / 2)  # one or two tasks: do not stretch the groups over the panel
    ax.set_xlim(-0.5 - pad, len(tasks) - 0.5 + pad)
    ax.grid(axis="x", visible=False)
    ax.set_xlabel("task")
    ax.set_title(_t_label(temperature))


def multiplier_figure(runs: pd.DataFrame, baseline: str = "off") -> bytes:
    """Per temperature a panel: for each task, one column of points per condition (every repeat a point, its
    median a short bar), as a multiple of the median baseline tokens/s of that task and temperature."""
    title = f"Decode throughput as a multiple of the '{baseline}' baseline"
    table = _frame(runs, ["task", "condition", "tokens_per_s"])
    if table is None:
        return _no_data(title, "no runs")
    data = multipliers(table, baseline)
    if data.empty:
        return _no_data(title, f"only '{baseline}' cells, nothing to compare")
    footnotes: list[str] = []
    no_tps = data["tokens_per_s"].isna()
    if no_tps.any():
        footnotes.append(f"{int(no_tps.sum())} cell(s) without a tokens/s value not drawn.")
    no_base = data["baseline_median_tokens_per_s"].isna() & ~no_tps
    if no_base.any():
        missing = data[no_base].drop_duplicates(["task", "temperature"])
        where = ", ".join(f"{r.task} @ T={_t(r.temperature)}" for r in missing.itertuples())
        footnotes.append(f"No '{baseline}' baseline for {where}: {int(no_base.sum())} cell(s) skipped.")
    unmatched = data[no_base]
    drawn = data[np.isfinite(data["multiplier"])].copy()
    if drawn.empty:
        return _no_data(title, "no cell has both a tokens/s value and a baseline to compare with")
    drawn, log_y = _log_scale(drawn, "multiplier", footnotes)
    footnotes.insert(0, f"Multiplier = a cell's tokens/s / median tokens/s of the '{baseline}' cells of the same task "
                        "and temperature. Points: every repeat; bar: median of the repeats. "
                        + ("Log scale." if log_y else "Linear scale."))

    temperatures = _temperatures(drawn["temperature"])
    tasks = _ordered([*drawn["task"], *unmatched["task"]], TASK_ORDER)
    conditions = _ordered(drawn["condition"], CONDITION_ORDER)
    styles = condition_styles(_ordered(table["condition"].astype(str), CONDITION_ORDER))
    handles = [Line2D([], [], ls="none", marker=styles[c].marker, color=styles[c].colour, markeredgecolor="0.15",
                      markersize=7, label=c) for c in conditions]
    handles.append(Line2D([], [], color="0.2", lw=2.4, label="median of repeats"))
    handles.append(Line2D([], [], color="0.35", lw=1.1, ls="--", label="1.0× (no gain)"))

    with matplotlib.rc_context(_RC):
        fig = Figure(figsize=MULTIPLIER_SIZE, dpi=DPI)
        axes, legend_y = _layout(fig, len(temperatures), legend_rows=_legend_rows(len(handles)), footnotes=footnotes,
                                 width_in=MULTIPLIER_SIZE[0], height_in=MULTIPLIER_SIZE[1], title=title)
        slot = min(0.8 / len(conditions), 0.24)
        left = -slot * len(conditions) / 2
        for ax, temperature in zip(axes, temperatures, strict=True):
            panel = drawn[_at(drawn["temperature"], temperature)]
            orphans = set(unmatched.loc[_at(unmatched["temperature"], temperature), "task"])
            for ti, task in enumerate(tasks):
                if task in orphans and not (panel["task"] == task).any():
                    ax.text(ti, 0.5, f"no '{baseline}'\nbaseline", transform=ax.get_xaxis_transform(), ha="center",
                            va="center", fontsize=8, color="0.35", style="italic")
                for ci, condition in enumerate(conditions):
                    cell = panel[(panel["task"] == task) & (panel["condition"] == condition)]
                    if cell.empty:
                        continue
                    centre = ti + left + slot * (ci + 0.5)
                    ys = cell.sort_values("repeat", kind="stable")["multiplier"].to_numpy(dtype=float)
                    spread = slot * 0.5
                    xs = centre + (np.linspace(-spread / 2, spread / 2, len(ys)) if len(ys) > 1 else np.zeros(1))
                    style = styles[condition]
                    median = float(np.median(ys))
                    ax.hlines(median, centre - slot * 0.42, centre + slot * 0.42, colors="0.2", lw=2.4, zorder=3)
                    ax.scatter(xs, ys, s=30, marker=style.marker, c=style.colour, edgecolors="0.15", linewidths=0.6,
                               alpha=0.9, zorder=4)
            ax.axhline(1.0, color="0.35", lw=1.1, ls="--", zorder=2)
            ax.text(0.995, 1.0, "1.0× (no gain)", transform=ax.get_yaxis_transform(), ha="right", va="bottom",
                    fontsize=7.5, color="0.3")
            _task_axis(ax, tasks, temperature)
        lows = np.append(drawn["multiplier"].to_numpy(dtype=float), 1.0)
        ax0 = axes[0]
        if log_y:
            ax0.set_yscale("log")
            low, high = lows.min() / 1.35, lows.max() * 1.35
            ax0.set_ylim(low, high)
            ax0.yaxis.set_major_locator(FixedLocator(_log_ticks(low, high)))
            ax0.yaxis.set_minor_locator(NullLocator())
        else:
            ax0.set_ylim(0, lows.max() * 1.12)
        ax0.yaxis.set_major_formatter(FuncFormatter(_multiple_formatter))
        ax0.set_ylabel(f"throughput multiplier (× median '{baseline}' tokens/s)")
        _legend(fig, handles, legend_y)
        return _render(fig)


# --------------------------------------------------------------------------------------------------------------------
# Acceptance


def acceptance_figure(acceptance: pd.DataFrame) -> bytes:
    """Pooled acceptance rate (accepted / drafted tokens, as %) per task and condition, one panel per temperature.

    Bars grouped per task, one colour and hatch per condition, with the min..max of the single runs as a whisker.
    A condition that drafted nothing in a task is marked 'n/a' instead of a zero bar; a condition that drafted nothing
    anywhere (the baseline) is left out and named in the footnote."""
    title = "Draft acceptance (pooled over repeats)"
    table = _frame(acceptance, ["task", "condition"])
    if table is None or not ({"pooled_rate"} <= set(table.columns) or {"drafted", "accepted"} <= set(table.columns)):
        return _no_data(title, "no acceptance table")
    table = table.copy()
    if "temperature" not in table.columns:
        table["temperature"] = np.nan
    table["temperature"] = pd.to_numeric(table["temperature"], errors="coerce")
    for column in ("drafted", "accepted", "pooled_rate", "min_rate", "max_rate"):
        table[column] = pd.to_numeric(table[column], errors="coerce") if column in table.columns else np.nan
    computed = table["accepted"] / table["drafted"].where(table["drafted"] > 0)
    table["rate"] = table["pooled_rate"].where(table["pooled_rate"].notna(), computed)
    table["na"] = table["rate"].isna()  # drafted nothing (or no figures at all): there is no rate to draw
    footnotes = ["Pooled rate = accepted / drafted tokens over all repeats; whisker: lowest..highest single run. "
                 "'n/a': the condition drafted nothing there (no rate, not a zero)."]
    never = [c for c in _ordered(table["condition"].astype(str), CONDITION_ORDER)
             if table.loc[table["condition"].astype(str) == c, "na"].all()]
    if never:
        footnotes.append(f"Not shown, drafted nothing anywhere: {', '.join(never)}.")
    shown = table[~table["condition"].astype(str).isin(never)]
    if shown.empty:
        return _no_data(title, "no condition drafted any tokens")
    temperatures = _temperatures(shown["temperature"])
    tasks = _ordered(shown["task"], TASK_ORDER)
    conditions = _ordered(shown["condition"].astype(str), CONDITION_ORDER)
    styles = condition_styles(_ordered(table["condition"].astype(str), CONDITION_ORDER))
    handles = [Patch(facecolor=styles[c].colour, hatch=styles[c].hatch, edgecolor="0.15", linewidth=0.6, label=c)
               for c in conditions]

    with matplotlib.rc_context(_RC):
        fig = Figure(figsize=ACCEPTANCE_SIZE, dpi=DPI)
        axes, legend_y = _layout(fig, len(temperatures), legend_rows=_legend_rows(len(handles)), footnotes=footnotes,
                                 width_in=ACCEPTANCE_SIZE[0], height_in=ACCEPTANCE_SIZE[1], title=title)
        width = min(0.8 / len(conditions), 0.24)
        left = -width * len(conditions) / 2
        label_size = 7 if len(conditions) * len(tasks) * len(temperatures) <= 40 else 5.5
        for ax, temperature in zip(axes, temperatures, strict=True):
            panel = shown[_at(shown["temperature"], temperature)]
            for ti, task in enumerate(tasks):
                for ci, condition in enumerate(conditions):
                    rows = panel[(panel["task"] == task) & (panel["condition"].astype(str) == condition)]
                    if rows.empty:
                        continue
                    row = rows.iloc[0]
                    x = ti + left + width * (ci + 0.5)
                    style = styles[condition]
                    if row["na"]:
                        ax.text(x, 1.5, "n/a", ha="center", va="bottom", fontsize=label_size, color="0.25",
                                style="italic")
                        continue
                    rate = 100 * float(row["rate"])
                    ax.bar(x, rate, width * 0.92, color=style.colour, hatch=style.hatch, edgecolor="0.15",
                           linewidth=0.6, zorder=3)
                    if rate < 1:  # a true zero: a coloured stub on the axis, so it is not read as a missing bar
                        ax.hlines(0, x - width * 0.46, x + width * 0.46, colors=style.colour, lw=3, zorder=4,
                                  clip_on=False)
                    low, high = row["min_rate"], row["max_rate"]
                    if pd.notna(low) and pd.notna(high) and high > low:
                        ax.errorbar(x, rate, yerr=[[max(rate - 100 * low, 0)], [max(100 * high - rate, 0)]],
                                    fmt="none", ecolor="0.1", elinewidth=0.9, capsize=2, zorder=4)
                        top = max(rate, 100 * high)
                    else:
                        top = rate
                    ax.text(x, top + 1.5, f"{rate:.0f}%", ha="center", va="bottom", fontsize=label_size,
                            color="0.15", zorder=5)
            _task_axis(ax, tasks, temperature)
        axes[0].set_ylim(0, 112)
        axes[0].yaxis.set_major_locator(FixedLocator([0, 20, 40, 60, 80, 100]))
        axes[0].yaxis.set_major_formatter(FuncFormatter(lambda v, _p: f"{v:.0f}%"))
        axes[0].set_ylabel("pooled acceptance rate (% of drafted tokens)")
        _legend(fig, handles, legend_y)
        return _render(fig)


# --------------------------------------------------------------------------------------------------------------------
# Timeline

_FILLS = ["full", "none", "left", "top", "right", "bottom"]


def _time_format(span: pd.Timedelta, days: int) -> str:
    if days > 1:
        return "%m-%d %H:%M"
    return "%H:%M:%S" if span < pd.Timedelta(minutes=20) else "%H:%M"


def timeline_figure(runs: pd.DataFrame) -> bytes:
    """Tokens/s of every cell against the time it started, marked by condition (filled/open by temperature), so
    that contention or thermal drift over the session would show as a trend or a cluster in time."""
    title = "Throughput of every cell over the session"
    table = _frame(runs, ["condition", "tokens_per_s", "started_at"])
    if table is None:
        return _no_data(title, "no runs with a start time")
    table = table.copy()
    if "temperature" not in table.columns:
        table["temperature"] = np.nan
    table["temperature"] = pd.to_numeric(table["temperature"], errors="coerce")
    table["tokens_per_s"] = pd.to_numeric(table["tokens_per_s"], errors="coerce")
    table["start"] = pd.to_datetime(table["started_at"], utc=True, errors="coerce", format="ISO8601")
    footnotes = ["Each point is one cell (one request on its own server), placed at its start time (UTC); "
                 "marker shape and colour: condition"
                 + ("; fill: temperature." if table["temperature"].nunique(dropna=False) > 1 else ".")]
    unusable = table["start"].isna() | ~np.isfinite(table["tokens_per_s"])
    if unusable.any():
        footnotes.append(f"{int(unusable.sum())} cell(s) without a start time or tokens/s value not drawn.")
    drawn = table[~unusable]
    drawn, log_y = _log_scale(drawn, "tokens_per_s", footnotes)
    values = drawn["tokens_per_s"].to_numpy(dtype=float)
    positive = values[values > 0]
    if drawn.empty:
        return _no_data(title, "no cell has both a start time and a tokens/s value")
    conditions = _ordered(drawn["condition"].astype(str), CONDITION_ORDER)
    temperatures = _temperatures(drawn["temperature"])
    fills = {t: _FILLS[i % len(_FILLS)] for i, t in enumerate(temperatures)}
    styles = condition_styles(_ordered(table["condition"].astype(str), CONDITION_ORDER))
    handles = [Line2D([], [], ls="none", marker=styles[c].marker, color=styles[c].colour, markeredgecolor="0.15",
                      markersize=7, label=c) for c in conditions]
    if len(temperatures) > 1:
        handles += [Line2D([], [], ls="none", marker="o", color="0.4", markeredgecolor="0.15", markersize=7,
                           fillstyle=fills[t], label=f"T={_t(t)}") for t in temperatures]

    with matplotlib.rc_context(_RC):
        fig = Figure(figsize=TIMELINE_SIZE, dpi=DPI)
        axes, legend_y = _layout(fig, 1, legend_rows=_legend_rows(len(handles), 10), footnotes=footnotes,
                                 width_in=TIMELINE_SIZE[0], height_in=TIMELINE_SIZE[1], title=title, sharey=False)
        ax = axes[0]
        for condition in conditions:
            style = styles[condition]
            for temperature in temperatures:
                rows = drawn[(drawn["condition"].astype(str) == condition)
                             & _at(drawn["temperature"], temperature)]
                if rows.empty:
                    continue
                times = mdates.date2num(rows["start"].dt.tz_convert("UTC").dt.tz_localize(None).to_numpy())
                ax.plot(times, rows["tokens_per_s"].to_numpy(dtype=float), ls="none", marker=style.marker,
                        color=style.colour, markeredgecolor="0.15", markeredgewidth=0.7, markersize=6.5,
                        fillstyle=fills[temperature], alpha=0.9, zorder=3)
        start, end = drawn["start"].min(), drawn["start"].max()
        span = end - start
        days = len({d.date() for d in drawn["start"]})
        pad = max(span * 0.03, pd.Timedelta(seconds=5))
        ax.set_xlim(mdates.date2num((start - pad).tz_localize(None)), mdates.date2num((end + pad).tz_localize(None)))
        ax.xaxis.set_major_locator(mdates.AutoDateLocator(minticks=4, maxticks=10))
        ax.xaxis.set_major_formatter(mdates.DateFormatter(_time_format(span, days)))
        day = start.strftime("%Y-%m-%d") + (f" to {end.strftime('%Y-%m-%d')}" if days > 1 else "")
        ax.set_xlabel(f"cell start time (UTC, {day})")
        if log_y:
            ax.set_yscale("log")
            low, high = positive.min() / 1.3, positive.max() * 1.3
            ax.set_ylim(low, high)
            ax.yaxis.set_major_locator(FixedLocator(_log_ticks(low, high)))
            ax.yaxis.set_minor_locator(NullLocator())
            ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _p: f"{v:g}"))
        else:
            ax.set_ylim(0, max(values.max(), 1.0) * 1.1)
        ax.set_ylabel("decode throughput (tokens/s, server-reported)")
        _legend(fig, handles, legend_y, max_columns=10)
        return _render(fig)
