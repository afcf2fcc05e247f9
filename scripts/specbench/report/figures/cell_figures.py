"""Figures of the measured cells, as PNG bytes: throughput multipliers, acceptance rates, a timeline of the cells and
one per sweep (report.figures.figure_set puts them in the report's order beside the others).

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

from collections.abc import Mapping, Sequence
from typing import Any

import matplotlib
import numpy as np
import pandas as pd
from matplotlib import dates as mdates
from matplotlib.axes import Axes
from matplotlib.lines import Line2D
from matplotlib.patches import Patch
from matplotlib.ticker import (
    FuncFormatter,
    LogFormatter,
    MultipleLocator,
    PercentFormatter,
)

from specbench.analysis.speed import cell_multipliers
from specbench.report.figures.style import (
    ACCEPTANCE_SIZE,
    MULTIPLIER_SIZE,
    RC_PARAMS,
    TIMELINE_SIZE,
    Style,
    condition_styles,
    is_empty,
    log_axis,
    log_scale,
    marker_handles,
    new_figure,
    no_data,
    render,
    task_axis,
    times_label,
)
from specbench.report.labels import ordered, temperature_label

# --------------------------------------------------------------------------------------------------------------------
# Throughput multiplier


DIFFERS_COLOUR = "#D55E00"  # Okabe-Ito vermilion: a ring around a cell whose output differs from the baseline's


def _undrawn_notes(data: pd.DataFrame, baseline: str) -> tuple[list[str], pd.DataFrame]:
    """Footnotes for the cells the figure cannot draw (no tokens/s value; no baseline of their task and
    temperature), and the cells without a baseline."""
    footnotes: list[str] = []
    no_tps = data.tokens_per_s.isna()
    if no_tps.any():
        footnotes.append(f"{int(no_tps.sum())} cell(s) without a tokens/s value not drawn.")
    no_base = data.baseline_mean_tokens_per_s.isna() & ~no_tps
    unmatched = data[no_base]
    if no_base.any():
        where = ", ".join(
            f"{r.task} @ T={temperature_label(r.temperature)}"
            for r in unmatched.drop_duplicates(["task", "temperature"]).itertuples()
        )
        footnotes.append(f"No '{baseline}' baseline for {where}: {int(no_base.sum())} cell(s) skipped.")
    return footnotes, unmatched


def _intervals(summary: pd.DataFrame | None) -> dict[tuple[str, str, float], tuple[float, float, float]]:
    """Each task, condition and temperature's multiplier with its 95 % interval, from the summary."""
    if summary is None:
        return {}
    return {
        (r.task, r.condition, r.temperature): (r.speedup, r.speedup_ci_low, r.speedup_ci_high)
        for r in summary.itertuples()
    }


def _legend(
    styles: dict[str, Style], shown: list[str], drawn: pd.DataFrame, baseline: str, footnotes: list[str]
) -> list:
    """The legend's handles: each condition's marker, the mean's bar, the no-gain line and, where some output
    differs from the baseline's, the ring (with a footnote that counts them)."""
    handles = [
        *marker_handles(styles, shown),
        Line2D([], [], color="0.2", lw=2.4, label="mean of repeats"),
        Line2D([], [], color="0.35", lw=1.1, ls="--", label="1.0× (no gain)"),
    ]
    differ = drawn.identical.eq(False).fillna(False).astype(bool) if "identical" in drawn else None
    if differ is not None and differ.any():
        handles.append(
            Line2D(
                [],
                [],
                marker="o",
                ls="",
                markersize=9,
                markerfacecolor="none",
                markeredgecolor=DIFFERS_COLOUR,
                markeredgewidth=1.4,
                label=f"output differs from '{baseline}'",
            )
        )
        footnotes.append(
            f"Ringed: {int(differ.sum())} cell(s) whose temperature-0 output differs from "
            f"'{baseline}''s: their multiplier compares different texts."
        )
    return handles


def _no_baseline_mark(ax: Axes, position: int, baseline: str) -> None:
    """A task's column that has no baseline at this temperature says so."""
    ax.text(
        position,
        0.5,
        f"no '{baseline}'\nbaseline",
        transform=ax.get_xaxis_transform(),
        ha="center",
        va="center",
        fontsize=8,
        color="0.35",
        style="italic",
    )


