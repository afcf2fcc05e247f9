"""Provenance: every reported number has an id that maps to the cell files it came from, and every cell to the
exact server log, GPU samples, argv, llama.cpp source, binary, model and draft that produced it.

``python -m specbench provenance <id>`` prints the chain for one number."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pandas as pd

from .cells import format_temperature


def number_id(kind: str, *coordinates: Any) -> str:
    """A stable id such as ``speedup-essay-mtp-t0.0`` (temperatures written as in cell paths)."""
    parts = [kind]
    for value in coordinates:
        parts.append(f"t{format_temperature(value)}" if isinstance(value, float) else str(value))
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", "-".join(parts))


def _cells(runs: pd.DataFrame, **match: Any) -> list[str]:
    mask = pd.Series(True, index=runs.index)
    for column, value in match.items():
        mask &= runs[column] == value
    return sorted(runs.loc[mask, "cell_file"])


def report_numbers(tables: dict[str, pd.DataFrame], baseline: str) -> dict[str, dict[str, Any]]:
    """Every number the report shows, by id: its value, what it is, and the cell files it was computed from."""
    runs, summary = tables["runs"], tables["summary"]
    numbers: dict[str, dict[str, Any]] = {}
    for row in summary.itertuples():
        own = _cells(runs, task=row.task, condition=row.condition, temperature=row.temperature)
        if row.condition == baseline:
            numbers[number_id("speed", row.task, row.condition, row.temperature)] = {
                "value": row.median_tokens_per_s, "what": f"median tokens/s of {row.condition} on {row.task}",
                "cells": own}
            continue
        base = _cells(runs, task=row.task, condition=baseline, temperature=row.temperature)
        numbers[number_id("speedup", row.task, row.condition, row.temperature)] = {
            "value": row.speedup_median, "what": f"median multiplier of {row.condition} vs {baseline} on {row.task}",
            "cells": sorted(own + base)}
    for row in tables["acceptance"].itertuples():
        numbers[number_id("acceptance", row.task, row.condition, row.temperature)] = {
            "value": row.pooled_rate, "what": f"pooled acceptance of {row.condition} on {row.task}",
            "cells": _cells(runs, task=row.task, condition=row.condition, temperature=row.temperature)}
    greedy = runs[runs.temperature == 0.0]
    for row in tables["identity_summary"].itertuples():
        condition = baseline if row.condition.startswith(f"{baseline} (control") else row.condition
        cells = _cells(greedy, task=row.task, condition=condition) + _cells(greedy, task=row.task, condition=baseline)
        numbers[number_id("identity", row.task, row.condition)] = {
            "value": f"{row.identical}/{row.repeats_compared}", "what": f"repeats of {row.condition} identical to "
            f"{baseline} at temperature 0 on {row.task}", "cells": sorted(set(cells))}
    for row in runs.itertuples():
        numbers[number_id("run", row.task, row.condition, row.temperature, f"r{row.repeat}")] = {
            "value": row.tokens_per_s, "what": f"tokens/s of cell {row.cell_file}", "cells": [row.cell_file]}
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
