"""Run one cell: a fresh server, one request, a complete record (or an error naming the cell and its log)."""

from __future__ import annotations

import datetime as dt
import os
import platform
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .cells import Cell
from .client import run_exchange
from .parse import derived_figures, parse_speculative_log
from .server import ServerError, llama_server

RECORD_VERSION = 1


class CellError(RuntimeError):
    """A cell failed; the message is one line naming the cell and the log to read."""


@dataclass(frozen=True)
class CellInputs:
    """Everything a cell needs, resolved by the workflow."""

    cell: Cell
    server_binary: Path
    build_manifest: dict[str, Any]
    model_path: Path
    model_manifest: dict[str, Any]
    draft_path: Path | None
    draft_manifest: dict[str, Any] | None
    prompt_manifest: dict[str, Any]
    shared_args: list[str]
    condition_args: list[str]
    requires: list[str]
    max_tokens: int
    reasoning: bool
    base_seed: int
    startup_timeout_s: float
    request_timeout_s: float
    server_log: Path


def _now() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="milliseconds")


def condition_args(args: list[str], draft_path: Path | None) -> list[str]:
    """The condition's flags with ``{draft}`` replaced by the draft GGUF path."""
    if any("{draft}" in a for a in args) and draft_path is None:
        raise ValueError("condition uses {draft} but no draft model was given")
    return [a.replace("{draft}", str(draft_path)) for a in args]


def check_requirements(inputs: CellInputs) -> None:
    """Refuse a condition whose model needs (MTP layer, draft) are not met, before any server starts."""
    if "mtp" in inputs.requires and not inputs.model_manifest.get("mtp", {}).get("present", False):
        raise CellError(
            f"cell {inputs.cell.label}: condition '{inputs.cell.condition}' needs the model's MTP layer, "
            f"but {inputs.model_path} has none (see its model manifest)"
        )
    if "draft" in inputs.requires and inputs.draft_path is None:
        raise CellError(f"cell {inputs.cell.label}: condition '{inputs.cell.condition}' needs a draft model")


def machine_info() -> dict[str, Any]:
    """Where the cell ran (the GPU watch adds device details where NVML exists)."""
    load = os.getloadavg() if hasattr(os, "getloadavg") else None
    return {
        "hostname": platform.node(),
        "machine": platform.machine(),
        "cpu_count": os.cpu_count(),
        "loadavg_at_start": list(load) if load else None,
    }


def run_cell(inputs: CellInputs) -> dict[str, Any]:
    """Start the server, send the request, stop the server, and return the cell's record."""
    cell = inputs.cell
    check_requirements(inputs)
    seed = cell.seed(inputs.base_seed)
    args = condition_args(inputs.condition_args, inputs.draft_path)
    started_at = _now()
    t0 = time.perf_counter()
    try:
        with llama_server(
            inputs.server_binary,
            inputs.model_path,
            inputs.shared_args,
            args,
            inputs.server_log,
            inputs.startup_timeout_s,
        ) as server:
            ready_s = time.perf_counter() - t0
            exchange = run_exchange(
                server.url,
                inputs.prompt_manifest["messages"],
                reasoning=inputs.reasoning,
                max_tokens=inputs.max_tokens,
                temperature=cell.temperature,
                seed=seed,
                timeout_s=inputs.request_timeout_s,
            )
            server_info = {"pid": server.pid, "port": server.port, "argv": server.argv}
    except ServerError as error:
        raise CellError(f"cell {cell.label}: {error}") from error
    except Exception as error:  # any request failure: name the cell and the log
        raise CellError(f"cell {cell.label}: {type(error).__name__}: {error}; read {inputs.server_log}") from error
    wall_s = time.perf_counter() - t0
    ended_at = _now()
    log_text = inputs.server_log.read_text(encoding="utf-8", errors="replace")
    response = exchange.response
    figures = derived_figures(response["timings"])
    server_ms = figures["prompt_ms"] + figures["decode_ms"]
    return {
        "record_version": RECORD_VERSION,
        "cell": {
            "task": cell.task,
            "condition": cell.condition,
            "temperature": cell.temperature,
            "repeat": cell.repeat,
            "label": cell.label,
        },
        "seed": seed,
        "attempt": 1,
        "rejected_attempts": [],
        "server": {
            **server_info,
            "log": str(inputs.server_log),
            "speculative": parse_speculative_log(log_text),
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
        },
        "figures": {
            **figures,
            "cell_wall_s": wall_s,
            "server_ready_s": ready_s,
            "request_wall_s": exchange.request_wall_s,
            "overhead_s": wall_s - server_ms / 1000.0,
        },
        "provenance": {
            "llama_cpp": {
                key: inputs.build_manifest.get(key)
                for key in ("source", "cmake_args", "cuda", "compiler", "server_version")
            },
            "server_binary": {
                "path": str(inputs.server_binary),
                "sha256": inputs.build_manifest["binaries"]["llama-server"]["sha256"],
            },
            "model": {"path": str(inputs.model_path), "sha256": inputs.model_manifest["sha256"]},
            "draft": (
                {"path": str(inputs.draft_path), "sha256": inputs.draft_manifest["sha256"]}
                if inputs.draft_path is not None and inputs.draft_manifest is not None
                else None
            ),
            "prompt_sha256": inputs.prompt_manifest["sha256"],
        },
        "machine": machine_info(),
        "started_at": started_at,
        "ended_at": ended_at,
    }
