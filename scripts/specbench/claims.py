"""The study's published claims (config/claims.yaml) checked against one run's aggregate tables.

``load_claims`` reads and validates the claims; ``evaluate`` gives one row per claim with the published value, this
run's measured value (formatted), a verdict, a detail line and the cell files the measured value came from.

Tables (``evaluate``'s ``tables``, keyed by name; any may be absent): ``summary`` (speedup_median,
median_tokens_per_s, verdict, cell_files per task x condition x temperature), ``acceptance`` (pooled_rate,
accepted_per_step, drafted, accepted, runs), ``identity_summary`` (per task x condition at temperature 0, with the
control row ``off (control: r1)``) and ``runs`` (per cell: tokens_per_s, repeat, task_check, cell_file).

Verdicts:

* ``reproduced``: within the claim's tolerance (see below per kind);
* ``same direction``: not within the tolerance, but on the published side of the kind's pivot, with the same
  verdict direction, or the same ordering in most pairs;
* ``not reproduced``: neither;
* ``not measured in this run``: a row the claim needs is absent, or its value is NaN/empty (e.g. a task or
  condition the run did not include, or fewer repeats than the claim is about). A claim over several tasks needs
  every one of them. When the run is not the study's setup (``is_study_setup=False``) every claim gets this
  verdict with the detail ``NOT_STUDY_SETUP``; ``measured`` and ``cells`` are still filled for information.

Per kind (``published`` may be a number or a ``[low, high]`` range where numeric; a range is widened by the
tolerance at both ends, and every task of the claim must fall inside):

* ``speedup`` (summary.speedup_median, relative tolerance): outside it, ``same direction`` when every task is on
  the published side of 1.0x (a range must lie wholly on one side; a published 1.00x has no side, so it is
  ``reproduced`` or ``not reproduced``).
* ``tokens_per_s`` (summary.median_tokens_per_s, relative tolerance): absolute speed has no direction, so outside
  the tolerance it is ``not reproduced``.
* ``acceptance`` (acceptance.pooled_rate by default, absolute tolerance in rate units): outside it, ``same
  direction`` when on the published side of 50%, i.e. "most drafts accepted" vs "most drafts rejected" is kept
  (a published 50% has no side). ``metric: accepted_per_step`` (absolute tolerance in tokens) has no direction.
* ``verdict`` (summary.verdict, the study's all-runs rule): ``reproduced`` when every task's verdict equals the
  published one; for ``faster``/``slower``, ``same direction`` when the verdict differs but every median multiplier
  is on that side of 1.0x. ``not slower``/``not faster`` are ``reproduced`` when no task has that verdict, else
  ``not reproduced``.
* ``identity`` (identity_summary at temperature 0): ``identical``: every task's compared repeats identical, else
  ``not reproduced``. ``not identical``: every task has a differing repeat; with ``token_counts`` (e.g. ``829 vs
  898`` per task) ``reproduced`` needs every differing repeat's counts within the relative tolerance, otherwise
  ``same direction`` (outputs differ, lengths do not match). An integer N: exactly N of the listed tasks differ is
  ``reproduced``, another non-zero number ``same direction``, none ``not reproduced``. Repeats not compared (a
  missing baseline) are named in the detail; a task with none compared is not measured.
* ``gsm8k`` (runs.task_check, "2/3 correct, problem 3: 25000 vs 70000"): ``reproduced`` when every run scores the
  published count (and, where the claim names a wrong problem, that problem is wrong in every run); ``same
  direction`` when some runs score it, or all do but another problem is the wrong one; else ``not reproduced``. A
  run that scored a different number of problems is not a measurement of the claim.
* ``warm_vs_fresh``: a list of per-repeat speeds (one task, runs.tokens_per_s of repeats 1..n, relative
  tolerance): ``same direction`` when the speeds rise with each repeat. ``faster``: ``reproduced`` when on every
  task each warm repeat from the second on beats every fresh run, ``same direction`` when the warm median beats
  the fresh median on every task; at least two warm repeats are needed.
* ``ordering`` (speedup or acceptance): ``published`` is a list of tiers, best first (an inner list is a tier whose
  members are not ordered among themselves), over tasks (one or more conditions) or over conditions (one task).
  Every pair across tiers must be ordered as published for ``reproduced``; a strict majority of pairs gives
  ``same direction``. With ``versus_temperature`` the reference ordering is this run's own at that temperature,
  per condition (the "temperature 1.0 had the same shape" claim); ties in the reference are not counted.

Nothing here divides by a measured value; relative tolerances multiply the published value, which validation
requires to be positive.
"""

from __future__ import annotations

import itertools
import math
import re
import statistics
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd
import yaml

REPRODUCED = "reproduced"
SAME_DIRECTION = "same direction"
NOT_REPRODUCED = "not reproduced"
NOT_MEASURED = "not measured in this run"
VERDICTS = (REPRODUCED, SAME_DIRECTION, NOT_REPRODUCED, NOT_MEASURED)
NOT_STUDY_SETUP = "this run is not the study's setup (model/build/hardware differ); no comparison made"

RESULT_COLUMNS = ["id", "text", "published", "measured", "verdict", "detail", "cells"]
BASELINE = "off"
CONTROL_SUFFIX = " (control: r1)"

KINDS = ("speedup", "tokens_per_s", "acceptance", "identity", "verdict", "gsm8k", "warm_vs_fresh", "ordering")
VERDICT_VALUES = ("faster", "slower", "none", "not slower", "not faster")
ACCEPTANCE_METRICS = ("pooled_rate", "accepted_per_step")
ORDERING_METRICS = ("speedup", "acceptance")
_ID = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
_COUNTS = re.compile(r"^\s*(\d+)\s+vs\s+(\d+)\s*$")
_CHECK = re.compile(r"^\s*(\d+)\s*/\s*(\d+)\s+correct")
_WRONG = re.compile(r"problem\s+(\d+):\s*([^,]+?)\s+vs\s+([^,]+?)\s*(?:,|$)")

_COMMON_KEYS = {"id", "text", "kind", "published", "tolerance", "source", "note", "task", "tasks", "condition",
                "temperature"}
_EXTRA_KEYS = {
    "speedup": set(),
    "tokens_per_s": set(),
    "acceptance": {"metric"},
    "identity": {"token_counts"},
    "verdict": set(),
    "gsm8k": {"total", "wrong"},
    "warm_vs_fresh": {"fresh"},
    "ordering": {"metric", "over", "conditions", "versus_temperature"},
}


class ClaimError(ValueError):
    """A claim in the claims file is malformed; the message names the claim and the key."""


