"""One judge per claim kind, reading the typed tables of summaries.tables (the verdict rules are in claims.py)."""

from __future__ import annotations

import itertools
import math
import statistics
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

import pandas as pd

if TYPE_CHECKING:
    from .claims import Claim

REPRODUCED = "reproduced"
SAME_DIRECTION = "same direction"
NOT_REPRODUCED = "not reproduced"
NOT_MEASURED = "not measured in this run"


class Metric(NamedTuple):
    """A number claims are judged on: where it is, how its tolerance applies, its pivot, how it is written."""

    table: str
    column: str
    relative: bool
    fmt: Callable[[float], str]
    number: Callable[[float], str]  # a published value, without the unit
    unit: str
    pivot: float | None = None
    pivot_text: str = ""
    limits: tuple[float, float] = (-math.inf, math.inf)


METRICS = {
    "speedup": Metric("summary", "speedup_median", True, "{:.2f}x".format,
                      lambda v: f"{v:.2f}" if v == int(v) else f"{v:g}", "x", 1.0, "1.0x"),
    "tokens_per_s": Metric("summary", "median_tokens_per_s", True, "{:.1f} tok/s".format, "{:g}".format, " tok/s"),
    "pooled_rate": Metric("acceptance", "pooled_rate", False, "{:.0%}".format, lambda v: f"{v * 100:g}", "%", 0.5,
                          "50%", (0.0, 1.0)),
    "accepted_per_step": Metric("acceptance", "accepted_per_step", False, "{:.2f} tokens/step".format,
                                "{:g}".format, " tokens/step", limits=(0.0, math.inf)),
}


class Outcome(NamedTuple):
    verdict: str
    measured: Any  # typed: a number per task, verdicts, counts, speeds, rankings
    text: str  # the measured value for display
    detail: str
    cells: list[str]


class Run(NamedTuple):
    """This run's tables (as from summaries.tables) and its baseline condition."""

    tables: Mapping[str, pd.DataFrame]
    baseline: str

    def rows(self, name: str, **where: Any) -> pd.DataFrame | None:
        """The rows of a table equal to ``where`` in every column; None when the table or a column is absent."""
        frame = self.tables.get(name)
        if frame is None or not set(where) <= set(frame.columns):
            return None
        return frame[(frame[list(where)] == pd.Series(where)).all(axis=1)]

    def row(self, name: str, **where: Any) -> pd.Series | None:
        rows = self.rows(name, **where)
        return None if rows is None or rows.empty else rows.iloc[0]

    def value(self, metric: Metric, task: str, condition: str, temperature: float) -> tuple[float | None, list[str]]:
        row = self.row(metric.table, task=task, condition=condition, temperature=temperature)
        return (None, []) if row is None else (_finite(row.get(metric.column)), list(row.get("cells", [])))

    def speeds(self, task: str, condition: str, temperature: float) -> tuple[dict[int, float], list[str]]:
        """Tokens/s per repeat, and the cells."""
        rows = self.rows("cells", task=task, condition=condition, temperature=temperature)
        if rows is None:
            return {}, []
        rows = rows.sort_values("repeat")
        speeds = {int(r): v for r, v in zip(rows.repeat, map(_finite, rows.tokens_per_s), strict=True) if v is not None}
        return speeds, list(rows.cell_file)


