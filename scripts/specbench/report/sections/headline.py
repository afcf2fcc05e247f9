"""The study's headline multipliers beside this run's (``headline_section``): every one it states for one method on
one task, with this run's at both temperatures and what its claims say here."""

from __future__ import annotations

from typing import Any

import pandas as pd

from specbench.report.document import Column, Note, Section, Table, fmt_interval, fmt_multiplier, is_missing, records
from specbench.report.sections.opening import Row, heading, shown_verdict

SIZES_NOT_COMPARED = "sizes not compared on other hardware"


def _headline_rows(claims: pd.DataFrame) -> list[Row]:
    """Every multiplier the study states for one method on one task (its claims as claimed), one row per task and
    method with the study's figures for it, in the claims' order."""
    rows: dict[tuple[str, str], dict[str, Any]] = {}
    for r in records(claims):
        tasks, conditions = r.get("tasks"), r.get("conditions")
        single = isinstance(tasks, list) and isinstance(conditions, list) and len(tasks) == len(conditions) == 1
        if r["kind"] != "speedup" or not is_missing(r["variant_of"]) or not single:
            continue
        if not isinstance(r["published"], (int, float)):
            continue
        row = rows.setdefault((tasks[0], conditions[0]), {"task": tasks[0], "condition": conditions[0], "claims": []})
        row["claims"].append(r)
    return list(rows.values())


def _run_value(summary: pd.DataFrame, task: str, condition: str, temperature: float) -> str:
    """This run's multiplier and its 95 % interval at one temperature ('n/a' where not measured)."""
    at = summary[(summary.task == task) & (summary.condition == condition) & (summary.temperature == temperature)]
    if at.empty:
        return "n/a"
    r = at.iloc[0]
    return f"{fmt_multiplier(r['speedup'])} [{fmt_interval((r['speedup_ci_low'], r['speedup_ci_high']))}]"


def _compared(row: Row) -> str:
    """What the claims of a headline row say here: not compared, or each one's verdict."""
    if all(heading(c) == "not compared" for c in row["claims"]):
        return SIZES_NOT_COMPARED
    return "; ".join(f"{c['published_text']}: {shown_verdict(c)}" for c in row["claims"])


def headline_section(claims: pd.DataFrame | None, summary: pd.DataFrame, comparable: bool) -> list[Section]:
    """The study's headline multipliers (every one it states for one method on one task) beside this run's, with
    intervals at both temperatures; marked not compared where the setup is not the study's."""
    rows = _headline_rows(claims) if claims is not None and not claims.empty else []
    if not rows:
        return []
    shown = [
        {
            "condition": r["condition"],
            "task": r["task"],
            "study": " / ".join(dict.fromkeys(str(c["published_text"]) for c in r["claims"])),
            "t0": _run_value(summary, r["task"], r["condition"], 0.0),
            "t1": _run_value(summary, r["task"], r["condition"], 1.0),
            "compared": _compared(r),
        }
        for r in rows
    ]
    note = "Every multiplier the study states for one method on one task (results, title, explanation), beside this "
    note += "run's mean over mean with its 95 % interval at each temperature (the text gives none)."
    if not comparable:
        note += (
            " Sizes are not compared on other hardware: the study expects the multipliers to differ there (only the "
            "order of tasks transfers), so they stand side by side, unjudged."
        )
    columns = [
        Column("method", "condition", text=True),
        Column("task", "task", text=True),
        Column("the study", "study", text=True),
        Column("this run, T=0", "t0", text=True),
        Column("this run, T=1.0", "t1", text=True),
        Column("compared", "compared", text=True),
    ]
    return [Section("headline", "The study's headline figures beside this run's", [Note(note)], Table(columns, shown))]
