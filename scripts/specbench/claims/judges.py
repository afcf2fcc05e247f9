"""One judge per claim kind, reading the typed tables of analysis.summaries.tables. Each picks its verdict with
``decide`` from rules listed in the order of its kind's row in docs/claims.md, so the two can be read side by side."""

from __future__ import annotations

import itertools
import statistics
from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

from .claim import BACKGROUND, NOT_MEASURED, NOT_REPRODUCED, REPRODUCED, SAME_DIRECTION
from .tables import METRICS, Outcome, Run, absent, decide, finite, format_published, listed, per_task, side_of

if TYPE_CHECKING:
    from .claim import Claim


def _numeric(claim: Claim, run: Run) -> Outcome:
    """speedup, tokens_per_s, acceptance: every task's value (or every run's, for a cells metric) within the published
    value or range +- tolerance; with ``side``, also that verdict by the all-runs rule on every task."""
    metric, values, cells, extras = METRICS[claim.metric or claim.kind], {}, [], []
    for task in claim.tasks:
        if metric.table == "cells":
            runs, found = run.speeds(task, claim.condition, claim.temperature, metric.column)
            prefix = "" if len(claim.tasks) == 1 else f"{task} "
            values.update({f"{prefix}r{r}": v for r, v in runs.items()} or {task: None})
        else:
            values[task], found = run.value(metric, task, claim.condition, claim.temperature)
        cells += found
        row = run.row(metric.table, task=task, condition=claim.condition, temperature=claim.temperature)
        if metric.table == "acceptance" and row is not None:
            extras.append(
                ("" if len(claim.tasks) == 1 else f"{task}: ") + f"{row['accepted']} of {row['drafted']} "
                f"drafted tokens accepted, {row['drafted'] / row['runs']:.0f} drafted per run"
            )
    text = per_task({t: "n/a" if v is None else metric.fmt(v) for t, v in values.items()})
    seen = (values, text + (f" ({'; '.join(extras)})" if extras else ""), cells)
    if missing := absent("value", values, claim):
        return Outcome(*seen, NOT_MEASURED, missing)
    tol, published, pivot, pivot_text = claim.tolerance or 0.0, claim.published, metric.pivot, metric.pivot_text
    low, high = published if isinstance(published, list) else (published, published)
    band_low, band_high = (low * (1 - tol), high * (1 + tol)) if metric.relative else (low - tol, high + tol)
    band_low, band_high = max(band_low, metric.limits[0]), min(band_high, metric.limits[1])
    tol_text = f"±{tol:.0%}" if metric.relative else f"±{metric.fmt(tol)}"
    band = f"{metric.fmt(band_low)} to {metric.fmt(band_high)} (published {format_published(claim)}, {tol_text})"
    outside = listed(f"{t} {metric.fmt(v)}" for t, v in values.items() if not band_low <= v <= band_high)
    side = 0 if pivot is None or side_of(low, pivot) != side_of(high, pivot) else side_of(low, pivot)
    on_its_side = bool(side) and all(side_of(v, pivot) == side for v in values.values())
    where = "above" if side > 0 else "below"
    rule = (
        {
            t: (
                row["verdict"]
                if (row := run.row("summary", task=t, condition=claim.condition, temperature=claim.temperature))
                is not None
                else None
            )
            for t in claim.tasks
        }
        if claim.side
        else {}
    )
    wrong_side = listed(f"{t} {v or 'n/a'}" for t, v in rule.items() if v != claim.side)
    verdict, detail = decide(
        (
            bool(wrong_side),
            NOT_REPRODUCED,
            f"not '{claim.side}' by the all-runs rule ({wrong_side}), and that side of "
            f"1.0x is the published figure's point",
        ),
        (not outside, REPRODUCED, f"within {band}" + (f", and '{claim.side}' by the all-runs rule" if rule else "")),
        (
            bool(rule),
            SAME_DIRECTION,
            f"outside {band}: {outside}; but '{claim.side}' by the all-runs rule like the published figure",
        ),
        (pivot is None, NOT_REPRODUCED, f"outside {band}: {outside}"),
        (on_its_side, SAME_DIRECTION, f"outside {band}: {outside}; but {where} {pivot_text} like the published figure"),
        (bool(side), NOT_REPRODUCED, f"outside {band}: {outside}; not on the published side of {pivot_text}"),
        (True, NOT_REPRODUCED, f"outside {band}: {outside}; the published figure is on neither side of {pivot_text}"),
    )
    return Outcome(*seen, verdict, detail)


