"""A claim as validated (``Claim``), the verdicts and scopes it can get, and its variants: what loading claims and
judging them share. Needs no pandas: the workflow loads and checks every claims file at parse time (every cluster
job too)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from specbench.core.config.schema import load_schema
from specbench.core.steps.repo import REPO_ROOT

# The verdicts (docs/claims.md says when each is given)
REPRODUCED = "reproduced"
NOT_REPRODUCED = "not reproduced"  # a kind with neither a size nor a direction (identity, GSM8K answers, ...)
NOT_SIZE = "not reproduced (size)"  # on the published side of the pivot, outside the tolerance
NOT_DIRECTION = "not reproduced (direction)"  # on the other side of the pivot (1.0x, 50%), or the all-runs rule's
CONTRADICTED = "contradicted"  # an ordering with a separated pair in the other order
NOT_SEPARATED = "not separated"  # an ordering whose pairs' 95 % intervals overlap
TOO_FEW_RUNS = "too few runs"  # the all-runs rule, or an interval, cannot mean anything with so few runs
TOO_WIDE = "interval too wide"  # a size whose 95 % interval lies across an edge of its band: more runs would tell
NOT_MEASURED = "not measured in this run"
BACKGROUND = "background, not checked by a run"
NOT_COMPARABLE = "not comparable"
# A relation the study does not claim to transfer (a verdict, an order of methods), on another setup of the study's
# model: shown beside the study's, not judged
AGREES, DIFFERS = "agrees", "differs"
# On another model nothing of the study's is judged; the order of tasks is asked of this model instead
NOT_JUDGED = "not judged: another model"
SAME_HERE, OTHER_HERE = "yes, on this model too", "no, another order on this model"
FAILED = (NOT_REPRODUCED, NOT_SIZE, NOT_DIRECTION, CONTRADICTED)  # what the opening lists as not reproduced
HELD = (REPRODUCED, AGREES, SAME_HERE)  # what a reading counts as borne out
UNDECIDED = (NOT_MEASURED, TOO_FEW_RUNS, NOT_SEPARATED, TOO_WIDE)  # decide nothing either way, on every setup
AGAINST = (*FAILED, DIFFERS, OTHER_HERE)  # a reading with one of these is not borne out, and says why
VERDICTS = (
    REPRODUCED,
    NOT_REPRODUCED,
    NOT_SIZE,
    NOT_DIRECTION,
    CONTRADICTED,
    NOT_SEPARATED,
    TOO_FEW_RUNS,
    TOO_WIDE,
    NOT_MEASURED,
    NOT_COMPARABLE,
    AGREES,
    DIFFERS,
    NOT_JUDGED,
    SAME_HERE,
    OTHER_HERE,
    BACKGROUND,
)
# The study's setup itself is the config's study_setup, shown fact by fact in the report's comparability table
NOT_COMPARABLE_DETAIL = "absolute figure: compared only on the study's setup (see Comparable with the study?)"
ANY_DEVICE_DETAIL = (
    "what the model computes: compared on any device where the model, its quantization, the draft model, the build "
    "and the server flags are the study's (see Comparable with the study?)"
)
NOT_JUDGED_DETAIL = "a claim about the study's model (Qwen3.5-9B); this run measured another model"
SCHEMA_PATH = REPO_ROOT / "config" / "claims.schema.yaml"
# The study's thesis: the readings key of its claims (one per view); the report's thesis section shows them, the
# thesis figure their published multipliers
THESIS_CLAIM = "task-more-than-method"
KINDS = tuple(load_schema(SCHEMA_PATH)["$defs"]["claim"]["properties"]["kind"]["enum"])
# Claims about load (a run with config load): the study measured one request at a time and makes none of them
LOAD_KINDS = ("pays_up_to", "acceptance_under_load")
# Scope (docs/claims.md): absolute figures are compared only on the study's setup; relative ones (verdicts, orders of
# methods, the warm server, the control) are judged there and shown as agrees/differs elsewhere; only the order of
# tasks per method "transfers" (the study's one claim about other hardware), judged everywhere; what the model
# computes (acceptance) is judged on any device where the rest of the study's setup is its own ("any-device").
ANY_DEVICE = "any-device"
SCOPES = {
    "speedup": "absolute",
    "tokens_per_s": "absolute",
    "acceptance": ANY_DEVICE,
    "identity": "absolute",
    "gsm8k": "absolute",
    "verdict": "relative",
    "ordering": "relative",
    "warm_vs_fresh": "relative",
    "background": "background",
    "thesis": "relative",
    "pays_up_to": "relative",
    "acceptance_under_load": "relative",
}  # per-repeat speeds: absolute; an ordering over tasks: transfers
# A claim whose temperature the text does not give is judged under both readings, these two (docs/study.md)
READINGS = (0.0, 1.0)
# Which reading the run supports (docs/claims.md, "Temperature"): a claim's, or a sentence's from its claims
BOTH_READINGS = "both readings"
T0_ONLY = "temperature 0 only"
T1_ONLY = "temperature 1.0 only"
SUPPORTED_READINGS = (BOTH_READINGS, T0_ONLY, T1_ONLY)
# The temperatures each of those readings names, as indexes into (verdict at 0, verdict at 1.0)
AT = {BOTH_READINGS: (0, 1), T0_ONLY: (0,), T1_ONLY: (1,)}
ONLY = " only"  # a reading of several the run supports alone: "<reading> only" (temperature 0 only, per request only)
NEITHER_READING = "neither reading"  # a claim against it under each reading (failed, or differs)
CANNOT_TELL = "cannot tell"  # no reading borne out, and one with nothing against it: undecided or not comparable
# Words read in several ways, one reading's claim contradicted (an order reversed, intervals apart): the figure is
# not borne out, whatever the other readings say: "contradicted under <reading>"
CONTRADICTED_UNDER = "contradicted under "
UNIFORM_READINGS = (NOT_MEASURED, NOT_COMPARABLE, NOT_JUDGED)  # the same for every claim under both readings
READING_WORDS = (*SUPPORTED_READINGS, NEITHER_READING, CANNOT_TELL, *UNIFORM_READINGS)
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
    "sentence",
    "sentence_reading",
    "reads",
    "read_with",
    "relation",
    "read_at",
    "readings",
    "tasks",
    "conditions",
]
# The result columns that hold None (kept None, not NaN) where a claim has no such value
NULLABLE_COLUMNS = (  # noqa: SIM905 (one line, not a second column list)
    "temperature variant_of verdict_t1 reading sentence sentence_reading reads read_with relation read_at readings"
).split()


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
    place: str = ""  # where its sentence stands in the study: <paragraph>.<sentence> (docs/study.md)
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
    problems: tuple[Mapping[str, Any], ...] = ()  # gsm8k: the problems counted, by their reference answers
    fresh: str | None = None
    side: str | None = None  # a multiplier whose point is its side of 1.0x: 'faster' or 'slower' by the verdict rule
    size: tuple[float, float] | None = None  # verdict: the multiplier band its word states ("slightly", "much")
    versus: str | None = None  # identity: 'first-repeat' compares a condition's repeats with its own first
    runs: int | None = None  # identity, a control: the runs the study compared (its first ``runs`` repeats)
    matrix: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)  # thesis: published multipliers
    sentence: str = ""  # the claims that share a sentence of the study share its temperature reading
    # The sentence whose figures this one's explain ("these numbers explain the results above") or restate (the title,
    # the conclusion): read at that sentence's reading of the temperature, which that sentence's own claims decide
    explains: str = ""
    restates: str = ""
    readings: str = ""  # the claims that read one figure of the text in different ways share this key
    reads: str = ""  # this claim's reading of those words (e.g. "per request", "per draft round")
    at: tuple[int, ...] = ()  # a load claim's numbers of requests at once (every one this run measured where empty)


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


def reading_supported(readings: Mapping[str, Sequence[str]]) -> str:
    """Which of several readings the run supports, from the verdicts under each (a reading holds where every verdict
    under it does): all of them (``BOTH_READINGS``), "<reading> only", the same uniform verdict everywhere, neither
    (each reading has a verdict against it: failed, or differs), or cannot tell (some reading has none against it,
    but some undecided or not comparable)."""
    held = [name for name, verdicts in readings.items() if all(v in HELD for v in verdicts)]
    if len(held) == len(readings):
        return BOTH_READINGS
    if held:
        return " and ".join(held) + ONLY
    every = {v for verdicts in readings.values() for v in verdicts}
    if len(every) == 1 and every <= set(UNIFORM_READINGS):
        return every.pop()
    if all(any(v in AGAINST for v in verdicts) for verdicts in readings.values()):
        return NEITHER_READING
    return CANNOT_TELL


def supported_reading(at_zero: Sequence[str], at_one: Sequence[str]) -> str:
    """Which reading of an unstated temperature the run supports, from the verdicts under each of the claims that
    share a sentence (one claim: one verdict each): a reading holds where every verdict under it does; the run
    supports neither only where each reading has a verdict against it (failed, or differs), and cannot tell where a
    reading has none against it but some undecided or not comparable."""
    return reading_supported({"temperature 0": at_zero, "temperature 1.0": at_one})


def reading_at(read_at: str, at_zero: Sequence[str], at_one: Sequence[str]) -> str:
    """Which reading the run supports of claims read at the temperatures another sentence's reading names
    (``read_at``, one of ``SUPPORTED_READINGS``: the sentence they explain or restate): as ``supported_reading``
    over those temperatures only, so never a temperature that reading leaves out ("temperature 0 only" within
    "both readings"; "neither reading" where each of those temperatures has a verdict against them)."""
    if read_at == BOTH_READINGS:
        return supported_reading(at_zero, at_one)
    reading = reading_supported({read_at: at_zero if read_at == T0_ONLY else at_one})
    return read_at if reading == BOTH_READINGS else reading


def verdicts_at(reading: str | None, verdict: str, verdict_t1: str | None) -> tuple[str, ...]:
    """One claim row's verdicts at the temperatures a reading of the temperature names (both where ``reading`` names
    none); a stated claim's verdict alone."""
    if verdict_t1 is None:
        return (verdict,)
    return tuple((verdict, verdict_t1)[i] for i in AT.get(reading or BOTH_READINGS, AT[BOTH_READINGS]))


def held_under(reading: str, verdict: str, verdict_t1: str | None, reads: str | None = None) -> bool:
    """Whether one claim row is borne out under a reading the run supports (its sentence's, or its own): at the
    temperatures that reading names (a stated claim: its verdict); a reading of the words, where it is this row's."""
    if reading not in SUPPORTED_READINGS:  # a reading of the words: this row's alone, or another's
        return bool(reads) and reading == f"{reads}{ONLY}"
    return all(v in HELD for v in verdicts_at(reading, verdict, verdict_t1))


def either(verdicts: Sequence[str]) -> str:
    """The verdict of one figure the claims of a ``readings`` group read in different ways, under one temperature:
    contradicted where one reading is, else borne out where one reading is, against it where every reading is, else
    the first undecided one."""
    if CONTRADICTED in verdicts:
        return CONTRADICTED
    held = [v for v in verdicts if v in HELD]
    if held:
        return held[0]
    if all(v in AGAINST for v in verdicts):
        return verdicts[0]
    return next(v for v in verdicts if v not in AGAINST)
