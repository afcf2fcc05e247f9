"""The load table: per task x condition x temperature x concurrency N, the multiplier against the baseline at the same
N (per-user tokens/s: the mean of a point's requests' server-reported speeds, one value per repeat; the interval and
verdict of analysis.speed), the aggregate tokens/s while all N requests were in flight, acceptance over every
request, token identity at temperature 0 of every request against the one-request baseline control (same task,
prompt and repeat, N = 1), the change in acceptance from the same condition's one-request point (with its interval,
each repeat's rate over its requests one run), and N*: the first N whose interval lies below 1.0x (where it
straddles 1.0x the point is "not separated", the study's own rule; N* is then not reached there).

The multiplier split in two: tokens per verification step (a step yields its accepted drafts and one token of its own:
predicted / (predicted - accepted), 1 without speculation) and the step-time ratio (decode time per step over the
baseline's at the same N); the multiplier is about their quotient. Against the condition's own lowest N, ``moved_by``
names the factor whose change moved the multiplier most: ``acceptance`` (tokens per step) or ``verification cost``
(the step-time ratio)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from specbench.analysis.cell_table import GROUP
from specbench.analysis.intervals import rate_difference_interval
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
    "ttft_median_ms",
    "itl_median_ms",
    "itl_p90_ms",
    "acceptance_by_slot",
    "acceptance_rate",
    "acceptance_change",
    "acceptance_change_ci_low",
    "acceptance_change_ci_high",
    "tokens_per_step",
    "step_time_ratio",
    "moved_by",
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
    out = _acceptance_change(_split(out, baseline))
    return out[LOAD_COLUMNS].sort_values(LOAD_GROUP, kind="stable").reset_index(drop=True)


def _pooled(lists: pd.Series) -> list[float]:
    """Every request's value of a point's list column, missing ones left out."""
    return [float(v) for values in lists for v in values if v is not None and not pd.isna(v)]


def _latency(group: pd.DataFrame) -> dict[str, float]:
    """A point's time to first token (from each request's send) and inter-token latency, the median over its
    requests (of each request's own median and 90th percentile for the latter), in ms."""
    ttft = [
        (first - sent) * 1000.0
        for sents, firsts in zip(group.load_sent_s, group.load_first_token_s, strict=True)
        for sent, first in zip(sents, firsts, strict=True)
        if first is not None and not pd.isna(first)
    ]
    return {
        "ttft_median_ms": _median(ttft),
        "itl_median_ms": _median(_pooled(group.load_itl_median_ms)),
        "itl_p90_ms": _median(_pooled(group.load_itl_p90_ms)),
    }


def _median(values: list[float]) -> float:
    return float(np.median(values)) if values else math.nan


def _by_slot(group: pd.DataFrame) -> list[list[float]]:
    """[slot, acceptance rate] for each slot the point's requests reported, drafting ones only (a slot bug shows as
    one slot's rate apart from the others')."""
    drafted: dict[int, list[int]] = {}
    for slots, ns, accepted in zip(group.load_slot, group.load_draft_n, group.load_draft_n_accepted, strict=True):
        for slot, n, a in zip(slots, ns, accepted, strict=True):
            if slot is not None and not pd.isna(slot) and n:
                totals = drafted.setdefault(int(slot), [0, 0])
                totals[0], totals[1] = totals[0] + int(n), totals[1] + int(a)
    return [[float(slot), a / n] for slot, (n, a) in sorted(drafted.items())]


def _repeat_rates(group: pd.DataFrame) -> list[float]:
    """Each repeat's acceptance rate over its requests (a repeat that drafted nothing left out)."""
    return [
        sum(accepted) / sum(drafted)
        for drafted, accepted in zip(group.load_draft_n, group.load_draft_n_accepted, strict=True)
        if sum(drafted)
    ]


def _acceptance_change(table: pd.DataFrame) -> pd.DataFrame:
    """Each point's acceptance minus its condition's at one request (same task and temperature), with the interval
    of the difference; NaN at N = 1, without that point, or where either drafted nothing."""
    one = {
        tuple(key): (rate, rates)
        for *key, rate, rates in table[table[LOAD] == 1][[*GROUP, "acceptance_rate", "repeat_rates"]].itertuples(
            index=False
        )
    }
    changes = []
    for row in table[[*GROUP, LOAD, "acceptance_rate", "repeat_rates"]].itertuples(index=False):
        base = one.get(tuple(getattr(row, column) for column in GROUP))
        if row.concurrency == 1 or base is None:
            changes.append((math.nan, math.nan, math.nan))
            continue
        low, high = rate_difference_interval(row.acceptance_rate, row.repeat_rates, *base)
        changes.append((row.acceptance_rate - base[0], low, high))
    table[["acceptance_change", "acceptance_change_ci_low", "acceptance_change_ci_high"]] = pd.DataFrame(
        changes, index=table.index, dtype=float
    )
    return table


def _split(table: pd.DataFrame, baseline: str) -> pd.DataFrame:
    """The step-time ratio against the baseline at the same N, and which factor moved each multiplier from the
    condition's lowest N (none at that N, or for the baseline)."""
    keys = [c for c in LOAD_GROUP if c != "condition"]
    base = table[table.condition == baseline][[*keys, "step_ms"]].rename(columns={"step_ms": "baseline_step_ms"})
    out = table.merge(base, on=keys, how="left")
    out["step_time_ratio"] = out.step_ms / out.baseline_step_ms
    first = out.sort_values(LOAD).groupby(GROUP, sort=False).head(1)
    first = first[[*GROUP, "tokens_per_step", "step_time_ratio", LOAD]].rename(
        columns={
            "tokens_per_step": "first_tokens_per_step",
            "step_time_ratio": "first_step_time_ratio",
            LOAD: "first_n",
        }
    )
    out = out.merge(first, on=GROUP, how="left")
    out["moved_by"] = [
        moved_by(row.tokens_per_step / row.first_tokens_per_step, row.step_time_ratio / row.first_step_time_ratio)
        if row.condition != baseline and row.concurrency != row.first_n
        else ""
        for row in out.itertuples(index=False)
    ]
    return out


def moved_by(acceptance_change: float, cost_change: float) -> str:
    """Which of the two factors moved the multiplier more (each a ratio to the lowest N; the multiplier changes by
    about acceptance_change / cost_change): the one whose log is the larger in size; '' where either is unknown."""
    if not (acceptance_change > 0 and cost_change > 0):
        return ""
    return "acceptance" if abs(math.log(acceptance_change)) >= abs(math.log(cost_change)) else "verification cost"


def against_one(low: float, high: float) -> str:
    """Where a multiplier's interval lies against 1.0x (the study's rule: a straddling interval separates nothing)."""
    if pd.isna(low) or pd.isna(high):
        return NO_INTERVAL
    return ABOVE if low > 1.0 else BELOW if high < 1.0 else NOT_SEPARATED


def n_stars(speeds: pd.DataFrame) -> list[int | None]:
    """Per row, its task's, condition's and temperature's N*: the smallest N whose interval lies below 1.0x (None
    where none does)."""
    below = speeds[speeds.against_one == BELOW].groupby(GROUP)[LOAD].min()
    return [below.get(tuple(key)) for key in speeds[GROUP].itertuples(index=False)]


def _per_point(points: pd.DataFrame, cells: pd.DataFrame, baseline: str) -> pd.DataFrame:
    """Per point: its requests, mean aggregate tokens/s, how many repeats had every request in flight at once, the
    acceptance over its requests, and the temperature-0 requests identical to the one-request baseline control."""
    control = {
        (r.task, r.prompt, r.repeat): list(r.tokens)
        for r in cells[["task", "prompt", "repeat", "condition", "temperature", "concurrency", "tokens"]].itertuples(
            index=False
        )  # the columns read, not the whole record: itertuples takes each column of the frame out first
        if r.condition == baseline and r.temperature == 0.0 and (pd.isna(r.concurrency) or r.concurrency == 1)
    }
    rows = []
    for key, group in points.groupby(LOAD_GROUP, sort=True):
        predicted = sum(sum(v) for v in group.load_predicted_n)
        steps = predicted - sum(sum(v) for v in group.load_draft_n_accepted)
        decode_ms = sum(sum(v) for v in group.load_decode_ms)
        drafted = sum(sum(v) for v in group.load_draft_n)
        accepted = sum(sum(v) for v in group.load_draft_n_accepted)
        compared = identical = 0
        if key[GROUP.index("temperature")] == 0.0:
            for row in group[["task", "prompt", "repeat", "load_tokens"]].itertuples(index=False):
                reference = control.get((row.task, row.prompt, row.repeat))
                if reference is None:
                    continue
                compared += len(row.load_tokens)
                identical += sum(list(tokens) == reference for tokens in row.load_tokens)
        rows.append(
            {
                **dict(zip(LOAD_GROUP, key, strict=True)),
                **_latency(group),
                "acceptance_by_slot": _by_slot(group),
                "requests": int(sum(len(v) for v in group.load_tokens_per_s)),
                "aggregate_tokens_per_s": group.load_aggregate_tokens_per_s.astype(float).mean(),
                "all_in_flight": int(group.load_window_s.notna().sum()),
                "acceptance_rate": accepted / drafted if drafted else math.nan,
                "repeat_rates": _repeat_rates(group),
                "tokens_per_step": predicted / steps if steps > 0 else math.nan,
                "step_ms": decode_ms / steps if steps > 0 else math.nan,
                "requests_compared": compared,
                "requests_identical": identical,
            }
        )
    return pd.DataFrame(rows)