def _finite(value: Any) -> float | None:
    """A finite float, or None for None/NaN/NA/infinity."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


def _list(items: Iterable[str]) -> str:
    return ", ".join(items)


def _per_task(shown: Mapping[str, str]) -> str:
    return next(iter(shown.values())) if len(shown) == 1 else "; ".join(f"{k} {v}" for k, v in shown.items())


def _side(value: float, pivot: float) -> int:
    return (value > pivot) - (value < pivot)


def metric_of(claim: Claim) -> Metric:
    return METRICS[claim.metric or claim.kind]


def format_published(claim: Claim) -> str:
    """The published value as the study writes it (e.g. 6.25x, 1.5-1.8x, 41%, 2/3 correct)."""
    published = claim.published
    if claim.kind in ("speedup", "tokens_per_s", "acceptance"):
        metric = metric_of(claim)
        return "-".join(map(metric.number, published if isinstance(published, list) else [published])) + metric.unit
    if claim.kind == "identity" and not isinstance(published, str):
        return f"not identical on {published} of {len(claim.tasks)} tasks"
    if claim.kind == "identity" and claim.token_counts:
        return published + " (" + "; ".join(f"{t} {a} vs {b}" for t, (a, b) in claim.token_counts.items()) + ")"
    if claim.kind == "gsm8k" and claim.wrong:
        wrong = claim.wrong
        return f"{published}/{claim.total} correct, problem {wrong['problem']}" + (
            f": {wrong['answer']} vs {wrong['reference']}" if wrong["answer"] else " wrong")
    if claim.kind == "gsm8k":
        return f"{published}/{claim.total} correct"
    if claim.kind == "warm_vs_fresh" and published == "faster":
        return "warm faster than fresh"
    if claim.kind == "warm_vs_fresh":
        return ", ".join(f"{v:g}" for v in published) + " tok/s over repeats"
    if claim.kind == "ordering" and published == "same ordering":
        return f"{published} as temperature {claim.versus_temperature:g}"
    if claim.kind == "ordering":
        return " > ".join(tier[0] if len(tier) == 1 else "{" + ", ".join(tier) + "}" for tier in published)
    return str(published)


def _numeric(claim: Claim, run: Run) -> Outcome:
    """speedup, tokens_per_s, acceptance: every task's value within the published value or range +- tolerance."""
    metric, values, cells, extras = metric_of(claim), {}, [], []
    for task in claim.tasks:
        values[task], found = run.value(metric, task, claim.condition, claim.temperature)
        cells += found
        row = run.row(metric.table, task=task, condition=claim.condition, temperature=claim.temperature)
        if metric.table == "acceptance" and row is not None and row["runs"]:
            extra = f"{row['accepted']} of {row['drafted']} drafted tokens accepted, {row['drafted'] / row['runs']:.0f}"
            extras.append(("" if len(claim.tasks) == 1 else f"{task}: ") + extra + " drafted per run")
    text = _per_task({t: "n/a" if v is None else metric.fmt(v) for t, v in values.items()})
    text += f" ({'; '.join(extras)})" if extras else ""
    missing = [task for task, value in values.items() if value is None]
    if missing:
        return Outcome(NOT_MEASURED, values, text, f"no value for {_list(missing)} ({claim.condition}, temperature "
                       f"{claim.temperature:g}) in this run's tables", cells)
    tolerance, published = claim.tolerance or 0.0, claim.published
    low, high = published if isinstance(published, list) else (published, published)
    if metric.relative:
        band_low, band_high, tol_text = low * (1 - tolerance), high * (1 + tolerance), f"±{tolerance:.0%}"
    else:
        band_low, band_high, tol_text = low - tolerance, high + tolerance, f"±{metric.fmt(tolerance)}"
    band_low, band_high = max(band_low, metric.limits[0]), min(band_high, metric.limits[1])
    band = f"{metric.fmt(band_low)} to {metric.fmt(band_high)} (published {format_published(claim)}, {tol_text})"
    outside = _list(f"{task} {metric.fmt(value)}" for task, value in values.items()
                    if not band_low <= value <= band_high)
    if not outside:
        return Outcome(REPRODUCED, values, text, f"within {band}", cells)
    if metric.pivot is None:
        return Outcome(NOT_REPRODUCED, values, text, f"outside {band}: {outside}", cells)
    pivot, pivot_text = metric.pivot, metric.pivot_text
    side = _side(low, pivot) if _side(low, pivot) == _side(high, pivot) else 0
    if side and all(_side(value, pivot) == side for value in values.values()):
        where = "above" if side > 0 else "below"
        return Outcome(SAME_DIRECTION, values, text, f"outside {band}: {outside}; but {where} {pivot_text} like the "
                       "published figure", cells)
    why = f"the published figure is on neither side of {pivot_text}" if not side else (
        f"not on the published side of {pivot_text}")
    return Outcome(NOT_REPRODUCED, values, text, f"outside {band}: {outside}; {why}", cells)


def _verdict(claim: Claim, run: Run) -> Outcome:
    rows = {task: run.row("summary", task=task, condition=claim.condition, temperature=claim.temperature)
            for task in claim.tasks}
    verdicts = {task: None if row is None else row["verdict"] for task, row in rows.items()}
    speedups = {task: None if row is None else _finite(row["speedup_median"]) for task, row in rows.items()}
    cells = [c for row in rows.values() if row is not None for c in row["cells"]]
    text = _per_task({task: (verdicts[task] or "n/a") + (f" ({s:.2f}x)" if s is not None else "")
                      for task, s in speedups.items()})
    missing = [task for task, v in verdicts.items() if v is None]
    if missing:
        return Outcome(NOT_MEASURED, verdicts, text, f"no verdict for {_list(missing)} ({claim.condition}, "
                       f"temperature {claim.temperature:g}) in this run's tables", cells)
    published = claim.published
    if published.startswith("not "):
        excluded = published.removeprefix("not ")
        hit = [task for task, v in verdicts.items() if v == excluded]
        if not hit:
            return Outcome(REPRODUCED, verdicts, text, f"no task is '{excluded}' by the all-runs rule", cells)
        return Outcome(NOT_REPRODUCED, verdicts, text, f"'{excluded}' by the all-runs rule on {_list(hit)}", cells)
    differing = [task for task, v in verdicts.items() if v != published]
    if not differing:
        return Outcome(REPRODUCED, verdicts, text, f"'{published}' by the all-runs rule on every task", cells)
    side = {"faster": 1, "slower": -1}.get(published, 0)
    if side and all(s is not None and _side(s, 1.0) == side for s in speedups.values()):
        return Outcome(SAME_DIRECTION, verdicts, text, f"not '{published}' by the all-runs rule on "
                       f"{_list(differing)}, but every median multiplier is {'above' if side > 0 else 'below'} 1.0x",
                       cells)
    return Outcome(NOT_REPRODUCED, verdicts, text, f"not '{published}' on {_list(differing)}", cells)


