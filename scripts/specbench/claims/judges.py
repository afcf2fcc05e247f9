"""One judge per claim kind, reading the typed tables of analysis.summaries.tables. Each returns its verdict from a
chain of plain ``if`` rules written in the order of its kind's row in docs/claims.md, so the two read side by side."""

from __future__ import annotations

import itertools
import math
import statistics
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any, NamedTuple

from specbench.analysis.verdict import TOO_FEW_RUNS as RULE_TOO_FEW
from specbench.claims.claim import (
    BACKGROUND,
    CONTRADICTED,
    NOT_COMPARABLE,
    NOT_DIRECTION,
    NOT_MEASURED,
    NOT_REPRODUCED,
    NOT_SEPARATED,
    NOT_SIZE,
    REPRODUCED,
    TOO_FEW_RUNS,
    TOO_WIDE,
)
from specbench.claims.metrics import (
    METRICS,
    Metric,
    Outcome,
    Run,
    absent,
    finite,
    format_published,
    listed,
    per_task,
    side_of,
    size_text,
)
from specbench.claims.thesis_judge import judge_thesis

if TYPE_CHECKING:
    from specbench.claims.claim import Claim

FEW_RUNS_DETAIL = "the all-runs rule needs at least 3 runs a side (1 in 20 by chance; 1 in 2 with 1 vs 1)"


# ---------------------------------------------------------------------------------------------------------------
# speedup, tokens_per_s, acceptance: a number against a band


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


class _Sizes(NamedTuple):
    """Each value's place against the band, by its 95 % interval (by the value itself where the metric has none),
    as display text per key: outside the band, across one of its edges, inside with no interval (too few runs);
    and the keys whose value alone was judged for want of runs."""

    apart: dict[str, str]
    across: dict[str, str]
    unsure: dict[str, str]
    point_only: list[str]


def _sizes(claim: Claim, run: Run, metric: Metric, values: Mapping[str, float], band: tuple[float, float]) -> _Sizes:
    low, high = band
    sizes = _Sizes({}, {}, {}, [])
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


def _across_detail(band: str, across: Mapping[str, str]) -> str:
    """Why an interval across an edge of its band decides nothing, and what would."""
    return f"95 % interval across an edge of {band}: {listed(across.values())}; more runs would tell which side"


def _numeric(claim: Claim, run: Run) -> Outcome:
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
    sizes = _sizes(claim, run, metric, values, (low, high))
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
        return outcome(TOO_WIDE, _across_detail(band, sizes.across))
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
    found = _Sizes({}, {}, {}, [])
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
        sizes = _sizes(replace(claim, temperature=t), run, metric, speeds, band)  # type: ignore[arg-type]
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


# ---------------------------------------------------------------------------------------------------------------
# verdict: the all-runs rule's word


def _verdict(claim: Claim, run: Run) -> Outcome:
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
        return outcome(TOO_WIDE, f"{rule}, but {_across_detail(size.band, size.sizes.across)}")
    if size.sizes.unsure:
        return outcome(TOO_FEW_RUNS, f"{rule}, but no 95 % interval (2 runs a side) for its size: {size.band}")
    return outcome(REPRODUCED, f"{rule}, and within {size.band} by its 95 % interval")


class _WordSize(NamedTuple):
    """A verdict's size band (as display text) and each task's multiplier against it."""

    band: str
    sizes: _Sizes

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
    return _WordSize(band, _sizes(claim, run, metric, values, open_band))


# ---------------------------------------------------------------------------------------------------------------
# identity: outputs against the baseline's (or the condition's own first repeat)


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


def _identity(claim: Claim, run: Run) -> Outcome:
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


# ---------------------------------------------------------------------------------------------------------------
# gsm8k: the scores and the wrong answer


def number(answer: str) -> float | str:
    """An answer as a number where it reads as one ('25,000', '$25000' and '25000.0' are one answer)."""
    text = answer.replace(",", "").replace("$", "").strip()
    try:
        return float(text)
    except ValueError:
        return text


