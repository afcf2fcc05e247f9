"""The judge of a server that stays up across repeats (kind ``warm_vs_fresh``): its repeats' speeds against the
published ones, faster with each repeat, or faster than fresh runs."""

from __future__ import annotations

import itertools
import statistics
from collections.abc import Mapping
from typing import TYPE_CHECKING

from specbench.claims.claim import NOT_DIRECTION, NOT_MEASURED, NOT_REPRODUCED, NOT_SIZE, REPRODUCED
from specbench.claims.judge_inputs import Outcome, Run, absent, listed, per_task

if TYPE_CHECKING:
    from specbench.claims.claim import Claim


def _rising(values: list[float]) -> bool:
    return all(b > a for a, b in itertools.pairwise(values))


def _speeds_text(speeds: Mapping[int, float]) -> str:
    return ", ".join(f"r{r} {v:.1f}" for r, v in sorted(speeds.items())) + " tok/s" if speeds else "n/a"


def _warm_repeats(claim: Claim, run: Run) -> Outcome:
    """Per-repeat speeds of one task: each within the relative tolerance of the published one."""
    task = claim.tasks[0]
    tolerance = claim.tolerance or 0.0
    speeds, cells = run.speeds(task, claim.condition, claim.temperature)
    needed = range(1, len(claim.published) + 1)
    values = [speeds.get(r) for r in needed]
    text = _speeds_text(speeds)
    if None in values:
        lacking = listed(str(r) for r, v in zip(needed, values, strict=True) if v is None)
        detail = f"needs repeats 1-{needed.stop - 1} of {claim.condition} on {task}; missing {lacking}"
        return Outcome(speeds, text, cells, NOT_MEASURED, detail)
    outside = listed(
        f"r{r} {v:.1f} (published {p:g})"
        for r, v, p in zip(needed, values, claim.published, strict=True)
        if abs(v - p) > tolerance * p
    )
    if not outside:
        return Outcome(speeds, text, cells, REPRODUCED, f"every repeat within ±{tolerance:.0%} of the published speed")
    if _rising(values):
        return Outcome(speeds, text, cells, NOT_SIZE, f"outside ±{tolerance:.0%}: {outside}; faster with each repeat")
    detail = f"outside ±{tolerance:.0%}: {outside}; not faster with each repeat"
    return Outcome(speeds, text, cells, NOT_DIRECTION, detail)


def _warm_rising(claim: Claim, run: Run) -> Outcome:
    """Each warm repeat faster than the one before, per task (the study's "got faster as the same request
    repeated")."""
    measured: dict[str, dict[int, float] | None] = {}
    cells: list[str] = []
    for task in claim.tasks:
        speeds, found = run.speeds(task, claim.condition, claim.temperature)
        measured[task] = speeds if len(speeds) >= 2 else None
        cells += found
    text = per_task({task: "n/a" if m is None else _speeds_text(m) for task, m in measured.items()})
    if None in measured.values():
        return Outcome(measured, text, cells, NOT_MEASURED, absent("two or more warm repeats", measured, claim))
    not_rising = listed(task for task, m in measured.items() if not _rising([v for _, v in sorted(m.items())]))
    if not not_rising:
        return Outcome(measured, text, cells, REPRODUCED, "each repeat faster than the one before")
    return Outcome(measured, text, cells, NOT_REPRODUCED, f"not each repeat faster than the one before on {not_rising}")


def _warm_faster(claim: Claim, run: Run) -> Outcome:
    """Every warm repeat from the second on faster than every fresh run, per task."""
    measured: dict[str, dict[str, float] | None] = {}
    behind: list[str] = []
    cells: list[str] = []
    for task in claim.tasks:
        warm, warm_cells = run.speeds(task, claim.condition, claim.temperature)
        fresh, fresh_cells = run.speeds(task, claim.fresh, claim.temperature)
        cells += warm_cells + fresh_cells
        if len(warm) < 2 or not fresh:
            measured[task] = None
            continue
        measured[task] = {"warm": statistics.median(warm.values()), "fresh": statistics.median(fresh.values())}
        later = [v for r, v in warm.items() if r != min(warm)]
        if min(later) <= max(fresh.values()):
            behind.append(task)
    text = "; ".join(
        f"{task} n/a" if m is None else f"{task} warm {m['warm']:.1f} vs fresh {m['fresh']:.1f} tok/s (median)"
        for task, m in measured.items()
    )
    missing = listed(task for task, m in measured.items() if m is None)
    if missing:
        detail = f"needs at least two {claim.condition} repeats and a {claim.fresh} run on {missing}"
        return Outcome(measured, text, cells, NOT_MEASURED, detail)
    if not behind:
        return Outcome(measured, text, cells, REPRODUCED, "every warm repeat after the first beats every fresh run")
    detail = f"not every warm repeat after the first beats every fresh run on {listed(behind)}"
    return Outcome(measured, text, cells, NOT_REPRODUCED, detail)


def judge_warm(claim: Claim, run: Run) -> Outcome:
    if claim.published == "faster each repeat":
        return _warm_rising(claim, run)
    if claim.published == "faster":
        return _warm_faster(claim, run)
    return _warm_repeats(claim, run)
