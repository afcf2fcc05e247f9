"""What the planned cells need of a CUDA GPU: memory for the GGUFs they load and the context, and per build the CUDA
architectures it is compiled for."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from specbench.core.config import builds as core_builds
from specbench.core.config.sources import resolve_path
from specbench.core.plan import models as plan_models
from specbench.core.plan.rule_names import SERVER_RULES
from specbench.preflight.writes import GB, Job, Write, gb


@dataclass(frozen=True)
class GpuNeed:
    """What the planned cells need of the CUDA GPU: memory (bytes, the parts it is made of) and, per build, the CUDA
    architectures it is compiled for (None: 'native', the GPUs CMake finds while configuring) and whence."""

    memory: float
    parts: tuple[str, ...]
    architectures: tuple[tuple[str, tuple[str, ...] | None, str], ...]


_ARCHITECTURES = re.compile(r"^-DCMAKE_CUDA_ARCHITECTURES(?::STRING)?=(.+)$")
_NATIVE_OFF = re.compile(r"^-DGGML_NATIVE(?::BOOL)?=(OFF|0|FALSE|NO)$", re.IGNORECASE)
# ggml's list when not native (ggml/src/ggml-cuda/CMakeLists.txt at b11223, CUDA >= 11.8): PTX for 7.5 and 8.0
# runs on every later GPU.
GGML_DEFAULT_ARCHITECTURES = ("75-virtual", "80-virtual", "86-real", "89-real", "90-virtual")


def cuda_architectures(
    cmake_args: Sequence[str], manifest: Mapping[str, Any] | None
) -> tuple[tuple[str, ...] | None, str]:
    """The architectures a CUDA build covers and whence: its manifest when built (what CMake chose), else the
    cmake_args' CMAKE_CUDA_ARCHITECTURES, else ggml's default list when GGML_NATIVE is off, else None ('native')."""
    if manifest and manifest.get("cuda_architectures"):
        return tuple(manifest["cuda_architectures"]), "the build's manifest"
    for arg in cmake_args:
        match = _ARCHITECTURES.match(arg)
        if match:
            value = match.group(1).strip().strip('"')
            if value.lower() == "native":
                return None, "CMAKE_CUDA_ARCHITECTURES=native"
            return tuple(a for a in value.split(";") if a), "CMAKE_CUDA_ARCHITECTURES in cmake_args"
    if any(_NATIVE_OFF.match(arg) for arg in cmake_args):
        return GGML_DEFAULT_ARCHITECTURES, "ggml's default list (GGML_NATIVE=OFF)"
    return None, "native (built for the GPU CMake finds)"


def _read_manifest(path: Path) -> Mapping[str, Any] | None:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def gpu_need(
    config: Mapping[str, Any],
    base: Path,
    workdir: Path,
    jobs: Sequence[Job],
    writes: Sequence[Write],
    size_of: Callable[[Path], float | None],
    read_manifest: Callable[[Path], Mapping[str, Any] | None] = _read_manifest,
) -> GpuNeed | None:
    """What the planned cells need of a CUDA GPU (None without cells or on another backend): the target's GGUF, the
    draft's when a planned condition loads it, and ``preflight.gpu_overhead_gb`` (KV cache at the server's -c,
    recurrent state, compute buffers); the architectures each build covers."""
    cells = [w for rule, w in jobs if rule in SERVER_RULES]
    builds = core_builds.llama_builds(dict(config))
    if not cells or all(b.llama_cpp["backend"] != "cuda" for b in builds):
        return None
    made = {w.loaded_as: w.size for w in writes if w.loaded_as}
    parts, total = [], 0.0
    roles = ["target"]
    if any("draft" in config["conditions"][w["condition"]]["requires"] for w in cells if "condition" in w):
        roles.append("draft")
    for role in roles:
        if role not in config["models"]:
            continue
        size = size_of(resolve_path(plan_models.model_gguf(dict(config), role, base), workdir))
        size = made.get(role) if size is None else size
        parts.append(f"{role} {gb(size)}")
        total += size or 0.0
    overhead = float((config.get("preflight") or {}).get("gpu_overhead_gb", 2.0)) * GB
    parts.append(f"context and buffers {gb(overhead)}")
    architectures = []
    for build in builds:
        if build.llama_cpp["backend"] != "cuda":
            continue
        manifest = read_manifest(workdir / build.root / "bin" / "manifest.json")
        archs, basis = cuda_architectures(build.llama_cpp["cmake_args"], manifest)
        architectures.append((build.label, archs, basis))
    return GpuNeed(total + overhead, tuple(parts), tuple(architectures))