def _verdict(claim: Claim, run: Run) -> Outcome:
    """Per task (per condition when the claim names several; per condition and task when both are several)."""
    one_task, one_condition = len(claim.tasks) == 1, len(claim.conditions) == 1
    rows = {
        (t if one_condition else c if one_task else f"{c} {t}"): run.row(
            "summary", task=t, condition=c, temperature=claim.temperature
        )
        for c in claim.conditions
        for t in claim.tasks
    }
    verdicts = {task: None if row is None else row["verdict"] for task, row in rows.items()}
    speedups = {task: None if row is None else finite(row["speedup"]) for task, row in rows.items()}
    every = "task" if one_condition else "condition" if one_task else "condition and task"
    seen = (
        verdicts,
        per_task({t: (verdicts[t] or "n/a") + (f" ({s:.2f}x)" if s is not None else "") for t, s in speedups.items()}),
        [c for row in rows.values() if row is not None for c in row["cells"]],
    )
    published, side = claim.published, {"faster": 1, "slower": -1}.get(claim.published, 0)
    negated, word = published.startswith("not "), published.removeprefix("not ")
    hit = listed(task for task, v in verdicts.items() if v == word)
    differing = listed(task for task, v in verdicts.items() if v != published)
    on_its_side = bool(side) and all(s is not None and side_of(s, 1.0) == side for s in speedups.values())
    where = "above" if side > 0 else "below"
    verdict, detail = decide(
        (None in verdicts.values(), NOT_MEASURED, lambda: absent("verdict", verdicts, claim)),
        (negated and bool(hit), NOT_REPRODUCED, f"'{word}' by the all-runs rule on {hit}"),
        (negated, REPRODUCED, f"no {every} is '{word}' by the all-runs rule"),
        (not differing, REPRODUCED, f"'{published}' by the all-runs rule on every {every}"),
        (
            on_its_side,
            SAME_DIRECTION,
            f"not '{published}' by the all-runs rule on {differing}, but every multiplier is {where} 1.0x",
        ),
        (True, NOT_REPRODUCED, f"not '{published}' on {differing}"),
    )
    return Outcome(*seen, verdict, detail)


def _identity(claim: Claim, run: Run) -> Outcome:
    state: dict[str, dict[str, Any] | None] = {}
    texts, cells = [], []
    for task in claim.tasks:
        control = claim.condition == run.baseline or claim.versus == "first-repeat"
        row = run.row("identity", task=task, condition=claim.condition, control=control)
        cells += [] if row is None else row["cells"]
        s = state[task] = (
            None
            if row is None or not row["repeats_compared"]
            else {
                "compared": int(row["repeats_compared"]),
                "identical": int(row["identical"]),
                "missing": int(row["missing"]),
                "token_counts": [list(pair) for pair in row["token_counts"]],
            }
        )
        counts = "; ".join(f"{a} vs {b}" for a, b in s["token_counts"]) if s else ""
        texts.append(
            f"{task} "
            + (
                "n/a"
                if s is None
                else f"differs in {len(s['token_counts'])}/{s['compared']} ({counts})"
                if counts
                else f"identical {s['identical']}/{s['compared']}"
            )
        )
    seen = (state, "; ".join(texts), cells)
    if missing := absent("compared repeats", state, claim):
        return Outcome(*seen, NOT_MEASURED, missing)
    gaps = listed(f"{task} ({s['missing']} repeat(s) without a baseline)" for task, s in state.items() if s["missing"])
    differ = [task for task, s in state.items() if s["token_counts"]]
    same, tol, published = listed(t for t in state if t not in differ), claim.tolerance or 0.0, claim.published
    off = listed(
        f"{task} {a} vs {b} (published {own} vs {base})"
        for task, (own, base) in claim.token_counts.items()
        for a, b in state[task]["token_counts"]
        if abs(a - own) > tol * own or abs(b - base) > tol * base
    )
    count = f"differs on {len(differ)} of {len(state)} tasks ({listed(differ) or 'none'})"
    within = f", token counts within ±{tol:.0%} of the published ones" if claim.token_counts else ""
    named = published if isinstance(published, list) else None
    as_published = named and f"published: differs on {listed(named)}" + "".join(
        f", identical on {t}" for t in claim.tasks if t not in named
    )
    verdict, detail = decide(
        (published == "identical" and bool(differ), NOT_REPRODUCED, f"differs on {listed(differ)}"),
        (published == "identical", REPRODUCED, "identical on every task"),
        (published == "not identical" and bool(same), NOT_REPRODUCED, f"identical on {same}"),
        (bool(off), SAME_DIRECTION, f"differs on every task, but token counts outside ±{tol:.0%}: {off}"),
        (published == "not identical", REPRODUCED, "differs on every task" + within),
        (bool(named) and set(differ) == set(named or ()), REPRODUCED, f"{count}, as published"),
        (bool(named) and bool(set(differ) & set(named or ())), SAME_DIRECTION, f"{count}; {as_published}"),
        (bool(named), NOT_REPRODUCED, f"{count}; {as_published}"),
        (len(differ) == published, REPRODUCED, count),
        (bool(differ) and bool(published), SAME_DIRECTION, f"{count}; published {published}"),
        (True, NOT_REPRODUCED, f"{count}; published {published}"),
    )
    return Outcome(*seen, verdict, detail + (f"; not compared: {gaps}" if gaps else ""))


