"""Benchmark: how long Snakemake takes to plan (``snakemake -n all``) large matrices, and how many jobs it plans.

Synthetic matrices are merged over config/tiny.yaml: N tasks that all reuse config/tasks/essay.txt, the config's
six conditions (``CONDITIONS``: five fresh-server ones and the warm ngram-mod-warm), two temperatures, R repeats, so
cells = N x 6 x 2 x R. Each size is planned in a fresh scratch directory (nothing exists yet: every job
is planned), several times; the median wall time, CPU time (steadier on a shared machine) and peak RSS are
printed. With several ``--snakefile``s (e.g. a reference copy: ``git worktree add --detach /tmp/plan-base
redesign``), runs of all of them are interleaved in one invocation, so a noisy machine affects them alike,
and the ratios to the first one are printed. ``--floor`` adds, in the same runs, Snakemake's own floor: a
trivial workflow (one output, no input, a ``run:`` touch) with as many jobs as [0] plans, so a plan time can be
read as a multiple of what Snakemake needs for that many jobs on this machine, whatever its speed today.
Not a test: it prints figures.

    python bench/plan_time.py                                        # this checkout, 120 / 1,200 / 9,600 cells
    python bench/plan_time.py --snakefile /tmp/plan-base/Snakefile --snakefile Snakefile --runs 3
    python bench/plan_time.py --sizes 5x2 --runs 1                   # tasks x repeats
    python bench/plan_time.py --floor                                # and Snakemake's floor for as many jobs
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO / "scripts"), str(REPO / "tests")]

from support.workflow import job_counts, snakemake_argv  # noqa: E402

# config/tiny.yaml's selected conditions (five fresh-server ones and the warm ngram-mod-warm), named here so that a
# condition added to the config does not change what a size means
CONDITIONS = ["off", "ngram-mod", "ngram-mod-warm", "mtp", "dflash", "dflash-n15"]
CONDITIONS_PER_TASK = len(CONDITIONS)
TEMPERATURES = [0.0, 1.0]
DEFAULT_SIZES = ["5x2", "20x5", "20x40"]  # 120, 1,200 and 9,600 cells


@dataclass(frozen=True)
class Size:
    tasks: int
    repeats: int

    @property
    def cells(self) -> int:
        return self.tasks * CONDITIONS_PER_TASK * len(TEMPERATURES) * self.repeats

    @classmethod
    def parse(cls, text: str) -> Size:
        tasks, _, repeats = text.partition("x")
        return cls(int(tasks), int(repeats))


@dataclass
class Run:
    seconds: float
    cpu_seconds: float
    max_rss_mb: float
    jobs: dict[str, int]


def override(size: Size) -> dict:
    """The config merged over config/tiny.yaml: synthetic tasks on one prompt file, every condition, R repeats."""
    tasks = {
        f"synthetic-{i:03d}": {"prompt": "config/tasks/essay.txt", "description": "synthetic (planning bench)"}
        for i in range(1, size.tasks + 1)
    }
    return {
        "tasks": tasks,
        "select": {"tasks": list(tasks), "conditions": CONDITIONS},
        "temperatures": TEMPERATURES,
        "repeats": size.repeats,
    }


# Snakemake's floor: as many jobs as asked for (the jobs of 'one' plus 'all'), each one output, made in-process.
FLOOR_SNAKEFILE = """\
rule all:
    input:
        expand("floor/{i}.txt", i=range(int(config["jobs"]) - 1)),


rule one:
    output:
        "floor/{i}.txt",
    run:
        open(output[0], "a").close()
