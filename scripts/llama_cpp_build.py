"""Snakemake entry: build llama-server and llama-quantize with CMake and write the build manifest."""

from pathlib import Path

from specbench.llama_cpp.cmake import build_step

snakemake = globals()["snakemake"]
params = snakemake.params
build_step(
    Path(snakemake.input.source),
    Path(params.work_dir),
    Path(snakemake.output[0]),
    cmake_args=list(params.cmake_args),
    backend=str(params.backend),
    targets=list(params.targets),
    jobs=snakemake.resources.cpus,
    log=Path(snakemake.log[0]),
)
