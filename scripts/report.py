"""Snakemake entry: the report (Markdown and one self-contained HTML file), claims.csv and provenance.json, all from
the per-cell table (results/cells.parquet) and its summaries, computed once here.

input: table (cells.parquet), cells_index, build (llama.cpp bin dir, with manifest.json), model, draft (optional),
downloads (list), claims, predictions + predictions_stamp (optional). params: names (the config's tasks and
conditions), name, model_note, baseline, study_setup, server_args, stand_in_tasks, task_order, condition_order,
expected_cells, config_sha256, workflow_commit."""

from pathlib import Path

from specbench.analysis.summaries import tables_by_machine
from specbench.analysis.table import csv_copy, read_table
from specbench.claims import evaluate, load_claims
from specbench.comparability import assess, device_label
from specbench.core.entry import logged_to
from specbench.core.files import read_json, write_atomic, write_json_atomic
from specbench.figures import png_data_uri, report_figures
from specbench.html_report import render_html
from specbench.predictions import integrity
from specbench.provenance import report_numbers
from specbench.report import Facts, Figure, build_report, environment, machine_view, missing_cells, render_markdown

snakemake = globals()["snakemake"]
inp, out, params = snakemake.input, snakemake.output, snakemake.params
with logged_to(snakemake.log[0]):
    # Each machine on its own cells; the detailed sections show the first (the first configured one measured)
    all_cells = read_table(Path(inp.table))
    by_machine = tables_by_machine(all_cells, params.baseline, params.machines)
    first = next(iter(by_machine))
    tables = by_machine[first]
    index = read_json(Path(inp.cells_index))
    build = read_json(Path(inp.build) / "manifest.json")
    model = read_json(Path(inp.model))
    draft = read_json(Path(inp.draft)) if hasattr(inp, "draft") else None
    run_context = {"config_sha256": params.config_sha256, "workflow_commit": params.workflow_commit,
                   "hf_revisions": {d["repo"]: d["commit"] for d in map(read_json, map(Path, inp.downloads))}}
    numbers = {key: number for machine_tables in by_machine.values()
               for key, number in report_numbers(machine_tables, params.baseline).items()}
    write_json_atomic(Path(out.provenance), {"context": run_context, "numbers": numbers, "cells": index["cells"]})
    comparability = assess(params.study_setup, device=index["device"], machine=index["machine"], build=build,
                           model=model, draft=draft, server_args=params.server_args)

    def judged(path: str):
        return evaluate(load_claims(Path(path), params.names), tables, baseline=params.baseline,
                        comparable=comparability.comparable, device=comparability.device)

    claims = judged(inp.claims)
    machines = []
    if len(by_machine) > 1:  # several machines: each one's ordering and verdict claims, judged on its own cells
        study_claims = load_claims(Path(inp.claims), params.names)
        for label, machine_tables in by_machine.items():
            where = index["machines"].get(label, {})
            device = device_label(where.get("device", {}), where.get("machine", {}))
            machine_claims = evaluate(study_claims, machine_tables, baseline=params.baseline, comparable=False,
                                      device=device)
            machines.append(machine_view(label, machine_tables, where, machine_claims, model,
                                         params.machine_descriptions.get(label, "")))
    write_atomic(Path(out.claims), csv_copy(claims).to_csv(index=False).encode("utf-8"))
    predictions, integrity_check = None, None
    if hasattr(inp, "predictions"):
        predictions = judged(inp.predictions)
        started = tables["cells"].started_at.dropna()
        integrity_check = integrity(read_json(Path(inp.predictions_stamp)), Path(inp.predictions),
                                    started.min().to_pydatetime() if len(started) else None)
    figures = [Figure(caption, png_data_uri(png)) for caption, png in
               report_figures(tables, params.baseline, params.task_order, params.condition_order)]
    facts = Facts(name=params.name, baseline=params.baseline, comparability=comparability,
                  environment=environment(build, model, draft, index, tables["cells"], run_context),
                  device=index["device"], model_bytes=model["size_bytes"],
                  missing_cells=missing_cells(params.expected_cells, all_cells),
                  stand_in_tasks=params.stand_in_tasks, run_context=run_context, predictions=predictions,
                  predictions_integrity=integrity_check, model_note=params.model_note)
    report = build_report(tables, facts=facts, claims=claims, numbers=numbers, figures=figures,
                          conditions=params.condition_order, machines=machines)
    write_atomic(Path(out.html), render_html(report).encode("utf-8"))
    write_atomic(Path(out.markdown), render_markdown(report).encode("utf-8"))
