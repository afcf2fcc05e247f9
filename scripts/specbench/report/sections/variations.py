"""The report's sections on what the study held fixed: several prompts per task (is it the task, the prompt or the
repeat that decides the multiplier? analysis.prompt_spread) and sweeps of one server flag (the multiplier against the
flag's value, per task)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from specbench.analysis.prompt_spread import ALPHA
from specbench.core.config.sweeps import sweeps_of
from specbench.report.document import (
    CONDITION,
    GROUP_COLUMNS,
    TASK,
    TEMPERATURE,
    Column,
    Note,
    Section,
    Table,
    fmt_interval,
    fmt_multiplier,
    is_missing,
    records,
    verdict_tone,
)


def prompt_column(cells: pd.DataFrame) -> list[Column]:
    """The prompt coordinate's column, where some task of these cells has a prompt set."""
    return [Column("prompt", "prompt", text=True)] if (cells.prompt != "").any() else []


def _sd(value: Any) -> str:
    return "n/a" if is_missing(value) else f"{value:.3f}"


def _p(value: Any) -> str:
    return "n/a" if is_missing(value) else f"{value:.3g}"


def _named(names: Sequence[str], values: Sequence[float]) -> str:
    return ", ".join(f"{n} {fmt_multiplier(v)}" for n, v in zip(names, values, strict=True))


DECIDING_WORDS = {
    "task": "the task: the tasks differ by more than their prompts do",
    "prompt": "the prompt: tasks are not told apart beyond their prompts' spread, and within some task the prompts "
    "differ beyond their repeats",
    "repeats": "neither: within the repeats' noise",
}


def prompt_sections(tables: Mapping[str, pd.DataFrame], baseline: str) -> list[Section]:
    """Two sections when some task has a prompt set: per condition and temperature whether the task or the prompt
    decides, and per task the spread across its prompts beside that across its repeats; none otherwise."""
    spread, deciding = tables.get("spread"), tables.get("deciding")
    if spread is None or spread.empty:
        return []
    scale = Note(
        "Every spread is a standard deviation of the log of a multiplier (0.10 is about +-10 %). The task's "
        "multiplier pools its prompts' runs; a prompt's is its own runs over the "
        f"'{baseline}' runs of the same prompt."
    )
    decide = Section(
        "task-or-prompt",
        "The task, the prompt or the repeat?",
        [
            Note(
                "The study's central claim, 'the task decides the multiplier', rests on one prompt per task. Here each "
                "task has several: across tasks beside across a task's prompts (pooled) and across repeats of one "
                f"prompt (pooled). *task*: the tasks' spread exceeds what their prompts' spread gives a task's "
                f"multiplier (F test, p < {ALPHA}); *prompt*: it does not, but within some task the prompts differ "
                "beyond their repeats; *repeats*: neither."
            ),
            scale,
        ],
        Table(
            [
                CONDITION,
                TEMPERATURE,
                Column("tasks", lambda r: _named(r["task_names"], r["task_multipliers"]), text=True),
                Column("across tasks", "across_tasks_sd", _sd),
                Column("across prompts", "across_prompts_sd", _sd),
                Column("across repeats", "across_repeats_sd", _sd),
                Column("p (task)", "task_p", _p),
                Column("decides", "deciding", lambda v: DECIDING_WORDS.get(str(v), str(v)), text=True),
            ],
            records(deciding),
        ),
    )
    per_task = Section(
        "prompt-spread",
        "Spread across prompts vs across repeats, per task",
        [
            Note(
                "Per task: each prompt's multiplier, their spread, the spread of one run about its prompt's mean, and "
                "the spread a prompt's multiplier would have from its repeats alone (both conditions' runs). *prompt*: "
                f"the prompts differ beyond that (F test, p < {ALPHA}); *repeats*: they do not."
            ),
            scale,
        ],
        Table(
            [
                *GROUP_COLUMNS,
                Column("per prompt", lambda r: _named(r["prompt_names"], r["prompt_multipliers"]), text=True),
                Column("range", lambda r: (r["prompt_min"], r["prompt_max"]), fmt_interval),
                Column("across prompts", "across_prompts_sd", _sd),
                Column("across repeats", "across_repeats_sd", _sd),
                Column("expected from repeats", "expected_sd", _sd),
                Column("p (prompt)", "prompt_p", _p),
                Column("decides", "deciding", text=True),
            ],
            records(spread),
        ),
    )
    return [decide, per_task, *category_sections(tables.get("categories"), spread, baseline)]


