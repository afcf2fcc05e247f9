"""What the aggregate records beside the per-cell table: per cell what produced it, and the software it ran on."""

from __future__ import annotations

import platform
from importlib import metadata
from typing import Any

from .provenance import cell_chain

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