def _repeats(ax: Axes, cell: pd.DataFrame, centre: float, slot: float, style: Style, interval: tuple | None) -> None:
    """One condition's column of one task: every repeat a point, their mean a bar, the multiplier's interval a
    whisker, a ring around each point whose output differs from the baseline's."""
    ys = cell.sort_values("repeat", kind="stable").multiplier.to_numpy(dtype=float)
    xs = centre + np.linspace(-slot / 4, slot / 4, len(ys)) if len(ys) > 1 else np.full(1, centre)
    mean = float(np.mean(ys))
    ax.hlines(mean, centre - slot * 0.42, centre + slot * 0.42, colors="0.2", lw=2.4, zorder=3)
    # the whisker is drawn about the multiplier it is the interval of (the mean of the points is the same number,
    # but rounds apart from it: above a zero-width interval, for equal runs)
    point, low, high = interval or (mean, np.nan, np.nan)
    if np.isfinite(low) and np.isfinite(high):
        ax.errorbar(
            centre,
            point,
            yerr=[[point - low], [high - point]],
            fmt="none",
            ecolor="0.2",
            elinewidth=1.0,
            capsize=3,
            zorder=3,
        )
    ax.scatter(
        xs,
        ys,
        s=30,
        marker=style.marker,
        c=style.colour,
        edgecolors="0.15",
        linewidths=0.6,
        alpha=0.9,
        zorder=4,
    )
    ringed = cell.sort_values("repeat", kind="stable").identical.eq(False).fillna(False)
    if ringed.any():
        mask = ringed.to_numpy(dtype=bool)
        ax.scatter(
            xs[mask],
            ys[mask],
            s=110,
            marker="o",
            facecolors="none",
            edgecolors=DIFFERS_COLOUR,
            linewidths=1.4,
            zorder=5,
        )


def _no_gain_line(ax: Axes) -> None:
    """The dashed line at 1.0x, labelled at the panel's right edge."""
    ax.axhline(1.0, color="0.35", lw=1.1, ls="--", zorder=2)
    ax.text(
        0.995,
        1.0,
        "1.0× (no gain)",
        transform=ax.get_yaxis_transform(),
        ha="right",
        va="bottom",
        fontsize=7.5,
        color="0.3",
    )


def _multiplier_axis(ax: Axes, drawn: pd.DataFrame, log_y: bool, baseline: str) -> None:
    """The shared y axis: log or linear, always including 1.0x, its ticks as multipliers."""
    values = np.append(drawn.multiplier.to_numpy(dtype=float), 1.0)
    if log_y:
        log_axis(ax, values, 1.35, FuncFormatter(times_label))
    else:
        ax.set_ylim(0, values.max() * 1.12)
        ax.yaxis.set_major_formatter(FuncFormatter(times_label))
    ax.set_ylabel(f"throughput multiplier (× mean '{baseline}' tokens/s)")


