"""How prompts are rendered (core.config.chat_template): the flags and words of each setting, the built-in names read
from
llama-server's help (recorded from b11223), and the report's line saying what rendered the cells' prompts."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from specbench.core.config import chat_template
from specbench.report.sections.environment import template_summary
from support.paths import TEST_DATA

HELP = TEST_DATA / "llama-server-b11223-help-chat-template.txt"  # recorded, b11223


def test_the_built_in_names_are_read_from_the_servers_help(tmp_path: Path) -> None:
    names = chat_template.builtin_names(HELP.read_text())
    assert len(names) == 54 and names[0] == "bailing" and names[-1] == "zephyr"
    assert {"chatml", "gemma", "llama3", "granite-4.0", "seed_oss"} <= set(names) and "(env:" not in " ".join(names)
    server = tmp_path / "llama-server"
    server.write_text(f"#!/bin/sh\ncat {HELP}\n")
    server.chmod(0o755)
    assert chat_template.unknown_builtin("gemma", server) is None
    assert chat_template.unknown_builtin("gguf", tmp_path / "absent") is None  # no name: the binary is not asked
    refused = chat_template.unknown_builtin("gemma3", server)
    assert refused is not None and "\n" not in refused
    assert (
        refused.startswith("models.target.chat_template is 'gemma3', which is not a template") and "gemma," in refused
    )


def test_the_settings_flags_and_words() -> None:
    assert chat_template.server_flags("gguf") == [] and chat_template.server_flags("none") == []
    # with --jinja (the config's, and b11223's default) a name given to --chat-template is read as Jinja text
    assert chat_template.server_flags("gemma") == ["--no-jinja", "--chat-template", "gemma"]
    assert chat_template.renders_on_server("gemma") and not chat_template.renders_on_server("none")
    assert chat_template.raw_prompt([{"role": "user", "content": "Write."}]) == "Write."
    facts = {"present": True, "chars": 1234, "sha256": "ab" * 32}
    assert (
        chat_template.describe("gguf", facts)
        == "the GGUF's own (tokenizer.chat_template, 1,234 characters, sha256 abababababab)"
    )
    assert "built-in 'gemma'" in chat_template.describe("gemma")
    assert chat_template.describe("none").startswith("none: each prompt's text sent as it is")
    assert chat_template.record_entry("gguf", facts) == {"setting": "gguf", "gguf_template_sha256": "ab" * 32}
    assert chat_template.record_entry("none", facts) == {"setting": "none", "gguf_template_sha256": None}


def test_the_report_says_what_rendered_every_cells_prompt() -> None:
    facts = {"present": True, "chars": 958, "sha256": "54" * 32}
    cells = pd.DataFrame({"chat_template": ["gguf", "gguf", "gemma", None]})
    assert template_summary(cells, facts) == (
        "the GGUF's own (tokenizer.chat_template, 958 characters, sha256 545454545454): 2 cell(s); "
        "llama-server's built-in 'gemma' (--no-jinja --chat-template gemma): 1 cell(s); not recorded: 1 cell(s)"
    )
    assert template_summary(pd.DataFrame({"chat_template": [None]}), facts) == "not recorded"
    assert template_summary(pd.DataFrame({"chat_template": ["none"]}), None) == (
        "none: each prompt's text sent as it is to /completion: 1 cell(s)"
    )


def _render(text: str, thinking: bool) -> str:
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    template = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True).from_string(text)
    return template.render(
        messages=[{"role": "user", "content": "Hi"}], add_generation_prompt=True, enable_thinking=thinking
    )


def test_reasoning_off_as_the_real_qwen3_5_template_renders_it() -> None:
    from specbench.tiny.qwen3_5_template import QWEN3_5_CHAT_TEMPLATE

    off, on = _render(QWEN3_5_CHAT_TEMPLATE, False), _render(QWEN3_5_CHAT_TEMPLATE, True)
    assert off.endswith("<think>\n\n</think>\n\n") and on.endswith("<think>\n")
    assert chat_template.reasoning_off_problem(off, on) is None
    # the same template with its switch ignored: it renders reasoning on either way
    ignoring = QWEN3_5_CHAT_TEMPLATE.replace("enable_thinking is defined and enable_thinking is false", "false")
    always = _render(ignoring, False)
    assert always == on
    assert "it opens a think block" in chat_template.reasoning_off_problem(always, _render(ignoring, True))
    # a template whose switch leaves reasoning off without the empty block
    bare = QWEN3_5_CHAT_TEMPLATE.replace("{{- '<think>\\n\\n</think>\\n\\n' }}", "")
    assert _render(bare, False).endswith("<|im_start|>assistant\n")
    assert "not with an empty think block" in chat_template.reasoning_off_problem(_render(bare, False), on)


@pytest.mark.parametrize(
    "prompt",
    [
        "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n",  # SmolLM2's ChatML
        "<start_of_turn>user\nHi<end_of_turn>\n<start_of_turn>model\n",  # Gemma's
    ],
)
def test_a_template_without_a_thinking_switch_has_reasoning_off_as_its_only_way(prompt: str) -> None:
    assert chat_template.reasoning_off_problem(prompt, prompt) is None
