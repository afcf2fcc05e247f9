"""Snakemake entry: the llama.cpp source tree, from git at the pinned commit or from the verified archive."""

from pathlib import Path

from specbench.build.source import source_step

snakemake = globals()["snakemake"]
archive = snakemake.input.archive if hasattr(snakemake.input, "archive") else None
source_step(snakemake.params.source, Path(archive) if archive else None, Path(snakemake.output[0]),
            Path(snakemake.log[0]))
