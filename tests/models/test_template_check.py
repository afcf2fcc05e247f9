"""The downloaded target's chat template against the pinned llama.cpp's copy: the same text, or another that renders
the same with thinking off, passes and is recorded; one that renders otherwise, or a reference the tree lacks, stops
in one line naming the key."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from specbench.core.steps.files import read_json, sha256_text
from specbench.models.preparation_error import PreparationError
from specbench.models.template_check import KEY, check_template, first_difference, template_step
from specbench.tiny.qwen3_5_template import QWEN3_5_CHAT_TEMPLATE

REFERENCE = "models/templates/Qwen3.5-4B.jinja"


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """A llama.cpp tree holding its copy of the Qwen3.5 template."""
    root = tmp_path / "llama.cpp"
    (root / REFERENCE).parent.mkdir(parents=True)
    (root / REFERENCE).write_text(QWEN3_5_CHAT_TEMPLATE, encoding="utf-8")
    return root


def _checkpoint(folder: Path, template: str, *, in_tokenizer_config: bool = False) -> Path:
    folder.mkdir()
    if in_tokenizer_config:
        (folder / "tokenizer_config.json").write_text(json.dumps({"chat_template": template}))
    else:
        (folder / "chat_template.jinja").write_text(template, encoding="utf-8")
    return folder


@pytest.mark.parametrize("in_tokenizer_config", [False, True], ids=["chat_template.jinja", "tokenizer_config"])
def test_the_same_template_passes_and_renders_thinking_off(tree: Path, tmp_path: Path, in_tokenizer_config) -> None:
    checkpoint = _checkpoint(tmp_path / "c", QWEN3_5_CHAT_TEMPLATE, in_tokenizer_config=in_tokenizer_config)
    record = check_template(checkpoint, tree, REFERENCE, "Qwen/Qwen3.5-9B@abc")
    assert record["same_text"] is True
    assert record["checkpoint_template"]["sha256"] == record["llama_cpp_template"]["sha256"]
    assert record["llama_cpp_template"]["sha256"] == sha256_text(QWEN3_5_CHAT_TEMPLATE)
    for probe in record["rendered"]:
        assert probe["text"].endswith("<|im_start|>assistant\n<think>\n\n</think>\n\n"), probe["text"][-60:]
        assert probe["messages"][-1]["content"] in probe["text"]
    assert "<|im_start|>system\nYou are a careful writer.<|im_end|>" in record["rendered"][1]["text"]


def test_another_text_that_renders_the_same_passes(tree: Path, tmp_path: Path) -> None:
    checkpoint = _checkpoint(tmp_path / "c", "{#- a comment of another revision -#}\n" + QWEN3_5_CHAT_TEMPLATE)
    record = check_template(checkpoint, tree, REFERENCE, "m@r")
    assert record["same_text"] is False and all(p["same"] for p in record["rendered"])


def test_a_template_that_renders_otherwise_stops_in_one_line(tree: Path, tmp_path: Path, capfd) -> None:
    """The template with its thinking switch ignored (a think block opens either way)."""
    ignoring = QWEN3_5_CHAT_TEMPLATE.replace("enable_thinking is defined and enable_thinking is false", "false")
    assert ignoring != QWEN3_5_CHAT_TEMPLATE
    checkpoint = _checkpoint(tmp_path / "c", ignoring)
    out, log = tmp_path / "template.json", tmp_path / "template.log"
    with pytest.raises(SystemExit):
        template_step(checkpoint, tree, REFERENCE, "Qwen/Qwen3.5-9B@abc", out, log)
    [line] = [ln for ln in capfd.readouterr().err.splitlines() if ln.strip()]
    assert line.startswith(
        "specbench: Qwen/Qwen3.5-9B@abc: its chat template (chat_template.jinja) renders probe 1 differently from "
        f"llama.cpp's {REFERENCE} with thinking off, from character "
    ), line
    assert "<think>\\n\\n</think>" in line and f"set {KEY} to the file" in line and line in log.read_text()
    assert not out.exists()


def test_a_reference_the_tree_lacks_names_the_key(tree: Path, tmp_path: Path) -> None:
    checkpoint = _checkpoint(tmp_path / "c", QWEN3_5_CHAT_TEMPLATE)
    with pytest.raises(PreparationError, match=f"^{KEY} is models/templates/Nope.jinja, which the pinned llama.cpp"):
        check_template(checkpoint, tree, "models/templates/Nope.jinja", "m@r")


def test_a_checkpoint_without_a_template_is_refused(tree: Path, tmp_path: Path) -> None:
    (tmp_path / "c").mkdir()
    with pytest.raises(PreparationError, match="ships no chat template"):
        check_template(tmp_path / "c", tree, REFERENCE, "m@r")


def test_the_record_of_a_passing_check(tree: Path, tmp_path: Path) -> None:
    out = tmp_path / "template.json"
    template_step(_checkpoint(tmp_path / "c", QWEN3_5_CHAT_TEMPLATE), tree, REFERENCE, "m@r", out, tmp_path / "t.log")
    record = read_json(out)
    assert record["model"] == "m@r" and record["llama_cpp_template"]["path"] == REFERENCE
    assert record["enable_thinking"] is False and len(record["rendered"]) == 2


@pytest.mark.parametrize(
    ("a", "b", "at"), [("abc", "abc", 3), ("abc", "abd", 2), ("ab", "abc", 2), ("", "x", 0), ("xa", "ya", 0)]
)
def test_first_difference(a: str, b: str, at: int) -> None:
    assert first_difference(a, b) == at
