"""The report rule's work: read the per-cell table, the cell index, the manifests and the claims once; judge the
claims (the study's, and each machine's relative ones when there are several machines) and the predictions; then
write the Markdown and HTML report, claims.csv and provenance.json."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pandas as pd

from ..analysis.cell_table import csv_copy, read_table
from ..analysis.summaries import combined_builds, tables_by_build
from ..claims.claim import Claim
from ..claims.evaluate import Setup, evaluate
from ..claims.load import about_the_study, load_claims
from ..claims.predictions import integrity
from ..core.entry import logged_to
from ..core.files import read_json, write_atomic, write_json_atomic
from .build_sections import build_sections
from .comparability import assess, device_label, real_model_note
from .document import Facts, Figure, Report
from .environment import environment, missing_cells
from .figure_style import png_data_uri
from .figures import FIGURE_FILES, report_figures
from .html import render_html
from .machines import MachineView, machine_view
from .markdown import render_markdown
from .provenance import report_numbers
from .sections import build_report
from .thesis_section import published_of


@dataclass(frozen=True)
class ReportInputs:
    """The files the report reads (rule report's inputs)."""

    table: Path
    cells_index: Path
    build_dir: Path
    model: Path
    claims: Path
    downloads: Sequence[Path] = ()
    draft: Path | None = None
    predictions: Path | None = None
    predictions_stamp: Path | None = None

    @classmethod
    def of(cls, named: Mapping[str, Any]) -> ReportInputs:
        """From the rule's named inputs (Snakemake's, or any mapping): the fields it has, as paths; others ignored
        (the rule also declares its code and the claims schema, so that an edit of either remakes the report)."""

        def path(value: Any) -> Path | None:
            return None if value is None else Path(value)

        return cls(
            table=Path(named["table"]),
            cells_index=Path(named["cells_index"]),
            build_dir=Path(named["build"]),
            model=Path(named["model"]),
            claims=Path(named["claims"]),
            downloads=[Path(p) for p in named.get("downloads", [])],
            draft=path(named.get("draft")),
            predictions=path(named.get("predictions")),
            predictions_stamp=path(named.get("predictions_stamp")),
        )


@dataclass(frozen=True)
class ReportSettings:
    """What the config says about the report (rule report's params)."""

    name: str
    baseline: str
    names: Mapping[str, Sequence[str]]  # the config's tasks and conditions, for checking the claims files
    machines: Sequence[str]
    study_setup: Mapping[str, Any]
    server_args: Sequence[str]
    task_order: Sequence[str]
    condition_order: Sequence[str]
    expected_cells: Sequence[str]
    config_sha256: str
    workflow_commit: str
    machine_descriptions: Mapping[str, str] | None = None
    stand_in_tasks: Sequence[str] = ()
    model_note: str | None = None
    sweeps: Mapping[str, Mapping[str, Any]] | None = None  # swept condition -> {of, flag, value}
    builds: Sequence[str] = ()  # the builds' labels (none for a run without builds)
    build_descriptions: Mapping[str, str] | None = None


# The summaries written beside the report as CSV (every machine's in one file; rule report's outputs of these names)
SUMMARY_FILES = ("summary", "acceptance", "positions", "latency", "identity", "prompts", "spread", "thesis")


@dataclass(frozen=True)
class Assembled:
    """The report and the tables written beside it."""

    report: Report
    summaries: Mapping[str, pd.DataFrame]  # every machine's (and build's) summaries by name (combined_builds)
    claims: pd.DataFrame
    provenance: dict[str, Any]
    images: Mapping[str, bytes]  # the figures' PNG files by name (FIGURE_FILES)


def machine_views(
    study: Sequence[Claim],
    by_machine: Mapping[str, Mapping[str, pd.DataFrame]],
    index: Mapping[str, Any],
    model: Mapping[str, Any],
    baseline: str,
    descriptions: Mapping[str, str],
    same_model: bool,
) -> list[MachineView]:
    """With several machines, each one's view: the study's claims judged on its own cells, on its own device (never
    comparable: only the relative claims are shown per machine; on another model, the questions). None for one
    machine."""
    if len(by_machine) < 2:
        return []
    views = []
    for label, tables in by_machine.items():
        where = index["machines"].get(label, {})
        device = device_label(where.get("device", {}), where.get("machine", {}))
        setup = Setup(comparable=False, same_model=same_model, device=device)
        judged = evaluate(study, tables, baseline=baseline, setup=setup)
        views.append(machine_view(label, tables, where, judged, model, descriptions.get(label, "")))
    return views


def predictions_setup(path: Path, setup: Setup) -> Setup:
    """Predictions are judged on the model they name: the study's (``about: study``) as the study's claims are, so
    not on another model; a user's own (the default) on this run's model, whatever it is."""
    return setup if about_the_study(path) else replace(setup, same_model=True)


def assemble(inputs: ReportInputs, settings: ReportSettings, figure_links: Sequence[str] = ()) -> Assembled:
    """Everything the report shows, computed once from its inputs; the detailed sections show the first machine (of
    the first build, after Builds compared). ``figure_links``: where the Markdown report finds each figure's file
    (FIGURE_FILES order), if they are written."""
    all_cells = read_table(inputs.table)
    by_build = tables_by_build(all_cells, settings.baseline, settings.machines, settings.builds)
    by_machine = next(iter(by_build.values()))
    tables = next(iter(by_machine.values()))
    index = read_json(inputs.cells_index)
    build = read_json(inputs.build_dir / "manifest.json")
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
    comparability = assess(
        settings.study_setup,
        device=index["device"],
        machine=index["machine"],
        build=build,
        model=model,
        draft=draft,
        server_args=settings.server_args,
    )
    study = load_claims(inputs.claims, settings.names)
    claims = evaluate(study, tables, baseline=settings.baseline, setup=comparability.setup())
    predictions, integrity_check = None, None
    if inputs.predictions:
        predictions = evaluate(
            load_claims(inputs.predictions, settings.names),
            tables,
            baseline=settings.baseline,
            setup=predictions_setup(inputs.predictions, comparability.setup()),
        )
        started = tables["cells"].started_at.dropna()
        integrity_check = integrity(
            read_json(inputs.predictions_stamp),
            inputs.predictions,
            started.min().to_pydatetime() if len(started) else None,
        )
    drawn = report_figures(
        tables,
        settings.baseline,
        settings.task_order,
        settings.condition_order,
        settings.sweeps,
        published_of(claims),
    )
    links = [*figure_links, *[None] * (len(drawn) - len(figure_links))]  # a sweep's figure: in the HTML report only
    figures = [Figure(caption, png_data_uri(png), link) for (caption, png), link in zip(drawn, links, strict=True)]
    thesis = figures.pop(FIGURE_FILES.index("thesis.png"))  # shown in its own section
    facts = Facts(
        name=settings.name,
        baseline=settings.baseline,
        comparability=comparability,
        environment=environment(build, model, draft, index, tables["cells"], run_context),
        device=index["device"],
        model_bytes=model["size_bytes"],
        missing_cells=missing_cells(settings.expected_cells, all_cells),
        stand_in_tasks=settings.stand_in_tasks,
        run_context=run_context,
        predictions=predictions,
        predictions_integrity=integrity_check,
        model_note=settings.model_note or real_model_note(model, settings.study_setup),
    )
    views = machine_views(
        study,
        by_machine,
        index,
        model,
        settings.baseline,
        settings.machine_descriptions or {},
        comparability.same_model,
    )
    report = build_report(
        tables,
        facts=facts,
        claims=claims,
        numbers=numbers,
        figures=figures,
        thesis=thesis,
        conditions=settings.condition_order,
        machines=views,
        sweeps=settings.sweeps,
        opening=build_sections(
            {build: next(iter(machines.values())) for build, machines in by_build.items()},
            settings.baseline,
            settings.build_descriptions,
        ),
    )
    provenance = {"context": run_context, "numbers": numbers, "cells": index["cells"]}
    images = dict(zip(FIGURE_FILES, (png for _, png in drawn[: len(FIGURE_FILES)]), strict=True))
    return Assembled(report, combined_builds(by_build), claims, provenance, images)


def write_report(
    inputs: ReportInputs,
    settings: ReportSettings,
    *,
    markdown: Path,
    html: Path,
    claims_csv: Path,
    provenance: Path,
    summaries: Mapping[str, Path] | None = None,
    figures: Mapping[str, Path] | None = None,
    log: Path | None = None,
) -> Assembled:
    """Assemble the report and write its files, each atomically (output to ``log`` while it runs): ``summaries``
    maps names of SUMMARY_FILES to the CSV file each is written to, ``figures`` each of FIGURE_FILES to the PNG file
    it is written to (the Markdown report links them)."""
    with logged_to(log) if log else contextlib.nullcontext():
        links = [os.path.relpath(figures[name], Path(markdown).parent) for name in FIGURE_FILES] if figures else []
        done = assemble(inputs, settings, links)
        for name, path in (figures or {}).items():
            write_atomic(Path(path), done.images[name])
        write_json_atomic(provenance, done.provenance)
        for name, path in (summaries or {}).items():
            write_atomic(Path(path), csv_copy(done.summaries[name]).to_csv(index=False).encode("utf-8"))
        write_atomic(claims_csv, csv_copy(done.claims).to_csv(index=False).encode("utf-8"))
        write_atomic(html, render_html(done.report).encode("utf-8"))
        write_atomic(markdown, render_markdown(done.report).encode("utf-8"))
        print(f"report: {len(done.claims)} claim rows, {len(done.provenance['numbers'])} numbers")
    return done
