"""Start one server (``llama-server``, or vLLM's) on 127.0.0.1, check that the process answering is the one
started, and always stop it."""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import psutil

from specbench.core.steps.guard import signals_raise

HOST = "127.0.0.1"
_PR_SET_PDEATHSIG = 1


class ServerError(RuntimeError):
    """The server could not be started or answered badly; ``reason`` says what, the message also names its log;
    ``final`` when another attempt cannot help (the cell fails at once)."""

    def __init__(self, reason: str, log_path: Path, *, final: bool = False) -> None:
        super().__init__(f"{reason}; read {log_path}")
        self.reason, self.log_path, self.final = reason, log_path, final


def free_port() -> int:
    """A TCP port that is free on 127.0.0.1 right now (another process may take it before the server binds)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((HOST, 0))
        return int(sock.getsockname()[1])


def _die_with_parent() -> None:
    """In the child, on Linux: get SIGKILL if the parent dies, so no server outlives its cell (prctl's parent-death
    signal; nothing portable offers it). Elsewhere nothing stands in for it: the cell script's guard stops the server
    on every exit it lives through (signals, a dead Snakemake, errors), not on a SIGKILL of the script itself."""
    if not sys.platform.startswith("linux"):
        return
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
    name: str = "llama-server"  # what the messages call it

    @property
    def url(self) -> str:
        return f"http://{HOST}:{self.port}"

    @property
    def pid(self) -> int:
        return self.process.pid


def server_argv(binary: Path, args: list[str], port: int) -> list[str]:
    """The full command line: binary, the workflow's resolved arguments, then the loopback address and port."""
    return [str(binary), *args, "--host", HOST, "--port", str(port)]


def exit_description(code: int | None) -> str:
    """'exited with code 1' or 'was killed by SIGKILL' (Popen's negative return codes are signals)."""
    if code is None:
        return "is still running"
    if code < 0:
        with contextlib.suppress(ValueError):
            return f"was killed by {signal.Signals(-code).name}"
    return f"exited with code {code}"


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


# --- who answers on a port (psutil: the kernel's socket table) --------------------------------------------------

_LOOPBACK_OR_ANY = (HOST, "0.0.0.0", "::", "::ffff:127.0.0.1")
UNIDENTIFIED = "another process (not identifiable here)"


class SocketCheckError(RuntimeError):
    """Which process listens on a port cannot be read here (no permission, an unsupported platform): a new server
    would meet the same wall, so the cell ends at once instead of waiting for a start-up that is never confirmed."""


def listening_addresses(pid: int) -> list[tuple[str, int]]:
    """(address, port) of every TCP socket the process holds in LISTEN state; empty once it is gone.

    Raises SocketCheckError when its sockets cannot be read (psutil.AccessDenied, or no support on this platform).
    """
    try:
        connections = psutil.Process(pid).net_connections(kind="tcp")
    except (psutil.NoSuchProcess, psutil.ZombieProcess):
        return []
    except (psutil.AccessDenied, NotImplementedError, OSError) as error:
        raise SocketCheckError(
            f"the sockets of pid {pid} cannot be read here ({type(error).__name__}: {error or 'no detail'})"
        ) from error
    return [(c.laddr.ip, c.laddr.port) for c in connections if c.status == psutil.CONN_LISTEN and c.laddr]


def port_holders(port: int) -> str:
    """Who else listens on ``port`` (loopback or any address), as words: 'pid 7, 9', 'an unknown process' (a socket
    whose owner this user may not see), or 'another process (not identifiable here)' where the system-wide table
    cannot be read at all (macOS without root)."""
    return describe_listeners(listener_pids(port))


def describe_listeners(listeners: list[int | None] | None) -> str:
    """One read of the socket table (``listener_pids``) in words, as ``port_holders`` gives them."""
    if listeners is None:
        return UNIDENTIFIED
    if not listeners:
        return "nobody"
    pids = sorted({pid for pid in listeners if pid is not None})
    return f"pid {', '.join(map(str, pids))}" if pids else "an unknown process"


def listener_pids(port: int) -> list[int | None] | None:
    """The pid of every socket listening on ``port`` on the loopback or any address (None: an owner this user may
    not see); None where the system-wide socket table cannot be read."""
    try:
        connections = psutil.net_connections(kind="tcp")
    except (psutil.AccessDenied, NotImplementedError, OSError):
        return None
    return [
        c.pid
        for c in connections
        if c.status == psutil.CONN_LISTEN and c.laddr and c.laddr.port == port and c.laddr.ip in _LOOPBACK_OR_ANY
    ]


def descendants(pid: int) -> list[int]:
    """Every live descendant of ``pid`` (a server's engine and workers), in no particular order."""
    try:
        return [child.pid for child in psutil.Process(pid).children(recursive=True)]
    except psutil.Error:
        return []


