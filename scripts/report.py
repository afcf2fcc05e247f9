"""Snakemake entry: render the Markdown report from the aggregate tables and manifests."""

from pathlib import Path

import pandas as pd

from specbench.entry import logged_to
from specbench.files import read_json, write_atomic
from specbench.report import render_markdown

snakemake = globals()["snakemake"]
inp = snakemake.input
with logged_to(snakemake.log[0]):
    tables = {name: pd.read_csv(getattr(inp, name)) for name in ("summary", "runs", "acceptance", "identity_summary")}
    text = render_markdown(
        tables,
        name=snakemake.params.name,
        baseline=snakemake.params.baseline,
        is_study_setup=snakemake.params.is_study_setup,
        build=read_json(Path(inp.build) / "manifest.json"),
        model=read_json(Path(inp.model)),
    )
    write_atomic(Path(snakemake.output[0]), text.encode("utf-8"))
