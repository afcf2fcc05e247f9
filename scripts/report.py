"""Snakemake entry: the tables, the judged claims and the figures -> the report (Markdown and one self-contained
HTML file) and provenance.json (specbench.report.assemble)."""

from pathlib import Path

from specbench.core.steps.entry import inputs_of
from specbench.report.assemble import ReportInputs, ReportSettings, write_report

snakemake = globals()["snakemake"]
out = snakemake.output
write_report(
    inputs_of(ReportInputs, dict(snakemake.input.items())),
    ReportSettings(**dict(snakemake.params.items())),
    markdown=Path(out.markdown),
    html=Path(out.html),
    provenance=Path(out.provenance),
    log=Path(snakemake.log[0]),
)
