"""Tables built from a claim itself that its judge must read as reproduced, as not reproduced (each with the verdict
expected) and, for an ordering, as not separated: one generator per claim kind in ``COUNTERFACTUALS``, so a new kind
adds one entry here (docs/claims.md, "Every judge can fail"). The cell-row builders the claim tests share are here
too: every table is made by the pipeline's own summaries from hand-made cell rows."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import pandas as pd

from specbench.analysis.cell_table import frame_of
from specbench.analysis.summaries import Summaries
from specbench.claims.claim import (
    CONTRADICTED,
    NOT_COMPARABLE,
    NOT_DIRECTION,
    NOT_REPRODUCED,
    NOT_SEPARATED,
    NOT_SIZE,
    REPRODUCED,
    TOO_FEW_RUNS,
    TOO_WIDE,
    Claim,
)
from specbench.claims.judge_inputs import METRICS
from specbench.claims.sizes_judge import tolerance_band
from support.config import load_config
from support.load_points import point_rows
from support.paths import REPO

CONFIG = load_config([REPO / "config" / "config.yaml"])
BASELINE = CONFIG["baseline"]
Key = tuple[str, str, float]
Tables = Mapping[str, pd.DataFrame]  # each summary made when a judge first reads it

# --------------------------------------------------------------------------------------------------------------
# Builders: cell rows by hand, the typed table and its summaries from them with the pipeline's own code


def cell_file(task: str, condition: str, temperature: float, repeat: int) -> str:
    return f"results/cells/{task}/{condition}/t{temperature}/r{repeat}.json"


STUDY_PROBLEMS = ["18", "3", "70000"]  # GSM8K test problems 0-2, the config's; the study names the third by 70,000


def scored(
    correct: int,
    total: int = 3,
    wrong: tuple[tuple[int, str, str], ...] = (),
    references: list[str] | None = None,
) -> dict[str, Any]:
    """A cell's GSM8K score columns: wrong is (problem, extracted, reference) per wrong answer; the references of
    the problems asked (the study's three by default, where there are three)."""
    asked = references if references is not None else (STUDY_PROBLEMS if total == 3 else [str(p) for p in range(total)])
    return {
        "gsm8k_correct": correct,
        "gsm8k_total": total,
        "gsm8k_wrong": [{"problem": p, "extracted": a, "reference": r} for p, a, r in wrong],
        "gsm8k_references": asked,
    }


def make_rows(
    speeds: Mapping[Key, list[float]],
    *,
    checks: Mapping[Key, list[dict[str, Any]]] | None = None,
    drafts: Mapping[Key, tuple[int, int] | list[tuple[int, int]]] | None = None,
    tokens: Mapping[tuple[str, str, int], list[int]] | None = None,
    positions: Mapping[Key, tuple[int, list[int]]] | None = None,
) -> list[dict[str, Any]]:
    """One row per cell: speeds per (task, condition, temperature); optional GSM8K scores and (drafted, accepted)
    per cell (one pair for every repeat, or a list of pairs, one per repeat), token ids per (task, condition,
    repeat) at temperature 0, and the server's counts by draft position per cell (verification steps; per position
    the steps that accepted more than it: analysis.draft_positions)."""
    rows = []
    for (task, condition, temperature), values in speeds.items():
        counts = (drafts or {}).get((task, condition, temperature), (0, 0))
        per_repeat = counts if isinstance(counts, list) else [counts] * len(values)
        scores = (checks or {}).get((task, condition, temperature), [])
        for repeat, value in enumerate(values, start=1):
            drafted, accepted = per_repeat[repeat - 1]
            warm = "-warm" in condition
            steps, per_position = (positions or {}).get((task, condition, temperature), (None, []))
            rows.append(
                {
                    "task": task,
                    "condition": condition,
                    "temperature": temperature,
                    "repeat": repeat,
                    "tokens_per_s": float(value),
                    "predicted_n": 400,
                    "draft_n": drafted,
                    "draft_n_accepted": accepted,
                    "acceptance_rate": accepted / drafted if drafted else None,
                    "tokens": (tokens or {}).get((task, condition, repeat), []) if temperature == 0.0 else [],
                    **(scores[repeat - 1] if repeat <= len(scores) else {}),
                    "cell_file": cell_file(task, condition, temperature, repeat),
                    "server_pid": 1000 + len(rows),
                    "server_shared": warm,
                    "server_position": repeat if warm else 1,
                    "verification_steps": steps,
                    "accepted_per_position": list(per_position),
                    "counted_accepted": None if steps is None else sum(per_position),
                }
            )
    return rows


def make_tables(speeds: Mapping[Key, list[float]], **kwargs: Any) -> Tables:
    return Summaries(frame_of(make_rows(speeds, **kwargs), BASELINE), BASELINE)


def sequence(n: int, start: int = 0) -> list[int]:
    return [start + i for i in range(n)]


# --------------------------------------------------------------------------------------------------------------
# What a generator returns


@dataclass
class Counterfactuals:
    """A table the claim must read as reproduced; tables it must read as failing, each with the verdict it must get;
    for an ordering, a table it must read as not separated."""

    reproduced: Tables
    failing: list[tuple[str, Tables]] = field(default_factory=list)
    not_separated: Tables | None = None


OFF_SPEED = 126.0
OFF_RUNS = [125.8, 126.0, 126.2]  # tight, so that 0.99x is 'slower' by the all-runs rule


def temperatures(claim: Claim) -> list[float]:
    """Where the claim is judged: both readings where the text gives none, and a reference temperature."""
    if claim.unstated:
        return [0.0, 1.0]
    return [claim.temperature] + ([claim.versus_temperature] if claim.versus_temperature is not None else [])


def _runs(multiplier: float, spread: float = 0.1) -> list[float]:
    """Three runs at a multiplier of OFF_SPEED; ``spread`` apart in tok/s (a fraction of the speed above 1)."""
    centre = OFF_SPEED * multiplier
    step = spread if spread < 1 else centre * (spread - 1)
    return [centre - step, centre, centre + step]


def _with_off(claim: Claim, speeds: dict[Key, list[float]], tasks: Any = None) -> dict[Key, list[float]]:
    for task in tasks or claim.tasks:
        for t in temperatures(claim):
            speeds.setdefault((task, BASELINE, t), list(OFF_RUNS))
    return speeds


def _wide(centre: float, side: str | None = None) -> list[float]:
    """Three runs spread by 30 % of ``centre`` a step, so far apart that their interval is wider than any band; with
    a side, all on that side of ``centre`` (so that the all-runs rule still gives it against tight 'off' runs)."""
    step = 0.3 * centre
    if side == "faster":
        return [centre, centre + step, centre + 2 * step]
    if side == "slower":
        return [centre - 2 * step, centre - step, centre]
    return [centre - step, centre, centre + step]


def _multipliers(claim: Claim, per_task: Callable[[str], float], runs: int = 3, wide: bool = False) -> Tables:
    """The claim's condition at a multiplier per task, three tight runs against three of 'off' (``runs`` of each;
    ``wide``: three runs spread as ``_wide``)."""
    speeds: dict[Key, list[float]] = {}
    for task in claim.tasks:
        for t in temperatures(claim):
            speeds[(task, BASELINE, t)] = list(OFF_RUNS)[:runs]
            for condition in claim.conditions:
                centre = OFF_SPEED * per_task(task)
                speeds[(task, condition, t)] = _wide(centre, claim.side) if wide else _runs(per_task(task))[:runs]
    return make_tables(speeds)


# --------------------------------------------------------------------------------------------------------------
# One generator per kind


def _numeric_points(claim: Claim) -> tuple[float, float, float | None]:
    """A value inside the band, one outside it on the published side of the pivot (or above, with no pivot), and one
    on the other side of the pivot (None where the metric has none or the published figure sits on it)."""
    metric = METRICS[claim.metric or claim.kind]
    low, high = tolerance_band(claim, metric)
    published = claim.published if isinstance(claim.published, list) else [claim.published, claim.published]
    inside = sum(published) / 2
    pivot = metric.pivot
    if claim.side and pivot is not None and inside == pivot:  # 1.00x 'slower': just on its side
        inside = pivot * (0.99 if claim.side == "slower" else 1.01)
    margin = max(0.05 * max(abs(high), 1e-9), 0.01)
    if metric.table in ("cells", "positions"):  # whole tokens
        margin = max(margin, 1.0)
    below, above = low - margin, high + margin
    below_fits = below >= metric.limits[0] and (pivot is None or (below < pivot) == (inside < pivot))
    above_fits = above <= metric.limits[1] and (pivot is None or (above > pivot) == (inside > pivot))
    outside = below if below_fits and not above_fits else above
    if not (below_fits or above_fits):
        raise ValueError(f"{claim.id}: no value outside the band on the published side")
    if pivot is None or inside == pivot:
        return inside, outside, None
    across = pivot * pivot / inside if metric.relative else 2 * pivot - inside
    return inside, outside, across


def _speedup(claim: Claim) -> Counterfactuals:
    inside, outside, across = _numeric_points(claim)
    result = Counterfactuals(
        reproduced=_multipliers(claim, lambda task: inside),
        failing=[(NOT_SIZE, _multipliers(claim, lambda task: outside))],
    )
    if across is not None:
        result.failing.append((NOT_DIRECTION, _multipliers(claim, lambda task: across)))
    if claim.side:  # one run against one: the all-runs rule means nothing
        result.failing.append((TOO_FEW_RUNS, _multipliers(claim, lambda task: inside, runs=1)))
    result.failing += [
        (TOO_WIDE, _multipliers(claim, lambda task: inside, wide=True)),  # the interval wider than the band
        (NOT_SIZE, _multipliers(claim, lambda task: outside, runs=1)),  # a miss, with too few runs beside it
    ]
    return result


def _flat(claim: Claim) -> Counterfactuals:
    """Speeds flat across tasks: every task at 126 tok/s at both temperatures; the first task further than the
    tolerance from the rest (three runs, then one); every task's runs spread too widely to tell."""
    tight = [OFF_SPEED - 0.1, OFF_SPEED, OFF_SPEED + 0.1]
    far = 1 + 3 * (claim.tolerance or 0.0)
    first = claim.tasks[0]

    def at(speeds_of: Callable[[str], list[float]]) -> Tables:
        return make_tables(
            {(task, claim.condition, t): speeds_of(task) for task in claim.tasks for t in temperatures(claim)}
        )

    return Counterfactuals(
        at(lambda task: tight),
        [
            (NOT_SIZE, at(lambda task: [v * far for v in tight] if task == first else tight)),
            (TOO_WIDE, at(lambda task: _wide(OFF_SPEED))),
            (NOT_SIZE, at(lambda task: [OFF_SPEED * far] if task == first else [OFF_SPEED])),  # too few runs beside
        ],
    )


def _tokens_per_s(claim: Claim) -> Counterfactuals:
    if claim.published == "flat":
        return _flat(claim)
    inside, outside, _ = _numeric_points(claim)

    def at(speed: float, runs: int = 3, wide: bool = False) -> Tables:
        speeds: dict[Key, list[float]] = {}
        for task in claim.tasks:
            for t in temperatures(claim):
                speeds[(task, claim.condition, t)] = _wide(speed) if wide else [speed - 0.1, speed, speed + 0.1][:runs]
        return make_tables(_with_off(claim, speeds))

    return Counterfactuals(
        at(inside),
        [(NOT_SIZE, at(outside)), (TOO_WIDE, at(inside, wide=True)), (NOT_SIZE, at(outside, runs=1))],
    )


def _acceptance(claim: Claim) -> Counterfactuals:
    inside, outside, across = _numeric_points(claim)
    metric = claim.metric or "pooled_rate"

    def at(value: float, runs: int = 3, wide: bool = False) -> Tables:
        counts: tuple[int, int] | list[tuple[int, int]]
        if metric == "pooled_rate" and wide:  # each run's own rate 30 points apart
            counts = [(1000, round(min(max(value + d, 0.0), 1.0) * 1000)) for d in (-0.3, 0.0, 0.3)]
        elif metric == "pooled_rate":
            counts = (1000, round(value * 1000))
        elif metric == "draft_n":
            counts = (round(value), round(value))
        elif metric in ("draft_n_accepted", "longest_accepted"):
            counts = (40, round(value))
        else:
            raise ValueError(f"{claim.id}: no counterfactual for acceptance metric {metric!r}")
        speeds: dict[Key, list[float]] = {}
        drafts: dict[Key, tuple[int, int]] = {}
        positions: dict[Key, tuple[int, list[int]]] = {}
        for task in claim.tasks:
            for t in temperatures(claim):
                speeds[(task, claim.condition, t)] = _runs(1.5)[:runs]
                drafts[(task, claim.condition, t)] = counts
                positions[(task, claim.condition, t)] = (40, [5] * round(value))  # 5 steps accepted ``value`` each
        return make_tables(_with_off(claim, speeds), drafts=drafts, positions=positions)

    result = Counterfactuals(at(inside), [(NOT_SIZE, at(outside))])
    if across is not None:
        result.failing.append((NOT_DIRECTION, at(across)))
    if metric == "pooled_rate":  # the one acceptance metric with an interval
        result.failing += [(TOO_WIDE, at(inside, wide=True)), (NOT_SIZE, at(outside, runs=1))]
    return result


VERDICT_MULTIPLIERS = {  # published word: (a multiplier that gives it, one that gives the other side)
    "faster": (1.5, 0.7),
    "slower": (0.7, 1.5),
    "not slower": (1.2, 0.7),
    "not faster": (0.8, 1.3),
}


def _verdict(claim: Claim) -> Counterfactuals:
    right, wrong = VERDICT_MULTIPLIERS[claim.published]
    if claim.size:
        return _verdict_size(claim, wrong)
    return Counterfactuals(
        reproduced=_multipliers(claim, lambda task: right),
        failing=[
            (NOT_DIRECTION, _multipliers(claim, lambda task: wrong)),
            (TOO_FEW_RUNS, _multipliers(claim, lambda task: right, runs=1)),
        ],
    )


def size_points(claim: Claim) -> tuple[float, float]:
    """For a verdict with a size band: a multiplier inside the band, and one outside it on the word's side of 1.0x
    where there is room (else just past 1.0x, on the other side, which no size miss can be: the walk says so)."""
    low, high = claim.size or (0.0, 1.0)
    inside = (low * high) ** 0.5 if low > 0 else 0.9 * high
    if claim.published == "faster":
        return inside, 1.2 * high
    if low > 0:
        return inside, 0.8 * low
    return inside, (high + 1.0) / 2 if high < 1.0 else 1.05 * high


def _verdict_size(claim: Claim, wrong: float) -> Counterfactuals:
    """A verdict whose word states a size ("slightly slower"): the word and a multiplier inside the band; the other
    side; the word with a multiplier outside the band (three runs, then one); too few runs; runs too spread to place
    the multiplier on either side of an edge (all still on the word's side of every 'off' run)."""
    inside, outside = size_points(claim)
    return Counterfactuals(
        reproduced=_multipliers(claim, lambda task: inside),
        failing=[
            (NOT_DIRECTION, _multipliers(claim, lambda task: wrong)),
            (NOT_SIZE, _multipliers(claim, lambda task: outside)),
            (TOO_FEW_RUNS, _multipliers(claim, lambda task: inside, runs=1)),
            (NOT_SIZE, _multipliers(claim, lambda task: outside, runs=1)),  # a miss, with too few runs beside it
            (TOO_WIDE, _multipliers(replace(claim, side=claim.published), lambda task: inside, wide=True)),
        ],
    )


def _identity_tables(claim: Claim, own: Callable[[str], list[list[int]]]) -> Tables:
    """Off's three repeats of 900 tokens per task; the claim's condition with ``own(task)``'s repeats (the control:
    off's own repeats; first-repeat: the condition's repeats against its own first)."""
    tokens: dict[tuple[str, str, int], list[int]] = {}
    speeds: dict[Key, list[float]] = {}
    for task in claim.tasks:
        repeats = own(task)
        if claim.condition != BASELINE:
            for r in (1, 2, 3):
                tokens[(task, BASELINE, r)] = sequence(900)
            speeds[(task, BASELINE, 0.0)] = list(OFF_RUNS)
        for r, ids in enumerate(repeats, start=1):
            tokens[(task, claim.condition, r)] = ids
        speeds[(task, claim.condition, 0.0)] = [100.0] * len(repeats)
    return make_tables(speeds, tokens=tokens)


def _identity(claim: Claim) -> Counterfactuals:
    same = [sequence(900)] * 3
    other = [sequence(900, 7)] * 3
    own_first = claim.condition == BASELINE or claim.versus == "first-repeat"
    wobbly = [sequence(900), sequence(900), sequence(900, 7)]
    if claim.runs:  # a control on the study's runs: the first two differ
        wobbly = [sequence(900), sequence(900, 7), sequence(900)]
    published = claim.published
    if published == "identical":
        return Counterfactuals(
            _identity_tables(claim, lambda task: same),
            [(NOT_REPRODUCED, _identity_tables(claim, lambda task: wobbly if own_first else other))],
        )
    if isinstance(published, list) or (isinstance(published, int) and not isinstance(published, bool)):
        differing = published if isinstance(published, list) else claim.tasks[:published]
        others = [t for t in claim.tasks if t not in differing]
        wrong = others[:1] + list(differing[1:]) if others else list(differing[1:])
        return Counterfactuals(
            _identity_tables(claim, lambda task: other if task in differing else same),
            [(NOT_REPRODUCED, _identity_tables(claim, lambda task: other if task in wrong else same))],
        )
    if not claim.token_counts:  # not identical
        return Counterfactuals(
            _identity_tables(claim, lambda task: other),
            [(NOT_REPRODUCED, _identity_tables(claim, lambda task: same))],
        )

    def lengths(scale: Callable[[int, int], tuple[int, int]]) -> Tables:
        tokens: dict[tuple[str, str, int], list[int]] = {}
        speeds: dict[Key, list[float]] = {}
        for task in claim.tasks:
            own, base = scale(*claim.token_counts[task])
            for r in (1, 2, 3):
                tokens[(task, BASELINE, r)] = sequence(base)
                tokens[(task, claim.condition, r)] = sequence(own, 5)
            speeds[(task, BASELINE, 0.0)] = list(OFF_RUNS)
            speeds[(task, claim.condition, 0.0)] = [100.0] * 3
        return make_tables(speeds, tokens=tokens)

    tolerance = claim.tolerance or 0.0

    def too_far(own: int, base: int) -> tuple[int, int]:  # the published difference, more than the tolerance further
        difference = (own - base) / base
        further = difference + (tolerance + 0.05) * (1 if difference > 0 else -1)
        return round(base * (1 + further)), base

    return Counterfactuals(
        lengths(lambda own, base: (own, base)),
        [
            (NOT_DIRECTION, lengths(lambda own, base: (base, base))),  # 898 vs 898: no difference at all
            (NOT_DIRECTION, lengths(lambda own, base: (2 * base - own, base))),  # the same difference the other way
            (NOT_SIZE, lengths(too_far)),
        ],
    )


def _gsm8k(claim: Claim) -> Counterfactuals:
    wrong = claim.wrong or {}

    asked = [str(p) for p in range(1, claim.total + 1)]
    for p in claim.problems:  # the problems the claim counts, by their references
        asked[p["problem"] - 1] = p["reference"]
    elsewhere = [f"{r}1" for r in asked]  # other problems: every reference another

    def scores(correct: int, miss: tuple[tuple[int, str, str], ...], references: list[str] = asked) -> Tables:
        key = (claim.tasks[0], claim.condition, claim.temperature)
        return make_tables({key: [100.0] * 3}, checks={key: [scored(correct, claim.total, miss, references)] * 3})

    def other(result: Counterfactuals) -> Counterfactuals:  # the same scores on other problems: not comparable
        if claim.problems:
            result.failing.append((NOT_COMPARABLE, scores(claim.published, (), elsewhere)))
        return result

    if wrong:
        published_miss = ((wrong["problem"], wrong.get("answer") or "1", wrong.get("reference") or "2"),)
        other_answer = ((wrong["problem"], "12345", wrong.get("reference") or "2"),)
        failing = [(NOT_REPRODUCED, scores(claim.total, ()))]
        if wrong.get("answer"):
            failing.append((NOT_REPRODUCED, scores(claim.published, other_answer)))
        return other(Counterfactuals(scores(claim.published, published_miss), failing))
    misses = tuple((p, "0", "1") for p in range(1, claim.total - claim.published + 1))
    one_more = tuple((p, "0", "1") for p in range(1, claim.total - claim.published + 2))
    if claim.published == claim.total:
        result = Counterfactuals(scores(claim.published, ()), [(NOT_REPRODUCED, scores(claim.published - 1, one_more))])
        return other(result)
    result = Counterfactuals(scores(claim.published, misses), [(NOT_REPRODUCED, scores(claim.published - 1, one_more))])
    return other(result)


def _warm(claim: Claim) -> Counterfactuals:
    def speeds_of(warm: list[float], fresh: list[float] | None = None) -> Tables:
        speeds: dict[Key, list[float]] = {}
        for task in claim.tasks:
            for t in temperatures(claim):
                speeds[(task, claim.condition, t)] = warm
                if fresh is not None:
                    speeds[(task, claim.fresh, t)] = fresh
        return make_tables(_with_off(claim, speeds))

    if claim.published == "faster each repeat":
        return Counterfactuals(speeds_of([100.0, 150.0, 200.0]), [(NOT_REPRODUCED, speeds_of([200.0, 150.0, 100.0]))])
    if claim.published == "faster":
        fresh = [120.0, 121.0, 122.0]
        return Counterfactuals(
            speeds_of([100.0, 200.0, 300.0], fresh), [(NOT_REPRODUCED, speeds_of([100.0, 110.0, 300.0], fresh))]
        )
    published = [float(v) for v in claim.published]
    tolerance = claim.tolerance or 0.0
    return Counterfactuals(
        speeds_of(published),
        [
            (NOT_SIZE, speeds_of([v * (1 + tolerance + 0.2) for v in published])),
            (NOT_DIRECTION, speeds_of(published[::-1])),
        ],
    )


def _ordering_tables(claim: Claim, value_of: Mapping[float, Callable[[str], float]], spread: float = 0.1) -> Tables:
    """Per temperature, each member's multiplier from ``value_of[temperature](member)``."""
    speeds: dict[Key, list[float]] = {}
    over_tasks = claim.over == "tasks"
    for t, value in value_of.items():
        for task in claim.tasks:
            speeds[(task, BASELINE, t)] = list(OFF_RUNS)
            for condition in claim.conditions:
                member = task if over_tasks else condition
                speeds[(task, condition, t)] = _runs(value(member), spread)
    return make_tables(speeds)


def _ordering(claim: Claim) -> Counterfactuals:
    every = temperatures(claim)
    if claim.versus_temperature is not None:  # the same shape as at the reference temperature
        rank = {task: 4.0 / (i + 1) for i, task in enumerate(claim.tasks)}
        reverse = {task: 4.0 / (len(claim.tasks) - i) for i, task in enumerate(claim.tasks)}
        here, there = claim.temperature, claim.versus_temperature
        return Counterfactuals(
            reproduced=_ordering_tables(claim, {t: rank.__getitem__ for t in every}),
            failing=[(CONTRADICTED, _ordering_tables(claim, {here: reverse.__getitem__, there: rank.__getitem__}))],
            not_separated=_ordering_tables(claim, {here: lambda m: 2.0, there: rank.__getitem__}, spread=1.3),
        )
    tiers = {member: i for i, tier in enumerate(claim.published) for member in tier}
    count = len(claim.published)
    return Counterfactuals(
        reproduced=_ordering_tables(claim, {t: lambda m: 4.0 / (tiers[m] + 1) for t in every}),
        failing=[
            (CONTRADICTED, _ordering_tables(claim, {t: lambda m: 4.0 / (count - tiers[m]) for t in every})),
            (TOO_FEW_RUNS, _one_run(claim, {t: lambda m: 4.0 / (tiers[m] + 1) for t in every})),
        ],
        not_separated=_ordering_tables(claim, {t: lambda m: 2.0 for t in every}, spread=1.3),
    )


def _one_run(claim: Claim, value_of: Mapping[float, Callable[[str], float]]) -> Tables:
    """The ordering's table with one run a side: no interval."""
    tables = _ordering_tables(claim, value_of)
    cells = tables["cells"]
    return Summaries(cells[cells.repeat == 1].reset_index(drop=True), BASELINE)


def _thesis(claim: Claim) -> Counterfactuals:
    """The task deciding (reproduced), the method deciding (contradicted), both moving it alike (not separated)."""
    return Counterfactuals(
        reproduced=thesis_tables(claim, REPRODUCED),
        failing=[(CONTRADICTED, thesis_tables(claim, CONTRADICTED))],
        not_separated=thesis_tables(claim, NOT_SEPARATED),
    )


# Claims about load: the load table of generated points, the claim's tasks at each level it is judged at

LOAD_LEVELS = (1, 2, 4)


def _levels(claim: Claim) -> list[int]:
    """The levels a load claim's tables hold: its own, or 1, 2, 4 and its N*; always 1 (acceptance's reference)."""
    levels = {1, *(claim.at or LOAD_LEVELS)}
    if isinstance(claim.published, int) and not claim.at:
        levels.add(claim.published)
    return sorted(levels)


def _load_tables(
    claim: Claim,
    multiplier: Callable[[int], float],
    accepted: Callable[[int], list[int]] = lambda n: [70, 70, 70],
    spread: float = 0.01,
    runs: int = 3,
) -> Tables:
    """Per task and temperature, the baseline at OFF_SPEED and the claim's condition at ``multiplier(n)`` per request
    at each level, each repeat ``spread`` apart (both alike); the condition accepting ``accepted(n)`` of 100 drafts."""
    frames = []
    for task in claim.tasks:
        for t in temperatures(claim):
            speeds, taken = {}, {}
            for n in _levels(claim):
                wobble = [1.0 + spread * (k - 1) for k in range(runs)]
                speeds[BASELINE, n] = [[OFF_SPEED * w] * n for w in wobble]
                speeds[claim.condition, n] = [[OFF_SPEED * multiplier(n) * w] * n for w in wobble]
                taken[claim.condition, n] = accepted(n)[:runs]
            frames.append(point_rows(speeds, accepted=taken, drafted=100, task=task, temperature=t))
    return Summaries(pd.concat(frames, ignore_index=True), BASELINE)


def _pays(claim: Claim) -> Counterfactuals:
    """Paying where N* says (1.5x; 0.6x from N* on), the other way round at every level (the wrong side), one run
    (no interval), and 1.0x with repeats 30 % apart (every interval across 1.0x)."""
    n_star = None if claim.published == "every N" else int(claim.published)

    def pays(n: int) -> float:
        return 1.5 if n_star is None or n < n_star else 0.6

    return Counterfactuals(
        reproduced=_load_tables(claim, pays),
        failing=[
            (NOT_DIRECTION, _load_tables(claim, lambda n: 0.9 / pays(n))),
            (TOO_FEW_RUNS, _load_tables(claim, pays, runs=1)),
        ],
        not_separated=_load_tables(claim, lambda n: 1.0, spread=0.3),
    )


def _acceptance_under_load(claim: Claim) -> Counterfactuals:
    """Acceptance at 70 of 100 drafts at every N; beyond the band at each N above 1 (10 points past it); its change
    centred on the band's edge with repeats 10 points apart (across it); one run (no interval)."""
    tolerance = round(100 * (claim.tolerance or 0.0))

    def at(share: int, spread: int = 0) -> Callable[[int], list[int]]:
        return lambda n: [70] * 3 if n == 1 else [max(0, share + spread * (k - 1)) for k in range(3)]

    flat, beyond = _load_tables(claim, lambda n: 1.2, at(70)), _load_tables(claim, lambda n: 1.2, at(60 - tolerance))
    across = _load_tables(claim, lambda n: 1.2, at(70 - tolerance, spread=10))
    if claim.published == "different":
        return Counterfactuals(beyond, [(NOT_REPRODUCED, flat), (TOO_WIDE, across)])
    one_run = _load_tables(claim, lambda n: 1.2, at(70), runs=1)
    return Counterfactuals(flat, [(NOT_SIZE, beyond), (TOO_WIDE, across), (TOO_FEW_RUNS, one_run)])


COUNTERFACTUALS: dict[str, Callable[[Claim], Counterfactuals]] = {
    "speedup": _speedup,
    "tokens_per_s": _tokens_per_s,
    "acceptance": _acceptance,
    "verdict": _verdict,
    "identity": _identity,
    "gsm8k": _gsm8k,
    "warm_vs_fresh": _warm,
    "ordering": _ordering,
    "thesis": _thesis,
    "pays_up_to": _pays,
    "acceptance_under_load": _acceptance_under_load,
}
"""One generator per claim kind; a kind that no run can check (background) has none. A new kind adds its entry."""
NEVER_JUDGED = {"background"}


# The thesis's tables: the multiplier follows the task, the method, or neither

OFF = 100.0
SPREADS = (-0.01, 0.0, 0.01)  # three runs a cell, +-1 %


def cell_rows(
    multipliers: Mapping[str, Mapping[str, float]],
    spreads: Sequence[float] = SPREADS,
    temperatures: Sequence[float] = (0.0,),
) -> list[dict[str, Any]]:
    """Cells whose mean tokens/s gives each task x condition these multipliers over an 'off' of OFF tokens/s, one
    run per spread (value x (1 + spread)); the same at every temperature."""
    rows = []
    for temperature, (task, row) in itertools.product(temperatures, multipliers.items()):
        for condition, multiplier in {BASELINE: 1.0, **row}.items():
            for repeat, spread in enumerate(spreads, start=1):
                rows.append(
                    {
                        "task": task,
                        "condition": condition,
                        "temperature": temperature,
                        "repeat": repeat,
                        "tokens_per_s": OFF * multiplier * (1 + spread),
                        "cell_file": f"results/cells/{task}/{condition}/t{temperature}/r{repeat}.json",
                    }
                )
    return rows


def tables_of(multipliers: Mapping[str, Mapping[str, float]], **kwargs: Any) -> Tables:
    return Summaries(frame_of(cell_rows(multipliers, **kwargs), BASELINE), BASELINE)


def thesis_tables(claim: Claim, verdict: str) -> Tables:
    """Tables of the claim's own tasks and methods (at both temperatures) that its judge must read as ``verdict``:
    REPRODUCED (the multiplier follows the task: 1x, 2x, 4x, ... by task, +-5 % by method), CONTRADICTED (it follows
    the method) or NOT_SEPARATED (task and method move it alike, and the runs spread by +-30 %)."""
    tasks, methods = list(claim.tasks), list(claim.conditions)
    by = {
        REPRODUCED: lambda t, m: 2.0**t * 1.05**m,
        CONTRADICTED: lambda t, m: 1.05**t * 2.0**m,
        NOT_SEPARATED: lambda t, m: 1.5 ** ((t + m) % 2) * 1.1 ** (t % 3),
    }[verdict]
    spreads = (-0.3, 0.0, 0.3) if verdict == NOT_SEPARATED else SPREADS
    multipliers = {task: {m: by(ti, mi) for mi, m in enumerate(methods)} for ti, task in enumerate(tasks)}
    return tables_of(multipliers, spreads=spreads, temperatures=(0.0, 1.0))
