"""The workflow under a real SLURM: a single-node cluster on this machine (slurm/start-cluster.sh beside this file:
munged, MariaDB, slurmdbd, slurmctld, slurmd, in a loopback-only network namespace) with two partitions standing for two
kinds of machine, and `snakemake --workflow-profile profiles/slurm` (snakemake-executor-plugin-slurm) on a tiny slice of
the tiny config with two machines (config 'machines', each selecting its partition): the essay x 2 conditions x
temperature 0 x 1 repeat on each, one CPU per cell job so that two run at once.

sacct must show each cell as a SLURM job of its own, in its machine's partition; the steps that run once (tiny
checkpoint, convert, quantize, install) as one job each, shared by every cell through the filesystem; the local
rules, and the draft model no selected condition loads, as no job at all; the report compares the two machines. Each
cell's request, served again by a server of its recorded argv started outside SLURM, gives the same tokens; what
SLURM adds per cell job (submit to end, less the cell's own wall time) goes to
$SPECBENCH_TEST_CACHE/slurm-timings.json. Last, one cell job is cancelled with `scancel` while its server generates:
the submitting Snakemake must end by itself, no process of that job may be left on the node (`ps` of it goes to
$SPECBENCH_TEST_CACHE/slurm-scancel-ps.txt), no cell file written, and the next run remakes only that cell.
llama.cpp comes from the between-workflow cache shared with the other workflow suites (built once per machine).

Needs root and Debian's slurm-wlm, slurmdbd, munge and mariadb-server: skipped without them, except under CI=true,
where a cluster that cannot start fails the test.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from specbench.core.plan.cells import Cell
from specbench.core.steps.files import read_json
from specbench.measure.replay import replay
from support.paths import OUTPUT_CACHE, REPO, TEST_CACHE
from support.prepare import wait_for
from support.workflow import BACK_HALF, fail_message, frozen, job_counts, llama_servers_in, placed, write_yaml

pytestmark = [pytest.mark.workflow, pytest.mark.slurm]

CLUSTER = REPO / "tests" / "workflow" / "slurm"
PARTITION_OF = {"kind-a": "part-a", "kind-b": "part-b"}  # machine label -> the partition that stands for it
CONDITIONS = ["off", "mtp"]
TASKS = ["essay"]
ONCE = ["tiny_target_checkpoint", "convert_target", "quantize_target", "llama_cpp_install"]
# No condition of the slice loads a draft model, so the draft is neither made nor converted.
UNUSED = ["tiny_draft_checkpoint", "convert_draft"]
# The llama.cpp rules run on the submitting host, where Snakemake's between-workflow cache works: inside a cluster
# job (snakemake 9.27.1) a cached rule whose input is a cached rule's directory fails (IsADirectoryError while
# hashing it), and a bare --cache is not passed on to jobs at all.
LLAMA_CPP = ["llama_cpp_fetch", "llama_cpp_source", "llama_cpp_build"]
LOCAL = [
    "render_prompt",
    "verify_model",
    "record_predictions",
    "code_manifest",
    "condition_setup",
    "aggregate",
    *BACK_HALF,
    *LLAMA_CPP,
]
TOOLS = [
    "munged",
    "mariadbd",
    "mariadb-install-db",
    "slurmdbd",
    "slurmctld",
    "slurmd",
    "sbatch",
    "sacct",
    "sacctmgr",
    "unshare",
    "nsenter",
]
SLICE = {
    "name": "slurm test",
    "select": {"tasks": TASKS, "conditions": CONDITIONS},
    "temperatures": [0.0],
    "repeats": 1,
    "max_tokens": 32,
    "machines": [{"label": m, "resources": {"slurm_partition": p}} for m, p in PARTITION_OF.items()],
    # One 2-CPU node runs the daemons, each job's Snakemake and up to four jobs: CPU contention between them is
    # expected and not what this test is about (tests/workflow/test_faults.py judges it), so it is recorded, not judged.
    "measurement": {"max_foreign_cpu": None},
}


# The SLURM workflow profile, with this node's partition and account and small requests over the profile's: one CPU,
# 2 GB and no GPU per job (a flag replaces the profile's key whole), so the 2-CPU node runs two cell jobs at once.
SLURM_PROFILE = [
    "--workflow-profile",
    str(REPO / "profiles" / "slurm"),
    "--default-resources",
    "slurm_partition=part-a",
    "slurm_account=specbench",
    "mem_mb=2048",
    "--set-threads",
    "cell=1",
    "--set-resources",
    "cell:gpu=0",
    "--slurm-init-seconds-before-status-checks",
    "2",
]


def _unavailable(reason: str) -> None:
    """Skip locally; under CI the cluster must start, so fail."""
    if os.environ.get("CI") == "true":
        pytest.fail(f"SLURM test cannot run under CI: {reason}")
    pytest.skip(reason)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict]:
    """A running single-node cluster with partitions kind-a and kind-b; stopped at the end, always."""
    if os.geteuid() != 0:
        _unavailable("needs root to start SLURM daemons")
    path = f"{os.environ.get('PATH', '')}:/usr/sbin:/sbin"
    missing = [tool for tool in TOOLS if not shutil.which(tool, path=path)]
    if missing:
        _unavailable(f"missing {missing}: apt-get install -y slurm-wlm slurmdbd munge mariadb-server")
    state = tmp_path_factory.mktemp("slurm")
    t0 = time.monotonic()
    try:
        started = subprocess.run(
            [str(CLUSTER / "start-cluster.sh"), str(state), *sorted(set(PARTITION_OF.values()))],
            capture_output=True,
            text=True,
            timeout=300,
            env={**os.environ, "PATH": path},
        )
        if started.returncode != 0:
            logs = "\n".join(
                f"--- {p.name} ---\n{p.read_text(errors='replace')[-2000:]}"
                for p in sorted((state / "log").glob("*.log"))
            )
            _unavailable(f"the cluster did not start:\n{started.stderr[-4000:]}\n{logs}")
        env = {**os.environ, "PATH": f"{state / 'bin'}:{path}", "SLURM_CONF": str(state / "slurm.conf")}
        yield {"state": state, "env": env, "start_s": time.monotonic() - t0}
    finally:
        subprocess.run([str(CLUSTER / "stop-cluster.sh"), str(state)], capture_output=True, timeout=180)


def _snakemake(work: Path, *extra: str, env: dict[str, str]) -> tuple[subprocess.CompletedProcess, float]:
    """`snakemake all` on the tiny config plus the slice, llama.cpp from the shared cache; (result, wall seconds)."""
    wait_for("llama-cpp")
    OUTPUT_CACHE.mkdir(parents=True, exist_ok=True)
    configs = [REPO / "config" / "tiny.yaml", write_yaml(work / "slice.yaml", SLICE)]
    argv = [
        sys.executable,
        "-m",
        "snakemake",
        "all",
        "--snakefile",
        str(REPO / "Snakefile"),
        "--directory",
        str(work),
        "--cache",
        *extra,
        "--configfile",
        *(str(c) for c in configs),
    ]
    t0 = time.monotonic()
    result = subprocess.run(
        argv,
        cwd=work,
        env={**env, "SNAKEMAKE_OUTPUT_CACHE": str(OUTPUT_CACHE)},
        capture_output=True,
        text=True,
        timeout=3600,
    )
    return result, time.monotonic() - t0


def _sacct(env: dict[str, str], since: str) -> list[dict[str, str]]:
    """Every job (allocation, not steps) since ``since``, one dict per job."""
    fields = [
        "JobIDRaw",
        "JobName",
        "Partition",
        "State",
        "Submit",
        "Start",
        "End",
        "ElapsedRaw",
        "NodeList",
        "Comment",
    ]
    out = subprocess.run(
        [
            "sacct",
            "-X",
            "--parsable2",
            "--noheader",
            "--allusers",
            "--starttime",
            since,
            f"--format={','.join(fields)}",
        ],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return [dict(zip(fields, line.split("|"), strict=True)) for line in out.stdout.splitlines() if line]


def _seconds(a: str, b: str) -> float:
    return (dt.datetime.fromisoformat(b) - dt.datetime.fromisoformat(a)).total_seconds()


@pytest.fixture(scope="module")
def runs(cluster: dict, tmp_path_factory: pytest.TempPathFactory) -> dict:
    """The slice under SLURM, in a fresh working directory."""
    since = dt.datetime.now().strftime("%Y-%m-%dT%H:%M:%S")
    slurm_work = tmp_path_factory.mktemp("slurm-work")
    slurm, slurm_s = _snakemake(
        slurm_work,
        *SLURM_PROFILE,
        "--jobs",
        "4",
        env=cluster["env"],
    )
    assert slurm.returncode == 0, fail_message(slurm)
    jobs = _sacct(cluster["env"], since)
    return {
        "slurm": slurm_work,
        "slurm_s": slurm_s,
        "jobs": jobs,
        "cluster_start_s": cluster["start_s"],
    }


def _cells(work: Path) -> list[dict]:
    return [read_json(p) for p in sorted((work / "results" / "cells").rglob("r*.json"))]


def test_each_cell_is_a_slurm_job_in_its_machines_partition(runs: dict) -> None:
    records = _cells(runs["slurm"])
    assert len(records) == len(TASKS) * len(CONDITIONS) * len(PARTITION_OF)
    jobs = {job["JobIDRaw"]: job for job in runs["jobs"]}
    cell_jobs = [job for job in runs["jobs"] if job["Comment"].startswith("rule_cell_")]
    assert len(cell_jobs) == len(records)
    seen = set()
    for record in records:
        scheduler = record["machine"]["scheduler"]
        job = jobs[scheduler["SLURM_JOB_ID"]]  # the record names its job, and sacct knows it
        machine, condition = record["cell"]["machine"], record["cell"]["condition"]
        assert job["Partition"] == PARTITION_OF[machine] == scheduler["SLURM_JOB_PARTITION"]
        assert job["State"] == "COMPLETED"
        # the job's name holds the cell's wildcards: machine, models folder, task, condition, temperature, repeat
        assert f"_{machine}_" in job["Comment"] and f"_{record['cell']['task']}_{condition}_" in job["Comment"]
        assert record["machine"]["hostname"]
        seen.add(job["JobIDRaw"])
    assert len(seen) == len(records)  # one job per cell


def test_steps_that_run_once_are_one_job_each_and_local_rules_none(runs: dict) -> None:
    by_rule: dict[str, int] = {}
    for job in runs["jobs"]:
        rule = job["Comment"].removeprefix("rule_").split("_wildcards_")[0]
        by_rule[rule] = by_rule.get(rule, 0) + 1
    for rule in ONCE:
        assert by_rule.get(rule) == 1, by_rule
    # one explanation job per compared temperature-0 cell, in its machine's partition (it serves off there)
    explained = [job for job in runs["jobs"] if job["Comment"].startswith("rule_explain_divergence_")]
    assert len(explained) == len(TASKS) * (len(CONDITIONS) - 1) * len(PARTITION_OF), by_rule
    assert all(
        job["Partition"] == PARTITION_OF[job["Comment"].split("_wildcards_")[1].split("_")[0]] for job in explained
    ), explained
    for rule in [*LOCAL, *UNUSED]:
        assert rule not in by_rule, by_rule


def test_each_cell_gives_its_tokens_again_outside_slurm(runs: dict) -> None:
    """Same binary, model, argv and request on a server started here, outside any SLURM job: the same greedy tokens
    (temperature 0, CPU, one thread as in the cell jobs)."""
    work = runs["slurm"]
    for record in _cells(work):
        label = record["cell"]["label"]
        again = replay(record, work, work / "logs" / f"replay-{label.replace('/', '_')}.server.log")
        assert again["identical"] and again["tokens"] == len(record["response"]["tokens"]) > 0, again
        assert "SLURM_JOB_ID" in record["machine"]["scheduler"]
    report = (runs["slurm"] / "results" / "report.md").read_text()
    assert "## Machines compared" in report and "| kind-a | kind-b |" in report  # the two machines side by side
    assert (runs["slurm"] / "results" / "report.html").is_file()
    assert not llama_servers_in(work)


def test_timings_measured(runs: dict) -> None:
    """What SLURM adds: per cell job submit->start->end against the cell's own wall time."""
    jobs = {job["JobIDRaw"]: job for job in runs["jobs"]}
    per_job = []
    for record in _cells(runs["slurm"]):
        job = jobs[record["machine"]["scheduler"]["SLURM_JOB_ID"]]
        cell_s = record["timing"]["cell_wall_s"]
        per_job.append(
            {
                "cell": record["cell"]["label"],
                "job": job["JobIDRaw"],
                "partition": job["Partition"],
                "queued_s": _seconds(job["Submit"], job["Start"]),
                "job_s": _seconds(job["Start"], job["End"]),
                "cell_wall_s": round(cell_s, 2),
                "overhead_s": round(_seconds(job["Submit"], job["End"]) - cell_s, 2),
            }
        )
    timings = {
        "cluster_start_s": round(runs["cluster_start_s"], 1),
        "slurm_run_s": round(runs["slurm_s"], 1),
        "jobs": len(runs["jobs"]),
        "cell_jobs": per_job,
    }
    TEST_CACHE.mkdir(parents=True, exist_ok=True)
    (TEST_CACHE / "slurm-timings.json").write_text(json.dumps(timings, indent=2) + "\n")
    print(json.dumps(timings, indent=2))
    assert all(j["overhead_s"] >= 0 and j["queued_s"] >= 0 for j in per_job), per_job


