"""Prompt templates: ``{name}`` placeholders, filled from a task's input files (and checked by the config)."""

from __future__ import annotations

import re

# A placeholder is a name in braces, '{source}'; '{{source}}' writes '{source}' literally. Any other brace (a JSON
# example in the prompt, a Python dict) is ordinary text.
_PLACEHOLDER = re.compile(r"\{\{([A-Za-z_][A-Za-z0-9_]*)\}\}|\{([A-Za-z_][A-Za-z0-9_]*)\}")


def template_fields(template: str) -> set[str]:
    """The ``{name}`` placeholders of a prompt template."""
    return {m.group(2) for m in _PLACEHOLDER.finditer(template) if m.group(2)}


def fill_template(template: str, values: dict[str, str]) -> str:
    """The template with each ``{name}`` replaced by its value (KeyError for a name without one)."""
    return _PLACEHOLDER.sub(lambda m: "{" + m.group(1) + "}" if m.group(1) else values[m.group(2)], template)
