"""CPU time from /proc: the machine's busy time, a process tree's own, and the biggest other users between two
looks (``CpuSampler``); the load average."""

from __future__ import annotations

import contextlib
import os
import time
from pathlib import Path
from typing import Any


def cpu_load() -> tuple[float | None, int | None]:
    """The 1-minute load average and the CPU count (None where the OS does not say)."""
    try:
        load: float | None = os.getloadavg()[0]
    except (OSError, AttributeError):
        load = None
    return load, os.cpu_count()


_CLK_TCK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def _proc_stat(pid: str) -> tuple[str, int, int, int, int] | None:
    """(comm, ppid, start ticks, own CPU ticks, reaped children's CPU ticks) of a process, None if gone."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    comm = text[text.index("(") + 1:text.rindex(")")]
    fields = text[text.rindex(")") + 2:].split()
    # fields[0] is the state (field 3 of proc(5)): utime 14, stime 15, cutime 16, cstime 17, starttime 22
    return comm, int(fields[1]), int(fields[19]), int(fields[11]) + int(fields[12]), int(fields[13]) + int(fields[14])


def _machine_busy_ticks() -> int | None:
    """Busy ticks of all CPUs since boot: user + nice + system + irq + softirq (not idle, iowait or steal)."""
    try:
        with open("/proc/stat", encoding="ascii") as handle:
            fields = handle.readline().split()
    except OSError:
        return None
    user, nice, system, _idle, _iowait, irq, softirq = (int(v) for v in fields[1:8])
    return user + nice + system + irq + softirq


class CpuSampler:
    """The machine's busy CPU time and the share of it used by one process tree (``root``: the cell script,
    whose descendants include the server), plus the biggest other users since the previous call."""

    def __init__(self, root: int | None = None) -> None:
        self.root = os.getpid() if root is None else root
        self._previous: dict[tuple[int, int], int] = {}
        self._previous_t: float | None = None

    def __call__(self) -> dict[str, Any]:
        busy = _machine_busy_ticks()
        if busy is None or not Path("/proc/self/stat").exists():
            return {}
        procs: dict[int, tuple[str, int, int, int, int]] = {}
        with contextlib.suppress(OSError):
            for entry in os.scandir("/proc"):
                if entry.name.isdigit():
                    stat = _proc_stat(entry.name)
                    if stat is not None:
                        procs[int(entry.name)] = stat
        children: dict[int, list[int]] = {}
        for pid, stat in procs.items():
            children.setdefault(stat[1], []).append(pid)
        own, todo = set(), [self.root]
        while todo:
            pid = todo.pop()
            if pid in procs and pid not in own:
                own.add(pid)
                todo.extend(children.get(pid, []))
        own_ticks = sum(procs[pid][3] + procs[pid][4] for pid in own)
        now, current, deltas = time.time(), {}, []
        # a process first seen now counts whole if it started after the previous call (else it was missed: skip)
        since = None if self._previous_t is None else (self._previous_t - _boot_time()) * _CLK_TCK
        for pid, (comm, _ppid, start, ticks, _reaped) in procs.items():
            if pid in own:
                continue
            current[(pid, start)] = ticks
            before = self._previous.get((pid, start))
            if since is None or (before is None and start < since):
                continue
            delta = ticks - (before or 0)
            if delta > 0:
                deltas.append({"pid": pid, "comm": comm, "cpu_s": round(delta / _CLK_TCK, 2)})
        self._previous, self._previous_t = current, now
        deltas.sort(key=lambda d: -d["cpu_s"])
        return {"cpu_busy_s": busy / _CLK_TCK, "cpu_own_s": own_ticks / _CLK_TCK, "cpu_top": deltas[:5]}


def _boot_time() -> float:
    """The machine's boot time (seconds since the epoch, /proc/stat's btime)."""
    with open("/proc/stat", encoding="ascii") as handle:
        for line in handle:
            if line.startswith("btime "):
                return float(line.split()[1])
    return 0.0
