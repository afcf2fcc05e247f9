"""The guard every cell script runs under: SIGTERM, SIGHUP, SIGINT (Ctrl-C, unless it was inherited as ignored) and
the death of the Snakemake process that started the script become one exception (``Interrupted``), so ``finally``
blocks stop the server and remove partial files whether the job was cancelled by a batch scheduler, hung up,
interrupted from the terminal, or orphaned by a ``kill -9`` of Snakemake (a killed Snakemake that nobody has reaped
yet, a zombie, counts as dead)."""

from __future__ import annotations

import contextlib
import os
import signal
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import psutil


class Interrupted(BaseException):
    """SIGTERM, SIGHUP, SIGINT or the death of the parent Snakemake: unwind (``finally`` blocks stop the server)."""


def is_alive(process: psutil.Process) -> bool:
    """False once the process has exited, also while it is an unreaped zombie or its pid was reused."""
    try:
        return process.is_running() and process.status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False
    except psutil.AccessDenied:  # it exists (else NoSuchProcess) but its state cannot be read: take it as alive
        return True


def _is_snakemake(process: psutil.Process) -> bool:
    """True for `python -m snakemake ...` and the `snakemake` console script."""
    try:
        argv = process.cmdline()[:3]
    except psutil.Error:
        return False
    return any(Path(arg).name == "snakemake" for arg in argv)


def snakemake_ancestor() -> int:
    """The Snakemake process this script runs under (its nearest ancestor that is Snakemake), else the parent.

    Snakemake runs a ``script:`` job as ``bash -c 'python .snakemake/scripts/tmpXXXX.script.py'`` from a thread of
    its own process (locally, and inside a cluster job); after a ``kill -9`` of Snakemake that bash lives on, so
    the parent alone says nothing.
    """
    with contextlib.suppress(psutil.Error):
        for ancestor in psutil.Process().parents():
            if ancestor.pid > 1 and _is_snakemake(ancestor):
                return ancestor.pid
    return os.getppid()


# The signals that unwind a cell. SIGINT is among them only where it was not inherited as ignored.
STOP_SIGNALS = (signal.SIGTERM, signal.SIGHUP, signal.SIGINT)


def sigint_disposition() -> str:
    """How this process found SIGINT: 'ignored' (inherited so: a background job of a shell without job control)
    or 'default' (Python's KeyboardInterrupt handler, or any handler: Ctrl-C reaches this process)."""
    return "ignored" if signal.getsignal(signal.SIGINT) == signal.SIG_IGN else "default"


@contextlib.contextmanager
def signals_raise() -> Iterator[None]:
    """Turn SIGTERM, SIGHUP and SIGINT into ``Interrupted`` for the duration, once: after the first, all three are
    ignored until the process exits, so a second Ctrl-C cannot cut the server's stop short. An inherited ignored
    SIGINT stays ignored (whoever started this process asked for it, and Snakemake above ignores it too)."""

    def handler(signum: int, _frame: object) -> None:
        if _interrupted.is_set():  # already unwinding: let the cleanup (stopping the server) finish
            return
        _interrupted.set()
        for sig in STOP_SIGNALS:  # this process is stopping: later signals are ignored, up to its exit
            signal.signal(sig, signal.SIG_IGN)
        raise Interrupted(_guard_reason.get(signum) or f"received signal {signal.Signals(signum).name}")

    previous = {}
    for sig in STOP_SIGNALS:
        if sig == signal.SIGINT and signal.getsignal(sig) == signal.SIG_IGN:
            continue
        with contextlib.suppress(ValueError):  # not in the main thread: leave as is
            previous[sig] = signal.signal(sig, handler)
    try:
        yield
    finally:
        if not _interrupted.is_set():  # once interrupted, the stop signals stay ignored (see the handler)
            for sig, old in previous.items():
                signal.signal(sig, old)


_guard_reason: dict[int, str] = {}


_interrupted = threading.Event()  # set once the first signal has been turned into Interrupted in this process


@dataclass(frozen=True)
class Guarded:
    """What the guard watches: the Snakemake pid, and how SIGINT was found ('default' or 'ignored')."""

    pid: int
    sigint: str

    def describe(self) -> str:
        """'watching Snakemake pid 7; SIGINT default' (or 'SIGINT ignored, as inherited: Ctrl-C does not stop it')."""
        sigint = (
            "SIGINT ignored, as inherited: Ctrl-C does not stop it" if self.sigint == "ignored" else "SIGINT default"
        )
        return f"watching Snakemake pid {self.pid}; {sigint}"


@contextlib.contextmanager
def interrupt_guard(watch_pid: int | None = None, interval_s: float = 0.5) -> Iterator[Guarded]:
    """Run the block so that SIGTERM, SIGHUP, SIGINT and the death of ``watch_pid`` (default: the Snakemake process
    above this one; dead includes a zombie) raise ``Interrupted`` in the main thread; yields what it watches."""
    pid = watch_pid if watch_pid is not None else snakemake_ancestor()
    sigint = sigint_disposition()
    try:
        watched: psutil.Process | None = psutil.Process(pid)
    except psutil.NoSuchProcess:
        watched = None
    stop = threading.Event()

    def watch() -> None:
        while not stop.wait(interval_s):
            if watched is None or not is_alive(watched):
                _guard_reason[signal.SIGHUP] = f"its parent process (Snakemake, pid {pid}) died"
                os.kill(os.getpid(), signal.SIGHUP)
                return

    thread = threading.Thread(target=watch, name="parent-watch", daemon=True)
    with signals_raise():
        thread.start()
        try:
            yield Guarded(pid, sigint)
        finally:
            stop.set()
