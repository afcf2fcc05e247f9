"""What the judges read and share: this run's tables (``Run``), the numbers claims are judged on (``METRICS``), a
judge's ``Outcome`` and the published value as the study writes it."""

from __future__ import annotations

import math
import weakref
from collections.abc import Callable, Iterable, Mapping
from typing import Any, NamedTuple

import numpy as np
import pandas as pd

from specbench.analysis.acceptance import ACCEPTANCE_COLUMNS, POSITION_COLUMNS
from specbench.analysis.cell_table import SCHEMA
from specbench.analysis.identity import IDENTITY_COLUMNS
from specbench.analysis.intervals import mean_interval, rate_interval
from specbench.analysis.load import LOAD_COLUMNS
from specbench.analysis.speed import SUMMARY_COLUMNS
from specbench.claims.claim import Claim

COLUMNS = {
    "summary": SUMMARY_COLUMNS,
    "acceptance": ACCEPTANCE_COLUMNS,
    "identity": IDENTITY_COLUMNS,
    "positions": POSITION_COLUMNS,
    "cells": SCHEMA.names,
    "load": LOAD_COLUMNS,
}


class Metric(NamedTuple):
    """A number claims are judged on: where, tolerance kind, how written (measured; published), pivot, range, and
    how its 95 % interval is had where it has one (``INTERVALS``)."""

    table: str
    column: str
    relative: bool
    fmt: Callable[[float], str]
    number: Callable[[float], str]
    unit: str
    pivot: float | None = None
    pivot_text: str = ""
    limits: tuple[float, float] = (-math.inf, math.inf)
    interval: str | None = None  # a key of INTERVALS


METRICS = {
    "speedup": Metric(
        "summary",
        "speedup",
        True,
        "{:.2f}x".format,
        lambda v: f"{v:.2f}" if v == int(v) else f"{v:g}",
        "x",
        1.0,
        "1.0x",
        interval="ratio",
    ),
    "tokens_per_s": Metric(
        "summary", "mean_tokens_per_s", True, "{:.1f} tok/s".format, "{:g}".format, " tok/s", interval="mean"
    ),
    "pooled_rate": Metric(
        "acceptance",
        "pooled_rate",
        False,
        "{:.0%}".format,
        lambda v: f"{v * 100:g}",
        "%",
        0.5,
        "50%",
        (0.0, 1.0),
        interval="rate",
    ),
    "accepted_per_step": Metric(
        "acceptance",
        "accepted_per_step",
        False,
        "{:.2f} tokens/step".format,
        "{:g}".format,
        " tokens/step",
        limits=(0.0, math.inf),
    ),
    "longest_accepted": Metric(  # summaries.positions: the most tokens one draft round (verification step) accepted
        "positions",
        "longest_accepted",
        False,
        "{:.0f} accepted in a round".format,
        "{:g}".format,
        " tokens accepted per draft round",
        limits=(0.0, math.inf),
    ),
    "draft_n": Metric("cells", "draft_n", True, "{:.0f} tokens".format, "{:g}".format, " tokens drafted per run"),
    "draft_n_accepted": Metric(
        "cells",
        "draft_n_accepted",
        False,
        "{:.0f} accepted".format,
        "{:g}".format,
        " tokens accepted per request",
        limits=(0.0, math.inf),
    ),
}


class Outcome(NamedTuple):
    measured: Any  # typed: per task a number, verdict or identity counts; per repeat scores or speeds; rankings
    text: str  # the measured value for display
    cells: list[str]
    verdict: str
    detail: str


# Per table frame (by id, while it lives) and set of columns: each combination of their values -> its rows' positions
_INDEXES: dict[int, tuple[weakref.ref, dict[tuple[str, ...], dict[tuple, list[int]]]]] = {}


def _positions(frame: pd.DataFrame, keys: tuple[str, ...]) -> dict[tuple, list[int]]:
    """Where each combination of ``keys``' values lies in ``frame`` (made once per frame and keys; a row with a
    missing value in any of them equals nothing, as ``==`` says)."""
    at = id(frame)
    held = _INDEXES.get(at)
    if held is None or held[0]() is not frame:
        held = (weakref.ref(frame, lambda _: _INDEXES.pop(at, None)), {})
        _INDEXES[at] = held
    by_keys = held[1]
    if keys not in by_keys:
        columns = [frame[k].tolist() for k in keys]
        missing = np.zeros(len(frame), dtype=bool)
        for k in keys:
            missing |= frame[k].isna().to_numpy(dtype=bool)
        index: dict[tuple, list[int]] = {}
        for position, values in enumerate(zip(*columns, strict=True)):
            if not missing[position]:
                index.setdefault(values, []).append(position)
        by_keys[keys] = index
    return by_keys[keys]


