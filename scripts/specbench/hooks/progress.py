"""What a user running the workflow sees while it runs: the stage that is working (the last progress line of its log:
the download, the llama.cpp build, the conversion) and, for the cells, done / total with the time left estimated from
what the cell records hold: each condition's wall times, scaled by the pace at which this run's cells finish (their
``ended_at``: the jobs' overhead between cells, or cells measured side by side on a cluster). ``ProgressWatch`` is a
thread of the main Snakemake process (started by the Snakefile's ``onstart``); it only reads what the jobs write, so
it is no rule's code and reruns nothing."""

from __future__ import annotations

import base64
import binascii
import datetime as dt
import json
import re
import sys
import threading
import time
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from statistics import fmean
from typing import TextIO

PREFIX = "specbench progress:"
# The long stages: what a progress line calls each, its rule's log (a glob), and where its outputs go ('{name}': what
# the log's '*' stands for), by which a running job is told (Snakemake marks the outputs of running jobs incomplete)
STAGE_LOGS = (
    ("llama.cpp download", "logs/llama_cpp/fetch.log", "resources/llama.cpp/source-"),
    ("llama.cpp source", "logs/llama_cpp/source.log", "resources/llama.cpp/src"),
    ("llama.cpp build", "logs/llama_cpp/build.log", "resources/llama.cpp/build"),
    ("model download", "logs/models/*.download.log", "resources/models/{name}/hf"),
    ("dataset download", "logs/datasets/*.log", "resources/datasets/{name}.jsonl"),
    ("tiny model", "logs/models/*.tiny.log", "resources/models/{name}/tiny"),
    ("conversion to GGUF", "logs/models/*.convert.log", "resources/models/{name}/"),
    ("quantization", "logs/models/*.quantize.log", "resources/models/{name}/"),
)
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
READ_AT_START = 200  # records already there read for the estimate (the newest): enough, and fast on big matrices


def duration(seconds: float) -> str:
    """'45 s', '7 min', '2 h 05 min'."""
    if seconds < 90:
        return f"{seconds:.0f} s"
    minutes = round(seconds / 60)
    return f"{minutes} min" if minutes < 120 else f"{minutes // 60} h {minutes % 60:02d} min"


def estimate_left(
    walls: Mapping[str, Sequence[float]], remaining: Mapping[str, int], pace: float = 1.0
) -> float | None:
    """Seconds left: each remaining cell at the mean wall time of the measured cells of its condition (of all measured
    cells where its condition has none yet), times ``pace``; None before any cell was measured."""
    measured = [w for values in walls.values() for w in values]
    if not measured:
        return None
    overall = fmean(measured)
    return pace * sum(n * (fmean(walls[c]) if walls.get(c) else overall) for c, n in remaining.items())


def pace_of(finished: Sequence[tuple[float, float]]) -> float:
    """How the time between this run's cells finishing compares with their own wall times (``finished``: each cell's
    end, seconds since the epoch, and its wall time, from the records): above 1 the job overhead between cells, below
    1 cells measured side by side (a cluster); 1 until three cells of this run are in."""
    if len(finished) < 3:
        return 1.0
    ordered = sorted(finished)
    gap = (ordered[-1][0] - ordered[0][0]) / (len(ordered) - 1)  # each gap ends with one of the later cells
    return gap / fmean(wall for _, wall in ordered[1:])


def cells_line(
    done: int,
    total: int,
    walls: Mapping[str, Sequence[float]],
    remaining: Mapping[str, int],
    measured_now: int,
    pace: float = 1.0,
) -> str:
    """'specbench progress: cells 37 of 144 done (12 measured now; 4.1 s a cell); about 7 min left' (the mean wall
    time of every measured cell, also of those an earlier run measured)."""
    line = f"{PREFIX} cells {done} of {total} done"
    if measured_now:
        recent = [w for values in walls.values() for w in values]
        line += f" ({measured_now} measured now; {fmean(recent):.1f} s a cell)"
    left = estimate_left(walls, remaining, pace)
    if done >= total:
        return line
    return line + (f"; about {duration(left)} left" if left is not None else "; time left: after the first cell")


def last_progress(text: str, width: int = 110) -> str:
    """The last thing a log says, as one short line: its last non-empty line, or of a progress bar (carriage
    returns) its last state, colours removed."""
    pieces = [p.strip() for p in re.split(r"[\r\n]", _ANSI.sub("", text)) if p.strip()]
    last = pieces[-1] if pieces else "(no output yet)"
    return last if len(last) <= width else last[: width - 3] + "..."


def running_outputs(workdir: Path) -> set[str]:
    """The outputs of the jobs running now, from Snakemake's markers (``.snakemake/incomplete/``: each output's path,
    urlsafe base64, split into '@'-prefixed folders when long); empty when there are none or they cannot be read."""
    root, found = workdir / ".snakemake" / "incomplete", set()
    for marker in root.rglob("*") if root.is_dir() else ():
        if marker.is_file():
            encoded = "".join(part.removeprefix("@") for part in marker.relative_to(root).parts)
            try:
                found.add(base64.urlsafe_b64decode(encoded).decode())
            except (binascii.Error, ValueError):
                continue
    return found


