"""Run cells: a server (fresh per cell, or one warm server for a sequence of cells: a task's repeats, or every cell
of a condition), the requests, a complete record per cell; contended attempts (another process on the GPU, or using
the CPU) and failed ones (the server died, its port was taken, the connection broke) are recorded and run again;
failures name the cell and the log."""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import os
import platform
import subprocess
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import httpx

from .client import RequestRefused, run_exchange
from .contention.devices import DeviceError, assigned_devices
from .contention.judge import judge
from .contention.nvml import device_info
from .contention.watch import GpuWatch
from .core.files import read_json
from .core.matrix import Cell
from .gsm8k import score_gsm8k
from .parse import derived_figures, parse_speculative_log
from .server import RunningServer, ServerError, check_identity, exit_description, llama_server

RECORD_VERSION = 6  # 5: cell.machine; 6: server.scope


class CellError(RuntimeError):
    """A cell failed; the message is one line naming the cell and the log to read."""


@dataclass(frozen=True)
class Setup:
    """What every cell of one condition needs, resolved by the workflow (``server_args``: the argv after the
    binary, model and draft paths included; the cell adds only the loopback host and the port). Prompts and
    max_tokens are keyed by task, so one server can answer cells of several tasks; ``scope`` says what one server
    answers: 'fresh' (one cell), 'task' (a task's repeats at one temperature) or 'condition' (every cell of it)."""

    condition: str
    server_binary: Path
    build_manifest: dict[str, Any]
    model_path: Path
    model_manifest: dict[str, Any]
    draft_path: Path | None
    draft_manifest: dict[str, Any] | None
    prompt_manifests: dict[str, dict[str, Any]]  # task -> its prompt manifest
    server_args: list[str]
    requires: list[str]
    max_tokens: dict[str, int]  # task -> its max_tokens
    reasoning: bool
    base_seed: int
    startup_timeout_s: float
    request_timeout_s: float
    server_log: Path
    gpu_samples: Path
    code_fingerprint: str
    sample_interval_s: float = 2.0
    max_attempts: int = 3
    max_load_per_cpu: float | None = None
    max_foreign_cpu: float | None = None
    scope: str = "fresh"
    watched_devices: tuple[str, ...] | None = None  # UUIDs of the cell's GPUs (None: all), set by run_cells


# The Setup fields resolved once per condition (rule condition_setup writes them as JSON); a cell job adds its
# tasks' prompt manifests (which carry max_tokens), its logs and its scope.
_PATH_FIELDS = ("server_binary", "model_path", "draft_path")


def condition_setup(condition: str, build_dir: Path, model_manifest: dict[str, Any],
                    draft_manifest: dict[str, Any] | None, code_manifest: dict[str, Any],
                    settings: dict[str, Any]) -> dict[str, Any]:
    """What every cell of a condition is served with, as JSON: the binary and its build, the verified models, the
    code's fingerprint, and ``settings`` (server_args, requires and the measurement settings of Setup)."""
    return {
        "condition": condition,
        "server_binary": str(build_dir / "llama-server"),
        "build_manifest": read_json(build_dir / "manifest.json"),
        "model_path": model_manifest["path"],
        "model_manifest": model_manifest,
        "draft_path": draft_manifest["path"] if draft_manifest else None,
        "draft_manifest": draft_manifest,
        "code_fingerprint": code_manifest["fingerprint"],
        **settings,
    }


def job_setup(served: dict[str, Any], prompt_manifests: list[dict[str, Any]], *, scope: str,
              server_log: Path, gpu_samples: Path) -> Setup:
    """A cell job's Setup: its condition's setup file, the prompt manifests of its tasks, its own logs."""
    fields = {k: Path(v) if k in _PATH_FIELDS and v is not None else v for k, v in served.items()}
    return Setup(**fields,
                 prompt_manifests={m["task"]: m for m in prompt_manifests},
                 max_tokens={m["task"]: m["max_tokens"] for m in prompt_manifests},
                 scope=scope, server_log=server_log, gpu_samples=gpu_samples)


def _now() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="milliseconds")


def check_requirements(setup: Setup, label: str) -> None:
    """Refuse a condition that needs the model's MTP layer when the model file has none, before any server."""
    if "mtp" in setup.requires and not setup.model_manifest.get("mtp", {}).get("present", False):
        raise CellError(
            f"cell {label}: condition '{setup.condition}' needs the model's MTP layer, "
            f"but {setup.model_path} has none (see its model manifest)"
        )


