"""Is it the task, the prompt or the repeat that decides the multiplier? For tasks with a prompt set, every spread on
one scale: the standard deviation of the log of a multiplier (0.10 is about +-10 %).

Per task x condition x temperature (``prompt_spread``):
- each prompt's multiplier: its mean tokens/s over the baseline's mean tokens/s of the same prompt and temperature
  (the per-prompt ``speedup``);
- ``across_prompts_sd``: the SD of the log of those multipliers;
- ``across_repeats_sd``: the SD of the log tokens/s of one run about its prompt's mean (pooled over the prompts), for
  the condition, and ``baseline_repeats_sd`` for the baseline;
- ``expected_sd``: the SD a prompt's multiplier would have from repeat noise alone, sqrt(s^2 / n + s_base^2 / m);
- ``prompt_f`` = (across_prompts_sd / expected_sd)^2 and its p-value (F test with P - 1 and the pooled repeat degrees
  of freedom): the prompts differ beyond their repeats when p < ``ALPHA`` (``deciding`` 'prompt', else 'repeats').

Per condition x temperature (``task_or_prompt``): ``across_tasks_sd`` of the log task multipliers (the summary's
``speedup``), beside the prompts' SD within a task (pooled over the tasks with a set) and the repeats'; a task's
multiplier pools P prompts, so prompt variation alone gives it an SD of about across_prompts_sd / sqrt(P):
``task_f`` = across_tasks_sd^2 / (across_prompts_sd^2 / P) tests whether the tasks differ beyond that (``deciding``
'task' when p < ALPHA, else 'prompt' when the prompts differed within some task, else 'repeats')."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
from scipy import stats

ALPHA = 0.05
SPREAD_COLUMNS = [
    "task",
    "condition",
    "temperature",
    "prompts",
    "prompt_names",
    "prompt_multipliers",
    "prompt_min",
    "prompt_max",
    "across_prompts_sd",
    "across_repeats_sd",
    "baseline_repeats_sd",
    "expected_sd",
    "prompt_f",
    "prompt_p",
    "deciding",
    "cells",
]
DECIDING_COLUMNS = [
    "condition",
    "temperature",
    "tasks",
    "task_names",
    "task_multipliers",
    "across_tasks_sd",
    "across_prompts_sd",
    "across_repeats_sd",
    "task_f",
    "task_p",
    "deciding",
]


def pooled_sd(groups: Sequence[np.ndarray]) -> tuple[float, int]:
    """The pooled within-group SD of some groups of values, and its degrees of freedom."""
    squares = sum(float(((g - g.mean()) ** 2).sum()) for g in groups if len(g) > 1)
    df = sum(len(g) - 1 for g in groups if len(g) > 1)
    return (math.sqrt(squares / df), df) if df else (math.nan, 0)


def positive_logs(values: pd.Series) -> np.ndarray:
    """The logs of the finite, positive values (a prompt's runs of tokens/s)."""
    array = values.to_numpy(dtype=float)
    return np.log(array[np.isfinite(array) & (array > 0)])


def repeat_noise(
    runs: Mapping[str, pd.Series], base: Mapping[str, pd.Series], base_sd: float
) -> tuple[float, int, float]:
    """The condition's repeat SD of log tokens/s pooled over the prompts of ``runs`` (each in ``base``), its degrees of
    freedom, and the SD a prompt's log multiplier has from repeat noise alone, sqrt(s^2 / n + s_base^2 / m) (n, m:
    the mean runs per prompt of either side, ``base_sd`` the baseline's pooled SD); NaN without prompts."""
    sd, df = pooled_sd([positive_logs(v) for v in runs.values()])
    if not runs:
        return sd, df, math.nan
    n = np.mean([len(v) for v in runs.values()])
    m = np.mean([len(base[p]) for p in runs])
    return sd, df, math.sqrt(sd * sd / n + base_sd * base_sd / m)


def _f_test(ratio_sq: float, df1: int, df2: int) -> float:
    """The p-value of an F statistic (NaN where it cannot be computed)."""
    if not (df1 > 0 and df2 > 0 and math.isfinite(ratio_sq)):
        return math.nan
    return float(stats.f.sf(ratio_sq, df1, df2))


def _sd(values: np.ndarray) -> float:
    return float(np.std(values, ddof=1)) if len(values) > 1 else math.nan


def prompt_spread(cells: pd.DataFrame, baseline: str) -> pd.DataFrame:
    """One row per task x condition x temperature of the tasks with more than one prompt (see the module docstring);
    empty when no task has a prompt set."""
    rows = []
    several = cells.groupby("task").prompt.nunique()
    read = cells[["task", "prompt", "condition", "temperature", "tokens_per_s", "cell_file"]]  # the columns read
    shown = read[cells.task.isin(several[several > 1].index) & cells.tokens_per_s.notna()]
    for (task, temperature), group in shown.groupby(["task", "temperature"], sort=False):
        base = {p: g.tokens_per_s for p, g in group[group.condition == baseline].groupby("prompt", sort=False)}
        base_sd, base_df = pooled_sd([positive_logs(v) for v in base.values()])
        for condition, own in group[group.condition != baseline].groupby("condition", sort=False):
            runs = {p: g.tokens_per_s for p, g in own.groupby("prompt", sort=False) if p in base}
            names = list(runs)
            multipliers = [float(runs[p].mean() / base[p].mean()) for p in names]
            logs = np.log([m for m in multipliers if m > 0])
            sd, df, expected = repeat_noise(runs, base, base_sd)
            f = (_sd(logs) / expected) ** 2 if expected and expected > 0 else math.nan
            p_value = _f_test(f, len(logs) - 1, df + base_df)
            rows.append(
                {
                    "task": task,
                    "condition": condition,
                    "temperature": temperature,
                    "prompts": len(names),
                    "prompt_names": names,
                    "prompt_multipliers": multipliers,
                    "prompt_min": min(multipliers, default=math.nan),
                    "prompt_max": max(multipliers, default=math.nan),
                    "across_prompts_sd": _sd(logs),
                    "across_repeats_sd": sd,
                    "baseline_repeats_sd": base_sd,
                    "expected_sd": expected,
                    "prompt_f": f,
                    "prompt_p": p_value,
                    "deciding": "prompt" if p_value < ALPHA else "repeats",
                    "cells": sorted([*own.cell_file, *group[group.condition == baseline].cell_file]),
                }
            )
    return pd.DataFrame(rows, columns=SPREAD_COLUMNS)


def task_or_prompt(spread: pd.DataFrame, summary: pd.DataFrame, baseline: str) -> pd.DataFrame:
    """One row per condition x temperature: the tasks' spread beside the prompts' and the repeats' (see the module
    docstring); empty without a prompt set."""
    if spread.empty:
        return pd.DataFrame(columns=DECIDING_COLUMNS)
    rows = []
    others = summary[(summary.condition != baseline) & (summary.speedup > 0)]
    for (condition, temperature), tasks in others.groupby(["condition", "temperature"], sort=False):
        within = spread[(spread.condition == condition) & (spread.temperature == temperature)]
        logs = np.log(tasks.speedup.to_numpy(dtype=float))
        prompt_df = int((within.prompts - 1).clip(lower=0).sum())
        prompts_sd = (
            math.sqrt(float(((within.prompts - 1) * within.across_prompts_sd**2).sum()) / prompt_df)
            if prompt_df
            else math.nan
        )
        repeats = within.across_repeats_sd.to_numpy(dtype=float)
        repeats_sd = float(np.sqrt(np.nanmean(repeats**2))) if np.isfinite(repeats).any() else math.nan
        per_task = float(within.prompts.mean()) if len(within) else math.nan
        f = _sd(logs) ** 2 / (prompts_sd**2 / per_task) if prompts_sd and prompts_sd > 0 else math.nan
        p_value = _f_test(f, len(logs) - 1, prompt_df)
        rows.append(
            {
                "condition": condition,
                "temperature": temperature,
                "tasks": len(logs),
                "task_names": list(tasks.task),
                "task_multipliers": [float(v) for v in tasks.speedup],
                "across_tasks_sd": _sd(logs),
                "across_prompts_sd": prompts_sd,
                "across_repeats_sd": repeats_sd,
                "task_f": f,
                "task_p": p_value,
                "deciding": (
                    "task" if p_value < ALPHA else "prompt" if (within.deciding == "prompt").any() else "repeats"
                ),
            }
        )
    return pd.DataFrame(rows, columns=DECIDING_COLUMNS)