def _gsm8k(claim: Claim, run: Run) -> Outcome:
    task, score, problem = claim.tasks[0], f"{claim.published}/{claim.total}", (claim.wrong or {}).get("problem")
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
    text = "; ".join(
        f"r{r['repeat']} {r['correct']}/{r['total']}"
        + (
            " ("
            + ", ".join(f"problem {w['problem']}: {w['extracted'] or 'none'} vs {w['reference']}" for w in wrong)
            + ")"
            if wrong
            else ""
        )
        for r, wrong in zip(runs, scored.gsm8k_wrong, strict=True)
    )
    totals, matching = sorted({r["total"] for r in runs}), [r for r in runs if r["correct"] == claim.published]
    right = [r for r in matching if problem is None or problem in r["wrong"]]
    answers, answer = sorted({r["wrong"][problem] for r in right}) if problem else [], (claim.wrong or {}).get("answer")
    exact = [r for r in right if not answer or _number(r["wrong"][problem]) == _number(answer)]
    wrong_too = f", problem {problem} wrong ({listed(answers)})" if problem else ""
    in_some = f"; problem {problem} wrong in {len(right)}" if problem else ""
    verdict, detail = decide(
        (
            not runs,
            NOT_MEASURED,
            f"no scored {task} run for {claim.condition} at temperature {claim.temperature:g} in this run's tables",
        ),
        (
            totals != [claim.total],
            NOT_MEASURED,
            f"this run scored {'/'.join(map(str, totals))} problems, the claim is about {claim.total}",
        ),
        (len(exact) == len(runs), REPRODUCED, f"every run scored {score}{wrong_too}"),
        (
            len(right) == len(runs),
            SAME_DIRECTION,
            lambda: (
                f"every run scored {score} with problem {problem} wrong, but answered "
                + listed(f"{r['wrong'][problem]} in r{r['repeat']}" for r in right if r not in exact)
                + f", not {answer}"
            ),
        ),
        (bool(matching), SAME_DIRECTION, f"{len(matching)} of {len(runs)} run(s) scored {score}{in_some}"),
        (True, NOT_REPRODUCED, f"no run scored {score}"),
    )
    return Outcome(runs, text or "n/a", list(rows.cell_file), verdict, detail)


def _number(answer: str) -> float | str:
    """An answer as a number where it reads as one ('25,000', '$25000' and '25000.0' are one answer)."""
    text = answer.replace(",", "").replace("$", "").strip()
    try:
        return float(text)
    except ValueError:
        return text


def _warm_repeats(claim: Claim, run: Run) -> Outcome:
    task, tol, needed = claim.tasks[0], claim.tolerance or 0.0, range(1, len(claim.published) + 1)
    speeds, cells = run.speeds(task, claim.condition, claim.temperature)
    values = [speeds.get(r) for r in needed]
    outside = listed(
        f"r{r} {v:.1f} (published {p:g})"
        for r, v, p in zip(needed, values, claim.published, strict=True)
        if v is not None and abs(v - p) > tol * p
    )
    rising = None not in values and all(b > a for a, b in itertools.pairwise(values))
    lacking = listed(str(r) for r, v in zip(needed, values, strict=True) if v is None)
    verdict, detail = decide(
        (
            None in values,
            NOT_MEASURED,
            f"needs repeats 1-{needed.stop - 1} of {claim.condition} on {task}; missing {lacking}",
        ),
        (not outside, REPRODUCED, f"every repeat within ±{tol:.0%} of the published speed"),
        (rising, SAME_DIRECTION, f"outside ±{tol:.0%}: {outside}; but faster with each repeat"),
        (True, NOT_REPRODUCED, f"outside ±{tol:.0%}: {outside}; not faster with each repeat"),
    )
    text = ", ".join(f"r{r} {v:.1f}" for r, v in speeds.items()) + " tok/s" if speeds else "n/a"
    return Outcome(speeds, text, cells, verdict, detail)