@dataclass(frozen=True)
class Claim:
    """One published claim. ``published`` is normalised: ranges and tiers are tuples."""

    id: str
    text: str
    kind: str
    published: Any
    source: str
    tasks: tuple[str, ...] = ()
    condition: str | None = None
    temperature: float | None = None
    tolerance: float | None = None
    note: str = ""
    metric: str | None = None
    over: str | None = None
    conditions: tuple[str, ...] = ()
    versus_temperature: float | None = None
    token_counts: Mapping[str, tuple[int, int]] = field(default_factory=dict)
    total: int | None = None
    wrong: Mapping[str, Any] | None = None
    fresh: str | None = None


# --------------------------------------------------------------------------------------------------------------
# Loading and validation
# --------------------------------------------------------------------------------------------------------------


def load_claims(path: str | Path) -> list[Claim]:
    """Read and validate a claims file (a mapping with a ``claims`` list); raise ClaimError naming claim and key."""
    path = Path(path)
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as error:
        raise ClaimError(f"{path}: not valid YAML: {error}") from error
    if not isinstance(data, dict) or not isinstance(data.get("claims"), list):
        raise ClaimError(f"{path}: expected a mapping with a 'claims' list")
    return parse_claims(data["claims"], origin=str(path))


def parse_claims(entries: Sequence[Any], origin: str = "claims") -> list[Claim]:
    """Validate claim entries (dicts as in the YAML file); ids must be unique."""
    claims: list[Claim] = []
    seen: set[str] = set()
    for index, entry in enumerate(entries, start=1):
        claim = _parse_claim(entry, f"{origin}: claim #{index}")
        if claim.id in seen:
            raise ClaimError(f"{origin}: claim {claim.id!r}: key 'id': duplicate id")
        seen.add(claim.id)
        claims.append(claim)
    return claims


class _Entry:
    """Typed access to one claim entry, with errors that name the claim and the key."""

    def __init__(self, entry: Mapping[str, Any], where: str) -> None:
        self.entry = entry
        self.where = where

    def fail(self, key: str, problem: str) -> ClaimError:
        return ClaimError(f"{self.where}: key {key!r}: {problem}")

    def has(self, key: str) -> bool:
        return self.entry.get(key) is not None

    def text(self, key: str, *, required: bool = True, default: str = "") -> str:
        value = self.entry.get(key)
        if value is None:
            if required:
                raise self.fail(key, "missing")
            return default
        if not isinstance(value, str) or not value.strip():
            raise self.fail(key, f"expected a non-empty string, got {value!r}")
        return value.strip()

    def number(self, key: str, *, required: bool = True) -> float | None:
        value = self.entry.get(key)
        if value is None:
            if required:
                raise self.fail(key, "missing")
            return None
        if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
            raise self.fail(key, f"expected a number, got {value!r}")
        return float(value)

    def names(self, key: str) -> tuple[str, ...]:
        value = self.entry.get(key)
        if not isinstance(value, list) or not value or not all(isinstance(v, str) and v for v in value):
            raise self.fail(key, f"expected a non-empty list of names, got {value!r}")
        if len(set(value)) != len(value):
            raise self.fail(key, f"names repeat in {value!r}")
        return tuple(value)

    def tasks(self, *, required: bool = True, single: bool = False) -> tuple[str, ...]:
        if self.has("task") and self.has("tasks"):
            raise self.fail("tasks", "give either 'task' or 'tasks', not both")
        if self.has("task"):
            return (self.text("task"),)
        if self.has("tasks"):
            if single:
                raise self.fail("tasks", "this claim is about one task: use 'task'")
            return self.names("tasks")
        if required:
            raise self.fail("task", "missing ('task' or 'tasks')")
        return ()


def _parse_claim(entry: Any, where: str) -> Claim:
    if not isinstance(entry, dict):
        raise ClaimError(f"{where}: expected a mapping, got {type(entry).__name__}")
    claim_id = entry.get("id")
    if not isinstance(claim_id, str) or not _ID.match(claim_id):
        raise ClaimError(f"{where}: key 'id': expected a kebab-case id (a-z, 0-9, '-'), got {claim_id!r}")
    e = _Entry(entry, f"{where.rsplit(':', 1)[0]}: claim {claim_id!r}")
    kind = e.text("kind")
    if kind not in KINDS:
        raise e.fail("kind", f"unknown kind {kind!r}; expected one of {', '.join(KINDS)}")
    unknown = sorted(set(entry) - _COMMON_KEYS - _EXTRA_KEYS[kind])
    if unknown:
        raise e.fail(unknown[0], f"not a key of a {kind} claim")
    if "published" not in entry or entry["published"] is None:
        raise e.fail("published", "missing")
    tolerance = e.number("tolerance", required=False)
    if tolerance is not None and tolerance < 0:
        raise e.fail("tolerance", f"must not be negative, got {tolerance}")
    base = {"id": claim_id, "text": e.text("text"), "kind": kind, "source": e.text("source"),
            "note": e.text("note", required=False), "tolerance": tolerance}
    parse = _PARSERS[kind]
    return Claim(**base, **parse(e, entry))


def _temperature(e: _Entry, key: str = "temperature") -> float:
    value = e.number(key)
    assert value is not None
    if value < 0:
        raise e.fail(key, f"must not be negative, got {value}")
    return value


def _require_tolerance(e: _Entry, *, below_one: bool) -> None:
    tolerance = e.number("tolerance")
    assert tolerance is not None
    if below_one and tolerance >= 1:
        raise e.fail("tolerance", f"a relative tolerance must be below 1, got {tolerance}")


def _value_or_range(e: _Entry, *, positive: bool) -> float | tuple[float, float]:
    value = e.entry["published"]
    if isinstance(value, list):
        if len(value) != 2 or not all(isinstance(v, int | float) and not isinstance(v, bool) for v in value):
            raise e.fail("published", f"a range is [low, high], got {value!r}")
        low, high = float(value[0]), float(value[1])
        if low > high:
            raise e.fail("published", f"range low {low} is above high {high}")
        if positive and low <= 0:
            raise e.fail("published", f"must be positive, got {value!r}")
        return (low, high)
    published = e.number("published")
    assert published is not None
    if positive and published <= 0:
        raise e.fail("published", f"must be positive, got {published}")
    return published


def _parse_numeric(e: _Entry, entry: Mapping[str, Any]) -> dict[str, Any]:
    _require_tolerance(e, below_one=True)
    return {"tasks": e.tasks(), "condition": e.text("condition"), "temperature": _temperature(e),
            "published": _value_or_range(e, positive=True)}


