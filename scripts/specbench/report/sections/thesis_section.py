"""The report's thesis section: does the task or the method decide the multiplier? This run's answer per temperature
under both views of analysis.thesis (over the run's methods, a method's settings left out: summaries.methods), the
answer computed from the study's published multipliers, the claims judged on the study's own methods (one per view),
and the figure (figures.thesis.draw_thesis)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from specbench.analysis.thesis_fit import MAIN_EFFECTS, SPREAD_WITHIN, VIEWS, factor
from specbench.analysis.thesis_text import PUBLISHED_LABEL, answer, by_temperature, view_text
from specbench.claims.claim import THESIS_CLAIM
from specbench.report.document import Column, Figure, Note, Section, Table, is_missing, joined, records
from specbench.report.labels import ordered, temperature_label

DEFINITION = (
    "The study's title and conclusion: *the task, more than the method, decided the multiplier*. The text does not "
    "say how far the task or the method moves the multiplier, so it is measured under two views of the task x method "
    "matrix of log multipliers, each a task side against a method side, both corrected for the runs' noise. "
    f"**{MAIN_EFFECTS}**: an additive fit splits the matrix into a task part, a method part and the rest; the task "
    "side is the typical factor between one task's multipliers and the average task's, the method side the same "
    "for the methods, and what a method changes only on some tasks (the interaction) counts on neither side. "
    f"**{SPREAD_WITHIN}**: the typical factor by which the multiplier moves across the tasks within one method, "
    "against across the methods within one task; the interaction counts on both sides. On a complete matrix the two "
    "sides differ by the same amount under both views, so they decide alike; the ratio says how much more. The task "
    "decides where the 95 % interval of the difference of the squared sides lies above 0; the method where it lies "
    "below 0; otherwise the two are *not separated*. The shares (main effects) say how much of the spread of the log "
    "multipliers the task part, the method part and the rest carry."
)
SIDE_WORDS = {  # per view: how the task side and the method side read in a sentence
    MAIN_EFFECTS: ("a task moves the multiplier by {} from the average task", "a method by {} from the average method"),
    SPREAD_WITHIN: (
        "within a method, a task moves the multiplier by {} from the method's mean over the tasks",
        "within a task, a method by {} from the task's mean over the methods",
    ),
}


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


def _view_sentence(row: Mapping[str, Any]) -> str:
    """One view's figures in a clause."""
    task, method = SIDE_WORDS[row["view"]]
    shares = f"; shares {_shares(row)}" if row["view"] == MAIN_EFFECTS else ""
    return (
        f"*{row['view']}*: {task.format(_factor(row, 'task'))}, {method.format(_factor(row, 'method'))}; "
        f"ratio {_ratio(row)}{shares}"
    )


def _answers(views: Mapping[str, Mapping[str, Any]]) -> str:
    """The views' answers in words: 'the task decides under both views', or each view's."""
    said = {view: answer(row) for view, row in views.items()}
    if len(set(said.values())) == 1 and len(said) == len(VIEWS):
        return f"{next(iter(said.values()))} under both views"
    return "; ".join(f"{text} ({view})" for view, text in said.items())


def run_sentence(views: Mapping[str, Mapping[str, Any]]) -> str:
    """One temperature's answer in a sentence, under each view (``views``: view -> its row)."""
    first = next(iter(views.values()))
    where = f"**Temperature {temperature_label(first['temperature'])}: {_answers(views)}**"
    if first["decides"] == "cannot be judged":
        return f"{where}: {first['reason']}."
    figures = ". ".join(_view_sentence(views[v]) for v in VIEWS if v in views)
    reasons = "; ".join(dict.fromkeys(str(r["reason"]) for r in views.values()))
    return f"{where}. {figures} ({len(first['tasks'])} tasks, methods {joined(first['methods'])}; {reasons})."


def _shares(row: Mapping[str, Any]) -> str:
    """'task 74 % / method 12 % / rest 14 %', 'n/a' without a figure (and under the spread within)."""
    values = [row.get(f"{k}_share") for k in ("task", "method", "interaction")]
    if any(is_missing(v) for v in values):
        return "n/a"
    return " / ".join(f"{name} {v:.0%}" for name, v in zip(("task", "method", "rest"), values, strict=True))


def _claim_rows(claims: pd.DataFrame | None) -> pd.DataFrame:
    """The thesis claims' rows (one per view, read together as ``THESIS_CLAIM``, and their variants) of a claims
    evaluation."""
    if claims is None or claims.empty:
        return pd.DataFrame(columns=["id", "verdict", "verdict_t1", "measured", "reading"])
    absent = pd.Series(None, index=claims.index, dtype=object)  # a table of fewer columns than the evaluation's
    own = claims[(claims.id == THESIS_CLAIM) | (claims.get("readings", absent) == THESIS_CLAIM)]
    return claims[claims.id.isin(own.id) | claims.get("variant_of", absent).isin(own.id)]


def published_of(claims: pd.DataFrame | None) -> Mapping[str, Any] | None:
    """The figures computed from the study's published multipliers, as the thesis claims' judge computed them (None
    without those claims)."""
    for measured in _claim_rows(claims).measured:
        if isinstance(measured, Mapping) and measured.get("published"):
            return measured["published"]
    return None


