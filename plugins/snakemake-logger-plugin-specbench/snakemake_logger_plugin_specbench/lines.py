"""The progress lines' words: durations, a log's last line, the cells line with its time left."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from statistics import fmean

PREFIX = "specbench progress:"
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


def duration(seconds: float) -> str:
    """'45 s', '7 min', '2 h 05 min'."""
    if seconds < 90:
        return f"{seconds:.0f} s"
    minutes = round(seconds / 60)
    return f"{minutes} min" if minutes < 120 else f"{minutes // 60} h {minutes % 60:02d} min"


def last_progress(text: str, width: int = 110) -> str:
    """The last thing a log says, as one short line: its last non-empty line, or of a progress bar (carriage
    returns) its last state, colours removed."""
    pieces = [p.strip() for p in re.split(r"[\r\n]", _ANSI.sub("", text)) if p.strip()]
    last = pieces[-1] if pieces else "(no output yet)"
    return last if len(last) <= width else last[: width - 3] + "..."


def estimate_left(durations: Mapping[str, Sequence[float]], remaining: Mapping[str, int]) -> float | None:
    """Seconds left: each rule's remaining jobs at the mean duration of its finished jobs (of all finished jobs
    where it has none yet); None before any job finished. Durations run from a job's start to its end as Snakemake
    saw them, so the overhead between jobs and jobs running side by side are in them."""
    finished = [d for values in durations.values() for d in values]
    if not finished:
        return None
    overall = fmean(finished)
    return sum(n * (fmean(durations[r]) if durations.get(r) else overall) for r, n in remaining.items())


def cells_line(cells: int, walls: Sequence[float], jobs_done: int, jobs_total: int, left: float | None) -> str:
    """'specbench progress: cells 31 measured in 12 of 40 jobs (4.1 s a cell); about 7 min left' (``walls``: the
    records' own wall times of the cells measured in this run)."""
    line = f"{PREFIX} cells {cells} measured in {jobs_done} of {jobs_total} jobs"
    if walls:
        line += f" ({fmean(walls):.1f} s a cell)"
    if jobs_done >= jobs_total:
        return line
    return line + (f"; about {duration(left)} left" if left is not None else "; time left: after the first job")


def stage_line(job: str, running_s: float, log: str, tail: str) -> str:
    """'specbench progress: build (b11223), 30 s so far: [100%] Linking CXX executable  [logs/llama_cpp/build.log]'."""
    return f"{PREFIX} {job}, {duration(running_s)} so far: {last_progress(tail)}  [{log}]"
