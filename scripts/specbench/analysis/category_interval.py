"""A category's multiplier and acceptance, with intervals that count both its prompts and their repeats: one row per
task x condition x temperature (``category_multipliers``), a task being a category whose cells are its prompts x
repeats, and the baseline measured on the same prompts.

Estimand: the category's multiplier is the geometric mean, over the category's population of prompts, of a prompt's
multiplier (its mean tokens/s over the baseline's mean tokens/s on the same prompt and temperature). Estimate:
exp(mean over the P measured prompts of the log multiplier) (``multiplier``); ``prompts`` is P.

Interval (``low``/``high``, ``basis`` 'prompts'): a two-level one. Each measured prompt's log multiplier is its true
one plus its repeats' noise, so the P of them are independent draws around the category's log multiplier with the
variance between prompts and the repeats' variance both in them: a t-interval with P - 1 degrees of freedom on their
mean covers it whatever the split between the two (exactly when the prompts have the same runs; with unbalanced
repeats the prompts' variances differ, the sample variance still estimates the mean's variance without bias and
bench/calibration.py checks the P - 1 degrees of freedom there too). A task with one prompt (no prompt set) is its
own population: its interval is the Welch interval of its runs (analysis.intervals.ratio_interval, as the summary's;
``basis`` 'repeats'). A task with a prompt set of which one prompt (or none) was measured on both sides has no
interval (``basis`` 'none', ``note`` says why). The estimate always lies inside its interval.

``acceptance``: the drafted tokens accepted, pooled over the category's cells of the condition (NaN when it drafts
nothing); ``acceptance_low``/``acceptance_high`` the same two-level idea: analysis.intervals.rate_interval around it
with the per-prompt pooled rates as the values (the per-run rates for a task with one prompt).
``between_prompts_share``: the share of a prompt's log multiplier's variance that lies between prompts rather than
in its repeats, max(0, s_p^2 - e^2) / s_p^2, with s_p the SD of the P log multipliers and e the SD repeat noise alone
gives one (analysis.prompt_spread.repeat_noise); NaN when unknown (fewer than 2 prompts, no repeats, s_p = 0).
``cells``: the condition's cells and the baseline cells of the prompts used, sorted."""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence

import numpy as np
import pandas as pd
from scipy import stats

from specbench.analysis.intervals import CONFIDENCE, rate_interval, ratio_interval
from specbench.analysis.prompt_spread import pooled_sd, positive_logs, repeat_noise
from specbench.analysis.summary_columns import narrow

CATEGORY_COLUMNS = [
    "task",
    "condition",
    "temperature",
    "prompts",
    "multiplier",
    "low",
    "high",
    "basis",
    "acceptance",
    "acceptance_low",
    "acceptance_high",
    "between_prompts_share",
    "note",
    "cells",
]
PROMPTS, REPEATS, NONE = "prompts", "repeats", "none"  # the interval's basis
READS = ["task", "prompt", "condition", "temperature", "tokens_per_s", "draft_n", "draft_n_accepted", "cell_file"]


@functools.cache
def _t(df: int) -> float:
    return float(stats.t.ppf(0.5 + CONFIDENCE / 2, df))


def geometric_interval(multipliers: Sequence[float]) -> tuple[float, float, float]:
    """The geometric mean of the positive ``multipliers`` and its CONFIDENCE t-interval (on their logs, P - 1 degrees
    of freedom): (estimate, low, high); the interval NaN with fewer than 2."""
    values = np.asarray(multipliers, dtype=float)
    logs = np.log(values[np.isfinite(values) & (values > 0)])
    if not len(logs):
        return math.nan, math.nan, math.nan
    centre = float(logs.mean())
    if len(logs) < 2:
        return math.exp(centre), math.nan, math.nan
    half = _t(len(logs) - 1) * float(logs.std(ddof=1)) / math.sqrt(len(logs))
    return math.exp(centre), math.exp(centre - half), math.exp(centre + half)


def _cv(runs: pd.Series) -> float:
    return float(runs.std(ddof=1) / runs.mean()) if len(runs) > 1 else math.nan


