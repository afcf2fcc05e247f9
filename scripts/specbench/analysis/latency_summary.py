"""Latency per task x condition x temperature: the median over its cells of each cell's time to first token
and inter-token latency quantiles (the per-cell figures: analysis.chunk_latency)."""

from __future__ import annotations

import pandas as pd

from specbench.analysis.cell_table import GROUP
from specbench.analysis.summary_columns import narrow, sorted_list

LATENCY_COLUMNS = [
    "task",
    "condition",
    "temperature",
    "runs",
    "timed_runs",
    "ttft_ms",
    "itl_median_ms",
    "itl_p90_ms",
    "itl_p99_ms",
    "cells",
]


def latency(cells: pd.DataFrame) -> pd.DataFrame:
    """Per task x condition x temperature: the median over its cells of each cell's time to first token and its
    inter-token latency quantiles (analysis.chunk_latency), over the cells that kept their chunk arrivals."""
    figures = ["ttft_ms", "itl_median_ms", "itl_p90_ms", "itl_p99_ms"]
    timed = narrow(cells, [*GROUP, *figures, "cell_file"])
    timed = timed[timed.ttft_ms.notna()]
    out = (
        timed.groupby(GROUP, sort=True)
        .agg(
            timed_runs=("cell_file", "size"),
            **{name: (name, "median") for name in figures},
            cells=("cell_file", sorted_list),
        )
        .reset_index()
    )
    runs = cells.groupby(GROUP, sort=True).size().rename("runs").reset_index()
    return out.merge(runs, on=GROUP, how="left")[LATENCY_COLUMNS]
