"""Task prompts rendered from the config's templates, input files and dataset rows."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from specbench.core.steps.files import sha256_file
from specbench.tasks.render import read_dataset_rows, reference_answer, render_prompt
from support.paths import REPO

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


def _offline_step(code: str, tmp_path: Path, **env: str) -> subprocess.CompletedProcess:
    """A download step in a fresh interpreter (huggingface_hub reads HF_* when imported), an empty cache."""
    full = {k: v for k, v in os.environ.items() if not k.startswith("HF_")}
    full.update({"HF_HOME": str(tmp_path / "hf"), "PYTHONPATH": str(REPO / "scripts"), **env})
    return subprocess.run([sys.executable, "-c", code], env=full, capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("env", [{"HF_ENDPOINT": "http://127.0.0.1:9"}, {"HF_HUB_OFFLINE": "1"}])
def test_without_the_hub_the_gsm8k_download_says_what_to_do_in_one_line(tmp_path: Path, env: dict) -> None:
    """No internet (a hub that refuses connections), or HF_HUB_OFFLINE with nothing cached: no traceback."""
    log = tmp_path / "dataset.log"
    result = _offline_step(
        "from pathlib import Path; from specbench.tasks.datasets import dataset_step; "
        "dataset_step({'kind': 'hf', 'repo': 'openai/gsm8k', 'config': 'main', 'split': 'test', 'rows': [0]}, "
        f"Path('{tmp_path}/gsm8k.jsonl'), Path('{log}'))",
        tmp_path,
        **env,
    )
    assert result.returncode == 1 and "Traceback" not in result.stderr, result.stderr
    [line] = result.stderr.strip().splitlines()
    assert line.startswith("specbench: dataset openai/gsm8k@main: ")
    cause = "HF_HUB_OFFLINE is set" if "HF_HUB_OFFLINE" in env else "could not be reached (Got: ConnectError"
    assert cause in line
    assert "hf download openai/gsm8k --repo-type dataset --revision main --include 'main/test-*.parquet'" in line
    assert "HF_HUB_OFFLINE=1" in line and "kind: local-jsonl" in line
    assert line in log.read_text() and not (tmp_path / "gsm8k.jsonl").exists()


def test_without_the_hub_the_model_download_says_what_to_do(tmp_path: Path) -> None:
    result = _offline_step(
        "from pathlib import Path; from specbench.models.snapshot import download_step; "
        f"download_step('Qwen/Qwen3.5-9B', 'main', Path('{tmp_path}/hf-out'), Path('{tmp_path}/m.json'), "
        f"Path('{tmp_path}/download.log'))",
        tmp_path,
        HF_HUB_OFFLINE="1",
    )
    assert result.returncode == 1 and "Traceback" not in result.stderr, result.stderr
    assert result.stderr.startswith("specbench: model Qwen/Qwen3.5-9B@main: HF_HUB_OFFLINE is set")
    assert "models.<role>.source: checkpoint" in result.stderr
