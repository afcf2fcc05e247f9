"""Snakemake entry: render the Markdown report from the aggregate tables and manifests."""

from pathlib import Path

import pandas as pd
from specbench.entry import logged_to
from specbench.files import read_json, write_atomic
from specbench.report import render_markdown

snakemake = globals()["snakemake"]
with logged_to(snakemake.log[0]):
    text = render_markdown(
        pd.read_csv(snakemake.input.summary),
        pd.read_csv(snakemake.input.runs),
        name=snakemake.params.name,
        baseline=snakemake.params.baseline,
        is_study_setup=snakemake.params.is_study_setup,
        build=read_json(Path(snakemake.input.build) / "manifest.json"),
        model=read_json(Path(snakemake.input.model)),
    )
    write_atomic(Path(snakemake.output[0]), text.encode("utf-8"))
