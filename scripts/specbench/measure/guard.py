"""The guard every cell script runs under: SIGTERM, SIGHUP and the death of the Snakemake process that started the
script become one exception (``Interrupted``), so ``finally`` blocks stop the server and remove partial files whether
the job was cancelled by a batch scheduler, hung up, or orphaned by a ``kill -9`` of Snakemake."""

from __future__ import annotations

import contextlib
import os
import signal
import threading
from collections.abc import Iterator
from pathlib import Path


class Interrupted(BaseException):
    """SIGTERM, SIGHUP or the death of the parent Snakemake: unwind (``finally`` blocks stop the server)."""


def _process_start(pid: int) -> int | None:
    """A process's start time in clock ticks since boot (with the pid, a unique identity), None if it is gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return int(stat.rsplit(")", 1)[1].split()[19])


def _parent_of(pid: int) -> int | None:
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
    except (OSError, ValueError, IndexError):
        return None


def _is_snakemake(pid: int) -> bool:
    """True for `python -m snakemake ...` and the `snakemake` console script."""
    try:
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[:3]
    except OSError:
        return False
    return any(Path(arg.decode(errors="replace")).name == "snakemake" for arg in argv)


def snakemake_ancestor() -> int:
    """The Snakemake process this script runs under (its nearest ancestor that is Snakemake), else the parent.

    Snakemake runs a ``script:`` job as ``bash -c 'python .snakemake/scripts/tmpXXXX.script.py'`` from a thread of
    its own process (locally, and inside a cluster job); after a ``kill -9`` of Snakemake that bash lives on, so
    the parent alone says nothing.
    """
    pid = os.getppid()
    while pid and pid > 1:
        if _is_snakemake(pid):
            return pid
        pid = _parent_of(pid) or 0
    return os.getppid()


@contextlib.contextmanager
def signals_raise() -> Iterator[None]:
    """Turn SIGTERM and SIGHUP into ``Interrupted`` for the duration (Ctrl-C already is KeyboardInterrupt)."""

    def handler(signum: int, _frame: object) -> None:
        if _interrupted.is_set():  # already unwinding: let the cleanup (stopping the server) finish
            return
        _interrupted.set()
        raise Interrupted(_guard_reason.get(signum) or f"received signal {signal.Signals(signum).name}")

    previous = {}
    for sig in (signal.SIGTERM, signal.SIGHUP):
        with contextlib.suppress(ValueError):  # not in the main thread: leave as is
            previous[sig] = signal.signal(sig, handler)
    try:
        yield
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)


_guard_reason: dict[int, str] = {}


_interrupted = threading.Event()  # set once the first signal has been turned into Interrupted in this process


@contextlib.contextmanager
def interrupt_guard(watch_pid: int | None = None, interval_s: float = 0.5) -> Iterator[int]:
    """Run the block so that SIGTERM, SIGHUP and the death of ``watch_pid`` (default: the Snakemake process
    above this one) raise ``Interrupted`` in the main thread; yields the watched pid."""
    pid = watch_pid if watch_pid is not None else snakemake_ancestor()
    start = _process_start(pid)
    stop = threading.Event()

    def watch() -> None:
        while not stop.wait(interval_s):
            if _process_start(pid) != start:
                _guard_reason[signal.SIGHUP] = f"its parent process (Snakemake, pid {pid}) died"
                os.kill(os.getpid(), signal.SIGHUP)
                return

    thread = threading.Thread(target=watch, name="parent-watch", daemon=True)
    with signals_raise():
        thread.start()
        try:
            yield pid
        finally:
            stop.set()