# What a batch scheduler tells its job about itself (absent when not run by one).
SCHEDULER_ENV = ("SLURM_JOB_ID", "SLURM_JOB_PARTITION", "SLURMD_NODENAME", "SLURM_CLUSTER_NAME", "SLURM_CPUS_PER_TASK",
                 "SLURM_JOB_GPUS", "CUDA_VISIBLE_DEVICES")


def machine_info(gpu: dict[str, Any], devices: list[dict[str, Any]]) -> dict[str, Any]:
    """Where the cells ran: host, CPU count, the scheduler's job (SLURM), the GPU devices as NVML reports them
    (``gpu``: ``device_info()``) and which of them were the cell's (``devices``: UUIDs; empty without a GPU)."""
    return {
        "hostname": platform.node(),
        "machine": platform.machine(),
        "cpu_count": os.cpu_count(),
        "scheduler": {name: os.environ[name] for name in SCHEDULER_ENV if name in os.environ},
        "gpu": gpu,
        "devices": [{key: d.get(key) for key in ("index", "uuid", "name", "compute_capability")} for d in devices],
    }


def _provenance(setup: Setup) -> dict[str, Any]:
    return {
        "llama_cpp": {
            key: setup.build_manifest.get(key) for key in ("source", "cmake_args", "cuda", "compiler", "server_version")
        },
        "server_binary": {
            "path": str(setup.server_binary),
            "sha256": setup.build_manifest["binaries"]["llama-server"]["sha256"],
        },
        "model": {"path": str(setup.model_path), "sha256": setup.model_manifest["sha256"]},
        "draft": (
            {"path": str(setup.draft_path), "sha256": setup.draft_manifest["sha256"]}
            if setup.draft_path is not None and setup.draft_manifest is not None
            else None
        ),
    }


class AttemptFailed(RuntimeError):
    """One attempt failed in a way a new server may not (it died, the port was taken, the connection broke)."""

    def __init__(self, reason: str, server_pid: int | None) -> None:
        super().__init__(reason)
        self.reason, self.server_pid = reason, server_pid


def _request_failure(error: Exception, server: RunningServer) -> str:
    """Why a request failed: the server died (and how), or the error itself."""
    code = server.process.poll()
    if code is None:  # it may be dying right now: give it a moment to say so
        with contextlib.suppress(subprocess.TimeoutExpired):
            code = server.process.wait(timeout=1.0)
    if code is not None:
        return f"llama-server (pid {server.pid}) {exit_description(code)} during the request"
    return f"the request to llama-server (pid {server.pid}) failed: {type(error).__name__}: {error}"


def _attempt(setup: Setup, cells: list[Cell], attempt: int) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """One server for ``cells`` in order (one request each), watched from before start to after stop; only the
    cell's own devices (``setup.watched_devices``) are judged.

    Raises AttemptFailed when the server could not be started, was not ours, or died or broke off mid-request;
    CellError when the server refused the request itself (a bad request fails the same way on any server)."""
    results: list[dict[str, Any]] = []
    server_info: dict[str, Any] = {}
    scratch = setup.gpu_samples.with_name(f".{setup.gpu_samples.name}.attempt{attempt}")
    watch = GpuWatch(scratch, interval_s=setup.sample_interval_s)
    watch.sample_now("before")
    header = f"--- specbench: attempt {attempt} of {setup.max_attempts}, {_now()} ---"
    try:
        with watch:
            t0 = time.perf_counter()
            with llama_server(setup.server_binary, setup.server_args, setup.server_log,
                              setup.startup_timeout_s, log_header=header) as server:
                ready_s = time.perf_counter() - t0
                server_info = {"pid": server.pid, "port": server.port, "argv": server.argv,
                               "started_at": dt.datetime.fromtimestamp(server.started_at, dt.UTC).isoformat()}
                for position, cell in enumerate(cells, start=1):
                    check_identity(server)  # the port is still this server's (it may have died and been taken)
                    started_at, c0 = _now(), time.perf_counter()
                    watch.sample_now("during", mark="request-start")
                    try:
                        exchange = run_exchange(
                            server.url,
                            setup.prompt_manifests[cell.task]["messages"],
                            reasoning=setup.reasoning,
                            max_tokens=setup.max_tokens[cell.task],
                            temperature=cell.temperature,
                            seed=cell.seed(setup.base_seed),
                            timeout_s=setup.request_timeout_s,
                        )
                    except RequestRefused as error:
                        raise CellError(f"cell {cell.label}: {error}; read {setup.server_log}") from error
                    except (httpx.HTTPError, ValueError, OSError) as error:
                        raise AttemptFailed(_request_failure(error, server), server.pid) from error
                    watch.sample_now("during", mark="request-end")
                    wall_s = time.perf_counter() - c0 + (ready_s if position == 1 else 0.0)
                    results.append({"cell": cell, "exchange": exchange, "position": position, "wall_s": wall_s,
                                    "ready_s": ready_s if position == 1 else 0.0, "started_at": started_at,
                                    "ended_at": _now(), "loadavg": list(os.getloadavg())})
    except ServerError as error:
        raise AttemptFailed(error.reason, server_info.get("pid")) from error
    except (CellError, AttemptFailed):
        raise
    except Exception as error:  # an I/O failure of our own mid-cell: name the cell and the log
        raise CellError(f"cell {cells[0].label}: {type(error).__name__}: {error}; read {setup.server_log}") from error
    finally:
        _keep_samples(setup.gpu_samples, watch, attempt)
        with contextlib.suppress(OSError):  # a read-only folder: the record's own write reports it
            scratch.unlink(missing_ok=True)
    verdict = judge(watch.samples, {server_info["pid"]}, nvml_available=watch.nvml_available,
                    max_load_per_cpu=setup.max_load_per_cpu, max_foreign_cpu=setup.max_foreign_cpu,
                    watched=setup.watched_devices)
    return [{**r, "server": server_info} for r in results], verdict.to_json()