def _warm_rising(claim: Claim, run: Run) -> Outcome:
    """Each warm repeat faster than the one before, per task (the study's "got faster as the same request
    repeated")."""
    measured, cells = {}, []
    for task in claim.tasks:
        speeds, found = run.speeds(task, claim.condition, claim.temperature)
        measured[task], cells = (speeds if len(speeds) >= 2 else None), cells + found
    ordered = {t: [v for _, v in sorted(m.items())] for t, m in measured.items() if m}
    rising = [t for t, v in ordered.items() if all(b > a for a, b in itertools.pairwise(v))]
    ahead = [t for t, v in ordered.items() if v[-1] > v[0]]
    text = per_task(
        {
            t: "n/a" if m is None else ", ".join(f"r{r} {v:.1f}" for r, v in sorted(m.items())) + " tok/s"
            for t, m in measured.items()
        }
    )
    verdict, detail = decide(
        (None in measured.values(), NOT_MEASURED, lambda: absent("two or more warm repeats", measured, claim)),
        (len(rising) == len(claim.tasks), REPRODUCED, "each repeat faster than the one before"),
        (
            len(ahead) == len(claim.tasks),
            SAME_DIRECTION,
            "the last repeat faster than the first, but not each one "
            "faster than the one before on " + listed(t for t in claim.tasks if t not in rising),
        ),
        (
            True,
            NOT_REPRODUCED,
            f"the last repeat not faster than the first on {listed(t for t in claim.tasks if t not in ahead)}",
        ),
    )
    return Outcome(measured, text, cells, verdict, detail)


def _warm(claim: Claim, run: Run) -> Outcome:
    if claim.published == "faster each repeat":
        return _warm_rising(claim, run)
    if claim.published != "faster":
        return _warm_repeats(claim, run)
    measured, cells, strict, ahead = {}, [], [], []
    for task in claim.tasks:
        (warm, warm_cells), (fresh, fresh_cells) = (
            run.speeds(task, c, claim.temperature) for c in (claim.condition, claim.fresh)
        )
        cells += warm_cells + fresh_cells
        measured[task] = (
            None
            if len(warm) < 2 or not fresh
            else {"warm": statistics.median(warm.values()), "fresh": statistics.median(fresh.values())}
        )
        strict += (
            [task] if measured[task] and min(v for r, v in warm.items() if r != min(warm)) > max(fresh.values()) else []
        )
        ahead += [task] if measured[task] and measured[task]["warm"] > measured[task]["fresh"] else []
    text = "; ".join(
        f"{task} n/a" if m is None else f"{task} warm {m['warm']:.1f} vs fresh {m['fresh']:.1f} tok/s (median)"
        for task, m in measured.items()
    )
    missing = listed(task for task, m in measured.items() if m is None)
    verdict, detail = decide(
        (
            bool(missing),
            NOT_MEASURED,
            f"needs at least two {claim.condition} repeats and a {claim.fresh} run on {missing}",
        ),
        (len(strict) == len(claim.tasks), REPRODUCED, "every warm repeat after the first beats every fresh run"),
        (
            len(ahead) == len(claim.tasks),
            SAME_DIRECTION,
            "warm median ahead on every task, but not every later warm "
            "repeat beats every fresh run on " + listed(t for t in claim.tasks if t not in strict),
        ),
        (True, NOT_REPRODUCED, f"warm median not ahead of fresh on {listed(t for t in claim.tasks if t not in ahead)}"),
    )
    return Outcome(measured, text, cells, verdict, detail)


def _ranked(values: Mapping[str, float | None], fmt: Callable[[float], str]) -> str:
    known = sorted(((v, k) for k, v in values.items() if v is not None), key=lambda item: -item[0])
    absent = listed(k for k, v in values.items() if v is None)
    return " > ".join(f"{k} {fmt(v)}" for v, k in known) + (f" (n/a: {absent})" if absent else "") if known else "n/a"


