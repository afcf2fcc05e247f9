"""Rule figures: the report's figures drawn from the first machine's tables (figures.report_figures), each of
FIGURE_FILES as a PNG file, and an index of every figure in the report's order with its name and caption (a sweep's
figure, shown in the HTML report only, inside the index) that the report reads (report.figure_index)."""

from __future__ import annotations

import contextlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from specbench.analysis.cell_table import read_table
from specbench.analysis.thesis_published import published_figure
from specbench.claims.claim import THESIS_CLAIM
from specbench.claims.claims_file import load_claims
from specbench.core.results.tables import first_tables, read_table_folder
from specbench.core.steps.entry import logged_to
from specbench.core.steps.files import write_atomic
from specbench.report.figure_index import Drawn, write_figure_index
from specbench.report.figures.figure_set import FIGURE_FILES, report_figures


@dataclass(frozen=True)
class FigureSettings:
    """What the config says about the figures (rule figures' params)."""

    baseline: str
    names: Mapping[str, Any]  # the config's tasks and conditions (rule_params.names), for reading the claims file
    task_order: Sequence[str]
    condition_order: Sequence[str]
    sweeps: Mapping[str, Mapping[str, Any]] | None = None  # swept condition -> {of, flag, value}


def published_thesis(claims: Path, names: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The figures of the thesis claim's published multipliers (analysis.thesis_published), None without
    that claim or its matrix: what the thesis figure draws beside this run's."""
    thesis = (c for c in load_claims(claims, names) if c.kind == "thesis" and THESIS_CLAIM in (c.id, c.readings))
    claim = next(thesis, None)
    return published_figure(claim.matrix) if claim is not None and claim.matrix else None


def write_figures(
    table: Path,
    tables: Path,
    claims: Path,
    settings: FigureSettings,
    *,
    index: Path,
    figures: Mapping[str, Path] | None = None,
    log: Path | None = None,
) -> list[Drawn]:
    """Draw the figures from the per-cell table at ``table`` and the typed tables in the folder ``tables`` (and the
    claims file's published multipliers): each of FIGURE_FILES named in ``figures`` to its PNG file, and the index
    of every figure to ``index`` (each atomically; output to ``log`` while it runs)."""
    with logged_to(log) if log else contextlib.nullcontext():
        drawn = report_figures(
            dict(first_tables(read_table_folder(tables, read_table(table)))),
            settings.baseline,
            settings.task_order,
            settings.condition_order,
            settings.sweeps,
            published_thesis(claims, settings.names),
        )
        files = [Path(figures[name]) if figures and name in figures else None for name in FIGURE_FILES]
        files += [None] * (len(drawn) - len(files))
        for (_, png), path in zip(drawn, files, strict=True):
            if path is not None:
                write_atomic(path, png)
        names = [Path(f).stem for f in FIGURE_FILES] + [f"figure-{i + 1}" for i in range(len(FIGURE_FILES), len(drawn))]
        listed = [
            Drawn(name, caption, png, path) for name, (caption, png), path in zip(names, drawn, files, strict=True)
        ]
        write_figure_index(index, listed)
        print(f"figures: {len(drawn)} drawn, {sum(p is not None for p in files)} as files")
    return listed
