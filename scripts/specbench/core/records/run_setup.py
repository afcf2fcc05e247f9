"""What a run recorded of its setup, in words: the devices its server used (NVML's on CUDA, llama.cpp's own device
list on the other backends) and a short label of them, and where a model file came from; shared by the claims'
comparability and the report."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from specbench.core.config.backends import devices_of


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


def model_origin(source: Mapping[str, Any]) -> str:
    """Where a model file came from, in a few words: its hub repo, its PyPI wheel and member, its path, or its kind."""
    wheel = source.get("pypi-wheel")
    if wheel:
        return f"{wheel['member']} from the PyPI wheel {wheel['package']} {wheel['version']}"
    return str(source.get("repo") or source.get("path") or source.get("kind") or "unknown")