def multiplier_figure(
    cells: pd.DataFrame | None,
    baseline: str,
    tasks: Sequence[str] = (),
    conditions: Sequence[str] = (),
    summary: pd.DataFrame | None = None,
) -> bytes:
    """Per temperature a panel: for each task, one column of points per condition (every repeat a point, their
    mean a short bar, the multiplier's 95 % interval from ``summary`` an error bar), as a multiple of the mean
    baseline tokens/s of that task and temperature (speed.cell_multipliers); a ring marks a cell whose
    temperature-0 output differs from the baseline's."""
    title = f"Decode throughput as a multiple of the '{baseline}' baseline"
    if is_empty(cells):
        return no_data(title, "no runs")
    data = cell_multipliers(cells, baseline)
    if data.empty:
        return no_data(title, f"only '{baseline}' cells, nothing to compare")
    footnotes, unmatched = _undrawn_notes(data, baseline)
    drawn = data[np.isfinite(data.multiplier.to_numpy(dtype=float))]
    if drawn.empty:
        return no_data(title, "no cell has both a tokens/s value and a baseline to compare with")
    drawn, log_y = log_scale(drawn, "multiplier", footnotes)
    footnotes.insert(
        0,
        f"Multiplier = a cell's tokens/s / mean tokens/s of the '{baseline}' cells of the same task "
        "and temperature. Points: every repeat; bar: their mean (the multiplier); whisker: its 95 % "
        "interval. " + ("Log scale." if log_y else "Linear scale."),
    )
    intervals = _intervals(summary)
    temperatures = sorted(drawn.temperature.unique())
    task_names = ordered([*drawn.task, *unmatched.task], tasks)
    shown = ordered(drawn.condition, conditions)
    styles = condition_styles(ordered(cells.condition, conditions), baseline)
    handles = _legend(styles, shown, drawn, baseline, footnotes)

    with matplotlib.rc_context(RC_PARAMS):
        fig, axes = new_figure(MULTIPLIER_SIZE, title, len(temperatures), footnotes, handles)
        slot = min(0.8 / len(shown), 0.24)
        left = -slot * len(shown) / 2
        for ax, temperature in zip(axes, temperatures, strict=True):
            panel = drawn[drawn.temperature == temperature]
            orphans = set(unmatched.task[unmatched.temperature == temperature])
            for ti, task in enumerate(task_names):
                if task in orphans and not (panel.task == task).any():
                    _no_baseline_mark(ax, ti, baseline)
                for ci, condition in enumerate(shown):
                    cell = panel[(panel.task == task) & (panel.condition == condition)]
                    if not cell.empty:
                        centre = ti + left + slot * (ci + 0.5)
                        interval = intervals.get((task, condition, temperature))
                        _repeats(ax, cell, centre, slot, styles[condition], interval)
            _no_gain_line(ax)
            task_axis(ax, task_names, temperature)
        _multiplier_axis(axes[0], drawn, log_y, baseline)
        return render(fig)


# --------------------------------------------------------------------------------------------------------------------
# Acceptance


def acceptance_figure(
    acceptance: pd.DataFrame | None, baseline: str, tasks: Sequence[str] = (), conditions: Sequence[str] = ()
) -> bytes:
    """Pooled acceptance rate (accepted / drafted tokens, as %) per task and condition, one panel per temperature.

    Bars grouped per task, one colour and hatch per condition, with the min..max of the single runs as a whisker.
    A condition that drafted nothing in a task is marked 'n/a' instead of a zero bar; a condition that drafted nothing
    anywhere (the baseline) is left out and named in the footnote."""
    title = "Draft acceptance (pooled over repeats)"
    if is_empty(acceptance):
        return no_data(title, "no acceptance table")
    footnotes = [
        "Pooled rate = accepted / drafted tokens over all repeats; whisker: lowest..highest single run. "
        "'n/a': the condition drafted nothing there (no rate, not a zero)."
    ]
    nothing = acceptance.drafted == 0
    never = [c for c in ordered(acceptance.condition, conditions) if nothing[acceptance.condition == c].all()]
    if never:
        footnotes.append(f"Not shown, drafted nothing anywhere: {', '.join(never)}.")
    shown = acceptance[~acceptance.condition.isin(never)]
    if shown.empty:
        return no_data(title, "no condition drafted any tokens")
    temperatures = sorted(shown.temperature.unique())
    task_names = ordered(shown.task, tasks)
    names = ordered(shown.condition, conditions)
    styles = condition_styles(ordered(acceptance.condition, conditions), baseline)
    handles = [
        Patch(facecolor=styles[c].colour, hatch=styles[c].hatch, edgecolor="0.15", linewidth=0.6, label=c)
        for c in names
    ]

    with matplotlib.rc_context(RC_PARAMS):
        fig, axes = new_figure(ACCEPTANCE_SIZE, title, len(temperatures), footnotes, handles)
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
                        ax.text(
                            x, 1.5, "n/a", ha="center", va="bottom", fontsize=label_size, color="0.25", style="italic"
                        )
                        continue
                    rate = 100 * float(row.pooled_rate)
                    ax.bar(
                        x,
                        rate,
                        width * 0.92,
                        color=style.colour,
                        hatch=style.hatch,
                        edgecolor="0.15",
                        linewidth=0.6,
                        zorder=3,
                    )
                    if rate < 1:  # a true zero: a coloured stub on the axis, so it is not read as a missing bar
                        ax.hlines(
                            0, x - width * 0.46, x + width * 0.46, colors=style.colour, lw=3, zorder=4, clip_on=False
                        )
                    low, high = row.min_rate, row.max_rate
                    top = rate
                    if pd.notna(low) and pd.notna(high) and high > low:
                        ax.errorbar(
                            x,
                            rate,
                            yerr=[[max(rate - 100 * low, 0)], [max(100 * high - rate, 0)]],
                            fmt="none",
                            ecolor="0.1",
                            elinewidth=0.9,
                            capsize=2,
                            zorder=4,
                        )
                        top = max(rate, 100 * high)
                    ax.text(
                        x,
                        top + 1.5,
                        f"{rate:.0f}%",
                        ha="center",
                        va="bottom",
                        fontsize=label_size,
                        color="0.15",
                        zorder=5,
                    )
            task_axis(ax, task_names, temperature)
        axes[0].set_ylim(0, 112)
        axes[0].yaxis.set_major_locator(MultipleLocator(20))
        axes[0].yaxis.set_major_formatter(PercentFormatter(decimals=0))
        axes[0].set_ylabel("pooled acceptance rate (% of drafted tokens)")
        return render(fig)


