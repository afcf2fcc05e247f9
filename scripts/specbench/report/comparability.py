"""Is this run the study's setup? Decided from what the run recorded (the device the server used: NVML's on CUDA,
llama.cpp's own device list on the other backends; the llama.cpp source,
the model and draft files, the server flags), each fact set beside the study's value from the config's
``study_setup``. Absolute figures are compared only when every fact matches; what the model computes (acceptance)
when every fact but the GPU does; the study's other claims only where the model does (docs/claims.md, Scope)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from specbench.core.config.backends import devices_of

MODEL_FACT = "model"
GPU_FACT = "GPU"


@dataclass(frozen=True)
class Fact:
    """One fact of the setup: the study's value, this run's, and whether they match."""

    name: str
    study: str
    this_run: str
    matches: bool


@dataclass(frozen=True)
class Comparability:
    """The facts, whether all match, and a short label of the device this run measured on."""

    facts: Sequence[Fact]
    device: str

    @property
    def comparable(self) -> bool:
        return bool(self.facts) and all(f.matches for f in self.facts)

    @property
    def same_model(self) -> bool:
        """The target is the study's model (the claims are about it); hardware, build or flags may still differ."""
        return any(f.name == MODEL_FACT and f.matches for f in self.facts)

    @property
    def same_settings(self) -> bool:
        """Nothing but the GPU differs: the model computes what it computed in the study (acceptance)."""
        return bool(self.facts) and all(f.matches for f in self.facts if f.name != GPU_FACT)

    @property
    def differing(self) -> list[str]:
        return [f.name for f in self.facts if not f.matches]


def used_devices(device: Mapping[str, Any], machine: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The devices the cells' server ran on, each a name, memory (MiB) and who named it: on CUDA the NVML devices
    assigned to the cell (``machine['devices']``; all NVML saw when the record names none), on the other backends
    the devices of llama.cpp's ``--list-devices``, on a CPU build none. ``device``: NVML's view (``device_info()``)."""
    backend = machine.get("backend")
    nvml = [d for d in device.get("devices", []) if d.get("name")]
    if backend in (None, "cuda") and nvml:
        assigned = {d.get("uuid") for d in machine.get("devices") or []}
        chosen = [d for d in nvml if d.get("uuid") in assigned] if assigned else nvml
        return [{"name": d["name"], "memory_mib": d.get("memory_total_mb"), "id": None} for d in chosen]
    if backend in (None, "cpu"):
        return []
    return [
        {"name": d.get("description") or d.get("name"), "memory_mib": d.get("memory_total_mib"), "id": d.get("name")}
        for d in devices_of(str(backend), machine.get("llama_devices") or [])
    ]


def device_label(device: Mapping[str, Any], machine: Mapping[str, Any]) -> str:
    """'NVIDIA A100 80GB PCIe (81920 MiB)' for the GPU the server used (NVML's name), 'llvmpipe (LLVM 15.0.6, 256
    bits) (Vulkan0, 2048 MiB)' for one that llama.cpp named, '... x2: the server used 2 GPUs' when it split the model,
    else 'CPU (x86_64, 2 cores)'."""
    used = used_devices(device, machine)
    if not used:
        return f"CPU ({machine.get('machine') or 'unknown'}, {machine.get('cpu_count') or '?'} cores)"
    first = used[0]
    memory = f"{first['memory_mib']:.0f} MiB" if first.get("memory_mib") else ""
    detail = ", ".join(part for part in (first.get("id"), memory) if part)
    several = f" x{len(used)}: the server used {len(used)} GPUs" if len(used) > 1 else ""
    return f"{first['name']}{f' ({detail})' if detail else ''}{several}"


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


def model_origin(source: Mapping[str, Any]) -> str:
    """Where a model file came from, in a few words: its hub repo, its PyPI wheel and member, its path, or its kind."""
    wheel = source.get("pypi-wheel")
    if wheel:
        return f"{wheel['member']} from the PyPI wheel {wheel['package']} {wheel['version']}"
    return str(source.get("repo") or source.get("path") or source.get("kind") or "unknown")


def real_model_note(model: Mapping[str, Any], study: Mapping[str, Any]) -> str | None:
    """The report's warning when the target is a trained model other than the study's (None for the study's own
    architecture: the study's model, or a tiny constructed one, which has its own note)."""
    if model.get("architecture") == study["model"]["architecture"]:
        return None
    meta = model.get("metadata") or {}
    name = meta.get("general.name") or meta.get("general.basename") or "the model"
    size = meta.get("general.size_label")
    return (
        f"The target is a real trained model, not the study's {study['model']['repo']}: {name}"
        + (f", {size} parameters" if size else "")
        + f" ({model.get('architecture')}, "
        f"{model.get('file_type_name')}, {model_origin(model.get('source') or {})}). Its acceptance, output "
        "identity and answers are this model's own; its multipliers are not the study's."
    )


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