def _identity(claim: Claim, run: Run) -> Outcome:
    state: dict[str, dict[str, Any] | None] = {}
    cells: list[str] = []
    for task in claim.tasks:
        row = run.row("identity", task=task, condition=claim.condition, control=claim.condition == run.baseline)
        cells += [] if row is None else row["cells"]
        state[task] = None if row is None or not row["repeats_compared"] else {
            "compared": int(row["repeats_compared"]), "identical": int(row["identical"]),
            "missing": int(row["missing"]), "token_counts": [list(pair) for pair in row["token_counts"]]}
    parts = {}
    for task, s in state.items():
        counts = "; ".join(f"{a} vs {b}" for a, b in s["token_counts"]) if s else ""
        parts[task] = ("n/a" if s is None else f"differs in {s['compared'] - s['identical']}/{s['compared']} ({counts})"
                       if counts else f"identical {s['identical']}/{s['compared']}")
    text = "; ".join(f"{task} {part}" for task, part in parts.items())
    missing = [task for task, s in state.items() if s is None]
    if missing:
        return Outcome(NOT_MEASURED, state, text, f"no compared repeats for {_list(missing)} ({claim.condition}, "
                       "temperature 0) in this run's tables", cells)
    gaps = [f"{task} ({s['missing']} repeat(s) without a baseline)" for task, s in state.items() if s["missing"]]
    gap_text = f"; not compared: {_list(gaps)}" if gaps else ""
    differ = [task for task, s in state.items() if s["token_counts"]]
    same = [task for task in state if task not in differ]
    published = claim.published

    def out(verdict: str, detail: str) -> Outcome:
        return Outcome(verdict, state, text, detail + gap_text, cells)

    if published == "identical":
        return out(REPRODUCED, "identical on every task") if not differ else out(
            NOT_REPRODUCED, f"differs on {_list(differ)}")
    if published == "not identical" and same:
        return out(NOT_REPRODUCED, f"identical on {_list(same)}")
    if published == "not identical":
        tolerance = claim.tolerance or 0.0
        off = [f"{task} {a} vs {b} (published {own} vs {base})" for task, (own, base) in claim.token_counts.items()
               for a, b in state[task]["token_counts"]
               if not (abs(a - own) <= tolerance * own and abs(b - base) <= tolerance * base)]
        if not claim.token_counts:
            return out(REPRODUCED, "differs on every task")
        if not off:
            return out(REPRODUCED, f"differs on every task, token counts within ±{tolerance:.0%} of the published ones")
        return out(SAME_DIRECTION, f"differs on every task, but token counts outside ±{tolerance:.0%}: {_list(off)}")
    detail = f"differs on {len(differ)} of {len(state)} tasks ({_list(differ) or 'none'})"
    if len(differ) == published:
        return out(REPRODUCED, detail)
    return out(SAME_DIRECTION if differ and published else NOT_REPRODUCED, detail + f"; published {published}")


