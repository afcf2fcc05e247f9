"""The load table: per task x condition x temperature x concurrency N, the multiplier against the baseline at the same
N (per-user tokens/s: the mean of a point's requests' server-reported speeds, one value per repeat; the interval and
verdict of analysis.speed), the aggregate tokens/s while all N requests were in flight, acceptance over every
request, token identity at temperature 0 of every request against the one-request baseline control (same task,
prompt and repeat, N = 1), and **N\\***: the first N whose interval lies below 1.0x (where it straddles 1.0x the
point is "not separated", the study's own rule; N\\* is then not reached there)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from specbench.analysis.cell_table import GROUP
from specbench.analysis.speed import summary
from specbench.analysis.verdict_rule import BASELINE_WORD

LOAD = "concurrency"
LOAD_GROUP = [*GROUP, LOAD]
ABOVE, BELOW, NOT_SEPARATED, NO_INTERVAL = "above 1.0x", "below 1.0x", "not separated", "no interval"
LOAD_COLUMNS = [
    "task",
    "condition",
    "temperature",
    LOAD,
    "runs",
    "requests",
    "per_user_tokens_per_s",
    "baseline_per_user_tokens_per_s",
    "speedup",
    "speedup_ci_low",
    "speedup_ci_high",
    "against_one",
    "n_star",
    "aggregate_tokens_per_s",
    "all_in_flight",
    "acceptance_rate",
    "requests_compared",
    "requests_identical",
    "cells",
]


def load_table(cells: pd.DataFrame, baseline: str) -> pd.DataFrame:
    """The load table of one machine's and build's cells (every cell of a run with a load dimension; none without
    one: an empty table)."""
    points = cells[cells[LOAD].notna()].copy() if LOAD in cells else cells.iloc[:0]
    if points.empty:
        return pd.DataFrame(columns=LOAD_COLUMNS)
    points["tokens_per_s"] = [float(np.mean(v)) if len(v) else math.nan for v in points.load_tokens_per_s]
    rows = []
    for n, at_n in points.groupby(LOAD, sort=True):
        made = summary(at_n.reset_index(drop=True), baseline)
        rows.append(made.assign(**{LOAD: int(n)}))
    speeds = pd.concat(rows, ignore_index=True).rename(
        columns={
            "mean_tokens_per_s": "per_user_tokens_per_s",
            "baseline_mean_tokens_per_s": "baseline_per_user_tokens_per_s",
        }
    )
    speeds["against_one"] = [
        BASELINE_WORD if condition == baseline else against_one(low, high)
        for condition, low, high in zip(speeds.condition, speeds.speedup_ci_low, speeds.speedup_ci_high, strict=True)
    ]
    speeds["n_star"] = pd.array(n_stars(speeds), dtype="Int64")
    out = speeds.merge(_per_point(points, cells, baseline), on=LOAD_GROUP, how="left")
    return out[LOAD_COLUMNS].sort_values(LOAD_GROUP, kind="stable").reset_index(drop=True)


def against_one(low: float, high: float) -> str:
    """Where a multiplier's interval lies against 1.0x (the study's rule: a straddling interval separates nothing)."""
    if pd.isna(low) or pd.isna(high):
        return NO_INTERVAL
    return ABOVE if low > 1.0 else BELOW if high < 1.0 else NOT_SEPARATED


def n_stars(speeds: pd.DataFrame) -> list[int | None]:
    """Per row, its task's, condition's and temperature's N\\*: the smallest N whose interval lies below 1.0x (None
    where none does)."""
    below = speeds[speeds.against_one == BELOW].groupby(GROUP)[LOAD].min()
    return [below.get(tuple(key)) for key in speeds[GROUP].itertuples(index=False)]


def _per_point(points: pd.DataFrame, cells: pd.DataFrame, baseline: str) -> pd.DataFrame:
    """Per point: its requests, mean aggregate tokens/s, how many repeats had every request in flight at once, the
    acceptance over its requests, and the temperature-0 requests identical to the one-request baseline control."""
    control = {
        (r.task, r.prompt, r.repeat): list(r.tokens)
        for r in cells.itertuples(index=False)
        if r.condition == baseline and r.temperature == 0.0 and (pd.isna(r.concurrency) or r.concurrency == 1)
    }
    rows = []
    for key, group in points.groupby(LOAD_GROUP, sort=True):
        drafted = sum(sum(v) for v in group.load_draft_n)
        accepted = sum(sum(v) for v in group.load_draft_n_accepted)
        compared = identical = 0
        if key[GROUP.index("temperature")] == 0.0:
            for row in group.itertuples(index=False):
                reference = control.get((row.task, row.prompt, row.repeat))
                if reference is None:
                    continue
                compared += len(row.load_tokens)
                identical += sum(list(tokens) == reference for tokens in row.load_tokens)
        rows.append(
            {
                **dict(zip(LOAD_GROUP, key, strict=True)),
                "requests": int(sum(len(v) for v in group.load_tokens_per_s)),
                "aggregate_tokens_per_s": group.load_aggregate_tokens_per_s.astype(float).mean(),
                "all_in_flight": int(group.load_window_s.notna().sum()),
                "acceptance_rate": accepted / drafted if drafted else math.nan,
                "requests_compared": compared,
                "requests_identical": identical,
            }
        )
    return pd.DataFrame(rows)
