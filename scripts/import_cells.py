"""Snakemake entry: bring the cell records of a run made elsewhere in as one more machine (see specbench.imports)."""

from pathlib import Path

from specbench.analysis.imports import ImportRefused, import_cells
from specbench.core.entry import fail, logged_to
from specbench.core.files import write_json_atomic

snakemake = globals()["snakemake"]
out, params = snakemake.output, snakemake.params
with logged_to(snakemake.log[0]):
    try:
        index = import_cells(Path(params.source), Path(out.cells), params.label, params.names)
    except ImportRefused as error:
        fail(f"import '{params.label}': {error}", snakemake.log[0])
    write_json_atomic(Path(out.index), index)
    print(f"import '{params.label}': {len(index['records'])} cell records from {params.source} (measured as "
          f"'{index['measured_as']}'), {len(index['skipped'])} skipped")
    for skipped in index["skipped"]:
        print(f"  skipped {skipped['file']}: {skipped['reason']}")