def _gsm8k(claim: Claim, run: Run) -> Outcome:
    task = claim.tasks[0]
    rows = run.rows("cells", task=task, condition=claim.condition, temperature=claim.temperature)
    if rows is None:
        rows = pd.DataFrame(columns=["repeat", "gsm8k_correct", "gsm8k_total", "gsm8k_wrong", "cell_file"])
    scored = rows[rows.gsm8k_total.notna()].sort_values("repeat")
    runs = [{"repeat": int(r.repeat), "correct": int(r.gsm8k_correct), "total": int(r.gsm8k_total),
             "wrong": {w["problem"]: w["extracted"] or "none" for w in r.gsm8k_wrong}} for r in scored.itertuples()]
    text = "; ".join(f"r{r['repeat']} {r['correct']}/{r['total']}" + (" (" + ", ".join(
        f"problem {w['problem']}: {w['extracted'] or 'none'} vs {w['reference']}" for w in wrong) + ")" if wrong
        else "") for r, wrong in zip(runs, scored.gsm8k_wrong, strict=True)) or "n/a"
    cells = list(rows.cell_file)
    if not runs:
        return Outcome(NOT_MEASURED, runs, text, f"no scored {task} run for {claim.condition} at temperature "
                       f"{claim.temperature:g} in this run's tables", cells)
    totals = sorted({r["total"] for r in runs})
    if totals != [claim.total]:
        return Outcome(NOT_MEASURED, runs, text, f"this run scored {'/'.join(map(str, totals))} problems, the claim "
                       f"is about {claim.total}", cells)
    score = f"{claim.published}/{claim.total}"
    matching = [r for r in runs if r["correct"] == claim.published]
    problem = claim.wrong["problem"] if claim.wrong else None
    right_problem = [r for r in matching if problem is None or problem in r["wrong"]]
    if len(right_problem) == len(runs):
        answers = sorted({r["wrong"][problem] for r in right_problem}) if claim.wrong else []
        published = claim.wrong["answer"] if claim.wrong else ""
        wrong = f", problem {problem} wrong ({_list(answers)}" + (
            "" if not published or answers == [published] else f"; published {published}") + ")"
        return Outcome(REPRODUCED, runs, text, f"every run scored {score}" + (wrong if claim.wrong else ""), cells)
    if matching:
        return Outcome(SAME_DIRECTION, runs, text, f"{len(matching)} of {len(runs)} run(s) scored {score}" + (
            f"; problem {problem} wrong in {len(right_problem)}" if problem else ""), cells)
    return Outcome(NOT_REPRODUCED, runs, text, f"no run scored {score}", cells)


def _warm_repeats(claim: Claim, run: Run) -> Outcome:
    task, tolerance = claim.tasks[0], claim.tolerance or 0.0
    speeds, cells = run.speeds(task, claim.condition, claim.temperature)
    text = ", ".join(f"r{r} {v:.1f}" for r, v in speeds.items()) + " tok/s" if speeds else "n/a"
    needed = range(1, len(claim.published) + 1)
    absent = [str(r) for r in needed if r not in speeds]
    if absent:
        return Outcome(NOT_MEASURED, speeds, text, f"needs repeats 1-{needed.stop - 1} of {claim.condition} on "
                       f"{task}; missing {_list(absent)}", cells)
    values = [speeds[r] for r in needed]
    outside = _list(f"r{r} {v:.1f} (published {p:g})" for r, v, p in zip(needed, values, claim.published, strict=True)
                    if abs(v - p) > tolerance * p)
    if not outside:
        return Outcome(REPRODUCED, speeds, text, f"every repeat within ±{tolerance:.0%} of the published speed", cells)
    if all(b > a for a, b in itertools.pairwise(values)):
        return Outcome(SAME_DIRECTION, speeds, text, f"outside ±{tolerance:.0%}: {outside}; but faster with each "
                       "repeat", cells)
    return Outcome(NOT_REPRODUCED, speeds, text, f"outside ±{tolerance:.0%}: {outside}; not faster with each repeat",
                   cells)


def _warm(claim: Claim, run: Run) -> Outcome:
    if claim.published != "faster":
        return _warm_repeats(claim, run)
    warm_name, fresh_name, temperature = claim.condition, claim.fresh, claim.temperature
    measured, cells, missing, strict, ahead = {}, [], [], [], []
    for task in claim.tasks:
        (warm, warm_cells), (fresh, fresh_cells) = (run.speeds(task, c, temperature) for c in (warm_name, fresh_name))
        cells += warm_cells + fresh_cells
        measured[task] = None if len(warm) < 2 or not fresh else {
            "warm": statistics.median(warm.values()), "fresh": statistics.median(fresh.values())}
        if measured[task] is None:
            missing.append(task)
            continue
        strict += [task] if min(v for r, v in warm.items() if r != min(warm)) > max(fresh.values()) else []
        ahead += [task] if measured[task]["warm"] > measured[task]["fresh"] else []
    text = "; ".join(f"{task} n/a" if m is None else f"{task} warm {m['warm']:.1f} vs fresh {m['fresh']:.1f} tok/s "
                     "(median)" for task, m in measured.items())
    if missing:
        return Outcome(NOT_MEASURED, measured, text, f"needs at least two {warm_name} repeats and a {fresh_name} run "
                       f"on {_list(missing)}", cells)
    if len(strict) == len(claim.tasks):
        return Outcome(REPRODUCED, measured, text, "every warm repeat after the first beats every fresh run", cells)
    if len(ahead) == len(claim.tasks):
        lagging = _list(task for task in claim.tasks if task not in strict)
        return Outcome(SAME_DIRECTION, measured, text, "warm median ahead on every task, but not every later warm "
                       f"repeat beats every fresh run on {lagging}", cells)
    behind = _list(task for task in claim.tasks if task not in ahead)
    return Outcome(NOT_REPRODUCED, measured, text, f"warm median not ahead of fresh on {behind}", cells)


