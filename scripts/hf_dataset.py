"""Snakemake entry: a dataset split from the Hugging Face hub at a pinned revision, as JSON lines."""

from pathlib import Path

from specbench.core.entry import logged_to
from specbench.tasks.datasets import hf_dataset_split

snakemake = globals()["snakemake"]
with logged_to(snakemake.log[0]):
    info = hf_dataset_split(snakemake.params.dataset, Path(snakemake.output[0]))
    print(info)
