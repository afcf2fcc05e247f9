"""Snakemake entry: a downloaded checkpoint's chat template against the pinned llama.cpp's copy, before conversion."""

from pathlib import Path

from specbench.models.template_check import template_step

snakemake = globals()["snakemake"]
template_step(
    Path(snakemake.input.checkpoint),
    Path(snakemake.input.source),
    snakemake.params.reference,
    snakemake.params.label,
    Path(snakemake.output[0]),
    Path(snakemake.log[0]),
)
