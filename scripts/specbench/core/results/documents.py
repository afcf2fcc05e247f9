"""JSON documents checked against the JSON Schemas beside this module (``schemas/<name>.schema.json``, draft
2020-12) when written and when read: a file that does not hold what its schema says fails in one line naming the
file, the place in it and the problem."""

from __future__ import annotations

import functools
import hashlib
import json
from pathlib import Path
from typing import Any

import jsonschema

from specbench.core.steps.files import write_atomic

SCHEMAS = Path(__file__).with_name("schemas")
_LONGEST = 300  # characters of a problem's description (it may quote the whole value)
# Texts this process has read or written and found to be what their schema says: (schema name, SHA-256 of the
# text); the same text read again is the same document, not checked twice
_READ_VALID: set[tuple[str, str]] = set()


class DocumentError(ValueError):
    """A file that is not JSON, or not what its schema says."""


@functools.cache
def schema(name: str) -> dict[str, Any]:
    """The JSON Schema of the documents called ``name`` (schemas/<name>.schema.json)."""
    return json.loads((SCHEMAS / f"{name}.schema.json").read_text(encoding="utf-8"))


def check_document(document: Any, name: str, path: Path | str) -> None:
    """Raise DocumentError (naming ``path``) where ``document`` is not what schema ``name`` says."""
    validator = jsonschema.Draft202012Validator(schema(name))
    error = jsonschema.exceptions.best_match(validator.iter_errors(document))
    if error is not None:
        where = "/".join(str(p) for p in error.absolute_path) or "the top level"
        message = error.message if len(error.message) <= _LONGEST else error.message[:_LONGEST] + "..."
        raise DocumentError(f"{path}: not a {name} document (schemas/{name}.schema.json): at {where}: {message}")


def document_text(document: Any) -> str:
    """A document as standard JSON text (no NaN or Infinity), keys in the order they were made."""
    return json.dumps(document, indent=2, ensure_ascii=False, allow_nan=False) + "\n"


def write_document(path: Path, document: Any, name: str) -> None:
    """Check ``document`` against schema ``name``, then write it to ``path`` atomically."""
    check_document(document, name, path)
    data = document_text(document).encode("utf-8")
    write_atomic(Path(path), data)
    _READ_VALID.add((name, hashlib.sha256(data).hexdigest()))  # this text, read back, is the document just checked


def read_document(path: Path, name: str) -> Any:
    """The document at ``path``, checked against schema ``name``."""
    text = Path(path).read_text(encoding="utf-8")
    try:
        document = json.loads(text)
    except json.JSONDecodeError as error:
        raise DocumentError(f"{path}: not JSON: {error}") from None
    seen = (name, hashlib.sha256(text.encode("utf-8")).hexdigest())
    if seen not in _READ_VALID:
        check_document(document, name, path)
        _READ_VALID.add(seen)
    return document
