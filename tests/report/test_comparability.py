"""Comparable with the study or not, decided from recorded environments: the study's A100, another GPU, a CPU."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from specbench.claims.comparability import assess
from specbench.claims.evaluate import Setup
from specbench.claims.judging import setup_of
from specbench.claims.predictions import integrity, stamp
from specbench.core.records.run_setup import device_label
from support.paths import REPO

CONFIG = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
STUDY = CONFIG["study_setup"]
ARGS = STUDY["server_args"]

A100 = {
    "nvml": "ok",
    "devices": [{"index": 0, "name": "NVIDIA A100 80GB PCIe", "memory_total_mb": 81920.0, "uuid": "GPU-1"}],
}
H200 = {"nvml": "ok", "devices": [{"index": 0, "name": "NVIDIA H200", "memory_total_mb": 143771.0, "uuid": "GPU-2"}]}
CPU = {"nvml": "unavailable", "error": "NVMLError_LibraryNotFound", "devices": []}
MACHINE = {"machine": "x86_64", "cpu_count": 2}
# What a run of the study config's git route records: the full SHA it checked out (the config pins it in full)
PINNED = CONFIG["llama_cpp"]["git"]["commit"]
GIT_BUILD = {"source": {"kind": "git", "commit": PINNED, "label": "llama.cpp commit 4da6337"}}
SDIST_BUILD = {"source": {"kind": "pypi-sdist", "sha256": STUDY["llama_cpp"]["archive_sha256"][0], "label": "b11223"}}
STUDY_MODEL = {
    "source": {"kind": "hf", "repo": "Qwen/Qwen3.5-9B"},
    "file_type_name": "MOSTLY_Q4_K_M",
    "architecture": "qwen35",
    "mtp": {"present": True},
}
STUDY_DRAFT = {"source": {"kind": "hf", "repo": "z-lab/Qwen3.5-9B-DFlash"}}
TINY_MODEL = {
    "source": {"kind": "tiny"},
    "file_type_name": "MOSTLY_Q4_K_M",
    "architecture": "qwen35",
    "mtp": {"present": True},
}


def _assess(
    device: dict,
    build: dict = GIT_BUILD,
    model: dict = STUDY_MODEL,
    draft: dict | None = STUDY_DRAFT,
    args: list[str] = ARGS,
):
    return assess(STUDY, device=device, machine=MACHINE, build=build, model=model, draft=draft, server_args=args)


def test_the_study_setup_is_comparable_by_git_commit_or_its_source_archive() -> None:
    for build in (GIT_BUILD, SDIST_BUILD):
        result = _assess(A100, build)
        assert result.comparable and [f.matches for f in result.facts] == [True] * 6
        assert result.device == "NVIDIA A100 80GB PCIe (81920 MiB)"


def test_the_full_commit_a_run_checks_out_matches_the_short_one_the_study_published() -> None:
    assert len(PINNED) == 40 and STUDY["llama_cpp"]["commit"] == "4da6337" and PINNED.startswith("4da6337")
    [fact] = [f for f in _assess(A100).facts if f.name == "llama.cpp"]
    assert fact.matches and fact.study == "commit 4da6337 (or its source archive)" and PINNED in fact.this_run
    for other in ("4da6330" + PINNED[7:], "0" + PINNED[:39]):  # differs within its first 7 digits
        [fact] = [f for f in _assess(A100, {"source": {"kind": "git", "commit": other}}).facts if f.name == "llama.cpp"]
        assert not fact.matches, other


def test_another_gpu_is_not_comparable_and_says_which_fact_differs() -> None:
    result = _assess(H200)
    assert not result.comparable and result.same_model  # the study's model elsewhere: its transfers are judged
    device = "NVIDIA H200 (143771 MiB)"
    assert setup_of(result) == Setup(comparable=False, same_model=True, device=device, same_settings=True)
    assert [f.name for f in result.facts if not f.matches] == ["GPU"]
    assert result.device == "NVIDIA H200 (143771 MiB)"


def test_a_cpu_run_of_the_tiny_model_differs_in_device_model_draft_and_flags() -> None:
    result = _assess(CPU, SDIST_BUILD, TINY_MODEL, {"source": {"kind": "tiny"}}, ["-c", "4096"])
    assert not result.comparable
    assert [f.name for f in result.facts if not f.matches] == ["GPU", "model", "draft model", "server flags"]
    assert result.device == "CPU (x86_64, 2 cores)"
    assert not result.same_model  # the claims are about the study's model: none is judged on this one
    assert result.differing == ["GPU", "model", "draft model", "server flags"]
    facts = {f.name: f for f in result.facts}
    assert facts["llama.cpp"].matches  # the study's build, from its source archive
    assert facts["model"].this_run == "tiny (qwen35)"
    assert facts["quantization"].matches and facts["quantization"].this_run == "MOSTLY_Q4_K_M (MTP kept)"


def test_another_quantization_of_the_studys_model_is_still_its_model() -> None:
    result = _assess(A100, model={**STUDY_MODEL, "file_type_name": "MOSTLY_Q8_0"})
    assert not result.comparable and result.same_model and result.differing == ["quantization"]


@pytest.mark.parametrize(
    "change",
    [
        {"build": {"source": {"kind": "git", "commit": "1234567" + "0" * 33}}},
        {"model": {**STUDY_MODEL, "mtp": {"present": False}}},
        {"model": {**STUDY_MODEL, "file_type_name": "MOSTLY_Q8_0"}},
        {"draft": None},
        {"args": [*ARGS, "-t", "8"]},
        {"device": {"nvml": "ok", "devices": [{"name": "NVIDIA A100-SXM4-40GB", "memory_total_mb": 40960.0}]}},
    ],
)
def test_any_single_difference_breaks_comparability(change: dict) -> None:
    kwargs = {"device": A100, **change}
    assert not _assess(**kwargs).comparable


def test_device_label_counts_the_gpus_the_server_used() -> None:
    two = {"devices": [H200["devices"][0], {**H200["devices"][0], "index": 1, "uuid": "GPU-3"}]}
    assert device_label(two, MACHINE) == "NVIDIA H200 (143771 MiB) x2: the server used 2 GPUs"
    one = {**MACHINE, "backend": "cuda", "devices": [{"index": 1, "uuid": "GPU-3", "name": "NVIDIA H200"}]}
    assert device_label(two, one) == "NVIDIA H200 (143771 MiB)"  # CUDA_VISIBLE_DEVICES=1: one of the two


def test_two_gpus_are_not_the_studys_one() -> None:
    two = {"devices": [A100["devices"][0], {**A100["devices"][0], "index": 1, "uuid": "GPU-9"}]}
    facts = {f.name: f for f in _assess(two).facts}
    assert not facts["GPU"].matches and "the server used 2 GPUs" in facts["GPU"].this_run


VULKAN_MACHINE = {
    **MACHINE,
    "backend": "vulkan",
    "devices": [],
    "llama_devices": [
        {
            "name": "Vulkan0",
            "description": "llvmpipe (LLVM 15.0.6, 256 bits)",
            "memory_total_mib": 2048,
            "memory_free_mib": 2048,
        }
    ],
}


def test_a_vulkan_device_is_named_from_llama_cpps_own_list() -> None:
    not_used = {"nvml": "not used", "devices": []}
    assert device_label(not_used, VULKAN_MACHINE) == "llvmpipe (LLVM 15.0.6, 256 bits) (Vulkan0, 2048 MiB)"
    result = assess(
        STUDY,
        device=not_used,
        machine=VULKAN_MACHINE,
        build=SDIST_BUILD,
        model=STUDY_MODEL,
        draft=STUDY_DRAFT,
        server_args=ARGS,
    )
    assert [f.name for f in result.facts if not f.matches] == ["GPU"]


def test_a_cpu_build_on_a_gpu_host_is_a_cpu_run() -> None:
    assert device_label(A100, {**MACHINE, "backend": "cpu", "devices": []}) == "CPU (x86_64, 2 cores)"


def test_predictions_stamp_and_integrity(tmp_path: Path) -> None:
    import datetime as dt

    path = tmp_path / "predictions.yaml"
    path.write_text("claims: []\n")
    record = stamp(path)
    assert record["sha256"] == __import__("hashlib").sha256(b"claims: []\n").hexdigest()
    later = dt.datetime.now(dt.UTC) + dt.timedelta(minutes=1)
    check = integrity(json.loads(json.dumps(record)), path, later)
    assert check["stamped_before_measuring"] and not check["changed_after_stamp"]
    path.write_text("claims: [] # edited after measuring began\n")
    earlier = dt.datetime.fromisoformat(record["stamped_at"]) - dt.timedelta(seconds=5)
    check = integrity(record, path, earlier)
    assert check["changed_after_stamp"] and not check["stamped_before_measuring"]
