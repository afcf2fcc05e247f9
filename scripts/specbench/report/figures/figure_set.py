"""The report's figures: which ones, in what order, with their captions and file names (each drawn by its own
module of report.figures, purely: tables in, PNG bytes of a fixed size out, a "no data" one where nothing is drawn)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from specbench.core.config.sweeps import sweeps_of
from specbench.report.figures.acceptance_figure import acceptance_figure
from specbench.report.figures.load_figure import load_multiplier_figure, load_pareto_figure
from specbench.report.figures.multiplier_figure import multiplier_figure
from specbench.report.figures.requests import arrivals_figure, positions_figure
from specbench.report.figures.style import is_empty
from specbench.report.figures.sweep_figure import sweep_figure
from specbench.report.figures.thesis_figure import draw_thesis
from specbench.report.figures.timeline_figure import timeline_figure

# The figures' file names, in report_figures' order (rule figures writes each beside the report, for snakemake --report
# and the Markdown report)
FIGURE_FILES = ("multipliers.png", "acceptance.png", "timeline.png", "thesis.png", "positions.png", "arrivals.png")


def report_figures(
    tables: dict[str, pd.DataFrame],
    baseline: str,
    tasks: Sequence[str],
    conditions: Sequence[str],
    sweeps: Mapping[str, Mapping[str, Any]] | None = None,
    published: Mapping[str, Any] | None = None,
) -> list[tuple[str, bytes]]:
    """The report's figures with their captions (``sweeps``: each swept condition's facts, a figure per sweep; two
    load figures in a run with a load dimension;
    ``published``: the thesis figure of the study's published multipliers, analysis.thesis_published)."""
    cells = tables["cells"]
    swept = [
        (
            f"Sweep '{name}': the multiplier per task against the value of {next(iter(m.values()))['flag']}, with "
            "its 95 % interval",
            sweep_figure(tables["summary"], name, m, baseline, tasks),
        )
        for name, m in sweeps_of(sweeps or {}).items()
    ]
    load = tables.get("load")
    loaded = (
        []
        if is_empty(load)
        else [
            (
                f"Under load: the multiplier vs {baseline} at the same load against the requests at once (N), with "
                "its 95 % interval, the 1.0x line and N*",
                load_multiplier_figure(load, baseline, tasks, conditions),
            ),
            (
                "Under load: aggregate against per-user tokens/s, each point a load level (N)",
                load_pareto_figure(load, baseline, tasks, conditions),
            ),
        ]
    )
    return [
        (
            f"Multiplier vs {baseline} per task and condition (every repeat a point, the bar their mean, the whisker "
            "its 95 % interval)",
            multiplier_figure(cells, baseline, tasks, conditions, tables["summary"]),
        ),
        (
            "Pooled acceptance rate per task and condition",
            acceptance_figure(tables["acceptance"], baseline, tasks, conditions),
        ),
        (
            "Tokens/s of every cell over time (contention would show as a dip)",
            timeline_figure(cells, baseline, conditions),
        ),
        (
            "Does the task or the method decide? Each task's multiplier per method, and the task and method effects "
            "with their intervals, this run's beside the published multipliers'",
            draw_thesis(tables.get("thesis"), baseline, published, tasks, conditions),
        ),
        (
            "Acceptance by draft position per task and condition (the server's own counts), with the mean accepted "
            "length per verification step",
            positions_figure(tables["positions"], baseline, tasks, conditions),
        ),
        (
            "Tokens over time within one request of each condition (the stream's chunk arrivals)",
            arrivals_figure(cells, baseline, tasks, conditions),
        ),
        *swept,
        *loaded,
    ]
