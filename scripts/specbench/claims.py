"""The study's published claims (config/claims.yaml) checked against one run's tables.

``load_claims`` validates a claims file (or a predictions file: the same format, ``source`` optional) against
config/claims.schema.yaml with the config's validator, and the tasks and conditions it names against the config;
``evaluate`` gives one typed row per claim and variant (``RESULT_COLUMNS``), judged by claims_judge.py on the tables
of summaries.tables. The verdicts, scopes and rules per kind are in docs/claims.md.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from .core.config import REPO_ROOT, ConfigError, load_schema, validate_document

if TYPE_CHECKING:
    import pandas as pd

    from .claims_judge import Outcome, Run

# The verdicts. Loading and checking claims (done by the workflow at parse time, by every cluster job too) needs no
# pandas: the judges (claims_judge, pandas) are imported only by ``evaluate``.
REPRODUCED, SAME_DIRECTION, NOT_REPRODUCED = "reproduced", "same direction", "not reproduced"
NOT_MEASURED = "not measured in this run"
BACKGROUND = "background, not checked by a run"
NOT_COMPARABLE = "not comparable"
VERDICTS = (REPRODUCED, SAME_DIRECTION, NOT_REPRODUCED, NOT_MEASURED, NOT_COMPARABLE, BACKGROUND)
STUDY_SETUP = "A100 80GB, llama.cpp 4da6337, Qwen3.5-9B Q4_K_M by the authors"
NOT_COMPARABLE_DETAIL = f"absolute figure: compared only on the study's setup ({STUDY_SETUP})"
SCHEMA_PATH = REPO_ROOT / "config" / "claims.schema.yaml"
KINDS = tuple(load_schema(SCHEMA_PATH)["$defs"]["claim"]["properties"]["kind"]["enum"])
SCOPES = {"speedup": "absolute", "tokens_per_s": "absolute", "acceptance": "absolute", "identity": "absolute",
          "gsm8k": "absolute", "verdict": "relative", "ordering": "relative", "warm_vs_fresh": "relative",
          "background": "background"}  # warm_vs_fresh with per-repeat speeds: absolute
RESULT_COLUMNS = ["id", "text", "kind", "published", "published_text", "measured", "measured_text", "verdict",
                  "detail", "cells", "scope", "prompt_dependent", "variant_of", "verdict_t1", "measured_t1_text"]


class ClaimError(ValueError):
    """A claim in the claims file is malformed or names what the config lacks; the message names claim and key."""


@dataclass(frozen=True)
class Claim:
    """One published claim, as validated. Ordering tiers are lists of names (a bare name is a tier of one)."""

    id: str
    text: str
    kind: str
    published: Any
    source: str = ""
    note: str = ""
    scope: str = "absolute"
    prompt_dependent: bool = False
    variants: tuple[str, ...] = ()
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
    e = {k: v for k, v in entry.items() if k not in ("task", "tasks", "condition", "temperature", "scope")}
    tasks = [entry["task"]] if "task" in entry else entry.get("tasks", [])
    conditions = entry.get("conditions") or ([entry["condition"]] if "condition" in entry else [])
    if entry["kind"] == "ordering" and isinstance(entry["published"], list):  # tiers; a bare name is a tier of one
        e["published"] = [[tier] if isinstance(tier, str) else tier for tier in entry["published"]]
        members = [m for tier in e["published"] for m in tier]
        tasks, conditions = (members, conditions) if entry["over"] == "tasks" else (tasks, members)
    speeds = entry["kind"] == "warm_vs_fresh" and isinstance(entry["published"], list)  # per-repeat speeds
    scope = entry.get("scope") or ("absolute" if speeds else SCOPES[entry["kind"]])
    return Claim(**{**e, "conditions": tuple(conditions), "variants": tuple(entry.get("variants", ()))},
                 tasks=tuple(tasks), condition=entry.get("condition"), temperature=float(entry.get("temperature", 0.0)),
                 scope=scope)


def _stands_for(variant: str, claim: Claim) -> str | None:
    """The claim's condition a variant stands in for: the longest one that its name extends ('dflash-n15': 'dflash')."""
    names = [n for n in (claim.condition, *claim.conditions) if n and variant.startswith(f"{n}-")]
    return max(names, key=len, default=None)


