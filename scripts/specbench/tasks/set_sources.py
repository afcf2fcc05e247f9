"""How the public prompt sets' rows (Spec-Bench, SPEED-Bench, MT-Bench) read as questions, SPEED-Bench's placeholders
included, and the revisions each set was checked at (where each is published, its licence and categories:
core.config.set_sources)."""

from __future__ import annotations

import re
import string
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from specbench.core.config.set_sources import SetSource
from specbench.core.steps.files import read_json_lines


class PromptSetError(RuntimeError):
    """A prompt set is not what its spec says (file, sha256, rows, categories, placeholders); the message is one line
    that names the set and its revision."""


@dataclass(frozen=True)
class Question:
    """One question of a set: its id, its category (a task name) and its turns; ``origin``: where the row says its text
    comes from (SPEED-Bench's ``source`` column), '' when it says nothing."""

    id: str
    category: str
    turns: tuple[str, ...]
    origin: str = ""


@dataclass(frozen=True)
class Pin:
    """A revision a set was checked at, and the sha256 of its file(s) there (None: not determined)."""

    revision: str
    sha256: str | None


# Where each set was checked (config/tasks/prompt_sets/README.md says how). Spec-Bench: the newest commit of the
# repository seen (the file is unchanged since its first commit, 66230f10), sha256 of the file's Git blob there.
# SPEED-Bench: a commit of the dataset ("Update README.md"); its parquet's sha256 was not read here. MT-Bench: main's
# last commit (e3a795c, Jul 3 2023, after the parquet's upload in 9163991); its parquet's sha256 was not read here.
PINS: dict[str, Pin] = {
    "spec-bench": Pin(
        "fd2c1cd7d2201ef71db4c5f4e455008f017967bf", "4b6d33e79484f9841c487ee87d1cf6aa8c6066f61d5d482ff09e5a007fafdf04"
    ),
    "speed-bench": Pin("487aa718444e816458d1a0a52bfce7a454285cf4", None),
    "mt-bench": Pin("e3a795c5e9a82ee40611c416b8a7786c73198991", None),
}

# The columns that hold a row's id and turns (every set also has 'category'); MT-Bench's Hub copy renamed 'turns'.
_COLUMNS = {
    "spec-bench": ("question_id", "turns"),
    "speed-bench": ("question_id", "turns"),
    "mt-bench": ("prompt_id", "prompt"),
}

# SPEED-Bench ships some rows without their text, which lives in other datasets under their own terms: the first turn
# starts with this marker, alone or followed by a blank line and a template whose {fields} take that text.
PLACEHOLDER = "FULL BENCHMARK DATA SHOULD BE FETCHED FROM THE SOURCE USING SPECDEC_BENCH"
# The sources whose rows NVIDIA's resolver (Model-Optimizer's specdec_bench) turns into the row's own template with
# the other dataset's text filled in, and nothing else: a template without fields is the whole question.
_TEMPLATE_SOURCES = (
    "abisee/cnn_dailymail",
    "livecodebench/code_generation_lite",
    "deepmind/code_contests",
    "Helsinki-NLP/opus-100",
)


def category_name(raw: str) -> str:
    """A source's category as a task name: lower case, each run of other characters than letters, digits, '_' and
    '-' made one '-'."""
    name = re.sub(r"[^a-z0-9_-]+", "-", str(raw).strip().lower()).strip("-_")
    if not name:
        raise ValueError(f"category {raw!r} has no letters or digits")
    return name


def _label(source: SetSource, revision: str | None) -> str:
    return f"{source.name}@{revision}" if revision else source.name


def _rows(path: Path) -> list[dict[str, Any]]:
    if path.suffix == ".parquet":
        import pyarrow.parquet as pq

        return pq.read_table(path).to_pylist()
    return read_json_lines(path)


def read_questions(source: SetSource, files: list[Path], revision: str | None = None) -> list[Question]:
    """Every question in the set's file(s) (JSON lines or parquet), in file order; a row without a category, an id or
    turns that are strings raises PromptSetError naming the file and row."""
    if source.name not in _COLUMNS:
        raise PromptSetError(f"{_label(source, revision)}: no reader for this set")
    id_column, turns_column = _COLUMNS[source.name]
    questions = []
    for path in sorted(files, key=lambda p: (p.name, str(p))):
        for number, row in enumerate(_rows(path), start=1):
            where = f"{_label(source, revision)}: {path.name} row {number}"
            turns, ident, category = row.get(turns_column), row.get(id_column), row.get("category")
            if ident is None or not isinstance(category, str):
                raise PromptSetError(f"{where} has no '{id_column}' or no 'category' (columns: {sorted(row)})")
            if not isinstance(turns, list) or not turns or not all(isinstance(t, str) for t in turns):
                raise PromptSetError(f"{where} (question {ident}): '{turns_column}' is not a list of strings")
            try:
                name = category_name(category)
            except ValueError as error:
                raise PromptSetError(f"{where} (question {ident}): {error}") from None
            origin = row.get("source") if source.name == "speed-bench" else None
            questions.append(Question(str(ident), name, tuple(turns), str(origin or "")))
    return questions


def resolve_placeholder(question: Question) -> Question:
    """A SPEED-Bench question whose placeholder needs no other dataset's text (its template has no fields, from a source
    whose resolver only fills that template) as that text, exactly as NVIDIA's resolver would give it; any other
    question as it is (a placeholder left is refused later)."""
    first = question.turns[0] if question.turns else ""
    if not first.startswith(PLACEHOLDER + "\n\n") or not any(s in question.origin for s in _TEMPLATE_SOURCES):
        return question
    template = first.removeprefix(PLACEHOLDER + "\n\n")
    try:
        if PLACEHOLDER in template or any(f is not None for _, f, _, _ in string.Formatter().parse(template)):
            return question
        text = template.format()
    except (ValueError, IndexError, KeyError):
        return question
    return replace(question, turns=(text,)) if text.strip() else question
