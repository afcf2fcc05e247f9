"""Acceptance per task x condition x temperature: the drafted and accepted tokens (``acceptance``), and by draft
position (``positions``: the server's own counts pooled, the verification steps, the exact mean accepted length
1 + accepted / steps, each draft position's acceptance, how many steps accepted exactly 0, 1, ... tokens).

Acceptance: llama-server reports ``predicted_n`` (generated tokens) and ``draft_n_accepted`` but not the number of
drafting steps. Each target-model decode step yields one token of its own plus the drafts it accepted, so the
number of target steps is ``predicted_n - draft_n_accepted`` and ``tokens_per_step = predicted_n / (predicted_n -
draft_n_accepted)`` (>= 1; 1 without drafting). ``accepted_per_step = accepted / steps`` (= tokens_per_step - 1)
counts every target step as a drafting step, so it is a lower bound of the accepted tokens per actual draft.
"""

from __future__ import annotations

import math

import pandas as pd

from specbench.analysis.cell_table import GROUP
from specbench.analysis.draft_positions import accepted_lengths, mean_accepted_length
from specbench.analysis.summary_columns import narrow, sorted_list

ACCEPTANCE_COLUMNS = [
    "task",
    "condition",
    "temperature",
    "runs",
    "drafted",
    "accepted",
    "pooled_rate",
    "min_rate",
    "max_rate",
    "predicted",
    "tokens_per_step",
    "accepted_per_step",
    "spec_n_max",
    "spec_block_size",
    "from_prompt_share",
    "from_output_share",
    "cells",
]

POSITION_COLUMNS = [
    "task",
    "condition",
    "temperature",
    "runs",
    "counted_runs",
    "verification_steps",
    "accepted",
    "mean_accepted_length",
    "logged_mean_lengths",
    "position_rates",
    "accepted_lengths",
    "longest_accepted",
    "cells",
]


def tokens_per_step(predicted: float, accepted: float) -> float:
    """Mean tokens per target-model step, predicted / (predicted - accepted); NaN when not computable."""
    if pd.isna(predicted) or pd.isna(accepted):
        return math.nan
    steps = float(predicted) - float(accepted)
    return float(predicted) / steps if steps > 0 else math.nan


# the per-cell columns ``acceptance`` reads besides the group's and the cell files
ACCEPTANCE_READS = [
    "draft_n",
    "draft_n_accepted",
    "acceptance_rate",
    "predicted_n",
    "spec_n_max",
    "spec_block_size",
    "from_prompt_share",
    "from_output_share",
]


def acceptance(cells: pd.DataFrame) -> pd.DataFrame:
    """Per task x condition x temperature: drafted, accepted, pooled and per-cell rates, tokens per target step, and
    the mean shares of the text found in the prompt or repeated from the output's own earlier text."""
    frame = narrow(cells, [*GROUP, "cell_file", *ACCEPTANCE_READS])
    frame = frame.assign(draft_n=frame.draft_n.fillna(0), draft_n_accepted=frame.draft_n_accepted.fillna(0))
    out = (
        frame.groupby(GROUP, sort=True)
        .agg(
            runs=("cell_file", "size"),
            drafted=("draft_n", "sum"),
            accepted=("draft_n_accepted", "sum"),
            min_rate=("acceptance_rate", "min"),
            max_rate=("acceptance_rate", "max"),
            predicted=("predicted_n", "sum"),
            spec_n_max=("spec_n_max", "max"),
            spec_block_size=("spec_block_size", "max"),
            from_prompt_share=("from_prompt_share", "mean"),
            from_output_share=("from_output_share", "mean"),
            cells=("cell_file", sorted_list),
        )
        .reset_index()
    )
    out["drafted"] = out.drafted.astype("int64")
    out["accepted"] = out.accepted.astype("int64")
    out["pooled_rate"] = [a / d if d > 0 else math.nan for a, d in zip(out.accepted, out.drafted, strict=True)]
    out["predicted"] = out.predicted.astype(float)
    out["tokens_per_step"] = [tokens_per_step(p, a) for p, a in zip(out.predicted, out.accepted, strict=True)]
    out["accepted_per_step"] = out.tokens_per_step - 1
    out["min_rate"] = out.min_rate.astype(float)
    out["max_rate"] = out.max_rate.astype(float)
    return out[ACCEPTANCE_COLUMNS]


def positions(cells: pd.DataFrame) -> pd.DataFrame:
    """Per task x condition x temperature that verified a draft, pooled over the cells whose server counters were
    kept (analysis.draft_positions): verification steps, accepted tokens, the mean accepted length, each draft
    position's acceptance (its accepted count over the steps), how many steps accepted exactly 0, 1, ... tokens, the
    most one step accepted (where every cell kept its counts, else None), and the lengths the server logged per
    cell."""
    read = narrow(
        cells,
        [*GROUP, "verification_steps", "accepted_per_position", "counted_accepted", "logged_mean_length", "cell_file"],
    )
    rows = []
    for key, group in read.groupby(GROUP, sort=True):
        counted = group[group.verification_steps.notna()]
        steps = int(counted.verification_steps.sum())
        if steps == 0:
            continue
        width = max(len(p) for p in counted.accepted_per_position)
        pooled = [sum(p[i] for p in counted.accepted_per_position if i < len(p)) for i in range(width)]
        accepted = int(counted.counted_accepted.sum())
        lengths = accepted_lengths(pooled, steps)
        rows.append(
            {
                **dict(zip(GROUP, key, strict=True)),
                "runs": len(group),
                "counted_runs": len(counted),
                "verification_steps": steps,
                "accepted": accepted,
                "mean_accepted_length": mean_accepted_length(accepted, steps),
                "logged_mean_lengths": sorted(float(v) for v in group.logged_mean_length.dropna()),
                "position_rates": [count / steps for count in pooled],
                "accepted_lengths": lengths,
                # the most tokens one step accepted, over every run (None where a run kept no counts)
                "longest_accepted": max(k for k, n in enumerate(lengths) if n > 0)
                if len(counted) == len(group)
                else None,
                "cells": sorted(counted.cell_file),
            }
        )
    return pd.DataFrame(rows, columns=POSITION_COLUMNS)