def listener_owner(server: RunningServer) -> str | None:
    """Who listens on the server's port: "ours" when this server's process holds a listening socket on it on
    127.0.0.1 (or any address); else None while nobody does, or a description of the other process(es).

    Raises SocketCheckError when the server's own sockets cannot be read."""
    if any(port == server.port and address in _LOOPBACK_OR_ANY for address, port in listening_addresses(server.pid)):
        return "ours"
    # it may bind between any two reads: the system-wide table is read once, and whom it names is judged from that
    listeners = listener_pids(server.port)
    if server.pid in (listeners or []):
        return "ours"
    holders = describe_listeners(listeners)  # unreadable: nobody known (a server that cannot bind exits, and says so)
    return None if holders in ("nobody", UNIDENTIFIED) else holders


def check_identity(server: RunningServer) -> None:
    """Raise ServerError unless the socket listening on 127.0.0.1:port belongs to this server's process.

    ``free_port`` can only say a port was free a moment ago; if another process took it first, our server fails
    to bind while the other one may well answer HTTP. The kernel's socket table says who really listens, so no
    request is ever sent to a process this cell did not start.
    """
    owner = _owner_or_final(server)
    if owner != "ours":
        raise ServerError(_not_ours(server, owner), server.log_path)


def _not_ours(server: RunningServer, owner: str | None) -> str:
    return (
        f"port {server.port} on {HOST} is held by {owner or 'nobody'}, not by this cell's {server.name} "
        f"(pid {server.pid}); nothing was sent to it"
    )


def _owner_or_final(server: RunningServer) -> str | None:
    """``listener_owner``, with a socket that cannot be checked turned into a final ServerError."""
    try:
        return listener_owner(server)
    except SocketCheckError as error:
        raise ServerError(
            f"cannot check that {server.name} (pid {server.pid}) is what listens on port "
            f"{server.port}: {error}; no request is sent to a server whose socket cannot be checked, "
            "and another attempt would fail the same way",
            server.log_path,
            final=True,
        ) from error


def _wait_healthy(server: RunningServer, timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    with httpx.Client(timeout=5.0) as client:
        while time.monotonic() < deadline:
            code = server.process.poll()
            if code is not None:
                holders = port_holders(server.port)  # a port taken by another process fails the bind
                known = holders not in ("nobody", UNIDENTIFIED)
                held = f": port {server.port} on {HOST} is held by {holders}" if known else ""
                raise ServerError(
                    f"{server.name} {exit_description(code)} before it became ready{held}", server.log_path
                )
            owner = _owner_or_final(server)
            if owner not in (None, "ours"):  # another process holds the port: fail before sending it anything
                raise ServerError(_not_ours(server, owner), server.log_path)
            if owner == "ours":
                with contextlib.suppress(httpx.HTTPError):
                    if client.get(f"{server.url}/health").status_code == 200:
                        return
            time.sleep(0.2)
    raise ServerError(f"{server.name} was not ready after {timeout_s:.0f} s", server.log_path)


# --- a server's run: its environment, its start and stop -----------------------------------------------------------


# The inherited variables that change what a server does, which every record of a server started here keeps
SERVER_ENV_PREFIXES = (
    "LLAMA_ARG_",
    "GGML_",
    "VLLM_",
    "SGLANG_",
    "CUDA_",
    "HIP_",
    "ROCR_",
    "OMP_",
    "PYTORCH_",
    "TORCH_",
)


def server_environment(own: Mapping[str, str]) -> dict[str, dict[str, str]]:
    """A started server's environment as its record keeps it: what its build set (``own``) and what it inherited
    of the variables that change a server's work (SERVER_ENV_PREFIXES; the build's own over them)."""
    inherited = {k: v for k, v in sorted(os.environ.items()) if k.startswith(SERVER_ENV_PREFIXES) and k not in own}
    return {"set": dict(own), "inherited": inherited}


@contextlib.contextmanager
def start_server(
    binary: Path,
    args: list[str],
    log_path: Path,
    startup_timeout_s: float = 600.0,
    *,
    log_header: str | None = None,
    name: str = "llama-server",
    env: Mapping[str, str] | None = None,
) -> Iterator[RunningServer]:
    """Run a server for the duration of the ``with`` block; it is stopped on success, error and interrupt.

    With ``log_header`` the log is appended to, after that line (a cell's attempts share one log); else rewritten.
    ``env``: variables set for the server over this process's environment (a build's ``env``).
    """
    port = free_port()
    argv = server_argv(binary, args, port)
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with signals_raise(), open(log_path, "ab" if log_header else "wb") as log:
        if log_header:
            log.write(f"{log_header}\n".encode())
            log.flush()
        process = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            preexec_fn=_die_with_parent,
            env={**os.environ, **env} if env else None,
        )
        server = RunningServer(process, argv, port, log_path, name=name)
        try:
            _wait_healthy(server, startup_timeout_s)
            yield server
        finally:
            _terminate(process)