def _multiplier(
    runs: dict[str, pd.Series], base: dict[str, pd.Series], one_prompt: bool, base_sd: float
) -> tuple[list[str], float, float, float, str, float]:
    """The prompts used, the estimate, its interval and basis, and the share between prompts (see the docstring)."""
    ratios = {p: float(v.mean() / base[p].mean()) if base[p].mean() > 0 else math.nan for p, v in runs.items()}
    names = [p for p, r in ratios.items() if math.isfinite(r) and r > 0]
    estimate, low, high = geometric_interval([ratios[p] for p in names])
    if len(names) >= 2:
        logs = np.log([ratios[p] for p in names])
        spread = float(logs.var(ddof=1))
        expected = repeat_noise({p: runs[p] for p in names}, base, base_sd)[2]
        share = max(0.0, spread - expected**2) / spread if spread > 0 and math.isfinite(expected) else math.nan
        return names, estimate, low, high, PROMPTS, share
    if len(names) == 1 and one_prompt:
        own, theirs = runs[names[0]], base[names[0]]
        low, high = ratio_interval(estimate, _cv(own), len(own), _cv(theirs), len(theirs))
        return names, estimate, low, high, REPEATS, math.nan
    return names, estimate, math.nan, math.nan, NONE, math.nan


def _acceptance(own: pd.DataFrame, one_prompt: bool) -> tuple[float, float, float]:
    """The pooled acceptance of a condition's cells and its interval over the prompts' (or one prompt's runs')
    rates."""
    drafted = own.draft_n.fillna(0).to_numpy(dtype=float)
    accepted = own.draft_n_accepted.fillna(0).to_numpy(dtype=float)
    if not drafted.sum() > 0:
        return math.nan, math.nan, math.nan
    pooled = float(accepted.sum() / drafted.sum())
    if one_prompt:
        rates = [a / d for a, d in zip(accepted, drafted, strict=True) if d > 0]
    else:
        sums = pd.DataFrame({"p": own.prompt.to_numpy(), "a": accepted, "d": drafted}).groupby("p", sort=False).sum()
        rates = [float(a / d) for a, d in zip(sums.a, sums.d, strict=True) if d > 0]
    return pooled, *rate_interval(pooled, rates)


def _note(basis: str, used: int, prompts: int) -> str:
    if basis == NONE:
        return f"{used} of the task's {prompts} prompts measured on both sides: no interval"
    if basis == REPEATS:
        return "one prompt: the Welch interval of its runs"
    return "" if used == prompts else f"{used} of the task's {prompts} prompts measured on both sides"


def category_multipliers(cells: pd.DataFrame, baseline: str) -> pd.DataFrame:
    """One row per task x condition (not the baseline) x temperature, for every task: its multiplier over its prompts
    and acceptance, with their two-level intervals (see the module docstring)."""
    read = narrow(cells, READS)
    prompts = read.groupby("task").prompt.nunique()
    rows = []
    for (task, temperature), group in read.groupby(["task", "temperature"], sort=False):
        timed = group[group.tokens_per_s.notna()]
        base_cells = timed[timed.condition == baseline]
        base = {p: g.tokens_per_s for p, g in base_cells.groupby("prompt", sort=False)}
        base_sd = pooled_sd([positive_logs(v) for v in base.values()])[0]
        one_prompt = prompts[task] == 1
        for condition, own in group[group.condition != baseline].groupby("condition", sort=False):
            mine = own[own.tokens_per_s.notna()]
            runs = {p: g.tokens_per_s for p, g in mine.groupby("prompt", sort=False) if p in base}
            names, estimate, low, high, basis, share = _multiplier(runs, base, one_prompt, base_sd)
            rate, rate_low, rate_high = _acceptance(own, one_prompt)
            used = base_cells.cell_file[base_cells.prompt.isin(names)]
            rows.append(
                {
                    "task": task,
                    "condition": condition,
                    "temperature": temperature,
                    "prompts": len(names),
                    "multiplier": estimate,
                    "low": low,
                    "high": high,
                    "basis": basis,
                    "acceptance": rate,
                    "acceptance_low": rate_low,
                    "acceptance_high": rate_high,
                    "between_prompts_share": share,
                    "note": _note(basis, len(names), int(prompts[task])),
                    "cells": sorted([*own.cell_file, *used]),
                }
            )
    return pd.DataFrame(rows, columns=CATEGORY_COLUMNS)
