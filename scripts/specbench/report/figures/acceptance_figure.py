"""The draft acceptance figure, as PNG bytes: per temperature, each task's pooled acceptance rate per condition as
a bar, the single runs' lowest..highest as a whisker."""

from __future__ import annotations

from collections.abc import Sequence

import matplotlib
import pandas as pd
from matplotlib.patches import Patch
from matplotlib.ticker import MultipleLocator, PercentFormatter

from specbench.report.figures.style import (
    ACCEPTANCE_SIZE,
    RC_PARAMS,
    condition_styles,
    is_empty,
    new_figure,
    no_data,
    render,
    task_axis,
)
from specbench.report.labels import ordered


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
