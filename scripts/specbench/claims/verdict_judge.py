"""The judge of a verdict word (kind ``verdict``): the all-runs rule's word per task or condition, and where the
claim says "slightly" or "much", the multiplier against that word's size band."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, NamedTuple

from specbench.analysis.verdict_rule import TOO_FEW_RUNS as RULE_TOO_FEW
from specbench.claims.claim import (
    NOT_DIRECTION,
    NOT_MEASURED,
    NOT_REPRODUCED,
    NOT_SIZE,
    REPRODUCED,
    TOO_FEW_RUNS,
    TOO_WIDE,
)
from specbench.claims.judge_inputs import METRICS, Outcome, Run, absent, finite, listed, per_task, size_text
from specbench.claims.sizes_judge import FEW_RUNS_DETAIL, Sizes, across_detail, sizes_against

if TYPE_CHECKING:
    from specbench.claims.claim import Claim


def judge_verdict(claim: Claim, run: Run) -> Outcome:
    """Per task (per condition when the claim names several; per condition and task when both are several)."""
    one_task = len(claim.tasks) == 1
    one_condition = len(claim.conditions) == 1
    if one_condition:
        every = "task"
    elif one_task:
        every = "condition"
    else:
        every = "condition and task"
    words: dict[str, str | None] = {}
    multipliers: dict[str, float | None] = {}
    shown: dict[str, str] = {}
    cells: list[str] = []
    for condition in claim.conditions:
        for task in claim.tasks:
            key = f"{condition} {task}"
            if one_condition:
                key = task
            elif one_task:
                key = condition
            row = run.row("summary", task=task, condition=condition, temperature=claim.temperature)
            words[key] = None if row is None else row["verdict"]
            speedup = multipliers[key] = None if row is None else finite(row["speedup"])
            shown[key] = (words[key] or "n/a") + ("" if speedup is None else f" ({speedup:.2f}x)")
            cells += [] if row is None else list(row["cells"])
    text = per_task(shown)
    published = claim.published
    word = published.removeprefix("not ")

    def outcome(verdict: str, detail: str) -> Outcome:
        return Outcome(words, text, cells, verdict, detail)

    if None in words.values():
        return outcome(NOT_MEASURED, absent("verdict", words, claim))
    if claim.size and None in multipliers.values():
        return outcome(NOT_MEASURED, absent("multiplier", multipliers, claim))
    few = listed(key for key, v in words.items() if v == RULE_TOO_FEW)
    size = _word_size(claim, run, multipliers) if claim.size else None
    if size and size.sizes.apart and (few or size.sizes.point_only):  # a size miss with too few runs, said so
        few_beside = f"; too few runs for the all-runs rule on {few}" if few else ""
        return outcome(NOT_SIZE, size.outside() + size.few_beside() + few_beside)
    if few:
        return outcome(TOO_FEW_RUNS, f"{FEW_RUNS_DETAIL}: {few}")
    if published.startswith("not "):
        hit = listed(key for key, v in words.items() if v == word)
        if hit:
            return outcome(NOT_DIRECTION, f"'{word}' by the all-runs rule on {hit}")
        return outcome(REPRODUCED, f"no {every} is '{word}' by the all-runs rule")
    differing = listed(f"{key} {v}" for key, v in words.items() if v != published)
    if published == "none" and differing:
        return outcome(NOT_REPRODUCED, f"a verdict by the all-runs rule on {differing}")
    if differing:
        return outcome(NOT_DIRECTION, f"not '{published}' by the all-runs rule on {differing}")
    rule = f"'{published}' by the all-runs rule on every {every}"
    if size is None:
        return outcome(REPRODUCED, rule)
    if size.sizes.apart:
        return outcome(NOT_SIZE, f"{rule}, but {size.outside()}")
    if size.sizes.across:
        return outcome(TOO_WIDE, f"{rule}, but {across_detail(size.band, size.sizes.across)}")
    if size.sizes.unsure:
        return outcome(TOO_FEW_RUNS, f"{rule}, but no 95 % interval (2 runs a side) for its size: {size.band}")
    return outcome(REPRODUCED, f"{rule}, and within {size.band} by its 95 % interval")


class _WordSize(NamedTuple):
    """A verdict's size band (as display text) and each task's multiplier against it."""

    band: str
    sizes: Sizes

    def outside(self) -> str:
        """The tasks whose multiplier lies outside the band, named."""
        return f"outside {self.band}: {listed(self.sizes.apart.values())}"

    def few_beside(self) -> str:
        """The tasks judged by their value alone, for want of runs for an interval ('' where none)."""
        points = self.sizes.point_only
        return f"; too few runs for a 95 % interval on {listed(points)} (2 a side): the value alone" if points else ""


def _word_size(claim: Claim, run: Run, multipliers: Mapping[str, Any]) -> _WordSize:
    """Each task's multiplier against the band the claim's word states ("slightly", "much"), by its 95 % interval;
    an edge of the band at 1.0x is the word's side, which the all-runs rule decides, so no interval is held to it."""
    metric = METRICS["speedup"]
    low, high = claim.size or (0.0, math.inf)
    values = {task: float(multipliers[task]) for task in claim.tasks}
    open_band = (-math.inf if low == metric.pivot else low, math.inf if high == metric.pivot else high)
    band = f"the word's size band ({size_text((low, high))})"
    return _WordSize(band, sizes_against(claim, run, metric, values, open_band))
