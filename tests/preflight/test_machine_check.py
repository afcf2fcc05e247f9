"""The preflight as a run sees it: on a constructed GPU machine, on this machine for the CPU demo and the study, and
as Snakemake's first step (`snakemake --cores 1 preflight`, and before the jobs of `all`)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from specbench.contention.nvml import device_info
from specbench.core.plan.cells import selected_cells
from specbench.preflight import planned
from specbench.preflight.checks import TOOLKIT_NEEDED
from specbench.preflight.facts import GitAnswer, HubAnswer, ask_git_all
from specbench.preflight.machine_check import Machine, preflight, problems, report, timed_preflight
from specbench.preflight.writes import GB
from support.config import load_config
from support.paths import REPO
from support.workflow import snakemake

CLOSED_PORT = "http://127.0.0.1:9"  # nothing listens on the discard port here: connections are refused
# git with every https:// URL rewritten to a local path that is not there: the study's git host is asked, offline
NO_GIT_HOST = {
    "GIT_CONFIG_COUNT": "1",
    "GIT_CONFIG_KEY_0": "url.file:///nonexistent/.insteadOf",
    "GIT_CONFIG_VALUE_0": "https://",
}


@pytest.fixture(scope="module")
def study() -> dict:
    return load_config([REPO / "config/config.yaml"])


def _from_scratch(config: dict) -> list:
    return planned.missing(config, REPO, selected_cells(config), lambda path: False)


def _gpu_box(tmp_path: Path, **changes) -> Machine:
    """A GPU machine as the study wants it: 500 GB free, every tool (CUDA 12.4), an A100 80GB whose driver supports
    CUDA 12.4, the hub and the git host answering."""
    facts = {
        "free_space": lambda path: ("/", 500 * GB),
        "writable": lambda path: True,
        "size_of": lambda path: None,
        "locate": lambda tool: f"/usr/bin/{tool.names[0]}",
        "gpus": lambda: {
            "nvml": "ok",
            "driver": "550.54.15",
            "cuda_driver_version": "12.4",
            "devices": [
                {"index": 0, "uuid": "GPU-0", "name": "A100", "memory_total_mb": 81920.0, "compute_capability": "8.0"}
            ],
        },
        "nvcc_version": lambda nvcc: "12.4",
        "ask_hub": lambda downloads: {d: HubAnswer("ok", 19.31 * GB) for d in downloads},
        "ask_git": lambda urls: {url: GitAnswer(True) for url in urls},
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
    assert {r.check for r in rows} >= {
        "GPU memory",
        "CUDA architectures",
        "CUDA toolkit (nvcc)",
        "CUDA toolkit and driver",
        "git host",
        "hub Qwen/Qwen3.5-9B",
    }
    [versions] = [r for r in rows if r.check == "CUDA toolkit and driver"]
    assert versions.found == "nvcc CUDA 12.4 (/usr/bin/nvcc), driver supports CUDA 12.4 (driver 550.54.15)"


def test_each_missing_thing_is_one_problem_line_saying_what_to_do(study: dict, tmp_path: Path) -> None:
    machine = _gpu_box(
        tmp_path,
        free_space=lambda path: ("/", 30 * GB),
        locate=lambda tool: None if tool.names == ("nvcc",) else "/usr/bin/x",
        gpus=lambda: {"nvml": "unavailable", "error": "NVMLError_LibraryNotFound: NVML Shared Library Not Found"},
        ask_hub=lambda downloads: {d: HubAnswer("unreachable", detail="ConnectError") for d in downloads},
        ask_git=lambda urls: {url: GitAnswer(False, "Could not resolve host: github.com") for url in urls},
    )
    lines = problems(preflight(study, REPO, tmp_path, _from_scratch(study), machine=machine))
    assert [line.split(":")[0] for line in lines] == [
        "disk /",
        "CUDA toolkit (nvcc)",
        "GPU",
        "git host",
        "hub Qwen/Qwen3.5-9B",
        "hub z-lab/Qwen3.5-9B-DFlash",
        "hub openai/gsm8k",
    ]
    assert all("What to do: " in line and "\n" not in line for line in lines)


def test_a_cluster_run_checks_the_hub_and_disk_here_and_leaves_toolkit_and_gpu_to_the_jobs(
    study: dict, tmp_path: Path
) -> None:
    machine = _gpu_box(
        tmp_path,
        locate=lambda tool: None,
        gpus=lambda: pytest.fail("NVML asked on the submit host"),
        nvcc_version=lambda nvcc: pytest.fail("nvcc asked on the submit host"),
        ask_git=lambda urls: pytest.fail("git host asked without git"),
    )
    rows = preflight(study, REPO, tmp_path, _from_scratch(study), local=False, machine=machine)
    assert [r.check for r in rows if r.ok is False] == ["git"]  # the clone runs here (llama_cpp_fetch is local)
    assert {r.check for r in rows if r.ok is None} == {
        "cmake",
        "C++ compiler",
        "CUDA toolkit (nvcc)",
        "CUDA toolkit and driver",
        "GPU",
        "git host",  # not asked: no git here
    }


def _driver(cuda: str | None, error: str | None = None) -> dict:
    """NVML's answer on the A100 box with a driver that supports CUDA ``cuda`` (None: no driver)."""
    if cuda is None:
        return {"nvml": "unavailable", "error": error, "devices": []}
    device = {"index": 0, "uuid": "GPU-0", "name": "A100", "memory_total_mb": 81920.0, "compute_capability": "8.0"}
    return {"nvml": "ok", "driver": "535.183.01", "cuda_driver_version": cuda, "devices": [device]}


