"""The study's thesis, "the task, more than the method, decided the multiplier", as a figure: from the task x method
matrix of log multipliers (one temperature, one machine), how far apart two tasks are under one method, and two
methods on one task.

- ``task_effect``: the mean over every pair of tasks measured with the same method (pooled over the methods) of
  |log m(task1, method) - log m(task2, method)|; ``method_effect``: the same over every pair of methods measured on
  the same task. exp() of either is a factor: "two tasks under one method differ by 2.0x on average". Both are
  defined on an incomplete matrix (only the pairs whose two cells exist count), and neither grows with the number
  of tasks or methods (a mean over pairs, not a range).
- ``ratio`` = task_effect / method_effect: above 1, the task moves the multiplier more than the method does.
- Intervals: a seeded percentile bootstrap over the repeats (``DRAWS`` draws): each cell's runs (every condition's,
  the baseline's too, per prompt of a prompt set) drawn again with replacement, the multipliers and the three figures
  recomputed. The runs are spread by sqrt(n / (n - 1)) (on the log scale, kept positive) before drawing, so that a
  drawn mean varies by about s^2 / n, as a t-interval's standard error says (the plain bootstrap's variance is
  (n - 1) / n of that). Each cell's draws are seeded by its own names, so a cell draws the same in any subset of
  the matrix. Every cell needs two runs; with one, there is no interval (``decides``: 'too few runs').
- ``decides``: 'task' where the ratio's interval lies above 1, 'method' where it lies below 1, 'not separated'
  otherwise; 'cannot be judged' with no pair of tasks under one method or no pair of methods on one task.

A multiplier is a condition's mean tokens/s over the baseline's mean of the same task and temperature, as
``summaries.summary`` computes it. ``published_figure`` computes the same figures from published multipliers, where a
cell may be a number, a [low, high] range (every reading of it is tried) or missing."""

from __future__ import annotations

import itertools
import math
import zlib
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

CONFIDENCE = 0.95
DRAWS = 2000
SEED = 0
TASK, METHOD, SEPARATED_NOT, TOO_FEW, CANNOT = "task", "method", "not separated", "too few runs", "cannot be judged"
THESIS_COLUMNS = [
    "temperature",
    "methods",
    "tasks",
    "matrix",
    "task_pairs",
    "method_pairs",
    "fewest_runs",
    "task_effect",
    "task_low",
    "task_high",
    "method_effect",
    "method_low",
    "method_high",
    "ratio",
    "ratio_low",
    "ratio_high",
    "decides",
    "reason",
    "cells",
]


