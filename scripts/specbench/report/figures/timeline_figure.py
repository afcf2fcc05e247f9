"""The timeline figure, as PNG bytes: every cell's tokens/s against the time it started, so that contention or
drift over the session shows as a trend or a cluster."""

from __future__ import annotations

from collections.abc import Sequence

import matplotlib
import numpy as np
import pandas as pd
from matplotlib import dates as mdates
from matplotlib.lines import Line2D
from matplotlib.ticker import LogFormatter

from specbench.report.figures.style import (
    RC_PARAMS,
    TIMELINE_SIZE,
    condition_styles,
    is_empty,
    log_axis,
    log_scale,
    marker_handles,
    new_figure,
    no_data,
    render,
)
from specbench.report.labels import ordered, temperature_label

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
