"""The install step puts a build's binaries in place only when the build could drive its backend where it was built:
a GPU build whose llama-server listed no device of its backend (the recorded `--list-devices` outputs) is refused in
one line naming the backend, the build's log and what to check."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from specbench.core.config.backends import list_devices
from specbench.core.steps.files import read_json, sha256_file, write_json_atomic
from specbench.llama_cpp.cmake import install_step
from support.paths import TEST_DATA

LISTED = TEST_DATA / "list-devices"
BUILD_LOG = Path("logs/llama_cpp/build.log")


def _build(tmp_path: Path, backend: str, recorded: str | None) -> Path:
    """A build folder as llama_cpp_build leaves it: a llama-server that prints the ``recorded`` device list (None: a
    build without llama-server, nothing listed) and its manifest, the devices listed the way the build lists them."""
    build = tmp_path / "resources/llama.cpp/build"
    (build / "bin").mkdir(parents=True)
    server = build / "bin" / "llama-server"
    server.write_text(f'#!/bin/sh\n[ "$1" = --list-devices ] && cat {LISTED / (recorded or "cpu-build.txt")}\n')
    server.chmod(0o755)
    manifest = {
        "backend": backend,
        "devices": None if recorded is None else list_devices(server, env={**os.environ}),
        "binaries": {"llama-server": {"path": "bin/llama-server", "sha256": sha256_file(server)}},
    }
    write_json_atomic(build / "manifest.json", manifest)
    return build


def _install(tmp_path: Path, build: Path) -> Path:
    out = tmp_path / "resources/llama.cpp/bin"
    install_step(build, out, tmp_path / "logs/llama_cpp/install.log", BUILD_LOG)
    return out


@pytest.mark.parametrize(
    ("backend", "recorded"),
    [("vulkan", "vulkan-llvmpipe.txt"), ("cpu", "cpu-build.txt"), ("cuda", None)],
)
def test_a_build_that_lists_its_device_or_needs_none_is_installed(tmp_path: Path, backend: str, recorded) -> None:
    out = _install(tmp_path, _build(tmp_path, backend, recorded))
    assert os.access(out / "llama-server", os.X_OK) and read_json(out / "manifest.json")["backend"] == backend


@pytest.mark.parametrize(
    ("backend", "recorded", "hint"),
    [
        ("vulkan", "vulkan-hidden.txt", "GGML_VK_VISIBLE_DEVICES"),
        ("cuda", "cpu-build.txt", "check that nvidia-smi lists a GPU, that CUDA_VISIBLE_DEVICES (if set) names one"),
        ("hip", "cpu-build.txt", "HIP_VISIBLE_DEVICES"),
        ("metal", "vulkan-llvmpipe.txt", "Apple Silicon"),  # another backend's device is none of its own
    ],
)
def test_a_gpu_build_that_lists_no_device_of_its_backend_is_refused_in_one_line(
    tmp_path: Path, capfd: pytest.CaptureFixture[str], backend: str, recorded: str, hint: str
) -> None:
    build = _build(tmp_path, backend, recorded)
    with pytest.raises(SystemExit) as stopped:
        _install(tmp_path, build)
    assert stopped.value.code == 1
    [line] = capfd.readouterr().err.splitlines()
    assert line.startswith(f"specbench: llama.cpp install: the {backend} build lists no {backend} device where it was")
    assert "llama-server --list-devices: Available devices:" in line and f"build log: {BUILD_LOG}" in line
    assert hint in line and line.endswith(f"then remove {build} and run again to build it anew")
    assert not (tmp_path / "resources/llama.cpp/bin").exists()
    assert line in (tmp_path / "logs/llama_cpp/install.log").read_text().splitlines()


def test_a_cuda_build_that_sees_no_gpu_points_at_the_driver_against_the_toolkit(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit):
        _install(tmp_path, _build(tmp_path, "cuda", "vulkan-hidden.txt"))
    line = capfd.readouterr().err.strip()
    assert "the driver supports the CUDA version of the nvcc the build used" in line
