"""Judging claims on one run's tables (analysis.summaries.tables): one typed row per claim and variant, each judged
by its kind's judge (judges.py), then by its scope (an absolute figure off the study's setup is not comparable, a
relative one is shown as agreeing or differing), under both readings when the text gives no temperature."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

import pandas as pd

from .claim import (
    AGREES,
    DIFFERS,
    NOT_COMPARABLE,
    NOT_COMPARABLE_DETAIL,
    NOT_MEASURED,
    READINGS,
    REPRODUCED,
    RESULT_COLUMNS,
    Claim,
    ClaimError,
    supported_reading,
    variant,
)
from .judges import JUDGES
from .tables import Outcome, Run, format_published

_MAYBE_NONE = ["temperature", "variant_of", "verdict_t1", "reading"]


def evaluate(
    claims: Sequence[Claim], tables: Mapping[str, pd.DataFrame], *, baseline: str, comparable: bool, device: str
) -> pd.DataFrame:
    """One row per claim and variant (``RESULT_COLUMNS``): id, text, kind (str); published (the claim's value:
    number, [low, high], word, count, tasks, speeds, tiers) and measured (per task a number, verdict or identity
    counts; per repeat scores, speeds or counts; per group a ranking), each also as display text; temperature (the
    stated one, or None where the text gives none); verdict, detail (str); cells (list of cell files, both readings');
    scope (str), prompt_dependent (bool), variant_of (the claim's id, or None). A claim without a stated
    temperature is judged at temperature 0 (verdict, measured_text) and at 1.0 (verdict_t1, measured_t1_text), and
    ``reading`` says which reading the run supports; elsewhere those three are None, "" and None. ``comparable``:
    the run is on the study's setup; ``device``: a short label of this run's hardware (e.g. "NVIDIA H200")."""
    run, rows = Run(tables, baseline), []
    for base in claims:
        for claim in (base, *(variant(base, v) for v in base.variants)):
            first, *others = READINGS if claim.unstated else (claim.temperature,)
            outcome = judge_claim(replace(claim, temperature=first), run, comparable, device)
            t1 = judge_claim(replace(claim, temperature=others[0]), run, comparable, device) if others else None
            rows.append(
                {
                    "id": claim.id,
                    "text": claim.text,
                    "kind": claim.kind,
                    "published": claim.published,
                    "published_text": format_published(claim),
                    "temperature": None if claim.unstated or claim.kind == "background" else claim.temperature,
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
                    "reading": supported_reading(outcome.verdict, t1.verdict) if t1 else None,
                }
            )
    frame = pd.DataFrame(rows, columns=RESULT_COLUMNS)
    frame[_MAYBE_NONE] = pd.DataFrame(rows, columns=_MAYBE_NONE, dtype=object)
    return frame  # None stays None (not NaN) in the columns that have it


def judge_claim(claim: Claim, run: Run, comparable: bool, device: str) -> Outcome:
    """The kind's judge, then the scope off the study's setup: an absolute figure is not comparable, a relative one
    agrees or differs, one that transfers keeps its verdict (each naming the device)."""
    try:
        outcome = JUDGES[claim.kind](claim, run)
    except Exception as error:  # name the claim; a bug here should not read as a table problem
        raise ClaimError(f"claim {claim.id!r}: evaluation failed: {type(error).__name__}: {error}") from error
    if comparable or claim.scope == "background" or (outcome.verdict == NOT_MEASURED and claim.scope != "absolute"):
        return outcome
    if claim.scope == "absolute":
        return outcome._replace(verdict=NOT_COMPARABLE, detail=NOT_COMPARABLE_DETAIL)
    what = claim.kind.replace("_", " ")
    if claim.scope == "relative":  # not claimed to transfer: beside the study's, not judged
        shown = AGREES if outcome.verdict == REPRODUCED else DIFFERS
        relation = f"{shown} {'with' if shown == AGREES else 'from'} the study"
        return outcome._replace(
            verdict=shown,
            detail=f"{what} {relation} on {device}: {outcome.detail} "
            f"('{outcome.verdict}' on the study's terms; not claimed to "
            "transfer)",
        )
    return outcome._replace(detail=f"{what} {outcome.verdict} on {device}: {outcome.detail}")
