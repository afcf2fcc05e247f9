"""The study's published claims (config/claims.yaml) checked against one run's tables.

``load_claims`` validates a claims file against config/claims.schema.yaml with the config's validator, and the tasks
and conditions it names against the config; ``evaluate`` gives one typed row per claim (``RESULT_COLUMNS``). The
judges (claims_judge.py) read summaries.tables: ``summary``, ``acceptance``, ``identity``, ``cells``.

Verdicts: ``reproduced`` within the claim's tolerance (per kind below); ``same direction`` outside it but on the
published side of the kind's pivot, with the same verdict direction, or the same ordering in most pairs; ``not
reproduced`` neither; ``not measured in this run`` when a row the claim needs is absent or its value NaN/empty (a task
or condition not run, fewer repeats than the claim is about; a claim over several tasks needs every one), and for
every claim, with the detail ``NOT_STUDY_SETUP``, when the run is not the study's setup (measured and cells filled).

Per kind (a numeric ``published`` may be a ``[low, high]`` range, widened by the tolerance at both ends; every task
must fall inside):

* ``speedup`` (summary.speedup: mean over mean, relative tolerance): outside it, ``same direction`` when every task
  is on the published side of 1.0x (a range wholly on one side; a published 1.00x has no side).
* ``tokens_per_s`` (summary.mean_tokens_per_s, relative tolerance): no direction; outside it ``not reproduced``.
* ``acceptance`` (acceptance.pooled_rate, absolute tolerance): outside it, ``same direction`` on the published side
  of 50% ("most drafts accepted" vs "rejected"; 50% has no side). ``metric: accepted_per_step`` has no direction.
* ``verdict`` (summary.verdict, the all-runs rule): ``reproduced`` when every task's verdict is the published one;
  for ``faster``/``slower``, ``same direction`` when every multiplier is on that side of 1.0x. ``not
  slower``/``not faster``: ``reproduced`` when no task has that verdict, else ``not reproduced``.
* ``identity`` (identity table, temperature 0; a claim on the baseline is about its control, repeats vs r1):
  ``identical``: every task's compared repeats identical, else ``not reproduced``. ``not identical``: every task has
  a differing repeat; with ``token_counts`` ([own, baseline] length per task) ``reproduced`` needs every differing
  repeat's counts within the relative tolerance, else ``same direction``. An integer N: exactly N tasks differ is
  ``reproduced``, another non-zero number ``same direction``, none ``not reproduced``. Repeats without a baseline
  are named in the detail; a task with none compared is not measured.
* ``gsm8k`` (cells.gsm8k_* of the claim's task): ``reproduced`` when every run scores the published count (and, if
  the claim names a wrong problem, that one is wrong in every run); ``same direction`` when some runs score it, or
  all do but another problem is wrong; else ``not reproduced``. Runs scored on another number of problems are not
  a measurement of the claim.
* ``warm_vs_fresh`` (warm ``condition``, ``fresh`` condition): per-repeat speeds (one task, warm repeats 1..n,
  relative tolerance): ``same direction`` when they rise with each repeat. ``faster``: ``reproduced`` when on every
  task each warm repeat from the second on beats every fresh run, ``same direction`` when the warm median beats the
  fresh median on every task; two warm repeats are needed.
* ``ordering`` (``metric``: speedup, tokens_per_s, pooled_rate, accepted_per_step): ``published`` lists tiers, best
  first (an inner list: members not ordered among themselves), over tasks (per condition) or conditions (one task).
  Every pair across tiers as published is ``reproduced``, a strict majority ``same direction``. With
  ``versus_temperature`` the reference is this run's own ordering per condition at that temperature (the
  "temperature 1.0 had the same shape" claim); ties in the reference are not counted.

Nothing divides by a measured value; relative tolerances multiply the published value, which must be positive.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd
import yaml

from .claims_judge import JUDGES, NOT_MEASURED, NOT_REPRODUCED, REPRODUCED, SAME_DIRECTION, Run, format_published
from .config import REPO_ROOT, ConfigError, load_schema, validate_document

__all__ = ["NOT_REPRODUCED", "REPRODUCED", "SAME_DIRECTION", "format_published"]

VERDICTS = (REPRODUCED, SAME_DIRECTION, NOT_REPRODUCED, NOT_MEASURED)
NOT_STUDY_SETUP = "this run is not the study's setup (model/build/hardware differ); no comparison made"
SCHEMA_PATH = REPO_ROOT / "config" / "claims.schema.yaml"
KINDS = tuple(load_schema(SCHEMA_PATH)["$defs"]["claim"]["properties"]["kind"]["enum"])
RESULT_COLUMNS = ["id", "text", "kind", "published", "published_text", "measured", "measured_text", "verdict",
                  "detail", "cells"]


class ClaimError(ValueError):
    """A claim in the claims file is malformed or names what the config lacks; the message names claim and key."""


@dataclass(frozen=True)
class Claim:
    """One published claim, as validated. Ordering tiers are lists of names (a bare name is a tier of one)."""

    id: str
    text: str
    kind: str
    published: Any
    source: str
    note: str = ""
    tasks: tuple[str, ...] = ()
    condition: str | None = None
    conditions: tuple[str, ...] = ()
    temperature: float = 0.0
    tolerance: float | None = None
    metric: str | None = None
    over: str | None = None
    versus_temperature: float | None = None
    token_counts: Mapping[str, list[int]] = field(default_factory=dict)
    total: int | None = None
    wrong: Mapping[str, Any] | None = None
    fresh: str | None = None


def load_claims(path: str | Path, config: Mapping[str, Any]) -> list[Claim]:
    """Read, validate and cross-check a claims file (``config``: the validated config); raise ClaimError."""
    path = Path(path)
    try:
        document = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as error:
        raise ClaimError(f"{path}: not valid YAML: {error}") from error
    return _parse(document, config, str(path))


def parse_claims(entries: Sequence[Any], config: Mapping[str, Any], origin: str = "claims") -> list[Claim]:
    """Validate claim entries (dicts as in the YAML file) as ``load_claims`` does."""
    return _parse({"claims": list(entries)}, config, origin)


def _parse(document: Any, config: Mapping[str, Any], origin: str) -> list[Claim]:
    try:
        validate_document(document, load_schema(SCHEMA_PATH))
    except ConfigError as error:
        if len(error.path) < 2:
            raise ClaimError(f"{origin}: expected a mapping with a 'claims' list ({error.problem})") from None
        entry = document["claims"][error.path[1]]
        named = isinstance(entry, dict) and error.path[2:3] != ("id",) and isinstance(entry.get("id"), str)
        where = f"claim {entry['id']!r}" if named else f"claim #{error.path[1] + 1}"
        key = f": key {error.path[2]!r}" if len(error.path) > 2 else ""
        deeper = "".join(f"{p}: " for p in error.path[3:])
        raise ClaimError(f"{origin}: {where}{key}: {deeper}{error.problem}") from None
    claims: list[Claim] = []
    for entry in document["claims"]:
        problem = next(_problems(entry, config, {c.id for c in claims}), None)
        if problem:
            raise ClaimError(f"{origin}: claim {entry['id']!r}: key {problem[0]!r}: {problem[1]}")
        claims.append(_claim(entry))
    return claims


def _claim(entry: Mapping[str, Any]) -> Claim:
    e = {k: v for k, v in entry.items() if k not in ("task", "tasks", "condition", "temperature")}
    tasks = [entry["task"]] if "task" in entry else entry.get("tasks", [])
    conditions = entry.get("conditions") or ([entry["condition"]] if "condition" in entry else [])
    if entry["kind"] == "ordering" and isinstance(entry["published"], list):  # tiers; a bare name is a tier of one
        e["published"] = [[tier] if isinstance(tier, str) else tier for tier in entry["published"]]
        members = [m for tier in e["published"] for m in tier]
        tasks, conditions = (members, conditions) if entry["over"] == "tasks" else (tasks, members)
    return Claim(**{**e, "conditions": tuple(conditions)}, tasks=tuple(tasks), condition=entry.get("condition"),
                 temperature=float(entry.get("temperature", 0.0)))


def _problems(e: Mapping[str, Any], config: Mapping[str, Any], seen: set[str]) -> Iterator[tuple[str, str]]:
    """What a schema cannot say about one validated entry: (key, problem) pairs, the first one is reported."""
    kind, value, claim, given = e["kind"], e["published"], _claim(e), set(e)
    tiers = kind == "ordering" and isinstance(value, list)
    members = [m for tier in claim.published for m in tier] if tiers else []
    if e["id"] in seen:
        yield "id", "duplicate id"
    if {"task", "tasks"} <= given:
        yield "tasks", "give either 'task' or 'tasks', not both"
    if kind in ("speedup", "tokens_per_s", "acceptance") and isinstance(value, list) and value[0] > value[1]:
        yield "published", f"range low {value[0]} is above high {value[1]}"
    if kind == "identity" and not isinstance(value, str) and value > len(claim.tasks):
        yield "published", f"a number of the {len(claim.tasks)} listed tasks, got {value}"
    if set(claim.token_counts) - set(claim.tasks):
        yield "token_counts", f"not one of the claim's tasks: {sorted(set(claim.token_counts) - set(claim.tasks))}"
    if kind == "gsm8k" and value > e["total"]:
        yield "published", f"expected a number of correct answers out of {e['total']}, got {value}"
    if kind == "gsm8k" and "wrong" in e and (e["wrong"]["problem"] > e["total"] or value == e["total"]):
        yield "wrong", f"a problem 1..{e['total']} of a claim with a wrong answer, got {e['wrong']!r}"
    if kind == "warm_vs_fresh" and isinstance(value, list) and len(claim.tasks) != 1:
        yield "tasks", "per-repeat speeds are about one task: use 'task'"
    if kind == "ordering" and e.get("versus_temperature") == e["temperature"]:
        yield "versus_temperature", "must differ from temperature"
    if tiers and e["over"] == "tasks" and given & {"task", "tasks"}:
        yield "tasks", "the tasks are the members of 'published'"
    if tiers and e["over"] == "conditions" and (given & {"condition", "conditions"} or len(claim.tasks) != 1):
        yield "conditions", "over conditions: one 'task', and the conditions are the members of 'published'"
    if len(set(members)) != len(members):
        yield "published", f"a name appears twice in {value!r}"
    if not claim.tasks:
        yield "task", "missing ('task' or 'tasks')"
    if not (claim.condition or claim.conditions):
        yield "condition", "missing ('condition' or 'conditions')"
    named = {"task": ("tasks", [e.get("task")]), "tasks": ("tasks", e.get("tasks")),  # names the config lacks
             "condition": ("conditions", [e.get("condition")]), "conditions": ("conditions", e.get("conditions")),
             "fresh": ("conditions", [e.get("fresh")]), "published": (e.get("over", "conditions"), members)}
    for key, (what, names) in named.items():
        for name in (n for n in names or [] if n is not None and n not in config[what]):
            hint = difflib.get_close_matches(name, list(config[what]), n=1)
            yield key, f"{name!r} is not one of the config's {what}" + (f" (did you mean {hint[0]!r}?)" if hint else "")


def evaluate(claims: Sequence[Claim], tables: Mapping[str, pd.DataFrame], *, baseline: str,
             is_study_setup: bool) -> pd.DataFrame:
    """One row per claim (``RESULT_COLUMNS``): id, text, kind (str); published (the claim's value: number, [low,
    high], word, count, speeds, tiers) and measured (per task a number, verdict or identity counts; per repeat scores
    or speeds; per group a ranking), each also as display text; verdict, detail (str); cells (list of cell files)."""
    run = Run(tables, baseline)
    rows = []
    for claim in claims:
        try:
            outcome = JUDGES[claim.kind](claim, run)
        except Exception as error:  # name the claim; a bug here should not read as a table problem
            raise ClaimError(f"claim {claim.id!r}: evaluation failed: {type(error).__name__}: {error}") from error
        verdict, detail = (outcome.verdict, outcome.detail) if is_study_setup else (NOT_MEASURED, NOT_STUDY_SETUP)
        rows.append({"id": claim.id, "text": claim.text, "kind": claim.kind, "published": claim.published,
                     "published_text": format_published(claim), "measured": outcome.measured,
                     "measured_text": outcome.text, "verdict": verdict, "detail": detail,
                     "cells": list(dict.fromkeys(c for c in outcome.cells if c))})
    return pd.DataFrame(rows, columns=RESULT_COLUMNS)