"""


def plan(snakefile: Path, configs: list[str], extra: list[str]) -> Run:
    """One ``snakemake -n all`` in a fresh scratch directory: wall time, peak RSS, planned jobs per rule (with
    'total')."""
    with tempfile.TemporaryDirectory(prefix="specbench-plan-") as workdir:
        argv = snakemake_argv(
            Path(workdir), ["all"], configs, "-n", *extra, cores=None, cache=False, snakefile=snakefile
        )
        with tempfile.TemporaryFile() as out:
            start = time.perf_counter()
            process = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, cwd=workdir)
            _, status, usage = os.wait4(process.pid, 0)
            seconds = time.perf_counter() - start
            process.returncode = os.waitstatus_to_exitcode(status)
            out.seek(0)
            text = out.read().decode(errors="replace")
    if process.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed ({process.returncode}):\n{text[-3000:]}")
    jobs = job_counts(text)
    return Run(seconds, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, {**jobs, "total": sum(jobs.values())})


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--snakefile",
        type=Path,
        action="append",
        help="a Snakefile to plan with (repeatable; the first is the reference for ratios; default: this checkout's)",
    )
    parser.add_argument(
        "--sizes",
        nargs="+",
        default=DEFAULT_SIZES,
        metavar="TASKSxREPEATS",
        help=f"matrices as tasks x repeats (x {CONDITIONS_PER_TASK} conditions x "
        f"{len(TEMPERATURES)} temperatures; default: {' '.join(DEFAULT_SIZES)})",
    )
    parser.add_argument("--runs", type=int, default=3, help="plans per size and Snakefile (the median is shown)")
    parser.add_argument("--snakemake-args", default="", help="extra arguments for every snakemake call")
    parser.add_argument(
        "--floor",
        action="store_true",
        help="also plan a trivial workflow with as many jobs as [0] plans (Snakemake's floor), "
        "interleaved with the others, and print every plan time as a multiple of it",
    )
    args = parser.parse_args(argv)
    snakefiles = [p.resolve() for p in (args.snakefile or [REPO / "Snakefile"])]
    sizes = [Size.parse(s) for s in args.sizes]
    extra = args.snakemake_args.split()

    runs: dict[tuple[Size, Path], list[Run]] = {(s, f): [] for s in sizes for f in snakefiles}
    floors: dict[Size, list[Run]] = {s: [] for s in sizes}
    with tempfile.TemporaryDirectory(prefix="specbench-plan-configs-") as configs:
        paths = {}
        for size in sizes:
            paths[size] = Path(configs) / f"plan-{size.tasks}x{size.repeats}.yaml"
            paths[size].write_text(yaml.safe_dump(override(size)))
        floor_snakefile = Path(configs) / "floor" / "Snakefile"
        floor_snakefile.parent.mkdir()
        floor_snakefile.write_text(FLOOR_SNAKEFILE)
        for attempt in range(1, args.runs + 1):  # interleaved: run k of every size and Snakefile, then run k+1
            for size in sizes:
                for snakefile in snakefiles:
                    tiny = str(snakefile.parent / "config" / "tiny.yaml")
                    run = plan(snakefile, [tiny, str(paths[size])], extra)
                    runs[size, snakefile].append(run)
                    report_run(attempt, args.runs, size, run, str(snakefile))
                if args.floor:
                    jobs = runs[size, snakefiles[0]][0].jobs["total"]
                    run = plan(floor_snakefile, [], ["--config", f"jobs={jobs}", *extra])
                    floors[size].append(run)
                    report_run(attempt, args.runs, size, run, f"floor: {jobs} trivial jobs")

    print(f"snakemake -n all in an empty directory: median of {args.runs} run(s) (wall and CPU seconds, peak RSS)")
    for i, snakefile in enumerate(snakefiles):
        print(f"  [{i}] {snakefile}")
    if args.floor:
        print(
            "  floor: a trivial workflow with as many jobs as [0] plans (one output each, a run: touch); "
            "x floor = wall / the floor's wall"
        )
    floor_head = f" {'x floor':>7}" if args.floor else ""
    print(
        f"{'cells':>6} {'tasks x reps':>12} {'':>4} {'wall s':>7} {'cpu s':>7} {'MB':>5} {'wall/[0]':>8} "
        f"{'cpu/[0]':>8}{floor_head}  planned jobs: cell / cell_sequence / all rules"
    )
    for size in sizes:
        first = runs[size, snakefiles[0]]
        wall0, cpu0, _ = medians(first)
        floor_wall = medians(floors[size])[0] if args.floor else None
        for i, snakefile in enumerate(snakefiles):
            done = runs[size, snakefile]
            wall, cpu, memory = medians(done)
            jobs = done[0].jobs
            lead = f"{size.cells:>6} {f'{size.tasks} x {size.repeats}':>12}" if i == 0 else " " * 19
            floor = f" {wall / floor_wall:7.2f}" if floor_wall else ""
            print(
                f"{lead} {f'[{i}]':>4} {wall:7.2f} {cpu:7.2f} {memory:5.0f} {wall / wall0:8.2f} {cpu / cpu0:8.2f}"
                f"{floor}  {jobs.get('cell', 0)} / {jobs.get('cell_sequence', 0)} / {jobs.get('total', 0)}"
                + ("  (differs from [0])" if jobs != first[0].jobs else "")
            )
        if floor_wall:
            wall, cpu, memory = medians(floors[size])
            print(
                f"{'':>19} {'floor':>4} {wall:7.2f} {cpu:7.2f} {memory:5.0f} {wall / wall0:8.2f} {cpu / cpu0:8.2f} "
                f"{1:7.2f}  {floors[size][0].jobs.get('total', 0)} trivial jobs"
            )
    return 0


def medians(done: list[Run]) -> tuple[float, float, float]:
    """Median wall seconds, CPU seconds and peak RSS (MB) of some plans."""
    return (
        statistics.median(r.seconds for r in done),
        statistics.median(r.cpu_seconds for r in done),
        statistics.median(r.max_rss_mb for r in done),
    )


def report_run(attempt: int, runs: int, size: Size, run: Run, what: str) -> None:
    """One progress line on stderr, as each plan ends."""
    print(
        f"  run {attempt}/{runs}  {size.cells:>6} cells  {run.seconds:7.2f} s  (cpu {run.cpu_seconds:7.2f} s)  "
        f"{run.max_rss_mb:5.0f} MB  {what}",
        file=sys.stderr,
        flush=True,
    )


if __name__ == "__main__":
    raise SystemExit(main())
