"""Collect cell records into one tidy table, then summarise per task x condition x temperature."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from .files import read_json

COORDINATES = ["task", "condition", "temperature", "repeat"]
FIGURES = ["tokens_per_s", "predicted_n", "decode_ms", "prompt_n", "prompt_ms", "draft_n", "draft_n_accepted",
           "acceptance_rate", "cell_wall_s", "server_ready_s", "request_wall_s", "overhead_s"]


def run_row(record: dict[str, Any], path: str) -> dict[str, Any]:
    """One row of runs.csv: the coordinates, the figures and where they came from."""
    return {
        **{key: record["cell"][key] for key in COORDINATES},
        **{key: record["figures"].get(key) for key in FIGURES},
        "seed": record["seed"],
        "attempt": record["attempt"],
        "server_pid": record["server"]["pid"],
        "started_at": record["started_at"],
        "cell_file": path,
        "server_log": record["server"]["log"],
    }


def collect_runs(paths: list[str | Path]) -> pd.DataFrame:
    """Read every cell file into one DataFrame (one row per cell), sorted by coordinates."""
    rows = [run_row(read_json(Path(p)), str(p)) for p in paths]
    frame = pd.DataFrame(rows, columns=[*COORDINATES, *FIGURES, "seed", "attempt", "server_pid", "started_at",
                                        "cell_file", "server_log"])
    return frame.sort_values(COORDINATES, kind="stable").reset_index(drop=True)


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
    """Per task x condition x temperature: median/min/max tokens/s, speedup vs baseline, acceptance, verdict."""
    rows = []
    for (task, condition, temperature), group in runs.groupby(["task", "condition", "temperature"], sort=True):
        base = runs[(runs.task == task) & (runs.condition == baseline) & (runs.temperature == temperature)]
        tps = group.tokens_per_s.tolist()
        base_tps = base.tokens_per_s.tolist()
        base_median = float(pd.Series(base_tps).median()) if base_tps else float("nan")
        drafted = int(group.draft_n.sum())
        accepted = int(group.draft_n_accepted.sum())
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
                "draft_n": drafted,
                "draft_n_accepted": accepted,
                "acceptance_rate": accepted / drafted if drafted else float("nan"),
                "verdict": "baseline" if condition == baseline else verdict(tps, base_tps),
                "verdict_inputs": f"{_rounded(tps)} vs {baseline} {_rounded(base_tps)}",
                "cell_files": ";".join(group.cell_file),
            }
        )
    return pd.DataFrame(rows)
