"""Snakemake entry: quantize the bf16 GGUF with the pinned build's llama-quantize (no imatrix)."""

from pathlib import Path

from specbench.models.convert import quantize_step

snakemake = globals()["snakemake"]
quantize_step(
    Path(snakemake.input.build),
    Path(snakemake.input.bf16),
    Path(snakemake.output[0]),
    quant=snakemake.params.quant,
    threads=snakemake.resources.cpus,
    log=Path(snakemake.log[0]),
)
