"""Snakemake entry: put the built llama.cpp binaries in place, executable, checked against the build manifest."""

from pathlib import Path

from specbench.llama_cpp.cmake import install_step

snakemake = globals()["snakemake"]
install_step(Path(snakemake.input.build), Path(snakemake.output[0]), Path(snakemake.log[0]))
