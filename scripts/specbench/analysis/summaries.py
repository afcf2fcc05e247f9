"""Every summary of the per-cell table, each a ``groupby().agg`` defined once here: speeds and multipliers per
task x condition x temperature, acceptance, output identity. Each row carries ``cells``: the cell files its numbers
were computed from (the one definition of "the cells behind a number", used by report, figures, claims and
provenance alike).

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

Verdict (the study's rule): ``faster`` if every run beats every baseline run, ``slower`` if every run is below every
baseline run, otherwise ``none``; the baseline itself is ``baseline``. With n runs against m and nothing different,
"all n beat all m" happens by chance with probability 1 / C(n + m, n) (``verdict_chance``: 1/20 for 3 vs 3): the rule
is an exact one-sided rank test at that level. Below ``VERDICT_LEVEL`` (1/20: 3 vs 3 is the fewest equal runs that reach
it) the rule's word would be chance as often as not, so the verdict is ``too few runs`` (docs/claims.md).

Acceptance: llama-server reports ``predicted_n`` (generated tokens) and ``draft_n_accepted`` but not the number of
drafting steps. Each target-model decode step yields one token of its own plus the drafts it accepted, so the
number of target steps is ``predicted_n - draft_n_accepted`` and ``tokens_per_step = predicted_n / (predicted_n -
draft_n_accepted)`` (>= 1; 1 without drafting). ``accepted_per_step = accepted / steps`` (= tokens_per_step - 1)
counts every target step as a drafting step, so it is a lower bound of the accepted tokens per actual draft.

Inside the requests: ``positions`` pools the server's own counts per task x condition x temperature (verification
steps, the exact mean accepted length 1 + accepted / steps, each draft position's acceptance, how many steps
accepted exactly 0, 1, ... tokens; analysis.draft_positions); ``latency`` is the median over the cells of each cell's
time to first token and inter-token latency quantiles (analysis.latency).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from specbench.analysis.cell_table import BUILD, GROUP, MACHINE, PROMPT_GROUP, builds_of, machines_of
from specbench.analysis.draft_positions import accepted_lengths, mean_accepted_length
from specbench.analysis.intervals import ratio_interval, runs_for_precision
from specbench.analysis.prompt_spread import prompt_spread, task_or_prompt
from specbench.analysis.thesis import thesis
from specbench.core.config.builds import ONE_BUILD
from specbench.core.plan.cells import DEFAULT_MACHINE
from specbench.core.records.explanations import first_difference

VERDICT_LEVEL = 1 / 20  # the all-runs rule decides only where chance would give its word at most this often
TOO_FEW_RUNS = "too few runs"
# The verdict rule's words (the baseline's own row says "baseline")
FASTER, SLOWER, NO_VERDICT, BASELINE_WORD = "faster", "slower", "none", "baseline"
VERDICTS = (FASTER, SLOWER, NO_VERDICT, TOO_FEW_RUNS, BASELINE_WORD)
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
LATENCY_COLUMNS = [
    "task",
    "condition",
    "temperature",
    "runs",
    "timed_runs",
    "ttft_ms",
    "itl_median_ms",
    "itl_p90_ms",
    "itl_p99_ms",
    "cells",
]
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


def _sorted_list(values: pd.Series) -> list:
    return sorted(values.tolist())


def _narrow(cells: pd.DataFrame, columns: Sequence[str]) -> pd.DataFrame:
    """The per-cell table's ``columns`` alone (each once, in that order): filtering and grouping the few columns a
    summary reads is much cheaper than copying every column of the wide table."""
    return cells[list(dict.fromkeys(columns))]


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
            tokens_per_s_values=("tokens_per_s", _sorted_list),
            cells=("cell_file", _sorted_list),
        )
        .reset_index()
    )
    grouped["cv"] = grouped["std"] / grouped["mean_tokens_per_s"]
    return grouped[_columns(by, SPEED_COLUMNS)]


def verdict(values: list[float], baseline: list[float]) -> str:
    """The study's rule: 'faster' if every run beats every baseline run, 'slower' if every one is below; 'too few
    runs' where that happens by chance more often than VERDICT_LEVEL (1 vs 1, 2 vs 2, 2 vs 3: see the docstring)."""
    if not values or not baseline:
        return NO_VERDICT
    if 1 / math.comb(len(values) + len(baseline), len(values)) > VERDICT_LEVEL:
        return TOO_FEW_RUNS
    if min(values) > max(baseline):
        return FASTER
    if max(values) < min(baseline):
        return SLOWER
    return NO_VERDICT


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
        1 / math.comb(n + int(m), n) if m > 0 else math.nan
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
    read = _narrow(cells, [*by, "prompt", "repeat", "identical", "tokens", "baseline_length", "divergence_kind"])
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
    frame = _narrow(cells, [*GROUP, "cell_file", *ACCEPTANCE_READS])
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
            cells=("cell_file", _sorted_list),
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
    read = _narrow(
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


def latency(cells: pd.DataFrame) -> pd.DataFrame:
    """Per task x condition x temperature: the median over its cells of each cell's time to first token and its
    inter-token latency quantiles (analysis.latency), over the cells that kept their chunk arrivals."""
    figures = ["ttft_ms", "itl_median_ms", "itl_p90_ms", "itl_p99_ms"]
    timed = _narrow(cells, [*GROUP, *figures, "cell_file"])
    timed = timed[timed.ttft_ms.notna()]
    out = (
        timed.groupby(GROUP, sort=True)
        .agg(
            timed_runs=("cell_file", "size"),
            **{name: (name, "median") for name in figures},
            cells=("cell_file", _sorted_list),
        )
        .reset_index()
    )
    runs = cells.groupby(GROUP, sort=True).size().rename("runs").reset_index()
    return out.merge(runs, on=GROUP, how="left")[LATENCY_COLUMNS]


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
    at_zero = _narrow(cells, IDENTITY_READS)[cells.temperature == 0.0]
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
    warm = _narrow(cells, ["task", "prompt", "condition", "repeat", "tokens", "cell_file"])[
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


def tables(cells: pd.DataFrame, baseline: str) -> dict[str, pd.DataFrame]:
    """The per-cell table of one machine and build and every summary of it, by name: what claims, report, figures
    and provenance read. Multipliers never divide one machine's (or build's) speed by another's: mixed machines or
    builds are refused."""
    machines = sorted(set(cells[MACHINE])) if MACHINE in cells else []
    if len(machines) > 1:
        raise ValueError(f"tables() summarises one machine's cells, got {machines}: use tables_by_machine()")
    builds = sorted(set(cells[BUILD])) if BUILD in cells else []
    if len(builds) > 1:
        raise ValueError(f"tables() summarises one build's cells, got {builds}: use tables_by_build()")
    prompts = prompt_summary(cells, baseline)
    spread = prompt_spread(cells, baseline)
    return {
        "cells": cells,
        "summary": (overall := summary(cells, baseline)),
        "acceptance": acceptance(cells),
        "positions": positions(cells),
        "latency": latency(cells),
        "identity": identity(cells, baseline),
        "prompts": prompts,
        "spread": spread,
        "deciding": task_or_prompt(spread, overall, baseline),
        "thesis": thesis(cells, baseline, methods(cells, baseline)),
    }


def methods(cells: pd.DataFrame, baseline: str) -> list[str]:
    """The methods the thesis compares: every condition but the baseline that is not a variant of another one this
    run has (named <condition>-<suffix>, as ngram-mod-warm of ngram-mod, dflash-n15 of dflash: a setting of that
    method, not a method of its own), in table order."""
    present = list(dict.fromkeys(c for c in cells.condition.dropna() if c != baseline))
    return [c for c in present if not any(c.startswith(f"{other}-") for other in present if other != c)]


def tables_by_machine(
    cells: pd.DataFrame, baseline: str, order: Sequence[str] = ()
) -> dict[str, dict[str, pd.DataFrame]]:
    """``tables`` of each machine's cells (of one build), machines in ``order`` first (see ``table.machines_of``);
    every summary row says its machine (and its build, in a run with builds)."""
    out = {}
    builds = sorted(set(cells[BUILD])) if BUILD in cells else []
    named = {BUILD: builds[0]} if len(builds) == 1 and builds[0] != ONE_BUILD else {}
    for machine in machines_of(cells, order) or [next(iter(order), DEFAULT_MACHINE)]:
        own = tables(cells[cells[MACHINE] == machine].reset_index(drop=True), baseline)
        out[machine] = {
            name: frame if name == "cells" else frame.assign(**{MACHINE: machine, **named})
            for name, frame in own.items()
        }
    return out


def tables_by_build(
    cells: pd.DataFrame, baseline: str, machines: Sequence[str] = (), builds: Sequence[str] = ()
) -> dict[str, dict[str, dict[str, pd.DataFrame]]]:
    """``tables_by_machine`` of each build's cells, builds in ``builds`` order first: build -> machine -> tables
    (one build, '', for a run without builds). A multiplier divides one build's cells by the same build's
    baseline."""
    labels = builds_of(cells, builds) if BUILD in cells and len(cells) else [next(iter(builds), ONE_BUILD)]
    if BUILD not in cells:
        return {labels[0]: tables_by_machine(cells, baseline, machines)}
    return {
        build: tables_by_machine(cells[cells[BUILD] == build].reset_index(drop=True), baseline, machines)
        for build in labels
    }


def combined(by_machine: Mapping[str, Mapping[str, pd.DataFrame]]) -> dict[str, pd.DataFrame]:
    """Each summary of every machine in one frame, with the machine as its first column (the CSV copies)."""
    names = next(iter(by_machine.values()), {}).keys()
    out = {}
    for name in names:
        frames = [tabs[name].assign(**{MACHINE: machine}) for machine, tabs in by_machine.items()]
        frame = pd.concat([f for f in frames if len(f)] or frames[:1], ignore_index=True)
        out[name] = frame[[MACHINE, *(c for c in frame.columns if c != MACHINE)]]
    return out


def combined_builds(by_build: Mapping[str, Mapping[str, Mapping[str, pd.DataFrame]]]) -> dict[str, pd.DataFrame]:
    """``combined`` over every build, the build as the second column (after the machine); a run without builds
    gets ``combined``'s frames as they are."""
    if list(by_build) == [ONE_BUILD]:
        return combined(by_build[ONE_BUILD])
    parts = {build: combined(by_machine) for build, by_machine in by_build.items()}
    out = {}
    for name in next(iter(parts.values()), {}):
        frames = [tabs[name].assign(**{BUILD: build}) for build, tabs in parts.items()]
        frame = pd.concat([f for f in frames if len(f)] or frames[:1], ignore_index=True)
        rest = [c for c in frame.columns if c not in (MACHINE, BUILD)]
        out[name] = frame[[MACHINE, BUILD, *rest]]
    return out
