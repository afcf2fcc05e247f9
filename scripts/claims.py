"""Snakemake entry: the typed tables, the claims and predictions files and the manifests -> claims.csv and the typed
judgements the report reads (specbench.report.judging)."""

from pathlib import Path

from specbench.report.judging import ClaimInputs, ClaimSettings, write_claims

snakemake = globals()["snakemake"]
write_claims(
    ClaimInputs.of(dict(snakemake.input.items())),
    ClaimSettings(**dict(snakemake.params.items())),
    claims_csv=Path(snakemake.output.claims),
    store=Path(snakemake.output.judged),
    log=Path(snakemake.log[0]),
)
