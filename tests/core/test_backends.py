"""llama.cpp's backends as configuration: each one's CMake options, the build that passes them and records what
``llama-server --list-devices`` listed, and reading that list (recorded output of real builds)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from specbench.core.config.backends import (
    BACKENDS,
    backend_of,
    backend_options_in,
    check_drivable,
    cmake_options,
    devices_of,
    list_devices,
    parse_devices,
    watch_of,
)
from specbench.llama_cpp import cmake
from support.paths import TEST_DATA

LISTED = TEST_DATA / "list-devices"


@pytest.mark.parametrize(
    ("backend", "on"),
    [("cuda", "GGML_CUDA"), ("metal", "GGML_METAL"), ("hip", "GGML_HIP"), ("vulkan", "GGML_VULKAN"), ("cpu", None)],
)
def test_each_backend_sets_its_own_option_on_and_every_other_off(backend: str, on: str | None) -> None:
    options = cmake_options(backend)
    assert len(options) == 4 and len({o.split("=")[0] for o in options}) == 4
    assert [o for o in options if o.endswith("=ON")] == ([f"-D{on}=ON"] if on else [])
    assert "-DGGML_METAL=OFF" in options or backend == "metal"  # never left to Apple's default (ON)
    with pytest.raises(ValueError, match="unknown backend 'rocm'"):
        cmake_options("rocm")


def test_backend_options_set_by_hand_are_found() -> None:
    args = ["-DCMAKE_BUILD_TYPE=Release", "-DGGML_CUDA=ON", "-Dggml_vulkan:BOOL=OFF", "-DGGML_CUDA_F16=ON"]
    assert backend_options_in(args) == ["-DGGML_CUDA=ON", "-Dggml_vulkan:BOOL=OFF"]


def test_the_build_passes_the_backends_options_and_records_backend_and_devices(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """cmake and the build's llama-server replaced by scripts: what the build step asks CMake for, and records."""
    seen: list[list[str]] = []
    server = tmp_path / "work" / "bin" / "llama-server"

    def fake_cmake(argv: list[str], **kwargs: object) -> str:
        seen.append(argv)
        if "--build" in argv:  # the 'build': a llama-server that prints a recorded device list
            server.parent.mkdir(parents=True, exist_ok=True)
            server.write_text(f"#!/bin/sh\ncat {LISTED / 'vulkan-llvmpipe.txt'}\n")
            server.chmod(0o755)
        return ""

    source = tmp_path / "src"
    source.mkdir()
    (source / ".specbench-source.json").write_text(json.dumps({"kind": "pypi-sdist"}))
    monkeypatch.setattr(cmake, "run_command", fake_cmake)
    manifest = cmake.build(
        source, tmp_path / "work", tmp_path / "out", ["-DCMAKE_BUILD_TYPE=Release"], "vulkan", ["llama-server"], 2
    )
    configure = seen[0]
    assert configure[-5:] == [
        "-DCMAKE_BUILD_TYPE=Release",
        "-DGGML_CUDA=OFF",
        "-DGGML_METAL=OFF",
        "-DGGML_HIP=OFF",
        "-DGGML_VULKAN=ON",
    ]
    assert manifest["backend"] == "vulkan" and manifest["cmake_args"] == configure[-5:]
    assert manifest["cuda_architectures"] == []
    assert [d["name"] for d in manifest["devices"]["devices"]] == ["Vulkan0"]
    assert json.loads((tmp_path / "out" / "manifest.json").read_text())["devices"] == manifest["devices"]


def test_device_lists_of_real_builds_are_read() -> None:
    assert parse_devices((LISTED / "cpu-build.txt").read_text()) == []
    assert parse_devices((LISTED / "vulkan-hidden.txt").read_text()) == []
    [llvmpipe] = parse_devices((LISTED / "vulkan-llvmpipe.txt").read_text())
    assert llvmpipe == {
        "name": "Vulkan0",
        "description": "llvmpipe (LLVM 15.0.6, 256 bits)",
        "memory_total_mib": 2048,
        "memory_free_mib": 2048,
    }
    text = (
        "ggml_metal_init: ...\nAvailable devices:\n  MTL0: Apple M4 Pro (49152 MiB, 49151 MiB free)\n"
        "  BLAS: Accelerate (0 MiB, 0 MiB free)\n"
    )
    assert [d["name"] for d in devices_of("metal", parse_devices(text))] == ["MTL0"]


def test_list_devices_runs_the_binary_and_survives_one_that_cannot_run(tmp_path: Path) -> None:
    script = tmp_path / "llama-server"
    script.write_text(f'#!/bin/sh\n[ "$1" = --list-devices ] && cat {LISTED / "vulkan-llvmpipe.txt"}\n')
    script.chmod(0o755)
    listed = list_devices(script, env={**os.environ})
    assert listed["returncode"] == 0 and [d["name"] for d in listed["devices"]] == ["Vulkan0"]
    missing = list_devices(tmp_path / "absent")
    assert missing["devices"] == [] and missing["returncode"] is None and "FileNotFoundError" in missing["output"]


def test_a_gpu_build_must_list_a_device_of_its_own_backend() -> None:
    check_drivable("cpu", {"devices": []})
    check_drivable("vulkan", {"devices": parse_devices((LISTED / "vulkan-llvmpipe.txt").read_text())})
    for backend in ("cuda", "metal", "hip", "vulkan"):
        with pytest.raises(ValueError, match=f"the {backend} build of llama-server lists no {backend} device"):
            check_drivable(backend, {"devices": [], "output": (LISTED / "vulkan-hidden.txt").read_text()})


def test_how_each_backend_is_watched() -> None:
    assert [watch_of(b, True) for b in BACKENDS] == ["nvml", "unwatched", "unwatched", "unwatched", "cpu"]
    assert watch_of("cuda", False) == "unwatched"  # a CUDA build where NVML is missing: not watched either
    assert backend_of({"cuda": True}) == "cuda" and backend_of({"cuda": False}) == "cpu"  # manifests before backend
    assert backend_of({"backend": "metal", "cuda": False}) == "metal"


def test_relative_path_entries_are_made_absolute_against_the_working_directory(tmp_path: Path) -> None:
    args = [
        "-DVulkan_INCLUDE_DIR:PATH=resources/vulkan-headers/usr/include",
        "-DX:FILEPATH=/usr/lib/libx.so",
        "-DGGML_NATIVE=OFF",
        "-DY=relative/untyped",
    ]
    assert cmake.absolute_paths(args, tmp_path) == [
        f"-DVulkan_INCLUDE_DIR:PATH={tmp_path.resolve()}/resources/vulkan-headers/usr/include",
        "-DX:FILEPATH=/usr/lib/libx.so",
        "-DGGML_NATIVE=OFF",
        "-DY=relative/untyped",
    ]
