"""One look at the GPUs and the CPU (``Sample``, a line of a cell's samples file) and the verdict on an attempt's
samples (``Verdict``)."""

from __future__ import annotations

import copy
import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

PHASES = ("before", "during", "wait")  # wait: between attempts, waiting for a quiet machine


MARKS = (None, "request-start", "request-end")


@dataclass(frozen=True)
class Sample:
    """One look at the GPUs and the CPU load; ``ok`` is False when NVML failed to answer."""

    t: float
    phase: str
    ok: bool
    error: str | None = None
    devices: list[dict[str, Any]] = field(default_factory=list)
    loadavg_1m: float | None = None
    cpu_count: int | None = None
    mark: str | None = None  # "request-start" | "request-end" | None
    cpu_busy_s: float | None = None  # the machine's busy CPU seconds since boot (all CPUs)
    cpu_own_s: float | None = None  # CPU seconds of the cell script's process tree (live and reaped)
    cpu_top: list[dict[str, Any]] | None = None  # biggest other processes since the previous sample

    def to_json(self) -> dict[str, Any]:
        """A plain JSON-able dict: one line of the samples file."""
        return asdict(self)

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> Sample:
        """Read back what ``to_json`` wrote; missing optional fields become None or []."""
        load, cpus = d.get("loadavg_1m"), d.get("cpu_count")
        return cls(
            t=float(d["t"]),
            phase=str(d["phase"]),
            ok=bool(d["ok"]),
            error=d.get("error"),
            devices=copy.deepcopy(list(d.get("devices") or [])),
            loadavg_1m=None if load is None else float(load),
            cpu_count=None if cpus is None else int(cpus),
            mark=d.get("mark"),
            cpu_busy_s=None if d.get("cpu_busy_s") is None else float(d["cpu_busy_s"]),
            cpu_own_s=None if d.get("cpu_own_s") is None else float(d["cpu_own_s"]),
            cpu_top=copy.deepcopy(d.get("cpu_top")),
        )


@dataclass(frozen=True)
class Verdict:
    """Whether a cell attempt was contended, why, and how well it was watched."""

    contended: bool
    reason: str
    foreign_pids: list[int]
    samples: int
    failed_samples: int
    nvml: str  # "ok" | "unavailable" | "blind"
    foreign_cpu: dict[str, Any] | None = None  # share, cpu_s, window_s, top (measured even when not judged)
    # how the cell's GPU was watched (core.config.backends.watch_of): "nvml" | "unwatched" | "cpu" (a CPU build); and
    # the
    # backend of the build that served the cell
    gpu_watch: str = "nvml"
    backend: str = "cuda"

    def to_json(self) -> dict[str, Any]:
        """A plain JSON-able dict."""
        return asdict(self)


def read_samples(path: Path) -> list[Sample]:
    """The samples of a JSON-lines file written by ``GpuWatch`` (blank lines skipped)."""
    lines = Path(path).read_text(encoding="utf-8").splitlines()
    return [Sample.from_json(json.loads(line)) for line in lines if line.strip()]
