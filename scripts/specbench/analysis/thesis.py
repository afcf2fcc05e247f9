"""The study's thesis, "the task, more than the method, decided the multiplier", as figures: the task x method matrix
of log multipliers (one temperature, one machine), read under two views, each a task side against a method side.

- ``MAIN_EFFECTS`` (interaction apart): L[t, m] = mu + a_t + b_m + e_tm, fitted by least squares to the cells the
  matrix has (sum a_t = 0, sum b_m = 0; on a complete matrix a_t is a row mean less the grand mean). The task side
  tau = sqrt(mean_t a_t^2), the method side beta = sqrt(mean_m b_m^2): "averaged over the methods, a task moves the
  multiplier by exp(tau) from the average task". ``*_share``: tau^2, beta^2 and the mean squared rest e_tm^2 as
  shares of their sum (on a complete matrix, of the spread of the log multipliers). What a method changes only on
  some tasks (n-gram's 6.25x on the file rewrite against ~1x elsewhere) is in the rest, on neither side.
- ``SPREAD_WITHIN`` (interaction counted on both sides): the task side is the spread of the log multipliers across
  the tasks within one method (each method's mean squared deviation from its own mean over its tasks, averaged over
  the methods with two tasks or more), the method side the spread across the methods within one task (likewise).
  On a complete matrix these are tau^2 + rest and beta^2 + rest: the same difference as the main effects' (so the
  two views decide alike there), with a ratio nearer 1. No shares.
- Noise: the runs' scatter moves every cell, and a squared side grows with it. Each cell's log mean varies by
  s^2 / (n mean^2) (delta method, per prompt of a prompt set); the baseline's noise is shared by every method of a
  task, so it moves a whole row. Each side's square is a quadratic form of the cells, debiased by the exact
  expectation of that noise in it, ``difference`` D (task side^2 - method side^2) likewise.
- Intervals: symmetric (t) around each debiased estimate, its variance that of a quadratic form of normal cells plus
  the debiasing's own, Satterthwaite degrees of freedom over the cells' run counts (bench/calibration.py shows the
  main effects' coverage by simulation). The sides and their intervals are the square roots of the estimates and
  bounds clipped at 0, so each interval holds its estimate. ``ratio`` (task side / method side) has a Fieller-type
  interval: every r whose test of task^2 - r^2 method^2 = 0 is not rejected (its estimate among them).
- ``decides``: 'task' where D's 95 % interval lies above 0, 'method' below 0, 'not separated' otherwise (the ratio's
  interval then holds 1 too); 'cannot be judged' with fewer than two tasks or two methods, or a matrix in unconnected
  blocks; 'too few runs' where a cell (or a prompt of it) has one run: its figures are then not debiased.

A multiplier is a condition's mean tokens/s over the baseline's mean of the same task and temperature, as
``speed.summary`` computes it. ``thesis_rows`` gives one temperature's row per view, ``thesis`` the table of every
temperature. The decomposition is analysis.thesis_fit's, the noise and intervals analysis.thesis_noise's, the same
figures from the study's published multipliers analysis.thesis_published's."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from specbench.analysis.thesis_fit import (
    CANNOT,
    MAIN_EFFECTS,
    METHOD,
    SPREAD_WITHIN,
    TASK,
    TOO_FEW,
    VIEWS,
    connected,
    decides,
    design,
    point_figures,
)
from specbench.analysis.thesis_noise import CONFIDENCE, Debiased, Noise

THESIS_COLUMNS = [
    "temperature",
    "view",
    "methods",
    "tasks",
    "matrix",
    "missing",
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
    "difference",
    "difference_low",
    "difference_high",
    "task_share",
    "method_share",
    "interaction_share",
    "decides",
    "reason",
    "cells",
]
INTERVALS = ("task", "method", "ratio", "difference")


def _log_mean(runs: pd.DataFrame) -> tuple[float, float, float, list[int]]:
    """One task x condition's mean tokens/s over its runs, the variance of its log (delta method, each prompt's runs
    apart: sum_p n_p s_p^2 / (N mean)^2), that variance's Satterthwaite degrees of freedom, and the prompts' run
    counts."""
    groups = [g.tokens_per_s.to_numpy(dtype=float) for _, g in runs.groupby("prompt", sort=True, dropna=False)]
    sizes = [len(g) for g in groups]
    total, mean = sum(sizes), float(runs.tokens_per_s.mean())
    if min(sizes) < 2:
        return mean, math.nan, math.nan, sizes
    parts = np.array([len(g) * g.var(ddof=1) for g in groups]) / (total * mean) ** 2
    variance = float(parts.sum())
    spread = float(np.sum(parts**2 / (np.array(sizes) - 1)))
    return mean, variance, variance * variance / spread if spread > 0 else math.inf, sizes


def _cannot(tasks: Sequence[str], methods: Sequence[str], present: np.ndarray) -> str | None:
    """Why a matrix cannot be judged (None where it can)."""
    if not methods:
        return "no method ran"
    if len(methods) == 1:
        return f"only one method ran ({methods[0]})"
    if len(tasks) < 2:
        return "no two tasks measured with one method"
    if not connected(present):
        return "the matrix falls apart into blocks that share no task or method"
    return None


@dataclass(frozen=True)
class Matrix:
    """One temperature's (tasks, methods) matrix of log multipliers (NaN where missing), each cell's log-mean
    variance and its degrees of freedom, each task's baseline's (NaN where a cell has one run), and what every view's
    row shares: the multipliers by task and method, the fewest runs, the cell files behind them and why there is
    no multiplier at all (None where there is)."""

    logs: np.ndarray
    variances: np.ndarray
    dfs: np.ndarray
    base_var: np.ndarray
    base_df: np.ndarray
    tasks: list[str]
    methods: list[str]
    shared: dict[str, Any]
    no_multiplier: str | None


def matrix_of(
    cells: pd.DataFrame,
    baseline: str,
    temperature: float,
    methods: Sequence[str] | None = None,
    tasks: Sequence[str] | None = None,
) -> Matrix:
    """The matrix of one temperature: ``methods`` default to every condition but the baseline, ``tasks`` to every
    task (in table order); a cell counts where both its runs and the baseline's have a positive tokens/s."""
    read = cells[["task", "prompt", "condition", "tokens_per_s", "cell_file"]]  # the columns read, not the wide table
    usable = read[(cells.temperature == temperature) & (cells.tokens_per_s > 0)]
    methods = [m for m in (methods or dict.fromkeys(usable.condition)) if m != baseline]
    tasks = list(tasks or dict.fromkeys(usable.task))
    logs = np.full((len(tasks), len(methods)), np.nan)
    variances, dfs = np.full_like(logs, np.nan), np.full_like(logs, np.nan)
    base_var, base_df = np.full(len(tasks), np.nan), np.full(len(tasks), np.nan)
    fewest, behind, matrix = math.inf, [], {}
    for ti, task in enumerate(tasks):
        own = usable[usable.task == task]
        base = own[own.condition == baseline]
        if base.empty:
            continue
        base_mean, base_var[ti], base_df[ti], base_sizes = _log_mean(base)
        for mi, method in enumerate(methods):
            runs = own[own.condition == method]
            if runs.empty:
                continue
            mean, variances[ti, mi], dfs[ti, mi], sizes = _log_mean(runs)
            logs[ti, mi] = math.log(mean / base_mean)
            fewest = min(fewest, *sizes, *base_sizes)
            matrix.setdefault(task, {})[method] = mean / base_mean
            behind += [*runs.cell_file, *base.cell_file]
    shared = {
        "temperature": float(temperature),
        "matrix": matrix,
        "fewest_runs": None if fewest == math.inf else int(fewest),
        "cells": sorted(set(behind)),
    }
    lacking = not matrix and usable.condition.isin(methods).any() and not (usable.condition == baseline).any()
    why = f"no '{baseline}' cells: no multiplier" if lacking else None
    return Matrix(logs, variances, dfs, base_var, base_df, tasks, methods, shared, why)


