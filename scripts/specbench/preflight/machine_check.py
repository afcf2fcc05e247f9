"""The preflight as the Snakefile's ``onstart`` runs it: what the planned jobs need (needs.py) against this machine
(facts.py, or fakes in tests), one table of the checks, one line per problem with what to do."""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from specbench.preflight import facts
from specbench.preflight.checks import (
    TOOLKIT_CHECK,
    TOOLKIT_NEEDED,
    Row,
    check_disk,
    check_git_host,
    check_gpu,
    check_hub,
    check_toolkit_driver,
    check_tools,
    check_writable,
)
from specbench.preflight.facts import GitAnswer, HubAnswer
from specbench.preflight.needs import needs
from specbench.preflight.tools import BACKEND_TOOLS, GIT, Tool, git_urls
from specbench.preflight.writes import Download, Job, StorageFacts, hub_downloads

PREFIX = "specbench preflight"
DEFAULT_HEADROOM = 0.1


def _locate(tool: Tool) -> str | None:
    return facts.locate(tool.names, tool.paths, tool.env, tool.given)


def _endpoint() -> str:
    from huggingface_hub import constants

    return str(constants.ENDPOINT)


@dataclass(frozen=True)
class Machine:
    """Where each fact comes from: this machine by default; tests pass fakes."""

    free_space: Callable[[Path], tuple[str, float]] = facts.free_space
    writable: Callable[[Path], bool] = facts.writable
    size_of: Callable[[Path], float | None] = facts.size_of
    locate: Callable[[Tool], str | None] = _locate
    gpus: Callable[[], Mapping[str, Any]] = facts.gpus
    nvcc_version: Callable[[str], str | None] = facts.nvcc_version
    ask_hub: Callable[[Sequence[Download]], Mapping[Download, HubAnswer]] = facts.ask_hub_all
    ask_git: Callable[[Sequence[str]], Mapping[str, GitAnswer]] = facts.ask_git_all
    hf_cache: Callable[[], Path] = facts.hub_cache
    xet_cache: Callable[[], Path] = facts.xet_cache
    xet_limit: Callable[[], float] = facts.xet_limit
    offline: Callable[[], bool] = facts.offline
    token: Callable[[], bool] = facts.token_set
    endpoint: Callable[[], str] = _endpoint
    env: Mapping[str, str] = field(default_factory=lambda: os.environ)


def preflight(
    config: Mapping[str, Any],
    base: Path,
    workdir: Path,
    jobs: Sequence[Job],
    *,
    local: bool = True,
    machine: Machine | None = None,
) -> list[Row]:
    """The checks of what ``jobs`` (rule name, wildcards) need, on ``machine``; ``local`` False under a cluster
    executor (the build and the cells then run on other nodes, which check their own toolkit and GPU)."""
    machine = machine or Machine()
    cache = machine.hf_cache()
    downloads = hub_downloads(config, base, jobs)
    offline = machine.offline()
    asked = [d for d in downloads if not facts.in_cache(cache, d)]
    urls = git_urls(config, jobs)
    git_found = bool(urls) and machine.locate(GIT) is not None
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="specbench-preflight-git") as pool:
        git_asked = pool.submit(machine.ask_git, urls) if git_found else None  # beside the hub
        answers = {} if offline or not asked else dict(machine.ask_hub(asked))
        git_answers = dict(git_asked.result()) if git_asked else {}
    hub_sizes = {
        d.repo: a.size for d, a in answers.items() if a.status == "ok" and a.size is not None and d.repo_type == "model"
    }
    storage = StorageFacts(
        hub_sizes=hub_sizes,
        cached={d.repo: facts.cached_bytes(cache, d) for d in downloads},
        hf_cache=cache,
        xet_cache=machine.xet_cache(),
        size_of=machine.size_of,
        xet_limit=machine.xet_limit(),
    )
    need = needs(config, base, workdir, jobs, storage)
    headroom = float((config.get("preflight") or {}).get("headroom", DEFAULT_HEADROOM))
    tools = check_tools(need.tools, machine.locate)
    if not local:
        tools = [
            row if row.check == "git" else Row(row.check, row.needed, "checked by the build job on its node", None)
            for row in tools
        ]
    nvcc_tool = next((t for t in need.tools if t.name == BACKEND_TOOLS["cuda"].name), None)
    gpu_info = machine.gpus() if local and (need.gpu is not None or nvcc_tool is not None) else {}
    return [
        *check_writable(need.folders, machine.writable),
        *check_disk(need.writes, machine.free_space, headroom),
        *tools,
        *_toolkit_driver(nvcc_tool, gpu_info, local, machine),
        *check_gpu(need.gpu, gpu_info, machine.env.get("CUDA_VISIBLE_DEVICES"), local),
        *check_git_host(urls, git_answers, git_found),
        *check_hub(
            downloads,
            answers,
            lambda d: facts.in_cache(cache, d),
            offline,
            machine.token(),
            machine.endpoint(),
        ),
    ]


def _toolkit_driver(tool: Tool | None, info: Mapping[str, Any], local: bool, machine: Machine) -> list[Row]:
    """The nvcc a cuda build compiles with here against the driver (no row without a cuda build to compile); nvcc
    is asked for its version only when NVML names the driver's."""
    if tool is None:
        return []
    if not local:
        why = "not checked here: the build job compiles on its node (the install refuses a build that lists no GPU)"
        return [Row(TOOLKIT_CHECK, TOOLKIT_NEEDED, why, None)]
    nvcc = machine.locate(tool)
    driver = info.get("nvml") == "ok" and info.get("cuda_driver_version")
    toolkit = machine.nvcc_version(nvcc) if nvcc and driver else None
    return check_toolkit_driver(nvcc, toolkit, info, bool(tool.given))


STATUS = {True: "ok", False: "PROBLEM", None: "-"}


def table(rows: Sequence[Row], title: str) -> str:
    """The checks as one table: status, check, what was found, what the run needs."""
    header = ("", "check", "found", "needs")
    lines = [(STATUS[r.ok], r.check, r.found, r.needed) for r in rows]
    widths = [max(len(line[i]) for line in [header, *lines]) for i in range(3)]
    out = [title]
    for line, row in zip([header, *lines], [None, *rows], strict=True):
        out.append("  " + "  ".join(cell.ljust(widths[i]) if i < 3 else cell for i, cell in enumerate(line)).rstrip())
        out.extend(f"  {'':{widths[0]}}    {part}" for part in (row.detail if row else ()))
    return "\n".join(out)


def problems(rows: Sequence[Row]) -> list[str]:
    """One line per problem: the check, what was found, what to do."""
    return [f"{r.check}: {r.found}. What to do: {r.fix}" for r in rows if r.ok is False]


def report(rows: Sequence[Row], planned: int, seconds: float) -> tuple[str, list[str]]:
    """The table (titled with the number of planned jobs and the time the checks took) and the problem lines."""
    title = f"{PREFIX}: {len(rows)} checks for {planned} planned jobs ({seconds:.1f} s)"
    return table(rows, title), problems(rows)


def timed_preflight(*args: Any, **kwargs: Any) -> tuple[list[Row], float]:
    """``preflight`` and the seconds it took."""
    started = time.monotonic()
    rows = preflight(*args, **kwargs)
    return rows, time.monotonic() - started
