"""The preflight as a run sees it: on a constructed GPU machine, on this machine for the CPU demo and the study, and
as Snakemake's first step (`snakemake --cores 1 preflight`, and before the jobs of `all`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from specbench.contention.nvml import device_info
from specbench.core.plan.cells import selected_cells
from specbench.preflight import planned
from specbench.preflight.facts import HubAnswer
from specbench.preflight.run import Machine, preflight, problems, report, timed_preflight
from specbench.preflight.writes import GB
from support.config import load_config
from support.paths import REPO
from support.workflow import snakemake

CLOSED_PORT = "http://127.0.0.1:9"  # nothing listens on the discard port here: connections are refused


@pytest.fixture(scope="module")
def study() -> dict:
    return load_config([REPO / "config/config.yaml"])


def _from_scratch(config: dict) -> list:
    return planned.missing(config, REPO, selected_cells(config), lambda path: False)


def _gpu_box(tmp_path: Path, **changes) -> Machine:
    """A GPU machine as the study wants it: 500 GB free, every tool, an A100 80GB, the hub answering."""
    facts = {
        "free_space": lambda path: ("/", 500 * GB),
        "writable": lambda path: True,
        "size_of": lambda path: None,
        "locate": lambda tool: f"/usr/bin/{tool.names[0]}",
        "gpus": lambda: {
            "nvml": "ok",
            "devices": [
                {"index": 0, "uuid": "GPU-0", "name": "A100", "memory_total_mb": 81920.0, "compute_capability": "8.0"}
            ],
        },
        "ask_hub": lambda downloads: {d: HubAnswer("ok", 19.31 * GB) for d in downloads},
        "hf_cache": lambda: tmp_path / "hf" / "hub",
        "xet_cache": lambda: tmp_path / "hf" / "xet",
        "xet_limit": lambda: 10 * GB,
        "offline": lambda: False,
        "token": lambda: False,
        "endpoint": lambda: "https://huggingface.co",
        "env": {},
    }
    return Machine(**{**facts, **changes})


def test_a_gpu_box_with_everything_passes(study: dict, tmp_path: Path) -> None:
    rows = preflight(study, REPO, tmp_path, _from_scratch(study), machine=_gpu_box(tmp_path))
    assert problems(rows) == []
    assert {r.check for r in rows} >= {"GPU memory", "CUDA architectures", "CUDA toolkit (nvcc)", "hub Qwen/Qwen3.5-9B"}


def test_each_missing_thing_is_one_problem_line_saying_what_to_do(study: dict, tmp_path: Path) -> None:
    machine = _gpu_box(
        tmp_path,
        free_space=lambda path: ("/", 30 * GB),
        locate=lambda tool: None if tool.names == ("nvcc",) else "/usr/bin/x",
        gpus=lambda: {"nvml": "unavailable", "error": "NVMLError_LibraryNotFound: NVML Shared Library Not Found"},
        ask_hub=lambda downloads: {d: HubAnswer("unreachable", detail="ConnectError") for d in downloads},
    )
    lines = problems(preflight(study, REPO, tmp_path, _from_scratch(study), machine=machine))
    assert [line.split(":")[0] for line in lines] == [
        "disk /",
        "CUDA toolkit (nvcc)",
        "GPU",
        "hub Qwen/Qwen3.5-9B",
        "hub z-lab/Qwen3.5-9B-DFlash",
        "hub openai/gsm8k",
    ]
    assert all("What to do: " in line and "\n" not in line for line in lines)


def test_a_cluster_run_checks_the_hub_and_disk_here_and_leaves_toolkit_and_gpu_to_the_jobs(
    study: dict, tmp_path: Path
) -> None:
    machine = _gpu_box(tmp_path, locate=lambda tool: None, gpus=lambda: pytest.fail("NVML asked on the submit host"))
    rows = preflight(study, REPO, tmp_path, _from_scratch(study), local=False, machine=machine)
    assert [r.check for r in rows if r.ok is False] == ["git"]  # the clone runs here (llama_cpp_fetch is local)
    assert {r.check for r in rows if r.ok is None} == {"cmake", "C++ compiler", "CUDA toolkit (nvcc)", "GPU"}


def test_the_cpu_demo_passes_on_this_machine(tmp_path: Path) -> None:
    config = load_config([REPO / "config/config.yaml", REPO / "config/tiny.yaml"])
    rows, seconds = timed_preflight(config, REPO, tmp_path, _from_scratch(config))
    assert problems(rows) == [], report(rows, 0, seconds)[0]


def test_the_study_on_this_machine_names_what_is_missing_here(study: dict, tmp_path: Path, monkeypatch) -> None:
    """The study from scratch here, with the hub at a closed port: each hub download is a problem, and the GPU one
    exactly when NVML finds no GPU (this test machine has none)."""
    from huggingface_hub import constants

    monkeypatch.setattr(constants, "ENDPOINT", CLOSED_PORT)
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path / "hf" / "hub"))
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    rows, seconds = timed_preflight(study, REPO, tmp_path, _from_scratch(study))
    failed = {r.check: r for r in rows if r.ok is False}
    assert {"hub Qwen/Qwen3.5-9B", "hub z-lab/Qwen3.5-9B-DFlash", "hub openai/gsm8k"} <= set(failed)
    assert f"unreachable at {CLOSED_PORT}" in failed["hub Qwen/Qwen3.5-9B"].found
    if device_info()["nvml"] != "ok":
        assert "no NVIDIA GPU" in failed["GPU"].found
    table, _ = report(rows, 0, seconds)
    assert all(r.check in table for r in rows)


def _run(tmp_path: Path, *args: str, configs: tuple[str, ...] = ()) -> tuple[int, str]:
    env = {"HF_ENDPOINT": CLOSED_PORT, "HF_HOME": str(tmp_path / "hf"), "HF_HUB_OFFLINE": "0"}
    (tmp_path / "work").mkdir(exist_ok=True)
    configs = ("config/config.yaml", *configs)
    result = snakemake(tmp_path / "work", list(args), [REPO / c for c in configs], env=env, cores=1, prepared=())
    return result.returncode, result.stdout + result.stderr


def test_snakemake_preflight_on_the_study_stops_before_any_job(tmp_path: Path) -> None:
    code, output = _run(tmp_path, "preflight")
    assert code == 1, output[-3000:]
    assert "specbench preflight: " in output and "PROBLEM  hub Qwen/Qwen3.5-9B" in output
    assert "nothing was run" in output and "localrule preflight" not in output


def test_snakemake_preflight_on_the_cpu_demo_passes(tmp_path: Path) -> None:
    code, output = _run(tmp_path, "preflight", configs=("config/tiny.yaml",))
    assert code == 0, output[-3000:]
    assert "PROBLEM" not in output and "specbench preflight: nothing missing" in output


def test_the_study_stops_at_the_preflight_before_its_first_job_and_a_dry_run_skips_it(tmp_path: Path) -> None:
    code, output = _run(tmp_path, "all", "-n")
    assert code == 0 and "specbench preflight" not in output, output[-3000:]
    code, output = _run(tmp_path, "all")
    assert code == 1 and "PROBLEM  hub Qwen/Qwen3.5-9B" in output, output[-3000:]
    assert not (tmp_path / "work" / "resources").exists() and not (tmp_path / "work" / "logs").exists()


def test_offline_the_cache_must_hold_each_download_and_the_hub_is_not_asked(study: dict, tmp_path: Path) -> None:
    machine = _gpu_box(tmp_path, offline=lambda: True, ask_hub=lambda downloads: pytest.fail("asked the hub offline"))
    for kind, role in (("models", "target"), ("models", "draft")):
        hf = study["models"][role]["hf"]
        (tmp_path / "hf" / "hub" / f"{kind}--{hf['repo'].replace('/', '--')}" / "snapshots" / hf["revision"]).mkdir(
            parents=True
        )
    rows = preflight(study, REPO, tmp_path, _from_scratch(study), machine=machine)
    hub = {r.check: r for r in rows if r.check.startswith("hub ")}
    assert hub["hub Qwen/Qwen3.5-9B"].ok is True and hub["hub z-lab/Qwen3.5-9B-DFlash"].ok is True
    gsm8k = hub["hub openai/gsm8k"]
    assert gsm8k.ok is False and "HF_HUB_OFFLINE=1" in gsm8k.found and "--repo-type dataset" in gsm8k.fix
