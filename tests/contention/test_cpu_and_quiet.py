"""The pieces the fault tests rely on, without a workflow: the CPU contention decision and its sampler, the wait for
a quiet machine, the guard that turns SIGTERM, SIGINT and a dead (or zombie) Snakemake into a clean stop, and who
holds a listening socket."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace

import psutil
import pytest

from specbench.contention.contended import busiest, foreign_cpu, judge
from specbench.contention.cpu import CpuSampler, command_of
from specbench.contention.quiet import wait_for_quiet
from specbench.contention.samples import Sample
from specbench.engines.server_process import (
    RunningServer,
    ServerError,
    check_identity,
    listening_addresses,
    port_holders,
)
from support.paths import REPO


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
    assert measured["top"] == [{"pid": 77, "comm": "yes", "command": None, "cpu_s": 3.9}]
    verdict = judge(samples, {1}, nvml_available=False, max_foreign_cpu=0.25)
    assert verdict.contended and verdict.foreign_cpu == measured
    assert "other processes used 0.50 of the CPU time > 0.25" in verdict.reason
    assert "busiest: pid 77 yes 3.9 s" in verdict.reason
    assert busiest(verdict) == "pid 77 yes using 0.97 of a CPU"
    assert not judge(samples, {1}, nvml_available=False, max_foreign_cpu=0.6).contended
    assert not judge(samples, {1}, nvml_available=False).contended  # null: recorded, not judged


def test_a_command_line_is_named_on_one_line() -> None:
    """A busy process's command line goes into a one-line failure: its newlines and runs of spaces become one space."""
    proc = subprocess.Popen([sys.executable, "-c", "import time\ntime.sleep(30)  # " + "x" * 100])
    try:
        time.sleep(0.2)
        named = command_of(proc.pid, width=60)
    finally:
        proc.kill()
        proc.wait()
    assert named == f"{sys.executable} -c import time time.sleep(30) # {'x' * 100}"[:57] + "..."
    assert command_of(proc.pid) is None  # gone


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
    [burner] = [p for p in second["cpu_top"] if p["pid"] == busy.pid]
    assert burner["cpu_s"] > 0.1 and burner["command"] == f"{sys.executable} -c while True: pass"
    assert second["cpu_busy_s"] - first["cpu_busy_s"] >= burner["cpu_s"] - 0.05


def test_cpu_sampler_counts_a_process_started_just_after_its_previous_look() -> None:
    """psutil dates a process's start from the boot time in whole seconds: one started just after a look may be
    dated before it, and must still count."""
    idle = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    sampler = CpuSampler(root=idle.pid)  # the tree being watched: the idle process; the busy one is foreign
    sampler()
    busy = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        time.sleep(1.5)
        second = sampler()
    finally:
        for proc in (busy, idle):
            proc.kill()
            proc.wait()
    assert any(p["pid"] == busy.pid and p["cpu_s"] > 0.1 for p in second["cpu_top"]), second["cpu_top"]


def _busy_until(t_quiet: float, share: float = 0.5) -> object:
    """Samples one second apart on 2 CPUs: other processes use ``share`` of the machine until ``t_quiet``."""
    state = {"t": 0.0, "busy": 0.0}

    def take() -> Sample:
        sample = _sample(
            state["t"],
            state["busy"],
            0.0,
            top=[{"pid": 9, "comm": "pip", "command": "pip install x", "cpu_s": 1.0}] if state["t"] <= t_quiet else [],
        )
        state["busy"] += 2 * share if state["t"] < t_quiet else 0.0
        state["t"] += 1.0
        return sample

    return take


def _decide(window: list[Sample]):
    return judge(window, set(), nvml_available=False, max_foreign_cpu=0.25)


def test_the_wait_for_quiet_ends_with_the_first_quiet_window() -> None:
    clock = iter(float(t) for t in range(100))
    wait = wait_for_quiet(
        _busy_until(6.0, share=1.0),
        _decide,
        after_attempt=1,
        why="contended: pip",
        window_s=3.0,
        timeout_s=60.0,
        step_s=1.0,
        clock=lambda: next(clock),
        sleep=lambda s: None,
    )
    assert wait.quiet and wait.after_attempt == 1 and wait.why == "contended: pip"
    # samples at t=0..9, both CPUs busy until t=6: the window [6, 9] is the first within 0.25
    assert wait.windows_judged == 7 and wait.last.contended is False and wait.last.foreign_cpu["cpu_s"] == 0
    assert wait.waited_s > 0


def test_the_wait_for_quiet_gives_up_at_its_bound_with_the_last_verdict() -> None:
    now = {"t": 0.0}

    def sleep(seconds: float) -> None:
        now["t"] += seconds

    wait = wait_for_quiet(
        _busy_until(1e9),
        _decide,
        after_attempt=2,
        why="x",
        window_s=3.0,
        timeout_s=10.0,
        step_s=1.0,
        clock=lambda: now["t"],
        sleep=sleep,
    )
    assert not wait.quiet and wait.waited_s == 10.0 and wait.windows_judged == 8
    assert wait.last.contended and wait.last.foreign_cpu["share"] == 0.5
    assert busiest(wait.last) == "pid 9 pip (pip install x) using 1.00 of a CPU"


_GUARDED = textwrap.dedent("""
    import sys, time
    sys.path.insert(0, {scripts!r})
    from specbench.core.steps.guard import Interrupted, interrupt_guard
    try:
        with interrupt_guard(watch_pid={watch}, interval_s={interval}) as guarded:
            print("ready", flush=True)
            if {describe}:
                print(guarded.describe(), flush=True)
            time.sleep(60)
    except Interrupted as stop:
        print(f"stopped: {{stop}}", flush=True)
        sys.exit(3)
""")


