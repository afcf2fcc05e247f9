"""Snakemake entry: write the deterministic tiny Qwen3.5 (+MTP) checkpoint or its tiny DFlash draft."""

from pathlib import Path

from specbench.core.entry import logged_to
from specbench.tiny.checkpoints import write_tiny_dflash, write_tiny_target

snakemake = globals()["snakemake"]
out = Path(snakemake.output[0])
with logged_to(snakemake.log[0]):
    if hasattr(snakemake.input, "target"):
        write_tiny_dflash(out, target_dir=Path(snakemake.input.target), seed=int(snakemake.params.seed))
    else:
        write_tiny_target(out, seed=int(snakemake.params.seed), kind=str(snakemake.params.kind))
    print("wrote", sorted(p.name for p in out.iterdir()))