def _variant(claim: Claim, variant: str) -> Claim:
    """The claim with ``variant`` standing in for its condition (in ``condition``, ``conditions`` and tiers)."""
    stands_for = _stands_for(variant, claim)
    swap = {stands_for: variant}
    published = ([[swap.get(m, m) for m in tier] for tier in claim.published]
                 if claim.kind == "ordering" and claim.over == "conditions" else claim.published)
    return replace(claim, id=f"{claim.id}@{variant}", condition=swap.get(claim.condition, claim.condition),
                   conditions=tuple(swap.get(c, c) for c in claim.conditions), published=published, variants=())


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
    if not claim.tasks and kind != "background":
        yield "task", "missing ('task' or 'tasks')"
    if not (claim.condition or claim.conditions) and kind != "background":
        yield "condition", "missing ('condition' or 'conditions')"
    for variant in (v for v in claim.variants if not _stands_for(v, claim)):
        yield "variants", f"{variant!r} stands in for none of the claim's conditions (name it <condition>-<suffix>)"
    named = {"task": ("tasks", [e.get("task")]), "tasks": ("tasks", e.get("tasks")),  # names the config lacks
             "condition": ("conditions", [e.get("condition")]), "conditions": ("conditions", e.get("conditions")),
             "fresh": ("conditions", [e.get("fresh")]), "published": (e.get("over", "conditions"), members),
             "variants": ("conditions", e.get("variants"))}
    for key, (what, names) in named.items():
        for name in (n for n in names or [] if n is not None and n not in config[what]):
            hint = difflib.get_close_matches(name, list(config[what]), n=1)
            yield key, f"{name!r} is not one of the config's {what}" + (f" (did you mean {hint[0]!r}?)" if hint else "")


def evaluate(claims: Sequence[Claim], tables: Mapping[str, pd.DataFrame], *, baseline: str, comparable: bool,
             device: str) -> pd.DataFrame:
    """One row per claim and variant (``RESULT_COLUMNS``): id, text, kind (str); published (the claim's value:
    number, [low, high], word, count, speeds, tiers) and measured (per task a number, verdict or identity counts; per
    repeat scores, speeds or counts; per group a ranking), each also as display text; verdict, detail (str); cells
    (list of cell files, temperature 1.0's too); scope (str), prompt_dependent (bool), variant_of (the claim's id, or
    None); verdict_t1 and measured_t1_text (the claim at temperature 1.0, or None and ""). ``comparable``: the run is
    on the study's setup; ``device``: a short label of this run's hardware (e.g. "NVIDIA H200", "CPU (x86_64)")."""
    import pandas as pd

    from .claims_judge import Run, format_published

    run, rows = Run(tables, baseline), []
    for base in claims:
        for claim in (base, *(_variant(base, v) for v in base.variants)):
            outcome = _judge(claim, run, comparable, device)
            at_t1 = claim.temperature == 0.0 and claim.kind not in ("identity", "background")
            t1 = _judge(replace(claim, temperature=1.0), run, comparable, device) if at_t1 else None
            rows.append({"id": claim.id, "text": claim.text, "kind": claim.kind, "published": claim.published,
                         "published_text": format_published(claim), "measured": outcome.measured,
                         "measured_text": outcome.text, "verdict": outcome.verdict, "detail": outcome.detail,
                         "cells": list(dict.fromkeys(c for c in outcome.cells + (t1.cells if t1 else []) if c)),
                         "scope": claim.scope, "prompt_dependent": claim.prompt_dependent,
                         "variant_of": None if claim is base else base.id, "verdict_t1": t1.verdict if t1 else None,
                         "measured_t1_text": t1.text if t1 else ""})
    frame = pd.DataFrame(rows, columns=RESULT_COLUMNS)
    frame[["variant_of", "verdict_t1"]] = pd.DataFrame(rows, columns=["variant_of", "verdict_t1"], dtype=object)
    return frame  # None stays None (not NaN) in the two columns that have it


def _judge(claim: Claim, run: Run, comparable: bool, device: str) -> Outcome:
    """The kind's judge, then the scope: an absolute figure off the study's setup is not comparable."""
    from .claims_judge import JUDGES

    try:
        outcome = JUDGES[claim.kind](claim, run)
    except Exception as error:  # name the claim; a bug here should not read as a table problem
        raise ClaimError(f"claim {claim.id!r}: evaluation failed: {type(error).__name__}: {error}") from error
    if comparable or claim.scope == "background" or (outcome.verdict == NOT_MEASURED and claim.scope == "relative"):
        return outcome
    if claim.scope == "absolute":
        return outcome._replace(verdict=NOT_COMPARABLE, detail=NOT_COMPARABLE_DETAIL)
    what = claim.kind.replace("_", " ")
    return outcome._replace(detail=f"{what} {outcome.verdict} on {device}: {outcome.detail}")
