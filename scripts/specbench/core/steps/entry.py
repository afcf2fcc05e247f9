"""Helpers for the thin Snakemake entry scripts: send output to the rule's log, report one-line failures."""

from __future__ import annotations

import contextlib
import dataclasses
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, TypeVar

_Inputs = TypeVar("_Inputs")


@contextlib.contextmanager
def logged_to(path: str | Path) -> Iterator[None]:
    """Send this process's stdout and stderr (Python-level) to the rule's log file for the block."""
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a", encoding="utf-8", buffering=1) as log:
        old_out, old_err = sys.stdout, sys.stderr
        sys.stdout = sys.stderr = log
        try:
            yield
        finally:
            sys.stdout, sys.stderr = old_out, old_err


def fail(message: str, log_path: str | Path | None = None) -> None:
    """Print one clear line to the terminal (and the log) and exit non-zero."""
    line = f"specbench: {message}"
    if log_path is not None:
        with open(log_path, "a", encoding="utf-8") as log:
            log.write(line + "\n")
    print(line, file=sys.__stderr__, flush=True)
    raise SystemExit(1)


def inputs_of(cls: type[_Inputs], named: Mapping[str, Any]) -> _Inputs:
    """A dataclass of paths from a rule's named inputs (Snakemake's, or any mapping), field by field: a field without
    a default is a required path, one whose default is None an optional path, one whose default is () a list of
    paths; inputs that are no field (the code the rule declares so that an edit reruns it) are ignored."""
    values: dict[str, Any] = {}
    for field in dataclasses.fields(cls):  # type: ignore[arg-type]
        if field.default is dataclasses.MISSING:
            values[field.name] = Path(named[field.name])
        elif field.default == ():
            values[field.name] = [Path(p) for p in named.get(field.name, ())]
        else:
            value = named.get(field.name)
            values[field.name] = None if value is None else Path(value)
    return cls(**values)
