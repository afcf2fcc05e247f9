"""The report's thesis section: does the task or the method decide the multiplier? This run's answer per temperature
(analysis.thesis over the run's methods, a method's settings left out: summaries.methods), the published multipliers'
answer, the claim judged on the study's own methods, and the figure (thesis_figure)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from specbench.analysis.thesis import factor
from specbench.claims.claim import THESIS_CLAIM
from specbench.claims.thesis_judge import published_text
from specbench.report.document import Column, Figure, Note, Section, Table, is_missing, joined, records
from specbench.report.figures.style import ordered, temperature_label
from specbench.report.figures.thesis import answer

DEFINITION = (
    "The study's title and conclusion: *the task, more than the method, decided the multiplier*. Measured by "
    "splitting the log multipliers into a task part, a method part and the rest (an additive fit over the task x "
    "method matrix): the **task effect** is the typical factor between one task's multipliers and the average "
    "task's, the **method effect** the same for the methods, both corrected for the runs' noise. The task decides "
    "where the 95 % interval of the difference of their squares lies above 0; the method where it lies below 0; "
    "otherwise the two are *not separated*. The shares say how much of the spread of the log multipliers each part "
    "carries."
)


def _factor(row: Mapping[str, Any], name: str) -> str:
    point, low, high = (row.get(f"{name}_{k}") for k in ("effect", "low", "high"))
    if is_missing(point):
        return "n/a"
    bounds = "" if is_missing(low) or is_missing(high) else f" [{factor(low):.2f}-{factor(high):.2f}]"
    return f"{factor(point):.2f}x{bounds}"


def _ratio(row: Mapping[str, Any]) -> str:
    ratio, low, high = row.get("ratio"), row.get("ratio_low"), row.get("ratio_high")
    if is_missing(ratio) or not math.isfinite(ratio):
        return "n/a"
    return f"{ratio:.2f}" + ("" if is_missing(low) or is_missing(high) else f" [{low:.2f}-{high:.2f}]")


def run_sentence(row: Mapping[str, Any]) -> str:
    """One temperature's answer in a sentence."""
    where = f"**Temperature {temperature_label(row['temperature'])}: {answer(row)}**"
    if row["decides"] == "cannot be judged":
        return f"{where}: {row['reason']}."
    return (
        f"{where}: a task moves the multiplier by {_factor(row, 'task')} from the average task, a method by "
        f"{_factor(row, 'method')} from the average method; ratio {_ratio(row)}; shares {_shares(row)} "
        f"({len(row['tasks'])} tasks, methods {joined(row['methods'])}; {row['reason']})."
    )


def _shares(row: Mapping[str, Any]) -> str:
    """'task 74 % / method 12 % / rest 14 %', 'n/a' without a figure."""
    values = [row.get(f"{k}_share") for k in ("task", "method", "interaction")]
    if any(is_missing(v) for v in values):
        return "n/a"
    return " / ".join(f"{name} {v:.0%}" for name, v in zip(("task", "method", "rest"), values, strict=True))


def _claim_rows(claims: pd.DataFrame | None) -> pd.DataFrame:
    """The thesis claim's rows (the claim and its variants) of a claims evaluation."""
    if claims is None or claims.empty:
        return pd.DataFrame(columns=["id", "verdict", "verdict_t1", "measured"])
    return claims[(claims.id == THESIS_CLAIM) | (claims.variant_of == THESIS_CLAIM)]


def published_of(claims: pd.DataFrame | None) -> Mapping[str, Any] | None:
    """The published multipliers' figure, as the thesis claim's judge computed it (None without that claim)."""
    main = _claim_rows(claims)
    measured = main[main.id == THESIS_CLAIM].measured.iloc[0] if (main.id == THESIS_CLAIM).any() else None
    return measured.get("published") if isinstance(measured, Mapping) else None


