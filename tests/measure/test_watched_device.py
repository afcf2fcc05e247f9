"""A cell on recorded NVML data: it watches the device SLURM assigned (CUDA_VISIBLE_DEVICES, matched by index or
UUID), names it in its record, and refuses, before any server starts, a device the llama.cpp build has no code for."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from specbench.core.config.backends import parse_devices
from specbench.measure import runner as cell_module
from specbench.measure.condition_setup import Setup
from specbench.measure.requests import CellError
from specbench.measure.runner import run_cells
from support.paths import TEST_DATA
from support.runner import CELL, outcome, setup_of

DATA = TEST_DATA / "nvml"
NODE = json.loads((DATA / "device_info_h200x4.json").read_text())
MIXED = json.loads((DATA / "device_info_a100_l4.json").read_text())
CUDA_H200_BUILD = {"binaries": {"llama-server": {"sha256": "ab"}}, "backend": "cuda", "cuda_architectures": ["90-real"]}
LISTED = TEST_DATA / "list-devices"
# A CUDA build's --list-devices line, written in common/arg.cpp's format (no CUDA machine recorded one for us)
CUDA_LISTED = "Available devices:\n  CUDA0: NVIDIA H200 (143771 MiB, 143050 MiB free)\n"


def _listed(name_or_text: str) -> dict:
    text = name_or_text if "\n" in name_or_text else (LISTED / name_or_text).read_text()
    return {"devices": parse_devices(text), "output": text, "returncode": 0}


@pytest.fixture(autouse=True)
def _cuda_device_listed(monkeypatch: pytest.MonkeyPatch) -> None:
    """The build's llama-server, asked for its devices, names the GPU (tests of other backends replace it)."""
    monkeypatch.setattr(cell_module, "list_devices", lambda binary: _listed(CUDA_LISTED))


def _cuda_setup(tmp_path: Path, build: dict) -> Setup:
    return dataclasses.replace(setup_of(tmp_path), build_manifest=build)


def test_the_cell_watches_and_records_its_assigned_device(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    seen = []

    def attempt(setup, cells, n):
        seen.append(setup.watched_devices)
        return outcome(False, 12, 126.0)

    monkeypatch.setattr(cell_module, "device_info", lambda: NODE)
    monkeypatch.setattr(cell_module, "_attempt", attempt)
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "2")
    monkeypatch.setenv("SLURM_JOB_ID", "4711")
    (tmp_path / "server.log").write_text("main: server is listening\n")
    [record] = run_cells(_cuda_setup(tmp_path, CUDA_H200_BUILD), [CELL])
    uuid = NODE["devices"][2]["uuid"]
    assert seen == [(uuid,)]
    assert record["machine"]["devices"] == [
        {"index": 2, "uuid": uuid, "name": "NVIDIA H200", "compute_capability": "9.0"}
    ]
    assert record["machine"]["scheduler"] == {"SLURM_JOB_ID": "4711", "CUDA_VISIBLE_DEVICES": "2"}
    assert record["machine"]["hostname"]


@pytest.mark.parametrize(
    ("info", "visible", "build", "message"),
    [
        (MIXED, "0", CUDA_H200_BUILD, r"compute capability 8\.0"),  # an H200 build on an A100 node
        (NODE, "7", CUDA_H200_BUILD, "matches no NVML device"),
        (NODE, "0", {**CUDA_H200_BUILD, "cuda_architectures": None}, "does not record its CUDA architectures"),
    ],
)
def test_the_cell_refuses_a_device_before_any_server(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, info: dict, visible: str, build: dict, message: str
) -> None:
    monkeypatch.setattr(cell_module, "device_info", lambda: info)
    monkeypatch.setattr(cell_module, "_attempt", lambda *a: pytest.fail("a server was started"))
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", visible)
    with pytest.raises(CellError, match=message) as caught:
        run_cells(_cuda_setup(tmp_path, build), [CELL])
    assert str(caught.value).startswith(f"cell {CELL.label}: ")


def test_a_cpu_build_watches_no_gpu(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    seen = []
    monkeypatch.setattr(cell_module, "list_devices", lambda binary: _listed("cpu-build.txt"))
    monkeypatch.setattr(cell_module, "device_info", lambda: pytest.fail("NVML asked on a CPU build"))
    monkeypatch.setattr(
        cell_module,
        "_attempt",
        lambda setup, cells, n: seen.append((setup.watched_devices, setup.gpu_watch)) or outcome(False, 12, 126.0),
    )
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    (tmp_path / "server.log").write_text("main: server is listening\n")
    [record] = run_cells(setup_of(tmp_path), [CELL])
    assert seen == [(None, "cpu")] and record["machine"]["devices"] == []
    assert record["machine"]["backend"] == "cpu" and record["machine"]["llama_devices"] == []


VULKAN_BUILD = {"binaries": {"llama-server": {"sha256": "ab"}}, "backend": "vulkan", "cuda_architectures": []}


def test_a_vulkan_build_runs_unwatched_and_names_llama_cpps_device(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen = []
    monkeypatch.setattr(cell_module, "list_devices", lambda binary: _listed("vulkan-llvmpipe.txt"))
    monkeypatch.setattr(cell_module, "device_info", lambda: pytest.fail("NVML asked on a Vulkan build"))
    monkeypatch.setattr(
        cell_module, "_attempt", lambda setup, cells, n: seen.append(setup.gpu_watch) or outcome(False, 12, 126.0)
    )
    (tmp_path / "server.log").write_text("main: server is listening\n")
    [record] = run_cells(_cuda_setup(tmp_path, VULKAN_BUILD), [CELL])
    assert seen == ["unwatched"]
    assert record["machine"]["backend"] == "vulkan" and record["machine"]["gpu"]["nvml"] == "not used"
    assert record["machine"]["llama_devices"] == [
        {
            "name": "Vulkan0",
            "description": "llvmpipe (LLVM 15.0.6, 256 bits)",
            "memory_total_mib": 2048,
            "memory_free_mib": 2048,
        }
    ]


@pytest.mark.parametrize(
    ("build", "listed", "message"),
    [
        (VULKAN_BUILD, "vulkan-hidden.txt", "GGML_VK_VISIBLE_DEVICES"),  # llvmpipe, skipped by ggml-vulkan by default
        (CUDA_H200_BUILD, "cpu-build.txt", "lists no cuda device"),  # no driver: it would run on the CPU
        (VULKAN_BUILD, CUDA_LISTED, "lists no vulkan device"),
    ],
)
def test_a_gpu_build_that_lists_none_of_its_devices_is_refused_before_any_server(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, build: dict, listed: str, message: str
) -> None:
    monkeypatch.setattr(cell_module, "list_devices", lambda binary: _listed(listed))
    monkeypatch.setattr(cell_module, "device_info", lambda: NODE)
    monkeypatch.setattr(cell_module, "_attempt", lambda *a: pytest.fail("a server was started"))
    with pytest.raises(CellError, match=message) as caught:
        run_cells(_cuda_setup(tmp_path, build), [CELL])
    assert str(caught.value).startswith(f"cell {CELL.label}: the {build['backend']} build of llama-server lists no")
