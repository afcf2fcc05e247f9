"""The opening's answer on the study's model ("What this run found"): one entry per sentence of the study, per figure
whose words it reads in several ways and per claim outside both, each of one kind (held; differs; not reproduced;
cannot tell, with its cause; not compared; not measured), as docs/claims.md, "The opening", describes."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from specbench.claims.claim import (
    AGAINST,
    ANY_DEVICE,
    AT,
    BACKGROUND,
    BOTH_READINGS,
    DIFFERS,
    FAILED,
    NEITHER_READING,
    NOT_COMPARABLE,
    NOT_JUDGED,
    NOT_MEASURED,
    T0_ONLY,
    T1_ONLY,
    UNDECIDED,
    either,
    reading_at,
    reading_supported,
    supported_reading,
    verdicts_at,
)
from specbench.report.document import Note, is_missing, records

Row = Mapping[str, Any]

# The kinds of entry, in the order the opening tells them
NOT_REPRODUCED_KIND = "not reproduced"
DIFFERS_KIND = "differs"
CANNOT_TELL_KIND = "cannot tell"
HELD_KIND = "held"
NOT_COMPARED_KIND = "not compared"
NOT_MEASURED_KIND = "not measured"
KINDS = (NOT_REPRODUCED_KIND, DIFFERS_KIND, CANNOT_TELL_KIND, HELD_KIND, NOT_COMPARED_KIND, NOT_MEASURED_KIND)
# The headings a row of an entry stands under, one each, in the order they are tried
HEADINGS = ("not reproduced", "differs", "could not tell", "not compared", "held")
PROMPT_NOTE = "prompt-dependent: the study published no prompts, ours are our own"
NOT_COMPARED_CAUSE = "not comparable on other hardware: absolute figures, which hold only on the study's setup"
SETTINGS_CAUSE = (  # an any-device figure (claims.claim.ANY_DEVICE_DETAIL) where more than the device differs
    "not comparable where the settings differ from the study's: what the model computes, compared only where the "
    "model, its quantization, the draft model, the build and the server flags are the study's"
)
UNSAID = (NOT_COMPARABLE, NOT_JUDGED, BACKGROUND)  # verdicts that say nothing of the figure on this setup


@dataclass(frozen=True)
class Unit:
    """What the opening names once: a sentence of the study (``sentence``), a figure whose words it reads in several
    ways, or a claim outside both; its rows (the claims as claimed), each row's variants' rows, and where its
    sentence explains or restates another (``relation``) that sentence's name and rows (``stated``), whose reading
    of the temperature it is read at."""

    name: str
    sentence: bool
    rows: tuple[Row, ...]
    variants: Mapping[str, tuple[Row, ...]]
    read_with: str = ""
    relation: str = ""
    stated: tuple[Row, ...] = ()


@dataclass(frozen=True)
class Entry:
    """One unit as the opening tells it: its kind (``KINDS``), its name, the text of its item (a held unit's: its
    name and reading), each of its rows' ids with the one heading it stands under (``HEADINGS``), and the ids of
    those not comparable because the settings differ from the study's (``settings_differ``)."""

    kind: str
    name: str
    text: str
    headings: tuple[tuple[str, str], ...] = ()
    settings_differ: tuple[str, ...] = ()

    @property
    def not_compared(self) -> tuple[str, ...]:
        """The ids of its rows that were not compared."""
        return tuple(i for i, h in self.headings if h == "not compared")


def _verdicts(row: Row) -> list[str]:
    """A row's verdicts: at its stated temperature, or at 0 and 1.0."""
    return [v for v in (row["verdict"], row["verdict_t1"]) if not is_missing(v)]


def _key(row: Row, column: str) -> str | None:
    value = row.get(column)
    return None if is_missing(value) else str(value)


def _units(rows: Sequence[Row]) -> list[Unit]:
    """The units of the claims (background left out), in the order of their first claims: sentences of two claims or
    more, readings groups outside a sentence and the claims outside both (a sentence of one claim is that claim),
    each with the rows of the sentence it explains or restates (``read_with``); variants with their claim."""
    base = [r for r in rows if is_missing(r["variant_of"]) and r["verdict"] != BACKGROUND]
    sizes = {s: sum(_key(r, "sentence") == s for r in base) for s in {_key(r, "sentence") for r in base}}
    groups: dict[tuple[bool, str], list[Row]] = {}
    for row in base:
        sentence = _key(row, "sentence")
        if sentence and sizes[sentence] > 1:
            groups.setdefault((True, sentence), []).append(row)
        else:
            groups.setdefault((False, _key(row, "readings") or str(row["id"])), []).append(row)
    variants: dict[str, list[Row]] = {}
    for row in rows:
        if not is_missing(row["variant_of"]):
            variants.setdefault(str(row["variant_of"]), []).append(row)
    units = []
    for (sentence, name), members in groups.items():
        own = {str(r["id"]): tuple(variants.get(str(r["id"]), ())) for r in members}
        stated = _key(members[0], "read_with") or ""
        relation = _key(members[0], "relation") or ""
        rows_of = tuple(r for r in base if stated and _key(r, "sentence") == stated)
        units.append(Unit(name, sentence, tuple(members), own, stated, relation, rows_of))
    return units


