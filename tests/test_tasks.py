"""Task prompts rendered from the config's templates, input files and dataset rows."""

from __future__ import annotations

from pathlib import Path

import pytest

from specbench.core.files import sha256_file
from specbench.tasks.prompts import read_dataset_rows, reference_answer, render_prompt

REPO = Path(__file__).resolve().parents[1]
TASKS = REPO / "config" / "tasks"


def test_file_rewrite_prompt_holds_the_whole_module() -> None:
    source = TASKS / "inventory.py"
    assert len(source.read_text().splitlines()) == 130
    assert "->" not in source.read_text()  # no type hints: that is the task
    manifest = render_prompt("file-rewrite", TASKS / "file_rewrite.txt", {"source": source}, None)
    text = manifest["messages"][0]["content"]
    assert source.read_text() in text and text.startswith("Add type hints")
    assert manifest["inputs"]["source"]["sha256"] == sha256_file(source)
    assert manifest["dataset"] is None
    again = render_prompt("file-rewrite", TASKS / "file_rewrite.txt", {"source": source}, None)
    assert again["sha256"] == manifest["sha256"]


def test_gsm8k_prompt_numbers_the_problems_and_keeps_references() -> None:
    rows = read_dataset_rows(REPO / "config" / "tasks" / "gsm8k_standin.jsonl", [0, 2])
    manifest = render_prompt("gsm8k", TASKS / "gsm8k.txt", {}, rows)
    text = manifest["messages"][0]["content"]
    assert "Problem 1: STAND-IN (not GSM8K): A baker" in text and "Problem 2: STAND-IN (not GSM8K): A company" in text
    assert [row["reference"] for row in manifest["dataset"]] == ["22", "140000"]
    assert [row["row"] for row in manifest["dataset"]] == [0, 2]


def test_reference_answer_is_after_the_last_marker() -> None:
    assert reference_answer("He has 5 + 3 = 8 apples.\n#### 8") == "8"
    assert reference_answer("Total 70,000 dollars.\n#### 70,000") == "70000"


def test_missing_dataset_row_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="has 3 rows; row 5 was asked for"):
        read_dataset_rows(REPO / "config" / "tasks" / "gsm8k_standin.jsonl", [5])
