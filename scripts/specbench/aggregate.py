"""What the aggregate records beside the per-cell table: per cell what produced it, and the software it ran on."""

from __future__ import annotations

import platform
from importlib import metadata
from typing import Any


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
        "llama_cpp": {"kind": source.get("kind"), "label": source.get("label"), "commit": source.get("commit"),
                      "archive_sha256": source.get("sha256"), "cmake_args": prov["llama_cpp"].get("cmake_args")},
        "server_binary_sha256": prov["server_binary"]["sha256"],
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


def cells_index(records: list[tuple[str, dict[str, Any]]]) -> dict[str, Any]:
    """Per cell, what produced it (for provenance), plus the device, machine and software of this aggregate."""
    last = records[-1][1] if records else {}
    machine = last.get("machine", {})
    return {
        "cells": {path: cell_chain(record, path) for path, record in records},
        "device": machine.get("gpu", {}),
        "machine": {k: v for k, v in machine.items() if k != "gpu"},
        "software": software_versions(),
    }