def _figures(rows: Sequence[Row]) -> list[list[Row]]:
    """Rows as figures of the text: the rows of one ``readings`` group are one figure, any other row one."""
    figures: dict[str, list[Row]] = {}
    for row in rows:
        figures.setdefault(_key(row, "readings") or str(row["id"]), []).append(row)
    return list(figures.values())


def _said(figure: Sequence[Row]) -> bool:
    """A figure this setup says something of (not only not comparable)."""
    return any(v not in UNSAID for row in figure for v in _verdicts(row))


def _figure_verdict(figure: Sequence[Row], column: str) -> str | None:
    """One figure's verdict at one temperature (its readings of the words as one: claims.either)."""
    verdicts = [str(r[column]) for r in figure if not is_missing(r[column])]
    return either(verdicts) if verdicts else None


def opening_reading(rows: Sequence[Row], read_at: str = "") -> str:
    """The reading the run supports of rows read together, over the figures this setup says something of: as
    claims.supported_reading (at the temperatures ``read_at`` names, as claims.reading_at, where it is given), with
    what is not comparable here left out ('' where nothing is left)."""
    figures = [f for f in _figures(rows) if _said(f)]
    if not figures:
        return ""
    at_zero = [v for f in figures if (v := _figure_verdict(f, "verdict")) is not None]
    at_one = [v for f in figures if (v := _figure_verdict(f, "verdict_t1")) is not None]
    if not at_one:  # a stated temperature: one reading
        return reading_supported({"as stated": at_zero})
    return reading_at(read_at, at_zero, at_one) if read_at else supported_reading(at_zero, at_one)


def read_at(unit: Unit) -> str:
    """The reading of the temperature a unit is read at: that of the sentence it explains or restates, from that
    sentence's own figures this setup says something of, where it is one ('' elsewhere: the unit read alone)."""
    reading = opening_reading(unit.stated) if unit.stated else ""
    return reading if reading in (BOTH_READINGS, T0_ONLY, T1_ONLY) else ""


def _against(figure: Sequence[Row], verdicts: Sequence[str], at: str = "") -> bool:
    """A figure one of ``verdicts`` goes against at some temperature ``at`` names (both where it names none; its
    readings of the words as one)."""
    columns = [("verdict", "verdict_t1")[i] for i in AT.get(at, AT[BOTH_READINGS])]
    return any(_figure_verdict(figure, column) in verdicts for column in columns)


def _kind(unit: Unit) -> tuple[str, str]:
    """The unit's kind, and the reading it held under: held where its own figures hold at each temperature it is
    read at (both, or the one of the sentence it explains or restates), or at one of them; against the study where
    they fail (or differ) at each; else open."""
    own = [f for f in _figures(unit.rows) if _said(f)]
    if not own:
        return NOT_COMPARED_KIND, ""
    at = read_at(unit)
    reading = opening_reading(unit.rows, at)
    if reading == NOT_MEASURED:
        return NOT_MEASURED_KIND, ""
    if reading == BOTH_READINGS:
        return HELD_KIND, ""
    if reading in (T0_ONLY, T1_ONLY):
        return HELD_KIND, reading
    if reading == NEITHER_READING and any(_against(f, FAILED, at) for f in own):
        return NOT_REPRODUCED_KIND, ""
    if reading == NEITHER_READING and any(_against(f, (DIFFERS,), at) for f in own):
        return DIFFERS_KIND, ""
    return CANNOT_TELL_KIND, ""


def heading(row: Row) -> str:
    """The one heading a row of an entry stands under (``HEADINGS``), from its own verdicts."""
    verdicts = set(_verdicts(row))
    if verdicts & set(FAILED):
        return "not reproduced"
    if DIFFERS in verdicts:
        return "differs"
    if verdicts & set(UNDECIDED):
        return "could not tell"
    if verdicts <= set(UNSAID):
        return "not compared"
    return "held"


