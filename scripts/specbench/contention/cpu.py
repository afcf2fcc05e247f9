"""CPU time through psutil: the machine's busy time, a process tree's own, and the biggest other users between two
looks (``CpuSampler``); the load average."""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Collection
from typing import Any, NamedTuple

import psutil


def cpu_load() -> tuple[float | None, int | None]:
    """The 1-minute load average and the CPU count (None where the OS does not say)."""
    try:
        load: float | None = os.getloadavg()[0]
    except (OSError, AttributeError):
        load = None
    return load, os.cpu_count()


class _Proc(NamedTuple):
    """What one look at a process gives: its name, parent, creation time, own CPU seconds and its reaped
    children's (0 where the OS does not count them)."""

    name: str
    ppid: int
    created: float
    own_s: float
    reaped_s: float


CREATED_SLACK_S = 1.0  # psutil's process start times: the boot time (whole seconds) plus the start in ticks
_FIELDS = ["pid", "ppid", "name", "create_time", "cpu_times"]


def _processes() -> dict[int, _Proc]:
    """Every process this user can see, with its CPU times; ones that vanish or cannot be read are left out."""
    found = {}
    for proc in psutil.process_iter(_FIELDS, ad_value=None):
        info, times = proc.info, proc.info.get("cpu_times")
        if times is None or info.get("create_time") is None:
            continue
        reaped = getattr(times, "children_user", 0.0) + getattr(times, "children_system", 0.0)
        found[info["pid"]] = _Proc(
            info.get("name") or "?", info.get("ppid") or 0, info["create_time"], times.user + times.system, reaped
        )
    return found


def machine_busy_s() -> float:
    """Busy CPU seconds of all CPUs since boot: user + nice + system + irq + softirq (not idle, iowait or steal)."""
    times = psutil.cpu_times()
    return sum(getattr(times, name, 0.0) for name in ("user", "nice", "system", "irq", "softirq"))


def command_of(pid: int, width: int = 80) -> str | None:
    """A process's command line on one line (runs of whitespace as one space), shortened to ``width`` characters
    (None when it is gone or unreadable)."""
    with contextlib.suppress(psutil.Error):
        argv = psutil.Process(pid).cmdline()
        if argv:
            text = " ".join(" ".join(argv).split())
            return text if len(text) <= width else text[: width - 3] + "..."
    return None


def _tree(procs: dict[int, _Proc], root: int) -> set[int]:
    """``root`` and all its descendants among ``procs``."""
    children: dict[int, list[int]] = {}
    for pid, proc in procs.items():
        children.setdefault(proc.ppid, []).append(pid)
    own, todo = set(), [root]
    while todo:
        pid = todo.pop()
        if pid in procs and pid not in own:
            own.add(pid)
            todo.extend(children.get(pid, []))
    return own


class CpuSampler:
    """The machine's busy CPU time and the share of it used by the cell's own process trees (``root``: the cell
    script, whose descendants include a server it started; ``also``: the processes of a server it did not start,
    an endpoint on this machine), plus the biggest other users since the previous call (with their command lines)."""

    def __init__(self, root: int | None = None, also: Collection[int] = ()) -> None:
        self.root = os.getpid() if root is None else root
        self.also = tuple(also)
        self._previous: dict[tuple[int, float], float] = {}
        self._previous_t: float | None = None

    def __call__(self) -> dict[str, Any]:
        busy, now = machine_busy_s(), time.time()
        procs = _processes()
        own = set().union(*(_tree(procs, root) for root in (self.root, *self.also)))
        own_s = sum(procs[pid].own_s + procs[pid].reaped_s for pid in own)
        current, deltas = {}, []
        for pid, proc in procs.items():
            if pid in own:
                continue
            current[(pid, proc.created)] = proc.own_s
            before = self._previous.get((pid, proc.created))
            # a process first seen now counts whole if it started after the previous call began (else it was
            # missed: skip); psutil dates a start from the boot time in whole seconds, so up to 1 s early
            if self._previous_t is None or (before is None and proc.created < self._previous_t - CREATED_SLACK_S):
                continue
            delta = proc.own_s - (before or 0.0)
            if delta > 0.005:
                deltas.append({"pid": pid, "comm": proc.name, "cpu_s": round(delta, 2)})
        self._previous, self._previous_t = current, now
        deltas.sort(key=lambda d: -d["cpu_s"])
        top = [{**d, "command": command_of(d["pid"])} for d in deltas[:5]]
        return {"cpu_busy_s": busy, "cpu_own_s": own_s, "cpu_top": top}
