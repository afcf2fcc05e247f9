"""Load and validate a study configuration before any work runs.

Every error names the config key it is about (e.g. ``conditions.ngram.args``) so a typo fails at once.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import jsonschema
import yaml

from .backends import backend_options_in
from .builds import expand_builds
from .errors import ConfigError
from .files import sha256_file
from .matrix import prompt_key, prompt_spec, task_prompts
from .rules import RULES
from .sweeps import expand_sweeps
from .templates import template_fields


def find_repo_root(start: Path) -> Path:
    """The workflow's root: the nearest folder at or above ``start`` that holds the Snakefile and config/ (so a
    module finds it wherever in the package it sits)."""
    for folder in (start, *start.parents):
        if (folder / "Snakefile").is_file() and (folder / "config").is_dir():
            return folder
    raise FileNotFoundError(f"no Snakefile with a config/ folder at or above {start}")


REPO_ROOT = find_repo_root(Path(__file__).resolve().parent)
SCHEMA_PATH = REPO_ROOT / "config" / "schema.yaml"

# --spec-type names known to llama.cpp builds b11223 .. b11434 (common/speculative.cpp).
KNOWN_SPEC_TYPES = frozenset(
    {
        "none",
        "draft-simple",
        "draft-eagle3",
        "draft-mtp",
        "draft-dflash",
        "draft-dspark",
        "ngram-simple",
        "ngram-map-k",
        "ngram-map-k4v",
        "ngram-mod",
        "ngram-cache",
    }
)
# Flags the pipeline sets itself; a config that sets them would bind elsewhere or clash.
RESERVED_SERVER_FLAGS = frozenset({"--host", "--port", "-m", "--model", "--log-file", "--api-key"})


def _with_defaults(validator_class: type) -> type:
    """A jsonschema validator class that also fills in schema defaults."""
    validate_properties = validator_class.VALIDATORS["properties"]

    def set_defaults(validator: Any, properties: Mapping, instance: Any, schema: Mapping) -> Iterator:
        if isinstance(instance, dict):
            for name, subschema in properties.items():
                if isinstance(subschema, dict) and "default" in subschema and name not in instance:
                    instance[name] = _copy(subschema["default"])
        yield from validate_properties(validator, properties, instance, schema)

    return jsonschema.validators.extend(validator_class, {"properties": set_defaults})


def _copy(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _copy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_copy(v) for v in value]
    return value


def _dotted(path: Iterator[Any]) -> str:
    return ".".join(str(p) for p in path) or "<top level>"


def _describe(error: jsonschema.ValidationError) -> ConfigError:
    """Turn a jsonschema error into a ConfigError naming the key, with a suggestion for unknown keys."""
    key, path = _dotted(error.absolute_path), tuple(error.absolute_path)
    if error.validator == "additionalProperties" and isinstance(error.instance, dict):
        allowed = list(error.schema.get("properties", {}))
        unknown = [k for k in error.instance if k not in allowed]
        if unknown:
            name = unknown[0]
            hint = difflib.get_close_matches(name, allowed, n=1)
            suggestion = f" (did you mean '{hint[0]}'?)" if hint else f" (allowed: {', '.join(allowed)})"
            where = f"{key}.{name}" if error.absolute_path else name
            return ConfigError(where, f"unknown key{suggestion}", (*path, name))
    if error.validator == "required":
        missing = re.findall(r"'([^']+)' is a required property", error.message)
        if missing:
            where = f"{key}.{missing[0]}" if error.absolute_path else missing[0]
            return ConfigError(where, "is required but missing", (*path, missing[0]))
    if error.validator == "type" and isinstance(error.instance, bool) and "string" in str(error.validator_value):
        return ConfigError(
            key,
            f"{error.message}: YAML reads a bare {_YAML_BOOLEANS[error.instance]} as "
            f"{str(error.instance).lower()}; write the name in quotes, e.g. "
            f'"{_YAML_BOOLEANS[error.instance].split(", ")[0]}"',
            path,
        )
    if error.validator == "pattern" and "description" in error.schema:
        return ConfigError(key, f"{error.instance!r} is not valid: {error.schema['description']}", path)
    return ConfigError(key, error.message, path)


# The words YAML 1.1 (PyYAML, Snakemake) reads as booleans where a name was meant: `conditions: [off, mtp]`.
_YAML_BOOLEANS = {False: "off, no or false", True: "on, yes or true"}


def load_schema(path: Path = SCHEMA_PATH) -> dict:
    """Read the JSON schema (kept as YAML)."""
    with open(path, encoding="utf-8") as handle:
        return yaml.safe_load(handle)


def resolve_path(value: str, base: Path) -> Path:
    """A config path: absolute as given, relative ones against the workflow directory."""
    path = Path(value).expanduser()
    return path if path.is_absolute() else base / path


def validate_config(config: dict, base: Path = REPO_ROOT, schema: dict | None = None) -> dict:
    """Validate ``config`` in place (filling defaults, expanding sweeps) and return it; raise ConfigError on the first
    problem."""
    if "cuda" in (config.get("llama_cpp") or {}):
        old = config["llama_cpp"]["cuda"]
        raise ConfigError(
            "llama_cpp.cuda",
            f"was replaced by llama_cpp.backend (cuda, metal, hip, vulkan or cpu): "
            f"write `backend: {'cuda' if old is True else 'cpu'}` instead of `cuda: {old}`".lower(),
        )
    schema = schema if schema is not None else load_schema()
    validate_document(config, schema)
    expand_sweeps(config)
    build_schema = {**schema["properties"]["llama_cpp"], "$defs": schema["$defs"]}
    expand_builds(config, lambda block: validate_document(block, build_schema))
    _check_semantics(config, base)
    return config


def validate_document(document: Any, schema: Mapping) -> Any:
    """Validate ``document`` against a JSON schema in place, filling defaults, and return it; raise ConfigError
    naming the key (``.key`` dotted, ``.path`` as a tuple) of the most specific problem."""
    validator = _with_defaults(jsonschema.Draft202012Validator)(schema)
    errors = sorted(validator.iter_errors(document), key=lambda e: (len(e.absolute_path), list(map(str, e.path))))
    if errors:
        raise _describe(_most_specific(errors))
    return document


def _most_specific(errors: list[jsonschema.ValidationError]) -> jsonschema.ValidationError:
    """Prefer the deepest error: it names the key nearest to the mistake."""
    best = jsonschema.exceptions.best_match(errors)
    deepest = max(errors, key=lambda e: len(e.absolute_path))
    return deepest if len(deepest.absolute_path) > len(best.absolute_path) else best


def _check_semantics(config: dict, base: Path) -> None:
    """Cross-key checks that a schema cannot express."""
    conditions: dict = config["conditions"]
    if config["baseline"] not in conditions:
        hint = difflib.get_close_matches(config["baseline"], list(conditions), n=1)
        extra = f" (did you mean '{hint[0]}'?)" if hint else ""
        message = f"'{config['baseline']}' is not one of the conditions {sorted(conditions)}{extra}"
        raise ConfigError("baseline", message)
    for kind in ("tasks", "conditions"):
        for name in config["select"].get(kind, []):
            if name not in config[kind]:
                hint = difflib.get_close_matches(name, list(config[kind]), n=1)
                extra = f" (did you mean '{hint[0]}'?)" if hint else ""
                raise ConfigError(f"select.{kind}", f"'{name}' is not one of the {kind}{extra}")
    chosen = config["select"].get("conditions")
    if chosen and config["baseline"] not in chosen:
        raise ConfigError("select.conditions", f"must include the baseline '{config['baseline']}'")
    chosen_backend = backend_options_in(config["llama_cpp"]["cmake_args"])
    if chosen_backend:
        raise ConfigError(
            "llama_cpp.cmake_args",
            f"{chosen_backend[0]}: the GPU backend is set by llama_cpp.backend "
            f"('{config['llama_cpp']['backend']}' here), which sets every -DGGML_<backend> option; "
            "remove it from cmake_args",
        )
    for flag in config["server"]["args"]:
        if flag in RESERVED_SERVER_FLAGS:
            raise ConfigError("server.args", f"'{flag}' is set by the pipeline (it binds 127.0.0.1 on a free port)")
    for name, condition in conditions.items():
        _check_condition(name, condition, config)
    for name, task in config["tasks"].items():
        _check_task(name, task, base, config)
    _check_local_archive(config, base)
    _check_machines(config, base)
    _check_resources(config)
    for role in ("target", "draft"):
        source = model_source(config, role)
        if source["kind"] in ("gguf", "checkpoint") and "path" in source:
            path = resolve_path(source["path"], base)
            if not path.exists():
                raise ConfigError(f"models.{role}.{source['kind']}.path", f"'{path}' does not exist")
    draft = model_source(config, "draft")["kind"]
    selected = config["select"].get("conditions") or list(conditions)
    needs_draft = any("draft" in conditions[name]["requires"] for name in selected)
    if needs_draft and model_source(config, "target")["kind"] == "gguf" and draft in ("hf", "checkpoint", "tiny"):
        raise ConfigError(
            "models.draft.source",
            f"a '{draft}' draft is converted against its target's checkpoint "
            "(--target-model-dir), which a 'gguf' target does not have: give the draft as a gguf too",
        )
    needs_mtp = [name for name in selected if "mtp" in conditions[name]["requires"]]
    if needs_mtp and not config["models"]["target"]["require_mtp"]:
        raise ConfigError(
            f"conditions.{needs_mtp[0]}.requires",
            "needs the target's MTP layer, but "
            "models.target.require_mtp is false, so the target is not checked for one (a model without "
            "one cannot run it): set require_mtp: true for a target that has the layer, or leave "
            f"{needs_mtp} out of select.conditions",
        )


def _check_resources(config: dict) -> None:
    """What the resources name must exist: each rule (core.rules.RULES), each condition."""
    resources = config["resources"]
    named = [("resources.rules", name, RULES) for name in resources["rules"]]
    named += [(f"resources.local_rules[{i}]", name, RULES) for i, name in enumerate(resources["local_rules"])]
    named += [("resources.conditions", name, list(config["conditions"])) for name in resources["conditions"]]
    for key, name, known in named:
        if name not in known:
            hint = difflib.get_close_matches(name, list(known), n=1)
            extra = f" (did you mean '{hint[0]}'?)" if hint else ""
            what = "rule" if known is RULES else "condition"
            raise ConfigError(key, f"'{name}' is not a {what} of this workflow{extra}")


def _check_machines(config: dict, base: Path) -> None:
    """Machine and import labels name folders of results: each once; an import's records must exist."""
    seen: dict[str, str] = {}
    for key in ("machines", "imports"):
        for index, entry in enumerate(config.get(key, [])):
            label = entry["label"]
            if label in seen:
                raise ConfigError(f"{key}[{index}].label", f"'{label}' is already the label of {seen[label]}")
            seen[label] = f"{key}[{index}]"
    for index, entry in enumerate(config.get("imports", [])):
        path = resolve_path(entry["path"], base)
        if not path.exists():
            raise ConfigError(f"imports[{index}].path", f"'{path}' does not exist")


