"""What the preflight reads from this machine, against local stand-ins only: nvcc's CUDA version from its recorded
`--version` outputs and a stand-in nvcc, a git host as a bare repository over file://, and the hub at a loopback port
that accepts and never answers and at one that is closed (short timeouts passed in, so each takes about a second)."""

from __future__ import annotations

import socket
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from specbench.preflight.facts import ask_git, ask_git_all, ask_hub, ask_hub_all, nvcc_release, nvcc_version
from specbench.preflight.writes import Download
from support.paths import TEST_DATA

NVCC = TEST_DATA / "nvcc"
DOWNLOAD = Download("target", "Qwen/Qwen3.5-9B", "c202236235762e1c871ad0ccb60c8ee5ba337b9a")


@pytest.mark.parametrize(
    ("recorded", "version"),
    [("cuda-13.0.txt", "13.0"), ("cuda-12.6.txt", "12.6"), ("cuda-12.4.txt", "12.4"), ("cuda-11.8.txt", "11.8")],
)
def test_nvccs_cuda_release_is_read_from_its_version_text(recorded: str, version: str) -> None:
    assert nvcc_release((NVCC / recorded).read_text()) == version


def test_a_text_without_the_release_line_names_no_version() -> None:
    assert nvcc_release("") is None
    assert nvcc_release("nvcc: NVIDIA (R) Cuda compiler driver\nBuild cuda_12.4.r12.4/compiler.34097967_0\n") is None


def _program(path: Path, body: str) -> str:
    path.write_text(f"#!/bin/sh\n{body}\n")
    path.chmod(0o755)
    return str(path)


def test_nvcc_version_runs_the_nvcc_it_is_given(tmp_path: Path) -> None:
    nvcc = _program(tmp_path / "nvcc", f'[ "$1" = --version ] && cat {NVCC / "cuda-12.6.txt"}')
    assert nvcc_version(nvcc) == "12.6"
    assert nvcc_version(_program(tmp_path / "broken", "echo 'release 12.6' >&2; exit 1")) is None
    assert nvcc_version(str(tmp_path / "absent")) is None


def _bare_repository(path: Path) -> str:
    subprocess.run(["git", "init", "--bare", "-q", str(path)], check=True)
    return path.as_uri()


def test_a_git_host_that_answers_and_one_that_is_not_there(tmp_path: Path) -> None:
    there = _bare_repository(tmp_path / "llama.cpp.git")
    missing = (tmp_path / "nowhere.git").as_uri()
    answers = ask_git_all([there, missing])
    assert answers[there].ok is True
    assert answers[missing].ok is False and "nowhere.git" in answers[missing].detail
    assert "\n" not in answers[missing].detail


@pytest.fixture
def silent_port() -> Iterator[tuple[int, list[socket.socket]]]:
    """A loopback port that accepts connections and never says anything; the accepted connections, to count."""
    server = socket.create_server(("127.0.0.1", 0))
    server.settimeout(0.05)
    accepted: list[socket.socket] = []
    done = threading.Event()

    def accept() -> None:
        while not done.is_set():
            try:
                accepted.append(server.accept()[0])
            except TimeoutError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield server.getsockname()[1], accepted
    done.set()
    thread.join(timeout=5)
    server.close()
    for connection in accepted:
        connection.close()


def _closed_port() -> int:
    """A loopback port nothing listens on (bound, then released): connections to it are refused."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_a_hub_that_never_answers_is_asked_twice_before_it_is_unreachable(silent_port) -> None:
    port, accepted = silent_port
    answer = ask_hub(DOWNLOAD, timeout_s=0.5, tries=2, endpoint=f"http://127.0.0.1:{port}")
    assert answer.status == "unreachable" and "(2 tries of 0.5 s each)" in answer.detail
    assert len(accepted) == 2  # one connection per try: the second try was made


def test_a_closed_hub_port_is_unreachable_after_its_retry() -> None:
    answer = ask_hub(DOWNLOAD, timeout_s=0.5, tries=2, endpoint=f"http://127.0.0.1:{_closed_port()}")
    assert answer.status == "unreachable" and answer.detail.startswith("ConnectError")
    assert answer.detail.endswith("(2 tries of 0.5 s each)")


def test_the_hubs_answers_side_by_side_and_one_past_the_deadline(silent_port) -> None:
    port, accepted = silent_port
    other = Download("draft", "z-lab/Qwen3.5-9B-DFlash", DOWNLOAD.revision)

    def ask(download: Download) -> object:
        if download == other:
            threading.Event().wait(3)  # answers after the deadline
        return ask_hub(download, timeout_s=0.2, tries=2, endpoint=f"http://127.0.0.1:{port}")

    answers = ask_hub_all([DOWNLOAD, other], ask=ask, deadline_s=1.5)
    assert answers[DOWNLOAD].status == "unreachable" and "2 tries" in answers[DOWNLOAD].detail
    assert answers[other].status == "unreachable" and answers[other].detail == "no answer within 1.5 s"
    assert len(accepted) == 2


def test_a_git_host_that_never_answers_is_given_up_at_the_timeout(silent_port) -> None:
    port, accepted = silent_port
    answer = ask_git(f"http://127.0.0.1:{port}/llama.cpp.git", timeout_s=0.5)
    assert answer.ok is False and answer.detail == "no answer within 0.5 s"
    assert len(accepted) >= 1  # git did connect: it was the host that kept silent
