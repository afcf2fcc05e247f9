"""Figures of what happens inside a request, as PNG bytes: acceptance by draft position (the server's own counts,
acceptance.positions) and tokens over time for one request of each condition (the stream's chunk arrivals). Pure,
like the other figures: tables in, bytes out; tasks and conditions in the config's order, conditions styled
as there."""

from __future__ import annotations

from collections.abc import Sequence

import matplotlib
import numpy as np
import pandas as pd
from matplotlib.ticker import MaxNLocator, PercentFormatter

from specbench.analysis.chunk_latency import token_arrivals
from specbench.report.figures.style import (
    ACCEPTANCE_SIZE,
    RC_PARAMS,
    TIMELINE_SIZE,
    condition_styles,
    is_empty,
    marker_handles,
    new_figure,
    no_data,
    render,
)
from specbench.report.labels import ordered, temperature_label

MAX_POSITIONS = 16  # positions drawn at most (DFlash drafts up to its block size); the footnote says when cut


def positions_figure(
    positions: pd.DataFrame | None, baseline: str, tasks: Sequence[str] = (), conditions: Sequence[str] = ()
) -> bytes:
    """One panel per task: for each condition (and temperature), the share of verification steps that accepted the
    draft up to position i (the server's per-position count over its steps), with the mean accepted length per step
    in the panel's legend."""
    title = "Acceptance by draft position (the server's own counts, pooled over repeats)"
    if is_empty(positions):
        return no_data(title, "no verification step counted (no speculative condition, or no counters kept)")
    task_names = ordered(positions.task, tasks)
    names = ordered(positions.condition, conditions)
    styles = condition_styles(ordered([baseline, *conditions, *names], conditions), baseline)
    several_t = positions.temperature.nunique() > 1
    widest = max(len(r) for r in positions.position_rates)
    footnotes = [
        "Position i: the share of verification steps whose first i drafted tokens were all accepted (position 1 is "
        "the rate of accepting anything). Legend: mean accepted length = 1 + accepted / steps, the tokens one "
        "verification step yields."
    ]
    if widest > MAX_POSITIONS:
        footnotes.append(f"Positions beyond {MAX_POSITIONS} are not drawn (up to {widest} were counted).")
    with matplotlib.rc_context(RC_PARAMS):
        fig, axes = new_figure(
            ACCEPTANCE_SIZE, title, len(task_names), footnotes, marker_handles(styles, names), sharey=True
        )
        for ax, task in zip(axes, task_names, strict=True):
            own = positions[positions.task == task]
            for condition in names:
                for row in own[own.condition == condition].sort_values("temperature").itertuples():
                    rates = np.asarray(row.position_rates[:MAX_POSITIONS], dtype=float) * 100
                    style = styles[condition]
                    label = f"{condition}{f' T={temperature_label(row.temperature)}' if several_t else ''}"
                    ax.plot(
                        np.arange(1, len(rates) + 1),
                        rates,
                        color=style.colour,
                        marker=style.marker,
                        markeredgecolor="0.15",
                        ls="-" if row.temperature == own.temperature.min() else "--",
                        label=f"{label}: {row.mean_accepted_length:.2f} tokens/step",
                    )
            ax.set_title(task)
            ax.set_xlabel("draft position")
            ax.xaxis.set_major_locator(MaxNLocator(integer=True))
            ax.legend(fontsize=7, loc="lower left", frameon=False)
        axes[0].set_ylim(0, 105)
        axes[0].yaxis.set_major_formatter(PercentFormatter(decimals=0))
        axes[0].set_ylabel("verification steps accepting up to the position")
        return render(fig)


def example_requests(cells: pd.DataFrame, tasks: Sequence[str], conditions: Sequence[str]) -> pd.DataFrame:
    """Per task and condition, the one request the arrivals figure draws: its lowest temperature, first prompt,
    first repeat among the cells that kept chunk arrivals."""
    timed = cells[cells.chunk_ms.map(len) > 0]
    if timed.empty:
        return timed
    picked = timed.sort_values(["temperature", "prompt", "repeat"], kind="stable").groupby(
        ["task", "condition"], sort=False
    )
    first = picked.head(1)
    order = {t: i for i, t in enumerate(ordered(first.task, tasks))}
    rank = {c: i for i, c in enumerate(ordered(first.condition, conditions))}
    return first.assign(_t=first.task.map(order), _c=first.condition.map(rank)).sort_values(["_t", "_c"])


def arrivals_figure(
    cells: pd.DataFrame | None, baseline: str, tasks: Sequence[str] = (), conditions: Sequence[str] = ()
) -> bytes:
    """One panel per task: tokens received against the time since the request was sent, for one request of each
    condition (example_requests), as the client saw the stream arrive."""
    title = "Tokens over time within one request of each condition"
    if is_empty(cells):
        return no_data(title, "no runs")
    examples = example_requests(cells, tasks, conditions)
    if examples.empty:
        return no_data(title, "no cell kept its chunk arrivals")
    task_names = ordered(examples.task, tasks)
    names = ordered(examples.condition, conditions)
    styles = condition_styles(ordered([baseline, *conditions, *names], conditions), baseline)
    footnotes = [
        "Each line is one request (lowest temperature, first prompt, repeat 1): a step where a chunk of tokens "
        "arrived; the first step is the time to first token (prompt processing included). Steep runs are drafted "
        "tokens accepted in one verification step."
    ]
    with matplotlib.rc_context(RC_PARAMS):
        fig, axes = new_figure(TIMELINE_SIZE, title, len(task_names), footnotes, marker_handles(styles, names), False)
        for ax, task in zip(axes, task_names, strict=True):
            for row in examples[examples.task == task].itertuples():
                arrivals = token_arrivals(row.chunk_ms, row.chunk_tokens)
                style = styles[row.condition]
                ax.step(
                    [0.0, *arrivals],
                    np.arange(0, len(arrivals) + 1),
                    where="post",
                    color=style.colour,
                    lw=1.4,
                )
                ax.plot(arrivals[-1:], [len(arrivals)], marker=style.marker, color=style.colour, markeredgecolor="0.15")
            ax.set_title(task)
            ax.set_xlabel("ms since the request was sent")
            ax.set_ylim(bottom=0)
        axes[0].set_ylabel("tokens received")
        return render(fig)
