"""Judging claims on one run's tables (analysis.summaries.tables): one typed row per claim and variant, each judged
by its kind's judge (judges.py), then by its scope and what differs from the study's setup (another model: nothing
of the study's judged, the order of tasks asked of this model; the study's model elsewhere: absolute figures not
comparable, relative ones shown as agreeing or differing, what the model computes judged on any device), under both
readings when the text gives no temperature, and the claims that share a sentence read together: a sentence that
explains or restates another read at that one's reading of the temperature."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import pandas as pd

from specbench.claims.claim import (
    AGREES,
    ANY_DEVICE,
    ANY_DEVICE_DETAIL,
    CONTRADICTED,
    CONTRADICTED_UNDER,
    DIFFERS,
    NEITHER_READING,
    NOT_COMPARABLE,
    NOT_COMPARABLE_DETAIL,
    NOT_JUDGED,
    NOT_JUDGED_DETAIL,
    NOT_REPRODUCED,
    NULLABLE_COLUMNS,
    OTHER_HERE,
    READINGS,
    REPRODUCED,
    RESULT_COLUMNS,
    SAME_HERE,
    SUPPORTED_READINGS,
    TOO_FEW_RUNS,
    UNDECIDED,
    UNIFORM_READINGS,
    Claim,
    ClaimError,
    either,
    reading_at,
    reading_supported,
    supported_reading,
    variant,
)
from specbench.claims.judge_inputs import Outcome, Run, format_published
from specbench.claims.judges import JUDGES

# On another model, an order of tasks is a question about this model: its answers, never a failed reproduction
QUESTION_ANSWERS = {REPRODUCED: SAME_HERE, CONTRADICTED: OTHER_HERE}
Rows = list[dict[str, Any]]  # result rows by column, as they are read together


@dataclass(frozen=True)
class Setup:
    """What differs from the study's setup: ``comparable`` where nothing does, ``same_model`` where the target is
    the study's model; ``device``: a short label of this run's hardware (e.g. "NVIDIA H200"); ``same_settings``
    where nothing but the device differs (the model, its quantization, the draft model, the build and the server
    flags are the study's: what the model computes is comparable there)."""

    comparable: bool
    same_model: bool
    device: str
    same_settings: bool = False


def evaluate(
    claims: Sequence[Claim], tables: Mapping[str, pd.DataFrame], *, baseline: str, setup: Setup
) -> pd.DataFrame:
    """One row per claim and variant (``RESULT_COLUMNS``): id, text, kind (str); published (the claim's value:
    number, [low, high], word, count, tasks, speeds, tiers) and measured (per task a number, verdict or identity
    counts; per repeat scores, speeds or counts; per group a ranking), each also as display text; temperature (the
    stated one, or None where the text gives none); verdict, detail (str); cells (list of cell files, both readings');
    scope (str), prompt_dependent (bool), variant_of (the claim's id, or None). A claim without a stated
    temperature is judged at temperature 0 (verdict, measured_text) and at 1.0 (verdict_t1, measured_t1_text), and
    ``reading`` says which reading the run supports; ``sentence`` and ``sentence_reading`` the same for the claims
    that share its sentence, read together; elsewhere those are None, "" and None. A sentence that explains or
    restates another (``relation``: "explains" or "restates"; ``read_with``: that sentence) is read at that
    sentence's reading (``read_at``), which its own claims decide: ``sentence_reading`` then names no temperature
    that reading leaves out, and a miss there is its own. Where the text's words allow several readings (``reads``:
    this row's), ``reading`` says which of them the run supports (the group's key in ``readings``), and the sentence
    counts the figure borne out where one of them is; where one reading's claim is contradicted, ``reading`` names
    it ("contradicted under ..."). ``tasks`` and ``conditions``: the claim's (a variant's in place of its
    condition)."""
    run = Run(tables, baseline)
    rows = []
    for base in claims:
        for claim in (base, *(variant(base, v) for v in base.variants)):
            rows.append(_row(claim, base, run, setup))
    read_together(rows)
    frame = pd.DataFrame(rows, columns=RESULT_COLUMNS)
    frame[NULLABLE_COLUMNS] = pd.DataFrame(rows, columns=NULLABLE_COLUMNS, dtype=object)
    return frame  # None stays None (not NaN) in the columns that have it


def _row(claim: Claim, base: Claim, run: Run, setup: Setup) -> dict[str, Any]:
    if claim.unstated:
        outcome = judge_claim(replace(claim, temperature=READINGS[0]), run, setup)
        t1: Outcome | None = judge_claim(replace(claim, temperature=READINGS[1]), run, setup)
    else:
        outcome = judge_claim(claim, run, setup)
        t1 = None
    stated = not claim.unstated and claim.kind != "background"
    return {
        "id": claim.id,
        "text": claim.text,
        "kind": claim.kind,
        "published": claim.published,
        "published_text": format_published(claim),
        "temperature": claim.temperature if stated else None,
        "measured": outcome.measured,
        "measured_text": outcome.text,
        "verdict": outcome.verdict,
        "detail": outcome.detail,
        "cells": list(dict.fromkeys(c for c in outcome.cells + (t1.cells if t1 else []) if c)),
        "scope": claim.scope,
        "prompt_dependent": claim.prompt_dependent,
        "variant_of": None if claim is base else base.id,
        "verdict_t1": t1.verdict if t1 else None,
        "measured_t1_text": t1.text if t1 else "",
        "reading": None,  # read_together
        "sentence": claim.sentence or None,
        "sentence_reading": None,
        "reads": claim.reads or None,
        "read_with": claim.explains or claim.restates or None,
        "relation": "explains" if claim.explains else "restates" if claim.restates else None,
        "read_at": None,
        "readings": claim.readings or None,  # one figure read in different ways
        "tasks": list(claim.tasks),
        "conditions": list(claim.conditions),
    }


def read_together(rows: Rows) -> None:
    """Fill in the readings of judged rows (``verdict``, ``verdict_t1`` set; columns as ``evaluate``'s): each row's
    own ``reading`` of an unstated temperature, each ``readings`` group's reading of its words, each sentence's
    ``sentence_reading`` (a sentence that explains or restates another at that one's reading, ``read_at``)."""
    for row in rows:
        unstated = row["verdict_t1"] is not None
        row["reading"] = supported_reading([row["verdict"]], [row["verdict_t1"]]) if unstated else None
    _read_words(rows)
    _read_sentences(rows)


def _groups(rows: Rows, key: str) -> Iterator[tuple[Rows, Rows, str]]:
    """The rows read together by ``key`` (claims, not variants, with the same non-empty value), the rows that take
    the result and "" (as claimed); then per variant the same rows with the variant's standing in for its claim's,
    of which only the variant's rows take the result (rows without a variant are shared), and the variant's suffix."""
    by_id = {row["id"]: row for row in rows}
    groups: dict[str, Rows] = {}
    for row in rows:
        if row[key] and row["variant_of"] is None:
            groups.setdefault(row[key], []).append(row)
    for members in groups.values():
        yield members, members, ""
        ids = {m["id"] for m in members}
        for suffix in sorted({row["id"].split("@", 1)[1] for row in rows if row["variant_of"] in ids}):
            read = [by_id.get(f"{m['id']}@{suffix}", m) for m in members]
            yield read, [r for r in read if r["variant_of"] is not None], suffix


def _borne_out(row: dict[str, Any]) -> str:
    """A row as one verdict over its temperatures: borne out under some reading, contradicted or otherwise against
    it under each, uniform, or undecided (its stated verdict where the text gives one)."""
    reading = row["reading"]
    if reading is None:
        return row["verdict"]
    if reading in SUPPORTED_READINGS:
        return REPRODUCED
    if reading == NEITHER_READING:
        return CONTRADICTED if CONTRADICTED in (row["verdict"], row["verdict_t1"]) else NOT_REPRODUCED
    return reading if reading in UNIFORM_READINGS else TOO_FEW_RUNS


def _words_reading(read: Rows) -> str:
    """Which reading of the words the run supports; where one reading's claim is contradicted, that reading, named:
    a weaker reading that holds does not hide a reversed order."""
    contradicted = [r["reads"] for r in read if _borne_out(r) == CONTRADICTED]
    if contradicted:
        return CONTRADICTED_UNDER + " and ".join(contradicted)
    return reading_supported({r["reads"]: [_borne_out(r)] for r in read})


def _read_words(rows: Rows) -> None:
    """Where the claims of one ``readings`` group read one figure of the text in different ways: which of those
    readings the run supports, in each member's ``reading``."""
    found = [
        (_words_reading(read), taking) for read, taking, _ in _groups(rows, "readings")
    ]  # every group read before any row's own reading is replaced (a variant's group shares rows)
    for reading, taking in found:
        for r in taking:
            r["reading"] = reading


def _at(read: Rows, column: str) -> list[str]:
    """The verdicts of rows read together under one temperature, the readings of one figure as one verdict."""
    figures: dict[str, list[str]] = {}
    for r in read:
        figures.setdefault(r["readings"] or r["id"], []).append(r[column])
    return [either(verdicts) for verdicts in figures.values()]


def _read_sentences(rows: Rows) -> None:
    """Each sentence's reading from the rows that share it (the claims as claimed, and per variant the same with the
    variant's row standing in for its claim's). A sentence that explains or restates another is read at that one's
    reading, decided by that sentence's own claims alone (its variant's where it has one), where it is a reading of
    the temperature; elsewhere (that sentence undecided, against at each, not comparable) on its own."""
    found = list(_groups(rows, "sentence"))
    own = {
        (read[0]["sentence"], suffix): supported_reading(_at(read, "verdict"), _at(read, "verdict_t1"))
        for read, _, suffix in found
    }
    for read, taking, suffix in found:
        sentence, stated = read[0]["sentence"], read[0]["read_with"]
        read_at = own.get((stated, suffix), own.get((stated, ""))) if stated else None
        if read_at not in SUPPORTED_READINGS:
            read_at, reading = None, own[(sentence, suffix)]
        else:
            reading = reading_at(read_at, _at(read, "verdict"), _at(read, "verdict_t1"))
        for r in taking:
            r["sentence_reading"], r["read_at"] = reading, read_at


def judge_claim(claim: Claim, run: Run, setup: Setup) -> Outcome:
    """The kind's judge, then what differs from the study's setup (docs/claims.md, Scope)."""
    try:
        outcome = JUDGES[claim.kind](claim, run)
    except Exception as error:  # name the claim; a bug here should not read as a table problem
        raise ClaimError(f"claim {claim.id!r}: evaluation failed: {type(error).__name__}: {error}") from error
    if claim.scope == "background" or setup.comparable:
        return outcome
    what = claim.kind.replace("_", " ")
    if not setup.same_model and claim.scope == "transfers":  # a question about this model
        answer = QUESTION_ANSWERS.get(outcome.verdict, outcome.verdict)
        return outcome._replace(verdict=answer, detail=f"asked of this model on {setup.device}: {outcome.detail}")
    if not setup.same_model:
        return outcome._replace(verdict=NOT_JUDGED, detail=NOT_JUDGED_DETAIL)
    if claim.scope == ANY_DEVICE and setup.same_settings:  # what the model computes: the device does not move it
        return outcome._replace(detail=f"{what} {outcome.verdict} on {setup.device}: {outcome.detail}")
    if claim.scope in ("absolute", ANY_DEVICE):
        detail = NOT_COMPARABLE_DETAIL if claim.scope == "absolute" else ANY_DEVICE_DETAIL
        return outcome._replace(verdict=NOT_COMPARABLE, detail=detail)
    if claim.scope == "transfers" or outcome.verdict in UNDECIDED:
        return outcome._replace(detail=f"{what} {outcome.verdict} on {setup.device}: {outcome.detail}")
    shown = AGREES if outcome.verdict == REPRODUCED else DIFFERS  # not claimed to transfer: beside the study's
    relation = "agrees with" if shown == AGREES else "differs from"
    detail = (
        f"{what} {relation} the study on {setup.device}: {outcome.detail} "
        f"('{outcome.verdict}' on the study's terms; not claimed to transfer)"
    )
    return outcome._replace(verdict=shown, detail=detail)