def _check_condition(name: str, condition: dict, config: dict) -> None:
    key = f"conditions.{name}.args"
    args: list[str] = condition["args"]
    for flag in args:
        if flag in RESERVED_SERVER_FLAGS:
            raise ConfigError(key, f"'{flag}' is set by the pipeline")
    for i, flag in enumerate(args):
        if flag == "--spec-type":
            if i + 1 >= len(args):
                raise ConfigError(key, "--spec-type needs a value")
            for spec in args[i + 1].split(","):
                if spec not in KNOWN_SPEC_TYPES:
                    hint = difflib.get_close_matches(spec, sorted(KNOWN_SPEC_TYPES), n=1)
                    extra = f" (did you mean '{hint[0]}'?)" if hint else ""
                    raise ConfigError(key, f"unknown --spec-type '{spec}'{extra}")
    uses_draft = any("{draft}" in a for a in args)
    if uses_draft and "draft" not in condition["requires"]:
        raise ConfigError(f"conditions.{name}.requires", "args use '{draft}': add 'draft' to requires")
    if "draft" in condition["requires"] and "draft" not in config["models"]:
        raise ConfigError(f"conditions.{name}.requires", "needs a draft model but models.draft is not set")


def _check_local_archive(config: dict, base: Path) -> None:
    """A local llama.cpp source archive must exist and match its pinned sha256 before any job runs (a download
    is checked by the fetch step)."""
    if config["llama_cpp"]["source"] != "archive":
        return
    source = llama_source(config, base)
    if source["url"].startswith(("http://", "https://")):
        return
    path = Path(source["url"])
    if not path.is_file():
        raise ConfigError("llama_cpp.archive.url", f"source archive '{path}' does not exist")
    actual = sha256_file(path)
    if actual != source["sha256"]:
        raise ConfigError(
            "llama_cpp.archive.sha256",
            f"source archive '{path}' has sha256 {actual}, not the pinned {source['sha256']}",
        )


