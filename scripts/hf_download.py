"""Snakemake entry: pinned Hugging Face snapshot of a model, with a manifest of every file."""

from pathlib import Path

from specbench.models.snapshot import download_step

snakemake = globals()["snakemake"]
download_step(
    snakemake.params.repo,
    snakemake.params.revision,
    Path(snakemake.output[0]),
    Path(snakemake.output.manifest),
    Path(snakemake.log[0]),
)
