"""Rule figures: the report's figures drawn from the first machine's tables (figures.report_figures), each of
FIGURE_FILES as a PNG file, and an index of every figure in the report's order with its caption (a sweep's figure,
shown in the HTML report only, inside the index) that the report reads."""

from __future__ import annotations

import base64
import contextlib
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

from specbench.analysis.summary_tables import first_tables, read_tables
from specbench.analysis.thesis import published_figure
from specbench.claims.claim import THESIS_CLAIM
from specbench.claims.load import load_claims
from specbench.core.steps.entry import logged_to
from specbench.core.steps.files import read_json, write_atomic, write_json_atomic
from specbench.report.figures.run import FIGURE_FILES, report_figures


@dataclass(frozen=True)
class FigureSettings:
    """What the config says about the figures (rule figures' params)."""

    baseline: str
    names: Mapping[str, Sequence[str]]  # the config's tasks and conditions, for reading the claims file
    task_order: Sequence[str]
    condition_order: Sequence[str]
    sweeps: Mapping[str, Mapping[str, Any]] | None = None  # swept condition -> {of, flag, value}


class Drawn(NamedTuple):
    """One figure as the index lists it: its caption, the PNG, and its file (None for one kept in the index)."""

    caption: str
    png: bytes
    file: Path | None


def published_thesis(claims: Path, names: Mapping[str, Sequence[str]]) -> Mapping[str, Any] | None:
    """The figures of the thesis claim's published multipliers (analysis.thesis.published_figure), None without
    that claim or its matrix: what the thesis figure draws beside this run's."""
    claim = next((c for c in load_claims(claims, names) if c.id == THESIS_CLAIM and c.kind == "thesis"), None)
    return published_figure(claim.matrix) if claim is not None and claim.matrix else None


def write_figures(
    tables: Path,
    claims: Path,
    settings: FigureSettings,
    *,
    index: Path,
    figures: Mapping[str, Path] | None = None,
    log: Path | None = None,
) -> list[Drawn]:
    """Draw the figures from the typed tables (and the claims file's published multipliers): each of FIGURE_FILES
    named in ``figures`` to its PNG file, and the index of every figure to ``index`` (each atomically; output to
    ``log`` while it runs)."""
    with logged_to(log) if log else contextlib.nullcontext():
        drawn = report_figures(
            dict(first_tables(read_tables(tables))),
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
        write_json_atomic(
            index,
            [
                {"caption": caption, "file": os.path.relpath(path, Path(index).parent)}
                if path is not None
                else {"caption": caption, "png": base64.b64encode(png).decode("ascii")}
                for (caption, png), path in zip(drawn, files, strict=True)
            ],
        )
        print(f"figures: {len(drawn)} drawn, {sum(p is not None for p in files)} as files")
    return [Drawn(caption, png, path) for (caption, png), path in zip(drawn, files, strict=True)]


def read_figures(index: Path) -> list[Drawn]:
    """Every figure ``write_figures`` listed, in the report's order; a file is found beside the index."""
    out = []
    for entry in read_json(index):
        if "file" in entry:
            path = Path(index).parent / entry["file"]
            out.append(Drawn(entry["caption"], path.read_bytes(), path))
        else:
            out.append(Drawn(entry["caption"], base64.b64decode(entry["png"]), None))
    return out
