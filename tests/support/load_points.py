"""Generated load points: one task's temperature-0 cells of a run with a load dimension, as the per-cell table holds
them (the load table's and the report's tests read them)."""

from __future__ import annotations

import pandas as pd

from specbench.analysis.cell_table import frame_of


def point_rows(
    speeds: dict[tuple[str, int], list[list[float]]],
    tokens: dict | None = None,
    accepted: dict[tuple[str, int], list[int]] | None = None,
    drafted: int = 10,
    task: str = "essay",
    temperature: float = 0.0,
) -> pd.DataFrame:
    """Cells of one task at one temperature (the essay at 0 where not given): ``speeds[(condition, N)]`` holds each
    repeat's requests' tokens/s;
    ``accepted[(condition, N)]`` each repeat's tokens accepted per request of ``drafted`` (7 where not given), each
    request predicting 38 tokens more than it drafted."""
    rows = []
    for (condition, n), repeats in speeds.items():
        for repeat, requests in enumerate(repeats, start=1):
            own = (tokens or {}).get((condition, n, repeat)) or [[1, 2, 3]] * len(requests)
            taken = (accepted or {}).get((condition, n), [7] * len(repeats))[repeat - 1]
            rows.append(
                {
                    "task": task,
                    "condition": condition,
                    "temperature": temperature,
                    "repeat": repeat,
                    "concurrency": n,
                    "tokens_per_s": requests[0],
                    "tokens": own[0],
                    "load_tokens_per_s": requests,
                    "load_predicted_n": [38 + drafted] * len(requests),
                    "load_decode_ms": [(38 + drafted) / speed * 1000.0 for speed in requests],
                    "load_draft_n": [0 if condition == "off" else drafted] * len(requests),  # off drafts nothing
                    "load_draft_n_accepted": [0 if condition == "off" else taken] * len(requests),
                    "load_tokens": own,
                    "load_slot": list(range(len(requests))),
                    "load_sent_s": [0.001 * i for i in range(len(requests))],
                    "load_first_token_s": [0.001 * i + 0.05 for i in range(len(requests))],
                    "load_itl_median_ms": [10.0] * len(requests),
                    "load_itl_p90_ms": [12.0] * len(requests),
                    "load_window_s": 1.0,
                    "load_aggregate_tokens_per_s": sum(requests),
                    "cell_file": f"results/cells/local/m/{task}/{condition}/c{n}/t{temperature:.1f}/r{repeat}.json",
                }
            )
    return frame_of(rows, "off")
