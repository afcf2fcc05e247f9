"""Snakemake entry: the per-cell table and the typed tables (and the claims file's published multipliers) -> the
report's figures as PNG files and their index (specbench.report.figures.drawing)."""

from pathlib import Path

from specbench.report.figures.drawing import FigureSettings, write_figures

snakemake = globals()["snakemake"]
out = snakemake.output
write_figures(
    Path(snakemake.input.table),
    Path(snakemake.input.tables),
    Path(snakemake.input.claims),
    FigureSettings(**dict(snakemake.params.items())),
    index=Path(out.index),
    figures={Path(f).name: Path(f) for f in out.figures},
    log=Path(snakemake.log[0]),
)