def _parse_acceptance(e: _Entry, entry: Mapping[str, Any]) -> dict[str, Any]:
    metric = e.text("metric", required=False, default="pooled_rate")
    if metric not in ACCEPTANCE_METRICS:
        raise e.fail("metric", f"expected one of {', '.join(ACCEPTANCE_METRICS)}, got {metric!r}")
    _require_tolerance(e, below_one=False)
    published = _value_or_range(e, positive=False)
    bounds = published if isinstance(published, tuple) else (published, published)
    if bounds[0] < 0 or (metric == "pooled_rate" and bounds[1] > 1):
        raise e.fail("published", f"a rate lies in [0, 1], got {entry['published']!r}")
    return {"tasks": e.tasks(), "condition": e.text("condition"), "temperature": _temperature(e),
            "published": published, "metric": metric}


def _parse_identity(e: _Entry, entry: Mapping[str, Any]) -> dict[str, Any]:
    tasks = e.tasks()
    published = entry["published"]
    if isinstance(published, bool) or not (published in ("identical", "not identical") or isinstance(published, int)):
        raise e.fail("published", f"expected 'identical', 'not identical' or a number of tasks, got {published!r}")
    if isinstance(published, int) and not 0 <= published <= len(tasks):
        raise e.fail("published", f"a number of the {len(tasks)} listed tasks, got {published}")
    counts: dict[str, tuple[int, int]] = {}
    raw = entry.get("token_counts")
    if raw is not None:
        if published != "not identical":
            raise e.fail("token_counts", "only for a 'not identical' claim")
        if not isinstance(raw, dict) or not raw:
            raise e.fail("token_counts", f"expected a mapping task -> 'N vs M', got {raw!r}")
        for task, text in raw.items():
            match = _COUNTS.match(str(text))
            if task not in tasks or not match:
                raise e.fail("token_counts", f"{task!r}: expected one of the claim's tasks -> 'N vs M', got {text!r}")
            counts[task] = (int(match[1]), int(match[2]))
        _require_tolerance(e, below_one=True)
    if e.has("temperature") and e.number("temperature") != 0.0:
        raise e.fail("temperature", "identity is compared at temperature 0 only")
    return {"tasks": tasks, "condition": e.text("condition"), "temperature": 0.0, "published": published,
            "token_counts": counts}


def _parse_verdict(e: _Entry, entry: Mapping[str, Any]) -> dict[str, Any]:
    published = entry["published"]
    if published not in VERDICT_VALUES:
        raise e.fail("published", f"expected one of {', '.join(VERDICT_VALUES)}, got {published!r}")
    return {"tasks": e.tasks(), "condition": e.text("condition"), "temperature": _temperature(e),
            "published": published}


def _parse_gsm8k(e: _Entry, entry: Mapping[str, Any]) -> dict[str, Any]:
    tasks = e.tasks(required=False, single=True) or ("gsm8k",)
    total = int(e.number("total", required=False) or 3)
    published = entry["published"]
    if isinstance(published, bool) or not isinstance(published, int) or not 0 <= published <= total:
        raise e.fail("published", f"expected a number of correct answers out of {total}, got {published!r}")
    wrong = entry.get("wrong")
    if wrong is not None:
        if not isinstance(wrong, dict) or not isinstance(wrong.get("problem"), int) or isinstance(
                wrong.get("problem"), bool) or not 1 <= wrong["problem"] <= total:
            raise e.fail("wrong", f"expected {{problem: 1..{total}, answer, reference}}, got {wrong!r}")
        extra = set(wrong) - {"problem", "answer", "reference"}
        if extra:
            raise e.fail("wrong", f"unknown field {sorted(extra)[0]!r}")
        if published == total:
            raise e.fail("wrong", "a claim with every answer correct names no wrong problem")
        wrong = {"problem": wrong["problem"], "answer": str(wrong.get("answer", "")),
                 "reference": str(wrong.get("reference", ""))}
    return {"tasks": tasks, "condition": e.text("condition"), "temperature": _temperature(e),
            "published": published, "total": total, "wrong": wrong}


def _parse_warm(e: _Entry, entry: Mapping[str, Any]) -> dict[str, Any]:
    published = entry["published"]
    tasks = e.tasks()
    if isinstance(published, list):
        if len(tasks) != 1:
            raise e.fail("tasks", "per-repeat speeds are about one task")
        if len(published) < 2 or not all(
                isinstance(v, int | float) and not isinstance(v, bool) and v > 0 for v in published):
            raise e.fail("published", f"expected at least two positive speeds (repeats 1, 2, ...), got {published!r}")
        _require_tolerance(e, below_one=True)
        published = tuple(float(v) for v in published)
    elif published != "faster":
        raise e.fail("published", f"expected 'faster' or a list of per-repeat speeds, got {published!r}")
    return {"tasks": tasks, "condition": e.text("condition", required=False, default="ngram-mod-warm"),
            "fresh": e.text("fresh", required=False, default="ngram-mod"), "temperature": _temperature(e),
            "published": published}


def _parse_ordering(e: _Entry, entry: Mapping[str, Any]) -> dict[str, Any]:
    metric = e.text("metric", required=False, default="speedup")
    if metric not in ORDERING_METRICS:
        raise e.fail("metric", f"expected one of {', '.join(ORDERING_METRICS)}, got {metric!r}")
    over = e.text("over", required=False, default="tasks")
    if over not in ("tasks", "conditions"):
        raise e.fail("over", f"expected 'tasks' or 'conditions', got {over!r}")
    published = entry["published"]
    versus = e.number("versus_temperature", required=False)
    result: dict[str, Any] = {"metric": metric, "over": over, "temperature": _temperature(e),
                              "versus_temperature": versus}
    if versus is not None:
        if over != "tasks":
            raise e.fail("over", "a comparison with another temperature orders tasks")
        if published != "same ordering":
            raise e.fail("published", f"with versus_temperature, published is 'same ordering', got {published!r}")
        if versus == result["temperature"]:
            raise e.fail("versus_temperature", "must differ from temperature")
        conditions = e.names("conditions") if e.has("conditions") else (e.text("condition"),)
        tasks = e.tasks()
        if len(tasks) < 2:
            raise e.fail("tasks", "an ordering needs at least two tasks")
        return {**result, "published": published, "tasks": tasks, "conditions": conditions}
    tiers = _tiers(e, published)
    if over == "tasks":
        if e.has("tasks") or e.has("task"):
            raise e.fail("tasks", "the tasks are the members of 'published'")
        conditions = e.names("conditions") if e.has("conditions") else (e.text("condition"),)
        return {**result, "published": tiers, "conditions": conditions, "tasks": tuple(m for t in tiers for m in t),
                "condition": conditions[0] if len(conditions) == 1 else None}
    if e.has("conditions") or e.has("condition"):
        raise e.fail("conditions", "the conditions are the members of 'published'")
    return {**result, "published": tiers, "tasks": e.tasks(single=True),
            "conditions": tuple(m for t in tiers for m in t)}


