"""A first Markdown report: baseline speed per task, multipliers, verdicts, acceptance (renderer is replaceable)."""

from __future__ import annotations

import math
from typing import Any

import pandas as pd


def fmt(value: Any, digits: int = 2) -> str:
    """Numbers with fixed digits; NaN/None as n/a."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "n/a"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def markdown_table(frame: pd.DataFrame, columns: list[str], headers: list[str]) -> str:
    """A GitHub-flavoured Markdown table of the given columns."""
    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    for _, row in frame.iterrows():
        lines.append("| " + " | ".join(fmt(row[c]) for c in columns) + " |")
    return "\n".join(lines)


def missing_cells(expected: list[str], runs: pd.DataFrame) -> list[str]:
    """Cells the configuration asks for that have no record in this aggregate."""
    present = set(runs.cell_file)
    return [path for path in expected if path not in present]


def environment(build: dict[str, Any], model: dict[str, Any], draft: dict[str, Any] | None, index: dict[str, Any],
                runs: pd.DataFrame, run_context: dict[str, Any]) -> dict[str, str]:
    """The environment block: device, driver, CUDA, llama.cpp, models, software versions, run dates."""
    gpu = index.get("device", {})
    devices = ", ".join(f"{d.get('name')} ({d.get('uuid')})" for d in gpu.get("devices", [])) or \
        f"no NVIDIA GPU seen (NVML: {gpu.get('error') or gpu.get('nvml')})"
    source = build.get("source", {})
    env = {
        "device": devices,
        "host": f"{index.get('machine', {}).get('hostname')} ({build.get('host_cpu')}, "
                f"{index.get('machine', {}).get('cpu_count')} CPUs)",
        "NVIDIA driver / CUDA driver": f"{gpu.get('driver') or 'n/a'} / {gpu.get('cuda_driver_version') or 'n/a'}",
        "llama.cpp": f"{source.get('label')} ({source.get('kind')}; commit {source.get('commit') or 'n/a'}; "
                     f"archive sha256 {source.get('sha256') or 'n/a'})",
        "llama.cpp build": f"CUDA {'on' if build.get('cuda') else 'off'}; {' '.join(build.get('cmake_args', []))}; "
                           f"{build.get('compiler', {}).get('cxx_version', '')}",
        "llama-server": f"{build.get('server_version', '').splitlines()[0] if build.get('server_version') else ''}; "
                        f"sha256 {build.get('binaries', {}).get('llama-server', {}).get('sha256')}",
        "model": f"{model.get('path')} ({model.get('file_type_name')}, {model.get('size_bytes')} bytes, MTP layer "
                 f"{'present' if model.get('mtp', {}).get('present') else 'absent'}; sha256 {model.get('sha256')})",
        "draft": f"{draft.get('path')} ({draft.get('size_bytes')} bytes; sha256 {draft.get('sha256')})" if draft
        else "none",
        "Hugging Face revisions": ", ".join(f"{k}@{v}" for k, v in run_context["hf_revisions"].items()) or "none",
        "software": ", ".join(f"{k} {v}" for k, v in index.get("software", {}).items()),
        "run dates": f"{runs.started_at.min()} .. {runs.started_at.max()}" if len(runs) else "no cells",
        "config sha256": run_context["config_sha256"],
        "workflow commit": run_context["workflow_commit"],
    }
    return env


def render_markdown(tables: dict[str, pd.DataFrame], *, name: str, baseline: str, is_study_setup: bool,
                    build: dict[str, Any], model: dict[str, Any]) -> str:
    """The report text from the aggregate tables (summary, runs, acceptance, identity_summary)."""
    summary, runs = tables["summary"], tables["runs"]
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
        markdown_table(summary[summary.condition == baseline],
                       ["task", "temperature", "runs", "median_tokens_per_s", "min_tokens_per_s", "max_tokens_per_s"],
                       ["task", "temp", "runs", "median tok/s", "min", "max"]),
        "",
        f"## Multiplier vs '{baseline}' and verdict",
        "",
        "Verdict: *faster* if every run beats every baseline run, *slower* if every run is below, else *none*.",
        "",
        markdown_table(summary[summary.condition != baseline],
                       ["task", "condition", "temperature", "median_tokens_per_s", "speedup_median", "speedup_min",
                        "speedup_max", "verdict", "verdict_inputs"],
                       ["task", "condition", "temp", "median tok/s", "x median", "x min", "x max", "verdict",
                        "runs (tok/s) vs baseline"]),
        "",
        "## Acceptance",
        "",
        markdown_table(tables["acceptance"][tables["acceptance"].condition != baseline],
                       ["task", "condition", "temperature", "drafted", "accepted", "pooled_rate", "tokens_per_step",
                        "note"],
                       ["task", "condition", "temp", "drafted", "accepted", "rate", "tokens/step", "note"]),
        "",
        f"## Output identity at temperature 0 (token ids vs '{baseline}', same repeat; control: '{baseline}' r1)",
        "",
        markdown_table(tables["identity_summary"],
                       ["task", "condition", "repeats_compared", "identical", "all_identical", "token_counts",
                        "first_differences"],
                       ["task", "condition", "compared", "identical", "all", "tokens (cond vs base)",
                        "first difference"]),
        "",
    ]
    checks = runs[runs.task_check.notna() & (runs.task_check != "")]
    if not checks.empty:
        parts += ["## Task checks (GSM8K answers)", "",
                  markdown_table(checks, ["task", "condition", "temperature", "repeat", "task_check"],
                                 ["task", "condition", "temp", "rep", "result"]), ""]
    rejected = runs[runs.rejected_attempts > 0]
    parts += ["## Contention", "",
              f"{int(runs.rejected_attempts.sum())} attempt(s) rejected as contended and run again, in "
              f"{len(rejected)} cell(s).", ""]
    parts += [
        "## Runs",
        "",
        markdown_table(runs, ["task", "condition", "temperature", "repeat", "tokens_per_s", "client_tokens_per_s",
                              "predicted_n", "draft_n", "draft_n_accepted", "server_pid", "server_position",
                              "overhead_s", "cell_file"],
                       ["task", "condition", "temp", "rep", "tok/s (server)", "tok/s (client)", "tokens", "drafted",
                        "accepted", "server pid", "pos", "overhead s", "cell file"]),
        "",
    ]
    return "\n".join(parts)
