"""The judge of a number against a band (kinds ``speedup``, ``tokens_per_s``, ``acceptance``; ``flat`` speeds):
each value by its 95 % interval, inside, outside or across an edge of the published band (docs/claims.md, "Sizes")."""

from __future__ import annotations

import statistics
from collections.abc import Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, NamedTuple

from specbench.analysis.verdict_rule import TOO_FEW_RUNS as RULE_TOO_FEW
from specbench.claims.claim import NOT_DIRECTION, NOT_MEASURED, NOT_SIZE, REPRODUCED, TOO_FEW_RUNS, TOO_WIDE
from specbench.claims.judge_inputs import (
    METRICS,
    Metric,
    Outcome,
    Run,
    absent,
    format_published,
    listed,
    per_task,
    side_of,
)

if TYPE_CHECKING:
    from specbench.claims.claim import Claim


FEW_RUNS_DETAIL = "the all-runs rule needs at least 3 runs a side (1 in 20 by chance; 1 in 2 with 1 vs 1)"


def tolerance_band(claim: Claim, metric: Metric) -> tuple[float, float]:
    """The published value or range, widened by the tolerance (relative or absolute), within the metric's limits."""
    tolerance = claim.tolerance or 0.0
    if isinstance(claim.published, list):
        low, high = claim.published
    else:
        low = high = claim.published
    if metric.relative:
        low *= 1 - tolerance
        high *= 1 + tolerance
    else:
        low -= tolerance
        high += tolerance
    return max(low, metric.limits[0]), min(high, metric.limits[1])


def _published_side(claim: Claim, metric: Metric) -> int:
    """+1 / -1 where the published value (or all of its range) lies above / below the metric's pivot, else 0."""
    if metric.pivot is None:
        return 0
    published = claim.published if isinstance(claim.published, list) else [claim.published]
    sides = {side_of(value, metric.pivot) for value in published}
    return sides.pop() if len(sides) == 1 else 0


def _numeric_values(claim: Claim, run: Run, metric: Metric) -> tuple[dict[str, float | None], list[str], list[str]]:
    """Per task (per run, for a cells metric) the measured value; the cells; for acceptance, the counts behind it."""
    values: dict[str, float | None] = {}
    cells: list[str] = []
    counts: list[str] = []
    for task in claim.tasks:
        prefix = "" if len(claim.tasks) == 1 else f"{task} "
        if metric.table == "cells":
            runs, found = run.speeds(task, claim.condition, claim.temperature, metric.column)
            for repeat, value in runs.items():
                values[f"{prefix}r{repeat}"] = value
            if not runs:
                values[task] = None
        else:
            values[task], found = run.value(metric, task, claim.condition, claim.temperature)
        cells += found
        row = run.row(metric.table, task=task, condition=claim.condition, temperature=claim.temperature)
        if metric.table == "acceptance" and row is not None:
            per_run = row["drafted"] / row["runs"]
            accepted = f"{row['accepted']} of {row['drafted']} drafted tokens accepted"
            counts.append(f"{prefix}{accepted}, {per_run:.0f} drafted per run")
    return values, cells, counts


def _rule_words(claim: Claim, run: Run) -> dict[str, str | None]:
    """The all-runs rule's word per task for the claim's condition (None where the task has no summary row)."""
    words: dict[str, str | None] = {}
    for task in claim.tasks:
        row = run.row("summary", task=task, condition=claim.condition, temperature=claim.temperature)
        words[task] = None if row is None else row["verdict"]
    return words


# Where a 95 % interval lies against a band (the equivalence rule, docs/claims.md "Sizes")
INSIDE, OUTSIDE, ACROSS = "inside", "outside", "across an edge"


def place(bounds: tuple[float, float], band: tuple[float, float]) -> str:
    """An interval against a band: wholly inside it, wholly outside it, or across one of its edges. Narrowing the
    interval around its centre moves it only from across an edge to the side its centre lies on."""
    low, high = band
    if bounds[1] < low or bounds[0] > high:
        return OUTSIDE
    if low <= bounds[0] and bounds[1] <= high:
        return INSIDE
    return ACROSS


