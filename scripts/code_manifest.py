"""Snakemake entry: the manifest of a rule's code (each file's sha256 and their fingerprint), one input that
stands for the dozen files of the cells' measurement code (specbench.core.plan.code.code_manifest_step)."""

from pathlib import Path

from specbench.core.plan.code import code_manifest_step

snakemake = globals()["snakemake"]
code_manifest_step(
    snakemake.params.entry, [Path(p) for p in snakemake.input.code], Path(snakemake.output[0]), Path(snakemake.log[0])
)
