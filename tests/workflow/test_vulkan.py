"""A tiny slice on llama.cpp's Vulkan backend, for real: the workflow's own Vulkan build, cells on Mesa's software
driver (llvmpipe) recorded as "GPU not watched", and a cell refused when the build sees no Vulkan device.

Opt-in, not part of CI: it needs glslc, the Vulkan loader and a driver (Debian 12: glslc libvulkan1
mesa-vulkan-drivers spirv-headers), Vulkan headers newer than Debian 12's (docs/backends.md), and a llama.cpp build of
its own (about 17 minutes on 2 cores, kept in the test cache). Run it with

    SPECBENCH_VULKAN_HEADERS=<folder with usr/include/vulkan> .venv/bin/python -m pytest tests/workflow/test_vulkan.py
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from specbench.core.plan.cells import Cell
from specbench.core.steps.files import read_json
from support.paths import REPO
from support.workflow import placed, snakemake, write_yaml

pytestmark = pytest.mark.vulkan

HEADERS = os.environ.get("SPECBENCH_VULKAN_HEADERS")
CONDITIONS = ["off", "mtp"]
LLVMPIPE = {"GGML_VK_VISIBLE_DEVICES": "0", "XDG_RUNTIME_DIR": "/tmp"}


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> dict:
    if not HEADERS or not (Path(HEADERS) / "usr/include/vulkan/vulkan.hpp").is_file():
        pytest.skip("opt-in: set SPECBENCH_VULKAN_HEADERS to unpacked Vulkan headers (docs/backends.md)")
    if not shutil.which("glslc") or not Path("/usr/lib/x86_64-linux-gnu/libvulkan.so.1").exists():
        pytest.skip("glslc and the Vulkan loader are not installed")
    work = tmp_path_factory.mktemp("vulkan")
    (work / "resources").mkdir()
    (work / "resources/vulkan-headers").symlink_to(Path(HEADERS).resolve())
    override = write_yaml(
        work / "slice.yaml", {"select": {"tasks": ["essay"], "conditions": CONDITIONS}, "repeats": 1, "max_tokens": 32}
    )
    configs = [REPO / "config/tiny.yaml", REPO / "config/tiny-vulkan.yaml", override]
    result = snakemake(work, ["all"], configs, env=LLVMPIPE)
    assert result.returncode == 0, result.stderr[-6000:]
    return {"work": work, "configs": configs, "result": result}


def test_the_build_is_the_vulkan_backend(run: dict) -> None:
    manifest = read_json(run["work"] / "resources/llama.cpp/bin/manifest.json")
    assert manifest["backend"] == "vulkan"
    assert "-DGGML_VULKAN=ON" in manifest["cmake_args"] and "-DGGML_CUDA=OFF" in manifest["cmake_args"]
    assert "Available devices:" in manifest["devices"]["output"]


def test_cells_ran_on_llvmpipe_and_say_the_gpu_was_not_watched(run: dict) -> None:
    for condition in CONDITIONS:
        record = read_json(run["work"] / placed(run["work"], Cell("essay", condition, 0.0, 1)).path)
        assert record["machine"]["backend"] == "vulkan"
        assert [d["name"] for d in record["machine"]["llama_devices"]] == ["Vulkan0"]
        assert "llvmpipe" in record["machine"]["llama_devices"][0]["description"]
        assert record["contention"]["gpu_watch"] == "unwatched"
        assert record["contention"]["reason"].startswith("accepted: GPU not watched on this backend (vulkan")
        assert record["response"]["timings"]["predicted_per_second"] > 0
    report = (run["work"] / "results/report.md").read_text()
    assert "**GPU not watched** in 2 of 2 cell(s) (backend vulkan" in report
    assert "Measured on **llvmpipe (" in report


def test_without_a_visible_vulkan_device_the_cell_is_refused(run: dict) -> None:
    cell = placed(run["work"], Cell("essay", "off", 0.0, 1)).path
    env = {"GGML_VK_VISIBLE_DEVICES": "", "XDG_RUNTIME_DIR": "/tmp"}
    result = snakemake(run["work"], [cell], run["configs"], "--forcerun", "cell", env=env)
    assert result.returncode != 0
    line = next(ln for ln in result.stderr.splitlines() if ln.startswith("specbench: cell "))
    assert "the vulkan build of llama-server lists no vulkan device" in line and "GGML_VK_VISIBLE_DEVICES" in line
    assert not (run["work"] / cell).exists()