class Sizes(NamedTuple):
    """Each value's place against the band, by its 95 % interval (by the value itself where the metric has none),
    as display text per key: outside the band, across one of its edges, inside with no interval (too few runs);
    and the keys whose value alone was judged for want of runs."""

    apart: dict[str, str]
    across: dict[str, str]
    unsure: dict[str, str]
    point_only: list[str]


def sizes_against(
    claim: Claim, run: Run, metric: Metric, values: Mapping[str, float], band: tuple[float, float]
) -> Sizes:
    """Each value's place against ``band`` at the claim's condition and temperature (see Sizes)."""
    low, high = band
    sizes = Sizes({}, {}, {}, [])
    for key, value in values.items():
        inside = low <= value <= high
        bounds = run.interval(metric, key, claim.condition, claim.temperature) if metric.interval else None
        shown = f"{key} {metric.fmt(value)}"
        if bounds is not None:
            shown += f" [{metric.fmt(bounds[0])}-{metric.fmt(bounds[1])}]"
        if metric.interval is None:  # per run, or a metric without an interval: the values themselves
            if not inside:
                sizes.apart[key] = shown
        elif bounds is None:  # too few runs for an interval: the value alone, said so
            sizes.point_only.append(key)
            (sizes.unsure if inside else sizes.apart)[key] = shown
        elif place(bounds, band) == OUTSIDE:
            sizes.apart[key] = shown
        elif place(bounds, band) == ACROSS:
            sizes.across[key] = shown
    return sizes


def across_detail(band: str, across: Mapping[str, str]) -> str:
    """Why an interval across an edge of its band decides nothing, and what would."""
    return f"95 % interval across an edge of {band}: {listed(across.values())}; more runs would tell which side"


def judge_numeric(claim: Claim, run: Run) -> Outcome:
    """speedup, tokens_per_s, acceptance: every task's value (every run's, for a cells metric) against the band, by
    its 95 % interval where it has one; with ``side``, also that word by the all-runs rule on every task."""
    if claim.published == "flat":
        return _flat(claim, run)
    metric = METRICS[claim.metric or claim.kind]
    values, cells, counts = _numeric_values(claim, run, metric)
    text = per_task({key: "n/a" if v is None else metric.fmt(v) for key, v in values.items()})
    if counts:
        text += f" ({'; '.join(counts)})"
    missing = absent("value", values, claim)
    if missing:
        return Outcome(values, text, cells, NOT_MEASURED, missing)

    low, high = tolerance_band(claim, metric)
    tolerance = claim.tolerance or 0.0
    spread = f"±{tolerance:.0%}" if metric.relative else f"±{metric.fmt(tolerance)}"
    band = f"{metric.fmt(low)} to {metric.fmt(high)} (published {format_published(claim)}, {spread})"
    sizes = sizes_against(claim, run, metric, values, (low, high))
    side = _published_side(claim, metric)
    words = _rule_words(claim, run) if claim.side else {}
    few = listed(task for task, word in words.items() if word == RULE_TOO_FEW)
    not_side = listed(f"{task} {word or 'n/a'}" for task, word in words.items() if word != claim.side)
    few_beside = "".join(
        [
            f"; too few runs for a 95 % interval on {listed(sizes.point_only)} (2 a side): the value alone"
            if sizes.point_only
            else "",
            f"; too few runs for the all-runs rule on {few}" if few else "",
        ]
    )

    def outcome(verdict: str, detail: str) -> Outcome:
        return Outcome(values, text, cells, verdict, detail)

    def miss() -> Outcome:  # outside the band: on the other side of the pivot, or the size
        outside = f"outside {band}: {listed(sizes.apart.values())}"
        if any(side and side_of(values[key], metric.pivot) != side for key in sizes.apart):
            return outcome(NOT_DIRECTION, f"{outside}; not on the published side of {metric.pivot_text}{few_beside}")
        return outcome(NOT_SIZE, outside + few_beside)

    if sizes.apart and few_beside:  # a miss with too few runs is still a miss, said so
        return miss()
    if few:
        return outcome(TOO_FEW_RUNS, f"{FEW_RUNS_DETAIL}: {few}")
    if not_side:
        return outcome(NOT_DIRECTION, f"not '{claim.side}' by the all-runs rule ({not_side}); that side is the point")
    if sizes.apart:
        return miss()
    if sizes.across:
        return outcome(TOO_WIDE, across_detail(band, sizes.across))
    if sizes.unsure:
        detail = f"within {band}, but no 95 % interval (it needs 2 runs a side): {listed(sizes.unsure.values())}"
        return outcome(TOO_FEW_RUNS, detail)
    rule = f", and '{claim.side}' by the all-runs rule" if claim.side else ""
    by = " by its 95 % interval" if metric.interval else ""
    return outcome(REPRODUCED, f"within {band}{by}{rule}")


