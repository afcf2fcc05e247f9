"""The throughput multiplier figure, as PNG bytes: per temperature, each task's repeats per condition as points, their
mean as a bar and the multiplier's 95 % interval as a whisker, against the baseline of the same task."""

from __future__ import annotations

from collections.abc import Sequence

import matplotlib
import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.lines import Line2D
from matplotlib.ticker import FuncFormatter

from specbench.analysis.speed import cell_multipliers
from specbench.report.figures.style import (
    MULTIPLIER_SIZE,
    RC_PARAMS,
    Style,
    condition_styles,
    interval_whisker,
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
    interval_whisker(ax, centre, point, low, high)
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
