"""Generated load points: one task's temperature-0 cells of a run with a load dimension, as the per-cell table holds
them (the load table's and the report's tests read them)."""

from __future__ import annotations

import pandas as pd

from specbench.analysis.cell_table import frame_of


def point_rows(speeds: dict[tuple[str, int], list[list[float]]], tokens: dict | None = None) -> pd.DataFrame:
    """Cells of one task at temperature 0: ``speeds[(condition, N)]`` holds each repeat's requests' tokens/s."""
    rows = []
    for (condition, n), repeats in speeds.items():
        for repeat, requests in enumerate(repeats, start=1):
            own = (tokens or {}).get((condition, n, repeat)) or [[1, 2, 3]] * len(requests)
            rows.append(
                {
                    "task": "essay",
                    "condition": condition,
                    "temperature": 0.0,
                    "repeat": repeat,
                    "concurrency": n,
                    "tokens_per_s": requests[0],
                    "tokens": own[0],
                    "load_tokens_per_s": requests,
                    "load_draft_n": [10] * len(requests),
                    "load_draft_n_accepted": [7] * len(requests),
                    "load_tokens": own,
                    "load_window_s": 1.0,
                    "load_aggregate_tokens_per_s": sum(requests),
                    "cell_file": f"results/cells/local/m/essay/{condition}/c{n}/t0.0/r{repeat}.json",
                }
            )
    return frame_of(rows, "off")
