"""Speculative-decoding benchmark: from pinned llama.cpp and model weights to a traceable report."""

import os

from snakemake.utils import min_version

min_version("9.0")


configfile: os.path.join(workflow.basedir, "config", "config.yaml")


report: "report/workflow.rst"


include: "rules/common.smk"
include: "rules/llama_cpp.smk"
include: "rules/models.smk"
include: "rules/tasks.smk"
include: "rules/cells.smk"
include: "rules/imports.smk"
include: "rules/report.smk"


# The tables and the report; the aggregate reads every cell, so a deleted cell file is made again (and only the
# aggregate and report follow it). The cells are not listed here: planning a large matrix would match each twice.
rule all:
    input:
        "results/summary.csv",
        "results/report.md",
        "results/report.html",
