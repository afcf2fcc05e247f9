"""What the planned jobs of a config need: files and sizes, downloads, tools, GPU memory and CUDA architectures."""

from __future__ import annotations

from pathlib import Path

import pytest

from specbench.core.plan.cells import selected_cells
from specbench.preflight import planned
from specbench.preflight.gpu import GGML_DEFAULT_ARCHITECTURES, cuda_architectures
from specbench.preflight.needs import needs
from specbench.preflight.writes import (
    BITS_PER_WEIGHT,
    GB,
    GGUF_OF_CHECKPOINT,
    VLLM_VENV_BYTES,
    XET_CHUNK_CACHE_BYTES,
    StorageFacts,
)
from support.config import load_config
from support.paths import REPO

TARGET, DRAFT = "Qwen/Qwen3.5-9B", "z-lab/Qwen3.5-9B-DFlash"
WORK, HF, XET = Path("/w"), Path("/hf/hub"), Path("/hf/xet")


@pytest.fixture(scope="module")
def study() -> dict:
    return load_config([REPO / "config/config.yaml"])


@pytest.fixture(scope="module")
def tiny() -> dict:
    return load_config([REPO / "config/config.yaml", REPO / "config/tiny.yaml"])


def _from_scratch(config: dict) -> list:
    return planned.missing(config, REPO, selected_cells(config), lambda path: False)


def _needs(config: dict, jobs: list | None = None, **facts):
    arguments = {"hub_sizes": {}, "cached": {}, "hf_cache": HF, "xet_cache": XET, "size_of": lambda p: None}
    storage = StorageFacts(**{**arguments, **facts})
    return needs(config, REPO, WORK, _from_scratch(config) if jobs is None else jobs, storage)


def test_the_study_downloads_both_models_and_gsm8k_at_their_pinned_commits(study: dict) -> None:
    downloads = _needs(study).downloads
    assert [(d.label, d.repo, d.repo_type) for d in downloads] == [
        ("target", TARGET, "model"),
        ("draft", DRAFT, "model"),
        ("dataset gsm8k", "openai/gsm8k", "dataset"),
    ]
    assert all(len(d.revision) == 40 and int(d.revision, 16) >= 0 for d in downloads)


def test_sizes_come_from_the_hub_when_it_answered_else_from_the_config(study: dict) -> None:
    hub = {TARGET: 19.31 * GB, DRAFT: 2.5 * GB}
    writes = {w.what: w for w in _needs(study, hub_sizes=hub).writes}
    assert writes[f"{TARGET} download"].size == hub[TARGET] and writes[f"{TARGET} download"].basis == "hub"
    bf16 = writes["target bf16 GGUF"].size
    assert bf16 == pytest.approx(hub[TARGET] * GGUF_OF_CHECKPOINT)
    assert writes["target Q4_K_M GGUF"].size == pytest.approx(bf16 * BITS_PER_WEIGHT["Q4_K_M"] / 16)
    assert writes["draft bf16 GGUF"].size == pytest.approx(hub[DRAFT])
    assert writes["hf-xet chunk cache"].size == XET_CHUNK_CACHE_BYTES and writes["hf-xet chunk cache"].where == XET
    recorded = study["preflight"]["download_gb"]
    offline = {w.what: w for w in _needs(study).writes}
    assert offline[f"{DRAFT} download"].size == recorded[DRAFT] * GB and offline[f"{DRAFT} download"].basis == "config"


def test_the_estimates_match_the_studys_published_sizes(study: dict) -> None:
    """Shards 19.3 GB -> bf16 GGUF about 18.4 GB -> Q4_K_M about 5.7 GB (the conversion and quantization of the
    real Qwen3.5-9B)."""
    writes = {w.what: w.size for w in _needs(study, hub_sizes={TARGET: 19.31 * GB}).writes}
    assert writes["target bf16 GGUF"] == pytest.approx(18.4 * GB, rel=0.02)
    assert writes["target Q4_K_M GGUF"] == pytest.approx(5.7 * GB, rel=0.03)


def test_what_the_cache_holds_is_not_downloaded_again(study: dict) -> None:
    writes = {w.what: w.size for w in _needs(study, hub_sizes={TARGET: 19 * GB}, cached={TARGET: 15 * GB}).writes}
    assert writes[f"{TARGET} download"] == pytest.approx(4 * GB)


def test_the_study_needs_the_cuda_toolkit_and_a_gpu_for_both_models_and_context(study: dict) -> None:
    need = _needs(study, hub_sizes={TARGET: 19.31 * GB, DRAFT: 2.09 * GB})
    assert [t.name for t in need.tools] == ["git", "cmake", "C++ compiler", "CUDA toolkit (nvcc)"]
    writes = {w.what: w.size for w in need.writes}
    overhead = study["preflight"]["gpu_overhead_gb"] * GB
    assert need.gpu.memory == pytest.approx(writes["target Q4_K_M GGUF"] + writes["draft bf16 GGUF"] + overhead)
    assert need.gpu.architectures == (("", None, "native (built for the GPU CMake finds)"),)


