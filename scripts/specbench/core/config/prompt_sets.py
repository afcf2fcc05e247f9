"""``tasks: {from: <public prompt set>, ...}``: the set's categories become the tasks, each with the members p1..pK
(the questions chosen from it when its file is fetched), expanded when the config is validated (``expand_prompt_set``).
A category whose questions have a second turn gives a second task, '<category>-t2': its prompts are the same
questions' second turns, after the baseline's temperature-0 first answer, so that every condition is asked the same
second prompt.

Config files are merged key by key, so the tasks of the files beneath (config/config.yaml's four) sit beside ``from``
in the merged block; a prompt set replaces them."""

from __future__ import annotations

from typing import Any

from specbench.core.config.error import ConfigError, did_you_mean
from specbench.core.config.schema import validate_document
from specbench.core.config.set_sources import SOURCES

SET_KEYS = ("from", "revision", "sha256", "categories", "per_category", "file", "max_tokens", "second_turn")
SECOND_TURN = "-t2"  # a category's second turns are the task '<category>-t2'

PREPARED = "resources/prompt_sets/{source}.jsonl"  # a set's chosen questions, one per line (rule prompt_set)


def set_spec(config: dict) -> dict[str, Any] | None:
    """The prompt set ``tasks`` is taken from (its keys only), or None for named tasks."""
    tasks = config.get("tasks")
    if not isinstance(tasks, dict) or "from" not in tasks:
        return None
    return {k: tasks[k] for k in SET_KEYS if k in tasks}


def prepared_file(spec: dict[str, Any]) -> str:
    """Where rule prompt_set writes the set's chosen questions."""
    return PREPARED.format(source=spec["from"])


def task_name(category: str, turn: int) -> str:
    """The task of a category's first turns (the category's own name) or of its second turns."""
    return category if turn == 1 else f"{category}{SECOND_TURN}"


def members(per_category: int) -> list[str]:
    """The prompt names of a category's questions, in the order they were chosen."""
    return [f"p{i}" for i in range(1, per_category + 1)]


def expand_prompt_set(config: dict, schema: dict) -> dict[str, Any] | None:
    """Replace ``tasks`` (in place) by one task per category of the set it names, and return the set's block (also
    kept as ``config['prompt_set']``); None, and nothing changed, when the tasks are named."""
    spec = set_spec(config)
    if spec is None:
        return config.get("prompt_set")
    try:
        validate_document(spec, {**schema["$defs"]["prompt_set"], "$defs": schema["$defs"]})
    except ConfigError as error:
        key = "tasks" if error.key == "<top level>" else f"tasks.{error.key}"
        raise ConfigError(key, error.problem, ("tasks", *error.path)) from None
    source = SOURCES[spec["from"]]
    categories = spec.get("categories") or list(source.categories)
    for category in categories:
        if category not in source.categories:
            raise ConfigError(
                "tasks.categories",
                f"{source.name} has no category '{category}'{did_you_mean(category, source.categories)} "
                f"(its categories: {', '.join(source.categories)})",
            )
    spec["categories"] = list(categories)
    per_category = spec["per_category"]
    own_max = {"max_tokens": spec["max_tokens"]} if "max_tokens" in spec else {}
    asked = [
        (category, turn)
        for category in categories
        for turn in (1, 2)
        if turn == 1 or (spec.get("second_turn", True) and category in source.second_turns)
    ]
    config["tasks"] = {
        task_name(category, turn): {
            "prompt_set": {"from": source.name, "category": category, "turn": turn},
            "description": f"{source.name} category {category}{' (second turns)' if turn == 2 else ''} "
            f"({per_category} questions)",
            **own_max,
            "prompts": dict.fromkeys(members(per_category)),
        }
        for category, turn in asked
    }
    config["prompt_set"] = spec
    return spec