def llama_source(config: dict, base: Path = REPO_ROOT) -> dict[str, Any]:
    """The chosen llama.cpp source route as one dict: ``{"kind": ..., **its block}``; a local archive path is
    resolved against the workflow directory."""
    kind = config["llama_cpp"]["source"]
    source = {"kind": kind, **config["llama_cpp"][kind]}
    if kind == "archive" and not source["url"].startswith(("http://", "https://")):
        source["url"] = str(resolve_path(source["url"], base))
    return source


def model_source(config: dict, role: str) -> dict[str, Any]:
    """The chosen source of a model role as one dict (kind 'none' when the role is not configured)."""
    model = config["models"].get(role)
    if not model:
        return {"kind": "none"}
    kind = model["source"]
    return {**model.get(kind, {}), "kind": kind}


def _check_task(name: str, task: dict, base: Path, config: dict) -> None:
    """The task's one prompt, or each member of its prompt set, as prompt_spec makes it (errors name the member's own
    key where it set the value)."""
    members = task.get("prompts") or {}
    if members and task.get("dataset") is None:
        with_rows = [p for p, m in members.items() if (m or {}).get("dataset")]
        if with_rows:
            raise ConfigError(f"tasks.{name}.prompts.{with_rows[0]}.dataset", "the task has no dataset to take rows of")
    for prompt in task_prompts(config, name):
        own = members.get(prompt) or {}
        _check_prompt(prompt_spec(config, prompt_key(name, prompt)), base, _prompt_key_of(name, prompt, own))


def _prompt_key_of(task: str, prompt: str, own: dict) -> Any:
    """The config key of a prompt's field: the prompt-set member's where the member sets it, else the task's."""

    def key(field: str) -> str:
        head, _, rest = field.partition(".")
        mine = head in own and (not rest or not isinstance(own[head], dict) or rest in own[head])
        return f"tasks.{task}.prompts.{prompt}.{field}" if prompt and mine else f"tasks.{task}.{field}"

    return key


def _check_prompt(spec: dict, base: Path, key: Any) -> None:
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


def load_config(paths: list[Path], base: Path = REPO_ROOT) -> dict:
    """Merge YAML files left to right (later ones override keys, recursively) and validate the result."""
    merged: dict = {}
    for path in paths:
        with open(path, encoding="utf-8") as handle:
            merge_into(merged, yaml.safe_load(handle) or {})
    return validate_config(merged, base)


def merge_into(base: dict, override: Mapping) -> dict:
    """Recursive dict update, as Snakemake merges several --configfile files."""
    for key, value in override.items():
        if isinstance(value, Mapping) and isinstance(base.get(key), dict):
            merge_into(base[key], value)
        else:
            base[key] = _copy(value)
    return base