def _tiers(e: _Entry, published: Any) -> tuple[tuple[str, ...], ...]:
    if not isinstance(published, list) or len(published) < 2:
        raise e.fail("published", f"expected a list of at least two tiers, best first, got {published!r}")
    tiers: list[tuple[str, ...]] = []
    for tier in published:
        members = [tier] if isinstance(tier, str) else tier
        if not isinstance(members, list) or not members or not all(isinstance(m, str) and m for m in members):
            raise e.fail("published", f"a tier is a name or a list of names, got {tier!r}")
        tiers.append(tuple(members))
    flat = [m for t in tiers for m in t]
    if len(set(flat)) != len(flat):
        raise e.fail("published", f"a name appears twice in {published!r}")
    return tuple(tiers)


_PARSERS: dict[str, Callable[[_Entry, Mapping[str, Any]], dict[str, Any]]] = {
    "speedup": _parse_numeric,
    "tokens_per_s": _parse_numeric,
    "acceptance": _parse_acceptance,
    "identity": _parse_identity,
    "verdict": _parse_verdict,
    "gsm8k": _parse_gsm8k,
    "warm_vs_fresh": _parse_warm,
    "ordering": _parse_ordering,
}


# --------------------------------------------------------------------------------------------------------------
# Table access
# --------------------------------------------------------------------------------------------------------------


def _number(value: Any) -> float | None:
    """A finite float, or None for None/NaN/NA/non-numbers."""
    if value is None or isinstance(value, bool):
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


def _string(value: Any) -> str:
    if value is None:
        return ""
    try:
        if pd.isna(value):
            return ""
    except (TypeError, ValueError):
        pass
    return str(value).strip()


class _Tables:
    def __init__(self, tables: Mapping[str, pd.DataFrame]) -> None:
        self.tables = tables

    def rows(self, name: str, **filters: Any) -> pd.DataFrame:
        """Rows of a table matching every filter (temperature compared numerically); empty when absent."""
        frame = self.tables.get(name)
        if frame is None or len(frame) == 0:
            return pd.DataFrame()
        mask = pd.Series(True, index=frame.index)
        for column, value in filters.items():
            if column not in frame.columns:
                return frame.iloc[0:0]
            if column == "temperature":
                mask &= (pd.to_numeric(frame[column], errors="coerce") - float(value)).abs() < 1e-6
            else:
                mask &= frame[column].astype(str) == str(value)
        return frame[mask]

    def first(self, name: str, **filters: Any) -> pd.Series | None:
        rows = self.rows(name, **filters)
        return None if rows.empty else rows.iloc[0]

    def summary_cells(self, task: str, condition: str, temperature: float) -> list[str]:
        row = self.first("summary", task=task, condition=condition, temperature=temperature)
        if row is not None and "cell_files" in row.index:
            cells = [c for c in _string(row["cell_files"]).split(";") if c]
            if cells:
                return cells
        return self.run_cells(task, condition, temperature)

    def run_cells(self, task: str, condition: str, temperature: float) -> list[str]:
        rows = self.rows("runs", task=task, condition=condition, temperature=temperature)
        if rows.empty or "cell_file" not in rows.columns:
            return []
        return [c for c in (_string(v) for v in rows["cell_file"]) if c]


@dataclass
class _Outcome:
    verdict: str
    measured: str
    detail: str
    cells: list[str] = field(default_factory=list)


def _unique(cells: Iterable[str]) -> str:
    return ";".join(dict.fromkeys(c for c in cells if c))


def _temp(value: float | None) -> str:
    return f"temperature {value:g}" if value is not None else "temperature 0"


def _list(items: Iterable[str]) -> str:
    return ", ".join(items)


# --------------------------------------------------------------------------------------------------------------
# Numeric claims: speedup, tokens_per_s, acceptance
# --------------------------------------------------------------------------------------------------------------


def _bounds(published: Any) -> tuple[float, float]:
    return (published[0], published[1]) if isinstance(published, tuple) else (published, published)


def _side(value: float, pivot: float) -> int:
    return (value > pivot) - (value < pivot)


def _published_side(published: Any, pivot: float) -> int:
    low, high = _bounds(published)
    return _side(low, pivot) if _side(low, pivot) == _side(high, pivot) else 0


def _judge_numeric(claim: Claim, values: Mapping[str, float | None], *, relative: bool, pivot: float | None,
                   fmt: Callable[[float], str], pivot_text: str = "",
                   limits: tuple[float, float] = (-math.inf, math.inf)) -> tuple[str, str]:
    missing = [task for task, value in values.items() if value is None]
    if missing:
        return NOT_MEASURED, (f"no value for {_list(missing)} ({claim.condition}, {_temp(claim.temperature)}) "
                              "in this run's tables")
    measured = {task: value for task, value in values.items() if value is not None}
    tolerance = claim.tolerance or 0.0
    low, high = _bounds(claim.published)
    if relative:
        band_low, band_high, tol_text = low * (1 - tolerance), high * (1 + tolerance), f"±{tolerance:.0%}"
    else:
        band_low, band_high, tol_text = low - tolerance, high + tolerance, f"±{fmt(tolerance)}"
    band_low, band_high = max(band_low, limits[0]), min(band_high, limits[1])
    band = f"{fmt(band_low)} to {fmt(band_high)} (published {_format_published(claim)}, {tol_text})"
    outside = {task: value for task, value in measured.items() if not band_low <= value <= band_high}
    if not outside:
        return REPRODUCED, f"within {band}"
    out_text = _list(f"{task} {fmt(value)}" for task, value in outside.items())
    if pivot is None:
        return NOT_REPRODUCED, f"outside {band}: {out_text}"
    side = _published_side(claim.published, pivot)
    if side and all(_side(value, pivot) == side for value in measured.values()):
        where = "above" if side > 0 else "below"
        return SAME_DIRECTION, f"outside {band}: {out_text}; but {where} {pivot_text} like the published figure"
    if not side:
        return NOT_REPRODUCED, f"outside {band}: {out_text}; the published figure is on neither side of {pivot_text}"
    return NOT_REPRODUCED, f"outside {band}: {out_text}; not on the published side of {pivot_text}"


def _per_task(claim: Claim, values: Mapping[str, float | None], fmt: Callable[[float], str]) -> str:
    shown = {task: ("n/a" if value is None else fmt(value)) for task, value in values.items()}
    if len(shown) == 1:
        return next(iter(shown.values()))
    return "; ".join(f"{task} {text}" for task, text in shown.items())


def _times(value: float) -> str:
    return f"{value:.2f}x"


def _speed(value: float) -> str:
    return f"{value:.1f} tok/s"


def _percent(value: float) -> str:
    return f"{value:.0%}"


def _tokens(value: float) -> str:
    return f"{value:.2f} tokens/step"


