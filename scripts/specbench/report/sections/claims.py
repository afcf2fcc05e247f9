"""The report's claims: one short row per claim (what the study says, what this run measured, the verdict) with the
long detail folded beside it, which DFlash setting each DFlash claim matches, and the counts, failures and questions
"What this run found" opens with."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd

from specbench.claims.claim import (
    BOTH_READINGS,
    CANNOT_TELL,
    FAILED,
    HELD,
    NEITHER_READING,
    NOT_MEASURED,
    ONLY,
    SUPPORTED_READINGS,
    UNDECIDED,
    UNIFORM_READINGS,
    held_under,
)
from specbench.report.document import Column, Note, Section, Table, is_missing, records

PROMPT_NOTE = "prompt-dependent: the study published no prompts, ours are our own"


def _optional(value: Any) -> str:
    return "" if is_missing(value) else str(value)


def _temperature(value: Any) -> str:
    return "not stated: judged at 0 and at 1.0" if is_missing(value) else f"{value:g}"


def _measured(row: Any) -> str:
    """What this run measured, at both temperatures where the text gives none."""
    if is_missing(row["verdict_t1"]):
        return str(row["measured_text"])
    return f"at 0: {row['measured_text']}; at 1.0: {row['measured_t1_text']}"


def shown_verdict(row: Any) -> str:
    """A row's verdict as one phrase: the verdict, or where the text gives no temperature both, and the reading."""
    if is_missing(row["verdict_t1"]):
        return str(row["verdict"])
    if row["verdict"] == row["verdict_t1"]:
        return f"{row['verdict']} at 0 and 1.0"
    return f"{row['verdict']} at 0; {row['verdict_t1']} at 1.0"


def _tone(row: Any) -> str:
    """Good where this run bears the claim out (under its sentence's reading), bad where it fails under every
    reading; no colour otherwise (undecided, not comparable, not judged, another model's other order)."""
    if supported(row):
        return "good"
    if failed(row):
        return "bad"
    return ""


def sentence_text(row: Any) -> str:
    if is_missing(row.get("sentence")):
        return ""
    if not is_missing(row.get("read_with")):
        return (
            f'{row["sentence"]}, read with {row["read_with"]} ("these numbers explain the results above"): '
            f"{row['sentence_reading']} (one temperature for both sentences)"
        )
    return f"{row['sentence']}: {row['sentence_reading']} (the figures of one sentence share its temperature)"


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
    return Section(key, title, [*notes, readings], table)


def _reading(row: Any) -> Any:
    """The reading that decides a row: its sentence's where it shares one, else its own."""
    sentence = row.get("sentence_reading")
    return row["reading"] if is_missing(sentence) else sentence


def _reads(row: Any) -> str | None:
    return None if is_missing(row.get("reads")) else str(row["reads"])


def _verdict_t1(row: Any) -> str | None:
    return None if is_missing(row["verdict_t1"]) else str(row["verdict_t1"])


def supported(row: Any) -> bool:
    """A claim row this run bears out: borne out at its stated temperature, or itself under a reading of its
    sentence (or of its words) that the run supports."""
    reading = _reading(row)
    if not is_missing(reading):
        return held_under(str(reading), row["verdict"], _verdict_t1(row), _reads(row))
    return row["verdict"] in HELD


def _words_held(row: Any) -> bool:
    """Words the text allows several readings of, borne out under another reading than this row's."""
    reading = "" if is_missing(row["reading"]) else str(row["reading"])
    return reading not in SUPPORTED_READINGS and reading.endswith(ONLY) and _reads(row) is not None


def failed(row: Any) -> bool:
    """A claim row this run does not reproduce: failed at its stated temperature, or failed itself under a reading
    while its sentence (or the claim alone) holds under neither; never for undecided, not comparable or differs."""
    reading = _reading(row)
    if is_missing(reading):
        return row["verdict"] in FAILED
    return str(reading) == NEITHER_READING and bool({row["verdict"], row["verdict_t1"]} & set(FAILED))


def undecided(row: Any) -> bool:
    """A claim row neither borne out nor failed, with a verdict that could not decide (too few runs, intervals not
    separated or too wide), or a failed one under a reading the other reading leaves open."""
    verdicts = {row["verdict"], row["verdict_t1"]} - {None}
    telling = (set(UNDECIDED) - {NOT_MEASURED}) | set(FAILED)
    return not supported(row) and not failed(row) and not _words_held(row) and bool(verdicts & telling)


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