def _share(value: Any) -> str:
    return "n/a" if is_missing(value) else f"{value:.0%}"


def category_sections(categories: pd.DataFrame | None, spread: pd.DataFrame, baseline: str) -> list[Section]:
    """Per task with a prompt set (a category of prompts): its multiplier and acceptance with intervals that count
    both its prompts and their repeats, and the share of its prompts' spread that is theirs rather than the
    repeats'."""
    if categories is None or categories.empty:
        return []
    shown = categories[categories.task.isin(set(spread.task))]
    if shown.empty:
        return []
    note = Note(
        "A category's multiplier is the geometric mean of its prompts' multipliers (each prompt's runs over the "
        f"'{baseline}' runs of the same prompt); its 95 % interval is a t-interval over the prompts, which carries "
        "the spread between prompts and the repeats' noise together, so it speaks for the category's other prompts "
        "too (calibrated by simulation: bench/calibration.py --only category). With 2 prompts it is wide by design. "
        "*between prompts*: the share of a prompt's multiplier's variance that lies between prompts rather than in "
        "its repeats."
    )
    table = Table(
        [
            Column("category", "task", text=True),
            CONDITION,
            TEMPERATURE,
            Column("prompts", "prompts", lambda v: f"{v:.0f}"),
            Column("multiplier", "multiplier", fmt_multiplier),
            Column("95 % interval", lambda r: (r["low"], r["high"]), fmt_interval),
            Column("acceptance", "acceptance", lambda v: "n/a" if is_missing(v) else f"{v:.3f}"),
            Column("interval", lambda r: (r["acceptance_low"], r["acceptance_high"]), fmt_interval),
            Column("between prompts", "between_prompts_share", _share),
            Column("note", "note", text=True),
        ],
        records(shown),
    )
    return [Section("per-category", "Per category: prompts and repeats together", [note], table)]


def sweep_sections(
    summary: pd.DataFrame, acceptance: pd.DataFrame, sweeps: Mapping[str, Mapping[str, Any]]
) -> list[Section]:
    """One section per sweep: its multiplier per task and value, with the interval, verdict and acceptance (the
    figure plots the same rows)."""
    sections = []
    rates = acceptance.set_index(["task", "condition", "temperature"]).pooled_rate if len(acceptance) else None
    for name, members in sweeps_of(sweeps).items():
        rows = summary[summary.condition.isin(list(members))]
        if rows.empty:
            continue
        flag = next(iter(members.values()))["flag"]
        shown = [
            {
                **r,
                "value": members[r["condition"]]["value"],
                "rate": None if rates is None else rates.get((r["task"], r["condition"], r["temperature"])),
            }
            for r in records(rows)
        ]
        order = {m: i for i, m in enumerate(members)}
        shown.sort(key=lambda r: (r["temperature"], r["task"], order[r["condition"]]))
        values = ", ".join(str(m["value"]) for m in members.values())
        sections.append(
            Section(
                f"sweep-{name}",
                f"Sweep '{name}': {flag}",
                [
                    Note(
                        f"The condition '{name}' run at each value of {flag} ({values}), every other "
                        "flag as declared; the "
                        "study ran its methods at their default or documented settings only ('tuning "
                        "the draft length may "
                        "change the numbers')."
                    )
                ],
                Table(
                    [
                        TASK,
                        TEMPERATURE,
                        Column("value", "value", text=True),
                        CONDITION,
                        Column("x", "speedup", fmt_multiplier, link="speedup"),
                        Column("95 % interval", lambda r: (r["speedup_ci_low"], r["speedup_ci_high"]), fmt_interval),
                        Column("verdict", "verdict", text=True, tone=verdict_tone),
                        Column("acceptance", "rate", lambda v: "n/a" if is_missing(v) else f"{v:.1%}"),
                    ],
                    shown,
                ),
            )
        )
    return sections
