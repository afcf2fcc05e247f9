"""Snakemake entry: stamp the predictions file (sha256, modification time) before the first cell starts."""

from pathlib import Path

from specbench.claims.predictions import stamp_step

snakemake = globals()["snakemake"]
stamp_step(Path(snakemake.params.path), Path(snakemake.output[0]), Path(snakemake.log[0]))
