"""A claim as validated (``Claim``), the verdicts and scopes it can get, and its variants: what loading claims and
judging them share. Needs no pandas: the workflow loads and checks every claims file at parse time (every cluster
job too)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from ..core.repo import REPO_ROOT
from ..core.schema import load_schema

# The verdicts (docs/claims.md says when each is given)
REPRODUCED, SAME_DIRECTION, NOT_REPRODUCED = "reproduced", "same direction", "not reproduced"
NOT_MEASURED = "not measured in this run"
BACKGROUND = "background, not checked by a run"
NOT_COMPARABLE = "not comparable"
# A relation the study does not claim to transfer (a verdict, an order of methods), on another setup: shown beside
# the study's, not judged
AGREES, DIFFERS = "agrees", "differs"
VERDICTS = (REPRODUCED, SAME_DIRECTION, NOT_REPRODUCED, NOT_MEASURED, NOT_COMPARABLE, AGREES, DIFFERS, BACKGROUND)
# The study's setup itself is the config's study_setup, shown fact by fact in the report's comparability table
NOT_COMPARABLE_DETAIL = "absolute figure: compared only on the study's setup (see Comparable with the study?)"
SCHEMA_PATH = REPO_ROOT / "config" / "claims.schema.yaml"
KINDS = tuple(load_schema(SCHEMA_PATH)["$defs"]["claim"]["properties"]["kind"]["enum"])
# Scope (docs/claims.md): absolute figures are compared only on the study's setup; relative ones (verdicts, orders of
# methods, the warm server, the control) are judged there and shown as agrees/differs elsewhere; only the order of
# tasks per method "transfers" (the study's one claim about other hardware), judged everywhere.
SCOPES = {
    "speedup": "absolute",
    "tokens_per_s": "absolute",
    "acceptance": "absolute",
    "identity": "absolute",
    "gsm8k": "absolute",
    "verdict": "relative",
    "ordering": "relative",
    "warm_vs_fresh": "relative",
    "background": "background",
}  # per-repeat speeds: absolute; an ordering over tasks: transfers
# A claim whose temperature the text does not give is judged under both readings, these two (docs/study.md)
READINGS = (0.0, 1.0)
RESULT_COLUMNS = [
    "id",
    "text",
    "kind",
    "published",
    "published_text",
    "temperature",
    "measured",
    "measured_text",
    "verdict",
    "detail",
    "cells",
    "scope",
    "prompt_dependent",
    "variant_of",
    "verdict_t1",
    "measured_t1_text",
    "reading",
]


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
    unstated: bool = False  # the text gives no temperature: judged at READINGS, the reading the run supports said
    tolerance: float | None = None
    metric: str | None = None
    over: str | None = None
    versus_temperature: float | None = None
    token_counts: Mapping[str, list[int]] = field(default_factory=dict)
    total: int | None = None
    wrong: Mapping[str, Any] | None = None
    fresh: str | None = None
    side: str | None = None  # a multiplier whose point is its side of 1.0x: 'faster' or 'slower' by the verdict rule
    versus: str | None = None  # identity: 'first-repeat' compares a condition's repeats with its own first


def stands_for(variant: str, claim: Claim) -> str | None:
    """The claim's condition a variant stands in for: the longest one that its name extends ('dflash-n15': 'dflash')."""
    names = [n for n in (claim.condition, *claim.conditions) if n and variant.startswith(f"{n}-")]
    return max(names, key=len, default=None)


def variant(claim: Claim, variant: str) -> Claim:
    """The claim with ``variant`` standing in for its condition (in ``condition``, ``conditions`` and tiers)."""
    swap = {stands_for(variant, claim): variant}
    published = (
        [[swap.get(m, m) for m in tier] for tier in claim.published]
        if claim.kind == "ordering" and claim.over == "conditions"
        else claim.published
    )
    return replace(
        claim,
        id=f"{claim.id}@{variant}",
        condition=swap.get(claim.condition, claim.condition),
        conditions=tuple(swap.get(c, c) for c in claim.conditions),
        published=published,
        variants=(),
    )


def supported_reading(at_zero: str, at_one: str) -> str:
    """Which reading of an unstated temperature the run supports, from the claim's verdicts under each."""
    good = (REPRODUCED, AGREES)
    if at_zero in good and at_one in good:
        return "both readings"
    if at_zero in good or at_one in good:
        return f"temperature {0 if at_zero in good else '1.0'} only"
    if at_zero == at_one and at_zero in (NOT_MEASURED, NOT_COMPARABLE):
        return at_zero
    return "neither reading"