def _evaluate_speedup(claim: Claim, t: _Tables) -> _Outcome:
    values: dict[str, float | None] = {}
    cells: list[str] = []
    for task in claim.tasks:
        row = t.first("summary", task=task, condition=claim.condition, temperature=claim.temperature)
        values[task] = _number(row.get("speedup_median")) if row is not None else None
        if row is not None:
            cells += t.summary_cells(task, claim.condition, claim.temperature)
            cells += t.summary_cells(task, BASELINE, claim.temperature)
    verdict, detail = _judge_numeric(claim, values, relative=True, pivot=1.0, fmt=_times, pivot_text="1.0x")
    return _Outcome(verdict, _per_task(claim, values, _times), detail, cells)


def _evaluate_tokens_per_s(claim: Claim, t: _Tables) -> _Outcome:
    values: dict[str, float | None] = {}
    cells: list[str] = []
    for task in claim.tasks:
        row = t.first("summary", task=task, condition=claim.condition, temperature=claim.temperature)
        values[task] = _number(row.get("median_tokens_per_s")) if row is not None else None
        if row is not None:
            cells += t.summary_cells(task, claim.condition, claim.temperature)
    verdict, detail = _judge_numeric(claim, values, relative=True, pivot=None, fmt=_speed)
    return _Outcome(verdict, _per_task(claim, values, _speed), detail, cells)


def _evaluate_acceptance(claim: Claim, t: _Tables) -> _Outcome:
    metric = claim.metric or "pooled_rate"
    fmt = _percent if metric == "pooled_rate" else _tokens
    values: dict[str, float | None] = {}
    extras: dict[str, str] = {}
    cells: list[str] = []
    for task in claim.tasks:
        row = t.first("acceptance", task=task, condition=claim.condition, temperature=claim.temperature)
        values[task] = _number(row.get(metric)) if row is not None else None
        if row is not None:
            cells += t.run_cells(task, claim.condition, claim.temperature)
            drafted, accepted, runs = (_number(row.get(k)) for k in ("drafted", "accepted", "runs"))
            if drafted is not None and accepted is not None:
                per_run = f", {drafted / runs:.0f} drafted per run" if runs else ""
                extras[task] = f"{accepted:.0f} of {drafted:.0f} drafted tokens accepted{per_run}"
    measured = _per_task(claim, values, fmt)
    if extras:
        measured += " (" + "; ".join(extras[task] if len(claim.tasks) == 1 else f"{task}: {extras[task]}"
                                     for task in claim.tasks if task in extras) + ")"
    pivot = 0.5 if metric == "pooled_rate" else None
    limits = (0.0, 1.0) if metric == "pooled_rate" else (0.0, math.inf)
    verdict, detail = _judge_numeric(claim, values, relative=False, pivot=pivot, fmt=fmt, pivot_text="50%",
                                     limits=limits)
    return _Outcome(verdict, measured, detail, cells)


# --------------------------------------------------------------------------------------------------------------
# Verdict claims
# --------------------------------------------------------------------------------------------------------------


def _evaluate_verdict(claim: Claim, t: _Tables) -> _Outcome:
    verdicts: dict[str, str | None] = {}
    speedups: dict[str, float | None] = {}
    cells: list[str] = []
    for task in claim.tasks:
        row = t.first("summary", task=task, condition=claim.condition, temperature=claim.temperature)
        verdicts[task] = (_string(row.get("verdict")) or None) if row is not None else None
        speedups[task] = _number(row.get("speedup_median")) if row is not None else None
        if row is not None:
            cells += t.summary_cells(task, claim.condition, claim.temperature)
            cells += t.summary_cells(task, BASELINE, claim.temperature)
    shown = {task: (v if v else "n/a") + (f" ({_times(s)})" if s is not None else "")
             for (task, v), s in zip(verdicts.items(), speedups.values(), strict=True)}
    measured = next(iter(shown.values())) if len(shown) == 1 else "; ".join(f"{k} {v}" for k, v in shown.items())
    missing = [task for task, v in verdicts.items() if v is None]
    if missing:
        return _Outcome(NOT_MEASURED, measured, f"no verdict for {_list(missing)} ({claim.condition}, "
                        f"{_temp(claim.temperature)}) in this run's tables", cells)
    published = claim.published
    if published.startswith("not "):
        excluded = published.removeprefix("not ")
        hit = [task for task, v in verdicts.items() if v == excluded]
        if not hit:
            return _Outcome(REPRODUCED, measured, f"no task is '{excluded}' by the all-runs rule", cells)
        return _Outcome(NOT_REPRODUCED, measured, f"'{excluded}' by the all-runs rule on {_list(hit)}", cells)
    differing = [task for task, v in verdicts.items() if v != published]
    if not differing:
        return _Outcome(REPRODUCED, measured, f"'{published}' by the all-runs rule on every task", cells)
    side = {"faster": 1, "slower": -1}.get(published, 0)
    if side and all(s is not None and _side(s, 1.0) == side for s in speedups.values()):
        where = "above" if side > 0 else "below"
        return _Outcome(SAME_DIRECTION, measured, f"not '{published}' by the all-runs rule on {_list(differing)}, "
                        f"but every median multiplier is {where} 1.0x", cells)
    return _Outcome(NOT_REPRODUCED, measured, f"not '{published}' on {_list(differing)}", cells)


# --------------------------------------------------------------------------------------------------------------
# Identity claims
# --------------------------------------------------------------------------------------------------------------


def _count_pairs(text: str) -> list[tuple[int, int] | None]:
    pairs: list[tuple[int, int] | None] = []
    for part in (p for p in text.split(";") if p.strip()):
        match = _COUNTS.match(part)
        pairs.append((int(match[1]), int(match[2])) if match else None)
    return pairs


def _identity_cells(claim: Claim, t: _Tables, task: str) -> list[str]:
    condition = claim.condition or ""
    own = condition.removesuffix(CONTROL_SUFFIX) if condition.endswith(CONTROL_SUFFIX) else condition
    cells = t.run_cells(task, own, 0.0)
    return cells + ([] if own == BASELINE else t.run_cells(task, BASELINE, 0.0))


