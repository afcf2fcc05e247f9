"""Snakemake entry: put the built llama.cpp binaries in place, executable, checked against the build manifest."""

from pathlib import Path

from specbench.llama_cpp.cmake import install_step

snakemake = globals()["snakemake"]
log = Path(snakemake.log[0])
# rules/llama_cpp.smk logs the build beside the install: logs/llama_cpp{build_dir}/build.log
install_step(Path(snakemake.input.build), Path(snakemake.output[0]), log, log.with_name("build.log"))
