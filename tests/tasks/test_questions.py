"""A prompt set question's manifest: the first turn as the message, or the second after the baseline's first answer,
read from the set's prepared file (as tasks.prompt_sets writes it) and the baseline cell's record."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from specbench.tasks.prompt_sets import prepare
from specbench.tasks.render import question_manifest
from support.paths import REPO

FIXTURE = REPO / "config/tasks/prompt_sets/spec-bench-fixture.jsonl"


@pytest.fixture
def prepared(tmp_path: Path) -> Path:
    """The fixture's writing questions, two of them, prepared by the real step."""
    from specbench.tasks.prompt_sets import files_sha256

    out = tmp_path / "spec-bench.jsonl"
    spec = {
        "from": "spec-bench",
        "revision": "f" * 40,
        "sha256": files_sha256([FIXTURE]),
        "file": str(FIXTURE),
        "categories": ["writing"],
        "per_category": 2,
    }
    prepare(spec, out, tmp_path / "work")
    return out


def _chosen(member: int) -> dict:
    rows = [json.loads(line) for line in FIXTURE.read_text().splitlines() if line]
    pool = [r for r in rows if r["category"] == "writing"]
    return pool[(member - 1) * len(pool) // 2]


def test_the_first_turn_is_the_one_message(prepared: Path) -> None:
    manifest = question_manifest("writing.p2", {"category": "writing", "turn": 1}, prepared)
    assert manifest["messages"] == [{"role": "user", "content": _chosen(2)["turns"][0]}]
    assert manifest["question"]["id"] == str(_chosen(2)["question_id"]) and manifest["question"]["turn"] == 1
    assert manifest["first_answer"] is None and manifest["question"]["licence"] == "Apache-2.0"


def test_the_second_turn_follows_the_baselines_answer(prepared: Path, tmp_path: Path) -> None:
    record = tmp_path / "r1.json"
    record.write_text(json.dumps({"response": {"content": "Dear neighbours, ..."}}))
    manifest = question_manifest("writing-t2.p1", {"category": "writing", "turn": 2}, prepared, record)
    turns = _chosen(1)["turns"]
    assert manifest["task"] == "writing-t2" and manifest["prompt"] == "p1"
    assert [m["content"] for m in manifest["messages"]] == [turns[0], "Dear neighbours, ...", turns[1]]
    assert [m["role"] for m in manifest["messages"]] == ["user", "assistant", "user"]
    assert manifest["first_answer"]["cell"] == str(record)
    other = tmp_path / "other.json"
    other.write_text(json.dumps({"response": {"content": "Hello"}}))
    assert (
        question_manifest("writing-t2.p1", {"category": "writing", "turn": 2}, prepared, other)["sha256"]
        != (manifest["sha256"])
    )


def test_a_second_turn_without_an_answer_or_a_turn_is_refused(prepared: Path, tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="first answer"):
        question_manifest("writing-t2.p1", {"category": "writing", "turn": 2}, prepared)
    single = tmp_path / "single.jsonl"
    row = json.loads(prepared.read_text().splitlines()[0])
    single.write_text(json.dumps({**row, "turns": row["turns"][:1]}) + "\n")
    with pytest.raises(ValueError, match="has no turn 2"):
        question_manifest("writing-t2.p1", {"category": "writing", "turn": 2}, single, tmp_path / "r1.json")
