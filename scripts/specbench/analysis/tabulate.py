"""Rule tables: every summary of the per-cell table, per build and machine (summaries.tables_by_build), written as
the CSV files users open and as the folder of typed tables (Parquet, core.results.tables) that the claims, figures
and report rules read back without this code."""

from __future__ import annotations

import contextlib
from collections.abc import Mapping, Sequence
from pathlib import Path

import pandas as pd

from specbench.analysis.cell_table import BUILD, MACHINE, ONE_REQUEST, csv_copy, read_table
from specbench.analysis.summaries import combined_builds, tables_by_build
from specbench.core.results.tables import CELLS, ByBuild, Part, select, write_table_folder
from specbench.core.steps.entry import logged_to
from specbench.core.steps.files import write_atomic

# The summaries written as CSV (every machine's and build's in one file; rule tables' outputs of these names)
SUMMARY_FILES = (
    "summary",
    "acceptance",
    "positions",
    "latency",
    "identity",
    "prompts",
    "spread",
    "categories",
    "thesis",
    "load",
)


def parts(by_build: ByBuild, cells: pd.DataFrame) -> list[Part]:
    """Each build's and machine's summaries, with the per-cell table's build and machine values that select its
    cells (checked against the cells its summaries were made of)."""
    out = []
    for build, by_machine in by_build.items():
        for machine, tables in by_machine.items():
            where = {MACHINE: machine, **({BUILD: build} if BUILD in cells else {}), **ONE_REQUEST}
            if len(select(cells, where)) != len(tables[CELLS]):
                raise ValueError(f"the cells of build '{build}' on '{machine}' are not those its columns select")
            out.append(Part(build, machine, {n: f for n, f in tables.items() if n != CELLS}, where))
    return out


def write_tables(
    table: Path,
    *,
    baseline: str,
    machines: Sequence[str],
    builds: Sequence[str],
    store: Path,
    summaries: Mapping[str, Path] | None = None,
    log: Path | None = None,
) -> dict[str, pd.DataFrame]:
    """Summarise the per-cell table at ``table``: the typed tables to the folder ``store``, each of SUMMARY_FILES
    named in ``summaries`` to its CSV file (each atomically; output to ``log`` while it runs). Returns the combined
    summaries (the CSV files' frames before their CSV copy)."""
    with logged_to(log) if log else contextlib.nullcontext():
        cells = read_table(table)
        by_build = tables_by_build(cells, baseline, machines, builds)
        write_table_folder(store, parts(by_build, cells))
        combined = combined_builds(by_build)
        for name, path in (summaries or {}).items():
            write_atomic(Path(path), csv_copy(combined[name]).to_csv(index=False).encode("utf-8"))
        shape = ", ".join(f"{len(machines_of)} machine(s) of build '{b}'" for b, machines_of in by_build.items())
        print(f"tables: {len(combined['summary'])} summary rows; {shape}")
    return combined
