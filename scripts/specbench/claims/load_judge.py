"""The judges of claims about load (a run with config ``load``, the load table): speculation pays up to N*
(``pays_up_to``) and acceptance the same at every N (``acceptance_under_load``)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from specbench.analysis.load import ABOVE, BELOW, NO_INTERVAL
from specbench.analysis.load import NOT_SEPARATED as STRADDLES
from specbench.claims.claim import (
    NOT_DIRECTION,
    NOT_MEASURED,
    NOT_REPRODUCED,
    NOT_SEPARATED,
    NOT_SIZE,
    REPRODUCED,
    TOO_FEW_RUNS,
    TOO_WIDE,
)
from specbench.claims.judge_inputs import Outcome, Run, finite, listed, per_task

if TYPE_CHECKING:
    import pandas as pd

    from specbench.claims.claim import Claim


def _points(claim: Claim, run: Run, levels_from: str) -> tuple[dict[str, dict[int, pd.Series | None]], list[str]]:
    """Per task, the load table's row at each judged N (the claim's ``at``, else every N this run measured whose
    ``levels_from`` column has a value), and the cells behind them."""
    found: dict[str, dict[int, pd.Series | None]] = {}
    cells: list[str] = []
    for task in claim.tasks:
        rows = run.rows("load", task=task, condition=claim.condition, temperature=claim.temperature)
        by_n = {int(row.concurrency): row for _, row in rows.iterrows()}
        levels = claim.at or sorted(n for n, row in by_n.items() if finite(row.get(levels_from)) is not None)
        found[task] = {n: by_n.get(n) for n in levels}
        cells += [c for n in levels if n in by_n for c in by_n[n].cells]
    return found, cells


def _missing(found: dict[str, dict[int, Any]], claim: Claim, what: str) -> str:
    """'' where every task has every judged N, else the detail naming what is absent."""
    lacking = [
        f"{task} (no N)" if not points else f"{task} at N = {listed(str(n) for n, p in points.items() if p is None)}"
        for task, points in found.items()
        if not points or any(p is None for p in points.values())
    ]
    if not lacking:
        return ""
    where = f"({claim.condition}, temperature {claim.temperature:g})"
    return f"no {what} for {listed(lacking)} {where} in this run's load table"


def _where(found: dict[str, dict[int, Any]], test: Any) -> Iterator[str]:
    """'<task> at N = n' for each judged point where ``test(n, row)`` holds."""
    for task, points in found.items():
        for n, row in points.items():
            if row is not None and test(n, row):
                yield f"{task} at N = {n}"


def judge_pays_up_to(claim: Claim, run: Run) -> Outcome:
    """The multiplier's interval above 1.0x at every judged N below N*, below it from N* on (the load table's
    ``against_one``)."""
    found, cells = _points(claim, run, "speedup")
    n_star = None if claim.published == "every N" else int(claim.published)
    measured = {
        task: {"n_star": _n_star(points), "points": {n: _side(row) for n, row in points.items()}}
        for task, points in found.items()
    }
    text = per_task({task: _sides_text(m) for task, m in measured.items()})
    if claim.condition == run.baseline:
        return Outcome(measured, text, cells, NOT_MEASURED, "the baseline is not set against itself")
    missing = _missing(found, claim, "load point")
    if missing:
        return Outcome(measured, text, cells, NOT_MEASURED, missing)

    def expected(n: int) -> str:
        return ABOVE if n_star is None or n < n_star else BELOW

    wrong = listed(_where(found, lambda n, row: row.against_one in (ABOVE, BELOW) and row.against_one != expected(n)))
    if wrong:
        detail = f"on the other side of 1.0x than N* {claim.published} says: {wrong}"
        return Outcome(measured, text, cells, NOT_DIRECTION, detail)
    few = listed(_where(found, lambda n, row: row.against_one == NO_INTERVAL))
    if few:
        return Outcome(measured, text, cells, TOO_FEW_RUNS, f"no interval (fewer than 2 runs a side): {few}")
    across = listed(_where(found, lambda n, row: row.against_one == STRADDLES))
    if across:
        return Outcome(measured, text, cells, NOT_SEPARATED, f"the interval lies across 1.0x: {across}")
    judged = listed(str(n) for n in next(iter(found.values())))
    side = "above 1.0x at every N" if n_star is None else f"above 1.0x below N = {n_star} and below it from there"
    return Outcome(measured, text, cells, REPRODUCED, f"{side} (judged at N = {judged})")


def _side(row: pd.Series | None) -> dict[str, Any] | None:
    if row is None:
        return None
    return {
        "speedup": finite(row.speedup),
        "interval": [finite(row.speedup_ci_low), finite(row.speedup_ci_high)],
        "against_one": row.against_one,
    }


def _n_star(points: dict[int, pd.Series | None]) -> int | None:
    """This run's N* over the judged points: the first whose interval lies below 1.0x."""
    return next((n for n, row in sorted(points.items()) if row is not None and row.against_one == BELOW), None)


