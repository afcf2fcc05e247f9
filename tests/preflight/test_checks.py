"""Each preflight check on constructed facts: free disk, a program's path, NVML's devices, the hub's answers."""

from __future__ import annotations

from pathlib import Path

import pytest

from specbench.preflight.checks import check_disk, check_gpu, check_hub, check_tools, check_writable
from specbench.preflight.facts import HubAnswer
from specbench.preflight.gpu import GpuNeed
from specbench.preflight.tools import BACKEND_TOOLS
from specbench.preflight.writes import GB, Download, Write


def _device(memory_gb: float, capability: str = "8.0", index: int = 0) -> dict:
    return {
        "index": index,
        "uuid": f"GPU-{index}",
        "name": "A100",
        "memory_total_mb": memory_gb * GB / 1024 / 1024,
        "compute_capability": capability,
    }


NVML = {"nvml": "ok", "devices": [_device(80)]}
NEED = GpuNeed(9.9 * GB, ("target 5.8 GB", "draft 2.1 GB", "context and buffers 2.0 GB"), (("", None, "native"),))


def test_disk_sums_the_writes_of_each_filesystem_with_headroom() -> None:
    writes = [
        Write("download", Path("/hf/hub"), 20 * GB, "hub"),
        Write("bf16 GGUF", Path("/work/resources/models/m"), 18 * GB, "estimate"),
        Write("Q4_K_M GGUF", Path("/work/resources/models/m"), 6 * GB, "estimate"),
    ]
    filesystems = {"/hf": 30 * GB, "/work": 25 * GB}

    def free(path: Path) -> tuple[str, float]:
        fs = "/" + path.parts[1]
        return fs, filesystems[fs]

    rows = {r.check: r for r in check_disk(writes, free, headroom=0.1)}
    assert rows["disk /hf"].ok is True  # 22 GB needed, 30 free
    work = rows["disk /work"]
    assert work.ok is False and work.needed.startswith("26.4 GB (24.0 GB + 10%)")
    assert "free 1.4 GB on /work" in work.fix and "/work/resources/models/m" in work.fix
    assert any(d.startswith("bf16 GGUF: 18.0 GB (estimate)") for d in work.detail)


def test_a_write_of_unknown_size_is_named_and_counts_as_nothing() -> None:
    rows = check_disk([Write("x download", Path("/a"), None, "unknown")], lambda p: ("/", 1 * GB), headroom=0.1)
    assert rows[0].ok is True and "size unknown" in rows[0].found and "x download" in rows[0].found


def test_a_missing_nvcc_says_how_to_get_one() -> None:
    [row] = check_tools([BACKEND_TOOLS["cuda"]], lambda tool: None)
    assert row.ok is False and "looked for nvcc, /usr/local/cuda/bin/nvcc, $CUDACXX" in row.found
    assert "CUDA toolkit" in row.fix and "CUDACXX" in row.fix
    [row] = check_tools([BACKEND_TOOLS["cuda"]], lambda tool: "/opt/cuda/bin/nvcc")
    assert row.ok is True and row.found == "/opt/cuda/bin/nvcc"


def test_no_gpu_is_a_problem_that_names_nvmls_answer() -> None:
    info = {"nvml": "unavailable", "error": "NVMLError_LibraryNotFound: NVML Shared Library Not Found", "devices": []}
    [row] = check_gpu(NEED, info, None, local=True)
    assert row.ok is False and "NVMLError_LibraryNotFound" in row.found and "config/tiny.yaml" in row.fix


@pytest.mark.parametrize(("memory_gb", "ok"), [(8, False), (12, True), (80, True)])
def test_gpu_memory_against_the_models_and_context(memory_gb: float, ok: bool) -> None:
    rows = check_gpu(NEED, {"nvml": "ok", "devices": [_device(memory_gb)]}, None, local=True)
    assert rows[0].check == "GPU memory" and rows[0].ok is ok
    assert rows[0].needed.startswith("9.9 GB: target 5.8 GB")


def test_the_gpus_the_cells_use_are_those_cuda_visible_devices_names() -> None:
    info = {"nvml": "ok", "devices": [_device(8, index=0), _device(80, index=1)]}
    assert check_gpu(NEED, info, "1", local=True)[0].ok is True
    assert check_gpu(NEED, info, "0", local=True)[0].ok is False
    [row] = check_gpu(NEED, info, "7", local=True)
    assert row.ok is False and "matches no NVML device" in row.found


@pytest.mark.parametrize(
    ("architectures", "capability", "ok"),
    [
        (("80-real", "86-real"), "8.0", True),
        (("86-real",), "8.0", False),  # machine code runs on its own major version's later minors only
        (("75-virtual", "80-virtual", "86-real", "89-real", "90-virtual"), "12.0", True),  # PTX JIT-compiles
        (("90a-real",), "9.0", True),
        (("90a-real",), "10.0", False),
        (None, "12.0", True),  # native: built for the GPU CMake finds
    ],
)
def test_compute_capability_against_the_builds_architectures(architectures, capability: str, ok: bool) -> None:
    need = GpuNeed(1 * GB, ("target 1.0 GB",), (("", architectures, "cmake_args"),))
    rows = check_gpu(need, {"nvml": "ok", "devices": [_device(80, capability)]}, None, local=True)
    assert rows[1].check == "CUDA architectures" and rows[1].ok is ok
    if not ok:
        assert f"compute capability {capability}" in rows[1].fix and "CMAKE_CUDA_ARCHITECTURES" in rows[1].fix


def test_under_a_cluster_executor_the_gpu_is_left_to_the_job() -> None:
    [row] = check_gpu(NEED, {}, None, local=False)
    assert row.ok is None and "its own node" in row.found


DOWNLOAD = Download("target", "Qwen/Qwen3.5-9B", "c202236235762e1c871ad0ccb60c8ee5ba337b9a")


@pytest.mark.parametrize(
    ("answer", "ok", "fix"),
    [
        (HubAnswer("ok", 19.31 * GB), True, ""),
        (HubAnswer("unreachable", detail="ConnectError: [Errno 111] Connection refused"), False, "HF_HUB_OFFLINE=1"),
        (HubAnswer("denied", detail="401 Client Error"), False, "HF_TOKEN"),
        (HubAnswer("no-revision", detail="404 Client Error"), False, "pin a commit"),
    ],
)
def test_each_hub_answer_and_what_to_do(answer: HubAnswer, ok: bool, fix: str) -> None:
    [row] = check_hub([DOWNLOAD], {DOWNLOAD: answer}, lambda d: False, False, False, "https://huggingface.co")
    assert row.check == "hub Qwen/Qwen3.5-9B" and row.ok is ok and fix in row.fix
    if ok:
        assert "19.3 GB" in row.found and "token none" in row.found


def test_a_download_in_the_cache_needs_no_hub_and_offline_without_it_is_a_problem() -> None:
    [row] = check_hub([DOWNLOAD], {}, lambda d: True, True, False, "")
    assert row.ok is True and "cache" in row.found
    [row] = check_hub([DOWNLOAD], {}, lambda d: False, True, False, "")
    assert row.ok is False and f"hf download Qwen/Qwen3.5-9B --revision {DOWNLOAD.revision}" in row.fix


def test_write_access_per_folder() -> None:
    rows = check_writable(
        [("results/", Path("/w/results")), ("resources/", Path("/w/resources"))], lambda p: "sults" in str(p)
    )
    assert [r.ok for r in rows] == [True, False] and "/w/resources" in rows[1].fix