def _of_job(job_id: str) -> list[psutil.Process]:
    """The live processes on this node whose environment says they belong to SLURM job ``job_id``."""
    found = []
    for proc in psutil.process_iter(["pid", "status"]):
        with contextlib.suppress(psutil.Error):
            if proc.info["status"] != psutil.STATUS_ZOMBIE and proc.environ().get("SLURM_JOB_ID") == job_id:
                found.append(proc)
    return found


def _state(env: dict[str, str], since: str, job_id: str) -> str:
    """What sacct says of one job ('' before it knows it)."""
    return next((j["State"] for j in _sacct(env, since) if j["JobIDRaw"] == job_id), "")


def _ps(job_id: str) -> str:
    """`ps` of the node, narrowed to SLURM's step daemons, llama-servers and this job's processes."""
    listing = subprocess.run(
        ["ps", "-eo", "pid,ppid,pgid,sid,stat,etime,args"], capture_output=True, text=True, check=True
    ).stdout.splitlines()
    job_pids = {str(p.pid) for p in _of_job(job_id)}
    keep = [
        listing[0],
        *(
            line
            for line in listing[1:]
            if line.split()[0] in job_pids or any(word in line for word in ("slurmstepd", "llama-server"))
        ),
    ]
    return "\n".join(keep)


