"""Judging claims on one run's tables (analysis.summaries.tables): one typed row per claim and variant, each judged
by its kind's judge (judges.py), then by its scope (an absolute figure off the study's setup is not comparable)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

import pandas as pd

from .judges import JUDGES
from .model import NOT_COMPARABLE, NOT_COMPARABLE_DETAIL, NOT_MEASURED, RESULT_COLUMNS, Claim, ClaimError, variant
from .tables import Outcome, Run, format_published


def evaluate(claims: Sequence[Claim], tables: Mapping[str, pd.DataFrame], *, baseline: str, comparable: bool,
             device: str) -> pd.DataFrame:
    """One row per claim and variant (``RESULT_COLUMNS``): id, text, kind (str); published (the claim's value:
    number, [low, high], word, count, speeds, tiers) and measured (per task a number, verdict or identity counts; per
    repeat scores, speeds or counts; per group a ranking), each also as display text; verdict, detail (str); cells
    (list of cell files, temperature 1.0's too); scope (str), prompt_dependent (bool), variant_of (the claim's id, or
    None); verdict_t1 and measured_t1_text (the claim at temperature 1.0, or None and ""). ``comparable``: the run is
    on the study's setup; ``device``: a short label of this run's hardware (e.g. "NVIDIA H200", "CPU (x86_64)")."""
    run, rows = Run(tables, baseline), []
    for base in claims:
        for claim in (base, *(variant(base, v) for v in base.variants)):
            outcome = judge_claim(claim, run, comparable, device)
            at_t1 = claim.temperature == 0.0 and claim.kind not in ("identity", "background")
            t1 = judge_claim(replace(claim, temperature=1.0), run, comparable, device) if at_t1 else None
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


def judge_claim(claim: Claim, run: Run, comparable: bool, device: str) -> Outcome:
    """The kind's judge, then the scope: an absolute figure off the study's setup is not comparable."""
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
