"""The summaries of every build and machine as one folder (rule tables' output, read by the claims, the figures and
the report): ``index.json`` (schema ``tables``) lists the builds in order, each build's machines in order, and for
each machine its summaries, one Parquet file each (``<build>/<machine>/<name>.parquet``, ``_`` for the one build of
a run without builds; core.results.frames), with the columns and values that select its rows of the per-cell table.
The cells are not copied: a reader reads the per-cell table once and gets each machine's rows of it back as the
summaries' ``cells``."""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from specbench.core.results.documents import read_document, write_document
from specbench.core.results.frames import read_frame, write_frame

ByBuild = Mapping[str, Mapping[str, Mapping[str, pd.DataFrame]]]  # build -> machine -> name -> table
INDEX = "index.json"
SCHEMA = "tables"
CELLS = "cells"  # the name under which each machine's rows of the per-cell table are read back, before its summaries
ONE_BUILD_DIR = "_"  # the folder of the one build of a run without builds (its label is '')
_SEGMENT = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")


@dataclass(frozen=True)
class Part:
    """One build's and machine's summaries, and the values of the per-cell table's columns that select its cells."""

    build: str
    machine: str
    tables: Mapping[str, pd.DataFrame]
    cells: Mapping[str, str | bool]


def select(cells: pd.DataFrame, where: Mapping[str, str | bool]) -> pd.DataFrame:
    """The rows of ``cells`` whose columns hold ``where``'s values, in order, indexed from 0."""
    mask = pd.Series(True, index=cells.index)
    for column, value in where.items():
        mask &= cells[column] == value
    return cells[mask].reset_index(drop=True)


def write_table_folder(folder: Path, parts: Sequence[Part]) -> None:
    """Write every part's summaries and the index as the folder ``folder``, replacing it whole."""
    folder = Path(folder)
    folder.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=f".{folder.name}.", dir=folder.parent))
    try:
        builds: dict[str, list[dict]] = {}
        for part in parts:
            where = f"{_segment(part.build) if part.build else ONE_BUILD_DIR}/{_segment(part.machine)}"
            files = []
            for name, frame in part.tables.items():
                if name == CELLS:
                    raise ValueError(f"'{CELLS}' is read from the per-cell table, not stored with the summaries")
                write_frame(frame, work / where / f"{_segment(name)}.parquet")
                files.append({"name": name, "file": f"{where}/{name}.parquet"})
            machine = {"label": part.machine, "cells": dict(part.cells), "tables": files}
            builds.setdefault(part.build, []).append(machine)
        index = {"builds": [{"label": build, "machines": machines} for build, machines in builds.items()]}
        write_document(work / INDEX, index, SCHEMA)
        os.chmod(work, 0o777 & ~_umask())
        if folder.exists():
            shutil.rmtree(folder)
        os.replace(work, folder)
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise


def read_table_folder(folder: Path, cells: pd.DataFrame) -> dict[str, dict[str, dict[str, pd.DataFrame]]]:
    """The summaries ``write_table_folder`` wrote, build -> machine -> name -> table in their order, each machine's
    rows of ``cells`` (the per-cell table) first, as ``CELLS``."""
    index = read_document(Path(folder) / INDEX, SCHEMA)
    return {
        build["label"]: {
            machine["label"]: {
                CELLS: select(cells, machine["cells"]),
                **{t["name"]: read_frame(Path(folder) / t["file"]) for t in machine["tables"]},
            }
            for machine in build["machines"]
        }
        for build in index["builds"]
    }


def first_tables(by_build: ByBuild) -> Mapping[str, pd.DataFrame]:
    """The first build's first machine's tables: what the claims, the figures and the report's detail show."""
    return next(iter(next(iter(by_build.values())).values()))


def _segment(label: str) -> str:
    if not _SEGMENT.match(label):
        raise ValueError(f"{label!r} cannot name a folder of the tables (letters, digits, '_', '.', '-')")
    return label


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