def _gsm8k_text(scored: Any) -> str:
    parts = []
    for r in scored.itertuples():
        wrong = ", ".join(
            f"problem {w['problem']}: {w['extracted'] or 'none'} vs {w['reference']}" for w in r.gsm8k_wrong
        )
        parts.append(f"r{int(r.repeat)} {int(r.gsm8k_correct)}/{int(r.gsm8k_total)}" + (f" ({wrong})" if wrong else ""))
    return "; ".join(parts) or "n/a"


def _other_problems(claim: Claim, asked: list[list[str]]) -> str:
    """The claim's problems (by their reference answers) that some run was not asked, named ('' where none)."""
    other = []
    for p in claim.problems:
        theirs = sorted({refs[p["problem"] - 1] if len(refs) >= p["problem"] else "none" for refs in asked})
        if any(number(r) != number(p["reference"]) for r in theirs):
            other.append(f"problem {p['problem']}'s answer here is {listed(theirs)}, the study's {p['reference']}")
    return listed(other)


def _gsm8k(claim: Claim, run: Run) -> Outcome:
    task = claim.tasks[0]
    score = f"{claim.published}/{claim.total}"
    problem = (claim.wrong or {}).get("problem")
    answer = (claim.wrong or {}).get("answer")
    rows = run.rows("cells", task=task, condition=claim.condition, temperature=claim.temperature)
    scored = rows[rows.gsm8k_total.notna()].sort_values("repeat")
    runs = [
        {
            "repeat": int(r.repeat),
            "correct": int(r.gsm8k_correct),
            "total": int(r.gsm8k_total),
            "wrong": {w["problem"]: w["extracted"] or "none" for w in r.gsm8k_wrong},
        }
        for r in scored.itertuples()
    ]
    text = _gsm8k_text(scored)
    asked = [list(r.gsm8k_references) for r in scored.itertuples()]

    def outcome(verdict: str, detail: str) -> Outcome:
        return Outcome(runs, text, list(rows.cell_file), verdict, detail)

    if not runs:
        where = f"{claim.condition} at temperature {claim.temperature:g}"
        return outcome(NOT_MEASURED, f"no scored {task} run for {where} in this run's tables")
    totals = sorted({r["total"] for r in runs})
    if totals != [claim.total]:
        scored_on = "/".join(map(str, totals))
        return outcome(NOT_MEASURED, f"this run scored {scored_on} problems, the claim is about {claim.total}")
    if claim.problems and not all(asked):
        return outcome(NOT_MEASURED, "this run's cells do not record which problems were asked")
    other = _other_problems(claim, asked)
    if other:
        return outcome(NOT_COMPARABLE, f"other problems: {other}")
    counted = "".join(f", problem {p['problem']} the one whose answer is {p['reference']}" for p in claim.problems)
    matching = [r for r in runs if r["correct"] == claim.published]
    right = [r for r in matching if problem is None or problem in r["wrong"]]
    exact = [r for r in right if not answer or number(r["wrong"][problem]) == number(answer)]
    if len(exact) == len(runs):
        answers = listed(sorted({r["wrong"][problem] for r in right})) if problem else ""
        wrong_one = f", problem {problem} wrong ({answers})" if problem else ""
        return outcome(REPRODUCED, f"every run scored {score}{wrong_one}{counted}")
    if len(right) == len(runs):
        other = listed(f"{r['wrong'][problem]} in r{r['repeat']}" for r in right if r not in exact)
        return outcome(
            NOT_REPRODUCED, f"every run scored {score} with problem {problem} wrong, but answered {other}, not {answer}"
        )
    in_some = f"; problem {problem} wrong in {len(right)}" if problem else ""
    return outcome(NOT_REPRODUCED, f"{len(matching)} of {len(runs)} run(s) scored {score}{in_some}")


# ---------------------------------------------------------------------------------------------------------------
# warm_vs_fresh: a server that stays up across repeats


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


def _warm(claim: Claim, run: Run) -> Outcome:
    if claim.published == "faster each repeat":
        return _warm_rising(claim, run)
    if claim.published == "faster":
        return _warm_faster(claim, run)
    return _warm_repeats(claim, run)


# ---------------------------------------------------------------------------------------------------------------
# ordering: pairs of tasks (or conditions), each decided by its 95 % intervals