def _keep_samples(path: Path, watch: GpuWatch, attempt: int) -> None:
    """Append an attempt's samples to the cell's samples file (JSON lines, each tagged with its attempt)."""
    with open(path, "a", encoding="utf-8") as out:
        for sample in watch.samples:
            out.write(json.dumps({"attempt": attempt, "nvml": watch.nvml_available, **sample.to_json()}) + "\n")


def task_check(prompt_manifest: dict[str, Any], response: dict[str, Any]) -> dict[str, Any] | None:
    """Score a dataset task's answer (GSM8K) against the references in its prompt manifest; None for other tasks."""
    rows = prompt_manifest.get("dataset")
    if not rows:
        return None
    complete = response.get("stop_type") not in ("limit", None)
    return score_gsm8k(response.get("content", ""), [row["reference"] for row in rows], complete=complete)


def _record(setup: Setup, result: dict[str, Any], attempt: int, rejected: list[dict[str, Any]],
            watch_verdict: dict[str, Any], sequence_length: int, shared: dict[str, Any]) -> dict[str, Any]:
    """One cell's record; ``shared`` holds what is the same for every cell of the run (log, provenance, machine)."""
    cell: Cell = result["cell"]
    exchange = result["exchange"]
    response = exchange.response
    figures = derived_figures(response["timings"])
    server_ms = figures["prompt_ms"] + figures["decode_ms"]
    return {
        "record_version": RECORD_VERSION,
        "code_fingerprint": setup.code_fingerprint,
        "cell": {"machine": cell.machine, "task": cell.task, "condition": cell.condition,
                 "temperature": cell.temperature, "repeat": cell.repeat, "label": cell.label},
        "seed": cell.seed(setup.base_seed),
        "attempt": attempt,
        "rejected_attempts": rejected,
        "contention": watch_verdict,
        "task_check": task_check(setup.prompt_manifests[cell.task], response),
        "gpu_samples": str(setup.gpu_samples),
        "server": {
            **result["server"],
            "shared": sequence_length > 1,
            "scope": setup.scope,
            "position": result["position"],
            "sequence_length": sequence_length,
            "log": str(setup.server_log),
            "speculative": shared["speculative"],
            "generation_settings": response.get("generation_settings", {}),
        },
        "request": {
            "apply_template": exchange.template_request,
            "prompt": exchange.prompt,
            "completion": exchange.request,
        },
        "response": {
            "content": response.get("content", ""),
            "tokens": response.get("tokens", []),
            "stop_type": response.get("stop_type"),
            "timings": response["timings"],
            "tokens_predicted": response.get("tokens_predicted"),
            "tokens_evaluated": response.get("tokens_evaluated"),
            "client_timing": exchange.client_timing,
        },
        "figures": {
            **figures,
            "cell_wall_s": result["wall_s"],
            "server_ready_s": result["ready_s"],
            "request_wall_s": exchange.client_timing["request_wall_s"],
            "client_tokens_per_s": exchange.client_timing["decode_tokens_per_s"],
            "overhead_s": result["wall_s"] - server_ms / 1000.0,
            "loadavg_1m_at_end": result["loadavg"][0],
        },
        "provenance": {**shared["provenance"], "prompt_sha256": setup.prompt_manifests[cell.task]["sha256"]},
        "machine": shared["machine"],
        "started_at": result["started_at"],
        "ended_at": result["ended_at"],
    }


