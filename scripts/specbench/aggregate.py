"""Collect cell records into one tidy table, then summarise per task x condition x temperature."""

from __future__ import annotations

import platform
from importlib import metadata
from pathlib import Path
from typing import Any

import pandas as pd

from .files import read_json
from .provenance import cell_chain

COORDINATES = ["task", "condition", "temperature", "repeat"]
FIGURES = ["tokens_per_s", "client_tokens_per_s", "predicted_n", "decode_ms", "prompt_n", "prompt_ms", "draft_n",
           "draft_n_accepted", "acceptance_rate", "cell_wall_s", "server_ready_s", "request_wall_s", "overhead_s",
           "loadavg_1m_at_end"]
CONTEXT = ["seed", "attempt", "rejected_attempts", "contended_reason", "server_pid", "server_shared",
           "server_position", "task_check", "started_at", "cell_file", "server_log", "gpu_samples"]


def load_records(paths: list[str | Path]) -> list[tuple[str, dict[str, Any]]]:
    """Every cell file once, as (path, record)."""
    return [(str(p), read_json(Path(p))) for p in paths]


def run_row(record: dict[str, Any], path: str) -> dict[str, Any]:
    """One row of runs.csv: the coordinates, the figures and where they came from."""
    check = record.get("task_check")
    return {
        **{key: record["cell"][key] for key in COORDINATES},
        **{key: record["figures"].get(key) for key in FIGURES},
        "seed": record["seed"],
        "attempt": record["attempt"],
        "rejected_attempts": len(record.get("rejected_attempts", [])),
        "contended_reason": "; ".join(r["reason"] for r in record.get("rejected_attempts", [])),
        "server_pid": record["server"]["pid"],
        "server_shared": record["server"].get("shared", False),
        "server_position": record["server"].get("position", 1),
        "task_check": check["summary"] if check else "",
        "started_at": record["started_at"],
        "cell_file": path,
        "server_log": record["server"]["log"],
        "gpu_samples": record.get("gpu_samples", ""),
    }


def collect_runs(records: list[tuple[str, dict[str, Any]]]) -> pd.DataFrame:
    """One row per cell, sorted by coordinates."""
    frame = pd.DataFrame([run_row(record, path) for path, record in records],
                         columns=[*COORDINATES, *FIGURES, *CONTEXT])
    return frame.sort_values(COORDINATES, kind="stable").reset_index(drop=True)


SOFTWARE = ("snakemake", "pandas", "gguf", "httpx", "huggingface-hub", "nvidia-ml-py", "numpy", "matplotlib")


def software_versions() -> dict[str, str]:
    """Versions of Python and the packages the pipeline runs on."""
    versions = {"python": platform.python_version()}
    for name in SOFTWARE:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = "not installed"
    return versions


def cells_index(records: list[tuple[str, dict[str, Any]]]) -> dict[str, Any]:
    """Per cell, what produced it (for provenance), plus the device, machine and software of this aggregate."""
    last = records[-1][1] if records else {}
    machine = last.get("machine", {})
    return {
        "cells": {path: cell_chain(record, path) for path, record in records},
        "device": machine.get("gpu", {}),
        "machine": {k: v for k, v in machine.items() if k != "gpu"},
        "software": software_versions(),
    }


def greedy_tokens(records: list[tuple[str, dict[str, Any]]]) -> dict[tuple[str, str, int], list[int]]:
    """Token ids of the temperature-0 cells, keyed by (task, condition, repeat), for the identity table."""
    return {
        (r["cell"]["task"], r["cell"]["condition"], r["cell"]["repeat"]): r["response"]["tokens"]
        for _, r in records
        if r["cell"]["temperature"] == 0.0
    }


def verdict(values: list[float], baseline: list[float]) -> str:
    """The study's rule: 'faster' if every run beats every baseline run, 'slower' if every one is below."""
    if not values or not baseline:
        return "none"
    if min(values) > max(baseline):
        return "faster"
    if max(values) < min(baseline):
        return "slower"
    return "none"


def _rounded(values: list[float]) -> list[float]:
    return sorted(round(v, 2) for v in values)


def summarise(runs: pd.DataFrame, baseline: str) -> pd.DataFrame:
    """Per task x condition x temperature: median/min/max tokens/s, speedup vs baseline, verdict and its inputs."""
    rows = []
    for (task, condition, temperature), group in runs.groupby(["task", "condition", "temperature"], sort=True):
        base = runs[(runs.task == task) & (runs.condition == baseline) & (runs.temperature == temperature)]
        tps = group.tokens_per_s.tolist()
        base_tps = base.tokens_per_s.tolist()
        base_median = float(pd.Series(base_tps).median()) if base_tps else float("nan")
        rows.append(
            {
                "task": task,
                "condition": condition,
                "temperature": temperature,
                "runs": len(group),
                "median_tokens_per_s": float(pd.Series(tps).median()),
                "min_tokens_per_s": min(tps),
                "max_tokens_per_s": max(tps),
                "baseline_median_tokens_per_s": base_median,
                "speedup_median": float(pd.Series(tps).median()) / base_median if base_tps else float("nan"),
                "speedup_min": min(tps) / base_median if base_tps else float("nan"),
                "speedup_max": max(tps) / base_median if base_tps else float("nan"),
                "verdict": "baseline" if condition == baseline else verdict(tps, base_tps),
                "verdict_inputs": f"{_rounded(tps)} vs {baseline} {_rounded(base_tps)}",
                "cell_files": ";".join(group.cell_file),
            }
        )
    return pd.DataFrame(rows)
