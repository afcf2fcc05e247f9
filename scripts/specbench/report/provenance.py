"""Provenance: every reported number has an id that maps to the cell files it came from, and every cell to the
exact server log, GPU samples, argv, llama.cpp source, binary, model and draft that produced it.

``python -m specbench provenance <id>`` prints the chain for one number."""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from specbench.core.plan.cells import DEFAULT_MACHINE, prompt_key
from specbench.core.plan.coordinates import format_temperature


def number_id(kind: str, *coordinates: Any) -> str:
    """A stable id such as ``speedup-essay-mtp-t0.0`` (temperatures written as in cell paths)."""
    parts = [kind]
    for value in coordinates:
        parts.append(f"t{format_temperature(value)}" if isinstance(value, float) else str(value))
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", "-".join(parts))


def row_id(kind: str, row: Mapping[str, Any]) -> str:
    """The id of the number of this kind shown for one row of a summary table (or, for ``run``, of the cell table,
    whose task is written with its prompt as in cell paths): the one place where a row's coordinates become its id,
    for report_numbers and the renderers' links alike."""
    if kind == "identity":
        key = number_id(kind, row["task"], row["condition"], *(["control"] if row["control"] else []))
    elif kind == "run":
        task = prompt_key(row["task"], row.get("prompt") or "")
        key = number_id(kind, task, row["condition"], row["temperature"], f"r{row['repeat']}")
    else:
        key = number_id(kind, row["task"], row["condition"], row["temperature"])
    machine, build = row.get("machine"), row.get("build")
    key = key if machine in (None, DEFAULT_MACHINE) or pd.isna(machine) else f"{key}@{machine}"
    return key if not isinstance(build, str) or not build else f"{key}~{build}"


def _number(value: Any) -> float | int | None:
    """A JSON-ready number (None for a missing one)."""
    if value is None or pd.isna(value):
        return None
    return int(value) if isinstance(value, (int, np.integer)) else float(value)


def report_numbers(tables: Mapping[str, pd.DataFrame], baseline: str) -> dict[str, dict[str, Any]]:
    """Every number the report shows, by id: its value, what it is, and the cell files behind it, which are the
    summary tables' own ``cells`` (see summaries)."""
    numbers: dict[str, dict[str, Any]] = {}
    for row in tables["summary"].to_dict("records"):
        if row["condition"] == baseline:
            key, value, what = "speed", row["mean_tokens_per_s"], f"mean tokens/s of {baseline} on {row['task']}"
        else:
            key, value = "speedup", row["speedup"]
            what = f"multiplier (mean over mean) of {row['condition']} vs {baseline} on {row['task']}"
        numbers[row_id(key, row)] = {"value": _number(value), "what": what, "cells": list(row["cells"])}
    for row in tables["acceptance"].to_dict("records"):
        numbers[row_id("acceptance", row)] = {
            "value": _number(row["pooled_rate"]),
            "what": f"pooled acceptance of {row['condition']} on {row['task']}",
            "cells": list(row["cells"]),
        }
    for row in tables["identity"].to_dict("records"):
        against = "its repeat 1 (control)" if row["control"] else baseline
        numbers[row_id("identity", row)] = {
            "value": _number(row["identical"]),
            "what": f"repeats of {row['condition']} identical to {against} at temperature 0 on {row['task']}, of "
            f"{row['repeats_compared']} compared",
            "cells": list(row["cells"]),
        }
    for row in tables["cells"].to_dict("records"):
        numbers[row_id("run", row)] = {
            "value": _number(row["tokens_per_s"]),
            "what": f"tokens/s of cell {row['cell_file']}",
            "cells": [row["cell_file"]],
        }
    return numbers


def unresolved(provenance: dict[str, Any], root: Path) -> list[str]:
    """Number ids whose cell files are not all present under ``root`` (or not in the cell index)."""
    bad = []
    for key, number in provenance["numbers"].items():
        cells = number["cells"]
        if not cells or any(c not in provenance["cells"] or not (root / c).is_file() for c in cells):
            bad.append(key)
    return bad


def describe(provenance: dict[str, Any], key: str) -> str:
    """The chain behind one number, as text for the terminal."""
    if key not in provenance["numbers"]:
        close = [k for k in provenance["numbers"] if key in k][:10]
        hint = f"; ids containing it: {', '.join(close)}" if close else ""
        raise KeyError(f"no number with id '{key}'{hint}")
    number = provenance["numbers"][key]
    lines = [f"{key} = {number['value']}  ({number['what']})", f"  run: {provenance['context']}"]
    for path in number["cells"]:
        chain = provenance["cells"][path]
        draft = chain["draft"]
        lines += [
            f"  cell {chain['cell_file']}  (attempt {chain['attempt']}, {chain['started_at']} .. {chain['ended_at']})",
            f"    server log   {chain['server_log']}",
            f"    gpu samples  {chain['gpu_samples']}",
            f"    argv         {' '.join(chain['server_argv'])}",
            f"    llama.cpp    {chain['llama_cpp']['label']} (commit {chain['llama_cpp']['commit']}, "
            f"archive sha256 {chain['llama_cpp']['archive_sha256']})",
            f"    binary       sha256 {chain['server_binary_sha256']}",
            f"    model        {chain['model']['path']} sha256 {chain['model']['sha256']}",
            f"    draft        {draft['path'] + ' sha256 ' + draft['sha256'] if draft else '-'}",
            f"    prompt       sha256 {chain['prompt_sha256']}",
            f"    device       {chain['device']}",
        ]
    return "\n".join(lines)
