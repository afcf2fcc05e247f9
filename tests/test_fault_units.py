"""The pieces the fault tests rely on, without a workflow: the CPU contention decision and its sampler, the guard
that turns SIGTERM and a dead Snakemake into a clean stop, and who holds a listening socket."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from specbench.contention.cpu import CpuSampler
from specbench.contention.judge import foreign_cpu, judge
from specbench.contention.samples import Sample
from specbench.measure.server import listening_sockets, socket_inodes, socket_owners

REPO = Path(__file__).resolve().parents[1]


def _sample(t: float, busy: float, own: float, mark: str | None = None, top: list | None = None) -> Sample:
    return Sample(t, "during", True, None, [], 0.5, 2, mark, busy, own, top or [])


def test_foreign_cpu_is_busy_minus_own_over_the_request_window() -> None:
    samples = [
        _sample(0.0, 100.0, 10.0),  # server start-up: outside the window
        _sample(4.0, 110.0, 14.0, "request-start"),
        _sample(6.0, 114.0, 16.0, top=[{"pid": 77, "comm": "yes", "cpu_s": 1.9}]),
        _sample(8.0, 118.0, 18.0, "request-end", top=[{"pid": 77, "comm": "yes", "cpu_s": 2.0}]),
        _sample(9.0, 130.0, 19.0),  # after the request: outside too
    ]
    measured = foreign_cpu(samples)
    assert measured is not None
    assert measured["cpu_s"] == 4.0 and measured["window_s"] == 4.0 and measured["share"] == 0.5
    assert measured["top"] == [{"pid": 77, "comm": "yes", "cpu_s": 3.9}]
    verdict = judge(samples, {1}, nvml_available=False, max_foreign_cpu=0.25)
    assert verdict.contended and verdict.foreign_cpu == measured
    assert "other processes used 0.50 of the CPU time > 0.25" in verdict.reason and "pid 77 yes 3.9 s" in verdict.reason
    assert not judge(samples, {1}, nvml_available=False, max_foreign_cpu=0.6).contended
    assert not judge(samples, {1}, nvml_available=False).contended  # null: recorded, not judged


def test_without_cpu_figures_nothing_is_judged_and_the_verdict_says_so() -> None:
    samples = [Sample(0.0, "during", True), Sample(1.0, "during", True)]
    verdict = judge(samples, {1}, nvml_available=False, max_foreign_cpu=0.25)
    assert not verdict.contended and verdict.foreign_cpu is None
    assert "CPU time of other processes not recorded" in verdict.reason


def test_cpu_sampler_sees_another_process_burn_a_core() -> None:
    idle = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    busy = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        sampler = CpuSampler(root=idle.pid)  # the tree being watched: the idle process; the busy one is foreign
        first = sampler()
        time.sleep(1.5)
        second = sampler()
    finally:
        busy.kill()
        idle.kill()
        busy.wait()
        idle.wait()
    assert second["cpu_own_s"] - first["cpu_own_s"] < 0.2
    burned = next(p["cpu_s"] for p in second["cpu_top"] if p["pid"] == busy.pid)
    assert burned > 0.1
    assert second["cpu_busy_s"] - first["cpu_busy_s"] >= burned - 0.05


_GUARDED = textwrap.dedent("""
    import sys, time
    sys.path.insert(0, {scripts!r})
    from specbench.measure.guard import Interrupted, interrupt_guard
    try:
        with interrupt_guard(watch_pid={watch}, interval_s=0.1):
            print("ready", flush=True)
            time.sleep(60)
    except Interrupted as stop:
        print(f"stopped: {{stop}}", flush=True)
        sys.exit(3)
""")


def _guarded(watch: int) -> subprocess.Popen:
    code = _GUARDED.format(scripts=str(REPO / "scripts"), watch=watch)
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
    return proc


def test_guard_turns_the_death_of_the_watched_process_into_a_clean_stop() -> None:
    parent = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    proc = _guarded(parent.pid)
    parent.kill()
    parent.wait()
    out, _ = proc.communicate(timeout=10)
    assert proc.returncode == 3
    assert out.strip() == f"stopped: its parent process (Snakemake, pid {parent.pid}) died"


def test_guard_turns_sigterm_into_a_clean_stop() -> None:
    proc = _guarded(os.getpid())
    proc.send_signal(signal.SIGTERM)
    out, _ = proc.communicate(timeout=10)
    assert proc.returncode == 3 and out.strip() == "stopped: received signal SIGTERM"


def test_the_owner_of_a_listening_socket_is_found() -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        port = sock.getsockname()[1]
        [(address, inode)] = [(a, i) for a, p, i in listening_sockets() if p == port]
        assert address == "127.0.0.1"
        assert inode in socket_inodes(os.getpid())
        assert socket_owners(inode) == [os.getpid()]
