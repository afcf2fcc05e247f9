"""The judge of the study's thesis (kind ``thesis``): does the task move the multiplier more than the method does?
This run's figure (analysis.thesis, over the claim's tasks and methods) beside the one its published multipliers
give; the verdict follows the interval of D = tau^2 - beta^2 over the repeats (docs/claims.md, "The thesis")."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from specbench.analysis import thesis as figure
from specbench.claims.claim import CONTRADICTED, NOT_MEASURED, NOT_SEPARATED, REPRODUCED, TOO_FEW_RUNS
from specbench.claims.metrics import Outcome, Run, listed

if TYPE_CHECKING:
    from specbench.claims.claim import Claim


def effect_text(row: Mapping[str, Any]) -> str:
    """A run's figure in words: 'task 2.01x [1.90-2.13] vs method 1.40x [1.33-1.47]; ratio 2.06 [1.71-2.44]'."""

    def interval(name: str) -> str:
        low, high = row[f"{name}_low"], row[f"{name}_high"]
        if math.isnan(low) or math.isnan(high) or math.isnan(row[name if name == "ratio" else f"{name}_effect"]):
            return ""
        shown = (figure.factor(low), figure.factor(high)) if name != "ratio" else (low, high)
        return f" [{shown[0]:.2f}-{shown[1]:.2f}]"

    if math.isnan(row["task_effect"]) or math.isnan(row["method_effect"]):
        return "n/a"
    ratio = "n/a" if math.isnan(row["ratio"]) else f"{row['ratio']:.2f}{interval('ratio')}"
    return (
        f"task {figure.factor(row['task_effect']):.2f}x{interval('task')} vs method "
        f"{figure.factor(row['method_effect']):.2f}x{interval('method')}; ratio {ratio}"
    )


def published_text(published: Mapping[str, Any]) -> str:
    """The published figure in words, over every reading of its ranges, with the cells the text does not give."""
    (t_low, t_high), (m_low, m_high), (r_low, r_high) = (
        published[k] for k in ("task_effect", "method_effect", "ratio")
    )

    def span(low: float, high: float, unit: str = "x") -> str:
        return f"{low:.2f}{unit}" if f"{low:.2f}" == f"{high:.2f}" else f"{low:.2f}-{high:.2f}{unit}"

    missing = f"; not given: {listed(published['missing'])}" if published["missing"] else ""
    ranged = f" over every reading of {listed(published['ranged'])}" if published["ranged"] else ""
    return (
        f"published multipliers: task {span(figure.factor(t_low), figure.factor(t_high))} vs method "
        f"{span(figure.factor(m_low), figure.factor(m_high))}, ratio {span(r_low, r_high, '')}{ranged}{missing} "
        "(no interval: the study published no per-run numbers)"
    )


def judge_thesis(claim: Claim, run: Run) -> Outcome:
    """The task effect against the method effect of the claim's tasks and methods at the claim's temperature."""
    row = figure.thesis_figure(run.tables["cells"], run.baseline, claim.temperature, claim.conditions, claim.tasks)
    published = figure.published_figure(claim.matrix) if claim.matrix else None
    beside = f"; {published_text(published)}" if published else ""
    what = f"over {len(row['tasks'])} tasks and {len(row['methods'])} methods ({listed(row['methods'])})"
    lacking = [c for c in claim.conditions if c not in row["methods"]] + [
        t for t in claim.tasks if t not in row["tasks"]
    ]
    if row["decides"] == figure.CANNOT:
        verdict, detail = NOT_MEASURED, f"cannot be judged: {row['reason']}"
    elif lacking:
        verdict = NOT_MEASURED
        detail = (
            f"no cells of {listed(lacking)} at temperature {claim.temperature:g} (the claim is about "
            f"{listed(claim.tasks)} x {listed(claim.conditions)})"
        )
    elif row["decides"] == figure.TOO_FEW:
        verdict, detail = TOO_FEW_RUNS, f"{row['reason']} {what}"
    elif row["decides"] == figure.TASK:
        verdict = REPRODUCED
        detail = f"the task moves the multiplier more than the method {what}: {row['reason']}"
    elif row["decides"] == figure.METHOD:
        verdict = CONTRADICTED
        detail = f"the method moves the multiplier more than the task {what}: {row['reason']}"
    else:
        verdict, detail = NOT_SEPARATED, f"task and method effects not separated {what}: {row['reason']}"
    return Outcome({"run": row, "published": published}, effect_text(row), row["cells"], verdict, detail + beside)