def _ranked(values: Mapping[str, float | None], fmt: Callable[[float], str]) -> str:
    known = sorted(((v, k) for k, v in values.items() if v is not None), key=lambda item: -item[0])
    absent = [k for k, v in values.items() if v is None]
    if not known:
        return "n/a"
    return " > ".join(f"{k} {fmt(v)}" for v, k in known) + (f" (n/a: {_list(absent)})" if absent else "")


def _pairs(claim: Claim, values: Mapping[str, float | None], reference: Mapping[str, float | None] | None,
           ) -> Iterable[tuple[str, str, bool]]:
    """(a, b, ordered as the reference?) per compared pair: across the published tiers, or, with a reference
    ranking, every pair of tasks the reference does not tie."""
    if reference is None:
        for i, upper in enumerate(claim.published):
            for a, b in itertools.product(upper, [m for lower in claim.published[i + 1:] for m in lower]):
                yield a, b, values[a] is not None and values[b] is not None and values[a] > values[b]
        return
    for a, b in itertools.combinations(claim.tasks, 2):
        if None not in (values[a], values[b], reference[a], reference[b]) and reference[a] != reference[b]:
            yield a, b, _side(values[a], values[b]) == _side(reference[a], reference[b])


def _ordering(claim: Claim, run: Run) -> Outcome:
    """Rankings per group (a condition over tasks, or the task over conditions), pairs judged across groups."""
    metric, temperature, versus = METRICS[claim.metric], claim.temperature, claim.versus_temperature
    groups: Sequence[tuple[str, Sequence[tuple[str, str, str]]]] = (
        [(c, [(t, t, c) for t in claim.tasks]) for c in claim.conditions] if claim.over == "tasks"
        else [(claim.tasks[0], [(c, claim.tasks[0], c) for c in claim.conditions])])
    measured, parts, missing, cells, judged = {}, [], [], [], []
    several = len(groups) > 1 or versus is not None
    for label, members in groups:
        values, reference = {}, None if versus is None else {}
        for member, task, condition in members:
            values[member], found = run.value(metric, task, condition, temperature)
            cells += found
            if reference is not None:
                reference[member], found = run.value(metric, task, condition, versus)
                cells += found
        measured[label] = values if reference is None else {temperature: values, versus: reference}
        ranking = _ranked(values, metric.fmt) + (
            "" if reference is None else f" at {temperature:g} vs {_ranked(reference, metric.fmt)} at {versus:g}")
        parts.append(f"{label}: {ranking}" if several else ranking)
        missing += [f"{label}/{m}" if several else m for m in values
                    if values[m] is None or (reference is not None and reference[m] is None)]
        judged += [(f"{label} {a} vs {b}" if several else f"{a} vs {b}", ok)
                   for a, b, ok in _pairs(claim, values, reference)]
    text = "; ".join(parts)
    at = f"temperature {temperature:g}" + ("" if versus is None else f" or {versus:g}")
    if missing:
        return Outcome(NOT_MEASURED, measured, text, f"no {claim.metric} for {_list(missing)} at {at}", cells)
    what = "published" if versus is None else f"at temperature {versus:g}"
    if not judged:
        return Outcome(NOT_MEASURED, measured, text, f"no ordered pair to compare ({what})", cells)
    concordant, discordant = sum(ok for _, ok in judged), [pair for pair, ok in judged if not ok]
    detail = f"{concordant} of {len(judged)} pairs ordered as {what}" + (
        f"; out of order: {_list(discordant)}" if discordant else "")
    verdict = (REPRODUCED if not discordant else SAME_DIRECTION if 2 * concordant > len(judged) else NOT_REPRODUCED)
    return Outcome(verdict, measured, text, detail, cells)


JUDGES: dict[str, Callable[[Claim, Run], Outcome]] = {
    "speedup": _numeric, "tokens_per_s": _numeric, "acceptance": _numeric, "verdict": _verdict,
    "identity": _identity, "gsm8k": _gsm8k, "warm_vs_fresh": _warm, "ordering": _ordering,
}
