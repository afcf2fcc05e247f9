"""The report's claims: the table of claims judged on this run (both readings where the text gives no
temperature, and the reading the run supports), which DFlash setting each DFlash claim matches, and the counts and
failures "What this run found" opens with."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd

from ..claims.claim import AGREES, NOT_REPRODUCED, REPRODUCED, SAME_DIRECTION
from .document import Column, Note, Section, Table, is_missing, records, verdict_tone


def _optional(value: Any) -> str:
    return "" if is_missing(value) else str(value)


def _temperature(value: Any) -> str:
    return "not stated" if is_missing(value) else f"{value:g}"


CLAIM_COLUMNS = [
    Column("claim", "id", text=True),
    Column("text", "text", text=True),
    Column("scope", "scope", text=True),
    Column("prompt-dependent", "prompt_dependent", lambda v: "yes" if v is True else "", text=True),
    Column("published", "published_text", text=True),
    Column("temperature", "temperature", _temperature, text=True),
    Column("this run (T=0, or as stated)", "measured_text", text=True),
    Column("verdict", "verdict", text=True, tone=verdict_tone),
    Column("this run (T=1.0)", "measured_t1_text", _optional, text=True),
    Column("verdict (T=1.0)", "verdict_t1", _optional, text=True, tone=verdict_tone),
    Column("reading supported", "reading", _optional, text=True),
    Column("detail", "detail", text=True),
]


def claims_section(
    claims: pd.DataFrame | None,
    title: str = "Published claims vs this run",
    key: str = "claims",
    notes: Sequence[Note] = (),
) -> Section:
    """Every claim and variant row, judged; a claim whose temperature the text does not give under both readings."""
    if claims is None or claims.empty:
        return Section(key, title, [*notes, Note("No claims were evaluated.")])
    readings = Note(
        "Where the study's text gives no temperature (the results section's six multipliers and every "
        "figure of its explanation), a claim is judged on this run's temperature-0 cells (*verdict*) and "
        "on its temperature-1.0 cells (*verdict (T=1.0)*); *reading supported* says which reading this "
        "run bears out. Scope: *absolute* figures are compared on the study's setup only; *relative* ones "
        "(verdicts, orders of methods) are shown elsewhere as agrees / differs; only the order of tasks "
        "per method (*transfers*) is judged on any setup."
    )
    return Section(key, title, [*notes, readings], Table(CLAIM_COLUMNS, records(claims)))


def supported(row: Any) -> bool:
    """A claim row this run bears out: reproduced (or agrees) at its stated temperature, or under either reading."""
    if not is_missing(row["reading"]):
        return str(row["reading"]) in ("both readings", "temperature 0 only", "temperature 1.0 only")
    return row["verdict"] in (REPRODUCED, AGREES)


def _shown(row: Any) -> str:
    """A row's verdict as one phrase: the verdict, and which reading where the text gives no temperature."""
    if is_missing(row["reading"]):
        return str(row["verdict"])
    return f"{row['verdict']} at 0, {row['verdict_t1']} at 1.0 ({row['reading']})"


def settings_section(claims: pd.DataFrame | None) -> list[Section]:
    """For each claim judged on a condition and its variants (DFlash: at the build's default draft length, and at
    the documented --spec-draft-n-max 15), which setting the run bears the claim out with."""
    if claims is None or "variant_of" not in claims or claims.variant_of.isna().all():
        return []
    variants = claims[claims.variant_of.notna()]
    suffixes = list(dict.fromkeys(i.split("@", 1)[1] for i in variants.id))
    rows = []
    for base in records(claims[claims.id.isin(set(variants.variant_of))]):
        own = {r["id"].split("@", 1)[1]: r for r in records(variants[variants.variant_of == base["id"]])}
        held = ["as claimed"] * supported(base) + [name for name in suffixes if name in own and supported(own[name])]
        rows.append(
            {
                "id": base["id"],
                "base": _shown(base),
                **{name: _shown(own[name]) if name in own else "" for name in suffixes},
                "matches": " and ".join(held) or "neither",
            }
        )
    columns = [
        Column("claim", "id", text=True),
        Column("as claimed (dflash)", "base", text=True),
        *(Column(name, name, text=True) for name in suffixes),
        Column("matches", "matches", text=True),
    ]
    return [
        Section(
            "settings",
            "Which DFlash setting each claim matches",
            [
                Note(
                    'The study says DFlash proposes "up to 15 tokens at once" and ran each method "at its default or '
                    'documented settings"; it names no draft-length flag. *dflash* is `-md <draft> '
                    "--spec-type draft-dflash` "
                    "at the build's default draft length (the server logs n_max), the command the study recommends to "
                    "readers; *dflash-n15* adds the documented `--spec-draft-n-max 15`. Neither is a "
                    "command the study says "
                    "it measured; each DFlash claim is judged on both."
                )
            ],
            Table(columns, rows),
        )
    ]


def claim_notes(claims: pd.DataFrame) -> tuple[list[Note], list[Note]]:
    """The opening's notes on the claims (verdict counts, readings supported) and the claims this run bears out
    under no reading, as items."""
    counts = ", ".join(f"**{n}** {verdict}" for verdict, n in claims.verdict.value_counts().items())
    notes = [Note(f"Claims (at temperature 0 where the text states none): {counts}.")]
    readings = claims.reading.dropna().value_counts()
    if len(readings):
        notes.append(
            Note(
                "Claims whose temperature the text does not give, by the reading this run supports: "
                + ", ".join(f"**{n}** {reading}" for reading, n in readings.items())
                + "."
            )
        )
    failed = [
        r
        for r in records(claims)
        if not supported(r)
        and NOT_REPRODUCED in (r["verdict"], r["verdict_t1"])
        and (is_missing(r["reading"]) or r["reading"] == "neither reading")
    ]
    items = [
        Note(
            f"Not reproduced: **{r['id']}**: {r['text']} (published {r['published_text']}; this run "
            f"{r['measured_text']}" + (f"; at 1.0: {r['measured_t1_text']}" if r["measured_t1_text"] else "") + ")",
            "bad",
        )
        for r in failed
    ]
    return notes, items


def ordering_notes(claims: pd.DataFrame) -> list[Note]:
    """On another setup: the orderings the study expects to transfer, as judged on this one (those not reproduced
    are among claim_notes' items already)."""
    judged = claims[(claims.kind == "ordering") & claims.verdict.isin([REPRODUCED, SAME_DIRECTION])]
    return [
        Note(
            f"Ordering judged on this setup: **{r['id']}**: {r['text']}: **{r['verdict']}** (this run "
            f"{r['measured_text']})"
        )
        for r in records(judged)
    ]
