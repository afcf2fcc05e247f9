"""Each preflight check on constructed facts: free disk, a program's path, nvcc's and the driver's CUDA versions,
NVML's devices, the hub's and a git host's answers."""

from __future__ import annotations

from pathlib import Path

import pytest

from specbench.preflight.checks import (
    check_disk,
    check_git_host,
    check_gpu,
    check_hub,
    check_toolkit_driver,
    check_tools,
    check_writable,
)
from specbench.preflight.facts import GitAnswer, HubAnswer
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


DRIVER_12_2 = {**NVML, "driver": "535.183.01", "cuda_driver_version": "12.2"}


@pytest.mark.parametrize(
    ("toolkit", "driver", "ok"),
    [("12.6", "12.2", False), ("12.10", "12.9", False), ("13.0", "12.8", False), ("12.2", "12.2", True),
     ("11.8", "12.2", True)],
)  # fmt: skip
def test_nvccs_cuda_version_against_the_drivers(toolkit: str, driver: str, ok: bool) -> None:
    info = {**DRIVER_12_2, "cuda_driver_version": driver}
    [row] = check_toolkit_driver("/usr/local/cuda/bin/nvcc", toolkit, info)
    assert row.ok is ok
    assert row.found == (
        f"nvcc CUDA {toolkit} (/usr/local/cuda/bin/nvcc), driver supports CUDA {driver} (driver 535.183.01)"
    )
    if not ok:
        assert f"install an NVIDIA driver that supports CUDA {toolkit} or newer" in row.fix
        assert f"a CUDA toolkit of {driver} or older" in row.fix and "CUDACXX" in row.fix


def test_an_nvcc_the_cmake_args_name_is_the_one_to_point_elsewhere() -> None:
    [row] = check_toolkit_driver("/opt/cuda-12.6/bin/nvcc", "12.6", DRIVER_12_2, given=True)
    assert row.ok is False and "point -DCMAKE_CUDA_COMPILER in llama_cpp.cmake_args at its nvcc" in row.fix


def test_without_a_driver_or_a_readable_nvcc_the_versions_are_not_compared() -> None:
    no_driver = {"nvml": "unavailable", "error": "NVMLError_LibraryNotFound: NVML Shared Library Not Found"}
    [row] = check_toolkit_driver("/usr/local/cuda/bin/nvcc", "12.6", no_driver)
    assert row.ok is None and row.found.startswith("not checked: no NVIDIA driver") and "LibraryNotFound" in row.found
    [row] = check_toolkit_driver("/usr/local/cuda/bin/nvcc", None, DRIVER_12_2)
    assert row.ok is None and "--version` names no CUDA release" in row.found
    assert check_toolkit_driver(None, None, DRIVER_12_2) == []  # no nvcc: the toolkit's own row is the problem


def test_a_git_host_that_answers_and_one_that_does_not() -> None:
    up, down = "https://github.com/ggml-org/llama.cpp", "https://git.example/llama.cpp"
    answers = {up: GitAnswer(True), down: GitAnswer(False, "Could not resolve host: git.example")}
    ok, problem = check_git_host([up, down], answers, git_found=True)
    assert ok.check == "git host" and ok.ok is True and up in ok.found and up in ok.needed
    assert problem.ok is False and problem.found == f"{down} unreachable: Could not resolve host: git.example"
    assert "llama_cpp.source: pypi-sdist" in problem.fix and "proxy" in problem.fix
    [row] = check_git_host([up], {}, git_found=False)
    assert row.ok is None and "git is not found" in row.found


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
        (HubAnswer("unreachable", detail="ReadTimeout: timed out (2 tries of 10 s each)"), False, "--no-hooks"),
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