def test_a_toolkit_newer_than_its_driver_names_both_versions_in_the_table(study: dict, tmp_path: Path) -> None:
    machine = _gpu_box(
        tmp_path,
        locate=lambda tool: "/usr/local/cuda/bin/nvcc" if tool.names == ("nvcc",) else f"/usr/bin/{tool.names[0]}",
        gpus=lambda: _driver("12.2"),
        nvcc_version=lambda nvcc: {"/usr/local/cuda/bin/nvcc": "12.6"}[nvcc],
    )
    rows = preflight(study, REPO, tmp_path, _from_scratch(study), machine=machine)
    table, lines = report(rows, 9, 0.4)
    found = "nvcc CUDA 12.6 (/usr/local/cuda/bin/nvcc), driver supports CUDA 12.2 (driver 535.183.01)"
    [row] = [line for line in table.splitlines() if "CUDA toolkit and driver" in line]
    assert row.split() == ["PROBLEM", "CUDA", "toolkit", "and", "driver", *found.split(), *TOOLKIT_NEEDED.split()]
    [line] = lines
    assert line.startswith(f"CUDA toolkit and driver: {found}. What to do: install an NVIDIA driver that supports")
    assert "CUDA 12.6 or newer" in line and "a CUDA toolkit of 12.2 or older" in line and "CUDACXX" in line


def test_a_build_only_run_compares_the_toolkit_without_cells_and_without_a_driver_says_why_not(
    study: dict, tmp_path: Path
) -> None:
    jobs = [("llama_cpp_build", {"build_dir": ""})]
    rows = preflight(study, REPO, tmp_path, jobs, machine=_gpu_box(tmp_path, gpus=lambda: _driver("12.4")))
    assert {r.check: r.ok for r in rows}["CUDA toolkit and driver"] is True and "GPU memory" not in {
        r.check for r in rows
    }
    no_driver = _gpu_box(
        tmp_path,
        gpus=lambda: _driver(None, "NVMLError_DriverNotLoaded: Driver Not Loaded"),
        nvcc_version=lambda nvcc: pytest.fail("nvcc asked without a driver to compare with"),
    )
    [row] = [
        r for r in preflight(study, REPO, tmp_path, jobs, machine=no_driver) if r.check == "CUDA toolkit and driver"
    ]
    assert (
        row.ok is None
        and row.found == "not checked: no NVIDIA driver seen here (NVMLError_DriverNotLoaded: Driver Not Loaded)"
    )


