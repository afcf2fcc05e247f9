"""Snakemake entry: every cell file (and every imported one) and the explanations -> the typed per-cell table, its
CSV copy and the cell index (specbench.analysis.aggregate.aggregate_step)."""

from pathlib import Path

from specbench.analysis.aggregate import aggregate_step

snakemake = globals()["snakemake"]
out, params = snakemake.output, snakemake.params
aggregate_step(
    [Path(p) for p in snakemake.input.cells],
    [Path(p) for p in snakemake.input.imports],
    explanations=[Path(p) for p in snakemake.input.explanations],
    baseline=params.baseline,
    machines=params.machines,
    builds=params.builds,
    code_fingerprint=params.code_fingerprint,
    table=Path(out.table),
    runs_csv=Path(out.runs),
    index=Path(out.cells_index),
    log=Path(snakemake.log[0]),
)
