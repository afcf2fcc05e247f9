"""A cell on recorded NVML data: it watches the device SLURM assigned (CUDA_VISIBLE_DEVICES, matched by index or
UUID), names it in its record, and refuses, before any server starts, a device the llama.cpp build has no code for."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
from test_attempts import CELL, _outcome, _setup

from specbench.measure import runner as cell_module
from specbench.measure.runner import CellError, run_cells
from specbench.measure.setup import Setup

DATA = Path(__file__).resolve().parent / "data" / "nvml"
NODE = json.loads((DATA / "device_info_h200x4.json").read_text())
MIXED = json.loads((DATA / "device_info_a100_l4.json").read_text())
CUDA_H200_BUILD = {"binaries": {"llama-server": {"sha256": "ab"}}, "cuda": True, "cuda_architectures": ["90-real"]}


def _cuda_setup(tmp_path: Path, build: dict) -> Setup:
    return dataclasses.replace(_setup(tmp_path), build_manifest=build)


def test_the_cell_watches_and_records_its_assigned_device(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    seen = []

    def attempt(setup, cells, n):
        seen.append(setup.watched_devices)
        return _outcome(False, 12, 126.0)

    monkeypatch.setattr(cell_module, "device_info", lambda: NODE)
    monkeypatch.setattr(cell_module, "_attempt", attempt)
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "2")
    monkeypatch.setenv("SLURM_JOB_ID", "4711")
    (tmp_path / "server.log").write_text("main: server is listening\n")
    [record] = run_cells(_cuda_setup(tmp_path, CUDA_H200_BUILD), [CELL])
    uuid = NODE["devices"][2]["uuid"]
    assert seen == [(uuid,)]
    assert record["machine"]["devices"] == [{"index": 2, "uuid": uuid, "name": "NVIDIA H200",
                                             "compute_capability": "9.0"}]
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
def test_the_cell_refuses_a_device_before_any_server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, info: dict,
                                                     visible: str, build: dict, message: str) -> None:
    monkeypatch.setattr(cell_module, "device_info", lambda: info)
    monkeypatch.setattr(cell_module, "_attempt", lambda *a: pytest.fail("a server was started"))
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", visible)
    with pytest.raises(CellError, match=message) as caught:
        run_cells(_cuda_setup(tmp_path, build), [CELL])
    assert str(caught.value).startswith(f"cell {CELL.label}: ")


def test_a_cpu_build_watches_every_device(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    seen = []
    monkeypatch.setattr(cell_module, "device_info", lambda: NODE)
    monkeypatch.setattr(cell_module, "_attempt", lambda setup, cells, n: seen.append(setup.watched_devices)
                        or _outcome(False, 12, 126.0))
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    (tmp_path / "server.log").write_text("main: server is listening\n")
    [record] = run_cells(_setup(tmp_path), [CELL])
    assert seen == [None] and record["machine"]["devices"] == []
