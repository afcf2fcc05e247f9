"""Snakemake entry: explain where one temperature-0 cell's tokens differ from its reference's
(specbench.measure.explain)."""

from pathlib import Path

from specbench.measure.explain import explain_step

snakemake = globals()["snakemake"]
inp, log = snakemake.input, snakemake.log
explain_step(
    Path(inp.cell),
    Path(inp.reference),
    Path(inp.setup),
    Path(snakemake.output[0]),
    server_log=Path(log.server),
    log=Path(log.run),
)
