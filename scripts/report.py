"""Snakemake entry: the report (Markdown and one self-contained HTML file) and provenance.json."""

import json
from pathlib import Path

import pandas as pd

from specbench.claims import evaluate, load_claims
from specbench.entry import logged_to
from specbench.figures import acceptance_figure, multiplier_figure, png_data_uri, timeline_figure
from specbench.files import read_json, sha256_text, write_atomic, write_json_atomic
from specbench.html_report import render_html
from specbench.provenance import report_numbers
from specbench.report import environment, missing_cells, render_markdown

snakemake = globals()["snakemake"]
inp, out, params = snakemake.input, snakemake.output, snakemake.params
with logged_to(snakemake.log[0]):
    tables = {name: pd.read_csv(getattr(inp, name))
              for name in ("summary", "runs", "acceptance", "identity_summary")}
    index = read_json(Path(inp.cells_index))
    build = read_json(Path(inp.build) / "manifest.json")
    model = read_json(Path(inp.model))
    draft = read_json(Path(inp.draft)) if hasattr(inp, "draft") else None
    downloads = [read_json(Path(p)) for p in inp.downloads]
    run_context = {
        "config_sha256": sha256_text(json.dumps(params.config, sort_keys=True)),
        "workflow_commit": params.workflow_commit,
        "hf_revisions": {d["repo"]: d["commit"] for d in downloads},
    }
    provenance = {"context": run_context, "numbers": report_numbers(tables, params.baseline),
                  "cells": index["cells"]}
    write_json_atomic(Path(out.provenance), provenance)
    claims = evaluate(load_claims(Path(inp.claims), params.config), tables, baseline=params.baseline,
                      is_study_setup=params.is_study_setup)
    claims.to_csv(out.claims, index=False)
    figures = {
        f"Multiplier vs {params.baseline} per task and condition (every repeat a point, the bar its median)":
            png_data_uri(multiplier_figure(tables["runs"], params.baseline)),
        "Pooled acceptance rate per task and condition": png_data_uri(acceptance_figure(tables["acceptance"])),
        "Tokens/s of every cell over time (contention would show as a dip)":
            png_data_uri(timeline_figure(tables["runs"])),
    }
    context = {
        "name": params.name, "baseline": params.baseline, "is_study_setup": params.is_study_setup,
        "missing_cells": missing_cells(params.expected_cells, tables["runs"]),
        "environment": environment(build, model, draft, index, tables["runs"], run_context),
        "device": index["device"], "model_bytes": model["size_bytes"],
        "stand_in_tasks": [name for name, task in params.config["tasks"].items()
                           if (task.get("dataset") or {}).get("stand_in")],
    }
    write_atomic(Path(out.html), render_html(tables, figures=figures, claims=claims, provenance=provenance,
                                             context=context).encode("utf-8"))
    write_atomic(Path(out.markdown), render_markdown(tables, name=params.name, baseline=params.baseline,
                                                     is_study_setup=params.is_study_setup, build=build,
                                                     model=model).encode("utf-8"))
