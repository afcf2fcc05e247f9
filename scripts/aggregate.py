"""Snakemake entry: every cell file (and every imported one) -> the typed per-cell table (Parquet), CSV copies of it
and of its summaries per machine, and the index of what produced each cell."""

from pathlib import Path

from specbench.analysis.cell_index import cells_index, imported_records
from specbench.analysis.records import load_records
from specbench.analysis.summaries import combined, tables_by_machine
from specbench.analysis.table import MixedCodeError, cell_table, check_code, csv_copy, write_table
from specbench.core.entry import fail, logged_to
from specbench.core.files import write_atomic, write_json_atomic

snakemake = globals()["snakemake"]
out, params = snakemake.output, snakemake.params
with logged_to(snakemake.log[0]):
    records = load_records(list(snakemake.input.cells))
    try:  # cells measured here must come from the current code; imported ones say which code made them
        check_code(records, params.code_fingerprint)
    except MixedCodeError as error:
        fail(str(error), snakemake.log[0])
    records += imported_records(list(snakemake.input.imports))
    cells = cell_table(records, params.baseline)
    write_table(cells, Path(out.table))
    for name, frame in combined(tables_by_machine(cells, params.baseline, params.machines)).items():
        if name != "cells":
            write_atomic(Path(getattr(out, name)), csv_copy(frame).to_csv(index=False).encode("utf-8"))
    write_atomic(Path(out.cells), csv_copy(cells).to_csv(index=False).encode("utf-8"))
    write_json_atomic(Path(out.cells_index), cells_index(records, params.machines))
    print(f"{len(cells)} cells aggregated ({len(cells) - len(snakemake.input.cells)} imported)")
