"""A cell's record: the coordinates, the request as sent, the response as received (with the arrival of every streamed
chunk), the wall times, the speculative lines of the server log and its counters before and after the request
(``server.metrics``), the references the answer is scored against later, what served it and where; written once
per cell by the runner. Nothing here interprets: scores and figures are the table's (analysis)."""

from __future__ import annotations

import os
import platform
from typing import Any

from specbench.contention.samples import Verdict
from specbench.core.config.chat_template import record_entry
from specbench.core.plan.cells import Cell
from specbench.core.plan.coordinates import LAYOUT
from specbench.core.records.log_lines import is_kept
from specbench.core.records.version import RECORD_VERSION
from specbench.engines.registry import engine
from specbench.measure.condition_setup import Setup

# What a batch scheduler tells its job about itself (absent when not run by one).
SCHEDULER_ENV = (
    "SLURM_JOB_ID",
    "SLURM_JOB_PARTITION",
    "SLURMD_NODENAME",
    "SLURM_CLUSTER_NAME",
    "SLURM_CPUS_PER_TASK",
    "SLURM_JOB_GPUS",
    "CUDA_VISIBLE_DEVICES",
)


def machine_info(
    gpu: dict[str, Any],
    devices: list[dict[str, Any]],
    backend: str = "cpu",
    llama_devices: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """Where the cells ran: host, CPU count, the scheduler's job (SLURM), the GPU devices as NVML reports them
    (``gpu``: ``device_info()``) and which of them were the cell's (``devices``: UUIDs; empty without a GPU), the
    build's backend and the devices its ``llama-server --list-devices`` listed here (``llama_devices``)."""
    return {
        "hostname": platform.node(),
        "machine": platform.machine(),
        "cpu_count": os.cpu_count(),
        "scheduler": {name: os.environ[name] for name in SCHEDULER_ENV if name in os.environ},
        "gpu": gpu,
        "devices": [{key: d.get(key) for key in ("index", "uuid", "name", "compute_capability")} for d in devices],
        "backend": backend,
        "llama_devices": list(llama_devices or []),
    }


def provenance(setup: Setup) -> dict[str, Any]:
    """What served the cell: the engine's own part (the llama.cpp build and its binary, the vLLM environment and the
    Hugging Face checkpoint it serves, nothing of ours for an endpoint), the sampling every request stated (each
    setting's value and where it came from) and the models as this run verified them (an endpoint's weights are its
    own: ``server.endpoint`` says what it reported)."""
    return {
        "engine": setup.engine,
        **engine(setup.engine).provenance(setup),
        "sampling": setup.sampling,
        "model": {"path": str(setup.model_path), "sha256": setup.model_manifest["sha256"]},
        "draft": (
            {"path": str(setup.draft_path), "sha256": setup.draft_manifest["sha256"]}
            if setup.draft_path is not None and setup.draft_manifest is not None
            else None
        ),
    }


MAX_LOG_LINES = 400


def speculative_lines(log_text: str) -> list[str]:
    """The lines of a server log (one attempt's section) that mention speculation or the sampling defaults, as
    written (at most ``MAX_LOG_LINES``): what the table reads the effective settings and the acceptance from."""
    lines = [line.rstrip() for line in log_text.splitlines() if is_kept(line)]
    return lines[:MAX_LOG_LINES]


def references(prompt_manifest: dict[str, Any]) -> list[dict[str, Any]] | None:
    """The reference answers of the dataset rows a prompt asked about (GSM8K), None for a task without a dataset."""
    rows = prompt_manifest.get("dataset")
    return [{"row": row.get("row"), "reference": row["reference"]} for row in rows] if rows else None


def cell_record(
    setup: Setup,
    result: dict[str, Any],
    attempt: int,
    rejected: list[dict[str, Any]],
    watch_verdict: Verdict,
    sequence_length: int,
    shared: dict[str, Any],
) -> dict[str, Any]:
    """One cell's record: what was measured, nothing derived from it; ``shared`` holds what is the same for every
    cell of the attempt (the log's speculative lines, provenance, machine, the waits for a quiet machine before it)."""
    cell: Cell = result["cell"]
    exchange = result["exchange"]
    response = exchange.response
    return {
        "record_version": RECORD_VERSION,
        "code_fingerprint": setup.code_fingerprint,
        "cell": {**LAYOUT.record(cell.values), "label": cell.label},  # the build only in a run with builds
        "seed": cell.seed(setup.base_seed),
        "attempt": attempt,
        "rejected_attempts": rejected,
        "quiet_waits": shared["quiet_waits"],
        "contention": watch_verdict.to_json(),
        "references": references(setup.prompt_manifests[cell.key]),
        "gpu_samples": str(setup.gpu_samples),
        "server": {
            **result["server"],
            "shared": sequence_length > 1,
            "scope": setup.scope,
            "position": result["position"],
            "sequence_length": sequence_length,
            "log": str(setup.server_log),
            "log_lines": shared["log_lines"],
            "metrics": result["metrics"],
            "generation_settings": response.get("generation_settings", {}),
        },
        "request": {
            "chat_template": record_entry(setup.chat_template, setup.model_manifest.get("chat_template")),
            "apply_template": exchange.template_request,
            "reasoning_check": exchange.reasoning_check,
            "prompt": exchange.prompt,
            "completion": exchange.request,
        },
        "response": {**response_fields(response), "client_timing": exchange.client_timing},
        **({"load": load_section(result["together"])} if result.get("together") is not None else {}),
        "timing": {
            "cell_wall_s": result["wall_s"],
            "server_ready_s": result["ready_s"],
            "request_wall_s": exchange.client_timing["request_wall_s"],
            "loadavg_1m_at_end": result["loadavg"][0],
        },
        "provenance": {**shared["provenance"], "prompt_sha256": setup.prompt_manifests[cell.key]["sha256"]},
        "machine": shared["machine"],
        "started_at": result["started_at"],
        "ended_at": result["ended_at"],
    }


# What an endpoint's chat stream may carry beside its text, kept as sent: the usage, llama-server's timings, vLLM's
# per-request metrics (drafted and accepted tokens), the prompt's token ids
CHAT_FIELDS = ("usage", "timings", "metrics", "sglext", "prompt_token_ids", "model", "system_fingerprint")


def response_fields(response: dict[str, Any]) -> dict[str, Any]:
    """The response as received: llama-server's ``/completion`` fields, or an endpoint's chat stream joined
    (``api`` says which)."""
    if "finish_reason" in response:
        return {
            "api": "chat-completions",
            "content": response.get("content", ""),
            "tokens": response.get("tokens", []),
            "token_ids_sent": response.get("token_ids_sent", False),
            "finish_reason": response["finish_reason"],
            **{key: response.get(key) for key in CHAT_FIELDS},
        }
    return {
        "api": "completion",
        "content": response.get("content", ""),
        "tokens": response.get("tokens", []),
        "stop_type": response.get("stop_type"),
        "timings": response["timings"],
        "tokens_predicted": response.get("tokens_predicted"),
        "tokens_evaluated": response.get("tokens_evaluated"),
    }


def load_section(exchanges: list[Any]) -> dict[str, Any]:
    """A load point's requests (``exchanges``: client order; each client sent the cell's request, ``request``): each
    one's response as received, its slot where the server says, and the client's timing of it (the first is also
    the cell's ``response``)."""
    return {
        "concurrency": len(exchanges),
        "requests": [
            {
                "client": client,
                "slot": exchange.response.get("id_slot"),
                "response": response_fields(exchange.response),
                "client_timing": exchange.client_timing,
            }
            for client, exchange in enumerate(exchanges)
        ],
    }


def last_log_section(log_text: str) -> str:
    """The part of a server log written by the last attempt (attempts are separated by specbench header lines)."""
    marker = "--- specbench: attempt "
    at = log_text.rfind(marker)
    return log_text if at < 0 else log_text[at:]