# --------------------------------------------------------------------------------------------------------------------
# Timeline

_FILLS = ["full", "none", "left", "top", "right", "bottom"]


def timeline_figure(cells: pd.DataFrame | None, baseline: str, conditions: Sequence[str] = ()) -> bytes:
    """Tokens/s of every cell against the time it started, marked by condition (filled/open by temperature), so
    that contention or thermal drift over the session would show as a trend or a cluster in time."""
    title = "Throughput of every cell over the session"
    if is_empty(cells):
        return no_data(title, "no runs with a start time")
    temperatures = sorted(cells.temperature.unique())
    footnotes = [
        "Each point is one cell (one request on its own server), placed at its start time (UTC); "
        "marker shape and colour: condition" + ("; fill: temperature." if len(temperatures) > 1 else ".")
    ]
    unusable = cells.started_at.isna() | ~np.isfinite(cells.tokens_per_s.to_numpy(dtype=float))
    if unusable.any():
        footnotes.append(f"{int(unusable.sum())} cell(s) without a start time or tokens/s value not drawn.")
    drawn, log_y = log_scale(cells[~unusable], "tokens_per_s", footnotes)
    if drawn.empty:
        return no_data(title, "no cell has both a start time and a tokens/s value")
    shown = ordered(drawn.condition, conditions)
    fills = {t: _FILLS[i % len(_FILLS)] for i, t in enumerate(temperatures)}
    styles = condition_styles(ordered(cells.condition, conditions), baseline)
    handles = marker_handles(styles, shown)
    if len(temperatures) > 1:
        handles += [
            Line2D(
                [],
                [],
                ls="none",
                marker="o",
                color="0.4",
                markeredgecolor="0.15",
                markersize=7,
                fillstyle=fills[t],
                label=f"T={temperature_label(t)}",
            )
            for t in temperatures
        ]

    with matplotlib.rc_context(RC_PARAMS):
        fig, axes = new_figure(TIMELINE_SIZE, title, 1, footnotes, handles, sharey=False)
        ax = axes[0]
        start = drawn.started_at.dt.tz_convert("UTC").dt.tz_localize(None)
        for condition in shown:
            for temperature in temperatures:
                rows = (drawn.condition == condition) & (drawn.temperature == temperature)
                if not rows.any():
                    continue
                ax.plot(
                    start[rows].to_numpy(),
                    drawn.tokens_per_s[rows].to_numpy(dtype=float),
                    ls="none",
                    marker=styles[condition].marker,
                    color=styles[condition].colour,
                    markeredgecolor="0.15",
                    markeredgewidth=0.7,
                    markersize=6.5,
                    fillstyle=fills[temperature],
                    alpha=0.9,
                    zorder=3,
                )
        first, last = start.min(), start.max()
        pad = max((last - first) * 0.03, pd.Timedelta(seconds=5))
        ax.set_xlim(first - pad, last + pad)
        locator = mdates.AutoDateLocator(minticks=4, maxticks=10)
        ax.xaxis.set_major_locator(locator)
        ax.xaxis.set_major_formatter(mdates.ConciseDateFormatter(locator))
        ax.set_xlabel("cell start time (UTC)")
        values = drawn.tokens_per_s.to_numpy(dtype=float)
        if log_y:
            log_axis(ax, values, 1.3, LogFormatter(labelOnlyBase=False, minor_thresholds=(np.inf, np.inf)))
        else:
            ax.set_ylim(0, max(values.max(), 1.0) * 1.1)
        ax.set_ylabel("decode throughput (tokens/s, server-reported)")
        return render(fig)


