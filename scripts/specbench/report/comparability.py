"""Is this run the study's setup? Decided from what the run recorded (the device NVML saw, the llama.cpp source,
the model and draft files, the server flags), each fact set beside the study's value from the config's
``study_setup``. Absolute figures are compared only when every fact matches; orderings and verdicts on any setup."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any


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


def device_label(device: Mapping[str, Any], machine: Mapping[str, Any]) -> str:
    """'NVIDIA A100 80GB PCIe (81920 MiB)' for the first GPU NVML saw, else 'CPU (x86_64, 2 cores)'."""
    gpus = [d for d in device.get("devices", []) if d.get("name")]
    if gpus:
        gpu = gpus[0]
        memory = f" ({gpu['memory_total_mb']:.0f} MiB)" if gpu.get("memory_total_mb") else ""
        return f"{gpu['name']}{memory}" + (f" x{len(gpus)}" if len(gpus) > 1 else "")
    return f"CPU ({machine.get('machine') or 'unknown'}, {machine.get('cpu_count') or '?'} cores)"


def _gpu_fact(study: Mapping[str, Any], device: Mapping[str, Any], label: str) -> Fact:
    want, memory = study["name_contains"], study.get("min_memory_mb", 0)
    gpus = device.get("devices", [])
    ok = any(want.lower() in (g.get("name") or "").lower() and (g.get("memory_total_mb") or 0) >= memory
             for g in gpus)
    return Fact("GPU", f"{want}, at least {memory} MiB", label, ok)


def _llama_fact(study: Mapping[str, Any], build: Mapping[str, Any]) -> Fact:
    source = build.get("source", {})
    commit, archive = source.get("commit") or "", source.get("sha256") or ""
    ok = (bool(commit) and commit.startswith(study["commit"])) or archive in study.get("archive_sha256", [])
    this_run = (f"{source.get('label') or source.get('kind')} (commit {commit or 'n/a'}, "
                f"archive {archive[:12] or 'n/a'})")
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
    return (f"The target is a real trained model, not the study's {study['model']['repo']}: {name}"
            + (f", {size} parameters" if size else "") + f" ({model.get('architecture')}, "
            f"{model.get('file_type_name')}, {model_origin(model.get('source') or {})}). Its acceptance, output "
            "identity and answers are this model's own; its multipliers are not the study's.")


def _model_fact(study: Mapping[str, Any], model: Mapping[str, Any]) -> Fact:
    source = model.get("source") or {}
    repo, mtp = source.get("repo"), bool(model.get("mtp", {}).get("present"))
    ok = (repo == study["repo"] and model.get("file_type_name") == study["file_type"]
          and model.get("architecture") == study["architecture"] and mtp == study["mtp"])
    return Fact("model", f"{study['repo']} as {study['file_type']} ({study['architecture']}, MTP "
                f"{'kept' if study['mtp'] else 'dropped'})",
                f"{repo or model_origin(source)} as {model.get('file_type_name')} ({model.get('architecture')}, MTP "
                f"{'kept' if mtp else 'absent'})", ok)


def _draft_fact(study: Mapping[str, Any], draft: Mapping[str, Any] | None) -> Fact:
    repo = ((draft or {}).get("source") or {}).get("repo")
    shown = repo or ((draft or {}).get("source") or {}).get("kind") or "none"
    return Fact("draft model", study["repo"], shown, repo == study["repo"])


def _args_fact(study: Sequence[str], args: Sequence[str]) -> Fact:
    return Fact("server flags", " ".join(study), " ".join(args), list(study) == list(args))


def assess(study: Mapping[str, Any], *, device: Mapping[str, Any], machine: Mapping[str, Any],
           build: Mapping[str, Any], model: Mapping[str, Any], draft: Mapping[str, Any] | None,
           server_args: Sequence[str]) -> Comparability:
    """Each fact of the study's setup (config ``study_setup``) against what this run recorded."""
    label = device_label(device, machine)
    facts = [
        _gpu_fact(study["gpu"], device, label),
        _llama_fact(study["llama_cpp"], build),
        _model_fact(study["model"], model),
        _draft_fact(study["draft"], draft),
        _args_fact(study["server_args"], server_args),
    ]
    return Comparability(facts, label)
