"""Start one ``llama-server`` on 127.0.0.1, check that the process answering is the one started, and always stop it."""

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

from .guard import signals_raise

HOST = "127.0.0.1"
_PR_SET_PDEATHSIG = 1


class ServerError(RuntimeError):
    """The server could not be started or answered badly; ``reason`` says what, the message also names its log."""

    def __init__(self, reason: str, log_path: Path) -> None:
        super().__init__(f"{reason}; read {log_path}")
        self.reason, self.log_path = reason, log_path


def free_port() -> int:
    """A TCP port that is free on 127.0.0.1 right now (another process may take it before the server binds)."""
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


# --- who answers on a port ---------------------------------------------------------------------------------------


def listening_sockets() -> list[tuple[str, int, int]]:
    """(address, port, socket inode) of every TCP socket in LISTEN state, IPv4 and IPv6, from /proc/net."""
    found = []
    for name, width in (("tcp", 8), ("tcp6", 32)):
        try:
            lines = Path(f"/proc/net/{name}").read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            if len(fields) < 10 or fields[3] != "0A":  # 0A: TCP_LISTEN
                continue
            address, port = fields[1].split(":")
            found.append((_address(address, width), int(port, 16), int(fields[9])))
    return found


def _address(hex_address: str, width: int) -> str:
    """/proc/net's little-endian-per-word hex address as text ('127.0.0.1', '::', '::1', ...)."""
    raw = bytes.fromhex(hex_address)
    words = b"".join(raw[i:i + 4][::-1] for i in range(0, len(raw), 4))
    family = socket.AF_INET if width == 8 else socket.AF_INET6
    return socket.inet_ntop(family, words)


def socket_inodes(pid: int) -> set[int]:
    """The socket inodes among a process's open file descriptors (empty if it is gone or unreadable)."""
    inodes = set()
    with contextlib.suppress(OSError):
        for fd in os.scandir(f"/proc/{pid}/fd"):
            with contextlib.suppress(OSError):
                target = os.readlink(fd.path)
                if target.startswith("socket:["):
                    inodes.add(int(target[8:-1]))
    return inodes


def socket_owners(inode: int) -> list[int]:
    """Pids of the processes that hold the socket with this inode."""
    owners = []
    for entry in os.scandir("/proc"):
        if entry.name.isdigit() and inode in socket_inodes(int(entry.name)):
            owners.append(int(entry.name))
    return owners


def listener_owner(server: RunningServer) -> str | None:
    """Who listens on the server's port: None while nobody does, "ours" when this server's process holds the
    listening socket, else a description of the other process(es)."""
    listeners = [inode for address, port, inode in listening_sockets() if port == server.port
                 and address in (HOST, "0.0.0.0", "::", "::ffff:127.0.0.1")]
    if not listeners:
        return None
    if any(inode in socket_inodes(server.pid) for inode in listeners):
        return "ours"
    owners = sorted({pid for inode in listeners for pid in socket_owners(inode)})
    return f"pid {', '.join(map(str, owners))}" if owners else "an unknown process"


def check_identity(server: RunningServer) -> None:
    """Raise ServerError unless the socket listening on 127.0.0.1:port belongs to this server's process.

    ``free_port`` can only say a port was free a moment ago; if another process took it first, our server fails
    to bind while the other one may well answer HTTP. The kernel's socket table says who really listens, so no
    request is ever sent to a process this cell did not start.
    """
    owner = listener_owner(server)
    if owner != "ours":
        raise ServerError(f"port {server.port} on {HOST} is held by {owner or 'nobody'}, not by this cell's "
                          f"llama-server (pid {server.pid}); nothing was sent to it", server.log_path)


def _wait_healthy(server: RunningServer, timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    with httpx.Client(timeout=5.0) as client:
        while time.monotonic() < deadline:
            code = server.process.poll()
            if code is not None:
                owner = listener_owner(server)  # a port taken by another process fails the bind
                held = f": port {server.port} on {HOST} is held by {owner}" if owner not in (None, "ours") else ""
                raise ServerError(f"llama-server {exit_description(code)} before it became ready{held}",
                                  server.log_path)
            owner = listener_owner(server)
            if owner is not None:
                check_identity(server)  # another process holds the port: fail before sending it anything
                with contextlib.suppress(httpx.HTTPError):
                    if client.get(f"{server.url}/health").status_code == 200:
                        return
            time.sleep(0.2)
    raise ServerError(f"llama-server was not ready after {timeout_s:.0f} s", server.log_path)


# --- signals and the parent --------------------------------------------------------------------------------------


@contextlib.contextmanager
def llama_server(
    binary: Path,
    args: list[str],
    log_path: Path,
    startup_timeout_s: float = 600.0,
    *,
    log_header: str | None = None,
) -> Iterator[RunningServer]:
    """Run a server for the duration of the ``with`` block; it is stopped on success, error and interrupt.

    With ``log_header`` the log is appended to, after that line (a cell's attempts share one log); else rewritten.
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
        )
        server = RunningServer(process, argv, port, log_path)
        try:
            _wait_healthy(server, startup_timeout_s)
            yield server
        finally:
            _terminate(process)