def _evaluate_identity(claim: Claim, t: _Tables) -> _Outcome:
    state: dict[str, dict[str, Any] | None] = {}
    cells: list[str] = []
    for task in claim.tasks:
        row = t.first("identity_summary", task=task, condition=claim.condition)
        cells += _identity_cells(claim, t, task)
        compared = _number(row.get("repeats_compared")) if row is not None else None
        if row is None or not compared:
            state[task] = None
            continue
        identical = int(_number(row.get("identical")) or 0)
        state[task] = {"compared": int(compared), "identical": identical, "differing": int(compared) - identical,
                       "missing": int(_number(row.get("missing")) or 0),
                       "counts": _count_pairs(_string(row.get("token_counts")))}
    parts = []
    for task, s in state.items():
        if s is None:
            parts.append(f"{task} n/a")
        elif s["differing"]:
            counts = "; ".join("?" if p is None else f"{p[0]} vs {p[1]}" for p in s["counts"])
            parts.append(f"{task} differs in {s['differing']}/{s['compared']}" + (f" ({counts})" if counts else ""))
        else:
            parts.append(f"{task} identical {s['identical']}/{s['compared']}")
    measured = "; ".join(parts)
    missing = [task for task, s in state.items() if s is None]
    if missing:
        return _Outcome(NOT_MEASURED, measured, f"no compared repeats for {_list(missing)} ({claim.condition}, "
                        "temperature 0) in this run's tables", cells)
    known = {task: s for task, s in state.items() if s is not None}
    gaps = [f"{task} ({s['missing']} repeat(s) without a baseline)" for task, s in known.items() if s["missing"]]
    gap_text = f"; not compared: {_list(gaps)}" if gaps else ""
    differ = [task for task, s in known.items() if s["differing"]]
    same = [task for task, s in known.items() if not s["differing"]]
    published = claim.published
    if published == "identical":
        if not differ:
            return _Outcome(REPRODUCED, measured, f"identical on every task{gap_text}", cells)
        return _Outcome(NOT_REPRODUCED, measured, f"differs on {_list(differ)}{gap_text}", cells)
    if published == "not identical":
        if same:
            return _Outcome(NOT_REPRODUCED, measured, f"identical on {_list(same)}{gap_text}", cells)
        if not claim.token_counts:
            return _Outcome(REPRODUCED, measured, f"differs on every task{gap_text}", cells)
        return _judge_counts(claim, known, measured, gap_text, cells)
    count = len(differ)
    detail = f"differs on {count} of {len(known)} tasks ({_list(differ) or 'none'}){gap_text}"
    if count == published:
        return _Outcome(REPRODUCED, measured, detail, cells)
    if count and published:
        return _Outcome(SAME_DIRECTION, measured, detail + f"; published {published}", cells)
    return _Outcome(NOT_REPRODUCED, measured, detail + f"; published {published}", cells)


def _judge_counts(claim: Claim, known: Mapping[str, dict[str, Any]], measured: str, gap_text: str,
                  cells: list[str]) -> _Outcome:
    tolerance = claim.tolerance or 0.0
    off_counts: list[str] = []
    for task, (own, base) in claim.token_counts.items():
        for pair in known[task]["counts"] or [None]:
            if pair is None or not (abs(pair[0] - own) <= tolerance * own and abs(pair[1] - base) <= tolerance * base):
                off_counts.append(f"{task} {'?' if pair is None else f'{pair[0]} vs {pair[1]}'} (published {own} vs "
                                  f"{base})")
    if not off_counts:
        return _Outcome(REPRODUCED, measured, f"differs on every task, token counts within ±{tolerance:.0%} of the "
                        f"published ones{gap_text}", cells)
    return _Outcome(SAME_DIRECTION, measured, f"differs on every task, but token counts outside ±{tolerance:.0%}: "
                    f"{_list(off_counts)}{gap_text}", cells)


# --------------------------------------------------------------------------------------------------------------
# GSM8K claims
# --------------------------------------------------------------------------------------------------------------


def parse_task_check(text: str) -> dict[str, Any] | None:
    """'2/3 correct, problem 3: 25000 vs 70000' -> {correct, total, wrong: {problem: (answer, reference)}}."""
    match = _CHECK.match(text or "")
    if not match:
        return None
    wrong = {int(m[1]): (m[2].strip(), m[3].strip()) for m in _WRONG.finditer(text[match.end():])}
    return {"correct": int(match[1]), "total": int(match[2]), "wrong": wrong}


def _evaluate_gsm8k(claim: Claim, t: _Tables) -> _Outcome:
    task = claim.tasks[0]
    rows = t.rows("runs", task=task, condition=claim.condition, temperature=claim.temperature)
    cells = t.run_cells(task, claim.condition or "", claim.temperature or 0.0)
    checks: list[tuple[int, dict[str, Any]]] = []
    if not rows.empty and "task_check" in rows.columns:
        for _, row in rows.iterrows():
            parsed = parse_task_check(_string(row.get("task_check")))
            if parsed is not None:
                checks.append((int(_number(row.get("repeat")) or 0), parsed))
    checks.sort(key=lambda item: item[0])
    measured = "; ".join(_format_check(repeat, c) for repeat, c in checks) if checks else "n/a"
    if not checks:
        return _Outcome(NOT_MEASURED, measured, f"no scored {task} run for {claim.condition} at "
                        f"{_temp(claim.temperature)} in this run's tables", cells)
    totals = sorted({c["total"] for _, c in checks})
    if totals != [claim.total]:
        return _Outcome(NOT_MEASURED, measured, f"this run scored {'/'.join(map(str, totals))} problems, the claim is "
                        f"about {claim.total}", cells)
    matching = [c for _, c in checks if c["correct"] == claim.published]
    wrong = claim.wrong
    problem = wrong["problem"] if wrong else None
    right_problem = [c for c in matching if problem is None or problem in c["wrong"]]
    if len(right_problem) == len(checks):
        detail = f"every run scored {claim.published}/{claim.total}"
        if wrong:
            answers = sorted({c["wrong"][problem][0] for c in right_problem})
            same = answers == [wrong["answer"]] if wrong["answer"] else True
            detail += (f", problem {problem} wrong ({_list(answers)}"
                       f"{'' if same else '; published ' + wrong['answer']})")
        return _Outcome(REPRODUCED, measured, detail, cells)
    if matching:
        return _Outcome(SAME_DIRECTION, measured, f"{len(matching)} of {len(checks)} run(s) scored "
                        f"{claim.published}/{claim.total}" + (f"; problem {problem} wrong in {len(right_problem)}"
                                                              if problem else ""), cells)
    return _Outcome(NOT_REPRODUCED, measured, f"no run scored {claim.published}/{claim.total}", cells)


def _format_check(repeat: int, check: dict[str, Any]) -> str:
    text = f"r{repeat} {check['correct']}/{check['total']}"
    if check["wrong"]:
        text += " (" + ", ".join(f"problem {n}: {a} vs {r}" for n, (a, r) in sorted(check["wrong"].items())) + ")"
    return text


# --------------------------------------------------------------------------------------------------------------
# Warm vs fresh n-gram server
# --------------------------------------------------------------------------------------------------------------


def _speeds(t: _Tables, task: str, condition: str, temperature: float) -> dict[int, float]:
    rows = t.rows("runs", task=task, condition=condition, temperature=temperature)
    speeds: dict[int, float] = {}
    if rows.empty or "tokens_per_s" not in rows.columns or "repeat" not in rows.columns:
        return speeds
    for _, row in rows.iterrows():
        repeat, value = _number(row.get("repeat")), _number(row.get("tokens_per_s"))
        if repeat is not None and value is not None:
            speeds[int(repeat)] = value
    return dict(sorted(speeds.items()))


