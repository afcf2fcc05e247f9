"""A config's prompts checked before any work: each prompt's template, input files and dataset file exist and are
UTF-8 text, and fill every placeholder (a public prompt set's local copy exists); a problem names the task's or the
prompt-set member's key."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from specbench.core.config.error import ConfigError
from specbench.core.config.sources import resolve_path
from specbench.core.config.templates import template_fields
from specbench.core.plan.cells import prompt_key, prompt_spec, task_prompts


def check_task(name: str, task: dict, base: Path, config: dict) -> None:
    """The task's one prompt, or each member of its prompt set, as prompt_spec makes it (errors name the member's own
    key where it set the value)."""
    if "prompt_set" in task:
        _check_set(config, task["prompt_set"], base)
        return
    members = task.get("prompts") or {}
    if members and task.get("dataset") is None:
        with_rows = [p for p, m in members.items() if (m or {}).get("dataset")]
        if with_rows:
            raise ConfigError(f"tasks.{name}.prompts.{with_rows[0]}.dataset", "the task has no dataset to take rows of")
    for prompt in task_prompts(config, name):
        own = members.get(prompt) or {}
        _check_prompt(prompt_spec(config, prompt_key(name, prompt)), base, _prompt_key_of(name, prompt, own))


def _check_set(config: dict, question: dict, base: Path) -> None:
    """A prompt set's local copy (``tasks.file``), when it names one, exists; a second turn's first answer (the
    baseline's, at temperature 0) is a cell this run can make before the second turn's own cells."""
    spec = config.get("prompt_set") or {}
    if "file" in spec and not resolve_path(spec["file"], base).is_file():
        raise ConfigError("tasks.file", f"prompt set file '{resolve_path(spec['file'], base)}' does not exist")
    if question.get("turn") != 2:
        return
    baseline = config["baseline"]
    if 0.0 not in config["temperatures"]:
        raise ConfigError(
            "tasks.second_turn",
            "a second turn follows the baseline's temperature-0 first answer: add 0.0 to temperatures, or set "
            "second_turn: false",
        )
    condition = config["conditions"].get(baseline) or {}
    if condition.get("server") == "warm" and (condition.get("warm_scope") or config["warm_scope"]) == "condition":
        raise ConfigError(
            "tasks.second_turn",
            f"the baseline '{baseline}' runs all its cells on one server (warm_scope: condition), so its second "
            "turns cannot wait for its first answers: give it warm_scope: task, or set second_turn: false",
        )


def _prompt_key_of(task: str, prompt: str, own: dict) -> Callable[[str], str]:
    """The config key of a prompt's field: the prompt-set member's where the member sets it, else the task's."""

    def key(field: str) -> str:
        head, _, rest = field.partition(".")
        mine = head in own and (not rest or not isinstance(own[head], dict) or rest in own[head])
        return f"tasks.{task}.prompts.{prompt}.{field}" if prompt and mine else f"tasks.{task}.{field}"

    return key


def _check_prompt(spec: dict, base: Path, key: Callable[[str], str]) -> None:
    """One prompt's template, input files and dataset file exist and are UTF-8 text, and fill every placeholder
    (``key(field)``: the config key a problem is reported at)."""
    prompt = resolve_path(spec["prompt"], base)
    if not prompt.is_file():
        raise ConfigError(key("prompt"), f"prompt file '{prompt}' does not exist")
    for field, value in spec["inputs"].items():
        if not resolve_path(value, base).is_file():
            path = resolve_path(value, base)
            raise ConfigError(key(f"inputs.{field}"), f"input file '{path}' does not exist")
    dataset = spec.get("dataset")
    if dataset and dataset["kind"] == "local-jsonl" and not resolve_path(dataset["path"], base).is_file():
        path = resolve_path(dataset["path"], base)
        raise ConfigError(key("dataset.path"), f"dataset file '{path}' does not exist")
    for field, value in spec["inputs"].items():
        _read_text(resolve_path(value, base), key(f"inputs.{field}"), "input file")
    template = _read_text(prompt, key("prompt"), "prompt file")
    if not template.strip():
        raise ConfigError(key("prompt"), f"prompt file '{prompt}' is empty")
    provided = set(spec["inputs"]) | ({"problems"} if dataset else set())
    missing = template_fields(template) - provided
    if missing:
        raise ConfigError(key("inputs"), f"prompt placeholders without a value: {sorted(missing)}")


def _read_text(path: Path, key: str, what: str) -> str:
    """A prompt or input file as text; not UTF-8 (or unreadable) is a ConfigError naming the key."""
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as error:
        raise ConfigError(key, f"{what} '{path}' is not UTF-8 text (byte {error.start}: {error.reason})") from None
    except OSError as error:
        raise ConfigError(key, f"{what} '{path}' cannot be read: {error.strerror}") from None
