"""Whose measurement a cell file holds: its record names the model (and draft) that served it by sha256. A cell file
that holds another model's measurement is never measured over: the condition's setup checks its cells before
Snakemake can remake them, and a cell job checks its own before it measures."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path, PurePath
from typing import Any

from specbench.core.steps.files import read_json

ROLES = ("model", "draft")  # the record's provenance keys of the target and the draft


class OtherModelsCell(RuntimeError):
    """A cell file holds another model's measurement; the message names the file and both models."""


def served(record: Mapping[str, Any]) -> dict[str, Mapping[str, Any] | None]:
    """The target ('model') and draft that served a record, as its provenance names them (path and sha256)."""
    provenance = record.get("provenance") or {}
    return {role: provenance.get(role) for role in ROLES}


def setup_models(setup: Mapping[str, Any]) -> dict[str, Mapping[str, Any] | None]:
    """The target and draft a condition's setup serves, as a record would name them."""
    return {
        "model": {"path": setup["model_path"], "sha256": setup["model_manifest"]["sha256"]},
        "draft": (
            {"path": setup["draft_path"], "sha256": setup["draft_manifest"]["sha256"]}
            if setup.get("draft_manifest")
            else None
        ),
    }


def describe(models: Mapping[str, Mapping[str, Any] | None]) -> str:
    """'model.gguf (sha256 0123456789ab)', with ' and draft d.gguf (sha256 ...)' when there is one."""

    def one(entry: Mapping[str, Any]) -> str:
        return f"{PurePath(str(entry.get('path'))).name} (sha256 {str(entry.get('sha256'))[:12]})"

    text = one(models["model"]) if models.get("model") else "an unnamed model"
    return f"{text} and draft {one(models['draft'])}" if models.get("draft") else text


def same_models(record: Mapping[str, Any], ours: Mapping[str, Mapping[str, Any] | None]) -> bool:
    """Whether a record was served by the same target and draft (by sha256) as ``ours``."""
    theirs = served(record)

    def sha(entry: Mapping[str, Any] | None) -> str | None:
        return entry.get("sha256") if entry else None

    return all(sha(theirs[role]) == sha(ours.get(role)) for role in ROLES)


def check_cells(paths: Iterable[Path], ours: Mapping[str, Mapping[str, Any] | None]) -> None:
    """Raise OtherModelsCell when any existing cell file among ``paths`` holds another model's measurement (naming
    the first such file, both models and how many more there are); a file that is not a readable record counts as
    another's too (it is not ours to replace)."""
    foreign: list[tuple[Path, str]] = []
    for path in sorted(paths):
        if not path.is_file():
            continue
        try:
            record = read_json(path)
        except (ValueError, OSError):
            foreign.append((path, "something that is not a cell record"))
            continue
        if not isinstance(record, dict) or not same_models(record, ours):
            named = describe(served(record)) if isinstance(record, dict) else "something that is not a cell record"
            foreign.append((path, f"a measurement of {named}"))
    if foreign:
        path, what = foreign[0]
        more = f" (and {len(foreign) - 1} more cell files)" if len(foreign) > 1 else ""
        raise OtherModelsCell(
            f"{path} holds {what}, not of this run's {describe(ours)}{more}: it is not measured over; move it "
            "aside to measure this cell with this model"
        )
