"""The thesis (analysis.thesis, analysis.thesis_published) in words, for the thesis claim's judge, the thesis
figure and the report's section alike: each answer, the published figure under one view, and the thesis table as
one mapping per temperature."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd

from specbench.analysis.thesis_fit import CANNOT, METHOD, TASK, TOO_FEW, factor

ANSWERS = {
    TASK: "the task decides",
    METHOD: "the method decides",
    CANNOT: "cannot be judged",
    TOO_FEW: "too few runs",
}
PUBLISHED_LABEL = "computed from the study's published multipliers"  # the study states no figure for its thesis


def answer(row: Mapping[str, Any]) -> str:
    """A figure's answer in words ('the task decides', 'not separated', ...)."""
    return ANSWERS.get(str(row["decides"]), str(row["decides"]))


def by_temperature(thesis: pd.DataFrame) -> list[dict[str, dict[str, Any]]]:
    """The thesis table (analysis.thesis) as one mapping per temperature, ascending: view -> its row."""
    rows: dict[float, dict[str, dict[str, Any]]] = {}
    for row in thesis.to_dict("records"):
        rows.setdefault(float(row["temperature"]), {})[str(row["view"])] = row
    return [rows[t] for t in sorted(rows)]


def span(low: float, high: float, unit: str = "x") -> str:
    """'1.61-1.64x', one number where both round alike."""
    return f"{low:.2f}{unit}" if f"{low:.2f}" == f"{high:.2f}" else f"{low:.2f}-{high:.2f}{unit}"


def view_text(figures: Mapping[str, Any]) -> str:
    """One view's published figures in words: 'task 1.61-1.64x vs method 1.02-1.06x, ratio 8.79-32.64'."""
    (t_low, t_high), (m_low, m_high), (r_low, r_high) = (figures[k] for k in ("task_effect", "method_effect", "ratio"))
    return (
        f"task {span(factor(t_low), factor(t_high))} vs method "
        f"{span(factor(m_low), factor(m_high))}, ratio {span(r_low, r_high, '')}"
    )


def published_text(published: Mapping[str, Any], view: str) -> str:
    """The figure computed from the published multipliers under ``view``, in words, over every reading of its
    ranges, with the cells the text does not give."""
    missing = f"; not given: {', '.join(published['missing'])}" if published["missing"] else ""
    ranged = f" over every reading of {', '.join(published['ranged'])}" if published["ranged"] else ""
    return (
        f"{PUBLISHED_LABEL} ({view}): {view_text(published['views'][view])}{ranged}{missing} "
        "(no interval: the study published no per-run numbers)"
    )