def _published_note(published: Mapping[str, Any]) -> str:
    """What the published multipliers give under each view, and why the views differ."""
    views = published["views"]
    read = [f"every reading of {', '.join(published['ranged'])}"] if published["ranged"] else []
    read += [f"not given: {', '.join(published['missing'])}"] if published["missing"] else []
    per_view = "; ".join(f"*{v}*: {view_text(views[v])}, {answer(views[v])}" for v in VIEWS)
    rest = views[MAIN_EFFECTS]["interaction_share"]
    return (
        f"The study states no figure for its thesis. {PUBLISHED_LABEL.capitalize()} "
        f"({'; '.join([*read, 'no interval: no per-run numbers'])}): {per_view}. The rest (the interaction: what a "
        f"method changes only on some tasks) carries {_percent(rest)} of their spread: the main effects leave it "
        "out, the spread within counts it on both sides."
    )


def thesis_section(
    thesis: pd.DataFrame | None,
    claims: pd.DataFrame | None,
    figure: Figure | None = None,
    conditions: Sequence[str] = (),
    beside: pd.DataFrame | None = None,
) -> list[Section]:
    """The section (none without a thesis table): the answer per temperature under both views, the figures computed
    from the published multipliers, the claims' verdicts on the study's methods, a table of every figure (a row per
    temperature and view) and the figure (methods in ``conditions``' order); ``beside``
    (analysis.thesis.settings_beside): the same figures with a setting in place of its method, rows of their own
    below the run's, each labelled as a setting, not the run's figure."""
    if thesis is None:
        return []
    notes = [Note(DEFINITION)]
    rows = [{**r, "methods": ordered(r["methods"], conditions)} for r in records(_in_order(thesis, ["temperature"]))]
    for views in by_temperature(thesis):
        decided = all(r["decides"] in ("task", "method") for r in views.values())
        notes.append(Note(run_sentence(views), "" if decided else "warn"))
    if not rows:
        notes.append(Note("No cells: nothing to judge.", "warn"))
    own, published = _claim_rows(claims), published_of(claims)
    if published:
        notes.append(Note(_published_note(published)))
    if len(own):
        claimed = own[own.variant_of.isna()] if "variant_of" in own else own
        reading = next((r for r in claimed.get("reading", []) if not is_missing(r)), None)
        supports = f" The run supports: {reading}." if reading else ""
        notes.append(
            Note(
                f"The claim `{THESIS_CLAIM}` is judged under each view, one claim per view, on the study's own "
                "methods (see the claims table): "
                + "; ".join(
                    f"{r['id']}: {r['verdict']}"
                    + ("" if is_missing(r.get("verdict_t1")) else f" at 0, {r['verdict_t1']} at 1.0")
                    for r in records(own)
                )
                + "."
                + supports
            )
        )
    table_rows: list[dict[str, Any]] = [
        {"figure": "this run, each method (its settings left out)", **r, "shown_methods": joined(r["methods"])}
        for r in rows
    ]
    settings = [] if beside is None else records(_in_order(beside, ["setting", "temperature"]))
    table_rows += [
        {
            "figure": f"a setting, not the run's figure: {r['setting']} in place of {r['in_place_of']}",
            **r,
            "shown_methods": joined(ordered(r["methods"], conditions)),
        }
        for r in settings
    ]
    if settings:
        names = joined(dict.fromkeys(r["setting"] for r in settings))
        notes.append(
            Note(
                f"Beside the run's figure, not in it: the same figures with a setting of a method in place of that "
                f"method ({names}). The run's figure counts each method once, its settings left out."
            )
        )
    if published:
        table_rows += [_published_row(published, view) for view in VIEWS]
    table = Table(
        [
            Column("figure", "figure", text=True),
            Column("temp", "temperature", lambda v: "not stated" if is_missing(v) else temperature_label(v)),
            Column("view", "view", text=True),
            Column("methods", "shown_methods", text=True),
            Column("tasks", lambda r: len(r["tasks"])),
            Column("task side", lambda r: r.get("task_text") or _factor(r, "task"), text=True),
            Column("method side", lambda r: r.get("method_text") or _factor(r, "method"), text=True),
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


def _in_order(frame: pd.DataFrame, by: list[str]) -> pd.DataFrame:
    """Rows sorted by ``by``, then by view in ``VIEWS`` order."""
    keyed = frame.assign(view_order=frame.view.map(VIEWS.index))
    return keyed.sort_values([*by, "view_order"], kind="stable").drop(columns="view_order")


def _published_row(published: Mapping[str, Any], view: str) -> dict[str, Any]:
    """The table's row of the figures computed from the published multipliers under one view."""
    figures = published["views"][view]
    low, high = figures["ratio"]
    shares = (
        " / ".join(
            f"{name} {_percent(figures[f'{k}_share'])}"
            for name, k in (("task", "task"), ("method", "method"), ("rest", "interaction"))
        )
        if view == MAIN_EFFECTS
        else "n/a"
    )
    return {
        "figure": f"{PUBLISHED_LABEL} (every reading; no interval)",
        "temperature": None,
        "view": view,
        "shown_methods": joined(published["methods"]),
        "tasks": published["tasks"],
        "task_text": _span(figures["task_effect"]),
        "method_text": _span(figures["method_effect"]),
        "ratio_text": f"{low:.2f}-{high:.2f}",
        "shares_text": shares,
        "decides": figures["decides"],
    }


def _percent(pair: Sequence[float]) -> str:
    low, high = (f"{v:.0%}" for v in pair)
    return low if low == high else f"{low[:-1]}-{high}"


def _span(pair: Sequence[float]) -> str:
    low, high = (factor(v) for v in pair)
    return f"{low:.2f}x" if f"{low:.2f}" == f"{high:.2f}" else f"{low:.2f}-{high:.2f}x"
