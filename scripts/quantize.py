"""Snakemake entry: quantize the bf16 GGUF with the pinned build's llama-quantize (no imatrix)."""

from pathlib import Path

from specbench.core.entry import logged_to
from specbench.models.convert import quantize

snakemake = globals()["snakemake"]
with logged_to(snakemake.log[0]):
    quantize(
        Path(snakemake.input.build) / "llama-quantize",
        Path(snakemake.input.bf16),
        Path(snakemake.output[0]),
        snakemake.params.quant,
        snakemake.threads,
    )
