"""Whose socket a server's port is (engines.server_process.listener_owner): a server that binds between the read of
its own sockets and the read of the system-wide table is still this server, never 'another process' (vLLM's API
server once met that race at start-up: 'held by pid 7452, not by this cell's vLLM server (pid 7452)')."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from specbench.engines import server_process


def test_a_server_that_binds_between_the_two_reads_is_ours(monkeypatch: pytest.MonkeyPatch) -> None:
    server = SimpleNamespace(pid=7452, port=54245, name="vLLM server", log_path=Path("x.log"))
    monkeypatch.setattr(server_process, "listening_addresses", lambda pid: [])  # not bound yet at the first read
    monkeypatch.setattr(server_process, "listener_pids", lambda port: [7452])  # bound at the second
    assert server_process.listener_owner(server) == "ours"
    monkeypatch.setattr(server_process, "listener_pids", lambda port: [9001])  # another process took the port
    assert server_process.listener_owner(server) == "pid 9001"
    monkeypatch.setattr(server_process, "listener_pids", lambda port: [])  # nobody yet
    assert server_process.listener_owner(server) is None


def test_the_system_table_is_read_once_so_a_late_bind_never_reads_as_another_process(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """CI met the race one read later: nobody at the second read, the server itself at a third ('held by pid 1371,
    not by this cell's vLLM server (pid 1371)'). Each read now sees the server bind a moment later than the one
    before; the answer is 'nobody yet' or 'ours', never the server named as a stranger."""
    server = SimpleNamespace(pid=1371, port=59623, name="vLLM server", log_path=Path("x.log"))
    reads = iter([[], [1371], [1371], [1371]])
    monkeypatch.setattr(server_process, "listening_addresses", lambda pid: [])
    monkeypatch.setattr(server_process, "listener_pids", lambda port: next(reads))
    assert server_process.listener_owner(server) is None
    assert server_process.listener_owner(server) == "ours"