def _evaluate_warm(claim: Claim, t: _Tables) -> _Outcome:
    temperature = claim.temperature or 0.0
    warm_condition, fresh_condition = claim.condition or "ngram-mod-warm", claim.fresh or "ngram-mod"
    if isinstance(claim.published, tuple):
        task = claim.tasks[0]
        speeds = _speeds(t, task, warm_condition, temperature)
        cells = t.run_cells(task, warm_condition, temperature)
        measured = ", ".join(f"r{r} {v:.1f}" for r, v in speeds.items()) + " tok/s" if speeds else "n/a"
        needed = range(1, len(claim.published) + 1)
        absent = [r for r in needed if r not in speeds]
        if absent:
            return _Outcome(NOT_MEASURED, measured, f"needs repeats {needed.start}-{needed.stop - 1} of "
                            f"{warm_condition} on {task}; missing {_list(map(str, absent))}", cells)
        values = [speeds[r] for r in needed]
        tolerance = claim.tolerance or 0.0
        outside = [f"r{r} {v:.1f} (published {p:g})" for r, v, p in zip(needed, values, claim.published, strict=True)
                   if abs(v - p) > tolerance * p]
        if not outside:
            return _Outcome(REPRODUCED, measured, f"every repeat within ±{tolerance:.0%} of the published speed", cells)
        rising = all(b > a for a, b in itertools.pairwise(values))
        if rising:
            return _Outcome(SAME_DIRECTION, measured, f"outside ±{tolerance:.0%}: {_list(outside)}; but faster with "
                            "each repeat", cells)
        return _Outcome(NOT_REPRODUCED, measured, f"outside ±{tolerance:.0%}: {_list(outside)}; not faster with each "
                        "repeat", cells)
    parts, cells, missing, strict, ahead = [], [], [], [], []
    for task in claim.tasks:
        warm = _speeds(t, task, warm_condition, temperature)
        fresh = _speeds(t, task, fresh_condition, temperature)
        cells += t.run_cells(task, warm_condition, temperature) + t.run_cells(task, fresh_condition, temperature)
        if len(warm) < 2 or not fresh:
            missing.append(task)
            parts.append(f"{task} n/a")
            continue
        warm_median, fresh_median = statistics.median(warm.values()), statistics.median(fresh.values())
        parts.append(f"{task} warm {warm_median:.1f} vs fresh {fresh_median:.1f} tok/s (median)")
        later = [v for r, v in warm.items() if r != min(warm)]
        if min(later) > max(fresh.values()):
            strict.append(task)
        if warm_median > fresh_median:
            ahead.append(task)
    measured = "; ".join(parts)
    if missing:
        return _Outcome(NOT_MEASURED, measured, f"needs at least two {warm_condition} repeats and a "
                        f"{fresh_condition} run on {_list(missing)}", cells)
    if len(strict) == len(claim.tasks):
        return _Outcome(REPRODUCED, measured, "every warm repeat after the first beats every fresh run", cells)
    lagging = [task for task in claim.tasks if task not in strict]
    if len(ahead) == len(claim.tasks):
        return _Outcome(SAME_DIRECTION, measured, f"warm median ahead on every task, but not every later warm "
                        f"repeat beats every fresh run on {_list(lagging)}", cells)
    behind = [task for task in claim.tasks if task not in ahead]
    return _Outcome(NOT_REPRODUCED, measured, f"warm median not ahead of fresh on {_list(behind)}", cells)


# --------------------------------------------------------------------------------------------------------------
# Ordering claims
# --------------------------------------------------------------------------------------------------------------


def _metric(t: _Tables, metric: str, task: str, condition: str, temperature: float) -> tuple[float | None, list[str]]:
    if metric == "acceptance":
        row = t.first("acceptance", task=task, condition=condition, temperature=temperature)
        value = _number(row.get("pooled_rate")) if row is not None else None
        return value, (t.run_cells(task, condition, temperature) if row is not None else [])
    row = t.first("summary", task=task, condition=condition, temperature=temperature)
    value = _number(row.get("speedup_median")) if row is not None else None
    cells = (t.summary_cells(task, condition, temperature) + t.summary_cells(task, BASELINE, temperature)
             if row is not None else [])
    return value, cells


def _ranked(values: Mapping[str, float | None], fmt: Callable[[float], str]) -> str:
    known = sorted(((v, k) for k, v in values.items() if v is not None), key=lambda item: -item[0])
    absent = [k for k, v in values.items() if v is None]
    if not known:
        return "n/a"
    return " > ".join(f"{k} {fmt(v)}" for v, k in known) + (f" (n/a: {_list(absent)})" if absent else "")


def _judge_pairs(concordant: int, pairs: int, discordant: list[str], measured: str, cells: list[str],
                 what: str) -> _Outcome:
    if pairs == 0:
        return _Outcome(NOT_MEASURED, measured, f"no ordered pair to compare ({what})", cells)
    detail = f"{concordant} of {pairs} pairs ordered as {what}"
    if discordant:
        detail += f"; out of order: {_list(discordant)}"
    if concordant == pairs:
        return _Outcome(REPRODUCED, measured, detail, cells)
    if 2 * concordant > pairs:
        return _Outcome(SAME_DIRECTION, measured, detail, cells)
    return _Outcome(NOT_REPRODUCED, measured, detail, cells)


def _evaluate_ordering(claim: Claim, t: _Tables) -> _Outcome:
    metric = claim.metric or "speedup"
    fmt = _times if metric == "speedup" else _percent
    temperature = claim.temperature or 0.0
    if claim.versus_temperature is not None:
        return _evaluate_shape(claim, t, metric, fmt)
    if claim.over == "tasks" and len(claim.conditions) > 1:
        return _evaluate_tiers_per_condition(claim, t, metric, fmt)
    values: dict[str, float | None] = {}
    cells: list[str] = []
    for member in (m for tier in claim.published for m in tier):
        task, condition = (member, claim.conditions[0]) if claim.over == "tasks" else (claim.tasks[0], member)
        values[member], found = _metric(t, metric, task, condition, temperature)
        cells += found
    measured = _ranked(values, fmt)
    missing = [m for m, v in values.items() if v is None]
    if missing:
        return _Outcome(NOT_MEASURED, measured, f"no {metric} for {_list(missing)} at {_temp(temperature)}", cells)
    concordant, pairs, discordant = _tier_pairs(claim.published, values)
    return _judge_pairs(concordant, pairs, discordant, measured, cells, "published")


