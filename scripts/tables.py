"""Snakemake entry: the per-cell table -> every summary, as CSV files and as the folder of typed tables (Parquet)
the claims, figures and report rules read (specbench.analysis.tabulate)."""

from pathlib import Path

from specbench.analysis.tabulate import SUMMARY_FILES, write_tables

snakemake = globals()["snakemake"]
out, params = snakemake.output, snakemake.params
write_tables(
    Path(snakemake.input.table),
    baseline=params.baseline,
    machines=params.machines,
    builds=params.builds,
    store=Path(out.tables),
    summaries={name: Path(getattr(out, name)) for name in SUMMARY_FILES},
    log=Path(snakemake.log[0]),
)
