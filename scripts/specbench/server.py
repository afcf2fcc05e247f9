"""Start one ``llama-server`` on 127.0.0.1, wait until it is healthy, and always stop it."""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import httpx

HOST = "127.0.0.1"
_PR_SET_PDEATHSIG = 1


class ServerError(RuntimeError):
    """The server could not be started or answered badly; the message names its log."""


def free_port() -> int:
    """A TCP port that is free on 127.0.0.1 right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((HOST, 0))
        return int(sock.getsockname()[1])


def _die_with_parent() -> None:
    """In the child: get SIGKILL if the parent dies, so no server outlives its cell."""
    with contextlib.suppress(OSError, AttributeError):
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)


@dataclass
class RunningServer:
    """A started server: its process, address and log."""

    process: subprocess.Popen
    argv: list[str]
    port: int
    log_path: Path
    started_at: float = field(default_factory=time.time)

    @property
    def url(self) -> str:
        return f"http://{HOST}:{self.port}"

    @property
    def pid(self) -> int:
        return self.process.pid


def server_argv(binary: Path, args: list[str], port: int) -> list[str]:
    """The full command line: binary, the workflow's resolved arguments, then the loopback address and port."""
    return [str(binary), *args, "--host", HOST, "--port", str(port)]


def _terminate(process: subprocess.Popen, grace_s: float = 10.0) -> None:
    """SIGTERM the server's process group, then SIGKILL if it lingers; reap it."""
    if process.poll() is not None:
        return
    for sig, wait_s in ((signal.SIGTERM, grace_s), (signal.SIGKILL, 5.0)):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, sig)
        try:
            process.wait(timeout=wait_s)
            return
        except subprocess.TimeoutExpired:
            continue


def _wait_healthy(server: RunningServer, timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    with httpx.Client(timeout=5.0) as client:
        while time.monotonic() < deadline:
            code = server.process.poll()
            if code is not None:
                raise ServerError(
                    f"llama-server exited with code {code} before it became ready; read {server.log_path}"
                )
            with contextlib.suppress(httpx.HTTPError):
                if client.get(f"{server.url}/health").status_code == 200:
                    return
            time.sleep(0.2)
    raise ServerError(f"llama-server was not ready after {timeout_s:.0f} s; read {server.log_path}")


class _Interrupted(BaseException):
    """Raised from a SIGTERM/SIGHUP handler so that ``finally`` blocks stop the server."""


@contextlib.contextmanager
def _signals_raise() -> Iterator[None]:
    """Turn SIGTERM and SIGHUP into an exception for the duration (Ctrl-C already is one)."""

    def handler(signum: int, _frame: object) -> None:
        raise _Interrupted(f"received signal {signal.Signals(signum).name}")

    previous = {}
    for sig in (signal.SIGTERM, signal.SIGHUP):
        with contextlib.suppress(ValueError):  # not in the main thread: leave as is
            previous[sig] = signal.signal(sig, handler)
    try:
        yield
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)


@contextlib.contextmanager
def llama_server(
    binary: Path,
    args: list[str],
    log_path: Path,
    startup_timeout_s: float = 600.0,
) -> Iterator[RunningServer]:
    """Run a server for the duration of the ``with`` block; it is stopped on success, error and interrupt."""
    port = free_port()
    argv = server_argv(binary, args, port)
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with _signals_raise(), open(log_path, "wb") as log:
        process = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            preexec_fn=_die_with_parent,
        )
        server = RunningServer(process, argv, port, log_path)
        try:
            _wait_healthy(server, startup_timeout_s)
            yield server
        finally:
            _terminate(process)