class Run(NamedTuple):
    """This run's tables (as from summaries.tables) and its baseline condition."""

    tables: Mapping[str, pd.DataFrame]
    baseline: str

    def rows(self, name: str, **where: Any) -> pd.DataFrame:
        """The rows of a table equal to ``where`` in every column (none where the table or a column is absent)."""
        frame = self.tables.get(name)
        if frame is None or not set(where) <= set(frame.columns):
            frame = pd.DataFrame(columns=COLUMNS[name])
        if not where:
            return frame
        keys = tuple(sorted(where))
        positions = _positions(frame, keys).get(tuple(where[k] for k in keys), [])
        return frame.iloc[positions]

    def row(self, name: str, **where: Any) -> pd.Series | None:
        rows = self.rows(name, **where)
        return None if rows.empty else rows.iloc[0]

    def value(self, metric: Metric, task: str, condition: str, temperature: float) -> tuple[float | None, list[str]]:
        row = self.row(metric.table, task=task, condition=condition, temperature=temperature)
        return (None, []) if row is None else (finite(row.get(metric.column)), list(row.get("cells", [])))

    def interval(self, metric: Metric, task: str, condition: str, temperature: float) -> tuple[float, float] | None:
        """The metric's 95 % interval (None where it has none, or too few runs give none)."""
        row = self.row(metric.table, task=task, condition=condition, temperature=temperature)
        if row is None or metric.interval is None:
            return None
        if metric.interval == "ratio":
            bounds = (row.get("speedup_ci_low"), row.get("speedup_ci_high"))
        elif metric.interval == "mean":
            bounds = mean_interval(row["mean_tokens_per_s"], row["cv"], row["runs"])
        else:  # rate: the pooled rate's, from each run's own rate
            cells = self.rows("cells", task=task, condition=condition, temperature=temperature)
            bounds = rate_interval(row["pooled_rate"], [float(r) for r in cells.acceptance_rate.dropna()])
        low, high = (finite(value) for value in bounds)
        return None if low is None or high is None else (low, high)

    def speeds(
        self, task: str, condition: str, temperature: float, column: str = "tokens_per_s"
    ) -> tuple[dict[int, float], list[str]]:
        """A cell column (tokens/s) per repeat, and the cells."""
        rows = self.rows("cells", task=task, condition=condition, temperature=temperature).sort_values("repeat")
        values = {int(r): v for r, v in zip(rows.repeat, map(finite, rows[column]), strict=True) if v is not None}
        return values, list(rows.cell_file)


def finite(value: Any) -> float | None:
    """A finite float, or None for None/NaN/NA/infinity."""
    number = math.nan if value is None or value is pd.NA else float(value)
    return number if math.isfinite(number) else None


listed: Callable[[Iterable[str]], str] = ", ".join


def per_task(shown: Mapping[str, str]) -> str:
    return next(iter(shown.values())) if len(shown) == 1 else "; ".join(f"{k} {v}" for k, v in shown.items())


def absent(what: str, values: Mapping[str, Any], claim: Claim) -> str:
    """The detail for values some task lacks ('' when none does)."""
    missing = listed(k for k, v in values.items() if v is None)
    return missing and (
        f"no {what} for {missing} ({listed(claim.conditions)}, temperature {claim.temperature:g}) in this run's tables"
    )


def side_of(value: float, pivot: float) -> int:
    return (value > pivot) - (value < pivot)


def size_text(band: tuple[float, float]) -> str:
    """A verdict's size band as the multiplier it allows (0.90-1.00x; at most 0.76x)."""
    low, high = band
    return f"at most {high:.2f}x" if low <= 0 else f"{low:.2f}-{high:.2f}x"


def format_published(claim: Claim) -> str:
    """The published value as the study writes it (e.g. 6.25x, 1.5-1.8x, 41%, 2/3 correct)."""
    published = claim.published
    kind = claim.kind
    wrong = claim.wrong
    if published == "flat":
        spread = f"each within ±{claim.tolerance or 0.0:.0%} of their mean"
        return f"flat across tasks ({spread}) at {claim.temperature:g} as at {claim.versus_temperature:g}"
    if kind in METRICS or kind == "acceptance":
        metric = METRICS[claim.metric or claim.kind]
        text = "-".join(map(metric.number, published if isinstance(published, list) else [published])) + metric.unit
        return text + (f" ({claim.side})" if claim.side else "")
    if kind == "identity" and isinstance(published, list):
        same = [t for t in claim.tasks if t not in published]
        return f"not identical on {', '.join(published)}" + (f"; identical on {', '.join(same)}" if same else "")
    if kind == "identity" and not isinstance(published, str):
        return f"not identical on {published} of {len(claim.tasks)} tasks"
    if kind == "identity" and claim.versus:
        return f"{published} to its own first repeat"
    if kind == "identity" and claim.token_counts:
        counts = "; ".join(f"{t} {a} vs {b} ({(a - b) / b:+.0%})" for t, (a, b) in claim.token_counts.items())
        return f"{published}, length vs the baseline's: {counts}"
    if kind == "gsm8k" and wrong and wrong["answer"]:
        return (
            f"{published}/{claim.total} correct, problem {wrong['problem']}: {wrong['answer']} vs {wrong['reference']}"
        )
    if kind == "gsm8k" and wrong:
        return f"{published}/{claim.total} correct, problem {wrong['problem']} wrong"
    if kind == "gsm8k":
        return f"{published}/{claim.total} correct"
    if kind == "warm_vs_fresh" and isinstance(published, str):
        return "warm faster than fresh" if published == "faster" else "warm server faster with each repeat"
    if kind == "warm_vs_fresh":
        return ", ".join(f"{v:g}" for v in published) + " tok/s over repeats"
    if kind == "ordering" and published == "same ordering":
        return f"{published} as temperature {claim.versus_temperature:g}"
    if kind == "ordering":
        return " > ".join(tier[0] if len(tier) == 1 else "{" + ", ".join(tier) + "}" for tier in published)
    if kind == "pays_up_to":
        judged = f" (judged at N = {', '.join(map(str, claim.at))})" if claim.at else ""
        if published == "every N":
            return f"pays at every N{judged}"
        return f"pays up to N* = {published}: above 1.0x below it, below 1.0x from it{judged}"
    if kind == "acceptance_under_load":
        judged = f"N = {', '.join(str(n) for n in claim.at if n != 1)}" if claim.at else "every N"
        band = f"±{100 * (claim.tolerance or 0.0):g} points"
        if published == "same":
            return f"acceptance the same at {judged} as at one request (within {band})"
        return f"acceptance differs from one request's at some N ({judged}; beyond {band})"
    if kind == "verdict" and claim.size:
        return f"{published}, {size_text(claim.size)}"
    return str(published)  # verdict words, background figures as the study writes them
