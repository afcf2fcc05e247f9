"""Speeds and multipliers per task x condition x temperature, each a ``groupby().agg`` defined once: a row
carries ``cells``, the cell files its numbers were computed from (the one definition of "the cells behind a
number", used by report, figures, claims and provenance alike).

Multiplier: a condition's mean tokens/s over the baseline's mean tokens/s of the same task and temperature
(``speedup``, the figure claims are judged on: the study's only named aggregation is "the mean of the three runs");
a task with a prompt set pools its prompts' runs (its runs are every prompt's repeats); ``summary(..., PROMPT_GROUP)``
is the same per prompt, against the baseline's runs of that prompt (``prompt_summary``);
``speedup_median`` is the same with medians, a second column. Per cell, the figure's points divide each cell's
tokens/s by the same baseline mean (``cell_multipliers``); ``speedup_min``/``speedup_max`` are the slowest and
fastest run over it.

Uncertainty: ``speedup_ci_low``/``speedup_ci_high`` is a 95 % confidence interval of the multiplier, a Welch
t-interval on the log of the ratio of means (delta method: the variance of log(mean) is CV^2 / n, with the runs'
sample CV; Welch-Satterthwaite degrees of freedom). With 3 runs against 3 it is wide, and shows it. ``cv`` is each
group's coefficient of variation; ``baseline_spread`` is (max - min) / mean of the baseline runs of the same task and
temperature: above ``NOISE_LIMIT`` (3 %), no multiplier of that task is trusted to better than that (``noisy``).
``runs_for_5pct`` is how many runs per condition would make the interval +-5 % given the observed CVs.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pandas as pd

from specbench.analysis.cell_table import GROUP, PROMPT_GROUP
from specbench.analysis.intervals import ratio_interval, runs_for_precision
from specbench.analysis.summary_columns import narrow, sorted_list
from specbench.analysis.verdict_rule import BASELINE_WORD, verdict, verdict_chance

SPEED_COLUMNS = [
    "task",
    "condition",
    "temperature",
    "runs",
    "mean_tokens_per_s",
    "median_tokens_per_s",
    "min_tokens_per_s",
    "max_tokens_per_s",
    "cv",
    "tokens_per_s_values",
    "cells",
]

SUMMARY_COLUMNS = [
    *SPEED_COLUMNS[:-1],
    "baseline_mean_tokens_per_s",
    "baseline_median_tokens_per_s",
    "baseline_tokens_per_s_values",
    "baseline_cv",
    "baseline_spread",
    "noisy",
    "speedup",
    "speedup_ci_low",
    "speedup_ci_high",
    "speedup_median",
    "speedup_min",
    "speedup_max",
    "runs_for_5pct",
    "verdict",
    "verdict_chance",
    "outputs_compared",
    "outputs_differ",
    "differing_token_counts",
    "divergence_kinds",
    "cells",
]

NOISE_LIMIT = 0.03


def _columns(by: Sequence[str], columns: Sequence[str]) -> list[str]:
    """``columns``, with the 'prompt' coordinate after the task's when the grouping ``by`` has it."""
    return [name for c in columns for name in ((c, "prompt") if c == "task" and "prompt" in by else (c,))]


def speeds(cells: pd.DataFrame, by: Sequence[str] = GROUP) -> pd.DataFrame:
    """Per task x condition x temperature (``by``: per prompt too, PROMPT_GROUP): runs and mean/median/min/max/CV of
    tokens/s, the values, the cells."""
    grouped = (
        cells.groupby(list(by), sort=False)
        .agg(
            runs=("tokens_per_s", "size"),
            **{f"{stat}_tokens_per_s": ("tokens_per_s", stat) for stat in ("mean", "median", "min", "max")},
            std=("tokens_per_s", "std"),
            tokens_per_s_values=("tokens_per_s", sorted_list),
            cells=("cell_file", sorted_list),
        )
        .reset_index()
    )
    grouped["cv"] = grouped["std"] / grouped["mean_tokens_per_s"]
    return grouped[_columns(by, SPEED_COLUMNS)]


def _baseline(table: pd.DataFrame, baseline: str, by: Sequence[str] = GROUP) -> pd.DataFrame:
    """The baseline's speeds per task (and prompt, when ``by`` has it) and temperature, as columns to join on."""
    base = table[table.condition == baseline].rename(
        columns={
            "mean_tokens_per_s": "baseline_mean_tokens_per_s",
            "median_tokens_per_s": "baseline_median_tokens_per_s",
            "tokens_per_s_values": "baseline_tokens_per_s_values",
            "cells": "baseline_cells",
            "cv": "baseline_cv",
            "runs": "baseline_runs",
        }
    )
    base = base.assign(
        baseline_spread=(base.max_tokens_per_s - base.min_tokens_per_s) / base.baseline_mean_tokens_per_s
    )
    base = base[
        [
            *_joined(by),
            "baseline_mean_tokens_per_s",
            "baseline_median_tokens_per_s",
            "baseline_tokens_per_s_values",
            "baseline_cells",
            "baseline_cv",
            "baseline_runs",
            "baseline_spread",
        ]
    ]
    base.loc[~(base.baseline_median_tokens_per_s > 0), "baseline_median_tokens_per_s"] = np.nan
    base.loc[~(base.baseline_mean_tokens_per_s > 0), "baseline_mean_tokens_per_s"] = np.nan
    return base


