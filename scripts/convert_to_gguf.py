"""Snakemake entry: convert a checkpoint to GGUF with the pinned llama.cpp tree's own converter."""

from pathlib import Path

from specbench.models.convert import convert_step

snakemake = globals()["snakemake"]
convert_step(
    Path(snakemake.input.source),
    Path(snakemake.input.checkpoint),
    Path(snakemake.output[0]),
    outtype=snakemake.params.outtype,
    extra=list(snakemake.params.extra),
    log=Path(snakemake.log[0]),
)
