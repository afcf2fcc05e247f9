"""The judge of the study's thesis (kind ``thesis``): does the task move the multiplier more than the method does?
Judged under the view the claim reads (``reads``: analysis.thesis_fit.VIEWS; the main effects where it names none) on
this run's matrix (over the claim's tasks and methods), beside the figure computed from the study's published
multipliers under the same view; the verdict follows the interval of D, the view's task side^2 - method side^2,
over the repeats (docs/claims.md, "The thesis")."""

from __future__ import annotations

import functools
import json
import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from specbench.analysis import thesis_fit as figure
from specbench.analysis.thesis import thesis_row
from specbench.analysis.thesis_published import published_figure
from specbench.analysis.thesis_text import published_text
from specbench.claims.claim import CONTRADICTED, NOT_MEASURED, NOT_SEPARATED, REPRODUCED, TOO_FEW_RUNS, ClaimError
from specbench.claims.judge_inputs import Outcome, Run, listed

if TYPE_CHECKING:
    from specbench.claims.claim import Claim


def view_of(claim: Claim) -> str:
    """The view a thesis claim is judged under: its reading of the words, the main effects where it has none."""
    view = claim.reads or figure.MAIN_EFFECTS
    if view not in figure.VIEWS:
        raise ClaimError(f"claim {claim.id!r}: key 'reads': a thesis is read as one of {list(figure.VIEWS)}")
    return view


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


@functools.lru_cache(maxsize=4)
def _published(matrix: str) -> Mapping[str, Any]:
    """The figures computed from a published matrix (as JSON): the same for every temperature, variant and view."""
    return published_figure(json.loads(matrix))


def judge_thesis(claim: Claim, run: Run) -> Outcome:
    """The task side against the method side of the claim's tasks and methods at the claim's temperature, under
    the claim's view."""
    view = view_of(claim)
    row = thesis_row(run.tables["cells"], run.baseline, claim.temperature, claim.conditions, claim.tasks, view=view)
    published = _published(json.dumps(claim.matrix)) if claim.matrix else None
    beside = f"; {published_text(published, view)}" if published else ""
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
        verdict, detail = NOT_SEPARATED, f"task and method not separated {what}: {row['reason']}"
    outcome = {"run": row, "published": published, "view": view}
    return Outcome(outcome, effect_text(row), row["cells"], verdict, f"under the {view}: {detail}{beside}")