def shown_verdict(row: Row) -> str:
    """A row's verdict as one phrase: the verdict, or where the text gives no temperature both."""
    if is_missing(row["verdict_t1"]):
        return str(row["verdict"])
    if row["verdict"] == row["verdict_t1"]:
        return f"{row['verdict']} at 0 and 1.0"
    return f"{row['verdict']} at 0; {row['verdict_t1']} at 1.0"


def _measured(row: Row) -> str:
    """This run's value, quoted, once where both temperatures gave the same."""
    if is_missing(row["verdict_t1"]):
        return f'"{row["measured_text"]}"'
    if row["measured_text"] == row["measured_t1_text"]:
        return f'"{row["measured_text"]}" at 0 and 1.0'
    return f'at 0 "{row["measured_text"]}", at 1.0 "{row["measured_t1_text"]}"'


def values(row: Row) -> str:
    """The study's value and this run's, each quoted."""
    return f'the study "{row["published_text"]}", this run {_measured(row)}'


def _missed(row: Row) -> bool:
    return bool(set(_verdicts(row)) & set(AGAINST))


def _about(row: Row, unit: Unit, prompt: bool = True) -> str:
    """What an entry says of a row beside its id: its verdict(s), its reading of the words, the prompt dependence
    where it missed (``prompt``), and its variants' verdicts where they are not its own (a variant is never named
    on its own)."""
    parts = [shown_verdict(row)]
    if reads := _key(row, "reads"):
        parts.append(f"read as {reads}")
    if prompt and row.get("prompt_dependent") is True and _missed(row):
        parts.append(PROMPT_NOTE)
    for other in unit.variants.get(str(row["id"]), ()):
        if shown_verdict(other) != shown_verdict(row) and set(_verdicts(other)) - {NOT_MEASURED}:
            parts.append(f"{str(other['id']).split('@', 1)[1]}: {shown_verdict(other)}")
    return "; ".join(parts)


def _named(row: Row, unit: Unit) -> str:
    """A row as an entry names it: its id and ``_about``, and for a row against the study both values."""
    against = f": {values(row)}" if heading(row) in ("not reproduced", "differs") else ""
    return f"{row['id']} ({_about(row, unit)}){against}"


def _parts(unit: Unit) -> str:
    """The unit's rows under their headings, each row once."""
    under: dict[str, list[str]] = {h: [] for h in HEADINGS}
    for row in unit.rows:
        under[heading(row)].append(_named(row, unit))
    return "; ".join(f"{h}: {', '.join(named)}" for h, named in under.items() if named)


def _cause(unit: Unit) -> str:
    """Why a unit cannot be told: the verdicts that leave it open at the temperatures it is read at (undecided, or
    saying nothing at one temperature of a row judged at the other)."""
    at = read_at(unit)
    said = [r for r in unit.rows if _said([r])]
    open_ = {v for r in said for v in verdicts_at(at, r["verdict"], _key(r, "verdict_t1"))}
    return ", ".join(sorted(v for v in open_ if v in UNDECIDED or v in UNSAID)) or opening_reading(unit.rows, at)


def _read_with(unit: Unit) -> str:
    """Where a unit explains or restates another sentence, the reading it is read at and why, for its item."""
    at = read_at(unit)
    if not at:
        return ""
    return f"; read at the reading of {unit.read_with}, whose figures it {unit.relation}: {at}"


def _reading_words(unit: Unit) -> str:
    """How a readings group's words are read, where the unit is one."""
    if unit.sentence or len(unit.rows) < 2:
        return ""
    reading = str(unit.rows[0]["reading"])
    return f"; its words read {len(unit.rows)} ways: {reading}"


def _settings_differ(row: Row) -> bool:
    """A row of what the model computes judged not comparable: its settings, not only its device, differ from the
    study's (claims.evaluate: an any-device claim is judged where only the device differs)."""
    return row.get("scope") == ANY_DEVICE and NOT_COMPARABLE in _verdicts(row)


def _entry(unit: Unit, device: str) -> Entry:
    """The unit as the opening tells it."""
    kind, text = _told(unit, device)
    headings = tuple((str(r["id"]), heading(r)) for r in unit.rows)
    settings = tuple(str(r["id"]) for r in unit.rows if _settings_differ(r))
    return Entry(kind, unit.name, text, headings, settings)