def _ranked(values: Mapping[str, float | None], fmt: Callable[[float], str]) -> str:
    known = sorted(((v, k) for k, v in values.items() if v is not None), key=lambda item: -item[0])
    if not known:
        return "n/a"
    unknown = listed(k for k, v in values.items() if v is None)
    return " > ".join(f"{k} {fmt(v)}" for v, k in known) + (f" (n/a: {unknown})" if unknown else "")


def _members(claim: Claim) -> list[tuple[str, list[tuple[str, str, str]]]]:
    """The groups an ordering ranks: per condition its tasks, or the one task's conditions; each member as (name,
    task, condition)."""
    if claim.over == "tasks":
        return [(c, [(t, t, c) for t in claim.tasks]) for c in claim.conditions]
    task = claim.tasks[0]
    return [(task, [(c, task, c) for c in claim.conditions])]


class _Measured:
    """One group's values and 95 % intervals at one temperature."""

    def __init__(self, claim: Claim, run: Run, members: list[tuple[str, str, str]], temperature: float) -> None:
        metric = METRICS[claim.metric]
        self.metric = metric
        self.values: dict[str, float | None] = {}
        self.bounds: dict[str, tuple[float, float] | None] = {}
        self.cells: list[str] = []
        for name, task, condition in members:
            self.values[name], found = run.value(metric, task, condition, temperature)
            self.bounds[name] = run.interval(metric, task, condition, temperature)
            self.cells += found

    def order(self, a: str, b: str) -> int:
        """+1 where a is above b with intervals apart (values apart, for a metric without intervals), -1 below, 0
        where they are not separated."""
        if self.metric.interval is None:
            return side_of(self.values[a], self.values[b])
        low_a, high_a = self.bounds[a]
        low_b, high_b = self.bounds[b]
        if low_a > high_b:
            return 1
        if low_b > high_a:
            return -1
        return 0

    def lacking(self) -> tuple[list[str], list[str]]:
        """Members without a value; members without an interval (where the metric has one)."""
        no_value = [m for m, v in self.values.items() if v is None]
        no_interval = [m for m, b in self.bounds.items() if b is None and self.metric.interval is not None]
        return no_value, no_interval


def _tier_pairs(claim: Claim) -> list[tuple[str, str]]:
    """(upper, lower) for every pair across the published tiers."""
    pairs = []
    for i, upper in enumerate(claim.published):
        lower = [m for tier in claim.published[i + 1 :] for m in tier]
        pairs += list(itertools.product(upper, lower))
    return pairs


def _ordering_verdict(reversed_: list[str], unseparated: list[str], judged: int, what: str) -> tuple[str, str]:
    """Contradicted by any separated pair in the other order; not separated while any pair is; else reproduced."""
    kept = judged - len(reversed_) - len(unseparated)
    summary = f"{kept} of {judged} pairs ordered as {what} with 95 % intervals apart"
    if unseparated:
        summary += f"; not separated (intervals overlap): {listed(unseparated)}"
    if reversed_:
        return CONTRADICTED, f"{summary}; in the other order, intervals apart: {listed(reversed_)}"
    if unseparated:
        return NOT_SEPARATED, summary
    return REPRODUCED, summary


class _Gaps:
    """The members an ordering's groups lack a value or an 95 % interval for, and the verdict they make (not
    measured, too few runs): the tail every ordering judge shares."""

    def __init__(self) -> None:
        self.no_value: list[str] = []
        self.no_interval: list[str] = []

    def add(self, prefix: str, *groups: _Measured) -> bool:
        """Note what the groups (one member set, at one or more temperatures) lack, each member named after
        ``prefix``; True where some member lacks something, so its pairs cannot be judged."""
        lacking = False
        for group in groups:
            no_value, no_interval = group.lacking()
            self.no_value += [prefix + m for m in no_value]
            self.no_interval += [prefix + m for m in no_interval]
            lacking = lacking or bool(no_value or no_interval)
        return lacking

    def outcome(self, claim: Claim, at: str, measured: Any, text: str, cells: list[str]) -> Outcome | None:
        """Not measured where a member lacks a value, too few runs where one lacks an interval; else None."""
        if self.no_value:
            detail = f"no {claim.metric} for {listed(self.no_value)} at temperature {at}"
            return Outcome(measured, text, cells, NOT_MEASURED, detail)
        if self.no_interval:
            detail = f"no 95 % interval for {listed(dict.fromkeys(self.no_interval))} (it needs 2 runs a side)"
            return Outcome(measured, text, cells, TOO_FEW_RUNS, detail)
        return None


