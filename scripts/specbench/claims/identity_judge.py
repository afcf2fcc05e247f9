"""The judge of identical outputs (kind ``identity``): each condition's tokens against the baseline's (or its own
first repeat's), and where they differ, by how much in length."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from specbench.claims.claim import NOT_DIRECTION, NOT_MEASURED, NOT_REPRODUCED, NOT_SIZE, REPRODUCED
from specbench.claims.judge_inputs import Outcome, Run, absent, listed, side_of

if TYPE_CHECKING:
    from specbench.claims.claim import Claim


def _first_runs(claim: Claim, run: Run, task: str) -> tuple[dict[str, Any] | None, list[str]]:
    """A control on the study's number of runs: repeats 2..runs against repeat 1, from the cells' tokens at
    temperature 0 (None where a repeat is missing or has no tokens)."""
    rows = run.rows("cells", task=task, condition=claim.condition, temperature=0.0)
    tokens = {int(r.repeat): list(r.tokens) for r in rows.itertuples() if len(r.tokens)}
    wanted = range(1, (claim.runs or 2) + 1)
    cells = [str(f) for f, r in zip(rows.cell_file, rows.repeat, strict=True) if int(r) in wanted]
    if any(r not in tokens for r in wanted):
        return None, cells
    first = tokens[1]
    differing = [[len(tokens[r]), len(first)] for r in wanted[1:] if tokens[r] != first]
    compared = len(wanted) - 1
    state = {"compared": compared, "identical": compared - len(differing), "missing": 0, "token_counts": differing}
    return state, cells


def _identity_state(claim: Claim, run: Run) -> tuple[dict[str, dict[str, Any] | None], list[str]]:
    """Per task the compared repeats (None where none was compared) and the cells."""
    control = claim.condition == run.baseline or claim.versus == "first-repeat"
    state: dict[str, dict[str, Any] | None] = {}
    cells: list[str] = []
    for task in claim.tasks:
        if control and claim.runs:
            state[task], found = _first_runs(claim, run, task)
            cells += found
            continue
        row = run.row("identity", task=task, condition=claim.condition, control=control)
        if row is None or not row["repeats_compared"]:
            state[task] = None
        else:
            state[task] = {
                "compared": int(row["repeats_compared"]),
                "identical": int(row["identical"]),
                "missing": int(row["missing"]),
                "token_counts": [list(pair) for pair in row["token_counts"]],
            }
        cells += [] if row is None else list(row["cells"])
    return state, cells


def _identity_text(task: str, state: Mapping[str, Any] | None) -> str:
    if state is None:
        return f"{task} n/a"
    if state["token_counts"]:
        counts = "; ".join(f"{a} vs {b}" for a, b in state["token_counts"])
        return f"{task} differs in {len(state['token_counts'])}/{state['compared']} ({counts})"
    return f"{task} identical {state['identical']}/{state['compared']}"


def length_difference(own: int, baseline: int) -> float:
    """An output's length against the baseline's, as a signed fraction of the baseline's (829 vs 898: -7.7 %); an
    output longer than an empty baseline's is infinitely longer."""
    if baseline == 0:
        return math.inf if own > 0 else 0.0
    return (own - baseline) / baseline


def _token_counts(claim: Claim, state: Mapping[str, Mapping[str, Any]]) -> tuple[str, str]:
    """The differing repeats whose length difference is on the other side of the published one, and those on its
    side but further from it than the tolerance (an absolute one, in fractions of the baseline's length)."""
    tolerance = claim.tolerance or 0.0
    wrong_sign: list[str] = []
    off_size: list[str] = []
    for task, (own, base) in claim.token_counts.items():
        published = length_difference(own, base)
        for a, b in state[task]["token_counts"]:
            measured = length_difference(a, b)
            shown = f"{task} {a} vs {b} ({measured:+.1%}; published {own} vs {base}, {published:+.1%})"
            if side_of(measured, 0.0) != side_of(published, 0.0):
                wrong_sign.append(shown)
            elif abs(measured - published) > tolerance:
                off_size.append(shown)
    return listed(wrong_sign), listed(off_size)


def judge_identity(claim: Claim, run: Run) -> Outcome:
    state, cells = _identity_state(claim, run)
    text = "; ".join(_identity_text(task, s) for task, s in state.items())

    def outcome(verdict: str, detail: str) -> Outcome:
        gaps = listed(
            f"{task} ({s['missing']} repeat(s) without a baseline)" for task, s in state.items() if s["missing"]
        )
        return Outcome(state, text, cells, verdict, detail + (f"; not compared: {gaps}" if gaps else ""))

    missing = absent("compared repeats", state, claim)
    if missing:
        return Outcome(state, text, cells, NOT_MEASURED, missing)
    differ = [task for task, s in state.items() if s["token_counts"]]
    same = listed(task for task in state if task not in differ)
    published = claim.published
    count = f"differs on {len(differ)} of {len(state)} tasks ({listed(differ) or 'none'})"

    if published == "identical":
        if differ:
            return outcome(NOT_REPRODUCED, f"differs on {listed(differ)}")
        return outcome(REPRODUCED, "identical on every task")
    if published == "not identical":
        if same:
            return outcome(NOT_REPRODUCED, f"identical on {same}")
        if not claim.token_counts:
            return outcome(REPRODUCED, "differs on every task")
        wrong_sign, off_size = _token_counts(claim, state)
        within = f"±{claim.tolerance or 0.0:.0%} of the baseline's length"
        if wrong_sign:
            return outcome(NOT_DIRECTION, f"length differs the other way from the published: {wrong_sign}")
        if off_size:
            return outcome(NOT_SIZE, f"length difference further than {within} from the published: {off_size}")
        return outcome(REPRODUCED, f"differs on every task, each length difference within {within} of the published")
    if isinstance(published, list):
        identical = "".join(f", identical on {t}" for t in claim.tasks if t not in published)
        as_published = f"published: differs on {listed(published)}{identical}"
        if set(differ) == set(published):
            return outcome(REPRODUCED, f"{count}, as published")
        return outcome(NOT_REPRODUCED, f"{count}; {as_published}")
    if len(differ) == published:
        return outcome(REPRODUCED, count)
    return outcome(NOT_REPRODUCED, f"{count}; published {published}")
