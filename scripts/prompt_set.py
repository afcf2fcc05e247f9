"""Snakemake entry: a public prompt set fetched at its pinned revision and its questions chosen (specbench.tasks.
prompt_sets.prompt_set_step)."""

from pathlib import Path

from specbench.tasks.prompt_sets import prompt_set_step

snakemake = globals()["snakemake"]
prompt_set_step(snakemake.params.spec, Path(snakemake.output[0]), Path(snakemake.log[0]))
