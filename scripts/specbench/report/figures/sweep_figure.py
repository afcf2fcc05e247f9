"""A sweep's figure, as PNG bytes: the multiplier against the swept flag's value, a line per task with its 95 %
interval as whiskers, one panel per temperature."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

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
