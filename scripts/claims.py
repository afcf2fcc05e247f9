"""Snakemake entry: the per-cell and typed tables, the claims and predictions files and the manifests -> claims.csv
and the judgements the report reads, results/judged.json (specbench.claims.judging)."""

from pathlib import Path

from specbench.claims.judging import ClaimInputs, ClaimSettings, write_claims
from specbench.core.steps.entry import inputs_of

snakemake = globals()["snakemake"]
write_claims(
    inputs_of(ClaimInputs, dict(snakemake.input.items())),
    ClaimSettings(**dict(snakemake.params.items())),
    claims_csv=Path(snakemake.output.claims),
    store=Path(snakemake.output.judged),
    log=Path(snakemake.log[0]),
)
