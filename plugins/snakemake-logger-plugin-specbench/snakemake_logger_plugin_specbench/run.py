"""What the run's events say: each job's rule, outputs, logs and times, the cell records its jobs wrote, and the
lines to print from them (a running job's last log line, the cells measured with the time left)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from .lines import cells_line, estimate_left, stage_line

CELLS = "results/cells/"  # where the cell records go (one JSON file each, specbench.core.plan.cells.CELL_PATTERN)


@dataclass
class Job:
    """One job as JOB_INFO describes it."""

    rule: str
    outputs: Sequence[str]
    logs: Sequence[str]
    wildcards: Mapping[str, object]

    @property
    def cells(self) -> list[str]:
        """The cell records among its outputs."""
        return [o for o in self.outputs if o.startswith(CELLS) and o.endswith(".json")]

    @property
    def name(self) -> str:
        """'convert (target)': its rule and its wildcards' values."""
        values = ", ".join(str(v) for v in self.wildcards.values())
        return f"{self.rule} ({values})" if values else self.rule

    @property
    def log(self) -> str | None:
        """The log a line shows: the last '.log' file the rule lists (a cell's own log after its server's), else its
        first log."""
        plain = [path for path in self.logs if path.endswith(".log")]
        return plain[-1] if plain else (self.logs[0] if self.logs else None)


def cell_wall(path: Path) -> float | None:
    """A cell record's wall time (``timing.cell_wall_s``); None if it cannot be read."""
    try:
        return float(json.loads(path.read_text(encoding="utf-8"))["timing"]["cell_wall_s"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def tail(path: Path, size: int = 8192) -> str | None:
    """The end of a log, None if it is not there."""
    try:
        with path.open("rb") as handle:
            handle.seek(max(0, path.stat().st_size - size))
            return handle.read().decode(errors="replace")
    except OSError:
        return None


@dataclass
class Run:
    """The jobs of one Snakemake run as its events arrive; ``lines(now)`` says what to print now.

    A running job's line comes once it has run ``first_s`` and then every ``every_s`` while it runs; a cells line when
    a job that wrote cells ends (at most every ``cells_every_s``, and at once when the last one ends)."""

    workdir: Path = Path(".")
    first_s: float = 5.0
    every_s: float = 30.0
    cells_every_s: float = 10.0
    planned: dict[str, int] = field(default_factory=dict)  # jobs per rule (RUN_INFO)
    jobs: dict[int, Job] = field(default_factory=dict)
    cell_rules: set[str] = field(default_factory=set)  # the rules of the jobs that write cell records
    started: dict[int, float] = field(default_factory=dict)  # running jobs: when they started
    shown: dict[int, float] = field(default_factory=dict)  # running jobs: when their last line came
    done: dict[str, int] = field(default_factory=dict)  # the finished cell jobs, by rule
    durations: dict[str, list[float]] = field(default_factory=dict)  # their durations, by rule
    walls: list[float] = field(default_factory=list)  # the records' wall times of the cells this run measured
    cells: int = 0
    _cells_shown: tuple[int, float] = (0, float("-inf"))  # cell jobs done at the last cells line, and when

    def planned_jobs(self, stats: Mapping[str, int]) -> None:
        self.planned = {rule: int(n) for rule, n in stats.items() if rule != "total"}

    def job_info(self, jobid: int, rule: str, outputs: Sequence[str], logs: Sequence[str], wildcards: Mapping) -> None:
        job = self.jobs[jobid] = Job(rule, list(outputs), list(logs), dict(wildcards))
        if job.cells:
            self.cell_rules.add(rule)

    def job_started(self, jobid: int, now: float) -> None:
        self.started[jobid] = now

    def job_ended(self, jobid: int, now: float, ok: bool = True) -> None:
        """A job finished (``ok``) or failed: its cells are counted (a finished job's), its line stops."""
        began = self.started.pop(jobid, None)
        self.shown.pop(jobid, None)
        job = self.jobs.get(jobid)
        if not ok or job is None or not job.cells:
            return
        self.done[job.rule] = self.done.get(job.rule, 0) + 1
        if began is not None:
            self.durations.setdefault(job.rule, []).append(now - began)
        self.cells += len(job.cells)
        self.walls += [w for w in (cell_wall(self.workdir / c) for c in job.cells) if w is not None]

    def cells_now(self, now: float, last: bool = False) -> str | None:
        """The cells line, when the cell jobs done changed (at most every ``cells_every_s``, unless they are all
        done or ``last``)."""
        rules = self.cell_rules
        total = sum(self.planned.get(rule, 0) for rule in rules)
        done = sum(self.done.get(rule, 0) for rule in rules)
        shown, at = self._cells_shown
        if done == shown or not (last or done >= total or now - at >= self.cells_every_s):
            return None
        self._cells_shown = (done, now)
        remaining = {rule: self.planned.get(rule, 0) - self.done.get(rule, 0) for rule in rules}
        return cells_line(self.cells, self.walls, done, total, estimate_left(self.durations, remaining))

    def lines(self, now: float) -> list[str]:
        """The running jobs' lines that are due, then the cells line if one is."""
        out = []
        for jobid, began in sorted(self.started.items()):
            job = self.jobs.get(jobid)
            due = self.shown.get(jobid, began + self.first_s - self.every_s) + self.every_s
            if job is None or job.log is None or now < due:
                continue
            text = tail(self.workdir / job.log)
            if text is None:
                continue
            out.append(stage_line(job.name, now - began, job.log, text))
            self.shown[jobid] = now
        cells = self.cells_now(now)
        return [*out, cells] if cells else out
