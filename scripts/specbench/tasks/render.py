"""Render a task's prompt from its template, input files and dataset rows into a prompt manifest."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from specbench.core.config.templates import fill_template
from specbench.core.plan.cells import split_key
from specbench.core.steps.entry import logged_to
from specbench.core.steps.files import sha256_file, sha256_text, write_json_atomic


def read_dataset_rows(path: Path, rows: list[int]) -> list[dict[str, Any]]:
    """Selected rows (0-based) of a JSONL file with 'question' and 'answer' fields."""
    with open(path, encoding="utf-8") as handle:
        records = [json.loads(line) for line in handle if line.strip()]
    selected = []
    for index in rows:
        if index >= len(records):
            raise ValueError(f"{path} has {len(records)} rows; row {index} was asked for")
        record = records[index]
        selected.append({"row": index, "question": record["question"], "answer": record["answer"]})
    return selected


def reference_answer(answer: str) -> str:
    """GSM8K's reference: the text after the final '####', without thousands separators."""
    return answer.rsplit("####", 1)[-1].strip().replace(",", "")


def format_problems(rows: list[dict[str, Any]]) -> str:
    """Numbered problem statements, one paragraph each."""
    return "\n\n".join(f"Problem {i}: {row['question'].strip()}" for i, row in enumerate(rows, start=1))


def render_prompt(
    task: str, template_path: Path, inputs: dict[str, Path], dataset_rows: list[dict[str, Any]] | None
) -> dict[str, Any]:
    """The prompt manifest: chat messages, their hash, and the hash of every file that went in."""
    template = template_path.read_text(encoding="utf-8")
    values = {name: path.read_text(encoding="utf-8") for name, path in inputs.items()}
    if dataset_rows is not None:
        values["problems"] = format_problems(dataset_rows)
    text = fill_template(template, values)
    messages = [{"role": "user", "content": text}]
    return {
        "task": task,
        "messages": messages,
        "sha256": sha256_text(json.dumps(messages, sort_keys=True, ensure_ascii=False)),
        "template": {"path": str(template_path), "sha256": sha256_file(template_path)},
        "inputs": {name: {"path": str(path), "sha256": sha256_file(path)} for name, path in inputs.items()},
        "dataset": (
            [{**row, "reference": reference_answer(row["answer"])} for row in dataset_rows]
            if dataset_rows is not None
            else None
        ),
    }


def prompt_step(
    key: str,
    task: Mapping[str, Any],
    template: Path,
    inputs: Mapping[str, Path],
    dataset: Path | None,
    max_tokens: int,
    out: Path,
    log: Path,
) -> None:
    """The prompt manifest of prompt ``key`` (a task's one prompt, or ``<task>.<prompt>`` of its prompt set; ``task``:
    that prompt's settings): its messages, their sha256, every file that went in, the dataset rows with their
    references (and where they came from), and the most tokens a cell asks for with it."""
    with logged_to(log):
        spec = task.get("dataset")
        rows = read_dataset_rows(dataset, spec["rows"]) if spec and dataset else None
        name, prompt = split_key(key)
        manifest = {**render_prompt(name, template, dict(inputs), rows), "prompt": prompt}
        if spec:
            manifest["dataset_source"] = dict(spec)
        manifest["max_tokens"] = max_tokens
        write_json_atomic(out, manifest)
        print("prompt sha256:", manifest["sha256"])
