"""Snakemake entry: write the deterministic tiny Qwen3.5 (+MTP) checkpoint or its tiny DFlash draft."""

from pathlib import Path

from specbench.tiny.checkpoints import checkpoint_step

snakemake = globals()["snakemake"]
inp, params = snakemake.input, snakemake.params
checkpoint_step(
    Path(snakemake.output[0]),
    seed=int(params.seed),
    kind=str(getattr(params, "kind", "random")),
    target=Path(inp.target) if hasattr(inp, "target") else None,
    log=Path(snakemake.log[0]),
)
