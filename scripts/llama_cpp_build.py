"""Snakemake entry: build llama-server and llama-quantize with CMake and write the build manifest."""

from pathlib import Path

from specbench.build.cmake import build
from specbench.core.entry import logged_to

snakemake = globals()["snakemake"]
params = snakemake.params
with logged_to(snakemake.log[0]):
    manifest = build(
        Path(snakemake.input.source),
        Path(params.work_dir),
        Path(snakemake.output[0]),
        list(params.cmake_args),
        bool(params.cuda),
        list(params.targets),
        snakemake.threads,
    )
    print("built:", manifest["binaries"])
