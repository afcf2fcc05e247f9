"""What a run's planned jobs need from the machine, in one: the files they write (writes.py), the hub downloads, the
programs the build runs (tools.py), the GPU (gpu.py) and the folders written to. Pure: every fact about the machine
(the hub's answers, what is in its cache, files already there) is passed in."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from specbench.core.plan.rule_names import SERVER_RULES
from specbench.preflight.gpu import GpuNeed, gpu_need
from specbench.preflight.tools import Tool, build_tools
from specbench.preflight.writes import (
    RESULTS_BYTES,
    Download,
    Job,
    StorageFacts,
    Write,
    build_writes,
    download_writes,
    hub_downloads,
    model_writes,
    vllm_writes,
)


@dataclass(frozen=True)
class Needs:
    """What the planned jobs need: the files they write, the hub downloads, the programs the build runs, the GPU
    (None without CUDA cells), the folders they write to (by name)."""

    writes: list[Write] = field(default_factory=list)
    downloads: list[Download] = field(default_factory=list)
    tools: list[Tool] = field(default_factory=list)
    gpu: GpuNeed | None = None
    folders: list[tuple[str, Path]] = field(default_factory=list)


def needs(config: Mapping[str, Any], base: Path, workdir: Path, jobs: Sequence[Job], storage: StorageFacts) -> Needs:
    """Everything the planned ``jobs`` (rule name, wildcards) need from the machine, given what it and the hub say
    about sizes (``storage``)."""
    rules = {rule for rule, _ in jobs}
    downloads = hub_downloads(config, base, jobs)
    writes = [
        *download_writes(config, downloads, storage),
        *build_writes(config, workdir, jobs),
        *vllm_writes(config, base, workdir, jobs),
        *model_writes(config, base, workdir, rules, storage),
    ]
    if rules & set(SERVER_RULES):
        writes.append(
            Write("cell records, server logs, tables, report", workdir / "results", RESULTS_BYTES, "estimate")
        )
    folders = [("results/", workdir / "results"), ("resources/", workdir / "resources")]
    if downloads:
        folders.append(("Hugging Face cache", storage.hf_cache))
    return Needs(
        writes=writes,
        downloads=downloads,
        tools=build_tools(config, jobs),
        gpu=gpu_need(config, base, workdir, jobs, writes, storage.size_of),
        folders=folders,
    )
