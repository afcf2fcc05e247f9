"""Snakemake entry: convert a checkpoint to GGUF with the pinned llama.cpp tree's own converter."""

from pathlib import Path

from specbench.core.entry import logged_to
from specbench.models.convert import convert_checkpoint

snakemake = globals()["snakemake"]
with logged_to(snakemake.log[0]):
    convert_checkpoint(
        Path(snakemake.input.source),
        Path(snakemake.input.checkpoint),
        Path(snakemake.output[0]),
        snakemake.params.outtype,
        list(snakemake.params.extra),
    )
