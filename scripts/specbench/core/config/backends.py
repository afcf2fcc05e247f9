"""llama.cpp's GPU backends as configuration (``llama_cpp.backend``): the CMake options each one sets, the names its
devices carry in ``llama-server --list-devices``, how a cell's GPU is watched on it, and reading that device list."""

from __future__ import annotations

import re
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

BACKENDS = ("cuda", "metal", "hip", "vulkan", "cpu")
# The ggml CMake option of each GPU backend (ggml/CMakeLists.txt); a build sets every one, ON for its own only, so
# Metal's default (ON on Apple) never decides silently what a build is.
CMAKE_OPTIONS = {"cuda": "GGML_CUDA", "metal": "GGML_METAL", "hip": "GGML_HIP", "vulkan": "GGML_VULKAN"}
# How llama.cpp names a backend's devices (GGML_CUDA_NAME "CUDA" / "ROCm", GGML_METAL_NAME "MTL", GGML_VK_NAME).
DEVICE_PREFIXES = {"cuda": "CUDA", "metal": "MTL", "hip": "ROCm", "vulkan": "Vulkan"}
# What to check when a GPU build lists none of its devices on the machine that runs a cell.
NO_DEVICE_HINTS = {
    "cuda": "is the NVIDIA driver loaded, and does CUDA_VISIBLE_DEVICES name a GPU?",
    "metal": "Metal needs Apple Silicon (or a Metal-capable GPU) under macOS",
    "hip": "is ROCm installed and does HIP_VISIBLE_DEVICES name a GPU?",
    "vulkan": "is a Vulkan driver installed (vulkaninfo --summary)? ggml skips CPU-type Vulkan devices such as "
    "Mesa's llvmpipe unless GGML_VK_VISIBLE_DEVICES names them (e.g. GGML_VK_VISIBLE_DEVICES=0)",
}
# How a cell's GPU is watched: per-process accounting through NVML on CUDA; none exists on the other GPU backends
# (the cell is recorded as not watched there, CPU contention still judged); a CPU build uses no GPU.
WATCH_NVML, WATCH_NONE, WATCH_CPU = "nvml", "unwatched", "cpu"
_OPTION = re.compile(r"^-D(GGML_(?:CUDA|METAL|HIP|VULKAN))(?::BOOL)?=", re.IGNORECASE)
_LISTED = re.compile(
    r"^\s+(?P<name>[A-Za-z_]+\d*): (?P<description>.*?)"
    r"(?: \((?P<total>\d+) MiB, (?P<free>\d+) MiB free\))?\s*$"
)


def cmake_options(backend: str) -> list[str]:
    """The ``-DGGML_<BACKEND>=ON|OFF`` options of a build for ``backend`` (every GPU backend named, its own ON)."""
    if backend not in BACKENDS:
        raise ValueError(f"unknown backend {backend!r} (one of {', '.join(BACKENDS)})")
    return [f"-D{option}={'ON' if name == backend else 'OFF'}" for name, option in CMAKE_OPTIONS.items()]


def backend_options_in(cmake_args: Sequence[str]) -> list[str]:
    """The arguments of ``cmake_args`` that set a backend option themselves (the config's ``backend`` does that)."""
    return [arg for arg in cmake_args if _OPTION.match(arg)]


def backend_of(build_manifest: Mapping[str, Any]) -> str:
    """The backend a build manifest records; manifests from before ``backend`` record only ``cuda``."""
    return str(build_manifest.get("backend") or ("cuda" if build_manifest.get("cuda") else "cpu"))


def watch_of(backend: str, nvml_available: bool) -> str:
    """How a cell on ``backend`` is watched: 'nvml' (CUDA with a driver), 'cpu' (no GPU used) or 'unwatched'."""
    if backend == "cpu":
        return WATCH_CPU
    return WATCH_NVML if backend == "cuda" and nvml_available else WATCH_NONE


def parse_devices(text: str) -> list[dict[str, Any]]:
    """The devices of ``llama-server --list-devices`` output: name, description, total and free MiB.

    '  Vulkan0: llvmpipe (LLVM 15.0.6, 256 bits) (2048 MiB, 2048 MiB free)' -> {'name': 'Vulkan0', 'description':
    'llvmpipe (LLVM 15.0.6, 256 bits)', 'memory_total_mib': 2048, 'memory_free_mib': 2048}; '(none)' -> [].
    """
    found, listing = [], False
    for line in text.splitlines():
        if line.strip() == "Available devices:":
            listing = True
            continue
        match = _LISTED.match(line) if listing else None
        if match:
            total, free = match.group("total"), match.group("free")
            found.append(
                {
                    "name": match.group("name"),
                    "description": match.group("description"),
                    "memory_total_mib": None if total is None else int(total),
                    "memory_free_mib": None if free is None else int(free),
                }
            )
    return found


def devices_of(backend: str, devices: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The listed devices that belong to ``backend`` (a Metal build may list a BLAS device beside its own)."""
    prefix = DEVICE_PREFIXES.get(backend)
    return [d for d in devices if prefix and str(d.get("name", "")).startswith(prefix)]


def list_devices(binary: Path, env: Mapping[str, str] | None = None, timeout_s: float = 120.0) -> dict[str, Any]:
    """What ``llama-server --list-devices`` reports here: its devices (``parse_devices``), its output, exit code."""
    try:
        result = subprocess.run(
            [str(binary), "--list-devices"],
            capture_output=True,
            text=True,
            timeout=timeout_s,
            env=None if env is None else dict(env),
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        return {"devices": [], "output": f"{type(error).__name__}: {error}", "returncode": None}
    return {
        "devices": parse_devices(result.stdout),
        "output": (result.stdout + result.stderr).strip()[-4000:],
        "returncode": result.returncode,
    }


def check_drivable(backend: str, listed: Mapping[str, Any]) -> None:
    """Raise ValueError when a GPU build lists none of its backend's devices here (llama-server would then run the
    model on the CPU and the cell would measure that as '``backend``')."""
    if backend == "cpu" or devices_of(backend, listed.get("devices", [])):
        return
    shown = "; ".join(line.strip() for line in str(listed.get("output", "")).splitlines()[-4:]) or "no output"
    raise ValueError(
        f"the {backend} build of llama-server lists no {backend} device on this machine "
        f"(llama-server --list-devices: {shown}): {NO_DEVICE_HINTS[backend]}"
    )