def thesis_rows(
    cells: pd.DataFrame,
    baseline: str,
    temperature: float,
    methods: Sequence[str] | None = None,
    tasks: Sequence[str] | None = None,
) -> list[dict[str, Any]]:
    """One temperature's rows of ``THESIS_COLUMNS``, one per view (``VIEWS`` order); ``methods`` and ``tasks`` as
    ``matrix_of`` reads them."""
    matrix = matrix_of(cells, baseline, temperature, methods, tasks)
    return [row_of(matrix, view) for view in VIEWS]


def thesis_row(
    cells: pd.DataFrame,
    baseline: str,
    temperature: float,
    methods: Sequence[str] | None = None,
    tasks: Sequence[str] | None = None,
    view: str = MAIN_EFFECTS,
) -> dict[str, Any]:
    """One temperature's row of ``THESIS_COLUMNS`` under one view."""
    return row_of(matrix_of(cells, baseline, temperature, methods, tasks), view)


def row_of(matrix: Matrix, view: str) -> dict[str, Any]:
    """A matrix's row under one view."""
    m = matrix
    figured = figures(m.logs, m.variances, m.dfs, m.base_var, m.base_df, m.tasks, m.methods, view)
    if m.no_multiplier:
        figured["reason"] = m.no_multiplier
    return {**m.shared, **figured}


