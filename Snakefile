"""Speculative-decoding benchmark: from pinned llama.cpp and model weights to a traceable report."""

import os
import sys
from pathlib import Path

from snakemake.utils import min_version

min_version("9.0")


configfile: os.path.join(workflow.basedir, "config", "config.yaml")


report: "report/workflow.rst"


# The plan of this run (specbench.workflow.plan), built before any rule file reads it: the rule files read PLAN, the
# config and names of their own, never one another's.
sys.path.insert(0, os.path.join(workflow.basedir, "scripts"))

from specbench.workflow import hooks as sb_hooks  # noqa: E402
from specbench.workflow import plan as sb_plan  # noqa: E402

PLAN = sb_plan.Plan(
    sb_plan.validated(config, Path(workflow.basedir)),
    Path(workflow.basedir),
    lambda: workflow.local_exec,
)
PLAN.check_files()


wildcard_constraints:
    **PLAN.wildcard_constraints(),


include: "rules/llama_cpp.smk"
include: "rules/vllm.smk"
include: "rules/models.smk"
include: "rules/tasks.smk"
include: "rules/cells.smk"
include: "rules/explain.smk"
include: "rules/imports.smk"
include: "rules/report.smk"


# Kept on the submitting host of a cluster run: the downloads (compute nodes often have no internet; the llama.cpp
# clone or archive is llama_cpp_fetch's) and bookkeeping steps too small to be worth a job. Every rule's threads and
# resources are the workflow profiles' (profiles/default, profiles/slurm).
localrules:
    llama_cpp_fetch,
    hf_download,
    hf_dataset,
    render_prompt,
    verify_model,
    code_manifest,
    condition_setup,
    record_predictions,
    import_cells,
    aggregate,
    tables,
    claims,
    figures,
    report,


# Before any job runs (and not in a dry run): a cluster run must name its workflow profile; the preflight checks what
# the planned jobs need (disk, toolkit, GPU, the hub, write access) and stops the run naming each problem. The
# progress lines come from the logger plugin the workflow profiles select (plugins/snakemake-logger-plugin-specbench).
onstart:
    sb_hooks.check_profile(workflow)
    sb_hooks.run_preflight(workflow, PLAN)


# Every cell is a target of its own (so a deleted cell file is made again, and only the aggregate and
# report follow it: Snakemake does not remake a missing input of an aggregate that is up to date), then the
# tables and the report.
rule all:
    input:
        PLAN.cell_files(),
        "results/summary.csv",
        "results/report.md",
        "results/report.html",


# `snakemake --cores 1 preflight`: the preflight alone, for what `all` would make of what is missing (the onstart
# hook runs it before this job, which does nothing).
rule preflight:
    localrule: True