def _guarded(
    watch: int, interval_s: float = 0.1, describe: bool = False, preexec_fn: Callable[[], None] | None = None
) -> subprocess.Popen:
    code = _GUARDED.format(scripts=str(REPO / "scripts"), watch=watch, interval=interval_s, describe=describe)
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True, preexec_fn=preexec_fn)
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


def test_guard_takes_a_killed_process_nobody_has_reaped_as_dead() -> None:
    """A killed Snakemake stays a zombie (same pid, same start time) until its parent reaps it; here this test is
    that parent and does not reap it until the guarded process has stopped."""
    parent = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    proc = _guarded(parent.pid, interval_s=0.5)
    try:
        parent.kill()
        killed = time.monotonic()
        out, _ = proc.communicate(timeout=10)
        stopped_s = time.monotonic() - killed
        assert psutil.Process(parent.pid).status() == psutil.STATUS_ZOMBIE  # still unreaped while the guard acted
    finally:
        parent.wait()
    assert proc.returncode == 3
    assert out.strip() == f"stopped: its parent process (Snakemake, pid {parent.pid}) died"
    assert stopped_s < 1.0 + 0.5, stopped_s  # one watch interval, plus the interpreter's exit


def test_guard_turns_sigterm_into_a_clean_stop() -> None:
    proc = _guarded(os.getpid())
    proc.send_signal(signal.SIGTERM)
    out, _ = proc.communicate(timeout=10)
    assert proc.returncode == 3 and out.strip() == "stopped: received signal SIGTERM"


def _sigint_ignored() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _sigint_default() -> None:
    """SIGINT as a terminal's foreground job has it, however pytest itself was started (a background job of a
    script inherits it ignored)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def test_guard_turns_sigint_into_the_same_clean_stop_and_says_how_it_found_it() -> None:
    proc = _guarded(os.getpid(), describe=True, preexec_fn=_sigint_default)
    assert (
        proc.stdout is not None
        and proc.stdout.readline().strip() == f"watching Snakemake pid {os.getpid()}; SIGINT default"
    )
    proc.send_signal(signal.SIGINT)
    proc.send_signal(signal.SIGINT)  # a second Ctrl-C while the first unwinds is ignored, not a new exception
    out, _ = proc.communicate(timeout=10)
    assert proc.returncode == 3 and out.strip() == "stopped: received signal SIGINT"


def test_guard_keeps_an_inherited_ignored_sigint() -> None:
    proc = _guarded(os.getpid(), describe=True, preexec_fn=_sigint_ignored)
    assert proc.stdout is not None
    assert proc.stdout.readline().strip() == (
        f"watching Snakemake pid {os.getpid()}; SIGINT ignored, as inherited: Ctrl-C does not stop it"
    )
    proc.send_signal(signal.SIGINT)
    time.sleep(0.5)
    assert proc.poll() is None  # ignored, as whoever started it asked
    proc.send_signal(signal.SIGTERM)
    out, _ = proc.communicate(timeout=10)
    assert proc.returncode == 3 and out.strip() == "stopped: received signal SIGTERM"


def test_the_listening_socket_of_a_process_is_found() -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        port = sock.getsockname()[1]
        assert ("127.0.0.1", port) in listening_addresses(os.getpid())
        assert port_holders(port) == f"pid {os.getpid()}"
        check_identity(_server(os.getpid(), port))  # this process holds it: no error
    assert port_holders(port) == "nobody"


def _server(pid: int, port: int) -> RunningServer:
    return RunningServer(process=SimpleNamespace(pid=pid), argv=[], port=port, log_path=Path("server.log"))


def test_a_socket_that_cannot_be_checked_is_a_final_error(monkeypatch: pytest.MonkeyPatch) -> None:
    def denied(self: psutil.Process, kind: str = "inet") -> list:
        raise psutil.AccessDenied(self.pid)

    monkeypatch.setattr(psutil.Process, "net_connections", denied)
    with pytest.raises(ServerError) as caught:
        check_identity(_server(os.getpid(), 1))
    assert caught.value.final
    assert caught.value.reason.startswith(
        f"cannot check that llama-server (pid {os.getpid()}) is what listens on "
        f"port 1: the sockets of pid {os.getpid()} cannot be read here (AccessDenied"
    )


def test_an_endpoints_processes_count_as_the_cells_own(tmp_path: Path) -> None:
    """A server the cell did not start (an endpoint on this machine) is not in the cell's process tree: named with
    ``also``, its CPU time (and its children's) is the cell's own, not another process's."""
    script = tmp_path / "server.py"
    script.write_text(
        "import os, time\n"
        "if os.fork() == 0:\n    t = time.time()\n    while time.time() - t < 5: pass\n"
        "else:\n    time.sleep(5)\n"
    )
    # started by a shell that exits at once: the server is nobody's child here, as a server the user started
    out = subprocess.run(
        ["sh", "-c", f"{sys.executable} {script} >/dev/null 2>&1 & echo $!"], capture_output=True, text=True
    )
    server, busy_child = int(out.stdout.strip()), None
    try:
        time.sleep(0.3)
        busy_child = psutil.Process(server).children()[0].pid
        plain, endpoint = CpuSampler(), CpuSampler(also=[server])
        plain(), endpoint()
        time.sleep(1.0)
        seen, own = plain(), endpoint()
        assert busy_child in {p["pid"] for p in seen["cpu_top"]}  # another process's, to a cell that did not start it
        assert busy_child not in {p["pid"] for p in own["cpu_top"]}
        assert own["cpu_own_s"] - seen["cpu_own_s"] > 0.5  # the spinning child's second or so is the cell's own
    finally:
        for pid in (server, busy_child):
            with contextlib.suppress(ProcessLookupError, TypeError):
                os.kill(pid, signal.SIGKILL)
