"""Snakemake entry: what every cell of one condition is served with
(specbench.measure.condition_setup.condition_setup_step)."""

from pathlib import Path

from specbench.measure.condition_setup import condition_setup_step

snakemake = globals()["snakemake"]
inp = snakemake.input
condition_setup_step(
    snakemake.wildcards.condition,
    Path(inp.build) if hasattr(inp, "build") else None,
    Path(inp.model_manifest),
    Path(inp.draft_manifest) if hasattr(inp, "draft_manifest") else None,
    Path(inp.code),
    dict(snakemake.params.settings),
    Path(snakemake.output[0]),
    Path(snakemake.log[0]),
    cells=snakemake.params.cells,
    checkpoints={
        role: (
            Path(getattr(inp, f"{role}_checkpoint")),
            Path(getattr(inp, f"{role}_download")) if hasattr(inp, f"{role}_download") else None,
        )
        for role in ("target", "draft")
        if hasattr(inp, f"{role}_checkpoint")
    },
)
