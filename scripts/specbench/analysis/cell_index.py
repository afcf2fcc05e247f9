"""What the aggregate records beside the per-cell table: per cell what produced it, and the software it ran on."""

from __future__ import annotations

import platform
from collections.abc import Sequence
from importlib import metadata
from pathlib import Path
from typing import Any

from specbench.analysis.record_reader import as_current
from specbench.core.plan.cells import DEFAULT_MACHINE
from specbench.core.steps.files import read_json


def cell_chain(record: dict[str, Any], path: str) -> dict[str, Any]:
    """What produced one cell file: logs, command, source, binaries, models, prompt, device, time."""
    prov = record["provenance"]
    source = prov["llama_cpp"].get("source") or {}
    gpu = record.get("machine", {}).get("gpu", {})
    return {
        "cell_file": path,
        "label": record["cell"]["label"],
        "server_log": record["server"]["log"],
        "gpu_samples": record.get("gpu_samples"),
        "server_argv": record["server"]["argv"],
        "server_pid": record["server"]["pid"],
        "attempt": record["attempt"],
        "llama_cpp": {
            "kind": source.get("kind"),
            "label": source.get("label"),
            "commit": source.get("commit"),
            "archive_sha256": source.get("sha256"),
            "cmake_args": prov["llama_cpp"].get("cmake_args"),
        },
        "engine": prov["engine"],
        "endpoint": (record["server"].get("endpoint") or {}).get("url"),  # an endpoint's URL (not started here)
        "server_binary_sha256": (prov["server_binary"] or {}).get("sha256"),
        "model": prov["model"],
        "draft": prov["draft"],
        "prompt_sha256": prov["prompt_sha256"],
        "device": [d.get("name") for d in gpu.get("devices", [])] or f"no NVML ({gpu.get('error') or 'n/a'})",
        "started_at": record["started_at"],
        "ended_at": record["ended_at"],
    }


SOFTWARE = ("snakemake", "pandas", "gguf", "httpx", "huggingface-hub", "nvidia-ml-py", "numpy", "matplotlib")


def software_versions() -> dict[str, str]:
    """Versions of Python and the packages the pipeline runs on."""
    versions = {"python": platform.python_version()}
    for name in SOFTWARE:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = "not installed"
    return versions


def _where(record: dict[str, Any]) -> dict[str, Any]:
    """The device (NVML's view) and host a record was measured on."""
    machine = record.get("machine", {})
    return {"device": machine.get("gpu", {}), "machine": {k: v for k, v in machine.items() if k != "gpu"}}


def cells_index(records: list[tuple[str, dict[str, Any]]], order: Sequence[str] = ()) -> dict[str, Any]:
    """Per cell, what produced it (for provenance); per machine label, the device and host its last cell ran on
    (and where imported cells came from); the first machine's device and host at the top; this software."""
    machines: dict[str, dict[str, Any]] = {}
    for _, record in records:
        label = record["cell"].get("machine", DEFAULT_MACHINE)
        machines[label] = {**_where(record), "imported_from": record["cell"].get("imported_from")}
    ordered = {label: machines[label] for label in [*order, *machines] if label in machines}
    first = next(iter(ordered.values()), {"device": {}, "machine": {}})
    return {
        "cells": {path: cell_chain(record, path) for path, record in records},
        "device": first["device"],
        "machine": first["machine"],
        "machines": ordered,
        "software": software_versions(),
    }


def imported_records(indexes: Sequence[str | Path]) -> list[tuple[str, dict[str, Any]]]:
    """The records of each import index (rule import_cells), as (path, record), each relabelled in memory as its
    import's machine, with where it came from; the files themselves stay as they were imported."""
    records = []
    for index_path in indexes:
        index = read_json(Path(index_path))
        for entry in index["records"]:
            record = as_current(read_json(Path(entry["file"])))
            origin = {"source": index["source"], "file": entry["source_file"], "measured_as": index["measured_as"]}
            record["cell"] = {**record["cell"], "machine": index["label"], "imported_from": origin}
            records.append((entry["file"], record))
    return records
