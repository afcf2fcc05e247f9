"""A first Markdown report: baseline speed per task, multipliers, verdicts, acceptance (renderer is replaceable)."""

from __future__ import annotations

import math
from typing import Any

import pandas as pd


def _fmt(value: Any, digits: int = 2) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "n/a"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def markdown_table(frame: pd.DataFrame, columns: list[str], headers: list[str]) -> str:
    """A GitHub-flavoured Markdown table of the given columns."""
    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    for _, row in frame.iterrows():
        lines.append("| " + " | ".join(_fmt(row[c]) for c in columns) + " |")
    return "\n".join(lines)


def render_markdown(summary: pd.DataFrame, runs: pd.DataFrame, *, name: str, baseline: str, is_study_setup: bool,
                    build: dict[str, Any], model: dict[str, Any]) -> str:
    """The report text."""
    parts = [f"# Speculative decoding benchmark: {name}", ""]
    if not is_study_setup:
        parts += [
            "> This run is **not** the published study's setup (model, build or hardware differ): its numbers show "
            "the pipeline at work and are not a comparison with the published figures.",
            "",
        ]
    source = build.get("source", {})
    parts += [
        "## Setup",
        "",
        f"- llama.cpp: {source.get('label') or ''} ({source.get('kind')}; commit {source.get('commit') or 'n/a'}; "
        f"archive sha256 {source.get('sha256') or 'n/a'}), CUDA {'on' if build.get('cuda') else 'off'}",
        f"- llama-server sha256: {build.get('binaries', {}).get('llama-server', {}).get('sha256')}",
        f"- model: {model.get('path')} ({model.get('file_type_name')}, {model.get('size_bytes')} bytes, "
        f"MTP layer {'present' if model.get('mtp', {}).get('present') else 'absent'}), sha256 {model.get('sha256')}",
        f"- cells: {len(runs)}; metric: server-reported generation tokens/s (prompt processing excluded)",
        "",
        f"## '{baseline}' speed per task",
        "",
    ]
    base = summary[summary.condition == baseline]
    parts += [markdown_table(base, ["task", "temperature", "runs", "median_tokens_per_s", "min_tokens_per_s",
                                    "max_tokens_per_s"],
                             ["task", "temp", "runs", "median tok/s", "min", "max"]), ""]
    others = summary[summary.condition != baseline]
    parts += [
        f"## Multiplier vs '{baseline}' and verdict",
        "",
        "Verdict: *faster* if every run beats every baseline run, *slower* if every run is below, else *none*.",
        "",
        markdown_table(others, ["task", "condition", "temperature", "median_tokens_per_s", "speedup_median",
                                "speedup_min", "speedup_max", "verdict", "verdict_inputs"],
                       ["task", "condition", "temp", "median tok/s", "x median", "x min", "x max", "verdict",
                        "runs (tok/s) vs baseline"]),
        "",
        "## Acceptance",
        "",
        markdown_table(others, ["task", "condition", "temperature", "draft_n", "draft_n_accepted", "acceptance_rate"],
                       ["task", "condition", "temp", "drafted", "accepted", "rate"]),
        "",
        "## Runs",
        "",
        markdown_table(runs, ["task", "condition", "temperature", "repeat", "tokens_per_s", "predicted_n", "draft_n",
                              "draft_n_accepted", "overhead_s", "cell_file"],
                       ["task", "condition", "temp", "rep", "tok/s", "tokens", "drafted", "accepted", "overhead s",
                        "cell file"]),
        "",
    ]
    return "\n".join(parts)