def _shown(row: Any) -> str:
    """A claim as the opening names it: id, verdict(s), and the prompt dependence where a miss may come from it."""
    missed = bool({row["verdict"], row["verdict_t1"]} & set(FAILED))
    prompt = f"; {PROMPT_NOTE}" if row["prompt_dependent"] is True and missed else ""
    return f"{row['id']} ({shown_verdict(row)}{prompt})"


def _failure(row: Any) -> Note:
    """One claim (in no sentence) this run bears out under no reading, with the kind of miss."""
    measured = str(row["measured_text"])
    if not is_missing(row["verdict_t1"]):
        measured += f"; at 1.0: {row['measured_t1_text']}"
    prompt = f" ({PROMPT_NOTE})" if row["prompt_dependent"] is True else ""
    return Note(
        f"Not reproduced{prompt}: **{row['id']}** ({shown_verdict(row)}): {row['text']} "
        f"(published {row['published_text']}; this run {measured})",
        "bad",
    )


def _own_held(row: Any) -> bool:
    """A row borne out under a reading of its own (a temperature, or where its words allow several, its words)."""
    reading = row["reading"]
    if is_missing(reading):
        return row["verdict"] in HELD
    if _reads(row) is not None:
        return reading == BOTH_READINGS or reading == f"{_reads(row)}{ONLY}"
    return str(reading) in SUPPORTED_READINGS


def _parts(members: list[dict[str, Any]]) -> str:
    """What held, what failed and what could not be told among a sentence's claims, each claim once."""
    groups = {
        "held": [m for m in members if _own_held(m)],
        "not reproduced": [m for m in members if {m["verdict"], m["verdict_t1"]} & set(FAILED)],
    }
    named = {m["id"] for group in groups.values() for m in group}
    groups["could not tell"] = [m for m in members if m["id"] not in named]
    return "; ".join(f"{what}: {', '.join(map(_shown, rows))}" for what, rows in groups.items() if rows)


def _sentence_note(sentence: str, members: list[dict[str, Any]]) -> Note | None:
    """A sentence that is not borne out, once: failed under every reading, or undecided; None where it holds or
    nothing of it could be judged alike (all not comparable, not measured or not judged)."""
    reading = str(members[0]["sentence_reading"])
    count = f"{len(members)} figures, one temperature"
    own = {v for m in members for v in (m["verdict"], _verdict_t1(m)) if v is not None}
    if own <= set(UNIFORM_READINGS):  # nothing of its own judged: read with another sentence, it says nothing
        return None
    if reading == NEITHER_READING and any(map(failed, members)):
        return Note(f"Not reproduced as one sentence: **{sentence}** ({count}): {_parts(members)}", "bad")
    if reading in SUPPORTED_READINGS or reading != CANNOT_TELL:
        return None
    return Note(f"Cannot tell as one sentence: **{sentence}** ({count}): {_parts(members)}")


def claim_notes(claims: pd.DataFrame) -> tuple[list[Note], list[Note]]:
    """The opening's notes on the claims (verdict counts, readings supported) and, as items, each claim or sentence
    this run does not bear out, once: every claim outside a sentence that fails under every reading, with the kind
    of miss; every sentence (read as a whole) that fails or cannot be told, with what held, what failed and what
    could not be told; then the claims outside a sentence left undecided."""
    rows = records(claims)
    sentences: dict[str, list[dict[str, Any]]] = {}
    alone = []
    for row in rows:
        if not is_missing(row["sentence"]) and row["variant_of"] is None:
            sentences.setdefault(row["sentence"], []).append(row)
        else:
            alone.append(row)
    alone += [members[0] for members in sentences.values() if len(members) == 1]  # a sentence of one claim is it
    sentences = {sentence: members for sentence, members in sentences.items() if len(members) > 1}
    read = [_sentence_note(sentence, members) for sentence, members in sentences.items()]
    items = [_failure(r) for r in alone if failed(r)] + [n for n in read if n and n.tone == "bad"]
    items += [n for n in read if n and n.tone != "bad"]
    undecided_alone = [_shown(r) for r in alone if undecided(r)]
    if undecided_alone:
        items.append(
            Note(f"Undecided (too few runs, intervals not separated or too wide): {', '.join(undecided_alone)}")
        )
    return _counts(claims), items


def ordering_notes(claims: pd.DataFrame) -> list[Note]:
    """On another setup of the study's model: the orderings the study expects to transfer, as judged on this one
    (those not reproduced are among claim_notes' items already)."""
    judged = claims[(claims.scope == "transfers") & claims.verdict.isin(HELD)]
    return [
        Note(
            f"Ordering judged on this setup: **{r['id']}**: {r['text']}: **{r['verdict']}** "
            f"(this run {r['measured_text']})"
        )
        for r in records(judged)
    ]


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
