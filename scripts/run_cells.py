"""Snakemake entry: run one cell job (one cell, or a warm server's sequence of them; see specbench.measure.job)."""

from pathlib import Path

from specbench.measure.job import run_job

snakemake = globals()["snakemake"]
inp, log = snakemake.input, snakemake.log
run_job(
    snakemake.rule,
    list(snakemake.output),
    setup=Path(inp.setup),
    prompts=[Path(inp.prompt)] if isinstance(inp.prompt, str) else [Path(p) for p in inp.prompt],
    server_log=Path(log.server),
    gpu_samples=Path(log.gpu),
    run_log=Path(log.run),
)
