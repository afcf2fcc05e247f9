"""Run the real workflow as a subprocess, and read what it left."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from dataclasses import replace
from pathlib import Path

import psutil
import yaml
from snakemake.utils import update_config

from specbench.core.config.load import validate_config
from specbench.core.plan.cells import NO_MODELS, Cell
from specbench.core.plan.code import WORKFLOW_FILES
from specbench.core.plan.model_identity import models_folder
from specbench.core.steps.files import read_json
from support.paths import OUTPUT_CACHE, REPO
from support.prepare import PREPARED, done, wait_for


def snakemake_argv(
    workdir: Path,
    targets: Sequence[str],
    configs: Sequence[Path | str],
    *extra: str,
    cores: int | None = 2,
    cache: bool = True,
    snakefile: Path = REPO / "Snakefile",
) -> list[str]:
    """The command line of ``snakemake TARGETS`` in ``workdir``: ``extra`` options after ``--cores`` (none where
    ``cores`` is None), then ``--cache`` (Snakemake's between-workflow cache, unless ``cache`` is False) and the
    ``configs`` files last."""
    return [
        sys.executable,
        "-m",
        "snakemake",
        *targets,
        "--snakefile",
        str(snakefile),
        "--directory",
        str(workdir),
        *(["--cores", str(cores)] if cores is not None else []),
        *extra,
        *(["--cache"] if cache else []),
        *(["--configfile", *(str(c) for c in configs)] if configs else []),
    ]


def snakemake(
    workdir: Path,
    targets: list[str],
    configs: list[Path],
    *extra: str,
    env: dict[str, str] | None = None,
    cores: int = 2,
    snakefile: Path = REPO / "Snakefile",
    prepared: tuple[str, ...] = ("llama-cpp",),
    start_from: str | None = None,
) -> subprocess.CompletedProcess:
    """``snakemake TARGETS`` in ``workdir`` with the study config plus ``configs`` merged over it.

    The llama.cpp rules are taken from / put into Snakemake's between-workflow cache, so the build happens
    once per machine (keyed by the rules' code, parameters and inputs); a run (not a dry run) first waits for the
    ``prepared`` steps of the background preparation that fill that cache (support.prepare). With ``start_from``
    (a step's name), a working directory Snakemake has not run in yet first gets a copy of that step's, when the
    step completed (its models and Snakemake's metadata of them: what the configs share with the step is then up to
    date).
    """
    if not {"-n", "--dry-run"} & set(extra):
        wait_for(*prepared, *([start_from] if start_from else []))
    if start_from and not (workdir / ".snakemake").exists() and done(start_from).exists():
        copy_workdir(PREPARED / start_from, workdir)
    OUTPUT_CACHE.mkdir(parents=True, exist_ok=True)
    argv = snakemake_argv(workdir, targets, configs, *extra, cores=cores, snakefile=snakefile)
    full_env = {**os.environ, "SNAKEMAKE_OUTPUT_CACHE": str(OUTPUT_CACHE), **(env or {})}
    return subprocess.run(argv, cwd=workdir, env=full_env, capture_output=True, text=True)


# The servers' threads of a suite whose figures depend on them (the order of a sum changes with the thread count): two,
# as a llama-server on the 2-core test machine takes by default; such a suite runs alone (mark 'alone'), since a
# two-thread pool beside other work spins.
TWO_THREADS = {"LLAMA_ARG_THREADS": "2"}


def fail_message(result: subprocess.CompletedProcess) -> str:
    """A finished Snakemake's exit code and the tails of its output, for an assertion's message."""
    return f"exit {result.returncode}\n--- stdout ---\n{result.stdout[-4000:]}\n--- stderr ---\n{result.stderr[-8000:]}"


def planned(configs: list[Path | dict], cell: Cell) -> Cell:
    """``cell`` in the models folder the workflow plans it in, with the study config plus ``configs`` (the files a
    test passes to ``snakemake``, or their settings as a dict)."""
    config: dict = {}
    for entry in [REPO / "config" / "config.yaml", *configs]:
        update_config(config, entry if isinstance(entry, dict) else yaml.safe_load(Path(entry).read_text()) or {})
    return replace(cell, models=models_folder(validate_config(config, REPO), cell.condition))


def placed(work: Path, cell: Cell) -> Cell:
    """``cell`` in the models folder a run in ``work`` measured it in: the one folder of its machine (and build)
    that holds its file."""
    bare = Path(replace(cell, models=NO_MODELS).path)
    depth = 4 if cell.build else 3  # results/cells/<machine>[/<build>]
    pattern = Path(*bare.parts[:depth], "*", *bare.parts[depth:])
    found = sorted(work.glob(str(pattern)))
    assert len(found) == 1, f"{pattern}: {len(found)} cell files in {work}"
    return Cell.from_path(str(found[0].relative_to(work)))


def greedy_record(run: dict, task: str, condition: str, repeat: int, prompt: str = "") -> dict:
    """The record of one of a run's temperature-0 cells (``run["work"]``: its working directory)."""
    return read_json(run["work"] / placed(run["work"], Cell(task, condition, 0.0, repeat, prompt=prompt)).path)


def tiny_run(
    work: Path, name: str, settings: dict, env: dict[str, str] | None = None, start_from: str | None = "tiny-models"
) -> subprocess.CompletedProcess:
    """A complete ``snakemake all`` of config/tiny.yaml with ``settings`` merged over it (written to
    ``work/<name>.yaml``), offline, from the prepared tiny models (``snakemake(start_from=)``); fails the test with
    the output's tail when it does not finish."""
    override = write_yaml(work / f"{name}.yaml", settings)
    config = [REPO / "config" / "tiny.yaml", override]
    result = snakemake(work, ["all"], config, env={"HF_HUB_OFFLINE": "1", **(env or {})}, start_from=start_from)
    assert result.returncode == 0, fail_message(result)
    return result


def copy_workflow(dest: Path) -> Path:
    """A copy of the workflow's own files (what a user's clone holds), to edit in tests; returns its Snakefile."""
    for name in WORKFLOW_FILES:
        source = REPO / name
        if source.is_dir():
            shutil.copytree(source, dest / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(source, dest / name)
    return dest / "Snakefile"


def copy_workdir(source: Path, dest: Path) -> Path:
    """A private copy of a finished run's working directory (into ``dest``, which may hold config files already),
    for a test that changes what it finds there: its resources (builds, models) hard-linked (a job replaces an
    output, never writes into one), the rest copied with its times, Snakemake's metadata included, so the copy is as
    up to date as the run."""

    def link_or_copy(src: str, dst: str) -> None:
        if Path(src).is_relative_to(source / "resources"):
            os.link(src, dst)
        else:
            shutil.copy2(src, dst)

    shutil.copytree(
        source,
        dest,
        symlinks=True,
        copy_function=link_or_copy,
        ignore=shutil.ignore_patterns("log", "locks"),
        dirs_exist_ok=True,
    )
    return dest


def write_yaml(path: Path, data: dict) -> Path:
    """Write a config override file."""
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


# The rules after aggregate, one job each: what any change to the per-cell table reruns
BACK_HALF = {"tables": 1, "claims": 1, "figures": 1, "report": 1}


def job_counts(dry_run_output: str) -> dict[str, int]:
    """The 'Job stats' table of a dry run, as {rule: count} (empty when there is nothing to do)."""
    counts: dict[str, int] = {}
    lines = dry_run_output.splitlines()
    for i, line in enumerate(lines):
        if line.strip() == "Job stats:":
            for row in lines[i + 3 :]:
                parts = row.split()
                if len(parts) != 2 or not parts[1].isdigit() or parts[0] == "total":
                    break
                counts[parts[0]] = int(parts[1])
            break
    return counts


def live_processes() -> list[tuple[int, list[str], Path | None]]:
    """Every live process but this one: (pid, argv, working directory or None when unreadable); zombies left out."""
    found = []
    for proc in psutil.process_iter(["pid", "cmdline", "cwd", "status"], ad_value=None):
        info = proc.info
        if info["pid"] == os.getpid() or not info["cmdline"] or info["status"] == psutil.STATUS_ZOMBIE:
            continue
        found.append((info["pid"], info["cmdline"], Path(info["cwd"]) if info["cwd"] else None))
    return found


def llama_server_pids_using(path: Path) -> list[int]:
    """Pids of running llama-servers whose command line names ``path`` as given: servers a test started itself
    with an absolute model path (a workflow's servers name their files relative to it: ``llama_servers_in``)."""
    return [pid for pid, argv, _ in live_processes() if "llama-server" in argv[0] and str(path) in " ".join(argv)]


def llama_servers_in(work: Path) -> list[int]:
    """Pids of the llama-servers running in a workflow's working directory (a cell starts its server there)."""
    work = work.resolve()
    return [pid for pid, argv, cwd in live_processes() if argv[0].endswith("llama-server") and cwd == work]


@contextlib.contextmanager
def frozen(pid: int, hold_s: float = 1.0) -> Iterator[None]:
    """Stop a process (SIGSTOP) while the block runs and for ``hold_s`` after, then let it go on (SIGCONT): a
    server frozen mid-generation cannot finish its answer before an interrupt sent in the block has landed (the
    cell's script stops it; a stopped server's pending SIGTERM acts once it goes on)."""
    os.kill(pid, signal.SIGSTOP)
    try:
        yield
        time.sleep(hold_s)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGCONT)


def signal_mask(pid: int, field: str) -> set[signal.Signals]:
    """The signals in one mask of ``/proc/<pid>/status`` ('SigCgt': caught, 'SigIgn': ignored, 'ShdPnd': pending
    for the process); psutil does not read these. Empty when the process is gone."""
    try:
        lines = Path(f"/proc/{pid}/status").read_text().splitlines()
    except OSError:
        return set()
    mask = int(next(line.split()[1] for line in lines if line.startswith(f"{field}:")), 16)
    return {sig for sig in signal.Signals if mask & (1 << (sig.value - 1))}