def _flat(claim: Claim, run: Run) -> Outcome:
    """tokens_per_s ``flat``: at the claim's temperature and at ``versus_temperature``, every task's mean speed
    within the relative tolerance of that temperature's mean over the tasks, by its 95 % interval as a size is."""
    metric = METRICS["tokens_per_s"]
    tolerance = claim.tolerance or 0.0
    measured: dict[float, dict[str, float | None]] = {}
    cells: list[str] = []
    parts: list[str] = []
    found = Sizes({}, {}, {}, [])
    missing: list[str] = []
    for t in (claim.temperature, claim.versus_temperature):
        speeds: dict[str, float | None] = {}
        for task in claim.tasks:
            speeds[task], own = run.value(metric, task, claim.condition, t)
            cells += own
        measured[t] = speeds
        parts.append(f"at {t:g}: " + per_task({k: "n/a" if v is None else metric.fmt(v) for k, v in speeds.items()}))
        known = [v for v in speeds.values() if v is not None]
        missing += [f"{task} at {t:g}" for task, v in speeds.items() if v is None]
        if len(known) < len(speeds):
            continue
        centre = statistics.fmean(known)
        band = (centre * (1 - tolerance), centre * (1 + tolerance))
        sizes = sizes_against(replace(claim, temperature=t), run, metric, speeds, band)  # type: ignore[arg-type]
        shown = f"at {t:g} (within {metric.fmt(band[0])} to {metric.fmt(band[1])}, the tasks' mean ±{tolerance:.0%})"
        for into, got in zip(found[:3], sizes[:3], strict=True):
            into.update({f"{key} at {t:g}": f"{value} {shown}" for key, value in got.items()})
        found.point_only.extend(f"{key} at {t:g}" for key in sizes.point_only)
    text = "; ".join(parts)
    if missing:
        return Outcome(measured, text, cells, NOT_MEASURED, f"no {claim.condition} speed for {listed(missing)}")
    few = f"; too few runs for a 95 % interval on {listed(found.point_only)}" if found.point_only else ""
    if found.apart:
        return Outcome(measured, text, cells, NOT_SIZE, f"not flat: {listed(found.apart.values())} apart{few}")
    if found.across:
        detail = f"95 % interval across an edge of the band: {listed(found.across.values())}; more runs would tell"
        return Outcome(measured, text, cells, TOO_WIDE, detail)
    if found.unsure:
        detail = f"within the band, but no 95 % interval (2 runs a side): {listed(found.unsure.values())}"
        return Outcome(measured, text, cells, TOO_FEW_RUNS, detail)
    at = " and ".join(f"{t:g}" for t in measured)
    detail = f"every task within ±{tolerance:.0%} of the tasks' mean at {at}, by its 95 % interval"
    return Outcome(measured, text, cells, REPRODUCED, detail)
