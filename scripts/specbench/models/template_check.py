"""A downloaded checkpoint's chat template against the copy of it the pinned llama.cpp carries (its
``models/templates/``): both rendered with thinking off, as transformers renders a checkpoint's template, and
compared right after the download, so a template the pinned build was not made for stops the run before any
conversion."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from specbench.core.steps.entry import fail, logged_to
from specbench.core.steps.files import sha256_text, write_json_atomic
from specbench.models.preparation_error import PreparationError

KEY = "models.target.template_check"

# The conversations rendered: the shape of the study's requests (one user turn, code and prose) and a system turn
PROBES: tuple[tuple[dict[str, str], ...], ...] = (
    ({"role": "user", "content": "Add type hints to this file:\n\n```python\ndef add(a, b):\n    return a + b\n```"},),
    (
        {"role": "system", "content": "You are a careful writer."},
        {"role": "user", "content": "Write a 500-word essay on rivers."},
    ),
)


def checkpoint_template(checkpoint: Path) -> tuple[str, str]:
    """The chat template a Hugging Face checkpoint ships and where it was found: ``chat_template.jinja``, else
    ``tokenizer_config.json``'s ``chat_template`` (as the converter reads them)."""
    jinja = checkpoint / "chat_template.jinja"
    if jinja.is_file():
        return jinja.read_text(encoding="utf-8"), jinja.name
    config = checkpoint / "tokenizer_config.json"
    template = json.loads(config.read_text(encoding="utf-8")).get("chat_template") if config.is_file() else None
    if not isinstance(template, str):
        raise PreparationError(f"{checkpoint} ships no chat template (no chat_template.jinja, none in {config.name})")
    return template, f"{config.name} (chat_template)"


def render(template: str) -> list[str]:
    """Each probe conversation rendered by ``template`` with a generation prompt and thinking off."""
    from transformers.utils.chat_template_utils import render_jinja_template

    rendered, _ = render_jinja_template(
        conversations=[list(p) for p in PROBES],
        chat_template=template,
        add_generation_prompt=True,
        enable_thinking=False,
    )
    return list(rendered)


def first_difference(a: str, b: str) -> int:
    """The index of the first character where ``a`` and ``b`` differ (the shorter one's length if one extends the
    other)."""
    return next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b)))


def check_template(checkpoint: Path, llama_cpp_tree: Path, reference: str, label: str) -> dict[str, Any]:
    """The record of the comparison; raises PreparationError (one line) when the renderings differ or the reference
    is not in the tree."""
    ref_path = llama_cpp_tree / reference
    if not ref_path.is_file():
        raise PreparationError(
            f"{KEY} is {reference}, which the pinned llama.cpp tree ({llama_cpp_tree}) does not have; name a file of "
            "its models/templates/, or null for no check"
        )
    text, found_in = checkpoint_template(checkpoint)
    expected_text = ref_path.read_text(encoding="utf-8")
    ours, theirs = render(text), render(expected_text)
    for index, (a, b) in enumerate(zip(ours, theirs, strict=True)):
        if a != b:
            at = first_difference(a, b)
            raise PreparationError(
                f"{label}: its chat template ({found_in}) renders probe {index + 1} differently from llama.cpp's "
                f"{reference} with thinking off, from character {at}: {a[max(0, at - 20) : at + 30]!r} against "
                f"{b[max(0, at - 20) : at + 30]!r}; pin the revision whose template the pinned llama.cpp carries, "
                f"or set {KEY} to the file of its tree that matches this model (null: no check)"
            )
    return {
        "checkpoint_template": {"found_in": found_in, "sha256": sha256_text(text)},
        "llama_cpp_template": {"path": reference, "sha256": sha256_text(expected_text)},
        "same_text": text == expected_text,
        "rendered": [{"messages": list(p), "text": r, "same": True} for p, r in zip(PROBES, ours, strict=True)],
        "enable_thinking": False,
    }


def template_step(checkpoint: Path, llama_cpp_tree: Path, reference: str, label: str, out: Path, log: Path) -> None:
    """The comparison recorded in ``out``; a difference fails in one line naming the file and the key."""
    with logged_to(log):
        try:
            record = check_template(checkpoint, llama_cpp_tree, reference, label)
        except PreparationError as error:
            fail(str(error), log)
        write_json_atomic(out, {"model": label, **record})
        same = "the same text" if record["same_text"] else "another text that renders the same"
        print(f"{label}: chat template is {same} as llama.cpp's {reference} (thinking off)")