# --------------------------------------------------------------------------------------------------------------------
# Sweeps


def sweep_figure(
    summary: pd.DataFrame,
    sweep: str,
    members: Mapping[str, Mapping[str, Any]],
    baseline: str,
    tasks: Sequence[str] = (),
) -> bytes:
    """One sweep (``members``: condition -> its ``swept`` facts): the multiplier against the flag's value, a line
    per task with its 95 % interval as whiskers, one panel per temperature; values in the order the sweep lists
    them, evenly spaced."""
    flag = next(iter(members.values()))["flag"] if members else "?"
    title = f"Multiplier vs '{baseline}' against {flag} (sweep '{sweep}')"
    rows = summary[summary.condition.isin(list(members))]
    if rows.empty:
        return no_data(title, "no cells of the sweep")
    values = [str(m["value"]) for m in members.values()]
    position = {name: values.index(str(m["value"])) for name, m in members.items()}
    temperatures = sorted(rows.temperature.unique())
    task_names = ordered(rows.task, tasks)
    styles = condition_styles(["", *task_names], "")
    handles = [
        Line2D([], [], color=styles[t].colour, marker=styles[t].marker, markeredgecolor="0.15", label=t)
        for t in task_names
    ]
    footnotes = [
        f"Each point: the multiplier (mean tokens/s over '{baseline}''s mean of the same task and "
        f"temperature) of the condition that adds {flag} <value>; whisker: its 95 % interval. Tasks side by "
        "side are offset a little so their whiskers do not cover each other."
    ]
    with matplotlib.rc_context(RC_PARAMS):
        fig, axes = new_figure(MULTIPLIER_SIZE, title, len(temperatures), footnotes, handles)
        offset = 0.08 * (np.arange(len(task_names)) - (len(task_names) - 1) / 2)
        for ax, temperature in zip(axes, temperatures, strict=True):
            panel = rows[rows.temperature == temperature]
            for ti, task in enumerate(task_names):
                own = panel[panel.task == task].assign(x=lambda f: f.condition.map(position)).sort_values("x")
                if own.empty:
                    continue
                xs = own.x.to_numpy(dtype=float) + offset[ti]
                ys = own.speedup.to_numpy(dtype=float)
                low = np.nan_to_num(ys - own.speedup_ci_low.to_numpy(dtype=float), nan=0.0)
                high = np.nan_to_num(own.speedup_ci_high.to_numpy(dtype=float) - ys, nan=0.0)
                ax.errorbar(
                    xs,
                    ys,
                    yerr=[np.clip(low, 0, None), np.clip(high, 0, None)],
                    color=styles[task].colour,
                    marker=styles[task].marker,
                    markeredgecolor="0.15",
                    capsize=3,
                    lw=1.2,
                    zorder=3,
                )
            ax.axhline(1.0, color="0.35", lw=1.1, ls="--", zorder=2)
            ax.set_xticks(range(len(values)), values)
            ax.set_xlim(-0.5, len(values) - 0.5)
            ax.set_xlabel(flag)
            ax.set_title(f"temperature {temperature_label(temperature)}")
        axes[0].set_ylim(bottom=0)
        axes[0].yaxis.set_major_formatter(FuncFormatter(times_label))
        axes[0].set_ylabel(f"throughput multiplier (× mean '{baseline}' tokens/s)")
        return render(fig)
