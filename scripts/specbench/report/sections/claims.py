"""The report's claims: one short row per claim (what the study says, what this run measured, the verdict) with the
long detail folded beside it and the verdicts counted, which DFlash setting each DFlash claim matches, and the items
"What this run found" opens with (opening.py's entries on the study's model, questions on another)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd

from specbench.claims.claim import (
    CONTRADICTED_UNDER,
    FAILED,
    HELD,
    NEITHER_READING,
    held_under,
    verdicts_at,
)
from specbench.report.document import Column, Note, Section, Table, is_missing, records
from specbench.report.sections.opening import opening_entries, opening_notes, shown_verdict


def _optional(value: Any) -> str:
    return "" if is_missing(value) else str(value)


def _temperature(value: Any) -> str:
    return "not stated: judged at 0 and at 1.0" if is_missing(value) else f"{value:g}"


def _measured(row: Any) -> str:
    """What this run measured, at both temperatures where the text gives none."""
    if is_missing(row["verdict_t1"]):
        return str(row["measured_text"])
    return f"at 0: {row['measured_text']}; at 1.0: {row['measured_t1_text']}"


def _tone(row: Any) -> str:
    """Good where this run bears the claim out (under its sentence's reading), bad where it fails under every
    reading; no colour otherwise (undecided, not comparable, not judged, another model's other order)."""
    if supported(row):
        return "good"
    if failed(row):
        return "bad"
    return ""


RELATIONS = {
    "explains": 'explains the figures of {} ("these numbers explain the results above")',
    "restates": "restates the figures of {}",
}


def sentence_text(row: Any) -> str:
    """The reading of the row's sentence, and where it explains or restates another the reading it is read at."""
    if is_missing(row.get("sentence")):
        return ""
    own = f"{row['sentence']}: {row['sentence_reading']}"
    if is_missing(row.get("read_with")):
        return f"{own} (the figures of one sentence share its temperature)"
    relation = RELATIONS[str(row["relation"])].format(row["read_with"])
    if is_missing(row.get("read_at")):
        return f"{own}; it {relation}, which settle no temperature here: read on its own"
    return f"{own}; it {relation}: read at their reading of the temperature, {row['read_at']}"


def _reading_shown(row: Any) -> str:
    """The reading the run supports, and this row's own reading of the words where they allow several."""
    reading = _optional(row["reading"])
    return f"{reading} (this row: {row['reads']})" if reading and not is_missing(row.get("reads")) else reading


CLAIM_COLUMNS = [
    Column("claim", "id", text=True),
    Column("the study says", "text", text=True),
    Column("this run", _measured, str, text=True),
    Column("verdict", lambda row: row, shown_verdict, text=True, tone=lambda row: _tone(row)),
]
CLAIM_DETAIL = [
    Column("published", "published_text", text=True),
    Column("temperature", "temperature", _temperature, text=True),
    Column("reading supported", _reading_shown, str, text=True),
    Column("sentence", sentence_text, str, text=True),
    Column("scope", "scope", text=True),
    Column("prompt-dependent", "prompt_dependent", lambda v: "yes" if v is True else "", text=True),
    Column("why", "detail", text=True),
]


def claims_section(
    claims: pd.DataFrame | None,
    title: str = "Published claims vs this run",
    key: str = "claims",
    notes: Sequence[Note] = (),
) -> Section:
    """Every claim and variant row, judged, one short row each with its detail folded beside it."""
    if claims is None or claims.empty:
        return Section(key, title, [*notes, Note("No claims were evaluated.")])
    readings = Note(
        "Where the study's text gives no temperature (the results section's six multipliers and every figure of its "
        "explanation), a claim is judged on this run's temperature-0 cells and on its temperature-1.0 cells; the "
        "figures of one sentence share one reading. Orderings count only pairs whose 95 % intervals are apart; the "
        "all-runs rule needs at least 3 runs a side. Each row's detail (published value, scope, why) is folded "
        "beside it."
    )
    table = Table(CLAIM_COLUMNS, records(claims), folded=CLAIM_DETAIL)
    return Section(key, title, [*notes, *_counts(claims), readings], table)


def _reading(row: Any) -> Any:
    """The reading that decides a row: its sentence's where it shares one, else its own."""
    sentence = row.get("sentence_reading")
    return row["reading"] if is_missing(sentence) else sentence


def _reads(row: Any) -> str | None:
    return None if is_missing(row.get("reads")) else str(row["reads"])


def _verdict_t1(row: Any) -> str | None:
    return None if is_missing(row["verdict_t1"]) else str(row["verdict_t1"])


def _read_at(row: Any) -> str | None:
    """The reading of the temperature a row is read at where its sentence explains or restates another."""
    return None if is_missing(row.get("read_at")) else str(row["read_at"])


def supported(row: Any) -> bool:
    """A claim row this run bears out: borne out at its stated temperature, or at every temperature it was judged
    at, or itself under a reading of its sentence (or of its words) that the run supports."""
    if all(v in HELD for v in verdicts_at(None, row["verdict"], _verdict_t1(row))):
        return True
    reading = _reading(row)
    return not is_missing(reading) and held_under(str(reading), row["verdict"], _verdict_t1(row), _reads(row))


def failed(row: Any) -> bool:
    """A claim row this run does not reproduce: failed at its stated temperature, or failed itself (at a temperature
    its sentence is read at) while its sentence (or the claim alone) holds under neither, or its words are
    contradicted under one of their readings; never for undecided, not comparable or differs."""
    reading = _reading(row)
    if is_missing(reading):
        return row["verdict"] in FAILED
    against = str(reading) == NEITHER_READING or str(reading).startswith(CONTRADICTED_UNDER)
    at = verdicts_at(_read_at(row), row["verdict"], _verdict_t1(row))
    return against and bool(set(at) & set(FAILED))


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
                "base": shown_verdict(base),
                **{name: shown_verdict(own[name]) if name in own else "" for name in suffixes},
                "matches": " and ".join(held) or "neither",
            }
        )
    columns = [
        Column("claim", "id", text=True),
        Column("as claimed (dflash)", "base", text=True),
        *(Column(name, name, text=True) for name in suffixes),
        Column("matches", "matches", text=True),
    ]
    note = Note(
        'The study says DFlash proposes "up to 15 tokens at once" and ran each method "at its default or documented '
        "settings\"; it names no draft-length flag. *dflash* is `-md <draft> --spec-type draft-dflash` at the build's "
        "default draft length (the server logs n_max), the command the study recommends to readers; *dflash-n15* "
        "adds the documented `--spec-draft-n-max 15`. Neither is a command the study says it measured; each DFlash "
        "claim is judged on both."
    )
    return [Section("settings", "Which DFlash setting each claim matches", [note], Table(columns, rows))]