def _tier_pairs(tiers: Sequence[Sequence[str]], values: Mapping[str, float | None]) -> tuple[int, int, list[str]]:
    concordant, pairs, discordant = 0, 0, []
    for i, upper in enumerate(tiers):
        for lower in tiers[i + 1:]:
            for a in upper:
                for b in lower:
                    pairs += 1
                    va, vb = values[a], values[b]
                    if va is not None and vb is not None and va > vb:
                        concordant += 1
                    else:
                        discordant.append(f"{a} vs {b}")
    return concordant, pairs, discordant


def _evaluate_tiers_per_condition(claim: Claim, t: _Tables, metric: str, fmt: Callable[[float], str]) -> _Outcome:
    temperature = claim.temperature or 0.0
    concordant, pairs, discordant, parts, cells, missing = 0, 0, [], [], [], []
    for condition in claim.conditions:
        values: dict[str, float | None] = {}
        for task in (m for tier in claim.published for m in tier):
            values[task], found = _metric(t, metric, task, condition, temperature)
            cells += found
        parts.append(f"{condition}: {_ranked(values, fmt)}")
        missing += [f"{condition}/{task}" for task, v in values.items() if v is None]
        c, p, d = _tier_pairs(claim.published, values)
        concordant, pairs, discordant = concordant + c, pairs + p, discordant + [f"{condition} {x}" for x in d]
    measured = "; ".join(parts)
    if missing:
        return _Outcome(NOT_MEASURED, measured, f"no {metric} for {_list(missing)} at {_temp(temperature)}", cells)
    return _judge_pairs(concordant, pairs, discordant, measured, cells, "published")


def _evaluate_shape(claim: Claim, t: _Tables, metric: str, fmt: Callable[[float], str]) -> _Outcome:
    temperature, versus = claim.temperature or 0.0, claim.versus_temperature or 0.0
    concordant, pairs, discordant, parts, cells, missing = 0, 0, [], [], [], []
    for condition in claim.conditions:
        here: dict[str, float | None] = {}
        there: dict[str, float | None] = {}
        for task in claim.tasks:
            here[task], found = _metric(t, metric, task, condition, temperature)
            there[task], found_there = _metric(t, metric, task, condition, versus)
            cells += found + found_there
        parts.append(f"{condition}: {_ranked(here, fmt)} at {temperature:g} vs {_ranked(there, fmt)} at {versus:g}")
        missing += [f"{condition}/{task}" for task in claim.tasks if here[task] is None or there[task] is None]
        for i, a in enumerate(claim.tasks):
            for b in claim.tasks[i + 1:]:
                ha, hb, ta, tb = here[a], here[b], there[a], there[b]
                if ha is None or hb is None or ta is None or tb is None or ta == tb:
                    continue
                pairs += 1
                if _side(ha, hb) == _side(ta, tb):
                    concordant += 1
                else:
                    discordant.append(f"{condition} {a} vs {b}")
    measured = "; ".join(parts)
    if missing:
        return _Outcome(NOT_MEASURED, measured, f"no {metric} for {_list(missing)} at temperature {temperature:g} "
                        f"or {versus:g}", cells)
    return _judge_pairs(concordant, pairs, discordant, measured, cells, f"at temperature {versus:g}")


# --------------------------------------------------------------------------------------------------------------
# Formatting the published value, and the evaluation
# --------------------------------------------------------------------------------------------------------------


def _format_range(published: Any, fmt: Callable[[float], str]) -> str:
    if isinstance(published, tuple):
        return f"{fmt(published[0])}-{fmt(published[1])}"
    return fmt(published)


def _multiplier(value: float) -> str:
    """A published multiplier as written: 6.25, 6.2, and 1.00 rather than 1."""
    return f"{value:.2f}" if value == int(value) else f"{value:g}"


def _format_published(claim: Claim) -> str:
    published = claim.published
    if claim.kind == "speedup":
        return _format_range(published, _multiplier) + "x"
    if claim.kind == "tokens_per_s":
        return _format_range(published, lambda v: f"{v:g}") + " tok/s"
    if claim.kind == "acceptance":
        if claim.metric == "accepted_per_step":
            return _format_range(published, lambda v: f"{v:g}") + " tokens/step"
        return _format_range(published, lambda v: f"{v * 100:g}") + "%"
    if claim.kind == "identity":
        if isinstance(published, int):
            return f"not identical on {published} of {len(claim.tasks)} tasks"
        if claim.token_counts:
            return published + " (" + "; ".join(f"{task} {a} vs {b}" for task, (a, b) in
                                                claim.token_counts.items()) + ")"
        return str(published)
    if claim.kind == "gsm8k":
        text = f"{published}/{claim.total} correct"
        if claim.wrong:
            wrong = claim.wrong
            text += f", problem {wrong['problem']}" + (f": {wrong['answer']} vs {wrong['reference']}"
                                                      if wrong["answer"] else " wrong")
        return text
    if claim.kind == "warm_vs_fresh":
        if isinstance(published, tuple):
            return ", ".join(f"{v:g}" for v in published) + " tok/s over repeats"
        return "warm faster than fresh"
    if claim.kind == "ordering":
        if isinstance(published, str):
            return f"{published} as temperature {claim.versus_temperature:g}"
        return " > ".join(tier[0] if len(tier) == 1 else "{" + ", ".join(tier) + "}" for tier in published)
    return str(published)


_EVALUATORS: dict[str, Callable[[Claim, _Tables], _Outcome]] = {
    "speedup": _evaluate_speedup,
    "tokens_per_s": _evaluate_tokens_per_s,
    "acceptance": _evaluate_acceptance,
    "identity": _evaluate_identity,
    "verdict": _evaluate_verdict,
    "gsm8k": _evaluate_gsm8k,
    "warm_vs_fresh": _evaluate_warm,
    "ordering": _evaluate_ordering,
}


def evaluate(claims: Sequence[Claim], tables: Mapping[str, pd.DataFrame], *, is_study_setup: bool) -> pd.DataFrame:
    """One row per claim: id, text, published, measured, verdict, detail, cells (';'-joined cell files)."""
    view = _Tables(tables)
    rows = []
    for claim in claims:
        try:
            outcome = _EVALUATORS[claim.kind](claim, view)
        except Exception as error:  # name the claim; a bug here should not read as a table problem
            raise ClaimError(f"claim {claim.id!r}: evaluation failed: {type(error).__name__}: {error}") from error
        verdict, detail = outcome.verdict, outcome.detail
        if not is_study_setup:
            verdict, detail = NOT_MEASURED, NOT_STUDY_SETUP
        rows.append({"id": claim.id, "text": claim.text, "published": _format_published(claim),
                     "measured": outcome.measured, "verdict": verdict, "detail": detail,
                     "cells": _unique(outcome.cells)})
    return pd.DataFrame(rows, columns=RESULT_COLUMNS)