def test_the_cpu_demo_from_pypi_asks_no_git_host_and_no_toolkit(tmp_path: Path) -> None:
    config = load_config([REPO / "config/config.yaml", REPO / "config/tiny.yaml"])
    machine = _gpu_box(
        tmp_path,
        ask_git=lambda urls: pytest.fail("git host asked for a PyPI sdist"),
        nvcc_version=lambda nvcc: pytest.fail("nvcc asked for a CPU build"),
    )
    checks = {r.check for r in preflight(config, REPO, tmp_path, _from_scratch(config), machine=machine)}
    assert not checks & {"git", "git host", "CUDA toolkit (nvcc)", "CUDA toolkit and driver"}


def _bare_repository(path: Path) -> str:
    subprocess.run(["git", "init", "--bare", "-q", str(path)], check=True)
    return path.as_uri()


def test_the_git_host_is_asked_for_real_over_file_urls(study: dict, tmp_path: Path) -> None:
    """The study's git route with its url at a local bare repository (answers), then at a path that is not there."""
    machine = _gpu_box(tmp_path, ask_git=ask_git_all)
    for url, ok in ((_bare_repository(tmp_path / "llama.cpp.git"), True), ((tmp_path / "gone.git").as_uri(), False)):
        config = {**study, "llama_cpp": {**study["llama_cpp"], "git": {**study["llama_cpp"]["git"], "url": url}}}
        [row] = [
            r
            for r in preflight(config, REPO, tmp_path, _from_scratch(config), machine=machine)
            if r.check == "git host"
        ]
        assert row.ok is ok and url in row.found and row.needed == f"clones {url} (source: git)"
        if not ok:
            assert "does not appear to be a git repository" in row.found and "pypi-sdist" in row.fix


def test_the_cpu_demo_passes_on_this_machine(tmp_path: Path) -> None:
    config = load_config([REPO / "config/config.yaml", REPO / "config/tiny.yaml"])
    rows, seconds = timed_preflight(config, REPO, tmp_path, _from_scratch(config))
    assert problems(rows) == [], report(rows, 0, seconds)[0]


def test_the_study_on_this_machine_names_what_is_missing_here(study: dict, tmp_path: Path, monkeypatch) -> None:
    """The study from scratch here, with the hub at a closed port and the git host at a path that is not there:
    each hub download is a problem, the git host too, and the GPU one exactly when NVML finds no GPU (this test
    machine has none)."""
    from huggingface_hub import constants

    monkeypatch.setattr(constants, "ENDPOINT", CLOSED_PORT)
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path / "hf" / "hub"))
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    for key, value in NO_GIT_HOST.items():
        monkeypatch.setenv(key, value)
    rows, seconds = timed_preflight(study, REPO, tmp_path, _from_scratch(study))
    failed = {r.check: r for r in rows if r.ok is False}
    assert {"hub Qwen/Qwen3.5-9B", "hub z-lab/Qwen3.5-9B-DFlash", "hub openai/gsm8k", "git host"} <= set(failed)
    assert "https://github.com/ggml-org/llama.cpp unreachable" in failed["git host"].found
    assert f"unreachable at {CLOSED_PORT}" in failed["hub Qwen/Qwen3.5-9B"].found
    if device_info()["nvml"] != "ok":
        assert "no NVIDIA GPU" in failed["GPU"].found
    table, _ = report(rows, 0, seconds)
    assert all(r.check in table for r in rows)


def _run(tmp_path: Path, *args: str, configs: tuple[str, ...] = ()) -> tuple[int, str]:
    env = {"HF_ENDPOINT": CLOSED_PORT, "HF_HOME": str(tmp_path / "hf"), "HF_HUB_OFFLINE": "0", **NO_GIT_HOST}
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
