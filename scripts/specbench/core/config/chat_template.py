"""How a cell's prompt is rendered (config ``models.target.chat_template``): the GGUF's own chat template, a
template llama-server has built in, or none (the prompt's text as it is); the server flags and the words for each."""

from __future__ import annotations

import re
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

KEY = "models.target.chat_template"
GGUF = "gguf"  # the GGUF's own tokenizer.chat_template, through llama-server's Jinja engine (--jinja)
NONE = "none"  # no template: the prompt's text goes to /completion as it is
GGUF_KEY = "tokenizer.chat_template"
EXAMPLES = "chatml, gemma, llama3"  # built-in names of llama-server b11223 (its --help lists them all)


def setting(config: Mapping[str, Any]) -> str:
    """The target's setting: 'gguf', 'none' or the name of a template llama-server has built in."""
    return str(config["models"]["target"]["chat_template"])


def server_flags(value: str) -> list[str]:
    """The llama-server flags a setting adds. A built-in template needs --no-jinja after the config's --jinja: with
    Jinja on (b11223's default) --chat-template takes its value as Jinja text, so 'gemma' would render as 'gemma'."""
    return [] if value in (GGUF, NONE) else ["--no-jinja", "--chat-template", value]


def builtin_names(help_text: str) -> list[str]:
    """The built-in template names ``llama-server --help`` lists under --chat-template (the first list in it)."""
    lines = help_text.splitlines()
    start = next((i for i, line in enumerate(lines) if "list of built-in templates:" in line), None)
    names: list[str] = []
    for line in lines[start + 1 :] if start is not None else []:
        if not line.startswith(" ") or "(env:" in line:
            break
        names += [name.strip() for name in line.split(",") if name.strip()]
    return names


def unknown_builtin(value: str, binary: Path) -> str | None:
    """Why a named setting cannot run on ``binary`` (one line naming the key), or None when it can (or is no name).
    llama-server itself exits at start on an unknown name ("the supplied chat template is not supported")."""
    if value in (GGUF, NONE):
        return None
    done = subprocess.run([str(binary), "--help"], capture_output=True, text=True, timeout=60, check=False)
    names = builtin_names(done.stdout + done.stderr)
    if value in names:
        return None
    return (
        f"{KEY} is '{value}', which is not a template {binary} has built in ({', '.join(names) or 'it lists none'}); "
        f"use one of them, gguf (the GGUF's own) or none"
    )


def renders_on_server(value: str) -> bool:
    """Whether the prompt is rendered by llama-server's /apply-template (every setting but 'none')."""
    return value != NONE


def raw_prompt(messages: Sequence[Mapping[str, str]]) -> str:
    """The prompt without a template: the messages' texts, joined by a blank line (a task's prompt is one message)."""
    return "\n\n".join(message["content"] for message in messages)


EMPTY_THINK = re.compile(r"<think>\s*</think>\s*\Z")  # how Qwen3 / Qwen3.5 templates render reasoning off
OPEN_THINK = re.compile(r"<think>\s*\Z")  # a generation prompt that starts the model reasoning


def reasoning_off_problem(off: str, on: str) -> str | None:
    """Why a prompt rendered with ``enable_thinking`` false does not end as reasoning off (None when it does), given
    the same messages rendered with it true. A template with a thinking switch (the two differ) must end the prompt
    with an empty think block, as Qwen3.5's does; one without (they are equal: ChatML, Gemma, any built-in under
    --no-jinja) has reasoning off as its only way, so its prompt must only not open a think block."""
    tail = off[-40:]
    if off != on and not EMPTY_THINK.search(off):
        return f"the prompt rendered with enable_thinking false ends {tail!r}, not with an empty think block"
    if OPEN_THINK.search(off):
        return f"the prompt rendered with enable_thinking false ends {tail!r}: it opens a think block"
    return None


def missing_template(path: str) -> str:
    """Why a GGUF without a chat template is refused, and the key that accepts it, in one line."""
    return (
        f"{path} has no {GGUF_KEY}, so llama-server would render every prompt as ChatML without saying so; say how "
        f"to render them with {KEY}: a template llama-server has built in (e.g. {EXAMPLES}), or none (each "
        "prompt's text sent as it is, for a base model)"
    )


def describe(value: str | None, gguf_template: Mapping[str, Any] | None = None) -> str:
    """A setting in words, for the report (``gguf_template``: the model manifest's chat_template facts)."""
    if value is None:
        return "not recorded"
    if value == GGUF:
        facts = gguf_template or {}
        known = f", {facts['chars']:,} characters, sha256 {facts['sha256'][:12]}" if facts.get("sha256") else ""
        return f"the GGUF's own ({GGUF_KEY}{known})"
    if value == NONE:
        return "none: each prompt's text sent as it is to /completion"
    return f"llama-server's built-in '{value}' (--no-jinja --chat-template {value})"


def record_entry(value: str, gguf_template: Mapping[str, Any] | None) -> dict[str, Any]:
    """What a cell record says about the template that rendered its prompt: the setting, and for the GGUF's own
    template its sha256 (from the model manifest)."""
    sha256 = (gguf_template or {}).get("sha256") if value == GGUF else None
    return {"setting": value, "gguf_template_sha256": sha256}