def _told(unit: Unit, device: str) -> tuple[str, str]:
    """The unit's kind and the text of its item."""
    kind, reading = _kind(unit)
    first = unit.rows[0]
    if kind == HELD_KIND:
        mark = f" ({reading})" if reading else ""
        return kind, f"{unit.name}{mark}"
    if kind in (NOT_COMPARED_KIND, NOT_MEASURED_KIND):
        return kind, unit.name
    label = {
        NOT_REPRODUCED_KIND: "Not reproduced",
        DIFFERS_KIND: "Differs from the study",
        CANNOT_TELL_KIND: "Cannot tell",
    }
    where = f" on {device}" if device and kind == DIFFERS_KIND else ""
    if unit.sentence:
        count = f"{len(unit.rows)} figures, one temperature"
        cause = f"; {_cause(unit)}" if kind == CANNOT_TELL_KIND else ""
        text = f"{label[kind]}{where} as one sentence: **{unit.name}** ({count}{cause}{_read_with(unit)}): "
        return kind, text + _parts(unit)
    if len(unit.rows) > 1:  # one figure read in several ways
        words = f"{str(first['text']).rstrip('.')}{_reading_words(unit)}"
        return kind, f"{label[kind]}{where}: **{unit.name}** ({words}): {_parts(unit)}"
    prompt = f" ({PROMPT_NOTE})" if first.get("prompt_dependent") is True and _missed(first) else ""
    detail = values(first) if kind != CANNOT_TELL_KIND else f"this run {_measured(first)}"
    about = _about(first, unit, prompt=False) + _read_with(unit)
    return kind, f"{label[kind]}{where}{prompt}: **{unit.name}** ({about}): {first['text']} ({detail})"


def opening_entries(claims: pd.DataFrame, device: str = "") -> list[Entry]:
    """One entry per unit of the claims (sentences, readings groups, claims outside both), in ``KINDS`` order and
    the claims' order within a kind; ``device``: this run's, named where a relation differs."""
    entries = [_entry(unit, device) for unit in _units(records(claims))]
    return sorted(entries, key=lambda e: KINDS.index(e.kind))


def _listed(entries: Sequence[Entry]) -> str:
    return ", ".join(e.text for e in entries)


def _not_compared_cause(entries: Sequence[Entry]) -> str:
    """Why the entries' rows were not compared on another setup: absolute figures, and what the model computes
    where the settings differ from the study's, each named where some row is not compared for it."""
    settings = any(set(e.not_compared) & set(e.settings_differ) for e in entries)
    absolute = any(set(e.not_compared) - set(e.settings_differ) for e in entries)
    return "; ".join(cause for cause, named in ((NOT_COMPARED_CAUSE, absolute), (SETTINGS_CAUSE, settings)) if named)


def opening_notes(entries: Sequence[Entry], device: str = "", comparable: bool = True) -> list[Note]:
    """The entries as the opening's items: where nothing differs or fails, one sentence saying that everything
    compared agrees; each failure, difference and unit that cannot be told on its own; what held, what was not
    compared and what was not measured, one line each."""
    by_kind = {kind: [e for e in entries if e.kind == kind] for kind in KINDS}
    where = f" on {device}" if device else ""
    notes = []
    if not by_kind[NOT_REPRODUCED_KIND] and not by_kind[DIFFERS_KIND] and by_kind[HELD_KIND]:
        open_ = len(by_kind[CANNOT_TELL_KIND])
        rest = f"; {open_} could not be told (below)" if open_ else ""
        notes.append(
            Note(
                f"**Everything that can be compared here agrees with the study**: {len(by_kind[HELD_KIND])} of its "
                f"sentences and claims held{where}{rest}."
            )
        )
    tones = {NOT_REPRODUCED_KIND: "bad", DIFFERS_KIND: "warn", CANNOT_TELL_KIND: ""}
    for kind, tone in tones.items():
        notes += [Note(e.text, tone) for e in by_kind[kind]]
    if by_kind[HELD_KIND]:
        notes.append(Note(f"Held{where}: {_listed(by_kind[HELD_KIND])}."))
    unsaid = [e.text for e in by_kind[NOT_COMPARED_KIND]]
    unsaid += [f"{i} (in {e.name})" for e in by_kind[HELD_KIND] for i in e.not_compared]
    if unsaid:
        cause = _not_compared_cause([*by_kind[NOT_COMPARED_KIND], *by_kind[HELD_KIND]]) if not comparable else ""
        notes.append(Note(f"Not compared{where} ({cause or 'not comparable'}): {', '.join(unsaid)}."))
    if by_kind[NOT_MEASURED_KIND]:
        notes.append(Note(f"Not measured in this run: {_listed(by_kind[NOT_MEASURED_KIND])}."))
    return notes
