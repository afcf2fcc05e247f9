"""Output identity per task x condition at temperature 0: repeats compared with the baseline's (and a warm
server's with its own first), how many identical, and where and why each other one differs."""

from __future__ import annotations

import math

import pandas as pd

from specbench.analysis.summary_columns import narrow
from specbench.core.records.explanations import first_difference

IDENTITY_COLUMNS = [
    "task",
    "condition",
    "control",
    "repeats_compared",
    "identical",
    "missing",
    "all_identical",
    "differing_repeats",
    "differing_prompts",
    "token_counts",
    "first_differences",
    "divergences",
    "cells",
]

# what a differing repeat's explanation says (analysis.divergence), as the identity table lists it
DIVERGENCE_FIELDS = {
    "position": "first_difference",
    "text": "divergence_text",
    "reference_text": "divergence_reference_text",
    "before": "divergence_before",
    "margin_sequential": "margin_sequential",
    "margin_batched": "margin_batched",
    "rank_sequential": "rank_sequential",
    "rank_batched": "rank_batched",
    "flipped": "divergence_flipped",
    "replay_matches": "replay_matches",
    "kind": "divergence_kind",
}


# the per-cell columns ``identity`` reads (it filters these, not the wide table)
IDENTITY_READS = [
    "task",
    "prompt",
    "condition",
    "repeat",
    "compared_repeat",
    "identical",
    "tokens",
    "baseline_length",
    "cell_file",
    *DIVERGENCE_FIELDS.values(),
]


def identity(cells: pd.DataFrame, baseline: str) -> pd.DataFrame:
    """Per task x condition at temperature 0 (over the task's prompts): repeats compared with the baseline's of the
    same prompt (for the baseline itself, its repeats with its first: ``control``; a warm server's repeats also with
    its own first, a second, control row), how many identical, and the repeat, prompt, token counts, first
    difference and explanation of each other one."""
    at_zero = narrow(cells, IDENTITY_READS)[cells.temperature == 0.0]
    greedy = at_zero[at_zero.compared_repeat.notna()]
    base_files = at_zero[at_zero.condition == baseline].set_index(["task", "prompt", "repeat"])
    rows = []
    for (task, condition), group in greedy.groupby(["task", "condition"], sort=True):
        compared = group[group.identical.notna()]
        differing = compared[~compared.identical.astype(bool)]
        behind = set(group.cell_file)
        behind.update(
            base_files.cell_file.get((task, p, int(r)), None)
            for p, r in zip(group.prompt, group.compared_repeat, strict=True)
        )
        rows.append(
            {
                "task": task,
                "condition": condition,
                "control": condition == baseline,
                "repeats_compared": len(compared),
                "identical": int(compared.identical.astype(bool).sum()),
                "missing": len(group) - len(compared),
                "all_identical": bool(len(compared) > 0 and len(differing) == 0 and len(compared) == len(group)),
                "differing_repeats": [int(r) for r in differing.repeat],
                "differing_prompts": list(differing.prompt),
                "token_counts": [
                    [len(t), int(m)] for t, m in zip(differing.tokens, differing.baseline_length, strict=True)
                ],
                "first_differences": [int(i) for i in differing.first_difference],
                "divergences": [_divergence(r) for r in differing.to_dict("records")],
                "cells": sorted(c for c in behind if c),
            }
        )
    return pd.DataFrame(rows + _warm_controls(cells, baseline), columns=IDENTITY_COLUMNS)


def _divergence(row: dict) -> dict:
    """A differing repeat's explanation, as the identity table lists it (None for what it does not say)."""
    return {
        "repeat": int(row["repeat"]),
        **{key: None if _missing(row[column]) else row[column] for key, column in DIVERGENCE_FIELDS.items()},
    }


def _missing(value: object) -> bool:
    return value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value))


def _warm_controls(cells: pd.DataFrame, baseline: str) -> list[dict]:
    """For a condition served by one warm server: its later repeats at temperature 0 against its own first of the
    same prompt (the study's "the second answer equals the first"), as a control row."""
    warm = narrow(cells, ["task", "prompt", "condition", "repeat", "tokens", "cell_file"])[
        (cells.temperature == 0.0) & (cells.condition != baseline) & cells.server_shared.fillna(False).astype(bool)
    ]
    rows = []
    for (task, condition), group in warm.groupby(["task", "condition"], sort=True):
        diffs = []  # (prompt, repeat, first difference, tokens, the first repeat's tokens)
        for prompt, runs in group.groupby("prompt", sort=True):
            first, later = runs[runs.repeat == 1], runs[runs.repeat != 1].sort_values("repeat")
            if not first.empty:
                reference = first.tokens.iloc[0]
                diffs += [
                    (prompt, int(r.repeat), first_difference(r.tokens, reference), len(r.tokens), len(reference))
                    for r in later.itertuples()
                ]
        if not diffs:
            continue
        differing = [d for d in diffs if d[2] is not None]
        rows.append(
            {
                "task": task,
                "condition": condition,
                "control": True,
                "repeats_compared": len(diffs),
                "identical": len(diffs) - len(differing),
                "missing": 0,
                "all_identical": not differing,
                "differing_repeats": [repeat for _, repeat, _, _, _ in differing],
                "differing_prompts": [prompt for prompt, _, _, _, _ in differing],
                "token_counts": [[n, m] for _, _, _, n, m in differing],
                "first_differences": [int(at) for _, _, at, _, _ in differing],
                "divergences": [],
                "cells": sorted(group.cell_file),
            }
        )
    return rows