def _last_log_section(log_text: str) -> str:
    """The part of a server log written by the last attempt (attempts are separated by specbench header lines)."""
    marker = "--- specbench: attempt "
    at = log_text.rfind(marker)
    return log_text if at < 0 else log_text[at:]


def run_cells(setup: Setup, cells: list[Cell]) -> list[dict[str, Any]]:
    """Run ``cells`` on one server, in the order given (one cell: the fresh-server case); measure again after a
    contended or failed attempt, up to ``max_attempts``; return the records (each says which attempt it is and why
    others were not)."""
    check_requirements(setup, cells[0].label)
    unknown = sorted({c.task for c in cells} - (set(setup.prompt_manifests) & set(setup.max_tokens)))
    if unknown:
        raise CellError(f"cell {cells[0].label}: no prompt or max_tokens given for task(s) {unknown}")
    gpu = device_info()
    try:  # the GPU(s) SLURM or the user assigned, which the build must have code for
        devices = assigned_devices(gpu, os.environ, setup.build_manifest.get("cuda_architectures"),
                                   bool(setup.build_manifest.get("cuda")))
    except DeviceError as error:
        raise CellError(f"cell {cells[0].label}: {error}") from error
    setup = replace(setup, watched_devices=tuple(str(d["uuid"]) for d in devices) or None)
    setup.gpu_samples.unlink(missing_ok=True)
    setup.server_log.parent.mkdir(parents=True, exist_ok=True)
    setup.server_log.write_bytes(b"")  # attempts append to it
    rejected: list[dict[str, Any]] = []
    for attempt in range(1, setup.max_attempts + 1):
        try:
            results, verdict = _attempt(setup, cells, attempt)
        except AttemptFailed as failure:
            rejected.append({"attempt": attempt, "outcome": "failed", "reason": failure.reason,
                             "foreign_pids": [], "server_pid": failure.server_pid, "tokens_per_s": []})
            print(f"cell {cells[0].label}: attempt {attempt} of {setup.max_attempts} failed: {failure.reason}",
                  flush=True)
            continue
        if not verdict["contended"]:
            log_text = _last_log_section(setup.server_log.read_text(encoding="utf-8", errors="replace"))
            shared = {"speculative": parse_speculative_log(log_text), "provenance": _provenance(setup),
                      "machine": machine_info(gpu, devices)}
            return [_record(setup, r, attempt, rejected, verdict, len(cells), shared) for r in results]
        rejected.append({"attempt": attempt, "outcome": "contended", "reason": verdict["reason"],
                         "foreign_pids": verdict["foreign_pids"],
                         "server_pid": results[0]["server"]["pid"] if results else None,
                         "tokens_per_s": [r["exchange"].response["timings"]["predicted_per_second"] for r in results]})
        print(f"cell {cells[0].label}: attempt {attempt} of {setup.max_attempts} rejected: {verdict['reason']}",
              flush=True)
    raise CellError(_give_up_message(setup, cells[0].label, rejected))


def _give_up_message(setup: Setup, label: str, rejected: list[dict[str, Any]]) -> str:
    """One line: why the last attempt was not kept, how many were made, and the file to read."""
    last, n = rejected[-1], len(rejected)
    if last["outcome"] == "failed":
        earlier = [r["reason"] for r in rejected[:-1]]
        same = earlier and all(reason == last["reason"] for reason in earlier)
        history = ("" if not earlier else "; earlier attempts failed the same way" if same
                   else "; earlier: " + " / ".join(f"attempt {r['attempt']} {r['outcome']}: {r['reason']}"
                                                   for r in rejected[:-1]))
        return f"cell {label}: {last['reason']} (attempt {n} of {n}{history}); read {setup.server_log}"
    if all(r["outcome"] == "contended" for r in rejected):
        foreign = sorted({pid for r in rejected for pid in r["foreign_pids"]})
        return (f"cell {label}: all {n} attempts were contended (foreign processes {foreign}: {last['reason']}); "
                f"see {setup.gpu_samples}")
    failed = sum(r["outcome"] == "failed" for r in rejected)
    return (f"cell {label}: no clean attempt in {n} ({failed} failed, {n - failed} contended; last: {last['reason']}); "
            f"see {setup.gpu_samples} and {setup.server_log}")
