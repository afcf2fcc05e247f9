"""Validation of a document against a JSON schema (kept as YAML), filling the schema's defaults; the first problem
becomes a ConfigError that names its key, with a hint for an unknown key or a YAML boolean where a name was meant."""

from __future__ import annotations

import copy
import functools
import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import jsonschema
import yaml

from specbench.core.config.error import ConfigError, did_you_mean
from specbench.core.steps.repo import REPO_ROOT

SCHEMA_PATH = REPO_ROOT / "config" / "schema.yaml"
# The words YAML 1.1 (PyYAML, Snakemake) reads as booleans where a name was meant: `conditions: [off, mtp]`.
_YAML_BOOLEANS = {False: "off, no or false", True: "on, yes or true"}


def load_schema(path: Path = SCHEMA_PATH) -> dict:
    """Read the JSON schema (kept as YAML): parsed once per version of the file, a fresh copy each call."""
    stat = Path(path).stat()
    return copy.deepcopy(_parsed(str(path), stat.st_mtime_ns, stat.st_size))


@functools.lru_cache(maxsize=8)
def _parsed(path: str, mtime_ns: int, size: int) -> dict:
    """The schema file's content (its modification time and size make a changed file a new entry)."""
    with open(path, encoding="utf-8") as handle:
        return yaml.load(handle, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))


def validate_document(document: Any, schema: Mapping) -> Any:
    """Validate ``document`` against a JSON schema in place, filling defaults, and return it; raise ConfigError
    naming the key (``.key`` dotted, ``.path`` as a tuple) of the most specific problem."""
    validator = _with_defaults(jsonschema.Draft202012Validator)(schema)
    errors = sorted(validator.iter_errors(document), key=lambda e: (len(e.absolute_path), list(map(str, e.path))))
    if errors:
        raise _describe(_most_specific(errors))
    return document


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


def _most_specific(errors: list[jsonschema.ValidationError]) -> jsonschema.ValidationError:
    """Prefer the deepest error: it names the key nearest to the mistake."""
    best = jsonschema.exceptions.best_match(errors)
    deepest = max(errors, key=lambda e: len(e.absolute_path))
    return deepest if len(deepest.absolute_path) > len(best.absolute_path) else best


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
            suggestion = did_you_mean(name, allowed) or f" (allowed: {', '.join(allowed)})"
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
