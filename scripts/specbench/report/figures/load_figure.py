"""The load figures, as PNG bytes: the multiplier against the concurrency N with its 95 % interval, the 1.0x line and
N* marked, one panel per task; and aggregate against per-user tokens/s (each point a load level, labelled N), one
panel per task: where more users buy throughput at each user's cost."""

from __future__ import annotations

from collections.abc import Sequence

import matplotlib
import numpy as np
import pandas as pd
from matplotlib.lines import Line2D
from matplotlib.ticker import FuncFormatter

from specbench.report.figures.style import (
    MULTIPLIER_SIZE,
    RC_PARAMS,
    condition_styles,
    new_figure,
    no_data,
    render,
    times_label,
)
from specbench.report.labels import ordered, temperature_label


def _grid(load: pd.DataFrame, tasks: Sequence[str]) -> tuple[list[str], list[float]]:
    """The panels' columns (tasks, in config order) and rows (temperatures, ascending)."""
    return ordered(load.task, tasks), sorted(load.temperature.unique())


def _label(ax: object, task: str, temperature: float, column: int, row: int, rows: int, xlabel: str) -> None:
    """A panel's task above the top row, its temperature beside the first column, the x label under the last row."""
    if row == 0:
        ax.set_title(task, fontsize=9)  # type: ignore[attr-defined]
    if column == 0:
        ax.annotate(  # type: ignore[attr-defined]
            f"temperature {temperature_label(temperature)}",
            (-0.32, 0.5),
            xycoords="axes fraction",
            rotation=90,
            va="center",
            fontsize=8,
            color="0.3",
        )
    if row == rows - 1:
        ax.set_xlabel(xlabel)  # type: ignore[attr-defined]


def _handles(conditions: list[str], styles: dict) -> list[Line2D]:
    return [
        Line2D([], [], color=styles[c].colour, marker=styles[c].marker, markeredgecolor="0.15", label=c)
        for c in conditions
    ]


def load_multiplier_figure(load: pd.DataFrame, baseline: str, tasks: Sequence[str], conditions: Sequence[str]) -> bytes:
    """The multiplier against N, a line per condition with its interval as whiskers; a hollow marker where the
    interval lies below 1.0x, N* written beside the legend's condition per panel."""
    title = f"Multiplier vs '{baseline}' at the same load, against the requests at once (N)"
    rows = load[load.condition != baseline] if load is not None and len(load) else None
    if rows is None or rows.empty:
        return no_data(title, "no load points")
    levels = sorted(int(n) for n in rows.concurrency.unique())
    drawn = ordered(rows.condition, conditions)
    styles = condition_styles(list(conditions) or [baseline, *drawn], baseline)
    columns, temperatures = _grid(rows, tasks)
    footnotes = [
        f"Each point: the mean per-user tokens/s of a condition's points at N over '{baseline}''s at the same N; "
        "whisker: its 95 % interval; hollow: the interval lies below 1.0x. N*: the first N whose interval lies below "
        "1.0x (none: speculation did not fall below 1.0x at any N measured)."
    ]
    with matplotlib.rc_context(RC_PARAMS):
        fig, axes = new_figure(
            MULTIPLIER_SIZE, title, len(columns), footnotes, _handles(drawn, styles), rows=len(temperatures)
        )
        offset = 0.06 * (np.arange(len(drawn)) - (len(drawn) - 1) / 2)
        for index, ax in enumerate(axes):
            row, column = divmod(index, len(columns))
            task, temperature = columns[column], temperatures[row]
            panel = rows[(rows.task == task) & (rows.temperature == temperature)]
            stars = []
            for ci, condition in enumerate(drawn):
                own = panel[panel.condition == condition].sort_values("concurrency")
                if own.empty:
                    continue
                xs = np.array([levels.index(int(n)) for n in own.concurrency], dtype=float) + offset[ci]
                ys = own.speedup.to_numpy(dtype=float)
                low = np.nan_to_num(ys - own.speedup_ci_low.to_numpy(dtype=float), nan=0.0)
                high = np.nan_to_num(own.speedup_ci_high.to_numpy(dtype=float) - ys, nan=0.0)
                style = styles[condition]
                ax.errorbar(
                    xs,
                    ys,
                    yerr=[np.clip(low, 0, None), np.clip(high, 0, None)],
                    color=style.colour,
                    lw=1.2,
                    capsize=3,
                    zorder=3,
                    fmt="-",
                )
                below = (own.speedup_ci_high < 1.0).to_numpy()
                for x, y, hollow in zip(xs, ys, below, strict=True):
                    ax.plot(
                        [x],
                        [y],
                        marker=style.marker,
                        color=style.colour,
                        markeredgecolor="0.15",
                        markerfacecolor="white" if hollow else style.colour,
                        zorder=4,
                    )
                star = own.n_star.dropna()
                stars.append(f"{condition}: N* {int(star.iloc[0])}" if len(star) else f"{condition}: no N*")
            ax.axhline(1.0, color="0.35", lw=1.1, ls="--", zorder=2)
            ax.set_xticks(range(len(levels)), [str(n) for n in levels])
            ax.set_xlim(-0.5, len(levels) - 0.5)
            _label(ax, task, temperature, column, row, len(temperatures), "requests at once (N)")
            ax.text(
                0.02,
                0.98,
                "\n".join(stars),
                transform=ax.transAxes,
                fontsize=7,
                va="top",
                color="0.25",
                bbox={"facecolor": "white", "alpha": 0.8, "edgecolor": "none", "pad": 1.5},
                zorder=5,
            )
        axes[0].set_ylim(bottom=0)
        axes[0].yaxis.set_major_formatter(FuncFormatter(times_label))
        fig.supylabel(f"multiplier (× '{baseline}' at the same N)", fontsize=9)
        return render(fig)