def _timed(path: Path) -> tuple[float, float | None] | None:
    """A cell record's wall time (``timing.cell_wall_s``; ``figures`` in version 6) and its end (``ended_at``, seconds
    since the epoch, None if absent); None if unreadable."""
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
        wall = float((record.get("timing") or record.get("figures") or {})["cell_wall_s"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
    try:
        return wall, dt.datetime.fromisoformat(record["ended_at"]).timestamp()
    except (KeyError, TypeError, ValueError):
        return wall, None


@dataclass
class ProgressWatch:
    """Every ``interval_s``, print the working stages and the cells' progress to ``out`` (lines start with PREFIX).

    ``cells``: each expected cell file with its condition; ``remade``: the outputs this run makes again (out of date:
    a cell file there counts as done only once it is rewritten); ``workdir``: where the logs are. A stage line at most
    every ``stage_every_s`` per log while it grows; a cells line when the count changed (at most every
    ``cells_every_s``), so a run that measures no cell prints none."""

    cells: Sequence[tuple[str, str]]
    remade: Collection[str] = ()
    workdir: Path = Path(".")
    interval_s: float = 5.0
    stage_every_s: float = 30.0
    cells_every_s: float = 10.0
    out: TextIO = field(default_factory=lambda: sys.stderr)
    clock: Callable[[], float] = time.monotonic
    _walls: dict[str, list[float]] = field(default_factory=dict)
    _seen: set[str] = field(default_factory=set)
    _stale: dict[str, int] = field(default_factory=dict)  # out-of-date cell files there at the start: their mtime
    # per log: its modification time when last looked at, when this run first saw it grow, when it was last shown
    _logs: dict[Path, tuple[float | None, float | None, float]] = field(default_factory=dict)
    _last_cells: tuple[int, float] = (-1, float("-inf"))
    _measured_now: int = 0
    _finished: list[tuple[float, float]] = field(default_factory=list)  # this run's cells: end, wall time
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None

    def __post_init__(self) -> None:
        present = sorted(
            (p for p, _ in self.cells if (self.workdir / p).is_file()),
            key=lambda p: -(self.workdir / p).stat().st_mtime,
        )
        condition = dict(self.cells)
        for path in present[:READ_AT_START]:
            timed = _timed(self.workdir / path)
            if timed is not None:
                self._walls.setdefault(condition[path], []).append(timed[0])
        remade = set(self.remade)
        self._stale = {p: (self.workdir / p).stat().st_mtime_ns for p in present if p in remade}
        self._seen = set(present) - set(self._stale)
        self._last_cells = (len(self._seen), float("-inf"))  # the first line comes with the first cell of this run
        for _, pattern, _ in STAGE_LOGS:
            for log in self.workdir.glob(pattern):
                self._logs[log] = (log.stat().st_mtime, None, float("-inf"))  # written before this run

    def _print(self, line: str) -> None:
        print(line, file=self.out, flush=True)

    def poll(self) -> None:
        """One look: new cell records and growing stage logs."""
        now, running = self.clock(), running_outputs(self.workdir)
        for stage, pattern, outputs in STAGE_LOGS:
            for log in sorted(self.workdir.glob(pattern)):
                name = log.name.removesuffix(pattern.split("*")[1]) if "*" in pattern else ""
                busy = any(out.startswith(outputs.format(name=name)) for out in running)
                self._stage(f"{stage} ({name})" if name else stage, log, now, busy)
        condition = dict(self.cells)
        for path, _ in self.cells:
            if path not in self._seen and self._written(path):
                self._seen.add(path)
                timed = _timed(self.workdir / path)
                if timed is not None:
                    self._walls.setdefault(condition[path], []).append(timed[0])
                    self._measured_now += 1
                    if timed[1] is not None:
                        self._finished.append((timed[1], timed[0]))
        done, (shown, at) = len(self._seen), self._last_cells
        if done != shown and (done == len(self.cells) or now - at >= self.cells_every_s):
            remaining: dict[str, int] = {}
            for path, cond in self.cells:
                if path not in self._seen:
                    remaining[cond] = remaining.get(cond, 0) + 1
            self._print(
                cells_line(done, len(self.cells), self._walls, remaining, self._measured_now, pace_of(self._finished))
            )
            self._last_cells = (done, now)

    def _written(self, path: str) -> bool:
        """Whether a cell file is there and not the out-of-date one this run is to make again."""
        try:
            mtime = (self.workdir / path).stat().st_mtime_ns
        except OSError:
            return False
        return self._stale.get(path) != mtime

    def _stage(self, stage: str, log: Path, now: float, busy: bool) -> None:
        """A line for a stage whose log grew since the last look, or whose job still runs (a long compile writes
        nothing for minutes), at most every ``stage_every_s``."""
        try:
            mtime = log.stat().st_mtime
        except OSError:
            return
        before, first, shown = self._logs.get(log, (None, None, float("-inf")))
        if mtime == before and not (busy and first is not None):
            return
        first = now if first is None else first
        if now - shown >= self.stage_every_s:
            with log.open("rb") as handle:
                handle.seek(max(0, log.stat().st_size - 8192))
                tail = handle.read().decode(errors="replace")
            self._print(
                f"{PREFIX} {stage}, {duration(now - first)} so far: {last_progress(tail)}  "
                f"[{log.relative_to(self.workdir)}]"
            )
            shown = now
        self._logs[log] = (mtime, first, shown)

    def _run(self) -> None:
        while not self._stop.wait(self.interval_s):
            try:
                self.poll()
            except OSError:  # a file that vanished between two looks: the next look sees the rest
                continue

    def start(self) -> ProgressWatch:
        """Watch in a daemon thread (it ends with the Snakemake process)."""
        self._thread = threading.Thread(target=self._run, name="specbench-progress", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """A last look (the final count), then stop."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=self.interval_s + 1)
        self.poll()