def _joined(by: Sequence[str]) -> list[str]:
    """What a condition's row is matched with the baseline's on: every grouping column but the condition."""
    return [c for c in by if c != "condition"]


def summary(cells: pd.DataFrame, baseline: str, by: Sequence[str] = GROUP) -> pd.DataFrame:
    """Speeds joined with the baseline's: multipliers, the verdict, and every cell behind them (per ``by``: a task's
    rows over its prompts, or PROMPT_GROUP's per prompt)."""
    table = speeds(cells, by)
    out = table.merge(_baseline(table, baseline, by), on=_joined(by), how="left")
    missing = out.baseline_cells.isna()
    out.loc[missing, "baseline_cells"] = pd.Series([[]] * int(missing.sum()), index=out.index[missing], dtype=object)
    out.loc[missing, "baseline_tokens_per_s_values"] = pd.Series(
        [[]] * int(missing.sum()), index=out.index[missing], dtype=object
    )
    out["speedup"] = out.mean_tokens_per_s / out.baseline_mean_tokens_per_s
    out["speedup_median"] = out.median_tokens_per_s / out.baseline_median_tokens_per_s
    out["speedup_min"] = out.min_tokens_per_s / out.baseline_mean_tokens_per_s
    out["speedup_max"] = out.max_tokens_per_s / out.baseline_mean_tokens_per_s
    intervals = [
        ratio_interval(r, cv, n, bcv, bn)
        for r, cv, n, bcv, bn in zip(out.speedup, out.cv, out.runs, out.baseline_cv, out.baseline_runs, strict=True)
    ]
    out["speedup_ci_low"] = [low for low, _ in intervals]
    out["speedup_ci_high"] = [high for _, high in intervals]
    out["runs_for_5pct"] = [runs_for_precision(cv, bcv) for cv, bcv in zip(out.cv, out.baseline_cv, strict=True)]
    out["noisy"] = out.baseline_spread > NOISE_LIMIT
    out["verdict_chance"] = [
        verdict_chance(n, int(m)) if m > 0 else math.nan
        for n, m in zip(out.runs, out.baseline_runs.fillna(0), strict=True)
    ]
    is_base = out.condition == baseline
    out["verdict"] = [
        BASELINE_WORD if own_base else verdict(values, base_values)
        for own_base, values, base_values in zip(
            is_base, out.tokens_per_s_values, out.baseline_tokens_per_s_values, strict=True
        )
    ]
    out["cells"] = [
        own if own_base else sorted(own + base)
        for own_base, own, base in zip(is_base, out.cells, out.baseline_cells, strict=True)
    ]
    out = out.merge(_outputs(cells, by), on=list(by), how="left")
    for column in ("differing_token_counts", "divergence_kinds"):
        out[column] = [v if isinstance(v, list) else [] for v in out[column]]
    out["outputs_compared"] = out.outputs_compared.astype("Int64")
    out["outputs_differ"] = out.outputs_differ.astype("Int64")
    return out[_columns(by, SUMMARY_COLUMNS)].sort_values(list(by), kind="stable").reset_index(drop=True)


def prompt_summary(cells: pd.DataFrame, baseline: str) -> pd.DataFrame:
    """``summary`` per prompt: each prompt's multiplier against the baseline's runs of that prompt."""
    return summary(cells, baseline, PROMPT_GROUP)


def _outputs(cells: pd.DataFrame, by: Sequence[str] = GROUP) -> pd.DataFrame:
    """Per group (``by``) at temperature 0: how many repeats were compared with their reference, how many differ,
    their [own, reference] token counts and what each explanation calls the difference (so every multiplier measured
    on different texts can say so); NA where nothing was compared."""
    read = narrow(cells, [*by, "prompt", "repeat", "identical", "tokens", "baseline_length", "divergence_kind"])
    compared = read[read.identical.notna()]
    rows = []
    for key, group in compared.groupby(list(by), sort=False):
        differ = group[~group.identical.astype(bool)].sort_values(["prompt", "repeat"])
        rows.append(
            {
                **dict(zip(by, key, strict=True)),
                "outputs_compared": len(group),
                "outputs_differ": len(differ),
                "differing_token_counts": [
                    [len(t), int(n)] for t, n in zip(differ.tokens, differ.baseline_length, strict=True)
                ],
                "divergence_kinds": [None if pd.isna(k) else k for k in differ.divergence_kind],
            }
        )
    frame = pd.DataFrame(
        rows, columns=[*by, "outputs_compared", "outputs_differ", "differing_token_counts", "divergence_kinds"]
    )
    return frame.astype({"temperature": float})


def cell_multipliers(cells: pd.DataFrame, baseline: str, by: Sequence[str] = GROUP) -> pd.DataFrame:
    """Every non-baseline cell's tokens/s over the mean baseline tokens/s of its task (and prompt, per ``by``) and
    temperature (with ``identical``: its output against the baseline's at temperature 0, NA where not compared)."""
    base = _baseline(speeds(cells, by), baseline, by)[[*_joined(by), "baseline_mean_tokens_per_s"]]
    own = cells.loc[
        cells.condition != baseline,
        ["task", "prompt", "condition", "temperature", "repeat", "tokens_per_s", "identical", "cell_file"],
    ]
    out = own.merge(base, on=_joined(by), how="left")
    out["multiplier"] = out.tokens_per_s / out.baseline_mean_tokens_per_s
    return out.reset_index(drop=True)
