"""Snakemake entry: the report (Markdown and one self-contained HTML file), the summaries as CSV, claims.csv and
provenance.json, from the per-cell table (see specbench.report.assemble)."""

from pathlib import Path

from specbench.report.assemble import SUMMARY_FILES, ReportInputs, ReportSettings, write_report

snakemake = globals()["snakemake"]
out = snakemake.output
write_report(
    ReportInputs.of(dict(snakemake.input.items())),
    ReportSettings(**dict(snakemake.params.items())),
    markdown=Path(out.markdown),
    html=Path(out.html),
    claims_csv=Path(out.claims),
    summaries={name: Path(getattr(out, name)) for name in SUMMARY_FILES},
    provenance=Path(out.provenance),
    figures={Path(f).name: Path(f) for f in out.figures},
    log=Path(snakemake.log[0]),
)