def effects(logs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The task and method effects of log multipliers shaped (..., tasks, methods), NaN for a missing cell: the mean
    |difference| over the pairs of cells in one column (tasks, same method) and in one row (methods, same task)."""
    tasks, methods = logs.shape[-2], logs.shape[-1]
    by_task = [np.abs(logs[..., a, :] - logs[..., b, :]) for a, b in itertools.combinations(range(tasks), 2)]
    by_method = [np.abs(logs[..., a] - logs[..., b]) for a, b in itertools.combinations(range(methods), 2)]
    return _mean_over(by_task, logs.shape[:-2]), _mean_over(by_method, logs.shape[:-2])


def _mean_over(pairs: Sequence[np.ndarray], shape: tuple[int, ...]) -> np.ndarray:
    """The mean of every finite value in ``pairs`` (arrays with leading dims ``shape``), per leading index."""
    if not pairs:
        return np.full(shape, np.nan)
    stacked = np.concatenate([p.reshape(*shape, -1) for p in pairs], axis=-1)
    finite = np.isfinite(stacked)
    count = finite.sum(axis=-1)
    with np.errstate(invalid="ignore"):
        return np.where(count > 0, np.where(finite, stacked, 0.0).sum(axis=-1) / np.maximum(count, 1), np.nan)


def pair_counts(present: np.ndarray) -> tuple[int, int]:
    """How many (task pairs under one method, method pairs on one task) a (tasks, methods) presence mask has."""
    per_method = present.sum(axis=0)
    per_task = present.sum(axis=1)
    return int((per_method * (per_method - 1) // 2).sum()), int((per_task * (per_task - 1) // 2).sum())


def decides(low: float, high: float) -> str:
    """'task' / 'method' / 'not separated' from the ratio's interval."""
    if low > 1:
        return TASK
    if high < 1:
        return METHOD
    return SEPARATED_NOT


def _means(values: np.ndarray, draws: int, seed: Sequence[int]) -> np.ndarray:
    """``draws`` bootstrap means of ``values`` (positive), each a resample with replacement of the same size, drawn
    from the values spread by sqrt(n / (n - 1)) on the log scale and scaled back to their mean: a drawn mean's
    variance is then about s^2 / n (the plain bootstrap's is (n - 1) / n of it, two thirds with three runs), and
    every drawn value stays positive."""
    n = len(values)
    spread = values
    if n > 1:
        logs = np.log(values)
        spread = np.exp(logs.mean() + (logs - logs.mean()) * math.sqrt(n / (n - 1)))
        spread *= values.mean() / spread.mean()
    rng = np.random.default_rng(list(seed))
    return spread[rng.integers(0, n, size=(draws, n))].mean(axis=1)


def _pooled(runs: pd.DataFrame, draws: int, seed: int) -> tuple[float, np.ndarray, list[int]]:
    """One task x condition's mean tokens/s over its runs, its bootstrap draws (each prompt's runs resampled apart,
    seeded by the seed and the cell's own names, so that a cell draws the same in any matrix) and the prompts' run
    counts."""
    groups = {
        prompt: g.tokens_per_s.to_numpy(dtype=float) for prompt, g in runs.groupby("prompt", sort=True, dropna=False)
    }
    sizes = [len(g) for g in groups.values()]
    cell = f"{runs.task.iloc[0]}\0{runs.condition.iloc[0]}"
    drawn = sum(
        len(g) * _means(g, draws, (seed, zlib.crc32(f"{cell}\0{prompt}".encode()))) for prompt, g in groups.items()
    )
    return float(runs.tokens_per_s.mean()), drawn / sum(sizes), sizes


def thesis_figure(
    cells: pd.DataFrame,
    baseline: str,
    temperature: float,
    methods: Sequence[str] | None = None,
    tasks: Sequence[str] | None = None,
    *,
    draws: int = DRAWS,
    seed: int = SEED,
) -> dict[str, Any]:
    """One row of ``THESIS_COLUMNS`` for one temperature: ``methods`` default to every condition but the baseline,
    ``tasks`` to every task (in table order); a cell counts where both its runs and the baseline's have a positive
    tokens/s."""
    read = cells[["task", "prompt", "condition", "tokens_per_s", "cell_file"]]  # the columns read, not the wide table
    usable = read[(cells.temperature == temperature) & (cells.tokens_per_s > 0)]
    methods = [m for m in (methods or dict.fromkeys(usable.condition)) if m != baseline]
    tasks = list(tasks or dict.fromkeys(usable.task))
    logs, drawn = np.full((len(tasks), len(methods)), np.nan), np.full((draws, len(tasks), len(methods)), np.nan)
    fewest, behind, matrix = math.inf, [], {}
    for ti, task in enumerate(tasks):
        own = usable[usable.task == task]
        base = own[own.condition == baseline]
        if base.empty:
            continue
        base_mean, base_draws, base_sizes = _pooled(base, draws, seed)
        for mi, method in enumerate(methods):
            runs = own[own.condition == method]
            if runs.empty:
                continue
            mean, method_draws, sizes = _pooled(runs, draws, seed)
            logs[ti, mi] = math.log(mean / base_mean)
            drawn[:, ti, mi] = np.log(method_draws / base_draws)
            fewest = min(fewest, *sizes, *base_sizes)
            matrix.setdefault(task, {})[method] = mean / base_mean
            behind += [*runs.cell_file, *base.cell_file]
    task_pairs, method_pairs = pair_counts(np.isfinite(logs))
    task_effect, method_effect = (float(v) for v in effects(logs))
    row: dict[str, Any] = {
        "temperature": float(temperature),
        "methods": [m for mi, m in enumerate(methods) if np.isfinite(logs[:, mi]).any()],
        "tasks": [t for ti, t in enumerate(tasks) if np.isfinite(logs[ti]).any()],
        "matrix": matrix,
        "task_pairs": task_pairs,
        "method_pairs": method_pairs,
        "fewest_runs": None if fewest == math.inf else int(fewest),
        "task_effect": task_effect,
        "method_effect": method_effect,
        "ratio": task_effect / method_effect if method_effect > 0 else math.nan,
        "cells": sorted(set(behind)),
        **dict.fromkeys(("task_low", "task_high", "method_low", "method_high", "ratio_low", "ratio_high"), math.nan),
    }
    if not task_pairs or not method_pairs:
        ran = row["methods"]
        reason = (
            f"only one method ran ({ran[0]})"
            if len(ran) == 1
            else "no method ran"
            if not ran
            else "no two tasks measured with one method"
            if not task_pairs
            else "no two methods measured on one task"
        )
        return {**row, "decides": CANNOT, "reason": reason}
    if fewest < 2:
        return {**row, "decides": TOO_FEW, "reason": "a cell has one run: no interval over the repeats"}
    task_draws, method_draws = effects(drawn)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio_draws = task_draws / method_draws
    tail = 100 * (1 - CONFIDENCE) / 2
    for name, values in (("task", task_draws), ("method", method_draws), ("ratio", ratio_draws)):
        finite = values[np.isfinite(values)]
        row[f"{name}_low"], row[f"{name}_high"] = (
            (float(v) for v in np.percentile(finite, [tail, 100 - tail])) if len(finite) else (math.nan, math.nan)
        )
    verdict = decides(row["ratio_low"], row["ratio_high"])
    return {**row, "decides": verdict, "reason": f"the ratio's {CONFIDENCE:.0%} interval " + _where(verdict)}


def _where(verdict: str) -> str:
    return {TASK: "lies above 1", METHOD: "lies below 1"}.get(verdict, "includes 1")


def thesis(cells: pd.DataFrame, baseline: str, methods: Sequence[str] | None = None) -> pd.DataFrame:
    """``thesis_figure`` per temperature of these cells (one machine's), ``methods`` by default every condition but
    the baseline."""
    rows = [thesis_figure(cells, baseline, t, methods) for t in sorted(set(cells.temperature.dropna()))]
    return pd.DataFrame(rows, columns=THESIS_COLUMNS)


# --------------------------------------------------------------------------------------------------------------------
# Published multipliers

Published = Mapping[str, Mapping[str, "float | Sequence[float] | None"]]


def _grid(low: float, high: float, points: Sequence[float], steps: int = 7) -> list[float]:
    """The values a [low, high] range is read at: both ends, evenly between, and every published point inside (so
    that every vertex of the piecewise-linear figures is among them)."""
    inside = [p for p in points if low < p < high]
    return sorted({*np.linspace(low, high, steps).tolist(), *inside})


def published_figure(published: Published) -> dict[str, Any]:
    """The figures of a published matrix (task -> method -> multiplier, a [low, high] range, or None where not
    given) under every reading of its ranges: each figure's lowest and highest value over the readings (a range read
    anywhere in it, independently of the others), the cells read as ranges and the missing ones."""
    tasks = list(published)
    methods = list(dict.fromkeys(m for row in published.values() for m in row))
    points = [float(v) for row in published.values() for v in row.values() if isinstance(v, (int, float))]
    points += [float(e) for row in published.values() for v in row.values() if isinstance(v, Sequence) for e in v]
    axes, ranged, missing = [], [], []
    for task, method in itertools.product(tasks, methods):
        value = published[task].get(method)
        if value is None:
            missing.append(f"{task}/{method}")
            axes.append([math.nan])
        elif isinstance(value, Sequence):
            ranged.append(f"{task}/{method} {value[0]:g}-{value[1]:g}x")
            axes.append(_grid(float(value[0]), float(value[1]), points))
        else:
            axes.append([float(value)])
    readings = np.log(np.array(list(itertools.product(*axes)), dtype=float)).reshape(-1, len(tasks), len(methods))
    task_effect, method_effect = effects(readings)
    ratio = task_effect / method_effect
    task_pairs, method_pairs = pair_counts(np.isfinite(readings[0]))
    low, high = float(ratio.min()), float(ratio.max())
    return {
        "tasks": tasks,
        "methods": methods,
        "matrix": {t: dict(row) for t, row in published.items()},
        "task_pairs": task_pairs,
        "method_pairs": method_pairs,
        "readings": len(readings),
        "ranged": ranged,
        "missing": missing,
        "task_effect": (float(task_effect.min()), float(task_effect.max())),
        "method_effect": (float(method_effect.min()), float(method_effect.max())),
        "ratio": (low, high),
        "decides": TASK if low > 1 else METHOD if high < 1 else "depends on the reading",
    }


def factor(log_effect: float) -> float:
    """A log effect as the factor it stands for (0.69 -> 2.0x)."""
    return math.exp(log_effect)
