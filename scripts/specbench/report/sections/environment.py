"""What the report says about where the run happened: the environment block (device, driver, llama.cpp, models,
the chat template that rendered the prompts, software, dates), the memory-bandwidth ceiling of the device, and the
configured cells that have no row."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from specbench.core.config.backends import WATCH_CPU, WATCH_NONE, WATCH_NVML, backend_of
from specbench.core.config.chat_template import describe

# What each way of watching a cell's GPU means, for the report (core.config.backends.watch_of)
WATCH_TEXT = {
    WATCH_NVML: "every GPU process seen through NVML",
    WATCH_NONE: "GPU not watched (no per-process GPU accounting on this backend, or no NVML)",
    WATCH_CPU: "CPU build: no GPU used",
}


def missing_cells(expected: Sequence[str], cells: pd.DataFrame) -> list[str]:
    """Cells the configuration asks for that have no row in the cell table."""
    present = set(cells.cell_file)
    return [path for path in expected if path not in present]


def environment(
    build: dict[str, Any],
    model: dict[str, Any],
    draft: dict[str, Any] | None,
    index: dict[str, Any],
    cells: pd.DataFrame,
    run_context: Mapping[str, Any],
) -> dict[str, str]:
    """The environment block: device, driver, CUDA, llama.cpp, models, software versions, run dates."""
    gpu, where = index.get("device", {}), index.get("machine", {})
    listed = ", ".join(f"{d.get('name')}: {d.get('description')}" for d in where.get("llama_devices") or [])
    devices = ", ".join(f"{d.get('name')} ({d.get('uuid')})" for d in gpu.get("devices", [])) or (
        f"{listed} (llama-server --list-devices)"
        if listed
        else "none: a CPU build"
        if where.get("backend") == "cpu"
        else f"no NVIDIA GPU seen (NVML: {gpu.get('error') or gpu.get('nvml')})"
    )
    source = build.get("source", {})
    started = cells.started_at.dropna()
    return {
        "device": devices,
        "host": f"{index.get('machine', {}).get('hostname')} ({build.get('host_cpu')}, "
        f"{index.get('machine', {}).get('cpu_count')} CPUs)",
        "NVIDIA driver / CUDA driver": f"{gpu.get('driver') or 'n/a'} / {gpu.get('cuda_driver_version') or 'n/a'}",
        "llama.cpp": f"{source.get('label')} ({source.get('kind')}; commit {source.get('commit') or 'n/a'}; "
        f"archive sha256 {source.get('sha256') or 'n/a'})",
        "llama.cpp build": f"backend {backend_of(build)}; {' '.join(build.get('cmake_args', []))}; "
        f"{build.get('compiler', {}).get('cxx_version', '')}",
        "GPU watch": watch_summary(cells),
        "llama-server": f"{build.get('server_version', '').splitlines()[0] if build.get('server_version') else ''}; "
        f"sha256 {build.get('binaries', {}).get('llama-server', {}).get('sha256')}",
        "model": f"{model.get('path')} ({model.get('file_type_name')}, {model.get('size_bytes')} bytes, MTP layer "
        f"{'present' if model.get('mtp', {}).get('present') else 'absent'}; sha256 {model.get('sha256')})",
        "chat template": template_summary(cells, model.get("chat_template")),
        "draft": f"{draft.get('path')} ({draft.get('size_bytes')} bytes; sha256 {draft.get('sha256')})"
        if draft
        else "none",
        "draft model": describe_draft(draft.get("draft")) if draft else "none",
        "Hugging Face revisions": ", ".join(f"{k}@{v}" for k, v in run_context["hf_revisions"].items()) or "none",
        "software": ", ".join(f"{k} {v}" for k, v in index.get("software", {}).items()),
        "run dates": f"{started.min()} .. {started.max()}" if len(started) else "no cells",
        "config sha256": run_context["config_sha256"],
        "workflow commit": run_context["workflow_commit"],
    }


def describe_draft(facts: Mapping[str, Any] | None) -> str:
    """A draft's figures in words, for the report: "dflash: 4 layers, block size 16, ..." (its GGUF's own)."""
    if not facts:
        return "not recorded"
    targets = ", ".join(map(str, facts.get("target_layers") or [])) or "n/a"
    return (
        f"{facts['architecture']}: {facts['layers']} layers, block size {facts['block_size']}, mask token id "
        f"{facts['mask_token_id']}, target layers {targets} (read from the GGUF)"
    )


def watch_summary(cells: pd.DataFrame) -> str:
    """How the cells' GPU was watched, with the number of cells each way: 'GPU not watched (...): 12 cells'."""
    if "gpu_watch" not in cells or cells.gpu_watch.isna().all():
        return "not recorded"
    counts = cells.gpu_watch.dropna().value_counts()
    return "; ".join(f"{WATCH_TEXT.get(str(watch), str(watch))}: {n} cell(s)" for watch, n in counts.items())


def template_summary(cells: pd.DataFrame, gguf_template: Mapping[str, Any] | None) -> str:
    """What rendered the cells' prompts, with the number of cells each way: "the GGUF's own (...): 12 cell(s)"."""
    if "chat_template" not in cells or cells.chat_template.isna().all():
        return "not recorded"
    counts = cells.chat_template.fillna("").value_counts(sort=False)
    return "; ".join(f"{describe(str(value) or None, gguf_template)}: {n} cell(s)" for value, n in counts.items())


def bandwidth(device: Mapping[str, Any]) -> tuple[float, dict[str, Any]] | None:
    """The first GPU's memory bandwidth in bytes/s (bus width x max memory clock x 2, double data rate) and that
    GPU; None without NVML's figures (a CPU machine)."""
    gpus = [d for d in device.get("devices", []) if d.get("memory_bus_width_bits") and d.get("max_mem_clock_mhz")]
    if not gpus:
        return None
    gpu = gpus[0]
    return gpu["memory_bus_width_bits"] / 8 * gpu["max_mem_clock_mhz"] * 1e6 * 2, gpu


def ceiling_rows(device: Mapping[str, Any], model_bytes: int, speeds: pd.DataFrame) -> tuple[str, list[dict]]:
    """Decode tokens/s as a fraction of the memory-bandwidth ceiling (bandwidth / bytes read per token): a note
    saying how the ceiling was computed, and per row of ``speeds`` its median tokens/s and ``of_ceiling``."""
    known = bandwidth(device)
    if known is None:
        return ("Device memory bandwidth unknown (NVML unavailable on the machine that ran the cells): no ceiling.", [])
    bandwidth_bps, gpu = known
    ceiling = bandwidth_bps / model_bytes
    note = (
        f"{gpu['name']}: bus {gpu['memory_bus_width_bits']} bit x max memory clock "
        f"{gpu['max_mem_clock_mhz']} MHz x 2 (double data rate) = {bandwidth_bps / 1e9:.0f} GB/s; each token reads "
        f"the whole GGUF ({model_bytes / 1e9:.2f} GB), so the ceiling is {ceiling:.0f} tokens/s."
    )
    rows = [
        {
            "task": r["task"],
            "temperature": r["temperature"],
            "median_tokens_per_s": r["median_tokens_per_s"],
            "of_ceiling": r["median_tokens_per_s"] / ceiling,
        }
        for r in speeds.to_dict("records")
    ]
    return note, rows