def _sides_text(measured: dict[str, Any]) -> str:
    shown = [
        f"N={n} n/a" if p is None or p["speedup"] is None else f"N={n} {p['speedup']:.2f}x {p['against_one']}"
        for n, p in measured["points"].items()
    ]
    n_star = measured["n_star"]
    return f"N* {'none' if n_star is None else n_star}: " + ", ".join(shown) if shown else "n/a"


def judge_acceptance_under_load(claim: Claim, run: Run) -> Outcome:
    """Acceptance's change from one request at each judged N above 1 (the load table's ``acceptance_change`` and its
    interval) against the band of +- tolerance: inside it at every N for ``same``, beyond it at some N for
    ``different``."""
    found, cells = _points(claim, run, "acceptance_change")
    found = {
        task: {
            n: row if row is None or finite(row.acceptance_change) is not None else None for n, row in points.items()
        }
        for task, points in found.items()
    }  # N = 1 is the reference, and a point that drafted nothing has no change
    found = {task: {n: row for n, row in points.items() if n != 1} for task, points in found.items()}
    tolerance = claim.tolerance or 0.0
    measured = {task: {n: _change(row) for n, row in points.items()} for task, points in found.items()}
    text = per_task({task: _changes_text(m) for task, m in measured.items()})
    missing = _missing(found, claim, "acceptance against one request (both points drafting)")
    if missing:
        return Outcome(measured, text, cells, NOT_MEASURED, missing)
    few = listed(_where(found, lambda n, row: _band(row, tolerance) == NO_INTERVAL))
    if few:
        return Outcome(measured, text, cells, TOO_FEW_RUNS, f"no interval (fewer than 2 runs a side): {few}")
    band = f"±{100 * tolerance:g} points"
    beyond = listed(_where(found, lambda n, row: _band(row, tolerance) == _BEYOND))
    across = listed(_where(found, lambda n, row: _band(row, tolerance) == _ACROSS))
    moved, within = f"moved beyond {band} of one request's: {beyond}", f"within {band} of one request's at every N"
    if beyond:
        return Outcome(measured, text, cells, NOT_SIZE if claim.published == "same" else REPRODUCED, moved)
    if across:
        return Outcome(measured, text, cells, TOO_WIDE, f"the interval lies across an edge of {band}: {across}")
    return Outcome(measured, text, cells, REPRODUCED if claim.published == "same" else NOT_REPRODUCED, within)


_INSIDE, _BEYOND, _ACROSS = "inside", "beyond", "across"


def _band(row: pd.Series, tolerance: float) -> str:
    """Where a point's interval of acceptance's change lies against +- tolerance."""
    low, high = finite(row.acceptance_change_ci_low), finite(row.acceptance_change_ci_high)
    if low is None or high is None:
        return NO_INTERVAL
    if high < -tolerance or low > tolerance:
        return _BEYOND
    return _INSIDE if -tolerance <= low and high <= tolerance else _ACROSS


def _change(row: pd.Series | None) -> list[float | None] | None:
    if row is None:
        return None
    return [finite(row.acceptance_change), finite(row.acceptance_change_ci_low), finite(row.acceptance_change_ci_high)]


def _changes_text(changes: dict[int, list[float | None] | None]) -> str:
    def shown(change: list[float | None] | None) -> str:
        if change is None or change[0] is None:
            return "n/a"
        interval = "" if change[1] is None else f" ({100 * change[1]:+.1f} to {100 * change[2]:+.1f})"
        return f"{100 * change[0]:+.1f}{interval} points"

    return ", ".join(f"N={n} {shown(c)}" for n, c in changes.items()) or "n/a"
