"""Loading a claims file (config/claims.yaml, or a predictions file: the same format, ``source`` optional): validated
against config/claims.schema.yaml with the config's validator, and the tasks and conditions it names against the
config; every problem names the claim and the key."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml

from specbench.claims.claim import READINGS, SCHEMA_PATH, SCOPES, Claim, ClaimError, stands_for
from specbench.core.config.error import ConfigError, did_you_mean
from specbench.core.config.schema import load_schema, validate_document


def load_claims(path: str | Path, config: Mapping[str, Any]) -> list[Claim]:
    """Read, validate and cross-check a claims file (``config``: the validated config); raise ClaimError."""
    path = Path(path)
    try:
        document = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as error:
        raise ClaimError(f"{path}: not valid YAML: {error}") from error
    return _parse(document, config, str(path))


def about_the_study(path: str | Path) -> bool:
    """Whether a claims file's claims are about the study's model (``about: study``) rather than this run's (the
    default): the study's are judged only on its model; a user's predictions on whatever model the run measured."""
    document = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    return isinstance(document, dict) and document.get("about") == "study"


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
    over_tasks = entry["kind"] == "ordering" and entry.get("over") == "tasks"  # the one claim that transfers
    scope = entry.get("scope") or SCOPES[entry["kind"]]
    if "scope" not in entry and speeds:
        scope = "absolute"
    if "scope" not in entry and over_tasks:
        scope = "transfers"
    unstated = entry.get("temperature") == "unstated"
    return Claim(
        **{
            **e,
            "conditions": tuple(conditions),
            "variants": tuple(entry.get("variants", ())),
            "problems": tuple(entry.get("problems", ())),
            "size": tuple(entry["size"]) if "size" in entry else None,
            "at": tuple(sorted(entry.get("at", ()))),
        },
        tasks=tuple(tasks),
        condition=entry.get("condition"),
        scope=scope,
        unstated=unstated,
        temperature=READINGS[0] if unstated else float(entry.get("temperature", 0.0)),
    )


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
    if claim.size and claim.size[0] > claim.size[1]:
        yield "size", f"low {claim.size[0]} is above high {claim.size[1]}"
    if claim.size and (value, len(claim.conditions)) not in (("faster", 1), ("slower", 1)):
        yield "size", "a size is a 'faster' or 'slower' verdict's, on one condition"
    if claim.size and (claim.size[0] < 1.0 < claim.size[1] or (value == "faster") != (claim.size[0] >= 1.0)):
        yield "size", f"the band {list(claim.size)} must lie on the side of 1.0x that '{value}' names"
    if kind == "identity" and isinstance(value, int) and value > len(claim.tasks):
        yield "published", f"a number of the {len(claim.tasks)} listed tasks, got {value}"
    if kind == "identity" and isinstance(value, list) and set(value) - set(claim.tasks):
        yield "published", f"the differing tasks must be the claim's tasks: {sorted(set(value) - set(claim.tasks))}"
    if set(claim.token_counts) - set(claim.tasks):
        yield "token_counts", f"not one of the claim's tasks: {sorted(set(claim.token_counts) - set(claim.tasks))}"
    if kind == "gsm8k" and value > e["total"]:
        yield "published", f"expected a number of correct answers out of {e['total']}, got {value}"
    if kind == "gsm8k" and "wrong" in e and (e["wrong"]["problem"] > e["total"] or value == e["total"]):
        yield "wrong", f"a problem 1..{e['total']} of a claim with a wrong answer, got {e['wrong']!r}"
    if kind == "gsm8k" and any(p["problem"] > e["total"] for p in e.get("problems", ())):
        yield "problems", f"a problem 1..{e['total']}, got {[p['problem'] for p in e['problems']]}"
    if kind == "warm_vs_fresh" and isinstance(value, list) and len(claim.tasks) != 1:
        yield "tasks", "per-repeat speeds are about one task: use 'task'"
    if (value == "flat") != (kind == "tokens_per_s" and "versus_temperature" in e):
        yield "published", "'flat' is a tokens_per_s claim's, with versus_temperature, and needs it"
    if e.get("temperature") == "unstated" and e.get("versus_temperature") is not None:
        yield "temperature", "a comparison with another temperature states its own"
    if e.get("sentence") and e.get("temperature") != "unstated":
        yield "sentence", "a sentence shares its temperature reading: only a claim whose temperature is unstated"
    if {"explains", "restates"} <= given:
        yield "restates", "a sentence explains another or restates it, not both"
    if kind == "ordering" and e.get("versus_temperature") == e["temperature"]:
        yield "versus_temperature", "must differ from temperature"
    if tiers and e["over"] == "tasks" and given & {"task", "tasks"}:
        yield "tasks", "the tasks are the members of 'published'"
    if tiers and e["over"] == "conditions" and (given & {"condition", "conditions"} or len(claim.tasks) != 1):
        yield "conditions", "over conditions: one 'task', and the conditions are the members of 'published'"
    if kind == "pays_up_to" and claim.at and isinstance(value, int) and value not in claim.at:
        yield "at", f"N* {value} is the first N where it no longer pays: one of the levels {list(claim.at)}"
    if kind == "acceptance_under_load" and claim.at == (1,):
        yield "at", "acceptance at each N is set against one request's: name an N above 1"
    if kind == "thesis" and set(e["matrix"]) != set(claim.tasks):
        yield "matrix", f"its tasks must be the claim's tasks {list(claim.tasks)}, got {list(e['matrix'])}"
    if kind == "thesis" and (extra := {m for row in e["matrix"].values() for m in row} - set(claim.conditions)):
        yield "matrix", f"not one of the claim's conditions: {sorted(extra)}"
    if len(set(members)) != len(members):
        yield "published", f"a name appears twice in {value!r}"
    if not claim.tasks and kind != "background":
        yield "task", "missing ('task' or 'tasks')"
    if not (claim.condition or claim.conditions) and kind != "background":
        yield "condition", "missing ('condition' or 'conditions')"
    for variant in (v for v in claim.variants if not stands_for(v, claim)):
        yield "variants", f"{variant!r} stands in for none of the claim's conditions (name it <condition>-<suffix>)"
    named = {
        "task": ("tasks", [e.get("task")]),
        "tasks": ("tasks", e.get("tasks")),  # names the config lacks
        "condition": ("conditions", [e.get("condition")]),
        "conditions": ("conditions", e.get("conditions")),
        "fresh": ("conditions", [e.get("fresh")]),
        "published": (e.get("over", "conditions"), members),
        "variants": ("conditions", e.get("variants")),
    }
    for key, (what, names) in named.items():
        if what == "tasks" and config.get("prompt_set"):
            continue  # the tasks are a public set's categories: a claim about the study's tasks is not measured
        for name in (n for n in names or [] if n is not None and n not in config[what]):
            yield key, f"{name!r} is not one of the config's {what}{did_you_mean(name, config[what])}"
