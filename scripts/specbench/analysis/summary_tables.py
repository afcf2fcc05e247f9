"""Rule tables: every summary of the per-cell table, per build and machine (summaries.tables_by_build), written as
the CSV files users open and as one typed file (a pandas pickle) that the claims, figures and report rules read."""

from __future__ import annotations

import contextlib
import pickle
from collections.abc import Mapping, Sequence
from pathlib import Path

import pandas as pd

from specbench.analysis.cell_table import csv_copy, read_table
from specbench.analysis.summaries import combined_builds, tables_by_build
from specbench.core.steps.entry import logged_to
from specbench.core.steps.files import write_atomic

# The summaries written as CSV (every machine's and build's in one file; rule tables' outputs of these names)
SUMMARY_FILES = ("summary", "acceptance", "positions", "latency", "identity", "prompts", "spread", "thesis")

ByBuild = Mapping[str, Mapping[str, Mapping[str, pd.DataFrame]]]  # build -> machine -> summary name -> table


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
    """Summarise the per-cell table at ``table``: the typed tables to ``store``, each of SUMMARY_FILES named in
    ``summaries`` to its CSV file (each atomically; output to ``log`` while it runs). Returns the combined
    summaries (the CSV files' frames before their CSV copy)."""
    with logged_to(log) if log else contextlib.nullcontext():
        by_build = tables_by_build(read_table(table), baseline, machines, builds)
        write_atomic(store, pickle.dumps(by_build, protocol=pickle.HIGHEST_PROTOCOL))
        combined = combined_builds(by_build)
        for name, path in (summaries or {}).items():
            write_atomic(Path(path), csv_copy(combined[name]).to_csv(index=False).encode("utf-8"))
        shape = ", ".join(f"{len(machines_of)} machine(s) of build '{b}'" for b, machines_of in by_build.items())
        print(f"tables: {len(combined['summary'])} summary rows; {shape}")
    return combined


def read_tables(store: Path) -> ByBuild:
    """The typed tables ``write_tables`` wrote: build -> machine -> name -> table, builds and machines in order."""
    return pickle.loads(Path(store).read_bytes())


def first_tables(by_build: ByBuild) -> Mapping[str, pd.DataFrame]:
    """The first build's first machine's tables: what the claims, the figures and the report's detail show."""
    return next(iter(next(iter(by_build.values())).values()))
