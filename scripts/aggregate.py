"""Snakemake entry: every cell file -> runs.csv (one row per cell) and summary.csv."""

from specbench.aggregate import collect_runs, summarise
from specbench.entry import logged_to

snakemake = globals()["snakemake"]
with logged_to(snakemake.log[0]):
    runs = collect_runs(list(snakemake.input.cells))
    runs.to_csv(snakemake.output.runs, index=False)
    summary = summarise(runs, snakemake.params.baseline)
    summary.to_csv(snakemake.output.summary, index=False)
    print(f"{len(runs)} cells, {len(summary)} summary rows")
