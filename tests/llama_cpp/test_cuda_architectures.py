"""The build records the CUDA architectures it compiled for (from CMake's generated nvcc flags: what 'native' or
llama.cpp's default list became), and a build made for one GPU is refused on another."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from specbench.contention.devices import DeviceError, check_build_covers
from specbench.llama_cpp.cmake import cuda_architectures
from support.paths import TEST_DATA

DATA = TEST_DATA / "nvml"
CUDA_DIR = "ggml/src/ggml-cuda/CMakeFiles/ggml-cuda.dir"


def _flags(work: Path, text: str, name: str = f"{CUDA_DIR}/flags.make") -> Path:
    path = work / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return work


@pytest.mark.parametrize(
    ("flags", "architectures"),
    [
        # GGML_NATIVE on an H200: CMake resolved 'native' to the GPU it saw.
        (
            "CUDA_FLAGS = -O3 -DNDEBUG -std=c++17 --generate-code=arch=compute_90,code=[sm_90] -use_fast_math\n",
            ["90-real"],
        ),
        # llama.cpp's portable default list: PTX for old GPUs, machine code for the common recent ones.
        (
            "CUDA_FLAGS = --generate-code=arch=compute_50,code=[compute_50] --generate-code=arch=compute_61,"
            "code=[compute_61] --generate-code=arch=compute_70,code=[compute_70] --generate-code=arch=compute_75,"
            "code=[compute_75] --generate-code=arch=compute_80,code=[compute_80] --generate-code=arch=compute_86,"
            "code=[sm_86] --generate-code=arch=compute_89,code=[sm_89]\n",
            ["50-virtual", "61-virtual", "70-virtual", "75-virtual", "80-virtual", "86-real", "89-real"],
        ),
        # -DCMAKE_CUDA_ARCHITECTURES="80;90a" (plain 80 = machine code and PTX), older -gencode spelling.
        (
            "CUDA_FLAGS = -gencode arch=compute_80,code=[compute_80,sm_80] -gencode arch=compute_90a,code=[sm_90a]\n",
            ["80-real", "80-virtual", "90a-real"],
        ),
    ],
)
def test_architectures_from_the_generated_flags(tmp_path: Path, flags: str, architectures: list[str]) -> None:
    assert cuda_architectures(_flags(tmp_path, flags)) == architectures


def test_ninja_builds_and_cpu_builds(tmp_path: Path) -> None:
    ninja = _flags(
        tmp_path / "ninja", "  FLAGS = -O3 --generate-code=arch=compute_89,code=[compute_89,sm_89]\n", "build.ninja"
    )
    assert cuda_architectures(ninja) == ["89-real", "89-virtual"]
    assert cuda_architectures(_flags(tmp_path / "cpu", "CXX_FLAGS = -O3 -march=native\n")) == []


def test_a_native_h200_build_is_refused_on_an_a100_and_an_l4(tmp_path: Path) -> None:
    recorded = cuda_architectures(_flags(tmp_path, "CUDA_FLAGS = --generate-code=arch=compute_90,code=[sm_90]\n"))
    h200 = json.loads((DATA / "device_info_h200x4.json").read_text())["devices"]
    a100, l4 = json.loads((DATA / "device_info_a100_l4.json").read_text())["devices"]
    check_build_covers(recorded, h200)
    for device in (a100, l4):
        with pytest.raises(DeviceError, match=f"compute capability {device['compute_capability']}"):
            check_build_covers(recorded, [device])
