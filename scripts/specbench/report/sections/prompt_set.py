"""The report's account of a public prompt set the tasks were taken from (``tasks: {from: ...}``): where it was
published, the revision and file hash this run read, its licence, how the questions were chosen, and each question
measured (its category, member and id in the set)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from specbench.core.config.prompt_sets import SECOND_TURN
from specbench.report.document import Column, Note, Section, Table


def prompt_set_sections(questions: Sequence[Mapping[str, Any]], tasks: Sequence[str]) -> list[Section]:
    """One section when the tasks came from a public prompt set, none otherwise (``tasks``: the tasks measured)."""
    if not questions:
        return []
    first = questions[0]
    local = first.get("local")
    origin = (
        f"The tasks are categories of **{first['source']}** ({first['url']}): {first['repo']} at revision "
        f"`{first['revision']}`, file sha256 `{first['sha256'][:16]}...`, licence {first['licence']}. "
        f"Each category is a task and each question chosen from it a prompt of that task ({first['choice']})."
    )
    notes = [Note(origin)]
    if local:
        notes.append(Note(f"A local copy stood in for the download: {local} (its sha256 was checked).", "warn"))
    several = [q for q in questions if len(q["turns"]) > 1]
    asked = sorted({q["category"] for q in several if f"{q['category']}{SECOND_TURN}" in tasks})
    if asked:
        notes.append(
            Note(
                f"Second turns were asked as the tasks {', '.join(c + SECOND_TURN for c in asked)}: each question's "
                "first turn, the baseline's temperature-0 answer to it and the second turn, the same messages for "
                "every condition (the peers give each arm its own first answer, which changes the second prompt "
                "wherever first answers differ)."
            )
        )
    if len(asked) < len({q["category"] for q in several}):
        left = sorted({q["category"] for q in several} - set(asked))
        notes.append(Note(f"The second turns of {', '.join(left)} were not asked: their first turns only.", "warn"))
    table = Table(
        [
            Column("category", "category", text=True),
            Column("prompt", "member", text=True),
            Column("question", "id", text=True),
            Column("turns", lambda r: len(r["turns"]), str),
        ],
        list(questions),
    )
    return [Section("prompt-set", "Prompt set", notes, table)]