def _pairs(
    claim: Claim,
    values: Mapping[str, Any],
    reference: Mapping[str, Any] | None = None,
    bounds: Mapping[str, tuple[float, float] | None] | None = None,
) -> Iterator[tuple[str, bool | None]]:
    """('a vs b', ordered as the reference?): pairs across the published tiers, or the pairs the reference orders
    clearly (None for a pair it does not: equal, or with ``bounds``, intervals that overlap or are unknown)."""
    if reference is None:
        for i, upper in enumerate(claim.published):
            for a, b in itertools.product(upper, [m for lower in claim.published[i + 1 :] for m in lower]):
                yield f"{a} vs {b}", values[a] > values[b]
        return
    for a, b in itertools.combinations(claim.tasks, 2):
        clear = reference[a] != reference[b] and (bounds is None or _apart(bounds[a], bounds[b]))
        yield f"{a} vs {b}", side_of(values[a], values[b]) == side_of(reference[a], reference[b]) if clear else None


def _apart(a: tuple[float, float] | None, b: tuple[float, float] | None) -> bool:
    """Two intervals that do not overlap (unknown ones never are apart)."""
    return a is not None and b is not None and (a[0] > b[1] or b[0] > a[1])


def _ordering(claim: Claim, run: Run) -> Outcome:
    """Rankings per group (a condition over tasks, or the task over conditions), pairs judged across groups. Against
    another temperature, only the pairs whose order is clear there (intervals apart, where the metric has them) are
    judged; the others are named."""
    metric, temperature, versus = METRICS[claim.metric], claim.temperature, claim.versus_temperature
    groups = (
        [(c, [(t, t, c) for t in claim.tasks]) for c in claim.conditions]
        if claim.over == "tasks"
        else [(claim.tasks[0], [(c, claim.tasks[0], c) for c in claim.conditions])]
    )
    measured, parts, missing, cells, judged, unclear = {}, [], [], [], [], []
    several, clear_only = len(groups) > 1 or versus is not None, versus is not None and metric.interval is not None
    for label, members in groups:
        at: dict[float, dict[str, float | None]] = {when: {} for when in (temperature, versus) if when is not None}
        for (member, task, condition), when in itertools.product(members, at):
            at[when][member], found = run.value(metric, task, condition, when)
            cells += found
        bounds = (
            None
            if not clear_only
            else {member: run.interval(metric, task, condition, versus) for member, task, condition in members}
        )
        measured[label] = at[temperature] if versus is None else at
        parts.append(
            (f"{label}: " if several else "")
            + " vs ".join(
                _ranked(values, metric.fmt) + (f" at {when:g}" if versus is not None else "")
                for when, values in at.items()
            )
        )
        missing += [f"{label}/{m}" if several else m for m, *_ in members if None in (v[m] for v in at.values())]
        if not missing:
            for pair, ok in _pairs(claim, *at.values(), bounds=bounds):
                (unclear if ok is None else judged).append((f"{label} {pair}" if several else pair, ok))
    what = "published" if versus is None else f"at temperature {versus:g}"
    concordant, discordant = sum(ok for _, ok in judged), listed(pair for pair, ok in judged if not ok)
    left_out = (
        clear_only
        and unclear
        and (
            f"; left out, not clearly ordered at temperature {versus:g} (intervals overlap): "
            + listed(pair for pair, _ in unclear)
        )
    )
    ordered = (
        f"{concordant} of {len(judged)} {'clear ' if clear_only else ''}pairs ordered as {what}"
        + (f"; out of order: {discordant}" if discordant else "")
        + (left_out or "")
    )
    verdict, detail = decide(
        (
            bool(missing),
            NOT_MEASURED,
            f"no {claim.metric} for {listed(missing)} at temperature {temperature:g}"
            + ("" if versus is None else f" or {versus:g}"),
        ),
        (not judged, NOT_MEASURED, f"no clearly ordered pair to compare ({what}){left_out or ''}"),
        (not discordant, REPRODUCED, ordered),
        (2 * concordant > len(judged), SAME_DIRECTION, ordered),
        (True, NOT_REPRODUCED, ordered),
    )
    return Outcome(measured, "; ".join(parts), cells, verdict, detail)


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
}
