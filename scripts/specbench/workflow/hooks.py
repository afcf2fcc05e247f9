"""The Snakefile's onstart hooks: refuse a cluster run under the default profile; the preflight's table and stop."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from specbench.preflight import machine_check, planned
from specbench.workflow.plan import Plan


def check_profile(workflow: Any) -> None:
    """Refuse a cluster run under the default workflow profile (`--profile profiles/slurm` reads it too, and its
    keys win): its global machine_share would queue one cell job at a time, its default-resources drop the site's."""
    if not workflow.local_exec and "machine_share" in workflow.global_resources:
        raise SystemExit(
            "specbench: a cluster run under the default workflow profile (profiles/default, whose keys win over "
            "--profile's); name the cluster's instead: snakemake --workflow-profile profiles/slurm ..."
        )


def run_preflight(workflow: Any, plan: Plan) -> None:
    """Check what this run's jobs need (Snakemake's planned jobs; for the `preflight` target alone, what `all` would
    make of the missing outputs); print the table; exit naming each problem with what to do."""
    jobs = planned.from_dag(workflow.dag.needrun_jobs())
    alone = {rule for rule, _ in jobs} <= {"preflight"}
    if alone:
        jobs = planned.missing(plan.config, plan.base, plan.cells, lambda path: Path(path).exists())
    rows, seconds = machine_check.timed_preflight(plan.config, plan.base, Path.cwd(), jobs, local=workflow.local_exec)
    text, problems = machine_check.report(rows, len(jobs), seconds)
    print(text, file=sys.stderr, flush=True)
    if problems:
        print(*(f"  - {line}" for line in problems), sep="\n", file=sys.stderr)
        raise SystemExit(
            f"{machine_check.PREFIX}: {len(problems)} problem(s) above; nothing was run "
            "(snakemake --no-hooks skips the preflight)"
        )
    if alone:
        print(f"{machine_check.PREFIX}: nothing missing", file=sys.stderr, flush=True)
