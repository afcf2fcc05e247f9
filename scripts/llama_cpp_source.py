"""Snakemake entry: the llama.cpp source tree, from what llama_cpp_fetch got (a git checkout, or the archive)."""

from pathlib import Path

from specbench.llama_cpp.source import source_step

snakemake = globals()["snakemake"]
source_step(snakemake.params.source, Path(snakemake.input.fetched), Path(snakemake.output[0]), Path(snakemake.log[0]))
