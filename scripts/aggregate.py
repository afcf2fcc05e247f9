"""Snakemake entry: every cell file -> the typed per-cell table (Parquet), CSV copies of it and of its summaries,
and the index of what produced each cell."""

from pathlib import Path

from specbench.aggregate import cells_index
from specbench.entry import fail, logged_to
from specbench.files import write_atomic, write_json_atomic
from specbench.summaries import tables
from specbench.table import MixedCodeError, cell_table, check_code, csv_copy, load_records, write_table

snakemake = globals()["snakemake"]
out, baseline = snakemake.output, snakemake.params.baseline
with logged_to(snakemake.log[0]):
    records = load_records(list(snakemake.input.cells))
    try:
        check_code(records, snakemake.params.code_fingerprint)
    except MixedCodeError as error:
        fail(str(error), snakemake.log[0])
    cells = cell_table(records, baseline)
    write_table(cells, Path(out.table))
    for name, frame in tables(cells, baseline).items():
        write_atomic(Path(getattr(out, name)), csv_copy(frame).to_csv(index=False).encode("utf-8"))
    write_json_atomic(Path(out.cells_index), cells_index(records))
    print(f"{len(cells)} cells aggregated")