def test_a_cancelled_cell_job_leaves_no_server_and_only_that_cell_to_remake(runs: dict, cluster: dict) -> None:
    """`scancel` of a cell job while its server generates (frozen, so the answer cannot complete first): no process
    of that job is left on the node, the submitting Snakemake ends by itself naming the job, no cell file is written,
    and the next run remakes only that cell."""
    work, env = runs["slurm"], cluster["env"]
    cell = placed(work, Cell("essay", "off", 0.0, 1, "kind-a")).path
    (work / cell).unlink()
    log = work / cell.replace(".json", ".server.log")
    log.unlink(missing_ok=True)
    argv = [
        sys.executable,
        "-m",
        "snakemake",
        cell,
        "--snakefile",
        str(REPO / "Snakefile"),
        "--directory",
        str(work),
        "--cache",
        *SLURM_PROFILE,
        "--configfile",
        str(REPO / "config" / "tiny.yaml"),
        str(work / "slice.yaml"),
    ]
    submit = subprocess.Popen(
        argv,
        cwd=work,
        env={**env, "SNAKEMAKE_OUTPUT_CACHE": str(OUTPUT_CACHE)},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 300
        while not (log.exists() and "processing task" in log.read_text(errors="replace")):
            assert time.monotonic() < deadline and submit.poll() is None, "the cell job's server never generated"
            time.sleep(0.2)
        [server] = llama_servers_in(work)
        job_id = psutil.Process(server).environ()["SLURM_JOB_ID"]
        with frozen(server):
            subprocess.run(["scancel", job_id], env=env, check=True, timeout=30)
        cancelled_at = time.monotonic()
        since = (dt.datetime.now() - dt.timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M:%S")
        # slurmd ends a cancelled job's processes (SIGTERM, SIGKILL after KillWait); sacct then says CANCELLED
        while _of_job(job_id) or not _state(env, since, job_id).startswith("CANCELLED"):
            assert time.monotonic() < cancelled_at + 60, (_state(env, since, job_id), _ps(job_id))
            time.sleep(0.5)
        gone_s = time.monotonic() - cancelled_at
        evidence = _ps(job_id)
        # The submitting Snakemake learns of it at its next status check (a growing interval, at most 180 s) and
        # ends by itself, naming the job and its state (the profile's squeue status command: with sacct's
        # "CANCELLED by 0" plugin 2.8.0 waited for ever)
        output, _ = submit.communicate(timeout=300)
        noticed_s = time.monotonic() - cancelled_at
    finally:
        if submit.poll() is None:
            os.killpg(submit.pid, signal.SIGKILL)
            submit.wait(timeout=30)
    (TEST_CACHE / "slurm-scancel-ps.txt").write_text(
        f"job {job_id} cancelled; its last process gone {gone_s:.1f} s later; Snakemake ended {noticed_s:.1f} s "
        f"later (exit code {submit.returncode}); ps of the node then (slurmstepd, llama-server and the job's "
        f"processes):\n{evidence}\n"
    )
    print(evidence)
    assert submit.returncode != 0, output[-3000:]
    assert f"SLURM-job '{job_id}' failed, SLURM status is: 'CANCELLED'" in output, output[-3000:]
    assert not _of_job(job_id) and not llama_servers_in(work), evidence
    assert not (work / cell).exists() and not list((work / cell).parent.glob(".r1.json*"))
    subprocess.run([*argv, "--unlock"], cwd=work, capture_output=True, env=env, timeout=120)
    dry = subprocess.run(
        [*argv[:3], "all", *argv[4:], "--dry-run"],
        cwd=work,
        capture_output=True,
        text=True,
        env={**env, "SNAKEMAKE_OUTPUT_CACHE": str(OUTPUT_CACHE)},
    )
    assert dry.returncode == 0, fail_message(dry)
    # only that cell, and what reads it: mtp's explanation on the same task and repeat (rules/explain.smk)
    assert job_counts(dry.stdout + dry.stderr) == {
        "cell": 1,
        "explain_divergence": 1,
        "aggregate": 1,
        **BACK_HALF,
        "all": 1,
    }, dry.stdout
    again = subprocess.run(
        argv,
        cwd=work,
        capture_output=True,
        text=True,
        env={**env, "SNAKEMAKE_OUTPUT_CACHE": str(OUTPUT_CACHE)},
        timeout=600,
    )
    assert again.returncode == 0, fail_message(again)
    assert read_json(work / cell)["machine"]["scheduler"]["SLURM_JOB_ID"] != job_id
