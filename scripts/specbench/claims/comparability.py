"""Is this run the study's setup? Decided from what the run recorded (the device the server used: NVML's on CUDA,
llama.cpp's own device list on the other backends; the llama.cpp source,
the model and draft files, the server flags), each fact set beside the study's value from the config's
``study_setup``. Absolute figures are compared only when every fact matches; what the model computes (acceptance)
when every fact but the GPU does; the study's other claims only where the model does (docs/claims.md, Scope)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from specbench.core.records.run_setup import device_label, model_origin, used_devices
from specbench.core.results.judged import GPU_FACT, MODEL_FACT, Comparability, Fact


def _gpu_fact(study: Mapping[str, Any], device: Mapping[str, Any], machine: Mapping[str, Any], label: str) -> Fact:
    """The study's one GPU: exactly one device used, of that name and at least that memory."""
    want, memory = study["name_contains"], study.get("min_memory_mb", 0)
    used = used_devices(device, machine)
    ok = len(used) == 1 and want.lower() in (used[0]["name"] or "").lower() and (used[0]["memory_mib"] or 0) >= memory
    return Fact(GPU_FACT, f"one {want}, at least {memory} MiB", label, ok)


def _llama_fact(study: Mapping[str, Any], build: Mapping[str, Any]) -> Fact:
    source = build.get("source", {})
    commit, archive = source.get("commit") or "", source.get("sha256") or ""
    ok = (bool(commit) and commit.startswith(study["commit"])) or archive in study.get("archive_sha256", [])
    this_run = (
        f"{source.get('label') or source.get('kind')} (commit {commit or 'n/a'}, archive {archive[:12] or 'n/a'})"
    )
    return Fact("llama.cpp", f"commit {study['commit']} (or its source archive)", this_run, ok)


def _model_fact(study: Mapping[str, Any], model: Mapping[str, Any]) -> Fact:
    """The study's model: its repository and architecture (the claims are about it, in any quantization)."""
    source = model.get("source") or {}
    repo = source.get("repo")
    ok = repo == study["repo"] and model.get("architecture") == study["architecture"]
    return Fact(
        MODEL_FACT,
        f"{study['repo']} ({study['architecture']})",
        f"{repo or model_origin(source)} ({model.get('architecture')})",
        ok,
    )


def _quantization_fact(study: Mapping[str, Any], model: Mapping[str, Any]) -> Fact:
    """The study's quantization of it, with or without its MTP head."""
    mtp = bool(model.get("mtp", {}).get("present"))
    ok = model.get("file_type_name") == study["file_type"] and mtp == study["mtp"]
    return Fact(
        "quantization",
        f"{study['file_type']} (MTP {'kept' if study['mtp'] else 'dropped'})",
        f"{model.get('file_type_name')} (MTP {'kept' if mtp else 'absent'})",
        ok,
    )


def _draft_fact(study: Mapping[str, Any], draft: Mapping[str, Any] | None) -> Fact:
    repo = ((draft or {}).get("source") or {}).get("repo")
    shown = repo or ((draft or {}).get("source") or {}).get("kind") or "none"
    return Fact("draft model", study["repo"], shown, repo == study["repo"])


def _args_fact(study: Sequence[str], args: Sequence[str]) -> Fact:
    return Fact("server flags", " ".join(study), " ".join(args), list(study) == list(args))


def assess(
    study: Mapping[str, Any],
    *,
    device: Mapping[str, Any],
    machine: Mapping[str, Any],
    build: Mapping[str, Any],
    model: Mapping[str, Any],
    draft: Mapping[str, Any] | None,
    server_args: Sequence[str],
) -> Comparability:
    """Each fact of the study's setup (config ``study_setup``) against what this run recorded."""
    label = device_label(device, machine)
    facts = [
        _gpu_fact(study["gpu"], device, machine, label),
        _llama_fact(study["llama_cpp"], build),
        _model_fact(study["model"], model),
        _quantization_fact(study["model"], model),
        _draft_fact(study["draft"], draft),
        _args_fact(study["server_args"], server_args),
    ]
    return Comparability(facts, label)