def _ordering(claim: Claim, run: Run) -> Outcome:
    """Each published pair (upper tier above lower) per group: ordered, reversed, or not separated."""
    if claim.versus_temperature is not None:
        return _same_shape(claim, run)
    groups = _members(claim)
    several = len(groups) > 1
    measured: dict[str, dict[str, float | None]] = {}
    parts: list[str] = []
    cells: list[str] = []
    gaps = _Gaps()
    reversed_: list[str] = []  # pairs in the other order, intervals apart
    unseparated: list[str] = []  # pairs whose intervals overlap
    for label, members in groups:
        group = _Measured(claim, run, members, claim.temperature)
        prefix = f"{label}: " if several else ""
        measured[label] = group.values
        parts.append(prefix + _ranked(group.values, group.metric.fmt))
        cells += group.cells
        if gaps.add(prefix, group):
            continue
        for a, b in _tier_pairs(claim):
            order = group.order(a, b)
            pair = f"{prefix}{a} vs {b}"
            if order < 0:
                reversed_.append(pair)
            elif order == 0:
                unseparated.append(pair)
    text = "; ".join(parts)
    lacking = gaps.outcome(claim, f"{claim.temperature:g}", measured, text, cells)
    if lacking:
        return lacking
    judged = len(_tier_pairs(claim)) * len(groups)
    verdict, detail = _ordering_verdict(reversed_, unseparated, judged, "published")
    return Outcome(measured, text, cells, verdict, detail)


def _same_shape(claim: Claim, run: Run) -> Outcome:
    """Per condition, every pair of tasks separated at the reference temperature, ordered the same way at this
    one; pairs the reference does not separate are left out and named."""
    versus = claim.versus_temperature
    measured: dict[str, dict[float, dict[str, float | None]]] = {}
    parts: list[str] = []
    cells: list[str] = []
    gaps = _Gaps()
    reversed_: list[str] = []
    unseparated: list[str] = []
    left_out: list[str] = []  # pairs the reference temperature does not separate
    judged = 0
    for label, members in _members(claim):
        here = _Measured(claim, run, members, claim.temperature)
        there = _Measured(claim, run, members, versus)
        measured[label] = {claim.temperature: here.values, versus: there.values}
        fmt = here.metric.fmt
        parts.append(
            f"{label}: {_ranked(here.values, fmt)} at {claim.temperature:g} "
            f"vs {_ranked(there.values, fmt)} at {versus:g}"
        )
        cells += here.cells + there.cells
        if gaps.add(f"{label}/", here, there):
            continue
        for a, b in itertools.combinations(claim.tasks, 2):
            pair = f"{label} {a} vs {b}"
            reference = there.order(a, b)
            if reference == 0:
                left_out.append(pair)
                continue
            judged += 1
            order = here.order(a, b)
            if order == -reference:
                reversed_.append(pair)
            elif order == 0:
                unseparated.append(pair)
    text = "; ".join(parts)
    lacking = gaps.outcome(claim, f"{claim.temperature:g} or {versus:g}", measured, text, cells)
    if lacking:
        return lacking
    left = f"; left out, not separated at temperature {versus:g}: {listed(left_out)}" if left_out else ""
    if not judged:
        return Outcome(measured, text, cells, NOT_SEPARATED, f"no pair separated at temperature {versus:g}{left}")
    verdict, detail = _ordering_verdict(reversed_, unseparated, judged, f"at temperature {versus:g}")
    return Outcome(measured, text, cells, verdict, detail + left)


def _background(claim: Claim, run: Run) -> Outcome:
    return Outcome(None, "n/a", [], BACKGROUND, "quoted by the study as background; no run here measures it")


JUDGES: dict[str, Callable[[Claim, Run], Outcome]] = {
    "speedup": _numeric,
    "tokens_per_s": _numeric,
    "acceptance": _numeric,
    "verdict": _verdict,
    "identity": _identity,
    "gsm8k": _gsm8k,
    "warm_vs_fresh": _warm,
    "ordering": _ordering,
    "background": _background,
    "thesis": judge_thesis,
}