def _counts(claims: pd.DataFrame) -> list[Note]:
    counts = ", ".join(f"**{n}** {verdict}" for verdict, n in claims.verdict.value_counts().items())
    notes = [Note(f"Claims (at temperature 0 where the text states none): {counts}.")]
    readings = claims.reading.dropna().value_counts()
    if len(readings):
        by_reading = ", ".join(f"**{n}** {reading}" for reading, n in readings.items())
        notes.append(
            Note(
                "Claims whose temperature (or whose words) the text leaves to more than one reading, by the reading "
                f"this run supports: {by_reading}."
            )
        )
    return notes


def claim_notes(claims: pd.DataFrame, device: str = "", comparable: bool = True) -> tuple[list[Note], list[Note]]:
    """The verdict counts, and the opening's items on the study's model (opening.opening_notes): each sentence,
    figure read in several ways and claim outside both, once, by kind; ``device``: this run's."""
    entries = opening_entries(claims, device)
    return _counts(claims), opening_notes(entries, device, comparable)


def question_notes(claims: pd.DataFrame) -> list[Note]:
    """On another model: the study's thesis and orders of tasks, asked of this model (never a failed reproduction:
    the study's claims are about its own model)."""
    asked = claims[(claims.scope == "transfers") & claims.variant_of.isna()]
    return [
        Note(f"{_question(r)} **{r['id']}** ({r['text']}): **{shown_verdict(r)}** (this model: {_measured(r)})")
        for r in records(asked)
    ]


def _question(row: Any) -> str:
    if row["published"] == "same ordering":
        return "The same order of tasks at both temperatures here too?"
    return "Does the task decide here too?"