def thesis_section(
    thesis: pd.DataFrame | None,
    claims: pd.DataFrame | None,
    figure: Figure | None = None,
    conditions: Sequence[str] = (),
    beside: pd.DataFrame | None = None,
) -> list[Section]:
    """The section (none without a thesis table): the answer per temperature, the published figure, the claim's
    verdicts on the study's methods, a table of every figure and the figure (methods in ``conditions``' order);
    ``beside`` (analysis.thesis.settings_beside): the same figure with a setting in place of its method, rows of
    their own below the run's, each labelled as not the study's figure."""
    if thesis is None:
        return []
    notes = [Note(DEFINITION)]
    rows = [{**r, "methods": ordered(r["methods"], conditions)} for r in records(thesis.sort_values("temperature"))]
    notes += [Note(run_sentence(r), "" if r["decides"] in ("task", "method") else "warn") for r in rows]
    if not rows:
        notes.append(Note("No cells: nothing to judge.", "warn"))
    own, published = _claim_rows(claims), published_of(claims)
    if published:
        notes.append(Note(f"The study's figure, from its {published_text(published)}: {answer(published)}."))
    if len(own):
        notes.append(
            Note(
                f"The claim `{THESIS_CLAIM}` is judged on the study's own methods (see the claims table): "
                + "; ".join(
                    f"{r['id']}: {r['verdict']}"
                    + ("" if is_missing(r.get("verdict_t1")) else f" at 0, {r['verdict_t1']} at 1.0")
                    for r in records(own)
                )
                + "."
            )
        )
    table_rows: list[dict[str, Any]] = [
        {"figure": "this run, each method (its settings left out)", **r, "shown_methods": joined(r["methods"])}
        for r in rows
    ]
    settings = [] if beside is None else records(beside.sort_values(["setting", "temperature"], kind="stable"))
    table_rows += [
        {
            "figure": f"not the study's figure: {r['setting']} in place of {r['in_place_of']}",
            **r,
            "shown_methods": joined(ordered(r["methods"], conditions)),
        }
        for r in settings
    ]
    if settings:
        names = joined(dict.fromkeys(r["setting"] for r in settings))
        notes.append(
            Note(
                f"Beside the run's figure, not in it: the same figure with a setting of a method in place of that "
                f"method ({names}). The study's figure is over its three methods; these rows are not the study's."
            )
        )
    if published:
        low, high = published["ratio"]
        table_rows.append(
            {
                "figure": "the study's published multipliers (every reading; no interval)",
                "temperature": None,
                "shown_methods": joined(published["methods"]),
                "tasks": published["tasks"],
                "task_text": _span(published["task_effect"]),
                "method_text": _span(published["method_effect"]),
                "ratio_text": f"{low:.2f}-{high:.2f}",
                "shares_text": " / ".join(
                    f"{name} {_percent(published[f'{k}_share'])}"
                    for name, k in (("task", "task"), ("method", "method"), ("rest", "interaction"))
                ),
                "decides": published["decides"],
            }
        )
    table = Table(
        [
            Column("figure", "figure", text=True),
            Column("temp", "temperature", lambda v: "not stated" if is_missing(v) else temperature_label(v)),
            Column("methods", "shown_methods", text=True),
            Column("tasks", lambda r: len(r["tasks"])),
            Column("task effect", lambda r: r.get("task_text") or _factor(r, "task"), text=True),
            Column("method effect", lambda r: r.get("method_text") or _factor(r, "method"), text=True),
            Column("ratio task / method", lambda r: r.get("ratio_text") or _ratio(r), text=True),
            Column("shares task / method / rest", lambda r: r.get("shares_text") or _shares(r), text=True),
            Column(
                "decides",
                "decides",
                text=True,
                tone=lambda v: "good" if v == "task" else "",
            ),
        ],
        table_rows,
    )
    return [
        Section(
            "thesis",
            "Does the task or the method decide the multiplier?",
            notes,
            table,
            figures=[figure] if figure else [],
        )
    ]


def _percent(pair: Sequence[float]) -> str:
    low, high = (f"{v:.0%}" for v in pair)
    return low if low == high else f"{low[:-1]}-{high}"


def _span(pair: Sequence[float]) -> str:
    low, high = (factor(v) for v in pair)
    return f"{low:.2f}x" if f"{low:.2f}" == f"{high:.2f}" else f"{low:.2f}-{high:.2f}x"
