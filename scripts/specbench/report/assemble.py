"""Rule report: the report (Markdown and one self-contained HTML file) and provenance.json, from what the earlier
rules wrote, read back without the code that wrote it: the per-cell table with each machine's summaries
(core.results.tables), the judged claims (core.results.judged), the figures' index (report.figure_index), the cell index
and the manifests."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from specbench.analysis.cell_table import read_table
from specbench.core.results.judged import read_judged
from specbench.core.results.tables import first_tables, read_table_folder
from specbench.core.steps.entry import logged_to
from specbench.core.steps.files import read_json, read_json_lines, write_atomic, write_json_atomic
from specbench.report.contents import build_report
from specbench.report.document import Facts, Figure, Report
from specbench.report.figure_index import THESIS_FIGURE, png_data_uri, read_figure_index
from specbench.report.html import render_html
from specbench.report.markdown import render_markdown
from specbench.report.provenance import report_numbers
from specbench.report.sections.builds_compared import build_comparison_sections, endpoint_note
from specbench.report.sections.context import real_model_note
from specbench.report.sections.environment import environment, missing_cells
from specbench.report.sections.machines import machine_view


@dataclass(frozen=True)
class ReportInputs:
    """The files the report reads (rule report's inputs, by name: core.steps.entry.inputs_of)."""

    table: Path
    tables: Path
    claims: Path
    figures: Path
    cells_index: Path
    build: Path
    model: Path
    downloads: Sequence[Path] = ()
    draft: Path | None = None
    prompt_set: Path | None = None  # a public prompt set's chosen questions (tasks: {from: ...})


@dataclass(frozen=True)
class ReportSettings:
    """What the config says about the report (rule report's params)."""

    name: str
    baseline: str
    study_setup: Mapping[str, Any]
    condition_order: Sequence[str]
    expected_cells: Sequence[str]
    config_sha256: str
    workflow_commit: str
    machine_descriptions: Mapping[str, str] | None = None
    stand_in_tasks: Sequence[str] = ()
    model_note: str | None = None
    sweeps: Mapping[str, Mapping[str, Any]] | None = None  # swept condition -> {of, flag, value}
    build_descriptions: Mapping[str, str] | None = None
    left_out: Sequence[Sequence[str]] = ()  # [build, condition, why] for each condition a build does not serve


@dataclass(frozen=True)
class Assembled:
    """The report and its provenance."""

    report: Report
    provenance: dict[str, Any]


def assemble(inputs: ReportInputs, settings: ReportSettings, links_from: Path | None = None) -> Assembled:
    """Everything the report shows, from the earlier rules' files; the detailed sections show the first machine (of
    the first build, after Builds compared). ``links_from``: the folder the Markdown report is written to, which
    links each figure written as a file (relative to it); a figure kept in the index is in the HTML report only."""
    all_cells = read_table(inputs.table)
    by_build = read_table_folder(inputs.tables, all_cells)
    by_machine = next(iter(by_build.values()))
    tables = first_tables(by_build)
    judged = read_judged(inputs.claims)
    index = read_json(inputs.cells_index)
    build = read_json(inputs.build / "manifest.json")
    model = read_json(inputs.model)
    draft = read_json(inputs.draft) if inputs.draft else None
    run_context = {
        "config_sha256": settings.config_sha256,
        "workflow_commit": settings.workflow_commit,
        "hf_revisions": {d["repo"]: d["commit"] for d in map(read_json, inputs.downloads)},
    }
    numbers = {
        key: number
        for build_tables in by_build.values()
        for machine_tables in build_tables.values()
        for key, number in report_numbers(machine_tables, settings.baseline).items()
    }
    drawn = read_figure_index(inputs.figures)
    figures = {d.name: Figure(d.caption, png_data_uri(d.png), _link(d.file, links_from)) for d in drawn}
    if THESIS_FIGURE not in figures:
        raise ValueError(f"{inputs.figures}: no figure '{THESIS_FIGURE}' for the thesis section")
    thesis = figures.pop(THESIS_FIGURE)  # shown in its own section
    facts = Facts(
        name=settings.name,
        baseline=settings.baseline,
        comparability=judged.comparability,
        environment=environment(build, model, draft, index, tables["cells"], run_context),
        device=index["device"],
        model_bytes=model["size_bytes"],
        missing_cells=missing_cells(settings.expected_cells, all_cells),
        stand_in_tasks=settings.stand_in_tasks,
        run_context=run_context,
        predictions=judged.predictions,
        predictions_integrity=judged.integrity,
        model_note=settings.model_note or real_model_note(model, settings.study_setup),
        endpoint_note=endpoint_note(all_cells, settings.build_descriptions or {}),
        prompt_set=read_json_lines(inputs.prompt_set) if inputs.prompt_set else (),
    )
    descriptions = settings.machine_descriptions or {}
    views = [
        machine_view(
            label, by_machine[label], index["machines"].get(label, {}), claims, model, descriptions.get(label, "")
        )
        for label, claims in (judged.machines or {}).items()
    ]
    report = build_report(
        tables,
        facts=facts,
        claims=judged.claims,
        numbers=numbers,
        figures=list(figures.values()),
        thesis=thesis,
        conditions=settings.condition_order,
        machines=views,
        sweeps=settings.sweeps,
        opening=build_comparison_sections(
            {build: next(iter(machines.values())) for build, machines in by_build.items()},
            settings.baseline,
            settings.build_descriptions,
            settings.left_out,
        ),
    )
    return Assembled(report, {"context": run_context, "numbers": numbers, "cells": index["cells"]})


def _link(file: Path | None, links_from: Path | None) -> str | None:
    return os.path.relpath(file, links_from) if file is not None and links_from is not None else None


def write_report(
    inputs: ReportInputs,
    settings: ReportSettings,
    *,
    markdown: Path,
    html: Path,
    provenance: Path,
    log: Path | None = None,
) -> Assembled:
    """Assemble the report and write its files, each atomically (output to ``log`` while it runs)."""
    with logged_to(log) if log else contextlib.nullcontext():
        done = assemble(inputs, settings, Path(markdown).parent)
        write_json_atomic(provenance, done.provenance)
        write_atomic(html, render_html(done.report).encode("utf-8"))
        write_atomic(markdown, render_markdown(done.report).encode("utf-8"))
        print(f"report: {len(done.report.sections)} sections, {len(done.provenance['numbers'])} numbers")
    return done
