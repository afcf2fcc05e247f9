"""Snakemake entry: a dataset split from the Hugging Face hub at a pinned revision, as JSON lines."""

from pathlib import Path

from specbench.tasks.datasets import dataset_step

snakemake = globals()["snakemake"]
dataset_step(snakemake.params.dataset, Path(snakemake.output[0]), Path(snakemake.log[0]))
