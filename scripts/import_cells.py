"""Snakemake entry: bring the cell records of a run made elsewhere in as one more machine
(specbench.analysis.imports.import_step)."""

from pathlib import Path

from specbench.analysis.imports import import_step

snakemake = globals()["snakemake"]
out, params = snakemake.output, snakemake.params
import_step(
    Path(params.source),
    Path(out.cells),
    Path(out.index),
    label=params.label,
    names=params.names,
    log=Path(snakemake.log[0]),
)