def test_a_gguf_already_made_counts_as_its_size(study: dict) -> None:
    sizes = {"Q4_K_M.gguf": 6.0 * GB}
    need = _needs(study, size_of=lambda p: sizes.get(p.name))
    assert need.gpu.parts[0] == "target 6.0 GB"


def test_without_a_draft_condition_the_gpu_holds_the_target_only(study: dict) -> None:
    jobs = [("cell", {"condition": "off"}), ("cell", {"condition": "mtp"})]
    need = _needs(study, jobs=jobs, size_of=lambda p: 5 * GB)
    assert [p.split()[0] for p in need.gpu.parts] == ["target", "context"]


def test_the_tiny_cpu_demo_downloads_nothing_and_needs_no_gpu(tiny: dict) -> None:
    need = _needs(tiny)
    assert need.downloads == [] and need.gpu is None
    assert [t.name for t in need.tools] == ["cmake", "C++ compiler"]
    assert sum(w.size for w in need.writes) < 5 * GB


def test_nothing_planned_needs_nothing(study: dict) -> None:
    cells = selected_cells(study)
    assert planned.missing(study, REPO, cells, lambda path: True) == []
    need = _needs(study, jobs=[])
    assert need.writes == [] and need.tools == [] and need.gpu is None and need.downloads == []


@pytest.mark.parametrize(
    ("extra", "venv"),
    [("tiny-vllm.yaml", VLLM_VENV_BYTES["cpu"]), ("study-vllm.yaml", VLLM_VENV_BYTES["cuda"])],
)
def test_a_vllm_venv_to_make_is_written_where_its_build_keeps_it(extra: str, venv: float) -> None:
    base = [REPO / "config/config.yaml"] + ([REPO / "config/tiny.yaml"] if extra.startswith("tiny") else [])
    config = load_config([*base, REPO / "config" / extra])
    jobs = _from_scratch(config)
    assert ("vllm_env", {"label": "vllm"}) in jobs
    writes = {w.what: w for w in _needs(config, jobs=jobs).writes}
    assert writes["vLLM vllm venv"].size == venv and writes["vLLM vllm venv"].where == WORK / "resources/vllm/vllm"
    made = planned.missing(config, REPO, selected_cells(config), lambda path: path.endswith("manifest.json"))
    assert ("vllm_env", {"label": "vllm"}) not in made  # made already: nothing to install
    config["builds"][1]["vllm"]["python"] = "/opt/vllm/bin/python"
    assert "vLLM vllm venv" not in {w.what for w in _needs(config, jobs=jobs).writes}  # named: nothing written


def test_missing_cells_plan_one_cell_job_per_condition(study: dict) -> None:
    cells = selected_cells(study)
    missing = {cells[0].path, cells[-1].path}
    jobs = planned.missing(study, REPO, cells, lambda path: path not in missing)
    conditions = list(dict.fromkeys(c.condition for c in (cells[0], cells[-1])))
    assert jobs == [("cell", {"condition": c}) for c in conditions]


@pytest.mark.parametrize(
    ("cmake_args", "manifest", "expected"),
    [
        ([], None, None),
        (["-DGGML_NATIVE=OFF"], None, GGML_DEFAULT_ARCHITECTURES),
        (["-DCMAKE_CUDA_ARCHITECTURES=80-real;90-real"], None, ("80-real", "90-real")),
        (["-DCMAKE_CUDA_ARCHITECTURES=native", "-DGGML_NATIVE=OFF"], None, None),
        (["-DCMAKE_CUDA_ARCHITECTURES=80"], {"cuda_architectures": ["90-real"]}, ("90-real",)),
    ],
)
def test_the_architectures_a_cuda_build_covers(cmake_args: list, manifest, expected) -> None:
    assert cuda_architectures(cmake_args, manifest)[0] == expected


def test_a_compiler_the_cmake_args_name_is_the_one_looked_for(study: dict, tmp_path: Path) -> None:
    from specbench.preflight.facts import locate

    nvcc = tmp_path / "cuda-12.8" / "bin" / "nvcc"
    study = {**study, "llama_cpp": {**study["llama_cpp"], "cmake_args": [f"-DCMAKE_CUDA_COMPILER={nvcc}"]}}
    [tool] = [t for t in _needs(study).tools if t.name == "CUDA toolkit (nvcc)"]
    assert tool.given == (str(nvcc),)
    assert locate(tool.names, tool.paths, tool.env, tool.given) is None  # not there: CMake would not find it either
    nvcc.parent.mkdir(parents=True)
    nvcc.write_text("#!/bin/sh\n")
    nvcc.chmod(0o755)
    assert locate(tool.names, tool.paths, tool.env, tool.given) == str(nvcc)