def figures(
    logs: np.ndarray,
    variances: np.ndarray,
    dfs: np.ndarray,
    base_var: np.ndarray,
    base_df: np.ndarray,
    tasks: Sequence[str],
    methods: Sequence[str],
    view: str = MAIN_EFFECTS,
) -> dict[str, Any]:
    """The figures, intervals and answer under ``view`` of a (tasks, methods) matrix of log multipliers (NaN where
    missing), each cell's log-mean variance and its degrees of freedom, and each task's baseline's (NaN where a cell
    has one run)."""
    present = np.isfinite(logs)
    keep_t, keep_m = present.any(axis=1), present.any(axis=0)
    row: dict[str, Any] = {
        "view": view,
        "methods": [m for mi, m in enumerate(methods) if keep_m[mi]],
        "tasks": [t for ti, t in enumerate(tasks) if keep_t[ti]],
        "missing": [
            f"{t}/{m}"
            for ti, t in enumerate(tasks)
            for mi, m in enumerate(methods)
            if keep_t[ti] and keep_m[mi] and not present[ti, mi]
        ],
        **dict.fromkeys(["task_effect", "method_effect", "ratio", "difference"], math.nan),
        **dict.fromkeys([f"{n}_{end}" for n in INTERVALS for end in ("low", "high")], math.nan),
        **dict.fromkeys(["task_share", "method_share", "interaction_share"], math.nan),
    }
    present = present[keep_t][:, keep_m]
    if (reason := _cannot(row["tasks"], row["methods"], present)) is not None:
        return {**row, "decides": CANNOT, "reason": reason}
    fit, values = design(present), logs[keep_t][:, keep_m][present]
    cell_var, cell_df = variances[keep_t][:, keep_m][present], dfs[keep_t][:, keep_m][present]
    if np.isnan(cell_var).any() or np.isnan(base_var[keep_t]).any():
        plain = {name: float(values @ q @ values) for name, q in fit.forms_of(view).items()}
        return {
            **row,
            **_figures(plain, view),
            "decides": TOO_FEW,
            "reason": "a cell has one run: no noise estimate, so the figures are not debiased and have no interval",
        }
    noise = Noise(cell_var, cell_df, base_var[keep_t], base_df[keep_t])
    debiased = Debiased(fit, values, noise, view)
    row.update(_figures(debiased.values, view))
    for name in ("task", "method"):
        low, high = debiased.interval(name)
        row[f"{name}_low"], row[f"{name}_high"] = math.sqrt(max(low, 0.0)), math.sqrt(max(high, 0.0))
    row["difference_low"], row["difference_high"] = debiased.interval("difference")
    row["ratio_low"], row["ratio_high"] = debiased.ratio_interval()
    verdict = decides(row["difference_low"], row["difference_high"])
    reason = f"{DIFFERENCE_WORDS[view]}'s {CONFIDENCE:.0%} interval " + _where(verdict)
    if math.isnan(row["ratio"]):
        reason += "; no ratio: neither debiased side is above 0"
    return {**row, "decides": verdict, "reason": reason}


DIFFERENCE_WORDS = {  # D in words, per view
    MAIN_EFFECTS: "D = tau^2 - beta^2",
    SPREAD_WITHIN: "D = (spread across tasks)^2 - (spread across methods)^2",
}


def _figures(squares: Mapping[str, float], view: str) -> dict[str, float]:
    """The point figures of one matrix under ``view`` from its (debiased) squared sides."""
    return {name: float(value) for name, value in point_figures(squares, view).items()}


def thesis(cells: pd.DataFrame, baseline: str, methods: Sequence[str] | None = None) -> pd.DataFrame:
    """``thesis_rows`` per temperature of these cells (one machine's), ``methods`` by default every condition but
    the baseline: a row per temperature and view."""
    temperatures = sorted(set(cells.temperature.dropna()))
    rows = [row for t in temperatures for row in thesis_rows(cells, baseline, t, methods)]
    return pd.DataFrame(rows, columns=THESIS_COLUMNS)


SETTING_COLUMNS = [*THESIS_COLUMNS, "setting", "in_place_of"]


def in_place_of(methods: Sequence[str], condition: str) -> str | None:
    """The method a setting stands in for: the longest of ``methods`` its name extends (``ngram-mod-warm-all``:
    ``ngram-mod``), None for none."""
    return max((m for m in methods if condition.startswith(f"{m}-")), key=len, default=None)


def settings_beside(cells: pd.DataFrame, baseline: str, methods: Sequence[str]) -> pd.DataFrame:
    """The thesis with each setting of a method this run has (a condition <method>-<suffix> outside ``methods``: the
    warm n-gram server, DFlash at 15, a sweep's members) in place of its method, per temperature and view: not the run's
    figure, which is over ``methods``, and never mixed into it; shown beside it. ``SETTING_COLUMNS``."""
    rows = []
    for setting in dict.fromkeys(cells.condition.dropna()):
        member = in_place_of(methods, setting) if setting not in (*methods, baseline) else None
        if member is None:
            continue
        swapped = [setting if m == member else m for m in methods]
        for temperature in sorted(set(cells.temperature.dropna())):
            for row in thesis_rows(cells, baseline, temperature, swapped):
                rows.append({**row, "setting": setting, "in_place_of": member})
    return pd.DataFrame(rows, columns=SETTING_COLUMNS)


def _where(verdict: str) -> str:
    return {TASK: "lies above 0", METHOD: "lies below 0"}.get(verdict, "holds 0")
