"""Render a task's prompt from its template, input files and dataset rows into a prompt manifest; or take a public
prompt set's question (its first turn) from the set's prepared file."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from specbench.core.config.templates import fill_template
from specbench.core.plan.cells import split_key
from specbench.core.steps.entry import logged_to
from specbench.core.steps.files import read_json_lines, sha256_file, sha256_text, write_json_atomic


def read_dataset_rows(path: Path, rows: list[int]) -> list[dict[str, Any]]:
    """Selected rows (0-based) of a JSONL file with 'question' and 'answer' fields."""
    records = read_json_lines(path)
    selected = []
    for index in rows:
        if index >= len(records):
            raise ValueError(f"{path} has {len(records)} rows; row {index} was asked for")
        record = records[index]
        selected.append({"row": index, "question": record["question"], "answer": record["answer"]})
    return selected


def messages_sha256(messages: list[dict[str, str]]) -> str:
    """The sha256 a prompt manifest names its chat messages by (key-sorted JSON)."""
    return sha256_text(json.dumps(messages, sort_keys=True, ensure_ascii=False))


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
        "sha256": messages_sha256(messages),
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


def read_question(prepared: Path, category: str, member: str) -> dict[str, Any]:
    """One question of a prompt set's prepared file: the ``member`` chosen from ``category``."""
    for row in read_json_lines(prepared):
        if row["category"] == category and row["member"] == member:
            return row
    raise ValueError(f"{prepared} holds no question {member} of category {category}")


def first_answer(record: Path) -> str:
    """The text a cell's server answered (its record's response), which a second turn follows."""
    return str(json.loads(record.read_text(encoding="utf-8"))["response"]["content"])


def question_manifest(
    key: str, question: Mapping[str, Any], prepared: Path, answer_of: Path | None = None
) -> dict[str, Any]:
    """A prompt set question's manifest (``question``: the task's ``prompt_set`` block: its category and turn): the
    first turn as the message; for the second turn, the first turn, the baseline's first answer (``answer_of``: that
    cell's record) and the second turn, the same for every condition; and where it came from (source, revision,
    licence, the file's sha256, how it was chosen)."""
    task, prompt = split_key(key)
    row = read_question(prepared, question["category"], prompt)
    turn = int(question.get("turn", 1))
    if turn > len(row["turns"]):
        raise ValueError(f"{prompt} of {question['category']} (question {row['id']}) has no turn {turn}")
    messages = [{"role": "user", "content": row["turns"][0]}]
    follows = None
    if turn == 2:
        if answer_of is None:
            raise ValueError(f"{key}: a second turn needs the baseline's first answer")
        answer = first_answer(answer_of)
        messages += [{"role": "assistant", "content": answer}, {"role": "user", "content": row["turns"][1]}]
        follows = {"cell": str(answer_of), "sha256": sha256_text(answer)}
    origin = {k: v for k, v in row.items() if k not in ("turns", "category", "member")}
    return {
        "task": task,
        "prompt": prompt,
        "messages": messages,
        "sha256": messages_sha256(messages),
        "prepared": {"path": str(prepared), "sha256": sha256_file(prepared)},
        "question": {**origin, "category": question["category"], "turns": len(row["turns"]), "turn": turn},
        # the second turn's first answer: the baseline's, one for every condition (the peers give each arm its own)
        "first_answer": follows,
        "dataset": None,
    }


def question_step(
    key: str, question: Mapping[str, Any], prepared: Path, answer_of: Path | None, max_tokens: int, out: Path, log: Path
) -> None:
    """The prompt manifest of a prompt set's question ``key`` (``<task>.<member>``)."""
    with logged_to(log):
        manifest = {**question_manifest(key, question, prepared, answer_of), "max_tokens": max_tokens}
        write_json_atomic(out, manifest)
        origin = manifest["question"]
        print(f"question {origin['id']}, turn {origin['turn']}: prompt sha256 {manifest['sha256']}")


def manifest_step(
    key: str, task: Mapping[str, Any], inputs: Mapping[str, Path], max_tokens: int, out: Path, log: Path
) -> None:
    """Rule render_prompt's body: a prompt set question's manifest when its input is the set's file, else the task's
    (``inputs``: the rule's named inputs: template, in_<placeholder>, dataset; or prompt_set and first_answer)."""
    if "prompt_set" in inputs:
        question_step(key, task["prompt_set"], inputs["prompt_set"], inputs.get("first_answer"), max_tokens, out, log)
        return
    own = {name[3:]: path for name, path in inputs.items() if name.startswith("in_")}
    prompt_step(key, task, inputs["template"], own, inputs.get("dataset"), max_tokens, out, log)