def load_pareto_figure(load: pd.DataFrame, baseline: str, tasks: Sequence[str], conditions: Sequence[str]) -> bytes:
    """Aggregate tokens/s (all requests in flight) against per-user tokens/s, a line per condition through its load
    levels, each point labelled N: the trade between serving more users and serving each fast."""
    title = "Aggregate against per-user tokens/s, each point a load level (N)"
    rows = load if load is not None else None
    if rows is None or rows.empty or rows.aggregate_tokens_per_s.isna().all():
        return no_data(title, "no load points with every request in flight")
    drawn = ordered(rows.condition, conditions)
    styles = condition_styles(list(conditions) or drawn, baseline)
    columns, temperatures = _grid(rows, tasks)
    footnotes = [
        "Per-user: the mean of a point's requests' own tokens/s; aggregate: every request's tokens while all N were "
        "in flight (ramp-up and tail left out), per second; both the mean over repeats. Up and right is better."
    ]
    with matplotlib.rc_context(RC_PARAMS):
        fig, axes = new_figure(
            MULTIPLIER_SIZE, title, len(columns), footnotes, _handles(drawn, styles), False, len(temperatures)
        )
        for index, ax in enumerate(axes):
            row, column = divmod(index, len(columns))
            task, temperature = columns[column], temperatures[row]
            panel = rows[(rows.task == task) & (rows.temperature == temperature)]
            for condition in drawn:
                own = panel[panel.condition == condition].sort_values("concurrency")
                if own.empty:
                    continue
                style = styles[condition]
                ax.plot(
                    own.per_user_tokens_per_s,
                    own.aggregate_tokens_per_s,
                    color=style.colour,
                    marker=style.marker,
                    markeredgecolor="0.15",
                    lw=1.2,
                    zorder=3,
                )
                for x, y, n in zip(own.per_user_tokens_per_s, own.aggregate_tokens_per_s, own.concurrency, strict=True):
                    if pd.notna(x) and pd.notna(y):
                        ax.annotate(f"N={int(n)}", (x, y), textcoords="offset points", xytext=(4, 4), fontsize=7)
            _label(ax, task, temperature, column, row, len(temperatures), "per-user tokens/s")
        fig.supylabel("aggregate tokens/s", fontsize=9)
        return render(fig)
