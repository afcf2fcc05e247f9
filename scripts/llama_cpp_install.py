"""Snakemake entry: put the built llama.cpp binaries in place, executable, checked against the build manifest."""

from pathlib import Path

from specbench.build.cmake import install
from specbench.core.entry import logged_to

snakemake = globals()["snakemake"]
with logged_to(snakemake.log[0]):
    manifest = install(Path(snakemake.input.build), Path(snakemake.output[0]))
    print("installed:", sorted(manifest["binaries"]))
